"""Tapes and graphs as Graphviz drawings: pure functions from the one IR to DOT source.

A read tape and a traced graph are both equations over variables and literals
(:mod:`wengert.core.ir`), so one drawing serves both. Every equation is one box,
``t3 = t2 − y`` (an equation with several outputs, ``t2, t3 = eigh(t1)``, is one box
too), and its inputs come in as arrows from earlier boxes, inputs and literals, styled by
this table (hue *and* shape or border, for colour-blind readers and both JupyterLab themes):

=========================  ============================================================
input (a tape's leaf)      blue double ring (ellipse): its name, its value (or dtype and
                           shape) and, after a backward pass, its gradient
literal (constant)         grey dashed ellipse with its value (or the user's name)
equation                   box ``t3 = t2 × w`` with its value (or dtype and shape); an
                           output has a thick border; a fused kernel shows its formula
guard                      amber rounded box ``guard bool(t1) == True`` and the user's
                           line, hanging from the value it tests by a dashed edge
group of equations         3-d box with its label, count and commonest ops (big drawings)
=========================  ============================================================

What only one kind of subject knows comes in as annotations (:class:`Known`): a tape's
kept values, user names, adjoints and in-place notes; a pass's marks (:func:`pass_dot`
draws what a pass changed on one drawing: removed equations struck through in dashed red
boxes, marked ``−``, new ones green, ``+``, rewritten ones amber, ``~``, with the old
formula struck below the new).

The flow is top to bottom, in execution order. Layout time in ``dot`` grows steeply with
the number of nodes (about 0.1 s for 300, 16 s for 1,000), so above ``max_nodes``
equations the drawing is grouped (by source line, else by function, else into
consecutive runs) and each group drawn as one box with a count; the drawing's label says
how to draw a group in full. Everything is one pass over the equations (no recursion),
so 10⁶ equations are fine. The same subject always gives the same DOT text.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> with wg.keep_values():
...     w = wg.tensor(0.8, requires_grad=True)
...     y = w * 1.5 + 0.5
>>> source = dot_source(wg.tape_of(y), names={"x0": "w"})
>>> source.startswith("digraph tape {") and '"x0" -> "t0"' in source
True
>>> g = wg.trace(lambda x, w: np.sum(np.tanh(x @ w) ** 2), np.ones((2, 3)), np.ones(3))
>>> source = dot_source(g)
>>> source.startswith("digraph program {") and '"x" -> "t0"' in source
True
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wengert.core.collector import collector_paused
from wengert.core.equations import Tape
from wengert.core.formatting import (
    factor_text,
    format_number,
    index_text,
    params_text,
    shape_text,
    summarize,
    value_text,
)
from wengert.graph.ir import Equation, Guard, Literal, Var
from wengert.graph.program import Graph
from wengert.jupyter.views.diff import GraphDiff, diff_graphs, returns_text
from wengert.jupyter.views.dot_text import attrs, escape, html_label, quote, small
from wengert.jupyter.views.grouping import Grouping, auto_grouping, group_equations
from wengert.jupyter.views.subject import Known, NameKey, atom, tape_known

__all__ = [
    "dot_source",
    "pass_dot",
    "equation_formula",
    "node_value_lines",
    "MAX_NODES",
    "TAPE_LEGEND",
    "GRAPH_LEGEND",
    "PASS_LEGEND",
]

#: Above this many equations ``group="auto"`` draws groups instead of single equations.
MAX_NODES = 300
#: Items of an array shown on a node.
NODE_ITEMS = 4
#: Characters of a formula shown on a box.
FORMULA_WIDTH = 48
#: Guards drawn one by one in a grouped drawing (more become one node with a count).
MAX_GUARD_NODES = 20

# Colours: node fills are light in both JupyterLab themes, so their text is dark on both;
# edges and the graph's label are a middle grey that reads on white and on near-black.
FONT = "Helvetica,Arial,sans-serif"
INK = "#1f2328"
GREY = "#6b7280"
EDGE = "#7b8494"
BLUE = "#1d4ed8"
ADJOINT = "#a34a00"
NBSP = "&#160;"

TAPE_LEGEND = ("blue double ring: a leaf that requires grad · grey dashed: a constant · "
               "box: t = op(inputs), its value and (after backward) its grad")
GRAPH_LEGEND = ("blue double ring: an input · grey dashed: a literal · box: t = op(inputs) "
                "with its dtype[shape]; thick border: an output · amber: a guard")
PASS_LEGEND = ("red dashed, struck (−): removed by the pass · green (+): new · "
               "amber (~): rewritten, the old formula struck below · plain: unchanged")

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
_INFIX = {"+": "+", "-": "−", "*": "×", "/": "/", "**": "**", "@": "@", "//": "//", "%": "%"}
_PREFIX = {"-": "−", "+": "+"}
_POSTFIX = {"ᵀ", "⁻¹"}
_PARAM_WIDTH = 28
_ARGS_SHOWN = 4
_BY = {"line": "source line", "function": "function", "chunk": "consecutive runs"}


def _cut(text: str, width: int = FORMULA_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# -- formulas -------------------------------------------------------------------------------


def equation_formula(eq: Equation, texts: Sequence[str] | None = None) -> str:
    """The right-hand side of an equation as a student reads it: ``t2 − y``, ``sin(t0)``,
    ``t1ᵀ``, ``x[0, 1:]``, ``Σ(t3, axis=0)``; a fused kernel as its formula with its
    inputs' names; ``texts`` are the inputs as they read (their names by default).

    Examples
    --------
    >>> import wengert as wg
    >>> g = wg.trace(lambda x, w: np.sum(np.tanh(x @ w) ** 2, axis=0), np.ones((2, 3)),
    ...              np.ones(3))
    >>> [equation_formula(eq) for eq in g]
    ['x @ w', 'tanh(t0)', 't1 ** 2', 'Σ(t2, axis=0)']
    >>> x = wg.tensor(np.ones((2, 3)), requires_grad=True)
    >>> [equation_formula(eq) for eq in wg.tape_of((x[0] - 1.0).sum(axis=0))]
    ['x0[0]', 't0 − 1', 'Σ(t1, axis=0)']
    """
    args = list(texts) if texts is not None else [atom(v) for v in eq.ins]
    op, symbol = eq.op, eq.op.symbol
    if len(eq.outs) > 1:  # the parts of one decomposition
        name = eq.primitive  # eigh, not eigh_values/eigh_vectors
        params = params_text(eq.params, _PARAM_WIDTH, skip_unset=True)
        return f"{name}({', '.join(args)}{', ' + params if params else ''})"
    if getattr(op, "kernel_source", None) is not None and op.formula:
        return _FUSED_ARG.sub(
            lambda m: args[int(m.group(1))] if int(m.group(1)) < len(args) else m.group(0),
            op.formula)
    if op.name == "getitem" and len(args) == 1 and "index" in eq.params:
        return f"{args[0]}[{index_text(eq.params['index'], brackets=False)}]"
    if len(args) == 2 and symbol in _INFIX:
        return f"{factor_text(args[0])} {_INFIX[symbol]} {factor_text(args[1])}"
    params = params_text(eq.params, _PARAM_WIDTH, skip_unset=True)
    if len(args) == 1 and not params:
        if symbol in _PREFIX:
            return f"{_PREFIX[symbol]}{factor_text(args[0])}"
        if symbol in _POSTFIX:
            return f"{factor_text(args[0])}{symbol}"
        if symbol == "‖·‖":
            return f"‖{args[0]}‖"
    if len(args) > _ARGS_SHOWN:
        args = [*args[: _ARGS_SHOWN - 1], f"… {len(args) - _ARGS_SHOWN + 1} more"]
    return f"{symbol}({', '.join(args)}{', ' + params if params else ''})"


# -- node text ------------------------------------------------------------------------------


def _plain_array(value: Any) -> np.ndarray | None:
    """``value`` as a numeric NumPy array when it is one underneath (a tensor, a dual's
    primal); ``None`` for anything else (a traced value, a rule's saved object)."""
    if value is None:
        return None
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        try:
            value = value.numpy()
        except TypeError:  # a tensor over a traced value
            return None
    primal = getattr(value, "primal", None)
    try:
        a = np.asarray(value if primal is None else primal)
    except (TypeError, ValueError):
        return None
    return a if a.dtype.kind in "biufc" else None


def node_value_lines(value: Any, digits: int = 3) -> tuple[str, str]:
    """A value as a node shows it: ``("", "1.5")`` for a number or a small array, else
    ``("3×4 · ‖·‖=3.2", "[-0.159, 0.541, …, 0.781]")`` (shape and norm, then entries).

    Examples
    --------
    >>> node_value_lines(1.5), node_value_lines(np.arange(3.0))
    (('', '1.5'), ('', '[0, 1, 2]'))
    >>> node_value_lines(np.arange(12.0).reshape(3, 4))
    ('3×4 · ‖·‖=22', '[0, 1, …, 11]')
    """
    a = _plain_array(value)
    if a is None:
        return "", value_text(value)
    if a.size <= NODE_ITEMS:
        return "", summarize(a, max_items=NODE_ITEMS, digits=digits)
    flat = a.ravel()
    entries = f"[{format_number(flat[0], digits)}, {format_number(flat[1], digits)}, …, " \
              f"{format_number(flat[-1], digits)}]"
    head = shape_text(a.shape)
    if a.dtype.kind in "fiu":
        norm = float(np.linalg.norm(flat.astype(np.float64)))
        head += f" · ‖·‖={format_number(norm, 2)}"
    return head, entries


# -- scenes ---------------------------------------------------------------------------------


@dataclass
class Scene:
    """What a drawing shows: inputs, equations, outputs, guards, and their annotations.

    ``marks`` is ``None`` outside a pass drawing (every equation ``"same"``); ``olds`` and
    ``instead`` hold, by equation position, the old form of a rewritten equation and what
    is read instead of a removed one's value; ``canonical`` maps a variable to the one
    whose node stands for it (the first output of its equation; in a pass drawing, the
    old graph's variable).
    """

    name: str
    title: str | None
    inputs: Sequence[Var]
    eqs: Sequence[Equation]
    outputs: Sequence[Var | Literal]
    legend: str
    known: Known = field(default_factory=Known)
    marks: Sequence[str] | None = None
    olds: Mapping[int, Equation] = field(default_factory=dict)
    instead: Mapping[int, Var | Literal] = field(default_factory=dict)
    guards: list[tuple[Guard, str]] = field(default_factory=list)
    canonical: dict[Var, Var] = field(default_factory=dict)
    nouns: tuple[str, str] = ("inputs", "literal")
    empty: str = "no equations"

    def mark(self, k: int) -> str:
        return "same" if self.marks is None else self.marks[k]


def _first_outputs(eqs: Sequence[Equation], canonical: dict[Var, Var]) -> dict[Var, Var]:
    for eq in eqs:
        for v in eq.outs[1:]:
            canonical.setdefault(v, eq.out)
    return canonical


def tape_scene(tape: Tape, names: Mapping[NameKey, str] | None = None,
               adjoints: Mapping[Any, Any] | None = None) -> Scene:
    """A tape's scene: its leaves as inputs, its kept values, names and adjoints."""
    return Scene("tape", None, tape.inputs, tape.equations, tape.output_vars, TAPE_LEGEND,
                 tape_known(tape, names, adjoints),
                 canonical=_first_outputs(tape.equations, {}), nouns=("leaves", "constant"),
                 empty="no equations recorded")


def graph_scene(graph: Graph) -> Scene:
    """A traced graph's scene: its signature as the title, its guards."""
    title = _cut(f"graph {graph.signature()} → {returns_text(graph)}", 120)
    return Scene("program", title, graph.inputs, graph.equations, graph.outputs,
                 GRAPH_LEGEND, guards=[(g, "same") for g in graph.guards],
                 canonical=_first_outputs(graph.equations, {}))


def pass_scene(diff: GraphDiff) -> Scene:
    """A pass's scene: the union of both graphs, each equation marked."""
    eqs: list[Equation] = []
    marks: list[str] = []
    olds: dict[int, Equation] = {}
    instead: dict[int, Var | Literal] = {}
    # a removed decomposition may share an output with the new one that replaced it (a
    # pass that changed one of its outputs): its own node, under a copy of that variable
    kept = {v for row in diff.rows if row.kind != "removed" and row.after is not None
            for v in row.after.outs}
    for row in diff.rows:
        k = len(eqs)
        eq = row.equation
        if row.kind == "removed" and any(v in kept for v in eq.outs):
            eq = eq.replace(out=[Var(v.name, v.shape, v.dtype) if v in kept else v
                                 for v in eq.outs])
        eqs.append(eq)
        marks.append(row.kind)
        if row.kind == "changed" and row.before is not None:
            olds[k] = row.before
        elif row.kind == "removed" and eq.out in diff.replaced:
            instead[k] = diff.replaced[eq.out]
    added = set(map(id, diff.guards_added))
    guards = [(g, "added" if id(g) in added else "same") for g in diff.after.guards]
    guards += [(g, "removed") for g in diff.guards_removed]
    title = _cut(f"{diff.summary()} · graph {diff.after.signature()}", 140)
    canonical = _first_outputs(eqs, dict(diff.matched))
    return Scene("program", title, diff.after.inputs, eqs, diff.after.outputs, PASS_LEGEND,
                 marks=marks, olds=olds, instead=instead, guards=guards, canonical=canonical)


# -- the drawing ----------------------------------------------------------------------------


class _Drawing:
    """The nodes and edges of one DOT graph, over canonical variables."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.known = scene.known
        self.canonical = scene.canonical
        self.nodes: list[str] = []
        self.edges: list[str] = []
        self.ids: dict[Var, str] = {}
        self.taken: set[str] = set()
        self.outputs: dict[Var, list[int]] = {}
        for k, v in enumerate(scene.outputs):
            if type(v) is Var:
                self.outputs.setdefault(self.canonical.get(v, v), []).append(k)
        self.many_outputs = len(scene.outputs) > 1

    def node_id(self, v: Var) -> str:
        """The node of variable ``v``: its name (made unique), stable for a subject. Other
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

    def _value_lines(self, v: Var, prefix: str = "") -> list[str]:
        """Shape line (arrays), value line, gradient line of a variable; its dtype and
        shape when its value is not known."""
        value = self.known.values.get(v)
        grad_label, gradient = self.known.grads.get(v, ("", None))
        unreached = [small(f"{prefix}grad: not reached by the sweep", GREY)] \
            if v in self.known.unreached else []
        if value is None and gradient is None:
            return ([small(prefix + v.aval, GREY)] if v.shape is not None else []) + unreached
        lines = []
        head, entries = node_value_lines(value) if value is not None else ("", "")
        if gradient is not None:
            grad_head, grad_entries = node_value_lines(gradient)
            head = head or grad_head
        if head:
            lines.append(small(prefix + head, GREY))
        if entries:
            lines.append(small(entries if head else prefix + entries))
        if gradient is not None:
            lines.append(small(f"{grad_label} {grad_entries}", ADJOINT, italic=True))
        return lines + unreached

    def _notes(self, v: Var, tape_name: bool, outs: Sequence[Var] = ()) -> list[str]:
        """Grey lines under a node: its notes, then the tape's names of ``v`` (and of the
        other ``outs`` of its equation) when the user's are shown, and that it is an
        output."""
        outs = outs or (v,)
        named = tape_name and any(o in self.known.names for o in outs)
        notes = [", ".join(o.name for o in outs)] if named else []
        note = self._output_note(v)
        if note:
            notes.append(note)
        lines = [small(n, GREY) for n in self.known.notes.get(v, ())]
        return lines + ([small(" · ".join(notes), GREY)] if notes else [])

    def input(self, v: Var, indent: str = "  ") -> None:
        lines = [f"<B>{escape(self.known.name(v))}</B>", *self._value_lines(v),
                 *self._notes(v, False)]
        self.nodes.append(indent + quote(self.node_id(v)) + " " + attrs(
            label=html_label(lines), shape="ellipse", style="filled", fillcolor="#dbe7ff",
            color=BLUE, penwidth="2", peripheries="2", margin="0.04,0.02"))

    def literal(self, node: str, value: Literal, user: str | None = None, note: str = "",
                indent: str = "  ") -> None:
        lines = [f"<B>{escape(user)}</B>"] if user is not None else []
        if value.value is not None:
            head, entries = node_value_lines(value.value)
            lines += [small(head, GREY)] if head else []
            lines.append(small(_cut(entries, 28)))
        elif user is None:
            lines.append("const")
        if note:
            lines.append(small(note, GREY))
        self.nodes.append(indent + quote(node) + " " + attrs(
            label=html_label(lines), shape="ellipse", style="filled,dashed", fillcolor="#f1f1f1",
            color="#8a8a8a", fontcolor="#3f3f3f", fontsize="9", height="0.25",
            margin="0.04,0.02"))

    def equation(self, k: int, eq: Equation, indent: str = "  ") -> None:
        scene, known = self.scene, self.known
        mark, old, instead = scene.mark(k), scene.olds.get(k), scene.instead.get(k)
        names = ", ".join(known.name(v) for v in eq.outs)
        texts = [known.name(v, eq.index if eq.index is not None else k, p)
                 for p, v in enumerate(eq.ins)]
        head = f"<B>{escape(names)}</B>{NBSP}={NBSP}{escape(_cut(equation_formula(eq, texts)))}"
        if mark == "removed":
            head = f"<S>{head}</S>"
        lines = [(escape(_MARK[mark]) if mark != "same" else "") + head]
        if old is not None:
            lines.append(small(f"was {old.out.name} = {_cut(equation_formula(old))}",
                               _STYLE["removed"][1], struck=True))
        if instead is not None:
            lines.append(small(f"→ read as {_cut(atom(instead), 24)}", _STYLE["added"][1]))
        many = len(eq.outs) > 1
        for v in eq.outs:
            lines += self._value_lines(v, f"{known.name(v)}: " if many else "")
        if getattr(eq.op, "kernel_source", None) is not None:
            lines.append(small(f"fused kernel {eq.op.symbol}", GREY))
        lines += self._notes(eq.out, True, eq.outs)
        output = self._output_note(eq.out) is not None and mark != "removed"
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
        lines = _group_lines(j, grouping, ops, literals, self.scene.nouns[1])
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

    def text(self, note: Sequence[str]) -> str:
        return "\n".join([*_header(note, self.scene.name), *self.nodes, *self.edges, "}"]) \
            + "\n"


def _group_lines(j: int, grouping: Grouping, ops: Counter, others: int, noun: str
                 ) -> list[str]:
    """The first lines of a collapsed group's box: its label, its line of code, how many
    equations (and ``others`` literals) and the commonest ops."""
    lines = [f"<B>{escape(grouping.labels[j])}</B>"]
    code = grouping.code[j]
    if code:
        lines.append(escape(_cut(code)))
    count = f"{grouping.sizes[j]:,} equation{'s' if grouping.sizes[j] != 1 else ''}"
    if others:
        count += f", {others:,} {noun}{'s' if others != 1 else ''}"
    lines.append(small(count))
    common = ", ".join(f"{symbol} ×{n:,}" for symbol, n in ops.most_common(3))
    if len(ops) > 3:
        common += ", …"
    lines.append(small(common, GREY))
    return lines


def _header(note: Sequence[str], name: str) -> list[str]:
    """The first lines of a drawing: its styles and its label (``note``, one line each,
    under the drawing)."""
    label = ""
    if note:
        label = ", label=<" + '<BR ALIGN="LEFT"/>'.join(escape(n) for n in note) + \
            '<BR ALIGN="LEFT"/>>'
    return [
        f"digraph {name} {{",
        f'  graph [rankdir="TB", bgcolor="transparent", nodesep="0.3", ranksep="0.35", '
        f'fontname="{FONT}", fontsize="9", fontcolor="{GREY}", labelloc="b", '
        f'labeljust="l"{label}]',
        f'  node [fontname="{FONT}", fontsize="10", fontcolor="{INK}", margin="0.1,0.04", '
        'height="0.3"]',
        f'  edge [color="{EDGE}", arrowsize="0.6", penwidth="1.1", fontname="{FONT}"]',
    ]


def _grouped_note(n: int, grouping: Grouping, expanded: list[bool], unknown: list[str],
                  max_nodes: int) -> list[str]:
    """What a grouped drawing's label says of its groups: how it was grouped, how to draw
    a group or everything."""
    n_groups = len(grouping.labels)
    collapsed = [label for label, e in zip(grouping.labels, expanded) if not e]
    out = [f"{n:,} equations in {n_groups:,} group{'s' if n_groups != 1 else ''} "
           f"(by {_BY[grouping.by]}); each 3-d box stands for a group, with its count and "
           "commonest ops."]
    if collapsed:
        out.append(f'Draw a group in full: wg.draw(…, expand=["{collapsed[0]}"]); '
                   "everything: wg.draw(…, group=None) (slow above ~300 equations).")
    if unknown:
        out.append(f"No group is labelled {', '.join(map(repr, unknown))}.")
    drawn = sum(size for size, e in zip(grouping.sizes, expanded) if e)
    if drawn > max_nodes:
        out.append(f"The expanded groups hold {drawn:,} equations: dot may take minutes "
                   "(about 16 s for 1,000 nodes).")
    return out


def _equation_edges(d: _Drawing, k: int, eq: Equation, source_of: Any,
                    counted: set[str], plain: list[tuple[str, str, str]],
                    tally: _Tally | None, indent: str = "  ") -> None:
    """Draw equation ``k`` and its literals; its edges from drawn nodes go to ``plain``,
    those from collapsed groups are counted in ``tally``."""
    scene = d.scene
    mark, old = scene.mark(k), scene.olds.get(k)
    d.equation(k, eq, indent)
    target = d.node_id(eq.out)
    at = eq.index if eq.index is not None else k
    for p, v in enumerate(eq.ins):
        if type(v) is Literal:
            node = f"c:{k}:{p}"
            d.literal(node, v, scene.known.constants.get((at, p)), indent=indent)
            plain.append((node, target, mark))
            continue
        source = source_of(v)
        if tally is not None and source in counted:
            tally.edge((source, target, mark))
        else:
            plain.append((source, target, mark))
    if old is not None:  # inputs the rewritten equation no longer reads
        new_ins = {d.canonical.get(v, v) for v in eq.ins if type(v) is Var}
        for v in old.ins:
            if type(v) is Var and v not in new_ins:
                plain.append((d.node_id(v), target, "removed"))


def _full_dot(scene: Scene, note: list[str]) -> str:
    d = _Drawing(scene)
    for v in scene.inputs:
        d.input(v)
    plain: list[tuple[str, str, str]] = []
    for k, eq in enumerate(scene.eqs):
        _equation_edges(d, k, eq, d.node_id, set(), plain, None)
    for k, v in enumerate(scene.outputs):
        if type(v) is Literal:
            d.literal(f"out:{k}", v, note="output" + (f" {k}" if len(scene.outputs) > 1
                                                        else ""))
    for k, (g, mark) in enumerate(scene.guards):
        d.guard(f"guard:{k}", g, mark)
        plain.append((d.node_id(g.var), f"guard:{k}", "guard"))
    for source, target, mark in plain:
        d.edge(source, target, mark=mark)
    if not scene.eqs and not scene.inputs:
        d.nodes.append(f'  "empty" [label="{scene.empty}", shape="plaintext", '
                       f'fontcolor="{GREY}"]')
    return d.text(note)


class _Tally:
    """What the collapsed groups of a drawing hold, counted in one pass."""

    def __init__(self, n_groups: int) -> None:
        self.ops: list[dict[str, int]] = [{} for _ in range(n_groups)]
        self.marks: list[Counter] = [Counter() for _ in range(n_groups)]
        self.literals = [0] * n_groups
        self.edges: dict[tuple[str, str, str], int] = {}  # (source, target, mark) -> count

    def edge(self, key: tuple[str, str, str]) -> None:
        self.edges[key] = self.edges.get(key, 0) + 1

    def count(self, j: int, eq: Equation, mark: str, target: str, source_of: Any) -> None:
        """Count equation ``eq`` of the collapsed group ``j`` (drawn as ``target``)."""
        ops = self.ops[j]
        ops[eq.op.symbol] = ops.get(eq.op.symbol, 0) + 1
        if mark != "same":
            self.marks[j][mark] += 1
        for v in eq.ins:
            if type(v) is Literal:
                self.literals[j] += 1
                continue
            source = source_of(v)
            if source != target:
                self.edge((source, target, "same"))


def _grouped_dot(scene: Scene, grouping: Grouping, expand: set[str], max_nodes: int,
                 note: list[str]) -> str:
    """Collapsed groups as single boxes, expanded ones as clusters of their equations;
    edges between groups counted. One pass over the equations and their inputs."""
    d = _Drawing(scene)
    of, canonical = grouping.of, scene.canonical
    n_groups = len(grouping.labels)
    expanded = [label in expand for label in grouping.labels]
    many_inputs = len(scene.inputs) > max(1, max_nodes // 2)
    node_of: dict[Var, str] = {}  # the node each variable's edges start from
    for v in scene.inputs:
        node_of[v] = ":inputs" if many_inputs else d.node_id(v)
    group_names = [f"g:{j}" for j in range(n_groups)]
    counted = {name for name, e in zip(group_names, expanded) if not e} | {":inputs"}
    for k, eq in enumerate(scene.eqs):
        out = canonical.get(eq.out, eq.out)
        node_of[out] = d.node_id(out) if expanded[of[k]] else group_names[of[k]]

    def source_of(v: Var) -> str:
        v = canonical.get(v, v)
        found = node_of.get(v)
        return d.node_id(v) if found is None else found  # None: read but never defined

    tally = _Tally(n_groups)
    clusters: list[list[str]] = [[] for _ in range(n_groups)]
    plain: list[tuple[str, str, str]] = []
    for k, eq in enumerate(scene.eqs):
        j = of[k]
        if expanded[j]:
            before = len(d.nodes)
            _equation_edges(d, k, eq, source_of, counted, plain, tally, "    ")
            clusters[j].extend(d.nodes[before:])
            del d.nodes[before:]
        else:
            tally.count(j, eq, scene.mark(k), group_names[j], source_of)
    _grouped_nodes(d, grouping, expanded, clusters, tally, many_inputs, source_of)
    if len(scene.guards) <= MAX_GUARD_NODES:
        for k, (g, mark) in enumerate(scene.guards):
            d.guard(f"guard:{k}", g, mark)
            plain.append((source_of(g.var), f"guard:{k}", "guard"))
    else:
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
    unknown = sorted(expand - set(grouping.labels))
    grouped = _grouped_note(len(scene.eqs), grouping, expanded, unknown, max_nodes)
    head = 1 if scene.title is not None else 0
    return d.text(note[:head] + grouped + note[head:])


def _grouped_nodes(d: _Drawing, grouping: Grouping, expanded: list[bool],
                   clusters: list[list[str]], tally: _Tally, many_inputs: bool,
                   source_of: Any) -> None:
    """The input nodes, group boxes, clusters and literal outputs of a grouped drawing."""
    scene = d.scene
    if many_inputs:
        first, last = scene.inputs[0].name, scene.inputs[-1].name
        d.nodes.append(f"  {quote(':inputs')} " + attrs(
            label=html_label([f"<B>{len(scene.inputs):,} {scene.nouns[0]}</B>",
                              small(f"{first} … {last}")]),
            shape="ellipse", style="filled", fillcolor="#dbe7ff", color=BLUE, penwidth="2",
            peripheries="2"))
    else:
        for v in scene.inputs:
            d.input(v)
    output_groups = {source_of(v) for v in scene.outputs if type(v) is Var}
    for j in range(len(grouping.labels)):
        if expanded[j]:
            label = quote(grouping.labels[j] + "  " + grouping.code[j])
            d.nodes.extend([f"  subgraph {quote(f'cluster_g{j}')} {{",
                            f"    graph [label={label}, "
                            f'style="rounded,dashed", color="{GREY}", fontcolor="{GREY}", '
                            'fontsize="9", labelloc="t", labeljust="l"]', *clusters[j], "  }"])
        else:
            d.group(j, grouping, Counter(tally.ops[j]), tally.literals[j], tally.marks[j],
                    f"g:{j}" in output_groups)
    for k, v in enumerate(scene.outputs):
        if type(v) is Literal:
            d.literal(f"out:{k}", v, note="output")


def _draw(scene: Scene, group: str | None, expand: Iterable[str], max_nodes: int,
          legend: bool) -> str:
    note = ([scene.title] if scene.title is not None else []) + \
        ([scene.legend] if legend else [])
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


def dot_source(subject: Tape | Graph, *, adjoints: Mapping[Any, Any] | None = None,
               names: Mapping[NameKey, str] | None = None, group: str | None = "auto",
               expand: Iterable[str] = (), max_nodes: int = MAX_NODES,
               legend: bool = True) -> str:
    """DOT source drawing a tape or a graph (see the module docstring for what is drawn
    how).

    Parameters
    ----------
    subject : Tape or Graph
        A read tape (``wg.tape_of(y)``, ``GradientTape.recorded``; see
        :func:`~wengert.jupyter.views.subject.as_subject` for the rest) or a graph
        (``wg.trace``, ``wg.grad_graph``, a pass).
    adjoints : mapping, optional
        A tape's cotangents after a backward pass, by variable (``"t3"``) and leaf name (see
        :class:`~wengert.jupyter.views.subject.AdjointCollector`); without them a leaf
        shows its ``.grad`` when it has one.
    names : mapping, optional
        A tape's user names (see :class:`~wengert.jupyter.views.subject.TapeNames`).
    group : {"auto", "line", "function", "chunk", None}
        ``"auto"`` draws every equation up to ``max_nodes`` equations and groups a longer
        subject (by source line, else function, else consecutive runs); a grouping name
        forces it; ``None`` draws every equation whatever the size (slow above a few
        hundred: ``dot`` is superlinear).
    expand : iterable of str
        Labels of groups (as the drawing shows them: ``"line 12"``, ``"f()"``,
        ``"t0–t499"``) to draw in full, as clusters, inside a grouped drawing.
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
    >>> source = dot_source(wg.trace(chain, 1.0))
    >>> '"g:0"' in source and "400 equations in 20 groups" in source
    True
    """
    if isinstance(subject, Graph):
        scene = graph_scene(subject)
    else:
        scene = tape_scene(subject, names, adjoints)
    return _draw(scene, group, expand, max_nodes, legend)


def pass_dot(before: Graph, after: Graph, *, group: str | None = "auto",
             expand: Iterable[str] = (), max_nodes: int = MAX_NODES, legend: bool = True,
             diff: GraphDiff | None = None) -> str:
    """DOT source drawing what a pass changed: both graphs on one drawing, removed
    equations struck in dashed red, new ones green, rewritten ones amber with the old
    formula (matched as :func:`~wengert.jupyter.views.diff.diff_graphs` does). Parameters
    as for :func:`dot_source` (and ``diff``: ``diff_graphs(before, after)`` when already
    computed); a grouped drawing counts the changes in each group.

    Examples
    --------
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
    return _draw(pass_scene(diff), group, expand, max_nodes, legend)
