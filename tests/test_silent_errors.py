"""Never a silently wrong or lost gradient: casts, complex values, Python numbers, outputs.

Each class of mistake gives the right value or a clear error naming the fix
; the conventions follow PyTorch and JAX where they agree.
"""

from __future__ import annotations

import math

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert import Dual

X = np.array([1.5, -2.25, 3.0])


# -- casts: an integer or boolean result is a constant --------------------------------
@pytest.mark.parametrize("dtype", [int, np.int32, bool, np.uint8])
def test_cast_to_integer_or_bool_is_a_constant(dtype):
    x = wg.tensor(X, requires_grad=True)
    y = x.astype(dtype)
    assert not y.requires_grad and y.grad_fn is None
    (y.astype(float).sum() * 10.0 + x.sum()).backward()  # the cast contributes zero
    np.testing.assert_array_equal(x.grad, np.ones(3))


def test_cast_results_in_every_transform():
    f = lambda x: np.sum(x.astype(int)) * 1.0 + np.sum(x ** 2)  # noqa: E731
    np.testing.assert_array_equal(wg.grad(f)(X), 2 * X)
    _, t = wg.jvp(f, (X,), (np.ones(3),))
    assert t == pytest.approx(np.sum(2 * X))
    np.testing.assert_array_equal(wg.jacfwd(lambda x: x.astype(bool) * x)(X), np.eye(3))
    np.testing.assert_array_equal(wg.hessian(f)(X), 2 * np.eye(3))


def test_sum_and_mean_with_an_integer_dtype_are_constants():
    assert wg.grad(lambda x: np.sum(x, dtype=int) * 1.0)(X).tolist() == [0.0, 0.0, 0.0]
    assert wg.grad(lambda x: wnp.cumsum(x, dtype=int).sum() * 1.0 + x[0])(X).tolist() == [
        1.0, 0.0, 0.0]
    x = wg.tensor(X, requires_grad=True)
    assert not np.sum(x, dtype=np.int64).requires_grad


def test_float_casts_keep_the_gradient_in_the_input_dtype():
    x = wg.tensor(X, requires_grad=True)
    y = x.astype(np.float32)
    assert y.requires_grad and y.dtype == np.float32
    (y * y).sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad, 2 * X, rtol=1e-6)


def test_a_cast_of_a_dual_number_has_no_tangent():
    out, t = wg.jvp(lambda x: x.astype(int), (X,), (np.ones(3),))
    np.testing.assert_array_equal(out, X.astype(int))
    np.testing.assert_array_equal(t, 0.0)


# -- complex numbers: refused with a clear error (not differentiated yet) --------------
COMPLEX = "wengert does not differentiate this op on complex values"


