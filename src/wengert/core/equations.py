"""Reading the tape from outside: the recorded equations in order.

:func:`read_tape` walks the graph behind some nodes (iteratively) and lists
its equations in execution order (a node's inputs come before it), each as an
:class:`Equation`: the op record (name, symbol, formula), where each input came
from (an earlier equation, a leaf, or a constant), the output's shape and
dtype, the parameters, and the user's source line when it was recorded (see
``wengert.source_lines``). This and the sweep observers
(:mod:`wengert.core.sweep`) are all a viewer (the explorer, the explainer)
needs; nothing else of the tape is public.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> y = (np.sin(x) * x).sum()
>>> print(wg.tape_of(y))
t0 = sin(x0)                                 # (2,) float64
t1 = multiply(t0, x0)                        # (2,) float64
t2 = sum(t1, axis=None, keepdims=False)      # () float64
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, shape_of
from wengert.core.display import html_of
from wengert.core.kept import kept_inputs, kept_sweep, kept_value
from wengert.core.node import Node, is_stand_in
from wengert.core.source import SourceLine, user_frame

__all__ = ["Equation", "Input", "Tape", "read_tape", "overwritten", "stale_input"]


@dataclass(slots=True)
class Input:
    """Where one input of an equation came from (a read-only record).

    ``source`` is ``"equation"`` (the output of equation number ``index``),
    ``"leaf"`` (leaf number ``index`` of the tape: a tensor that requires grad
    or is watched; ``leaf`` is that object) or ``"constant"`` (a value that is
    not differentiated here; ``value`` is the saved value, ``None`` once freed or when
    only its shape was kept).
    """

    source: str
    index: int | None = None
    leaf: Any = field(default=None, repr=False, compare=False)
    value: Any = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """``t3`` for equation 3, ``x0`` for leaf 0, ``const`` otherwise."""
        if self.source == "equation":
            return f"t{self.index}"
        if self.source == "leaf":
            return f"x{self.index}"
        return "const"


@dataclass(slots=True)
class Equation:
    """One recorded equation ``t{index} = op(inputs)`` (a read-only record).

    Attributes
    ----------
    index : int
        Position in execution order (0 first).
    op : Op
        The primitive's record: ``op.name``, ``op.symbol``, ``op.formula``.
    inputs : tuple of Input
        Where each input came from.
    shape, dtype
        The output's shape and dtype (``None`` once a backward pass freed the node
        without ``retain_graph``).
    params : dict
        The op's static parameters (axis, shape, ...).
    source : SourceLine or None
        The user's line that recorded it, when recorded inside
        ``wengert.source_lines()`` or ``wengert.detect_anomaly()``.
    value : Any
        The output's value when it is known: recorded inside ``wengert.keep_values()``,
        still held by the node, or kept by the view-keeping mode when a backward pass
        freed it. ``None`` once a backward pass freed it otherwise, for a large
        value that no rule reads (the tape keeps only its shape), or once its memory was
        written in place (:func:`overwritten`).
    node : Node
        The node itself (its saved values, ``node.out``; ``None`` once freed).
    """

    index: int
    op: Any
    inputs: tuple[Input, ...]
    shape: tuple[int, ...] | None
    dtype: np.dtype | None
    params: dict[str, Any]
    source: SourceLine | None
    value: Any = field(repr=False, compare=False)
    node: Node = field(repr=False, compare=False)

    @property
    def name(self) -> str:
        return f"t{self.index}"

    @property
    def freed(self) -> bool:
        """Whether a backward pass freed this equation's saved values."""
        return self.node.out is None

    @property
    def saved_inputs(self) -> tuple[Any, ...]:
        """The input values this equation saved, one per input (``None`` where only a
        shape was saved, once freed unless the view-keeping mode kept them, or where the
        value was written in place since: :func:`stale_input`)."""
        n = len(self.inputs)
        node = self.node
        raw = node.inputs() if node.out is not None else kept_inputs(node)
        if raw is None:
            return (None,) * n
        return tuple(None if v is None or is_stand_in(v) or stale_input(node, i) else v
                     for i, v in enumerate(raw[:n]))

    @property
    def written(self) -> bool:
        """Whether the output's memory was written in place after the op computed it (then
        ``value`` is ``None``: the array holds another value now; see :func:`overwritten`)."""
        node = self.node
        extra = node.extra
        raw = extra["value"] if extra and "value" in extra else node.out
        if raw is None and extra:
            raw = kept_value(node)
        return type(raw) is np.ndarray and overwritten(node)

    @property
    def sweep(self) -> Any:
        """The record of the last backward pass that swept this equation in the
        view-keeping mode (``wengert.keep_values()``, ``%load_ext wengert``): a
        :class:`~wengert.core.kept.SweepRecord`, or ``None``."""
        return kept_sweep(self.node)

    def __str__(self) -> str:
        args = ", ".join(i.name for i in self.inputs)
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        call = f"{self.name} = {self.op.name}({args}{', ' + params if params else ''})"
        return f"{call:<44} # {self.shape} {self.dtype}"


