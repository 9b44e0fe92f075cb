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

import operator
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, shape_of
from wengert.core.collector import collector_paused
from wengert.core.display import html_of
from wengert.core.ir import (
    Equation,
    Literal,
    PartGroups,
    Var,
    overwritten,
    stale_input,
    tape_equation,
    tape_var,
)
from wengert.core.kept import foreign_sweep, kept_inputs, kept_value
from wengert.core.node import Node, is_stand_in
from wengert.core.source import SourceLine, user_frame

__all__ = ["Equation", "Input", "Tape", "read_tape", "overwritten", "stale_input",
           "freed_by_another"]


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

    A sequence of :class:`Equation` (``len(tape)`` counts equations: a decomposition
    with several outputs is one); ``tape.leaves`` lists the leaves (tensors that require
    grad or are watched) in the order they are first used, and ``tape.outputs`` the
    indices of the equations the tape was read from. ``tape.whole`` says whether it
    holds every equation its outputs depend on (``wg.tape_of(y)``), not only some (what
    a gradient tape recorded). :meth:`equation_of` finds the equation of a node.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = wg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> w, v = np.linalg.eigh(a)
    >>> tape = wg.tape_of(np.sum(w) + np.sum(v))
    >>> print(tape[2])
    t2: f64[2], t3: f64[2,2] = eigh(t1, uplo='L')
    >>> len(tape), tape.equation_of(v.grad_fn.node).index
    (6, 2)
    """

    def __init__(self, equations: list[Equation], leaves: list[Any], outputs: list[int],
                 whole: bool = False, inputs: Sequence[Var] | None = None,
                 several: Sequence[int] | None = None,
                 leaf_uses: Sequence[tuple[int, int]] | None = None) -> None:
        self._equations = equations
        self._several = tuple(several) if several is not None else None
        # (equation, input position) of every input that is a leaf, when the reader knew
        self._leaf_uses = leaf_uses
        self.leaves = leaves
        self.outputs = outputs
        self.whole = whole
        self._inputs = tuple(inputs) if inputs is not None else None
        self._of_node: dict[int, Equation] | None = None

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

    @property
    def several(self) -> tuple[int, ...]:
        """The indices of the equations with several outputs (decompositions)."""
        if self._several is None:
            self._several = tuple(eq.index for eq in self._equations if len(eq.outs) > 1)
        return self._several

    def equation_of(self, node: Any) -> Equation | None:
        """The equation that ``node`` is (part of), or ``None`` when it is not on the tape."""
        of = self._of_node
        if of is None:
            of = self._of_node = {id(n): eq for eq in self._equations for n in eq.nodes}
        return of.get(id(node))

    def __getitem__(self, i: Any) -> Any:
        return self._equations[i]

    def __len__(self) -> int:
        return len(self._equations)

    def __iter__(self) -> Iterator[Equation]:
        return iter(self._equations)

    def __str__(self) -> str:
        return "\n".join(str(eq) for eq in self._equations)

    def __repr__(self) -> str:
        n, m = len(self), len(self.leaves)
        return (f"<Tape of {n} equation{'' if n == 1 else 's'}, "
                f"{m} lea{'f' if m == 1 else 'ves'}>")

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
        uses = self._leaf_uses
        if uses is None:
            uses = [(eq_index, i) for eq_index, eq in enumerate(self._equations)
                    for i, inp in enumerate(eq.ins) if inp.source == "leaf"]
        changed = set()
        equations = self._equations
        for e, i in uses:
            eq = equations[e]
            k = eq.ins[i].index
            if k not in changed and any(stale_input(node, i) for node in eq.nodes):
                changed.add(k)  # (each part of a decomposition holds its inputs)
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


_SEQ = operator.attrgetter("seq")


def _aval(value: Any) -> tuple[Any, Any]:
    if value is None or is_stand_in(value):
        return None, None
    if type(value) is float:
        return (), _FLOAT64
    return shape_of(value), dtype_of(value)


def _found(roots: Sequence[Any]) -> list[Node]:
    found: list[Node] = []
    seen = {id(r) for r in roots if type(r) is Node}
    todo = [r for r in roots if type(r) is Node]
    pop, push, mark = todo.pop, todo.append, seen.add
    while todo:
        node = pop()
        found.append(node)
        n = node.nin
        if n == 1:  # (most nodes: their parent read from its slot)
            p = node.parent0
            if type(p) is Node and id(p) not in seen:
                mark(id(p))
                push(p)
            continue
        for p in node.parents():
            if type(p) is Node and id(p) not in seen:
                mark(id(p))
                push(p)
    # seq decreases with creation time: the largest key is the oldest.
    found.sort(key=_SEQ, reverse=True)
    return found


def _groups(found: list[Node]) -> list[list[int]] | None:
    """The positions of ``found`` read as one equation each: one node, or the parts of
    one decomposition (:class:`~wengert.core.ir.PartGroups`) at the first one's place, in
    the decomposition's order; ``None`` when every node is an equation of its own (no
    decomposition on the tape)."""
    if not any(node.op.part is not None for node in found):
        return None
    groups: list[list[int]] = []
    parts = PartGroups()
    for k, node in enumerate(found):
        if node.op.part is None:
            groups.append([k])
            continue
        g = parts.join(node.op, tuple(id(p) for p in node.parents()), node.params,
                       len(groups))
        if g == len(groups):
            groups.append([k])
        else:
            groups[g].append(k)
    for group in groups:
        if len(group) > 1:
            group.sort(key=lambda k: found[k].op.part[1])
    return groups


def read_tape(roots: Sequence[Any], nodes: Sequence[Node] | None = None) -> Tape:
    """The equations behind ``roots`` (nodes or leaves), in execution order.

    With ``nodes`` (a gradient tape's own list), exactly those nodes are listed
    (inputs from other nodes appear as constants). The parts of one decomposition that
    one call recorded as several nodes (``eigh``'s values and vectors, ``svd``'s ``U``,
    ``S`` and ``Vh``, ``qr``'s ``Q`` and ``R``: the ops with ``Op.part``) read as one
    equation with several outputs, as in a jaxpr. Variables are numbered in order of
    their node (``t0``, ``t1``, ...), so after a decomposition a variable's number is
    not its equation's (``Var.index``).
    """
    with collector_paused():  # many small acyclic records: see wengert.core.collector
        found = _found(roots) if nodes is None else list(nodes)
        return _read(roots, found, _groups(found), nodes is None)


def _read(roots: Sequence[Any], found: list[Node], groups: list[list[int]] | None,
          whole: bool) -> Tape:
    outs: list[Var | None] = [None] * len(found)  # the output variable of each node
    number = {id(n): k for k, n in enumerate(found)}
    leaves: list[Any] = []
    leaf_number: dict[int, int] = {}
    inputs: list[Var] = []
    leaf_uses: list[tuple[int, int]] = []
    equations = []
    append = equations.append
    get_number = number.get
    single = groups is None
    for e in range(len(found) if single else len(groups)):  # type: ignore[arg-type]
        members = None if single else groups[e]  # type: ignore[index]
        node = found[e] if members is None else found[members[0]]
        ins: list[Var | Literal] = []
        op = node.op
        extra = node.extra
        nin = node.nin
        if nin == 1:  # (most nodes: their one input read from its slots)
            parents, values = (node.parent0,), (node.input0,)
        else:
            parents, values = node.parents(), node.inputs()
        if extra and node.out is None:  # freed: what the view-keeping mode kept
            values = kept_inputs(node) or values
        if op.state_input:  # the rule's own state: not an input of the equation
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
                leaf_uses.append((e, len(ins)))
                ins.append(inputs[i])
                continue
            if type(value) is np.ndarray and (is_stand_in(value)
                                              or stale_input(node, len(ins))):
                value = None  # only its shape was kept, or it was written in place since
            ins.append(Literal(value))
        params = node.params
        if members is None:
            out = outs[e] = _output(node, e, e)
            append(tape_equation(op, ins, params, out, _source(node) if extra else None,
                                 e, node))
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
    several = () if groups is None else [e for e, g in enumerate(groups) if len(g) > 1]
    return Tape(equations, leaves, outputs, whole=whole, inputs=inputs, several=several,
                leaf_uses=leaf_uses)


def _output(node: Node, k: int, e: int) -> Var:
    """The output variable ``t{k}`` of ``node``, read as (part of) equation ``e``."""
    out = node.out
    t = type(out)
    if t is float:  # a scalar tape's values: no lookups
        extra = node.extra
        value = out if not extra or "value" not in extra else _value(node)
        return tape_var(f"t{k}", (), _FLOAT64, e, value)
    value = _value(node)
    if t is np.ndarray:
        shape, dtype = out.shape, out.dtype
    elif out is None:  # freed by backward(): known if the view-keeping mode kept it
        shape, dtype = _aval(value)
    else:
        shape, dtype = shape_of(out), dtype_of(out)
    return tape_var(f"t{k}", shape, dtype, e, value)


def freed_by_another(eqs: Sequence[Equation], root_seqs: tuple[int, ...]) -> str | None:
    """Why the kept sweep of ``eqs`` from the nodes ``root_seqs`` cannot be shown when a
    ``backward()`` from another output freed part of their graph (outputs that share it),
    naming the variable it freed; ``None`` when no such sweep freed any of them.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values():
    ...     t = np.sin(wg.tensor(2.0, requires_grad=True))
    ...     (t * 2.0).backward()  # frees t's saved values
    ...     y = t * 5.0
    >>> freed_by_another(wg.tape_of(y), (y.grad_fn.node.seq,)).split(",")[0]
    't0 was freed by the backward() of another output that shares it'
    """
    other, node = foreign_sweep((n for eq in eqs for n in eq.nodes), root_seqs)
    if other is None:
        return None
    name = next(v.name for eq in eqs for n, v in zip(eq.nodes, eq.outs) if n is node)
    return (f"{name} was freed by the {other.kind} of another output that shares it, and "
            "this output itself was never swept")
