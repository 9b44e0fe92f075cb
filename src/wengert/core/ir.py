"""The one IR of tapes and graphs: variables, literals and equations ``outs = op[params](ins)``.

A traced graph (:func:`wengert.trace`) and a recorded tape (:func:`wengert.tape_of`) are
both made of these pieces, as a jaxpr is of ``Var``, ``Literal`` and ``JaxprEqn``:

- :class:`Var`: a named value with a shape and a dtype (compared by identity); on a
  tape also where it came from (``source`` is ``"leaf"`` or ``"equation"``, ``index`` the
  leaf's or the equation's number, ``leaf`` the leaf object) and the value it held when
  it is known;
- :class:`Literal`: a constant input (``source == "constant"``), its value kept as given
  (``None`` on a tape once it was freed or written in place);
- :class:`Equation`: one op record applied to variables and literals, with one output or
  several (``outs``; ``out`` is the first) and its parameters; a tape's equation also
  holds its position (``index``) and the node(s) it was read from (``nodes``), through
  which it answers what the views ask of a recorded equation: ``value``, ``freed``,
  ``saved_inputs``, ``written``, ``sweep``.

Examples
--------
>>> import numpy as np
>>> x = Var("x", (3,), np.float64)
>>> t0 = Var("t0", (3,), np.float64)
>>> from wengert.ops import REGISTRY
>>> print(Equation(REGISTRY["multiply"], [x, Literal(2.0)], None, t0))
t0: f64[3] = multiply(x, 2.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from wengert.core.formatting import aval_text, literal_text, params_text
from wengert.core.kept import kept_inputs, kept_sweep, kept_value
from wengert.core.node import Node, is_stand_in

__all__ = ["Var", "Literal", "Equation", "PartGroups", "overwritten", "stale_input"]


class Var:
    """A variable: a name, a shape and a dtype (compared by identity).

    ``scalar`` is true when the traced value was a Python float (not a 0-d array): a
    program of only such values compiles to straight-line ``math`` code. A variable read
    from a tape also says where it came from: ``source`` (``"leaf"`` or ``"equation"``),
    ``index`` (the leaf's or the equation's number), ``leaf`` (the leaf object) and
    ``value`` (what it held, when known). ``shape`` and ``dtype`` are ``None`` on a tape
    once a backward pass freed the value without ``retain_graph``.
    """

    __slots__ = ("name", "shape", "dtype", "scalar", "source", "index", "leaf", "value")

    def __init__(self, name: str, shape: tuple[int, ...] | None, dtype: Any,
                 scalar: bool = False, *, source: str | None = None, index: int | None = None,
                 leaf: Any = None, value: Any = None) -> None:
        self.name = name
        self.shape = tuple(shape) if shape is not None else None
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.scalar = scalar
        self.source = source
        self.index = index
        self.leaf = leaf
        self.value = value

    @property
    def aval(self) -> str:
        """``f64[3]``."""
        return aval_text(self.shape, self.dtype)

    @property
    def nbytes(self) -> int:
        """The bytes of the array this variable holds."""
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"{self.name}:{self.aval}"


class Literal:
    """A constant input of an equation: a Python number or a NumPy array, kept as given."""

    __slots__ = ("value",)
    source = "constant"
    index = None
    leaf = None
    name = "const"

    def __init__(self, value: Any) -> None:
        self.value = value

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.value))

    @property
    def dtype(self) -> np.dtype:
        v = self.value
        if type(v) is float:
            return np.dtype(np.float64)
        return np.asarray(v).dtype

    @property
    def scalar(self) -> bool:
        return type(self.value) in (float, int)

    def __repr__(self) -> str:
        return literal_text(self.value)


_FIELDS = ("op", "ins", "params", "outs", "source", "grad_off", "context", "index", "nodes",
           "parts")


class Equation:
    """``outs = op[params](*ins)``: one op record applied to variables and literals.

    Attributes
    ----------
    op : Op
        The primitive's record (its NumPy forward ``op.impl``, its rules, ``op.symbol``).
    ins : tuple of Var or Literal
    params : dict
        The op's static parameters (``axis``, ``shape`` ...).
    outs : tuple of Var
        Its outputs: one, or several for the parts of one decomposition read from a tape
        (``eigh``'s values and vectors: then ``op`` is the first part's record, ``ops``
        each output's and ``primitive`` the decomposition's name), on a tape as in a
        traced graph (see :class:`PartGroups`). ``out`` is the first.
    source : SourceLine or None
        The user's line that made it, when made inside ``wg.source_lines()`` (always for
        :func:`wengert.graph.trace`).
    grad_off : bool
        It was traced inside ``with wg.no_grad():``. Run on tensors (when the graph is
        differentiated) it runs under ``no_grad`` again, so no gradient flows through it
        in reverse mode, as eagerly; forward mode is not affected, as eagerly.
    context : Context or None
        The ``np.errstate`` (and warning filters) it was traced under, where the traced
        function set its own: it runs under them again, so it warns or raises as eagerly.
    index : int or None
        On a tape, its position in execution order (0 first).
    nodes : tuple of Node
        On a tape, the node of each output (empty for a traced graph).
    parts : tuple of Op or None
        The op record of each output when there are several (``ops``); ``None``: read
        from ``nodes``, or ``op`` alone.
    """

    __slots__ = _FIELDS

    def __init__(self, op: Any, ins: Sequence[Var | Literal], params: dict[str, Any] | None,
                 out: Var | Sequence[Var], source: Any = None, grad_off: bool = False,
                 context: Any = None, *, index: int | None = None,
                 nodes: Sequence[Node] = (), parts: Sequence[Any] | None = None) -> None:
        self.op = op
        self.ins = tuple(ins)
        self.params = dict(params) if params else {}
        self.outs = (out,) if isinstance(out, Var) else tuple(out)
        self.source = source
        self.grad_off = grad_off
        self.context = context
        self.index = index
        self.nodes = tuple(nodes)
        self.parts = None
        if len(self.outs) > 1 and (parts is not None or not nodes):
            self.parts = tuple(parts) if parts is not None else ()
            if len(self.parts) != len(self.outs):
                raise ValueError(
                    f"an equation with {len(self.outs)} outputs "
                    f"({', '.join(v.name for v in self.outs)}) takes parts=, the op record of "
                    f"each output (the parts of one decomposition); got {len(self.parts)}")

    def replace(self, **changes: Any) -> Equation:
        """A copy with some fields changed (``eq.replace(ins=...)``, ``out=`` for ``outs``)."""
        fields = {k: getattr(self, k) for k in _FIELDS}
        if "out" in changes:
            changes["outs"] = changes.pop("out")
        fields.update(changes)
        outs = fields.pop("outs")
        index, nodes, parts = fields.pop("index"), fields.pop("nodes"), fields.pop("parts")
        return Equation(out=outs, index=index, nodes=nodes, parts=parts, **fields)

    # -- what every view reads ------------------------------------------------------------

    @property
    def ops(self) -> tuple[Any, ...]:
        """The op record of each output (the parts of a decomposition)."""
        if self.parts is not None:
            return self.parts
        if len(self.nodes) > 1:
            return tuple(n.op for n in self.nodes)
        return (self.op,) * len(self.outs)

    @property
    def primitive(self) -> str:
        """The name of what the equation applies: ``op.name``, or the decomposition's name
        (``"eigh"``) when it holds several of its parts."""
        part = getattr(self.op, "part", None) if len(self.outs) > 1 else None
        return part[0] if part is not None else self.op.name

    @property
    def out(self) -> Var:
        """The (first) output."""
        return self.outs[0]

    @property
    def inputs(self) -> tuple[Var | Literal, ...]:
        """The inputs (``ins``)."""
        return self.ins

    @property
    def name(self) -> str:
        """The name of the (first) output: ``t3``."""
        return self.outs[0].name

    @property
    def shape(self) -> tuple[int, ...] | None:
        return self.outs[0].shape

    @property
    def dtype(self) -> np.dtype | None:
        return self.outs[0].dtype

    @property
    def value(self) -> Any:
        """The (first) output's value when it is known (see :class:`Var`)."""
        return self.outs[0].value

    # -- what a tape's equation answers from its node -------------------------------------

    @property
    def node(self) -> Node | None:
        """The node of the (first) output; ``None`` for a traced graph."""
        return self.nodes[0] if self.nodes else None

    @property
    def freed(self) -> bool:
        """Whether a backward pass freed this equation's saved values."""
        node = self.node
        return node is not None and node.out is None

    @property
    def saved_inputs(self) -> tuple[Any, ...]:
        """The input values this equation saved, one per input (``None`` where only a
        shape was saved, once freed unless the view-keeping mode kept them, or where the
        value was written in place since: :func:`stale_input`)."""
        n = len(self.ins)
        node = self.node
        if node is None:
            return (None,) * n
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
        if node is None:
            return False
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
        return kept_sweep(self.node) if self.nodes else None

    def __str__(self) -> str:
        # (a tape's constant it no longer holds reads "const": its value is not known)
        args = [v.name if type(v) is Var else
                "const" if v.value is None and self.nodes else literal_text(v.value)
                for v in self.ins]
        if self.params:
            args.append(params_text(self.params))
        outs = ", ".join(f"{v.name}: {v.aval}" for v in self.outs)
        text = f"{outs} = {self.primitive}({', '.join(args)})"
        if self.context is not None:
            text += f"  # {self.context}"
        if self.grad_off:
            text += "  # no_grad"
        if self.freed and self.out.shape is None:  # what the listing cannot show, and why
            text += "  # freed by backward()"
        return text

    def __repr__(self) -> str:
        return f"<Equation {self}>"


