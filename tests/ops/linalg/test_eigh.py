"""``np.linalg.eigh`` and ``eigvalsh`` (wengert.ops.linalg.eigh): NumPy's values, NumPy's reading
of one triangle (``UPLO``) with its gradient pinned by finite differences of NumPy's own
``eigh`` on non-symmetric input, and what happens at repeated eigenvalues. (The registry
sweep checks both primitives' rules to second order in both modes.)"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from numeric_gradient import complex_gradient, real_gradient
from wengert.testing import check_grads

RNG = np.random.default_rng(3)
B = RNG.normal(size=(4, 4))
A = B + B.T


def test_values_and_result_type_equal_numpy():
    w, v = np.linalg.eigh(A)
    got = np.linalg.eigh(wg.tensor(A))
    assert type(got).__name__ == "EighResult"
    np.testing.assert_allclose(got.eigenvalues.numpy(), w, rtol=1e-12)
    np.testing.assert_allclose(np.abs(got.eigenvectors.numpy()), np.abs(v), rtol=1e-10)
    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(A)).numpy(), w, rtol=1e-12)
    stack = np.stack([A, A * 2.0])
    np.testing.assert_allclose(wg.compile(np.linalg.eigvalsh)(stack), np.linalg.eigvalsh(stack),
                               rtol=1e-12)


def _one_triangle_gradient(p, uplo="L"):
    """The gradient with respect to ``a`` of a function of the symmetric matrix that one
    triangle of ``a`` defines, given ``p``, its (symmetric) gradient in that matrix."""
    if uplo == "L":
        return np.tril(2.0 * p, -1) + np.diag(np.diag(p))
    return np.triu(2.0 * p, 1) + np.diag(np.diag(p))


def test_gradient_of_the_largest_eigenvalue_is_the_outer_product_of_its_vector():
    w, v = np.linalg.eigh(A)
    p = np.outer(v[:, -1], v[:, -1])
    g = wg.grad(lambda a: np.linalg.eigvalsh(a)[-1])(A)
    np.testing.assert_allclose(g, _one_triangle_gradient(p), atol=1e-12)
    g = wg.grad(lambda a: np.linalg.eigvalsh(a, UPLO="U")[-1])(A)
    np.testing.assert_allclose(g, _one_triangle_gradient(p, "U"), atol=1e-12)


def _eigh_loss(a, uplo):
    """A loss of eigenvalues and of sign-independent functions of the eigenvectors."""
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return np.sum(w * np.arange(1.0, w.shape[-1] + 1)) + np.sum(v[..., 0, :] ** 2 * w) \
        + np.sum((v[..., :, 1] * v[..., :, 2]) ** 2)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_one_triangle_is_read_as_numpy_reads_it(uplo, shape):
    """On a non-symmetric input the values are NumPy's, and the gradient is the finite
    difference of NumPy's own eigh: zero on the triangle it does not read."""
    a = RNG.normal(size=shape)
    w, v = np.linalg.eigh(a, UPLO=uplo)
    got = np.linalg.eigh(wg.tensor(a), UPLO=uplo)
    np.testing.assert_allclose(got.eigenvalues.numpy(), w, rtol=1e-12)
    # NumPy's own eigenvectors, signs included (LAPACK reads the same triangle)
    np.testing.assert_array_equal(got.eigenvectors.numpy(), v)
    np.testing.assert_array_equal(got.eigenvalues.numpy(), w)
    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(a), UPLO=uplo).numpy(),
                               np.linalg.eigvalsh(a, UPLO=uplo), rtol=1e-12)
    want = real_gradient(lambda x: _eigh_loss(x, uplo), a)
    g = wg.grad(lambda x: _eigh_loss(x, uplo))(a)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    unread = np.triu(np.ones(shape[-2:]), 1) if uplo == "L" else np.tril(np.ones(shape[-2:]), -1)
    assert np.all(g[..., unread == 1] == 0.0)
    assert check_grads(lambda x: _eigh_loss(x, uplo), (a,), order=2, modes=("rev", "fwd"))


