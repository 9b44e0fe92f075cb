"""Tensors as a kind of traced value: how ops on tensors are computed and recorded.

Applying an op to tensors runs it on their values and, when some input
requires grad (or is tracked by an open recorder such as a
:class:`~wengert.GradientTape`), appends a :class:`~wengert.core.node.Node` to
the tape. Tensors have *levels* (:mod:`wengert.core.levels`): a user's tensors
are at level 0; a functional transform (``wg.grad``, ``wg.vjp``) works at a
level of its own, whose tensors hold the values of the level below (plain
arrays, dual numbers, or the user's tensors). An op meeting tensors of several
levels is recorded at the innermost one; tensors of outer levels are constants
there, and the op is applied to them again at their own level, so a transform's
result stays on an outer tensor's graph (as ``torch.func`` does).

The per-op path here is the project's speed: :meth:`TensorKind.unary` and
:meth:`TensorKind.binary` build, once per op, functions that compute and record
one- and two-input ops on tensors without the general dispatch (the general path,
:meth:`TensorKind.process` then :func:`record`, is the reference they must match:
``tests/reverse/test_recording_paths.py`` compares the nodes they build, field by
field, on every registry sample). They are generated (``_UNARY_SOURCE``,
``_BINARY_SOURCE``) with the node constructors' statements
(``core.node.constructor_body``) and the recording tail inline, so that nodes are
built from one source and the path pays no call to build them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.bind import (
    SCALAR_FALLBACK,
    Kind,
    apply,
    complex_error,
    dtype_of,
    forward,
    is_complex,
    kind_of,
    number_kind,
    object_error,
    register,
)
from wengert.core.generated import generate
from wengert.core.levels import OPEN_LEVELS, escaped_error, trace_escaped_error, trace_level_closed
from wengert.core.modes import GRAD_ENABLED, RECORDERS
from wengert.core.node import (
    CONSTRUCTOR_GLOBALS,
    UNREAD_BYTES,
    constructor_body,
    new_node,
    node1,
    shape_stand_in,
)
from wengert.core.subclasses import REFUSED_TYPES, refused_subclass
from wengert.forward.dual import Dual
from wengert.interop import dispatch as _dispatch
from wengert.ops.elementwise import real as _real_part
from wengert.reverse.inplace import (
    PART_VIEWS,
    assign_result,
    is_view,
    track_view,
    written_by_numpy,
)
from wengert.reverse.tensor import FAST_UFUNCS, Tensor, constant

__all__ = ["TensorKind", "TENSOR", "record", "recorders_tracking", "UNREAD_BYTES",
           "shape_stand_in"]

_ndarray = np.ndarray
_NEW = object.__new__
_recorders = RECORDERS.get
_grad_on = GRAD_ENABLED.get
_OP_ERRORS = (ValueError, TypeError, IndexError, np.linalg.LinAlgError)


def recorders_tracking(args: tuple[Any, ...], recorders: tuple[Any, ...]) -> list[Any]:
    """The open, recording recorders that track (directly or through recorded ops) one
    of the tensors among ``args``."""
    found = []
    for r in recorders:
        if r.recording and any(isinstance(a, Tensor) and r.tracks(a) for a in args):
            found.append(r)
    return found


def _edge(a: Tensor, active: Any) -> Any:
    """Where the cotangent of input ``a`` goes: its node, the leaf itself, or nowhere."""
    if a._rg:
        return a._node if a._node is not None else a
    tracked = False
    for r in active:  # every tape asked: each watches a trainable Variable it reads
        if r.tracks(a):
            tracked = True
    return (a._node if a._node is not None else a) if tracked else None


def _annotated(op: Any, raws: tuple[Any, ...], e: Exception) -> Exception:
    shapes = ", ".join(str(np.shape(r)) for r in raws)
    return type(e)(f"{op.name}: {e} (input shapes: {shapes})")


#: A tensor made for the output ``out`` of the node ``n`` at level ``level`` (the node is
#: its version holder too, see ``core.node``); ``{rg}`` its ``requires_grad``.
_TENSOR_LINES = ("t = _NEW(Tensor)", "t._value = out", "t._node = n", "t._rg = {rg}",
                 "t._version = n", "t._extra = None", "t._level = level", "return t")
#: What a recording path does with a node ``n`` it built (see
#: ``core.node.constructor_body``) for ``out``: the recorders that only look (source
#: lines, kept values) see it, a large output no rule reads is kept as a stand-in, and
#: the output tensor is made.
_TENSOR_TAIL = (
    "if recs:",
    "    for r in recs:",
    "        r.created(n)",
    "if not op.reads_out and type(out) is _ndarray and out.nbytes >= UNREAD_BYTES:",
    "    n.out = shape_stand_in(out)",
    *(line.format(rg="True") for line in _TENSOR_LINES),
)
#: :data:`_TENSOR_TAIL` on the float path: no recorder is open, and a float output is
#: kept as it is.
_FLOAT_TENSOR_TAIL = tuple(line.format(rg="True") for line in _TENSOR_LINES)
_GLOBALS = dict(CONSTRUCTOR_GLOBALS, _NEW=_NEW, Tensor=Tensor)
#: ``_new(out, n, rg, level)``: a tensor produced by the node ``n``.
_new = generate("\n".join(["def _new(out, n, rg, level):",
                            *("    " + line.format(rg="rg") for line in _TENSOR_LINES), ""]),
                "_new", _GLOBALS, __name__)
def record(op: Any, args: tuple[Any, ...], raws: tuple[Any, ...], out: Any,
           params: dict[str, Any] | None, rg: bool, active: Any, level: float) -> Tensor:
    """Append ``out = op(args)`` to the tape at ``level`` and return the output tensor.

    ``args`` holds the tensors of this level (others are ``None``: constants here),
    ``raws`` the values the op ran on, ``active`` the recorders tracking an input.
    """
    if level and level.__class__ is int and level not in OPEN_LEVELS:
        raise escaped_error(level)
    reads = op.reads
    crossed = op.crossed
    parents = [_edge(a, active) if isinstance(a, Tensor) else None for a in args]
    edges = []
    for i, (a, raw) in enumerate(zip(args, raws)):
        holder = None
        # (a tensor of an outer level is a value here: it is checked too; a crossed op's
        # input is read by the other input's rule only, when that input gets a gradient)
        if i in reads and (not crossed or parents[1 - i] is not None):
            holder = a._version if isinstance(a, Tensor) else \
                raw._version if isinstance(raw, Tensor) else None
        edges.append((parents[i], raw, holder, 0 if holder is None else holder.version))
    node = new_node(op, out, params, edges)
    if not op.complex_rules:
        if any(is_complex(raw) for a, raw in zip(args, raws) if a is not None):
            raise complex_error(op)
    elif is_complex(out):
        mark_real_inputs(node)
    for r in active:
        r.add(node)
    for r in _recorders():
        r.created(node)
    if not op.reads_out and type(out) is _ndarray and out.nbytes >= UNREAD_BYTES:
        node.out = shape_stand_in(out)
    return _new(out, node, rg, level)


def _differentiable(op: Any, out: Any) -> Any:
    """Whether a recorded op's output carries a gradient: floating point values do
    (``True``), and complex ones (``"c"``, a true value) when the op's rules hold for
    them (``Op.complex_rules``; otherwise it raises); integers and booleans (a cast, a
    comparison) are constants, as in PyTorch and JAX. A traced value beneath (a dual
    number, an outer level's tensor) goes by its dtype too: an integer cast of an outer
    level's value is a constant at every level."""
    t = type(out)
    if t is float or (t is _ndarray and out.dtype.kind == "f"):
        return True
    if t is Dual:
        p = out.primal
        if type(p) is float or (type(p) is _ndarray and p.dtype.kind == "f"):
            return True
    k = dtype_of(out).kind if t is Dual or kind_of(out) is not None else number_kind(out)
    if k == "c":
        if not op.complex_rules:
            raise complex_error(op)
        return "c"
    if k != "f" and dtype_of(out).kind == "O":
        raise object_error(op)
    return k == "f"


def mark_real_inputs(node: Any) -> None:
    """Note on a node with a complex output which of its differentiated inputs are real:
    the sweep gives them the real part of the cotangent their rule returns (a real
    input gets a real gradient; the imaginary part is the derivative along a direction
    the input cannot move in)."""
    real = tuple(i for i, (p, x) in enumerate(zip(node.parents(), node.inputs()))
                 if p is not None and not is_complex(x)
                 and not isinstance(x, (tuple, list, dict)))  # (a custom function's outputs)
    if real:
        node.extras()["real_inputs"] = (real, _real_part)


#: The per-op function of a one-input op on a tensor (``wnp.sin(x)``, ``np.sin(x)``):
#: ``{build}`` becomes the lines that build the node and its tensor inline (see
#: :func:`_inline_build`), so the path pays no call for them.
_UNARY_SOURCE = """
def _unary_path(op, impl, scalar, reads, beneath, public):
    def fn(x):
        v = x._value
        tv = type(v)
        if tv is float and scalar is not None:
            try:
                out = scalar(v)
            except SCALAR_FALLBACK:
                out = float(impl(v))
            if x._rg and not _recorders() and _grad_on():
                # (the float path: a Python float in, nothing watching, nothing to check)
                level = x._level
                if level and level.__class__ is int and level not in OPEN_LEVELS:
                    raise escaped_error(level)
                {edges}
                {build_float}
        elif tv is _ndarray:
            try:
                out = impl(v)
            except _OP_ERRORS as e:
                raise _annotated(op, (v,), e) from e
        else:  # a traced value beneath (a dual number, an outer tensor)
            h = beneath.get(tv)
            out = h(v) if h is not None else public(v)
        recs = _recorders()
        if recs and (active := recorders_tracking((x,), recs)):
            if _grad_on() and _differentiable(op, out):
                return record(op, (x,), (v,), out, None, x._rg, active, x._level)
            return constant(out, x._level)
        if x._rg and _grad_on():
            if (out.dtype.kind != "f") if tv is _ndarray else (
                    tv is not float and tv is not Dual):
                # (NumPy scalars, outer levels' tensors and graph tracers beneath are
                # checked; a dual number checks its own results, and no one-input op
                # without params turns a real input complex)
                d = _differentiable(op, out)
                if not d:
                    return constant(out, x._level)
                if d is not True:  # complex: the general path marks real inputs
                    return record(op, (x,), (v,), out, None, True, (), x._level)
            level = x._level
            if level and level.__class__ is int and level not in OPEN_LEVELS:
                raise escaped_error(level)
            params = None
            {edges}
            {build}
        return constant(out, x._level)

    return fn
"""
#: The per-op function of a two-input op on tensors and numbers (``x * y``,
#: ``np.add(x, 1.0)``), built as :data:`_UNARY_SOURCE`.
_BINARY_SOURCE = """
def _binary_path(op, impl, scalar, reads0, reads1, crossed, beneath, public):
    def fn(x, y):
        tx = type(x)
        ty = type(y)
        if tx is Tensor:
            vx = x._value
            rx = x._rg
            level = x._level
            if ty is Tensor:
                if y._level != level:
                    return apply(op, x, y)  # two levels: the general path
                vy = y._value
                ry = y._rg
            elif ty is float or ty is int:
                if rx and type(vx) is float and scalar is not None:
                    # (a tensor on a Python float and a number: the float path, shortest)
                    try:
                        out = scalar(vx, y)
                    except SCALAR_FALLBACK:
                        out = float(impl(vx, y))
                    if type(out) is not float or _recorders() or not _grad_on():
                        return _recorded(op, x, None, vx, y, out, level)
                    if level and level.__class__ is int and level not in OPEN_LEVELS:
                        raise escaped_error(level)
                    if reads0 and not crossed:
                        holder0 = x._version
                        seen0 = holder0.version
                    else:
                        holder0 = None
                        seen0 = 0
                    parent0 = x._node or x
                    value0 = vx
                    parent1 = None
                    value1 = y
                    holder1 = None
                    seen1 = 0
                    {build_float}
                vy = y
                ry = False
            else:
                return apply(op, x, y)
        elif ty is Tensor and (tx is float or tx is int):
            vx = x
            rx = False
            vy = y._value
            ry = y._rg
            level = y._level
        else:
            return apply(op, x, y)
        tvx = type(vx)
        tvy = type(vy)
        if tvx is _ndarray and (tvy is _ndarray or tvy is float or tvy is int):
            try:
                out = impl(vx, vy)
            except _OP_ERRORS as e:
                raise _annotated(op, (vx, vy), e) from e
        elif scalar is not None and (
            (tvx is float and (tvy is float or tvy is int)) or (tvy is float and tvx is int)
        ):
            try:
                out = scalar(vx, vy)
            except SCALAR_FALLBACK:
                out = float(impl(vx, vy))
            if (rx or ry) and type(out) is float and not _recorders() and _grad_on():
                # (the float path: Python numbers in, a float out, nothing watching)
                if level and level.__class__ is int and level not in OPEN_LEVELS:
                    raise escaped_error(level)
                {edges}
                {build_float}
        else:  # traced values beneath, or other plain values
            h = beneath.get(tvx) or beneath.get(tvy)
            out = h(vx, vy) if h is not None else public(vx, vy)
        recs = _recorders()
        if recs and (active := recorders_tracking((x, y), recs)):
            if _grad_on() and _differentiable(op, out):
                return record(op, (x if tx is Tensor else None, y if ty is Tensor else None),
                              (vx, vy), out, None, rx or ry, active, level)
            return constant(out, level)
        if (rx or ry) and _grad_on():
            tout = type(out)
            if tout is not float and not (
                out.dtype.kind == "f" if tout is _ndarray
                else tout is Dual and (  # reverse over forward: its primal decides
                    type(p := out.primal) is float
                    or type(p) is _ndarray and p.dtype.kind == "f")
            ):
                d = _differentiable(op, out)
                if not d:
                    return constant(out, level)
                if d is not True:  # complex: the general path marks real inputs
                    return record(op, (x if tx is Tensor else None,
                                       y if ty is Tensor else None),
                                  (vx, vy), out, None, True, (), level)
            if level and level.__class__ is int and level not in OPEN_LEVELS:
                raise escaped_error(level)
            params = None
            {edges}
            {build}
        return constant(out, level)

    return fn
"""


def _recorded(op: Any, a: Tensor | None, b: Tensor | None, va: Any, vb: Any, out: Any,
              level: float) -> Tensor:
    """How a two-input op ends whose output the float path computed but does not record
    itself (a recorder is open, grad mode is off, or the output is no float): as the
    general path ends. ``a``, ``b``: the op's tensors (``None`` for a number), ``va``,
    ``vb`` the values it ran on."""
    args = (a, b)
    rg = (a is not None and a._rg) or (b is not None and b._rg)
    recs = _recorders()
    if recs and (active := recorders_tracking(args, recs)):
        if _grad_on() and _differentiable(op, out):
            return record(op, args, (va, vb), out, None, rg, active, level)
        return constant(out, level)
    if rg and _grad_on() and _differentiable(op, out):
        return record(op, args, (va, vb), out, None, True, (), level)
    return constant(out, level)


#: What an input of a one-input op on a tensor ``x`` (value ``v``) gives its node: where
#: its cotangent goes, the value, and the version holder when the rule reads it.
_UNARY_EDGES = (
    "if reads:",
    "    holder0 = x._version",
    "    seen0 = holder0.version",
    "else:  # (a large array is kept as a stand-in)",
    "    holder0 = None",
    "    seen0 = 0",
    "parent0 = x._node or x",
    "value0 = v",
)
#: The same for the inputs ``x``, ``y`` (values ``vx``, ``vy``; a tensor requires grad
#: when ``rx``, ``ry``) of a two-input op: a crossed op's input is read by the other
#: input's rule only.
_BINARY_EDGES = (
    "if reads0 and tx is Tensor and (ry or not crossed):",
    "    holder0 = x._version",
    "    seen0 = holder0.version",
    "else:",
    "    holder0 = None",
    "    seen0 = 0",
    "if reads1 and ty is Tensor and (rx or not crossed):",
    "    holder1 = y._version",
    "    seen1 = holder1.version",
    "else:",
    "    holder1 = None",
    "    seen1 = 0",
    "parent0 = (x._node or x) if rx else None",
    "value0 = vx",
    "parent1 = (y._node or y) if ry else None",
    "value1 = vy",
)


def _inline_build(source: str, nin: int, name: str) -> Any:
    """Generate ``name`` from ``source``, its ``{build}`` lines replaced by the node
    constructor's statements (``core.node.constructor_body``) and :data:`_TENSOR_TAIL`,
    its ``{build_float}`` lines by those of the float path (Python numbers in and out,
    no recorder open: see :data:`_FLOAT_TENSOR_TAIL`), its ``{edges}`` lines by the
    inputs' edges (:data:`_UNARY_EDGES`, :data:`_BINARY_EDGES`)."""
    for mark, body in (("{build_float}", constructor_body(nin, _FLOAT_TENSOR_TAIL, floats=True)),
                       ("{build}", constructor_body(nin, _TENSOR_TAIL)),
                       ("{edges}", _UNARY_EDGES if nin == 1 else _BINARY_EDGES)):
        parts = source.split(mark)
        for k in range(1, len(parts)):
            head = parts[k - 1]
            indent = head[head.rindex("\n") + 1:]
            parts[k - 1] = head + ("\n" + indent).join(body)
        source = "".join(parts)
    return generate(source, name, _PATH_GLOBALS, __name__)


_PATH_GLOBALS = dict(
    _GLOBALS, SCALAR_FALLBACK=SCALAR_FALLBACK, _OP_ERRORS=_OP_ERRORS, _annotated=_annotated,
    _recorders=_recorders, recorders_tracking=recorders_tracking, _grad_on=_grad_on,
    _differentiable=_differentiable, record=record, constant=constant, Dual=Dual,
    _recorded=_recorded,
    OPEN_LEVELS=OPEN_LEVELS, escaped_error=escaped_error, apply=apply, Tensor=Tensor,
)
_unary_path = _inline_build(_UNARY_SOURCE, 1, "_unary_path")
_binary_path = _inline_build(_BINARY_SOURCE, 2, "_binary_path")



class TensorKind(Kind):
    """Tensors as a kind of traced value (see :mod:`wengert.core.bind`)."""

    name = "tensor"
    priority = 0
    value_attribute = "_value"

    def level(self, x: Tensor) -> float:
        return x._level

    def primal(self, x: Tensor) -> Any:
        return x._value

    def connected(self, x: Tensor) -> bool:
        if x._rg or x._node is not None:
            return True
        kind = kind_of(x._value)
        if kind is not None and kind.connected(x._value):
            return True
        recs = _recorders()  # a GradientTape recording the ops on it (a watched tensor)
        return bool(recs) and bool(recorders_tracking((x,), recs))

    def constant(self, value: Any, level: float | None = None, example: Any = None) -> Tensor:
        return constant(value, level)

    def write(self, target: Tensor, result: Any, what: str) -> Tensor:
        return assign_result(target, result, what)

    def modified(self, x: Tensor) -> None:
        x._version.version += 1
        written_by_numpy(x)  # (a part of a complex tensor: passed on to it)

    def process(self, op: Any, args: tuple[Any, ...], params: dict[str, Any] | None,
                level: float) -> Any:
        """Apply ``op`` at ``level``: unbox this level's tensors, apply the op to the
        values (tensors of outer levels are constants here, and record at their own
        level), and record the result."""
        if len(args) == 1 and not _recorders():
            return self._process_one(op, args[0], params)
        if level.__class__ is float and trace_level_closed(level):
            raise trace_escaped_error()
        raws = []
        own: list[Any] = []
        rg = False
        for a in args:
            if isinstance(a, Tensor) and a._level == level:
                raws.append(a._value)
                own.append(a)
                if a._rg:
                    rg = True
            else:
                ta = type(a)
                if ta is not _ndarray and ta is not float and isinstance(a, REFUSED_TYPES):
                    raise refused_subclass(a, f"{op.name} of a tensor and this operand")
                raws.append(a)
                own.append(None)
        raws_t = tuple(raws)
        out = apply(op, *raws_t, **params) if params else apply(op, *raws_t)
        own_t = tuple(own)
        recs = _recorders()
        active = recorders_tracking(own_t, recs) if recs else ()
        if _grad_on() and (rg or active) and _differentiable(op, out):
            result = record(op, own_t, raws_t, out, params, rg, active, level)
        else:
            result = constant(out, level)
        if (op.view or op in PART_VIEWS) and isinstance(args[0], Tensor) \
                and is_view(op, out, raws_t[0]):
            track_view(args[0], result, op, params)
        return result

    def _process_one(self, op: Any, x: Tensor, params: dict[str, Any] | None) -> Any:
        """:meth:`process` for one tensor and no open recorder (reductions, reshapes,
        indexing: most ops with params)."""
        v = x._value
        tv = type(v)
        if tv is _ndarray or tv is float:
            out = forward(op, (v,), params)
        else:  # a traced value beneath
            out = apply(op, v, **params) if params else apply(op, v)
        level = x._level
        if x._rg and _grad_on() and (d := _differentiable(op, out)):
            if not op.complex_rules and is_complex(v):
                raise complex_error(op)  # a real result of a complex input (var, svd)
            if level and level.__class__ is int and level not in OPEN_LEVELS:
                raise escaped_error(level)
            h = x._version if 0 in op.reads else None
            node = node1(op, out, params, x._node or x, v, h, 0 if h is None else h.version)
            if not op.reads_out and type(out) is _ndarray and out.nbytes >= UNREAD_BYTES:
                node.out = shape_stand_in(out)
            if d is not True and not is_complex(v):
                mark_real_inputs(node)
            result = _new(out, node, True, level)
        else:
            result = constant(out, level)
        if (op.view or op in PART_VIEWS) and is_view(op, out, x._value):
            # (the values beneath may be traced: a dual number, an outer level's tensor)
            track_view(x, result, op, params)
        return result

    def unary(self, op: Any, cls: type, public: Any) -> Any:
        if cls is not Tensor:
            return None  # subclasses (Variable) take the general path
        # (``public.handlers``: the kinds' functions for the values beneath, by type)
        return _unary_path(op, op.impl, op.scalar_impl, bool(op.reads), public.handlers,
                           public)

    def binary(self, op: Any, cls: type, public: Any) -> Any:
        if cls is not Tensor:
            return None
        return _binary_path(op, op.impl, op.scalar_impl, 0 in op.reads, 1 in op.reads,
                            op.crossed, public.handlers, public)


#: The tensor kind (registered for :class:`~wengert.Tensor` and its subclasses).
TENSOR = TensorKind()
register(Tensor, TENSOR)
# Tensors' operators and np.* ufuncs call the tensor kind's functions directly.
_dispatch.specialise(Tensor, TENSOR, FAST_UFUNCS)
