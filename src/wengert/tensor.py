"""Tensors (the PyTorch dialect) and the per-op recording path.

A :class:`Tensor` wraps a NumPy value (an ``ndarray``, a NumPy scalar or a
Python ``float`` for the fast scalar path). Applying a primitive to tensors
runs its NumPy forward and, when some input requires grad (or is watched by an
open :class:`~wengert.GradientTape`), appends a :class:`~wengert.core.node.Node`
to the tape.

=================  ==============  ===========  ====================
requires_grad      created by      ``is_leaf``  ``.grad`` populated
=================  ==============  ===========  ====================
False              user            True         no
False              an op           True         no
True               user            True         yes
True               an op           False        only after retain_grad()
=================  ==============  ===========  ====================
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

from .anomaly import ANOMALY
from .arraylike import ArrayMethods
from .core.levels import DUAL_TAG
from .core.modes import GRAD_ENABLED, TAPES
from .core.node import GradFn, node_extra, node_name
from .core.node import next_seq as _next_seq

__all__ = ["Tensor", "tensor", "apply", "apply1", "apply2", "stop_gradient", "value_of"]

_SCALAR_FALLBACK = (ValueError, OverflowError, ZeroDivisionError)
_ndarray = np.ndarray
_FLOAT64 = np.dtype(np.float64)
_float64 = np.float64
_NEW = object.__new__
_tapes = TAPES.get
_grad_on = GRAD_ENABLED.get
_anomaly = ANOMALY.get
_dual_tag = DUAL_TAG.get


def value_of(x: Any) -> Any:
    """The raw NumPy value of a tensor; anything else is returned as is."""
    return x._value if isinstance(x, Tensor) else x


def _is_float_dtype(value: Any) -> bool:
    if type(value) is float:
        return True
    dt = getattr(value, "dtype", None)
    return dt is not None and (
        np.issubdtype(dt, np.floating) or np.issubdtype(dt, np.complexfloating)
    )


def _tracking_tapes(args: tuple[Any, ...], tapes: tuple[Any, ...]) -> list[Any]:
    """The open tapes that watch (directly or through recorded ops) one of ``args``."""
    found = []
    for tape in tapes:
        if tape._recording and any(isinstance(a, Tensor) and tape._tracks(a) for a in args):
            found.append(tape)
    return found


def _edge(a: Any, tapes: Any) -> Any:
    """Where the cotangent of input ``a`` goes: its node, the leaf itself, or nowhere."""
    if not isinstance(a, Tensor):
        return None
    if a._rg:
        return a._node if a._node is not None else a
    for tape in tapes:
        if tape._tracks(a):
            return a._node if a._node is not None else a
    return None


#: Arrays at least this large that no rule reads are not kept by the tape (see
#: ``Op.reads``): the node holds a stand-in with their shape and dtype.
UNREAD_BYTES = 1 << 15


def shape_of(v: Any) -> tuple[int, ...]:
    """The shape of a value, through tensors and dual numbers, without NumPy's dispatch."""
    while True:
        t = type(v)
        if t is _ndarray:
            return v.shape
        if t is float or t is int or t is _float64:
            return ()
        if t is Tensor:
            v = v._value
        elif t is Dual:
            v = v.primal
        else:
            return np.shape(v)


def shape_stand_in(a: np.ndarray) -> np.ndarray:
    """A read-only, zero-stride array with ``a``'s shape and dtype (NaN, or 0)."""
    fill = np.nan if a.dtype.kind in "fc" else 0
    return np.broadcast_to(np.array(fill, dtype=a.dtype), a.shape)


