"""In-place operations on tensors (``+=``, ``x[i] = v``, ``out=``) and their safety checks.

An in-place op computes its result out of place, records it like any op, then
writes the result into the tensor's own storage and bumps its version counter.
Nodes recorded earlier that read the old value notice the new version and make
``backward()`` raise instead of returning a wrong gradient. The in-place op's
own node keeps a private copy of the old value when its rule needs it.

Views (slices, reshapes, transposes, ...) share their base's memory and version
counter. An in-place op on a view writes through to its base, recorded as the
base with the view's part replaced (``base[index] = ...``, or the inverse
reshape or permutation), up a chain of views to the tensor that owns the
memory. After an in-place op on a base, each live view's history is re-derived
from the new base (as PyTorch regenerates a view's ``grad_fn``), so a view used
later differentiates what it now holds.

A tensor whose value is a traced value of an outer level (a dual number under
``wg.hessian``, an outer tensor under ``wg.jacrev(wg.grad(f))``) is a view when
NumPy would have made one of the plain values beneath (:func:`shares_storage`).
Those values are never written in place: the tensor is given the new value, and
its views re-derive theirs from it, which is what memory sharing gives plain
arrays. Dual numbers use :func:`write_back` and :func:`shares_storage` for
their own views (see :mod:`wengert.forward.dual`).

Under :func:`wengert.no_grad` an in-place op only changes the data (an
optimizer step): the tensor keeps ``requires_grad`` and its history.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from wengert.core.bind import apply, example, is_complex, is_traced, kind_of, primal, shape_of
from wengert.core.errors import LeafInplaceError, LostDerivativeError
from wengert.core.modes import GRAD_ENABLED, RECORDERS
from wengert.core.node import new_version
from wengert.ops import broadcast as _bc
from wengert.ops import elementwise as _ew
from wengert.ops import indexing as _ix
from wengert.ops import shape as _shape
from wengert.ops.linalg import basic as _linalg

__all__ = ["InPlaceMethods", "assign_result", "setitem", "track_view", "shares_storage",
           "is_view", "read_only_part", "written_by_numpy", "PART_VIEWS", "write_back",
           "keep_layout", "traced_mask", "masked_write", "link_view", "rederive_views"]

_ndarray = np.ndarray


def _operator_method(function: Any, what: str) -> Any:
    """The in-place operator ``what`` (``"+="``) that computes with ``function``."""

    def method(self: Any, other: Any) -> Any:
        return _operator(self, function(self, other), what)

    return method


class InPlaceMethods:
    """Mixin: the in-place operators of tensors."""

    __slots__ = ()

    __iadd__ = _operator_method(_ew.add, "+=")
    __isub__ = _operator_method(_ew.subtract, "-=")
    __imul__ = _operator_method(_ew.multiply, "*=")
    __itruediv__ = _operator_method(_ew.divide, "/=")
    __ipow__ = _operator_method(_ew.power, "**=")
    __imatmul__ = _operator_method(_linalg.matmul, "@=")
    __ifloordiv__ = _operator_method(_ew.floor_divide, "//=")
    __imod__ = _operator_method(_ew.mod, "%=")
    __iand__ = _operator_method(np.bitwise_and, "&=")
    __ior__ = _operator_method(np.bitwise_or, "|=")
    __ixor__ = _operator_method(np.bitwise_xor, "^=")
    __ilshift__ = _operator_method(np.left_shift, "<<=")
    __irshift__ = _operator_method(np.right_shift, ">>=")

    def __setitem__(self, index: Any, value: Any) -> None:
        setitem(self, index, value)


def _operator(t: Any, result: Any, what: str) -> Any:
    """``t op= v``: where NumPy's value would be a scalar (``np.sum`` gives an immutable
    ``np.float64``), the name is rebound to ``result``, as NumPy code expects; an array,
    and a leaf (an optimizer step on a scalar parameter, as in PyTorch), is updated in
    place."""
    if t._node is not None and type(example(t)) is not _ndarray:
        return result
    return assign_result(t, result, what)


# -- views: which results share memory, and how a view's new value reaches its base ---------
def _storage(a: np.ndarray) -> Any:
    """The array at the end of ``a``'s chain of bases (the one whose memory it uses)."""
    b = a.base
    while isinstance(b, _ndarray):
        a = b
        b = a.base
    return a