def test_hessian_and_jvp_of_grad_on_a_non_symmetric_input():
    a = RNG.normal(size=(3, 3))

    def f(x):
        return np.sum(np.linalg.eigvalsh(x) ** 3)

    h = wg.hessian(f)(a)
    assert h.shape == (3, 3, 3, 3)
    assert np.all(h[0, 1] == 0.0) and np.all(h[:, :, 0, 2] == 0.0)  # the unread triangle
    want = real_gradient(lambda x: np.sum(
        wg.grad(f)(x) * np.arange(9.0).reshape(3, 3)), a, eps=1e-5)
    t = wg.jvp(wg.grad(f), (a,), (np.eye(3)[0:1].repeat(3, 0),))[1]
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", h, np.eye(3)[0:1].repeat(3, 0)), t,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.einsum("ijkl,ij->kl", h, np.arange(9.0).reshape(3, 3)), want,
                               rtol=1e-5, atol=1e-6)


def test_float32_int_empty_and_compiled():
    a = RNG.normal(size=(3, 3))
    w = np.linalg.eigvalsh(wg.tensor(a.astype(np.float32))).numpy()
    assert w.dtype == np.float32
    g = wg.grad(lambda x: np.sum(np.linalg.eigvalsh(x)))(a.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.eye(3), atol=1e-6)  # the trace
    ints = np.array([[2, 7], [1, 3]])
    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(ints)).numpy(),
                               np.linalg.eigvalsh(ints), rtol=1e-12)
    empty = np.zeros((0, 0))
    assert np.linalg.eigh(wg.tensor(empty))[1].shape == (0, 0)
    stack = RNG.normal(size=(2, 3, 3))
    np.testing.assert_allclose(wg.compile(lambda x: np.linalg.eigvalsh(x, UPLO="U"))(stack),
                               np.linalg.eigvalsh(stack, UPLO="U"), rtol=1e-12)
    f = lambda x: np.sum(np.linalg.eigh(x)[1][..., 0] ** 2 * np.linalg.eigh(x)[0])  # noqa: E731
    np.testing.assert_allclose(wg.grad(wg.compile(f))(stack), wg.grad(f)(stack), rtol=1e-10)


def test_non_square_input_is_refused_with_numpys_error():
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        np.linalg.eigh(wg.tensor(np.ones((2, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        np.linalg.eigvalsh(wg.tensor(np.ones(3)))


def test_through_a_symmetric_parametrisation_to_second_order_in_both_modes():
    def f(b):
        w, v = np.linalg.eigh(b + b.T)
        return np.sum(w ** 2) + np.sum((v[:, 0] * v[:, 1]) ** 2) + np.sum(np.abs(v[:, 2]))

    assert check_grads(f, (B,), order=2, modes=("rev", "fwd"))


def test_a_symmetric_input_gives_numpys_values_whichever_triangle():
    for uplo in "LU":
        np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(A), UPLO=uplo).numpy(),
                                   np.linalg.eigvalsh(A), rtol=1e-12)


def test_compiled_and_hessian_agree_with_eager():
    def f(a):
        return np.sum(np.linalg.eigvalsh(a) ** 3)

    np.testing.assert_allclose(wg.grad(wg.compile(f))(A), wg.grad(f)(A), rtol=1e-10)
    np.testing.assert_allclose(wg.hessian(wg.compile(f))(A), wg.hessian(f)(A), rtol=1e-8)


def test_repeated_eigenvalues_keep_a_finite_eigenvalue_gradient():
    """At a repeated eigenvalue the eigenvectors are not differentiable (inf or NaN, as
    in JAX and PyTorch); the eigenvalues' gradient stays finite."""
    a = np.diag([1.0, 1.0, 2.0])
    g = wg.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 2))(a)
    np.testing.assert_allclose(g, np.diag([2.0, 2.0, 4.0]))
    with np.errstate(all="ignore"):
        gv = wg.grad(lambda a: np.sum(np.linalg.eigh(a)[1] * np.arange(9.0).reshape(3, 3)))(a)
    assert not np.all(np.isfinite(gv))


