"""Hostile tests of what session 19 added: order statistics, floating-point routines,
polynomials, hfft/ihfft, resize/sort_complex, holomorphic transforms and complex linalg.

Each test pins one bug found by attacking the new code against NumPy's own answers
(values, dtypes, errors) and finite differences."""

from __future__ import annotations

import warnings

import pytest

import numpy as np
import wengert as wg


def value(x):
    """The plain array beneath a result (a tensor, or an ndarray where the result
    depends on nothing traced)."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


# -- ops/floating.py: matvec and vecmat ----------------------------------------------------
def test_matvec_of_a_vector_raises_as_numpy():
    # NumPy's gufunc needs a matrix (m, n); wengert returned the dot product 3.0.
    with pytest.raises(ValueError, match="dimensions"):
        np.matvec(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="dimensions"):
        np.matvec(wg.tensor(np.ones(3)), np.ones(3))
    with pytest.raises(ValueError, match="dimensions"):
        wg.grad(lambda v: np.sum(np.matvec(np.ones(3), v)))(np.ones(3))


def test_vecmat_of_a_scalar_or_a_vector_matrix_raises_a_clear_error():
    # NumPy: "does not have enough dimensions"; wengert raised an IndexError from getitem.
    with pytest.raises(ValueError, match="dimensions"):
        np.vecmat(wg.tensor(1.0), np.ones((3, 3)))
    with pytest.raises(ValueError, match="dimensions"):
        np.vecmat(wg.tensor(np.ones(3)), np.ones(3))


def test_matvec_and_vecmat_take_lists_as_numpy():
    # A list operand raised "list indices must be integers or slices, not tuple".
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.matvec(wg.tensor(a), [1.0, 2.0]).numpy(),
                                  np.matvec(a, [1.0, 2.0]))
    np.testing.assert_array_equal(np.vecmat([1.0, 2.0], wg.tensor(a)).numpy(),
                                  np.vecmat([1.0, 2.0], a))
    g = wg.grad(lambda a: np.sum(np.matvec(a, [1.0, 2.0])))(a)
    np.testing.assert_array_equal(g, [[1.0, 2.0], [1.0, 2.0]])


# -- ops/fft.py: an axis out of bounds ------------------------------------------------------
@pytest.mark.parametrize("name", ["hfft", "ihfft", "fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("axis", [3, -2])
def test_fft_axis_out_of_bounds_raises_as_numpy(name, axis):
    # wengert took the axis modulo ndim (axis=3 of a vector was axis 0) and returned a value.
    x = np.array([1.0, 2.0, 0.5])
    with pytest.raises(IndexError):
        getattr(np.fft, name)(x, axis=axis)
    with pytest.raises(IndexError):
        getattr(np.fft, name)(wg.tensor(x), axis=axis)


def test_fftn_axes_out_of_bounds_raises_as_numpy():
    x = np.ones((2, 3))
    with pytest.raises(IndexError):
        np.fft.fftn(x, axes=(0, 2))
    with pytest.raises(IndexError):
        np.fft.fftn(wg.tensor(x), axes=(0, 2))


# -- ops/polynomial.py: dtypes ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.int64])
@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [1.0, -3.0, 2.0, 0.0], [2.0, 0.0]])
def test_roots_keeps_numpys_dtype(dtype, p):
    # np.roots of float32 coefficients is float32 (complex64 roots); wengert gave float64.
    p = np.array(p, dtype=dtype)
    want = np.roots(p)
    got = value(np.roots(wg.tensor(p)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float16, np.int32, np.float64])
def test_poly_keeps_numpys_dtype(dtype):
    # np.poly of float32 roots is float32; wengert gave float64.
    r = np.array([1.0, 2.0, -0.5], dtype=dtype)
    want = np.poly(r)
    got = value(np.poly(wg.tensor(r)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_compiled_poly_of_conjugate_pairs_is_real_as_eager():
    # Eagerly np.poly of conjugate pairs is real (NumPy's test); the compiled function
    # skipped the test (its roots were traced) and returned complex coefficients, and
    # a graph traced on conjugate pairs must not stay real on roots that are not.
    f = wg.compile(lambda r: np.poly(r))
    pair = np.array([1 + 1j, 1 - 1j])
    other = np.array([1 + 1j, 2 + 0j])
    got = f(pair)
    assert np.asarray(got).dtype == np.poly(pair).dtype
    np.testing.assert_allclose(got, np.poly(pair))
    got = f(other)
    assert np.asarray(got).dtype == np.poly(other).dtype
    np.testing.assert_allclose(got, np.poly(other))


# -- ops/order_statistics.py -----------------------------------------------------------------
@pytest.mark.parametrize("fn", [np.median, np.nanmedian])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_median_of_booleans_as_numpy(fn, axis):
    # NumPy's median of booleans is the float mean of the middle entries; wengert raised
    # "numpy boolean subtract ... is not supported".
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
    # result is float64 and so is its precision); wengert interpolated in float16/float32
    # and only cast the result (float16: an error of 5e-4).
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
    # NumPy's weight for a Python q is a Python float (1 − γ taken in float64); wengert
    # rounded γ to the values' precision first: 1 ulp off.
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


# -- dispatch: ufuncs of two outputs with out= ------------------------------------------------
@pytest.mark.parametrize("name", ["modf", "frexp", "divmod"])
def test_two_output_ufuncs_fill_an_out_tuple(name):
    # np.modf(tensor, out=(a, b)) raised "could not broadcast input array from shape
    # (2, 4) into shape (4,)": both outputs were copied into the first array.
    x = np.array([1.5, -2.25, 0.7, 3.0])
    args = (x, 0.65) if name == "divmod" else (x,)
    fn = getattr(np, name)
    want = fn(*args)
    outs = tuple(np.empty(4, dtype=w.dtype) for w in want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fn(wg.tensor(x), *args[1:], out=outs)
    assert isinstance(got, tuple) and got[0] is outs[0] and got[1] is outs[1]
    for o, w in zip(outs, want):
        np.testing.assert_array_equal(o, w)


@pytest.mark.parametrize("name", ["modf", "divmod"])
def test_two_output_ufuncs_refuse_an_ndarray_out_tuple_under_grad(name):
    x = np.array([1.5, -2.25, 0.7, 3.0])

    def f(x):
        r = getattr(np, name)(x, *((0.65,) if name == "divmod" else ()),
                              out=(np.empty(4), np.empty(4)))
        return np.sum(r[0])

    with pytest.raises(TypeError, match="gradient would be lost"):
        wg.grad(f)(x)


def test_out_into_a_fresh_tensor_inside_grad_keeps_or_refuses_the_gradient():
    x = np.array([1.5, -2.25, 0.7])

    def f(x):
        a = wg.tensor(np.zeros(3))
        np.sin(x, out=a)
        return np.sum(a)

    np.testing.assert_allclose(wg.grad(f)(x), np.cos(x))


def test_a_tensor_made_inside_grad_and_written_keeps_the_gradient():
    """``a = wg.tensor(zeros); a[:] = sin(x)`` inside ``grad`` used to leave ``a`` at the
    outer level: the sum looked constant and the gradient was silently zero."""
    x = np.array([1.5, -2.25, 0.7])

    def f(x):
        a = wg.tensor(np.zeros(3))
        a[1:] = np.sin(x[:2])
        a += x
        return np.sum(a * a)

    def ref(x):
        a = np.concatenate([[0.0], np.sin(x[:2])]) + x
        return np.sum(a * a)

    np.testing.assert_allclose(wg.grad(f)(x), wg.grad(ref)(x))
    np.testing.assert_allclose(wg.hessian(f)(x), wg.hessian(ref)(x))


def test_a_tensor_cannot_silently_hold_a_dual_or_a_graph_value():
    x = np.array([1.5, -2.25, 0.7])

    def f(x):
        a = wg.tensor(np.zeros(3))
        a[:] = np.sin(x)
        return np.sum(a)

    with pytest.raises(TypeError, match=r"np\.zeros_like\(x\)"):
        wg.jvp(f, (x,), (np.ones(3),))
    # made inside a traced function, the tensor holds the traced values
    assert wg.compile(f)(x) == f(x)
    outside = wg.tensor(np.zeros(3))

    def g(x):
        outside[:] = np.sin(x)
        return np.sum(outside)

    with pytest.raises(TypeError, match=r"np\.zeros_like\(x\)"):
        wg.compile(g)(x)


def test_zeros_like_then_setitem_in_forward_mode():
    """``out = np.zeros_like(x); out[i] = ...`` (the NumPy idiom) works in every mode: in
    forward mode zeros_like of a dual is a dual with a zero tangent."""
    x = np.array([1.5, -2.25, 0.7])

    def m(x):
        out = np.ones_like(x)
        for i in range(1, 3):
            out[i] = out[i - 1] * x[i]
        return out

    want = wg.jacrev(m)(x)
    np.testing.assert_allclose(wg.jacfwd(m)(x), want)
    np.testing.assert_allclose(wg.jvp(m, (x,), (np.ones(3),))[1], want.sum(axis=1))
    np.testing.assert_allclose(wg.jacfwd(wg.compile(m))(x), want)