def _record(
    op: Any,
    args: tuple[Any, ...],
    raws: tuple[Any, ...],
    out: Any,
    params: dict[str, Any] | None,
    rg: bool,
    tapes: Any,
) -> Tensor:
    """Append ``out = op(args)`` to the tape and return the output tensor.

    The new node is also the output's version holder (see ``core.node``).
    """
    # VERSION, OP, OUT, PARAMS, SEQ, EXTRA, NIN, then per input: parent, value,
    # version holder and version to check when a rule reads it (see core.node)
    node = [0, op, out, params, _next_seq(), None, len(args)]
    reads = op.reads
    for i, (a, raw) in enumerate(zip(args, raws)):
        read = i in reads
        if not read and type(raw) is np.ndarray and raw.nbytes >= UNREAD_BYTES:
            raw = shape_stand_in(raw)
        if isinstance(a, Tensor):
            c = a._version if read else None
            node += (_edge(a, tapes), raw, c, 0 if c is None else c[0])
        else:
            node += (None, raw, None, 0)
    for tape in tapes:
        tape._add(node)
    anomaly = _anomaly()
    if anomaly is not None:  # wg.detect_anomaly(): remember the creating stack
        anomaly.record(node)
    if not op.reads_out and type(out) is np.ndarray and out.nbytes >= UNREAD_BYTES:
        node[2] = shape_stand_in(out)  # OUT
    t = _NEW(Tensor)
    t._value = out
    t._node = node
    t._rg = rg
    t._version = node
    return t


def _const(out: Any) -> Tensor:
    """A tensor that records nothing (no grad, no node)."""
    t = _NEW(Tensor)
    t._value = out
    t._node = None
    t._rg = False
    t._version = [0]
    return t


_OP_ERRORS = (ValueError, TypeError, IndexError, np.linalg.LinAlgError)


def _op_error(op: Any, raws: tuple[Any, ...], e: Exception) -> Exception:
    """The NumPy error, prefixed with the op's name and the input shapes."""
    shapes = ", ".join(str(np.shape(r)) for r in raws)
    return type(e)(f"{op.name}: {e} (input shapes: {shapes})")


