"""NumPy 2's array-API ``numpy.linalg`` functions on wengert values: NumPy's values and
shapes, gradients to second order in both modes, compiled, and NumPy's refusals."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.testing import check_grads

RNG = np.random.default_rng(1)
A = RNG.normal(size=(2, 3, 3))
V = RNG.normal(size=(4, 3))

CASES = {
    "svdvals": (lambda a: np.linalg.svdvals(a), A),
    "matrix_norm": (lambda a: np.linalg.matrix_norm(a), A),
    "matrix_norm_nuc_keepdims": (lambda a: np.linalg.matrix_norm(a, ord="nuc", keepdims=True),
                                 A),
    "matrix_norm_1": (lambda a: np.linalg.matrix_norm(a, ord=1), A),
    "vector_norm": (lambda a: np.linalg.vector_norm(a), A),
    "vector_norm_axes_keepdims": (
        lambda a: np.linalg.vector_norm(a, axis=(0, 2), keepdims=True, ord=3), A),
    "vector_norm_axis": (lambda a: np.linalg.vector_norm(a, axis=-1, ord=1), A),
    "vector_norm_negative_axes": (lambda a: np.linalg.vector_norm(a, axis=(-1, 0)), A),
    "vector_norm_all_keepdims": (lambda a: np.linalg.vector_norm(a, keepdims=True), A),
    "matrix_transpose": (lambda a: np.linalg.matrix_transpose(a), A),
    "trace": (lambda a: np.linalg.trace(a, offset=1), A),
    "diagonal": (lambda a: np.linalg.diagonal(a, offset=-1), A),
    "cross": (lambda v: np.linalg.cross(v, v[::-1]), V),
    "outer": (lambda v: np.linalg.outer(v[0], v[1]), V),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_gradients_and_compiled(name):
    f, x = CASES[name]
    want = f(x)
    got = f(wg.tensor(x, requires_grad=True))
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    check_grads(f, (x,), order=2, modes=("rev", "fwd"))
    np.testing.assert_allclose(wg.compile(f)(x), want, rtol=1e-12, atol=1e-12)


def test_the_wengert_numpy_linalg_names_are_numpy_linalg_s():
    x = wg.tensor(V[0], requires_grad=True)
    wnp.linalg.vector_norm(x).backward()
    np.testing.assert_allclose(x.grad, V[0] / np.linalg.norm(V[0]))
    assert wnp.linalg.outer(V[0], V[1]).shape == (3, 3)


@pytest.mark.parametrize("call, message", [
    (lambda t: np.linalg.outer(t, t), "one-dimensional"),
    (lambda t: np.linalg.cross(t[..., :2], t[..., :2]), "3-dimensional vectors"),
    (lambda t: np.linalg.trace(t[0, 0]), "at least two-dimensional"),
    (lambda t: np.linalg.svdvals(t[0, 0]), "at least two-dimensional"),
])
def test_numpy_s_refusals(call, message):
    with pytest.raises(ValueError, match=message):
        call(wg.tensor(A, requires_grad=True))
    with pytest.raises(ValueError):  # NumPy refuses the same call
        call(A)
