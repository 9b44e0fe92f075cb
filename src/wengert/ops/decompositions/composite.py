"""NumPy functions written with other ops: their derivatives, in both modes and to any
order, are those of the ops they are made of.

``diff``, ``append``, ``delete``, ``insert``, ``gradient``, ``fabs``, ``nan_to_num``,
``real_if_close``, ``rollaxis``, ``polyval``, ``meshgrid``, ``cross``, ``select``,
``linspace``/``logspace`` (traced endpoints), ``interp`` (in ``x``, ``xp`` and ``fp``),
``convolve``, ``correlate``, ``unwrap``, the ``nan*`` reductions (the order statistics
are in :mod:`wengert.ops.decompositions.order_statistics`), ``cov``, ``corrcoef`` and, in
``numpy.linalg``, ``multi_dot`` and ``matrix_power``. Each keeps NumPy's arguments where
they make sense for a differentiable value and refuses the others with a clear error. The
values agree with NumPy's to rounding (the operations run in another order in a few:
``multi_dot`` multiplies left to right).

Conventions where NumPy's function is not smooth: the ``nan*`` reductions and
``nan_to_num`` give no gradient to the entries they replace; ``select`` and
``nan_to_num`` follow ``np.where``.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda x: np.sum(np.diff(x) ** 2))(np.array([1.0, 2.0, 4.0]))
array([-2., -2.,  4.])
>>> wg.grad(lambda x: np.sum(np.nan_to_num(x) ** 2))(np.array([1.0, np.nan, 3.0]))
array([2., 0., 6.])
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np
from wengert.core.bind import example
from wengert.ops import broadcast as _bc
from wengert.ops import elementwise as _ew
from wengert.ops import reduce as _reduce
from wengert.ops import shape as _shape
from wengert.ops.base import Family, concrete, dtype_of, is_traced, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.linalg import basic as _linalg
from wengert.ops.linalg import svd as _svd

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("composite")


def _ndim(x: Any) -> int:
    return len(shape_of(x))


def _axis(axis: Any, ndim: int, what: str) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return a % ndim


def _slice(x: Any, axis: int, part: slice) -> Any:
    index = [slice(None)] * _ndim(x)
    index[axis] = part
    return x[tuple(index)]


def _as_array(x: Any) -> Any:
    return x if is_traced(x) else np.asarray(x)


@FAMILY.export
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Any:
    """The ``n``-th difference along ``axis`` (``a[1:] - a[:-1]``, ``n`` times)."""
    a = _as_array(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if n == 0:
        return a
    if _ndim(a) == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _axis(axis, _ndim(a), "diff")
    parts = []
    for extra, where in ((prepend, 0), (append, 1)):
        if extra is np._NoValue:
            continue
        extra = _as_array(extra)
        if _ndim(extra) == 0:
            shape = list(shape_of(a))
            shape[axis] = 1
            extra = _bc.broadcast_to(extra, tuple(shape)) if is_traced(extra) \
                else np.broadcast_to(extra, tuple(shape))
        parts.append((where, extra))
    if parts:
        pieces = [e for w, e in parts if w == 0] + [a] + [e for w, e in parts if w == 1]
        a = _shape.concatenate(pieces, axis=axis)
    for _ in range(n):
        later, earlier = _slice(a, axis, slice(1, None)), _slice(a, axis, slice(None, -1))
        # (NumPy's diff of booleans: whether neighbours differ; booleans do not subtract)
        a = later != earlier if dtype_of(a) == np.bool_ else later - earlier
    return a


@FAMILY.export
def append(arr: Any, values: Any, axis: Any = None) -> Any:
    """``values`` after ``arr`` (both flattened when ``axis`` is None)."""
    arr, values = _as_array(arr), _as_array(values)
    if axis is None:
        return _shape.concatenate([_shape.ravel(arr), _shape.ravel(values)])
    return _shape.concatenate([arr, values], axis=axis)


@FAMILY.export
def fabs(x: Any) -> Any:
    """``|x|`` of real values (``np.fabs`` refuses complex ones)."""
    if np.dtype(getattr(x, "dtype", np.result_type(_raw(x)))).kind == "c":
        raise TypeError("ufunc 'fabs' not supported for complex input; use np.abs")
    return _ew.abs(x)


@FAMILY.export
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest values by default); the
    replaced entries get no gradient."""
    x = _as_array(x)
    if shape_of(x) == ():  # as NumPy: a NumPy scalar (also of a 0-d array)
        return _nan_to_num(_shape.reshape(x, (1,)), nan, posinf, neginf)[0]
    out = _nan_to_num(x, nan, posinf, neginf)
    return _ew.copy(out) if out is x and copy else out  # (a new array, as NumPy's)


def _nan_to_num(x: Any, nan: float, posinf: Any, neginf: Any) -> Any:
    dtype = np.dtype(getattr(x, "dtype", np.float64))
    if dtype.kind not in "fc":
        return x
    if dtype.kind == "c":  # as NumPy: the real and imaginary parts, each on its own
        parts = [_nan_to_num(p, nan, posinf, neginf) for p in (_ew.real(x), _ew.imag(x))]
        return parts[0] + parts[1] * 1j
    big = np.finfo(dtype)
    plain = _raw(x)
    out = _ew.where(np.isnan(plain), nan, x)
    out = _ew.where(np.isposinf(plain), big.max if posinf is None else posinf, out)
    return _ew.where(np.isneginf(plain), big.min if neginf is None else neginf, out)


