"""Reading the tape from outside: the recorded equations in order, as the one IR.

:func:`read_tape` walks the graph behind some nodes (iteratively) and lists
its equations in execution order (a node's inputs come before it), each as an
:class:`~wengert.core.ir.Equation` of the IR graphs are made of: the op record (name,
symbol, formula), its inputs (a :class:`~wengert.core.ir.Var` for an earlier equation's
output or a leaf, a :class:`~wengert.core.ir.Literal` for a constant), its output
variable (shape, dtype, value when known), the parameters, and the user's source line
when it was recorded (see ``wengert.source_lines``). This and the sweep observers
(:mod:`wengert.core.sweep`) are all a viewer (the explorer, the explainer)
needs; nothing else of the tape is public.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> print(wg.tape_of(np.sum(x * np.exp(x))))
t0: f64[2] = exp(x0)
t1: f64[2] = multiply(x0, t0)
t2: f64[] = sum(t1, axis=None, keepdims=False)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, shape_of
from wengert.core.collector import collector_paused
from wengert.core.display import html_of
from wengert.core.ir import Equation, Literal, Var, overwritten, stale_input
from wengert.core.kept import kept_inputs, kept_value
from wengert.core.node import Node, is_stand_in
from wengert.core.source import SourceLine, user_frame

__all__ = ["Equation", "Input", "Tape", "read_tape", "overwritten", "stale_input"]


def Input(source: str, index: int | None = None, leaf: Any = None,  # noqa: N802
          value: Any = None) -> Var | Literal:
    """An input reference of the IR, as a tape reads it: ``Input("equation", 3)`` (the
    output ``t3`` of equation 3), ``Input("leaf", 0, leaf)`` (leaf ``x0``) or
    ``Input("constant", value=2.0)`` (a :class:`~wengert.core.ir.Literal`).

    Examples
    --------
    >>> Input("equation", 3).name, Input("leaf", 0).name, Input("constant", value=2).name
    ('t3', 'x0', 'const')
    """
    if source == "constant":
        return Literal(value)
    shape = dtype = None
    if leaf is not None:
        shape, dtype = _aval(getattr(leaf, "_value", None))
    name = f"t{index}" if source == "equation" else f"x{index}"
    return Var(name, shape, dtype, source=source, index=index, leaf=leaf)


class Tape(Sequence[Equation]):
    """The equations behind some values, in execution order, and their leaves.

    A sequence of :class:`Equation`; ``tape.leaves`` lists the leaves (tensors
    that require grad or are watched) in the order they are first used, and
    ``tape.outputs`` the indices of the equations the tape was read from.
    ``tape.whole`` says whether it holds every equation its outputs depend on
    (``wg.tape_of(y)``), not only some (what a gradient tape recorded).
    """

    def __init__(self, equations: list[Equation], leaves: list[Any], outputs: list[int],
                 whole: bool = False, inputs: Sequence[Var] | None = None) -> None:
        self._equations = equations
        self.leaves = leaves
        self.outputs = outputs
        self.whole = whole
        self._inputs = tuple(inputs) if inputs is not None else None

    @property
    def equations(self) -> tuple[Equation, ...]:
        """The equations, in execution order (as a graph's)."""
        return tuple(self._equations)

    @property
    def inputs(self) -> tuple[Var, ...]:
        """The leaves as the IR's input variables ``x0, x1, ...`` (as a graph's inputs)."""
        if self._inputs is None:
            self._inputs = tuple(Input("leaf", i, leaf) for i, leaf in enumerate(self.leaves))
        return self._inputs

    @property
    def output_vars(self) -> tuple[Var, ...]:
        """The variables the tape was read from (a graph's ``outputs``)."""
        return tuple(self._equations[k].out for k in self.outputs)

    def __getitem__(self, i: Any) -> Any:
        return self._equations[i]

    def __len__(self) -> int:
        return len(self._equations)

    def __iter__(self) -> Iterator[Equation]:
        return iter(self._equations)

    def __str__(self) -> str:
        return "\n".join(str(eq) for eq in self._equations)

    def __repr__(self) -> str:
        return f"<Tape of {len(self)} equations, {len(self.leaves)} leaves>"

    def changed_leaves(self) -> set[int]:
        """The leaves modified in place since an equation read them (an optimizer's step
        after ``backward()``): their values now are not those the equations used.

        Examples
        --------
        >>> import wengert as wg
        >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
        >>> tape = wg.tape_of((x * x).sum())
        >>> with wg.no_grad():
        ...     x -= 1.0
        >>> tape.changed_leaves()
        {0}
        """
        changed = set()
        for eq in self._equations:
            if eq.node is None:
                continue
            for i, inp in enumerate(eq.ins):
                if inp.source == "leaf" and inp.index not in changed and \
                        stale_input(eq.node, i):
                    changed.add(inp.index)
        return changed

    def _repr_html_(self) -> str | None:
        return html_of(self)


def _source(node: Node) -> SourceLine | None:
    extra = node.extra
    if not extra:
        return None
    line = extra.get("source")
    if line is None and "stack" in extra:  # recorded in anomaly mode
        line = user_frame(extra["stack"])
    return line


def _value(node: Node) -> Any:
    extra = node.extra
    if extra and "value" in extra:
        value = extra["value"]
    else:
        value = node.out
        if value is None and extra:  # freed: what the view-keeping mode kept, if anything
            value = kept_value(node)
        elif is_stand_in(value):
            return None
    if type(value) is np.ndarray and (node.version or extra) and overwritten(node):
        return None  # not the op's result any more: the memory was written since
    return value


_FLOAT64 = np.dtype(np.float64)


def _seq(node: Node) -> int:
    return node.seq


def _aval(value: Any) -> tuple[Any, Any]:
    if value is None or is_stand_in(value):
        return None, None
    if type(value) is float:
        return (), _FLOAT64
    return shape_of(value), dtype_of(value)


#: The primitives that share one decomposition of their input (``ops/linalg/memo.py``):
#: read with ``group=True`` they are one equation with several outputs, in this order.
SHARED = {name: (family, k) for family, parts in (
    ("eigh", ("eigh_values", "eigh_vectors")), ("eig", ("eig_values", "eig_vectors")),
    ("svd", ("svd_u", "svd_values", "svd_vt")), ("qr", ("qr_q", "qr_r")))
    for k, name in enumerate(parts)}


def _found(roots: Sequence[Any]) -> list[Node]:
    found: list[Node] = []
    seen = {id(r) for r in roots if type(r) is Node}
    todo = [r for r in roots if type(r) is Node]
    pop, push, mark = todo.pop, todo.append, seen.add
    while todo:
        node = pop()
        found.append(node)
        for p in node.parents():
            if type(p) is Node and id(p) not in seen:
                mark(id(p))
                push(p)
    # seq decreases with creation time: the largest key is the oldest.
    found.sort(key=_seq, reverse=True)
    return found


def _groups(found: list[Node]) -> list[list[int]]:
    """The positions of ``found`` read as one equation each: one node, or the parts of
    one decomposition (same family, same inputs, same params) at the first one's place."""
    groups: list[list[int]] = []
    open_: dict[Any, list[int]] = {}
    for k, node in enumerate(found):
        shared = SHARED.get(node.op.name)
        if shared is None:
            groups.append([k])
            continue
        key = (shared[0], tuple(id(p) for p in node.parents()),
               repr(sorted(node.params.items())) if node.params else "")
        group = open_.get(key)
        if group is None or any(SHARED[found[j].op.name][1] == shared[1] for j in group):
            group = open_[key] = [k]
            groups.append(group)
        else:
            group.append(k)
    for group in groups:
        group.sort(key=lambda k: SHARED[found[k].op.name][1] if len(group) > 1 else 0)
    return groups


def read_tape(roots: Sequence[Any], nodes: Sequence[Node] | None = None,
              group: bool = False) -> Tape:
    """The equations behind ``roots`` (nodes or leaves), in execution order.

    With ``nodes`` (a gradient tape's own list), exactly those nodes are listed
    (inputs from other nodes appear as constants). With ``group``, the parts of one
    decomposition (``eigh``'s values and vectors, ``svd``'s, ``qr``'s) read as one
    equation with several outputs; their variables keep the names they have otherwise.
    """
    with collector_paused():  # many small acyclic records: see wengert.core.collector
        found = _found(roots) if nodes is None else list(nodes)
        return _read(roots, found, _groups(found) if group else None, nodes is None)


def _read(roots: Sequence[Any], found: list[Node], groups: list[list[int]] | None,
          whole: bool) -> Tape:
    outs: list[Var | None] = [None] * len(found)  # the output variable of each node
    number = {id(n): k for k, n in enumerate(found)}
    leaves: list[Any] = []
    leaf_number: dict[int, int] = {}
    inputs: list[Var] = []
    equations = []
    append = equations.append
    get_number = number.get
    single = groups is None
    for e in range(len(found) if single else len(groups)):  # type: ignore[arg-type]
        members = None if single else groups[e]  # type: ignore[index]
        node = found[e] if members is None else found[members[0]]
        ins: list[Var | Literal] = []
        parents = node.parents()
        values = node.inputs()
        if node.out is None and node.extra:  # freed: what the view-keeping mode kept
            values = kept_inputs(node) or values
        if node.op.state_input:  # the rule's own state: not an input of the equation
            parents = parents[:-1]
        for parent, value in zip(parents, values):
            if type(parent) is Node:
                j = get_number(id(parent))
                if j is not None:
                    ins.append(outs[j])  # type: ignore[arg-type]
                    continue
            elif parent is not None:
                i = leaf_number.get(id(parent))
                if i is None:
                    i = leaf_number[id(parent)] = len(leaves)
                    leaves.append(parent)
                    inputs.append(Input("leaf", i, parent))  # type: ignore[arg-type]
                ins.append(inputs[i])
                continue
            if type(value) is np.ndarray and (is_stand_in(value)
                                              or stale_input(node, len(ins))):
                value = None  # only its shape was kept, or it was written in place since
            ins.append(Literal(value))
        params = node.params
        extra = node.extra
        if members is None:
            out = outs[e] = _output(node, e, e)
            append(Equation(node.op, ins, params, out, _source(node) if extra else None,
                            index=e, nodes=(node,)))
            continue
        for k in members:
            outs[k] = _output(found[k], k, e)
        append(Equation(
            node.op, ins, params, [outs[k] for k in members],  # type: ignore[misc]
            _source(node) if extra else None, index=e, nodes=[found[k] for k in members]))
    outputs = []
    for r in roots:
        if type(r) is Node and id(r) in number:
            k = outs[number[id(r)]].index  # type: ignore[union-attr]
            if k not in outputs:
                outputs.append(k)
    for r in roots:  # a root that is a leaf itself
        if type(r) is not Node and r is not None and id(r) not in leaf_number:
            leaf_number[id(r)] = len(leaves)
            leaves.append(r)
            inputs.append(Input("leaf", len(inputs), r))  # type: ignore[arg-type]
    return Tape(equations, leaves, outputs, whole=whole, inputs=inputs)


def _output(node: Node, k: int, e: int) -> Var:
    """The output variable ``t{k}`` of ``node``, read as (part of) equation ``e``."""
    out = node.out
    if type(out) is float:  # a scalar tape's values: no lookups
        shape, dtype = (), _FLOAT64
    elif out is None:
        shape = dtype = None
    else:
        shape, dtype = shape_of(out), dtype_of(out)
    return Var(f"t{k}", shape, dtype, source="equation", index=e, value=_value(node))
