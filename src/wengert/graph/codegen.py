"""Python source from a graph: one line per equation, and the function compiled from it.

:func:`to_source` writes what a graph computes as a Python function that a
person can read: one assignment per equation, named after the graph's
variables, each with a comment naming the op (and the user's line that made
it). :func:`compile_graph` executes that very source, so what the user reads
is what runs.

Two flavours of the same program:

* **arrays**: NumPy calls (``np.sin(x)``, ``op.sum(t1, axis=0, keepdims=False)``
  for ops whose forward is wengert's own ``op.<name>``);
* **scalars**: when every value of the graph is a Python float and every op
  has a float fast path, straight-line code on floats (``t1 = t0 * 0.9``,
  ``t2 = sin(t1)`` with ``sin`` bound to ``math.sin``). A float path that
  raises (``log(-1.0)``, ``1.0 / 0.0``) falls back to the arrays flavour,
  which gives NumPy's NaN or inf as eager mode does.

Guards (see :class:`~wengert.graph.ir.Guard`) become ``if`` lines that raise
:class:`~wengert.graph.ir.GuardFailed` right after the value they test.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sin(x) * 2.0, 0.5, source_lines=False)
>>> print(to_source(g))
def f(x):
    t0 = sin(x)  # sin
    t1 = t0 * 2.0  # multiply
    return t1
<BLANKLINE>
"""

from __future__ import annotations

import keyword
import math
import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.bind import SCALAR_FALLBACK
from .ir import GuardFailed, Literal, Var

__all__ = ["to_source", "compile_graph", "is_scalar_program", "Namespace", "OpImpls"]

