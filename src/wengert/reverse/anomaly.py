"""Anomaly detection: find the operation, and the line of your code, that made a NaN.

Inside ``with wg.detect_anomaly():`` every recorded operation remembers the
stack that created it, and the backward sweep checks every cotangent a VJP
rule returns: the first NaN or infinity raises a :class:`RuntimeError` that
names the op (``SqrtBackward``), which of its inputs got the bad gradient,
and the line of user code that recorded the op. With
``check_forward=True`` a NaN or infinity in the output of a recorded
operation raises at once, during the forward pass.

It is built on the two public hooks of the core: a
:class:`~wengert.core.modes.Recorder` that sees every node created (and keeps
its creating stack) and a :class:`~wengert.core.sweep.SweepObserver` that sees
every cotangent the sweep sends. Both live in context variables, so the mode
costs nothing when it is off (the sweep reads its observers once per sweep).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([0.0, 4.0], requires_grad=True)
>>> try:
...     with wg.detect_anomaly():
...         y = np.sqrt(x)
...         loss = (y * 0.0).sum()
...         loss.backward()
... except RuntimeError as err:
...     print(str(err).splitlines()[0])
Function 'SqrtBackward' returned nan values in its 0th output. The operation was created at:
"""

from __future__ import annotations

import contextlib
import linecache
import traceback
from contextvars import ContextVar
from typing import Any

import numpy as np
from wengert.core.bind import kind_of
from wengert.core.errors import AnomalyError
from wengert.core.modes import RECORDERS, Recorder
from wengert.core.source import capture_stack, frame_heading, is_library
from wengert.core.sweep import OBSERVERS, SweepObserver

__all__ = ["detect_anomaly", "is_anomaly_enabled", "creation_stack", "ANOMALY"]

#: The active :class:`detect_anomaly` context (its settings), or ``None``.
ANOMALY: ContextVar[Any] = ContextVar("wengert_anomaly", default=None)

_is_library = is_library
_capture = capture_stack


class _Recorder(Recorder):
    """The recorder ``detect_anomaly`` opens: it sees every node created and keeps the
    stack that created it (and checks its output, with ``check_forward``).

    It is not recording (``recording`` is False), so it never makes an op be
    recorded, nor a gradient computation record its backward pass.
    """

    __slots__ = ("mode",)

    def __init__(self, mode: detect_anomaly) -> None:
        self.mode = mode

    def created(self, node: Any) -> None:
        self.mode.record(node)

    def __repr__(self) -> str:
        return "<detect_anomaly>"