def test_uplo_is_checked_and_read_in_either_case_as_numpy():
    with pytest.raises(ValueError, match="UPLO"):
        np.linalg.eigh(wg.tensor(A), UPLO="X")
    c = np.triu(A) + 5.0
    np.testing.assert_array_equal(np.linalg.eigh(wg.tensor(c), UPLO="u")[1].numpy(),
                                  np.linalg.eigh(c, UPLO="u")[1])
    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(c), UPLO="l").numpy(),
                               np.linalg.eigvalsh(c, UPLO="l"), rtol=1e-14)


def test_nan_and_inf_in_the_unread_triangle_are_ignored_as_numpy_ignores_them():
    a = np.array([[2.0, np.nan, np.inf], [1.0, 3.0, np.nan], [0.5, 0.2, 1.0]])

    def f(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w ** 2) + np.sum(v[:, 0] ** 4)

    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(a)).numpy(), np.linalg.eigvalsh(a),
                               rtol=1e-14)
    g = wg.grad(f)(a)
    assert np.all(np.isfinite(g)) and np.all(g[np.triu_indices(3, 1)] == 0.0)
    assert np.isfinite(wg.jvp(f, (a,), (np.ones((3, 3)),))[1])
    np.testing.assert_allclose(wg.compile(f)(a), f(a), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.svd(wg.tensor(a), hermitian=True)[1].numpy(),
                               np.linalg.svd(a, hermitian=True)[1], rtol=1e-12)


# -- complex Hermitian matrices ------------------------------------------------------------
C = RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))  # not Hermitian: one triangle read


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_values_and_phase_invariant_vectors_against_numpy(uplo):
    """Values are NumPy's; the gradient of the eigenvalues and of phase-invariant functions
    of the eigenvectors (autograd's tests: ``|V|²``, ``V diag(w) Vᴴ``) is the one finite
    differences of ``np.linalg.eigh`` itself give, with zero in the unread triangle."""
    w, v = np.linalg.eigh(C, UPLO=uplo)
    got = np.linalg.eigh(wg.tensor(C), UPLO=uplo)
    np.testing.assert_array_equal(got.eigenvalues.numpy(), w)
    np.testing.assert_array_equal(got.eigenvectors.numpy(), v)
    weights = np.arange(1.0, 5.0)
    for f in (lambda a: np.sum(np.linalg.eigvalsh(a, UPLO=uplo) * weights),
              lambda a: np.sum(np.abs(np.linalg.eigh(a, UPLO=uplo)[1]) ** 2 * weights),
              lambda a: np.sum(np.abs(_rebuild(np.linalg.eigh(a, UPLO=uplo), weights))
                               ** 2)):
        g = wg.grad(f)(C)
        np.testing.assert_allclose(g, complex_gradient(f, C), atol=1e-6)
        unread = np.triu(np.ones((4, 4)), 1) if uplo == "L" else np.tril(np.ones((4, 4)), -1)
        assert np.all(g[unread == 1] == 0)
        check_grads(f, (C,), order=2, modes=("rev", "fwd"))


def _rebuild(wv, weights):
    w, v = wv
    return (v * weights) @ np.conj(v).T


def test_complex_eigenvectors_are_numpys_with_their_phase():
    """LAPACK's zheevd keeps the first row (UPLO='L') or the last ('U') of the eigenvectors
    real; the rules differentiate exactly those vectors, so even a phase-dependent function
    (``Re V``) gets the gradient finite differences of ``np.linalg.eigh`` give."""
    for uplo, k in (("L", 0), ("U", -1)):
        v = np.linalg.eigh(np.stack([C, C.T]), UPLO=uplo)[1]
        assert np.all(v[..., k, :].imag == 0)
        f = lambda a, uplo=uplo: np.sum(np.real(np.linalg.eigh(a, UPLO=uplo)[1]) * np.arange(16.0).reshape(4, 4))  # noqa: E731,E501
        np.testing.assert_allclose(wg.grad(f)(C), complex_gradient(f, C), atol=1e-6)


