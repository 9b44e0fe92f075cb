"""``np.linalg.svd`` (wengert.ops.linalg.svd) and the norms made of singular values: NumPy's
values and conventions. (The registry sweep checks the three primitives' rules to
second order in both modes.)"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from numeric_gradient import complex_gradient, real_gradient
from wengert.testing import check_grads

RNG = np.random.default_rng(5)
A = RNG.normal(size=(4, 3))


def test_values_equal_numpy():
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    got = np.linalg.svd(wg.tensor(A), full_matrices=False)
    assert type(got).__name__ == "SVDResult"
    np.testing.assert_allclose(got.S.numpy(), s, rtol=1e-12)
    np.testing.assert_allclose(got.U.numpy() @ np.diag(s) @ got.Vh.numpy(), A, atol=1e-12)
    np.testing.assert_allclose(np.linalg.svd(wg.tensor(A), compute_uv=False).numpy(), s)
    square = RNG.normal(size=(3, 3))
    assert len(np.linalg.svd(wg.tensor(square))) == 3  # full_matrices=True is fine square


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_a_loss_of_all_three_parts_to_second_order_in_both_modes(shape):
    a = RNG.normal(size=shape)

    def f(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.sum(s ** 2) + np.sum((u[..., 0] * u[..., 1]) ** 2) + np.sum(vh[..., 0, :] ** 4)

    assert check_grads(f, (a,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norms_from_singular_values(ord):
    np.testing.assert_allclose(np.linalg.norm(wg.tensor(A), ord).numpy(),
                               np.linalg.norm(A, ord), rtol=1e-12)
    assert check_grads(lambda a: np.linalg.norm(a, ord), (A,), order=2, modes=("rev", "fwd"))
    stack = RNG.normal(size=(2, 3, 3))
    np.testing.assert_allclose(
        np.linalg.norm(wg.tensor(stack), ord, axis=(2, 0), keepdims=True).numpy(),
        np.linalg.norm(stack, ord, axis=(2, 0), keepdims=True), rtol=1e-12)


def test_spectral_norm_gradient_is_the_outer_product_of_the_top_singular_vectors():
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(wg.grad(lambda a: np.linalg.norm(a, 2))(A),
                               np.outer(u[:, 0], vh[0]), atol=1e-12)


def test_compiled_and_exported_agree():
    def f(a):
        return np.linalg.norm(a, "nuc") + np.sum(np.linalg.svd(a, full_matrices=False)[0] ** 4)

    np.testing.assert_allclose(wg.grad(wg.compile(f))(A), wg.grad(f)(A), rtol=1e-10)
    np.testing.assert_allclose(wg.compile(wg.grad(f))(A), wg.grad(f)(A), rtol=1e-10)


def test_full_matrices_of_a_rectangular_input_says_what_to_do():
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        np.linalg.svd(wg.tensor(A))
    with pytest.raises(np.linalg.LinAlgError, match="square"):  # as NumPy's (through eigh)
        np.linalg.svd(wg.tensor(A), hermitian=True)
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        np.linalg.svd(wg.tensor(np.ones(3)))


def _hermitian_loss(a):
    u, s, vh = np.linalg.svd(a, hermitian=True)
    k = np.arange(1.0, s.shape[-1] + 1)
    return (np.sum(s * k) + np.sum(u[..., 0, :] ** 2 * s)
            + np.sum((vh[..., 0, :] * u[..., :, 0]) * k))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_hermitian_is_numpys_function(shape):
    """NumPy's values (eigh of the lower triangle, |λ| descending, the signs in Vh) on a
    non-symmetric input with negative eigenvalues, and the gradient of NumPy's own
    function by finite differences (zero on the unread upper triangle)."""
    b = RNG.normal(size=shape)
    a = b + np.swapaxes(b, -1, -2) + np.triu(RNG.normal(size=shape), 1)
    for got, want in zip(np.linalg.svd(wg.tensor(a), hermitian=True),
                         np.linalg.svd(a, hermitian=True)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.linalg.svd(wg.tensor(a), compute_uv=False, hermitian=True)
                               .numpy(), np.linalg.svd(a, compute_uv=False, hermitian=True),
                               rtol=1e-12)
    g = wg.grad(_hermitian_loss)(a)
    np.testing.assert_allclose(g, real_gradient(_hermitian_loss, a), rtol=1e-6,
                               atol=1e-7)
    assert np.all(g[..., np.triu(np.ones(shape[-2:]), 1) == 1] == 0.0)
    assert check_grads(_hermitian_loss, (a,), order=2, modes=("rev", "fwd"))
    sv = lambda a: np.sum(np.linalg.svd(a, hermitian=True, compute_uv=False) ** 3)  # noqa: E731
    assert check_grads(sv, (a,), order=2, modes=("rev", "fwd"))


def test_hermitian_compiled_follows_the_signs_and_order_of_new_inputs():
    a = np.diag([3.0, -1.0, 2.0]) + 0.1
    f = lambda a: np.sum(np.linalg.svd(a, hermitian=True)[2][0] * np.arange(3.0))  # noqa: E731
    cf = wg.compile(f)
    for x in (a, -a, a[::-1, ::-1].copy()):
        np.testing.assert_allclose(cf(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(wg.grad(wg.compile(f))(-a), wg.grad(f)(-a), rtol=1e-10)


def test_singular_values_gradient_stays_finite_at_a_repeated_value():
    a = np.diag([2.0, 2.0, 1.0])
    g = wg.grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False)))(a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(np.trace(g), 3.0)


def test_hermitian_keeps_float32():
    a = np.array([[2.0, 0.5], [0.5, -3.0]], dtype=np.float32)
    u, s, vh = np.linalg.svd(wg.tensor(a), hermitian=True)
    assert u.numpy().dtype == s.numpy().dtype == vh.numpy().dtype == np.float32
    g = wg.grad(lambda a: np.sum(np.linalg.svd(a, hermitian=True)[2] ** 3))(a)
    assert g.dtype == np.float32


def test_hermitian_at_repeated_singular_values_follows_numpys_order():
    """Eigenvalues 1 and -1 give the singular value 1 twice: the values' gradient stays
    finite, each position's going to the eigenvalue NumPy's argsort put there."""
    a = np.diag([1.0, -1.0, 2.0])
    g = wg.grad(lambda a: np.sum(np.linalg.svd(a, hermitian=True, compute_uv=False) ** 2))(a)
    np.testing.assert_array_equal(g, np.diag([2.0, -2.0, 4.0]))
    w = np.array([3.0, 2.0, 1.0])
    g = wg.grad(lambda a: np.sum(np.linalg.svd(a, hermitian=True)[1] * w))(a)
    order = np.argsort(np.abs(np.linalg.eigvalsh(a)))[::-1]  # NumPy's own order
    want = np.zeros(3)
    want[order] = w * np.sign(np.linalg.eigvalsh(a)[order])
    np.testing.assert_array_equal(np.diag(np.linalg.eigh(a)[1] @ np.diag(want)
                                          @ np.linalg.eigh(a)[1].T), np.diag(g))
    for got, expected in zip(np.linalg.svd(wg.tensor(a), hermitian=True),
                             np.linalg.svd(a, hermitian=True)):
        np.testing.assert_array_equal(got.numpy(), expected)


# -- complex matrices ----------------------------------------------------------------------
def _complex(shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_complex_svd_against_finite_differences_of_numpy(shape):
    """Values are NumPy's; phase-invariant losses (autograd's tests: ``|U|²``, ``U S Vh``)
    and even phase-dependent ones (``Re Vh``: NumPy's LAPACK keeps the first row of ``V``
    real, or of ``U`` for a wide matrix, and the rules differentiate those vectors) get the
    gradient finite differences of ``np.linalg.svd`` give, to second order in both modes."""
    a = _complex(shape)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    got = np.linalg.svd(wg.tensor(a), full_matrices=False)
    for x, y in zip(got, (u, s, vh)):
        np.testing.assert_array_equal(x.numpy(), y)
    assert got.S.numpy().dtype == np.float64
    k = min(shape[-2:])
    w = np.arange(1.0, k + 1)
    for f in (lambda a: np.sum(np.linalg.svd(a, compute_uv=False) * w),
              lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 2 * w),
              lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[2]) ** 4),
              lambda a: np.sum(np.real(np.linalg.svd(a, full_matrices=False)[2])),
              lambda a: np.sum(np.imag(np.linalg.svd(a, full_matrices=False)[0])),
              lambda a: np.sum(np.abs((lambda u, s, vh: (u * s[..., None, :]) @ vh)(
                  *np.linalg.svd(a, full_matrices=False))) ** 2)):
        np.testing.assert_allclose(wg.grad(f)(a), complex_gradient(f, a), atol=1e-6)
        check_grads(f, (a,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("ord_", [2, -2, "nuc"])
def test_complex_matrix_norms(ord_):
    a = _complex((3, 4))
    f = lambda a: np.linalg.norm(a, ord_)  # noqa: E731
    np.testing.assert_allclose(wg.grad(f)(a), complex_gradient(f, a), atol=1e-6)
    check_grads(f, (a,), order=2, modes=("rev", "fwd"))
    stack = _complex((2, 3, 3))
    check_grads(lambda a: np.linalg.norm(a, ord_, axis=(1, 2)), (stack,), order=2,
                modes=("rev", "fwd"))
    assert wg.grad(lambda a: np.linalg.cond(a))(a[:, :3]).dtype == np.complex128


def test_complex_hermitian_svd_is_numpys():
    h = _complex((3, 3))
    h = h + h.conj().T
    got = np.linalg.svd(wg.tensor(h), hermitian=True)
    for x, y in zip(got, np.linalg.svd(h, hermitian=True)):
        np.testing.assert_allclose(x.numpy(), y, atol=1e-12)
    f = lambda a: np.sum(np.abs(np.linalg.svd(a, hermitian=True)[2]) ** 2 * np.arange(3.0))  # noqa: E731,E501
    np.testing.assert_allclose(wg.grad(f)(h), complex_gradient(f, h), atol=1e-6)


def test_complex64_real_input_compiled_and_export():
    from wengert.graph.backends.export import NotExportable, to_jax_source

    a = _complex((3, 2))
    f = lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 2 * np.array([1.0, 2.0]))  # noqa: E731,E501
    g = wg.grad(f)(a.astype(np.complex64))
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, wg.grad(f)(a), rtol=1e-3, atol=1e-4)
    assert wg.grad(f)(a.real.copy()).dtype == np.float64
    np.testing.assert_allclose(wg.compile(wg.grad(f))(a), wg.grad(f)(a), rtol=1e-10,
                               atol=1e-12)
    with pytest.raises(NotExportable, match="svd_u to a complex matrix"):
        to_jax_source(wg.trace(lambda a: np.linalg.svd(a, full_matrices=False)[0], a))
    assert "jnp.linalg.svd" in to_jax_source(wg.trace(lambda a: np.linalg.norm(a, "nuc"), a))


def test_complex_repeated_singular_values_keep_a_finite_values_gradient():
    q, _ = np.linalg.qr(_complex((3, 3)))
    a = q * np.array([2.0, 2.0, 1.0])  # singular values 2, 2, 1
    g = wg.grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False)))(a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, complex_gradient(
        lambda a: np.sum(np.linalg.svd(a, compute_uv=False)), a), atol=1e-6)


@pytest.mark.parametrize("ord_", [2, -2])
def test_spectral_norm_splits_the_gradient_of_a_repeated_singular_value(ord_):
    # norm(A, 2) is the largest singular value: at a tie its gradient splits between the
    # copies, as max does (and JAX): I/2 at the identity, not one of its singular pairs.
    a = np.eye(2)
    g = wg.grad(lambda m: wnp.linalg.norm(m, ord_))(a)
    np.testing.assert_allclose(g, np.eye(2) / 2)
    g_max = wg.grad(lambda m: (wnp.max if ord_ == 2 else wnp.min)(
        wnp.linalg.svd(m, compute_uv=False)))(a)
    np.testing.assert_allclose(g, g_max)
    _, t = wg.jvp(lambda m: wnp.linalg.norm(m, ord_), (a,), (np.diag([0.3, 0.7]),))
    np.testing.assert_allclose(t, 0.5)
    b = np.array([[3.0, 1.0], [0.0, 2.0]])  # distinct singular values: u vᵀ of the one
    u, s, vt = np.linalg.svd(b)
    k = 0 if ord_ == 2 else 1
    np.testing.assert_allclose(wg.grad(lambda m: wnp.linalg.norm(m, ord_))(b),
                               np.outer(u[:, k], vt[k]), atol=1e-12)
