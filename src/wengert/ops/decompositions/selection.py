"""NumPy's selection and assignment functions, written with ``take`` and item assignment.

* ``choose``, ``compress`` and ``extract`` gather the entries NumPy picks (the indices
  and conditions are plain values: they decide which entries, not how much), so each
  picked entry gets the gradient of its place in the result;
* ``copyto``, ``put``, ``putmask``, ``place``, ``fill_diagonal`` and ``put_along_axis``
  write into a traced array as ``x[index] = values`` does (recorded in place, so the
  gradient flows to the values written and to the entries of ``x`` left alone); where
  NumPy writes one position twice, the last write wins, as in NumPy, and only it gets a
  gradient. They run for a traced target when some argument carries a derivative
  (:mod:`wengert.interop.dispatch` decides; under ``no_grad`` NumPy writes the values);
* ``astype`` with ``np.astype``'s signature (``apply_along_axis``, ``apply_over_axes`` and
  ``full_like`` are in :mod:`wengert.numpy`, with NumPy's other functions that convert
  their arguments).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda c: np.sum(np.choose([1, 0, 1], [c, 2.0 * c])))(np.array([1.0, 2.0, 3.0]))
array([2., 1., 2.])
>>> wg.grad(lambda x: np.sum(np.compress([True, False, True], x) ** 2))(np.ones(3))
array([2., 0., 2.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.ops import broadcast as _bc
from wengert.ops import elementwise as _ew
from wengert.ops import shape as _shape
from wengert.ops.base import Family, apply, dtype_of, is_traced, kind_of, no_out, shape_of
from wengert.ops.base import primal as _raw

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("selection")


def _as_array(x: Any) -> Any:
    return x if is_traced(x) else np.asarray(x)


def _plain(x: Any, what: str, dtype: Any = None) -> np.ndarray:
    """The values of an index or a mask argument (which entries, not how much)."""
    raw = _raw(x)
    if is_traced(raw):
        raise TypeError(f"{what} must be plain values: which entries are picked depends on "
                        "them, so they cannot be traced into a graph (compute them outside "
                        "the traced function, or use np.where)")
    return np.asarray(raw) if dtype is None else np.asarray(raw, dtype=dtype)


def _wrapped_or_clipped(index: np.ndarray, n: int, mode: str) -> np.ndarray:
    """``index`` into ``n`` entries under NumPy's clipmode ``'wrap'`` or ``'clip'`` (the
    callers check ``'raise'``)."""
    if mode == "wrap":
        return index % n
    if mode == "clip":
        return np.clip(index, 0, n - 1)
    raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")


@FAMILY.implements(np.choose)
def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """``choices[a[i]][i]`` for each position ``i`` (all broadcast together), as
    ``np.choose``; ``mode`` ``"raise"``, ``"wrap"`` or ``"clip"``."""
    no_out("choose", out)
    index = _plain(a, "np.choose: the index array")
    if index.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {index.dtype!r} to "
                        "dtype('int64') according to the rule 'safe'")
    items = list(choices) if isinstance(choices, (list, tuple)) else [
        choices[i] for i in range(shape_of(choices)[0])]
    n = len(items)
    if mode == "raise":
        if index.size and (index.min() < 0 or index.max() >= n):
            raise ValueError("invalid entry in choice array")
    else:
        index = _wrapped_or_clipped(index, n, mode)
    shape = np.broadcast_shapes(index.shape, *[shape_of(c) for c in items])
    stacked = _shape.stack([_bc.broadcast_to(_as_array(c), shape) for c in items])
    picked = _shape.take_along_axis(stacked, np.broadcast_to(index, shape)[None], axis=0)
    return _shape.reshape(picked, shape)


def _where_true(condition: Any, what: str) -> Any:
    """The flat indices where ``condition`` holds: plain values, or, for a condition a
    static graph traces, a step of that graph (how many there are is guarded, as for
    ``np.flatnonzero`` there)."""
    raw = _raw(condition)
    if is_traced(raw) and kind_of(raw).opaque:
        return np.flatnonzero(raw)
    return np.flatnonzero(_plain(condition, what))


@FAMILY.implements(np.compress)
def compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Any:
    """The slices of ``a`` along ``axis`` (of the flattened ``a`` by default) where
    ``condition`` holds, as ``np.compress``."""
    no_out("compress", out)
    if len(shape_of(condition) if is_traced(condition) else np.shape(condition)) != 1:
        raise ValueError("condition must be a 1-d array")
    picked = _where_true(condition, "np.compress: the condition")
    a = _as_array(a)
    if axis is None:
        a, axis = _shape.ravel(a), 0
    axis = operator.index(axis) % max(len(shape_of(a)), 1)
    n = shape_of(a)[axis]
    count = shape_of(picked)[0]
    if count and shape_of(condition if is_traced(condition) else np.asarray(condition))[0] > n:
        last = int(picked[-1])  # (a traced condition: its value is guarded)
        if last >= n:
            raise IndexError(f"index {last} is out of bounds for axis {axis} with size {n}")
    return _shape.take(a, picked, axis=axis)


@FAMILY.implements(np.extract)
def extract(condition: Any, arr: Any) -> Any:
    """The entries of ``arr`` where ``condition`` is nonzero, flattened, as ``np.extract``."""
    picked = _where_true(condition, "np.extract: the condition")
    return _shape.take(_shape.ravel(_as_array(arr)), picked)


# -- writing into a traced array -------------------------------------------------------
def _write_flat(target: Any, positions: np.ndarray, values: Any) -> None:
    """``target.flat[positions] = values`` (one value per position): where a position
    repeats, the last write wins (NumPy's order), and only it is written."""
    positions = np.asarray(positions, dtype=np.intp).ravel()
    if positions.size == 0:
        return
    shape = shape_of(target)
    _, last = np.unique(positions[::-1], return_index=True)
    keep = np.sort(positions.size - 1 - last)
    if keep.size != positions.size:
        values = _shape.take(values, keep)
        positions = positions[keep]
    target[np.unravel_index(positions, shape)] = values


def _cycled(values: Any, count: int, what: str) -> Any:
    """The first ``count`` entries of ``values`` repeated as often as needed (flat)."""
    flat = _shape.ravel(_as_array(values))
    n = shape_of(flat)[0]
    if n == 0:
        if count:
            raise ValueError(f"Cannot insert from an empty array! ({what})")
        return flat
    return _shape.take(flat, np.arange(count) % n)


@FAMILY.writes(np.copyto)
def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """``dst[...] = src`` (broadcast) where ``where`` holds, as ``np.copyto``."""
    src = _as_array(src)
    dtype = dtype_of(dst)
    if not np.can_cast(dtype_of(src), dtype, casting):
        raise TypeError(f"Cannot cast array data from {dtype_of(src)!r} to {dtype!r} "
                        f"according to the rule {casting!r}")
    shape = shape_of(dst)
    new = _bc.broadcast_to(src, shape)
    mask = _plain(where, "np.copyto: where=", bool)
    if not mask.all():
        new = _ew.where(np.broadcast_to(mask, shape), new, dst)
    dst[...] = new


@FAMILY.writes(np.put)
def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """``a.flat[ind] = v`` (``v`` repeated to the length of ``ind``), as ``np.put``."""
    index = _plain(ind, "np.put: the indices").astype(np.intp, copy=False).ravel()
    n = int(np.prod(shape_of(a), dtype=np.int64))
    if mode == "raise":
        if index.size and (index.min() < -n or index.max() >= n):
            raise IndexError(f"index {index[(index < -n) | (index >= n)][0]} is out of bounds "
                             f"for axis 0 with size {n}")
        index = index % max(n, 1)
    else:
        index = _wrapped_or_clipped(index, n, mode)
    _write_flat(a, index, _cycled(v, index.size, "np.put"))


@FAMILY.writes(np.putmask)
def putmask(a: Any, mask: Any, values: Any) -> None:
    """``a.flat[i] = values.flat[i % len(values)]`` where ``mask.flat[i]``, as
    ``np.putmask``."""
    m = _plain(mask, "np.putmask: the mask", bool)
    if m.shape != shape_of(a):
        raise ValueError("putmask: mask and data must be the same size")
    positions = np.flatnonzero(m)
    flat = _shape.ravel(_as_array(values))
    nv = shape_of(flat)[0]
    if positions.size and nv == 0:
        return  # NumPy writes nothing from an empty array
    _write_flat(a, positions, _shape.take(flat, positions % max(nv, 1)))


@FAMILY.writes(np.place)
def place(arr: Any, mask: Any, vals: Any) -> None:
    """The entries of ``arr`` where ``mask`` holds take ``vals`` in order (repeated as
    needed), as ``np.place``."""
    m = _plain(mask, "np.place: the mask", bool)
    if m.size != int(np.prod(shape_of(arr), dtype=np.int64)):
        raise ValueError("place: mask and data must be the same size")
    positions = np.flatnonzero(m)
    _write_flat(arr, positions, _cycled(vals, positions.size, "np.place"))


@FAMILY.writes(np.fill_diagonal)
def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """The main diagonal of ``a`` set to ``val`` (repeated as needed), as
    ``np.fill_diagonal``."""
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    size = int(np.prod(shape, dtype=np.int64))
    end = None
    if len(shape) == 2:
        step = shape[1] + 1
        if not wrap:
            end = shape[1] * shape[1]
    else:
        if not np.all(np.diff(shape) == 0):
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
    positions = np.arange(size)[:end:step]
    _write_flat(a, positions, _cycled(val, positions.size, "np.fill_diagonal"))


@FAMILY.writes(np.put_along_axis)
def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """``arr`` at ``indices`` along ``axis`` set to ``values`` (broadcast to the indices),
    as ``np.put_along_axis``."""
    index = _plain(indices, "np.put_along_axis: the indices")
    shape = shape_of(arr)
    if axis is None:
        if index.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        positions = index % max(int(np.prod(shape, dtype=np.int64)), 1)
    else:
        axis = operator.index(axis) % max(len(shape), 1)
        if index.ndim != len(shape):
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        grids = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
                 for d, n in enumerate(shape)]
        grids[axis] = index % shape[axis]
        positions = np.ravel_multi_index(np.broadcast_arrays(*grids), shape)
    vals = _bc.broadcast_to(_as_array(values), positions.shape)
    _write_flat(arr, positions, _shape.ravel(vals))


