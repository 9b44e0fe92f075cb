"""Dual numbers: forward-mode differentiation, one tangent riding on each value.

``Dual(primal, tangent)`` carries a value and its directional derivative.
Applying a primitive to duals runs the primitive on the primals and its JVP
rule (from the same op record as its VJP) on the tangents. Every dual has a
:class:`~wengert.core.levels.Tag`; when duals of several tags meet, the op is
handled at the innermost (most recent) tag and the others are constants
there, so nested derivatives never confuse their perturbations.

Primals and tangents may be Python floats (the scalar fast path), NumPy
arrays, or traced values of outer levels (tensors: reverse over forward;
other duals: forward over forward). A complex primal takes a complex tangent (a
direction in the complex plane); a real primal only ever carries a real tangent.

A dual number holding an array behaves as a NumPy array under in-place
updates (``d += 1``, ``d[i] = v``, ``np.add(a, b, out=d)``): the dual object
itself takes the new value, so every name bound to it sees the change. A dual
made by a view op (basic slicing, reshape, transpose, ...) when NumPy would
return a view remembers its base and the op; the base keeps weak references
to its live views. An in-place update of a view writes through to its base
(the inverse of the view op, see :func:`wengert.reverse.inplace.write_back`), and an
update of a base re-derives its live views. The arrays beneath are never
written: each new value is computed out of place, so the primals and
tangents handed to a transform stay as they were. That bookkeeping costs
only at view creation and in-place updates. Scalars (a float primal) are
immutable, as NumPy's are: ``s += 1`` rebinds ``s``.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> d = wg.Dual(2.0, 1.0)
>>> y = np.exp(d) * d
>>> round(y.primal, 4), round(y.tangent, 4)
(14.7781, 22.1672)
>>> x = wg.Dual(np.array([1.0, 2.0, 3.0]), np.ones(3))
>>> v = x[1:]
>>> v *= 10.0
>>> x
Dual([ 1., 20., 30.], [ 1., 10., 10.])
"""

from __future__ import annotations

import math
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
    is_traced,
    kind_of,
    number_kind,
    object_error,
    primal,
    register,
    shape_of,
    ufunc_method,
)
from wengert.core.display import html_of
from wengert.core.errors import EscapedLevelError, LostDerivativeError, NoForwardRule
from wengert.core.generated import generate
from wengert.core.levels import USER_TAG, Tag, escaped_error, is_open
from wengert.core.source import storing_item
from wengert.core.subclasses import (
    REFUSED_TYPES,
    masked_caller,
    masked_message,
    refuse_subclass,
    refused_subclass,
)
from wengert.interop import dispatch as _dispatch
from wengert.interop.arraylike import ArrayMethods, refuse_dtype_set, refuse_shape_set
from wengert.interop.dispatch import lost_in_conversion, lost_in_store
from wengert.ops import elementwise as _ew
from wengert.ops import indexing as _ix
from wengert.ops.broadcast import reshape_to
from wengert.ops.linalg import basic as _linalg
from wengert.ops.shape import stack
from wengert.reverse.inplace import (
    PART_VIEWS,
    is_view,
    keep_layout,
    link_view,
    rederive_views,
    write_back,
)

__all__ = ["Dual", "DUAL", "assign"]

_NEW = object.__new__
_ndarray = np.ndarray


def _escaped(tag: Tag) -> EscapedLevelError:
    return EscapedLevelError(
        f"a dual number of a finished forward-mode transform ({tag!r}) was used after the "
        "transform returned, so its tangent would be meaningless. Return what you need from "
        "inside the function passed to wg.jvp / wg.derivative, or read .primal first."
    )


def _numeric(value: Any, what: str) -> Any:
    """``value`` as a float or a float array (integers and bools become float)."""
    if type(value) is float or is_traced(value):
        return value
    refuse_subclass(value, f"Dual ({what})")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biufc":
        raise TypeError(
            f"Dual: the {what} must be numeric, got {arr.dtype} ({type(value).__name__}); pass "
            "floats or a float (or complex) array."
        )
    return arr


def _check_nesting(primal: Any, tangent: Any, tag: Tag) -> None:
    """Refuse a dual number over a dual number of its own tag: the two ε would be one
    perturbation, and a dual of that tag meeting the nest could not tell which it is."""
    for what, value in (("primal", primal), ("tangent", tangent)):
        if type(value) is Dual and value.tag is tag:
            raise ValueError(
                f"Dual: the {what} is itself a dual number of the same tag ({tag!r}), so the "
                "two perturbations could not be told apart (a dual number meeting this one "
                "would be mixed up with either). For a second derivative use "
                "wg.derivative(wg.derivative(f)), wg.hessian or wg.hvp, which give every "
                "level its own tag; or give the outer dual number a tag of its own, made "
                "after the inner ones' (wengert.core.levels.Tag(): "
                "Dual(Dual(p, t), Dual(q, s), tag=Tag()))."
            )


