"""A tape entry: one equation ``out = op(inputs, params)``, as a named record.

A :class:`Node` holds what the op's VJP rules need (the raw input and output
values), the edges to where each input came from, a sequence number, and a
version counter. Sequence numbers grow with creation time, so sorting nodes
by them, newest first, is a valid order for the reverse sweep: no recursion
is ever needed. A node never references the tensor it produced, so the tape
has no reference cycles and is freed by reference counting alone.

The per-op path of the tape is the project's speed, so a node is one flat
object: the first two inputs live in slots of their own (``parent0``,
``input0``, ... ``seen1``), further inputs in ``rest``. Nodes are built from
one template only, :func:`constructor_body`: by :func:`node1`, :func:`node2` or
:func:`new_node` (the constructors), or by the per-op functions the recording paths
generate with it (building the node and its tensor inline), which also decide what a
node keeps of its inputs (a large array no rule reads is kept as a stand-in, see
:data:`UNREAD_BYTES`); read inputs with :meth:`Node.parents`, :meth:`Node.inputs`,
:meth:`Node.edge`.

Version counters
----------------
Every value that can be modified in place has a *version holder*: any object
with an integer ``version`` attribute. A node is the holder of the value it
produced (so recording an op allocates no counter); leaves and constants get
a :class:`Version`. In-place writes bump it. For each input its rules read, a
node keeps the input's holder (``holder0``) and the version it saw
(``seen0``); the backward pass compares them before running a rule.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from wengert.core.generated import generate

__all__ = [
    "UNREAD_BYTES",
    "shape_stand_in",
    "is_stand_in",
    "Node",
    "Version",
    "node1",
    "node2",
    "constructor_body",
    "constructor_source",
    "CONSTRUCTOR_GLOBALS",
    "new_node",
    "next_seq",
    "GradFn",
]

_NEW = object.__new__
_ndarray = np.ndarray

#: Arrays at least this large that no rule reads are not kept by the tape (see
#: ``Op.reads``, ``Op.reads_out``): the node holds a stand-in with their shape and dtype.
UNREAD_BYTES = 1 << 15

#: The ``seq`` of a new node (-1, -2, ...): a sort key that *decreases* with
#: creation time, so the newest node has the smallest key and a min-heap pops it
#: first (the reverse sweep's order) with no negation per node.
next_seq = itertools.count(-1, -1).__next__


#: The one-element array behind every stand-in of a dtype (see :func:`shape_stand_in`).
_FILLS: dict[np.dtype, np.ndarray] = {}


def shape_stand_in(a: np.ndarray) -> np.ndarray:
    """A read-only, zero-stride array with ``a``'s shape and dtype (NaN, or 0): what a node
    keeps of a large value no rule reads (see ``Op.reads``)."""
    fill = _FILLS.get(a.dtype)
    if fill is None:
        fill = _FILLS[a.dtype] = np.array(np.nan if a.dtype.kind in "fc" else 0, dtype=a.dtype)
    return np.broadcast_to(fill, a.shape)


def is_stand_in(a: Any) -> bool:
    """Whether ``a`` is a stand-in made by :func:`shape_stand_in` (its values are not kept).

    Examples
    --------
    >>> is_stand_in(shape_stand_in(np.ones(3))), is_stand_in(np.ones(3))
    (True, False)
    """
    return type(a) is np.ndarray and a.base is not None and a.base is _FILLS.get(a.dtype)


class Version:
    """The version holder of a leaf or constant value (see the module docstring).

    Examples
    --------
    >>> v = Version()
    >>> v.version += 1
    >>> v.version
    1
    """

    __slots__ = ("version",)

    def __init__(self) -> None:
        self.version = 0

    def __repr__(self) -> str:
        return f"Version({self.version})"


def new_version() -> Version:
    """A fresh :class:`Version` at 0 (the fast spelling of ``Version()``)."""
    v = _NEW(Version)
    v.version = 0
    return v


class Node:
    """One recorded equation ``out = op(inputs, params)``.

    Attributes
    ----------
    version : int
        The version of the value this node produced (the node is that value's
        version holder). An op whose rules read their own output checks that
        it is still 0.
    op : Op
        The primitive's record.
    out : Any
        The raw output value; ``None`` once ``backward()`` freed the node. A
        large output no rule reads is kept as a zero-stride stand-in with its
        shape and dtype only (see ``Op.reads_out``).
    params : dict or None
        Static keyword parameters (axis, shape, ...).
    seq : int
        Creation order as a decreasing key (see :data:`next_seq`); ``-seq``
        counts up from 1.
    extra : dict or None
        Rarely present: hooks (``"hooks"``), callbacks run with the node's
        cotangent (``"on_grad"``, e.g. ``retain_grad``), the creating stack
        (``"stack"``), the output check of an in-place op (``"out_check"``).
    nin : int
        Number of inputs.
    parent0, input0, holder0, seen0, parent1, input1, holder1, seen1
        Inputs 0 and 1 (when the op has them): where the input came from (the
        producing node, a leaf, or ``None`` when no gradient flows there), its
        raw value (``None`` once freed; a large unread array is a stand-in),
        its version holder (``None``: nothing to check) and the version seen.
    rest : list or None
        Inputs 2, 3, ... as a flat list of the same four fields each.
    """

    __slots__ = (
        "version", "op", "out", "params", "seq", "extra", "nin",
        "parent0", "input0", "holder0", "seen0",
        "parent1", "input1", "holder1", "seen1",
        "rest",
    )  # fmt: skip

    version: int
    op: Any
    out: Any
    params: dict[str, Any] | None
    seq: int
    extra: dict[str, Any] | None
    nin: int

    # -- reading inputs -----------------------------------------------------
    def edge(self, i: int) -> tuple[Any, Any, Any, int]:
        """``(parent, input, holder, seen)`` of input ``i``."""
        if i == 0:
            return self.parent0, self.input0, self.holder0, self.seen0
        if i == 1:
            return self.parent1, self.input1, self.holder1, self.seen1
        k = 4 * (i - 2)
        rest = self.rest
        return rest[k], rest[k + 1], rest[k + 2], rest[k + 3]

    def parents(self) -> tuple[Any, ...]:
        """Per input: the producing node, a leaf, or ``None`` (no gradient flows there)."""
        n = self.nin  # (read per op by tape readers: no helper call, one tuple)
        if n == 1:
            return (self.parent0,)
        if n == 2:
            return (self.parent0, self.parent1)
        return (self.parent0, self.parent1, *self.rest[0::4]) if n else ()

    def inputs(self) -> tuple[Any, ...]:
        """The saved raw input values (stand-ins for large unread ones); ``None`` entries
        once freed."""
        n = self.nin
        if n == 1:
            return (self.input0,)
        if n == 2:
            return (self.input0, self.input1)
        return (self.input0, self.input1, *self.rest[1::4]) if n else ()

    def set_input(self, i: int, value: Any) -> None:
        """Replace the saved value of input ``i``."""
        self._set_field(i, "input", 1, value)

    def drop_check(self, i: int) -> None:
        """Stop version-checking input ``i`` (its saved value is a private copy)."""
        self._set_field(i, "holder", 2, None)

    def _set_field(self, i: int, name: str, k: int, value: Any) -> None:
        """Set field ``name`` (the ``k``-th of :meth:`edge`'s four) of input ``i``."""
        if i < 2:
            setattr(self, f"{name}{i}", value)
        else:
            self.rest[4 * (i - 2) + k] = value

    @property
    def freed(self) -> bool:
        """True once a backward pass released the saved values."""
        return self.out is None

    def free(self) -> None:
        """Release the saved values (after a backward pass without ``retain_graph``)."""
        self.out = None
        n = self.nin
        if n >= 1:
            self.input0 = None
        if n >= 2:
            self.input1 = None
        if n > 2:
            self.rest[1::4] = [None] * (n - 2)

    # -- extras ---------------------------------------------------------------
    def extras(self) -> dict[str, Any]:
        """The extras dict, created on first use."""
        extra = self.extra
        if extra is None:
            extra = self.extra = {}
        return extra

    @property
    def name(self) -> str:
        """The op's name with a ``Backward`` suffix, as PyTorch names ``grad_fn``."""
        return "".join(p.capitalize() for p in self.op.name.split("_")) + "Backward"

    @property
    def index(self) -> int:
        """Creation order, counting up from 1."""
        return -self.seq

    def __repr__(self) -> str:
        return f"<Node #{-self.seq} {self.op.name}>"


def constructor_body(nin: int, tail: tuple[str, ...] = ("return n",), *,
                     floats: bool = False) -> list[str]:
    """The statements (unindented) that build a node of ``nin`` inputs in ``n`` from the
    local names ``op, out, params, parent0, value0, holder0, seen0, ...``, then ``tail``:
    the body of :func:`constructor_source`'s function, for a generated function that
    builds its node inline (see :mod:`wengert.reverse.recording`). ``floats``: the
    inputs are Python numbers and there are no params (the float path of an op), so no
    input is a large array to keep as a stand-in."""
    lines = []
    for i in range(0 if floats else nin):
        lines += [f"if holder{i} is None and type(value{i}) is _ndarray "
                  f"and value{i}.nbytes >= UNREAD_BYTES and {i} not in op.reads:",
                  f"    value{i} = shape_stand_in(value{i})"]
    lines += ["n = Node()  # (no __init__: the type call is the cheapest allocation)",
              "n.version = 0", "n.op = op", "n.out = out",
              "n.params = None" if floats else "n.params = params",
              "n.seq = next_seq()", "n.extra = None", f"n.nin = {nin}"]
    for i in range(nin):
        lines += [f"n.{field}{i} = {arg}{i}" for field, arg in
                  (("parent", "parent"), ("input", "value"), ("holder", "holder"),
                   ("seen", "seen"))]
    return [*lines, *tail]


def constructor_source(nin: int, name: str, extra_args: str = "",
                       tail: tuple[str, ...] = ("return n",)) -> str:
    """The source of the constructor ``name`` of a node of ``nin`` inputs: every field set
    straight from the arguments ``op, out, params, parent0, value0, holder0, seen0, ...``
    (then ``extra_args``), in one call, the node in ``n``; ``tail`` ends the body. A
    large array input that no rule reads and that is not version-checked (``holder``
    ``None``) is kept as a stand-in (see :data:`UNREAD_BYTES`). Generate it with
    :func:`~wengert.core.generated.generate` in :data:`CONSTRUCTOR_GLOBALS` (and what
    ``tail`` reads)."""
    edges = "".join(f", parent{i}, value{i}, holder{i}, seen{i}" for i in range(nin))
    return "\n".join([f"def {name}(op, out, params{edges}{extra_args}):",
                      *("    " + line for line in constructor_body(nin, tail)), ""])


#: The names a generated node constructor reads.
CONSTRUCTOR_GLOBALS = {"Node": Node, "next_seq": next_seq, "_ndarray": _ndarray,
                       "UNREAD_BYTES": UNREAD_BYTES, "shape_stand_in": shape_stand_in}


def _constructor(nin: int, doc: str) -> Any:
    name = f"node{nin}"
    fn = generate(constructor_source(nin, name), name, CONSTRUCTOR_GLOBALS, __name__)
    fn.__doc__ = doc
    return fn


_node0 = _constructor(0, "A node of an op without inputs.")
node1 = _constructor(1, """A node of a one-input op:
    ``node1(op, out, params, parent0, value0, holder0, seen0)`` (``holder0`` ``None``: no
    version check; a large array no rule reads is kept as a stand-in, see
    :data:`UNREAD_BYTES`).""")
node2 = _constructor(2, """A node of a two-input op: ``node2(op, out, params, parent0, value0,
    holder0, seen0, parent1, value1, holder1, seen1)`` (as :func:`node1`).""")


def new_node(op: Any, out: Any, params: Any, edges: list[tuple[Any, Any, Any, int]]) -> Node:
    """A node of any number of inputs; ``edges[i]`` is ``(parent, input, holder, seen)``.

    Examples
    --------
    >>> from wengert.core.op import Op
    >>> op = Op("twice", lambda x: 2 * x, vjps=(lambda g, ans, x: 2 * g,))
    >>> node = new_node(op, 6.0, None, [(None, 3.0, None, 0)])
    >>> node.inputs(), node.op.name
    ((3.0,), 'twice')
    """
    n = len(edges)
    if n == 1:
        return node1(op, out, params, *edges[0])
    if n == 2:
        return node2(op, out, params, *edges[0], *edges[1])
    if n == 0:
        return _node0(op, out, params)
    rest = []
    reads = op.reads
    for i in range(2, n):
        parent, value, holder, seen = edges[i]
        if holder is None and type(value) is _ndarray and value.nbytes >= UNREAD_BYTES \
                and i not in reads:
            value = shape_stand_in(value)
        rest.extend((parent, value, holder, seen))
    node = node2(op, out, params, *edges[0], *edges[1])
    node.nin = n
    node.rest = rest
    return node


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

    def __init__(self, node: Node) -> None:
        self.node = node

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def op(self) -> Any:
        return self.node.op

    @property
    def seq(self) -> int:
        return -self.node.seq

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.node.params or {})

    @property
    def freed(self) -> bool:
        """True once ``backward()`` released this node's saved values."""
        return self.node.out is None

    @property
    def next_functions(self) -> tuple[Any, ...]:
        """Per input: a :class:`GradFn`, a leaf tensor, or ``None`` (as in PyTorch)."""
        return tuple(GradFn(p) if type(p) is Node else p for p in self.node.parents())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradFn) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)

    def __repr__(self) -> str:
        return f"<{self.name}>"
