"""The explorer's frames: everything its widget shows, computed up front as JSON-able data.

:func:`explorer_frames` reads a tape (through the public tape API) and replays
its reverse sweep under a sweep observer (``backprop(..., retain_graph=True)``
returns the leaves' cotangents without touching ``.grad``), or, after a
``backward()`` in the view-keeping mode (:mod:`wengert.core.kept`), reads the
sweep that ran, as it was kept (``Equation.sweep``). The result is one
dict of plain lists, strings and numbers that the browser steps through
without the kernel; :func:`step_view` says, in Python, what the panel shows
at a step (the ES module computes the same from the same data).

The data, column by column (lists indexed by node or equation; typed by
:class:`~wengert.jupyter.explorer.schema.Frames` and checked by
:func:`~wengert.jupyter.explorer.schema.check_frames`):

* ``nodes``: every node of the graph (equations first, then leaves, then one
  constant per use): ``kind`` (0 equation, 1 leaf, 2 constant), ``name``,
  ``shape`` (an index into ``shapes``: text and size), ``value`` (a one-line
  summary; ``None`` when the value was not kept), ``adjoint`` (the cotangent it
  finally received; ``None`` when none reached it) and, for dual numbers,
  ``tangent`` (``[monomial, text]`` pairs such as ``["ε₁", "4"]``, the tags
  numbered ε₁, ε₂ ... by ``tag.order``).
* ``eqs``: ``op`` (an index into ``ops``: name, symbol, formula and the
  equation's form, ``{0} × {1}``), ``rule`` (an index into ``rules``: the
  contribution to each input's adjoint as a template of the op record's
  ``adjoint_terms``, inputs written ``\\ue000i\\ue001``, the output
  ``\\ue002``, its cotangent ``ḡ``; ``-1`` without display data), ``ins``
  (node ids), ``line`` (an index into ``lines``, ``-1`` when none was
  recorded) and ``params`` (text or ``None``).
* the timeline (``steps``): one forward step per equation, then, unless
  ``mode`` is ``"forward"``, the seed (``seeds``, ``seed_note``; ``sweep_note``
  says where the sweep comes from when there is something to say: the sweep
  ``backward()`` ran, kept by the view-keeping mode, or a replay in which no hook
  ran) and one reverse step per equation the sweep reached, plus one per node whose
  hooks changed (or, in a replay, would change) its cotangent: ``reverse`` lists
  ``[equation, sends]`` in sweep order, or ``[node, None, h]`` for the hooks of a
  node (an equation, before its own step; a leaf, after the sweep), ``hooks[h]``
  being ``[names, before, after]`` (texts; ``after`` is ``None`` when they did not
  run); ``inner`` gives, per equation (as text), what ran inside its rule (a
  checkpoint's recomputation). A send is ``[input position,
  contribution, running sum, jacobian]``; the contribution is ``None`` when it
  is all that input ever received (then it reads as its adjoint), the running
  sum is given from an input's second contribution on (fan-out:
  ``x̄ = 3 + 3 = 6``), and the jacobian indexes ``jacs`` (the matrix this
  VJP never built: its shape, entries and bytes as float64).
* ``layout``: the groups (runs of equations drawn as one box) and, per item
  (nodes, then groups), the group it is drawn in and its rank and order there
  (:mod:`wengert.jupyter.explorer.layout`); ``collapsed`` says whether groups start closed.
* and ``format``, ``title``, ``equations`` (their number), ``mode``, ``dual``,
  ``eps`` (the perturbations' names), ``shapes``, ``lines``, and ``bars``: the
  adjoints' names (node index, as text -> name) where they are not the name with
  a combining macron on its first character, which the browser writes itself
  (``ȳ`` is one precomposed character), and ``changed``: the nodes whose value is not
  shown because it was written in place since their equation (a leaf changed by an
  optimizer's step, ``h += 1``), when there are any.
* an equation with several outputs (a decomposition: ``t2, t3 = eigh(t1)``) is one node
  (its first output) and one box; its other outputs are nodes of ``kind`` 3 after the
  constants (``outs``: equation, as text -> their nodes), which inputs read and whose
  adjoints are their own; the box draws them all. Its reverse step is one: what each of
  its outputs received (an output no cotangent reached is said so: its term is 0) and,
  per input, the sum of its outputs' terms.

Examples
--------
>>> import wengert as wg
>>> x = wg.tensor(3.0, requires_grad=True)
>>> frames = explorer_frames(wg.tape_of(x * x), leaf_names=["x"])
>>> frames["nodes"]["name"], frames["nodes"]["value"], frames["nodes"]["adjoint"]
(['t0', 'x'], ['9', '3'], ['1', '6'])
>>> frames["reverse"]
[[0, [[0, '3', None, 0], [1, '3', '6', 0]]]]
>>> [send["sum"] for send in step_view(frames, 2)["sends"]]
['x̄ = 0 + 3 = 3', 'x̄ = 3 + 3 = 6']
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np
from wengert.core import op as op_records
from wengert.core.collector import collector_paused
from wengert.core.equations import Equation, Tape, freed_by_another
from wengert.core.formatting import (
    factor_text,
    format_number,
    nbytes_text,
    params_text,
    shape_text,
    summarize,
    summarize_many,
)
from wengert.core.kept import kept_value
from wengert.core.node import is_stand_in
from wengert.core.source import is_notebook_cell
from wengert.core.sweep import SweepObserver, observe_sweep
from wengert.core.sweep_fast import backprop
from wengert.forward.dual import Dual
from wengert.jupyter.explorer.layout import nested_groups, nested_layout
from wengert.jupyter.explorer.schema import FORMAT, Frames, Nodes
from wengert.reverse.tape_reading import hooks_of

__all__ = [
    "explorer_frames", "step_view", "step_label", "fill_form", "fill_rule", "bar",
    "FORMAT", "EXPAND_LIMIT", "MAX_CHILDREN", "SLOT", "OUT",
]

#: Tapes of at most this many equations start with every group expanded.
EXPAND_LIMIT = 120
#: A group (or the tape) with more children is drawn as chunks of this many.
MAX_CHILDREN = 40
#: Longest user-chosen name shown for a node (longer ones keep the tape's name).
MAX_NAME = 16
#: Longest source text, parameter text, rule and label kept.
MAX_TEXT = 72
#: In rule templates: input ``i`` is ``SLOT.format(i)``, the output ``OUT``.
SLOT = "\ue000{}\ue001"
OUT = "\ue002"


#: How an op's equation reads, by symbol: infix, prefix and postfix forms.
_INFIX = {"+": "{0} + {1}", "-": "{0} − {1}", "*": "{0} × {1}", "/": "{0} / {1}",
          "**": "{0} ** {1}", "@": "{0} @ {1}", "%": "{0} % {1}", "//": "{0} // {1}"}
_PREFIX = {"-": "−{0}", "+": "+{0}"}
_POSTFIX = {"ᵀ": "{0}ᵀ", "⁻¹": "{0}⁻¹", "[]": "{0}[…]"}
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
#: The tape's own names of results (``t12``): their adjoints' names follow one rule.
_TAPE_NAME = re.compile(r"t\d+")


# -- text helpers -------------------------------------------------------------
def _macron(name: str) -> str:
    return name[:1] + "\u0304" + name[1:]


def bar(name: str) -> str:
    """The name of an adjoint: ``bar("t3") == "t̄3"`` (the op records' ``bar`` when
    present, else a combining macron on the first character).

    Examples
    --------
    >>> bar("x"), bar("t12")
    ('x̄', 't̄12')
    """
    own = getattr(op_records, "bar", None)
    return own(name) if own is not None else _macron(name)


def _truncate(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str | None) -> bool:
    """Whether a value's text is one number, so it can stand in a formula."""
    return text is not None and " " not in text and "[" not in text and text not in ("—", "?")


def _num(text: str) -> str:
    """A number as a factor in a formula (negative and complex ones in parentheses)."""
    return factor_text(text)


def _form(op: Any) -> str:
    """How an equation of ``op`` reads, with ``{0}``, ``{1}`` ... for its inputs."""
    n, symbol = op.nin, op.symbol
    if n == 2 and symbol in _INFIX:
        return _INFIX[symbol]
    if n == 1 and symbol in _PREFIX:
        return _PREFIX[symbol]
    if n == 1 and symbol in _POSTFIX:
        return _POSTFIX[symbol]
    if n < 0:
        return f"{op.name}({{*}})"
    return f"{op.name}({', '.join(f'{{{i}}}' for i in range(n))})"