def _check_levels(primal: Any, tangent: Any, tag: Tag) -> None:
    """Refuse a dual number over a value of a level inside its tag's (a value of a
    transform running now, or a dual number of a later tag): ops meeting that level's
    values would take the new dual number for a constant there, and mix up the
    perturbations (see :mod:`wengert.core.levels`)."""
    for what, value in (("primal", primal), ("tangent", tangent)):
        kind = kind_of(value)
        if kind is None:
            continue
        level = kind.level(value)
        if level > tag.order:
            if type(value) is Dual and not value.tag.active:
                raise _escaped(value.tag)
            if kind.name == "tensor" and not is_open(level):
                raise escaped_error(level)
            made = "made with wg.Dual(primal, tangent)" if tag is USER_TAG else f"of {tag!r}"
            raise ValueError(
                f"Dual: the {what} is a {kind.name} of level {level}, inside the level of "
                f"this dual number ({made}, level {tag.order}): a value of a running "
                "transform (wg.derivative, wg.jvp, wg.grad...), or a dual number of a later "
                "tag. An op meeting both would take the new dual number for a constant at "
                "that level, and the derivatives would be silently wrong. Give the new "
                "dual number a tag made after that value's, shared by the dual numbers of "
                "one perturbation: tag = wengert.core.levels.Tag(); "
                "wg.Dual(p, t, tag=tag); or differentiate with wg.jvp / wg.derivative, "
                "which give every level its own tag."
            )


#: NumPy ufunc -> the dual kind's function for its op (``np.sin(d)``, ``array * d``).
_FAST_UFUNCS: dict[Any, Any] = {}


