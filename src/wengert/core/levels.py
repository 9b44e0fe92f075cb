"""Levels: which transform owns a value, so nested transforms never mix up.

Every forward-mode perturbation (a :class:`Tag`) and every running reverse
transform gets an *order* from one counter: later means inner. A dual number's
level is its tag's order; a tensor's level is that of the transform it belongs
to (0 for the user's tensors; just inside a dual's level for a tensor made over
a dual number). When an op meets values of several levels it is handled first
at the innermost one, and the others are constants there, handled again at
their own level (see :mod:`wengert.core.bind`). This is what makes
``derivative(lambda x: x * derivative(lambda y: x + y)(1.0))(1.0) == 1``, and
what keeps a transform's result on an outer tensor's graph.
"""

from __future__ import annotations

import itertools
from contextvars import ContextVar
from typing import Any

from wengert.core.errors import EscapedLevelError

__all__ = [
    "Tag", "USER_TAG", "next_order", "DUAL_TAG", "is_transform_level", "open_level",
    "close_level", "is_open", "escaped_error", "OPEN_LEVELS", "LEVEL_NAMES", "transform_name",
    "TRACE_LEVEL", "OPEN_TRACE_LEVELS", "trace_level_closed", "trace_escaped_error",
]

next_order = itertools.count(1).__next__


def is_transform_level(level: float) -> bool:
    """Whether a tensor of ``level`` belongs to a functional reverse transform
    (``wg.grad``, ``wg.vjp``: an order from :func:`next_order`), rather than being a
    user's tensor (level 0) or one made over a dual number (an order + 0.5)."""
    return level > 0 and level == int(level)


#: The levels of the reverse transforms running now (in any thread). A level is an
#: identity from :func:`next_order` that is never reused, so this is the registry of
#: live transforms (as ``Tag.active`` is for forward mode), not a mode switch. The
#: recording path reads it inline: ``level.__class__ is int and level not in OPEN_LEVELS``.
OPEN_LEVELS: set[int] = set()


def open_level(level: int | None = None) -> int:
    """A new reverse-transform level (or ``level`` again), open until :func:`close_level`."""
    if level is None:
        level = next_order()
    OPEN_LEVELS.add(level)
    return level


def close_level(level: int) -> None:
    """The transform at ``level`` returned: its tensors may no longer record."""
    OPEN_LEVELS.discard(level)


def is_open(level: float) -> bool:
    """Whether ``level`` is not the level of a finished reverse transform (user tensors,
    tensors over dual numbers and running transforms are open).

    Examples
    --------
    >>> level = open_level()
    >>> is_open(level), is_open(0)
    (True, True)
    >>> close_level(level)
    >>> is_open(level)
    False
    """
    return not (type(level) is int and level and level not in OPEN_LEVELS)


#: What to call the reverse-transform levels that wg.grad / wg.vjp did not open, in
#: messages (``"the %%autodiff cell"``), by level. A level is never reused, so an entry
#: stays true; only such transforms add one (one small entry each).
LEVEL_NAMES: dict[int, str] = {}


def transform_name(level: float) -> str | None:
    """The name ``level`` was given in :data:`LEVEL_NAMES` (``None``: wg.grad / wg.vjp)."""
    return LEVEL_NAMES.get(level)  # type: ignore[call-overload]


def escaped_error(level: float) -> EscapedLevelError:
    """The error for a tensor of a finished transform used again."""
    name = transform_name(level)
    if name is not None:
        return EscapedLevelError(
            f"a value computed in {name} (transform level {level}) was used after it ended: it "
            "was stored where it could not be made a plain value, so its gradient would be "
            "meaningless. Store its value there instead (x.numpy(), or wg.stop_gradient(x))."
        )
    return EscapedLevelError(
        f"a value computed inside a finished wg.grad / wg.vjp (transform level {level}) "
        "was used after the transform returned (it was stored outside the function, e.g. "
        "in a list or a global), so its gradient would be meaningless. Return what you "
        "need from the function instead (has_aux=True returns extra values), or store "
        "wg.stop_gradient(x) if only its value is needed."
    )


