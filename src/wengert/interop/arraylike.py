"""Operators and ndarray-like methods shared by every kind of traced value.

Each one calls the differentiable wengert function, which finds the kind of
its operands (tensor, dual number, plain NumPy value; see
:mod:`wengert.core.bind`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.bind import kind_of, primal
from wengert.ops import elementwise as _ew
from wengert.ops import floating as _floating
from wengert.ops import indexing as _indexing
from wengert.ops import reduce as _reduce
from wengert.ops import shape as _shape
from wengert.ops.linalg import basic as _linalg

__all__ = ["ArrayMethods", "FlatIter"]


_KIND_NAMES = {"Dual": "dual number", "Traced": "traced value (inside a graph trace)"}


def refuse_shape_set(x: Any, shape: Any) -> None:
    """``x.shape = shape`` on a wengert value: refused, saying what to write instead."""
    raise AttributeError(
        f"cannot set the shape of a {_KIND_NAMES.get(type(x).__name__, 'tensor')} in place "
        f"(NumPy's a.shape = {shape!r} reshapes an array in place; a wengert value keeps "
        f"its shape, as the operations recorded on it need): write x = x.reshape({shape!r}) "
        "(or np.reshape), which is differentiable."
    )


def refuse_dtype_set(x: Any, dtype: Any) -> None:
    """``x.dtype = dtype`` on a wengert value: refused, saying what to write instead."""
    raise AttributeError(
        f"cannot set the dtype of a {_KIND_NAMES.get(type(x).__name__, 'tensor')} in place "
        "(NumPy's a.dtype = ... reinterprets an array's bytes, which has no derivative): "
        f"to convert the values, write x = x.astype({getattr(dtype, '__name__', dtype)!r})."
    )


class ArrayMethods:
    """Mixin: arithmetic operators, indexing and NumPy-style methods."""

    __slots__ = ()
    __array_priority__ = 1000

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def T(self) -> Any:
        return _shape.transpose(self)

    @property
    def mT(self) -> Any:
        return _shape.swapaxes(self, -1, -2)

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a value of one number (0-d) formats as that number, as in
        PyTorch; the string carries no derivative, so this is allowed inside transforms
        and ``%%autodiff`` cells, where ``float(loss)`` is refused. Without a spec,
        ``str``. An array, or a graph tracer's value (not known while it is traced),
        refuses a spec, as NumPy refuses one for an array."""
        if not spec:
            return str(self)
        value = primal(self)
        if kind_of(value) is not None:  # an opaque kind (a graph tracer)
            raise TypeError(f"unsupported format string {spec!r} for a value being traced "
                            "(wg.trace, wg.compile): it has no number yet. Format the "
                            "compiled function's result instead.")
        if np.ndim(value) != 0:
            raise TypeError(f"unsupported format string {spec!r}: a value of shape "
                            f"{np.shape(value)} is not one number. Format one entry "
                            "(f'{y[0]:.3f}'), or the whole value without a spec (f'{y}').")
        return format(np.asarray(value).item(), spec)

    # -- arithmetic -----------------------------------------------------
    def __add__(self, other: Any) -> Any:
        return _ew.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return _ew.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return _ew.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return _ew.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return _ew.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return _ew.multiply(other, self)

    def __truediv__(self, other: Any) -> Any:
        return _ew.divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _ew.divide(other, self)

    def __pow__(self, other: Any) -> Any:
        return _ew.power(self, other)

    def __rpow__(self, other: Any) -> Any:
        return _ew.power(other, self)

    def __mod__(self, other: Any) -> Any:
        return _ew.mod(self, other)

    def __rmod__(self, other: Any) -> Any:
        return _ew.mod(other, self)

    def __floordiv__(self, other: Any) -> Any:
        return _ew.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _ew.floor_divide(other, self)

    def __divmod__(self, other: Any) -> Any:
        return _floating.divmod(self, other)

    def __rdivmod__(self, other: Any) -> Any:
        return _floating.divmod(other, self)

    def __matmul__(self, other: Any) -> Any:
        return _linalg.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _linalg.matmul(other, self)

    # -- bitwise operators: integer ops without a derivative, through NumPy's ufuncs (the
    # routing's table of derivative-free ufuncs); NumPy refuses them on floats ---------
    def __and__(self, other: Any) -> Any:
        return np.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Any:
        return np.bitwise_and(other, self)

    def __or__(self, other: Any) -> Any:
        return np.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Any:
        return np.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Any:
        return np.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Any:
        return np.bitwise_xor(other, self)

    def __lshift__(self, other: Any) -> Any:
        return np.left_shift(self, other)

    def __rlshift__(self, other: Any) -> Any:
        return np.left_shift(other, self)

    def __rshift__(self, other: Any) -> Any:
        return np.right_shift(self, other)

    def __rrshift__(self, other: Any) -> Any:
        return np.right_shift(other, self)

    def __neg__(self) -> Any:
        return _ew.negative(self)

    def __pos__(self) -> Any:
        return _ew.positive(self)  # a new value, as NumPy's (y = +x; y += 1 leaves x)

    def __abs__(self) -> Any:
        return _ew.abs(self)

    def __getitem__(self, index: Any) -> Any:
        kind = kind_of(index)
        if kind is not None and kind.opaque and np.dtype(index.dtype).kind in "iu":
            # integers computed by a graph tracer (x[np.argmax(x)]): a take, so the graph
            # follows the new index instead of freezing the traced one
            return _shape.take(self, index, axis=0)
        return _indexing.getitem(self, index)

    # -- methods mirroring ndarray ----------------------------------------
    def astype(self, dtype: Any, copy: bool = True) -> Any:
        """A new value of ``dtype``; with ``copy=False`` and the same dtype, this value
        itself (as NumPy: an in-place update of the result updates it)."""
        if not copy and np.dtype(dtype) == np.dtype(self.dtype):
            return self
        return _ew.astype(self, dtype)

    def view(self, dtype: Any = None) -> Any:
        """A view of the same data (``x[...]``): in-place updates of either reach the other.
        A view as another dtype (reading the bytes again) is refused."""
        if dtype is not None and np.dtype(dtype) != np.dtype(self.dtype):
            raise TypeError(
                f"{type(self).__name__}.view({np.dtype(dtype)}) would read the bytes of a "
                f"{np.dtype(self.dtype)} array as another type, which has no derivative; use "
                ".astype() to convert the values."
            )
        return _indexing.getitem(self, Ellipsis)

    # The reductions take NumPy's arguments in NumPy's order (x.sum(0, np.float32) is a
    # dtype, x.var(0, None, None, 1) a ddof); out= and the others wengert does not
    # support are refused by the functions.
    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Any:
        return _reduce.sum(self, axis, keepdims, dtype=dtype, out=out, initial=initial,
                           where=where)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, *, where: Any = None) -> Any:
        return _reduce.mean(self, axis, keepdims, dtype=dtype, out=out, where=where)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             initial: Any = None, where: Any = None) -> Any:
        return _reduce.prod(self, axis, keepdims, dtype=dtype, out=out, initial=initial,
                            where=where)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Any:
        return _reduce.max(self, axis, keepdims, out=out, initial=initial, where=where)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Any:
        return _reduce.min(self, axis, keepdims, out=out, initial=initial, where=where)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
            keepdims: bool = False, *, where: Any = None, mean: Any = None) -> Any:
        return _reduce.var(self, axis, ddof, keepdims, dtype=dtype, out=out, where=where,
                           mean=mean)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
            keepdims: bool = False, *, where: Any = None, mean: Any = None) -> Any:
        return _reduce.std(self, axis, ddof, keepdims, dtype=dtype, out=out, where=where,
                           mean=mean)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return _reduce.cumsum(self, axis, dtype, out)

    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> Any:
        """As ``ndarray.reshape``: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``, ``order``
        ``"C"``, ``"F"`` (column-major), ``"A"`` or ``"K"``, ``copy=True`` for a copy."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _shape.reshape(self, shape, order, copy=copy)

    def ravel(self, order: str = "C") -> Any:
        return _shape.ravel(self, order)  # a view only where NumPy's is one

    def flatten(self, order: str = "C") -> Any:
        return _ew.copy(_shape.ravel(self, order))  # always a copy, as NumPy's (never a view)

    @property
    def flat(self) -> FlatIter:
        """The entries in row-major order, as NumPy's ``x.flat``: ``x.flat[i]`` reads a copy,
        ``x.flat[i] = v`` writes into ``x`` (whatever its memory layout)."""
        return FlatIter(self)

    def _is_complex(self) -> bool:
        return np.dtype(getattr(self, "dtype", np.float64)).kind == "c"

    @property
    def real(self) -> Any:
        """The real part (a real value is its own, returned as it is); ``z.real = v``
        (and ``z.real += v``) writes into ``z``, as through NumPy's view."""
        return _ew.real(self) if self._is_complex() else self

    @real.setter
    def real(self, value: Any) -> None:
        self._set_part("real", value)

    @property
    def imag(self) -> Any:
        """The imaginary part; ``z.imag = v`` writes into a complex ``z``. For a real
        value, zeros that refuse a write, as NumPy's read-only array of zeros does."""
        return _ew.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        self._set_part("imag", value)

    def _set_part(self, name: str, value: Any) -> None:
        if not self.shape:
            raise AttributeError(
                f"cannot set {name} of a {type(self).__name__} holding a scalar (immutable, "
                "as NumPy's scalars are): rebind it instead (z = z + ...).")
        if name == "imag" and not self._is_complex():
            raise TypeError("array does not have imaginary part to set")  # (NumPy's words)
        part = getattr(self, name)
        part[...] = value  # (the part is a view: it writes through to this value)

    def conj(self) -> Any:
        """The complex conjugate (a real value is its own, returned as it is)."""
        return _ew.conjugate(self) if self._is_complex() else self

    conjugate = conj

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return _shape.swapaxes(self, axis1, axis2)

    def repeat(self, repeats: Any, axis: Any = None) -> Any:
        return _shape.repeat(self, repeats, axis)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return _shape.diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return _reduce.trace(self, offset, axis1, axis2)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return _reduce.cumprod(self, axis, dtype, out)

    def take(self, indices: Any, axis: Any = None) -> Any:
        return _shape.take(self, indices, axis)

    def round(self, decimals: int = 0) -> Any:
        return _ew.round(self, decimals)

    def __round__(self, ndigits: int | None = None) -> Any:
        return _ew.round(self, ndigits or 0)

    # Integer and boolean results carry no gradient: NumPy computes them on the values.
    def argmax(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.argmax(primal(self), axis=axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.argmin(primal(self), axis=axis, keepdims=keepdims)

    def argsort(self, axis: Any = -1, kind: Any = None) -> Any:
        return np.argsort(primal(self), axis=axis, kind=kind)

    def nonzero(self) -> Any:
        return np.nonzero(primal(self))

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.any(primal(self), axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.all(primal(self), axis=axis, keepdims=keepdims)

    # NumPy's in-place methods: through x[...] = (each kind's write in place, with the
    # gradient NumPy's write would have: none to the values overwritten).
    def sort(self, axis: Any = -1, kind: Any = None, order: Any = None, *,
             stable: Any = None) -> None:
        """Sort in place along ``axis``, as ``ndarray.sort``; the gradient follows the
        permutation (see ``np.sort``)."""
        if axis is None:
            raise TypeError(f"{type(self).__name__}.sort() sorts along one axis in place, "
                             "as ndarray.sort: axis=None is not one; write "
                             "x = np.sort(x, axis=None) for the sorted entries.")
        self[...] = _shape.sort(_ew.copy(self), axis=axis, kind=kind, order=order)

    def fill(self, value: Any) -> None:
        """Write ``value`` into every entry, as ``ndarray.fill`` (cast to the dtype);
        ``value`` receives the gradient of every entry."""
        self[...] = value

    def resize(self, *shape: Any) -> None:
        raise TypeError(f"{type(self).__name__}.resize() changes the array in place, which a "
                        "traced value cannot do; write x = np.resize(x, shape) or "
                        "x.reshape(shape) instead.")

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _shape.transpose(self, axes or None)

    def squeeze(self, axis: Any = None) -> Any:
        return _shape.squeeze(self, axis)

    def dot(self, other: Any) -> Any:
        return _linalg.dot(self, other)

    # The elementwise methods are the public functions themselves: x.exp() is np.exp(x).
    clip = _ew.clip
    exp, log, sin, cos, tanh, sqrt = _ew.exp, _ew.log, _ew.sin, _ew.cos, _ew.tanh, _ew.sqrt
    abs, relu, sigmoid = _ew.abs, _ew.relu, _ew.sigmoid
    clone = copy = _ew.copy


class FlatIter:
    """``x.flat`` of a traced value: reads give copies, writes go into ``x`` in place.

    Parameters
    ----------
    base : traced value
        The tensor or dual number whose entries are read and written in row-major
        order.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> d = wg.Dual(np.zeros((2, 2)), np.zeros((2, 2)))
    >>> d.T.flat[1] = wg.Dual(5.0, 1.0)  # (0, 1) of d.T: d[1, 0]
    >>> d
    Dual([[0., 0.],
          [5., 0.]], [[0., 0.],
          [1., 0.]])
    >>> len(d.flat), d.flat[2].primal
    (4, np.float64(5.0))
    """

    __slots__ = ("base",)

    def __init__(self, base: Any) -> None:
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def __getitem__(self, index: Any) -> Any:
        out = _indexing.getitem(_shape.ravel(self.base), index)
        return _ew.copy(out) if len(out.shape) else out  # NumPy's flat reads copy

    def __setitem__(self, index: Any, value: Any) -> None:
        # The flat positions, as an index of the base: the base is written in place.
        positions = np.arange(self.base.size)[_indexing.raw_index(index)]
        self.base[np.unravel_index(positions, self.base.shape)] = value

    def __iter__(self) -> Any:
        flat = _shape.ravel(self.base)
        for i in range(self.base.size):
            yield flat[i]

    def copy(self) -> Any:
        """The entries as a new 1-d value."""
        return _ew.copy(_shape.ravel(self.base))

    def __repr__(self) -> str:
        return f"<flat iterator of {type(self.base).__name__} {self.base.shape}>"
