"""``np.linalg.pinv`` (a primitive with Golub-Pereyra rules) and ``lstsq`` made from it.
(The registry sweep checks pinv's rules to second order in both modes.)"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from numeric_gradient import complex_gradient
from wengert.core.bind import primal
from wengert.testing import check_grads

RNG = np.random.default_rng(11)
TALL = RNG.normal(size=(5, 3))
WIDE = RNG.normal(size=(2, 4))
B = RNG.normal(size=5)


@pytest.mark.parametrize("a", [TALL, WIDE, np.eye(3)], ids=["tall", "wide", "identity"])
def test_pinv_values_and_derivatives(a):
    np.testing.assert_allclose(np.linalg.pinv(wg.tensor(a)).numpy(), np.linalg.pinv(a),
                               rtol=1e-10, atol=1e-12)
    assert check_grads(np.linalg.pinv, (a,), order=2, modes=("rev", "fwd"))


def test_pinv_of_a_matrix_with_repeated_singular_values_has_a_finite_gradient():
    """(A gradient through the SVD's vectors would be NaN here.)"""
    g = wg.grad(lambda a: np.sum(np.linalg.pinv(a) ** 2))(np.eye(3) * 2.0)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, -np.eye(3) * 0.25)  # d/da Σ (1/a)² = −2/a³ on the diagonal


def test_lstsq_matches_numpy_and_differentiates_in_a_and_b():
    x, res, rank, s = np.linalg.lstsq(TALL, B, rcond=None)
    got = np.linalg.lstsq(wg.tensor(TALL), wg.tensor(B), rcond=None)
    np.testing.assert_allclose(got[0].numpy(), x, rtol=1e-10)
    np.testing.assert_allclose(got[1].numpy(), res, rtol=1e-10)
    assert got[2] == rank
    np.testing.assert_allclose(got[3].numpy(), s, rtol=1e-12)

    def f(a, b):
        sol, residuals, _, _ = np.linalg.lstsq(a, b, rcond=None)
        return np.sum(sol ** 2) + np.sum(residuals)

    assert check_grads(f, (TALL, B), order=2, modes=("rev", "fwd"))


def test_lstsq_of_a_wide_matrix_is_the_minimum_norm_solution():
    b = RNG.normal(size=(2, 2))
    x, res, rank, s = np.linalg.lstsq(WIDE, b, rcond=None)
    got = np.linalg.lstsq(wg.tensor(WIDE), b, rcond=None)
    np.testing.assert_allclose(got[0].numpy(), x, rtol=1e-10)
    assert got[1].shape == res.shape == (0,) and got[2] == rank == 2


def test_compiled_lstsq_gradient_equals_eager():
    def f(a):
        return np.sum(np.linalg.lstsq(a, B, rcond=None)[0] ** 2)

    np.testing.assert_allclose(wg.grad(wg.compile(f))(TALL), wg.grad(f)(TALL), rtol=1e-10)
    np.testing.assert_allclose(wg.compile(wg.grad(f))(TALL), wg.grad(f)(TALL), rtol=1e-10)


@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (3, 3), (2, 3, 2)])
def test_complex_pinv_and_lstsq(shape):
    """pinv of a complex matrix (its rules conjugate the dAᴴ terms), and lstsq with NumPy's
    real residuals ``Σ|A x − b|²``."""
    a = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    np.testing.assert_allclose(np.linalg.pinv(wg.tensor(a)).numpy(), np.linalg.pinv(a),
                               rtol=1e-10, atol=1e-12)
    f = lambda a: np.sum(np.abs(np.linalg.pinv(a) - 0.3j) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.grad(f)(a), complex_gradient(f, a), atol=1e-6)
    check_grads(lambda a: np.linalg.pinv(a), (a,), order=2, modes=("rev", "fwd"))
    if len(shape) == 2 and shape[0] > shape[1]:
        b = RNG.normal(size=shape[0]) + 1j * RNG.normal(size=shape[0])
        x, res, rank, s = np.linalg.lstsq(wg.tensor(a), wg.tensor(b), rcond=None)
        want = np.linalg.lstsq(a, b, rcond=None)
        np.testing.assert_allclose(x.numpy(), want[0], rtol=1e-10)
        np.testing.assert_allclose(res.numpy(), want[1], rtol=1e-10)
        assert res.numpy().dtype == want[1].dtype == np.float64 and rank == want[2]
        check_grads(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1], (a, b), order=2,
                    modes=("rev", "fwd"))
        assert wg.grad(lambda b: np.sum(np.linalg.lstsq(a.real, b, rcond=None)[1]))(
            b.real).dtype == np.float64


