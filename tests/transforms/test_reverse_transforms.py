"""Functional transforms: grad, value_and_grad, vjp on plain NumPy values and pytrees."""

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from numeric_gradient import real_gradient


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


def test_grad_of_rosenbrock_with_plain_numpy():
    x = np.array([-1.2, 1.0, 0.5, 2.0])
    g = wg.grad(rosenbrock)(x)
    assert isinstance(g, np.ndarray)
    np.testing.assert_allclose(g, rosenbrock_grad(x), rtol=1e-12)


def test_grad_returns_plain_float_for_float_input():
    g = wg.grad(lambda x: x * x)(3.0)
    assert type(g) is float and g == 6.0


def test_argnums_tuple_and_pytrees():
    def loss(params, x, y):
        pred = x @ params["w"] + params["b"]
        return np.mean((pred - y) ** 2)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3))
    y = rng.normal(size=5)
    params = {"w": rng.normal(size=3), "b": 0.5}
    g = wg.grad(loss)(params, x, y)
    assert set(g) == {"w", "b"} and isinstance(g["b"], float)
    r = x @ params["w"] + params["b"] - y
    np.testing.assert_allclose(g["w"], 2 * x.T @ r / 5)
    np.testing.assert_allclose(g["b"], 2 * r.mean())
    gp, gx = wg.grad(loss, argnums=(0, 1))(params, x, y)
    np.testing.assert_allclose(gx, 2 * np.outer(r, params["w"]) / 5)
    gl = wg.grad(lambda ws: ws[0] * ws[1][0])([2.0, (3.0,)])
    assert gl == [3.0, (2.0,)]


def test_value_and_grad_and_has_aux():
    v, g = wg.value_and_grad(lambda x: np.sum(x**2))(np.array([1.0, 2.0]))
    assert v == 5.0
    np.testing.assert_array_equal(g, [2.0, 4.0])
    g, aux = wg.grad(lambda x: (np.sum(x**2), {"n": x.shape[0], "y": x * 2}), has_aux=True)(
        np.array([1.0, 2.0])
    )
    assert aux["n"] == 2 and isinstance(aux["y"], np.ndarray)
    (v, aux), g = wg.value_and_grad(lambda x: (x * 3.0, "tag"), has_aux=True)(1.0)
    assert (v, aux, g) == (3.0, "tag", 3.0)


def test_unconnected_argument_gets_zero():
    g = wg.grad(lambda x, y: x * 2.0, argnums=(0, 1))(1.0, np.ones(3))
    assert g[0] == 2.0
    np.testing.assert_array_equal(g[1], np.zeros(3))


def test_vjp_returns_tuple_per_primal():
    a = np.array([1.0, 2.0])
    b = np.array([3.0, 4.0])
    out, f_vjp = wg.vjp(lambda x, y: x * y, a, b)
    np.testing.assert_array_equal(out, a * b)
    ga, gb = f_vjp(np.array([1.0, 10.0]))
    np.testing.assert_array_equal(ga, [3.0, 40.0])
    np.testing.assert_array_equal(gb, [1.0, 20.0])
    ga2, _ = f_vjp(np.array([2.0, 0.0]))  # reusable
    np.testing.assert_array_equal(ga2, [6.0, 0.0])


def test_vjp_with_pytree_output_and_aux():
    out, f_vjp, aux = wg.vjp(lambda x: ((x * 2.0, wnp.sin(x)), "aux"), 0.5, has_aux=True)
    assert aux == "aux"
    (g,) = f_vjp((1.0, 1.0))
    np.testing.assert_allclose(g, 2.0 + np.cos(0.5))


def test_higher_order_grad():
    f = lambda x: wnp.sin(x) * x  # noqa: E731
    d3 = wg.grad(wg.grad(wg.grad(f)))(0.7)
    np.testing.assert_allclose(d3, -3 * np.sin(0.7) - 0.7 * np.cos(0.7), rtol=1e-12)
    d4 = wg.grad(wg.grad(wg.grad(wg.grad(lambda x: x**5))))(2.0)
    np.testing.assert_allclose(d4, 120.0 * 2.0)


def test_no_perturbation_confusion_in_reverse_mode():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1
    assert wg.grad(lambda x: x * wg.grad(lambda y: x + y)(1.0))(1.0) == 1.0
    # the inner gradient depends on the outer variable: d/dx [x * d/dy (x*y)] = 2x
    assert wg.grad(lambda x: x * wg.grad(lambda y: x * y)(1.0))(3.0) == 6.0


def test_grad_inside_tensor_code():
    x = wg.tensor(2.0, requires_grad=True)
    dfdx = wg.grad(lambda t: t**3)(x)  # stays connected to x
    dfdx.backward()
    np.testing.assert_allclose(x.grad, 12.0)