@FAMILY.export
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``np.rollaxis``: axis ``axis`` moved to lie before ``start``."""
    n = _ndim(a)
    axis = _axis(axis, n, "rollaxis")
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise np.exceptions.AxisError(f"rollaxis: start {start} is out of bounds")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return _shape.moveaxis(a, axis, start)


@FAMILY.export
def polyval(p: Any, x: Any) -> Any:
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (Horner)."""
    p = _as_array(p)
    if _ndim(p) != 1:
        raise ValueError("polyval: p must be one-dimensional (a list of coefficients)")
    x = _as_array(x)
    y = _ew.multiply(x, 0.0) if is_traced(x) else np.zeros_like(x, dtype=np.result_type(x, 0.0))
    for k in range(shape_of(p)[0]):
        y = y * x + p[k]
    return y


@FAMILY.export
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    """Coordinate arrays from coordinate vectors (``indexing`` "xy" or "ij")."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    out = []
    for k, x in enumerate(xi):
        shape = [1] * n
        shape[k] = -1
        out.append(_shape.reshape(_shape.ravel(_as_array(x)), tuple(shape)))
    if indexing == "xy" and n > 1:
        out = [_shape.swapaxes(o, 0, 1) for o in out]
    if sparse:
        return tuple(out)
    full = np.broadcast_shapes(*[shape_of(o) for o in out])
    grids = [_bc.broadcast_to(o, full) for o in out]
    return tuple(_ew.copy(g) for g in grids) if copy else tuple(grids)


@FAMILY.export
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Any = None) -> Any:
    """The cross product of 3-vectors along the last axis (as NumPy, of 2-vectors the
    z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _shape.moveaxis(_as_array(a), axisa, -1)
    b = _shape.moveaxis(_as_array(b), axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    a2 = a[..., 2] if na == 3 else 0.0 * a0
    b2 = b[..., 2] if nb == 3 else 0.0 * b0
    out = _shape.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return _shape.moveaxis(out, -1, axisc)


@FAMILY.export
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """The first choice whose condition holds, element by element (else ``default``)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for i, cond in enumerate(condlist):
        if dtype_of(_as_array(cond)) != np.bool_:  # (NumPy's words)
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    # NumPy's dtype: the choices' and the default's, Python numbers weak in it
    dtype = np.result_type(*(_weak(c) for c in [*choicelist, default]))
    out = _as_array(default)
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choicelist))):
        out = _ew.where(cond, choice, out)
    return out if dtype_of(out) == dtype else _ew.astype(out, dtype)


def _at_plain_indices(name: str, arr: Any, obj: Any, axis: Any) -> tuple[Any, Any, int]:
    """``np.delete``'s and ``np.insert``'s arguments read as NumPy reads them: ``arr`` as
    an array (flattened when ``axis`` is None), ``obj`` as plain indices (refused when
    traced: the result's shape depends on them), ``axis`` normalised."""
    arr = _as_array(arr)
    obj = concrete(obj)
    if is_traced(obj):
        raise TypeError(f"{name}: obj must be plain indices (the result's shape depends on it)")
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    return arr, obj, _axis(axis, _ndim(arr), name)


@FAMILY.export
def delete(arr: Any, obj: Any, axis: Any = None) -> Any:
    """``arr`` without the entries ``obj`` (an int, a slice or a list) along ``axis``."""
    arr, obj, axis = _at_plain_indices("delete", arr, obj, axis)
    keep = np.ones(shape_of(arr)[axis], dtype=bool)
    keep[obj] = False
    return _shape.take(arr, np.flatnonzero(keep), axis=axis)


@FAMILY.export
def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    """``values`` inserted before index ``obj`` (an int: one block; a list: one entry
    before each index) along ``axis``."""
    arr, obj, axis = _at_plain_indices("insert", arr, obj, axis)
    n = shape_of(arr)[axis]
    values = _as_array(values)
    if isinstance(obj, slice):
        obj = np.arange(*obj.indices(n))
    if np.ndim(obj) == 0:
        pos = operator.index(obj)
        pos = pos + n if pos < 0 else pos
        if not 0 <= pos <= n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
        block_shape = list(shape_of(arr))
        vshape = shape_of(values)
        block_shape[axis] = vshape[0] if _ndim(arr) == 1 and len(vshape) == 1 else 1
        if _ndim(values) == _ndim(arr) and vshape[axis] != 1:
            block_shape[axis] = vshape[axis]
        block = _bc.broadcast_to(_ew.astype(values, arr.dtype) if hasattr(arr, "dtype")
                                 else values, tuple(block_shape))
        return _shape.concatenate([_slice(arr, axis, slice(0, pos)), block,
                                   _slice(arr, axis, slice(pos, None))], axis=axis)
    positions = np.asarray(obj, dtype=np.intp).ravel()
    positions = np.where(positions < 0, positions + n, positions)
    order = np.argsort(positions, kind="stable")
    k = positions.size
    vals = _bc.broadcast_to(values, (k,)) if _ndim(arr) == 1 else values
    if _ndim(arr) != 1:
        raise NotImplementedError("insert: a list of positions works on 1-d arrays (or "
                                  "axis=None) in wengert")
    vals = _ew.astype(vals, arr.dtype) if hasattr(arr, "dtype") else vals
    pieces, start = [], 0
    for j in order:
        p = int(positions[j])
        pieces.append(_slice(arr, 0, slice(start, p)))
        pieces.append(_shape.reshape(vals[int(j)], (1,)))
        start = p
    pieces.append(_slice(arr, 0, slice(start, None)))
    return _shape.concatenate(pieces, axis=0)


@FAMILY.export
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Central differences inside, one-sided at the edges (uniform spacing, the
    default ``edge_order=1``)."""
    f = _as_array(f)
    if edge_order != 1:
        raise NotImplementedError("gradient: only edge_order=1 (the default) in wengert")
    n = _ndim(f)
    axes = list(range(n)) if axis is None else [
        _axis(a, n, "gradient") for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    def scalar(h: Any) -> Any:  # (a traced spacing stays traced: f' scales with 1/h)
        return h if is_traced(h) else float(h)

    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [scalar(varargs[0])] * len(axes)
    elif len(varargs) == len(axes) and all(np.ndim(v) == 0 for v in varargs):
        spacing = [scalar(v) for v in varargs]
    else:
        raise NotImplementedError("gradient: only scalar spacings are supported by wengert")
    out = []
    for ax, h in zip(axes, spacing):
        if shape_of(f)[ax] < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        first = (_slice(f, ax, slice(1, 2)) - _slice(f, ax, slice(0, 1))) / h
        last = (_slice(f, ax, slice(-1, None)) - _slice(f, ax, slice(-2, -1))) / h
        inner = (_slice(f, ax, slice(2, None)) - _slice(f, ax, slice(None, -2))) / (2.0 * h)
        out.append(_shape.concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else tuple(out)


@FAMILY.export
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (traced endpoints)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    # NumPy computes in result_type(start, stop, float(num)), Python numbers weak in it:
    # float32 endpoints stay float32, also beside a Python float (linspace(0.0, x32))
    computed = np.result_type(_weak(start), _weak(stop), float(num))
    start, stop = (v if dtype_of(v) == computed else _ew.astype(v, computed)
                   for v in (_as_array(start), _as_array(stop)))
    div = num - 1 if endpoint else num
    delta = stop - start
    shape = (num,) + (1,) * max(_ndim(start), _ndim(stop))
    real = np.finfo(computed).dtype
    steps = np.arange(num, dtype=real).reshape(shape)
    if div > 0:
        step = delta / div
        y = steps * step + start
    else:  # no step: NumPy's is a Python NaN
        step = math.nan
        y = steps * delta + start
    if endpoint and num > 1:  # the last value is stop itself, as NumPy makes it
        tail = (1,) + shape_of(y)[1:]
        last = _bc.broadcast_to(_shape.reshape(stop, (1,) + shape_of(stop)), tail)
        y = _shape.concatenate([_slice(y, 0, slice(0, -1)), last], axis=0)
    if axis != 0:
        y = _shape.moveaxis(y, 0, axis)
    if dtype is None and dtype_of(y) != computed:
        dtype = computed
    if dtype is not None:
        y = _ew.astype(y, dtype)
    if retstep and type(step) is not float and dtype_of(step) != computed:
        step = _ew.astype(step, computed)
    return (y, step) if retstep else y


def _weak(v: Any) -> Any:
    """``v`` for ``np.result_type`` as NumPy's array functions see it: a Python number
    (also beneath a traced value) is weak, an array or NumPy scalar by its dtype."""
    if type(example(v)) in (int, float, complex, bool):
        return example(v)
    v = _raw(v)
    dt = getattr(v, "dtype", None)
    return dt if isinstance(dt, np.dtype) else np.asarray(v).dtype


@FAMILY.export
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``."""
    y = _ew.power(base, linspace(start, stop, num, endpoint, axis=axis))
    return y if dtype is None else _ew.astype(y, dtype)


@FAMILY.implements(np.geomspace)
def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """``num`` values from ``start`` to ``stop`` spaced evenly on a log scale, as NumPy
    computes them (rotated to the positive reals by the sign of ``start``, the endpoints
    exact): differentiable in ``start`` and ``stop``."""
    start = _ew.multiply(_as_array(start), 1.0)
    stop = _ew.multiply(_as_array(stop), 1.0)
    if np.any(_raw(start) == 0) or np.any(_raw(stop) == 0):
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(_ew.dtype_of(start), _ew.dtype_of(stop), float(num),
                        np.zeros((), dtype))
    # (as NumPy, the computation runs in the inexact type dt, cast to dtype at the end;
    # a complex number's sign is z / |z|, differentiable)
    dtype = dt if dtype is None else np.dtype(dtype)
    sign = _ew.divide(start, _ew.abs(start)) if dt.kind == "c" else np.sign(_raw(start))
    start = _ew.divide(start, sign)
    stop = _ew.divide(stop, sign)
    result = logspace(_ew.log10(start), _ew.log10(stop), num, endpoint, 10.0, dt)
    if num > 0:  # the endpoints are start and stop themselves, as NumPy makes them
        shape = shape_of(result)
        pieces = [_bc.broadcast_to(_shape.reshape(start, (1,) + shape_of(start)),
                                   (1,) + shape[1:])]
        if num > 1 and endpoint:
            pieces.append(_slice(result, 0, slice(1, -1)))
            pieces.append(_bc.broadcast_to(_shape.reshape(stop, (1,) + shape_of(stop)),
                                           (1,) + shape[1:]))
        else:
            pieces.append(_slice(result, 0, slice(1, None)))
        result = _shape.concatenate([_ew.astype(q, dt) if _ew.dtype_of(q) != dt else q
                                     for q in pieces], axis=0)
    result = _ew.multiply(sign, result)
    if axis != 0:
        result = _shape.moveaxis(result, 0, axis)
    return _ew.astype(result, dtype) if _ew.dtype_of(result) != dtype else result


@FAMILY.export
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (differentiable in all
    three; ``xp`` increasing)."""
    if period is not None:
        raise NotImplementedError("interp: period= is not supported by wengert")
    # NumPy interpolates in float64 (complex128 for complex values), whatever the inputs
    x, xp, fp = (v if dtype_of(v) == dt else _ew.astype(v, dt) for v, dt in (
        (_as_array(x), np.float64), (_as_array(xp), np.float64),
        (_as_array(fp), np.complex128 if dtype_of(_as_array(fp)).kind == "c"
         else np.float64)))
    m = shape_of(xp)[0]
    if m == 0:
        raise ValueError("array of sample points is empty")
    if m == 1:
        out = _ew.multiply(x, 0.0) + fp[0]
        return out[()] if shape_of(out) == () else out
    idx = np.searchsorted(_raw(xp), _raw(x), side="right")
    idx = np.clip(idx, 1, m - 1)
    x0, x1 = _shape.take(xp, idx - 1), _shape.take(xp, idx)
    y0, y1 = _shape.take(fp, idx - 1), _shape.take(fp, idx)
    y = y0 + (x - x0) * ((y1 - y0) / (x1 - x0))
    y = _ew.where(np.less(_raw(x), _raw(xp[0])), fp[0] if left is None else left, y)
    out = _ew.where(np.greater(_raw(x), _raw(xp[m - 1])), fp[m - 1] if right is None
                    else right, y)
    return out[()] if shape_of(out) == () else out  # (a NumPy scalar, as NumPy gives)


def _full_convolution(a: Any, v: Any) -> Any:
    n, m = shape_of(a)[0], shape_of(v)[0]
    k = np.arange(n + m - 1)[None, :] - np.arange(n)[:, None]  # v's index at (i, out k)
    inside = (k >= 0) & (k < m)
    band = _shape.take(v, np.where(inside, k, 0)) * inside
    return _linalg.matmul(a, band)


@FAMILY.export
def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """The discrete linear convolution of two 1-d sequences (modes full, same, valid)."""
    a, v = _as_array(a), _as_array(v)
    # (NumPy reads a number as a sequence of one: ndmin=1)
    a = _shape.reshape(a, (1,)) if _ndim(a) == 0 else a
    v = _shape.reshape(v, (1,)) if _ndim(v) == 0 else v
    if _ndim(a) != 1 or _ndim(v) != 1:
        raise ValueError("object too deep for desired array")
    n, m = shape_of(a)[0], shape_of(v)[0]
    if n == 0 or m == 0:
        raise ValueError("a cannot be empty" if n == 0 else "v cannot be empty")
    full = _full_convolution(a, v)
    if mode == "full":
        return full
    long, short = max(n, m), min(n, m)
    if mode == "same":
        start = (short - 1) // 2
        return full[start:start + long]
    if mode == "valid":
        return full[short - 1:long]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


@FAMILY.export
def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """The cross-correlation of two 1-d sequences, ``Σ_n a[n + k]·conj(v[n])`` (``convolve``
    of ``conj(v)`` reversed, as NumPy's)."""
    v = _as_array(v)
    if _ndim(_as_array(a)) == 0 or _ndim(v) == 0:  # (NumPy's: no ndmin here)
        raise ValueError("object of too small depth for desired array")
    if np.dtype(getattr(v, "dtype", np.float64)).kind == "c":
        v = _ew.conj(v)
    return convolve(a, v[::-1], mode)


@FAMILY.export
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * np.pi) -> Any:
    """Phases with jumps larger than ``discont`` corrected by multiples of ``period``
    (the corrections are constant pieces: the gradient is the identity)."""
    p = _as_array(p)
    axis = _axis(axis, _ndim(p), "unwrap")
    if discont is None:
        discont = period / 2
    high = period / 2
    dd = diff(p, axis=axis)
    # NumPy's dtype: result_type(diff, period), a Python period weak (float32 stays)
    dtype = np.result_type(dtype_of(dd), _weak(period))
    ddmod = _ew.remainder(dd + high, period) - high
    ddmod = _ew.where(np.equal(_raw(ddmod), -high) & np.greater(_raw(dd), 0), high, ddmod)
    correct = _ew.where(np.less(_ew.abs(_raw(dd)), discont), 0.0, ddmod - dd)
    shape = list(shape_of(p))
    shape[axis] = 1
    zero = np.zeros(tuple(shape), dtype)
    out = p + _shape.concatenate([zero, _reduce.cumsum(correct, axis=axis)], axis=axis)
    return out if dtype_of(out) == dtype else _ew.astype(out, dtype)


@FAMILY.export
def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part of ``a`` when every imaginary part is within ``tol`` machine epsilons
    of 0 (``tol`` itself when it is below 1), else ``a`` (``np.real_if_close``); the
    choice is made on the values, the gradient flows through the part kept."""
    dtype = np.dtype(getattr(a, "dtype", np.result_type(_raw(a))))
    if dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(dtype).eps * tol
    if np.all(np.abs(np.imag(_raw(a))) < tol):
        return _ew.real(a)
    return a


@FAMILY.export
def dsplit(a: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along the third axis (arrays of 3 or more dimensions)."""
    if _ndim(a) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _shape.split(a, indices_or_sections, axis=2)


@FAMILY.export
def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """``funclist[i]`` where ``condlist[i]`` holds (the last one holds), as ``np.where``
    chains: each function sees the whole ``x`` (NumPy's sees only its entries), so it
    must be defined everywhere, and a NaN it makes where its condition does not hold
    shows in the gradient (0·NaN), as with ``np.where``."""
    x = _as_array(x)
    if is_traced(condlist) or (isinstance(condlist, np.ndarray) and condlist.dtype == bool
                               and condlist.shape == tuple(shape_of(x))):
        condlist = [condlist]
    conds = list(condlist)
    funcs = list(funclist)
    if len(funcs) not in (len(conds), len(conds) + 1):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    if len(funcs) == len(conds) + 1:  # the otherwise function
        rest = [np.logical_not(np.any(np.stack([_raw(c) for c in conds]), axis=0))] \
            if conds else [np.ones(shape_of(x), dtype=bool)]
        conds = conds + rest
    out = _ew.multiply(x, 0.0)
    for cond, func in zip(conds, funcs):
        value = func(x, *args, **kw) if callable(func) else func
        out = _ew.where(cond, value, out)
    return out


def array(obj: Any, dtype: Any = None) -> Any:
    """An array built from (nested lists or tuples of) values that may carry gradients:
    ``np.stack`` level by level (``np.array`` of tensors refuses, since it would drop
    their gradients).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> m = array([[x, 1.0], [0.0, x * x]])
    >>> m.shape
    (2, 2)
    """
    def has_traced(o: Any) -> bool:
        todo = [o]
        while todo:
            item = todo.pop()
            if is_traced(item):
                return True
            if isinstance(item, (list, tuple)):
                todo.extend(item)
        return False

    if not has_traced(obj):
        return np.array(obj, dtype=dtype)
    if is_traced(obj):  # np.array(x) of one traced value: a copy
        return _ew.copy(obj) if dtype is None else _ew.astype(obj, dtype)
    # Build bottom-up without recursion: each list becomes a stack of its items.
    order: list[Any] = []
    todo = [obj]
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple)):
            order.append(item)
            todo.extend(item)
    built: dict[int, Any] = {}
    for item in reversed(order):
        parts = [built.get(id(p), p) if isinstance(p, (list, tuple)) else p for p in item]
        parts = [p if is_traced(p) else np.asarray(p) for p in parts]
        built[id(item)] = _shape.stack(parts)
    out = built[id(obj)]
    return out if dtype is None else _ew.astype(out, dtype)


# -- reductions that skip NaN ----------------------------------------------------------
# As NumPy's: an integer or boolean array has no NaN, so each is its plain reduction (the
# same dtype); a float array keeps its dtype (float32 in, float32 out).
def _filled(a: Any, fill: float) -> Any:
    a = _as_array(a)
    return _ew.where(np.isnan(_raw(a)), fill, a)


def _exact(a: Any) -> bool:
    """Whether ``a`` holds no NaN by its dtype (integers, booleans)."""
    return _ew.dtype_of(a).kind not in "fc"


def _counted(count: Any, a: Any) -> Any:
    """A count of entries in ``a``'s real floating dtype (so dividing by it keeps that)."""
    dtype = _ew.dtype_of(a)
    real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    return _ew.astype(count, real) if real.kind == "f" else count


@FAMILY.export
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False) -> Any:
    """Sum treating NaN as zero."""
    a = _as_array(a)
    if _exact(a):
        return _reduce.sum(a, axis=axis, keepdims=keepdims, dtype=dtype, out=out)
    return _reduce.sum(_filled(a, 0.0), axis=axis, keepdims=keepdims, dtype=dtype, out=out)