def test_a_cutoff_that_drops_singular_values_that_are_not_zero_refuses_the_derivative():
    # pinv(a, rcond) then drops a singular value the matrix has: NumPy's function is the
    # inverse of the best rank-r approximation, whose derivative couples the kept and the
    # dropped singular vectors; Golub-Pereyra's formula (JAX's and PyTorch's too) is exact
    # only where the dropped ones are zero, so it would be silently wrong here
    a = np.diag([3.5, 2.4, 1.9]) + RNG.normal(size=(3, 3)) * 0.1
    s = np.linalg.svd(a, compute_uv=False)
    rcond = (s[1] / s[0] + 1.0) / 2.0  # drops the two smaller ones

    def f(a):
        return np.sum(np.linalg.pinv(a, rcond) * np.arange(9.0).reshape(3, 3))

    with pytest.raises(ValueError, match="drops singular values that are not zero"):
        wg.grad(f)(a)
    with pytest.raises(ValueError, match="drops singular values that are not zero"):
        wg.jvp(f, (a,), (np.ones((3, 3)),))
    with pytest.raises(ValueError, match="drops singular values that are not zero"):
        wg.grad(lambda a: np.sum(np.linalg.lstsq(a, np.ones(3), rcond=rcond)[0]))(a)
    with pytest.raises(ValueError, match="drops singular values that are not zero"):
        wg.grad(lambda a: np.sum(np.linalg.pinv(a, rtol=rcond)))(a)
    # the values are NumPy's, and a cutoff that drops nothing or only zeros differentiates
    np.testing.assert_allclose(np.linalg.pinv(wg.tensor(a), rcond).numpy(),
                               np.linalg.pinv(a, rcond))
    assert check_grads(lambda a: np.linalg.pinv(a, 0.3), (a,), order=2, modes=("rev", "fwd"))
    rank_one = np.outer([1.0, 2.0, 0.5], [0.3, -1.0, 2.0])
    g = wg.grad(lambda a: np.sum(np.linalg.pinv(a, 0.5) * np.arange(9.0).reshape(3, 3)))
    np.testing.assert_allclose(
        g(rank_one),
        wg.grad(lambda a: np.sum(np.linalg.pinv(a) * np.arange(9.0).reshape(3, 3)))(rank_one))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
@pytest.mark.parametrize("shape", [(2, 2), (3, 2), (2, 3)], ids=["square", "tall", "wide"])
def test_lstsq_outputs_have_numpys_types(dtype, shape):
    # NumPy's rank is LAPACK's np.int32 (it was a Python int) and its empty residuals
    # have the result's real precision (float32 for float32 and complex64; it was float64)
    a = (np.arange(np.prod(shape)).reshape(shape) ** 2 + np.eye(*shape) * 3).astype(dtype)
    b = np.ones(shape[0], dtype)
    want = [(type(v), np.result_type(v)) for v in np.linalg.lstsq(a, b)]
    for got in (np.linalg.lstsq(wg.tensor(a, requires_grad=True), b),
                wg.numpy.linalg.lstsq(a, b), wg.compile(lambda a: np.linalg.lstsq(a, b))(a)):
        assert [(type(primal(v)), np.result_type(primal(v))) for v in got] == want
