"""The pieces of the graph IR: variables, literals, equations ``out = op[params](ins)``, guards.

A graph (:class:`wengert.graph.program.Graph`) is what :func:`wengert.graph.trace`
captures from a function:
its inputs (variables with shapes and dtypes, and the pytree they came in),
its equations in execution order (each applies one op record to variables
and literals, and names its output), its outputs (variables or literals, and
their pytree), and the guards the trace passed (a traced value turned into a
Python ``bool``, ``int`` or ``float``: the graph holds only for inputs that
give the same answer). Everything is immutable; a pass builds a new graph.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x, w: np.sum(np.sin(x) * w), np.ones(3), 2.0)
>>> print(g)
graph f(x: f64[3], w: f64[]):
    t0: f64[3] = sin(x)
    t1: f64[3] = multiply(t0, w)
    t2: f64[] = sum(t1, axis=None, keepdims=False)
    return t2
>>> len(g), float(g(np.zeros(3), 1.0))
(3, 0.0)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from wengert.core.source import SourceLine

__all__ = ["Var", "Literal", "Equation", "Guard", "Context", "aval_text", "dtype_text",
           "literal_text", "GuardFailed", "GraphLike"]

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "uint64": "u64", "uint32": "u32",
          "bool": "bool", "complex128": "c128", "complex64": "c64"}


def dtype_text(dtype: Any) -> str:
    """``f64`` for float64, ``i64`` for int64, ``bool``, ``c128`` ...

    Examples
    --------
    >>> dtype_text(np.float32), dtype_text(np.dtype(bool))
    ('f32', 'bool')
    """
    name = np.dtype(dtype).name
    return _SHORT.get(name, name)


def aval_text(shape: tuple[int, ...], dtype: Any) -> str:
    """``f64[3,4]``: a dtype and a shape, as jaxprs write them.

    Examples
    --------
    >>> aval_text((3, 4), np.float64), aval_text((), np.int64)
    ('f64[3,4]', 'i64[]')
    """
    return f"{dtype_text(dtype)}[{','.join(str(n) for n in shape)}]"


class Var:
    """A variable of a graph: a name, a shape and a dtype (compared by identity).

    ``scalar`` is true when the traced value was a Python float (not a 0-d array): a
    program of only such values compiles to straight-line ``math`` code.
    """

    __slots__ = ("name", "shape", "dtype", "scalar")

    def __init__(self, name: str, shape: tuple[int, ...], dtype: Any, scalar: bool = False
                 ) -> None:
        self.name = name
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.scalar = scalar

    @property
    def aval(self) -> str:
        """``f64[3]``."""
        return aval_text(self.shape, self.dtype)

    @property
    def nbytes(self) -> int:
        """The bytes of the array this variable holds."""
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"{self.name}:{self.aval}"


def literal_text(value: Any) -> str:
    """A literal as it reads in a listing: ``0.9``, ``True``, ``array(f64[3,4])``.

    Examples
    --------
    >>> literal_text(0.9), literal_text(np.float64(2)), literal_text(np.zeros((3, 4)))
    ('0.9', '2.0', 'array(f64[3,4])')
    """
    if isinstance(value, np.ndarray):
        if value.size == 1 and value.ndim == 0:
            return repr(value.item())
        return f"array({aval_text(value.shape, value.dtype)})"
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


class Literal:
    """A constant input of an equation: a Python number or a NumPy array, kept as given."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.value))

    @property
    def dtype(self) -> np.dtype:
        v = self.value
        if type(v) is float:
            return np.dtype(np.float64)
        return np.asarray(v).dtype

    @property
    def scalar(self) -> bool:
        return type(self.value) in (float, int)

    def __repr__(self) -> str:
        return literal_text(self.value)


class Equation:
    """``out = op[params](*ins)``: one op record applied to variables and literals.

    Attributes
    ----------
    op : Op
        The primitive's record (its NumPy forward ``op.impl``, its rules).
    ins : tuple of Var or Literal
    params : dict
        The op's static parameters (``axis``, ``shape`` ...).
    out : Var
    source : SourceLine or None
        The user's line that made it, when traced inside ``wg.source_lines()`` (always
        for :func:`wengert.graph.trace`).
    grad_off : bool
        It was traced inside ``with wg.no_grad():``. Run on tensors (when the graph is
        differentiated) it runs under ``no_grad`` again, so no gradient flows through it
        in reverse mode, as eagerly; forward mode is not affected, as eagerly.
    context : Context or None
        The ``np.errstate`` (and warning filters) it was traced under, where the traced
        function set its own (``with np.errstate(divide="ignore"):``): it runs under them
        again, so it warns or raises as eagerly.
    """

    __slots__ = ("op", "ins", "params", "out", "source", "grad_off", "context")

    def __init__(self, op: Any, ins: Sequence[Var | Literal], params: dict[str, Any] | None,
                 out: Var, source: SourceLine | None = None, grad_off: bool = False,
                 context: Context | None = None) -> None:
        self.op = op
        self.ins = tuple(ins)
        self.params = dict(params) if params else {}
        self.out = out
        self.source = source
        self.grad_off = grad_off
        self.context = context

    def replace(self, **changes: Any) -> Equation:
        """A copy with some fields changed (``eq.replace(ins=...)``)."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(changes)
        return Equation(**fields)

    def __str__(self) -> str:
        args = [v.name if type(v) is Var else literal_text(v.value) for v in self.ins]
        args += [f"{k}={_param_text(v, k)}" for k, v in self.params.items()]
        text = f"{self.out.name}: {self.out.aval} = {self.op.name}({', '.join(args)})"
        if self.context is not None:
            text += f"  # {self.context}"
        return text + "  # no_grad" if self.grad_off else text

    def __repr__(self) -> str:
        return f"<Equation {self}>"


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


def _param_text(v: Any, key: str = "") -> str:
    if key == "index":
        return index_text(v)
    if isinstance(v, np.ndarray):
        return literal_text(v)
    return repr(v)


def _index_part(i: Any) -> str:
    if type(i) is slice:
        start = "" if i.start is None else repr(i.start)
        stop = "" if i.stop is None else repr(i.stop)
        return f"{start}:{stop}" + ("" if i.step is None else f":{i.step!r}")
    if i is Ellipsis:
        return "..."
    if i is None:
        return "None"
    if isinstance(i, np.ndarray):
        return literal_text(i)
    return repr(i)


def index_text(index: Any) -> str:
    """An index as it is written between brackets: ``[:, 0]``, ``[1:3]``, ``[...]``.

    Examples
    --------
    >>> index_text((slice(None), 0)), index_text(slice(1, None, 2)), index_text(Ellipsis)
    ('[:, 0]', '[1::2]', '[...]')
    """
    parts = index if type(index) is tuple else (index,)
    return "[" + ", ".join(_index_part(i) for i in parts) + "]"


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
