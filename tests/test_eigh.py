"""``np.linalg.eigh`` and ``eigvalsh`` (wengert.ops.eigen): NumPy's values, the symmetric
gradient convention, and what happens at repeated eigenvalues. (The registry sweep
checks both primitives' rules to second order in both modes.)"""

from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
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


def test_gradient_of_the_largest_eigenvalue_is_the_outer_product_of_its_vector():
    w, v = np.linalg.eigh(A)
    g = wg.grad(lambda a: np.linalg.eigvalsh(a)[-1])(A)
    np.testing.assert_allclose(g, np.outer(v[:, -1], v[:, -1]), atol=1e-12)


def test_through_a_symmetric_parametrisation_to_second_order_in_both_modes():
    def f(b):
        w, v = np.linalg.eigh(b + b.T)
        return np.sum(w ** 2) + np.sum((v[:, 0] * v[:, 1]) ** 2) + np.sum(np.abs(v[:, 2]))

    assert check_grads(f, (B,), order=2, modes=("rev", "fwd"))


def test_the_gradient_is_symmetric_and_the_input_is_symmetrised():
    c = np.triu(A)  # not symmetric: its symmetric part is decomposed
    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(c)).numpy(),
                               np.linalg.eigvalsh(0.5 * (c + c.T)), rtol=1e-12)
    g = wg.grad(lambda a: np.sum(np.linalg.eigh(a)[1][:, 0] ** 3))(A)
    np.testing.assert_allclose(g, g.T, atol=1e-12)


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


def test_uplo_is_checked():
    with pytest.raises(ValueError, match="UPLO"):
        np.linalg.eigh(wg.tensor(A), UPLO="X")
