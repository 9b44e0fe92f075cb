"""Bugs found attacking session 19's later additions (i0, histograms, assembly, unique_*,
in-place writes into fresh tensors and zeros_like of duals, integer powers, slogdet under
compile)."""

import math

import pytest

import numpy as np
import wengert as wg

X = np.array([1.5, -2.25, 0.7])


# -- in-place writes into a tensor made inside grad ------------------------------------------


def test_fresh_tensor_multiplied_in_place_inside_grad():
    """``a = wg.tensor(ones); a *= x``: the multiply saved the constant tensor ``a`` itself,
    and the write then put ``x`` in it, so the rule ``g·a`` read ``x`` (the gradient was
    ``c·x``, and a tensor, instead of ``c``)."""
    c = np.array([1.0, 2.0, 3.0])

    def f(x):
        a = wg.tensor(np.ones(3))
        a *= x
        return a

    _, pullback = wg.vjp(f, X)
    (g,) = pullback(c)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, c)

    def h(x):
        a = wg.tensor(np.full(3, 2.0))
        np.multiply(a, x, out=a)
        np.divide(1.0, a, out=a)
        a[[0, 2]] *= x[[1, 2]]
        return np.sum(a)

    def ref(x):
        a = 1.0 / (2.0 * x)
        a = a * np.stack([x[1], 1.0 + 0.0 * x[0], x[2]])
        return np.sum(a)

    np.testing.assert_allclose(wg.grad(h)(X), wg.grad(ref)(X))
    np.testing.assert_allclose(wg.hessian(h)(X), wg.hessian(ref)(X))


def test_fresh_tensor_written_in_place_in_a_nested_grad():
    """The outer level's node saved the fresh tensor too: its version check failed
    ("modified by an inplace operation") though the write was the op's own."""

    def f(x):
        def inner(y):
            a = wg.tensor(np.full(3, 2.0))
            a *= y
            a *= x
            return np.sum(a * a)

        return np.sum(wg.grad(inner)(x) * x)

    def ref(x):
        return np.sum(wg.grad(lambda y: np.sum((2.0 * y * x) ** 2))(x) * x)

    np.testing.assert_allclose(wg.grad(f)(X), wg.grad(ref)(X))


def test_view_of_a_fresh_tensor_follows_its_base_into_grad():
    """``v = a[1]`` then ``a[1] = sin(x)``: the base joined grad's level but the view kept
    the outer one, so ``v`` looked constant and its gradient was silently zero."""

    def f(x):
        a = wg.tensor(np.zeros((2, 3)))
        v = a[1]
        a[1] = np.sin(x)
        return np.sum(v * v)

    np.testing.assert_allclose(wg.grad(f)(X), 2 * np.sin(X) * np.cos(X))
    assert wg.check_grads(f, (X,), order=2, modes=("rev",))


# -- np.i0 -----------------------------------------------------------------------------------


def _i0_derivative(n, x):
    """The n-th derivative of I₀ from its power series Σ (x/2)^2k / k!²."""
    total = 0.0
    for k in range(40):
        if 2 * k >= n:
            c = 1.0 / (4.0 ** k * math.factorial(k) ** 2)
            total += c * math.factorial(2 * k) / math.factorial(2 * k - n) * x ** (2 * k - n)
    return total


@pytest.mark.parametrize("x", [0.0, 1e-8, 1e-4, 0.5, 1.9, 2.1])
def test_i0_higher_derivatives_near_zero(x):
    """I₁′ = I₀ − I₁/x cancels in its derivatives near 0: the fourth derivative of i0 was
    6.5 at 1e-8 and 0 at 0 (3/8 both), the fifth −2.3e9 at 1e-8."""
    g = np.i0
    for n in range(1, 7):
        g = wg.grad(g)
        np.testing.assert_allclose(g(x), _i0_derivative(n, x), rtol=1e-9, atol=1e-15)
    f = np.i0
    for n in range(1, 5):
        f = (lambda h: lambda u: wg.jvp(h, (u,), (1.0,))[1])(f)
        np.testing.assert_allclose(f(x), _i0_derivative(n, x), rtol=1e-9, atol=1e-15)


def test_i0_second_derivative_overflows_to_inf():
    """Past x ≈ 713 (92 in float32) I₀ and I₁ are inf: I₁′ = inf − inf/x was NaN."""
    d2 = wg.grad(wg.grad(np.i0))
    with np.errstate(all="ignore"):
        assert d2(800.0) == np.inf and d2(-800.0) == np.inf
        assert d2(np.float32(100.0)) == np.inf