def _shape_of(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    if type(value) is float:
        return ()
    while isinstance(value, Dual):
        value = value.primal
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else np.shape(value)


# -- values and dual numbers --------------------------------------------------
def _tag_labels(values: Sequence[Any]) -> dict[int, str]:
    """ε₁, ε₂ ... for the distinct tags of the dual numbers among ``values``, by
    ``tag.order`` (keyed by the tag's ``id``)."""
    tags: dict[int, Any] = {}
    todo = [v for v in values if isinstance(v, Dual)]
    while todo:
        v = todo.pop()
        if isinstance(v, Dual):
            tags.setdefault(id(v.tag), v.tag)
            todo.append(v.primal)
            todo.append(v.tangent)
    ordered = sorted(tags.values(), key=lambda t: t.order)
    return {id(t): "ε" + str(k + 1).translate(_SUBSCRIPTS) for k, t in enumerate(ordered)}


def _dual_terms(value: Any, labels: Mapping[int, str]) -> list[tuple[str, Any]]:
    """``value`` as ``primal + Σ coefficient · monomial``, nested duals multiplied out,
    by degree then tag: ``[("", primal), ("ε₁", ...), ("ε₂", ...), ("ε₁ε₂", ...)]``."""
    out: list[tuple[tuple[str, ...], Any]] = []
    todo: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while todo:
        v, mono = todo.pop()
        if isinstance(v, Dual):
            eps = labels.get(id(v.tag), "ε")
            todo.append((v.tangent, tuple(sorted(mono + (eps,), key=lambda e: (len(e), e)))))
            todo.append((v.primal, mono))
        else:
            out.append((mono, v))
    out.sort(key=lambda t: (len(t[0]), [(len(e), e) for e in t[0]]))
    return [("".join(mono), v) for mono, v in out]


class _Values:
    """Texts of values (numbers, arrays, dual numbers) for one tape."""

    def __init__(self, labels: Mapping[int, str]) -> None:
        self.labels = labels

    def text(self, value: Any) -> str | None:
        """One line; a dual number inline: ``4 + 4ε₁``."""
        if value is None:
            return None
        if type(value) is float:
            return format_number(value)
        if isinstance(value, Dual):
            terms = _dual_terms(value, self.labels)
            out = summarize(terms[0][1])
            for mono, v in terms[1:]:
                t = summarize(v)
                out += f" − {t[1:]}{mono}" if _plain(t) and t.startswith("-") else \
                    f" + {t}{mono}"
            return out
        return _summary(value)

    def texts(self, values: list[Any]) -> list[str | None]:
        """``[self.text(v) for v in values]``, numbers and short arrays formatted in bulk."""
        if self.labels:
            return [self.text(v) for v in values]
        present = [k for k, v in enumerate(values) if v is not None]
        try:
            if len(present) == len(values):
                return summarize_many(values)
            texts = summarize_many([values[k] for k in present])
        except (TypeError, ValueError, AttributeError):  # a rule's saved object among them
            return [self.text(v) for v in values]
        # Without the Nones (constants receive no adjoint), a scalar tape's values are
        # all floats: summarize_many formats them with one %.
        out: list[str | None] = [None] * len(values)
        for k, text in zip(present, texts):
            out[k] = text
        return out

    def primal(self, value: Any) -> str | None:
        if value is None:
            return None
        return format_number(value) if type(value) is float else _summary(value)

    def tangent(self, value: Any) -> list[list[str]] | None:
        if not isinstance(value, Dual):
            return None
        return [[mono, summarize(v)] for mono, v in _dual_terms(value, self.labels)[1:]]


def _summary(value: Any) -> str:
    """:func:`summarize`, or the type's name for what is not a number (the object a
    custom rule or a checkpoint saves for its backward pass, an input of its equation)."""
    try:
        return summarize(value)
    except (TypeError, ValueError, AttributeError):
        return type(value).__name__.lstrip("_")


def _rule_template(op: Any, n: int, params: Mapping[str, Any],
                   complex_values: bool = False) -> list[str | None] | None:
    """The op record's ``adjoint_terms`` with stand-in names (``None`` without one); its
    complex templates for an equation on complex values."""
    rule = getattr(op, "adjoint_terms", None)
    if rule is None:
        return None
    try:
        if complex_values:
            terms = rule([SLOT.format(i) for i in range(n)], OUT, dict(params),
                         complex_values=True)
        else:
            terms = rule([SLOT.format(i) for i in range(n)], OUT, dict(params))
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    return [None if t is None else _truncate(t) for t in terms]


def _on_complex(eq: Equation, eqs: Sequence[Equation]) -> bool:
    """Whether ``eq`` computes on complex values (its output, or an input: ``abs`` of a
    complex number is real)."""
    if eq.dtype is not None and eq.dtype.kind == "c":
        return True
    for inp in eq.inputs:
        if inp.source == "equation":
            dtype = eqs[inp.index].dtype if inp.index < len(eqs) else None
        else:
            value = inp.leaf if inp.source == "leaf" else inp.value
            dtype = getattr(value, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind == "c":
            return True
    return False


def fill_form(form: str, names: Sequence[str]) -> str:
    """An equation's form (``{0} × {1}``, ``concatenate({*})``) with its inputs' names.

    Examples
    --------
    >>> fill_form("{0} × {1}", ["x", "w"]), fill_form("stack({*})", ["a", "b"])
    ('x × w', 'stack(a, b)')
    """
    if "{*}" in form:
        return form.replace("{*}", ", ".join(names))
    return re.sub(r"\{(\d+)\}", lambda m: names[int(m.group(1))], form)


def fill_rule(template: str | None, names: Sequence[str], out: str, g: str) -> str | None:
    """A rule template with names (or numbers) for the inputs, the output and ``ḡ``.

    Examples
    --------
    >>> fill_rule("ḡ·" + SLOT.format(1), ["x", "w"], "t0", "t̄0")
    't̄0·w'
    """
    if template is None:
        return None
    for i, name in enumerate(names):
        template = template.replace(SLOT.format(i), name)
    return template.replace(OUT, out).replace("ḡ", g)


#: A leaf modified in place since the equations used it: its value is not shown.
_CHANGED = object()


# -- reading the tape ----------------------------------------------------------
class _Builder:
    """Reads one tape into columns and records its reverse sweep."""

    def __init__(self, tape: Tape, leaf_names: Sequence[str] | None,
                 value_names: Mapping[Any, str] | None = None) -> None:
        self.eqs: list[Equation] = list(tape)
        n = self.n = len(self.eqs)
        nodes = [eq.nodes[0] for eq in self.eqs]
        self.eq_of_node = {id(node): e for e, node in enumerate(nodes)}
        self.eq_of_seq = {node.seq: e for e, node in enumerate(nodes)}
        # An equation with several outputs (a decomposition) is one node, its first output;
        # its other outputs are nodes of their own, after the constants, drawn in its box
        # (``outs``: equation -> those nodes). Inputs read them by their own node.
        self.multi = [self.eqs[e] for e in tape.several]
        part_of_var = self._index_parts()
        reads_part: list[list[int]] = []  # the inputs lists with a part (numbered -1 - p)
        leaves = list(tape.leaves)
        self.n_leaves = len(leaves)
        self.leaf_number = {id(leaf): k for k, leaf in enumerate(leaves)}
        base = n + self.n_leaves
        self.ins: list[list[int]] = []
        self.const_values: list[Any] = []
        self.const_keys: list[tuple[int, int]] = []  # (equation, input position) per constant
        const_shapes: list[tuple[int, ...] | None] = []
        leaf_values: list[Any] = [None] * self.n_leaves
        ins, consts, const_keys = self.ins, self.const_values, self.const_keys
        for eq in self.eqs:
            refs = []
            raw = None  # the node's saved inputs, read only for leaves and constants
            for i, inp in enumerate(eq.inputs):
                source = inp.source
                if source == "equation":
                    if part_of_var and id(inp) in part_of_var:
                        refs.append(-1 - part_of_var[id(inp)])
                        if not reads_part or reads_part[-1] is not refs:
                            reads_part.append(refs)
                        continue
                    refs.append(inp.index)
                    continue
                if source == "leaf":
                    refs.append(n + inp.index)
                    if leaf_values[inp.index] is not None:
                        continue
                elif inp.value is not None:  # one constant node per use
                    refs.append(base + len(consts))
                    consts.append(inp.value)
                    const_keys.append((eq.index, i))
                    const_shapes.append(_shape_of(inp.value))
                    continue
                if raw is None:
                    raw = eq.saved_inputs if eq.node is not None else ()
                saved = raw[i] if i < len(raw) else None
                if source == "leaf":
                    if saved is not None and not is_stand_in(saved):
                        leaf_values[inp.index] = saved  # the value the equation used
                else:  # a constant whose value is not kept: its saved input tells the shape
                    refs.append(base + len(consts))
                    consts.append(None)
                    const_keys.append((eq.index, i))
                    const_shapes.append(_shape_of(saved))
            ins.append(refs)
        self.part_base = base + len(consts)  # the node of each part: part_base + p
        for refs in reads_part:
            refs[:] = [r if r >= 0 else self.part_base - 1 - r for r in refs]
        #: equation -> the nodes of its other outputs
        self.outs = {eq.index: [] for eq in self.multi}
        for p, e in enumerate(self.part_owner):
            self.outs[e].append(self.part_base + p)
        changed_leaves = tape.changed_leaves()
        for k in changed_leaves:  # modified in place since: not the value used
            leaf_values[k] = _CHANGED
        #: Nodes whose value is not shown because it was written in place since.
        self.changed = [eq.index for eq in self.eqs if eq.value is None and eq.written] + \
            sorted(n + k for k in changed_leaves)
        for k, leaf in enumerate(leaves):
            if leaf_values[k] is _CHANGED:
                leaf_values[k] = None
            elif leaf_values[k] is None:
                try:
                    leaf_values[k] = leaf.numpy()
                except (TypeError, AttributeError):  # a tensor over a dual number
                    leaf_values[k] = None
        self.n_nodes = self.part_base + len(self.part_vars)
        self.node_values = [eq.value for eq in self.eqs] + leaf_values + self.const_values + \
            [v.value for v in self.part_vars]
        self.labels = _tag_labels(self.node_values)
        self.values = _Values(self.labels)
        self.value_texts = self.values.texts(self.node_values)
        self.lines, self.line_of, self.group_keys, line_texts = _line_table(self.eqs)
        self.names = self._names(leaf_names, value_names or {}, line_texts)
        self.shapes: list[list[Any]] = []
        self.shape_index: dict[tuple[int, ...] | None, int] = {}
        # (a value freed by backward() and written in place since still tells its shape)
        shapes = [eq.shape if eq.shape is not None else _shape_of(
            eq.value if eq.value is not None else kept_value(eq.node)) for eq in self.eqs]
        shapes += [tuple(getattr(leaf, "shape", ())) for leaf in leaves] + const_shapes + \
            [v.shape for v in self.part_vars]
        known, shape_id = self.shape_index, self._shape_id
        self.node_shapes = [known[s] if s in known else shape_id(s) for s in shapes]
        self._start_sweep()

    def _index_parts(self) -> dict[int, int]:
        """Number the other outputs of the equations with several (``part_vars``, owned by
        ``part_owner``); ``part_at``: id(node) -> its output position. Returns id(var) ->
        part number."""
        self.part_vars: list[Any] = []
        self.part_owner: list[int] = []
        self.part_at: dict[int, int] = {}
        part_of_var: dict[int, int] = {}
        for eq in self.multi:
            for j, (node, var) in enumerate(zip(eq.nodes, eq.outs)):
                self.eq_of_node[id(node)] = eq.index
                self.eq_of_seq[node.seq] = eq.index
                self.part_at[id(node)] = j
                if j:
                    part_of_var[id(var)] = len(self.part_vars)
                    self.part_vars.append(var)
                    self.part_owner.append(eq.index)
        return part_of_var

    def _start_sweep(self) -> None:
        """The reverse sweep's state before its first step."""
        self.jacs: list[list[str]] = []
        self.jac_index: dict[tuple[int, int, Any, Any], int] = {}
        self.uses = [0] * self.n_nodes
        for refs in self.ins:
            for r in refs:
                self.uses[r] += 1
        # Adjoints so far, running sums of nodes used more than once, and rows whose
        # contribution is all their input received: (row, cotangent).
        self.adjoint: list[Any] = [None] * self.n_nodes
        self.adjoint_texts: list[str | None] = [None] * self.n_nodes
        self.sums: dict[int, tuple[int, Any]] = {}
        self.pending: dict[int, tuple[list[Any], Any]] = {}
        # Hook steps: [hook names, cotangent before, after (None: not run)], as texts.
        self.hooks: list[list[Any]] = []
        # Texts written at the end, in one batch: the values and where each text goes.
        self.later: list[Any] = []
        self.later_at: list[tuple[list[Any], int]] = []

    def _names(self, leaf_names: Sequence[str] | None, value_names: Mapping[Any, str],
               line_texts: list[str]) -> list[str]:
        n, n_leaves = self.n, self.n_leaves
        # the names of the tape (t12; after a decomposition a variable's number is not its
        # equation's)
        names = [eq.out.name for eq in self.eqs] if self.multi else [f"t{k}" for k in range(n)]
        tape_names = names.copy()
        leaves = [f"x{k}" for k in range(n_leaves)]
        for k, name in enumerate(list(leaf_names or ())[:n_leaves]):
            if name and len(name) <= MAX_NAME:
                leaves[k] = name
        # the user's names are keyed by variable (t12): an equation's first output, or
        # another output of a decomposition (a part)
        first = {name: k for k, name in enumerate(tape_names)}
        part_of = {v.name: p for p, v in enumerate(self.part_vars)}
        user: dict[int, str] = {}
        part_user: dict[int, str] = {}
        for key, name in value_names.items():
            if isinstance(key, str) and _TAPE_NAME.fullmatch(key):
                if key in first:
                    user[first[key]] = name
                elif key in part_of:
                    part_user[part_of[key]] = name
        if not user and not part_user:
            user = _assigned_names(self.line_of, line_texts)
            if self.multi:  # one name of a line cannot name several outputs
                user = {k: name for k, name in user.items() if k not in self.outs}
        #: The nodes (equations, other outputs of decompositions) whose names are not their
        #: tape names (``t12``).
        self.renamed: list[int] = []
        if user:
            # a name two values would have (x rebound in a loop, x also a leaf) would not
            # say which one a step reads: those keep their tape names, the others are used
            trial = names.copy()
            for k, name in user.items():
                trial[k] = name
            for _ in range(len(user) + 1):
                counts: dict[str, int] = {}
                for name in chain(trial, leaves):
                    counts[name] = counts.get(name, 0) + 1
                clashes = [k for k in user if counts[trial[k]] > 1 and trial[k] != tape_names[k]]
                if not clashes:
                    break
                for k in clashes:
                    trial[k] = tape_names[k]
            if len(set(trial + leaves)) == n + n_leaves:
                names = trial
                self.renamed = sorted(k for k, name in user.items()
                                      if names[k] == name and name != tape_names[k])
        if len(set(names + leaves)) != n + n_leaves:
            leaves = [f"x{k}" for k in range(n_leaves)]
        consts = []
        for k in range(len(self.const_values)):
            given = value_names.get(self.const_keys[k])  # the user's variable holding it
            text = self.value_texts[n + n_leaves + k]
            consts.append(given if given and len(given) <= MAX_NAME else
                          text if _plain(text) and len(text) <= 10 else f"c{k}")
        parts = [v.name for v in self.part_vars]
        taken = set(names + leaves + parts)
        for p, name in part_user.items():  # a name no other value has
            if len(name) <= MAX_NAME and name not in taken:
                taken.discard(parts[p])
                parts[p] = name
                taken.add(name)
                self.renamed.append(self.part_base + p)
        return names + leaves + consts + parts

    def _shape_id(self, shape: tuple[int, ...] | None) -> int:
        k = self.shape_index.get(shape)
        if k is None:
            k = self.shape_index[shape] = len(self.shapes)
            self.shapes.append([shape_text(shape), math.prod(shape) if shape is not None
                                else None])
        return k

    def _jac_id(self, out_shape: int, in_shape: int, out_dtype: Any = None,
                in_dtype: Any = None) -> int:
        """The Jacobian of an output's shape by an input's (``-1 - e``: all the outputs of
        equation ``e``, which has several), its entries of the type of the two cotangents
        (``out_dtype``, ``in_dtype``: what the step received and sent; ``None`` for a Python
        float, float64 when both are), so its bytes are those of float32 or complex entries
        where they are."""
        key = (out_shape, in_shape, out_dtype, in_dtype)
        k = self.jac_index.get(key)
        if k is None:
            k = self.jac_index[key] = len(self.jacs)
            n = self.shapes[in_shape][1]
            if out_shape >= 0:
                m = self.shapes[out_shape][1]
            else:
                e = -1 - out_shape
                sizes = [self.shapes[self.node_shapes[o]][1] for o in (e, *self.outs[e])]
                m = None if None in sizes else sum(sizes)
            if m is None or n is None:
                self.jacs.append(["?", "?", "?"])
            else:
                # (a Python float cotangent takes the other's type, as NumPy's scalars do)
                size = np.result_type(*[d for d in (out_dtype, in_dtype) if d is not None]
                                      or [_FLOAT]).itemsize
                self.jacs.append([f"{m}×{n}", f"{m * n:,}", nbytes_text(size * m * n)])
        return k

    def sweep_frames(self, steps: list[tuple[int, Any, list[tuple[int, Any, Any]]]]
                     ) -> list[list[Any]]:
        """The reverse frames of the sweep's steps: equation ``e`` received ``g`` and sent
        ``sent`` (``(input position, parent, contribution)``), in sweep order.

        One loop with everything in locals: it runs once per equation of the tape."""
        adjoint, adjoint_texts, ins_of = self.adjoint, self.adjoint_texts, self.ins
        uses, shapes, sums, pending = self.uses, self.node_shapes, self.sums, self.pending
        jac_index, jac_id = self.jac_index, self._jac_id
        later, later_at = self.later.append, self.later_at.append
        pop_pending = pending.pop
        frames = []
        hooks = self.hooks
        for e, g, sent in steps:
            if sent is None:  # hooks on node e: g is (names, before, after or None)
                names, before, after = g
                entry = [names, None, None]
                later(before)
                later_at((entry, 1))
                if after is not None:
                    later(after)
                    later_at((entry, 2))
                frames.append([e, None, len(hooks)])
                hooks.append(entry)
                continue
            if type(g) is _Parts:  # several outputs: each its own cotangent (or none)
                self._outputs_received(e, g)
                out_shape = -1 - e
                out_dtype = _entries_dtype(g)
            else:
                out_dtype = getattr(g, "dtype", None) or _PLAIN_DTYPES.get(type(g))
                adjoint[e] = g
                later(g)
                later_at((adjoint_texts, e))
                waiting = pop_pending(e, None)
                if waiting is not None and waiting[1] is not g:  # a hook changed the cotangent
                    later(waiting[1])
                    later_at((waiting[0], 1))
                out_shape = shapes[e]
            ins = ins_of[e]
            rows = []
            for i, _parent, ct in sent:
                target = ins[i]
                in_dtype = getattr(ct, "dtype", None) or _PLAIN_DTYPES.get(type(ct))
                jac = jac_index.get((out_shape, shapes[target], out_dtype, in_dtype))
                if jac is None:
                    jac = jac_id(out_shape, shapes[target], out_dtype, in_dtype)
                row = [i, None, None, jac]
                if uses[target] > 1:
                    count, total = sums.get(target, (0, None))
                    total = ct if total is None else total + ct
                    sums[target] = (count + 1, total)
                    later(ct)
                    later_at((row, 1))
                    if count:
                        later(total)
                        later_at((row, 2))
                    adjoint[target] = total
                else:  # all it will receive: its adjoint says it (checked when it arrives)
                    adjoint[target] = ct
                    pending[target] = (row, ct)
                rows.append(row)
            frames.append([e, rows])
        return frames

    def _outputs_received(self, e: int, g: list[Any]) -> None:
        """The cotangents of the outputs of equation ``e`` (``None``: none reached it)."""
        for o, go in zip((e, *self.outs[e]), g):
            self.adjoint[o] = go
            if go is not None:
                self.later.append(go)
                self.later_at.append((self.adjoint_texts, o))
            waiting = self.pending.pop(o, None)
            if waiting is not None and waiting[1] is not go:  # a hook changed it
                self.later.append(waiting[1])
                self.later_at.append((waiting[0], 1))

    def finish(self, reached: list[tuple[Any, Any]]) -> None:
        """The leaves' cotangents from the sweep; texts of what was left pending."""
        n = self.n
        for leaf, ct in reached:
            k = self.leaf_number.get(id(leaf))
            if k is not None:
                self.adjoint[n + k] = ct
        for target, (row, ct) in self.pending.items():
            if target < n or ct is not self.adjoint[target]:
                self.later.append(ct)  # it never became the node's adjoint
                self.later_at.append((row, 1))
        for target in range(n, self.n_nodes):
            self.later.append(self.adjoint[target])
            self.later_at.append((self.adjoint_texts, target))
        for (where, position), text in zip(self.later_at, self.values.texts(self.later)):
            where[position] = text
        self.later, self.later_at = [], []


class _Recorder(SweepObserver):
    """Keeps each step of the sweep (replayed, or fed from a kept record) that sweeps an
    equation of the tape: ``(equation, cotangent, sends)``, and before it, for hooks,
    ``(equation, (names, before, after), None)`` (turned into frames afterwards, in one
    loop); ``inner`` names, per equation, the ops of the sweeps run inside its rules (a
    checkpoint's recomputation)."""

    def __init__(self, eq_of_node: Mapping[int, int],
                 part_at: Mapping[int, int] | None = None,
                 outs: Mapping[int, Sequence[int]] | None = None) -> None:
        self.eq_of_node = eq_of_node
        self.part_at = part_at or {}
        self.outs = outs or {}
        self._merged: dict[int, int] = {}  # equation with several outputs -> its step
        self.steps: list[tuple[int, Any, Any]] = []
        self.inner: dict[int, tuple[str, ...]] = {}
        self._depth = 0
        self._nested: list[str] = []

    def begin(self, roots: list[tuple[Any, Any]]) -> None:
        self._depth += 1

    def end(self, leaves: list[tuple[Any, Any]]) -> None:
        self._depth -= 1

    def hooked(self, node: Any, before: Any, after: Any, hooks: list[Any]) -> None:
        e = self.eq_of_node.get(id(node))
        if e is not None and self._depth <= 1:
            j = self.part_at.get(id(node)) if self.part_at else None
            if j:  # on another output of a decomposition: that output's node
                e = self.outs[e][j - 1]
            self.steps.append((e, (hook_names(hooks), before, after), None))

    def step(self, node: Any, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        if self._depth > 1:  # a sweep inside a rule (a checkpoint's recomputation)
            self._nested.append(node.op.name)
            return
        e = self.eq_of_node.get(id(node))
        if e is not None:
            j = self.part_at.get(id(node)) if self.part_at else None
            if j is None:
                self.steps.append((e, g, sent))
            else:
                self._part(e, j, g, sent)
            if self._nested:
                self.inner[e] = tuple(self._nested)
        self._nested = []


    def _part(self, e: int, j: int, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        """The step of output ``j`` of equation ``e`` (a decomposition): one step for the
        equation, its cotangents per output (``None`` for an output none reached) and,
        per input, the sum of what its outputs' rules sent."""
        k = self._merged.get(e)
        if k is None:
            self._merged[e] = len(self.steps)
            parts = _Parts([None] * (1 + len(self.outs[e])))
            parts[j] = g
            self.steps.append((e, parts, list(sent)))
            return
        _, parts, sends = self.steps[k]
        parts[j] = g
        for i, parent, ct in sent:
            for m, (i0, p0, c0) in enumerate(sends):
                if i0 == i:
                    sends[m] = (i0, p0, c0 + ct)
                    break
            else:
                sends.append((i, parent, ct))


_FLOAT = np.dtype(np.float64)
#: The dtype of a cotangent that is a Python number (``None``: float64, the default).
_PLAIN_DTYPES: dict[type, Any] = {complex: np.dtype(np.complex128)}


def _entries_dtype(parts: Sequence[Any]) -> Any:
    """The dtype of the cotangents of several outputs, together (``None``: Python floats)."""
    dtypes = [d for go in parts if go is not None
              and (d := getattr(go, "dtype", None) or _PLAIN_DTYPES.get(type(go))) is not None]
    return np.result_type(*dtypes) if dtypes else None


class _Parts(list):
    """The cotangents of the outputs of one equation, one per output (``None``: none
    reached it)."""


def hook_names(hooks: Sequence[Any]) -> str:
    """The hooks' names, as the panel writes them: ``double, clip``.

    Examples
    --------
    >>> def double(g): return 2 * g
    >>> hook_names([double, print]), hook_names(["f.<locals>.clip", lambda g: g])
    ('double, print', 'clip, <lambda>')
    """
    names = [h if isinstance(h, str) else getattr(h, "__qualname__", None) or
             getattr(h, "__name__", None) or type(h).__name__ for h in hooks]
    return _truncate(", ".join(n.rsplit(".", 1)[-1] for n in names), 40)


def _assigned_names(line_of: list[int], texts: list[str]) -> dict[int, str]:
    """Names the user gave results: the last equation recorded on a line ``name = ...``
    (``line_of``: each equation's line, an index into ``texts``, ``-1`` for none), when
    no other equation gets that name."""
    line = np.asarray(line_of, dtype=np.int64)
    last = line >= 0
    last[:-1] &= line[1:] != line[:-1]  # the line's last equation
    found: dict[int, str] = {}
    count: dict[str, int] = {}
    parsed: dict[int, str | None] = {}
    for k, j in zip(np.flatnonzero(last).tolist(), line[last].tolist()):
        if j not in parsed:
            parsed[j] = _assignment_target(texts[j])
        name = parsed[j]
        if name is not None:
            found[k] = name
            count[name] = count.get(name, 0) + 1
    return {k: v for k, v in found.items() if count[v] == 1 and len(v) <= MAX_NAME}


def _assignment_target(text: str) -> str | None:
    """``y`` for ``y = ...``; ``None`` for anything else, and for ``f = lambda v: ...``
    (what is computed on that line is the lambda's body, run later, not ``f``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign) \
            and not isinstance(tree.body[0].value, ast.Lambda):
        targets = tree.body[0].targets
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    return None


# -- source lines and groups --------------------------------------------------------
def _place(filename: str) -> str:
    """A file as people should see it: notebook cells have no stable file name."""
    base = os.path.basename(filename)
    if is_notebook_cell(filename) or not base:
        return "cell"
    return base


def _line_table(eqs: list[Equation]) -> tuple[list[list[Any]], list[int], list[np.ndarray],
                                              list[str]]:
    """The distinct source lines (``[place, function, lineno, text]``), each equation's
    line, the grouping keys per equation (function, loop pass, line) and each line's
    whole text."""
    table: list[list[Any]] = []
    texts: list[str] = []
    line_func: list[int] = []  # each line's function
    index: dict[tuple[str, int, str], int] = {}
    funcs: dict[tuple[str, str], int] = {}
    line_of = [-1] * len(eqs)
    for k, eq in enumerate(eqs):
        src = eq.source
        if src is None:
            continue
        key = (src.filename, src.lineno, src.function)
        j = index.get(key)
        if j is None:
            j = index[key] = len(table)
            table.append([_place(src.filename), src.function, src.lineno, _truncate(src.text)])
            texts.append(src.text)
            line_func.append(funcs.setdefault((src.filename, src.function), len(funcs)))
        line_of[k] = j
    if not funcs:
        return table, line_of, [], texts
    func_key = np.asarray(line_func + [-1], dtype=np.int64)[np.asarray(line_of, dtype=np.int64)]
    line_key = np.asarray(line_of, dtype=np.int64)
    lineno = _line_numbers(table, line_of)
    back = np.zeros(len(eqs), dtype=bool)  # a new loop pass: back to an earlier line
    back[1:] = (lineno[1:] < lineno[:-1]) & (func_key[1:] == func_key[:-1])
    return table, line_of, [func_key, np.cumsum(back), line_key], texts


def _line_numbers(table: list[list[Any]], line_of: list[int]) -> np.ndarray:
    """Each equation's line number (``-1`` where none was recorded)."""
    numbers = np.asarray([row[2] for row in table] + [-1], dtype=np.int64)
    return numbers[np.asarray(line_of, dtype=np.int64)]  # -1 picks the appended -1


def _range_extent(a: np.ndarray, start: np.ndarray, end: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest entry of ``a[start[k]:end[k]]`` for every k (non-empty
    ranges), with a sparse table: O(n log n) once, then O(1) per range.

    Examples
    --------
    >>> low, high = _range_extent(np.array([5, 3, 9, 1]), np.array([0, 1]), np.array([2, 4]))
    >>> low.tolist(), high.tolist()
    ([3, 1], [5, 9])
    """
    lows, highs = [a], [a]
    width = 1
    while 2 * width <= a.size:
        lows.append(np.minimum(lows[-1][:-width], lows[-1][width:]))
        highs.append(np.maximum(highs[-1][:-width], highs[-1][width:]))
        width *= 2
    length = end - start
    level = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    low = np.empty(start.size, dtype=a.dtype)
    high = np.empty(start.size, dtype=a.dtype)
    for j in np.unique(level).tolist():
        pick = level == j
        s, e = start[pick], end[pick] - (1 << j)
        low[pick] = np.minimum(lows[j][s], lows[j][e])
        high[pick] = np.maximum(highs[j][s], highs[j][e])
    return low, high


def _group_labels(start: list[int], end: list[int], level: list[int], names: list[str],
                  lines: list[list[Any]], line_of: list[int],
                  keys: list[np.ndarray]) -> list[str]:
    """``cell · lines 3–7``, ``pass 2 · lines 5–6``, ``line 5 · y = y * w``, or for a chunk
    of consecutive children ``passes 1–20 · lines 5–6`` or ``t0 … t39``."""
    func = passes = base = lineno = None
    if keys:  # the pass number at the start of each function run, per equation
        func, passes = keys[0], keys[1]
        new_run = np.ones(func.size, dtype=bool)
        new_run[1:] = func[1:] != func[:-1]
        base = passes[np.maximum.accumulate(np.where(new_run, np.arange(func.size), 0))]
        lineno = _line_numbers(lines, line_of)
    lows = highs = None
    if lineno is not None:
        lows, highs = _range_extent(lineno, np.asarray(start, dtype=np.int64),
                                    np.asarray(end, dtype=np.int64))
        lows, highs = lows.tolist(), highs.tolist()
    labels = []
    for k, (s, e, lvl) in enumerate(zip(start, end, level)):
        first = lines[line_of[s]] if line_of[s] >= 0 else None
        span = ""
        if lows is not None and first is not None:
            low, high = lows[k], highs[k]
            span = f"line {low}" if low == high else f"lines {low}–{high}"
        if lvl == 0 and span:
            where = "cell" if first[1] == "<module>" else f"{first[1]}()"
            labels.append(_truncate(f"{where} · {span}"))
        elif lvl == 1 and span:
            labels.append(f"pass {int(passes[s] - base[s]) + 1} · {span}")
        elif lvl == 2 and first is not None:
            labels.append(_truncate(f"line {first[2]} · {first[3]}"))
        elif span and low >= 0 and func[s] == func[e - 1] and passes[e - 1] > passes[s]:
            labels.append(f"passes {int(passes[s] - base[s]) + 1}–"
                          f"{int(passes[e - 1] - base[e - 1]) + 1} · {span}")
        else:
            labels.append(f"{names[s]} … {names[e - 1]}")
    return labels


def _layout(b: _Builder, lines: list[list[Any]], line_of: list[int],
            keys: list[np.ndarray]) -> dict[str, Any]:
    n = b.n
    groups = nested_groups(n, keys, max_children=MAX_CHILDREN)
    counts = np.fromiter(map(len, b.ins), dtype=np.int64, count=n)
    src = np.fromiter(chain.from_iterable(b.ins), dtype=np.int64, count=int(counts.sum()))
    dst = np.repeat(np.arange(n, dtype=np.int64), counts)
    drawn = b.part_base  # the other outputs of an equation are drawn in its box
    if b.part_vars:
        owner = np.asarray(b.part_owner, dtype=np.int64)
        src = np.where(src >= drawn, owner[np.maximum(src - drawn, 0)], src)
    node_container = np.full(drawn - n, -1, dtype=np.int64)
    constant = src >= n + b.n_leaves  # a constant sits in its consumer's group
    node_container[src[constant] - n] = groups.container[dst[constant]]
    container, rank, order = nested_layout(drawn, src, dst, groups,
                                           node_container=node_container)
    if b.part_vars:  # (where the equation is: the browser does not draw them)
        at = np.asarray(b.part_owner, dtype=np.int64)
        container, rank, order = (np.concatenate([c[:drawn], c[at], c[drawn:]])
                                  for c in (container, rank, order))
    start, end = groups.start.tolist(), groups.end.tolist()
    return {
        "groups": {
            "start": start,
            "end": end,
            "parent": groups.parent.tolist(),
            "label": _group_labels(start, end, groups.level.tolist(), b.names, lines,
                                   line_of, keys),
        },
        "container": container.tolist(),
        "rank": rank.tolist(),
        "order": order.tolist(),
        "collapsed": n > EXPAND_LIMIT,
    }


# -- the sweep's start ---------------------------------------------------------------
def _sinks(tape: Tape) -> list[int]:
    """The equations no other equation reads."""
    used = np.zeros(len(tape), dtype=bool)
    for eq in tape:
        for inp in eq.inputs:
            if inp.source == "equation":
                used[inp.index] = True
    return np.flatnonzero(~used).tolist()


def _seed_value(eq: Equation, seed: Any) -> tuple[Any, str, str | None]:
    """The cotangent to start from, its text, and a note when it was chosen for the user."""
    shape = eq.shape
    dtype = eq.dtype if eq.dtype is not None and eq.dtype.kind in "fc" else np.dtype(np.float64)
    if seed is not None:
        try:
            value = np.asarray(seed, dtype=dtype)
        except (TypeError, ValueError):
            raise TypeError(f"explore: seed= must be a number or an array of numbers (of the "
                            f"output's dtype, {dtype}), got {type(seed).__name__} "
                            f"{seed!r:.40}.") from None
        if value.shape != shape:
            raise ValueError(
                f"explore: seed= has shape {value.shape}, but the output {eq.name} has shape "
                f"{shape}; give one cotangent entry per output entry."
            )
        return (float(value) if value.ndim == 0 and dtype == np.float64 else value,
                summarize(value), None)
    if dtype.kind == "c":  # as backward(), which asks for gradient= here
        return (np.ones(shape, dtype=dtype), "1" if shape == () else
                f"ones({shape_text(shape)})",
                f"The output {eq.name} is complex: backward() needs a cotangent g for it "
                f"(gradient=g, giving the gradient of Re(g·{eq.name})). The sweep starts from "
                "g = 1, the gradient of its real part"
                + (" summed" if shape != () else "") + ". Pass seed= to choose g.")
    if shape == ():
        return (1.0 if dtype == np.float64 else np.ones((), dtype=dtype)), "1", None
    return np.ones(shape, dtype=dtype), f"ones({shape_text(shape)})", (
        f"The output is not a scalar (shape {shape_text(shape)}): the sweep starts from "
        "ones, which gives the gradient of its sum. Pass seed= to choose the cotangent."
    )


def _kept_for(eqs: Sequence[Equation], roots: Sequence[int], seed: Any
              ) -> tuple[Any, str | None]:
    """The kept record of the sweep ``backward()`` ran from these roots (the view-keeping
    mode), or ``None`` and, when there is a record that does not fit, why."""
    if not roots:
        return None, None
    record = eqs[roots[0]].sweep
    if record is None:
        return None, freed_by_another(eqs, tuple(eqs[r].node.seq for r in roots))
    if record.released is not None:
        return None, record.released
    if record.root_seqs != tuple(eqs[r].node.seq for r in roots):
        return None, (f"the {record.kind} that swept it started from another output, so "
                      "the sweep it kept is not this output's")
    if seed is not None and not np.array_equal(np.asarray(seed),
                                               np.asarray(record.roots[0][1])):
        return None, "backward() ran with another cotangent than seed="
    return record, None


def _freed_message(freed: list[int], problem: str | None) -> str:
    others = len(freed) - 1
    which = (f"t{freed[0]} no longer holds its saved values" if not others else
             f"t{freed[0]} and {others} other equation{'s' * (others != 1)} no longer hold "
             "their saved values")
    start = (f"explore: a backward pass already freed the graph ({which}), so its reverse "
             "sweep cannot be replayed")
    if problem:
        return (f"{start}, and what the view-keeping mode kept cannot serve: {problem}. "
                "mode='forward' shows the values kept.")
    return (
        f"{start}; nothing of its sweep was kept: the view-keeping mode was not on where "
        "backward() ran (a thread starts outside it), or the sweep was a transform's own "
        "(wg.grad, wg.vjp). Turn the view-keeping mode on before backward(): `%load_ext "
        "wengert` in a notebook (every later cell), or record and call backward() inside "
        "`with wg.keep_values():`; or call backward(retain_graph=True), or explore before "
        "calling backward(). mode='forward' shows the values kept."
    )


def _record_note(record: Any, b: _Builder) -> str:
    """What the panel says about a kept sweep: that it is the real one, and what else
    happened (several sweeps, a stop, ``inputs=``)."""
    parts = [f"These are the steps {record.kind} ran, kept by the view-keeping mode: "
             "nothing was recomputed for this view."]
    if record.count > 1:
        parts.append(f"It is the last of {record.count} sweeps from this output "
                     "(retain_graph=True): .grad holds the sum of all of them.")
    if record.error is not None:
        parts.append(f"{record.kind} stopped with {_truncate(record.error, 160)}: the "
                     "steps after the last one shown never ran, and no .grad was written "
                     "by the steps that did.")
    skipped = [b.names[b.n + b.leaf_number[kept.key]] for kept in record.leaves
               if not kept.stored and kept.key in b.leaf_number]
    if skipped:
        parts.append(f"{', '.join(skipped)}: {'their' if len(skipped) > 1 else 'its'} "
                     "adjoint was computed, but .grad was left unchanged "
                     "(backward(inputs=...) named other tensors, or it does not require "
                     "grad).")
    if record.create_graph:
        parts.append("With create_graph=True the backward pass was itself recorded; the "
                     "adjoints are shown by value.")
    return " ".join(parts)


def _inner_text(eq: Equation, names: Sequence[str]) -> str:
    """What ran inside the rule of ``eq``: a checkpoint's recomputation, a custom rule's
    own tape."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    ops = ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in counts.items())
    what = "recomputed the function's equations and swept them back" \
        if eq.op.name.startswith("checkpoint_") else "ran a sweep of its own"
    return _truncate(f"Inside this rule, {eq.op.name} {what}: {len(names)} step"
                     f"{'s' * (len(names) != 1)} ({ops}).", 200)


def explorer_frames(
    tape: Tape,
    *,
    roots: Sequence[int] | None = None,
    seed: Any = None,
    mode: str | None = None,
    leaf_names: Sequence[str] | None = None,
    value_names: Mapping[Any, str] | None = None,
) -> Frames:
    """Everything the explorer shows for ``tape``, as JSON-able data (see the module doc;
    :mod:`wengert.jupyter.explorer.schema` states its structure and checks it).

    Parameters
    ----------
    tape : Tape
        What to show (``wg.tape_of(y)``, ``GradientTape.recorded``).
    roots : sequence of int, optional
        The equations the reverse sweep starts from; by default the tape's outputs,
        or else its last equations (those no other equation reads).
    seed : array_like, optional
        The cotangent of the (single) root; ``1`` for a scalar, ones otherwise (the
        panel says so).
    mode : {None, "forward", "reverse"}
        ``None``: the forward trace, then the reverse sweep; ``"forward"``: only the
        forward trace (with tangents for dual numbers); ``"reverse"``: only the sweep.
    leaf_names : sequence of str, optional
        Names for the tape's leaves (``x``, ``w``); ``x0``, ``x1`` ... otherwise.
    value_names : mapping, optional
        The user's names of results and constants, keyed as
        :func:`wengert.jupyter.views.subject.names_from_namespace` gives them (``"t3"`` for
        equation 3, ``(3, 1)`` for the constant that is input 1 of equation 3), as
        ``%%autodiff`` results carry in ``.names``.

    Returns
    -------
    Frames
        A dict (typed by :class:`~wengert.jupyter.explorer.schema.Frames`), JSON-able:
        ``json.dumps`` takes it as it is.

    Raises
    ------
    RuntimeError
        When the reverse sweep is asked for but a backward pass already freed the graph.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> frames = explorer_frames(wg.tape_of(x * 3.0 + 1.0), mode="forward")
    >>> frames["steps"]
    {'forward': 2, 'reverse': 0, 'total': 2}
    >>> frames["nodes"]["name"], frames["nodes"]["value"]
    (['t0', 't1', 'x0', '3', '1'], ['6', '7', '2', '3', '1'])
    """
    if mode not in (None, "both", "forward", "reverse"):
        raise ValueError(f"explore: mode must be None, 'forward' or 'reverse', got {mode!r}")
    with collector_paused(), np.errstate(all="ignore"):  # a NaN the sweep made is shown
        return _frames(tape, roots, seed, mode, leaf_names, value_names)


def _frames(tape: Tape, roots: Sequence[int] | None, seed: Any, mode: str | None,
            leaf_names: Sequence[str] | None, value_names: Mapping[Any, str] | None
            ) -> Frames:
    b = _Builder(tape, leaf_names, value_names)
    n, eqs = b.n, b.eqs
    reverse = mode != "forward" and n > 0
    roots = [int(r) for r in (roots if roots is not None else tape.outputs or _sinks(tape))]
    if any(not 0 <= r < n for r in roots):
        raise ValueError(f"explore: roots must be equations 0..{n - 1}, got {roots}")
    if seed is not None and len(roots) != 1:
        raise ValueError("explore: seed= needs a single output to start the sweep from")
    sweep = _Sweep()
    if reverse:
        sweep = _reverse_sweep(b, tape, roots, seed)
    ops, rules, eq_ops, eq_rules = _ops_and_rules(eqs, b)
    lines, line_of, keys = b.lines, b.line_of, b.group_keys
    title = eqs[-1].source.text if n and eqs[-1].source is not None else None
    if title:  # (a notebook line ending in ";" only silenced its output)
        title = title.rstrip().rstrip(";").rstrip()
    n_fwd = n if mode != "reverse" else 0
    data: Frames = {
        "format": FORMAT,
        "title": _truncate(title) if title else f"{n} equation{'s' * (n != 1)}",
        "equations": n,
        "mode": mode if mode in ("forward", "reverse") else "both",
        "dual": bool(b.labels),
        "eps": sorted(set(b.labels.values()), key=lambda s: (len(s), s)),
        "ops": ops,
        "rules": rules,
        "shapes": b.shapes,
        "lines": lines,
        "nodes": _node_columns(b),
        "eqs": {"op": eq_ops, "rule": eq_rules, "ins": b.ins, "line": line_of,
                "params": [params_text(eq.params, MAX_TEXT) if eq.params else None
                           for eq in eqs]},
        "steps": {"forward": n_fwd, "reverse": len(sweep.frames),
                  "total": n_fwd + (1 + len(sweep.frames) if reverse else 0)},
        "seeds": sweep.seeds,
        "seed_note": sweep.note,
        "reverse": sweep.frames,
        "jacs": b.jacs,
        "layout": _layout(b, lines, line_of, keys),
    }
    if b.outs:
        data["outs"] = {str(e): parts for e, parts in b.outs.items()}
    if b.changed:
        data["changed"] = b.changed
    if reverse and b.hooks:
        data["hooks"] = b.hooks
    if reverse and sweep.inner:
        data["inner"] = sweep.inner
    if sweep.sweep_note:
        data["sweep_note"] = sweep.sweep_note
    bars = _bars(b)
    if bars:
        data["bars"] = bars  # where the browser's rule would differ: ȳ is one character
    return data


class _Sweep:
    """What the reverse sweep gives the frames: its steps, seeds and notes."""

    def __init__(self) -> None:
        self.frames: list[list[Any]] = []
        self.seeds: list[list[Any]] = []
        self.note: str | None = None
        self.inner: dict[str, str] = {}
        self.sweep_note: str | None = None


def _reverse_sweep(b: _Builder, tape: Tape, roots: list[int], seed: Any) -> _Sweep:
    """The reverse sweep from ``roots``: as ``backward()`` ran it when kept, else replayed
    under a sweep observer; fills ``b``'s adjoints."""
    n, eqs = b.n, b.eqs
    out = _Sweep()
    seeds = out.seeds
    note = None
    sweep_note: str | None = None
    record, problem = _kept_for(eqs, roots, seed)
    recorder = _Recorder(b.eq_of_node, b.part_at, b.outs)
    leaf_steps: list[tuple[int, Any, Any]] = []
    if record is not None:  # the sweep backward() ran, as it ran
        for r, (_, value) in zip(roots, record.roots):
            seeds.append([r, summarize(value)])
        if any(np.ndim(value) for _, value in record.roots):
            note = f"{record.kind} started the sweep from the cotangent it was given."
        reached = record.feed(recorder, {n.seq: n for eq in eqs for n in eq.nodes})
        for step in record.steps:
            e = b.eq_of_seq.get(step.seq)
            if e is not None and step.inner:
                recorder.inner[e] = step.inner
        for kept in record.leaves:
            k = b.leaf_number.get(kept.key)
            if k is not None and kept.hooks:
                leaf_steps.append((n + k, (hook_names(kept.hooks), kept.before, kept.ct),
                                   None))
        sweep_note = _record_note(record, b)
    else:
        freed = [eq.index for eq in eqs if eq.freed]
        if freed:
            raise RuntimeError(_freed_message(freed, problem))
        sweep_roots = []
        for r in roots:
            value, text, why = _seed_value(eqs[r], seed)
            sweep_roots.append((eqs[r].node, value))
            seeds.append([r, text])
            note = note or why
        if len(roots) > 1:
            note = (f"The sweep starts from {len(roots)} outputs at once, each with "
                    "cotangent 1 (ones): it gives the gradient of their sum.")
        with observe_sweep(recorder), np.errstate(all="ignore"):  # NaN shows in the panel
            # A whole tape holds every node the sweep can reach from any of its equations.
            restrict = None if tape.whole else {id(n) for eq in eqs for n in eq.nodes}
            _, reached = backprop(sweep_roots, retain_graph=True, restrict=restrict,
                                  replay=True)
        for leaf, ct in reached:
            k = b.leaf_number.get(id(leaf))
            hooks = hooks_of(leaf)
            if k is not None and hooks:
                leaf_steps.append((n + k, (hook_names(hooks), ct, None), None))
        if leaf_steps or any(sent is None for _, _, sent in recorder.steps):
            sweep_note = (
                "Replayed for this view: no hook ran and nothing was written to .grad. "
                "Each hook is shown as its own step; what it returns replaces the "
                "gradient in backward(), so the adjoints after it may differ from "
                "what .grad will get. Call backward() in the view-keeping mode "
                "(%load_ext wengert, or inside wg.keep_values()) and explore after it "
                "to see what the hooks did."
            )
    out.frames = b.sweep_frames(recorder.steps + leaf_steps)
    b.finish(reached)
    swept = {e for e, _, sent in recorder.steps if sent is not None}
    for e in range(n):  # never swept: what reached it is in its inputs' rows only
        if e not in swept:
            b.adjoint_texts[e] = None
    for p, e in enumerate(b.part_owner):
        if e not in swept:
            b.adjoint_texts[b.part_base + p] = None
    out.inner = {str(e): _inner_text(eqs[e], names) for e, names in recorder.inner.items()}
    out.note, out.sweep_note = note, sweep_note
    return out


def _node_columns(b: _Builder) -> Nodes:
    """The ``nodes`` columns (after the sweep filled the adjoints)."""
    n = b.n
    nodes: Nodes = {
        "kind": [0] * n + [1] * b.n_leaves + [2] * len(b.const_values) +
                [3] * len(b.part_vars),
        "name": b.names,
        "shape": b.node_shapes,
        "value": [b.values.primal(v) for v in b.node_values] if b.labels else b.value_texts,
        "adjoint": b.adjoint_texts,
    }
    if b.labels:
        nodes["tangent"] = [b.values.tangent(v) for v in b.node_values]
    return nodes


def _ops_and_rules(eqs: Sequence[Equation], b: _Builder
                   ) -> tuple[list[list[str]], list[list[str | None]], list[int], list[int]]:
    """The distinct ops and rule templates, and each equation's index into them."""
    ops: list[list[str]] = []
    rules: list[list[str | None]] = []
    op_index: dict[Any, int] = {}
    rule_index: dict[Any, int] = {}
    eq_ops, eq_rules = [], []
    plain: dict[tuple[int, int], tuple[int, int]] = {}  # (op, inputs) -> (op, rule), no params
    for eq in eqs:
        if len(eq.outs) > 1:  # a decomposition: its parts' rules, one term per output
            k = op_index.get(eq.primitive)
            if k is None:
                k = op_index[eq.primitive] = len(ops)
                args = ", ".join(f"{{{i}}}" for i in range(len(eq.inputs)))
                ops.append([eq.primitive, eq.primitive,
                            " · ".join(f"{op.name}: {op.formula}" for op in eq.ops),
                            f"{eq.primitive}({args})"])
            eq_ops.append(k)
            template = _parts_template(eq, b, _on_complex(eq, eqs))
            eq_rules.append(len(rules) if template is not None else -1)
            if template is not None:
                rules.append(template)
            continue
        on_complex = getattr(eq.op, "complex_adjoint", None) is not None and \
            _on_complex(eq, eqs)
        if not eq.params and not on_complex:
            known = plain.get((id(eq.op), len(eq.inputs)))
            if known is not None:
                eq_ops.append(known[0])
                eq_rules.append(known[1])
                continue
        k = op_index.get(id(eq.op))
        if k is None:
            k = op_index[id(eq.op)] = len(ops)
            ops.append([eq.op.name, eq.op.symbol, eq.op.formula, _form(eq.op)])
        eq_ops.append(k)
        params = eq.params
        key: Any = (k, len(eq.inputs), repr(sorted(params.items())) if params else "",
                    on_complex)
        if params and any(isinstance(v, np.ndarray) for v in params.values()):
            key = ("eq", eq.index)  # array parameters: no sharing
        r = rule_index.get(key)
        if r is None:
            template = _rule_template(eq.op, len(eq.inputs), params, on_complex)
            r = rule_index[key] = len(rules) if template is not None else -1
            if template is not None:
                rules.append(template)
        eq_rules.append(r)
        if not params and not on_complex:
            plain[(id(eq.op), len(eq.inputs))] = (k, r)
    return ops, rules, eq_ops, eq_rules


def _parts_template(eq: Equation, b: _Builder, on_complex: bool) -> list[str | None] | None:
    """The rule of an equation with several outputs: per input, the sum of each output's
    term, written with that output's name and adjoint (what the sweep adds up)."""
    n = len(eq.inputs)
    per_part = []
    for op, o in zip(eq.ops, (eq.index, *b.outs[eq.index])):
        terms = _rule_template(op, n, eq.params,
                               on_complex and getattr(op, "complex_adjoint", None) is not None)
        if terms is None:
            return None
        name = b.names[o]
        per_part.append([None if t is None else t.replace(OUT, name).replace("ḡ", bar(name))
                         for t in terms])
    rule: list[str | None] = []
    for i in range(n):
        terms = [part[i] for part in per_part if part[i] is not None]
        rule.append(" + ".join(f"({t})" if " " in t and len(terms) > 1 else t for t in terms)
                    if terms else None)
    return rule


def _bars(b: _Builder) -> dict[str, str]:
    """The adjoints' names where the browser's rule (a combining macron on the first
    character) would differ from :func:`bar`."""
    n = b.n
    same_rule = bar("t0") == _macron("t0")  # then every tape name (t12) follows it
    named = chain(b.renamed, range(n, n + b.n_leaves)) if same_rule else range(n + b.n_leaves)
    return {str(k): bar(b.names[k]) for k in named
            if not (same_rule and _TAPE_NAME.fullmatch(b.names[k]))
            and bar(b.names[k]) != _macron(b.names[k])}


# -- what the panel shows ---------------------------------------------------------
def _incoming(bar_name: str, adjoint: str | None) -> str:
    """``t̄3 = 2.6``; for an output of a decomposition that no cotangent reached, that it
    counts as zero (its rule did not run).

    Examples
    --------
    >>> _incoming("t̄3", "2.6"), _incoming("t̄4", None)
    ('t̄3 = 2.6', 't̄4: not used, no cotangent reached it (its term is 0)')
    """
    if adjoint is None:
        return f"{bar_name}: not used, no cotangent reached it (its term is 0)"
    return f"{bar_name} = {adjoint}"



def step_label(data: Mapping[str, Any], step: int) -> str:
    """``forward · step 3/8``, ``reverse · seed`` or ``reverse · step 2/8``.

    Examples
    --------
    >>> data = {"steps": {"forward": 4, "reverse": 4, "total": 9}}
    >>> step_label(data, 0), step_label(data, 4), step_label(data, 8)
    ('forward · step 1/4', 'reverse · seed', 'reverse · step 4/4')
    """
    steps = data["steps"]
    n_fwd, n_rev = steps["forward"], steps["reverse"]
    if step < n_fwd:
        return f"forward · step {step + 1}/{n_fwd}"
    if step == n_fwd:
        return "reverse · seed"
    return f"reverse · step {step - n_fwd}/{n_rev}"


def _running_before(data: Mapping[str, Any], k: int, rows: Sequence[Any], i: int,
                    target: int) -> str:
    """The running adjoint of node ``target`` before reverse step ``k`` sends it input
    ``i``'s contribution (``rows``: the step's rows): its seed, what earlier steps sent
    it, and what earlier inputs of this step sent it (fan-out: ``x * x``)."""
    eqs, adjoints = data["eqs"], data["nodes"]["adjoint"]
    before = "0"
    for seeded, text in data["seeds"]:
        if seeded == target:
            before = text
    for past in data["reverse"][:k]:
        if past[1] is None:  # a hook step sends nothing
            continue
        past_e, past_rows = past
        for j, c, s, _jac in past_rows:
            if eqs["ins"][past_e][j] == target:
                before = s if s is not None else c if c is not None else adjoints[target]
    ins = eqs["ins"][data["reverse"][k][0]]
    for j, c, s, _jac in rows:
        if j == i:
            break
        if ins[j] == target:
            before = s if s is not None else c if c is not None else adjoints[target]
    return before


def step_view(data: Mapping[str, Any], step: int) -> dict[str, Any]:
    """What the side panel shows at ``step`` (0-based), as text: the ES module builds the
    same from the same data.

    Returns a dict with ``label``, ``phase`` (``"forward"``, ``"seed"``, ``"hook"`` or
    ``"reverse"``), ``equation`` (the equation at this step, with its numbers when
    they are plain); for the seed ``seeds``, ``note`` and ``sweep_note`` (where the
    sweep comes from, when there is something to say); for a hook step ``hooks``
    (their names), ``before`` and ``after`` (``t̄1 = 3``; ``None`` when they did not
    run: a replay); for a reverse step ``inner`` (what ran inside the rule: a
    checkpoint's recomputation, or ``None``), ``incoming`` (``t̄3 = 2.6``) and
    ``sends``: per input that received something, ``rule`` (``x̄ += t̄0·w``),
    ``numbers`` (``2.6·0.8``, or ``None``), ``gets`` (the contribution), ``before``
    and ``total`` (the running adjoint around it) and ``sum`` (all three:
    ``w̄ = 0 + 2.08 = 2.08``), and ``jacobian`` (shape, entries, bytes of the matrix
    never built).
    """
    steps = data["steps"]
    if not 0 <= step < max(steps["total"], 1):
        raise IndexError(f"step {step} outside 0..{steps['total'] - 1}")
    nodes, eqs = data["nodes"], data["eqs"]
    names, values, adjoints = nodes["name"], nodes["value"], nodes["adjoint"]
    bars = [_macron(name) for name in names]
    for k, name in data.get("bars", {}).items():
        bars[int(k)] = name
    n_fwd = steps["forward"]
    view: dict[str, Any] = {"label": step_label(data, step)}
    outs = data.get("outs", {})  # equations with several outputs -> their other nodes

    def equation(e: int) -> str:
        form = data["ops"][eqs["op"][e]][3]
        ins = eqs["ins"][e]
        several = outs.get(str(e))
        head = ", ".join(names[o] for o in (e, *several)) if several else names[e]
        factor = _num if not form.endswith(")") else str  # (a call's arguments need none)
        text = f"{head} = " + fill_form(form, [factor(names[r]) for r in ins])
        if not several and all(_plain(values[r]) for r in ins) and _plain(values[e]):
            text += " = " + fill_form(form, [factor(values[r]) for r in ins]) + \
                f" = {values[e]}"
        return text

    if step < n_fwd:
        view.update(phase="forward", node=step, equation=equation(step))
        return view
    if step == n_fwd:
        view.update(phase="seed", seeds=[f"{bars[e]} = {text}" for e, text in data["seeds"]],
                    note=data["seed_note"], sweep_note=data.get("sweep_note"))
        return view
    entry = data["reverse"][step - n_fwd - 1]
    if entry[1] is None:  # a hook step
        node, _, h = entry
        names_text, before, after = data["hooks"][h]
        view.update(phase="hook", node=node, hooks=names_text,
                    before=f"{bars[node]} = {before}",
                    after=None if after is None else f"{bars[node]} = {after}")
        return view
    e, rows = entry
    ins = eqs["ins"][e]
    rule = eqs["rule"][e]
    template = data["rules"][rule] if rule >= 0 else None
    several = outs.get(str(e))
    plain = not several and _plain(adjoints[e]) and _plain(values[e]) and \
        all(_plain(values[r]) for r in ins)
    sends = []
    for i, contribution, running, jac in rows:
        target = ins[i]
        gets = contribution if contribution is not None else adjoints[target]
        before = _running_before(data, step - n_fwd - 1, rows, i, target)
        total = running if running is not None else gets
        if template is not None and template[i] is not None:
            rule_text = fill_rule(template[i], [names[r] for r in ins], names[e], bars[e])
            numbers = fill_rule(template[i], [_num(values[r]) for r in ins], _num(values[e]),
                                _num(adjoints[e])) if plain else None
        else:
            rule_text, numbers = f"{bars[e]}·∂{names[e]}/∂{names[target]}", None
        sends.append({
            "to": names[target],
            "rule": f"{bars[target]} += {rule_text}",
            "numbers": numbers,
            "gets": gets,
            "before": before,
            "total": total,
            "sum": f"{bars[target]} = {before} + {gets} = {total}",
            "jacobian": data["jacs"][jac],
        })
    view.update(phase="reverse", node=e, equation=equation(e),
                incoming="; ".join(_incoming(bars[o], adjoints[o])
                                   for o in (e, *(several or ()))), sends=sends,
                inner=data.get("inner", {}).get(str(e)))
    return view
