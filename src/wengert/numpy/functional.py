"""NumPy's functions that call a Python function over an array, for values that carry
gradients: ``apply_along_axis``, ``apply_over_axes`` and ``vectorize``.

NumPy's own turn their input, or the function's results, into NumPy arrays, which would
drop the gradients (so they raise on a tensor). These call the function on slices (or
elements) of the traced value and join the results with wengert's ``stack``, so the
gradient reaches every slice, in both modes. They do so also when the input is plain but
the function's results carry a derivative (a function that closes over a tensor). On
plain values they are NumPy's own.

``np.frompyfunc`` makes a NumPy ufunc, which wengert cannot see into: called on a value
that carries a gradient it raises; use :class:`vectorize` instead.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> wg.grad(lambda x: np.sum(wnp.apply_along_axis(lambda r: r[0] * r[1], 1, x)))(
...     np.array([[1.0, 2.0], [3.0, 4.0]]))
array([[2., 1.],
       [4., 3.]])
>>> wg.grad(lambda x: np.sum(wnp.vectorize(lambda a: a * a if a > 0 else -a)(x)))(
...     np.array([-1.0, 2.0]))
array([-1.,  4.])
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from wengert.core.bind import is_traced, shape_of
from wengert.core.subclasses import refuse_subclass
from wengert.numpy.creation import asarray
from wengert.numpy.lists import holds_traced
from wengert.ops import elementwise as _ew
from wengert.ops import shape as _shape
from wengert.ops.broadcast import broadcast_to

__all__ = ["apply_along_axis", "apply_over_axes", "vectorize"]


class _TracedResult(Exception):
    """Raised through NumPy's loop when the function returns a traced value."""


def _traced_in(args: Any, kwargs: dict[str, Any]) -> bool:
    return holds_traced(args) or holds_traced(list(kwargs.values()))


