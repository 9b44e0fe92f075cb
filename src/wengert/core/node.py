"""A tape entry: one equation ``out = op(inputs, params)``.

A node is a plain ``list`` with the fields below at fixed positions: building
a list costs a third of a slotted object, and the per-op path of the tape is
the project's speed. Use the index constants, never bare numbers.

A node holds what its VJP needs (the raw input and output values), the edges
to the nodes (or leaf tensors) that produced its inputs, and a sequence number.
Sequence numbers grow with creation time, so sorting nodes by it, largest
first, is a valid order for the reverse sweep: no recursion is ever needed.
A node never references the tensor it produced, so there are no cycles.

Fields
------
VERSION : int
    The version of the value this node produced (first, so that a node is
    also a *version holder*: anything whose item 0 is a version). The
    tensor a node produces uses the node itself as its version counter, so
    recording an op allocates no counter; in-place writes bump it.
OP : Op
    The primitive.
PARENTS : tuple
    Per input: the producing node, a leaf tensor (where gradients are
    accumulated or collected), or ``None`` when no gradient flows there.
INPUTS : tuple or None
    Raw input values; ``None`` once ``backward()`` freed the node.
OUT : Any
    Raw output value.
PARAMS : dict or None
    Static keyword parameters (axis, shape, ...).
SEQ : int
    Creation order.
EXTRA : dict or None
    Hooks and ``retain_grad`` references, rarely present.
CHECKS : start of the version checks
    The rest of the list, flat, in threes: ``holder, version, input_index``
    for each input value the rules read (``-1``: the output, when it was
    written in place by this op). An op that reads its own output checks
    ``VERSION == 0`` instead. Flat, so that a node is one allocation: the
    garbage collector's cost per recorded op grows with the number of
    container objects it creates.
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = [
    "VERSION",
    "OP",
    "PARENTS",
    "INPUTS",
    "OUT",
    "PARAMS",
    "SEQ",
    "CHECKS",
    "EXTRA",
    "Node",
    "next_seq",
    "new_node",
    "is_node",
    "GradFn",
]

VERSION, OP, PARENTS, INPUTS, OUT, PARAMS, SEQ, EXTRA, CHECKS = range(9)

#: The type of a node (a plain list); ``type(p) is Node`` tells nodes from leaves.
Node = list

next_seq = itertools.count().__next__


def new_node(
    op: Any,
    parents: tuple[Any, ...],
    inputs: tuple[Any, ...],
    out: Any,
    params: dict[str, Any] | None,
    checks: tuple[Any, ...] = (),
) -> list[Any]:
    """Build a node (see the module docstring for its fields)."""
    node = [0, op, parents, inputs, out, params, next_seq(), None]
    node.extend(checks)
    return node


def is_node(x: Any) -> bool:
    """Whether ``x`` is a tape node (as opposed to a leaf tensor or ``None``)."""
    return type(x) is list


def node_name(node: list[Any]) -> str:
    """The op's name with a ``Backward`` suffix, as PyTorch names ``grad_fn``."""
    return "".join(p.capitalize() for p in node[OP].name.split("_")) + "Backward"


def node_extra(node: list[Any]) -> dict[str, Any]:
    """The node's extras dict, created on first use."""
    extra = node[EXTRA]
    if extra is None:
        extra = node[EXTRA] = {}
    return extra


class GradFn:
    """A read-only view of a node, returned by ``Tensor.grad_fn``.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> (x * x).grad_fn
    <MultiplyBackward>
    """

    __slots__ = ("node",)

    def __init__(self, node: list[Any]) -> None:
        self.node = node

    @property
    def name(self) -> str:
        return node_name(self.node)

    @property
    def op(self) -> Any:
        return self.node[OP]

    @property
    def seq(self) -> int:
        return self.node[SEQ]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.node[PARAMS] or {})

    @property
    def freed(self) -> bool:
        """True once ``backward()`` released this node's saved values."""
        return self.node[INPUTS] is None

    @property
    def next_functions(self) -> tuple[Any, ...]:
        """Per input: a :class:`GradFn`, a leaf tensor, or ``None`` (as in PyTorch)."""
        return tuple(GradFn(p) if type(p) is list else p for p in self.node[PARENTS])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradFn) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)

    def __repr__(self) -> str:
        return f"<{self.name}>"
