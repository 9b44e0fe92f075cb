"""Arrays assembled from pieces or cut into them: ``np.block``, ``np.unstack``,
``np.matrix_transpose`` and ``np.trim_zeros``, written with concatenation, indexing and
axis swaps, so each entry's gradient goes back to the entry it came from.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda x: np.sum(np.block([[x, x[:, :1]], [x[:1] * 3.0, x[:1, :1]]])))(
...     np.ones((2, 2)))
array([[6., 4.],
       [2., 1.]])
"""

from __future__ import annotations

import operator
from typing import Any

from numpy.lib.array_utils import normalize_axis_tuple

import numpy as np
from wengert.ops import shape as _shape
from wengert.ops.base import Family, is_traced, shape_of
from wengert.ops.base import primal as _raw

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("assembly")


def _as_array(x: Any) -> Any:
    return x if is_traced(x) else np.asarray(x)


def _depths(arrays: Any) -> tuple[int, int]:
    """The nesting depth of ``np.block``'s lists (the same everywhere, as NumPy requires)
    and the largest ``ndim`` of the arrays in them."""
    depth = None
    ndim = 0
    todo: list[tuple[Any, int]] = [(arrays, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, tuple):
            raise TypeError("arrays is a tuple. Only lists are supported as arrays")
        if isinstance(item, list):
            if not item:
                raise ValueError("Lists cannot be empty")
            todo.extend((part, level + 1) for part in item)
            continue
        if depth is None:
            depth = level
        elif depth != level:
            raise ValueError(f"List depths are mismatched: one array is nested {depth} "
                             f"deep, another {level}")
        ndim = max(ndim, len(shape_of(item)) if is_traced(item) else np.ndim(item))
    return depth or 0, ndim


@FAMILY.export
def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks, as ``np.block``: the innermost
    lists are joined along the last axis, the next ones along the one before.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> np.block([wg.tensor([1.0, 2.0]), 3.0]).numpy()
    array([1., 2., 3.])
    """
    depth, ndim = _depths(arrays)
    ndim = max(ndim, depth)

    def build(item: Any, level: int) -> Any:
        if isinstance(item, list):
            return _shape.concatenate([build(part, level + 1) for part in item],
                                      axis=level - depth)
        a = _as_array(item)
        shape = shape_of(a)
        return _shape.reshape(a, (1,) * (ndim - len(shape)) + tuple(shape)) \
            if len(shape) < ndim else a

    out = build(arrays, 0)
    return out if depth else _shape.reshape(out, shape_of(out))  # (a copy, as NumPy's)


@FAMILY.export
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as ``np.unstack`` (NumPy 2.1)."""
    x = _as_array(x)
    nd = len(shape_of(x))
    if nd == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension "
                                      f"{nd}")
    moved = _shape.moveaxis(x, axis, 0) if axis % nd else x
    return tuple(moved[i] for i in range(shape_of(x)[axis]))


@FAMILY.export
def matrix_transpose(x: Any, /) -> Any:
    """``x`` with its last two axes swapped, as ``np.matrix_transpose``."""
    x = _as_array(x)
    if len(shape_of(x)) < 2:
        raise ValueError("Input array must be at least 2-dimensional, but it is "
                         f"{len(shape_of(x))}")
    return _shape.swapaxes(x, -1, -2)


@FAMILY.export
def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """``filt`` with its leading (``'f'``) and trailing (``'b'``) zeros cut off along
    ``axis`` (every axis by default: the box around the nonzero entries), as
    ``np.trim_zeros``; the kept entries keep their gradients."""
    filt = _as_array(filt)
    raw = np.asarray(_raw(filt)) if not is_traced(_raw(filt)) else None
    if raw is None:
        raise TypeError("trim_zeros: where the zeros end depends on the values, so it "
                        "cannot be traced into a graph; call it eagerly")
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:  # (NumPy's checks: no silent no-op)
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    nd = raw.ndim
    axes = range(nd) if axis is None else normalize_axis_tuple(axis, nd, argname="axis")
    index = [slice(None)] * nd
    for ax in axes:
        others = tuple(d for d in range(nd) if d != ax)
        nonzero = np.flatnonzero(np.any(raw != 0, axis=others) if others else raw != 0)
        if nonzero.size == 0:
            index[ax] = slice(0, 0)
            continue
        start = int(nonzero[0]) if "f" in trim else 0
        stop = int(nonzero[-1]) + 1 if "b" in trim else raw.shape[ax]
        index[ax] = slice(start, stop)
    return filt[tuple(index)]


@FAMILY.implements(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """Every window of ``window_shape`` slid over ``x`` (along ``axis``), as
    ``np.lib.stride_tricks.sliding_window_view``: a copy here (NumPy's is a read-only view
    of the same memory), gathered by index, so each entry's gradient is the sum over the
    windows it appears in.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: np.sum(np.lib.stride_tricks.sliding_window_view(x, 2)))(
    ...     np.array([1.0, 2.0, 3.0]))
    array([1., 2., 1.])
    """
    if writeable:
        raise ValueError("sliding_window_view: writeable=True is not supported by wengert "
                         "(its windows overlap: a write would reach several of them)")
    x = _as_array(x)
    shape = tuple(shape_of(x))
    positions = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    index = np.lib.stride_tricks.sliding_window_view(positions, window_shape, axis)
    return _shape.take(_shape.ravel(x), np.ascontiguousarray(index))