def _not_a_tensor(what: str) -> str:
    """The refusal of a tensor method called on a dual number."""
    return (
        f"{what} was called on a dual number: inside wg.jvp, wg.derivative, wg.jacfwd, "
        "wg.hessian or wg.hvp, a value computed from the transform's input is a dual number "
        "(primal + ε·tangent), which has no tape. Call it on a tensor outside the transform "
        "(on what the transform returns), or on d.primal / d.tangent when they are tensors."
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

    # ``_base`` (a view's base, op and params) and ``_views`` (weak references to a
    # base's live views) are set only on views and on bases that have views.
    __slots__ = ("primal", "tangent", "tag", "_base", "_views", "__weakref__")

    def __init__(self, primal: Any, tangent: Any = None, tag: Tag | None = None) -> None:
        if type(primal) is Dual or type(tangent) is Dual:
            _check_nesting(primal, tangent, USER_TAG if tag is None else tag)
        if (type(primal) is not float and type(primal) is not _ndarray) or (
                tangent is not None and type(tangent) is not float
                and type(tangent) is not _ndarray):
            _check_levels(primal, tangent, USER_TAG if tag is None else tag)
        primal = _numeric(primal, "primal")
        if type(primal) is _ndarray:
            if primal.dtype.kind not in "fc":
                primal = primal.astype(float)
            if primal.ndim == 0 and primal.dtype == np.float64:
                primal = float(primal)
        # The tangent takes the primal's floating dtype (float32 stays float32), through
        # a traced primal too (a dual of an outer level, a tensor).
        tdtype = primal.dtype if type(primal) is _ndarray else dtype_of(primal)
        if tangent is None:
            tangent = 0.0 if type(primal) is float else np.zeros(shape_of(primal), dtype=tdtype)
        else:
            tangent = _numeric(tangent, "tangent")
            if tdtype.kind != "c" and number_kind(tangent) == "c":
                raise TypeError(
                    f"Dual: the tangent is complex ({dtype_of(tangent)}) but the primal is real "
                    f"({tdtype}): a real value can only move in real directions. Make the "
                    "primal complex (primal + 0j) to push a complex tangent."
                )
            if type(tangent) is float and type(primal) is _ndarray:
                tangent = np.asarray(tangent, dtype=tdtype)  # a float32 or complex 0-d primal
            elif type(tangent) is _ndarray:
                if tangent.dtype != tdtype:
                    tangent = tangent.astype(tdtype)
                if tangent.ndim == 0 and type(primal) is float:
                    tangent = float(tangent)
        if shape_of(tangent) != shape_of(primal) and not (
            tag is not None and tag.batch is not None
            and shape_of(tangent) == (tag.batch,) + shape_of(primal)
        ):
            raise ValueError(
                f"Dual: the tangent's shape {shape_of(tangent)} differs from the primal's shape "
                f"{shape_of(primal)}; give one tangent entry per primal entry."
            )
        self.primal = primal
        self.tangent = tangent
        self.tag = USER_TAG if tag is None else tag

    # -- array-like metadata (from the primal) -------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self.primal)

    @property
    def dtype(self) -> np.dtype:
        p = self.primal
        if type(p) is float:
            return np.dtype(float)
        return p.dtype

    shape = shape.setter(refuse_shape_set)  # (x.shape = ... says what to write instead)
    dtype = dtype.setter(refuse_dtype_set)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d dual number")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- copies and pickles: the same perturbation ----------------------
    def __copy__(self) -> Any:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """``copy.deepcopy(d)``: a recorded copy (the primal and tangent copied, the tag,
        the identity of the perturbation, kept)."""
        new = memo[id(self)] = self.copy()
        return new

    def __reduce__(self) -> Any:
        # the tag pickles as wg.Dual's own, or refuses (a running transform's)
        return (Dual, (self.primal, self.tangent, self.tag))

    # -- the tangent must not be dropped silently ----------------------
    def __float__(self) -> float:
        if storing_item():  # buf[i] = d with a NumPy array buf
            raise lost_in_store("buf[i] = d (NumPy converts the dual number with float())")
        raise LostDerivativeError(
            "float() of a dual number would drop its tangent. Use d.primal for the value (and "
            "d.tangent for the derivative)."
        )

    def __int__(self) -> int:
        raise LostDerivativeError("int() of a dual number would drop its tangent; use d.primal.")

    def __complex__(self) -> complex:
        if storing_item():
            raise lost_in_store("buf[i] = d (NumPy converts the dual number with complex())")
        raise LostDerivativeError(
            "complex() of a dual number would drop its tangent; use d.primal.")

    def __index__(self) -> int:
        raise TypeError("a dual number cannot be used as an index; use d.primal.")

    def item(self) -> Any:
        raise LostDerivativeError(
            "item() of a dual number would drop its tangent; use d.primal.item() for the value."
        )

    def tolist(self) -> Any:
        raise LostDerivativeError(
            "tolist() of a dual number would drop its tangent; use d.primal.tolist() for the "
            "value, or keep computing with the dual (np.* functions work on it)."
        )

    def __bool__(self) -> bool:
        return bool(self.primal)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype).kind in "iub":
            # an integer or boolean cast (np.int64(d), np.asarray(d, dtype=int)): its
            # derivative is zero, as for d.astype(int) and for tensors; the primal's values
            arr = np.asarray(self.primal, dtype=dtype)
            return arr.copy() if copy and arr is self.primal else arr
        if storing_item():  # buf[...] = d, NumPy converting d for an array buf
            raise lost_in_store("buf[...] = d (NumPy converts the dual number with np.asarray())")
        if masked_caller():
            raise TypeError(masked_message("a masked array meeting a dual number (np.ma "
                                           "converts the dual number to an array)"))
        default = ("Use d.primal for the value, or call a wengert-supported NumPy function on "
                   "the dual itself (to build an array from several, use np.stack).")
        raise lost_in_conversion("a dual number", default) or LostDerivativeError(
            f"np.asarray() of a dual number would drop its tangent. {default}")

    def __setitem__(self, index: Any, value: Any) -> None:
        """``d[index] = value``: the primal and the tangent are updated together (the
        ``setitem`` primitive, applied out of place; this dual then holds the result,
        and its base and views follow, as with NumPy views)."""
        new = apply(_ix.SETITEM, self, value, index=_ix.raw_index(index))
        assign(self, new, "d[i] = v")

    # -- in-place operators: NumPy semantics (see the module docstring); set below the
    # class, from the operators (``_in_place_operator``) --------------------------------

    # -- comparisons act on primals (no derivative): set below the class ------------
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, np.ndarray) and v.ndim:
                return np.array2string(v, separator=", ")
            if isinstance(v, (np.generic, np.ndarray)):  # a number: 0-d as NumPy scalars
                return repr(v.item())
            return repr(v)

        # (a tag is shown by its depth among the running perturbations, the same at
        # each run of a notebook cell; its order tells it from the others)
        tag = "" if self.tag is USER_TAG else f", tag={self.tag.name}#{self.tag.depth}"
        return f"Dual({fmt(self.primal)}, {fmt(self.tangent)}{tag})"

    def _repr_html_(self) -> str | None:
        return html_of(self)

    # -- reverse-mode calls on a dual number: refused with what it is ------------------
    def backward(self, *args: Any, **kwargs: Any) -> None:
        """Refused: a dual number carries a tangent, not a tape (see :meth:`register_hook`)."""
        raise TypeError(_not_a_tensor("backward()"))

    def register_hook(self, hook: Any) -> Any:
        """Refused: a dual number is pushed forward, no gradient reaches it backward."""
        raise TypeError(_not_a_tensor("register_hook()"))

    def retain_grad(self) -> None:
        """Refused (see :meth:`register_hook`)."""
        raise TypeError(_not_a_tensor("retain_grad()"))

    # -- NumPy dispatch ------------------------------------------------
    __array_ufunc__ = ufunc_method(_FAST_UFUNCS, _dispatch.array_ufunc)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is _np_shape and len(args) == 1 and not kwargs:
            return shape_of(self.primal)  # asked often: answer without dispatching
        return _dispatch.array_function(func, args, kwargs)


