"""The tape as a Graphviz drawing: a pure function from a tape to DOT source.

Every equation is one box, ``t3 = t2 − y``, with its value and, after a backward pass,
its adjoint: an equation has exactly one output, so separate op and value nodes would
always come in pairs; merging them halves the drawing and reads like the code. Its
inputs come in as arrows from earlier boxes, leaves and constants, styled by the leaf
table (hue *and* shape or border, for colour-blind readers and both JupyterLab themes):

=========================  ============================================================
leaf that requires grad    blue double ring (ellipse), its name, value and gradient
(or a watched variable)
constant                   grey dashed ellipse with its value (or the user's name)
result of an op            plain box ``t3 = t2 − y``; a tape output has a thick border
group of equations         3-d box with its label, count and commonest ops (big tapes)
=========================  ============================================================

The flow is top to bottom, in execution order. Layout time in ``dot`` grows steeply with
the number of nodes (about 0.1 s for 300, 16 s for 1,000), so above ``max_nodes``
equations the tape is grouped (by source line, else by function, else into consecutive
runs) and each group drawn as one box with a count; the graph's label says how to draw a
group in full. Grouping is one pass over the tape (no recursion), so 10⁶ equations are
fine. The same tape always gives the same DOT text.

Examples
--------
>>> import wengert as wg
>>> w = wg.tensor(0.8, requires_grad=True)
>>> with wg.keep_values():
...     y = w * 1.5 + 0.5
>>> source = tape_dot(wg.tape_of(y), names={"x0": "w"})
>>> source.startswith("digraph tape {") and '"x0" -> "t0"' in source
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from wengert.core.equations import Equation, Tape
from wengert.core.formatting import format_number, index_text, params_text, shape_text, summarize
from wengert.jupyter.views.dot_text import attrs, escape, html_label, quote, small
from wengert.jupyter.views.render import (
    NameKey,
    TapeNames,
    adjoint_of_equation,
    adjoint_of_leaf,
    is_notebook_cell,
    leaf_grad,
    leaf_requires_grad_text,
    leaf_value,
    value_text,
)

__all__ = [
    "tape_dot",
    "equation_formula",
    "node_value_lines",
    "Grouping",
    "group_equations",
    "auto_grouping",
    "dot_header",
    "group_lines",
    "cluster_lines",
    "many_inputs_node",
    "grouped_note",
    "MAX_NODES",
    "GROUPINGS",
    "LEGEND",
]

#: Above this many equations ``group="auto"`` draws groups instead of single equations.
MAX_NODES = 300
#: How ``group=`` may split a tape.
GROUPINGS = ("line", "function", "chunk")
#: Consecutive runs a tape is cut into when nothing better is known (``group="chunk"``).
CHUNKS = 20
#: Items of an array shown on a node.
NODE_ITEMS = 4

# Colours: node fills are light in both JupyterLab themes, so their text is dark on both;
# edges and the graph's label are a middle grey that reads on white and on near-black.
FONT = "Helvetica,Arial,sans-serif"
INK = "#1f2328"
GREY = "#6b7280"
EDGE = "#7b8494"
BLUE = "#1d4ed8"
ADJOINT = "#a34a00"
NBSP = "&#160;"

_INFIX = {"+": "+", "-": "−", "*": "×", "/": "/", "**": "**", "@": "@", "//": "//", "%": "%"}
_PREFIX = {"-": "−", "+": "+"}
_POSTFIX = {"ᵀ", "⁻¹"}
_PARAM_WIDTH = 28
_ARGS_SHOWN = 4


# -- formulas -------------------------------------------------------------------------------


def equation_formula(eq: Equation, names: TapeNames) -> str:
    """The right-hand side of an equation as a student reads it: ``t2 − y``, ``sin(t0)``,
    ``t1ᵀ``, ``x[0, 1:]``, ``Σ(t3, axis=0)``.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(np.ones((2, 3)), requires_grad=True)
    >>> tape = wg.tape_of((x[0] - 1.0).sum(axis=0))
    >>> names = TapeNames(tape, {"x0": "x"})
    >>> [equation_formula(eq, names) for eq in tape]
    ['x[0]', 't0 − 1', 'Σ(t1, axis=0)']
    """
    several = len(getattr(eq, "outs", ())) > 1  # a decomposition: eigh
    symbol = eq.primitive if several else eq.op.symbol
    args = [names.input(eq, p) for p in range(len(eq.inputs))]
    if eq.op.name == "getitem" and len(args) == 1 and "index" in eq.params:
        return f"{args[0]}[{index_text(eq.params['index'], brackets=False)}]"
    if len(args) == 2 and symbol in _INFIX:
        return f"{args[0]} {_INFIX[symbol]} {args[1]}"
    params = params_text(eq.params, _PARAM_WIDTH, skip_unset=True)
    if len(args) == 1 and not params:
        if symbol in _PREFIX:
            return f"{_PREFIX[symbol]}{args[0]}"
        if symbol in _POSTFIX:
            return f"{args[0]}{symbol}"
        if symbol == "‖·‖":
            return f"‖{args[0]}‖"
    if len(args) > _ARGS_SHOWN:
        args = [*args[: _ARGS_SHOWN - 1], f"… {len(args) - _ARGS_SHOWN + 1} more"]
    return f"{symbol}({', '.join(args)}{', ' + params if params else ''})"


# -- grouping -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grouping:
    """A tape cut into groups: ``of[k]`` is the group of equation ``k``; group ``j`` has
    label ``labels[j]`` (what ``expand=`` names), a line of code ``code[j]`` (or ``""``)
    and ``sizes[j]`` equations. ``by`` says how it was cut."""

    by: str
    of: list[int]
    labels: list[str]
    code: list[str]
    sizes: list[int]


def _line_label(filename: str, lineno: int, single_file: bool) -> str:
    if single_file or is_notebook_cell(filename):
        return f"line {lineno}"
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{lineno}"


def _common_line(equations: Sequence[Equation], start: int, stop: int) -> str:
    """The code of the line that made all of ``equations[start:stop]``, or ``""``."""
    first = equations[start].source
    if first is None:
        return ""
    for k in range(start + 1, stop):
        line = equations[k].source
        if line is None or line.lineno != first.lineno or line.filename != first.filename:
            return ""
    return first.text


def group_equations(equations: Sequence[Equation], by: str, chunks: int = CHUNKS
                    ) -> Grouping:
    """Cut a tape's or a graph's equations into groups, in one pass: ``by="line"`` (the
    user's line of code), ``"function"`` (the function that line is in) or ``"chunk"`` (``chunks``
    consecutive runs of equal length). Equations without a recorded line form the group
    ``"no line recorded"``. Groups are numbered in order of first appearance.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(1.0, requires_grad=True)
    >>> for _ in range(10):
    ...     x = x * 2.0
    >>> g = group_equations(wg.tape_of(x), "chunk", chunks=3)
    >>> g.labels, g.sizes
    (['t0–t3', 't4–t7', 't8–t9'], [4, 4, 2])
    """
    if by not in GROUPINGS:
        raise ValueError(f"group={by!r}: use one of {', '.join(map(repr, GROUPINGS))}, "
                         "'auto' or None")
    tape = equations
    n = len(tape)
    of: list[int] = []
    labels: list[str] = []
    code: list[str] = []
    sizes: list[int] = []
    if by == "chunk":
        size = max(1, math.ceil(n / max(1, chunks)))
        for start in range(0, n, size):
            stop = min(n, start + size)
            first, last = tape[start].out.name, tape[stop - 1].out.name
            labels.append(f"{first}–{last}" if stop - start > 1 else first)
            code.append(_common_line(tape, start, stop))
            sizes.append(stop - start)
            of.extend([len(labels) - 1] * (stop - start))
        return Grouping(by, of, labels, code, sizes)
    files = {eq.source.filename for eq in tape if eq.source is not None}
    single_file = len(files) <= 1
    functions: dict[str, set[str]] = {}
    if by == "function":
        for eq in tape:
            if eq.source is not None:
                functions.setdefault(eq.source.function, set()).add(eq.source.filename)
    number: dict[Any, int] = {}
    for eq in tape:
        line = eq.source
        if line is None:
            key: Any = None
        elif by == "line":
            key = (line.filename, line.lineno)
        else:
            key = (line.filename, line.function)
        j = number.get(key)
        if j is None:
            j = number[key] = len(labels)
            if line is None:
                labels.append("no line recorded")
                code.append("")
            elif by == "line":
                labels.append(_line_label(line.filename, line.lineno, single_file))
                code.append(line.text)
            else:
                name = "top level" if line.function == "<module>" else f"{line.function}()"
                if len(functions[line.function]) > 1 and not is_notebook_cell(line.filename):
                    name += " in " + line.filename.replace("\\", "/").rsplit("/", 1)[-1]
                labels.append(name)
                code.append("")
            sizes.append(0)
        of.append(j)
        sizes[j] += 1
    return Grouping(by, of, labels, code, sizes)


def auto_grouping(tape: Sequence[Equation], max_nodes: int) -> Grouping:
    """Source lines when they give a few groups, else functions, else chunks."""
    limit = max(2, max_nodes // 4)
    if any(eq.source is not None for eq in tape):
        for by in ("line", "function"):
            grouping = group_equations(tape, by)
            if 1 < len(grouping.labels) <= limit:
                return grouping
    # One group says nothing about the structure: consecutive runs (with their line).
    return group_equations(tape, "chunk")


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


# -- DOT text -------------------------------------------------------------------------------




class _Drawing:
    """Builds the lines of one DOT graph (nodes first, then edges)."""

    def __init__(self, tape: Tape, names: TapeNames, adjoints: Mapping[Any, Any] | None):
        self.tape = tape
        self.changed = tape.changed_leaves()
        self.names = names
        self.adjoints = adjoints
        self.nodes: list[str] = []
        self.edges: list[str] = []
        self.outputs = set(tape.outputs)

    def _value_lines(self, value: Any, gradient: Any, grad_label: str = "grad") -> list[str]:
        """Shape line (arrays), value line, gradient line of a node."""
        lines = []
        head, entries = node_value_lines(value) if value is not None else ("", "")
        if gradient is not None:
            grad_head, grad_entries = node_value_lines(gradient)
            head = head or grad_head
        if head:
            lines.append(small(head, GREY))
        if entries:
            lines.append(small(entries))
        if gradient is not None:
            lines.append(small(f"{grad_label} {grad_entries}", ADJOINT, italic=True))
        return lines

    def leaf(self, i: int, indent: str = "  ") -> None:
        leaf = self.tape.leaves[i]
        lines = [f"<B>{escape(self.names.leaf(i))}</B>"]
        adjoint = adjoint_of_leaf(self.adjoints, i, self.names.user_leaf(i))
        value = None if i in self.changed else leaf_value(leaf)
        if adjoint is not None:
            lines += self._value_lines(value, adjoint)
        else:  # the leaf's own .grad, when a backward pass filled it
            lines += self._value_lines(value, leaf_grad(leaf), ".grad")
        if i in self.changed:
            lines.append(small("changed in place since the equations used it", GREY))
        if leaf_requires_grad_text(leaf) == "watched":
            lines.append(small("watched by the tape", GREY))
        self.nodes.append(indent + quote(f"x{i}") + " " + attrs(
            label=html_label(lines), shape="ellipse", style="filled", fillcolor="#dbe7ff",
            color=BLUE, penwidth="2", peripheries="2", margin="0.04,0.02"))

    def constant(self, eq: Equation, position: int, indent: str = "  ") -> str:
        node = f"c{eq.index}_{position}"
        inp = eq.inputs[position]
        user = self.names.constant(eq.index, position)
        if user is not None:
            lines = [f"<B>{escape(user)}</B>", *self._value_lines(inp.value, None)]
        elif inp.value is not None:
            lines = self._value_lines(inp.value, None)
        else:
            lines = ["const"]
        self.nodes.append(indent + quote(node) + " " + attrs(
            label=html_label(lines), shape="ellipse", style="filled,dashed", fillcolor="#f1f1f1",
            color="#8a8a8a", fontcolor="#3f3f3f", fontsize="9", height="0.25",
            margin="0.04,0.02"))
        return node

    def equation(self, eq: Equation, indent: str = "  ") -> None:
        names = self.names
        shown = names.equation(eq.index)  # (the tape's name where the user's is ambiguous)
        user = shown if shown != eq.name else None
        head = f"<B>{escape(shown)}</B>{NBSP}={NBSP}{escape(equation_formula(eq, names))}"
        lines = [head]
        adjoint = adjoint_of_equation(self.adjoints, eq.index)
        lines += self._value_lines(eq.value, adjoint)
        if eq.value is None and adjoint is None and eq.shape not in (None, ()):
            lines.append(small(shape_text(eq.shape), GREY))
        if eq.value is None and eq.written:
            lines.append(small("written in place since", GREY))
        output = eq.index in self.outputs
        notes = [eq.name] if user is not None else []
        if output:
            notes.append("output")
        if notes:
            lines.append(small(" · ".join(notes), GREY))
        self.nodes.append(indent + quote(eq.name) + " " + attrs(
            label=html_label(lines), shape="box", style="filled", fillcolor="#ffffff",
            color=INK if output else "#4b5563", penwidth="2.5" if output else "1"))

    def group(self, j: int, grouping: Grouping, ops: Counter, constants: int,
              output: bool, indent: str = "  ") -> None:
        lines = group_lines(j, grouping, ops, constants, "constant")
        if output:
            lines.append(small("output", GREY))
        self.nodes.append(indent + quote(f"g{j}") + " " + attrs(
            label=html_label(lines), shape="box3d", style="filled", fillcolor="#f6f6f6",
            margin="0.16,0.1",
            color=INK if output else "#4b5563", penwidth="2.5" if output else "1"))

    def edge(self, source: str, target: str, count: int = 1) -> None:
        extra = f' [label="×{count:,}", fontsize="8", fontcolor="{GREY}"]' if count > 1 else ""
        self.edges.append(f"  {quote(source)} -> {quote(target)}{extra}")


def group_lines(j: int, grouping: Grouping, ops: Counter, others: int, noun: str
                ) -> list[str]:
    """The first lines of a collapsed group's box: its label, its line of code, how many
    equations (and ``others`` constants or literals, as ``noun`` says) and the commonest
    ops."""
    lines = [f"<B>{escape(grouping.labels[j])}</B>"]
    code = grouping.code[j]
    if code:
        lines.append(escape(code if len(code) <= 48 else code[:47] + "…"))
    count = f"{grouping.sizes[j]:,} equation{'s' if grouping.sizes[j] != 1 else ''}"
    if others:
        count += f", {others:,} {noun}{'s' if others != 1 else ''}"
    lines.append(small(count))
    common = ", ".join(f"{symbol} ×{n:,}" for symbol, n in ops.most_common(3))
    if len(ops) > 3:
        common += ", …"
    lines.append(small(common, GREY))
    return lines


def dot_header(note: Sequence[str], name: str = "tape") -> list[str]:
    """The first lines of a drawing of a tape or a graph: its styles and its label
    (``note``, one line each, under the drawing)."""
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


def cluster_lines(j: int, grouping: Grouping, body: list[str]) -> list[str]:
    """Group ``j`` of a grouped drawing drawn in full: a dashed cluster of ``body``."""
    return [f"  subgraph {quote(f'cluster_g{j}')} {{",
            f'    graph [label={quote(grouping.labels[j] + "  " + grouping.code[j])}, '
            f'style="rounded,dashed", color="{GREY}", fontcolor="{GREY}", fontsize="9", '
            'labelloc="t", labeljust="l"]', *body, "  }"]


def many_inputs_node(node: str, count: int, noun: str, first: str, last: str) -> str:
    """The one node standing for the many leaves (inputs) of a grouped drawing."""
    return f"  {quote(node)} " + attrs(
        label=html_label([f"<B>{count:,} {noun}</B>", small(f"{first} … {last}")]),
        shape="ellipse", style="filled", fillcolor="#dbe7ff", color=BLUE, penwidth="2",
        peripheries="2")


_BY = {"line": "source line", "function": "function", "chunk": "consecutive runs"}


def grouped_note(n: int, grouping: Grouping, expanded: list[bool], unknown: list[str],
                 max_nodes: int, call: str = "{}") -> list[str]:
    """What a grouped drawing's label says of its groups: how it was grouped, how to draw
    a group (``call`` writes the arguments as a user passes them) or everything."""
    n_groups = len(grouping.labels)
    collapsed = [label for label, e in zip(grouping.labels, expanded) if not e]
    out = [f"{n:,} equations in {n_groups:,} group{'s' if n_groups != 1 else ''} "
           f"(by {_BY[grouping.by]}); each 3-d box stands for a group, with its count and "
           "commonest ops."]
    if collapsed:
        expand = 'expand=["' + collapsed[0] + '"]'
        out.append(f"Draw a group in full: {call.format(expand)}; "
                   f"everything: {call.format('group=None')} (slow above ~300 equations).")
    if unknown:
        out.append(f"No group is labelled {', '.join(map(repr, unknown))}.")
    drawn = sum(size for size, e in zip(grouping.sizes, expanded) if e)
    if drawn > max_nodes:
        out.append(f"The expanded groups hold {drawn:,} equations: dot may take minutes "
                   "(about 16 s for 1,000 nodes).")
    return out


LEGEND = ("blue double ring: a leaf that requires grad · grey dashed: a constant · "
          "box: t = op(inputs), its value and (after backward) its grad")


def tape_dot(
    tape: Tape,
    *,
    adjoints: Mapping[Any, Any] | None = None,
    names: Mapping[NameKey, str] | None = None,
    group: str | None = "auto",
    expand: Iterable[str] = (),
    max_nodes: int = MAX_NODES,
    legend: bool = True,
) -> str:
    """DOT source drawing ``tape`` (see the module docstring for what is drawn how).

    Parameters
    ----------
    tape : Tape
        From ``wg.tape_of(y)``, ``GradientTape.recorded`` or ``as_tape``.
    adjoints : mapping, optional
        Cotangents after a backward pass, by equation index and leaf name (see
        :class:`~wengert.jupyter.views.render.AdjointCollector`); without them a leaf shows
        its ``.grad`` when it has one.
    names : mapping, optional
        User names (see :class:`~wengert.jupyter.views.render.TapeNames`).
    group : {"auto", "line", "function", "chunk", None}
        ``"auto"`` draws every equation up to ``max_nodes`` equations and groups a longer
        tape (by source line, else function, else consecutive runs); a grouping name
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
    >>> x = wg.tensor(1.0, requires_grad=True)
    >>> for _ in range(400):
    ...     x = x * 1.01
    >>> source = tape_dot(wg.tape_of(x))
    >>> '"g0"' in source and "400 equations in 20 groups" in source
    True
    """
    table_names = TapeNames(tape, names)
    drawing = _Drawing(tape, table_names, adjoints)
    note = [LEGEND] if legend else []
    if group == "auto":
        grouping = auto_grouping(tape, max_nodes) if len(tape) > max_nodes else None
    elif group is None:
        grouping = None
    else:
        grouping = group_equations(tape, group)

    if grouping is None:
        for i in range(len(tape.leaves)):
            drawing.leaf(i)
        for eq in tape:
            drawing.equation(eq)
            for position, inp in enumerate(eq.inputs):
                if inp.source == "equation":  # (drawn as its equation's first output)
                    drawing.edge(tape[inp.index].name, eq.name)
                elif inp.source == "leaf":
                    drawing.edge(f"x{inp.index}", eq.name)
                else:
                    drawing.edge(drawing.constant(eq, position), eq.name)
        if len(tape) == 0 and not tape.leaves:
            drawing.nodes.append('  "empty" [label="no equations recorded", shape="plaintext", '
                                 f'fontcolor="{GREY}"]')
        return "\n".join([*dot_header(note), *drawing.nodes, *drawing.edges, "}"]) + "\n"
    return _grouped_dot(tape, drawing, grouping, set(expand), max_nodes, note)


def _grouped_dot(tape: Tape, drawing: _Drawing, grouping: Grouping, expand: set[str],
                 max_nodes: int, note: list[str]) -> str:
    """The DOT text of a grouped drawing: collapsed groups as single nodes, expanded ones
    as clusters of their equations. One pass over the equations and their inputs."""
    of = grouping.of
    n_groups = len(grouping.labels)
    expanded = [label in expand for label in grouping.labels]
    unknown = sorted(expand - set(grouping.labels))
    node_of_group = [f"g{j}" for j in range(n_groups)]
    many_leaves = len(tape.leaves) > max(1, max_nodes // 2)

    def node_of(k: int) -> str:
        return tape[k].name if expanded[of[k]] else node_of_group[of[k]]

    ops: list[Counter] = [Counter() for _ in range(n_groups)]
    constants = [0] * n_groups
    clusters: list[list[str]] = [[] for _ in range(n_groups)]
    edges: dict[tuple[str, str], int] = {}
    plain_edges: list[tuple[str, str]] = []
    for eq in tape:
        j = of[eq.index]
        target = node_of(eq.index)
        if expanded[j]:
            before = len(drawing.nodes)
            drawing.equation(eq, indent="    ")
            clusters[j].extend(drawing.nodes[before:])
            del drawing.nodes[before:]
        else:
            ops[j][eq.op.symbol] += 1
        for position, inp in enumerate(eq.inputs):
            if inp.source == "equation":
                source = node_of(inp.index)
            elif inp.source == "leaf":
                source = "leaves" if many_leaves else f"x{inp.index}"
            elif expanded[j]:
                before = len(drawing.nodes)
                plain_edges.append((drawing.constant(eq, position, indent="    "), target))
                clusters[j].extend(drawing.nodes[before:])
                del drawing.nodes[before:]
                continue
            else:
                constants[j] += 1
                continue
            if source == target:
                continue  # inside one collapsed group
            if expanded[j] and (inp.source == "leaf" and not many_leaves or
                                inp.source == "equation" and expanded[of[inp.index]]):
                plain_edges.append((source, target))
            else:
                edges[(source, target)] = edges.get((source, target), 0) + 1

    if many_leaves:
        drawing.nodes.append(many_inputs_node("leaves", len(tape.leaves), "leaves", "x0",
                                              f"x{len(tape.leaves) - 1}"))
    else:
        for i in range(len(tape.leaves)):
            drawing.leaf(i)
    outputs = {of[k] for k in tape.outputs}
    for j in range(n_groups):
        if expanded[j]:
            drawing.nodes.extend(cluster_lines(j, grouping, clusters[j]))
        else:
            drawing.group(j, grouping, ops[j], constants[j], j in outputs)
    for source, target in plain_edges:
        drawing.edge(source, target)
    for (source, target), count in edges.items():
        drawing.edge(source, target, count)

    note = grouped_note(len(tape), grouping, expanded, unknown, max_nodes,
                        "wg.draw(…, {})") + note
    return "\n".join([*dot_header(note), *drawing.nodes, *drawing.edges, "}"]) + "\n"
