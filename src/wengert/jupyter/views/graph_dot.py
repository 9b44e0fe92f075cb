"""A static graph as a Graphviz drawing: pure functions from a graph (or a pass's two
graphs) to DOT source, in the visual language of the tape's drawing (:mod:`.dot`).

=========================  ============================================================
input of the graph         blue double ring (ellipse): its name, dtype and shape
literal                    grey dashed ellipse with its value
equation                   box ``t3 = t2 × w`` with its dtype and shape; an output has a
                           thick border; a fused kernel shows its formula
guard                      amber rounded box ``guard bool(t1) == True`` and the user's
                           line, hanging from the value it tests by a dashed edge
group of equations         3-d box with its label, count and commonest ops (big graphs)
=========================  ============================================================

:func:`pass_dot` draws what a pass changed on one drawing: the union of both graphs,
removed equations struck through in dashed red boxes (marked ``−``), new ones in green
boxes (``+``), rewritten ones amber (``~``, with the old formula struck below the new);
inputs a rewritten equation no longer reads hang from it by dashed red edges. Hue is
never the only cue: marks, strike-through, dashes and borders say the same.

The flow is top to bottom, in execution order. Above ``max_nodes`` equations (``dot``'s
layout time grows steeply: about 0.1 s for 300 nodes, 16 s for 1,000) the graph is
grouped, by the user's line when that gives a few groups, else into consecutive runs,
and the drawing's label says how many equations were grouped and how to draw one group
in full. Everything is one pass over the equations (no recursion): 10⁶ are fine.

:func:`graph_drawing` and :func:`pass_drawing` give the keyword arguments of
:func:`wengert.jupyter.views.drawing.drawing_class` (a ``graphviz.Digraph`` that falls back to
the HTML listing when ``dot`` is missing), so ``wg.draw(graph)`` is one line.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x, w: np.sum(np.tanh(x @ w) ** 2), np.ones((2, 3)), np.ones(3))
>>> source = graph_dot(g)
>>> source.startswith("digraph program {") and '"x" -> "t0"' in source
True
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wengert.core.collector import collector_paused
from wengert.core.equations import Tape
from wengert.graph.ir import Equation, Guard, Literal, Var
from wengert.graph.program import Graph
from wengert.jupyter.views.dot_text import attrs, escape, html_label, quote, small
from wengert.jupyter.views.graph_html import (
    GraphDiff,
    atom_text,
    diff_graphs,
    graph_html,
    passes_html,
    returns_text,
)
from wengert.jupyter.views.tape_dot import (
    BLUE,
    EDGE,
    GREY,
    GROUPINGS,
    INK,
    MAX_NODES,
    NBSP,
    Grouping,
    auto_grouping,
    cluster_lines,
    dot_header,
    equation_formula,
    group_equations,
    group_lines,
    grouped_note,
    many_inputs_node,
    node_value_lines,
)

__all__ = [
    "graph_dot",
    "pass_dot",
    "graph_drawing",
    "pass_drawing",
    "graph_formula",
    "GRAPH_LEGEND",
    "PASS_LEGEND",
    "MAX_NODES",
]

GRAPH_LEGEND = ("blue double ring: an input · grey dashed: a literal · box: t = op(inputs) "
                "with its dtype[shape]; thick border: an output · amber: a guard")
PASS_LEGEND = ("red dashed, struck (−): removed by the pass · green (+): new · "
               "amber (~): rewritten, the old formula struck below · plain: unchanged")
#: How ``group=`` may split a graph (as a tape).
GRAPH_GROUPINGS = GROUPINGS
#: Characters of a formula shown on a box.
FORMULA_WIDTH = 48
#: Guards drawn one by one in a grouped drawing (more become one node with a count).
MAX_GUARD_NODES = 20

# Marks of a pass drawing: fill, border, text colour, edge colour (light fills, so the
# text reads on both JupyterLab themes; borders and edges are mid-tones).
_STYLE = {
    "removed": ("#fee4e2", "#d92d20", "#7a271a", "#d92d20"),
    "added": ("#dcfae6", "#079455", "#053321", "#079455"),
    "changed": ("#fef0c7", "#b54708", "#4e1d09", EDGE),
}
_MARK = {"same": "", "removed": "− ", "added": "+ ", "changed": "~ "}
_GUARD_FILL, _GUARD_LINE, _GUARD_INK = "#fef6e4", "#b54708", "#4e1d09"
_FUSED_ARG = re.compile(r"\bx(\d+)\b")




def _cut(text: str, width: int = FORMULA_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# -- formulas -------------------------------------------------------------------------------


class _FormulaView:
    """An equation of a graph as :func:`~wengert.jupyter.views.tape_dot.equation_formula` reads a
    tape's (``op``, ``params``, ``inputs``), with the texts of its inputs."""

    __slots__ = ("op", "params", "inputs")

    def __init__(self, eq: Equation) -> None:
        self.op = eq.op
        self.params = eq.params
        self.inputs = [atom_text(v) for v in eq.ins]