@FAMILY.export
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """Product treating NaN as one."""
    a = _as_array(a)
    return _reduce.prod(a if _exact(a) else _filled(a, 1.0), axis=axis, keepdims=keepdims,
                        dtype=dtype, out=out)


@FAMILY.export
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """Mean of the entries that are not NaN."""
    a = _as_array(a)
    if _exact(a):
        return _reduce.mean(a, axis=axis, keepdims=keepdims, dtype=dtype, out=out)
    count = np.sum(~np.isnan(_raw(a)), axis=axis, keepdims=keepdims)
    _warn_empty(count, "Mean of empty slice")
    with np.errstate(divide="ignore", invalid="ignore"):  # (NumPy's warning just above)
        total = nansum(a, axis=axis, keepdims=keepdims, dtype=dtype, out=out)
        return _in(dtype, total / _counted(count, total))


def _warn_empty(count: Any, message: str) -> None:
    """NumPy's warning where a slice has no entries left (``count <= 0``), for plain
    values (a traced count is not branched on: compiled code does not warn here)."""
    if not is_traced(count) and np.any(np.asarray(count) <= 0):
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def _nan_extreme(a: Any, axis: Any, keepdims: bool, largest: bool) -> Any:
    a = _as_array(a)
    reduce = _reduce.max if largest else _reduce.min
    if _exact(a):
        return reduce(a, axis=axis, keepdims=keepdims)
    nan = np.isnan(_raw(a))
    out = reduce(_ew.where(nan, -np.inf if largest else np.inf, a), axis=axis,
                 keepdims=keepdims)
    empty = np.all(nan, axis=axis, keepdims=keepdims)  # (a traced mask when a is traced)
    if not is_traced(empty) and not np.any(empty):
        return out
    if not is_traced(empty):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    out = _ew.where(empty, np.nan, out)  # as NumPy: NaN where every entry is NaN
    return out[()] if shape_of(out) == () else out  # (a NumPy scalar, as reductions give)