def test_complex_values_of_ops_without_complex_rules_raise():
    """Ops whose rules are real-only (sign is z/|z| for complex z, not piecewise constant;
    a real result NumPy computes from a complex input its own way) refuse complex values in
    both modes instead of a wrong gradient."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    with pytest.raises(TypeError, match="sign: " + COMPLEX):
        wg.grad(lambda z: np.sum(np.abs(np.sign(z))))(z)
    with pytest.raises(TypeError, match="logsumexp: " + COMPLEX):
        wg.grad(lambda z: np.abs(wg.numpy.logsumexp(z)))(z)
    with pytest.raises(TypeError, match="sign: " + COMPLEX):
        wg.jvp(lambda z: np.sign(z), (z,), (z,))
    a = np.array([[2.0, 1j], [-1j, 3.0]])
    with pytest.raises(TypeError, match="slogdet: " + COMPLEX):
        wg.grad(lambda a: np.abs(np.linalg.slogdet(a)[1]))(a)
    with pytest.raises(TypeError, match="slogdet: " + COMPLEX):
        wg.jvp(lambda a: np.linalg.slogdet(a)[1], (a,), (a,))
    x = wg.tensor(0.5, requires_grad=True)
    with pytest.raises(TypeError, match="sign: " + COMPLEX):
        np.sign(x * 1j)


def test_complex_outputs_and_tangents_that_cannot_be_raise():
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        wg.grad(lambda z: z * 2)(1.0 + 2.0j)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (wg.tensor(1.0, requires_grad=True) * 1j).backward()
    with pytest.raises(TypeError, match="a real value can only move in real directions"):
        Dual(1.0, 1j)
    with pytest.raises(TypeError, match="real directions"):
        Dual(np.ones(2), np.array([1j, 0]))


def test_complex_constants_that_need_no_gradient_still_work():
    c = wg.tensor(np.array([1 + 2j]))
    assert (c * 2).dtype == np.complex128  # nothing requires grad: plain NumPy
    assert wg.grad(lambda x: x * np.abs(np.array(3 + 4j)))(2.0) == 5.0


# -- Python numbers and non-array outputs ---------------------------------------------
INSIDE = "inside a wengert transform"


@pytest.mark.parametrize("fun", [
    math.exp,
    lambda x: float(x) ** 2,
    lambda x: int(x) * 1.0,
    lambda x: x.item() * 2.0,
    lambda x: sum(x.tolist()),
])
def test_python_numbers_of_traced_values_raise(fun):
    with pytest.raises(TypeError, match=INSIDE + r".*np\.exp\(x\), not math\.exp\(x\)"):
        wg.grad(fun)(np.array(1.5) if fun is not math.exp else 1.5)


def test_python_numbers_raise_in_forward_mode_and_vjp():
    with pytest.raises(TypeError, match="drop its tangent"):
        wg.jvp(math.exp, (1.0,), (1.0,))
    with pytest.raises(TypeError, match="drop its tangent"):
        wg.jvp(lambda x: x.tolist(), (np.ones(2),), (np.ones(2),))
    with pytest.raises(TypeError, match=INSIDE):
        wg.vjp(lambda x: float(x) * 2.0, 1.0)
    with pytest.raises(TypeError, match=INSIDE):
        wg.hessian(lambda x: math.sin(x))(1.0)


def test_storing_a_traced_value_into_a_numpy_array_raises():
    def into_buffer(x):
        buf = np.zeros(2)
        buf[0] = x
        return np.sum(buf)

    with pytest.raises(ValueError) as info:  # NumPy's error, caused by ours
        wg.grad(into_buffer)(1.0)
    assert "gradient would be lost" in str(info.value.__cause__)
    assert "np.zeros_like(x)" in str(info.value.__cause__)

    def slice_into_buffer(x):
        buf = np.zeros(3)
        buf[:2] = x
        return np.sum(buf)

    with pytest.raises(TypeError, match=r"np\.stack.*np\.where"):
        wg.grad(slice_into_buffer)(np.ones(2))


def _item(buf, x):
    buf[0] = x[0]


def _item_add(buf, x):
    buf[1] += x[0]


def _slice(buf, x):
    buf[:2] = x


def _fancy(buf, x):
    buf[[0, 2]] = x


STORES = {
    "buf[i] = x": _item,
    "buf[i] += x": _item_add,
    "buf[:2] = x": _slice,
    "buf[[0, 2]] = x": _fancy,
    "np.copyto": lambda buf, x: np.copyto(buf[:2], x),
    "np.put": lambda buf, x: np.put(buf, [0, 2], x),
    "np.place": lambda buf, x: np.place(buf, np.array([True, False, True]), x),
    "np.putmask": lambda buf, x: np.putmask(buf[:2], np.array([True, True]), x),
    "np.put_along_axis": lambda buf, x: np.put_along_axis(buf, np.array([0, 1]), x, axis=0),
    "np.add.at": lambda buf, x: np.add.at(buf, [0, 1], x),
    "out=": lambda buf, x: np.multiply(x, 2.0, out=buf[:2]),
}


def _writer(store):
    def f(x):
        buf = np.zeros(3)
        store(buf, x)
        return np.sum(buf) + 0.0 * np.sum(x)

    return f


def _in_tape(f, x):
    v = wg.Variable(x)
    with wg.GradientTape():
        return f(v)


MODES = {
    "grad": lambda f, x: wg.grad(f)(x),
    "jvp": lambda f, x: wg.jvp(f, (x,), (np.ones(2),)),
    "hessian": lambda f, x: wg.hessian(f)(x),
    "tensor": lambda f, x: f(wg.tensor(x, requires_grad=True)),
    "dual": lambda f, x: f(Dual(x, np.ones(2))),
    "GradientTape": _in_tape,
    "compile(grad)": lambda f, x: wg.compile(wg.grad(f))(x),
}


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("mode", MODES)
def test_writing_a_traced_value_into_a_numpy_array_says_the_gradient_would_be_lost(mode, store):
    with pytest.raises((TypeError, ValueError)) as info:
        MODES[mode](_writer(STORES[store]), np.array([1.0, 2.0]))
    error = info.value
    if isinstance(error, ValueError):  # buf[i] = x: NumPy's own error, caused by wengert's
        assert "setting an array element" in str(error)
        error = error.__cause__
    assert isinstance(error, TypeError)
    assert "gradient would be lost" in str(error) and "np.zeros_like(x)" in str(error)


def test_writes_into_numpy_arrays_that_lose_nothing_still_work():
    # a tensor that requires no grad (nothing to lose), and a user's float(t), as in PyTorch
    for store in STORES.values():
        _writer(store)(wg.tensor(np.array([1.0, 2.0])))
    t = wg.tensor(3.0, requires_grad=True)
    assert float(t) == 3.0 and t.item() == 3.0
    buf = np.zeros(2)
    buf[0] = wg.stop_gradient(t)
    buf[1] = t.detach()
    np.testing.assert_array_equal(buf, [3.0, 3.0])


def test_the_buffer_the_message_names_keeps_the_gradient():
    def f(x):
        buf = np.zeros_like(x, shape=(3,))
        buf[0] = x[0]
        buf[2] = x[1] * 2.0
        return np.sum(buf ** 2)

    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(wg.grad(f)(x), [2.0, 16.0])
    assert wg.jvp(f, (x,), (np.ones(2),))[1] == 18.0
    np.testing.assert_array_equal(wg.compile(wg.grad(f))(x), [2.0, 16.0])
    v = wg.Variable(x)
    with wg.GradientTape() as tape:
        y = f(v)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 16.0])


def test_a_watched_tensor_converted_to_an_array_inside_a_tape_raises():
    x = wg.tensor([1.0, 2.0])
    with wg.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match="gradient would be lost"):
            np.asarray(x)
        with pytest.raises(TypeError, match="no wengert gradient rule"):
            np.char.upper(x)
        with tape.stop_recording():
            np.asarray(x)  # not recorded: nothing to lose
    np.asarray(x)


def test_building_an_array_from_tensors_points_to_stack():
    def polar(t):
        return np.sum(np.array([2.0 * np.cos(t), 2.0 * np.sin(t)]))

    with pytest.raises(TypeError, match=r"np\.stack") as info:
        wg.grad(polar)(0.3)
    assert "detach" not in str(info.value).split("np.stack")[0]
    # the spelling it points to works:
    g = wg.grad(lambda t: np.sum(np.stack([2.0 * np.cos(t), 2.0 * np.sin(t)])))(0.3)
    assert g == pytest.approx(2.0 * (np.cos(0.3) - np.sin(0.3)))


def test_python_numbers_of_a_users_tensor_detach_as_in_pytorch():
    x = wg.tensor(1.5, requires_grad=True)
    assert float(x * 2) == 3.0 and (x * 2).item() == 3.0 and math.exp(x) == math.exp(1.5)
    assert wg.tensor([1.0, 2.0], requires_grad=True).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("bad, what", [(lambda x: None, "NoneType"), (lambda x: "a", "str"),
                                       (lambda x: [x, x], "list"),
                                       (lambda x: {"y": x}, "dict")])
def test_non_array_outputs_of_grad_raise(bad, what):
    with pytest.raises(TypeError, match=f"must return a scalar.*got {what}"):
        wg.grad(bad)(1.0)


def test_vjp_refuses_non_numeric_outputs():
    # (None is an empty pytree, as in JAX: no outputs, no cotangents)
    with pytest.raises(TypeError, match="output leaf 1.*str"):
        wg.vjp(lambda x: (x, "label"), 1.0)


def test_a_constant_numeric_output_has_zero_gradient():
    # As in JAX: an output that does not depend on the input has gradient zero.
    assert wg.grad(lambda x: 3.0)(1.0) == 0.0
    np.testing.assert_array_equal(wg.grad(lambda x: np.float64(2.0))(np.ones(2)), 0.0)


# -- float32 ----------------------------------------------------------------------------
def test_grad_keeps_the_input_type_and_dtype():
    g = wg.grad(lambda x: x ** 2 * 3.0)(np.float32(2.0))
    assert type(g) is np.float32 and g == 12.0
    g = wg.grad(lambda x: np.sum(x * np.float64(2.0)))(np.ones(2, np.float32))
    assert g.dtype == np.float32
    g = wg.grad(lambda x: x * 2.0)(np.array(1.0, np.float32))
    assert type(g) is np.ndarray and g.dtype == np.float32 and g.shape == ()
    assert type(wg.grad(lambda x: x * x)(2.0)) is float


def test_integer_casts_are_constants_at_every_level():
    # An integer cast of an outer level's value (a user's tensor under wg.grad, or an
    # outer transform's tensor) must not carry a gradient at the inner level.
    f = lambda y: np.sum(y.astype(np.int32) * y)  # d/dy = int(y)
    x0 = np.array([1.7, 2.5])
    x = wg.tensor(x0, requires_grad=True)
    np.testing.assert_array_equal(np.asarray(wg.grad(f)(x)), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(wg.vjp(lambda y: y.astype(int) * y, x)[1](
        np.ones(2))[0]), [1.0, 2.0])
    np.testing.assert_array_equal(wg.grad(lambda z: np.sum(wg.grad(f)(z)))(x0), [0.0, 0.0])
    np.testing.assert_array_equal(wg.jacrev(wg.grad(f))(x0), np.zeros((2, 2)))
    g = lambda y: np.sum(y.astype(bool) * y) + np.sum(y, dtype=int) * np.sum(y)
    np.testing.assert_array_equal(wg.hessian(g)(x0), np.zeros((2, 2)) + 0.0)
    np.testing.assert_array_equal(wg.jacrev(wg.grad(g))(x0), np.zeros((2, 2)) + 0.0)


def test_wg_tensor_of_a_value_differentiated_by_a_reverse_transform_raises():
    # It would cut the value from the computation (a zero gradient); forward mode keeps the
    # tangent (a tensor over a dual number: leaves made inside wg.jvp), so jacrev and jacfwd
    # never silently disagree.
    with pytest.raises(TypeError, match="cut it from the computation"):
        wg.jacrev(lambda x: wg.tensor(x) ** 2)(X)
    np.testing.assert_allclose(wg.jacfwd(lambda x: wg.tensor(x) ** 2)(X), np.diag(2 * X))
    t = wg.tensor(X, requires_grad=True)  # a user's tensor is copied and cut, as in PyTorch
    assert not wg.tensor(t).requires_grad


def test_numpy_method_of_a_value_a_transform_differentiates_raises():
    # .numpy() drops the derivative as float() and .item() do (PyTorch refuses it on a
    # tensor that requires grad; JAX's tracers refuse np.asarray)
    def f(x):
        return np.sum(x.numpy() ** 2) + np.sum(x)

    with pytest.raises(TypeError, match=r"numpy\(\) of a traced value"):
        wg.grad(f)(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"numpy\(\) of a traced value"):
        wg.value_and_grad(f)(np.array([1.0, 2.0]))
    # the user's tensors and the values of stop_gradient still read as arrays
    np.testing.assert_array_equal(wg.tensor([1.0], requires_grad=True).numpy(), [1.0])
    g = wg.grad(lambda x: np.sum(x * wg.stop_gradient(x).numpy()))(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0])
