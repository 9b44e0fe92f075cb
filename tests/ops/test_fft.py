"""np.fft on wengert values: forward values as NumPy's, gradients in the complex
convention (tests/test_complex.py) against finite differences, in both modes, to second
order; the registry sweep (tests/test_rules.py) checks the primitives on their samples."""

from __future__ import annotations

import inspect

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.testing import check_grads

RNG = np.random.default_rng(3)
X = RNG.normal(size=6)
Z = RNG.normal(size=6) + 1j * RNG.normal(size=6)
A = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
B = RNG.normal(size=(2, 3, 4))

ONE_D = [
    ("fft", lambda a: np.fft.fft(a)),
    ("fft n=9 ortho", lambda a: np.fft.fft(a, n=9, norm="ortho")),
    ("fft n=4 forward", lambda a: np.fft.fft(a, n=4, norm="forward")),
    ("ifft", lambda a: np.fft.ifft(a)),
    ("ifft n=8 backward", lambda a: np.fft.ifft(a, 8, norm="backward")),
    ("ifft n=3 ortho", lambda a: np.fft.ifft(a, n=3, norm="ortho")),
    ("fftshift", lambda a: np.fft.fftshift(a)),
    ("ifftshift", lambda a: np.fft.ifftshift(a)),
    ("irfft", lambda a: np.fft.irfft(a)),
    ("irfft n=7", lambda a: np.fft.irfft(a, n=7)),
    ("irfft n=4 ortho", lambda a: np.fft.irfft(a, n=4, norm="ortho")),
    ("irfft n=16 forward", lambda a: np.fft.irfft(a, n=16, norm="forward")),
]
REAL_ONLY = [
    ("rfft", lambda a: np.fft.rfft(a)),
    ("rfft n=7", lambda a: np.fft.rfft(a, n=7)),
    ("rfft n=4 ortho", lambda a: np.fft.rfft(a, n=4, norm="ortho")),
    ("rfft n=10 forward", lambda a: np.fft.rfft(a, n=10, norm="forward")),
]
MULTI = [
    ("fft2", lambda a: np.fft.fft2(a)),
    ("ifft2", lambda a: np.fft.ifft2(a, norm="ortho")),
    ("fftn", lambda a: np.fft.fftn(a)),
    ("fftn s axes", lambda a: np.fft.fftn(a, s=(2, 6), axes=(1, 0))),
    ("ifftn s", lambda a: np.fft.ifftn(a, s=(5,), axes=(-1,), norm="forward")),
    ("fft axis 0", lambda a: np.fft.fft(a, axis=0)),
    ("rfft axis 0", lambda a: np.fft.rfft(np.real(a), n=5, axis=0)),
    ("irfft axis 0", lambda a: np.fft.irfft(a, axis=0)),
    ("fftshift axes", lambda a: np.fft.fftshift(a, axes=0)),
    ("rfftn", lambda a: np.fft.rfftn(np.real(a))),
    ("rfft2 s", lambda a: np.fft.rfft2(np.real(a), s=(4, 5), norm="ortho")),
    ("irfftn", lambda a: np.fft.irfftn(a)),
    ("irfft2 s", lambda a: np.fft.irfft2(a, s=(2, 7))),
    ("irfftn axes", lambda a: np.fft.irfftn(a, axes=(1, 0), norm="forward")),
    ("ifftshift all", lambda a: np.fft.ifftshift(a)),
]


@pytest.mark.parametrize("name, f", ONE_D + REAL_ONLY, ids=[n for n, _ in ONE_D + REAL_ONLY])
def test_one_dimensional_transforms(name, f):
    inputs = (X,) if (name, f) in REAL_ONLY else (X, Z)
    for a in inputs:
        np.testing.assert_allclose(wg.vjp(f, a)[0], f(a))  # the same values on tensors
        np.testing.assert_allclose(f(wg.tensor(a)).numpy(), f(a))
        check_grads(f, (a,), order=2, modes=("rev", "fwd"))
        # a real function of it: its gradient is real for a real input
        g = wg.grad(lambda a: np.sum(np.abs(f(a)) ** 2 + np.real(f(a)) * 0.3))(a)
        assert g.dtype == a.dtype