class Tag:
    """The identity of one forward-mode perturbation.

    ``active`` is True while the transform that created it runs; a dual
    number whose tag is no longer active has escaped its scope. ``batch`` is
    ``None``, or the number of tangents every dual of this tag carries at once
    (a leading axis of the tangent, as ForwardDiff's chunks).

    ``order`` (from the one counter of levels, never reused) is what tells tags
    apart and nests them; ``depth``, what a tag is shown as (``#1`` for the
    outermost running perturbation, ``#2`` for one inside it...), is the same each
    time the same code runs, as ``order`` is not.

    Examples
    --------
    >>> a, b = Tag(), Tag()
    >>> a.order < b.order, a is b, a.depth == b.depth == 1
    (True, False, True)
    """

    __slots__ = ("order", "active", "name", "batch", "depth")

    def __init__(self, name: str = "jvp", batch: int | None = None) -> None:
        self.order = next_order()
        self.active = True
        self.name = name
        self.batch = batch
        outer = DUAL_TAG.get()
        self.depth = 1 if outer is None or not outer.active else outer.depth + 1

    def __repr__(self) -> str:
        return f"<Tag {self.name} #{self.depth}{'' if self.active else ' closed'}>"

    # A tag is an identity: a copy would be another perturbation (a copied dual number
    # multiplied by its original would nest instead of adding tangents).
    def __copy__(self) -> Tag:
        return self

    def __deepcopy__(self, memo: Any) -> Tag:
        return self

    def __reduce__(self) -> Any:
        if self.order == 0:
            return "USER_TAG"  # the dual numbers made with wg.Dual(primal, tangent)
        raise TypeError(
            f"cannot pickle a dual number of a running transform ({self.name}): its tangent "
            "belongs to that transform. Pickle its primal (d.primal) and tangent (d.tangent)."
        )


#: The innermost running forward-mode transform's tag (``None``: none). A leaf
#: tensor made inside it (``wg.tensor(..., requires_grad=True)`` in the function
#: given to ``wg.jvp``) holds a dual number of this tag, so that a backward pass
#: run there carries tangents (forward over the user's reverse mode).
DUAL_TAG: ContextVar[Tag | None] = ContextVar("wengert_dual_tag", default=None)

#: The tag of dual numbers made directly with ``wg.Dual(primal, tangent)``.
USER_TAG = Tag("user")
USER_TAG.order = 0
USER_TAG.depth = 0

#: The level of the tensors made inside the innermost graph trace running the user's
#: function (0: none): a quarter inside the trace's level. A tensor or Variable made
#: there from plain values belongs to it (as a leaf made inside ``wg.jvp`` does), so
#: ops on it record on its tape and run on the trace's values beneath: ``.backward()``,
#: a GradientTape and Variables work inside a compiled function.
TRACE_LEVEL: ContextVar[float] = ContextVar("wengert_trace_level", default=0)
#: The :data:`TRACE_LEVEL` of every trace running now (in any thread).
OPEN_TRACE_LEVELS: set[float] = set()


def trace_level_closed(level: float) -> bool:
    """Whether ``level`` is that of tensors made inside a graph trace that has ended
    (such a tensor escaped the traced function: mixed with other tensors, its gradient
    would not reach them).

    Examples
    --------
    >>> trace_level_closed(0), trace_level_closed(7.25), trace_level_closed(7.5)
    (False, True, False)
    """
    return level.__class__ is float and level % 1.0 == 0.25 and level not in OPEN_TRACE_LEVELS


def trace_escaped_error() -> EscapedLevelError:
    """The error for a tensor made inside a traced function used after the trace."""
    return EscapedLevelError(
        "a tensor made inside a traced function (wg.compile, wg.trace) was used after the "
        "trace ended (it was stored outside the function, e.g. in a list or a global): "
        "mixed with other tensors its gradient would not reach them. Return what you need "
        "from the function, or make the tensor outside it."
    )
