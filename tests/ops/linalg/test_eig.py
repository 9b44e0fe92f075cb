"""np.linalg.eig and eigvals: values as NumPy's, gradients (complex convention) against
finite differences in both modes to second order, NumPy's normalisation of the
eigenvectors (unit norm, largest entry real) differentiated too, and the documented
behaviour at repeated eigenvalues."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.testing import check_grads

RNG = np.random.default_rng(11)
REAL = np.array([[1.0, 2.0, 0.3], [-0.5, 0.4, 1.1], [0.7, -1.2, 2.0]])  # a complex pair
REAL_SPECTRUM = np.array([[3.0, 1.0, 0.2], [0.5, 1.0, -0.4], [0.1, 0.3, -1.5]])
CPLX = REAL + 0.4j * RNG.normal(size=(3, 3))
STACK = np.stack([REAL, REAL_SPECTRUM.T])


def test_values_match_numpy():
    for a in (REAL, REAL_SPECTRUM, CPLX, STACK):
        w, v = wnp.linalg.eig(a)
        nw, nv = np.linalg.eig(a)
        np.testing.assert_array_equal(w, nw)
        np.testing.assert_array_equal(v, nv)
        out = np.linalg.eig(wg.tensor(a))  # np.* dispatch
        np.testing.assert_array_equal(out.eigenvalues.numpy(), nw)
        np.testing.assert_array_equal(np.linalg.eigvals(wg.tensor(a)).numpy(), nw)
    assert np.linalg.eigvals(REAL_SPECTRUM).dtype == np.float64  # NumPy's real case kept


@pytest.mark.parametrize("a", [REAL, REAL_SPECTRUM, CPLX, STACK],
                         ids=["real-with-complex-pair", "real-spectrum", "complex", "stack"])
def test_eigenvalue_gradients(a):
    check_grads(lambda a: np.linalg.eigvals(a), (a,), order=2, modes=("rev", "fwd"))
    g = wg.grad(lambda a: np.sum(np.abs(np.linalg.eigvals(a)) ** 2))(a)
    assert g.dtype == a.dtype  # a real input gets a real gradient


@pytest.mark.parametrize("a", [REAL, REAL_SPECTRUM, CPLX, STACK],
                         ids=["real-with-complex-pair", "real-spectrum", "complex", "stack"])
def test_eigenvector_gradients(a):
    # phase-invariant functions: safe wherever the eigenvalues are distinct
    check_grads(lambda a: np.abs(np.linalg.eig(a)[1]) ** 2, (a,), order=2,
                modes=("rev", "fwd"))
    check_grads(lambda a: (lambda v: v[..., 0, :] / v[..., 1, :])(np.linalg.eig(a)[1]), (a,),
                modes=("rev", "fwd"))
    # NumPy's own eigenvectors (unit norm, largest entry real): differentiated too
    check_grads(lambda a: np.linalg.eig(a)[1], (a,), order=2, modes=("rev", "fwd"))


def test_exact_values():
    # Σλ = tr A and Πλ = det A, whatever the eigenvalues
    for a in (REAL, CPLX):
        np.testing.assert_allclose(wg.grad(lambda a: np.real(np.sum(np.linalg.eigvals(a))))(a),
                                   np.eye(3), atol=1e-12)
        g = wg.grad(lambda a: np.real(np.prod(np.linalg.eigvals(a))))(a)
        want = np.linalg.det(a) * np.linalg.inv(a).T
        np.testing.assert_allclose(g, np.real(want) if a.dtype.kind == "f" else want)
    # one eigenvalue of a triangular matrix: its diagonal entry
    t = np.triu(RNG.normal(size=(3, 3))) + np.diag([0.0, 2.0, 4.0])
    w = np.linalg.eigvals(t)
    k = int(np.argmax(np.real(w)))
    g = wg.grad(lambda a: np.real(np.linalg.eigvals(a)[k]))(t)
    v = np.linalg.eig(t)[1]
    np.testing.assert_allclose(g, np.outer(np.linalg.inv(v)[k], v[:, k]), atol=1e-12)


def test_repeated_eigenvalues():
    """Documented: a diagonalisable matrix with a repeated eigenvalue gets finite
    eigenvalue derivatives whose symmetric functions are right; the eigenvectors are not
    differentiable there (inf or NaN)."""
    a = np.diag([2.0, 2.0, 5.0])
    g = wg.grad(lambda a: np.real(np.sum(np.linalg.eigvals(a)[:2])))(a)  # the cluster's sum
    np.testing.assert_allclose(g, np.diag([1.0, 1.0, 0.0]))
    with np.errstate(all="ignore"):
        gv = wg.grad(lambda a: np.sum(np.abs(np.linalg.eig(a)[1] @ np.ones(3))))(
            a + np.triu(np.ones((3, 3)), 1) * 0.1)
    assert not np.all(np.isfinite(gv))


def test_forward_mode_and_compositions():
    t = RNG.normal(size=(3, 3))
    w, dw = wg.jvp(lambda a: np.linalg.eigvals(a), (REAL,), (t,))
    v = np.linalg.eig(REAL)[1]
    np.testing.assert_allclose(dw, np.diag(np.linalg.solve(v, t @ v)))
    # a real loss of a real matrix through complex eigenpairs, to third order
    f = lambda a: np.sum(np.abs(np.linalg.eig(a)[1] * np.linalg.eigvals(a)) ** 2)  # noqa: E731
    check_grads(f, (REAL,), order=3, modes=("rev", "fwd"))
    assert wg.grad(f)(REAL).dtype == np.float64
    np.testing.assert_allclose(wg.compile(wg.grad(f))(REAL), wg.grad(f)(REAL))


def test_export_refuses_the_eigenvectors():
    from wengert.graph.backends.export import NotExportable, to_jax_source

    g = wg.trace(lambda a: np.linalg.eig(a)[1], REAL)
    with pytest.raises(NotExportable, match="eig_vectors.*phase"):
        to_jax_source(g)


def test_eigenvalue_derivative_of_a_defective_matrix_refuses():
    # A Jordan block has no eigenvalue derivative: V⁻¹ of NumPy's numerically singular V
    # gave 2I as the gradient of Σλ² = tr(A²), whose gradient is 2Aᵀ (JAX and PyTorch
    # return that same wrong 2I). Both modes refuse instead.
    jordan = np.array([[1.0, 1.0], [0.0, 1.0]])
    f = lambda a: wnp.sum(wnp.real(wnp.linalg.eigvals(a) ** 2))  # noqa: E731
    with pytest.raises(np.linalg.LinAlgError, match="defective"):
        wg.grad(f)(jordan)
    with pytest.raises(np.linalg.LinAlgError, match="defective"):
        wg.jvp(f, (jordan,), (np.eye(2),))
    # a repeated eigenvalue with a full set of eigenvectors keeps its derivative, and so
    # does a matrix near (not at) a Jordan block
    np.testing.assert_allclose(wg.grad(f)(np.eye(2)), 2 * np.eye(2))
    near = np.array([[1.0, 1.0], [1e-6, 1.0]])
    np.testing.assert_allclose(wg.grad(f)(near), 2 * near.T, rtol=1e-6)
