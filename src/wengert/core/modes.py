"""Per-context state: grad mode, open recorders (gradient tapes...), nesting of transforms.

Everything lives in :mod:`contextvars`, so each thread (and each asyncio task)
has its own grad mode and its own tapes; there are no global flags.
"""

from __future__ import annotations

import functools
import inspect
from contextvars import ContextVar
from typing import Any

from wengert.core.levels import close_level, open_level

__all__ = [
    "GRAD_ENABLED",
    "RECORDERS",
    "TRANSFORM_DEPTH",
    "Recorder",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "transform_scope",
    "recorder_scope",
    "ContextPush",
]

GRAD_ENABLED: ContextVar[bool] = ContextVar("wengert_grad_enabled", default=True)
#: The open recorders (gradient tapes, anomaly mode, ...), innermost last.
RECORDERS: ContextVar[tuple[Any, ...]] = ContextVar("wengert_recorders", default=())
#: How many functional reverse transforms (``grad``, ``vjp``) are running.
TRANSFORM_DEPTH: ContextVar[int] = ContextVar("wengert_transform_depth", default=0)


class Recorder:
    """Something told about operations as tensors record them.

    Open recorders live in :data:`RECORDERS` (see :func:`recorder_scope`).
    While one is open the recording path asks each of them about every op on
    tensors (so an open recorder costs a little on every op):

    * ``recording`` and :meth:`tracks`: a recording recorder that tracks one
      of an op's input tensors has the op recorded even when nothing requires
      grad (a :class:`~wengert.GradientTape` watching a tensor), and gets the
      node through :meth:`add`;
    * :meth:`created` sees every node recorded while it is open (the creating
      line of code in anomaly mode).
    """

    __slots__ = ()

    #: Whether ops on the tensors this recorder tracks are recorded for it.
    recording = False

    def tracks(self, t: Any) -> bool:
        """Whether ops on tensor ``t`` must be recorded for this recorder."""
        return False

    def owns(self, t: Any) -> bool:
        """Whether ``t`` is watched by or was computed on this recorder (no side effects)."""
        return False

    def add(self, node: Any) -> None:
        """A node recorded on a tensor this recorder tracks."""

    def created(self, node: Any) -> None:
        """Any node recorded while this recorder is open."""


class ContextPush:
    """Base of the ``with`` blocks that add one item at the end (innermost) of the tuple a
    context variable holds, for the block; a subclass names the variable (``context``)."""

    __slots__ = ("item", "_token")
    context: ContextVar[tuple[Any, ...]]

    def __init__(self, item: Any) -> None:
        self.item = item

    def __enter__(self) -> Any:
        self._token = self.context.set(self.context.get() + (self.item,))
        return self.item

    def __exit__(self, *exc: object) -> None:
        self.context.reset(self._token)


class recorder_scope(ContextPush):  # noqa: N801 (used as a context manager, like a function)
    """``with recorder_scope(r):`` opens recorder ``r`` (innermost) for the block."""

    __slots__ = ()
    context = RECORDERS


class _GradMode:
    """``with`` block or decorator setting the grad mode (see :func:`no_grad`)."""

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._tokens: list[Any] = []

    def __repr__(self) -> str:
        return "wg.enable_grad()" if self._enabled else "wg.no_grad()"

    def __enter__(self) -> None:
        self._tokens.append(GRAD_ENABLED.set(self._enabled))

    def __exit__(self, *exc: object) -> None:
        GRAD_ENABLED.reset(self._tokens.pop())

    def __call__(self, func: Any) -> Any:
        """Decorate ``func``: it runs in this mode. A generator function's body runs in it
        at each resumption (and the caller's mode between them), as in PyTorch."""
        enabled = self._enabled
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args: Any, **kwargs: Any) -> Any:
                return (yield from _resumed_in(func(*args, **kwargs), enabled))
            return generator
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def coroutine(*args: Any, **kwargs: Any) -> Any:
                with _GradMode(enabled):  # (an awaited coroutine runs in the task's context)
                    return await func(*args, **kwargs)
            return coroutine

        @functools.wraps(func)
        def function(*args: Any, **kwargs: Any) -> Any:
            with _GradMode(enabled):
                return func(*args, **kwargs)
        return function


def _resumed_in(gen: Any, enabled: bool) -> Any:
    """Drive generator ``gen``, each of its steps in grad mode ``enabled``."""
    send, value = gen.send, None
    while True:
        try:
            with _GradMode(enabled):
                item = send(value)
        except StopIteration as stop:
            return stop.value
        send = gen.send
        try:
            value = yield item
        except GeneratorExit:
            with _GradMode(enabled):
                gen.close()
            raise
        except BaseException as e:
            send, value = _thrower(gen, e), None


def _thrower(gen: Any, error: BaseException) -> Any:
    """A ``send`` that throws ``error`` into ``gen`` instead (``generator.throw``)."""
    return lambda _: gen.throw(error)