_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
_SCALAR_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/"}
_SCALAR_PREFIX = {operator.neg: "-", operator.pos: "+"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OpImpls:
    """``op.<name>``: the NumPy forwards of ops that are not NumPy functions themselves."""

    def __repr__(self) -> str:
        return "<op forwards>"


class Namespace:
    """The names a generated function refers to: ``np``, ``math``, ``op``, constants."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {"np": np, "math": math, "GuardFailed": GuardFailed,
                                       "inf": math.inf, "nan": math.nan}
        self.ops = OpImpls()
        self.values["op"] = self.ops
        self._by_id: dict[int, str] = {}
        self._count = 0

    def constant(self, value: Any, hint: str = "c") -> str:
        """A name for ``value`` (the same name for the same object)."""
        name = self._by_id.get(id(value))
        if name is None:
            name = f"{hint}{self._count}"
            self._count += 1
            self._by_id[id(value)] = name
            self.values[name] = value
        return name

    def bind(self, name: str, value: Any) -> str:
        """``name`` bound to ``value`` (a function), suffixed when taken by another value."""
        base, k = name, 1
        while name in self.values and self.values[name] is not value:
            name = f"{base}_{k}"
            k += 1
        self.values[name] = value
        return name

    def expr(self, value: Any) -> str:
        """Python source for a parameter or literal value."""
        t = type(value)
        if value is None or t is bool or t is int or t is str:
            return repr(value)
        if t is float:
            if math.isfinite(value):
                return repr(value)
            return "nan" if value != value else "inf" if value > 0 else "-inf"
        if t is complex and math.isfinite(value.real) and math.isfinite(value.imag):
            return repr(value)
        if t is tuple:
            inner = ", ".join(self.expr(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if t is list:
            return "[" + ", ".join(self.expr(v) for v in value) + "]"
        if t is slice:
            return f"slice({self.expr(value.start)}, {self.expr(value.stop)}, " \
                   f"{self.expr(value.step)})"
        if value is Ellipsis:
            return "Ellipsis"
        if t is dict and all(type(k) is str for k in value):
            return "{" + ", ".join(f"{k!r}: {self.expr(v)}" for k, v in value.items()) + "}"
        return self.constant(value)


def _op_call(op: Any, ns: Namespace) -> str:
    """How the arrays flavour calls ``op``'s forward: ``np.sin``, ``np.linalg.inv``,
    ``op.sum``."""
    impl = op.impl
    name = getattr(impl, "__name__", None)
    module = getattr(impl, "__module__", None)
    if name and isinstance(impl, np.ufunc) and getattr(np, name, None) is impl:
        return f"np.{name}"
    if name and module in ("numpy", "numpy.linalg") and _IDENT.fullmatch(name):
        where = np if module == "numpy" else np.linalg
        if getattr(where, name, None) is impl:
            return f"np.{name}" if module == "numpy" else f"np.linalg.{name}"
    attr = op.name if _IDENT.fullmatch(op.name) and not keyword.iskeyword(op.name) else "op_"
    current = getattr(ns.ops, attr, None)
    k = 1
    base = attr
    while current is not None and current is not impl:
        attr = f"{base}_{k}"
        current = getattr(ns.ops, attr, None)
        k += 1
    setattr(ns.ops, attr, impl)
    return f"op.{attr}"


def is_scalar_program(graph: Any) -> bool:
    """Whether every value of ``graph`` is a Python float and every op has a float path
    without parameters (then it compiles to straight-line float code)."""
    if not graph.inputs and not graph.equations:
        return False
    for v in graph.inputs:
        if not v.scalar or v.dtype != np.float64:
            return False
    for eq in graph.equations:
        if eq.params or eq.op.scalar_impl is None or not eq.out.scalar \
                or eq.out.dtype != np.float64:
            return False
        for v in eq.ins:
            if type(v) is Literal and type(v.value) not in (float, int):
                return False
    return True


def _name(v: Any, ns: Namespace, scalar: bool) -> str:
    if type(v) is Var:
        return v.name
    value = v.value
    if scalar and type(value) is int:
        return repr(float(value))
    return ns.expr(value)


def _scalar_line(eq: Any, ns: Namespace) -> str:
    f = eq.op.scalar_impl
    args = [_name(v, ns, True) for v in eq.ins]
    symbol = _SCALAR_INFIX.get(f)
    if symbol is not None and len(args) == 2:
        return f"{args[0]} {symbol} {args[1]}"
    symbol = _SCALAR_PREFIX.get(f)
    if symbol is not None and len(args) == 1:
        return f"{symbol}{args[0]}"
    if getattr(f, "__module__", None) == "math" and _IDENT.fullmatch(f.__name__):
        fname = ns.bind(f.__name__, f)
    else:
        fname = ns.bind(f"{eq.op.name}_" if _IDENT.fullmatch(eq.op.name) else "fn_", f)
    return f"{fname}({', '.join(args)})"


def _array_line(eq: Any, ns: Namespace) -> str:
    args = [_name(v, ns, False) for v in eq.ins]
    args += [f"{k}={ns.expr(v)}" for k, v in eq.params.items()]
    return f"{_op_call(eq.op, ns)}({', '.join(args)})"


def _guard_lines(guards: list[Any], var: str, ns: Namespace, indent: str) -> list[str]:
    lines = []
    for g in guards:
        gname = ns.constant(g, "guard")
        e = g.expected
        if g.how == "bool":
            test = f"not {var}" if e else f"{var}"
        elif isinstance(e, float) and e != e:
            test = f"{var} == {var}"  # expected NaN
        else:
            test = f"{var} != {ns.expr(e)}"
        lines.append(f"{indent}if {test}:")
        lines.append(f"{indent}    raise GuardFailed({gname}, {var})")
    return lines


def _comment(eq: Any, previous: Any) -> str:
    """``# sin``, with the user's line when it is not the previous equation's."""
    text = f"# {eq.op.name}"
    src = eq.source
    if src is not None and src.text and src != previous:
        text += f"  (line {src.lineno}: {src.text})"
    return text


def _source(graph: Any, ns: Namespace, scalar: bool, name: str, comments: bool = True) -> str:
    guards: dict[int, list[Any]] = {}
    for g in graph.guards:
        guards.setdefault(id(g.var), []).append(g)
    params = [v.name for v in graph.inputs]
    lines = [f"def {name}({', '.join(params)}):"]
    indent = "    "
    for v in graph.inputs:
        lines += _guard_lines(guards.get(id(v), []), v.name, ns, indent)
    previous = None
    for eq in graph.equations:
        rhs = _scalar_line(eq, ns) if scalar else _array_line(eq, ns)
        line = f"{indent}{eq.out.name} = {rhs}"
        lines.append(f"{line}  {_comment(eq, previous)}" if comments else line)
        previous = eq.source
        lines += _guard_lines(guards.get(id(eq.out), []), eq.out.name, ns, indent)
    outs = [_name(v, ns, scalar) for v in graph.outputs]
    if len(outs) == 1:
        lines.append(f"{indent}return {outs[0]}")
    else:
        lines.append(f"{indent}return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return "\n".join(lines) + "\n"


def _function_name(graph: Any) -> str:
    name = graph.name if _IDENT.fullmatch(graph.name) and not keyword.iskeyword(graph.name) \
        else "f"
    return name


def to_source(graph: Any, target: str = "numpy", scalar: bool | None = None) -> str:
    """The Python source of ``graph``: one line per equation.

    Parameters
    ----------
    graph : Graph
    target : {"numpy"}
        What the code calls (see :mod:`wengert.graph.export` for ``"jax"``).
    scalar : bool, optional
        Write the float flavour (``math``, operators); by default when the graph is a
        scalar program (:func:`is_scalar_program`).
    """
    if target != "numpy":
        raise ValueError(f"to_source: unknown target {target!r}")
    ns = Namespace()
    scalar = is_scalar_program(graph) if scalar is None else scalar
    return _source(graph, ns, scalar, _function_name(graph))


def _exec(graph: Any, scalar: bool) -> tuple[Callable[..., Any], str]:
    ns = Namespace()
    name = _function_name(graph)
    text = _source(graph, ns, scalar, name, comments=False)
    env = dict(ns.values)
    if scalar:  # the float functions become default arguments: local lookups
        bound = [k for k, v in env.items() if callable(v) and not isinstance(v, type)
                 and k not in ("np", "math", "op", "GuardFailed")]
        if bound:
            head, rest = text.split("\n", 1)
            extra = ", ".join(f"{k}={k}" for k in bound)
            text = head[:-2] + (", " if graph.inputs else "") + extra + "):\n" + rest
    exec(compile(text, f"<wengert graph {graph.name}>", "exec"), env)
    return env[name], text


def compile_graph(graph: Any) -> Callable[..., Any]:
    """A function of the graph's flat inputs that returns its flat outputs (one value for
    one output, else a tuple), compiled from :func:`to_source`'s code.

    A scalar program runs as float code and falls back to the arrays flavour when a
    float path raises (domain errors, division by zero, overflow)."""
    array_fn, _ = _exec(graph, False)
    if not is_scalar_program(graph):
        return array_fn
    scalar_fn, _ = _exec(graph, True)

    def run(*args: Any) -> Any:
        try:
            return scalar_fn(*args)
        except SCALAR_FALLBACK:  # NumPy's NaN or inf, and its warning, as eager mode
            return array_fn(*args)

    run.__name__ = scalar_fn.__name__
    return run