def shares_storage(out: Any, source: Any) -> bool:
    """Whether ``out`` uses ``source``'s memory: NumPy made it a view, judged on the plain
    arrays beneath every traced layer (a tensor's value, a dual number's primal).

    Parameters
    ----------
    out, source : array_like or traced value
        An op's result and its input.

    Returns
    -------
    bool
        ``True`` when both plain values are arrays over the same memory.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> shares_storage(x.T, x), shares_storage(x.T.reshape(-1), x), shares_storage(x[0, 0], x)
    (True, False, False)
    """
    a = out if type(out) is _ndarray else example(out)
    b = source if type(source) is _ndarray else example(source)
    if a is b and isinstance(a, _ndarray):  # the same array (np.squeeze with nothing to do)
        return True
    if not isinstance(a, _ndarray) or a.base is None:  # (owns its memory: not a view)
        return False
    return isinstance(b, _ndarray) and _storage(a) is _storage(b)


#: Ops whose NumPy result is a view of a complex input (``np.real``, ``np.imag``) although
#: wengert computes a new array: a write into it is written back (see :func:`is_view`).
PART_VIEWS = (_ew.REAL, _ew.IMAG)


def is_view(op: Any, out: Any, source: Any) -> bool:
    """Whether NumPy's ``op(source)`` is a view of ``source``, so that writes into the
    result reach ``source``: a view op's result over its memory (:func:`shares_storage`),
    or the real or imaginary parts of a complex array, which wengert computes as a new
    array (``np.real`` and ``np.imag`` return views of a complex array: ``z.imag[:] = v``
    writes into ``z``). The imaginary part of a real array counts as one too: NumPy
    returns it read-only (:func:`read_only_part`), so a write into it must reach
    :func:`write_back`, which refuses it.

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.ops import elementwise as ew
    >>> z = np.array([1 + 2j])
    >>> is_view(ew.IMAG, ew.IMAG.impl(z), z), is_view(ew.REAL, ew.REAL.impl(z.real), z.real)
    (True, False)
    """
    if op.view:
        return shares_storage(out, source)
    if op in PART_VIEWS:
        v = source if type(source) is _ndarray else example(source)
        return isinstance(v, _ndarray) and (v.dtype.kind == "c" or op is _ew.IMAG)
    return False


def read_only_part(op: Any, base: Any) -> bool:
    """Whether ``op(base)`` is the imaginary part of a real array: NumPy returns a new
    read-only array of zeros (``x.imag[0] = 1`` raises ``ValueError: assignment
    destination is read-only``), which does not share ``base``'s memory.

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.ops import elementwise as ew
    >>> read_only_part(ew.IMAG, np.ones(2)), read_only_part(ew.IMAG, np.ones(2) + 0j)
    (True, False)
    """
    return op is _ew.IMAG and not is_complex(base)


def _dense(a: np.ndarray) -> bool:
    """Whether ``a`` fills its memory without gaps (in some order of its axes)."""
    step = a.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n > 1):
        if stride != step:
            return False
        step *= n
    return True


def keep_layout(old: Any, new: Any) -> Any:
    """``new`` laid out in memory as ``old`` is (C order, Fortran order, ...).

    An in-place update keeps a NumPy array's memory, and whether a later
    reshape or ravel is a view depends on its layout; a value computed out of
    place (``x.T @ m`` written back through a transpose) may have another. So
    the new value of an array updated in place is copied into the old one's
    layout when they differ (``setitem`` of the whole array: recorded, and
    differentiated as the identity).

    Parameters
    ----------
    old, new : array_like or traced value
        The value before the update, and the value computed for it (same shape).

    Returns
    -------
    ``new``, or a copy of it laid out as ``old``.

    Examples
    --------
    >>> import numpy as np
    >>> old = np.zeros((2, 3))
    >>> keep_layout(old, np.ones((3, 2)).T).flags.c_contiguous
    True
    """
    a = primal(old)
    b = primal(new)
    if isinstance(a, _ndarray) and isinstance(b, _ndarray) and a.size > 1 \
            and a.shape == b.shape and a.strides != b.strides and _dense(a):
        return apply(_ix.SETITEM, old, new, index=Ellipsis)
    return new


#: View ops whose NumPy view is read-only, with the spelling that works instead.
_READ_ONLY = {
    "diagonal": "d = np.diagonal(x).copy() (a copy), or x[np.diag_indices(n)] += ... (the base)",
    "broadcast_to": "np.broadcast_to(x, shape).copy() (a copy)",
}


