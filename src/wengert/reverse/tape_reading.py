"""Reading tapes: the equations behind tensors, and the lines of code that recorded them.

:func:`tape_of` lists the equations recorded behind some tensors (a
:class:`~wengert.core.equations.Tape`); inside :func:`source_lines` every recorded
equation also remembers the line of user code that created it; inside
:func:`keep_values` (the view-keeping mode, see :mod:`wengert.core.kept`) every
equation keeps its value and every ``backward()`` keeps the sweep it ran, so the
views can come after it. The explorer and explainer of the Jupyter layer read
tapes through these and the sweep observers of :mod:`wengert.core.sweep` only.
"""

from __future__ import annotations

from typing import Any

from wengert.core.equations import Tape, read_tape
from wengert.core.kept import KEEPER, Keeper, budget_text
from wengert.core.modes import RECORDERS, Recorder, recorder_scope
from wengert.core.source import user_line
from wengert.reverse.tensor import Tensor

__all__ = ["tape_of", "source_lines", "keep_values", "keep_budget", "view_mode", "hooks_of"]


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


def hooks_of(t: Any) -> list[Any]:
    """The hooks registered on a leaf tensor, or on the output of a node
    (``register_hook``), in the order they run.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(1.0, requires_grad=True)
    >>> handle = x.register_hook(print)
    >>> hooks_of(x) == [print], hooks_of((x * 2.0).grad_fn.node)
    (True, [])
    """
    extra = t._extra if isinstance(t, Tensor) else getattr(t, "extra", None)
    return list(extra.get("hooks") or ()) if extra else []


def note_versions(node: Any) -> None:
    """Note, for the views, the version of each leaf input of ``node`` that no rule reads
    (``in_seen``; a read one is checked through its saved version already), so that a
    leaf changed in place afterwards (an optimizer step) is not shown with its new value
    as the one the equation used (:func:`wengert.core.equations.stale_input`)."""
    n = node.nin
    noted = None
    for i in range(n):
        parent, _, holder, _ = node.edge(i)
        if holder is None and isinstance(parent, Tensor):
            version = parent._version
            if noted is None:
                noted = []
            noted.append((i, version, version.version))
    if noted is not None:
        node.extras()["in_seen"] = tuple(noted)


class _SourceRecorder(Recorder):
    __slots__ = ()

    def created(self, node: Any) -> None:
        line = user_line(1)
        if line is not None:
            node.extras()["source"] = line

    def __repr__(self) -> str:
        return "<source_lines>"


class _ViewRecorder(Recorder):
    """The view-keeping mode's recorder: the versions the views check and, when ``lines``,
    the user's line of each equation."""

    __slots__ = ("lines",)

    def __init__(self, lines: bool) -> None:
        self.lines = lines

    def created(self, node: Any) -> None:
        extras = node.extras()  # (a view's output notes its memory's version there)
        note_versions(node)
        if self.lines:
            line = user_line(1)
            if line is not None:
                extras["source"] = line

    def __repr__(self) -> str:
        return "<view_mode>"


class source_lines(recorder_scope):  # noqa: N801 (used as a context manager, like a function)
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

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(_SourceRecorder())

    def __enter__(self) -> source_lines:
        super().__enter__()
        return self

    def __repr__(self) -> str:
        return "wg.source_lines()"


class _ValueKeeper(Recorder):
    __slots__ = ("keeper",)

    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper

    def created(self, node: Any) -> None:
        extras = node.extras()
        extras["value"] = node.out
        extras["keeper"] = self.keeper  # a backward() run outside the block keeps too
        note_versions(node)

    def __repr__(self) -> str:
        return "<keep_values>"