_np_shape = np.shape


_plain = primal  # the plain value under every traced layer (comparisons)


def _comparison(ufunc: Any) -> Any:
    def method(self: Dual, other: Any) -> Any:
        return ufunc(_plain(self), _plain(other))

    method.__name__ = method.__qualname__ = ufunc.__name__
    return method


for _name, _ufunc in (("__eq__", np.equal), ("__ne__", np.not_equal), ("__lt__", np.less),
                      ("__le__", np.less_equal), ("__gt__", np.greater),
                      ("__ge__", np.greater_equal)):
    setattr(Dual, _name, _comparison(_ufunc))
del _name, _ufunc


def _make(primal: Any, tangent: Any, tag: Tag) -> Dual:
    d = _NEW(Dual)
    d.primal = primal
    d.tangent = tangent
    d.tag = tag
    return d


# -- in-place updates and views ----------------------------------------------------------
def _link(d: Dual) -> Any:
    """``(base, op, params)`` for a view, else ``None``."""
    return getattr(d, "_base", None)


def _set(d: Dual, new: Dual) -> None:
    d.primal = new.primal
    d.tangent = new.tangent
    d.tag = new.tag


def _as_dual(new: Any, target: Dual, what: str) -> Dual:
    """The result of an in-place update of ``target`` as a dual number of its tag (a
    plain result has a zero tangent)."""
    if type(new) is Dual:
        return new
    if is_traced(new):
        raise TypeError(
            f"{what} with a dual number as the target would turn it into a "
            f"{type(new).__name__} (a value of an inner transform); compute the result out "
            "of place instead (y = x + v, np.where, np.concatenate, np.stack)."
        )
    tag = target.tag
    new = _numeric(new, "value")
    shape = shape_of(new)
    tangent = np.zeros(shape if tag.batch is None else (tag.batch,) + shape,
                       dtype=dtype_of(new) if dtype_of(new).kind in "fc" else float)
    return _make(new, tangent, tag)


def assign(target: Dual, new: Any, what: str) -> Dual:
    """Make the dual number ``target`` hold ``new`` (computed out of place), as NumPy's
    in-place operations do: every name bound to ``target`` sees it, a view writes
    through to its base (up a chain of views), and the base's live views follow.

    Parameters
    ----------
    target : Dual
        The dual number updated in place.
    new : Dual or array_like
        Its new value (of its shape; cast to its dtype).
    what : str
        The operation, for messages (``"+="``).

    Returns
    -------
    Dual
        ``target``.

    Examples
    --------
    >>> import numpy as np
    >>> y = Dual(np.zeros(3), np.zeros(3))
    >>> v = y[::2]
    >>> _ = assign(v, Dual(np.ones(2), np.full(2, 5.0)), "v[...] = w")
    >>> y
    Dual([1., 0., 1.], [5., 0., 5.])
    """
    new = _as_dual(new, target, what)
    shape = shape_of(target.primal)
    if shape_of(new.primal) != shape:
        raise ValueError(
            f"in-place {what}: the result has shape {shape_of(new.primal)} but the dual number "
            f"has shape {shape}; NumPy does not broadcast the target of an in-place operation."
        )
    dtype = target.dtype
    if new.dtype != dtype:
        new = _ew.astype(new, dtype)  # NumPy keeps the target's dtype (float32 += float64)
    root = target
    value = new
    link = _link(target)
    while link is not None:  # up the chain of views, out of place: nothing is written yet
        base, op, params = link
        value = _as_dual(write_back(op, params, base, value, what), base, what)
        root = base
        link = _link(base)
    _set(root, _as_dual(keep_layout(root, value), root, what))
    rederive_views(root, _set)
    return target


def _in_place(target: Dual, new: Any, what: str) -> Any:
    """``target op= other``: a dual holding an array is updated in place; a scalar (float
    primal, immutable as in NumPy) is rebound to ``new``."""
    if type(primal(target)) is not _ndarray:
        return new
    have, want = dtype_of(new), target.dtype
    if have != want and not np.can_cast(have, want, "same_kind"):
        raise TypeError(  # NumPy's words (a complex result into a real array, ...)
            f"Cannot cast ufunc '{_UFUNC_OF.get(what, what)}' output from dtype('{have}') to "
            f"dtype('{want}') with casting rule 'same_kind' (d {what} ...: NumPy refuses it "
            f"too; write d = d {what[:-1]} ... for a new array)")
    return assign(target, new, what)


