"""In-place operations on tensors (``+=``, ``x[i] = v``) and their safety checks.

An in-place op computes its result out of place, records it like any op, then
writes the result into the tensor's own storage and bumps its version counter.
Nodes recorded earlier that read the old value notice the new version and make
``backward()`` raise instead of returning a wrong gradient. The in-place op's
own node keeps a private copy of the old value when its rule needs it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.modes import GRAD_ENABLED, TAPES
from .core.node import EDGES, NIN, OP, OUT, STRIDE, inputs, node_extra, set_inputs
from .tensor import Tensor, _const, apply, value_of

__all__ = ["assign_result", "setitem"]


def _check_leaf(t: Tensor, what: str) -> None:
    if t._rg and t._node is None and GRAD_ENABLED.get():
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation ({what}). "
            "Do it out of place (x = x + 1), or under wg.no_grad() to update the leaf's value "
            "(as an optimizer step does)."
        )


def _check_views(t: Tensor, result: Any, what: str) -> None:
    extra = getattr(t, "_extra", None)
    shared = extra is not None and extra.get("shares_memory", False)
    involved = t._rg or (isinstance(result, Tensor) and (result._rg or result._node is not None))
    if shared and involved and GRAD_ENABLED.get():
        raise RuntimeError(
            f"in-place operation ({what}) on a tensor that shares memory with another tensor (a "
            "view from slicing/reshape/transpose, or .detach()) while gradients are recorded. "
            "wengert cannot keep the views' gradients right; use an out-of-place op, or .copy() "
            "the tensor before modifying it."
        )


def assign_result(t: Tensor, result: Any, what: str) -> Tensor:
    """Make ``t`` hold ``result`` (computed out of place from ``t``) in place."""
    _check_leaf(t, what)
    if not isinstance(result, Tensor):
        result = _const(result)
    _check_views(t, result, what)
    old = t._value
    new = result._value
    node = result._node
    counter = t._version
    if isinstance(old, np.ndarray) and np.shape(new) == old.shape and old.flags.writeable:
        saved = inputs(node) if node is not None else None
        if saved is not None and any(r is old for r in saved):
            reads = node[OP].reads
            copies = [r.copy() if (r is old and i in reads) else r for i, r in enumerate(saved)]
            set_inputs(node, tuple(copies))
        np.copyto(old, new, casting="same_kind")
        value = old
        if node is not None:
            node[OUT] = new
    else:
        if isinstance(old, np.ndarray) and np.shape(new) != old.shape:
            raise ValueError(
                f"in-place {what}: the result has shape {np.shape(new)} but the tensor has shape "
                f"{old.shape}; NumPy does not broadcast the target of an in-place operation."
            )
        value = new
    counter[0] += 1
    if node is not None:
        # The op's own copy of the old value is intact: drop checks on it. Its
        # output is t's storage, whose version holder stays t's: check that.
        for i in range(node[NIN]):
            k = EDGES + STRIDE * i
            if node[k + 2] is counter:
                node[k + 2] = None
        if node[OP].reads_out:
            node_extra(node)["out_check"] = (counter, counter[0])
    t._value = value
    t._node = node
    t._rg = result._rg
    return t  # t keeps its version holder: earlier savers of t see the bump


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``, recorded so gradients reach both ``t`` and ``value``."""
    from .ops import indexing

    what = "__setitem__"
    _check_leaf(t, what)
    needs = GRAD_ENABLED.get() and (
        t._rg
        or (isinstance(value, Tensor) and (value._rg or value._node is not None))
        or bool(TAPES.get())
    )
    if not needs:
        old = t._value
        if isinstance(old, np.ndarray):
            old[indexing._raw_index(index)] = value_of(value)
            t._version[0] += 1
            return
        arr = np.array(old)
        arr[indexing._raw_index(index)] = value_of(value)
        t._value = arr
        t._version[0] += 1
        return
    result = apply(indexing.SETITEM, t, value, index=indexing._raw_index(index))
    assign_result(t, result, what)
