"""``np.linalg.cond`` and ``matrix_rank`` on wengert values
(wengert.ops.decompositions.conditioning): NumPy's values for every ``p``, derivatives to
second order in both modes, stacks, compiled graphs, and singular inputs."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.testing import check_grads

RNG = np.random.default_rng(17)
A = RNG.normal(size=(3, 3)) + 2.0 * np.eye(3)
STACK = RNG.normal(size=(2, 3, 3)) + 2.0 * np.eye(3)
WIDE = RNG.normal(size=(2, 4))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"])
@pytest.mark.parametrize("x", [A, STACK], ids=["matrix", "stack"])
def test_values_and_derivatives(p, x):
    np.testing.assert_allclose(np.linalg.cond(wg.tensor(x), p).numpy(), np.linalg.cond(x, p),
                               rtol=1e-12)
    np.testing.assert_allclose(wnp.linalg.cond(x, p), np.linalg.cond(x, p), rtol=1e-12)
    assert check_grads(lambda x: np.linalg.cond(x, p), (x,), order=2, modes=("rev", "fwd"))


def test_rectangular_through_the_svd_and_compiled():
    np.testing.assert_allclose(np.linalg.cond(wg.tensor(WIDE)).numpy(), np.linalg.cond(WIDE),
                               rtol=1e-12)
    assert check_grads(np.linalg.cond, (WIDE,), order=2, modes=("rev", "fwd"))
    f = lambda x: np.linalg.cond(x, "fro") + np.linalg.cond(x)  # noqa: E731
    np.testing.assert_allclose(wg.compile(f)(STACK * 2.0), f(STACK * 2.0), rtol=1e-12)
    np.testing.assert_allclose(wg.grad(lambda x: np.sum(wg.compile(f)(x)))(STACK),
                               wg.grad(lambda x: np.sum(f(x)))(STACK), rtol=1e-10)


def test_singular_inputs():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with np.errstate(all="ignore"):
        # (s_max / s_min with s_min at rounding level: NumPy's own SVD calls differ there)
        assert np.linalg.cond(wg.tensor(singular)).item() > 1e15
        assert np.isinf(np.linalg.cond(wg.tensor(np.zeros((2, 2)))).item())  # 0/0, as NumPy
    assert np.isinf(wnp.linalg.cond(singular, 1))  # a plain input: NumPy's inf
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        wg.grad(lambda x: np.linalg.cond(x, 1))(singular)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        np.linalg.cond(wg.tensor(WIDE), 1)
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        np.linalg.cond(wg.tensor(np.ones(3)))


def test_matrix_rank_gives_numpys_integer():
    low = np.outer([1.0, 2.0, 3.0], [1.0, 0.5, 2.0])
    t = wg.tensor(low, requires_grad=True)
    r = np.linalg.matrix_rank(t)
    assert r == 1 and not isinstance(r, wg.Tensor)
    assert wnp.linalg.matrix_rank(STACK).tolist() == [3, 3]
    assert wg.grad(lambda x: np.sum(x) * np.linalg.matrix_rank(x))(low).tolist() == \
        np.ones((3, 3)).tolist()
    f = wg.compile(lambda x: np.linalg.matrix_rank(x) * 1.0)
    assert f(low) == 1.0 and f(A) == 3.0
