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

__all__ = ["Tag", "USER_TAG", "next_order", "DUAL_TAG", "is_transform_level"]

next_order = itertools.count(1).__next__


def is_transform_level(level: float) -> bool:
    """Whether a tensor of ``level`` belongs to a functional reverse transform
    (``wg.grad``, ``wg.vjp``: an order from :func:`next_order`), rather than being a
    user's tensor (level 0) or one made over a dual number (an order + 0.5)."""
    return level > 0 and level == int(level)


class Tag:
    """The identity of one forward-mode perturbation.

    ``active`` is True while the transform that created it runs; a dual
    number whose tag is no longer active has escaped its scope. ``batch`` is
    ``None``, or the number of tangents every dual of this tag carries at once
    (a leading axis of the tangent, as ForwardDiff's chunks).

    Examples
    --------
    >>> a, b = Tag(), Tag()
    >>> a.order < b.order
    True
    """

    __slots__ = ("order", "active", "name", "batch")

    def __init__(self, name: str = "jvp", batch: int | None = None) -> None:
        self.order = next_order()
        self.active = True
        self.name = name
        self.batch = batch

    def __repr__(self) -> str:
        return f"<Tag {self.name} #{self.order}{'' if self.active else ' closed'}>"


#: The tag of dual numbers made directly with ``wg.Dual(primal, tangent)``.
USER_TAG = Tag("user")
USER_TAG.order = 0

#: The innermost running forward-mode transform's tag (``None``: none). A leaf
#: tensor made inside it (``wg.tensor(..., requires_grad=True)`` in the function
#: given to ``wg.jvp``) holds a dual number of this tag, so that a backward pass
#: run there carries tangents (forward over the user's reverse mode).
DUAL_TAG: ContextVar[Tag | None] = ContextVar("wengert_dual_tag", default=None)