#: in-place operator -> the ufunc NumPy names when it refuses a cast
_UFUNC_OF = {"+=": "add", "-=": "subtract", "*=": "multiply", "/=": "divide", "**=": "power",
             "//=": "floor_divide", "%=": "remainder", "@=": "matmul"}


# -- the dual kind: how ops act on dual numbers --------------------------------------
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
            rank = len(shape_of(ans))
            tangents = [
                t if t is None or len(shape_of(t)) - 1 >= rank
                else _expand_batched(t, rank - len(shape_of(t)) + 1)
                for t in tangents
            ]
        out = op.jvp(tuple(tangents), ans, *primals, **params)
        if out is not None:
            return out
    batch = next(shape_of(t)[0] for t in tangents if t is not None)
    rows = [op.jvp(tuple(None if t is None else t[b] for t in tangents), ans, *primals, **params)
            for b in range(batch)]
    if any(is_traced(r) for r in rows):
        return stack(rows)
    return np.stack([np.asarray(r) for r in rows])


def _expand_batched(t: Any, extra: int) -> Any:
    """Insert ``extra`` unit axes after the batch axis of a batched tangent."""
    shape = shape_of(t)
    return reshape_to(t, shape[:1] + (extra * (1,)) + shape[1:])


def _all_scalars(values: list[Any]) -> bool:
    for v in values:
        t = type(v)
        if t is Dual:
            if type(v.primal) is not float:
                return False
        elif t is not float and t is not int:
            return False
    return True


def _no_jvp(op: Any) -> TypeError:
    return NoForwardRule(
        f"the primitive {op.name!r} has no forward-mode (JVP) rule, so dual numbers cannot "
        "pass through it; use reverse mode (wg.grad / wg.vjp) for this function."
    )