def write_back(op: Any, params: dict[str, Any] | None, base: Any, value: Any, what: str) -> Any:
    """``base``'s new value once its view ``op(base, **params)`` holds ``value``.

    Computed out of place with wengert's ops, so it is recorded and
    differentiated like any other step: ``base`` with the slice replaced for a
    basic-indexing view, the inverse reshape, permutation or flip for the others.

    Parameters
    ----------
    op : Op
        The view op (``getitem``, ``reshape``, ``transpose``, ``swapaxes``,
        ``moveaxis``, ``squeeze``, ``expand_dims``, ``flip``).
    params : dict or None
        Its params when the view was made.
    base : array_like or traced value
        The base's current value.
    value : array_like or traced value
        What the view holds now (the view's shape).
    what : str
        The in-place operation, for messages (``"+="``).

    Returns
    -------
    The base's new value (a new object: nothing is written in place).

    Raises
    ------
    ValueError
        For the views NumPy makes read-only (``diagonal``, ``broadcast_to``).
    TypeError
        For a view op wengert cannot write back through.

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.ops import REGISTRY
    >>> y = np.zeros((2, 3))
    >>> write_back(REGISTRY["transpose"], None, y, np.arange(6.0).reshape(3, 2), "+=")
    array([[0., 2., 4.],
           [1., 3., 5.]])
    >>> write_back(REGISTRY["getitem"], {"index": (0, slice(1, None))}, y, np.ones(2), "+=")
    array([[0., 1., 1.],
           [0., 0., 0.]])
    """
    p = params or {}
    if op is _ix.GETITEM:
        return apply(_ix.SETITEM, base, value, index=p["index"])
    if op is _shape.RESHAPE or op is _bc.RESHAPE_TO or op is _shape.SQUEEZE \
            or op is _shape.EXPAND_DIMS:
        return _bc.reshape_to(value, shape_of(base))
    if op is _shape.TRANSPOSE:
        axes = p.get("axes")
        return _shape.transpose(value, None if axes is None else
                                tuple(int(a) for a in np.argsort(axes)))
    if op is _shape.SWAPAXES:
        return _shape.swapaxes(value, p["axis1"], p["axis2"])
    if op is _shape.MOVEAXIS:
        return _shape.moveaxis(value, p["destination"], p["source"])
    if op is _shape.FLIP:
        return _shape.flip(value, p.get("axis"))
    if op is _ew.REAL:  # (a complex base's real parts: its imaginary parts kept)
        return _ew.add(value, _ew.multiply(_ew.imag(base), 1j))
    if op is _ew.IMAG:
        if read_only_part(op, base):
            raise ValueError(
                f"in-place {what} into the imaginary part of a real array, which NumPy "
                "returns as a new read-only array of zeros (ValueError: assignment "
                "destination is read-only): the write could not reach the array. Make it "
                "complex first (z = x + 0j, then z.imag[...] = v), or write into a copy "
                "(x.imag.copy())."
            )
        return _ew.add(_ew.real(base), _ew.multiply(value, 1j))
    fix = _READ_ONLY.get(op.name)
    if fix is not None:
        raise ValueError(
            f"in-place {what} through the view that {op.name} returned: NumPy makes that view "
            f"read-only (ValueError: output array is read-only). Write {fix} instead."
        )
    raise TypeError(
        f"in-place {what} through a view made by {op.name!r}, which wengert cannot write back "
        f"to its base; compute the value out of place (y = {op.name}(x) + 1, or x.copy() "
        "first) instead."
    )


def link_view(base: Any, view: Any, op: Any, params: Any) -> None:
    """``view`` (made by ``op`` with ``params`` from ``base``) shares ``base``'s memory in
    NumPy terms, for values with ``_base`` and ``_views`` slots (dual numbers, graph
    tracers): the view holds its base, the base weak references to its views."""
    view._base = (base, op, params)
    refs = getattr(base, "_views", None)
    if refs is None:
        base._views = [weakref.ref(view)]
        return
    refs.append(weakref.ref(view))
    n = len(refs)
    if n >= 16 and not n & (n - 1):  # at 16, 32, 64, ... entries: forget the dead views
        refs[:] = [r for r in refs if r() is not None]


