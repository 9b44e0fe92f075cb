"""The graph IR: variables, literals and equations (the one IR of :mod:`wengert.core.ir`,
which a recorded tape is read as too), guards and contexts.

A graph (:class:`wengert.graph.program.Graph`) is what :func:`wengert.graph.trace`
captures from a function:
its inputs (variables with shapes and dtypes, and the pytree they came in),
its equations in execution order (each applies one op record to variables
and literals, and names its output; a decomposition's, ``w, v = eigh(a)``, names one per
part), its outputs (variables or literals, and
their pytree), and the guards the trace passed (a traced value turned into a
Python ``bool``, ``int`` or ``float``: the graph holds only for inputs that
give the same answer). Everything is immutable; a pass builds a new graph.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x, w: np.sum(np.sin(x) * w), np.ones(3), 2.0)
>>> g.inputs, [e.op.name for e in g.equations], g.outputs
((x:f64[3], w:f64[]), ['sin', 'multiply', 'sum'], (t2:f64[],))
>>> print(g.equations[0])
t0: f64[3] = sin(x)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from wengert.core.formatting import aval_text, dtype_text, index_text, literal_text
from wengert.core.ir import Equation, Literal, Var
from wengert.core.source import SourceLine

__all__ = ["Var", "Literal", "Equation", "Guard", "Context", "aval_text", "dtype_text",
           "literal_text", "index_text", "GuardFailed", "GraphLike"]

class Context:
    """What NumPy computes under besides the values: an ``np.errstate`` (``errstate``, the
    dict ``np.geterr()`` gives) and the warning filters (``filters``, as
    ``warnings.filters`` holds them), each ``None`` where it is the caller's. Called, a
    context manager that sets them (the filters inside ``warnings.catch_warnings()``, as
    the traced code set them).

    Examples
    --------
    >>> ctx = Context({"divide": "ignore", "over": "warn", "under": "ignore",
    ...                "invalid": "warn"})
    >>> with ctx():
    ...     np.float64(1.0) / 0.0
    np.float64(inf)
    >>> str(ctx)
    "np.errstate(divide='ignore', over='warn', under='ignore', invalid='warn')"
    """

    __slots__ = ("errstate", "filters")

    def __init__(self, errstate: dict[str, str] | None = None,
                 filters: Sequence[Any] | None = None) -> None:
        self.errstate = dict(errstate) if errstate is not None else None
        self.filters = tuple(filters) if filters is not None else None

    def _key(self) -> Any:
        return (tuple(sorted(self.errstate.items())) if self.errstate is not None else None,
                self.filters)

    def __eq__(self, other: object) -> bool:
        return type(other) is Context and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __call__(self) -> Any:
        if self.filters is None:
            return np.errstate(**(self.errstate or {}))
        return _Entered(self)

    def __str__(self) -> str:
        parts = []
        if self.errstate is not None:
            parts.append("np.errstate(" + ", ".join(f"{k}={v!r}"
                                                   for k, v in self.errstate.items()) + ")")
        if self.filters is not None:
            parts.append(f"warnings.filters ({len(self.filters)})")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"<Context {self}>"


class _Entered:
    """One use of a :class:`Context` with warning filters."""

    __slots__ = ("context", "errstate", "caught")

    def __init__(self, context: Context) -> None:
        self.context = context
        self.errstate = np.errstate(**context.errstate) if context.errstate is not None \
            else None
        self.caught = warnings.catch_warnings()

    def __enter__(self) -> None:
        if self.errstate is not None:
            self.errstate.__enter__()
        self.caught.__enter__()
        warnings.filters[:] = self.context.filters  # type: ignore[index]
        warnings._filters_mutated()  # type: ignore[attr-defined]

    def __exit__(self, *exc: Any) -> None:
        self.caught.__exit__(*exc)
        if self.errstate is not None:
            self.errstate.__exit__(*exc)


class GuardFailed(Exception):
    """A guard of a graph does not hold for these arguments (see :class:`Guard`)."""

    def __init__(self, guard: Guard, got: Any) -> None:
        super().__init__(guard, got)
        self.guard = guard
        self.got = got


class Guard:
    """A traced value that the trace turned into a Python value (``if x > 0``,
    ``float(y)``, ``range(n)``): the graph holds only while it gives ``expected``.

    Attributes
    ----------
    var : Var
        The value converted.
    how : str
        ``"bool"``, ``"int"``, ``"float"``, ``"index"`` or ``"complex"`` (or ``"shape"``:
        the result of a NumPy call without a rule, whose shape depends on its values).
    expected : bool, int, float or complex
        What it gave when traced.
    source : SourceLine or None
        The user's line that converted it.
    """

    __slots__ = ("var", "how", "expected", "source")

    def __init__(self, var: Var, how: str, expected: Any, source: SourceLine | None) -> None:
        self.var = var
        self.how = how
        self.expected = expected
        self.source = source

    def convert(self, value: Any) -> Any:
        """What the traced code's conversion gives for ``value``."""
        if self.how == "shape":  # (the result of a recorded NumPy call)
            return tuple(np.shape(value))
        if self.how == "bool":
            return bool(value)
        if self.how == "complex":
            return complex(value)
        if self.how == "float":
            return float(value)
        return int(value)

    def holds(self, value: Any) -> bool:
        got = self.convert(value)
        e = self.expected
        if type(e) is float and e == 0.0 and got == 0.0:  # -0.0 and 0.0 divide differently
            return math.copysign(1.0, got) == math.copysign(1.0, e)
        return got == e or (got != got and e != e)  # NaN == NaN here

    def where(self) -> str:
        """``line 12 (`if x > 0:`)`` or ``an unknown line``."""
        src = self.source
        if src is None:
            return "an unknown line"
        return f"line {src.lineno} (`{src.text}`)" if src.text else f"line {src.lineno}"

    def __str__(self) -> str:
        return f"{self.how}({self.var.name}) == {self.expected!r}"

    def __repr__(self) -> str:
        return f"<Guard {self} at {self.where()}>"


class GraphLike(Protocol):
    """What passes read of a graph (:class:`wengert.graph.program.Graph` has it all): passes
    depend on this, not on the class, so the class can offer ``graph.optimize()``."""

    inputs: tuple[Var, ...]
    equations: tuple[Equation, ...]
    outputs: tuple[Var | Literal, ...]
    guards: tuple[Guard, ...]
    name: str
    plan: Any

    def replace(self, **changes: Any) -> GraphLike:
        """A new graph with some fields changed."""
        ...
