"""In-place updates of traced values (``y += 1``, ``y[0] = v``), as NumPy does them.

A graph has no mutable arrays: an in-place update of a traced value becomes an
ordinary equation (``add``, or ``setitem`` for ``y[i] = v``), and the traced
value then stands for that equation's result, so every name bound to it sees the
new value. Views follow NumPy: a traced value made by a view op (a slice, a
reshape, a transpose) whose example value is a NumPy view of its base writes
through to the base (as ``base[index] = ...``, or the inverse reshape or
permutation, up the chain of views), and the base's live views are derived
again from its new value.

A graph cannot change its caller's arrays, so updating an argument of the traced
function in place (or a view of one) raises :class:`TraceError`: eagerly the
caller would see the change, compiled it would not.

A graph keeps every value: the rules of an op read the values from before a later
update of them. So a graph differentiates a function that overwrites a value an
op's rule reads (``y = np.exp(x); y[0] = 5.0``), where the eager tape, which saw the
array change, raises ``InplaceModifiedError`` (as PyTorch does) rather than give a
gradient from the new values.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def f(x):
...     y = x * 1.0
...     head = y[:2]
...     head += 10.0
...     y[-1] = 0.0
...     return y
>>> wg.compile(f)(np.arange(3.0))
array([10., 11.,  0.])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.bind import apply, is_traced, kind_of
from wengert.core.modes import GRAD_ENABLED
from wengert.ops import elementwise as _ew
from wengert.ops import indexing as _ix
from wengert.ops.linalg import basic as _linalg
from wengert.reverse.inplace import masked_write, rederive_views, traced_mask, write_back

__all__ = ["InPlaceTraced", "assign", "write_out", "TraceMutationError"]


class TraceMutationError(TypeError):
    """An in-place update a graph cannot hold (of an argument, or of a placeholder)."""


def _in_place_method(function: Any, what: str, ufunc: str) -> Any:
    """The in-place operator ``what`` (``"+="``) of NumPy's ``ufunc``, computed with
    ``function``."""

    def method(self: Any, other: Any) -> Any:
        return _in_place(self, function(self, other), what, ufunc)

    return method


class InPlaceTraced:
    """Mixin: NumPy's in-place operators on traced values."""

    __slots__ = ()

    __iadd__ = _in_place_method(_ew.add, "+=", "add")
    __isub__ = _in_place_method(_ew.subtract, "-=", "subtract")
    __imul__ = _in_place_method(_ew.multiply, "*=", "multiply")
    __itruediv__ = _in_place_method(_ew.divide, "/=", "divide")
    __ifloordiv__ = _in_place_method(_ew.floor_divide, "//=", "floor_divide")
    __imod__ = _in_place_method(np.remainder, "%=", "remainder")
    __ipow__ = _in_place_method(_ew.power, "**=", "power")
    __imatmul__ = _in_place_method(_linalg.matmul, "@=", "matmul")
    __iand__ = _in_place_method(np.bitwise_and, "&=", "bitwise_and")
    __ior__ = _in_place_method(np.bitwise_or, "|=", "bitwise_or")
    __ixor__ = _in_place_method(np.bitwise_xor, "^=", "bitwise_xor")
    __ilshift__ = _in_place_method(np.left_shift, "<<=", "left_shift")
    __irshift__ = _in_place_method(np.right_shift, ">>=", "right_shift")

    def __setitem__(self, index: Any, value: Any) -> None:
        if traced_mask(index, self.shape):
            new = masked_write(self, index, value)
        else:
            new = apply(_ix.SETITEM, self, value, index=_ix.raw_index(index))
        assign(self, new, "y[...] = v")


def _in_place(target: Any, new: Any, what: str, ufunc: str) -> Any:
    """``target op= other``: a traced array is updated in place; a traced number (a Python
    or NumPy scalar, immutable as in NumPy) is rebound to ``new``."""
    if type(target.value) is not np.ndarray:
        return new
    _refuse_cast(target, new, ufunc, f"{target._var.name} {what} ...", f"write "
                 f"{target._var.name} = {target._var.name} {what[:-1]} ... for a new array")
    return assign(target, new, what)