class _InputTexts:
    """The ``names`` argument of ``equation_formula``: an input is its text."""

    @staticmethod
    def input(view: _FormulaView, position: int) -> str:
        return view.inputs[position]


def graph_formula(eq: Equation) -> str:
    """The right-hand side of a graph's equation as a student reads it: ``x @ w``,
    ``tanh(t1)``, ``Σ(t3)``, ``t2 ** 2``; a fused kernel as its formula with the inputs'
    names (``tanh(x * y + 0.5)``).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x, w: np.sum(np.tanh(x @ w) ** 2, axis=0), np.ones((2, 3)),
    ...              np.ones(3))
    >>> [graph_formula(eq) for eq in g]
    ['x @ w', 'tanh(t0)', 't1 ** 2', 'Σ(t2, axis=0)']
    """
    if len(eq.outs) > 1:  # the parts of one decomposition, read from a tape
        return str(eq).split(" = ", 1)[1]
    view = _FormulaView(eq)
    if getattr(eq.op, "kernel_source", None) is not None and eq.op.formula:
        texts = view.inputs
        return _FUSED_ARG.sub(
            lambda m: texts[int(m.group(1))] if int(m.group(1)) < len(texts) else m.group(0),
            eq.op.formula)
    return equation_formula(view, _InputTexts())  # type: ignore[arg-type]


# -- the drawing ----------------------------------------------------------------------------