class DualKind(Kind):
    """Dual numbers as a kind of traced value (see :mod:`wengert.core.bind`).

    The level of a dual is its tag's order; on a tie with a tensor (a user's
    ``wg.Dual`` and a user's tensor) the dual acts first.
    """

    name = "dual"
    priority = 1
    value_attribute = "primal"

    def level(self, x: Dual) -> float:
        return x.tag.order

    def primal(self, x: Dual) -> Any:
        return x.primal

    def connected(self, x: Dual) -> bool:
        return True

    def constant(self, value: Any, level: float | None = None, example: Any = None) -> Any:
        """A float result without derivative (``np.zeros_like(d)``) as a dual of
        ``example``'s tag with a zero tangent, so that ``y = np.zeros_like(x); y[i] = ...``
        carries the tangents written into it; other results stay plain."""
        if type(example) is not Dual or type(value) is not _ndarray \
                or value.dtype.kind not in "fc":
            return value
        tag = example.tag
        tangent = None if tag.batch is None else np.zeros((tag.batch,) + value.shape,
                                                          dtype=value.dtype)
        return Dual(value, tangent, tag)

    def process(self, op: Any, args: tuple[Any, ...], params: dict[str, Any] | None,
                level: float) -> Dual:
        if len(args) == 1:  # one dual over a plain array (getitem, sum, reshape, ...)
            x = args[0]
            p = x.primal
            tag = x.tag
            if type(p) is _ndarray and tag.active and tag.batch is None and op.jvp is not None:
                ans = forward(op, (p,), params)
                if (type(ans) is _ndarray and ans.dtype.kind == "f" or type(ans) is np.float64) \
                        and (op.complex_rules or p.dtype.kind == "f"):
                    tangent = op.jvp((x.tangent,), ans, p, **params) if params else \
                        op.jvp((x.tangent,), ans, p)
                    d = _make(ans, tangent, tag)
                    if (op.view or op in PART_VIEWS) and is_view(op, ans, p):
                        link_view(x, d, op, params)  # a NumPy view: in-place updates write through
                    return d
        tag = None
        for a in args:
            if type(a) is Dual and a.tag.order == level:
                tag = a.tag
                break
        if not tag.active:
            raise _escaped(tag)
        if op.jvp is None:
            raise _no_jvp(op)
        primals = []
        tangents = []
        plain = True  # no traced value beneath: the NumPy forward runs directly
        for a in args:
            if type(a) is Dual and a.tag is tag:
                p = a.primal
                tangents.append(a.tangent)
            else:
                p = a
                tp = type(a)
                if tp is not _ndarray and tp is not float and isinstance(a, REFUSED_TYPES):
                    raise refused_subclass(a, f"{op.name} of a dual number and this operand")
                tangents.append(None)
            primals.append(p)
            if plain and type(p) is not _ndarray and is_traced(p):
                plain = False
        if plain:
            ans = forward(op, tuple(primals), params)
        else:
            ans = apply(op, *primals, **params) if params else apply(op, *primals)
        k = "f" if type(ans) is float or (type(ans) is _ndarray and ans.dtype.kind == "f") \
            else number_kind(ans)
        if k != "f":
            if k != "c":
                if dtype_of(ans).kind == "O":
                    raise object_error(op)
                return ans  # an integer or boolean result (a cast) carries no tangent
            if not op.complex_rules:
                raise complex_error(op)
        elif not op.complex_rules:
            for p in primals:
                if type(p) is not float and is_complex(p):
                    raise complex_error(op)  # a real result of a complex input (var, svd)
        if tag.batch is not None:
            d = _make(ans, _batched_jvp(op, tangents, ans, primals, params or {}), tag)
            if (op.view or op in PART_VIEWS) and type(args[0]) is Dual \
                    and args[0].tag is tag and is_view(op, ans, primals[0]):
                link_view(args[0], d, op, params)
            return d
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
        d = _make(ans, tangent, tag)
        if (op.view or op in PART_VIEWS) and type(args[0]) is Dual \
                and args[0].tag is tag and is_view(op, ans, primals[0]):
            link_view(args[0], d, op, params)
        return d

    def write(self, target: Dual, result: Any, what: str) -> Dual:
        """``np.f(..., out=target)``: ``target`` takes the result in place (an array)."""
        if type(primal(target)) is not _ndarray:
            raise TypeError(f"{what}: out= must be an array; this dual number holds a scalar "
                            "(assign the result instead: y = np.f(x)).")
        return assign(target, result, what)

    def unary(self, op: Any, cls: type, public: Any) -> Any:
        if cls is not Dual:
            return None
        return tuned_unary(op, self.generic_unary(op))

    def binary(self, op: Any, cls: type, public: Any) -> Any:
        if cls is not Dual:
            return None
        return tuned_binary(op, self.generic_binary(op))

    def generic_unary(self, op: Any) -> Any:
        """The dual kind's function for a one-input op, from the op's record alone: the
        float path (``scalar_impl``, ``scalar_deriv``), plain arrays (the NumPy forward and
        the JVP rule), else :meth:`process`."""
        impl = op.impl
        scalar = op.scalar_impl
        deriv = op.scalar_deriv[0] if op.scalar_deriv and scalar is not None else None
        complex_rules = op.complex_rules
        process = self.process

        def fn(x: Dual) -> Any:
            p = x.primal
            t = x.tangent
            tag = x.tag
            tp = type(p)
            if tag.active:
                if tp is float:
                    if deriv is not None and type(t) is float:
                        # f(x) and f'(x) from the record's float path and float partial.
                        try:
                            ans = scalar(p)
                            d = _NEW(Dual)
                            d.tangent = t * deriv(ans, p)
                            d.primal = ans
                            d.tag = tag
                            return d
                        except SCALAR_FALLBACK:
                            pass
                elif tp is _ndarray and tag.batch is None and op.jvp is not None and (
                        complex_rules or p.dtype.kind == "f"):
                    ans = impl(p)  # what apply does with a plain array
                    d = _NEW(Dual)
                    d.tangent = op.jvp((t,), ans, p)
                    d.primal = ans
                    d.tag = tag
                    return d
            return process(op, (x,), None, tag.order)

        return fn

    def generic_binary(self, op: Any) -> Any:
        """As :meth:`generic_unary`, for a broadcasting two-input op."""
        impl = op.impl
        scalar = op.scalar_impl
        dx, dy = op.scalar_deriv if op.scalar_deriv and scalar is not None else (None, None)
        process = self.process

        def fn(x: Any, y: Any) -> Any:
            tx = type(x)
            ty = type(y)
            # Unpack the operands of one tag: a dual and a dual, or a dual and a
            # plain number or array; anything else takes the general path.
            if tx is Dual:
                tag = x.tag
                px = x.primal
                gx = x.tangent
                if ty is Dual:
                    if y.tag is not tag:
                        return apply(op, x, y)
                    py = y.primal
                    gy = y.tangent
                elif ty is float or ty is int or ty is _ndarray:
                    py = y
                    gy = None
                else:
                    return apply(op, x, y)
            elif tx is float or tx is int or tx is _ndarray:
                tag = y.tag
                px = x
                gx = None
                py = y.primal
                gy = y.tangent
            else:
                return apply(op, x, y)
            if tag.active:
                tpx = type(px)
                tpy = type(py)
                if dx is not None and (tpx is float or tpx is int) and (tpy is float or tpy is int):
                    # Python numbers: f and its partials from the record's float path.
                    if (gx is None or type(gx) is float) and (gy is None or type(gy) is float) \
                            and (tpx is float or tpy is float):
                        try:
                            ans = scalar(px, py)
                            tangent = gx * dx(ans, px, py) if gx is not None else 0.0
                            if gy is not None:
                                tangent += gy * dy(ans, px, py)
                            d = _NEW(Dual)
                            d.primal = ans
                            d.tangent = tangent
                            d.tag = tag
                            return d
                        except SCALAR_FALLBACK:
                            pass
                elif tag.batch is None and op.jvp is not None and (
                    (tpx is _ndarray and (tpy is _ndarray or tpy is float or tpy is int))
                    or (tpy is _ndarray and (tpx is float or tpx is int))
                ):
                    # Plain primals, at least one an array: the NumPy forward and the JVP rule.
                    ans = impl(px, py)
                    if ans.dtype.kind != "f":  # (an array or a NumPy scalar)
                        return process(op, (x, y), None, tag.order)  # (it decides)
                    d = _NEW(Dual)
                    d.tangent = op.jvp((gx, gy), ans, px, py)
                    d.primal = ans
                    d.tag = tag
                    return d
            return apply(op, x, y)

        return fn