def rederive_views(base: Any, set_value: Any) -> None:
    """Give every live view of ``base`` (linked by :func:`link_view`; their views too, no
    recursion) its part of the base's new value: ``set_value(view, new)``."""
    todo = [base]
    while todo:
        b = todo.pop()
        refs = getattr(b, "_views", None)
        if refs is None:
            continue
        live = [v for v in (r() for r in refs) if v is not None]
        for view in live:
            _, op, params = view._base
            set_value(view, apply(op, b, **params) if params else apply(op, b))
            todo.append(view)
        b._views = [weakref.ref(v) for v in live]  # (not the values apply just made)


def _freeze(t: Any) -> None:
    """Make tensor ``t``'s own array read-only (the imaginary part of a real array, as
    NumPy's): NumPy's functions writing into it (``np.copyto``) then refuse, in NumPy's
    words."""
    v = t._value
    if type(v) is _ndarray and v.base is None:
        v.flags.writeable = False


def track_view(base: Any, view: Any, op: Any, params: Any) -> None:
    """Note that tensor ``view`` (made by ``op`` with ``params``) shares ``base``'s memory.

    The view holds its base (as a NumPy view holds ``.base``); the base holds
    weak references to its views.
    """
    if read_only_part(op, base):  # (zeros of their own: base's writes do not reach them)
        holder = view._version
        _freeze(view)
    else:
        holder = view._version = base._version
    node = view._node
    if node is not None and node.extra is not None:
        # Its output is the base's memory: a viewer checks the base's version (see
        # core.tape.overwritten). Nodes recorded in the view-keeping mode have extras.
        node.extra["out_seen"] = (holder, holder.version)
    link = (base, op, params)
    extra = view._extra
    if extra is None:
        view._extra = {"view_of": link}
    else:
        extra["view_of"] = link
    ref = weakref.ref(view)
    extra = base._extra
    if extra is None:
        base._extra = {"views": [ref]}
        return
    refs = extra.get("views")
    if refs is None:
        extra["views"] = [ref]
        return
    refs.append(ref)
    n = len(refs)
    if n >= 16 and not n & (n - 1):  # at 16, 32, 64, ... entries: forget the dead views
        refs[:] = [r for r in refs if r() is not None]


def _check_leaf(t: Any, what: str) -> None:
    if t._rg and t._node is None and GRAD_ENABLED.get():
        raise LeafInplaceError(
            f"a leaf Variable that requires grad is being used in an in-place operation ({what}). "
            "Do it out of place (x = x + 1), or under wg.no_grad() to update the leaf's value "
            "(as an optimizer step does)."
        )


def _recorded(x: Any) -> bool:
    return kind_of(x) is not None and getattr(x, "_node", None) is not None


def _live_views(t: Any) -> list[Any]:
    extra = t._extra
    refs = extra.get("views") if extra else None
    if not refs:
        return []
    views = [v for v in (r() for r in refs) if v is not None]
    extra["views"] = [weakref.ref(v) for v in views]
    return views


def _rederive_views(base: Any) -> None:
    """Give every live view of ``base`` (and their views) a history from the new base,
    and the new value when the view's old one does not share the base's memory."""
    todo = [base]
    while todo:
        b = todo.pop()
        views = _live_views(b)
        for view in views:
            _, op, params = view._extra["view_of"]
            new = apply(op, b, **(params or {}))
            if new._node is not None:
                view._node = new._node
                view._rg = new._rg
                _follow_retain(view)
                view._level = new._level  # (the base may have joined a transform)
            if not shares_storage(view._value, new._value) or is_traced(new._value):
                view._value = new._value
                if read_only_part(op, b):
                    _freeze(view)
            todo.append(view)
        if views:  # (the tensors just made are views of b too: forget them)
            b._extra["views"] = [weakref.ref(v) for v in views]


def _follow_retain(t: Any) -> None:
    """A tensor that retains its gradient (``retain_grad()``) and has a new node now (an
    in-place update of it or of its base) retains the gradient of its new value."""
    extra = t._extra
    retain_at = extra.get("retains") if extra else None
    if retain_at is not None and t._node is not None:
        retain_at(t._node)


def _keep_saved(node: Any, old: Any, counter: Any, t: Any = None) -> None:
    """Before the tensor's value ``old`` is overwritten (or replaced): the in-place op's
    own node keeps private copies of the values it saved from it, from its memory or under
    its version counter (a view: ``np.multiply(y, y[::-1], out=y)``, ``y[:3] *= y[3:]``
    then ``y[3:] += 1``), and stops checking their version (the bump is the op's own). A
    tensor ``t`` of an outer level (a constant to the op) is saved as itself: it keeps a
    snapshot of ``t`` as it was, or the rule would read what is written into it (``a *=
    x``: ``g·a`` read ``x``)."""
    reads = node.op.reads
    for i, r in enumerate(node.inputs()):
        if i not in reads:
            continue
        if isinstance(r, np.ndarray) and (r is old or node.edge(i)[2] is counter or (
                type(old) is np.ndarray and np.may_share_memory(r, old))):
            node.set_input(i, r.copy())
        elif t is not None and r is t:
            node.set_input(i, _snapshot(t, old))
    for i in range(node.nin):
        if node.edge(i)[2] is counter:
            node.drop_check(i)