class _Drawing:
    """The nodes and edges of one DOT graph, over canonical variables (a pass drawing maps
    each variable of the new graph to the one of the old graph it stands for)."""

    def __init__(self, inputs: Sequence[Var], outputs: Sequence[Var | Literal],
                 canonical: Mapping[Var, Var]) -> None:
        self.canonical = canonical
        self.nodes: list[str] = []
        self.edges: list[str] = []
        self.ids: dict[Var, str] = {}
        self.taken: set[str] = set()
        self.inputs = [canonical.get(v, v) for v in inputs]
        self.outputs: dict[Var, list[int]] = {}
        for k, v in enumerate(outputs):
            if type(v) is Var:
                self.outputs.setdefault(canonical.get(v, v), []).append(k)
        self.many_outputs = len(outputs) > 1

    def node_id(self, v: Var) -> str:
        """The node of variable ``v``: its name (made unique), stable for a graph. Other
        nodes have ids with a colon (``g:3``, ``c:4:1``), which no variable name has."""
        v = self.canonical.get(v, v)
        found = self.ids.get(v)
        if found is None:
            found = v.name
            k = 2
            while found in self.taken:
                found = f"{v.name}·{k}"
                k += 1
            self.taken.add(found)
            self.ids[v] = found
        return found

    def _output_note(self, v: Var) -> str | None:
        positions = self.outputs.get(self.canonical.get(v, v))
        if positions is None:
            return None
        if not self.many_outputs:
            return "output"
        return "output " + ", ".join(map(str, positions))

    def input(self, v: Var, indent: str = "  ") -> None:
        lines = [f"<B>{escape(v.name)}</B>", small(v.aval, GREY)]
        note = self._output_note(v)
        if note:
            lines.append(small(note, GREY))
        self.nodes.append(indent + quote(self.node_id(v)) + " " + attrs(
            label=html_label(lines), shape="ellipse", style="filled", fillcolor="#dbe7ff",
            color=BLUE, penwidth="2", peripheries="2", margin="0.04,0.02"))

    def literal(self, node: str, value: Literal, note: str = "", indent: str = "  ") -> None:
        head, entries = node_value_lines(value.value)
        lines = [small(head, GREY)] if head else []
        lines.append(small(_cut(entries, 28)))
        if note:
            lines.append(small(note, GREY))
        self.nodes.append(indent + quote(node) + " " + attrs(
            label=html_label(lines), shape="ellipse", style="filled,dashed", fillcolor="#f1f1f1",
            color="#8a8a8a", fontcolor="#3f3f3f", fontsize="9", height="0.25",
            margin="0.04,0.02"))

    def equation(self, eq: Equation, mark: str = "same", old: Equation | None = None,
                 instead: Var | Literal | None = None, indent: str = "  ") -> None:
        struck = mark == "removed"
        names = ", ".join(v.name for v in eq.outs)
        head = f"<B>{escape(names)}</B>{NBSP}={NBSP}{escape(_cut(graph_formula(eq)))}"
        if struck:
            head = f"<S>{head}</S>"
        lines = [(escape(_MARK[mark]) if mark != "same" else "") + head]
        if old is not None:
            lines.append(small(f"was {old.out.name} = {_cut(graph_formula(old))}",
                                _STYLE["removed"][1], struck=True))
        if instead is not None:
            lines.append(small(f"→ read as {_cut(atom_text(instead), 24)}",
                                _STYLE["added"][1]))
        kind = eq.op.symbol if getattr(eq.op, "kernel_source", None) is not None else ""
        detail = eq.out.aval + (f" · fused kernel {kind}" if kind else "")
        lines.append(small(_cut(detail, 56), GREY))
        note = self._output_note(eq.out)
        if note:
            lines.append(small(note, GREY))
        output = note is not None and mark != "removed"
        style: dict[str, str] = {"label": html_label(lines), "shape": "box", "style": "filled",
                                 "fillcolor": "#ffffff", "color": INK if output else "#4b5563",
                                 "penwidth": "2.5" if output else "1"}
        if mark != "same":
            fill, line, ink, _ = _STYLE[mark]
            style.update(fillcolor=fill, color=line, fontcolor=ink,
                         penwidth="2.5" if output else "1.6")
            if mark == "removed":
                style["style"] = "filled,dashed"
        self.nodes.append(indent + quote(self.node_id(eq.out)) + " " + attrs(**style))

    def guard(self, node: str, g: Guard, mark: str = "same", indent: str = "  ") -> None:
        text = f"guard {g.how}({g.var.name}) == {g.expected!r}"
        lines = [(escape(_MARK[mark]) if mark != "same" else "") +
                 (f"<S>{escape(text)}</S>" if mark == "removed" else escape(text))]
        src = g.source
        if src is not None:
            lines.append(small(_cut(f"line {src.lineno}: {src.text}", 52), GREY))
        fill, line = (_GUARD_FILL, _GUARD_LINE) if mark == "same" else _STYLE[mark][:2]
        self.nodes.append(indent + quote(node) + " " + attrs(
            label=html_label(lines), shape="box", style="filled,rounded" + (
                ",dashed" if mark == "removed" else ""), fillcolor=fill, color=line,
            fontcolor=_GUARD_INK, fontsize="9", margin="0.08,0.03"))

    def group(self, j: int, grouping: Grouping, ops: Counter, literals: int,
              marks: Counter, output: bool, indent: str = "  ") -> None:
        lines = group_lines(j, grouping, ops, literals, "literal")
        for mark, word in (("removed", "removed"), ("added", "new"), ("changed", "rewritten")):
            if marks[mark]:
                lines.append(small(f"{_MARK[mark]}{marks[mark]:,} {word}", _STYLE[mark][1]))
        if output:
            lines.append(small("output", GREY))
        changed = sum(marks.values())
        color = INK if output else _STYLE["changed"][1] if changed else "#4b5563"
        self.nodes.append(indent + quote(f"g:{j}") + " " + attrs(
            label=html_label(lines), shape="box3d", style="filled", fillcolor="#f6f6f6",
            margin="0.16,0.1", color=color, penwidth="2.5" if output or changed else "1"))

    def edge(self, source: str, target: str, count: int = 1, mark: str = "same") -> None:
        parts = []
        if count > 1:
            parts += [f'label="×{count:,}"', 'fontsize="8"', f'fontcolor="{GREY}"']
        if mark in ("removed", "added"):
            parts.append(f'color="{_STYLE[mark][3]}"')
        if mark == "removed":
            parts.append('style="dashed"')
        if mark == "guard":
            parts += ['style="dashed"', f'color="{_GUARD_LINE}"', 'arrowhead="none"']
        extra = f" [{', '.join(parts)}]" if parts else ""
        self.edges.append(f"  {quote(source)} -> {quote(target)}{extra}")


