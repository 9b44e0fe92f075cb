"""Per-context state: grad mode, open gradient tapes, nesting of transforms.

Everything lives in :mod:`contextvars`, so each thread (and each asyncio task)
has its own grad mode and its own tapes; there are no global flags.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any

from .levels import REV_ORDER, next_order

GRAD_ENABLED: ContextVar[bool] = ContextVar("wengert_grad_enabled", default=True)
#: The recording gradient tapes, innermost last.
TAPES: ContextVar[tuple[Any, ...]] = ContextVar("wengert_tapes", default=())
#: How many functional reverse transforms (``grad``, ``vjp``) are running.
TRANSFORM_DEPTH: ContextVar[int] = ContextVar("wengert_transform_depth", default=0)


class _GradMode(contextlib.ContextDecorator):
    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._tokens: list[Any] = []

    def __enter__(self) -> None:
        self._tokens.append(GRAD_ENABLED.set(self._enabled))

    def __exit__(self, *exc: object) -> None:
        GRAD_ENABLED.reset(self._tokens.pop())


def no_grad() -> _GradMode:
    """Context manager (or decorator) in which no operation is recorded.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> with wg.no_grad():
    ...     y = x * x
    >>> y.requires_grad
    False
    """
    return _GradMode(False)


def enable_grad() -> _GradMode:
    """Context manager (or decorator) that turns recording back on inside ``no_grad``.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> with wg.no_grad():
    ...     with wg.enable_grad():
    ...         y = x * x
    >>> y.requires_grad
    True
    """
    return _GradMode(True)


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad are recorded here."""
    return GRAD_ENABLED.get()


class transform_scope:  # noqa: N801 (used as a context manager, like a function)
    """``with transform_scope():`` marks a running reverse transform (a new, inner level).

    Nested transforms then record their backward pass, and an op that meets
    this transform's tensors and an outer level's dual numbers is handled at
    this (inner) level first.
    """

    __slots__ = ("_tokens",)

    def __enter__(self) -> None:
        self._tokens = (TRANSFORM_DEPTH.set(TRANSFORM_DEPTH.get() + 1),
                        REV_ORDER.set(next_order()))

    def __exit__(self, *exc: object) -> None:
        depth, order = self._tokens
        REV_ORDER.reset(order)
        TRANSFORM_DEPTH.reset(depth)
