"""NumPy 2's array-API functions of ``numpy.linalg`` written with other ops: ``svdvals``,
``matrix_norm``, ``vector_norm``, ``matrix_transpose``, ``trace``, ``diagonal``,
``cross`` and ``outer``.

They differ from their older namesakes only in which axes they read: the last two for
the matrix functions (``np.linalg.trace`` is ``np.trace`` over axes -2 and -1), any
axes, flattened together, for ``vector_norm``; ``cross`` takes only 3-vectors and
``outer`` only 1-d inputs, as NumPy. Each is a composition of primitives, so it
differentiates in both modes and to any order, and compiles.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda x: np.linalg.vector_norm(x, axis=(0, 1)).sum())(np.ones((2, 2, 1)))
array([[[0.5],
        [0.5]],
<BLANKLINE>
       [[0.5],
        [0.5]]])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.ops import shape as _shape
from wengert.ops.base import Family, is_traced, shape_of
from wengert.ops.broadcast import norm_axis
from wengert.ops.decompositions.composite import cross as _cross
from wengert.ops.decompositions.composite import norm
from wengert.ops.linalg.basic import outer as _outer
from wengert.ops.linalg.matrix import as_matrices
from wengert.ops.linalg.svd import svd
from wengert.ops.reduce import trace as _trace

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("array_api_linalg")


def _as_array(x: Any) -> Any:
    return x if is_traced(x) else np.asarray(x)


@FAMILY.export(space="linalg")
def svdvals(x: Any, /) -> Any:
    """The singular values of a matrix (or stack), in descending order, as
    ``np.linalg.svdvals``; differentiated through the SVD's singular values."""
    return svd(as_matrices(x), compute_uv=False)


@FAMILY.export(space="linalg")
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The norm of each matrix over the last two axes, as ``np.linalg.matrix_norm``."""
    return norm(as_matrices(x), ord, axis=(-2, -1), keepdims=keepdims)


@FAMILY.export(space="linalg")
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Any:  # noqa: A002
    """The vector norm over ``axis`` (all axes, flattened together, by default; a tuple
    of axes is one vector each), as ``np.linalg.vector_norm``."""
    x = _as_array(x)
    shape = tuple(shape_of(x))
    if isinstance(axis, (int, np.integer)):
        return norm(x, ord, axis=operator.index(axis), keepdims=keepdims)
    axes = tuple(range(len(shape))) if axis is None else norm_axis(axis, len(shape))
    rest = [k for k in range(len(shape)) if k not in axes]
    moved = _shape.transpose(x, tuple(rest) + axes) if axes != tuple(range(len(shape))) \
        else x
    flat = _shape.reshape(moved, tuple(shape[k] for k in rest) + (-1,))
    out = norm(flat, ord, axis=-1)
    if keepdims:
        out = _shape.reshape(out, tuple(1 if k in axes else n for k, n in enumerate(shape)))
    return out


@FAMILY.export(space="linalg")
def matrix_transpose(x: Any, /) -> Any:
    """Each matrix transposed (the last two axes swapped), as ``np.linalg.matrix_transpose``."""
    return _shape.swapaxes(as_matrices(x), -1, -2)


@FAMILY.export(space="linalg")
def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The trace of each matrix over the last two axes, as ``np.linalg.trace``."""
    return _trace(as_matrices(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@FAMILY.export(space="linalg")
def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonal of each matrix over the last two axes, as ``np.linalg.diagonal``."""
    return _shape.diagonal(as_matrices(x), offset=offset, axis1=-2, axis2=-1)


@FAMILY.export(space="linalg")
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-vectors along ``axis``, as ``np.linalg.cross`` (which,
    unlike ``np.cross``, refuses 2-vectors)."""
    x1, x2 = _as_array(x1), _as_array(x2)
    for x in (x1, x2):
        shape = shape_of(x)
        if not shape or shape[axis] != 3:
            raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, "
                             f"but they are {shape_of(x1)[axis] if shape_of(x1) else 0} and "
                             f"{shape_of(x2)[axis] if shape_of(x2) else 0} dimensional "
                             "instead.")
    return _cross(x1, x2, axis=axis)


@FAMILY.export(space="linalg")
def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors, as ``np.linalg.outer`` (1-d inputs only)."""
    x1, x2 = _as_array(x1), _as_array(x2)
    if len(shape_of(x1)) != 1 or len(shape_of(x2)) != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={len(shape_of(x1))} and x2.ndim={len(shape_of(x2))}.")
    return _outer(x1, x2)


