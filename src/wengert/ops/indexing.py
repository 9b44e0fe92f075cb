"""Indexing primitives: ``x[index]``, its adjoint (scatter-add) and ``x[index] = v``.

Indices are any NumPy index: ints (negative too), slices, ``Ellipsis``,
``None``, integer arrays (repeats allowed) and boolean masks, alone or in a
tuple. Tensors used as indices (a boolean mask from ``x > 0``, an integer
tensor) are read as constants. The index is a static parameter of the op, so
it never receives a gradient.

The gradient of ``x[index]`` scatters the cotangent back with ``np.add.at``,
so an element picked several times (``x[[0, 0, 1]]``) gets the sum of its
cotangents.

All three ops are linear in their differentiable inputs, so each JVP is the
op itself applied to the tangents (a missing tangent of ``setitem``'s ``x``
is zeros, of its ``v`` is 0).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op, Words
from wengert.ops.base import Family, apply, forward, is_traced, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.broadcast import reshape_to, sum_to

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("indexing")
# Every op here is linear: its rules hold for complex values as they are (complex_rules=True,
# see ops/elementwise.py).


def _raw_one(i: Any) -> Any:
    if type(i) is slice:
        if is_traced(i.start) or is_traced(i.stop) or is_traced(i.step):
            return slice(*[None if b is None else operator.index(_raw_one(b))
                           for b in (i.start, i.stop, i.step)])
        return i
    if is_traced(i):
        i = _raw(i)
        if is_traced(i):  # a graph tracer's value (opaque): the index must be static here
            return _static_index(i)
    if isinstance(i, list):
        i = np.asarray([_raw(e) for e in i]) if i else np.zeros(0, dtype=np.intp)
    return i


def _static_index(i: Any) -> Any:
    """A traced index part as a Python value: an integer (the trace records a guard), or a
    clear error where the graph would freeze a data-dependent choice."""
    kind = np.dtype(i.dtype).kind
    if kind == "b":
        raise TypeError(
            "x[mask] with a mask computed from traced values: the result's shape depends on "
            "the data, which a static graph cannot hold. Use np.where(mask, x, 0) (or a "
            "masked sum), or index outside the traced function; for y[mask] += v (which "
            "reads y[mask] first) write y = np.where(mask, y + v, y)."
        )
    if kind in "iu" and not i.shape:
        return operator.index(i)  # recorded as a guard: the graph holds for this index
    raise TypeError(
        "indexing with an integer array computed from traced values inside a tuple index: "
        "use np.take(x, i, axis=...) or np.take_along_axis, which take the indices as an "
        "input of the graph."
    )


def raw_index(index: Any) -> Any:
    """The index with tensors replaced by their values and lists by arrays."""
    if isinstance(index, tuple):
        return tuple(_raw_one(i) for i in index)
    return _raw_one(index)


def _frozen_index(index: Any) -> Any:
    """:func:`raw_index` with index arrays copied, so later changes to them
    cannot change a recorded op."""
    if type(index) in _BASIC:
        return index
    index = raw_index(index)

    def freeze(i: Any) -> Any:
        return i.copy() if isinstance(i, np.ndarray) and i.ndim else i

    if isinstance(index, tuple):
        return tuple(freeze(i) for i in index)
    return freeze(index)


def _parts(index: Any) -> tuple[Any, ...]:
    return index if isinstance(index, tuple) else (index,)


_BASIC = (slice, int, type(None), type(Ellipsis))


def _has_int_array(index: Any) -> bool:
    """Whether the index holds an integer array (which may repeat elements)."""
    if type(index) in _BASIC:
        return False
    return any(
        isinstance(i, np.ndarray) and i.ndim > 0 and i.dtype.kind in "iu" for i in _parts(index)
    )


def _is_advanced(index: Any) -> bool:
    if type(index) in _BASIC:
        return False
    return any(
        isinstance(i, np.ndarray) and (i.ndim > 0 or i.dtype == bool) for i in _parts(index)
    )


# -- getitem and scatter_add ---------------------------------------------------------
def _getitem_impl(x: Any, index: Any) -> Any:
    if type(x) is np.ndarray and type(index) in _BASIC:
        return x[index]  # a view, or a NumPy scalar for a full integer index
    out = np.asarray(x)[index]
    if isinstance(out, np.ndarray) and out.base is not None and _is_advanced(index):
        # Advanced indexing copies, but NumPy may hand back a view of its own
        # temporary; a fresh array keeps ``view`` bookkeeping exact.
        out = out.copy()
    return out


def _getitem_vjp(g: Any, ans: Any, x: Any, index: Any) -> Any:
    return apply(SCATTER_ADD, g, shape=shape_of(x), index=index)


def _scatter_add_impl(g: Any, shape: Any, index: Any) -> Any:
    out = np.zeros(shape, dtype=g.dtype if type(g) is np.ndarray else np.result_type(g))
    if _has_int_array(index):
        np.add.at(out, index, g)
    else:
        out[index] = g  # slices, ints and masks never pick an element twice
    return out


def _getitem_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    x = rng.normal(size=(4, 3, 2))
    mask = np.array([[True, False, True], [False, False, True], [True, True, False],
                     [False, True, False]])
    indices = [
        1, -1, slice(1, 3), slice(None, None, -2), (Ellipsis, 0), (None, slice(None), 1),
        np.array([0, 0, 3, 1]), (np.array([0, 2]), slice(None), np.array([1, 1])),
        mask, (mask, 1), (Ellipsis, None), (slice(0, 2), np.array([[0, 2], [2, 2]])),
        (-2, np.array([1, 0, 1]), 0), np.array([True, False, True, True]),
    ]
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((x,), {"index": i}) for i in indices]
    cases.append(((rng.normal(size=5),), {"index": np.array([4, 4, 4, 0])}))
    cases.append(((rng.normal(size=()),), {"index": None}))
    return cases


def _scatter_add_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [
        ((rng.normal(size=(2, 2)),), {"shape": (4, 2), "index": slice(1, 3)}),
        ((rng.normal(size=(4,)),), {"shape": (3,), "index": np.array([0, 2, 0, 0])}),
        ((rng.normal(size=(3,)),), {"shape": (2, 3), "index": 1}),
        ((rng.normal(size=(2,)),), {"shape": (2, 2),
                                    "index": np.array([[True, False], [False, True]])}),
    ]


def _getitem_jvp(tangents: Any, ans: Any, x: Any, index: Any) -> Any:
    t = tangents[0]
    if type(t) is np.ndarray:  # what apply does with a plain array
        return forward(GETITEM, (t,), {"index": index})
    return apply(GETITEM, t, index=index)


def _scatter_add_jvp(tangents: Any, ans: Any, h: Any, shape: Any, index: Any) -> Any:
    t = tangents[0]
    if type(t) is np.ndarray:  # what apply does with a plain array
        return forward(SCATTER_ADD, (t,), {"shape": shape, "index": index})
    return apply(SCATTER_ADD, t, shape=shape, index=index)


def _subject(s: JaxStep) -> str:
    """Input 0 as a JAX expression that can be indexed (a literal becomes a JAX array)."""
    return f"jnp.asarray({s.args[0]})" if s.is_literal(0) else s.args[0]


def _getitem_jax(s: JaxStep) -> str:
    """``x[index]``."""
    return f"{_subject(s)}[{s.index(s.params['index'])}]"


def _scatter_add_jax(s: JaxStep) -> str:
    """``jnp.zeros(shape, dtype).at[index].add(h)``."""
    index = s.index(s.params["index"])
    shape = tuple(s.params["shape"])
    return f"jnp.zeros({shape!r}, {s.dtype_text(s.out_dtype)}).at[{index}].add({s.args[0]})"


GETITEM = Op("getitem", _getitem_impl, (_getitem_vjp,), jvp=_getitem_jvp, symbol="[]", view=True,
             formula="adjoint: scatter-add ḡ into zeros (repeats add up)",
             adjoint=("ḡ scattered into zeros at [{index}]",),
             samples=_getitem_samples,
             spelling="indexing x[...]", complex_rules=True, jax=_getitem_jax,
             words=Words(copies=True))
FAMILY.op(GETITEM)
SCATTER_ADD = Op("scatter_add", _scatter_add_impl,
                 (lambda g, ans, h, shape, index: apply(GETITEM, g, index=index),),
                 jvp=_scatter_add_jvp,
                 formula="zeros with h added at index; adjoint: gather ḡ[index]",
                 adjoint=("ḡ[{index}]",),
                 samples=_scatter_add_samples, complex_rules=True, jax=_scatter_add_jax)
FAMILY.op(SCATTER_ADD)


# -- setitem ---------------------------------------------------------------------------
def _setitem_impl(x: Any, v: Any, index: Any) -> Any:
    out = np.array(x, copy=True)
    out[index] = v
    return out


def _setitem_dx(g: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    return apply(SETITEM, g, 0.0, index=index)


def _written(shape: tuple[int, ...], index: Any) -> np.ndarray | None:
    """Which elements of the broadcast value survive ``x[index] = value``.

    With repeated integer indices NumPy keeps the last write; the earlier
    ones are overwritten and get no gradient. ``None`` when all survive.
    """
    if not _has_int_array(index):
        return None
    slots = np.full(shape, -1, dtype=np.intp)
    target = slots[index].shape
    ids = np.arange(int(np.prod(target, dtype=np.int64)), dtype=np.intp).reshape(target)
    slots[index] = ids
    kept = slots[index] == ids
    return None if kept.all() else kept


def _setitem_dv(g: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    gv = apply(GETITEM, g, index=index)
    kept = _written(np.shape(_raw(x)), index)
    if kept is not None:
        gv = gv * kept
    vshape = np.shape(_raw(v))
    extra = len(vshape) - np.ndim(_raw(gv))
    if extra > 0:  # NumPy accepts leading unit axes on the value
        gv = reshape_to(gv, (1,) * extra + np.shape(_raw(gv)))
    return sum_to(gv, vshape)


def _setitem_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    n = rng.normal
    mask = np.array([[True, False, True], [False, True, True]])
    return [
        ((n(size=(4, 3)), n(size=(3,))), {"index": 0}),
        ((n(size=(4, 3)), n(size=(2, 1))), {"index": slice(1, 3)}),
        ((n(size=(5,)), n(size=(3,))), {"index": np.array([0, 2, 0])}),
        ((n(size=(5,)), n()), {"index": np.array([1, 1, 3])}),
        ((n(size=(2, 3)), n(size=(4,))), {"index": mask}),
        ((n(size=(2, 3)), n()), {"index": mask}),
        ((n(size=(3, 4)), n(size=(1, 2))), {"index": (Ellipsis, np.array([3, 1]))}),
        ((n(size=(3,)), n(size=(1, 2))), {"index": slice(0, 2)}),
        ((n(size=(4, 2)), n(size=(3, 2))), {"index": (np.array([2, 0, 2]), slice(None))}),
    ]


def _setitem_jvp(tangents: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    tx, tv = tangents
    if tx is None:  # zeros of x's shape, in the output's dtype (x's, as the forward casts v)
        a = _raw(ans)
        tx = np.zeros(np.shape(a), dtype=np.result_type(a))
    return apply(SETITEM, tx, 0.0 if tv is None else tv, index=index)


def _setitem_jax(s: JaxStep) -> str:
    """``x.at[index].set(v)``; where an integer index repeats a place, ``_setitem_last``
    (the last write wins, as NumPy's)."""
    index = s.params["index"]
    xshape = s.shape(0)
    slots = np.full(xshape, -1, dtype=np.intp)
    target = slots[index].shape
    ids = np.arange(int(np.prod(target, dtype=np.int64)), dtype=np.intp).reshape(target)
    slots[index] = ids
    kept = slots[index] == ids
    if not kept.all():  # a repeated integer index: the last write wins
        s.helper("_setitem_last")
        written = s.constant(slots >= 0)
        where = s.constant(np.maximum(slots, 0))
        return f"_setitem_last({_subject(s)}, {s.args[1]}, {written}, {where}, {target!r})"
    v = s.args[1]
    vshape = s.shape(1)
    if len(vshape) > len(target):  # NumPy accepts leading unit axes on the value
        v = f"jnp.reshape({v}, {vshape[len(vshape) - len(target):]!r})"
    return f"{_subject(s)}.at[{s.index(index)}].set({v})"


SETITEM = Op("setitem", _setitem_impl, (_setitem_dx, _setitem_dv), jvp=_setitem_jvp, symbol="[]=",
             formula="x̄ = ḡ with the written places zeroed; v̄ = ḡ[index] (last write wins) "
                     "summed to v's shape",
             adjoint=("ḡ with [{index}] zeroed", "ḡ[{index}] summed to the shape of {1}"),
             samples=_setitem_samples,
             spelling="item assignment x[...] = v", complex_rules=True, jax=_setitem_jax)
FAMILY.op(SETITEM)


# -- public functions ----------------------------------------------------------------
def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` for slices, ints, integer arrays, masks, Ellipsis and None."""
    return apply(GETITEM, x, index=_frozen_index(index))