@pytest.mark.parametrize("name, f", MULTI, ids=[n for n, _ in MULTI])
def test_multidimensional_transforms(name, f):
    for a in (A, A.real, B if "axis 0" in name or "shift" in name else A):
        np.testing.assert_allclose(wg.vjp(f, a)[0], f(a))
        check_grads(f, (a,), order=2, modes=("rev", "fwd"))


def test_parseval_and_exact_gradients():
    # Σ|fft x|² = n Σ|x|²: the gradient 2n·conj(x) (2n·x for real x)
    n = X.size
    f = lambda a: np.sum(np.abs(np.fft.fft(a)) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.grad(f)(X), 2 * n * X)
    np.testing.assert_allclose(wg.grad(f)(Z), 2 * n * np.conj(Z))
    # the VJP of fft is fft of the cotangent (the DFT matrix is symmetric, no conjugate)
    g = RNG.normal(size=6) + 1j * RNG.normal(size=6)
    np.testing.assert_allclose(wg.vjp(np.fft.fft, Z)[1](g)[0], np.fft.fft(g))
    np.testing.assert_allclose(wg.vjp(np.fft.ifft, Z)[1](g)[0], np.fft.ifft(g))
    # rfft of a real x: Re of the fft of g zero-padded
    h = g[:4]
    want = np.real(np.fft.fft(np.concatenate([h, np.zeros(2)])))
    np.testing.assert_allclose(wg.vjp(np.fft.rfft, X)[1](h)[0], want)
    # irfft: 2·ifft(g), halved at 0 and n/2 (the entries whose imaginary part it ignores)
    r = RNG.normal(size=6)
    got = wg.vjp(np.fft.irfft, Z[:4])[1](r)[0]
    want = np.fft.ifft(r)[:4] * np.array([1.0, 2.0, 2.0, 1.0])
    np.testing.assert_allclose(got, want)


def test_irfft_ignores_imaginary_parts_it_drops():
    z = Z[:4].copy()
    g = wg.grad(lambda z: np.sum(np.fft.irfft(z) ** 2))(z)
    assert abs(g[0].imag) < 1e-12 and abs(g[3].imag) < 1e-12  # Im z[0], Im z[n/2]: no effect


def test_round_trips_and_dtypes():
    f = lambda x: np.fft.irfft(np.fft.rfft(x), n=x.size)  # noqa: E731  the identity
    np.testing.assert_allclose(wg.jacfwd(f)(X), np.eye(6), atol=1e-12)
    np.testing.assert_allclose(wg.jacrev(f)(X), np.eye(6), atol=1e-12)
    g = wg.grad(lambda z: np.sum(np.abs(np.fft.ifft(np.fft.fft(z))) ** 2))(Z)
    np.testing.assert_allclose(g, 2 * np.conj(Z))
    x32 = X.astype(np.float32)
    assert wg.grad(lambda x: np.sum(np.abs(np.fft.fft(x))))(x32).dtype == np.float32
    z64 = Z.astype(np.complex64)
    assert wg.grad(lambda z: np.sum(np.abs(np.fft.fft(z))))(z64).dtype == np.complex64


def test_namespace_dispatch_graphs_and_errors():
    # (wengert.numpy's functions take lists of traced values as arrays: a wrapper)
    assert inspect.unwrap(wnp.fft.fft) is wg.ops.fft.fft
    x = wg.tensor(X, requires_grad=True)
    np.sum(np.abs(wnp.fft.rfft(x)) ** 2).backward()
    assert x.grad.dtype == np.float64
    f = lambda x: np.sum(np.abs(np.fft.fft(x * (1 + 0.5j))) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.compile(wg.grad(f))(X), wg.grad(f)(X))
    with pytest.raises(TypeError, match="rfft: the input is complex"):
        wg.grad(lambda z: np.sum(np.abs(np.fft.rfft(z))))(Z)
    with pytest.raises(ValueError, match="Invalid norm"):
        wnp.fft.fft(X, norm="both")


# -- an axis out of bounds -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["hfft", "ihfft", "fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("axis", [3, -2])
def test_fft_axis_out_of_bounds_raises_as_numpy(name, axis):
    # An axis is not taken modulo ndim: axis=3 of a vector is an error, not axis 0.
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
