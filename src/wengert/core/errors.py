"""The errors wengert raises on misuse, as classes.

Each class subclasses the builtin exception the same error has always been
(``RuntimeError``, ``TypeError``, ``ValueError``...), so ``except RuntimeError``
and code that matches the message keep working; the messages say what happened
and how to fix it. Code that must tell errors apart (the explainer, the
anomaly detector, the cell magic) tests the class with ``isinstance``, never
the message text.

Every class also subclasses :class:`WengertError`, so ``except wg.WengertError``
catches any of them.

Examples
--------
>>> import wengert as wg
>>> x = wg.tensor(2.0, requires_grad=True)
>>> y = x * x
>>> y.backward()
>>> try:
...     y.backward()
... except GraphFreedError as e:
...     print(type(e).__name__, isinstance(e, RuntimeError))
GraphFreedError True
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "WengertError",
    "GraphFreedError",
    "InplaceModifiedError",
    "LeafInplaceError",
    "Escaped",
    "EscapedLevelError",
    "EscapedTracerError",
    "NoRuleError",
    "NoForwardRule",
    "NoVJPError",
    "LostDerivativeError",
    "UnhashableTracerError",
    "TraceError",
    "GuardError",
    "UnsupportedDtypeError",
    "NoGradientError",
    "HookError",
    "AnomalyError",
    "PerformanceWarning",
    "error_name",
]


class WengertError(Exception):
    """The base of every error class here (each also subclasses a builtin exception)."""

    def __reduce__(self) -> Any:
        # Pickled (a worker process's error): the message and the plain attributes; a
        # node holds the op's rules and values, which need not pickle, so it is dropped.
        state = {k: v for k, v in self.__dict__.items() if k != "node"}
        return type(self), self.args, state or None


class GraphFreedError(WengertError, RuntimeError):
    """A backward pass reached a node whose saved values an earlier one freed (a second
    ``backward()`` without ``retain_graph=True``)."""


class InplaceModifiedError(WengertError, RuntimeError):
    """A value a node saved for its VJP was modified in place before the backward pass
    read it (its version moved on).

    Attributes
    ----------
    node : Node or None
        The node whose rule needs the value.
    index : int
        Which input (``-1``: the node's output).
    saved, now : int
        The version the node saw, the version found.
    """

    node: Any = None
    index: int = -1
    saved: int = 0
    now: int = 0


class LeafInplaceError(WengertError, RuntimeError):
    """An in-place operation on a leaf that requires grad (outside ``wg.no_grad()``)."""


class Escaped(WengertError):
    """A traced value used after the transform or trace it belongs to ended (the base of
    :class:`EscapedLevelError` and :class:`EscapedTracerError`)."""


class EscapedLevelError(Escaped, RuntimeError):
    """A tensor or dual number of a finished transform (``wg.grad``, ``wg.jvp``,
    ``wg.compile``...) was used again: its level leaked out."""


class TraceError(WengertError, TypeError):
    """Something a trace cannot capture faithfully (the message says what to do)."""


class EscapedTracerError(Escaped, TraceError):
    """A graph tracer was used after its trace ended."""


class UnhashableTracerError(TraceError):
    """A graph tracer was used as a dict key or set member (as NumPy arrays and
    ``jax.jit``'s tracers, it is unhashable)."""


class NoRuleError(WengertError, TypeError):
    """An op or a custom function has no derivative rule for the mode asked."""


class NoForwardRule(NoRuleError):
    """A dual number (forward mode) reached an op or a ``custom_vjp`` function that has no
    forward-mode rule. ``wg.jacobian`` catches it and finishes in reverse mode."""


class NoVJPError(NoRuleError):
    """Reverse mode reached a function with no VJP rule: a NumPy function wengert has no
    rule for, or a ``custom_vjp`` function before its ``defvjp``. (A ``custom_jvp``
    function differentiated before its ``defjvp`` raises :class:`NoRuleError`.)"""


class LostDerivativeError(WengertError, TypeError):
    """A conversion or a write would drop a derivative: a tensor that carries a gradient
    turned into a NumPy array or a Python number, or written into a plain ndarray."""


class GuardError(WengertError, RuntimeError):
    """A graph was run on arguments for which a guard of its trace does not hold."""


class UnsupportedDtypeError(WengertError, TypeError):
    """An op was differentiated on values of a dtype its rules do not hold for (complex
    values through real-only rules, object arrays)."""


class NoGradientError(WengertError, RuntimeError):
    """``backward()`` on a value that no tensor requiring grad flows into."""


class HookError(WengertError, RuntimeError):
    """A hook (``register_hook``) returned a gradient of the wrong shape."""


class AnomalyError(WengertError, RuntimeError):
    """``wg.detect_anomaly`` found a NaN or an infinity: an op's output in the forward pass,
    or a cotangent a rule returned in the backward pass.

    Attributes
    ----------
    node : Node or None
        The node whose output or rule gave it.
    """

    node: Any = None


class PerformanceWarning(WengertError, UserWarning):
    """A computation that gives the right result at a cost another way avoids (the
    message says which): ``wg.jacfwd`` of a function with many more inputs than outputs.

    Silence it with ``warnings.filterwarnings("ignore", category=wg.errors.PerformanceWarning)``.
    """


def error_name(error: BaseException) -> str:
    """The class name of ``error`` for a message, with the builtin it subclasses for the
    classes here (users know ``TypeError``; the class says which one).

    Examples
    --------
    >>> error_name(GraphFreedError("freed")), error_name(ValueError("bad"))
    ('GraphFreedError (a RuntimeError)', 'ValueError')
    """
    name = type(error).__name__
    if not isinstance(error, WengertError):
        return name
    builtin = next(c for c in type(error).__mro__ if c.__module__ == "builtins")
    return f"{name} (a {builtin.__name__})"
