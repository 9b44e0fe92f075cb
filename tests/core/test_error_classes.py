"""Each error class of ``wengert.core.errors`` is raised where its misuse happens, and is
still the builtin exception it always was (with the same message)."""

from __future__ import annotations

import pickle

import pytest

import numpy as np
import wengert as wg
from wengert import errors


def test_every_class_is_a_wengert_error_and_a_builtin():
    for name in errors.__all__:
        cls = getattr(errors, name)
        if not isinstance(cls, type) or cls is errors.WengertError:
            continue
        assert issubclass(cls, errors.WengertError), name
        builtins = [c for c in cls.__mro__ if c.__module__ == "builtins"]
        assert builtins[0] is not Exception or cls is errors.Escaped, name


def test_backward_a_second_time_raises_graph_freed():
    x = wg.tensor(2.0, requires_grad=True)
    y = np.sin(x) * x
    y.backward()
    with pytest.raises(errors.GraphFreedError, match="second time") as info:
        y.backward()
    assert isinstance(info.value, RuntimeError)


def test_value_modified_in_place_raises_with_the_node_and_versions():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x * 1.0
    z = (y * y).sum()
    y += 1.0
    with pytest.raises(errors.InplaceModifiedError, match="modified by an inplace") as info:
        z.backward()
    e = info.value
    assert isinstance(e, RuntimeError)
    assert e.node.op.name == "multiply" and (e.saved, e.now) == (0, 1) and e.index in (0, 1)


def test_in_place_on_a_leaf_raises_leaf_in_place():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(errors.LeafInplaceError, match="leaf Variable") as info:
        x += 1.0
    assert isinstance(info.value, RuntimeError)


def test_a_tensor_escaping_a_transform_raises_escaped_level():
    kept = []

    def f(x):
        kept.append(x * 2.0)
        return (x * x).sum()

    wg.grad(f)(np.array([1.0, 2.0]))
    with pytest.raises(errors.EscapedLevelError, match="used after") as info:
        kept[0] * 3.0
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, errors.Escaped)


def test_a_dual_number_escaping_jvp_raises_escaped_level():
    kept = []

    def f(x):
        kept.append(x)
        return np.sin(x)

    wg.jvp(f, (1.0,), (1.0,))
    with pytest.raises(errors.EscapedLevelError):
        np.sin(kept[0])


def test_a_graph_tracer_escaping_its_trace_raises_escaped_tracer():
    kept = []

    def f(x):
        kept.append(x * 2.0)
        return x + 1.0

    wg.trace(f, np.array([1.0, 2.0]))
    with pytest.raises(errors.EscapedTracerError) as info:
        kept[0] + 1.0
    e = info.value
    assert isinstance(e, TypeError) and isinstance(e, errors.TraceError)
    assert isinstance(e, errors.Escaped)


def test_a_graph_tracer_as_a_dict_key_raises_unhashable_tracer():
    def f(x):
        return {x: 1}

    with pytest.raises(errors.UnhashableTracerError, match="unhashable type") as info:
        wg.compile(f)(np.array([1.0, 2.0]))
    assert isinstance(info.value, TypeError)


def test_custom_vjp_without_its_rule_raises_no_vjp():
    @wg.custom_vjp
    def f(x):
        return x * 2.0

    with pytest.raises(errors.NoVJPError, match="No VJP defined") as info:
        wg.grad(lambda x: f(x).sum())(np.array([1.0]))
    assert isinstance(info.value, TypeError) and isinstance(info.value, errors.NoRuleError)


def test_custom_vjp_in_forward_mode_raises_no_forward_rule():
    @wg.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (x * 2.0, None), lambda res, g: (g * 2.0,))
    with pytest.raises(errors.NoForwardRule) as info:
        wg.jvp(f, (np.array([1.0]),), (np.array([1.0]),))
    assert isinstance(info.value, errors.NoRuleError) and isinstance(info.value, TypeError)


def test_custom_jvp_without_its_rule_raises_no_rule():
    @wg.custom_jvp
    def f(x):
        return x * 2.0

    with pytest.raises(errors.NoRuleError, match="No JVP defined") as info:
        wg.jvp(f, (np.array([1.0]),), (np.array([1.0]),))
    assert isinstance(info.value, TypeError)


def test_converting_a_tensor_that_requires_grad_raises_lost_derivative():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(errors.LostDerivativeError, match="gradient would be lost") as info:
        np.asarray(x)
    assert isinstance(info.value, TypeError)


def test_writing_a_tensor_into_an_ndarray_raises_lost_derivative():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    buf = np.zeros(2)
    with pytest.raises(errors.LostDerivativeError, match="into a plain NumPy array"):
        np.copyto(buf, x * 2.0)


def test_float_of_a_dual_number_raises_lost_derivative():
    with pytest.raises(errors.LostDerivativeError, match="drop its tangent"):
        wg.jvp(lambda x: float(x), (1.0,), (1.0,))


def test_pickling_a_non_leaf_raises_lost_derivative():
    x = wg.tensor(np.array([1.0]), requires_grad=True)
    with pytest.raises(errors.LostDerivativeError, match="cannot pickle"):
        pickle.dumps(x * 2.0)


def test_a_graph_run_where_its_guard_fails_raises_guard_error():
    def f(x):
        return x * 2.0 if x.sum() > 0 else x

    g = wg.trace(f, np.array([1.0, 2.0]))
    with pytest.raises(errors.GuardError) as info:
        g(np.array([-1.0, -2.0]))
    assert isinstance(info.value, RuntimeError)
    assert wg.graph.GuardError is errors.GuardError


def test_complex_values_through_a_real_only_op_raise_unsupported_dtype():
    x = wg.tensor(0.5, requires_grad=True)
    with pytest.raises(errors.UnsupportedDtypeError, match="sign: wengert does not") as info:
        np.sign(x * 1j)
    assert isinstance(info.value, TypeError)


def test_backward_on_a_constant_raises_no_gradient():
    y = wg.tensor(2.0) * 3.0
    with pytest.raises(errors.NoGradientError, match="does not require grad") as info:
        y.backward()
    assert isinstance(info.value, RuntimeError)


def test_a_hook_returning_the_wrong_shape_raises_hook_error():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: np.ones(3))
    with pytest.raises(errors.HookError, match="same shape") as info:
        y.sum().backward()
    assert isinstance(info.value, RuntimeError)


def test_detect_anomaly_raises_anomaly_error_with_the_node():
    x = wg.tensor(np.array([0.0]), requires_grad=True)
    with wg.detect_anomaly():
        y = np.sqrt(x).sum()
        with pytest.raises(errors.AnomalyError, match="returned") as info:
            y.backward()
    assert isinstance(info.value, RuntimeError) and info.value.node.op.name == "sqrt"


def test_error_name_says_which_builtin():
    e = errors.LostDerivativeError("x")
    assert errors.error_name(e) == "LostDerivativeError (a TypeError)"
    assert errors.error_name(KeyError("k")) == "KeyError"


def test_an_error_with_its_node_pickles_without_it():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x * 1.0
    z = (y * y).sum()
    y += 1.0
    with pytest.raises(errors.InplaceModifiedError) as info:
        z.backward()
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is errors.InplaceModifiedError and str(back) == str(info.value)
    assert (back.saved, back.now, back.index, back.node) == \
        (info.value.saved, info.value.now, info.value.index, None)
