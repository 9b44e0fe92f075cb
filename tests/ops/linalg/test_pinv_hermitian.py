"""``np.linalg.pinv(a, hermitian=True)`` (wengert.ops.linalg.lstsq): NumPy's values bit for bit
(the lower triangle and the real part of the diagonal read, as NumPy's ``eigh`` reads
them), gradients pinned by finite differences of NumPy's own ``pinv``, finite at
repeated eigenvalues, and NumPy's ``rcond``/``rtol``. (The registry sweep checks the
primitive with ``hermitian=True`` on real and complex samples.)"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from numeric_gradient import complex_gradient, real_gradient
from wengert.testing import check_grads

RNG = np.random.default_rng(17)


def _hermitian(n, rank, complex_, stack=()):
    """A Hermitian (real: symmetric) matrix, or stack, of this rank, its eigenvalues
    ±1, ∓2, ... (indefinite) and the rest exactly 0."""
    m = RNG.normal(size=stack + (n, n)) + (1j * RNG.normal(size=stack + (n, n))
                                           if complex_ else 0.0)
    q = np.linalg.qr(m)[0][..., :rank]
    w = (np.arange(rank) + 1.0) * np.where(np.arange(rank) % 2, -1.0, 1.0)
    return (q * w) @ np.conj(np.swapaxes(q, -1, -2))


def _unread_junk(a):
    """``a`` with junk in its upper triangle and (complex) the imaginary part of its
    diagonal: NumPy reads neither."""
    n = a.shape[-1]
    junk = RNG.normal(size=a.shape) * 5.0
    out = np.where(np.tri(n, dtype=bool), a, junk + (1j * junk if a.dtype.kind == "c" else 0))
    return out + 0.7j * np.eye(n) if a.dtype.kind == "c" else out


CASES = [((), 4, {}), ((), 2, {"rcond": 1e-3}), ((2,), 3, {"rcond": 1e-4}),
         ((), 2, {"rtol": 1e-3}), ((), 4, {"rtol": None}), ((2,), 4, {})]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("stack, rank, cutoff", CASES)
def test_values_are_numpys_and_gradients_its_finite_differences(stack, rank, cutoff, complex_):
    """Full rank and rank-deficient (a cutoff above the finite-difference step keeps the
    rank), stacks, indefinite matrices: NumPy's values exactly; the gradient of NumPy's
    own function, zero where NumPy does not read; second order in both modes."""
    a = _unread_junk(_hermitian(4, rank, complex_, stack))
    want = np.linalg.pinv(a, hermitian=True, **cutoff)
    got = np.linalg.pinv(wg.tensor(a), hermitian=True, **cutoff).numpy()
    np.testing.assert_array_equal(got, want)
    w = RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))

    def f(a):
        x = np.linalg.pinv(a, hermitian=True, **cutoff)
        return np.sum(np.real(x * w)) + np.sum(np.abs(x) ** 2)

    g = wg.grad(f)(a)
    numeric = complex_gradient(f, a) if complex_ else real_gradient(f, a)
    np.testing.assert_allclose(g, numeric, atol=1e-6)
    assert np.all(g[..., ~np.tri(4, dtype=bool)] == 0)
    if complex_:
        assert np.all(np.diagonal(g, axis1=-2, axis2=-1).imag == 0)
    check_grads(f, (a,), order=2, modes=("rev", "fwd"))


def test_repeated_eigenvalues_keep_a_finite_gradient():
    """The Golub–Pereyra rules need no eigenvectors: the identity, a projection (and the
    zero eigenvalues of any rank-deficient matrix) are fine, where a gradient through
    ``eigh`` (``svd(a, hermitian=True)``) is NaN. PyTorch 2.13 gives the same −0.25."""
    f = lambda a: np.sum(np.linalg.pinv(a, hermitian=True) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.grad(f)(np.eye(3) * 2.0), -0.25 * np.eye(3))
    p = _hermitian(4, 2, True)
    p = p @ p  # eigenvalues 1, 4, 0, 0
    g = wg.grad(lambda a: np.sum(np.abs(np.linalg.pinv(a, hermitian=True, rtol=1e-6)) ** 2))(p)
    assert np.all(np.isfinite(g))


def test_gradient_is_pytorchs_folded_onto_the_lower_triangle():
    """PyTorch 2.13's ``torch.linalg.pinv(hermitian=True)`` (conjugated: its
    ``∂/∂x + i∂/∂y``) reads the same triangle but returns a gradient on every entry;
    NumPy's function of the lower triangle has ``T_ij + conj(T_ji)`` below the diagonal
    and ``Re T_ii`` on it. (HIPS autograd 1.8's pinv has no ``hermitian``.)"""
    rng = np.random.default_rng(8)
    q = np.linalg.qr(rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)))[0]
    a = (q * np.array([2.0, -1.0, 0.5])) @ q.conj().T
    w = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    torch_ = np.array([[-3.72811 + 0.3926j, 3.46069 - 1.77432j, 4.24006 - 0.379j],
                       [3.91741 + 0.09466j, -2.3262 - 0.96115j, -5.73495 - 1.5855j],
                       [4.35588 - 0.07117j, -6.42385 + 1.70047j, -3.555 + 2.50122j]])

    def f(a):
        x = np.linalg.pinv(a, hermitian=True)
        return np.sum(np.real(x * w)) + np.sum(np.abs(x) ** 2)

    folded = np.tril(torch_ + np.conj(torch_).T, -1) + np.diag(np.diag(torch_).real)
    np.testing.assert_allclose(wg.grad(f)(a), folded, atol=2e-5)


