"""What the Jupyter layer can show: anything that leads to a tape.

:func:`as_tape` turns a tensor (the equations behind it), a
:class:`~wengert.GradientTape` (what it recorded), a
:class:`~wengert.core.equations.Tape`, or any object with a ``tape`` attribute
holding one (the result of ``%%autodiff``) into a :class:`Tape`, read
through the public tape API only.
"""

from __future__ import annotations

from typing import Any

from wengert.core.equations import Tape
from wengert.reverse.gradient_tape import GradientTape
from wengert.reverse.tape_reading import tape_of
from wengert.reverse.tensor import Tensor

__all__ = ["as_tape"]


def as_tape(target: Any) -> Tape:
    """The tape behind ``target``.

    Parameters
    ----------
    target : Tensor, GradientTape, Tape, or an object with a ``tape`` attribute
        A tensor gives the equations recorded behind it (``wg.tape_of``), a
        gradient tape the equations it recorded.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> len(as_tape(x * x + 1.0))
    2
    """
    if isinstance(target, Tape):
        return target
    if isinstance(target, Tensor):
        return tape_of(target)
    if isinstance(target, GradientTape):
        tape = target.recorded
        if not len(tape) and target.state == "used":
            raise RuntimeError(
                "this non-persistent GradientTape let go of what it recorded when its "
                "gradient was computed, so there is nothing to show. Pass the target "
                "instead (wg.explore(z)), use GradientTape(persistent=True), or compute the "
                "gradient in the view-keeping mode (%load_ext wengert, or inside "
                "wg.keep_values()), where the tape keeps its equations for the views."
            )
        return tape
    check = getattr(target, "changed_constants", None)
    if callable(check):  # an %%autodiff result: no value of a constant changed since
        check()
    tape = getattr(target, "tape", None)
    if isinstance(tape, Tape):
        return tape
    raise TypeError(
        f"expected a tensor, a GradientTape, a tape (wg.tape_of(y)) or an %%autodiff result, "
        f"got {type(target).__name__}. To look at a computation, make its inputs tensors "
        "that require grad (wg.tensor(x, requires_grad=True)) and pass the result."
    )