def _forward(op: Any, raws: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    try:
        return op.impl(*raws, **params) if params else op.impl(*raws)
    except _OP_ERRORS as e:
        raise _op_error(op, raws, e) from e


def apply(op: Any, *args: Any, **params: Any) -> Any:
    """Apply primitive ``op`` to ``args`` (tensors or NumPy values).

    With no tensor among ``args`` the NumPy forward runs alone and its raw
    result is returned, so rules written with wengert functions run at NumPy
    speed in a plain backward pass. With tensors, the result is a tensor and
    the op is recorded when needed.
    """
    raws = []
    boxed = False
    rg = False
    duals = False  # a dual number among the arguments
    boxed_duals = False  # a tensor over a dual number among them
    for a in args:
        if isinstance(a, Tensor):
            boxed = True
            v = a._value
            raws.append(v)
            if a._rg:
                rg = True
            if type(v) is Dual:
                boxed_duals = True
        else:
            if type(a) is Dual:
                duals = True
            raws.append(a)
    if duals and (not boxed or dual_outer(args)):
        return apply_dual(op, args, params)
    raws_t = tuple(raws)
    if boxed_duals or (boxed and duals):
        # Tensors over duals: a reverse level inside a forward one. A lone
        # tensor over a dual holds the innermost level: nothing to separate.
        if len(raws_t) > 1:
            args, raws_t, rg = _lift_outer(args, raws_t)
        out = apply_dual(op, raws_t, params)
    else:
        out = _forward(op, raws_t, params)
    if not boxed:
        return out
    tapes = _tapes()
    active = _tracking_tapes(args, tapes) if tapes else ()
    if _grad_on() and (rg or active):
        result = _record(op, args, raws_t, out, params or None, rg, active)
    else:
        result = _const(out)
    if op.view and isinstance(out, np.ndarray) and out.base is not None:
        share_version(args[0], result)
    return result


def _lift_outer(args: tuple[Any, ...], raws: tuple[Any, ...]) -> tuple[Any, Any, bool]:
    """Separate the tensors of outer reverse levels from this level's (forward over reverse).

    The innermost dual tag among ``raws`` is that of a forward transform with
    a reverse level inside it, whose tensors all hold duals of that tag (the
    reverse transform lifted its inputs, see ``transforms._leaf_for``). A
    differentiable tensor holding anything else belongs to a reverse level
    outside the forward one (unless a newer gradient tape owns it): at this
    level it is a constant, so it is not a parent of the new node, and it is
    passed whole to the dual computation, which records it at its own level.
    Returns the args (lifted ones replaced by ``None``), the raws, and
    whether a remaining tensor requires grad.
    """
    order = 0
    for r in raws:
        if type(r) is Dual and r.tag.order > order:
            order = r.tag.order
    if order == 0:  # only duals the user made (wg.Dual): no transform levels to separate
        return args, raws, any(isinstance(a, Tensor) and a._rg for a in args)
    tapes = None
    new_args = None
    new_raws = None
    rg = False
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            continue
        v = a._value
        if (type(v) is Dual and v.tag.order >= order) or not (a._rg or a._node is not None):
            rg = rg or a._rg
            continue
        if tapes is None:
            tapes = [t for t in _tapes() if getattr(t, "_order", 0) > order]
        if any(t._owns(a) for t in tapes):
            rg = rg or a._rg
            continue
        if new_args is None:
            new_args, new_raws = list(args), list(raws)
        new_args[i] = None
        new_raws[i] = a
    if new_args is None:
        return args, raws, rg
    return tuple(new_args), tuple(new_raws), rg


def share_version(base: Any, view: Tensor) -> None:
    """Make ``view`` share ``base``'s version holder (they share memory)."""
    if isinstance(base, Tensor):
        view._version = base._version
        base._extras()["shares_memory"] = True
        view._extras()["shares_memory"] = True


def unary_function(op: Any) -> Any:
    """The fast public function for a one-input op without parameters.

    The whole per-op path (forward, recording) is inlined here, once per op,
    with the record's fields held in closure cells: this is the hot path of
    scalar code such as ``wnp.sin(x)`` and of the backward rules.
    """
    impl = op.impl
    scalar = op.scalar_impl
    reads = bool(op.reads)
    reads_out = op.reads_out
    deriv = op.scalar_deriv[0] if op.scalar_deriv and scalar is not None else None

    def fn(x: Any) -> Any:
        tx = type(x)
        if tx is Tensor:
            v = x._value
            tv = type(v)
            if tv is float and scalar is not None:
                try:
                    out = scalar(v)
                except _SCALAR_FALLBACK:
                    out = float(impl(v))
            elif tv is Dual:
                out = apply_dual(op, (v,), None)
            else:
                try:
                    out = impl(v)
                except _OP_ERRORS as e:
                    raise _op_error(op, (v,), e) from e
            tapes = _tapes()
            if tapes:
                active = _tracking_tapes((x,), tapes)
                if (x._rg or active) and _grad_on():
                    return _record(op, (x,), (v,), out, None, x._rg, active)
            elif x._rg and _grad_on():
                # VERSION, OP, OUT, PARAMS, SEQ, EXTRA, NIN, parent, input, holder, version
                if reads:
                    c = x._version
                    node = [0, op, out, None, _next_seq(), None, 1, x._node or x, v, c, c[0]]
                else:
                    if type(v) is _ndarray and v.nbytes >= UNREAD_BYTES:
                        v = shape_stand_in(v)  # only its shape is needed
                    node = [0, op, out, None, _next_seq(), None, 1, x._node or x, v, None, 0]
                if not reads_out and type(out) is _ndarray and out.nbytes >= UNREAD_BYTES:
                    node[2] = shape_stand_in(out)  # OUT
                t = _NEW(Tensor)
                t._value = out
                t._node = node
                t._rg = True
                t._version = node
                return t
            return _const(out)
        if tx is _ndarray:  # a raw value (the rules of a backward pass)
            return impl(x)
        if tx is Dual:
            p = x.primal
            t = x.tangent
            tag = x.tag
            if deriv is not None and type(p) is float and type(t) is float and tag.active:
                # Scalar dual fast path: f(x) and f'(x) straight from the record.
                try:
                    ans = scalar(p)
                    d = _NEW(Dual)
                    d.tangent = t * deriv(ans, p)
                    d.primal = ans
                    d.tag = tag
                    return d
                except _SCALAR_FALLBACK:
                    pass
            return apply_dual(op, (x,), None)
        if isinstance(x, Tensor):
            return apply(op, x)
        if scalar is not None and tx is float:
            try:
                return scalar(x)
            except _SCALAR_FALLBACK:
                return float(impl(x))
        return impl(x)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}``, differentiable ({op.formula})."
    return fn


