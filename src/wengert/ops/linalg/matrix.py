"""Small helpers the matrix decompositions share (``eigen``, ``svd``, ``qr``, ``lstsq``,
``conditioning``, ``cholesky``): NumPy's check that an input is a matrix (or a stack),
transposes of stacks, the Hermitian matrix one triangle defines, a vector as a row or a
column, zero tangents and identities in the dtype of a value.

Examples
--------
>>> import numpy as np
>>> w = np.array([1.0, 2.0])
>>> row(w).shape, column(w).shape, mT(np.ones((3, 2, 4))).shape
((1, 2), (2, 1), (3, 4, 2))
>>> hermitian_from_triangle(np.array([[1.0, 9.0], [2.0 + 1j, 3.0]]))
array([[1.+0.j, 2.-1.j],
       [2.+1.j, 3.+0.j]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.ops import elementwise as _ew
from wengert.ops.base import dtype_of, is_traced, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.broadcast import reshape_to
from wengert.ops.shape import swapaxes

__all__ = ["as_matrices", "mT", "hermitian_from_triangle", "row", "column", "zero_tangent",
           "eye_like"]


def as_matrices(a: Any) -> Any:
    """``a`` as an array (a traced value as it is), refused as NumPy's ``linalg`` refuses
    an input of fewer than two dimensions."""
    if not is_traced(a):
        a = np.asarray(a)
    ndim = len(shape_of(a))
    if ndim < 2:
        raise np.linalg.LinAlgError(f"{ndim}-dimensional array given. Array must be at least "
                                    "two-dimensional")
    return a


def mT(x: Any) -> Any:  # noqa: N802 - NumPy's name for the matrix transpose
    """The transpose of the last two axes."""
    return swapaxes(x, -1, -2)


def hermitian_from_triangle(a: Any, lower: bool = True) -> Any:
    """The Hermitian (for a real ``a``: symmetric) matrix, or stack, that one triangle of
    the square ``a`` defines, as LAPACK reads it: the lower (``lower=True``) or upper
    triangle with the diagonal, and its conjugate transpose in the other one. Written
    with wengert's ops, so the unread triangle gets no gradient. (The diagonal is kept
    as it is: LAPACK reads its real part, and so do the primitives that take this
    matrix's Hermitian part.)"""
    n = shape_of(a)[-1]
    read = np.tri(n, dtype=bool) if lower else ~np.tri(n, k=-1, dtype=bool)
    at = mT(a)
    return _ew.where(read, a, _ew.conj(at) if dtype_of(a).kind == "c" else at)


def row(v: Any) -> Any:
    """``v[..., None, :]``: a vector (or stack) as a row that broadcasts down columns."""
    s = shape_of(v)
    return reshape_to(v, s[:-1] + (1, s[-1]))


def column(v: Any) -> Any:
    """``v[..., :, None]``: a vector (or stack) as a column that broadcasts along rows."""
    return reshape_to(v, shape_of(v) + (1,))


def zero_tangent(ans: Any) -> np.ndarray:
    """Zeros of ``ans``'s shape and dtype (the tangent when no input has one)."""
    raw = _raw(ans)
    return np.zeros(np.shape(raw), dtype=np.result_type(raw))


def eye_like(n: int, like: Any) -> np.ndarray:
    """The ``n × n`` identity in the dtype of ``like``."""
    return np.eye(n, dtype=np.result_type(_raw(like)))
