"""Static graphs in HTML: a graph's listing, a pass's before and after, a compiled function.

Three views, each a pure function returning a string (no IPython, no ids, no addresses, no
timings, so the same graph always renders to the same text):

* :func:`graph_html`: a graph as a card: its signature, its equations as a table (name,
  shape and dtype, op with its symbol, inputs, parameters, the user's line), each guard
  under the equation it tests, what it returns, and the Python code it runs
  (``graph.to_source()``) folded under a ``<details>``. Long graphs show their first and
  last rows around a "… N more equations …" row, as the tape table does.
* :func:`passes_html`: what a pass (or a pipeline) changed: a unified diff of the two
  listings (removed equations struck through in red and marked ``−``, new ones green and
  marked ``+``, rewritten ones amber ``~`` with the old text struck beside the new), or the
  two listings side by side (``layout="side"``), with the counts and the passes' reports.
  Unchanged runs collapse to "… N unchanged equations …". :func:`passes_text` is the
  same diff as plain text.
* :func:`compiled_html`: a compiled function's traces (``cf.cache_info()``): one row per
  trace with its signature, its guards and their lines, its size as traced and as run,
  and its calls; each trace's graph and code fold out below.

How the two graphs of a pass are matched (:func:`diff_graphs`): inputs by position, an
equation by its output variable (the same object, else the same name and shape: passes
keep both); a matched equation whose op, inputs or parameters differ was rewritten. One
pass over each graph (no recursion), so graphs of 10⁶ equations diff in seconds.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sum(np.sin(x) * 2.0), np.ones(3), source_lines=False)
>>> page = graph_html(g)
>>> "sin" in page and "t1" in page and "wg-card" in page
True
>>> t0, t1, t2 = g.equations  # t1 = t0 * 2.0 rewritten by hand as t0 + t0:
>>> after = g.replace(equations=[t0, t1.replace(op=wg.ops.REGISTRY["add"], ins=[t0.out] * 2),
...                               t2])
>>> print(passes_text(g, after))
3 → 3 equations: 1 rewritten
graph f(x: f64[3]):
     t0: f64[3] = sin(x)
  -  t1: f64[3] = multiply(t0, 2.0)
  +  t1: f64[3] = add(t0, t0)
     t2: f64[] = sum(t1, axis=None, keepdims=False)
     return t2
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from wengert.core.collector import collector_paused
from wengert.core.display import register_html
from wengert.core.formatting import literal_text, params_text, without_address
from wengert.core.tree import unflatten
from wengert.graph.backends.compile import Compiled, TraceInfo
from wengert.graph.ir import Equation, Guard, Literal, Var
from wengert.graph.passes.pipeline import Optimized
from wengert.graph.program import Graph
from wengert.jupyter.views.render import MAX_ROWS, STYLE, shown_rows, source_text

__all__ = [
    "graph_html",
    "graph_sections_html",
    "passes_html",
    "passes_text",
    "compiled_html",
    "diff_graphs",
    "GraphDiff",
    "DiffRow",
    "PassView",
    "atom_text",
    "params_text",
    "returns_text",
    "GRAPH_STYLE",
    "CODE_UP_TO",
    "CONTEXT",
    "register",
]

#: Graphs of at most this many equations show their generated code (``<details>``).
CODE_UP_TO = 200
#: Unchanged equations shown around each change of a diff.
CONTEXT = 2
#: Characters of a parameter list shown in a table cell (the rest in its tooltip).
PARAMS_WIDTH = 40

#: Styles added to :data:`~wengert.jupyter.views.render.STYLE` for graphs and diffs. Removed,
#: new and rewritten rows differ by mark (``−``, ``+``, ``~``) and text decoration as well as
#: by hue; the hues have a light and a dark JupyterLab variant.
GRAPH_STYLE = """<style>
.wg-card .wg-sig{font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,monospace);
 font-size:12px;font-weight:600}