def add_at(a: Any, indices: Any, b: Any, sign: float = 1.0) -> None:
    """``np.add.at(a, indices, b)`` (``sign=-1``: ``np.subtract.at``): ``b`` added to ``a``
    at ``indices``, a repeated index adding once per occurrence (a scatter-add)."""
    shape = shape_of(a)
    size = int(np.prod(shape, dtype=np.int64))
    index = indices if isinstance(indices, (tuple, slice)) or indices is Ellipsis else \
        _plain(indices, f"np.{'add' if sign > 0 else 'subtract'}.at: the indices")
    positions = np.arange(size).reshape(shape)[index]
    vals = _bc.broadcast_to(_as_array(b), positions.shape)
    added = _shape.reshape(
        apply(_shape.TAKE_ADD, _shape.ravel(vals), positions.ravel(), shape=(size,),
              axis=None), shape)
    a[...] = _ew.add(a, added) if sign > 0 else _ew.subtract(a, added)


FAMILY.route(add_at, np.add.at)
FAMILY.route(lambda a, i, b: add_at(a, i, b, -1.0), np.subtract.at)


# -- dtypes ----------------------------------------------------------------------------
@FAMILY.export
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """``x`` as ``dtype`` (``np.astype``): an integer or boolean result has no gradient."""
    if not isinstance(x, np.generic):  # (a NumPy scalar stays one, as NumPy's)
        x = _as_array(x)
    if not copy and np.dtype(dtype) == dtype_of(x):
        return x
    return _ew.astype(x, dtype)