def _mode_or_decorated(enabled: bool, func: Any) -> Any:
    mode = _GradMode(enabled)
    if func is None:
        return mode
    if not callable(func):
        name = "enable_grad" if enabled else "no_grad"
        raise TypeError(
            f"wg.{name}() takes no argument but the function it decorates (got "
            f"{type(func).__name__}); use `with wg.{name}():` or @wg.{name} on a function."
        )
    return mode(func)


def no_grad(func: Any = None) -> Any:
    """Context manager (or decorator) in which no operation is recorded.

    ``@wg.no_grad()`` and ``@wg.no_grad`` both decorate; a decorated generator
    function runs its body without recording at each step.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> with wg.no_grad():
    ...     y = x * x
    >>> y.requires_grad
    False
    """
    return _mode_or_decorated(False, func)


def enable_grad(func: Any = None) -> Any:
    """Context manager (or decorator) that turns recording back on inside ``no_grad``.

    Examples
    --------
    >>> import wengert as wg
    >>> @wg.enable_grad()
    ... def square(v):
    ...     return v * v
    >>> with wg.no_grad():
    ...     square(wg.tensor(2.0, requires_grad=True)).requires_grad
    True
    """
    return _mode_or_decorated(True, func)


class set_grad_enabled(_GradMode):  # noqa: N801 (used as a function, as in PyTorch)
    """Set the grad mode to ``mode``: ``no_grad()`` when False, ``enable_grad()`` when True.

    As PyTorch's ``torch.set_grad_enabled``, it acts at once, so that it works three
    ways: as a ``with`` block (the mode before it comes back at the end, also when an
    exception leaves it), as a decorator of a function (which then runs in ``mode``;
    the mode around the decoration is unchanged), and as a plain call, which sets the
    mode for what follows in this thread (or asyncio task) until it is set again. Each
    thread has its own mode (a new thread starts with grad enabled).

    Parameters
    ----------
    mode : bool
        Whether operations on tensors that require grad are recorded.

    Raises
    ------
    TypeError
        When ``mode`` is not a bool (``True``/``False``, or NumPy's ``np.True_``).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> training = False
    >>> with wg.set_grad_enabled(training):
    ...     (x * x).requires_grad
    False
    >>> wg.is_grad_enabled()
    True
    >>> @wg.set_grad_enabled(False)
    ... def evaluate(v):
    ...     return v * v
    >>> evaluate(x).requires_grad, (x * x).requires_grad
    (False, True)
    >>> _ = wg.set_grad_enabled(False)
    >>> (x * x).requires_grad
    False
    >>> _ = wg.set_grad_enabled(True)
    >>> (x * x).requires_grad
    True
    """

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:
            if type(mode).__name__ != "bool" or type(mode).__module__ != "numpy":
                raise TypeError(
                    "set_grad_enabled(): argument 'mode' (position 1) must be bool, not "
                    f"{type(mode).__name__}")
            mode = bool(mode)  # (np.True_: a comparison of NumPy values)
        super().__init__(mode)
        self._prev = GRAD_ENABLED.get()
        GRAD_ENABLED.set(mode)  # at once, as in PyTorch: a plain call sets the mode

    def __repr__(self) -> str:
        return f"wg.set_grad_enabled({self._enabled})"

    def __enter__(self) -> None:
        GRAD_ENABLED.set(self._enabled)

    def __exit__(self, *exc: object) -> None:
        GRAD_ENABLED.set(self._prev)

    def __call__(self, func: Any) -> Any:
        """Decorate ``func`` (see :meth:`_GradMode.__call__`); the mode set when this
        was made is undone: decorating a function does not change the mode around it."""
        GRAD_ENABLED.set(self._prev)
        if not callable(func):
            raise TypeError(
                f"wg.set_grad_enabled({self._enabled}) decorates a function (got "
                f"{type(func).__name__}); use `with wg.set_grad_enabled(mode):` for a block.")
        return super().__call__(func)


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad are recorded here.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.is_grad_enabled()
    True
    """
    return GRAD_ENABLED.get()


class transform_scope:  # noqa: N801 (used as a context manager, like a function)
    """``with transform_scope() as level:`` runs a reverse transform at a new, inner level.

    The transform's tensors get ``level``; values of outer levels are constants
    to it (see :mod:`wengert.core.levels`). ``transform_scope(level)`` opens an
    existing level again while a pullback of it runs (``wg.vjp``'s ``vjp_fn``).
    """

    __slots__ = ("_token", "_level", "_again")

    def __init__(self, level: int | None = None) -> None:
        self._again = level

    def __enter__(self) -> int:
        self._token = TRANSFORM_DEPTH.set(TRANSFORM_DEPTH.get() + 1)
        self._level = open_level(self._again)
        return self._level

    def __exit__(self, *exc: object) -> None:
        close_level(self._level)
        TRANSFORM_DEPTH.reset(self._token)