def test_complex_stacks_1x1_complex64_and_real_input_unchanged():
    stack = RNG.normal(size=(2, 3, 3)) + 1j * RNG.normal(size=(2, 3, 3))
    f = lambda a: np.sum(np.abs(np.linalg.eigh(a)[1][..., :2]) ** 2 * np.linalg.eigvalsh(a)[..., None, :2])  # noqa: E731,E501
    check_grads(f, (stack,), order=2, modes=("rev", "fwd"))
    one = np.array([[2.0 + 3.0j]])  # NumPy reads the real part of the diagonal
    assert wg.grad(lambda a: np.linalg.eigvalsh(a)[0])(one) == 1.0
    assert wg.grad(lambda a: np.abs(np.linalg.eigh(a)[1][0, 0]))(one) == 0.0
    c64 = C.astype(np.complex64)
    g = wg.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 2))(c64)
    assert g.dtype == np.complex64
    g_real = wg.grad(lambda a: np.sum(np.linalg.eigh(a)[1] ** 2 * np.linalg.eigvalsh(a)))(A)
    assert g_real.dtype == np.float64


def test_hessian_of_a_real_loss_of_a_complex_matrix_and_compiled():
    f = lambda a: np.sum(np.linalg.eigvalsh(a) ** 3) + np.sum(np.abs(np.linalg.eigh(a)[1]) ** 4)  # noqa: E731,E501
    x = C.real.copy()
    g = lambda x: f(x + 1j * x.T)  # noqa: E731 - a real parametrisation of a complex matrix
    check_grads(g, (x,), order=3, modes=("rev", "fwd"))
    h = wg.hessian(g)(x)
    assert h.shape == (4, 4, 4, 4) and np.all(np.isfinite(h))
    np.testing.assert_allclose(wg.compile(wg.grad(f))(C), wg.grad(f)(C), rtol=1e-10, atol=1e-12)


def test_complex_repeated_eigenvalues():
    """A degenerate Hermitian matrix: the eigenvalues' gradient stays finite and a
    symmetric function of the cluster (here their sum, the trace) gets its true gradient.
    (The eigenvectors are not differentiable there, as for real matrices.)"""
    q, _ = np.linalg.qr(RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3)))
    a = (q * np.array([1.0, 1.0, 3.0])) @ q.conj().T
    g = wg.grad(lambda a: np.sum(np.linalg.eigvalsh(a)))(a)
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)
    g2 = wg.grad(lambda a: np.sum(np.linalg.eigvalsh(a)[:2]))(a)
    assert np.all(np.isfinite(g2))


def test_export_of_complex_eigenvectors_is_refused_and_of_eigenvalues_kept():
    from wengert.graph.backends.export import NotExportable, to_jax_source

    with pytest.raises(NotExportable, match="eigh_vectors to a complex matrix.*phase"):
        to_jax_source(wg.trace(lambda a: np.linalg.eigh(a)[1], C))
    assert "jnp.linalg.eigh" in to_jax_source(wg.trace(np.linalg.eigvalsh, C))
    assert "jnp.linalg.eigh" in to_jax_source(wg.trace(lambda a: np.linalg.eigh(a)[1], A))


def test_a_zero_in_numpys_real_row_falls_back_to_the_phase_free_rule():
    """A block-diagonal Hermitian matrix: the first row of some eigenvectors is exactly 0
    (NumPy's phase is then fixed by the deflation); the rule leaves the phase term out
    there, and phase-invariant functions still get finite-difference gradients, finite."""
    a = np.array([[2.0, 0, 0], [0, 1.0, 0.5j], [0, -0.5j, 3.0]])
    assert np.sum(np.linalg.eigh(a)[1][0] == 0) == 2
    f = lambda a: np.sum(np.abs(np.linalg.eigh(a)[1]) ** 2 * np.arange(9.0).reshape(3, 3))  # noqa: E731,E501
    g = wg.grad(f)(a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, complex_gradient(f, a), atol=1e-6)
    assert np.isfinite(wg.jvp(f, (a,), (np.ones_like(a),))[1])
