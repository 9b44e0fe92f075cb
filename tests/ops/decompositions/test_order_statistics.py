"""``median``, ``quantile``, ``percentile`` and their ``nan*`` forms
(``wengert.ops.decompositions.order_statistics``): NumPy's values and dtypes for all thirteen
methods, axes and ``keepdims``; NaN propagation and skipping; empty axes; the gradient of each
against finite differences; compiled graphs that follow new NaN patterns."""

from __future__ import annotations

import warnings

import pytest

import numpy as np
import wengert as wg
from wengert.ops.decompositions.order_statistics import METHODS
from wengert.testing import check_grads

RNG = np.random.default_rng(11)
M = RNG.normal(size=(4, 6))
M_NAN = M.copy()
M_NAN[RNG.random(M.shape) < 0.35] = np.nan
M_NAN[1] = np.nan  # a lane of NaN only
M_NAN[2, :] = RNG.normal(size=6)  # a lane with none
CUBE = RNG.normal(size=(2, 3, 5))

PAIRS = [(np.quantile, "quantile"), (np.nanquantile, "nanquantile")]
SHAPES = {"vector": RNG.normal(size=7), "matrix": M, "nan matrix": M_NAN, "cube": CUBE,
          "one": np.array([2.5]), "0-d": np.array(3.0),
          "float32": RNG.normal(size=(4, 5)).astype(np.float32),
          "int": RNG.integers(0, 5, size=(4, 6))}


def _as_input(a):
    return wg.tensor(a) if a.dtype.kind == "f" else a


def _value(x):
    return x.numpy() if isinstance(x, wg.Tensor) else np.asarray(x)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_values_and_dtypes_equal_numpy(method, shape):
    a = SHAPES[shape]
    axes = [None] if a.ndim == 0 else [None, 0, -1] + ([(0, 1)] if a.ndim >= 2 else [])
    for q in (0.0, 0.3, 0.5, 1.0, [0.1, 0.9], 0.999999):
        for axis in axes:
            for keepdims in (False, True):
                for numpy_fn, _ in PAIRS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        want = numpy_fn(a, q, axis=axis, method=method, keepdims=keepdims)
                        got = _value(numpy_fn(_as_input(a), q, axis=axis, method=method,
                                              keepdims=keepdims))
                    assert got.shape == np.shape(want)
                    assert got.dtype == np.asarray(want).dtype, (q, axis, keepdims)
                    tol = 1e-6 if a.dtype == np.float32 else 1e-13
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def test_median_percentile_and_their_nan_forms_equal_numpy():
    for a in (M, M_NAN, CUBE, M.astype(np.float32), np.arange(7)):
        for axis in (None, 0, 1, (0, 1))[:a.ndim + 1]:
            for fn, args in ((np.median, ()), (np.nanmedian, ()), (np.percentile, (35,)),
                             (np.nanpercentile, ([10, 60],))):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = fn(a, *args, axis=axis)
                    got = _value(fn(_as_input(a), *args, axis=axis))
                assert got.dtype == np.asarray(want).dtype
                np.testing.assert_allclose(got, want, rtol=1e-5 if a.dtype == np.float32
                                           else 1e-12, equal_nan=True)


def test_a_nan_makes_median_and_quantile_nan_and_takes_the_gradient():
    """As NumPy, a lane with a NaN has NaN quantiles (not an interpolation among the
    other entries); the gradient goes to the NaN entry, as PyTorch's median does."""
    x = np.array([1.0, np.nan, 3.0])
    assert np.isnan(np.median(wg.tensor(x)).numpy())
    assert np.isnan(np.quantile(wg.tensor(x), 0.2).numpy())
    np.testing.assert_array_equal(wg.grad(np.median)(x), [0.0, 1.0, 0.0])
    m = np.array([[1.0, 2.0, 4.0], [1.0, np.nan, 3.0]])
    np.testing.assert_array_equal(np.median(wg.tensor(m), axis=1).numpy(),
                                  np.median(m, axis=1))