.wg-card .wg-table td.wg-mark{font-weight:700;text-align:center;padding-right:6px;width:1em}
.wg-card .wg-table td.wg-params{color:var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-table tr.wg-guard td{color:#8a5300;font-style:italic}
.wg-card .wg-table tr.wg-del td{color:#b42318;text-decoration:line-through;
 text-decoration-color:rgba(180,35,24,.6)}
.wg-card .wg-table tr.wg-del td.wg-mark{text-decoration:none}
.wg-card .wg-table tbody tr.wg-del{background:rgba(240,68,56,.12)}
.wg-card .wg-table tbody tr.wg-ins{background:rgba(18,183,106,.14)}
.wg-card .wg-table tr.wg-ins td{color:#05603a}
.wg-card .wg-table tbody tr.wg-chg{background:rgba(247,144,9,.12)}
.wg-card .wg-table tr.wg-chg td.wg-mark,.wg-card .wg-chip.wg-chg{color:#8a5300}
.wg-card .wg-table tr.wg-ins td.wg-mark,.wg-card .wg-chip.wg-ins{color:#05603a}
.wg-card .wg-table tr.wg-del td.wg-mark,.wg-card .wg-chip.wg-del{color:#b42318}
.wg-card del{color:#b42318;text-decoration:line-through}
.wg-card ins{color:#05603a;text-decoration:none;font-weight:600}
.wg-card .wg-chip.wg-del{border-color:#b42318}
.wg-card .wg-chip.wg-ins{border-color:#05603a}
.wg-card .wg-chip.wg-chg{border-color:#8a5300}
.wg-card .wg-side{border-left:1px solid var(--jp-border-color1,#bdbdbd);padding-left:8px}
.wg-card details{margin:6px 0 0}
.wg-card details>summary{cursor:pointer;color:var(--jp-content-font-color2,#5f6368);
 font-size:11.5px;font-weight:600}
.wg-card .wg-section .wg-sig{text-transform:none;letter-spacing:normal}
.wg-card .wg-repl{display:inline-block;text-decoration:none;font-weight:400;color:#05603a}
.wg-card .wg-report.wg-dim{color:var(--jp-content-font-color3,#9aa0a6)}
.wg-card pre.wg-code{margin:4px 0 0;padding:6px 8px;border-radius:4px;font-size:11.5px;
 line-height:1.4;white-space:pre;overflow-x:auto;color:inherit;
 background:var(--jp-layout-color2,#f3f3f3)}
.wg-card .wg-report{margin:2px 0;font-family:var(--jp-code-font-family,monospace);
 font-size:11.5px}
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-del td,
body[data-jp-theme-light="false"] .wg-card del,
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-del td.wg-mark,
body[data-jp-theme-light="false"] .wg-card .wg-chip.wg-del{color:#ff9c94;border-color:#ff9c94}
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-ins td,
body[data-jp-theme-light="false"] .wg-card ins,
body[data-jp-theme-light="false"] .wg-card .wg-repl,
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-ins td.wg-mark,
body[data-jp-theme-light="false"] .wg-card .wg-chip.wg-ins{color:#75e0a7;border-color:#75e0a7}
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-chg td.wg-mark,
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-guard td,
body[data-jp-theme-light="false"] .wg-card .wg-chip.wg-chg{color:#fec84b;border-color:#fec84b}
</style>"""

#: Marks of the rows of a diff, by kind.
MARKS = {"same": "", "removed": "−", "added": "+", "changed": "~"}
_ROW_CLASS = {"same": "", "removed": "wg-del", "added": "wg-ins", "changed": "wg-chg"}
_TEXT_MARKS = {"same": " ", "removed": "-", "added": "+", "changed": "~"}


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _chip(text: str, kind: str) -> str:
    return f' <span class="wg-chip wg-{kind}">{_e(text)}</span> '


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


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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
        head = f"{len(self.before):,} → {_count(len(self.after), 'equation')}"
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
    ``before`` with the same output variable (the same object, else the same name, shape
    and dtype). A matched pair is ``"same"`` when op (the same object), inputs and
    parameters agree, else ``"changed"``; unmatched equations are ``"removed"`` or
    ``"added"``. One pass over each graph.

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
    index: dict[Var, int] = {eq.out: i for i, eq in enumerate(old_eqs)}
    by_name: dict[str, Var | None] | None = None  # built when a variable is not found
    partner = [-1] * len(after.equations)
    taken = bytearray(len(old_eqs))
    for j, eq in enumerate(after.equations):
        out = eq.out
        i = index.get(out, -1)
        if i < 0:
            if by_name is None:
                by_name = {}
                for v in before.variables():
                    by_name[v.name] = None if v.name in by_name else v  # None: ambiguous
            cand = by_name.get(out.name)
            if cand is not None and cand in index and cand.shape == out.shape and \
                    cand.dtype == out.dtype:
                i = index[cand]
        if i >= 0 and not taken[i]:
            taken[i] = 1
            partner[j] = i
            if old_eqs[i].out is not out:
                matched[out] = old_eqs[i].out
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
    removed = {row.before.out for row in rows if row.kind == "removed" and row.before}
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


def _selected(rows: Sequence[DiffRow], context: int | None, max_rows: int) -> list[int]:
    """The indices of the rows shown: the changes with ``context`` unchanged rows around
    each (all rows when ``context`` is ``None``), then at most ``max_rows`` of them (the
    first and the last)."""
    n = len(rows)
    if context is None or all(row.kind == "same" for row in rows):
        keep = list(range(n))
    else:
        marked = bytearray(n)
        for k, row in enumerate(rows):
            if row.kind != "same":
                for q in range(max(0, k - context), min(n, k + context + 1)):
                    marked[q] = 1
        keep = [k for k in range(n) if marked[k]]
    head, hidden, tail = shown_rows(len(keep), max_rows)
    return [keep[k] for k in head] + [keep[k] for k in tail] if hidden else keep


def _gap_text(rows: Sequence[DiffRow], start: int, stop: int) -> str:
    kinds = {"removed": 0, "added": 0, "changed": 0}
    for k in range(start, stop):
        kind = rows[k].kind
        if kind != "same":
            kinds[kind] += 1
    n = stop - start
    changes = [f"{kinds[k]:,} {w}" for k, w in (("removed", "removed"), ("added", "new"),
                                                 ("changed", "rewritten")) if kinds[k]]
    if not changes:
        return f"… {_count(n, 'unchanged equation')} …"
    return f"… {_count(n, 'more equation')} ({', '.join(changes)}) …"


# -- plain text ------------------------------------------------------------------------------


def _report_lines(report: Any) -> list[str]:
    if report is None:
        return []
    if isinstance(report, str):
        return [report]
    if isinstance(report, Iterable):
        return [str(r) for r in report]
    return [str(report)]


def passes_text(before: Graph, after: Graph, report: Any = None, *,
                context: int | None = CONTEXT, max_rows: int = MAX_ROWS) -> str:
    """The diff of a pass (or a pipeline) as text: the reports, the counts, then the
    listing with ``-`` before removed lines, ``+`` before new ones and ``-``/``+`` pairs
    for rewritten ones; unchanged runs are shortened to ``context`` lines around changes.

    A rewritten equation's input that no longer exists in the new graph (its equation
    was removed) is written ``?t1`` on the ``+`` line when the pass did not substitute it.

    Parameters
    ----------
    before, after : Graph
        The graph given to the pass and the one it returned.
    report : PassReport, sequence of PassReport, or str, optional
        What the pass(es) said (shown first, one line each).
    context : int or None
        Unchanged equations shown around each change (``None``: every equation).
    max_rows : int
        At most this many equation rows (the first and the last ones).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> def f(x):
    ...     unused = np.exp(x)
    ...     return np.sin(x)
    >>> g = wg.trace(f, np.ones(2))
    >>> print(passes_text(g, g.replace(equations=g.equations[1:]), "dce: removed 1"))
    dce: removed 1
    2 → 1 equation: 1 removed
    graph f(x: f64[2]):
      -  t0: f64[2] = exp(x)
         t1: f64[2] = sin(x)
         return t1
    """
    diff = diff_graphs(before, after)
    lines = _report_lines(report) + [diff.summary(), f"graph {after.signature()}:"]
    live = set(after.inputs) | {eq.out for eq in after.equations}
    rows = diff.rows
    shown = _selected(rows, context, max_rows)
    last = -1
    for k in shown:
        if k > last + 1:
            lines.append(f"     {_gap_text(rows, last + 1, k)}")
        last = k
        row = rows[k]
        if row.kind == "changed":
            assert row.before is not None and row.after is not None
            lines.append(f"  -  {row.before}")
            lines.append(f"  +  {_with_missing(row.after, live)}")
        else:
            instead = diff.replaced.get(row.equation.out) if row.kind == "removed" else None
            note = f"    # → {atom_text(instead)}" if instead is not None else ""
            lines.append(f"  {_TEXT_MARKS[row.kind]}  {row.equation}{note}")
    if last < len(rows) - 1:
        lines.append(f"     {_gap_text(rows, last + 1, len(rows))}")
    if diff.outputs_changed:
        lines.append(f"  -  return {returns_text(before)}")
        lines.append(f"  +  return {returns_text(after)}")
    else:
        lines.append(f"     return {returns_text(after)}")
    lines += [f"  -  guard {g}    # {g.where()}" for g in diff.guards_removed]
    lines += [f"  +  guard {g}    # {g.where()}" for g in diff.guards_added]
    return "\n".join(line.rstrip() for line in lines)


def _with_missing(eq: Equation, live: set[Var]) -> str:
    """``str(eq)`` with inputs that the graph does not define written ``?t1``."""
    if all(type(v) is not Var or v in live for v in eq.ins):
        return str(eq)
    ins = [Var("?" + v.name, v.shape, v.dtype) if type(v) is Var and v not in live else v
           for v in eq.ins]
    return str(eq.replace(ins=ins))


# -- HTML rows -------------------------------------------------------------------------------


class _Listing:
    """What the rows of one table need to know about the graph(s) they come from."""

    def __init__(self, graphs: Sequence[Graph], with_lines: bool) -> None:
        self.inputs: set[Var] = set()
        self.outputs: dict[Var, int] = {}
        for g in graphs:
            self.inputs.update(g.inputs)
        last = graphs[-1]
        for k, v in enumerate(last.outputs):
            if type(v) is Var:
                self.outputs.setdefault(v, k)
        self.many_outputs = len(last.outputs) > 1
        self.with_lines = with_lines

    def atom_html(self, atom: Var | Literal) -> str:
        if type(atom) is Literal:
            return f'<span class="wg-in-const">{_e(atom_text(atom))}</span>'
        if atom in self.inputs:
            return f'<span class="wg-in-rg">{_e(atom.name)}</span>'
        return _e(atom.name)


def _op_html(op: Any) -> str:
    name, symbol = op.name, op.symbol
    title = getattr(op, "formula", "") or ""
    if getattr(op, "kernel_source", None) is not None:
        title = f"fused kernel: {title}"
    attr = f' title="{_e(title)}"' if title else ""
    sym = f'<span class="wg-sym">{_e(symbol)}</span>' if symbol != name else \
        '<span class="wg-sym"></span>'
    return f'<span{attr}>{sym} <span class="wg-dim">{_e(name)}</span></span>'


def _params_html(params: Mapping[str, Any]) -> str:
    text = params_text(params)
    if len(text) <= PARAMS_WIDTH:
        return _e(text)
    return f'<span title="{_e(text)}">{_e(_cut(text, PARAMS_WIDTH))}</span>'


def _name_html(eq: Equation, listing: _Listing) -> str:
    out = f'<span class="wg-name">{_e(eq.out.name)}</span>'
    k = listing.outputs.get(eq.out)
    if k is not None:
        note = f"output {k}" if listing.many_outputs else "output"
        out += f' <span class="wg-dim" title="{note}">◀</span>'
    return out


def _cells(eq: Equation, listing: _Listing) -> list[str]:
    """name, aval, op, inputs, params (and the line) of one equation, as HTML."""
    cells = [_name_html(eq, listing), _e(eq.out.aval), _op_html(eq.op),
             ", ".join(listing.atom_html(v) for v in eq.ins), _params_html(eq.params)]
    if listing.with_lines:
        cells.append(_e(source_text(eq.source)))
    return cells


def _changed(old: str, new: str) -> str:
    return new if old == new else f"<del>{old}</del> <ins>{new}</ins>"


def _changed_cells(old: Equation, new: Equation, listing: _Listing) -> list[str]:
    """The cells of a rewritten equation: each that differs shows the old text struck."""
    before, after = _cells(old, listing), _cells(new, listing)
    if len(old.ins) == len(new.ins):
        after[3] = ", ".join(
            _changed(listing.atom_html(a), listing.atom_html(b)) if atom_text(a) != atom_text(b)
            or type(a) is not type(b) else listing.atom_html(b)
            for a, b in zip(old.ins, new.ins))
        before[3] = after[3]
    return [_changed(b, a) for b, a in zip(before, after)]


_HEADERS = ["#", "shape", "op", "inputs", "params"]
_HEADER_HELP = {
    "shape": "dtype and shape of the value (f64[3,4]: float64, 3×4)",
    "op": "the primitive applied (point at it for its derivative rule)",
    "inputs": "variables (inputs of the graph in a blue ring, earlier equations) and "
              "literals (grey italics)",
    "params": "the op's static parameters",
    "line": "the line of your code that made the equation",
    "": "− removed · + new · ~ rewritten (the old text struck through)",
}


def _table(headers: Sequence[str], rows: Iterable[str]) -> str:
    head = "".join(f'<th title="{_e(_HEADER_HELP[h])}">{_e(h)}</th>' if h in _HEADER_HELP
                   else f"<th>{_e(h)}</th>" for h in headers)
    return (f'<table class="wg-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _tr(cells: Sequence[str], cls: str = "", mark: str | None = None, line: bool = False
        ) -> str:
    """A table row; ``line``: the last cell is a line of code (kept on one line)."""
    last = len(cells) - 1
    tds = "".join(f'<td class="wg-src">{c}</td>' if line and i == last else f"<td>{c}</td>"
                  for i, c in enumerate(cells))
    if mark is not None:
        tds = f'<td class="wg-mark">{_e(mark)}</td>' + tds
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def _guard_row(g: Guard, span: int, kind: str = "same", mark: str | None = None) -> str:
    where = source_text(g.source) or g.where()
    text = f"guard {g.how}({g.var.name}) == {g.expected!r}  ·  {where}"
    cls = "wg-guard" + (f" {_ROW_CLASS[kind]}" if kind != "same" else "")
    mark_td = f'<td class="wg-mark">{_e(mark)}</td>' if mark is not None else ""
    return (f'<tr class="{cls}">{mark_td}<td colspan="{span}" title="the graph holds only '
            f'while this gives the same answer: compiled code checks it">{_e(text)}</td></tr>')


def _gap_row(text: str, span: int) -> str:
    return f'<tr class="wg-gap"><td colspan="{span}">{_e(text)}</td></tr>'


def _guards_of(graph: Graph) -> dict[Var, list[Guard]]:
    out: dict[Var, list[Guard]] = {}
    for g in graph.guards:
        out.setdefault(g.var, []).append(g)
    return out


def _equations_table(graph: Graph, max_rows: int) -> str:
    with_lines = any(eq.source is not None for eq in graph.equations)
    listing = _Listing([graph], with_lines)
    headers = _HEADERS + (["line"] if with_lines else [])
    span = len(headers)
    guards = _guards_of(graph)
    rows: list[str] = [_guard_row(g, span) for v in graph.inputs for g in guards.get(v, ())]
    head, hidden, tail = shown_rows(len(graph.equations), max_rows)
    eqs = graph.equations

    def add(k: int) -> None:
        eq = eqs[k]
        rows.append(_tr(_cells(eq, listing), "wg-out" if eq.out in listing.outputs else "",
                        line=with_lines))
        rows.extend(_guard_row(g, span) for g in guards.get(eq.out, ()))

    for k in head:
        add(k)
    if hidden:
        hidden_guards = sum(len(guards.get(eqs[k].out, ())) for k in
                            range(head.stop, tail.start)) if guards else 0
        note = f" ({_count(hidden_guards, 'guard')})" if hidden_guards else ""
        rows.append(_gap_row(f"… {hidden:,} more equations{note} …", span))
    for k in tail:
        add(k)
    return _table(headers, rows)


def _code_html(graph: Graph, what: str = "generated Python") -> str:
    """The graph's ``to_source()`` folded under a ``<details>`` (for small graphs)."""
    if len(graph) > CODE_UP_TO:
        return (f'<div class="wg-dim">{len(graph):,} equations: print(graph.to_source()) for '
                "the generated Python.</div>")
    try:
        source = graph.to_source()
    except Exception as error:  # noqa: BLE001 - a repr must not raise; say why instead
        return (f'<div class="wg-dim">graph.to_source() failed: {_e(type(error).__name__)}: '
                f"{_e(without_address(str(error)))}</div>")
    return (f"<details><summary>{_e(what)} · graph.to_source()</summary>"
            f'<pre class="wg-code">{_e(source.rstrip())}</pre></details>')


def _returns_html(graph: Graph) -> str:
    avals = ", ".join(f"{atom_text(v)}: {v.aval}" if type(v) is Var else atom_text(v)
                      for v in graph.outputs)
    return (f'<div class="wg-code" title="{_e(avals)}"><span class="wg-dim">return</span> '
            f"{_e(returns_text(graph))}</div>")


def graph_sections_html(graph: Graph, *, max_rows: int = MAX_ROWS, code: bool = True) -> str:
    """The equations table, what the graph returns and its generated code, without the card
    around them (what :func:`graph_html` and :func:`compiled_html` put in their cards).

    Examples
    --------
    >>> import wengert as wg
    >>> graph_sections_html(wg.trace(lambda x: x * x, 2.0)).count("<table")
    1
    """
    parts = ['<div class="wg-section">equations</div>']
    if graph.equations:
        parts.append(_equations_table(graph, max_rows))
    else:
        parts.append('<div class="wg-dim">(no equations: the graph returns its inputs or '
                     "constants)</div>")
        parts += [f'<div class="wg-dim">guard {_e(str(g))}  ·  {_e(g.where())}</div>'
                  for g in graph.guards]
    parts.append(_returns_html(graph))
    if code:
        parts.append(_code_html(graph))
    return "".join(parts)


def _graph_meta(graph: Graph) -> str:
    n_out = len(graph.outputs)
    return (f"{_count(len(graph), 'equation')} · {_count(len(graph.inputs), 'input')} · "
            f"{_count(n_out, 'output')}")


def graph_html(graph: Graph, *, max_rows: int = MAX_ROWS, code: bool = True) -> str:
    """A graph as an HTML card: signature, equations, guards, outputs, generated code.

    Parameters
    ----------
    graph : Graph
        From ``wg.trace``, ``wg.grad_graph``, a pass, ``cf.graph_for(...)``.
    max_rows : int
        Longer listings show their first and last rows around a "… N more equations …"
        row (``0``: every row).
    code : bool
        Fold the generated Python (``graph.to_source()``) under the listing (graphs of at
        most :data:`CODE_UP_TO` equations).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> page = graph_html(wg.trace(lambda x: np.sum(np.tanh(x)), np.ones(2)))
    >>> "tanh" in page and "f64[2]" in page and "wg-card" in page
    True
    """
    chips = ""
    if graph.guards:
        chips += _chip(_count(len(graph.guards), "guard"), "state")
    if graph.plan is not None:
        chips += _chip("memory planned", "state")
    return (f'{STYLE}{GRAPH_STYLE}<div class="wg-card wg-graph"><div class="wg-head">'
            f'<span class="wg-title">graph</span> <span class="wg-sig">'
            f"{_e(graph.signature())}</span>{chips}"
            f'<span class="wg-meta">{_e(_graph_meta(graph))}</span></div>'
            f"{graph_sections_html(graph, max_rows=max_rows, code=code)}</div>")


# -- passes ----------------------------------------------------------------------------------


def _diff_rows_html(diff: GraphDiff, listing: _Listing, rows_shown: list[int],
                    side: bool) -> list[str]:
    rows = diff.rows
    width = 5 + listing.with_lines
    span = 2 * 4 + 1 + listing.with_lines if side else width + 1
    after_guards = _guards_of(diff.after)
    removed_guards: dict[Var, list[Guard]] = {}
    for g in diff.guards_removed:
        removed_guards.setdefault(g.var, []).append(g)
    added = set(map(id, diff.guards_added))
    out: list[str] = []
    last = -1

    def guard_rows(row: DiffRow) -> None:
        if row.after is not None:
            for g in after_guards.get(row.after.out, ()):
                kind = "added" if id(g) in added else "same"
                out.append(_guard_row(g, span - 1, kind, MARKS[kind]))
        if row.before is not None:
            for g in removed_guards.get(row.before.out, ()):
                out.append(_guard_row(g, span - 1, "removed", MARKS["removed"]))

    for v in diff.after.inputs:
        for g in after_guards.get(v, ()):
            kind = "added" if id(g) in added else "same"
            out.append(_guard_row(g, span - 1, kind, MARKS[kind]))
    for v in diff.before.inputs:
        for g in removed_guards.get(v, ()):
            out.append(_guard_row(g, span - 1, "removed", MARKS["removed"]))
    for k in rows_shown:
        if k > last + 1:
            out.append(_gap_row(_gap_text(rows, last + 1, k), span))
        last = k
        row = rows[k]
        if side:
            out.append(_side_row(row, listing))
        elif row.kind == "changed":
            assert row.before is not None and row.after is not None
            out.append(_tr(_changed_cells(row.before, row.after, listing), "wg-chg", "~",
                           listing.with_lines))
        else:
            cells = _cells(row.equation, listing)
            cls = _ROW_CLASS[row.kind]
            instead = diff.replaced.get(row.equation.out) if row.kind == "removed" else None
            if instead is not None:
                cells[0] += (f' <span class="wg-repl" title="what the rewritten equations read '
                             f'instead">→ {_e(atom_text(instead))}</span>')
            if row.kind == "same" and row.equation.out in listing.outputs:
                cls = "wg-out"
            out.append(_tr(cells, cls, MARKS[row.kind], listing.with_lines))
        guard_rows(row)
    if last < len(rows) - 1:
        out.append(_gap_row(_gap_text(rows, last + 1, len(rows)), span))
    return out


def _side_row(row: DiffRow, listing: _Listing) -> str:
    """One row of the side-by-side layout: before (name, shape, op, inputs), the mark,
    after (the same), the line."""
    blank = ["", "", "", ""]
    if row.kind == "changed":
        assert row.before is not None and row.after is not None
        left = _cells(row.before, listing)[:4]
        right = _changed_cells(row.before, row.after, listing)[:4]
        right = [re.sub(r"<del>.*?</del> ", "", c) for c in right]
    else:
        left = _cells(row.before, listing)[:4] if row.before is not None else blank
        right = _cells(row.after, listing)[:4] if row.after is not None else blank
    if row.kind == "removed":
        left = [f"<del>{c}</del>" if c else c for c in left]
    elif row.kind == "added":
        right = [f"<ins>{c}</ins>" if c else c for c in right]
    tds = "".join(f"<td>{c}</td>" for c in left)
    tds += f'<td class="wg-mark">{_e(MARKS[row.kind])}</td>'
    tds += "".join(f'<td class="wg-side">{c}</td>' if i == 0 else f"<td>{c}</td>"
                   for i, c in enumerate(right))
    if listing.with_lines:
        tds += f"<td>{_e(source_text(row.equation.source))}</td>"
    cls = {"same": "", "removed": "", "added": "", "changed": "wg-chg"}[row.kind]
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def _reports_html(report: Any) -> str:
    """One line per report; a report that changed nothing (``total == 0``) is dimmed."""
    if report is None:
        return ""
    reports = [report] if isinstance(report, str) or not isinstance(report, Iterable) \
        else list(report)
    return "".join(
        f'<div class="wg-report{" wg-dim" if getattr(r, "total", 1) == 0 else ""}">'
        f"{_e(str(r))}</div>" for r in reports)


def _outputs_diff_html(diff: GraphDiff) -> str:
    if not diff.outputs_changed:
        return _returns_html(diff.after)
    return (f'<div class="wg-code"><span class="wg-dim">return</span> '
            f"<del>{_e(returns_text(diff.before))}</del> "
            f"<ins>{_e(returns_text(diff.after))}</ins></div>")


def passes_html(before: Graph, after: Graph, report: Any = None, *, layout: str = "diff",
                context: int | None = CONTEXT, max_rows: int = MAX_ROWS,
                code: bool = True, diff: GraphDiff | None = None) -> str:
    """What a pass (or a pipeline of passes) changed, as an HTML card.

    Parameters
    ----------
    before, after : Graph
        The graph given to the pass and the one it returned (``after`` may also be made
        by hand, e.g. ``before.replace(equations=...)``).
    report : PassReport, sequence of PassReport, or str, optional
        What the pass(es) reported (``reports=`` of the passes); one line each, on top.
    layout : {"diff", "side"}
        ``"diff"``: one listing, removed rows struck through in red (``−``), new rows
        green (``+``), rewritten rows amber (``~``) with each changed cell's old text
        struck before its new text. ``"side"``: the two listings side by side, row
        against row.
    context : int or None
        Unchanged equations shown around each change; longer unchanged runs collapse to
        one "… N unchanged equations …" row (``None``: every row).
    max_rows : int
        At most this many rows (the first and the last ones).
    code : bool
        Fold the generated Python of ``after`` under the listing (small graphs).
    diff : GraphDiff, optional
        ``diff_graphs(before, after)`` when already computed.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> def f(x):
    ...     unused = np.exp(x)
    ...     return np.sin(x)
    >>> g = wg.trace(f, np.ones(2))
    >>> page = passes_html(g, g.replace(equations=g.equations[1:]), "dce: removed 1 (exp: 1)")
    >>> 'class="wg-del"' in page and "exp" in page and "1 removed" in page
    True
    """
    if layout not in ("diff", "side"):
        raise ValueError(f"passes_html: layout={layout!r}; use 'diff' or 'side'")
    if diff is None:
        diff = diff_graphs(before, after)
    with_lines = any(row.equation.source is not None for row in diff.rows)
    listing = _Listing([before, after], with_lines)
    shown = _selected(diff.rows, context, max_rows)
    rows = _diff_rows_html(diff, listing, shown, layout == "side")
    if layout == "side":
        headers = [f"before: {h}" if h == "#" else h for h in _HEADERS[:4]] + [""] + \
            [f"after: {h}" if h == "#" else h for h in _HEADERS[:4]]
    else:
        headers = ["", *_HEADERS]
    if with_lines:
        headers.append("line")
    c = diff.counts
    chips = "".join(_chip(f"{MARKS[k]}{c[k]:,} {word}", cls) for k, word, cls in (
        ("removed", "removed", "del"), ("added", "new", "ins"), ("changed", "rewritten", "chg"))
        if c[k])
    if not chips:
        chips = _chip("unchanged", "state")
    title = f"{len(before):,} → {_count(len(after), 'equation')}"
    parts = [f'{STYLE}{GRAPH_STYLE}<div class="wg-card wg-passes"><div class="wg-head">'
             f'<span class="wg-title">{_e(title)}</span>{chips}'
             f'<span class="wg-meta">{_e(diff.summary())}</span></div>',
             _reports_html(report),
             f'<div class="wg-section">graph <span class="wg-sig">{_e(after.signature())}'
             "</span></div>",
             _table(headers, rows) if diff.rows else '<div class="wg-dim">(no equations)</div>',
             _outputs_diff_html(diff)]
    if code:
        parts.append(_code_html(after, "generated Python after"))
    parts.append("</div>")
    return "".join(parts)


class PassView:
    """A pass's before and after as one object a notebook shows (:func:`passes_html`),
    whose text is :func:`passes_text` and whose ``repr`` is one deterministic line.
    ``options`` go to :func:`passes_html` (``layout``, ``context``, ``max_rows``, ``code``);
    ``view.diff`` is the :class:`GraphDiff`.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * 1.0, np.ones(2))
    >>> view = PassView(g, g.replace(equations=g.equations[:1], outputs=(g.equations[0].out,)))
    >>> view
    <pass view: 2 → 1 equation: 1 removed, outputs rewritten>
    """

    def __init__(self, before: Graph, after: Graph, report: Any = None, **options: Any
                 ) -> None:
        self.before = before
        self.after = after
        self.report = report
        self.options = options
        self.diff = diff_graphs(before, after)

    def _repr_html_(self) -> str:
        return passes_html(self.before, self.after, self.report, diff=self.diff,
                           **self.options)

    def __str__(self) -> str:
        options = {k: v for k, v in self.options.items() if k in ("context", "max_rows")}
        return passes_text(self.before, self.after, self.report, **options)

    def __repr__(self) -> str:
        return f"<pass view: {self.diff.summary()}>"


# -- compiled functions ----------------------------------------------------------------------


def _guards_html(graph: Graph) -> str:
    if not graph.guards:
        return '<span class="wg-dim">none</span>'
    lines = []
    for g in graph.guards:
        where = source_text(g.source) or g.where()
        lines.append(f'<div><span class="wg-code">{_e(g.how)}({_e(g.var.name)}) == '
                     f'{_e(repr(g.expected))}</span> <span class="wg-dim">{_e(where)}</span>'
                     "</div>")
    return "".join(lines)


def _trace_name(infos: Sequence[TraceInfo], compiled: Any) -> str:
    if infos:
        return infos[0].graph.name
    fun = getattr(compiled, "fun", None)
    name = getattr(fun, "__name__", None) or "f"
    return "f" if name == "<lambda>" else name


def compiled_html(compiled: Compiled | Sequence[TraceInfo], *, max_rows: int = MAX_ROWS
                  ) -> str:
    """A compiled function's traces (``cf.cache_info()``) as an HTML card.

    One row per trace, oldest first: its signature, its guards (what each Python
    conversion of a traced value gave, and the line that made it: one trace per branch),
    its equations as traced and as run after optimisation, and how many calls it served.
    Each trace's graph and generated code fold out under the table.

    Parameters
    ----------
    compiled : Compiled or sequence of TraceInfo
        ``wg.compile(f)``, or what its ``cache_info()`` returned.
    max_rows : int
        Rows of each trace's listing (the first and the last ones).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> @wg.compile
    ... def f(x):
    ...     return np.sin(x) if np.sum(x) > 0 else np.cos(x)
    >>> _ = f(np.ones(2)), f(-np.ones(2))
    >>> page = compiled_html(f)
    >>> "bool(t1) == True" in page and "bool(t1) == False" in page
    True
    """
    infos = list(compiled.cache_info()) if isinstance(compiled, Compiled) else list(compiled)
    name = _trace_name(infos, compiled)
    calls = sum(info.calls for info in infos)
    meta = f"{_count(len(infos), 'trace')} · {_count(calls, 'call')}"
    head = (f'{STYLE}{GRAPH_STYLE}<div class="wg-card wg-compiled"><div class="wg-head">'
            f'<span class="wg-title">compiled {_e(name)}</span>'
            f'<span class="wg-meta">{_e(meta)}</span></div>')
    if not infos:
        return (head + '<div class="wg-dim">no trace yet: the first call traces f for its '
                "arguments' shapes and dtypes</div></div>")
    rows = []
    for k, info in enumerate(infos):
        sizes = (f"{len(info.traced):,} → {len(info.graph):,}" if info.traced is not info.graph
                 else f"{len(info.graph):,}")
        rows.append(_tr([str(k + 1), f'<span class="wg-code">{_e(info.signature)}</span>',
                         _guards_html(info.graph), _e(sizes), f"{info.calls:,}"]))
    table = _table(["#", "signature", "guards (what the trace's Python saw)",
                    "equations (traced → run)", "calls"], rows)
    details = []
    for k, info in enumerate(infos):
        details.append(
            f"<details><summary>trace {k + 1}: {_e(info.signature)} · the graph that runs"
            f"</summary>{graph_sections_html(info.graph, max_rows=max_rows)}</details>")
    note = ""
    if len(infos) > 1 and any(info.graph.guards for info in infos):
        note = ('<div class="wg-dim">Each call runs the first trace whose signature and guards '
                "match; a call whose guards match none traces again.</div>")
    return head + table + note + "".join(details) + "</div>"


def register() -> None:
    """Make :func:`graph_html` the HTML repr of graphs and :func:`compiled_html` that of
    compiled functions (called when this module is imported; a class shows it once its
    ``_repr_html_`` asks :func:`wengert.core.display.html_of`).

    Examples
    --------
    >>> import wengert as wg
    >>> register()
    >>> g = wg.trace(lambda x: x * x, 2.0)
    >>> g._repr_html_() == graph_html(g)
    True
    """
    register_html(Graph, graph_html)
    register_html(Compiled, compiled_html)
    register_html(Optimized, lambda r: passes_html(r.before, r.after, r.reports))


register()