class PartGroups:
    """The one rule that gathers the parts of a decomposition (the ops with ``Op.part``:
    ``eigh``'s values and vectors, ``svd``'s ``U``, ``S`` and ``Vh``, ``qr``'s ``Q`` and
    ``R``) into one equation with several outputs, for a tape read and a trace alike: a
    part joins the group last opened for the same decomposition, the same inputs (by
    identity) and the same params (and the same ``extra``: a trace's ``no_grad`` and
    NumPy context) unless that group holds its part already; otherwise it opens a group.

    Examples
    --------
    >>> from wengert.ops import REGISTRY
    >>> groups = PartGroups()
    >>> values, vectors = REGISTRY["eigh_values"], REGISTRY["eigh_vectors"]
    >>> [groups.join(op, (1,), {"uplo": "L"}, g) for g, op in enumerate([values, vectors,
    ...                                                                  vectors])]
    [0, 0, 2]
    """

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[Any, tuple[Any, set[int]]] = {}

    def join(self, op: Any, inputs: tuple[Any, ...], params: dict[str, Any] | None,
             group: Any, extra: Any = None) -> Any:
        """The group ``op``'s output joins: an open one's ``group``, or this ``group``
        (then opened). ``inputs`` identify the inputs (their ids)."""
        part = op.part
        key = (part[0], inputs, repr(sorted(params.items())) if params else "", extra)
        found = self._open.get(key)
        if found is not None and part[1] not in found[1]:
            found[1].add(part[1])
            return found[0]
        self._open[key] = (group, {part[1]})
        return group


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


_NEW = object.__new__


def tape_var(name: str, shape: tuple[int, ...] | None, dtype: np.dtype | None, index: int,
             value: Any) -> Var:
    """``Var(name, shape, dtype, source="equation", index=index, value=value)`` for an
    output read from a tape, whose shape is a tuple (or ``None``) and dtype a NumPy dtype
    (or ``None``) already: no conversion (tape reading builds one per node)."""
    v = _NEW(Var)
    v.name = name
    v.shape = shape
    v.dtype = dtype
    v.scalar = False
    v.source = "equation"
    v.index = index
    v.leaf = None
    v.value = value
    return v


def tape_equation(op: Any, ins: list[Var | Literal], params: dict[str, Any] | None,
                  out: Var, source: Any, index: int, node: Node) -> Equation:
    """``Equation(op, ins, params, out, source, index=index, nodes=(node,))`` for one node
    read from a tape (one output): no conversion beyond the tuple of ``ins``."""
    eq = _NEW(Equation)
    eq.op = op
    eq.ins = tuple(ins)
    eq.params = dict(params) if params else {}
    eq.outs = (out,)
    eq.source = source
    eq.grad_off = False
    eq.context = None
    eq.index = index
    eq.nodes = (node,)
    eq.parts = None
    return eq
