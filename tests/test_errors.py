"""Misuse raises an error that names the problem and the fix."""

import pytest

import numpy as np
import wengert as wg
from wengert.interop.dispatch import tables


def test_backward_twice_without_retain_graph():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (wg.numpy.sin(x) * x).sum()
    y.backward()
    msg = r"backward through the graph a second time.*retain_graph=True"
    with pytest.raises(RuntimeError, match=msg):
        y.backward()


def test_backward_of_non_scalar_needs_gradient():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    msg = "grad can be implicitly created only for scalar outputs"
    with pytest.raises(RuntimeError, match=msg):
        (x * 2).backward()


def test_backward_of_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (wg.tensor(1.0) * 2).backward()
    x = wg.tensor(1.0, requires_grad=True)
    with wg.no_grad():
        y = x * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_gradient_seed_of_wrong_shape():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape.*\(3,\).*\(2,\)"):
        (x * 2).backward(gradient=np.ones(3))


@pytest.mark.parametrize("bad", [1, np.array([1, 2]), np.array([True]), "x"])
def test_grad_of_non_float_inputs(bad):
    with pytest.raises(TypeError, match="floating point"):
        wg.grad(lambda x: (x * 1.0).sum())(bad)


def test_grad_of_object_array():
    with pytest.raises(TypeError, match="floating point"):
        wg.grad(lambda x: x)(np.array([object()]))


def test_tensor_from_strings_or_objects():
    with pytest.raises(TypeError, match="numeric"):
        wg.tensor(["a", "b"])
    with pytest.raises(TypeError, match="numeric"):
        wg.tensor([object()])
    records = np.rec.fromarrays([np.array([1.0, 2.0])], names="a")
    with pytest.raises(TypeError, match=r"not records.*data\['a'\]"):
        wg.tensor(records)


def test_grad_of_non_scalar_output_suggests_sum_or_jacobian():
    with pytest.raises(TypeError, match=r"scalar output.*sum\(\).*jacobian"):
        wg.grad(lambda x: x * 2)(np.ones(3))


def test_shape_mismatch_names_the_op():
    x = wg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(ValueError, match=r"^add: .*shapes"):
        x + np.ones(4)
    with pytest.raises(ValueError, match="matmul"):
        x @ np.ones((4, 2))


def test_numpy_function_without_rule_raises_type_error(monkeypatch):
    # (every numeric NumPy function has a rule now: two are taken out of the table)
    for fn in (np.emath.sqrt, np.emath.arccos):
        monkeypatch.delitem(tables()[1], fn)
    x = wg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(TypeError, match=r"np\.lib\.scimath\.sqrt"):
        np.emath.sqrt(x)
    with pytest.raises(TypeError, match=r"np\.lib\.scimath\.arccos"):
        np.emath.arccos(x)
    # without gradients the plain NumPy result is returned
    assert np.emath.sqrt(wg.tensor(np.ones(3) * 4.0))[0] == 2


def test_vjp_cotangent_mismatch():
    _, f_vjp = wg.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match="cotangent shape"):
        f_vjp(np.ones(4))


def test_inplace_broadcast_target():
    t = wg.tensor(np.ones(3))
    with pytest.raises(ValueError):
        t += np.ones((2, 3))


@pytest.mark.parametrize("transform", [wg.grad, wg.jacrev, wg.jacfwd, wg.hessian,
                                       wg.value_and_grad, wg.jacobian])
@pytest.mark.parametrize("argnums", [(1, 1), (1, -1)])
def test_repeated_argnums_are_refused(transform, argnums):
    with pytest.raises(ValueError, match="twice"):
        transform(lambda x, y: x * y ** 2, argnums=argnums)(2.0, 3.0)


@pytest.mark.parametrize("transform", [wg.grad, wg.jacfwd, wg.jacrev])
def test_argnums_of_the_wrong_type_are_named(transform):
    with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
        transform(lambda x: x, argnums=0.0)(2.0)


@pytest.mark.parametrize("make", [
    lambda v: wg.grad(v), lambda v: wg.value_and_grad(v), lambda v: wg.jacfwd(v),
    lambda v: wg.jacrev(v), lambda v: wg.jacobian(v), lambda v: wg.hessian(v),
    lambda v: wg.derivative(v), lambda v: wg.checkpoint(v), lambda v: wg.custom_vjp(v),
    lambda v: wg.custom_jvp(v), lambda v: wg.vjp(v, 1.0), lambda v: wg.jvp(v, (1.0,), (1.0,)),
    lambda v: wg.hvp(v, 1.0, 1.0), lambda v: wg.linearize(v, 1.0),
    lambda v: wg.custom_vjp(np.sin).defvjp(v, v), lambda v: wg.custom_jvp(np.sin).defjvp(v),
], ids=["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian", "hessian", "derivative",
        "checkpoint", "custom_vjp", "custom_jvp", "vjp", "jvp", "hvp", "linearize", "defvjp",
        "defjvp"])
def test_a_value_given_where_a_function_is_expected_is_refused_at_once(make):
    value = np.sum(np.arange(3.0) ** 2)  # wg.grad(f(x)) instead of wg.grad(f)
    with pytest.raises(TypeError, match=r"expected a function, got float64. Pass the function "
                                        r"itself \(f, not its value f\(x\)\)"):
        make(value)


def test_vjp_cotangent_structure_is_matched_by_key_and_checked():
    x = np.array([1.0, 2.0])
    _, f_vjp = wg.vjp(lambda x: {"a": x, "b": 3 * x}, x)
    np.testing.assert_array_equal(f_vjp({"b": np.zeros(2), "a": np.ones(2)})[0], [1.0, 1.0])
    np.testing.assert_array_equal(f_vjp({"a": np.zeros(2), "b": np.ones(2)})[0], [3.0, 3.0])
    for bad in [{"c": np.zeros(2), "d": np.ones(2)}, [np.zeros(2), np.ones(2)],
                {"a": np.zeros(2)}]:
        with pytest.raises(ValueError, match="same structure"):
            f_vjp(bad)
    _, g_vjp = wg.vjp(lambda x: (x, 2 * x), x)
    with pytest.raises(ValueError, match="a list of 2 at the top where a tuple of 2"):
        g_vjp([np.ones(2), np.ones(2)])


def test_a_tensor_escaping_a_finished_transform_is_refused_when_used():
    box = {}

    def keep(x):
        box["t"] = x * 1.0
        return x * 2

    wg.grad(keep)(5.0)
    with pytest.raises(RuntimeError, match="finished wg.grad"):
        wg.grad(lambda z: z * box["t"])(3.0)
    with pytest.raises(RuntimeError, match="finished wg.grad"):
        float(box["t"])
    with pytest.raises(RuntimeError, match="finished wg.grad"):
        box["t"] * 2.0
    assert float(wg.stop_gradient(box["t"])) == 5.0  # its value, cut from everything


def test_vjp_fn_may_record_at_its_level_after_the_transform_returned():
    # checkpoint recomputes inside the pullback, which runs after wg.vjp returned
    f = wg.checkpoint(lambda x: np.sin(x) * x)
    _, f_vjp = wg.vjp(f, 1.5)
    assert f_vjp(1.0)[0] == pytest.approx(np.cos(1.5) * 1.5 + np.sin(1.5))


def test_a_complex_cotangent_from_a_custom_rule_is_refused():
    @wg.custom_vjp
    def g(x):
        return x * 2

    g.defvjp(lambda x: (x * 2, None), lambda r, ct: (ct * (2 + 1j),))
    with pytest.raises(TypeError, match="complex"):
        wg.grad(lambda x: np.sum(g(x)))(np.ones(2))