def _keep_saved_all(result: Any, old: Any, counter: Any, t: Any) -> None:
    """:func:`_keep_saved` for ``result``'s node and those of the levels beneath it (a
    value of nested transforms is a tensor of each level, each node of which saved an
    outer-level ``t`` as itself)."""
    v = result
    while type(v) is type(t):
        if v._node is not None:
            _keep_saved(v._node, old, counter, t)
        v = v._value


def _snapshot(t: Any, old: Any) -> Any:
    """A tensor holding ``t``'s value ``old`` (a copy of its memory) with ``t``'s history."""
    s = object.__new__(type(t))
    s._value = old.copy() if isinstance(old, np.ndarray) else old
    s._node = t._node
    s._rg = t._rg
    s._version = new_version()
    s._extra = None
    s._level = t._level
    return s


def _holds_a_copy(t: Any) -> bool:
    """Whether tensor ``t`` is a view in NumPy's terms whose value wengert holds as a new
    array (the real or imaginary part of a complex array, see :func:`is_view`, or a view
    of one): a write into it reaches its base only when written back, and it follows its
    base only when made again from it."""
    extra = t._extra
    link = extra.get("view_of") if extra else None
    while link is not None:  # (up the chain of views: a slice of such a part is one too)
        if link[1] in PART_VIEWS:
            return True
        extra = link[0]._extra
        link = extra.get("view_of") if extra else None
    return False


def written_by_numpy(t: Any) -> None:
    """Tensor ``t``'s array was just written by a NumPy function (``np.copyto(t, v)``,
    ``np.put``): a part of a complex tensor, which wengert holds as an array of its own
    (see :func:`is_view`), passes what it now holds on to the tensor, as NumPy's view
    would."""
    if t._extra is not None and _holds_a_copy(t):
        assign_result(t, kind_of(t).constant(t._value.copy()), "a NumPy function's write")


def _writes_memory(old: Any, new: Any) -> bool:
    """Whether storing ``new`` copies it into ``old``'s memory (plain arrays), which
    a view's base sees without being told."""
    return isinstance(old, np.ndarray) and old.flags.writeable and not is_traced(new) \
        and np.shape(new) == old.shape


def assign_result(t: Any, result: Any, what: str) -> Any:
    """Make ``t`` hold ``result`` (computed out of place from ``t``) in place.

    A view writes through to its base (and the base's other views follow).
    """
    _check_leaf(t, what)
    kind = kind_of(result)
    if kind is None:
        result = kind_of(t).constant(result)
    elif type(result) is not type(t):
        raise LostDerivativeError(
            f"in-place {what}: this {kind_of(t).name} cannot hold a value computed from a "
            f"{kind.name} ({type(result).__name__}), whose derivative it would lose. Make "
            "the array from the traced values instead: a = np.zeros_like(x) (then a[i] = "
            "... works), or build it out of place (np.where, np.concatenate, wnp.array).")
    if result._node is None and not result._rg and GRAD_ENABLED.get() \
            and kind_of(t).connected(t):
        # numbers without a derivative (np.equal(x, y, out=t)) replace a value that
        # carries one: recorded as t[...] = result, so t's history stops flowing back
        # (it is kept only under no_grad: an optimizer step)
        result = apply(_ix.SETITEM, t, result, index=Ellipsis)
    extra = t._extra
    view_of = extra.get("view_of") if extra else None
    if view_of is not None and (
        (GRAD_ENABLED.get() and (t._rg or _recorded(result)))
        or not _writes_memory(t._value, result._value)
        or _holds_a_copy(t)
    ):
        _write_through(t, result, what)
        return t
    _store(t, result, what)
    return t


