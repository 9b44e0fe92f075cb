"""Dual numbers: forward-mode differentiation, one tangent riding on each value.

``Dual(primal, tangent)`` carries a value and its directional derivative.
Applying a primitive to duals runs the primitive on the primals and its JVP
rule (from the same op record as its VJP) on the tangents. Every dual has a
:class:`~wengert.core.levels.Tag`; when duals of several tags meet, the op is
handled at the innermost (most recent) tag and the others are constants
there, so nested derivatives never confuse their perturbations.

Primals and tangents may be Python floats (the scalar fast path), NumPy
arrays, tensors (reverse over forward) or other duals (forward over forward).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> d = wg.Dual(2.0, 1.0)
>>> y = np.exp(d) * d
>>> round(y.primal, 4), round(y.tangent, 4)
(14.7781, 22.1672)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor as _t
from .arraylike import ArrayMethods
from .core.levels import REV_ORDER, USER_TAG, Tag

__all__ = ["Dual", "apply_dual", "dual_outer"]

_NEW = object.__new__
_ndarray = np.ndarray


def _escaped(tag: Tag) -> RuntimeError:
    return RuntimeError(
        f"a dual number of a finished forward-mode transform ({tag!r}) was used after the "
        "transform returned, so its tangent would be meaningless. Return what you need from "
        "inside the function passed to wg.jvp / wg.derivative, or read .primal first."
    )


class Dual(ArrayMethods):
    """A value with a tangent: ``primal + tangent·ε`` with ``ε² = 0``.

    Parameters
    ----------
    primal : float or array_like
        The value.
    tangent : float or array_like, optional
        Its derivative along the chosen direction (same shape as ``primal``);
        zero by default.

    Examples
    --------
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> y = wnp.sin(wg.Dual(0.0, 1.0))
    >>> (y.primal, y.tangent)
    (0.0, 1.0)
    """

    __slots__ = ("primal", "tangent", "tag")

    def __init__(self, primal: Any, tangent: Any = None, tag: Tag | None = None) -> None:
        if type(primal) is not float and not isinstance(primal, (Dual, _t.Tensor)):
            primal = np.asarray(primal)
            if primal.dtype.kind not in "biufc":
                raise TypeError(
                    f"Dual: the primal must be numeric, got {primal.dtype} "
                    f"({type(primal).__name__}); pass floats or a float array."
                )
            if primal.dtype.kind not in "fc":
                primal = primal.astype(float)
            if primal.ndim == 0 and primal.dtype == np.float64:
                primal = float(primal)
        # The tangent takes the primal's floating dtype (float32 stays float32).
        tdtype = primal.dtype if isinstance(primal, np.ndarray) else np.dtype(float)
        if tangent is None:
            tangent = 0.0 if type(primal) is float else np.zeros(np.shape(primal), dtype=tdtype)
        elif type(tangent) is not float and not isinstance(tangent, (Dual, _t.Tensor)):
            tangent = np.asarray(tangent)
            if tangent.dtype.kind not in "biufc":
                raise TypeError(
                    f"Dual: the tangent must be numeric, got {tangent.dtype}; pass floats."
                )
            if tangent.dtype != tdtype:
                tangent = tangent.astype(tdtype)
            if tangent.ndim == 0 and type(primal) is float:
                tangent = float(tangent)
        if np.shape(tangent) != np.shape(primal) and not (
            tag is not None and tag.batch is not None
            and np.shape(tangent) == (tag.batch,) + np.shape(primal)
        ):
            raise ValueError(
                f"Dual: the tangent's shape {np.shape(tangent)} differs from the primal's shape "
                f"{np.shape(primal)}; give one tangent entry per primal entry."
            )
        self.primal = primal
        self.tangent = tangent
        self.tag = USER_TAG if tag is None else tag

    # -- array-like metadata (from the primal) -------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.primal)

    @property
    def dtype(self) -> np.dtype:
        p = self.primal
        if type(p) is float:
            return np.dtype(float)
        return p.dtype

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d dual number")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- the tangent must not be dropped silently ----------------------
    def __float__(self) -> float:
        raise TypeError(
            "float() of a dual number would drop its tangent. Use d.primal for the value (and "
            "d.tangent for the derivative)."
        )

    def __int__(self) -> int:
        raise TypeError("int() of a dual number would drop its tangent; use d.primal.")

    def __bool__(self) -> bool:
        return bool(self.primal)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "np.asarray() of a dual number would drop its tangent. Use d.primal for the value, "
            "or call a wengert-supported NumPy function on the dual itself."
        )

    # -- comparisons act on primals (no derivative) --------------------
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return np.equal(_primal(self), _primal(other))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return np.not_equal(_primal(self), _primal(other))

    def __lt__(self, other: Any) -> Any:
        return np.less(_primal(self), _primal(other))

    def __le__(self, other: Any) -> Any:
        return np.less_equal(_primal(self), _primal(other))

    def __gt__(self, other: Any) -> Any:
        return np.greater(_primal(self), _primal(other))

    def __ge__(self, other: Any) -> Any:
        return np.greater_equal(_primal(self), _primal(other))

    __hash__ = object.__hash__

    # -- fast paths ------------------------------------------------------
    # On Python floats, x + c, x * c and x + y, x * y of one tag are the
    # defining rules of dual numbers, computed here without dispatch; on arrays,
    # _arith computes x ± y and x * y the same way. Otherwise an operator on an
    # array dual with no tensor involved goes straight to apply_dual, which is
    # where the public function would send it. Anything else takes the public
    # function (tensors, levels, scalar fast paths of the op records).
    def __add__(self, other: Any) -> Any:
        p, t = self.primal, self.tangent
        tp = type(p)
        if tp is float and type(t) is float and self.tag.active:
            to = type(other)
            if to is float or to is int:
                d = _NEW(Dual)  # (what _make does, without the call)
                d.primal, d.tangent, d.tag = p + other, t, self.tag
                return d
            if to is Dual and other.tag is self.tag:
                q, u = other.primal, other.tangent
                if type(q) is float and type(u) is float:
                    d = _NEW(Dual)
                    d.primal, d.tangent, d.tag = p + q, t + u, self.tag
                    return d
        elif tp is np.ndarray:
            d = _array_operator(ADD_KIND, self, other)
            if d is not None:
                return d
        return _ew.add(self, other)

    def __mul__(self, other: Any) -> Any:
        p, t = self.primal, self.tangent
        tp = type(p)
        if tp is float and type(t) is float and self.tag.active:
            to = type(other)
            if to is float or to is int:
                d = _NEW(Dual)
                d.primal, d.tangent, d.tag = p * other, t * other, self.tag
                return d
            if to is Dual and other.tag is self.tag:
                q, u = other.primal, other.tangent
                if type(q) is float and type(u) is float:
                    d = _NEW(Dual)
                    d.primal, d.tangent, d.tag = p * q, t * q + p * u, self.tag
                    return d
        elif tp is np.ndarray:
            d = _array_operator(MULTIPLY_KIND, self, other)
            if d is not None:
                return d
        return _ew.multiply(self, other)

    def __radd__(self, other: Any) -> Any:
        return self.__add__(other)

    def __rmul__(self, other: Any) -> Any:
        return self.__mul__(other)

    def __sub__(self, other: Any) -> Any:
        if type(self.primal) is np.ndarray:
            d = _array_operator(SUBTRACT_KIND, self, other)
            if d is not None:
                return d
        return _ew.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        if type(self.primal) is np.ndarray:
            d = _array_operator(SUBTRACT_KIND, other, self)
            if d is not None:
                return d
        return _ew.subtract(other, self)

    def __truediv__(self, other: Any) -> Any:
        if type(self.primal) is np.ndarray and not isinstance(other, _t.Tensor):
            return apply_dual(_ew.DIVIDE, (self, other), None)
        return _ew.divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        if type(self.primal) is np.ndarray and not isinstance(other, _t.Tensor):
            return apply_dual(_ew.DIVIDE, (other, self), None)
        return _ew.divide(other, self)

    def __pow__(self, other: Any) -> Any:
        p, t = self.primal, self.tangent
        tp = type(p)
        if tp is float and type(t) is float and self.tag.active:
            to = type(other)
            if to is float or to is int:
                op = _ew.POWER
                try:  # the record's float power and its float partial in x
                    ans = op.scalar_impl(p, other)
                    tangent = t * op.scalar_deriv[0](ans, p, other)
                    d = _NEW(Dual)
                    d.primal, d.tangent, d.tag = ans, tangent, self.tag
                    return d
                except _t._SCALAR_FALLBACK:
                    pass  # (a complex result, an overflow): the general path decides
        elif tp is np.ndarray and not isinstance(other, _t.Tensor):
            return apply_dual(_ew.POWER, (self, other), None)
        return _ew.power(self, other)

    def __neg__(self) -> Any:
        if type(self.primal) is np.ndarray:
            return apply_dual(_ew.NEGATIVE, (self,), None)
        return _ew.negative(self)

    def __repr__(self) -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return np.array2string(v, separator=", ")
            if isinstance(v, np.generic):
                return repr(v.item())
            return repr(v)

        tag = "" if self.tag is USER_TAG else f", tag={self.tag.name}#{self.tag.order}"
        return f"Dual({fmt(self.primal)}, {fmt(self.tangent)}{tag})"

    # -- NumPy dispatch ------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs:
            kind = _INLINE.get(ufunc)
            if kind is not None and len(inputs) == 2 and type(self.primal) is _ndarray:
                d = _array_operator(kind, inputs[0], inputs[1])
                if d is not None:
                    return d
            op = (_ARITHMETIC or _arithmetic()).get(ufunc)
            if op is not None and type(self.primal) is not float and _array_without_tensors(inputs):
                return apply_dual(op, inputs, None)  # where the public function sends them
            fn = (_dispatch.UFUNCS or _dispatch.tables()[0]).get(ufunc)
            if fn is not None:
                return fn(*inputs)
        return _dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is _np_shape and len(args) == 1 and not kwargs:
            p = self.primal  # asked often (by the backward sweep): answer without dispatching
            return p.shape if type(p) is np.ndarray else np.shape(p)
        return _dispatch.array_function(func, args, kwargs)


_np_shape = np.shape


def _array_without_tensors(inputs: tuple[Any, ...]) -> bool:
    """No tensor among ``inputs`` and an array among them or their primals (so
    no scalar fast path applies): a public function would call apply_dual."""
    array = False
    for a in inputs:
        ta = type(a)
        if ta is Dual:
            if type(a.primal) is np.ndarray:
                array = True
        elif ta is np.ndarray:
            array = True
        elif isinstance(a, _t.Tensor):
            return False
    return array


#: The kinds of :func:`_arith` (``x + y``, ``x - y``, ``x * y``).
ADD_KIND, SUBTRACT_KIND, MULTIPLY_KIND = 0, 1, 2
_INLINE = {np.add: ADD_KIND, np.subtract: SUBTRACT_KIND, np.multiply: MULTIPLY_KIND}
_PLAIN = frozenset((_ndarray, float, int))  # the plain operands of an array dual
_np_add, _np_subtract, _np_multiply, _np_negative = np.add, np.subtract, np.multiply, np.negative


def _array_operator(kind: int, x: Any, y: Any) -> Dual | None:
    """``x + y``, ``x - y`` or ``x * y`` with an array dual among them, as the
    operators compute it: inline, else through apply_dual; ``None`` when a
    tensor is involved (the public function records it)."""
    d = _arith(kind, x, y)
    if d is None and not isinstance(x, _t.Tensor) and not isinstance(y, _t.Tensor):
        d = apply_dual((_ew.ADD, _ew.SUBTRACT, _ew.MULTIPLY)[kind], (x, y), None)
    return d


def _arith(kind: int, x: Any, y: Any) -> Dual | None:
    """``x + y``, ``x - y`` or ``x * y`` of array dual numbers, computed inline.

    These are the defining rules of dual numbers (the ops' JVPs, the same NumPy
    calls in the same order, so the results are identical to apply_dual's), for
    the operators and ``np.add``/``np.subtract``/``np.multiply`` on array duals
    of one active, unbatched level, or on one such dual and a plain array or
    Python number, where the tangent needs no broadcasting. ``None`` leaves
    everything else (tensors, other levels, batched tangents, broadcasting) to
    :func:`apply_dual`.
    """
    # (The operands are unpacked as in apply_dual's two-input path, inline in
    # both: a shared helper would cost a call per op on the hottest path.)
    if type(x) is Dual:
        tag = x.tag
        px = x.primal
        tx = x.tangent
        if type(y) is Dual:
            if y.tag is not tag:
                return None
            py = y.primal
            ty = y.tangent
            if type(py) is not _ndarray or type(ty) is not _ndarray:
                return None
        elif type(y) in _PLAIN:
            py = y
            ty = None
        else:
            return None
        if type(px) is not _ndarray or type(tx) is not _ndarray:
            return None
    elif type(x) in _PLAIN:
        tag = y.tag
        py = y.primal
        ty = y.tangent
        if type(py) is not _ndarray or type(ty) is not _ndarray:
            return None
        px = x
        tx = None
    else:
        return None
    if tag.batch is not None or not tag.active:
        return None
    # The tangents: d(x ± y) = dx ± dy, d(x·y) = dx·y + dy·x (a missing one is zero).
    if kind == MULTIPLY_KIND:
        ans = _np_multiply(px, py)
        if ty is None:
            tangent = _np_multiply(tx, py)
        elif tx is None:
            tangent = _np_multiply(ty, px)
        else:
            tangent = _np_add(_np_multiply(tx, py), _np_multiply(ty, px))
    elif kind == ADD_KIND:
        ans = _np_add(px, py)
        tangent = tx if ty is None else ty if tx is None else _np_add(tx, ty)
    else:
        ans = _np_subtract(px, py)
        tangent = tx if ty is None else _np_negative(ty) if tx is None else _np_subtract(tx, ty)
    if type(ans) is not _ndarray or tangent.shape != ans.shape:
        return None  # broadcast (or 0-d) results: apply_dual fits the tangent
    d = _NEW(Dual)
    d.primal = ans
    d.tangent = tangent
    d.tag = tag
    return d


def _make(primal: Any, tangent: Any, tag: Tag) -> Dual:
    d = _NEW(Dual)
    d.primal = primal
    d.tangent = tangent
    d.tag = tag
    return d


def _primal(x: Any) -> Any:
    while isinstance(x, Dual):
        x = x.primal
    return x._value if isinstance(x, _t.Tensor) else x


def dual_outer(args: tuple[Any, ...]) -> bool:
    """Whether the dual numbers among ``args`` are at a newer level than its tensors."""
    order = -1
    for a in args:
        if type(a) is Dual and a.tag.order > order:
            order = a.tag.order
    return order >= REV_ORDER.get()


def apply_dual(op: Any, args: tuple[Any, ...], params: dict[str, Any] | None) -> Dual:
    """Apply ``op`` at the innermost dual level among ``args``.

    The primals go through :func:`wengert.tensor.apply` (so outer levels, dual
    or tensor, handle them in turn) and the tangents through ``op.jvp``. When
    no primal is a tensor or a dual number (one level of array duals, the
    common case), the NumPy forward runs directly, as ``apply`` would run it.
    """
    if len(args) == 2 and not params:
        x, y = args
        if type(x) is Dual:
            tag = x.tag
            px = x.primal
            tx = x.tangent
            if type(y) is Dual:
                if y.tag is not tag:
                    return _apply_dual(op, args, params)
                py = y.primal
                ty = y.tangent
            else:
                py = y
                ty = None
        else:
            tag = y.tag
            px = x
            tx = None
            py = y.primal
            ty = y.tangent
        # Plain primals that apply would hand straight to the op's NumPy forward,
        # with a result that needs no conversion to a Python float: an array and
        # an array or Python number.
        tpx = type(px)
        tpy = type(py)
        if tpx is _ndarray:
            plain = tpy is _ndarray or tpy is float or tpy is int
        else:
            plain = tpy is _ndarray and (tpx is float or tpx is int)
        if plain and tag.active and op.jvp is not None:
            ans = op.impl(px, py)
            d = _NEW(Dual)
            if tag.batch is None:
                d.tangent = op.jvp((tx, ty), ans, px, py)
            else:
                d.tangent = _batched_jvp(op, [tx, ty], ans, [px, py], {})
            d.primal = ans
            d.tag = tag
            return d
        return _apply_dual(op, args, params)
    if len(args) == 1:
        x = args[0]
        tag = x.tag
        p = x.primal
        if type(p) is _ndarray and tag.active and op.jvp is not None:
            if params:
                ans = _t._forward(op, (p,), params)
                if tag.batch is not None:
                    return _make(ans, _batched_jvp(op, [x.tangent], ans, [p], params), tag)
                return _make(ans, op.jvp((x.tangent,), ans, p, **params), tag)
            ans = op.impl(p)
            if tag.batch is not None:
                return _make(ans, _batched_jvp(op, [x.tangent], ans, [p], {}), tag)
            return _make(ans, op.jvp((x.tangent,), ans, p), tag)
    return _apply_dual(op, args, params)


def _apply_dual(op: Any, args: tuple[Any, ...], params: dict[str, Any] | None) -> Dual:
    tag = None
    for a in args:
        if type(a) is Dual and (tag is None or a.tag.order > tag.order):
            tag = a.tag
    if not tag.active:
        raise _escaped(tag)
    primals = []
    tangents = []
    plain = True  # no primal is a tensor or a dual (of an outer level)
    floats = True  # every primal is a Python number (the scalar path of apply)
    for a in args:
        if type(a) is Dual and a.tag is tag:
            p = a.primal
            primals.append(p)
            tangents.append(a.tangent)
        else:
            p = a
            primals.append(a)
            tangents.append(None)
        tp = type(p)
        if tp is not np.ndarray:
            if tp is float or tp is int:
                continue
            if tp is Dual or isinstance(p, _t.Tensor):
                plain = False
        floats = False
    if op.jvp is None:
        raise TypeError(
            f"the primitive {op.name!r} has no forward-mode (JVP) rule, so dual numbers cannot "
            "pass through it; use reverse mode (wg.grad / wg.vjp) for this function."
        )
    nin = len(primals)
    if plain and not floats and (params or nin > 2):
        # What apply would do with these values: the NumPy forward (errors annotated).
        ans = _t._forward(op, tuple(primals), params)
    elif plain and not floats:
        ans = op.impl(*primals)  # as apply1 / apply2 would (errors not annotated)
    elif params:
        ans = _t.apply(op, *primals, **params)
    elif nin == 1:
        ans = _t.apply1(op, primals[0])
    elif nin == 2:
        ans = _t.apply2(op, primals[0], primals[1])
    else:
        ans = _t.apply(op, *primals)
    if tag.batch is not None:
        return _make(ans, _batched_jvp(op, tangents, ans, primals, params or {}), tag)
    if params:
        tangent = op.jvp(tuple(tangents), ans, *primals, **params)
    else:
        tangent = op.jvp(tuple(tangents), ans, *primals)
    if (type(ans) is np.float64 or type(tangent) is np.float64) and _all_scalars(primals):
        # Scalars stay Python floats (d + 3, d ** 2, a rule returning a NumPy scalar).
        if type(ans) is np.float64:
            ans = float(ans)
        if type(tangent) is np.float64:
            tangent = float(tangent)
    return _make(ans, tangent, tag)


def _batched_jvp(op: Any, tangents: list[Any], ans: Any, primals: list[Any],
                 params: dict[str, Any]) -> Any:
    """The JVP for a batch of tangents (a leading axis on each tangent).

    Ops whose rule handles the batch axis (``op.batch_jvp``) get one call; a
    broadcasting op's tangents are first given the output's rank, so that
    NumPy broadcasting lines up. Any other op gets one call per tangent, and
    the results are stacked: still one pass over the function's primal.
    """
    if op.batch_jvp:
        if op.broadcasting:
            rank = len(np.shape(ans))
            tangents = [
                t if t is None or len(np.shape(t)) - 1 >= rank
                else _expand_batched(t, rank - len(np.shape(t)) + 1)
                for t in tangents
            ]
        out = op.jvp(tuple(tangents), ans, *primals, **params)
        if out is not None:
            return out
    from .ops.shape import stack

    batch = next(np.shape(t)[0] for t in tangents if t is not None)
    rows = []
    for b in range(batch):
        tb = tuple(None if t is None else t[b] for t in tangents)
        rows.append(op.jvp(tb, ans, *primals, **params))
    if any(isinstance(r, (Dual, _t.Tensor)) for r in rows):
        return stack(rows)
    return np.stack([np.asarray(r) for r in rows])


def _expand_batched(t: Any, extra: int) -> Any:
    """Insert ``extra`` unit axes after the batch axis of a batched tangent."""
    from .ops.shape import reshape

    shape = np.shape(t)
    return reshape(t, shape[:1] + (1,) * extra + shape[1:])


def _all_scalars(values: list[Any]) -> bool:
    for v in values:
        t = type(v)
        if t is Dual:
            if type(v.primal) is not float:
                return False
        elif t is not float and t is not int:
            return False
    return True


from . import dispatch as _dispatch  # noqa: E402
from .ops import elementwise as _ew  # noqa: E402

#: Ufuncs whose public wengert function sends an array dual (no tensor
#: around) straight to apply_dual with this op record; filled on first use
#: (the op families may still be loading when this module is).
_ARITHMETIC: dict[Any, Any] = {}
_DIRECT_UFUNCS = (
    "add", "subtract", "multiply", "divide", "power", "negative", "exp", "log", "sqrt",
    "square", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arctan", "expm1", "log1p",
)


def _arithmetic() -> dict[Any, Any]:
    if not _ARITHMETIC:
        from .ops import linalg

        table = {getattr(np, name): getattr(_ew, name.upper()) for name in _DIRECT_UFUNCS}
        table[np.matmul] = linalg.MATMUL
        _ARITHMETIC.update(table)
    return _ARITHMETIC
