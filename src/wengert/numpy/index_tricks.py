"""``wengert.numpy.r_``, ``c_`` and ``ix_``: NumPy's index tricks on values that carry
gradients.

``np.r_[a, b]`` cannot be intercepted on tensors: NumPy turns each item into an array
itself, which would drop the gradients (and so raises). ``wnp.r_`` and ``wnp.c_`` read
their items as NumPy's do (slices as ``arange`` / ``linspace``, scalars, arrays raised
to ``ndmin`` dimensions, the directive strings ``'0'``, ``'-1,2,0'`` ...) and join them
with wengert's ``concatenate``, so the gradient reaches every item. Without a traced
item they are NumPy's own ``r_`` and ``c_``. The matrix directives ``'r'`` and ``'c'``
(which make an ``np.matrix``) are refused on traced items.

Examples
--------
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> y = wnp.r_[x, 0.0, x * 3.0]
>>> y.numpy()
array([1., 2., 0., 3., 6.])
>>> y.sum().backward()
>>> x.grad
array([4., 4.])
>>> wnp.c_[x, x].shape
(2, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, is_traced, shape_of
from wengert.numpy.lists import holds_traced
from wengert.ops.decompositions.composite import array
from wengert.ops.elementwise import astype
from wengert.ops.shape import concatenate, reshape, transpose

__all__ = ["AxisConcatenator", "r_", "c_", "ix_"]


def _directive(item: str, axis: int, ndmin: int, trans1d: int) -> tuple[int, int, int]:
    """``axis``, ``ndmin`` and ``trans1d`` after a directive string, as NumPy reads it."""
    if item in ("r", "c"):
        raise NotImplementedError(
            f"the matrix directive {item!r} (np.matrix) is not supported by wengert on values "
            "that carry gradients; use an integer axis directive ('0', '-1,2,0') instead")
    if "," in item:
        vec = item.split(",")
        try:
            axis, ndmin = (int(x) for x in vec[:2])
            if len(vec) == 3:
                trans1d = int(vec[2])
        except Exception as exc:
            raise ValueError(f"unknown special directive {item!r}") from exc
        return axis, ndmin, trans1d
    try:
        return int(item), ndmin, trans1d
    except (ValueError, TypeError) as exc:
        raise ValueError("unknown special directive") from exc


def _slice_values(item: slice, ndmin: int, trans1d: int) -> np.ndarray:
    step = 1 if item.step is None else item.step
    start = 0 if item.start is None else item.start
    if isinstance(step, (np.complexfloating, complex)):
        out = np.linspace(start, item.stop, num=int(abs(step)))
    else:
        out = np.arange(start, item.stop, step)
    if ndmin > 1:
        out = np.array(out, ndmin=ndmin)
        if trans1d != -1:
            out = out.swapaxes(-1, trans1d)
    return out


def _raised(item: Any, ndmin: int, trans1d: int) -> Any:
    """``np.array(item, ndmin=ndmin)`` (leading axes of length 1), its axes moved as
    ``trans1d`` says, for a traced item too."""
    shape = tuple(shape_of(item))
    nd = len(shape)
    if nd >= ndmin:
        return item
    out = reshape(item, (1,) * (ndmin - nd) + shape)
    if trans1d != -1:
        k2 = ndmin - nd
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        out = transpose(out, tuple(axes[:k1] + axes[k2:] + axes[k1:k2]))
    return out


class AxisConcatenator:
    """NumPy's ``AxisConcatenator`` (``np.r_``, ``np.c_``) for items that may carry
    gradients: joined with wengert's ``concatenate``."""

    __slots__ = ("axis", "ndmin", "trans1d", "plain")

    def __init__(self, plain: Any, axis: int = 0, ndmin: int = 1, trans1d: int = -1) -> None:
        self.plain = plain
        self.axis = axis
        self.ndmin = ndmin
        self.trans1d = trans1d

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, tuple):
            key = (key,)
        if not holds_traced(key):
            return self.plain[key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs: list[Any] = []
        kinds: list[Any] = []  # dtypes, or Python scalars (weak in result_type)
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                axis, ndmin, trans1d = _directive(item, axis, ndmin, trans1d)
                continue
            if isinstance(item, slice):
                obj = _slice_values(item, ndmin, trans1d)
            elif type(item) in np.ScalarType:
                objs.append(item)
                kinds.append(item)
                continue
            else:
                if isinstance(item, (list, tuple)):
                    item = array(item)
                obj = _raised(item if is_traced(item) else np.asarray(item), ndmin, trans1d)
            objs.append(obj)
            kinds.append(np.dtype(dtype_of(obj)))
        if not objs:
            return self.plain[key]
        final = np.result_type(*kinds)
        parts = []
        for obj in objs:
            if not is_traced(obj):
                obj = np.array(obj, ndmin=ndmin, dtype=final)
            elif np.dtype(dtype_of(obj)) != final:
                obj = astype(obj, final)
            parts.append(obj)
        return concatenate(parts, axis=axis)

    def __len__(self) -> int:
        return 0


#: ``np.r_`` for values that carry gradients: joins along the first axis.
r_ = AxisConcatenator(np.r_, 0)
#: ``np.c_`` for values that carry gradients: joins along the last axis, 1-d items as
#: columns.
c_ = AxisConcatenator(np.c_, -1, ndmin=2, trans1d=0)


def ix_(*args: Any) -> tuple[Any, ...]:
    """``np.ix_``: the open mesh of 1-d sequences, each reshaped to its own axis (a boolean
    one by its ``nonzero`` indices). Meant for indices, it also reshapes float values; a
    traced one keeps its derivative (``np.ix_`` on a tensor comes here too).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> a, b = wnp.ix_(wg.tensor([1.0, 2.0]), [0, 1, 2])
    >>> a.shape, b.shape
    ((2, 1), (1, 3))
    >>> wg.grad(lambda x: np.sum(wnp.ix_(x, x)[0] * wnp.ix_(x, x)[1]))(np.array([1.0, 2.0]))
    array([6., 6.])
    """
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if isinstance(new, (list, tuple)) and holds_traced(new):
            new = array(new)
        if not is_traced(new):
            new = np.asarray(new)
            if new.size == 0:
                new = new.astype(np.intp)
        shape = tuple(shape_of(new))
        if len(shape) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if np.dtype(dtype_of(new)) == np.bool_:
            new = np.nonzero(new)[0]  # (plain indices, or recorded by a graph)
            shape = tuple(shape_of(new))
        out.append(reshape(new, (1,) * k + shape + (1,) * (nd - k - 1)))
    return tuple(out)