def _write_through(t: Any, result: Any, what: str) -> None:
    """``t`` is a view: its base (up the chain of views) gets ``result`` in ``t``'s place,
    computed out of place and recorded; then every view of that base follows."""
    _check_shape(t, result, what)
    cur = t
    value = result
    link = t._extra["view_of"]
    while link is not None:
        base, op, params = link
        value = write_back(op, params, base, value, what)
        if kind_of(value) is None:
            value = kind_of(base).constant(value)
        cur = base
        extra = cur._extra
        link = extra.get("view_of") if extra else None
    _keep_saved_all(result, t._value, t._version, t)
    _check_leaf(cur, what)
    _store(cur, value, what)


def _check_shape(t: Any, result: Any, what: str) -> None:
    old, new = shape_of(t._value), shape_of(result._value)
    if old != new:
        raise ValueError(
            f"in-place {what}: the result has shape {new} but the tensor has shape {old}; "
            "NumPy does not broadcast the target of an in-place operation."
        )


def _store(t: Any, result: Any, what: str) -> None:
    """``t`` (not a view, or the base at the end of a chain) holds ``result`` now."""
    _check_shape(t, result, what)
    old = t._value
    new = result._value
    node = result._node
    counter = t._version
    _keep_saved_all(result, old, counter, t)
    if _writes_memory(old, new):
        np.copyto(old, new, casting="same_kind")
        value = old
        if node is not None:
            node.out = new
    else:
        value = keep_layout(old, new)  # (values beneath: an outer level records the copy)
    if value is old or not is_traced(old):
        # The memory that earlier nodes saved was written: they must not be swept.
        # (A traced value beneath -- a dual number, an outer level's tensor -- is
        # replaced, never written, so what earlier nodes saved stays right.)
        counter.version += 1
    if node is not None:
        # Its output is t's storage, whose version holder stays t's: check that.
        if node.op.reads_out:
            node.extras()["out_check"] = (counter, counter.version)
        t._node = node
        t._rg = result._rg
        _follow_retain(t)
        # A value from inside a transform (a tensor made there, or a plain one, gets x's
        # sin): t now belongs to that transform's level, or its gradient would be lost.
        t._level = result._level
    # (Not recorded -- under no_grad, an optimizer step: t keeps requires_grad and history.)
    t._value = value
    extra = t._extra
    if extra and extra.get("views") and (node is not None or value is not old
                                         or any(_holds_a_copy(v) for v in _live_views(t))):
        _rederive_views(t)


def traced_mask(index: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``index`` is a boolean mask of ``shape`` computed by a graph tracer (its
    values are not known: ``t[mask] = v`` is then :func:`masked_write`)."""
    if not is_traced(index):
        return False
    beneath = primal(index)
    return is_traced(beneath) and np.dtype(beneath.dtype).kind == "b" \
        and tuple(shape_of(beneath)) == tuple(shape)


def masked_write(target: Any, mask: Any, value: Any) -> Any:
    """``target[mask] = value`` computed out of place as ``np.where(mask, value, target)``,
    which NumPy's assignment is when ``value`` is one number (else how many it takes
    depends on the data, which a traced mask does not tell)."""
    if int(np.prod(shape_of(value))) != 1:
        raise TypeError(
            "y[mask] = values with a mask computed from traced values: how many values it "
            "takes depends on the data, which a static graph cannot hold. Write "
            "y = np.where(mask, new_values, y) with new_values of y's shape."
        )
    v = value if is_traced(value) else np.asarray(value)
    dtype = target.dtype
    return _ew.where(primal(mask), _ew.astype(_bc.reshape_to(v, ()), dtype), target)


def setitem(t: Any, index: Any, value: Any) -> None:
    """``t[index] = value``, recorded so gradients reach both ``t`` and ``value``."""
    what = "__setitem__"
    _check_leaf(t, what)
    if traced_mask(index, shape_of(t)):
        assign_result(t, masked_write(t, index, value), what)
        return
    kind = kind_of(value)
    needs = GRAD_ENABLED.get() and (
        t._rg or _recorded(value) or (kind is not None and kind.connected(value))
        or bool(RECORDERS.get())
    )
    index = _ix.raw_index(index)
    old = t._value
    if not needs and not is_traced(old) and not is_traced(primal(value)) \
            and not _holds_a_copy(t):
        if isinstance(old, np.ndarray):
            old[index] = primal(value)  # a view's base sees it (shared memory)
            t._version.version += 1
            return
        arr = np.array(old)
        arr[index] = primal(value)
        t._value = arr
        t._version.version += 1
        return
    result = apply(_ix.SETITEM, t, value, index=index)
    assign_result(t, result, what)
