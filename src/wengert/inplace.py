"""In-place operations on tensors (``+=``, ``x[i] = v``, ``out=``) and their safety checks.

An in-place op computes its result out of place, records it like any op, then
writes the result into the tensor's own storage and bumps its version counter.
Nodes recorded earlier that read the old value notice the new version and make
``backward()`` raise instead of returning a wrong gradient. The in-place op's
own node keeps a private copy of the old value when its rule needs it.

Views (slices, reshapes, transposes) share their base's memory and version
counter. After an in-place op on the base, each live view's history is
re-derived from the new base (as PyTorch regenerates a view's ``grad_fn``), so a
view used later differentiates what it now holds. An in-place op on a view of a
slice writes through to the base with a recorded ``base[index] = ...``.

Under :func:`wengert.no_grad` an in-place op only changes the data (an
optimizer step): the tensor keeps ``requires_grad`` and its history.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .core.bind import apply, kind_of, primal
from .core.modes import GRAD_ENABLED, RECORDERS
from .ops import elementwise as _ew
from .ops import indexing as _ix
from .ops import linalg as _linalg

__all__ = ["InPlaceMethods", "assign_result", "setitem", "track_view"]


class InPlaceMethods:
    """Mixin: the in-place operators of tensors."""

    __slots__ = ()

    def __iadd__(self, other: Any) -> Any:
        return assign_result(self, _ew.add(self, other), "+=")

    def __isub__(self, other: Any) -> Any:
        return assign_result(self, _ew.subtract(self, other), "-=")

    def __imul__(self, other: Any) -> Any:
        return assign_result(self, _ew.multiply(self, other), "*=")

    def __itruediv__(self, other: Any) -> Any:
        return assign_result(self, _ew.divide(self, other), "/=")

    def __ipow__(self, other: Any) -> Any:
        return assign_result(self, _ew.power(self, other), "**=")

    def __imatmul__(self, other: Any) -> Any:
        return assign_result(self, _linalg.matmul(self, other), "@=")

    def __setitem__(self, index: Any, value: Any) -> None:
        setitem(self, index, value)


def _check_leaf(t: Any, what: str) -> None:
    if t._rg and t._node is None and GRAD_ENABLED.get():
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation ({what}). "
            "Do it out of place (x = x + 1), or under wg.no_grad() to update the leaf's value "
            "(as an optimizer step does)."
        )


def _recorded(x: Any) -> bool:
    return kind_of(x) is not None and getattr(x, "_node", None) is not None


def track_view(base: Any, view: Any, op: Any, params: Any) -> None:
    """Note that ``view`` (made by ``op`` with ``params``) shares ``base``'s memory."""
    view._version = base._version
    view._extras()["view_of"] = (weakref.ref(base), op, params)
    base._extras().setdefault("views", []).append(weakref.ref(view))


def _live_views(t: Any) -> list[Any]:
    extra = t._extra
    refs = extra.get("views") if extra else None
    if not refs:
        return []
    views = [v for v in (r() for r in refs) if v is not None]
    extra["views"] = [weakref.ref(v) for v in views]
    return views


def _rederive_views(base: Any) -> None:
    """Give every live view of ``base`` (and their views) a history from the new base."""
    todo = [base]
    while todo:
        b = todo.pop()
        for view in _live_views(b):
            _, op, params = view._extra["view_of"]
            new = apply(op, b, **(params or {}))
            if new._node is not None:
                view._node = new._node
                view._rg = new._rg
            todo.append(view)


def _keep_saved(node: Any, old: Any, counter: Any) -> None:
    """Before the tensor's value ``old`` is overwritten (or replaced): the in-place op's
    own node keeps private copies of the values it saved from it, and stops checking
    their version (the bump is the op's own)."""
    reads = node.op.reads
    for i, r in enumerate(node.inputs()):
        if r is old and i in reads and isinstance(r, np.ndarray):
            node.set_input(i, r.copy())
    for i in range(node.nin):
        if node.edge(i)[2] is counter:
            node.drop_check(i)


def assign_result(t: Any, result: Any, what: str) -> Any:
    """Make ``t`` hold ``result`` (computed out of place from ``t``) in place."""
    _check_leaf(t, what)
    if kind_of(result) is None:
        result = kind_of(t).constant(result)
    extra = t._extra
    view_of = extra.get("view_of") if extra else None
    if view_of is not None and GRAD_ENABLED.get() and (t._rg or _recorded(result)):
        base = view_of[0]()
        if base is not None and view_of[1] is _ix.GETITEM:
            # A slice of a base: write through the base (recorded), then re-derive the views.
            if result._node is not None:
                _keep_saved(result._node, t._value, t._version)
            setitem(base, view_of[2]["index"], result)
            return t
        raise RuntimeError(
            f"in-place operation ({what}) on a view (a reshape, transpose or other view of "
            "another tensor) while gradients are recorded: wengert writes through slices "
            "only. Compute the value out of place (y = y + 1), or .copy() the view first."
        )
    old = t._value
    new = result._value
    node = result._node
    counter = t._version
    if node is not None:
        _keep_saved(node, old, counter)
    if isinstance(old, np.ndarray) and np.shape(new) == old.shape and old.flags.writeable:
        np.copyto(old, primal(new), casting="same_kind")
        value = old
        if node is not None:
            node.out = new
    else:
        if isinstance(old, np.ndarray) and np.shape(new) != old.shape:
            raise ValueError(
                f"in-place {what}: the result has shape {np.shape(new)} but the tensor has shape "
                f"{old.shape}; NumPy does not broadcast the target of an in-place operation."
            )
        value = new
    counter.version += 1
    if node is not None:
        # Its output is t's storage, whose version holder stays t's: check that.
        if node.op.reads_out:
            node.extras()["out_check"] = (counter, counter.version)
        t._node = node
        t._rg = result._rg
    # (Not recorded -- under no_grad, an optimizer step: t keeps requires_grad and history.)
    t._value = value
    if node is not None and extra and extra.get("views"):
        _rederive_views(t)
    return t  # t keeps its version holder: earlier savers of t see the bump


def setitem(t: Any, index: Any, value: Any) -> None:
    """``t[index] = value``, recorded so gradients reach both ``t`` and ``value``."""
    what = "__setitem__"
    _check_leaf(t, what)
    needs = GRAD_ENABLED.get() and (
        t._rg or _recorded(value) or (kind_of(value) is not None and kind_of(value).connected(
            value)) or bool(RECORDERS.get())
    )
    index = _ix.raw_index(index)
    if not needs:
        old = t._value
        if isinstance(old, np.ndarray):
            old[index] = primal(value)
            t._version.version += 1
            return
        arr = np.array(old)
        arr[index] = primal(value)
        t._value = arr
        t._version.version += 1
        return
    result = apply(_ix.SETITEM, t, value, index=index)
    assign_result(t, result, what)
