"""``np.roots``, ``np.poly`` and ``np.polyfit`` (``wengert.ops.decompositions.polynomial``): NumPy's
values, the derivative against finite differences to second order in both modes and
against the analytic derivative of a root, and NumPy's refusals."""

from __future__ import annotations

import warnings

import pytest

import numpy as np
import wengert as wg
from wengert.testing import check_grads

RNG = np.random.default_rng(5)
X = np.linspace(0.0, 1.0, 7)
Y = np.sin(3.0 * X)
Y2 = np.stack([Y, Y ** 2], axis=1)
W = RNG.uniform(0.5, 1.5, 7)


def _value(v):
    return v.numpy() if isinstance(v, wg.Tensor) else v


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [2.0, 0.0, 1.0, -1.0], [0.0, 0.0, 1.0, -3.0, 2.0,
                                                                         0.0, 0.0],
                               [3.0], [1.0, 2.0], [0.0, 0.0], [1.0, 0.0, 1.0]])
def test_roots_are_numpys(p):
    p = np.array(p)
    want, got = np.roots(p), _value(np.roots(wg.tensor(p)))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_the_derivative_of_a_simple_root():
    """r(p) with p(r) = 0: dr/dpₖ = −r^(n−k) / p′(r)."""
    p = np.array([1.0, -3.0, 2.0])  # roots 2 and 1
    g = wg.grad(lambda p: np.max(np.roots(p)))(p)
    dp = np.polyval(np.polyder(p), 2.0)
    np.testing.assert_allclose(g, -(2.0 ** np.arange(2, -1, -1)) / dp)


@pytest.mark.parametrize("name", ["real roots", "complex roots", "poly", "poly of a matrix",
                                  "polyfit w", "polyfit 2-d cov", "polyfit unscaled",
                                  "polyfit full"])