# =====================================================================================
# The tuned scalar fast path.
#
# A dual number with a Python-float primal and tangent and an active, unbatched tag
# meeting the hottest ops (W1d in benchmarks/forward.py): the functions below compute
# exactly what the generic float path (``DualKind.generic_unary`` / ``generic_binary``,
# driven by the op's record: ``scalar_impl`` and ``scalar_deriv``) computes, with the
# record's partials written out (a product by 1.0 left out: it is the identity on every
# float), so one Python call and no partial's call per op. Every other case (arrays,
# ints, another tag, a closed or batched tag, a float error) goes to the generic
# function unchanged. Only the first operand of a binary op is tuned as a dual
# (``d * 0.9``, ``d + e``, ``d ** 1.5``); ``0.9 * d`` takes the generic path.
#
# The functions are inlined on purpose (a call per op is measurable there) and are
# generated from the two templates below (``wengert.core.generated``), one expression
# per op, rather than written out once per op.
# tests/forward/test_dual_fastpaths.py checks each tuned op against the generic path,
# bit for bit, on ordinary and special values.
# =====================================================================================
_UNARY_TEMPLATE = """\
def _tuned_{name}(generic):
    def fn(x):
        p = x.primal
        t = x.tangent
        tag = x.tag
        if type(p) is float and type(t) is float and tag.active:
{primal}
            d = _NEW(Dual)
            d.primal = ans
            d.tangent = {tangent}
            d.tag = tag
            return d
        return generic(x)

    return fn
"""

_BINARY_TEMPLATE = """\
def _tuned_{name}(generic):
    def fn(x, y):
        if type(x) is Dual:
            px = x.primal
            gx = x.tangent
            tag = x.tag
            if type(px) is float and type(gx) is float and tag.active:
                ty = type(y)
                if ty is float:
{primal}
                    d = _NEW(Dual)
                    d.primal = ans
                    d.tangent = tangent
                    d.tag = tag
                    return d
{dual}
        return generic(x, y)

    return fn
"""

_DUAL_OPERAND = """\
                if ty is Dual and y.tag is tag:
                    py = y.primal
                    gy = y.tangent
                    if type(py) is float and type(gy) is float:
                        d = _NEW(Dual)
                        d.primal = {primal}
                        d.tangent = {tangent}
                        d.tag = tag
                        return d
"""


def _computed(lines: list[str], errors: str | None, indent: int, fallback: str) -> str:
    """``lines`` at ``indent``, inside ``try: ... except errors: return fallback`` when
    the float function may raise (the generic path then decides)."""
    pad = " " * indent
    if errors is None:
        return "\n".join(pad + line for line in lines)
    return "\n".join([pad + "try:", *(pad + "    " + line for line in lines),
                      f"{pad}except {errors}:", f"{pad}    return {fallback}"])


#: op name -> (its value, the float errors it may raise, the tangent ``t * f'(p)``).
_UNARY_RULES = {
    "sin": ("sin(p)", "ValueError", "t * cos(p)"),  # (sin(inf) raises)
    "cos": ("cos(p)", "ValueError", "t * -sin(p)"),
    "tanh": ("tanh(p)", None, "t * (1.0 - ans * ans)"),
    "exp": ("exp(p)", "OverflowError", "t * ans"),
}
#: op name -> (value and tangent for a float ``y``, the float errors they may raise,
#: value and tangent for a dual ``y`` of the same tag, or None: the generic path).
#: ``gx * 1.0`` is written ``gx`` and ``gy * -1.0`` as a subtraction: the same bits.
_BINARY_RULES = {
    "add": (("px + y", "gx"), None, ("px + py", "gx + gy")),
    "subtract": (("px - y", "gx"), None, ("px - py", "gx - gy")),
    "multiply": (("px * y", "gx * y"), None, ("px * py", "gx * py + gy * px")),
    "power": (("pow(px, y)", "gx * (0.0 if y == 0.0 else y * pow(px, y - 1.0))"),
              "(ValueError, OverflowError, ZeroDivisionError)", None),
}
_FLOAT_FUNCTIONS = {"sin": math.sin, "cos": math.cos, "tanh": math.tanh, "exp": math.exp,
                    "pow": math.pow}


