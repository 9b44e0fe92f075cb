"""Lists and tuples holding traced values, taken as arrays by ``wengert.numpy``.

NumPy reads ``np.mean([x, y])`` as the mean of the array ``[x, y]``; on tensors that
array cannot be made with ``np.asarray`` without losing the gradients. The functions of
``wengert.numpy`` (and the NumPy functions routed to them, such as ``np.append(x, [y,
1.0])``) build such an argument with :func:`wengert.numpy.array` (``np.stack`` level by
level) instead, so ``wnp.mean([x, y])``, ``wnp.dot([a, b], w)`` and ``np.append(x, [y,
z])`` work as in NumPy and carry the gradients. Functions that take a *sequence of
arrays* (``concatenate``, ``stack``, ``hstack``, ``select``, ...) get each item of it
built that way instead. A list of plain values is left for NumPy, as before.

Examples
--------
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> wnp.mean([x, x * 3.0]).backward()
>>> x.grad
array([1., 1.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from wengert.core.bind import is_traced
from wengert.ops.decompositions.composite import array

__all__ = ["holds_traced", "as_array_args", "SEQUENCE_ARGUMENTS", "NESTED_ARGUMENTS"]

#: Function name -> the positions (and keyword names) of its arguments that are sequences
#: of arrays: their items, not the sequence, are built into arrays.
SEQUENCE_ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "concatenate": (0, "arrays"), "concat": (0, "arrays"), "stack": (0, "arrays"),
    "hstack": (0, "tup"), "vstack": (0, "tup"), "dstack": (0, "tup"),
    "column_stack": (0, "tup"), "select": (0, 1, "condlist", "choicelist"),
    "multi_dot": (0, "arrays"), "piecewise": (1, 2, "condlist", "funclist"),
    "choose": (1, "choices"),
}

#: Function name -> the arguments that are nested lists of blocks, given as they are.
NESTED_ARGUMENTS: dict[str, tuple[Any, ...]] = {"block": (0, "arrays")}


def holds_traced(x: Any) -> bool:
    """Whether a list or tuple holds a traced value at some depth (no recursion)."""
    todo = [x]
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple)):
            todo.extend(item)
        elif is_traced(item):
            return True
    return False


def _lift(x: Any) -> Any:
    """A list or tuple holding traced values as an array; anything else as it is."""
    return array(x) if isinstance(x, (list, tuple)) and holds_traced(x) else x


def _lift_items(x: Any) -> Any:
    return type(x)(_lift(i) for i in x) if isinstance(x, (list, tuple)) else x


def as_array_args(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` taking lists and tuples that hold traced values as arrays (see the module).
    Arguments without a list or tuple go straight to ``fn``."""
    sequences = SEQUENCE_ARGUMENTS.get(name, ())
    nested = NESTED_ARGUMENTS.get(name, ())

    def lift(key: Any, value: Any) -> Any:
        if key in nested:
            return value
        return _lift_items(value) if key in sequences else _lift(value)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if isinstance(a, (list, tuple)):
                args = tuple(lift(i, a) for i, a in enumerate(args))
                break
        if kwargs:
            kwargs = {k: lift(k, v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return wrapper