class Tape(Sequence[Equation]):
    """The equations behind some values, in execution order, and their leaves.

    A sequence of :class:`Equation`; ``tape.leaves`` lists the leaves (tensors
    that require grad or are watched) in the order they are first used, and
    ``tape.outputs`` the indices of the equations the tape was read from.
    ``tape.whole`` says whether it holds every equation its outputs depend on
    (``wg.tape_of(y)``), not only some (what a gradient tape recorded).
    """

    def __init__(self, equations: list[Equation], leaves: list[Any], outputs: list[int],
                 whole: bool = False) -> None:
        self._equations = equations
        self.leaves = leaves
        self.outputs = outputs
        self.whole = whole

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
            for i, inp in enumerate(eq.inputs):
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


def overwritten(node: Node) -> bool:
    """Whether the memory of ``node``'s output was written in place after the op computed
    it (``h += 1`` after ``h = x * 2``; a slice written through to its base): the array it
    holds then is not the op's result.

    A node is the version holder of its output; a view's output shares the memory of its
    base, whose holder and version at the view's creation are noted in the view-keeping
    mode (``out_seen``; outside it a view's memory is not followed).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x * 2.0
    >>> node = h.grad_fn.node
    >>> h += 1.0
    >>> overwritten(node), overwritten(h.grad_fn.node)
    (True, False)
    """
    extra = node.extra
    seen = extra.get("out_seen") if extra else None
    if seen is not None:
        return seen[0].version != seen[1]
    return node.version != 0


def stale_input(node: Node, i: int) -> bool:
    """Whether the value ``node`` holds for input ``i`` was written in place since the op
    read it: checked through the input's version holder, kept for the inputs its rules
    read and, in the view-keeping mode, for the leaves it does not read (``in_seen``)."""
    _, _, holder, seen = node.edge(i)
    if holder is not None:
        return holder.version != seen
    extra = node.extra
    noted = extra.get("in_seen") if extra else None
    if noted:
        for j, holder, seen in noted:
            if j == i:
                return holder.version != seen
    return False


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


def read_tape(roots: Sequence[Any], nodes: Sequence[Node] | None = None) -> Tape:
    """The equations behind ``roots`` (nodes or leaves), in execution order.

    With ``nodes`` (a gradient tape's own list), exactly those nodes are listed
    (inputs from other nodes appear as constants).
    """
    if nodes is None:
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
    else:
        found = list(nodes)
    number = {id(n): k for k, n in enumerate(found)}
    leaves: list[Any] = []
    leaf_number: dict[int, int] = {}
    equations = []
    append = equations.append
    # One Input record per equation and per leaf, shared by every reader (records are
    # read-only): a long tape makes one per edge otherwise.
    from_equation: list[Input | None] = [None] * len(found)
    from_leaf: list[Input] = []
    get_number = number.get
    for k, node in enumerate(found):
        ins = []
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
                    record = from_equation[j]
                    if record is None:
                        record = from_equation[j] = Input("equation", j)
                    ins.append(record)
                    continue
            elif parent is not None:
                i = leaf_number.get(id(parent))
                if i is None:
                    i = leaf_number[id(parent)] = len(leaves)
                    leaves.append(parent)
                    from_leaf.append(Input("leaf", i, parent))
                ins.append(from_leaf[i])
                continue
            if type(value) is np.ndarray and (is_stand_in(value)
                                              or stale_input(node, len(ins))):
                value = None  # only its shape was kept, or it was written in place since
            ins.append(Input("constant", None, None, value))
        out = node.out
        params = node.params
        extra = node.extra
        if type(out) is float:  # a scalar tape's values: no lookups
            shape, dtype = (), _FLOAT64
        elif out is None:
            shape = dtype = None
        else:
            shape, dtype = shape_of(out), dtype_of(out)
        append(Equation(
            k, node.op, tuple(ins), shape, dtype,
            dict(params) if params else {},
            _source(node) if extra else None,
            _value(node),
            node,
        ))
    outputs = [number[id(r)] for r in roots if type(r) is Node and id(r) in number]
    for r in roots:  # a root that is a leaf itself
        if type(r) is not Node and r is not None and id(r) not in leaf_number:
            leaf_number[id(r)] = len(leaves)
            leaves.append(r)
    return Tape(equations, leaves, outputs, whole=nodes is None)