# -- histogramdd / histogram2d ------------------------------------------------------------------


def test_histogramdd_of_float32_weights_is_float64_as_numpy():
    """NumPy bins the weights with bincount, in float64: a float32 histogram (summed in
    float32) came back."""
    s = np.array([[0.1, 0.2], [0.6, 0.9], [0.7, 0.1], [0.2, 0.3]])
    w = np.array([1e-8, 1.0, 3.0, 1.0], dtype=np.float32)
    want = np.histogramdd(s, bins=2, weights=w)[0]
    got = np.histogramdd(s, bins=2, weights=wg.tensor(w))[0]
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), want)
    got2 = np.histogram2d(s[:, 0], s[:, 1], bins=2, weights=wg.tensor(w))[0]
    assert got2.dtype == np.float64
    g = wg.grad(lambda w: np.histogram2d(s[:, 0], s[:, 1], bins=2, weights=w)[0][0, 0])(w)
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 1.0])


def test_histogramdd_refuses_complex_weights_as_numpy():
    s = np.array([0.1, 0.2, 0.7])
    w = np.array([1.0, 2.0, 3.0]) + 1j
    with pytest.raises(TypeError):
        np.histogramdd(s, bins=2, weights=w)
    with pytest.raises(TypeError, match="float64"):
        np.histogramdd(s, bins=2, weights=wg.tensor(w))


# -- trim_zeros ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, error", [
    ({"trim": "x"}, ValueError),  # was a silent no-op
    ({"axis": 5}, np.exceptions.AxisError),  # wrapped round to axis 1
    ({"axis": (0, 0)}, (ValueError, TypeError)),  # (NumPy 2.3: a TypeError)
])
def test_trim_zeros_refuses_what_numpy_refuses(kwargs, error):
    a = np.pad(np.ones((2, 2)), 1)
    with pytest.raises(error):
        np.trim_zeros(a, **kwargs)
    with pytest.raises(error):
        np.trim_zeros(wg.tensor(a), **kwargs)


# -- polyint / polyder ---------------------------------------------------------------------------


def test_polyint_reads_k_as_numpy():
    """One constant in a list (or a (1,) array) serves every integral, as NumPy's (it was
    refused for m > 1); a complex constant works (float(k) raised); a float m is NumPy's
    int(m)."""
    p = np.array([1.0, 2.0, 3.0, 4.0])
    for k in ([5.0], np.array([5.0]), 1j + 2.0):
        np.testing.assert_allclose(np.polyint(wg.tensor(p), 2, k).numpy(), np.polyint(p, 2, k))
    np.testing.assert_allclose(
        wg.grad(lambda k: np.sum(wg.numpy.polyint(p, 3, k)))(np.array([5.0])),
        [np.sum(np.polyint(p, 3, [1.0]) - np.polyint(p, 3, [0.0]))])
    np.testing.assert_allclose(np.polyint(wg.tensor(p), 2.0).numpy(), np.polyint(p, 2.0))
    np.testing.assert_allclose(np.polyder(wg.tensor(p), 2.0).numpy(), np.polyder(p, 2.0))


# -- functions of shapes and dtypes under a trace -------------------------------------------------


def test_shape_and_dtype_functions_are_answered_at_trace_time():
    """np.common_type, einsum_path and the *_indices_from read only dtypes and shapes, as
    np.result_type does: recorded as steps of a graph, common_type was an object value
    (v.astype(np.common_type(v)) compiled to an object array) and the indices were traced
    integers that indexing then refused."""
    x = np.array([1.5, -2.25, 0.7])
    out = wg.compile(lambda v: v.astype(np.common_type(v)) * 2)(x)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, 2 * x)
    m = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(wg.compile(lambda a: a[np.triu_indices_from(a, k=1)])(m),
                                  m[np.triu_indices_from(m, k=1)])
    np.testing.assert_array_equal(wg.compile(lambda a: a[np.diag_indices_from(a)])(m),
                                  np.diag(m))
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 4))
    path = np.einsum_path("ij,jk->ik", a, b)[0]
    np.testing.assert_allclose(
        wg.compile(lambda a, b: np.einsum("ij,jk->ik", a, b,
                                          optimize=np.einsum_path("ij,jk->ik", a, b)[0]))(a, b),
        np.einsum("ij,jk->ik", a, b, optimize=path))
