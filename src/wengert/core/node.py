"""A tape entry: one equation ``out = op(inputs, params)``.

A node is one plain, flat ``list``: building a list costs a third of a slotted
object, and the garbage collector's cost per recorded op grows with the number
of container objects the op creates, so the parents, inputs and version checks
live in the node itself rather than in tuples of their own. The per-op path of
the tape is the project's speed. Use the index constants and the accessors
below, never bare numbers (the hot loops in ``tensor.py`` and ``backward.py``
spell positions out, with a comment).

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
    recording an op allocates no counter; in-place writes bump it. An op
    that reads its own output checks ``VERSION == 0`` in the backward pass.
OP : Op
    The primitive.
OUT : Any
    Raw output value; ``None`` once ``backward()`` freed the node.
PARAMS : dict or None
    Static keyword parameters (axis, shape, ...).
SEQ : int
    Creation order, as a sort key that *decreases* with creation time: the
    newest node has the smallest key, which a min-heap pops first (the reverse
    sweep's order) with no negation per node. ``-node[SEQ]`` counts up.
EXTRA : dict or None
    Hooks, ``retain_grad`` references, the anomaly-mode stack and the output
    check of an in-place op (``"out_check"``); rarely present.
NIN : int
    The number ``n`` of inputs.
EDGES : start of the inputs, ``STRIDE`` (4) fields each
    For input ``i``, at ``k = EDGES + STRIDE * i``:

    - ``node[k]``: the producing node, a leaf tensor (where gradients are
      accumulated or collected), or ``None`` when no gradient flows there
      (:func:`parents`);
    - ``node[k + 1]``: the raw input value, ``None`` once freed (:func:`inputs`);
      a large array that no rule reads (see ``Op.reads``) is kept as a
      zero-stride stand-in with its shape and dtype, so the tape does not keep
      it alive (the same holds for ``OUT`` when the rules do not read it);
    - ``node[k + 2]``, ``node[k + 3]``: the version holder of the input and its
      version when it was saved, checked by the backward pass when a rule
      reads the input (holder ``None``: nothing to check).
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = [
    "VERSION",
    "OP",
    "OUT",
    "PARAMS",
    "SEQ",
    "EXTRA",
    "NIN",
    "EDGES",
    "STRIDE",
    "Node",
    "next_seq",
    "parents",
    "inputs",
    "set_inputs",
    "free",
    "GradFn",
]

VERSION, OP, OUT, PARAMS, SEQ, EXTRA, NIN, EDGES = range(8)
STRIDE = 4

#: The type of a node (a plain list); ``type(p) is Node`` tells nodes from leaves.
Node = list

#: The ``SEQ`` of a new node (-1, -2, ...): see the module docstring.
next_seq = itertools.count(-1, -1).__next__


def parents(node: list[Any]) -> tuple[Any, ...]:
    """Per input: the producing node, a leaf tensor, or ``None``."""
    return tuple(node[EDGES::STRIDE])


def inputs(node: list[Any]) -> tuple[Any, ...] | None:
    """The raw input values the rules read, or ``None`` once the node was freed."""
    if node[OUT] is None:
        return None
    return tuple(node[EDGES + 1 :: STRIDE])


def set_inputs(node: list[Any], values: tuple[Any, ...]) -> None:
    """Replace the saved input values (same number)."""
    node[EDGES + 1 :: STRIDE] = values


def free(node: list[Any]) -> None:
    """Release the saved values (after a backward pass without ``retain_graph``)."""
    node[OUT] = None
    node[EDGES + 1 :: STRIDE] = [None] * node[NIN]


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
        return -self.node[SEQ]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.node[PARAMS] or {})

    @property
    def freed(self) -> bool:
        """True once ``backward()`` released this node's saved values."""
        return self.node[OUT] is None

    @property
    def next_functions(self) -> tuple[Any, ...]:
        """Per input: a :class:`GradFn`, a leaf tensor, or ``None`` (as in PyTorch)."""
        return tuple(GradFn(p) if type(p) is list else p for p in parents(self.node))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradFn) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)

    def __repr__(self) -> str:
        return f"<{self.name}>"