@FAMILY.export
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Maximum of the entries that are not NaN (NaN, with NumPy's warning, where all are)."""
    return _nan_extreme(a, axis, keepdims, True)


@FAMILY.export
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Minimum of the entries that are not NaN (NaN, with NumPy's warning, where all are)."""
    return _nan_extreme(a, axis, keepdims, False)


@FAMILY.export
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False) -> Any:
    """Variance of the entries that are not NaN (``|a − mean|²`` for complex values)."""
    a = _as_array(a)
    if _exact(a):
        return _reduce.var(a, axis=axis, ddof=ddof, keepdims=keepdims, dtype=dtype, out=out)
    nan = np.isnan(_raw(a))
    count = np.sum(~nan, axis=axis, keepdims=keepdims)
    _warn_empty(count - ddof, "Degrees of freedom <= 0 for slice.")
    with np.errstate(divide="ignore", invalid="ignore"):  # as NumPy: NaN where none is left
        # (with dtype=, NumPy sums in that dtype and takes the deviations in a's)
        total = nansum(a, axis=axis, keepdims=True, dtype=dtype, out=out)
        mean = total / _counted(np.sum(~nan, axis=axis, keepdims=True), total)
        d = _in(_ew.dtype_of(a), _ew.where(nan, 0.0, a - mean))
        square = _ew.real(d * _ew.conjugate(d)) if np.iscomplexobj(_raw(a)) else d * d
        total = _reduce.sum(square, axis=axis, keepdims=keepdims, dtype=dtype)
        return _in(dtype, total / _counted(np.maximum(count - ddof, 0), total))


def _in(dtype: Any, x: Any) -> Any:
    """``x`` as ``dtype`` (as it is when ``dtype`` is None or already its dtype)."""
    return x if dtype is None or _ew.dtype_of(x) == np.dtype(dtype) else _ew.astype(x, dtype)


@FAMILY.export
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False) -> Any:
    """Standard deviation of the entries that are not NaN."""
    return _ew.sqrt(nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


@FAMILY.export
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaN as zero."""
    a = _as_array(a)
    return _reduce.cumsum(a if _exact(a) else _filled(a, 0.0), axis=axis, dtype=dtype,
                          out=out)


@FAMILY.export
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaN as one."""
    a = _as_array(a)
    return _reduce.cumprod(a if _exact(a) else _filled(a, 1.0), axis=axis, dtype=dtype,
                           out=out)


@FAMILY.export
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive entries of the flattened array, with ``to_begin`` and
    ``to_end`` (flattened) around them, as ``np.ediff1d``."""
    flat = _shape.ravel(_as_array(ary))
    dtype = dtype_of(flat)
    # NumPy subtracts (booleans refuse) into an array of ary's dtype, which to_begin and
    # to_end must reach by the same_kind rule
    pieces = [_slice(flat, 0, slice(1, None)) - _slice(flat, 0, slice(None, -1))]
    for name, extra, at in (("to_begin", to_begin, 0), ("to_end", to_end, len(pieces) + 1)):
        if extra is None:
            continue
        extra = _shape.ravel(_as_array(extra))
        if not np.can_cast(dtype_of(extra), dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under "
                            "the `same_kind` rule.")
        pieces.insert(at, extra if dtype_of(extra) == dtype else _ew.astype(extra, dtype))
    return _shape.concatenate(pieces) if len(pieces) > 1 else pieces[0]


@FAMILY.export
def vander(x: Any, N: Any = None, increasing: bool = False) -> Any:  # noqa: N803 (NumPy's)
    """The Vandermonde matrix of a vector: columns ``x**(N-1) ... x**0`` (reversed when
    ``increasing``), as ``np.vander``."""
    x = _as_array(x)
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0] if N is None else operator.index(N)
    # NumPy's: in promote_types(x.dtype, int) (float32 and float16 give float64), the
    # powers by repeated multiplication (multiply.accumulate), x ** 0 ones
    dtype = np.promote_types(dtype_of(x), np.int_)
    if dtype_of(x) != dtype:
        x = _ew.astype(x, dtype)
    columns: list[Any] = [np.ones(shape_of(x)[0], dtype)][:n]
    for _ in range(1, n):
        columns.append(x if len(columns) == 1 else columns[-1] * x)
    if not increasing:
        columns.reverse()
    return _shape.stack(columns, axis=1) if columns else \
        np.zeros((shape_of(x)[0], 0), dtype=dtype)


@FAMILY.export
def resize(a: Any, new_shape: Any) -> Any:
    """``a``'s entries, flattened and repeated cyclically, in ``new_shape``, as
    ``np.resize`` (zeros where ``a`` is empty); each entry's gradient sums over its copies."""
    a = _as_array(a)
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else tuple(
        operator.index(n) for n in new_shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size = int(np.prod(shape, dtype=np.int64))
    flat = _shape.ravel(a)
    if shape_of(flat)[0] == 0:
        return np.zeros(shape, dtype=_ew.dtype_of(a))
    return _shape.reshape(_shape.take(flat, np.arange(size) % shape_of(flat)[0]), shape)


@FAMILY.export
def sort_complex(a: Any) -> Any:
    """``a`` sorted along its last axis (real part first, then imaginary) and made complex,
    as ``np.sort_complex``: the gradient follows the sort."""
    a = _as_array(a)
    dtype = _ew.dtype_of(a)
    if dtype.kind != "c":
        dtype = np.dtype("F" if dtype.char in "bhBH" else "G" if dtype.char == "g" else "D")
    return _ew.astype(_shape.sort(a, axis=-1), dtype)


# -- covariance -------------------------------------------------------------------------
@FAMILY.export
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """The covariance matrix of the rows (variables) of ``m`` (and ``y``), as NumPy
    computes it: with frequency weights ``fweights`` (integers: no gradient, as an
    integer cast) and observation weights ``aweights`` (differentiable)."""
    x = _as_array(m)
    if dtype is None:  # as NumPy: at least float64 (float32 data gives a float64 matrix)
        dtype = np.result_type(_raw(x), np.float64) if y is None else \
            np.result_type(_raw(x), _raw(y), np.float64)
    if dtype != x.dtype:
        x = _ew.astype(x, dtype)
    if _ndim(x) > 2:
        raise ValueError("m has more than 2 dimensions")
    x = _shape.reshape(x, (1, -1)) if _ndim(x) < 2 else x
    if not rowvar and shape_of(x)[0] != 1:
        x = _shape.transpose(x)
    if y is not None:
        yy = _as_array(y)
        yy = _shape.reshape(yy, (1, -1)) if _ndim(yy) < 2 else yy
        if not rowvar and shape_of(yy)[0] != 1:
            yy = _shape.transpose(yy)
        x = _shape.concatenate([x, yy], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(x)[1]
    w = _cov_weights(fweights, aweights, n)
    if w is None:
        centred = x - _reduce.mean(x, axis=1, keepdims=True)
        fact: Any = float(n - ddof)
        weighted = centred
    else:
        w_sum = _reduce.sum(w)
        centred = x - _reduce.sum(x * w, axis=1, keepdims=True) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * _reduce.sum(w * _as_array(aweights)) / w_sum
        weighted = centred * w
    if np.any(_raw(fact) <= 0):
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    other = _ew.conj(weighted) if _ew.dtype_of(weighted).kind == "c" else weighted  # NumPy's
    c = _linalg.matmul(centred, _shape.transpose(other)) / fact
    return _shape.squeeze(c) if shape_of(c) == (1, 1) else c


def _cov_weights(fweights: Any, aweights: Any, n: int) -> Any:
    """The weights of ``cov``'s observations (checked as NumPy checks them), or ``None``."""
    w = None
    if fweights is not None:
        f = np.asarray(_raw(fweights), dtype=float)  # integer counts: no derivative
        if not np.all(f == np.around(f)):
            raise TypeError("fweights must be integer")
        if f.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if f.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if np.any(f < 0):
            raise ValueError("fweights cannot be negative")
        w = f
    if aweights is not None:
        a = _as_array(aweights)
        if _ndim(a) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if shape_of(a)[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if np.any(np.asarray(_raw(a)) < 0):
            raise ValueError("aweights cannot be negative")
        a = _ew.astype(a, np.float64) if _ew.dtype_of(a).kind not in "fc" else a
        w = a if w is None else _ew.multiply(w, a)
    return w


@FAMILY.export
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients (``cov`` scaled by the standard deviations)."""
    c = cov(x, y, rowvar)
    if _ndim(c) == 0:
        return c / c
    d = _ew.sqrt(_ew.real(_shape.diagonal(c)))  # (real: the variances, as NumPy)
    return c / _linalg.outer(d, d)


# -- numpy.linalg ---------------------------------------------------------------------------
@FAMILY.export(space=("numpy", "linalg"))
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector or matrix norm, as ``numpy.linalg.norm``; the matrix norms made of singular
    values (``ord`` 2, -2, ``'nuc'``) through the SVD, the others as
    :func:`wengert.ops.reduce.norm`."""
    x = _as_array(x)
    nd = _ndim(x)
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        axes = (_axis(axis[0], nd, "norm"), _axis(axis[1], nd, "norm"))
    elif axis is None and nd == 2 and ord is not None:
        axes = (0, 1)
    else:
        axes = None
    if axes is None or isinstance(ord, str) and ord != "nuc" or \
            not isinstance(ord, str) and ord not in (2, -2):
        return _reduce.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    if axes[0] == axes[1]:
        raise ValueError("Duplicate axes given.")
    s = _svd.svd(_shape.moveaxis(x, axes, (-2, -1)), compute_uv=False)
    # max and min rather than the first and last (sorted) values: a repeated largest or
    # smallest singular value splits the gradient between its copies, as max/min ties do.
    out = _reduce.sum(s, axis=-1) if ord == "nuc" else _reduce.max(s, axis=-1) if ord == 2 \
        else _reduce.min(s, axis=-1)
    if keepdims:
        for a in sorted(axes):
            out = _shape.expand_dims(out, a)
    return out


@FAMILY.export(space="linalg")
def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """``A @ B @ C ...`` (multiplied left to right; a 1-d first or last array as NumPy)."""
    arrays = [_as_array(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = arrays[0]
    for a in arrays[1:]:
        result = _linalg.matmul(result, a)
    return result


@FAMILY.export(space="linalg")
def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` seen as a matrix of its first ``ind`` axes by the rest."""
    a = _as_array(a)
    shape = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    rows = int(np.prod(shape[:ind]))
    inverse = _linalg.inv(_shape.reshape(a, (rows, -1)))
    return _shape.reshape(inverse, shape[ind:] + shape[:ind])


@FAMILY.export(space="linalg")
def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """``x`` with ``tensordot(a, x, x.ndim) == b`` (``a``'s trailing axes, as many as
    ``x`` has, against ``x``)."""
    a, b = _as_array(a), _as_array(b)
    if axes is not None:
        moved = [ax for ax in range(_ndim(a)) if ax not in [x % _ndim(a) for x in axes]]
        a = _shape.transpose(a, tuple(moved) + tuple(x % _ndim(a) for x in axes))
    shape = shape_of(a)
    nb = _ndim(b)
    x_shape = shape[nb:]
    rows = int(np.prod(shape[:nb]))
    x = _linalg.solve(_shape.reshape(a, (rows, -1)), _shape.reshape(b, (rows,)))
    return _shape.reshape(x, x_shape)


@FAMILY.export(space="linalg")
def matrix_power(a: Any, n: int) -> Any:
    """``a`` multiplied by itself ``n`` times (the inverse's powers for ``n < 0``)."""
    n = operator.index(n)
    a = _as_array(a)
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:  # the identity, whatever a holds (no gradient: it does not depend on a)
        return np.broadcast_to(np.eye(shape[-1], dtype=np.dtype(getattr(a, "dtype", float))),
                               shape).copy()
    if n < 0:
        a = _linalg.inv(a)
        n = -n
    result = None
    power = a
    while n:  # square and multiply
        if n & 1:
            result = power if result is None else _linalg.matmul(result, power)
        n >>= 1
        if n:
            power = _linalg.matmul(power, power)
    return result


#: Names exported by ``wengert.numpy``.
@FAMILY.export
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, as ``np.trapezoid``:
    ``Σ Δx·(yₖ + yₖ₊₁)/2``, differentiable in ``y``, ``x`` and ``dx``.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.grad(lambda y: np.trapezoid(y, dx=0.5))(np.ones(4))
    array([0.25, 0.5 , 0.5 , 0.25])
    """
    y = _as_array(y)
    nd = len(shape_of(y))
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension "
                                      f"{nd}")
    if x is None:
        d = dx
    else:
        x = _as_array(x)
        if len(shape_of(x)) == 1:
            d = diff(x)
            shape = [1] * nd
            shape[axis] = shape_of(d)[0]
            d = _shape.reshape(d, tuple(shape))
        else:
            d = diff(x, axis=axis)
    upper = [slice(None)] * nd
    lower = [slice(None)] * nd
    upper[axis], lower[axis] = slice(1, None), slice(None, -1)
    return _reduce.sum(d * (y[tuple(upper)] + y[tuple(lower)]) / 2.0, axis=axis)