def binary_function(op: Any, dual_kind: int | None = None) -> Any:
    """The fast public function for a two-input op without parameters.

    As :func:`unary_function`; Python ``float``/``int`` operands take the
    scalar path. ``dual_kind`` (``add``, ``subtract``, ``multiply``): the
    kind of :func:`wengert.dual._arith` that computes the op on array dual
    numbers inline (a tape inside ``wg.jvp``, as in ``wg.hvp``).
    """
    impl = op.impl
    scalar = op.scalar_impl
    reads0 = 0 in op.reads
    reads1 = 1 in op.reads
    reads_out = op.reads_out
    dx, dy = op.scalar_deriv if op.scalar_deriv and scalar is not None else (None, None)

    def fn(x: Any, y: Any) -> Any:
        tx = type(x)
        ty = type(y)
        if tx is Tensor:
            vx = x._value
            rx = x._rg
            if ty is Tensor:
                vy = y._value
                ry = y._rg
            elif ty is float or ty is int:
                vy = y
                ry = False
            else:
                return apply(op, x, y)
        elif ty is Tensor and (tx is float or tx is int):
            vx = x
            rx = False
            vy = y._value
            ry = y._rg
        elif tx is _ndarray and (ty is _ndarray or ty is float):
            return impl(x, y)  # raw values (the rules of a backward pass)
        elif tx is Dual or ty is Dual:
            # Scalar dual fast path: f(x, y) and its partials straight from the record.
            if dx is not None:
                if tx is Dual:
                    px, tgx, tag = x.primal, x.tangent, x.tag
                    ok = type(px) is float and type(tgx) is float
                else:
                    px, tgx, ok = x, None, tx is float or tx is int
                if ty is Dual:
                    py, tgy = y.primal, y.tangent
                    ok = ok and type(py) is float and type(tgy) is float
                    if tx is Dual and y.tag is not tag:
                        ok = False
                    tag = y.tag
                else:
                    py, tgy = y, None
                    ok = ok and (ty is float or ty is int)
                if ok and tag.active:
                    try:
                        ans = scalar(px, py)
                        tangent = tgx * dx(ans, px, py) if tgx is not None else 0.0
                        if tgy is not None:
                            tangent += tgy * dy(ans, px, py)
                        d = _NEW(Dual)
                        d.primal = ans
                        d.tangent = tangent
                        d.tag = tag
                        return d
                    except _SCALAR_FALLBACK:
                        pass
            return apply(op, x, y)
        elif isinstance(x, Tensor) or isinstance(y, Tensor):
            return apply(op, x, y)
        else:
            if scalar is not None and tx is float and ty is float:
                try:
                    return scalar(x, y)
                except _SCALAR_FALLBACK:
                    return float(impl(x, y))
            return impl(x, y)
        # A tensor and a tensor or a number: vx, vy are the values.
        tvx = type(vx)
        tvy = type(vy)
        if tvx is _ndarray and tvy is not Dual:  # arrays first: one test
            try:
                out = impl(vx, vy)
            except _OP_ERRORS as e:
                raise _op_error(op, (vx, vy), e) from e
        elif scalar is not None and (
            (tvx is float and (tvy is float or tvy is int)) or (tvy is float and tvx is int)
        ):
            try:
                out = scalar(vx, vy)
            except _SCALAR_FALLBACK:
                out = float(impl(vx, vy))
        elif tvx is Dual or tvy is Dual:
            # Duals of two levels, or a dual and a tensor's plain value: the levels may
            # differ (see _lift_outer), so take the general path.
            mixed = vx.tag is not vy.tag if tvx is tvy else (ty if tvx is Dual else tx) is Tensor
            if mixed:
                return apply(op, x, y)
            out = None if dual_kind is None else _arith(dual_kind, vx, vy)
            if out is None:
                out = apply_dual(op, (vx, vy), None)
        else:
            try:
                out = impl(vx, vy)
            except _OP_ERRORS as e:
                raise _op_error(op, (vx, vy), e) from e
        tapes = _tapes()
        if tapes:
            active = _tracking_tapes((x, y), tapes)
            if (rx or ry or active) and _grad_on():
                return _record(op, (x, y), (vx, vy), out, None, rx or ry, active)
        elif (rx or ry) and _grad_on():
            hx = x._version if reads0 and tx is Tensor else None
            hy = y._version if reads1 and ty is Tensor else None
            # Large arrays no rule reads: the node keeps their shape only.
            if not reads0 and type(vx) is _ndarray and vx.nbytes >= UNREAD_BYTES:
                vx = shape_stand_in(vx)
            if not reads1 and type(vy) is _ndarray and vy.nbytes >= UNREAD_BYTES:
                vy = shape_stand_in(vy)
            # VERSION, OP, OUT, PARAMS, SEQ, EXTRA, NIN, then per input: parent,
            # value, version holder and version (checked when a rule reads it)
            node = [
                0, op, out, None, _next_seq(), None, 2,
                (x._node or x) if rx else None, vx, hx, 0 if hx is None else hx[0],
                (y._node or y) if ry else None, vy, hy, 0 if hy is None else hy[0],
            ]  # fmt: skip
            if not reads_out and type(out) is _ndarray and out.nbytes >= UNREAD_BYTES:
                node[2] = shape_stand_in(out)  # OUT
            t = _NEW(Tensor)
            t._value = out
            t._node = node
            t._rg = True
            t._version = node
            return t
        return _const(out)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}`` with broadcasting, differentiable ({op.formula})."
    return fn


