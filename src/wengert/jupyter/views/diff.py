"""What a pass changed: two graphs matched equation by equation (:func:`diff_graphs`).

How the two graphs of a pass are matched: inputs by position, an equation by its output
variables, all of them (the same objects, else the same names and shapes: passes keep
both; a decomposition's outputs in the same order); a matched
equation whose op, inputs or parameters differ was rewritten. One pass over each graph (no
recursion), so graphs of 10⁶ equations diff in seconds. The text, HTML and DOT views of a
pass (:func:`~wengert.jupyter.views.text.passes_text`,
:func:`~wengert.jupyter.views.html.passes_html`,
:func:`~wengert.jupyter.views.dot.pass_dot`) all read this one diff.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sum(np.sin(x) * 2.0), np.ones(3), source_lines=False)
>>> t0, t1, t2 = g.equations
>>> after = g.replace(equations=[t0, t1.replace(op=wg.ops.REGISTRY["add"], ins=[t0.out] * 2),
...                               t2])
>>> diff_graphs(g, after).summary()
'3 → 3 equations: 1 rewritten'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from wengert.core.collector import collector_paused
from wengert.core.formatting import literal_text, without_address
from wengert.core.tree import unflatten
from wengert.graph.ir import Equation, Guard, Literal, Var
from wengert.graph.program import Graph

__all__ = ["diff_graphs", "GraphDiff", "DiffRow", "atom_text", "returns_text", "count_text"]


def count_text(n: int, what: str) -> str:
    """``1 equation``, ``3 equations``."""
    return f"{n:,} {what}{'' if n == 1 else 's'}"


# -- cell texts ------------------------------------------------------------------------------


def atom_text(atom: Var | Literal) -> str:
    """An equation's input as a listing writes it: a variable's name or a literal's value.

    Examples
    --------
    >>> atom_text(Var("x", (3,), np.float64)), atom_text(Literal(2.0))
    ('x', '2.0')
    >>> atom_text(Literal(np.zeros((4, 2))))
    'array(f64[4,2])'
    """
    return atom.name if type(atom) is Var else literal_text(atom.value)


class _Named:
    """A leaf that prints as a name (to show an output's pytree with variable names)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def returns_text(graph: Graph) -> str:
    """What a graph returns, in the structure it returns it: ``t4``, ``(t4, x_bar)``,
    ``{'loss': t4, 'grad': (x_bar, w_bar)}``.

    Examples
    --------
    >>> import wengert as wg
    >>> returns_text(wg.trace(lambda x: (x * 2.0, {"y": x + 1.0}), 1.0))
    "(t0, {'y': t1})"
    """
    names = [_Named(atom_text(v)) for v in graph.outputs]
    if not names:
        return "None"
    try:
        return without_address(repr(unflatten(graph.out_tree, names)))
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return ", ".join(n.text for n in names)


# -- diffs -----------------------------------------------------------------------------------


class DiffRow(NamedTuple):
    """One row of a diff: ``kind`` is ``"same"``, ``"removed"``, ``"added"`` or
    ``"changed"``; ``before`` and ``after`` are the equation in each graph (``None`` where
    it has none)."""

    kind: str
    before: Equation | None
    after: Equation | None

    @property
    def equation(self) -> Equation:
        """The equation shown: the new one, or the removed one."""
        eq = self.after if self.after is not None else self.before
        assert eq is not None
        return eq


@dataclass(frozen=True)
class GraphDiff:
    """What changed from ``before`` to ``after`` (see :func:`diff_graphs`).

    Attributes
    ----------
    rows : tuple of DiffRow
        The union of both listings, in order: every equation of ``after`` where it is,
        each removed one where it was.
    matched : dict
        Variable of ``after`` -> the variable of ``before`` it stands for (by identity for
        a pass's graphs; inputs by position).
    outputs_changed : bool
        Whether the graph returns something else (another variable, a literal).
    guards_removed, guards_added : tuple of Guard
        Guards of one graph that the other lacks (a guard moved to an equivalent variable
        counts as kept).
    replaced : dict
        Output variable of a removed equation -> what a rewritten equation (or the
        outputs) reads instead: a variable of ``after`` or a literal (``t5 -> t2`` after
        cse, ``t3 -> 6.0`` after folding). Only where a rewritten reader shows it.
    """

    before: Graph
    after: Graph
    rows: tuple[DiffRow, ...]
    matched: dict[Var, Var] = field(repr=False)
    outputs_changed: bool
    guards_removed: tuple[Guard, ...]
    guards_added: tuple[Guard, ...]
    replaced: dict[Var, Var | Literal] = field(repr=False, default_factory=dict)

    def count(self, kind: str) -> int:
        """How many rows are of ``kind`` (``"removed"``, ``"added"``, ...)."""
        return sum(1 for row in self.rows if row.kind == kind)

    @property
    def counts(self) -> dict[str, int]:
        """``{"removed": 2, "added": 0, "changed": 1, "same": 4}``."""
        out = dict.fromkeys(("removed", "added", "changed", "same"), 0)
        for row in self.rows:
            out[row.kind] += 1
        return out

    def summary(self) -> str:
        """``7 → 5 equations: 2 removed, 1 rewritten`` (or ``…: unchanged``)."""
        c = self.counts
        parts = [f"{c[k]:,} {word}" for k, word in
                 (("removed", "removed"), ("added", "new"), ("changed", "rewritten")) if c[k]]
        if self.outputs_changed:
            parts.append("outputs rewritten")
        if self.guards_removed or self.guards_added:
            parts.append(f"guards {len(self.guards_removed):,} removed, "
                         f"{len(self.guards_added):,} new")
        head = f"{len(self.before):,} → {count_text(len(self.after), 'equation')}"
        return f"{head}: {', '.join(parts) if parts else 'unchanged'}"


def _same_value(x: Any, y: Any) -> bool:
    if x is y:
        return True
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        try:
            return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
        except (TypeError, ValueError):
            return False
    try:
        same = x == y
        return bool(same) or (x != x and y != y)
    except (TypeError, ValueError):  # containers of arrays
        return repr(x) == repr(y)


def _same_atom(a: Var | Literal, b: Var | Literal, matched: Mapping[Var, Var]) -> bool:
    if type(a) is Var:
        return type(b) is Var and matched.get(a, a) is b
    return type(b) is Literal and _same_value(a.value, b.value)


def _same_equation(old: Equation, new: Equation, matched: Mapping[Var, Var]) -> bool:
    if new.op is not old.op or len(new.ins) != len(old.ins) or new.params.keys() != \
            old.params.keys():
        return False
    if not all(_same_atom(a, b, matched) for a, b in zip(new.ins, old.ins)):
        return False
    return all(_same_value(v, old.params[k]) for k, v in new.params.items())


def _guard_key(g: Guard, matched: Mapping[Var, Var]) -> tuple[int, str, str]:
    return id(matched.get(g.var, g.var)), g.how, repr(g.expected)


def diff_graphs(before: Graph, after: Graph) -> GraphDiff:
    """Match the equations of two graphs (a pass's input and output) and list the changes.

    Inputs match by position; an equation of ``after`` matches the equation of
    ``before`` with the same output variables, every one of them in the same order (the
    same objects, else the same names, shapes and dtypes). A matched pair is ``"same"``
    when op (the same object), inputs and parameters agree, else ``"changed"``; unmatched
    equations are ``"removed"`` or ``"added"``. One pass over each graph.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * 2.0, np.ones(3))
    >>> d = diff_graphs(g, g.replace(equations=g.equations[:1]))
    >>> [(row.kind, row.equation.out.name) for row in d.rows]
    [('same', 't0'), ('removed', 't1')]
    """
    with collector_paused():  # many small acyclic objects: see wengert.core.collector
        return _diff(before, after)


def _diff(before: Graph, after: Graph) -> GraphDiff:
    # matched holds the variables of `after` that stand for *another* object of `before`
    # (a variable kept by the pass is itself: most of them, so they are not stored).
    matched: dict[Var, Var] = {a: b for a, b in zip(after.inputs, before.inputs) if a is not b}
    old_eqs = before.equations
    # every output of an equation (a decomposition has several) -> the equation
    index: dict[Var, int] = {v: i for i, eq in enumerate(old_eqs) for v in eq.outs}
    by_name: dict[str, Var | None] | None = None  # built when a variable is not found
    partner = [-1] * len(after.equations)
    taken = bytearray(len(old_eqs))
    for j, eq in enumerate(after.equations):
        olds: list[Var] = []  # the variable of `before` each output stands for
        for out in eq.outs:
            if out in index:
                olds.append(out)
                continue
            if by_name is None:
                by_name = {}
                for v in (*before.inputs, *(v for e in old_eqs for v in e.outs)):
                    by_name[v.name] = None if v.name in by_name else v  # None: ambiguous
            cand = by_name.get(out.name)
            if cand is None or cand not in index or cand.shape != out.shape or \
                    cand.dtype != out.dtype:
                break
            olds.append(cand)
        else:  # every output stands for one of `before`: the outputs of one equation,
            i = index[olds[0]]  # in the same order
            if not taken[i] and tuple(olds) == old_eqs[i].outs:
                taken[i] = 1
                partner[j] = i
                for out, old in zip(eq.outs, olds):
                    if old is not out:
                        matched[out] = old
    rows: list[DiffRow] = []
    append = rows.append
    p = 0
    for j, eq in enumerate(after.equations):
        i = partner[j]
        if i < 0:
            append(DiffRow("added", None, eq))
            continue
        while p < i:
            if not taken[p]:
                append(DiffRow("removed", old_eqs[p], None))
            p += 1
        p = max(p, i + 1)
        old = old_eqs[i]
        same = old is eq or _same_equation(old, eq, matched)  # passes keep what they keep
        append(DiffRow("same" if same else "changed", old, eq))
    for q in range(p, len(old_eqs)):
        if not taken[q]:
            append(DiffRow("removed", old_eqs[q], None))
    outputs_changed = len(after.outputs) != len(before.outputs) or not all(
        _same_atom(a, b, matched) for a, b in zip(after.outputs, before.outputs))
    after_keys = {_guard_key(g, matched) for g in after.guards}
    before_keys = {_guard_key(g, {}) for g in before.guards}
    return GraphDiff(
        before, after, tuple(rows), matched, outputs_changed,
        tuple(g for g in before.guards if _guard_key(g, {}) not in after_keys),
        tuple(g for g in after.guards if _guard_key(g, matched) not in before_keys),
        _replacements(rows, before, after, matched))


def _replacements(rows: Sequence[DiffRow], before: Graph, after: Graph,
                  matched: Mapping[Var, Var]) -> dict[Var, Var | Literal]:
    """What rewritten equations and outputs read instead of a removed equation's output."""
    removed = {v for row in rows if row.kind == "removed" and row.before
               for v in row.before.outs}
    out: dict[Var, Var | Literal] = {}
    pairs: list[tuple[Sequence[Var | Literal], Sequence[Var | Literal]]] = [
        (row.before.ins, row.after.ins) for row in rows
        if row.kind == "changed" and row.before and row.after]
    if len(before.outputs) == len(after.outputs):
        pairs.append((before.outputs, after.outputs))
    for old_ins, new_ins in pairs:
        if len(old_ins) != len(new_ins):
            continue
        for a, b in zip(old_ins, new_ins):
            if type(a) is Var and a in removed and a not in out and \
                    not _same_atom(b, a, matched):
                out[a] = b
    return out