def _refuse_cast(target: Any, new: Any, ufunc: str, where: str, fix: str) -> None:
    """NumPy's refusal to write ``new`` into ``target`` across kinds (casting
    ``same_kind``)."""
    have, want = np.dtype(new.dtype), np.dtype(target.dtype)
    if have != want and not np.can_cast(have, want, "same_kind"):
        raise TypeError(  # NumPy's words
            f"Cannot cast ufunc '{ufunc}' output from dtype('{have}') to dtype('{want}') with "
            f"casting rule 'same_kind' ({where}: NumPy refuses it too; {fix})"
        )


def write_out(target: Any, new: Any, what: str) -> Any:
    """``np.f(..., out=target)`` for a traced ``target``: updated in place as by
    ``target[...] = new`` (NumPy's ``same_kind`` casting); a traced number cannot be."""
    if type(target.value) is not np.ndarray:
        raise TypeError(f"{what}: out= must be an array; {target._var.name} holds a number "
                        "(assign the result instead: y = np.f(x)).")
    ufunc = what.split("(")[0].removeprefix("np.")
    _refuse_cast(target, new, ufunc, what, "assign the result instead: y = np.f(x)")
    return assign(target, new, what)


def assign(target: Any, new: Any, what: str) -> Any:
    """Make the traced value ``target`` stand for ``new`` (computed out of place), as
    NumPy's in-place operations do: a view writes through to its base (up the chain of
    views) and the base's live views follow.

    Raises
    ------
    TraceMutationError
        When the value written is an argument of the traced function (or a placeholder),
        or a view of one.
    """
    builder = target.builder
    if not is_traced(new) or type(new) is not type(target) or new.builder is not builder:
        new = apply(_ix.SETITEM, target, new, index=Ellipsis)
    if tuple(new.shape) != tuple(target.shape):
        raise ValueError(
            f"in-place {what}: the result has shape {tuple(new.shape)} but "
            f"{target._var.name} has shape {tuple(target.shape)}; NumPy does not broadcast "
            "the target of an in-place operation."
        )
    if new.dtype != target.dtype:
        new = _ew.astype(new, target.dtype)  # NumPy keeps the target's dtype
    root, value = target, new
    while root._base is not None:  # up the chain of views, out of place
        base, op, params = root._base
        value = write_back(op, params, base, value, what)
        root = base
    if id(root._var) in builder.input_ids:
        raise _argument_error(root, target, what)
    if not GRAD_ENABLED.get():
        # Eagerly this keeps the array's history with new data, which a graph step cannot
        # say: the step runs, and differentiating through it is refused.
        value = kind_of(root).record_call(updated_under_no_grad, (root, value), {},
                                          "updated_under_no_grad", derivative_free=False)
    root._var, root.value = value._var, value.value
    rederive_views(root, _set)
    return target


def updated_under_no_grad(old: Any, new: Any) -> Any:
    """The step of an in-place update made inside ``wg.no_grad()`` in a traced function:
    its value is ``new``. Eagerly the array keeps its history (the gradient flows to what
    ``old`` was computed from, as if the update had not happened), which no graph step
    says; so differentiating through it is refused (:attr:`refusal`)."""
    return new


updated_under_no_grad.refusal = (  # type: ignore[attr-defined]
    "an in-place update made inside wg.no_grad() in a traced or compiled function: eagerly "
    "the array keeps its gradient history with the new data, which a graph cannot replay. "
    "Differentiate the eager function, make the update outside no_grad, or write it out of "
    "place (y = y + wg.stop_gradient(delta))."
)


def _argument_error(root: Any, target: Any, what: str) -> TraceMutationError:
    through = "" if root is target else f", through its view {target._var.name}"
    if root.builder.abstract:
        return TraceMutationError(
            f"in-place {what} on placeholder {root._var.name}{through}: a placeholder is fed "
            "when the graph runs and cannot be changed while it is built. Compute a new "
            f"value instead ({root._var.name}2 = {root._var.name} + ...)."
        )
    return TraceMutationError(
        f"{root.builder.name}() changes its argument {root._var.name} in place ({what}"
        f"{through}): eagerly the caller's array would change, but a traced or compiled "
        "function cannot write into its caller's arrays. Work on a copy "
        f"({root._var.name} = {root._var.name}.copy() first, or {root._var.name} = "
        f"{root._var.name} + 1 instead of +=), and return the new value."
    )


def _set(view: Any, new: Any) -> None:
    view._var, view.value = new._var, new.value
