"""NumPy functions written with other ops (``wengert.ops.decompositions.composite``): NumPy's
values, and derivatives checked against finite differences to second order in both modes (the
pullback also differentiated with respect to its cotangent), eager and compiled."""

from __future__ import annotations

import warnings

import pytest

import numpy as np
import wengert as wg
from wengert.testing import check_grads

RNG = np.random.default_rng(7)
V = np.array([0.3, -1.2, 2.0, 0.7, -0.4])
M = RNG.normal(size=(3, 4))
S = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
W = np.array([0.9, 2.1, -0.3])
M_NAN = np.where(RNG.random(M.shape) < 0.3, np.nan, M)  # (inputs with NaN: the nan* cases)
M_NAN[0, 0] = M_NAN[2, 3] = np.nan
V_INF = np.array([0.3, -np.inf, 2.0, np.nan, np.inf])

CASES = {
    "diff": (lambda x: np.diff(x), (V,)),
    "diff n=2 axis=0 prepend": (lambda x: np.diff(x, n=2, axis=0, prepend=0.5), (M,)),
    "diff append array": (lambda x: np.diff(x, append=x[:, :1], axis=1), (M,)),
    "append flat": (lambda x: np.append(x, x[:2] * 3.0), (V,)),
    "append axis": (lambda x: np.append(x, x[:1] * 2.0, axis=0), (M,)),
    "fabs": (lambda x: np.fabs(x), (V,)),
    "nan_to_num": (lambda x: np.nan_to_num(x * 2.0, posinf=7.0, neginf=-5.0) * 3.0, (V_INF,)),
    "rollaxis": (lambda x: np.rollaxis(x[None] * x[:, :1, None], 2, 1), (M,)),
    "polyval": (lambda p, x: np.polyval(p, x), (W, V)),
    "meshgrid xy": (lambda a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b)[1], (V, W)),
    "meshgrid ij": (lambda a, b: np.meshgrid(a, b, indexing="ij")[1] ** 2 + 0 * a[0], (V, W)),
    "cross 3": (lambda a, b: np.cross(a, b), (M[:, :3], M[::-1, 1:])),
    "cross 2": (lambda a, b: np.cross(a, b), (M[:, :2], M[:, 2:])),
    "select": (lambda x: np.select([x > 1.0, x < 0.0], [x ** 2, np.sin(x)], 0.5 * x), (V,)),
    "nansum": (lambda x: np.nansum(x * 1.5, axis=1) ** 2, (M_NAN,)),
    "nanmean": (lambda x: np.nanmean(x * 0.5, axis=0), (M_NAN,)),
    "nanmax": (lambda x: np.nanmax(x * 2.0, axis=0), (M_NAN,)),
    "nanmin": (lambda x: np.nanmin(x * 2.0 + 1.0), (M_NAN,)),
    "nanprod": (lambda x: np.nanprod(x * 0.5, axis=1), (M_NAN,)),
    "median odd": (lambda x: np.median(x), (V,)),
    "median even axis": (lambda x: np.median(x, axis=1), (M,)),
    "quantile list": (lambda x: np.quantile(x, [0.1, 0.5, 0.9]), (V,)),
    "percentile axis keepdims": (lambda x: np.percentile(x, 30, axis=0, keepdims=True), (M,)),
    "quantile hazen axes": (lambda x: np.quantile(x, [0.3, 0.8], axis=(0, 1), method="hazen"),
                            (M,)),
    "quantile midpoint": (lambda x: np.quantile(x, 0.3, axis=1, method="midpoint"), (M,)),
    "nanmedian": (lambda x: np.nanmedian(x * 2.0, axis=1), (M_NAN,)),
    "nanmedian flat keepdims": (lambda x: np.nanmedian(x, keepdims=True), (M_NAN,)),
    "nanquantile": (lambda x: np.nanquantile(x, [0.25, 0.9], axis=0), (M_NAN,)),
    "nanpercentile weibull": (lambda x: np.nanpercentile(x, 35, axis=1, method="weibull"),
                              (M_NAN,)),
    "cov": (lambda x: np.cov(x), (M,)),
    "cov rowvar bias y": (lambda x, y: np.cov(x, y, rowvar=False, bias=True), (M.T, M.T[:, :1])),
    "corrcoef": (lambda x: np.corrcoef(x), (M,)),
    "multi_dot": (lambda a, b: np.linalg.multi_dot([a, b, S, W]), (M.T, M[:, :3])),
    "matrix_power 3": (lambda a: np.linalg.matrix_power(a, 3), (S,)),
    "matrix_power -2": (lambda a: np.linalg.matrix_power(a, -2), (S,)),
    "delete int": (lambda x: np.delete(x, 1), (V,)),
    "delete list axis": (lambda x: np.delete(x, [0, 2], axis=1), (M,)),
    "insert scalar": (lambda x: np.insert(x, 2, x[0] * 3.0), (V,)),
    "insert block axis": (lambda x: np.insert(x, 1, x[0] * 2.0, axis=0), (M,)),
    "insert list": (lambda x: np.insert(x, [1, 3, 3], x[:3] ** 2), (V,)),
    "gradient 1-d": (lambda x: np.gradient(x), (V,)),
    "gradient 2-d spacing": (lambda x: np.gradient(x, 0.5)[1], (M,)),
    "linspace": (lambda a, b: np.linspace(a[0], b[1], 7), (V, W)),
    "linspace arrays no endpoint": (lambda a, b: np.linspace(a, b, 4, endpoint=False),
                                    (V[:3], W)),
    "logspace": (lambda a: np.logspace(a[0], a[2], 5, base=2.0), (V,)),
    "interp": (lambda x, fp: np.interp(x, [-1.5, 0.0, 1.0, 2.5], fp),
               (V, np.array([0.5, -1.0, 2.0, 0.3]))),
    "interp xp": (lambda x, xp: np.interp(x, xp, [1.0, 0.0, 2.0]),
                  (V * 0.5, np.array([-0.8, 0.1, 0.9]))),
    "convolve full": (lambda a, v: np.convolve(a, v), (V, W)),
    "convolve same": (lambda a, v: np.convolve(a, v, mode="same"), (W, V)),
    "convolve valid": (lambda a, v: np.convolve(a, v, mode="valid"), (V, W)),
    "convolve with a number": (lambda a, s: np.convolve(a, s), (V, 1.7)),
    "correlate": (lambda a, v: np.correlate(a, v), (V, W)),
    "correlate full": (lambda a, v: np.correlate(a, v, "full"), (W, V)),
    "unwrap": (lambda x: np.unwrap(x * 4.0), (V,)),
    "real_if_close": (lambda x: np.real_if_close(x) * 2.0, (V,)),
    "tensorinv": (lambda a: np.linalg.tensorinv(a, ind=1), (np.eye(4).reshape(4, 2, 2) * 3.0
                                                          + 0.1 * RNG.normal(size=(4, 2, 2)),)),
    "tensorsolve": (lambda a, b: np.linalg.tensorsolve(a, b),
                    (np.eye(6).reshape(2, 3, 6) * 2.0 + 0.1 * RNG.normal(size=(2, 3, 6)),
                     RNG.normal(size=(2, 3)))),
    "tensorsolve axes": (lambda a, b: np.linalg.tensorsolve(a, b, axes=(0,)),
                         (np.eye(4).reshape(2, 2, 2, 2) * 2.0
                          + 0.1 * RNG.normal(size=(2, 2, 2, 2)), RNG.normal(size=(2, 2)))),
    "trapezoid": (lambda y: np.trapezoid(y), (M,)),
    "trapezoid dx axis=0": (lambda y: np.trapezoid(y, dx=0.3, axis=0), (M,)),
    "trapezoid x 1-d": (lambda y, x: np.trapezoid(y, x), (M, np.sort(RNG.normal(size=M.shape[1])))),
    "trapezoid x n-d": (lambda y, x: np.trapezoid(y, x), (M, np.sort(RNG.normal(size=M.shape),
                                                                     axis=1))),
    "trapezoid traced dx": (lambda y, dx: np.trapezoid(y, dx=dx), (V, 0.7)),
    "nanvar": (lambda x: np.nanvar(x), (M,)),
    "nanvar axis ddof keepdims": (lambda x: np.nanvar(x, axis=1, ddof=1, keepdims=True), (M,)),
    "nanstd": (lambda x: np.nanstd(x, axis=0), (M,)),
    "nancumsum": (lambda x: np.nancumsum(x, axis=1), (M,)),
    "nancumprod": (lambda x: np.nancumprod(x), (M,)),
    "ediff1d": (lambda x: np.ediff1d(x, to_begin=x[0, :2] * 2.0, to_end=3.0), (M,)),
    "vander": (lambda x: np.vander(x), (V,)),
    "block": (lambda a: np.block([[a, a[:, :1]], [a[:1] * 3.0, a[:1, :1] ** 2]]), (M,)),
    "block 1-d with a number": (lambda v: np.block([v, 3.0, v[:2] * 2.0]), (V,)),
    "unstack": (lambda a: np.unstack(a, axis=1)[2] * np.unstack(a)[0][1], (M,)),
    "matrix_transpose": (lambda a: np.matrix_transpose(a[None] * a[:, None, :]), (M,)),
    "polyder": (lambda p: np.polyder(p, 2), (V,)),
    "polyint": (lambda p: np.polyint(p, 2, k=[1.0, 2.0]), (V,)),
    "resize": (lambda x: np.resize(x, (3, 7)) * np.arange(7.0), (V,)),
    "resize smaller": (lambda x: np.resize(x, 5), (M,)),
    "sort_complex": (lambda x: np.real(np.sort_complex(x)) * np.imag(np.sort_complex(x * 1j)),
                     (M,)),
    "vander increasing N": (lambda x: np.vander(x, 3, increasing=True), (V,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_equal_numpy(name):
    f, args = CASES[name]
    with np.errstate(invalid="ignore", divide="ignore"):
        want = f(*args)
        on_tensors = f(*[wg.tensor(a) for a in args])
        compiled = wg.compile(f)(*args)
    np.testing.assert_allclose(on_tensors.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_to_second_order_in_both_modes(name):
    f, args = CASES[name]
    with np.errstate(invalid="ignore", divide="ignore"):
        assert check_grads(lambda *a: f(*a), args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("name", ["median odd", "cov", "cross 3", "nanmax", "polyval"])
def test_compiled_gradient_equals_eager(name):
    f, args = CASES[name]

    def loss(*a):
        return np.sum(f(*a) ** 2)

    with np.errstate(invalid="ignore", divide="ignore"):
        want = wg.grad(loss)(*args)
        np.testing.assert_allclose(wg.grad(wg.compile(loss))(*args), want, rtol=1e-10)
        np.testing.assert_allclose(wg.compile(wg.grad(loss))(*args), want, rtol=1e-10)


def test_nan_entries_get_no_gradient():
    """The replaced entries get zero; as in PyTorch and JAX, a NaN made *before* the
    reduction (``nansum(x ** 2)`` at a NaN ``x``) still gives 0·NaN = NaN upstream."""
    x = np.array([1.0, np.nan, 4.0])
    np.testing.assert_array_equal(wg.grad(lambda x: np.nansum(x))(x), [1.0, 0.0, 1.0])
    np.testing.assert_allclose(wg.grad(lambda x: np.nanmean(x))(x), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(wg.grad(lambda x: np.sum(np.nan_to_num(x)))(x),
                                  [1.0, 0.0, 1.0])


def test_median_of_an_even_count_splits_between_the_middle_entries():
    np.testing.assert_allclose(wg.grad(np.median)(np.array([3.0, 1.0, 2.0, 5.0])),
                               [0.5, 0.0, 0.5, 0.0])


def test_refused_arguments_say_so():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(NotImplementedError, match="weights"):
        wg.grad(lambda x: np.quantile(x, 0.5, weights=np.ones(3)))(x)
    with pytest.raises(TypeError, match="complex"):
        wg.grad(lambda x: np.sum(np.fabs(x + 0j)))(x)


def test_wengert_numpy_exposes_them():
    assert wg.numpy.median is not None and wg.numpy.linalg.multi_dot is not None
    np.testing.assert_allclose(wg.numpy.median(np.array([3.0, 1.0, 2.0])), 2.0)


def test_dsplit_piecewise_and_array():
    x = np.arange(1.0, 13.0).reshape(2, 3, 2)
    parts = np.dsplit(wg.tensor(x), 2)
    np.testing.assert_array_equal(parts[1].numpy(), np.dsplit(x, 2)[1])
    assert check_grads(lambda x: np.dsplit(x, 2)[0] ** 2, (x,), order=2, modes=("rev", "fwd"))

    def pw(x):
        return np.piecewise(x, [x < 0.0, x > 1.0], [lambda t: t ** 2, lambda t: 2.0 * t, 0.5])

    v = np.array([-1.5, 0.3, 2.0, -0.2, 1.4])
    np.testing.assert_allclose(pw(wg.tensor(v)).numpy(), pw(v))
    np.testing.assert_allclose(wg.grad(lambda x: np.sum(pw(x)))(v), [-3.0, 0.0, 2.0, -0.4, 2.0])

    a = wg.tensor(2.0, requires_grad=True)
    m = wg.numpy.array([[a, 1.0], [0.0, a * a]])
    np.testing.assert_array_equal(m.numpy(), [[2.0, 1.0], [0.0, 4.0]])
    np.sum(m).backward()
    assert float(a.grad) == 5.0
    np.testing.assert_array_equal(wg.numpy.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    # one traced value (np.array(x) in HIPS autograd code): a copy that carries the gradient
    assert wg.grad(lambda x: wg.numpy.array(x) * 3.0)(2.0) == 3.0
    assert wg.jvp(lambda x: wg.numpy.array(x, dtype=np.float32), (2.0,), (1.0,))[1] == 1.0


@pytest.mark.parametrize("f", [
    lambda x: np.nanvar(x, axis=1), lambda x: np.nanstd(x), lambda x: np.nancumsum(x),
    lambda x: np.nancumprod(x, axis=0), lambda x: np.nanvar(x * (1 + 2j)),
], ids=["nanvar", "nanstd", "nancumsum", "nancumprod", "nanvar complex"])
def test_the_other_nan_reductions_skip_nan_entries(f):
    x = np.array([[0.5, np.nan, -1.0], [2.0, 0.25, np.nan]])
    got = f(wg.tensor(x, requires_grad=True))
    np.testing.assert_allclose(got.numpy(), f(x))
    g = wg.grad(lambda x: np.sum(np.real(f(x))))(x)
    assert np.all(g[np.isnan(x)] == 0) and np.all(np.isfinite(g))
    assert np.nanargmax(wg.tensor(x, requires_grad=True), axis=1).tolist() == [0, 0]


def test_trim_zeros_and_the_unique_tuples():
    x = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    for args in ((), ("f",)):
        np.testing.assert_array_equal(np.trim_zeros(wg.tensor(x[1]), *args).numpy(),
                                      np.trim_zeros(x[1], *args))
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(np.trim_zeros(wg.tensor(x), axis=axis).numpy(),
                                      np.trim_zeros(x, axis=axis))
    g = wg.grad(lambda a: np.sum(np.trim_zeros(a) ** 2))(x)
    np.testing.assert_array_equal(g, 2.0 * x)
    assert np.trim_zeros(wg.tensor(np.zeros(3))).shape == (0,)
    v = np.array([[3.0, 1.0], [3.0, 2.0]])
    for fn in (np.unique_all, np.unique_counts, np.unique_inverse):
        got, want = fn(wg.tensor(v)), fn(v)
        assert type(got) is type(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(getattr(a, "numpy", lambda a=a: a)()), b)
    g = wg.grad(lambda a: np.sum(np.unique_counts(a).values * np.array([1.0, 2.0, 3.0])))(v)
    np.testing.assert_array_equal(g, [[3.0, 1.0], [0.0, 2.0]])  # the first 3 gets it
    u = np.array([0.3, -1.2, 2.0, 0.7])
    for fn in (np.unique_values, lambda a: np.unique_all(a).values):
        assert check_grads(lambda a, fn=fn: fn(a) ** 2, (u,), order=2, modes=("rev", "fwd"))
    with pytest.raises(TypeError, match="cannot be traced into a graph"):
        wg.compile(np.unique_values)(u)
    with pytest.raises(TypeError, match="cannot be traced into a graph"):
        wg.compile(np.unique)(u)


def test_block_refuses_what_numpy_refuses():
    a = wg.tensor(np.ones((2, 2)))
    with pytest.raises(ValueError, match="depths are mismatched"):
        np.block([[a], a])
    with pytest.raises(TypeError, match="tuple"):
        np.block((a, a))


def test_printing_and_index_helpers_of_a_tensor_that_requires_grad():
    """Functions with no derivative by nature answer on the values (they do not raise
    'no gradient rule')."""
    x = wg.tensor(np.array([1.0, -np.inf, 3.0]), requires_grad=True)
    assert np.array2string(x) == np.array2string(x.detach().numpy())
    assert np.array_str(x) and np.array_repr(x)
    np.testing.assert_array_equal(np.isneginf(x), [False, True, False])
    np.testing.assert_array_equal(np.lexsort([x.detach()]), [1, 0, 2])
    m = wg.tensor(np.ones((3, 3)), requires_grad=True)
    assert len(np.tril_indices_from(m)) == 2 and len(np.diag_indices_from(m)) == 2


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanvar",
                                  "nanstd", "nancumsum", "nancumprod"])
def test_nan_reductions_give_numpys_values_dtypes_and_types(name):
    """Integer and boolean arrays reduce as NumPy's plain reductions (no float64), float32
    stays float32, an all-NaN slice is NaN (with NumPy's warning), a full reduction is a
    NumPy scalar."""
    ours, numpys = getattr(wg.numpy, name), getattr(np, name)
    for x in (np.array([np.nan]), np.array([[np.nan, 1.0], [np.nan, np.nan]]),
              np.array([1, 2, 5]), np.array([True, False]), np.float32(2.0),
              np.array([1.0, np.nan, 2.0], np.float32), np.array([1 + 1j, np.nan])):
        for kwargs in ({}, {"axis": 0}):
            if kwargs and np.ndim(x) == 0:
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                want = numpys(x, **kwargs)
                got = ours(x, **kwargs)
            assert type(got) is type(want) and got.dtype == want.dtype, (x, got, want)
            np.testing.assert_allclose(got, want, rtol=1e-6)
            messages = [str(w.message) for w in caught]
            assert messages[:len(messages) // 2] == messages[len(messages) // 2:]


@pytest.mark.parametrize("name", ["median", "nanmedian", "quantile", "nanquantile",
                                  "percentile", "nanpercentile", "nan_to_num", "clip"])
def test_scalar_results_and_integer_dtypes_are_numpys(name):
    """A full reduction of an array, a 0-d array or a number is a NumPy scalar (not a 0-d
    array); integers stay integers where NumPy keeps them (``np.clip(x, 0, None)``); and
    ``nan_to_num`` of an integer array is a new array."""
    ours, numpys = getattr(wg.numpy, name), getattr(np, name)
    extra = {"quantile": (0.5,), "nanquantile": (0.5,), "percentile": (50,),
             "nanpercentile": (50,), "clip": (0, None)}.get(name, ())
    for x in (np.array([1.0, 2.0, 4.0]), 1.5, np.float32(2.0), np.array([1, 2, 5]),
              np.array([1, 2], np.int8), np.array(2.5), np.array(3), np.array([np.nan, 1.0])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want, got = numpys(x, *extra), ours(x, *extra)
        assert type(got) is type(want) and got.dtype == want.dtype, (x, got, want)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert not np.shares_memory(got, x)


A2 = np.array([[1.0, 2.0], [3.0, 4.0]])
XP, FP = [1.0, 2.0, 3.0], [3.0, 2.0, 0.0]


@pytest.mark.parametrize("name, f, arg", [
    ("interp at a number", lambda m, fp: m.interp(2.5, XP, fp), np.array(FP)),
    ("interp of a number", lambda m, x: m.interp(x, XP, FP), np.float64(2.5)),
    ("interp, one point", lambda m, fp: m.interp(2.5, [1.0], fp), np.array([3.0])),
    ("matrix 2-norm", lambda m, a: m.linalg.norm(a, 2), A2),
    ("matrix -2-norm", lambda m, a: m.linalg.norm(a, -2, axis=(1, 0)), A2),
    ("nuclear norm", lambda m, a: m.linalg.norm(a, "nuc"), A2),
])
def test_a_scalar_result_is_a_numpy_scalar_as_numpy_gives(name, f, arg):
    # NumPy returns a scalar here; so do wengert's plain values, dual numbers and graphs
    # (interp gave a 0-d array)
    want = f(np, arg)
    assert np.ndim(want) == 0 and not isinstance(want, np.ndarray)
    g = lambda a: f(np, a)  # noqa: E731
    for got in (f(wg.numpy, arg), wg.jvp(g, (arg,), (np.ones_like(arg),))[0],
                wg.jvp(g, (arg,), (np.ones_like(arg),))[1], wg.trace(g, arg)(arg),
                wg.compile(g)(arg)):
        assert type(got) is type(want), (name, type(got))
    assert np.shape(np.interp(wg.tensor(2.5), [1.0, 2.0], [0.0, 1.0])) == ()
    assert isinstance(wg.numpy.interp([2.5], [1.0, 3.0], [0.0, 1.0]), np.ndarray)