def test_grad_of_constant_function_is_zero():
    np.testing.assert_array_equal(wg.grad(lambda x: 3.0)(np.ones(2)), np.zeros(2))


def test_grad_under_no_grad_still_works():
    with wg.no_grad():
        assert wg.grad(lambda x: x * x)(2.0) == 4.0


def test_kink_conventions_exact():
    assert wg.grad(lambda x: wnp.abs(x))(0.0) == 0.0
    assert wg.grad(lambda x: wnp.sqrt(x))(0.0) == np.inf
    assert wg.grad(lambda x: wnp.relu(x))(0.0) == 0.0
    gx, gy = wg.grad(lambda x, y: wnp.maximum(x, y), argnums=(0, 1))(1.0, 1.0)
    assert (gx, gy) == (0.5, 0.5)
    gx, gy = wg.grad(lambda x, y: wnp.minimum(x, y), argnums=(0, 1))(2.0, 2.0)
    assert (gx, gy) == (0.5, 0.5)
    gx, gy = wg.grad(lambda x, y: np.fmax(x, y), argnums=(0, 1))(2.0, 2.0)
    assert (gx, gy) == (0.5, 0.5)
    g = wg.grad(lambda x: np.max(x))(np.array([1.0, 3.0, 3.0, 0.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])
    g = wg.grad(lambda x: np.min(x))(np.array([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(g, [1 / 3, 1 / 3, 1 / 3])
    g = wg.grad(lambda x: np.sum(np.clip(x, 0.0, 1.0)))(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 1.0, 0.0])
    assert wg.grad(lambda x: np.floor(x) + np.round(x) + np.sign(x))(0.3) == 0.0


def test_jax_style_error_on_bad_argnums():
    with pytest.raises(ValueError, match="argnums"):
        wg.grad(lambda x: x, argnums=3)(1.0)


@pytest.mark.parametrize("fun", [
    lambda x: x.sum(),
    lambda x: np.mean(x),
    lambda x: np.sum(x[1:]),
    lambda x: (x + 1.0).sum(),
])
def test_gradients_are_writable_arrays_of_their_own(fun):
    # A sum's cotangent is a read-only broadcast view inside the sweep; what the
    # caller gets back is an ordinary array it may modify in place.
    x = np.arange(4.0)
    results = [wg.grad(fun)(x), wg.value_and_grad(fun)(x)[1], wg.vjp(fun, x)[1](1.0)[0]]
    for g in results:
        assert type(g) is np.ndarray and g.shape == x.shape
        assert g.flags.writeable and 0 not in g.strides
        g *= 2.0  # would raise on a read-only view
    assert not np.shares_memory(results[0], results[1])


@pytest.mark.parametrize("x, shape", [
    (1.0, (3,)), (np.float64(-2.5), (2, 3)), (1.0, ()), (3.0, (0, 2)),
    (np.arange(3.0), (2, 3)), (np.array(1.5), (4,)), (2, (2,)), (np.float32(1.0), (3,)),
])
def test_broadcast_to_op_matches_numpy(x, shape):
    """The broadcast op (a sum's cotangent) builds a scalar's view directly: the
    same values, dtype, strides and read-only flag as np.broadcast_to."""
    from wengert.ops.broadcast import BROADCAST_TO

    got, want = BROADCAST_TO.impl(x, shape), np.broadcast_to(x, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.strides == want.strides and not got.flags.writeable
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        got[...] = 0.0


def test_conventions_where_a_formula_divides_by_zero():
    # hypot at (0, 0), like a 2-norm at 0: gradient 0 (not NaN) in both modes.
    gx, gy = wg.grad(lambda x, y: np.hypot(x, y), argnums=(0, 1))(0.0, 0.0)
    assert (gx, gy) == (0.0, 0.0)
    assert wg.jvp(lambda x: np.hypot(x, 0.0 * x), (0.0,), (1.0,))[1] == 0.0
    g = wg.grad(lambda x: np.sum(np.hypot(x, x)))(np.array([0.0, 3.0]))
    np.testing.assert_allclose(g, [0.0, np.sqrt(2.0)])
    # std of a constant input: gradient 0 (the centered input is 0), both modes; the rest
    # of the array keeps its usual gradient.
    np.testing.assert_array_equal(wg.grad(np.std)(np.ones(3)), np.zeros(3))
    assert wg.jvp(np.std, (np.ones(3),), (np.arange(3.0),))[1] == 0.0
    rows = np.array([[2.0, 2.0], [1.0, 3.0]])
    g = wg.grad(lambda x: np.sum(np.std(x, axis=1)))(rows)
    np.testing.assert_allclose(g, [[0.0, 0.0], [-0.5, 0.5]])
    # sinc near 0: its Taylor series, no cancellation; sinc''(0) = -π²/3.
    assert wg.grad(np.sinc)(0.0) == 0.0
    np.testing.assert_allclose(wg.grad(np.sinc)(1e-9), -np.pi ** 2 / 3 * 1e-9, rtol=1e-12)
    np.testing.assert_allclose(wg.grad(wg.grad(np.sinc))(0.0), -np.pi ** 2 / 3, rtol=1e-14)
    for x in [0.05, 0.0999, 0.1001, 0.3]:  # either side of the switch to the formula
        fd = (np.sinc(x + 1e-6) - np.sinc(x - 1e-6)) / 2e-6
        np.testing.assert_allclose(wg.grad(np.sinc)(x), fd, rtol=1e-7)


@pytest.mark.parametrize("a", [
    np.array([[1.0, 2.0], [2.0, 4.0]]),
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]]),
    np.zeros((3, 3)),
])
def test_det_of_a_singular_matrix_has_the_adjugate_as_gradient(a):
    # d det A = tr(adj(A) dA) holds at singular A too, where det A · A⁻ᵀ cannot be formed.
    g = wg.grad(np.linalg.det)(a)
    np.testing.assert_allclose(g, real_gradient(np.linalg.det, a), atol=1e-8)
    t = np.arange(a.size, dtype=float).reshape(a.shape)
    np.testing.assert_allclose(wg.jvp(np.linalg.det, (a,), (t,))[1], np.sum(g * t), atol=1e-8)
    assert np.all(np.isfinite(wg.hessian(np.linalg.det)(a)))


def test_transforms_return_plain_values_when_the_function_uses_constant_tensors():
    c = wg.tensor([2.0, 3.0])
    x = np.ones(2)
    for g in [wg.grad(lambda x: np.sum(x * c))(x), wg.jacrev(lambda x: x * c)(x),
              wg.vjp(lambda x: x * c, x)[1](np.ones(2))[0],
              wg.grad(lambda x: np.sum(x * wg.Variable(2.0)))(x)]:
        assert type(g) is np.ndarray
    assert type(wg.grad(lambda x: x * wg.stop_gradient(x))(3.0)) is float
    value, grad = wg.value_and_grad(lambda x: wg.tensor(2.0) * x)(1.0)
    assert (value, grad) == (2.0, 2.0) and type(grad) is float and not isinstance(value, wg.Tensor)


def test_stop_gradient_cuts_forward_mode_too():
    sg = wg.stop_gradient
    assert wg.derivative(lambda x: sg(x))(1.0) == 0.0
    assert wg.jvp(lambda x: x * sg(x), (2.0,), (1.0,)) == (4.0, 2.0)
    np.testing.assert_array_equal(wg.jacfwd(lambda x: x * sg(x))(np.array([2.0])), [[2.0]])
    assert wg.hessian(lambda x: x * sg(x))(2.0) == 0.0
    assert wg.jacrev(wg.grad(lambda x: x * sg(x)))(2.0) == 0.0
    # as in JAX, every level is cut, an outer one too
    assert wg.grad(lambda x: wg.derivative(lambda y: y * sg(x * y))(1.0))(3.0) == 0.0


def test_logaddexp_at_infinity_and_power_at_a_zero_exponent():
    a, b = np.array([np.inf, np.inf, -np.inf, 2.0]), np.array([0.0, np.inf, -np.inf, 1.0])
    for f in (np.logaddexp, np.logaddexp2):
        ga, gb = wg.grad(lambda a, b, f=f: np.sum(f(a, b)), (0, 1))(a, b)
        assert ga[:3].tolist() == [1.0, 0.5, 0.5] and gb[:3].tolist() == [0.0, 0.5, 0.5]
        fd = (f(2.0 + 1e-6, 1.0) - f(2.0 - 1e-6, 1.0)) / 2e-6
        assert ga[3] == pytest.approx(fd, rel=1e-6)
        assert np.all(np.isfinite(wg.jvp(lambda a, f=f: f(a, b), (a,), (np.ones(4),))[1]))
    # d/dy d/dx x**y = x**(y-1) (1 + y ln x): 1/x at y = 0, where x**y is constant in x.
    assert wg.grad(lambda y: wg.grad(lambda x, y: x ** y, 0)(2.0, y))(0.0) == 0.5
    h = wg.hessian(lambda v: v[0] ** v[1])(np.array([2.0, 0.0]))
    np.testing.assert_allclose(h, [[0.0, 0.5], [0.5, np.log(2.0) ** 2]], atol=1e-15)
    # at x = 0 and y = 0 the derivative in x is 0, not NaN, for array exponents too
    g = wg.grad(lambda x: np.sum(x ** np.array([0.0, 2.0])))(np.array([0.0, 0.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0])