def test_derivatives_to_second_order_in_both_modes(name):
    f, args = {
        "real roots": (lambda p: np.real(np.roots(p)) ** 2, (np.array([1.0, -3.0, 2.5, -0.5]),)),
        "complex roots": (lambda p: np.abs(np.roots(p)) ** 2, (np.array([1.0, 0.3, 2.5]),)),
        "poly": (lambda r: np.poly(r), (np.array([1.0, -3.0, 2.5]),)),
        "poly of a matrix": (lambda a: np.poly(a), (np.array([[1.0, 2.0], [0.5, -1.0]]),)),
        "polyfit w": (lambda x, y, w: np.polyfit(x, y, 2, w=w), (X, Y, W)),
        "polyfit 2-d cov": (lambda x, y: np.polyfit(x, y, 2, cov=True)[1], (X, Y2)),
        "polyfit unscaled": (lambda y: np.polyfit(X, y, 3, cov="unscaled")[1], (Y,)),
        "polyfit full": (lambda y: np.polyfit(X, y, 2, full=True)[1], (Y,)),
    }[name]
    assert check_grads(f, args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("kwargs", [{}, {"w": W}, {"full": True}, {"cov": True},
                                    {"cov": "unscaled"}, {"rcond": 1e-3}])
@pytest.mark.parametrize("y", [Y, Y2], ids=["1-d", "2-d"])
def test_polyfit_values_are_numpys(kwargs, y):
    want = np.polyfit(X, y, 2, **kwargs)
    got = np.polyfit(wg.tensor(X), wg.tensor(y), 2, **kwargs)
    for w, g in zip(*(v if isinstance(v, tuple) else (v,) for v in (want, got))):
        np.testing.assert_allclose(_value(g), w, rtol=1e-10, atol=1e-12)


def test_poly_values_are_numpys():
    for r in ([1.0, 2.0], [1 + 1j, 1 - 1j, 3.0], np.array([[1.0, 2.0], [3.0, 4.0]]),
              np.array([[1.0, -2.0], [3.0, 1.0]]), [1j, 2.0]):
        want = np.poly(r)
        got = _value(wg.numpy.poly(wg.tensor(np.asarray(r))))
        assert np.result_type(got) == np.result_type(want)
        np.testing.assert_allclose(got, want)
    assert wg.numpy.poly(wg.tensor(np.zeros(0))) == 1.0 == np.poly(np.zeros(0))


def test_misuse_as_numpy():
    with pytest.raises(ValueError, match="rank-1"):
        np.roots(wg.tensor(np.ones((2, 2))))
    with pytest.raises(ValueError, match="1d or non-empty square"):
        np.poly(wg.tensor(np.ones((2, 3))))
    with pytest.raises(TypeError, match="same length"):
        np.polyfit(wg.tensor(X), Y[:3], 1)
    with pytest.raises(ValueError, match="deg >= 0"):
        np.polyfit(wg.tensor(X), Y, -1)
    with pytest.raises(ValueError, match="exceed order"):
        np.polyfit(wg.tensor(X[:3]), Y[:3], 2, cov=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.polyfit(wg.tensor(X[:3]), Y[:3], 5)
    assert any(issubclass(w.category, np.exceptions.RankWarning) for w in caught)


def test_no_roots_is_still_a_traced_value():
    for p in ([2.0, 0.0], [3.0], [0.0, 0.0]):
        r = np.roots(wg.tensor(np.array(p)))
        assert isinstance(r, wg.Tensor) and r.dtype == np.roots(np.array(p)).dtype
    np.testing.assert_array_equal(wg.grad(lambda p: np.sum(np.roots(p)))(np.array([3.0])), [0.0])


# -- dtypes as NumPy's; polyint's k --------------------------------------------------------
def _value(x):
    """The plain array beneath a result (a tensor, or an ndarray where the result
    depends on nothing traced)."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.int64])
@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [1.0, -3.0, 2.0, 0.0], [2.0, 0.0]])
def test_roots_keeps_numpys_dtype(dtype, p):
    # np.roots of float32 coefficients is float32 (complex64 roots), not float64.
    p = np.array(p, dtype=dtype)
    want = np.roots(p)
    got = _value(np.roots(wg.tensor(p)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float16, np.int32, np.float64])
def test_poly_keeps_numpys_dtype(dtype):
    # np.poly of float32 roots is float32, not float64.
    r = np.array([1.0, 2.0, -0.5], dtype=dtype)
    want = np.poly(r)
    got = _value(np.poly(wg.tensor(r)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_compiled_poly_of_conjugate_pairs_is_real_as_eager():
    # Eagerly np.poly of conjugate pairs is real (NumPy's test); the compiled function
    # makes the same test on its traced roots at run time, so a graph traced on
    # conjugate pairs is real there and complex on roots that are not pairs.
    f = wg.compile(lambda r: np.poly(r))
    pair = np.array([1 + 1j, 1 - 1j])
    other = np.array([1 + 1j, 2 + 0j])
    got = f(pair)
    assert np.asarray(got).dtype == np.poly(pair).dtype
    np.testing.assert_allclose(got, np.poly(pair))
    got = f(other)
    assert np.asarray(got).dtype == np.poly(other).dtype
    np.testing.assert_allclose(got, np.poly(other))


def test_polyint_reads_k_as_numpy():
    """One constant in a list (or a (1,) array) serves every integral, as NumPy's (also
    for m > 1); a complex constant works (k is not converted with float()); a float m is
    NumPy's int(m)."""
    p = np.array([1.0, 2.0, 3.0, 4.0])
    for k in ([5.0], np.array([5.0]), 1j + 2.0):
        np.testing.assert_allclose(np.polyint(wg.tensor(p), 2, k).numpy(), np.polyint(p, 2, k))
    np.testing.assert_allclose(
        wg.grad(lambda k: np.sum(wg.numpy.polyint(p, 3, k)))(np.array([5.0])),
        [np.sum(np.polyint(p, 3, [1.0]) - np.polyint(p, 3, [0.0]))])
    np.testing.assert_allclose(np.polyint(wg.tensor(p), 2.0).numpy(), np.polyint(p, 2.0))
    np.testing.assert_allclose(np.polyder(wg.tensor(p), 2.0).numpy(), np.polyder(p, 2.0))


def test_roots_derivative_at_a_double_root_refuses():
    # At a double root the roots move as √ε (their companion matrix is a Jordan block):
    # the gradient of Σr² = c₁²/c₀² − 2c₂/c₀ at (1, -2, 1) is (-6, -4, -2), and the
    # eigenvalue rule gave (-4, -2, 0). It refuses instead.
    c = np.array([1.0, -2.0, 1.0])
    with pytest.raises(np.linalg.LinAlgError, match="defective"):
        wg.grad(lambda c: np.sum(np.real(np.roots(c)) ** 2))(c)
    # simple roots keep their derivative: Σr² of (1, -3, 2) is 9 - 4
    np.testing.assert_allclose(wg.grad(lambda c: np.sum(np.real(np.roots(c)) ** 2))(
        np.array([1.0, -3.0, 2.0])), [-14.0, -6.0, -2.0], rtol=1e-10)
