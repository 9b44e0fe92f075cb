"""det and slogdet at singular matrices."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def test_slogdet_derivative_at_a_singular_matrix_refuses_with_the_reason():
    # log|det A| has derivative A⁻ᵀ, which does not exist where det A = 0: both modes say so
    # (and point to det), instead of NumPy's bare "inv: Singular matrix".
    f = lambda a: wnp.linalg.slogdet(a)[1]  # noqa: E731
    assert f(SINGULAR) == -np.inf
    with pytest.raises(np.linalg.LinAlgError, match="slogdet.*singular.*det"):
        wg.grad(f)(SINGULAR)
    with pytest.raises(np.linalg.LinAlgError, match="slogdet.*singular.*det"):
        wg.jvp(f, (SINGULAR,), (np.eye(2),))
    # det itself is differentiable there (the adjugate)
    np.testing.assert_allclose(wg.grad(wnp.linalg.det)(SINGULAR), [[4.0, -2.0], [-2.0, 1.0]])