def _tuned_maker(template: str, name: str, **fields: str) -> Any:
    """The maker of op ``name``'s tuned function (given the generic one to fall back to)."""
    maker = generate(template.format(name=name, **fields), f"_tuned_{name}",
                     {"Dual": Dual, "_NEW": _NEW, **_FLOAT_FUNCTIONS}, __name__)

    def make(generic: Any) -> Any:
        fn = maker(generic)
        fn.__qualname__ = f"_tuned_{name}"
        return fn

    return make


def _unary_maker(name: str) -> Any:
    value, errors, tangent = _UNARY_RULES[name]
    return _tuned_maker(_UNARY_TEMPLATE, name, tangent=tangent,
                        primal=_computed([f"ans = {value}"], errors, 12, "generic(x)"))


def _binary_maker(name: str) -> Any:
    (value, tangent), errors, dual = _BINARY_RULES[name]
    primal = _computed([f"ans = {value}", f"tangent = {tangent}"], errors, 20, "generic(x, y)")
    return _tuned_maker(_BINARY_TEMPLATE, name, primal=primal, dual="" if dual is None else
                        _DUAL_OPERAND.format(primal=dual[0], tangent=dual[1]))


#: op record -> the maker of its tuned function (given the generic one to fall back to).
TUNED_UNARY = {op: _unary_maker(op.name) for op in (_ew.SIN, _ew.COS, _ew.TANH, _ew.EXP)}
TUNED_BINARY = {op: _binary_maker(op.name)
                for op in (_ew.ADD, _ew.SUBTRACT, _ew.MULTIPLY, _ew.POWER)}


def tuned_unary(op: Any, generic: Any) -> Any:
    """The dual kind's function for ``op``: the tuned one when there is one, else
    ``generic``.

    Examples
    --------
    >>> from wengert.ops import elementwise as ew
    >>> sin = tuned_unary(ew.SIN, DUAL.generic_unary(ew.SIN))
    >>> sin(Dual(0.0, 2.0))
    Dual(0.0, 2.0)
    """
    make = TUNED_UNARY.get(op)
    if make is None:
        return generic
    return make(generic)


def tuned_binary(op: Any, generic: Any) -> Any:
    """As :func:`tuned_unary` for a two-input op.

    Examples
    --------
    >>> from wengert.ops import elementwise as ew
    >>> mul = tuned_binary(ew.MULTIPLY, DUAL.generic_binary(ew.MULTIPLY))
    >>> mul(Dual(3.0, 1.0), 2.0)
    Dual(6.0, 2.0)
    """
    make = TUNED_BINARY.get(op)
    if make is None:
        return generic
    return make(generic)
# ============================================================ end of the tuned fast path


#: The dual-number kind (registered for :class:`Dual`).
DUAL = DualKind()
register(Dual, DUAL)
# Dual numbers' operators and np.* ufuncs call the dual kind's functions directly.
_dispatch.specialise(Dual, DUAL, _FAST_UFUNCS)


def _in_place_operator(fn: Any, what: str) -> Any:
    """``d op= other`` computed with ``fn`` (the operator's function): a dual holding an
    array is updated in place; a scalar (float primal, immutable) is rebound."""

    def method(self: Dual, other: Any) -> Any:
        new = fn(self, other)
        return new if type(self.primal) is float else _in_place(self, new, what)

    return method


# The in-place operators compute with the same functions as the operators.
for _name, _fn, _what in (
    ("__iadd__", Dual.__add__, "+="), ("__isub__", Dual.__sub__, "-="),
    ("__imul__", Dual.__mul__, "*="), ("__itruediv__", Dual.__truediv__, "/="),
    ("__ipow__", Dual.__pow__, "**="), ("__ifloordiv__", _ew.floor_divide, "//="),
    ("__imod__", _ew.mod, "%="), ("__imatmul__", _linalg.matmul, "@="),
):
    setattr(Dual, _name, _in_place_operator(_fn, _what))
    getattr(Dual, _name).__name__ = _name
    getattr(Dual, _name).__qualname__ = f"Dual.{_name}"
del _name, _fn, _what