class _Checker(SweepObserver):
    """The sweep observer ``detect_anomaly`` opens: the first cotangent that is not
    finite raises, naming the op and where it was created."""

    def step(self, node: Any, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        for i, _, ct in sent:
            check_cotangent(node, i, ct)

    def hooked(self, node: Any, before: Any, after: Any, hooks: list[Any]) -> None:
        if after is None or after is before or nonfinite(before) is not None:
            return
        kind = nonfinite(after)
        if kind is not None:
            names = ", ".join(repr(getattr(h, "__qualname__", type(h).__name__)) for h in hooks)
            err = AnomalyError(
                f"A hook registered on the output of '{node.name}' (register_hook: {names}) "
                f"returned {kind} values for a finite gradient."
                + (" The operation was created at:\n" + _describe(_user_frame(frames))
                   if (frames := (node.extra or {}).get("stack")) is not None else "")
            )
            err.node = node
            raise err


def _user_frame(frames: list[tuple[str, int, str]]) -> tuple[str, int, str] | None:
    for f in frames:
        if not is_library(f[0]):
            return f
    return frames[0] if frames else None


def _describe(frame: tuple[str, int, str]) -> str:
    """One traceback entry: its heading (a notebook cell named ``Cell``, not by the
    kernel's temporary file) and its line of code."""
    filename, lineno, name = frame
    line = linecache.getline(filename, lineno).strip()
    text = "  " + frame_heading(filename, lineno, name)
    return text + (f"\n    {line}" if line else "")


def _summary(frames: list[tuple[str, int, str]]) -> traceback.StackSummary:
    """A :class:`traceback.StackSummary`, outermost frame first."""
    return traceback.StackSummary.from_list(
        [traceback.FrameSummary(f, n, name) for f, n, name in reversed(frames)]
    )


def _stack_note(frames: list[tuple[str, int, str]]) -> str:
    user = [f for f in frames if not _is_library(f[0])][:10]
    return (
        "Traceback of the forward call that created the operation (most recent call last):\n"
        + "\n".join(_describe(f) for f in reversed(user))
    )


class detect_anomaly(contextlib.ContextDecorator):
    """Context manager (or decorator) that finds where NaNs and infinities come from.

    While it is active, each recorded operation remembers the line of user
    code that created it (this costs a stack walk per operation, so use it to
    debug, not to train). In the backward pass the first VJP rule that
    returns a NaN or an infinity raises a ``RuntimeError`` naming the op, the
    input whose gradient went bad, and that line. Nothing is recorded or
    checked when the mode is off.

    Parameters
    ----------
    check_forward : bool
        Also check the output of every recorded operation in the forward pass,
        and raise at the first NaN or infinity.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> x = wg.tensor([-1.0, 2.0], requires_grad=True)
    >>> try:
    ...     with wg.detect_anomaly(check_forward=True):
    ...         y = np.log(x)
    ... except RuntimeError as err:
    ...     print(str(err).splitlines()[0][:58])
    Function 'log' returned nan values in its output during th

    Gradients that stay finite are unaffected:

    >>> with wg.detect_anomaly():
    ...     loss = (x * x).sum()
    ...     loss.backward()
    >>> x.grad
    array([-2.,  4.])
    """

    def __init__(self, check_forward: bool = False) -> None:
        self.check_forward = bool(check_forward)
        self._tokens: list[Any] = []

    def __enter__(self) -> detect_anomaly:
        self._tokens.append((
            ANOMALY.set(self),
            RECORDERS.set(RECORDERS.get() + (_Recorder(self),)),
            OBSERVERS.set(OBSERVERS.get() + (_CHECKER,)),
        ))
        return self

    def __exit__(self, *exc: object) -> None:
        token, recorders_token, observers_token = self._tokens.pop()
        OBSERVERS.reset(observers_token)
        RECORDERS.reset(recorders_token)
        ANOMALY.reset(token)

    def __repr__(self) -> str:
        return f"detect_anomaly(check_forward={self.check_forward})"

    # -- called by the recording path and the backward sweep ------------------
    def record(self, node: Any) -> None:
        """Remember the creating stack of ``node``; check its output if asked."""
        frames = _capture(2)
        node.extras()["stack"] = frames
        if self.check_forward:
            kind = nonfinite(node.out)
            if kind is not None:
                err = AnomalyError(
                    f"Function '{node.op.name}' returned {kind} values in its output during the "
                    "forward pass. The operation was called at:\n"
                    + _describe(_user_frame(frames))
                )
                err.add_note(_stack_note(frames))
                err.node = node
                raise err


def is_anomaly_enabled() -> bool:
    """Whether a :class:`detect_anomaly` context is active here.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.detect_anomaly():
    ...     wg.is_anomaly_enabled()
    True
    >>> wg.is_anomaly_enabled()
    False
    """
    return ANOMALY.get() is not None


def creation_stack(t: Any) -> traceback.StackSummary | None:
    """The stack that created a tensor's operation (recorded in anomaly mode), or ``None``.

    Accepts a tensor or its ``grad_fn``. Outermost frame first, like
    :func:`traceback.extract_stack`.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> x = wg.tensor(1.0, requires_grad=True)
    >>> with wg.detect_anomaly():
    ...     y = np.exp(x)
    >>> creation_stack(y)[-1].line
    'y = np.exp(x)'
    >>> creation_stack(np.exp(x)) is None
    True
    """
    node = getattr(t, "node", None)  # a GradFn
    if node is None:
        node = getattr(t, "_node", None)
    if node is None or node.extra is None or "stack" not in node.extra:
        return None
    frames = node.extra["stack"]
    return _summary([f for f in frames if not _is_library(f[0])] or frames)


# -- the checks -----------------------------------------------------------------
def nonfinite(v: Any) -> str | None:
    """``"nan"`` or ``"inf"`` if the value holds one (NaN first), else ``None``."""
    t = type(v)
    if t is float:
        if v != v:
            return "nan"
        return "inf" if v in (float("inf"), float("-inf")) else None
    while True:
        kind = kind_of(v)  # a tensor, a dual number: the value beneath
        if kind is None:
            break
        v = kind.primal(v)
    parts = getattr(v, "parts", None)  # several outputs' cotangents (wengert.custom.rules)
    if isinstance(v, (tuple, list)) or parts is not None:
        kinds = [nonfinite(p) for p in (v if parts is None else parts) if p is not None]
        return "nan" if "nan" in kinds else ("inf" if "inf" in kinds else None)
    if type(v) is float:
        return nonfinite(v)
    try:
        a = np.asarray(v)
    except Exception:  # pragma: no cover - not an array at all
        return None
    if a.dtype.kind not in "fc":
        return None
    if np.isnan(a).any():
        return "nan"
    if np.isinf(a).any():
        return "inf"
    return None


def check_cotangent(node: Any, index: int, ct: Any) -> None:
    """Raise if the cotangent ``ct`` that ``node``'s rule gave input ``index`` is not finite."""
    kind = nonfinite(ct)
    if kind is None:
        return
    extra = node.extra
    frames = extra.get("stack") if extra else None
    message = f"Function '{node.name}' returned {kind} values in its {index}th output."
    if frames is None:
        err = AnomalyError(
            message + " The operation was recorded outside wg.detect_anomaly(), so the line "
            "that created it is unknown; run the forward pass inside the context as well."
        )
    else:
        err = AnomalyError(
            message + " The operation was created at:\n" + _describe(_user_frame(frames))
        )
        err.add_note(_stack_note(frames))
    err.node = node
    raise err


_CHECKER = _Checker()