def _probing(func: Any) -> Any:
    """``func``, raising :class:`_TracedResult` where its result carries a traced value
    (NumPy would turn it into an array)."""
    def probe(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        if holds_traced(result):
            raise _TracedResult
        return result
    return probe


def _stacked(results: list[Any]) -> Any:
    for r in results:
        refuse_subclass(r, "a result of the function (joined with values that carry a "
                           "derivative)")
    return _shape.stack([r if is_traced(r) else np.asarray(r) for r in results])


def apply_along_axis(func1d: Any, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.apply_along_axis``: ``func1d`` on every 1-d slice of ``arr`` along ``axis``,
    the results joined as NumPy joins them; the gradient reaches every slice.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = wnp.apply_along_axis(lambda r: r ** 2, 0, x)
    >>> np.sum(y).backward()
    >>> x.grad
    array([[2., 4.],
           [6., 8.]])
    """
    if not _traced_in((arr, args), kwargs):
        try:
            return np.apply_along_axis(_probing(func1d), axis, arr, *args, **kwargs)
        except _TracedResult:
            pass  # func1d's results carry a derivative: joined below
    for a in (arr, *args, *kwargs.values()):
        refuse_subclass(a, "wengert.numpy.apply_along_axis (with values that carry a "
                           "derivative)")
    arr = asarray(arr)
    shape = tuple(shape_of(arr))
    axis = np.lib.array_utils.normalize_axis_index(axis, len(shape))
    moved = _shape.moveaxis(arr, axis, -1)
    outer = shape[:axis] + shape[axis + 1:]
    if any(n == 0 for n in outer):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [func1d(moved[index], *args, **kwargs) for index in np.ndindex(*outer)]
    out = _stacked(results)
    res_shape = tuple(shape_of(out))[1:]
    out = _shape.reshape(out, outer + res_shape)
    # the result's axes go where ``axis`` was, as in NumPy
    n_outer = len(outer)
    axes = (list(range(axis)) + list(range(n_outer, n_outer + len(res_shape)))
            + list(range(axis, n_outer)))
    return _shape.transpose(out, tuple(axes)) if axes != sorted(axes) else out


def apply_over_axes(func: Any, a: Any, axes: Any) -> Any:
    """``np.apply_over_axes``: ``func(a, axis)`` for each axis in turn, its result kept
    with as many dimensions as ``a``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> wg.grad(lambda x: wnp.apply_over_axes(np.sum, x ** 2, [0, 1])[0, 0])(np.ones((2, 2)))
    array([[2., 2.],
           [2., 2.]])
    """
    if not holds_traced(a):
        return np.apply_over_axes(func, a, axes)
    val = asarray(a)  # (a holds traced values: neither a masked array nor an np.matrix)
    n = len(shape_of(val))
    for axis in (axes,) if np.ndim(axes) == 0 else axes:
        if axis < 0:
            axis = n + axis
        res = func(val, axis)
        if np.ndim(res) != np.ndim(val):
            res = _shape.expand_dims(res, axis)
            if np.ndim(res) != np.ndim(val):
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


_CORE = re.compile(r"\(([^()]*)\)")
_SIGNATURE = re.compile(r"^(\((\w+(,\w+)*)?\)(,\((\w+(,\w+)*)?\))*)"
                        r"->(\((\w+(,\w+)*)?\)(,\((\w+(,\w+)*)?\))*)$")


def _core_dims(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``"(m,n),(n)->(m)"`` as ``([("m", "n"), ("n",)], [("m",)])``."""
    signature = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    parse = lambda side: [tuple(d for d in dims.split(",") if d)  # noqa: E731
                          for dims in _CORE.findall(side)]
    return parse(ins), parse(outs)


def _vectorized(func: Any, args: list[Any], signature: Any, otypes: Any) -> Any:
    """``func`` over the broadcast loop dimensions of ``args``, its results joined."""
    for a in args:  # (NumPy's loop keeps their arithmetic; asarray would drop it)
        refuse_subclass(a, "wengert.numpy.vectorize (with values that carry a derivative)")
    args = [asarray(a) for a in args]
    if signature is None:
        ins: list[tuple[str, ...]] = [()] * len(args)
        outs = None
    else:
        ins, outs = _core_dims(signature)
        if len(ins) != len(args):
            raise TypeError(f"wrong number of positional arguments: expected {len(ins)}, "
                            f"got {len(args)}")
    loops = []
    for a, core in zip(args, ins):
        shape = tuple(shape_of(a))
        if len(shape) < len(core):
            raise ValueError(f"{len(shape)}-dimensional argument does not have enough "
                             f"dimensions for all core dimensions {core!r}")
        loops.append(shape[:len(shape) - len(core)])
    loop = np.broadcast_shapes(*loops)
    if 0 in loop:
        raise ValueError("wengert.numpy.vectorize: size-0 inputs holding values that carry "
                         "gradients are not supported")
    parts = []
    for a, own in zip(args, loops):
        if own != loop:
            a = broadcast_to(a, loop + tuple(shape_of(a))[len(own):])
        parts.append(a)
    results = [func(*(parts if not loop else [p[index] for p in parts]))
               for index in np.ndindex(*loop)]
    several = isinstance(results[0], tuple)
    nout = len(results[0]) if several else 1
    if outs is not None and nout != len(outs):
        raise ValueError(f"wrong number of outputs from pyfunc: expected {len(outs)}, got "
                         f"{nout}")
    joined = []
    for j in range(nout):
        column = [r[j] if several else r for r in results]
        if outs is not None and any(np.ndim(c) != len(outs[j]) for c in column):
            raise ValueError(f"output {j} of pyfunc does not have the {len(outs[j])} "
                             f"dimensions of its signature {outs[j]!r}")
        out = _stacked(column)
        out = _shape.reshape(out, loop + tuple(shape_of(out))[1:])
        if otypes is not None:
            out = _ew.astype(out, np.dtype(otypes[j]))
        joined.append(out)
    return tuple(joined) if several else joined[0]


class vectorize(np.vectorize):  # noqa: N801 - NumPy's name
    """``np.vectorize``, differentiable: where an input (or a result) carries a
    derivative, ``pyfunc`` is called on each element (or, with ``signature``, each core
    slice) of the broadcast inputs, and the results are joined with wengert's ``stack``
    (in NumPy's promoted dtype, or ``otypes``). On plain values it is NumPy's own.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> f = wnp.vectorize(lambda a, b: a * b if a > b else b, signature="(),()->()")
    >>> wg.grad(lambda x: np.sum(f(x, 1.0)))(np.array([0.5, 2.0]))
    array([0., 1.])
    >>> isinstance(f, np.vectorize)
    True
    """

    def _vectorize_call(self, func: Any, args: Any) -> Any:
        if not args:
            return func()
        if not holds_traced(list(args)):
            try:
                return super()._vectorize_call(_probing(func), args)
            except _TracedResult:
                pass  # pyfunc's results carry a derivative: joined below
        return _vectorized(func, list(args), self.signature, self.otypes)
