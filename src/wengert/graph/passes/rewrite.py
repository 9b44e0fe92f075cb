"""What the rewriting passes share: substituting variables, use counts, reports.

A rewriting pass walks a graph's equations once, in order. When it decides
that an equation's output equals something already available (an earlier
variable, a literal), it records the substitution ``out -> replacement`` in a
:data:`Substitution` (a dict keyed by the :class:`~wengert.graph.ir.Var`
itself: variables hash by identity) and drops the equation; every later
equation, the outputs and the guards then read the replacement
(:func:`substitute_ins`, :func:`finish`). Replacements are always resolved
when recorded (they are inputs of the graph, outputs of kept equations, or
literals), so one lookup suffices and no chain is ever followed.

A replacement must be indistinguishable from the value it stands for:
:func:`interchangeable` checks shape, dtype and whether both are Python
numbers (NumPy's "weak" scalars: ``f32_array * 2.0`` stays float32, while
``f32_array * np.float64(2.0)`` is float64, so a Python float and a NumPy
float64 are not interchangeable even though their dtypes agree).

Guards (:class:`~wengert.graph.ir.Guard`) stay valid: a guard on a replaced
variable moves to its replacement, and a guard on a variable replaced by a
literal is dropped, which a pass may do only when the guard holds for that
literal (:func:`guards_hold`): it then holds for every argument.

Every pass can also say what it did: a :class:`PassReport`, appended to the
list given as its ``reports`` argument.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sin(x) * 1.0 + np.cos(x), np.ones(2))
>>> counts = use_counts(g)
>>> [counts.get(v, 0) for v in g.variables()]
[2, 1, 1, 1, 1]
>>> str(PassReport("simplify", 4, 3, {"x*1": 1}, verb="rewrote"))
'simplify: 4 → 3 equations; rewrote 1 (x*1: 1)'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wengert.graph.ir import Equation, Guard, Literal, Var
from wengert.graph.ir import GraphLike as Graph

__all__ = ["PassReport", "Substitution", "Atom", "substitute_ins", "finish", "use_counts",
           "guards_by_var", "guards_hold", "interchangeable", "add_report", "literal_for"]

#: What an equation reads: a variable or a literal.
Atom = Var | Literal
#: Replaced variable -> what now stands for it (an earlier variable or a literal).
Substitution = dict[Var, Atom]
#: The Python type of a "scalar" variable (:attr:`Var.scalar`), by dtype kind.
_PYTHON_TYPE = {"f": float, "i": int, "b": bool}


@dataclass(frozen=True)
class PassReport:
    """What one pass changed in one graph.

    Attributes
    ----------
    name : str
        The pass (``"dce"``, ``"simplify"`` ...).
    before, after : int
        The equation counts of the graph it was given and of the one it returned.
    changes : dict of str to int
        What it did, by kind (``{"x*1": 3, "x+0": 4}``; by op name for dce, fold and
        cse); empty when it changed nothing.
    verb : str
        How the changes read in a sentence: ``"removed"``, ``"folded"``, ``"merged"``,
        ``"rewrote"``.
    skipped : dict of str to int
        What it left in place on purpose, and why (``{"too large": 1}``).

    Examples
    --------
    >>> r = PassReport("cse", 10, 7, {"cos": 2, "multiply": 1}, verb="merged")
    >>> r.total, str(r)
    (3, 'cse: 10 → 7 equations; merged 3 (cos: 2, multiply: 1)')
    >>> str(PassReport("dce", 5, 5, {}, verb="removed"))
    'dce: 5 → 5 equations; removed 0'
    """

    name: str
    before: int
    after: int
    changes: dict[str, int]
    verb: str = "changed"
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """The number of changes of every kind."""
        return sum(self.changes.values())

    def __str__(self) -> str:
        text = f"{self.name}: {self.before} → {self.after} equations; {self.verb} {self.total}"
        if self.changes:
            text += f" ({_counts_text(self.changes)})"
        if self.skipped:
            text += f"; left {sum(self.skipped.values())} ({_counts_text(self.skipped)})"
        return text


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {n}" for k, n in counts.items())


def add_report(reports: list[PassReport] | None, report: PassReport) -> None:
    """Append ``report`` to ``reports`` when a list was given (a pass's ``reports=``)."""
    if reports is not None:
        reports.append(report)


def substitute_ins(eq: Equation, mapping: Substitution) -> Equation:
    """``eq`` reading the replacements of its replaced inputs (``eq`` itself when none is).

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.ops import REGISTRY
    >>> x, y, t = Var("x", (), np.float64), Var("y", (), np.float64), Var("t", (), np.float64)
    >>> str(substitute_ins(Equation(REGISTRY["sin"], [x], None, t), {x: y}))
    't: f64[] = sin(y)'
    """
    if not mapping:
        return eq
    for v in eq.ins:
        if v in mapping:
            break
    else:
        return eq
    get = mapping.get
    if len(eq.outs) > 1:
        return eq.replace(ins=tuple([get(v, v) for v in eq.ins]))
    return Equation(eq.op, tuple([get(v, v) for v in eq.ins]), eq.params, eq.out, eq.source,
                    eq.grad_off, eq.context)


def finish(graph: Graph, equations: Iterable[Equation], mapping: Substitution) -> Graph:
    """The new graph: ``equations``, the outputs read through ``mapping``, the guards of
    replaced variables moved to their replacements (or dropped when replaced by a
    literal: the pass checked they hold for it with :func:`guards_hold`).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: x * 1.0, 2.0)
    >>> h = finish(g, [], {g.equations[0].out: g.inputs[0]})
    >>> print(h)
    graph f(x: f64[]):
        return x
    """
    outputs = tuple(mapping.get(v, v) for v in graph.outputs) if mapping else graph.outputs
    guards: list[Guard] = []
    for g in graph.guards:
        target = mapping.get(g.var, g.var)
        if target is g.var:
            guards.append(g)
        elif type(target) is Var:
            guards.append(Guard(target, g.how, g.expected, g.source))
    return graph.replace(equations=tuple(equations), outputs=outputs, guards=tuple(guards))


def use_counts(graph: Graph) -> dict[Var, int]:
    """How many times each variable is read: by equations, as an output, by a guard
    (a variable read by nothing is absent)."""
    counts: dict[Var, int] = {}
    get = counts.get
    for eq in graph.equations:
        for v in eq.ins:
            if type(v) is Var:
                counts[v] = get(v, 0) + 1
    for v in graph.outputs:
        if type(v) is Var:
            counts[v] = get(v, 0) + 1
    for g in graph.guards:
        counts[g.var] = get(g.var, 0) + 1
    return counts


def guards_by_var(graph: Graph) -> dict[Var, list[Guard]]:
    """The graph's guards, grouped by the variable they test."""
    out: dict[Var, list[Guard]] = {}
    for g in graph.guards:
        out.setdefault(g.var, []).append(g)
    return out


def guards_hold(guards: Iterable[Guard], value: Any) -> bool:
    """Whether every guard holds for ``value`` (a constant that replaces their variable).

    Examples
    --------
    >>> import numpy as np
    >>> x = Var("x", (), np.float64)
    >>> guards_hold([Guard(x, "bool", True, None)], 2.0), guards_hold([], 0.0)
    (True, True)
    >>> guards_hold([Guard(x, "bool", True, None)], 0.0)
    False
    """
    for g in guards:
        try:
            if not g.holds(value):
                return False
        except (TypeError, ValueError, OverflowError):
            return False
    return True


def interchangeable(out: Var, replacement: Atom) -> bool:
    """Whether ``replacement`` may stand for variable ``out``: same shape, same dtype, and
    both Python numbers or both NumPy values (so every later operation promotes alike).

    Examples
    --------
    >>> import numpy as np
    >>> out = Var("t", (3,), np.float32)
    >>> interchangeable(out, Var("x", (3,), np.float32))
    True
    >>> interchangeable(out, Var("x", (), np.float32)), interchangeable(out, Literal(0.0))
    (False, False)
    >>> interchangeable(Var("t", (), np.float64, scalar=True), Literal(1.5))
    True
    >>> interchangeable(Var("t", (), np.float64), Literal(1.5))
    False
    """
    if type(replacement) is Var:
        return (replacement.shape == out.shape and replacement.dtype == out.dtype
                and replacement.scalar == out.scalar)
    value = replacement.value
    if out.scalar:
        return type(value) is _PYTHON_TYPE.get(out.dtype.kind) and replacement.dtype == out.dtype
    return (type(value) not in _PYTHON_TYPE.values() and type(value) is not complex
            and replacement.shape == out.shape and replacement.dtype == out.dtype)


def literal_for(out: Var, value: Any) -> Literal | None:
    """``value``, computed for variable ``out``, as a literal that may replace it: a Python
    number for a variable traced as one, else a NumPy value of ``out``'s shape and dtype
    (arrays read-only); ``None`` when it cannot stand for ``out``.

    Examples
    --------
    >>> literal_for(Var("t", (), np.float64, scalar=True), np.float64(2.5)).value
    2.5
    >>> lit = literal_for(Var("t", (2,), np.float64), np.array([1.0, 2.0]))
    >>> lit.value.flags.writeable
    False
    >>> literal_for(Var("t", (2,), np.float32), np.array([1.0, 2.0])) is None
    True
    """
    if out.scalar:
        if isinstance(value, (np.ndarray, np.generic)) and value.ndim == 0:
            value = value.item()
    elif type(value) in (bool, int, float, complex):
        value = np.asarray(value)[()]  # a NumPy scalar of the same value
    elif isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.view()  # (a view: the forward's own array may be an input literal)
        value.flags.writeable = False
    lit = Literal(value)
    if not isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)) \
            or not interchangeable(out, lit):
        return None
    return lit
