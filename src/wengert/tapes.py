"""Reading tapes: the equations behind tensors, and the lines of code that recorded them.

:func:`tape_of` lists the equations recorded behind some tensors (a
:class:`~wengert.core.tape.Tape`); inside :func:`source_lines` every recorded
equation also remembers the line of user code that created it. The explorer
and explainer of the Jupyter layer read tapes through these and the sweep
observers of :mod:`wengert.core.sweep` only.
"""

from __future__ import annotations

from typing import Any

from .core.modes import RECORDERS, Recorder
from .core.source import capture_stack, user_frame
from .core.tape import Tape, read_tape
from .tensor import Tensor

__all__ = ["tape_of", "source_lines", "keep_values"]


def tape_of(*tensors: Any) -> Tape:
    """The equations recorded behind ``tensors``, in execution order.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> tape = wg.tape_of(x * x + 1.0)
    >>> [eq.op.name for eq in tape], tape.leaves == [x]
    (['multiply', 'add'], True)
    """
    roots = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"tape_of: expected tensors, got {type(t).__name__}")
        if t._node is not None:
            roots.append(t._node)
        elif t._rg:
            roots.append(t)
    return read_tape(roots)


class _SourceRecorder(Recorder):
    __slots__ = ()

    def created(self, node: Any) -> None:
        line = user_frame(capture_stack(1))
        if line is not None:
            node.extras()["source"] = line

    def __repr__(self) -> str:
        return "<source_lines>"


class source_lines:  # noqa: N801 (used as a context manager, like a function)
    """Context manager: equations recorded inside remember the user's line of code.

    Capturing a line walks the stack, a few microseconds per op: use it to
    look at a computation (the explorer, ``%%autodiff``), not to train.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> with wg.source_lines():
    ...     y = x * x
    >>> wg.tape_of(y)[0].source.text
    'y = x * x'
    """

    __slots__ = ("_token",)

    def __enter__(self) -> source_lines:
        self._token = RECORDERS.set(RECORDERS.get() + (_SourceRecorder(),))
        return self

    def __exit__(self, *exc: object) -> None:
        RECORDERS.reset(self._token)


class _ValueKeeper(Recorder):
    __slots__ = ()

    def created(self, node: Any) -> None:
        node.extras()["value"] = node.out

    def __repr__(self) -> str:
        return "<keep_values>"


class keep_values:  # noqa: N801 (used as a context manager, like a function)
    """Context manager: equations recorded inside keep their output values for viewers.

    The tape normally keeps only what some rule reads and frees it after
    ``backward()``; inside this block every equation also keeps its output, so
    ``Equation.value`` can be shown before and after the backward pass (the
    explorer, ``%%autodiff``). It holds every intermediate array as long as
    the graph lives: use it to look at a computation, not to train.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> with wg.keep_values():
    ...     y = x * x + 1.0
    >>> y.backward()
    >>> [eq.value for eq in wg.tape_of(y)]
    [9.0, 10.0]
    """

    __slots__ = ("_token",)

    def __enter__(self) -> keep_values:
        self._token = RECORDERS.set(RECORDERS.get() + (_ValueKeeper(),))
        return self

    def __exit__(self, *exc: object) -> None:
        RECORDERS.reset(self._token)