_FAST: dict[int, Any] = {}


def apply1(op: Any, x: Any) -> Any:
    """Apply a one-input, parameter-free op (through its fast function)."""
    fn = _FAST.get(id(op))
    if fn is None:
        fn = _FAST[id(op)] = unary_function(op)
    return fn(x)


def apply2(op: Any, x: Any, y: Any) -> Any:
    """Apply a two-input, parameter-free op (through its fast function)."""
    fn = _FAST.get(id(op))
    if fn is None:
        fn = _FAST[id(op)] = binary_function(op)
    return fn(x, y)


def _as_value(data: Any, dtype: Any = None) -> Any:
    if isinstance(data, Tensor):
        data = data._value
    if type(data) is Dual and dtype is None:
        return data  # a tensor over a dual number (a tape inside wg.jvp); duals are immutable
    if dtype is None and type(data) is float:
        return data
    if dtype is None and isinstance(data, np.float64) and np.ndim(data) == 0:
        return float(data)
    arr = np.array(data, dtype=dtype, copy=True)
    if arr.dtype == object:
        raise TypeError(
            f"wengert tensors hold numeric data; got an object array from {type(data).__name__}. "
            "Convert it to numbers first (np.asarray(data, dtype=float))."
        )
    if arr.dtype.kind in "USV":
        raise TypeError(f"wengert tensors hold numeric data, not {arr.dtype} strings.")
    return arr


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """Create a leaf tensor holding a copy of ``data``.

    Parameters
    ----------
    data : array_like
        Numbers, nested lists, a NumPy array or another tensor (copied).
    requires_grad : bool
        Record operations on this tensor so ``backward()`` fills ``.grad``.
        Only floating point tensors can require gradients.
    dtype : numpy dtype, optional
        Convert to this dtype.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    array([2., 4.])
    """
    t = Tensor.__new__(Tensor)
    t._value = _as_value(data, dtype)
    t._node = None
    t._rg = False
    t._version = [0]
    t._extra = None
    if requires_grad:
        t.requires_grad_(True)
    return t


def stop_gradient(x: Any) -> Any:
    """Return ``x`` as a constant: no gradient flows through it.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> y = x * wg.stop_gradient(x)
    >>> y.backward()
    >>> float(x.grad)
    3.0
    """
    if isinstance(x, Tensor):
        return x.detach()
    return x