def test_nan_forms_skip_nan_and_give_it_no_gradient():
    x = np.array([3.0, np.nan, 1.0, 2.0, 5.0])
    np.testing.assert_array_equal(wg.grad(np.nanmedian)(x), [0.5, 0.0, 0.0, 0.5, 0.0])
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        g = wg.grad(lambda x: np.sum(np.nanquantile(x, 0.75, axis=1)))(M_NAN)
    assert np.all(g[np.isnan(M_NAN)] == 0.0)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g.sum(axis=1), [1.0, 0.0, 1.0, 1.0])  # the NaN lane: none


def test_a_lane_of_nan_warns_as_numpy_and_gives_nan():
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        y = np.nanmedian(wg.tensor(M_NAN), axis=1)
    assert np.isnan(y.numpy()[1]) and not np.isnan(y.numpy()[[0, 2, 3]]).any()


def test_empty_axes_as_numpy():
    with pytest.raises(IndexError):
        np.quantile(wg.tensor(np.zeros(0)), 0.5)
    with pytest.warns(RuntimeWarning):
        y = np.nanmedian(wg.tensor(np.zeros((0, 3))), axis=0, keepdims=True)
    assert y.shape == (1, 3) and np.isnan(y.numpy()).all()
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert np.isnan(np.median(wg.tensor(np.zeros(0))).numpy())
    assert np.median(wg.tensor(np.zeros((0, 3))), axis=1).shape == (0,)
    g = wg.grad(lambda x: np.sum(np.quantile(x, [0.2, 0.4], axis=1)))(np.zeros((0, 3)))
    assert g.shape == (0, 3)


@pytest.mark.parametrize("method", [m for m in METHODS if m not in ("lower", "higher")])
def test_derivatives_of_every_method_to_second_order(method):
    def f(x):
        return np.nanquantile(x * 1.5, [0.2, 0.7], axis=1, method=method) ** 2

    def g(x):
        return np.quantile(x * 1.5, 0.3, axis=(0, 1), method=method) ** 2

    assert check_grads(f, (M_NAN[[0, 2, 3]],), order=2, modes=("rev", "fwd"))
    assert check_grads(g, (M,), order=2, modes=("rev", "fwd"))