class keep_values:  # noqa: N801 (used as a context manager, like a function)
    """Context manager: the view-keeping mode, so the views can come after ``backward()``.

    The tape normally keeps only what some rule reads and frees it during
    ``backward()``. Inside this block every equation also keeps its output, so
    ``Equation.value`` can be shown before and after the backward pass, and every
    ``backward()`` of a graph recorded or swept here keeps the sweep it ran (the
    cotangent each equation received, what it sent to each input, what hooks did, what
    ``.grad`` got), so ``wg.explore(y)`` and ``wg.explain(y, x)`` called after it show
    the real sweep instead of refusing. ``backward()`` itself is unchanged (a second
    one still raises). What the sweeps keep is bounded by ``budget`` (oldest released
    first); the values held by the graph live as long as the graph. Use it to look at a
    computation, not to train.

    Parameters
    ----------
    budget : int or str, optional
        The most the kept sweeps may hold, in bytes or as text (``"1 GB"``); by default
        that of the view-keeping mode already on here, else 256 MB.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> with wg.keep_values():
    ...     y = x * x + 1.0
    >>> y.backward()
    >>> [eq.value for eq in wg.tape_of(y)]
    [9.0, 10.0]
    >>> [(step.op, step.g) for step in wg.tape_of(y)[0].sweep.steps]
    [('add', 1.0), ('multiply', 1.0)]
    """

    __slots__ = ("_token", "_keeper_token", "keeper")

    def __init__(self, budget: Any = None) -> None:
        outer = KEEPER.get()
        if budget is None and outer is not None:
            self.keeper = outer
        else:
            self.keeper = Keeper() if budget is None else Keeper(budget)

    def __repr__(self) -> str:
        return f"wg.keep_values(budget={self.keeper.budget})"

    def __enter__(self) -> keep_values:
        self._keeper_token = KEEPER.set(self.keeper)
        self._token = RECORDERS.set(RECORDERS.get() + (_ValueKeeper(self.keeper),))
        return self

    def __exit__(self, *exc: object) -> None:
        RECORDERS.reset(self._token)
        KEEPER.reset(self._keeper_token)


def keep_budget(budget: Any = None) -> int:
    """The memory budget of the view-keeping mode on here; given ``budget`` (bytes, or
    text such as ``"1 GB"``), set it first (kept sweeps past it are released now, oldest
    first).

    The view-keeping mode is on inside ``wg.keep_values()`` and, in a notebook, in every
    cell after ``%load_ext wengert``.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values(budget="64 MB"):
    ...     wg.keep_budget(), wg.keep_budget("128 MB")
    (67108864, 134217728)
    """
    keeper = KEEPER.get()
    if keeper is None:
        raise RuntimeError(
            "keep_budget: the view-keeping mode is not on here, so nothing is kept after "
            "backward(). Turn it on with `with wg.keep_values(budget=...):` (or "
            "`%load_ext wengert` in a notebook, for every cell)."
        )
    if budget is not None:
        keeper.set_budget(budget)
    return keeper.budget


class view_mode:  # noqa: N801 (used as a context manager, like a function)
    """The view-keeping mode of ``keeper`` (and, when ``keeper.lines``, the lines of code
    of every equation): what ``%load_ext wengert`` enters for each cell.

    ``enter()`` and ``exit()`` are the two halves of the ``with`` statement, for code
    that opens and closes it at two different moments (before and after a cell).

    Examples
    --------
    >>> import wengert as wg
    >>> from wengert.core.kept import Keeper
    >>> with view_mode(Keeper(lines=True)):
    ...     x = wg.tensor(2.0, requires_grad=True)
    ...     y = x * x
    >>> wg.tape_of(y)[0].source.text
    'y = x * x'
    """

    __slots__ = ("keeper", "_tokens")

    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper
        self._tokens: list[Any] = []

    def enter(self) -> None:
        self._tokens.append((KEEPER.set(self.keeper),
                             RECORDERS.set(RECORDERS.get() + (_ViewRecorder(self.keeper.lines),))))

    def exit(self) -> None:
        if not self._tokens:
            return
        keeper_token, recorders_token = self._tokens.pop()
        try:
            RECORDERS.reset(recorders_token)
            KEEPER.reset(keeper_token)
        except (ValueError, RuntimeError):  # entered in another context: leave it
            pass

    def __enter__(self) -> view_mode:
        self.enter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.exit()

    def __repr__(self) -> str:
        return f"<view_mode: budget {budget_text(self.keeper.budget)}>"