class Tensor(ArrayMethods):
    """An array that records the operations applied to it.

    Create tensors with :func:`wengert.tensor`; see the module docstring for
    the leaf table. Arithmetic operators, comparisons, indexing and plain
    ``np.*`` functions all work and are differentiable.
    """

    __slots__ = ("_value", "_node", "_rg", "_version", "_extra", "__weakref__")
    _value: Any
    _node: list[Any] | None
    _rg: bool
    _version: list[Any]
    _extra: dict[str, Any] | None

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self._value = _as_value(data, dtype)
        self._node = None
        self._rg = False
        self._version = [0]
        self._extra = None
        if requires_grad:
            self.requires_grad_(True)

    # -- leaf semantics -------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for ``backward()``."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf; returns the tensor."""
        if self._node is not None and self._rg:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not _is_float_dtype(self._value):
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (this one is "
                f"{self.dtype}); create it with dtype=float, e.g. wg.tensor(data, dtype=float, "
                "requires_grad=True)."
            )
        if requires_grad and not self._rg:
            tag = _dual_tag()
            if tag is not None and tag.active:
                # A leaf made inside wg.jvp belongs to a reverse level inside it: it holds
                # a dual of that level (zero tangent), as the reverse transforms' leaves do.
                v = self._value
                if not (type(v) is Dual and v.tag.order >= tag.order):
                    zero = 0.0 if type(v) is float else np.zeros(np.shape(v), np.result_type(v))
                    self._value = Dual(v, zero, tag)
        self._rg = bool(requires_grad)
        if not requires_grad:
            self._node = None
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors the user created and for all that do not require grad."""
        return not self._rg or self._node is None

    @property
    def grad_fn(self) -> GradFn | None:
        """The node that produced this tensor (``None`` for leaves)."""
        return GradFn(self._node) if self._rg and self._node is not None else None

    @property
    def grad(self) -> Any:
        """The accumulated gradient (a NumPy array) of a leaf, or ``None``.

        Reading it on a non-leaf warns: such gradients are not kept unless
        :meth:`retain_grad` was called before ``backward()``.
        """
        extra = getattr(self, "_extra", None)
        if extra is not None and "grad" in extra:
            return extra["grad"]
        if self._rg and self._node is not None and not (extra and extra.get("retains")):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during backward(). If you indeed want the "
                ".grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor before calling backward(). If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.",
                UserWarning,
                stacklevel=2,
            )
        return None

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            extra = getattr(self, "_extra", None)
            if extra is not None:
                extra.pop("grad", None)
            return
        value = value._value if isinstance(value, Tensor) and not value._rg else value
        if np.shape(value) != self.shape:
            raise RuntimeError(
                f"assigned grad has shape {np.shape(value)} but the tensor has shape {self.shape}"
            )
        self._extras()["grad"] = value

    def _extras(self) -> dict[str, Any]:
        extra = getattr(self, "_extra", None)
        if extra is None:
            extra = self._extra = {}
        return extra

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` during ``backward()``."""
        if not self._rg:
            raise RuntimeError(
                "can't retain_grad on Tensor that has requires_grad=False; create it from a "
                "tensor with requires_grad=True."
            )
        if self._node is None:
            return
        node_extra(self._node)["retain"] = weakref.ref(self)
        self._extras()["retains"] = True

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed.

        The hook may return a replacement gradient. Returns a handle whose
        ``remove()`` unregisters it.
        """
        if not self._rg:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient; set "
                "requires_grad=True on it (or on the leaves it is computed from) first."
            )
        if self._node is None:
            hooks = self._extras().setdefault("hooks", [])
        else:
            hooks = node_extra(self._node).setdefault("hooks", [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def detach(self) -> Tensor:
        """A new tensor sharing this value, cut from the graph (no gradient)."""
        t = _const(self._value)
        share_version(self, t)
        return t

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves.

        Parameters
        ----------
        gradient : array_like, optional
            The output cotangent; needed unless this tensor has one element.
        retain_graph : bool, optional
            Keep the saved values so ``backward()`` can run again; defaults to
            ``create_graph``.
        create_graph : bool
            Record the backward pass, so the gradients can be differentiated.
        inputs : sequence of tensors, optional
            Accumulate only into these leaves.
        """
        from .backward import tensor_backward

        tensor_backward(
            [self], [gradient], retain_graph=retain_graph, create_graph=create_graph, inputs=inputs
        )

    # -- data access ----------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (shares memory where possible)."""
        v = self._value
        return v if isinstance(v, np.ndarray) else np.asarray(v)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        v = self._value
        if type(v) is float:
            return v
        if np.size(v) != 1:
            raise ValueError(
                f"a Tensor with {np.size(v)} elements cannot be converted to Scalar; "
                "index it first or call .sum()"
            )
        return np.asarray(v).item()

    def tolist(self) -> Any:
        """The value as nested Python lists."""
        return np.asarray(self._value).tolist()

    @property
    def data(self) -> Tensor:
        """A detached view of the value (as PyTorch's ``.data``)."""
        return self.detach()

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self._value)

    @property
    def dtype(self) -> np.dtype:
        v = self._value
        t = type(v)
        if t is _ndarray:
            return v.dtype
        if t is float:
            return _FLOAT64
        dt = getattr(v, "dtype", None)
        return dt if isinstance(dt, np.dtype) else np.asarray(v).dtype

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        v = self._value
        if np.ndim(v) == 0 and np.asarray(v).dtype.kind in "iu":
            return int(v)
        raise TypeError("only integer scalar tensors can be converted to a scalar index")

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of a tensor with more than one element is ambiguous. "
                "Use .any() or .all()"
            )
        return bool(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._rg or self._node is not None:
            raise TypeError(
                "Can't convert a tensor that requires grad to a NumPy array: the gradient would "
                "be lost. Use tensor.detach().numpy() (or wg.stop_gradient) if you mean it."
            )
        arr = np.asarray(self._value, dtype=dtype)
        return arr.copy() if copy else arr

    def __repr__(self) -> str:
        v = self._value
        body = repr(v) if type(v) is Dual else np.array2string(
            np.asarray(v), separator=", ", prefix="tensor("
        )
        if self._rg and self._node is not None:
            return f"tensor({body}, grad_fn=<{node_name(self._node)}>)"
        if self._rg:
            return f"tensor({body}, requires_grad=True)"
        return f"tensor({body})"

    # -- NumPy dispatch -------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs:
            fn = _dispatch.UFUNCS.get(ufunc)
            if fn is not None:
                return fn(*inputs)
        return _dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _dispatch.array_function(func, args, kwargs)

    # -- comparisons: no gradient, boolean tensors ----------------------
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _const(np.equal(self._value, value_of(other)))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _const(np.not_equal(self._value, value_of(other)))

    def __lt__(self, other: Any) -> Any:
        return _const(np.less(self._value, value_of(other)))

    def __le__(self, other: Any) -> Any:
        return _const(np.less_equal(self._value, value_of(other)))

    def __gt__(self, other: Any) -> Any:
        return _const(np.greater(self._value, value_of(other)))

    def __ge__(self, other: Any) -> Any:
        return _const(np.greater_equal(self._value, value_of(other)))

    def __invert__(self) -> Any:
        return _const(np.invert(self._value))

    def __and__(self, other: Any) -> Any:
        return _const(np.bitwise_and(self._value, value_of(other)))

    def __or__(self, other: Any) -> Any:
        return _const(np.bitwise_or(self._value, value_of(other)))

    def __xor__(self, other: Any) -> Any:
        return _const(np.bitwise_xor(self._value, value_of(other)))

    # -- in place ---------------------------------------------------------
    def __iadd__(self, other: Any) -> Tensor:
        return _inplace.assign_result(self, _ew.add(self, other), "+=")

    def __isub__(self, other: Any) -> Tensor:
        return _inplace.assign_result(self, _ew.subtract(self, other), "-=")

    def __imul__(self, other: Any) -> Tensor:
        return _inplace.assign_result(self, _ew.multiply(self, other), "*=")

    def __itruediv__(self, other: Any) -> Tensor:
        return _inplace.assign_result(self, _ew.divide(self, other), "/=")

    def __ipow__(self, other: Any) -> Tensor:
        return _inplace.assign_result(self, _ew.power(self, other), "**=")

    def __imatmul__(self, other: Any) -> Tensor:
        return _inplace.assign_result(self, _linalg.matmul(self, other), "@=")

    def __setitem__(self, index: Any, value: Any) -> None:
        _inplace.setitem(self, index, value)

class _HookHandle:
    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


# Op records and functions the operators above call; imported last because
# those modules import this one for ``apply``.
from . import dispatch as _dispatch  # noqa: E402
from . import inplace as _inplace  # noqa: E402
from .dual import Dual, _arith, apply_dual, dual_outer  # noqa: E402
from .ops import elementwise as _ew  # noqa: E402
from .ops import linalg as _linalg  # noqa: E402