@dataclass
class _Scene:
    """What a drawing shows: inputs, equations (with their marks), outputs, guards.

    ``marks`` is ``None`` for a plain graph (every equation ``"same"``); ``olds`` and
    ``instead`` hold, by equation position, the old form of a rewritten equation and what
    is read instead of a removed one's value.
    """

    title: str
    inputs: Sequence[Var]
    eqs: Sequence[Equation]
    marks: Sequence[str] | None
    olds: Mapping[int, Equation]
    instead: Mapping[int, Var | Literal]
    outputs: Sequence[Var | Literal]
    guards: list[tuple[Guard, str]]
    canonical: Mapping[Var, Var]
    legend: str

    def mark(self, k: int) -> str:
        return "same" if self.marks is None else self.marks[k]


def _full_dot(scene: _Scene, note: list[str]) -> str:
    d = _Drawing(scene.inputs, scene.outputs, scene.canonical)
    for v in scene.inputs:
        d.input(v)
    for k, eq in enumerate(scene.eqs):
        mark, old = scene.mark(k), scene.olds.get(k)
        d.equation(eq, mark, old, scene.instead.get(k))
        target = d.node_id(eq.out)
        for p, v in enumerate(eq.ins):
            if type(v) is Var:
                d.edge(d.node_id(v), target, mark=mark)
            else:
                node = f"c:{k}:{p}"
                d.literal(node, v)
                d.edge(node, target, mark=mark)
        if old is not None:  # inputs the rewritten equation no longer reads
            new_ins = {d.canonical.get(v, v) for v in eq.ins if type(v) is Var}
            for v in old.ins:
                if type(v) is Var and v not in new_ins:
                    d.edge(d.node_id(v), target, mark="removed")
    for k, v in enumerate(scene.outputs):
        if type(v) is Literal:
            d.literal(f"out:{k}", v, "output" + (f" {k}" if len(scene.outputs) > 1 else ""))
    for k, (g, mark) in enumerate(scene.guards):
        d.guard(f"guard:{k}", g, mark)
        d.edge(d.node_id(g.var), f"guard:{k}", mark="guard")
    if not scene.eqs and not scene.inputs:
        d.nodes.append(f'  "empty" [label="no equations", shape="plaintext", '
                       f'fontcolor="{GREY}"]')
    return "\n".join([*dot_header(note, "program"), *d.nodes, *d.edges, "}"]) + "\n"


class _Tally:
    """What the collapsed groups of a drawing hold, counted in one pass."""

    def __init__(self, n_groups: int) -> None:
        self.ops: list[dict[str, int]] = [{} for _ in range(n_groups)]
        self.marks: list[Counter] = [Counter() for _ in range(n_groups)]
        self.literals = [0] * n_groups
        self.edges: dict[tuple[str, str, str], int] = {}  # (source, target, mark) -> count

    def edge(self, key: tuple[str, str, str]) -> None:
        self.edges[key] = self.edges.get(key, 0) + 1