def test_the_gradient_splits_between_the_two_entries_it_interpolates():
    x = np.array([4.0, 1.0, 3.0, 2.0])  # sorted: 1 2 3 4; q=0.75 → 3 + 0.25·(4 − 3)
    np.testing.assert_allclose(wg.grad(lambda x: np.quantile(x, 0.75))(x),
                               [0.25, 0.0, 0.75, 0.0])
    np.testing.assert_array_equal(
        wg.grad(lambda x: np.quantile(x, 0.75, method="higher"))(x), [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(
        wg.grad(lambda x: np.quantile(x, 0.4, method="midpoint"))(x), [0.0, 0.0, 0.5, 0.5])


def test_compiled_graphs_follow_new_nan_patterns():
    f = wg.compile(lambda x: np.nanmedian(x, axis=1))
    g = wg.compile(lambda x: np.median(x))
    df = wg.grad(lambda x: np.sum(np.nanpercentile(x, 40, axis=0) ** 2))
    dfc = wg.compile(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in (M, M_NAN, np.where(RNG.random(M.shape) < 0.5, np.nan, M)):
            np.testing.assert_allclose(f(x), np.nanmedian(x, axis=1), equal_nan=True)
            np.testing.assert_allclose(dfc(x), df(x), equal_nan=True)
    assert np.isnan(g(np.array([1.0, np.nan, 2.0])))
    assert g(np.array([1.0, 5.0, 2.0])) == 2.0


def test_misuse_says_what_to_do():
    x = wg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="q must be plain numbers"):
        np.quantile(x, x[0] / 4)
    with pytest.raises(TypeError, match="q must be plain numbers"):
        np.quantile(np.arange(3.0), x[0] / 4)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        np.percentile(x, 101)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        np.nanquantile(x, -0.1)
    with pytest.raises(ValueError, match="not a valid method"):
        np.quantile(x, 0.5, method="closest")
    with pytest.raises(TypeError, match="real numbers"):
        np.quantile(x + 0j, 0.5)
    out = np.zeros(())
    assert np.median(x, out=out) is out and out == 2.0  # no derivative to lose
    with pytest.raises(TypeError, match=r"out=ndarray"):
        np.median(wg.tensor([1.0, 2.0, 3.0], requires_grad=True), out=np.zeros(()))
    with pytest.raises(np.exceptions.AxisError):
        np.quantile(x, 0.5, axis=1)


def test_complex_median_is_numpys():
    z = np.array([1 + 2j, 3 + 0j, np.nan, 0.5 - 1j])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(np.nanmedian(wg.tensor(z)).numpy(), np.nanmedian(z))
        np.testing.assert_allclose(np.median(wg.tensor(z[[0, 1, 3]])).numpy(),
                                   np.median(z[[0, 1, 3]]))


def test_median_is_numpys_mean_of_the_middle_entries_bit_for_bit():
    """NumPy's median is ``np.mean`` of the middle entries, ``(0 + a + b) / 2``, not an
    interpolation ``a + (b - a) / 2``: they differ in the last bit for a quarter of even
    counts, near overflow, and for ``-0.0`` (NumPy's ``0.0``)."""
    rng = np.random.default_rng(0)
    for i in range(600):
        n = int(rng.integers(1, 7))
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3)
        if i % 3 == 0:
            x = x.astype(np.float32)
        if i % 5 == 0:
            x[rng.integers(0, n)] = np.nan
        if i % 7 == 0:
            x = rng.integers(-5, 5, n)
        if i % 11 == 0:
            x = x.astype(np.float16)
        for name in ("median", "nanmedian"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want, got = getattr(np, name)(x), getattr(wg.numpy, name)(x)
            assert type(got) is type(want) and got.tobytes() == want.tobytes(), (name, x)
    for x in ([-0.0], [-0.0, -0.0], [1e308, 1.7e308]):
        assert np.median(x).tobytes() == wg.numpy.median(np.array(x)).tobytes()
    cf = wg.compile(lambda x: np.median(x, axis=1))
    m = rng.normal(size=(3, 4))
    for _ in range(2):
        assert cf(m).tobytes() == np.median(m, axis=1).tobytes()


# -- booleans and low precision as NumPy's -------------------------------------------------
@pytest.mark.parametrize("fn", [np.median, np.nanmedian])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_median_of_booleans_as_numpy(fn, axis):
    # NumPy's median of booleans is the float mean of the middle entries (no boolean
    # subtract along the way).
    a = np.array([[True, False, True], [False, False, True], [True, True, True],
                  [False, True, True]])
    want = fn(a, axis=axis)
    got = fn(wg.tensor(a), axis=axis)
    got = got.numpy() if hasattr(got, "numpy") else got
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", [np.quantile, np.nanquantile])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("q", [[0.3, 0.8], np.float64(0.3), np.array([[0.2], [0.7]])])
def test_quantile_of_low_precision_values_with_a_float64_q_interpolates_in_float64(
        fn, dtype, q):
    # A q that is not a Python number promotes NumPy's interpolation to float64 (the
    # result is float64 and so is its precision): interpolating in float16/float32 and
    # casting the result would be off by up to 5e-4 in float16.
    # (NumPy 2.3 keeps a scalar q's result in the values' dtype and rounds more: then
    # NumPy's dtype, and its values to a few units of that precision.)
    a = (np.random.default_rng(1).normal(size=7) * 5).astype(dtype)
    want = fn(a, q)
    got = fn(wg.tensor(a), q).numpy()
    assert got.dtype == want.dtype
    rtol = 1e-12 if want.dtype == np.float64 else 8 * np.finfo(want.dtype).eps
    np.testing.assert_allclose(got, want, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_nanquantile_with_a_python_q_as_numpy(dtype):
    # NumPy's weight for a Python q is a Python float (1 − γ taken in float64), not γ
    # rounded to the values' precision first (1 ulp off).
    # (Bit for bit from NumPy 2.4 on; NumPy 2.3 rounds its weight to the values' dtype
    # and is a few units of float16 further from the exact interpolation.)
    a = (np.random.default_rng(1).normal(size=7) * 5).astype(dtype)
    exact = np.lib.NumpyVersion(np.__version__) >= "2.4.0"
    for q in (0.3, 0.8, 0.55):
        want = np.nanquantile(a, q)
        got = np.nanquantile(wg.tensor(a), q).numpy()
        assert got.dtype == want.dtype
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps)