def test_small_dtypes_empty_ints_and_array_cutoffs():
    c64 = _unread_junk(_hermitian(3, 3, True)).astype(np.complex64)
    np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(c64), hermitian=True).numpy(),
                                  np.linalg.pinv(c64, hermitian=True))
    g = wg.grad(lambda a: np.sum(np.abs(np.linalg.pinv(a, hermitian=True)) ** 2))(c64)
    assert g.dtype == np.complex64
    f32 = _hermitian(3, 3, False).astype(np.float32)
    np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(f32), hermitian=True, rtol=None).numpy(),
                                  np.linalg.pinv(f32, hermitian=True, rtol=None))
    for empty in (np.zeros((0, 0)), np.zeros((2, 0, 0), complex)):
        np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(empty), hermitian=True).numpy(),
                                      np.linalg.pinv(empty, hermitian=True))
        g = wg.grad(lambda a: np.sum(np.abs(np.linalg.pinv(a, hermitian=True))))(empty)
        assert g.shape == empty.shape
    ints = np.array([[2, 9], [1, 2]])
    np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(ints), hermitian=True).numpy(),
                                  np.linalg.pinv(ints, hermitian=True))
    one = np.array([[2.0 + 5.0j]])
    np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(one), hermitian=True).numpy(),
                                  np.linalg.pinv(one, hermitian=True))
    stack = np.stack([_hermitian(3, 2, False), _hermitian(3, 2, False)])
    stack[1] += np.eye(3) * 1e-5  # rank 3, but below the second matrix's cutoff
    rc = np.array([1e-8, 1e-3])
    for hermitian in (False, True):
        np.testing.assert_allclose(np.linalg.pinv(wg.tensor(stack), rc, hermitian).numpy(),
                                   np.linalg.pinv(stack, rc, hermitian), rtol=1e-10, atol=1e-12)


def test_misuse_is_refused_as_numpy_refuses_it():
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        np.linalg.pinv(wg.tensor(np.ones((2, 3))), hermitian=True)
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        np.linalg.pinv(wg.tensor(np.ones(3)), hermitian=True)
    with pytest.raises(ValueError, match="can't be both set"):
        np.linalg.pinv(wg.tensor(np.eye(2)), 1e-3, rtol=1e-3)


def test_rtol_none_is_numpys_cutoff_not_the_default_one():
    """``rtol=None`` is ``max(m, n)·eps`` in NumPy 2, not ``rcond``'s default ``1e-15``."""
    a = np.diag([1.0, 7e-16])  # dropped by 1e-15, kept by 2·eps = 4.4e-16
    assert np.linalg.pinv(a, rtol=None)[1, 1] > 1e15 and np.linalg.pinv(a)[1, 1] == 0
    for kw in ({}, {"rtol": None}):
        np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(a), **kw).numpy(),
                                      np.linalg.pinv(a, **kw))
        np.testing.assert_array_equal(np.linalg.pinv(wg.tensor(a), hermitian=True, **kw).numpy(),
                                      np.linalg.pinv(a, hermitian=True, **kw))


def test_compiled_hessian_and_export():
    from wengert.graph.backends.export import to_jax_source

    a = _unread_junk(_hermitian(3, 3, True))
    f = lambda a: np.sum(np.abs(np.linalg.pinv(a, hermitian=True)) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.compile(wg.grad(f))(a), wg.grad(f)(a), rtol=1e-10, atol=1e-12)
    x = a.real.copy()
    h = wg.hessian(lambda x: f(x + 1j * x.T))(x)
    assert h.shape == (3, 3, 3, 3) and np.all(np.isfinite(h))
    src = to_jax_source(wg.trace(lambda a: np.linalg.pinv(a, hermitian=True, rtol=1e-3), a.real))
    assert "jnp.linalg.pinv(" in src and "hermitian=True" in src