def _grouped_dot(scene: _Scene, grouping: Grouping, expand: set[str], max_nodes: int,
                 note: list[str]) -> str:
    """Collapsed groups as single boxes, expanded ones as clusters of their equations;
    edges between groups counted. One pass over the equations and their inputs."""
    d = _Drawing(scene.inputs, scene.outputs, scene.canonical)
    of = grouping.of
    n_groups = len(grouping.labels)
    expanded = [label in expand for label in grouping.labels]
    unknown = sorted(expand - set(grouping.labels))
    many_inputs = len(scene.inputs) > max(1, max_nodes // 2)
    canonical = scene.canonical
    # The node each variable's edges start from: its group's box (or its own node).
    node_of: dict[Var, str] = {}
    for v in scene.inputs:
        node_of[v] = ":inputs" if many_inputs else d.node_id(v)
    group_names = [f"g:{j}" for j in range(n_groups)]
    counted_sources = {name for name, e in zip(group_names, expanded) if not e} | {":inputs"}
    for k, eq in enumerate(scene.eqs):
        j = of[k]
        out = canonical.get(eq.out, eq.out) if canonical else eq.out
        node_of[out] = d.node_id(out) if expanded[j] else group_names[j]

    def source_of(v: Var) -> str:
        if canonical:
            v = canonical.get(v, v)
        found = node_of.get(v)
        return d.node_id(v) if found is None else found  # None: read but never defined

    tally = _Tally(n_groups)
    clusters: list[list[str]] = [[] for _ in range(n_groups)]
    plain: list[tuple[str, str, str]] = []
    marks = scene.marks
    for k, eq in enumerate(scene.eqs):
        j = of[k]
        mark = "same" if marks is None else marks[k]
        if expanded[j]:
            _expanded_equation(scene, d, k, eq, mark, source_of, counted_sources, clusters[j],
                               plain, tally)
            continue
        ops = tally.ops[j]
        symbol = eq.op.symbol
        ops[symbol] = ops.get(symbol, 0) + 1
        if mark != "same":
            tally.marks[j][mark] += 1
        target = group_names[j]
        for v in eq.ins:
            if type(v) is Literal:
                tally.literals[j] += 1
                continue
            source = source_of(v)
            if source != target:
                tally.edge((source, target, "same"))

    if many_inputs:
        d.nodes.append(many_inputs_node(":inputs", len(scene.inputs), "inputs",
                                        scene.inputs[0].name, scene.inputs[-1].name))
    else:
        for v in scene.inputs:
            d.input(v)
    output_groups = {source_of(v) for v in scene.outputs if type(v) is Var}
    for j in range(n_groups):
        if expanded[j]:
            d.nodes.extend(cluster_lines(j, grouping, clusters[j]))
        else:
            d.group(j, grouping, Counter(tally.ops[j]), tally.literals[j], tally.marks[j],
                    group_names[j] in output_groups)
    for k, v in enumerate(scene.outputs):
        if type(v) is Literal:
            d.literal(f"out:{k}", v, "output")
    if len(scene.guards) <= MAX_GUARD_NODES:
        for k, (g, mark) in enumerate(scene.guards):
            d.guard(f"guard:{k}", g, mark)
            plain.append((source_of(g.var), f"guard:{k}", "guard"))
    elif scene.guards:
        d.nodes.append('  ":guards" ' + attrs(
            label=html_label([f"<B>{len(scene.guards):,} guards</B>",
                          small("listed in the graph's table", GREY)]),
            shape="box", style="filled,rounded", fillcolor=_GUARD_FILL, color=_GUARD_LINE,
            fontcolor=_GUARD_INK))
        for g, _ in scene.guards:
            tally.edge((source_of(g.var), ":guards", "guard"))
    for source, target, mark in plain:
        d.edge(source, target, mark=mark)
    for (source, target, mark), count in tally.edges.items():
        d.edge(source, target, count, mark)
    note = note[:1] + grouped_note(len(scene.eqs), grouping, expanded, unknown,
                                   max_nodes) + note[1:]
    return "\n".join([*dot_header(note, "program"), *d.nodes, *d.edges, "}"]) + "\n"


def _expanded_equation(scene: _Scene, d: _Drawing, k: int, eq: Equation, mark: str,
                       source_of: Any, counted_sources: set[str], cluster: list[str],
                       plain: list[tuple[str, str, str]], tally: _Tally) -> None:
    """Draw equation ``k`` of an expanded group into ``cluster``; its edges from other
    expanded equations are plain, those from collapsed groups counted."""
    before = len(d.nodes)
    d.equation(eq, mark, scene.olds.get(k), scene.instead.get(k), indent="    ")
    target = d.node_id(eq.out)
    for p, v in enumerate(eq.ins):
        if type(v) is Literal:
            d.literal(f"c:{k}:{p}", v, indent="    ")
            plain.append((f"c:{k}:{p}", target, mark))
            continue
        source = source_of(v)
        if source in counted_sources:
            tally.edge((source, target, mark))
        else:
            plain.append((source, target, mark))
    cluster.extend(d.nodes[before:])
    del d.nodes[before:]


def _draw(scene: _Scene, group: str | None, expand: Iterable[str], max_nodes: int,
          legend: bool) -> str:
    note = [scene.title] + ([scene.legend] if legend else [])
    eqs = scene.eqs
    with collector_paused():  # many small acyclic objects: see wengert.core.collector
        if group == "auto":
            grouping = auto_grouping(eqs, max_nodes) if len(eqs) > max_nodes else None
        elif group is None:
            grouping = None
        else:
            grouping = group_equations(eqs, group)
        if grouping is None:
            return _full_dot(scene, note)
        return _grouped_dot(scene, grouping, set(expand), max_nodes, note)


def _graph_title(graph: Graph) -> str:
    return _cut(f"graph {graph.signature()} → {returns_text(graph)}", 120)


def graph_dot(graph: Graph | Tape, *, group: str | None = "auto", expand: Iterable[str] = (),
              max_nodes: int = MAX_NODES, legend: bool = True) -> str:
    """DOT source drawing a graph (see the module docstring for what is drawn how).

    Parameters
    ----------
    graph : Graph or Tape
        From ``wg.trace``, ``wg.grad_graph``, a pass; or a tape (``wg.tape_of(y)``), read
        as the same IR and drawn as a program (without values: :func:`tape_dot` shows them).
    group : {"auto", "line", "function", "chunk", None}
        ``"auto"`` draws every equation up to ``max_nodes`` equations and groups a longer
        graph (by the user's line, else function, else into consecutive runs), as
        :func:`~wengert.jupyter.views.tape_dot.tape_dot` does; a grouping name forces it;
        ``None`` draws every equation whatever the size.
    expand : iterable of str
        Labels of groups (``"line 12"``, ``"t0–t499"``) to draw in full, as clusters.
    max_nodes : int
        The size above which ``group="auto"`` groups.
    legend : bool
        Add a line saying what the node styles mean.

    Examples
    --------
    >>> import wengert as wg
    >>> def chain(x):
    ...     for _ in range(400):
    ...         x = x * 1.01
    ...     return x
    >>> source = graph_dot(wg.trace(chain, 1.0))
    >>> '"g:0"' in source and "400 equations in 20 groups" in source
    True
    """
    if isinstance(graph, Tape):
        return _draw(_tape_scene(graph), group, expand, max_nodes, legend)
    scene = _Scene(_graph_title(graph), graph.inputs, graph.equations, None, {}, {},
                   graph.outputs, [(g, "same") for g in graph.guards], {}, GRAPH_LEGEND)
    return _draw(scene, group, expand, max_nodes, legend)


def _tape_scene(tape: Tape) -> _Scene:
    """A tape drawn as a program: its leaves are the inputs, and every output of an
    equation with several is drawn as that equation's node."""
    canonical = {v: eq.out for eq in tape.equations for v in eq.outs[1:]}
    outputs = tape.output_vars
    title = f"tape of {len(tape):,} equations → {', '.join(v.name for v in outputs)}"
    return _Scene(_cut(title, 120), tape.inputs, tape.equations, None, {}, {}, outputs, [],
                  canonical, GRAPH_LEGEND)


def _pass_scene(diff: GraphDiff) -> _Scene:
    eqs: list[Equation] = []
    marks: list[str] = []
    olds: dict[int, Equation] = {}
    instead: dict[int, Var | Literal] = {}
    replaced = diff.replaced
    for row in diff.rows:
        k = len(eqs)
        eq = row.equation
        eqs.append(eq)
        marks.append(row.kind)
        if row.kind == "changed" and row.before is not None:
            olds[k] = row.before
        elif row.kind == "removed" and eq.out in replaced:
            instead[k] = replaced[eq.out]
    added = set(map(id, diff.guards_added))
    guards = [(g, "added" if id(g) in added else "same") for g in diff.after.guards]
    guards += [(g, "removed") for g in diff.guards_removed]
    title = f"{diff.summary()} · graph {diff.after.signature()}"
    return _Scene(_cut(title, 140), diff.after.inputs, eqs, marks, olds, instead,
                  diff.after.outputs, guards, diff.matched, PASS_LEGEND)


def pass_dot(before: Graph, after: Graph, *, group: str | None = "auto",
             expand: Iterable[str] = (), max_nodes: int = MAX_NODES, legend: bool = True,
             diff: GraphDiff | None = None) -> str:
    """DOT source drawing what a pass changed: both graphs on one drawing, removed
    equations struck in dashed red, new ones green, rewritten ones amber with the old
    formula (matched as :func:`~wengert.jupyter.views.graph_html.diff_graphs` does). Parameters
    as for :func:`graph_dot` (and ``diff``: ``diff_graphs(before, after)`` when already
    computed); a grouped drawing counts the changes in each group.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> def f(x):
    ...     unused = np.exp(x)
    ...     return np.sin(x)
    >>> g = wg.trace(f, np.ones(2))
    >>> source = pass_dot(g, g.replace(equations=g.equations[1:]))
    >>> "<S><B>t0</B>" in source and "1 removed" in source
    True
    """
    if diff is None:
        diff = diff_graphs(before, after)
    return _draw(_pass_scene(diff), group, expand, max_nodes, legend)


def _body(source: str) -> list[str]:
    return [line + "\n" for line in source.splitlines()[1:-1]]


def graph_drawing(graph: Graph, *, group: str | None = "auto", expand: Iterable[str] = (),
                  max_nodes: int = MAX_NODES, legend: bool = True) -> dict[str, Any]:
    """The keyword arguments of :func:`~wengert.jupyter.views.drawing.drawing_class` that draw
    ``graph``: ``name``, ``body`` (the DOT statements of :func:`graph_dot`), a
    deterministic ``summary`` (its ``repr``) and the HTML listing shown when ``dot`` is
    missing. ``wg.draw(graph)`` is ``drawing_class()(**graph_drawing(graph, ...))``.

    Examples
    --------
    >>> import wengert as wg
    >>> kwargs = graph_drawing(wg.trace(lambda x: x * x + 1.0, 2.0))
    >>> kwargs["summary"], kwargs["name"]
    ('<wg.draw: graph f, 2 equations, 1 input>', 'program')
    """
    source = graph_dot(graph, group=group, expand=expand, max_nodes=max_nodes, legend=legend)
    n, k = len(graph), len(graph.inputs)
    summary = (f"<wg.draw: graph {graph.name}, {n:,} equation{'s' if n != 1 else ''}, "
               f"{k:,} input{'s' if k != 1 else ''}>")
    return {"name": "program", "body": _body(source), "summary": summary,
            "fallback_html": graph_html(graph)}


def pass_drawing(before: Graph, after: Graph, report: Any = None, *,
                 group: str | None = "auto", expand: Iterable[str] = (),
                 max_nodes: int = MAX_NODES, legend: bool = True) -> dict[str, Any]:
    """As :func:`graph_drawing`, for :func:`pass_dot` (the fallback is
    :func:`~wengert.jupyter.views.graph_html.passes_html`).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * 2.0, np.ones(2))
    >>> pass_drawing(g, g)["summary"]
    '<wg.draw: pass, 2 → 2 equations: unchanged>'
    """
    diff = diff_graphs(before, after)
    source = pass_dot(before, after, group=group, expand=expand, max_nodes=max_nodes,
                      legend=legend, diff=diff)
    return {"name": "program", "body": _body(source), "summary": f"<wg.draw: pass, "
            f"{diff.summary()}>", "fallback_html": passes_html(before, after, report, diff=diff)}
