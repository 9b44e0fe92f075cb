"""Primitive records: one :class:`Op` holds an op's NumPy forward and its rules.

A rule is written with wengert's own functions, so the same code runs on plain
NumPy values (a fast backward pass) and on tensors (``create_graph=True``,
which records the backward pass and gives higher derivatives).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Op", "PerInput", "Registry", "ALL_INPUTS"]


class Op:
    """A primitive: its NumPy forward, its VJP rules, a JVP slot, display data.

    Parameters
    ----------
    name : str
        Unique name, shown on the tape (``"sin"``, ``"matmul"``).
    impl : callable
        ``impl(*inputs, **params)`` on NumPy values; returns one NumPy value.
    vjps : tuple of callables or None, or PerInput
        One rule per positional input: ``rule(g, ans, *inputs, **params)``
        returns the cotangent of that input given the output cotangent ``g``.
        ``None`` marks an input that is never differentiated (an index array).
        A :class:`PerInput` makes the op variadic (``nin == -1``).
    jvp : callable, optional
        ``jvp(tangents, ans, *inputs, **params)`` with ``None`` for zero
        tangents; filled by forward mode.
    scalar_impl : callable, optional
        A fast forward for Python floats (``math.sin``); a ``ValueError``,
        ``OverflowError`` or ``ZeroDivisionError`` falls back to ``impl``.
    reads : tuple of int, or ALL_INPUTS
        Inputs whose *values* the rules read. Modifying one of them in place
        after the op was recorded makes ``backward()`` raise. The rules may
        look at the other inputs' shape and dtype only: the tape keeps a
        large unread input as a zero-stride stand-in, so it is freed as soon
        as nothing else holds it (as NumPy code without a tape would). The
        registry sweep checks this declaration for every op.
    reads_out : bool
        Whether the rules read the output value ``ans`` (otherwise, as for an
        unread input, shape and dtype only).
    broadcasting : bool
        Elementwise op under NumPy broadcasting: each input's cotangent may
        come out with the output's shape.
    unbroadcast : callable, optional
        For a broadcasting op, ``unbroadcast(ct, shape)`` sums a cotangent back
        to an input's shape (``wengert.ops.broadcast.sum_to``); the backward
        sweep calls it when the shapes differ.
    symbol, formula : str
        Display data for reprs and widgets (``"sin"``, ``"∂/∂x = cos(x)"``).
    view : bool
        The NumPy forward may return a view of input 0 (reshape, slicing):
        the output then shares the input's version counter, as in PyTorch.
    scalar_deriv : tuple of callables, optional
        For elementwise ops with ``scalar_impl``: ``d_i(ans, *inputs)`` is the
        partial derivative with respect to input ``i`` on Python floats. Dual
        numbers over floats use it to skip the rule call chain; the registry
        sweep checks it against the JVP rule.
    batch_jvp : bool
        The JVP rule also accepts tangents with a leading batch axis (many
        tangents pushed at once). For a broadcasting op the batched tangents
        are first given the output's rank. Other ops get one rule call per
        tangent.
    samples : callable, optional
        ``samples(rng)`` returns test cases ``[(args, params), ...]`` inside
        the op's domain and away from kinks; the registry sweep in
        ``tests/test_rules.py`` checks every op's rules on them, so an op
        without samples fails the sweep.

    Examples
    --------
    >>> import numpy as np
    >>> op = Op("twice", lambda x: 2 * x, vjps=(lambda g, ans, x: 2 * g,))
    >>> op.impl(np.float64(3.0))
    np.float64(6.0)
    """

    __slots__ = (
        "name",
        "scalar_deriv",
        "batch_jvp",
        "impl",
        "vjps",
        "jvp",
        "scalar_impl",
        "reads",
        "reads_out",
        "broadcasting",
        "unbroadcast",
        "symbol",
        "formula",
        "nin",
        "view",
        "samples",
    )

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        vjps: tuple[Callable[..., Any] | None, ...],
        *,
        jvp: Callable[..., Any] | None = None,
        scalar_impl: Callable[..., Any] | None = None,
        reads: tuple[int, ...] | _AllInputs = (),
        reads_out: bool = False,
        broadcasting: bool = False,
        unbroadcast: Callable[[Any, tuple[int, ...]], Any] | None = None,
        symbol: str | None = None,
        formula: str = "",
        view: bool = False,
        samples: Callable[[Any], list[tuple[tuple[Any, ...], dict[str, Any]]]] | None = None,
        scalar_deriv: tuple[Callable[..., float], ...] | None = None,
        batch_jvp: bool = False,
    ) -> None:
        self.name = name
        self.impl = impl
        variadic = isinstance(vjps, PerInput)
        self.vjps = vjps if variadic else tuple(vjps)
        self.jvp = jvp
        self.scalar_impl = scalar_impl
        self.reads = reads if reads is ALL_INPUTS else tuple(reads)
        self.reads_out = reads_out
        self.broadcasting = broadcasting
        if broadcasting and unbroadcast is None:
            raise ValueError(f"op {name!r}: a broadcasting op needs unbroadcast=")
        self.unbroadcast = unbroadcast
        self.symbol = symbol or name
        self.formula = formula
        self.nin = -1 if variadic else len(self.vjps)
        self.view = view
        self.samples = samples
        self.scalar_deriv = scalar_deriv
        self.batch_jvp = batch_jvp

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


class _AllInputs:
    """``reads`` of an op whose rules read every input (custom rules, checkpoints)."""

    __slots__ = ()

    def __contains__(self, i: object) -> bool:
        return True

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "ALL_INPUTS"


#: ``Op(..., reads=ALL_INPUTS)``: the rules read the values of all inputs.
ALL_INPUTS = _AllInputs()


class PerInput:
    """The VJP rules of a variadic op: ``rules[i]`` is ``rule`` told it serves input ``i``.

    ``rule(i, g, ans, *inputs, **params)`` returns the cotangent of input ``i``.

    Examples
    --------
    >>> rules = PerInput(lambda i, g, ans, *xs: g * i)
    >>> rules[3](2.0, None)
    6.0
    """

    def __init__(self, rule: Callable[..., Any]) -> None:
        self.rule = rule
        self._cache: dict[int, Callable[..., Any]] = {}

    def __getitem__(self, i: int) -> Callable[..., Any]:
        i = operator.index(i)
        fn = self._cache.get(i)
        if fn is None:
            rule = self.rule

            def fn(g: Any, ans: Any, *inputs: Any, **params: Any) -> Any:
                return rule(i, g, ans, *inputs, **params)

            fn.__name__ = f"{getattr(rule, '__name__', 'rule')}[{i}]"
            self._cache[i] = fn
        return fn

    def __iter__(self):
        raise TypeError("a variadic op has one rule per input position; index it (rules[i])")

    def __repr__(self) -> str:
        return f"PerInput({getattr(self.rule, '__name__', self.rule)!r})"


class Registry:
    """The one table of primitives, read by dispatch, tests and widgets.

    Examples
    --------
    >>> from wengert.ops import REGISTRY
    >>> REGISTRY["sin"].name
    'sin'
    """

    def __init__(self, ops: Iterable[Op]) -> None:
        self._ops: dict[str, Op] = {}
        for op in ops:
            if op.name in self._ops:
                raise ValueError(f"two primitives are named {op.name!r}")
            self._ops[op.name] = op

    def __getitem__(self, name: str) -> Op:
        return self._ops[name]

    def __contains__(self, name: object) -> bool:
        return name in self._ops

    def __iter__(self):
        return iter(self._ops.values())

    def __len__(self) -> int:
        return len(self._ops)

    def names(self) -> list[str]:
        return list(self._ops)
