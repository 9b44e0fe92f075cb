"""Linear algebra primitives: forward and VJP together."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import tensor as _t
from ..core.op import Op
from .reduce import sum_to
from .shape import swapaxes


def _raw(x: Any) -> Any:
    return x._value if isinstance(x, _t.Tensor) else x


def _matmul_dx(g: Any, ans: Any, x: Any, y: Any) -> Any:
    xv, yv = _raw(x), _raw(y)
    if np.ndim(yv) == 1:
        if np.ndim(xv) == 1:
            return g * y
        return g[..., None] * y  # outer: (..., n) x (m,)
    if np.ndim(xv) == 1:
        # x: (k,), y: (..., k, m), g: (..., m)
        return sum_to(matmul(y, g[..., None])[..., 0], np.shape(xv))
    return sum_to(matmul(g, swapaxes(y, -1, -2)), np.shape(xv))


def _matmul_dy(g: Any, ans: Any, x: Any, y: Any) -> Any:
    xv, yv = _raw(x), _raw(y)
    if np.ndim(xv) == 1:
        if np.ndim(yv) == 1:
            return g * x
        return sum_to(x[:, None] * g[..., None, :], np.shape(yv))
    if np.ndim(yv) == 1:
        # x: (..., n, k), y: (k,), g: (..., n)
        return sum_to(matmul(swapaxes(x, -1, -2), g[..., None])[..., 0], np.shape(yv))
    return sum_to(matmul(swapaxes(x, -1, -2), g), np.shape(yv))


MATMUL = Op("matmul", np.matmul, (_matmul_dx, _matmul_dy), reads=(0, 1),
            formula="d(X@Y) = dX@Y + X@dY; x̄ = ḡ@Yᵀ, ȳ = Xᵀ@ḡ", symbol="@")

OPS = (MATMUL,)


def matmul(x: Any, y: Any) -> Any:
    """Matrix product with NumPy's batching and 1-d rules."""
    return _t.apply(MATMUL, x, y)

PUBLIC = ("matmul",)
UFUNCS = {"matmul": matmul}
NUMPY = {}
