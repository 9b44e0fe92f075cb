"""Shape primitives (reshape, transpose, concatenate, take, sort, ...): forward, JVP, VJP.

Every adjoint here is again a shape primitive (reshape back, transpose back,
slice back, scatter-add back), so gradients of any order stay exact. Ops whose
NumPy forward returns a view of their input are marked ``view=True``.
Concatenate and stack are variadic: their rules are :class:`PerInput`, which
hands input ``i`` the rule ``rule(i, g, ans, *inputs, **params)``.

All of them but ``sort`` are linear in their (first, or every) differentiable
input, so their JVP is the op itself applied to the tangent (:func:`~wengert.ops.base.linear`);
``sort`` applies its argsort permutation to the tangent.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np
from wengert.core.bind import kind_of
from wengert.core.forms import JaxStep
from wengert.core.op import Op, PerInput, Words
from wengert.ops import elementwise as _ew
from wengert.ops import indexing as _ix
from wengert.ops.base import Family, apply, is_traced, linear, linear_variadic, no_out
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape_of
from wengert.ops.broadcast import reshape_to, sum_along, sum_to

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("shape")
# Every op here is linear: its rules hold for complex values as they are (complex_rules=True,
# see ops/elementwise.py); sort permutes, in NumPy's lexicographic order for complex values.


def _int_or_tuple(v: Any) -> Any:
    if v is None:
        return None
    v = _raw(v)
    if isinstance(v, (tuple, list, np.ndarray)) and np.ndim(v) > 0:
        return tuple(operator.index(a) for a in np.asarray(v).tolist())
    return operator.index(v)


def _cast(x: Any, dtype: Any) -> Any:
    return x if dtype is None else _ew.astype(x, dtype)


def _variadic(name: str, impl: Any, rule: Any, **kwargs: Any) -> Op:
    """An op taking any number of inputs (``nin == -1``), one rule for all of them (and one
    ``adjoint`` template, with ``{this}`` and ``{i}`` for the input it serves)."""
    return Op(name, impl, PerInput(rule), **kwargs)


# -- sample helpers ------------------------------------------------------------------------
def _n(rng: Any, *shape: int) -> np.ndarray:
    return rng.normal(size=shape)


def _distinct(rng: Any, *shape: int) -> np.ndarray:
    size = int(np.prod(shape, dtype=np.int64))
    return ((rng.permutation(size) - size / 2.0) * 0.35 + rng.uniform(0, 0.1, size)).reshape(shape)


# -- reshape, transpose and friends (views) ------------------------------------------------
RESHAPE = linear(Op("reshape", lambda x, shape: np.reshape(x, shape),
                     (lambda g, ans, x, shape: reshape(g, _shape_of(x)),),
                     formula="adjoint: reshape back", view=True,
                     adjoint=("ḡ reshaped to the shape of {0}",),
                     samples=lambda rng: [((_n(rng, 2, 3),), {"shape": (3, 2)}),
                                          ((_n(rng, 2, 3, 2),), {"shape": (-1,)}),
                                          ((_n(rng, 4),), {"shape": (2, -1, 1)}),
                                          ((np.float64(rng.normal()),), {"shape": (1, 1)})],
                                          jax="jnp.reshape({0}, shape={shape})",
                                          spelling=".reshape", complex_rules=True,
                                          words=Words(copies=True)))
FAMILY.op(RESHAPE)


def _transpose_vjp(g: Any, ans: Any, x: Any, axes: Any = None) -> Any:
    if axes is None:
        return transpose(g)
    return transpose(g, tuple(int(a) for a in np.argsort(axes)))


TRANSPOSE = linear(Op("transpose", lambda x, axes=None: np.transpose(x, axes), (_transpose_vjp,),
                       formula="adjoint: inverse permutation", symbol="ᵀ", view=True,
                       adjoint=("ḡᵀ (axes permuted back)",),
                       samples=lambda rng: [((_n(rng, 2, 3),), {}),
                                            ((_n(rng, 2, 3, 4),), {"axes": (1, 2, 0)}),
                                            ((_n(rng, 2, 3, 4),), {"axes": None})],
                                            jax="jnp.transpose({0}, axes={axes})",
                                            spelling=".T", complex_rules=True,
                                            words=Words(copies=True)))
FAMILY.op(TRANSPOSE)
SWAPAXES = linear(Op("swapaxes", lambda x, axis1, axis2: np.swapaxes(x, axis1, axis2),
                      (lambda g, ans, x, axis1, axis2: swapaxes(g, axis1, axis2),),
                      formula="adjoint: swap back", view=True,
                      adjoint=("ḡ with axes {axis1} and {axis2} swapped back",),
                      samples=lambda rng: [((_n(rng, 2, 3),), {"axis1": 0, "axis2": 1}),
                                           ((_n(rng, 2, 3, 4),), {"axis1": -1, "axis2": 0})],
                                           jax="jnp.swapaxes({0}, axis1={axis1}, axis2={axis2})",
                                           complex_rules=True))
FAMILY.op(SWAPAXES)
MOVEAXIS = linear(Op(
    "moveaxis", lambda x, source, destination: np.moveaxis(x, source, destination),
    (lambda g, ans, x, source, destination: moveaxis(g, destination, source),),
    formula="adjoint: move back", view=True,
    adjoint=("ḡ with axes moved from {destination} back to {source}",),
    samples=lambda rng: [
        ((_n(rng, 2, 3, 4),), {"source": 0, "destination": -1}),
        ((_n(rng, 2, 3, 4),), {"source": (0, -1), "destination": (-1, 1)}),
    ], jax="jnp.moveaxis({0}, source={source}, destination={destination})", complex_rules=True))
FAMILY.op(MOVEAXIS)
EXPAND_DIMS = linear(Op("expand_dims", lambda x, axis: np.expand_dims(x, axis),
                         (lambda g, ans, x, axis: reshape(g, _shape_of(x)),),
                         formula="adjoint: reshape back", view=True,
                         adjoint=("ḡ reshaped to the shape of {0}",),
                         samples=lambda rng: [((_n(rng, 3),), {"axis": 0}),
                                              ((_n(rng, 2, 3),), {"axis": -1}),
                                              ((_n(rng, 2, 3),), {"axis": (0, 2)}),
                                              ((np.float64(rng.normal()),), {"axis": 0})],
                                              jax="jnp.expand_dims({0}, axis={axis})",
                                              complex_rules=True))
FAMILY.op(EXPAND_DIMS)
SQUEEZE = linear(Op("squeeze", lambda x, axis=None: np.squeeze(x, axis),
                     (lambda g, ans, x, axis=None: reshape(g, _shape_of(x)),),
                     formula="adjoint: reshape back", view=True,
                     adjoint=("ḡ reshaped to the shape of {0}",),
                     samples=lambda rng: [((_n(rng, 1, 3, 1),), {"axis": None}),
                                          ((_n(rng, 1, 3, 1),), {"axis": -1}),
                                          ((_n(rng, 1, 3, 1),), {"axis": (0, 2)}),
                                          ((_n(rng, 1),), {"axis": None})],
                                          jax="jnp.squeeze({0}, axis={axis})", complex_rules=True))
FAMILY.op(SQUEEZE)
FLIP = linear(Op("flip", lambda x, axis=None: np.flip(x, axis),
                  (lambda g, ans, x, axis=None: flip(g, axis),),
                  formula="adjoint: flip back", view=True,
                  adjoint=("ḡ flipped back",),
                  samples=lambda rng: [((_n(rng, 4),), {"axis": None}),
                                       ((_n(rng, 2, 3),), {"axis": -1}),
                                       ((_n(rng, 2, 3, 2),), {"axis": (0, 2)}),
                                       ((_n(rng, 2, 3),), {"axis": None})],
                                       jax="jnp.flip({0}, axis={axis})", complex_rules=True))
FAMILY.op(FLIP)


def _neg_shift(shift: Any) -> Any:
    return tuple(-s for s in shift) if isinstance(shift, tuple) else -shift


ROLL = linear(Op("roll", lambda x, shift, axis=None: np.roll(x, shift, axis),
                  (lambda g, ans, x, shift, axis=None: roll(g, _neg_shift(shift), axis),),
                  formula="adjoint: roll back",
                  adjoint=("ḡ rolled back by {shift}",),
                  samples=lambda rng: [((_n(rng, 5),), {"shift": 2, "axis": None}),
                                       ((_n(rng, 2, 3),), {"shift": -1, "axis": None}),
                                       ((_n(rng, 2, 3),), {"shift": 4, "axis": -1}),
                                       ((_n(rng, 2, 3, 2),), {"shift": (1, -2), "axis": (0, 1)})],
                                       jax="jnp.roll({0}, shift={shift}, axis={axis})",
                                       complex_rules=True))
FAMILY.op(ROLL)


# -- tile, repeat ------------------------------------------------------------------------
def _tile_vjp(g: Any, ans: Any, x: Any, reps: tuple[int, ...]) -> Any:
    xs = _shape_of(x)
    d = builtins.max(len(reps), len(xs))
    s = (1,) * (d - len(xs)) + xs
    r = (1,) * (d - len(reps)) + tuple(reps)
    split = tuple(v for pair in zip(r, s) for v in pair)
    summed = sum_along(reshape_to(g, split), axis=tuple(range(0, 2 * d, 2)))
    return reshape_to(summed, xs)


TILE = linear(Op("tile", lambda x, reps: np.tile(x, reps), (_tile_vjp,),
                  formula="adjoint: sum the tiles",
                  adjoint=("the sum of ḡ's tiles",),
                  samples=lambda rng: [((_n(rng, 3),), {"reps": (2,)}),
                                       ((_n(rng, 2, 3),), {"reps": (2, 1, 3)}),
                                       ((_n(rng, 2, 1, 3),), {"reps": (2, 2)}),
                                       ((np.float64(rng.normal()),), {"reps": (3,)})],
                                       jax="jnp.tile({0}, reps={reps})", complex_rules=True))
FAMILY.op(TILE)


def _repeat_vjp(g: Any, ans: Any, x: Any, repeats: Any, axis: Any = None) -> Any:
    shape = _shape_of(x)
    if axis is None:
        base = (int(np.prod(shape, dtype=np.int64)),)
        a = 0
    else:
        base, a = shape, axis % len(shape)
    n = base[a]
    if isinstance(repeats, int):
        split = base[:a] + (n, repeats) + base[a + 1:]
        out = sum_along(reshape_to(g, split), axis=a + 1)
    else:
        index = np.repeat(np.arange(n), repeats)
        out = apply(TAKE_ADD, g, index, shape=base, axis=a)
    return reshape_to(out, shape)


def _repeat_jax(s: JaxStep) -> str:
    """``jnp.repeat`` (with ``total_repeat_length`` for per-entry repeats: a static shape)."""
    repeats = s.params["repeats"]
    axis = s.params["axis"]
    if isinstance(repeats, int):
        return f"jnp.repeat({s.args[0]}, {repeats!r}, axis={axis!r})"
    return (f"jnp.repeat({s.args[0]}, np.array({list(repeats)!r}), axis={axis!r}, "
            f"total_repeat_length={sum(repeats)})")


REPEAT = linear(Op(
    "repeat", lambda x, repeats, axis=None: np.repeat(x, repeats, axis),
    (_repeat_vjp,), formula="adjoint: sum each run of repeats",
    adjoint=("ḡ summed over each run of repeats",),
    samples=lambda rng: [((_n(rng, 3),), {"repeats": 2, "axis": None}),
                         ((_n(rng, 2, 3),), {"repeats": 3, "axis": None}),
                         ((_n(rng, 2, 3),), {"repeats": 2, "axis": -1}),
                         ((_n(rng, 3, 2),), {"repeats": (1, 0, 3), "axis": 0}),
                         ((_n(rng, 2, 2),), {"repeats": (2, 1, 1, 3), "axis": None})],
                         complex_rules=True, jax=_repeat_jax))
FAMILY.op(REPEAT)


# -- pad -----------------------------------------------------------------------------------
def _pad_impl(x: Any, pad_width: Any, constant_values: Any = 0) -> Any:
    return np.pad(x, pad_width, mode="constant", constant_values=constant_values)


def _pad_vjp(g: Any, ans: Any, x: Any, pad_width: Any, constant_values: Any = 0) -> Any:
    shape = _shape_of(x)
    index = tuple(slice(b, b + n) for (b, _a), n in zip(pad_width, shape))
    return _ix.getitem(g, index)


def _pad_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_n(rng, 3),), {"pad_width": ((1, 2),)}),
            ((_n(rng, 2, 3),), {"pad_width": ((0, 1), (2, 0)), "constant_values": 1.5}),
            ((_n(rng, 2, 1, 2),), {"pad_width": ((1, 1), (0, 0), (3, 1)),
                                   "constant_values": ((0, 1), (2, 3), (4, 5))})]


# The tangent of the padding is zero: the JVP pads the tangent with zeros.
PAD = linear(Op("pad", _pad_impl, (_pad_vjp,), formula="adjoint: slice the padding off",
                 adjoint=("ḡ with the padding sliced off",),
                 samples=_pad_samples,
                 jax="jnp.pad({0}, {pad_width}, mode='constant', "
                     "constant_values={constant_values})", complex_rules=True), constant_values=0)
FAMILY.op(PAD)


# -- diagonals and triangles ----------------------------------------------------------------
def _embed_impl(d: Any, shape: tuple[int, ...], offset: int, axis1: int, axis2: int) -> Any:
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    rest = tuple(n for i, n in enumerate(shape) if i not in (a1, a2))
    out = np.zeros(rest + (shape[a1], shape[a2]), dtype=np.result_type(d))
    k = np.shape(d)[-1]
    rows = np.arange(k) + builtins.max(-offset, 0)
    cols = np.arange(k) + builtins.max(offset, 0)
    out[..., rows, cols] = d
    return np.moveaxis(out, (-2, -1), (a1, a2))


DIAGONAL = linear(Op("diagonal",
                      lambda x, offset=0, axis1=0, axis2=1: np.diagonal(x, offset, axis1, axis2),
                      (lambda g, ans, x, offset=0, axis1=0, axis2=1:
                       diagonal_embed(g, _shape_of(x), offset, axis1, axis2),),
                      formula="adjoint: put back on the diagonal of zeros", view=True,
                      adjoint=("zeros like {0} with ḡ on the diagonal",),
                      samples=lambda rng: [
                          ((_n(rng, 3, 3),), {"offset": 0, "axis1": 0, "axis2": 1}),
                          ((_n(rng, 3, 4),), {"offset": 1, "axis1": 0, "axis2": 1}),
                          ((_n(rng, 4, 3),), {"offset": -2, "axis1": 1, "axis2": 0}),
                          ((_n(rng, 2, 3, 4),), {"offset": 1, "axis1": -1, "axis2": 0}),
                      ], jax="jnp.diagonal({0}, offset={offset}, axis1={axis1}, axis2={axis2})",
                          complex_rules=True))
FAMILY.op(DIAGONAL)
DIAGONAL_EMBED = linear(Op(
    "diagonal_embed", _embed_impl,
    (lambda g, ans, d, shape, offset, axis1, axis2:
     diagonal(g, offset, axis1, axis2),),
    formula="adjoint: take the diagonal",
    adjoint=("the diagonal of ḡ",),
    samples=lambda rng: [
        ((_n(rng, 3),), {"shape": (3, 3), "offset": 0, "axis1": 0, "axis2": 1}),
        ((_n(rng, 2),), {"shape": (3, 4), "offset": 2, "axis1": 0, "axis2": 1}),
        ((_n(rng, 4, 2),), {"shape": (3, 4, 3), "offset": -1, "axis1": 2,
                            "axis2": 0}),
    ], jax="_diagonal_embed({0}, shape={shape}, offset={offset}, axis1={axis1}, axis2={axis2})",
        complex_rules=True))
FAMILY.op(DIAGONAL_EMBED)


def _tri_vjp(tri: Any) -> Any:
    def rule(g: Any, ans: Any, x: Any, k: int = 0) -> Any:
        shape = _shape_of(x)
        return sum_to(tri(g, k), shape) if len(shape) < 2 else tri(g, k)

    return rule


def _tri_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_n(rng, 3, 3),), {"k": 0}), ((_n(rng, 3, 4),), {"k": 1}),
            ((_n(rng, 2, 3, 3),), {"k": -1}), ((_n(rng, 3),), {"k": 0})]


def _tri_jax(name: str) -> Any:
    def form(s: JaxStep) -> str:
        shape = s.shape(0)
        x = s.args[0]
        if len(shape) < 2:  # NumPy broadcasts a vector to a square matrix
            n = shape[0] if shape else 1
            x = f"jnp.broadcast_to({x}, {(n, n)!r})"
        return f"jnp.{name}({x}, k={s.param('k')})"

    form.__doc__ = f"jnp.{name}(x, k) (a vector is broadcast to a square first, as NumPy does)"
    return form


TRIU = linear(Op("triu", lambda x, k=0: np.triu(x, k), (_tri_vjp(lambda g, k: triu(g, k)),),
                  formula="adjoint: triu of the cotangent", samples=_tri_samples,
                  adjoint=("triu(ḡ, {k})",), complex_rules=True, jax=_tri_jax("triu")))
FAMILY.op(TRIU)
TRIL = linear(Op("tril", lambda x, k=0: np.tril(x, k), (_tri_vjp(lambda g, k: tril(g, k)),),
                  formula="adjoint: tril of the cotangent", samples=_tri_samples,
                  adjoint=("tril(ḡ, {k})",), complex_rules=True, jax=_tri_jax("tril")))
FAMILY.op(TRIL)


# -- take, take_along_axis, sort -------------------------------------------------------------
def _take_add_impl(g: Any, indices: Any, shape: tuple[int, ...], axis: Any) -> Any:
    dtype = np.result_type(g)
    if axis is None:
        out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=dtype)
        np.add.at(out, indices, g)
        return out.reshape(shape)
    out = np.zeros(shape, dtype=dtype)
    np.add.at(out, (slice(None),) * (axis % len(shape)) + (indices,), g)
    return out


def _take_jax(s: JaxStep) -> str:
    """``jnp.take`` with the indices made non-negative when they are a constant."""
    x, idx = s.args
    axis = s.params["axis"]
    if s.is_literal(1) and isinstance(s.literal(1), np.ndarray | np.integer | int):
        n = int(np.prod(s.shape(0), dtype=np.int64)) if axis is None else s.shape(0)[axis]
        value = np.asarray(s.literal(1))
        if n and (value < 0).any():
            idx = s.value(np.asarray(value % n, dtype=value.dtype))
    return f"jnp.take({x}, {idx}, axis={s.param('axis')})"


def _index_helper_jax(name: str) -> Any:
    def form(s: JaxStep) -> str:
        s.helper(name)
        axis = s.params["axis"]
        if axis is not None:
            axis %= max(len(s.params["shape"]), 1)
        return (f"{name}({s.args[0]}, {s.args[1]}, shape={tuple(s.params['shape'])!r}, "
                f"axis={axis!r})")

    form.__doc__ = f"{name}(g, indices, shape, axis) (a helper of the exported module)"
    return form


TAKE = linear(Op("take", lambda x, indices, axis=None: np.take(x, indices, axis),
                  (lambda g, ans, x, indices, axis=None:
                   apply(TAKE_ADD, g, indices, shape=_shape_of(x), axis=axis), None),
                  reads=(1,), formula="adjoint: scatter-add (repeated indices accumulate)",
                  adjoint=("zeros with ḡ added at the taken places", None),
                  samples=lambda rng: [
                      ((_n(rng, 5), np.array([0, 3, 3, -1])), {"axis": None}),
                      ((_n(rng, 2, 3), np.array([[5, 0], [2, 2]])), {"axis": None}),
                      ((_n(rng, 3, 4), np.array([1, -1, 1])), {"axis": -1}),
                      ((_n(rng, 3, 4), np.array(2)), {"axis": 0}),
                  ], complex_rules=True, jax=_take_jax, jax_uncast=(1,)))
FAMILY.op(TAKE)
TAKE_ADD = linear(Op("take_add", _take_add_impl,
                      (lambda h, ans, g, indices, shape, axis: take(h, indices, axis), None),
                      reads=(1,), formula="scatter-add along an axis; adjoint: take",
                      adjoint=("take(ḡ, {1}, axis={axis})", None),
                      samples=lambda rng: [
                          ((_n(rng, 4), np.array([0, 3, 3, -1])), {"shape": (5,), "axis": None}),
                          ((_n(rng, 3, 3), np.array([1, -1, 1])), {"shape": (3, 4), "axis": 1}),
                      ], complex_rules=True, jax=_index_helper_jax("_take_add"), jax_uncast=(1,)))
FAMILY.op(TAKE_ADD)


def _along_index(indices: np.ndarray, gshape: tuple[int, ...], shape: tuple[int, ...],
                 axis: int) -> tuple[Any, ...]:
    nd = len(gshape)
    index = []
    for d in range(nd):
        if d == axis:
            index.append(np.broadcast_to(indices, gshape))
            continue
        r = np.arange(gshape[d]) if shape[d] != 1 else np.zeros(gshape[d], dtype=np.intp)
        index.append(r.reshape((1,) * d + (-1,) + (1,) * (nd - d - 1)))
    return tuple(index)


def _take_along_add_impl(g: Any, indices: Any, shape: tuple[int, ...], axis: Any) -> Any:
    g = np.asarray(g)
    if axis is None:
        out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=g.dtype)
        np.add.at(out, indices, g)
        return out.reshape(shape)
    out = np.zeros(shape, dtype=g.dtype)
    index = _along_index(np.asarray(indices), g.shape, shape, axis % len(shape))
    np.add.at(out, index, g)
    return out


TAKE_ALONG_AXIS = linear(Op(
    "take_along_axis", lambda x, indices, axis: np.take_along_axis(x, indices, axis),
    (lambda g, ans, x, indices, axis:
     apply(TAKE_ALONG_AXIS_ADD, g, indices, shape=_shape_of(x), axis=axis), None),
    reads=(1,), formula="adjoint: scatter-add along the axis",
    adjoint=("zeros with ḡ added at the taken places", None),
    samples=lambda rng: [
        ((_n(rng, 3, 4), np.array([[0, 3], [1, 1], [2, 0]])), {"axis": 1}),
        ((_n(rng, 3, 4), np.array([[2, 0, 1, 1]])), {"axis": 0}),
        ((_n(rng, 1, 4), np.array([[1], [3]])), {"axis": -1}),
    ], jax="jnp.take_along_axis({0}, {1}, axis={axis})", complex_rules=True, jax_uncast=(1,)))
FAMILY.op(TAKE_ALONG_AXIS)
TAKE_ALONG_AXIS_ADD = linear(Op(
    "take_along_axis_add", _take_along_add_impl,
    (lambda h, ans, g, indices, shape, axis: take_along_axis(h, indices, axis), None),
    reads=(1,), formula="scatter-add along an axis; adjoint: take_along_axis",
    adjoint=("take_along_axis(ḡ, {1}, axis={axis})", None),
    samples=lambda rng: [
        ((_n(rng, 3, 2), np.array([[0, 3], [1, 1], [2, 0]])), {"shape": (3, 4), "axis": 1}),
        ((_n(rng, 2, 1), np.array([[1], [3]])), {"shape": (1, 4), "axis": -1}),
    ], complex_rules=True, jax=_index_helper_jax("_take_along_axis_add"), jax_uncast=(1,)))
FAMILY.op(TAKE_ALONG_AXIS_ADD)


def _inverse_permutation(perm: np.ndarray, axis: int) -> np.ndarray:
    if is_traced(perm):  # a graph tracer's permutation: its argsort is its inverse
        return np.argsort(perm, axis=axis, kind="stable")
    inverse = np.empty_like(perm)
    ranks = np.arange(perm.shape[axis]).reshape((-1,) + (1,) * (perm.ndim - axis - 1))
    np.put_along_axis(inverse, perm, np.broadcast_to(ranks, perm.shape), axis)
    return inverse


def _sort_values(x: Any) -> Any:
    """The values to sort by: an array, or a graph tracer (its argsort is recorded)."""
    xv = _raw(x)
    return xv if is_traced(xv) or isinstance(xv, np.ndarray) else np.asarray(xv)


def _sort_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = -1) -> Any:
    xv = _sort_values(x)
    if axis is None:
        return take(ts[0], np.argsort(xv.reshape(-1), kind="stable"))
    return take_along_axis(ts[0], np.argsort(xv, axis=axis, kind="stable"), axis)


def _sort_vjp(g: Any, ans: Any, x: Any, axis: Any = -1) -> Any:
    xv = _sort_values(x)
    if axis is None:
        inverse = _inverse_permutation(np.argsort(xv.reshape(-1), kind="stable"), 0)
        return reshape_to(take(g, inverse, 0), xv.shape)
    perm = np.argsort(xv, axis=axis, kind="stable")
    return take_along_axis(g, _inverse_permutation(perm, axis % xv.ndim), axis)


SORT = Op("sort", lambda x, axis=-1: np.sort(x, axis=axis), (_sort_vjp,), jvp=_sort_jvp,
          reads=(0,), formula="adjoint: un-permute the cotangent (inverse stable argsort)",
          adjoint=("ḡ permuted back to the unsorted order",),
          samples=lambda rng: [((_distinct(rng, 5),), {"axis": -1}),
                               ((_distinct(rng, 3, 4),), {"axis": 0}),
                               ((_distinct(rng, 3, 4),), {"axis": None}),
                               ((_distinct(rng, 2, 3, 2),), {"axis": 1})],
                               jax="jnp.sort({0}, axis={axis})", complex_rules=True)
FAMILY.op(SORT)


# -- concatenate, stack (variadic) ----------------------------------------------------------
def _concat_impl(*xs: Any, axis: Any = 0) -> Any:
    return np.concatenate(xs, axis=axis)


def _concat_vjp(i: int, g: Any, ans: Any, *xs: Any, axis: Any = 0) -> Any:
    shapes = [_shape_of(v) for v in xs]
    if axis is None:
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        start = builtins.sum(sizes[:i])
        return reshape(_ix.getitem(g, slice(start, start + sizes[i])), shapes[i])
    a = axis % len(shapes[i])
    start = builtins.sum(s[a] for s in shapes[:i])
    return _ix.getitem(g, (slice(None),) * a + (slice(start, start + shapes[i][a]),))


CONCATENATE = linear_variadic(_variadic(
    "concatenate", _concat_impl, _concat_vjp, formula="adjoint: slice the cotangent apart",
    adjoint="the slice of ḡ that {this} filled", jax="jnp.concatenate([{*}], axis={axis})",
    samples=lambda rng: [((_n(rng, 2), _n(rng, 3)), {"axis": 0}),
                         ((_n(rng, 2, 3), _n(rng, 2, 1), _n(rng, 2, 2)), {"axis": -1}),
                         ((_n(rng, 2, 2), _n(rng, 3)), {"axis": None}),
                         ((_n(rng, 1, 3), _n(rng, 2, 3)), {"axis": 0})], complex_rules=True))
FAMILY.op(CONCATENATE)


def _stack_impl(*xs: Any, axis: int = 0) -> Any:
    return np.stack(xs, axis=axis)


def _stack_vjp(i: int, g: Any, ans: Any, *xs: Any, axis: int = 0) -> Any:
    a = axis % (len(_shape_of(xs[i])) + 1)
    return _ix.getitem(g, (slice(None),) * a + (i,))


STACK = linear_variadic(_variadic(
    "stack", _stack_impl, _stack_vjp, formula="adjoint: index the cotangent apart",
    adjoint="ḡ at index {i} along axis {axis}", jax="jnp.stack([{*}], axis={axis})",
    samples=lambda rng: [((_n(rng, 3), _n(rng, 3)), {"axis": 0}),
                         ((_n(rng, 2, 3), _n(rng, 2, 3), _n(rng, 2, 3)), {"axis": -1}),
                         ((np.float64(rng.normal()), np.float64(rng.normal())), {"axis": 0}),
                         ((_n(rng, 2, 3), _n(rng, 2, 3)), {"axis": 1})], complex_rules=True))
FAMILY.op(STACK)


# -- public functions --------------------------------------------------------------------
@FAMILY.export
def reshape(x: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> Any:
    """Reshape to ``shape`` (an int, a tuple, one entry may be -1); the gradient reshapes back.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.numpy.reshape(wg.tensor([1.0, 2.0, 3.0, 4.0]), (2, -1)).shape
    (2, 2)
    """
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    shape = _int_or_tuple(shape)
    if isinstance(shape, int):
        shape = (shape,)
    if order == "A":  # as NumPy: Fortran order for an array laid out that way only
        p = _raw(x)
        fortran = isinstance(p, np.ndarray) and p.flags.f_contiguous and not p.flags.c_contiguous
        order = "F" if fortran else "C"
    if order == "F":  # column-major: the C-order reshape of the reversed axes, reversed back
        out = transpose(apply(RESHAPE, transpose(x), shape=tuple(reversed(shape))))
    elif order == "C":
        out = apply(RESHAPE, x, shape=shape)
    elif order == "K":
        raise ValueError("order 'K' is not permitted for reshaping")  # NumPy's words
    else:
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    return _ew.copy(out) if copy else out


@FAMILY.export
def ravel(x: Any, order: str = "C") -> Any:
    """Flatten to 1-d: a view of an array contiguous in ``order``, else a copy (as NumPy:
    an in-place update of the result writes through to ``x`` only in the first case)."""
    out = reshape(x, (-1,), order)
    p = _raw(x)
    if isinstance(p, np.ndarray) and not (
            p.flags.f_contiguous if order == "F" else p.flags.c_contiguous):
        return _ew.copy(out)
    return out


@FAMILY.export("permute_dims")  # (its array-API name; np.permute_dims is np.transpose)
def transpose(x: Any, axes: Any = None) -> Any:
    """Permute axes (reverse them by default)."""
    if axes is None:
        return apply(TRANSPOSE, x)
    nd = len(_shape_of(x))
    return apply(TRANSPOSE, x, axes=tuple(int(a) % nd if nd else int(a) for a in axes))


@FAMILY.export
def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """Swap two axes."""
    return apply(SWAPAXES, x, axis1=int(axis1), axis2=int(axis2))


@FAMILY.export
def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    """Move axes ``source`` to positions ``destination``; the others keep their order."""
    return apply(MOVEAXIS, x, source=_int_or_tuple(source),
                    destination=_int_or_tuple(destination))


@FAMILY.export
def expand_dims(x: Any, axis: Any) -> Any:
    """Insert length-1 axes at ``axis`` (an int or a tuple)."""
    return apply(EXPAND_DIMS, x, axis=_int_or_tuple(axis))


@FAMILY.export
def squeeze(x: Any, axis: Any = None) -> Any:
    """Remove length-1 axes (all, or those in ``axis``)."""
    return apply(SQUEEZE, x, axis=_int_or_tuple(axis))


@FAMILY.export
def flip(x: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    return apply(FLIP, x, axis=_int_or_tuple(axis))


@FAMILY.export
def fliplr(x: Any) -> Any:
    """Reverse the columns (axis 1)."""
    if len(_shape_of(x)) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(x, 1)


@FAMILY.export
def flipud(x: Any) -> Any:
    """Reverse the rows (axis 0)."""
    if len(_shape_of(x)) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(x, 0)


@FAMILY.export
def rot90(x: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    a0, a1 = (int(a) for a in axes)
    k = k % 4  # (NumPy's reading of a fractional k: 3 unless it is 0, 1 or 2)
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    if k == 1:
        return swapaxes(flip(x, a1), a0, a1)
    return flip(swapaxes(x, a0, a1), a1)


@FAMILY.export
def roll(x: Any, shift: Any, axis: Any = None) -> Any:
    """Roll elements along ``axis`` (the flattened array by default)."""
    return apply(ROLL, x, shift=_int_or_tuple(shift), axis=_int_or_tuple(axis))


@FAMILY.export
def tile(x: Any, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis."""
    reps = _int_or_tuple(reps)
    return apply(TILE, x, reps=(reps,) if isinstance(reps, int) else reps)


@FAMILY.export
def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    """Repeat each element ``repeats`` times (an int, or one count per element)."""
    r = np.asarray(_raw(repeats))
    reps = int(r.reshape(-1)[0]) if r.size == 1 else tuple(int(v) for v in r.reshape(-1))
    return apply(REPEAT, x, repeats=reps, axis=None if axis is None else int(axis))


def _pairs(value: Any, nd: int, cast: Any) -> tuple[tuple[Any, Any], ...]:
    arr = np.broadcast_to(np.asarray(_raw(value)), (nd, 2))
    return tuple((cast(a), cast(b)) for a, b in arr.tolist())


@FAMILY.export
def pad(x: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array (modes ``constant``, ``edge``, ``wrap``, ``reflect``, ``symmetric``).

    The gradient of the padded array flows back to the elements that were
    copied into it: the slice for ``constant``, a scatter-add for the others.
    """
    nd = len(_shape_of(x))
    width = _pairs(pad_width, nd, operator.index)
    if nd == 0:  # nothing to pad: a copy, as NumPy's
        if np.asarray(_raw(pad_width)).dtype.kind not in "iu":
            raise TypeError("`pad_width` must be of integral type.")  # (NumPy's words)
        return _ew.copy(x)
    if mode == "constant":
        values = kwargs.pop("constant_values", 0)
        if kwargs:
            raise TypeError(f"pad: unsupported keyword arguments for mode 'constant': {kwargs}")
        if _traced_among(values):
            return _pad_traced_constants(x, width, values)
        values = _raw(values)
        if np.ndim(values) == 0:
            values = np.asarray(values).item()
        else:
            values = _pairs(values, nd, lambda v: v)
        return apply(PAD, x, pad_width=width, constant_values=values)
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        if kwargs.get("reflect_type", "even") != "even":
            raise NotImplementedError("wengert.pad supports reflect_type='even' only")
        extra = kwargs if mode in ("reflect", "symmetric") else {}
        y = x
        for ax, (before, after) in enumerate(width):
            if before or after:
                n = _shape_of(y)[ax]
                index = np.pad(np.arange(n), (before, after), mode=mode, **extra)
                y = take(y, index, axis=ax)
        return y
    raise NotImplementedError(
        f"wengert.pad: mode {mode!r} has no gradient rule; use 'constant', 'edge', 'wrap', "
        "'reflect' or 'symmetric'."
    )


def _traced_among(values: Any) -> bool:
    if is_traced(values):
        return True
    return isinstance(values, (list, tuple)) and any(_traced_among(v) for v in values)


def _leaves_and_shape(values: Any) -> tuple[list[Any], tuple[int, ...]]:
    """The scalars of a (nested list of, or an array of) constants, row-major, and their
    shape."""
    if is_traced(values) or not isinstance(values, (list, tuple)):
        shape = _shape_of(values)
        flat = reshape(values, (-1,)) if shape else reshape(values, (1,))
        return [flat[i] for i in range(int(np.prod(shape, dtype=np.int64)))], shape
    parts = [_leaves_and_shape(v) for v in values]
    inner = parts[0][1] if parts else ()
    if any(p[1] != inner for p in parts):
        raise ValueError("pad: constant_values must be a scalar, a pair, or one pair per axis")
    return [leaf for p in parts for leaf in p[0]], (len(values),) + inner


def _pad_traced_constants(x: Any, width: Any, values: Any) -> Any:
    """``pad(x, width, constant_values=values)`` with traced constants: ``x`` padded with
    zeros, plus each constant where NumPy puts it (found by padding with labels), so the
    constants get the gradient of the entries they fill."""
    nd = len(_shape_of(x))
    flat, shape = _leaves_and_shape(values)
    where = np.broadcast_to(np.arange(len(flat)).reshape(shape), (nd, 2))  # NumPy's reading
    pairs = [(flat[b], flat[a]) for b, a in where.tolist()]
    labels = np.pad(np.zeros(_shape_of(x), dtype=np.int64), width,
                    constant_values=[(2 * ax + 1, 2 * ax + 2) for ax in range(nd)])
    out = apply(PAD, x, pad_width=width, constant_values=0)
    dtype = _ew.dtype_of(out)
    for ax, (before, after) in enumerate(pairs):
        for label, value in ((2 * ax + 1, before), (2 * ax + 2, after)):
            mask = labels == label
            if mask.any():
                if _ew.dtype_of(value) != dtype:
                    value = _ew.astype(value, dtype)
                out = _ew.where(mask, value, out)
    return out


@FAMILY.export
def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal (``offset`` above the main one) of the ``axis1``/``axis2`` planes."""
    return apply(DIAGONAL, x, offset=int(offset), axis1=int(axis1), axis2=int(axis2))


def diagonal_embed(d: Any, shape: tuple[int, ...], offset: int = 0, axis1: int = 0,
                   axis2: int = 1) -> Any:
    """Zeros of ``shape`` with ``d`` on a diagonal: the adjoint of :func:`diagonal`."""
    return apply(DIAGONAL_EMBED, d, shape=tuple(int(n) for n in shape), offset=int(offset),
                    axis1=int(axis1), axis2=int(axis2))


@FAMILY.export
def diag(v: Any, k: int = 0) -> Any:
    """Extract the ``k``-th diagonal of a 2-d array, or build a 2-d array from a 1-d one."""
    shape = _shape_of(v)
    k = int(k)
    if len(shape) == 1:
        n = shape[0] + builtins.abs(k)
        return diagonal_embed(v, (n, n), k, 0, 1)
    if len(shape) == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


@FAMILY.export
def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-d array with the flattened input on the ``k``-th diagonal."""
    return diag(ravel(v), k)


def _diagonal_k(k: Any) -> Any:
    """``k`` as an int; a fractional one as it is (NumPy's mask of it is its own, and
    the cotangent's is the same)."""
    return int(k) if k == int(k) else float(k)


@FAMILY.export
def triu(x: Any, k: int = 0) -> Any:
    """Upper triangle (on and above diagonal ``k``) of the last two axes."""
    return apply(TRIU, x, k=_diagonal_k(k))


@FAMILY.export
def tril(x: Any, k: int = 0) -> Any:
    """Lower triangle (on and below diagonal ``k``) of the last two axes."""
    return apply(TRIL, x, k=_diagonal_k(k))


def _index_array(indices: Any) -> Any:
    """An index input as an array; a graph tracer's stays traced (an input of the op, so the
    graph takes the new indices)."""
    index = _raw(indices)
    return index if is_traced(index) else np.asarray(index)


@FAMILY.export
def take(x: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """Elements at ``indices`` along ``axis``; repeated indices accumulate gradient."""
    no_out("take", out)
    index = _index_array(indices)
    if index.dtype.kind not in "iu":
        if index.size == 0:
            index = index.astype(np.intp)
        else:
            raise IndexError("arrays used as indices must be of integer type")
    shape = _shape_of(x)
    if axis is not None:
        axis = int(axis) % builtins.max(len(shape), 1)
    if mode != "raise":
        n = int(np.prod(shape, dtype=np.int64)) if axis is None else shape[axis]
        index = index % n if mode == "wrap" else np.clip(index, 0, n - 1)
    return apply(TAKE, x, index, axis=axis)


@FAMILY.export
def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, **kwargs: Any) -> Any:
    """``np.unique``: the unique values are the first occurrence of each, taken from ``ar``,
    so each gets the gradient of its value (as in JAX); indices and counts are integers.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: np.sum(np.unique(x) * np.array([1.0, 2.0, 3.0])))(
    ...     np.array([3.0, 1.0, 2.0, 1.0]))
    array([3., 1., 2., 0.])
    """
    if is_traced(_raw(ar)):  # (np.unique of a graph tracer would come back here)
        raise TypeError("np.unique: how many values are unique depends on the values, so it "
                        "cannot be traced into a graph; call it outside wg.compile / wg.trace")
    found = np.unique(_raw(ar), return_index=True, return_inverse=return_inverse,
                      return_counts=return_counts, axis=axis, **kwargs)
    values = take(ar, found[1], axis=axis)
    extra = [found[1]] if return_index else []
    extra += list(found[2:])
    return (values, *extra) if extra else values


@FAMILY.export
def bincount(x: Any, weights: Any = None, minlength: int = 0) -> Any:
    """``np.bincount``: with ``weights``, each bin sums the weights of its entries (a
    scatter-add, differentiable in the weights); ``x`` holds integers (no gradient)."""
    index = np.asarray(_raw(x))
    if weights is None:
        return np.bincount(index, minlength=minlength)
    n = builtins.max(int(index.max()) + 1 if index.size else 0, minlength)
    dtype = _ew.dtype_of(weights) if is_traced(weights) else np.asarray(weights).dtype
    if not np.can_cast(dtype, np.float64, "safe"):  # (NumPy's words)
        raise TypeError(f"Cannot cast array data from dtype('{dtype}') to dtype('float64') "
                        "according to the rule 'safe'")
    if dtype != np.float64:  # NumPy sums the weights as float64 (float32 ones too)
        weights = _cast(weights, np.float64)
    return apply(TAKE_ADD, weights, index, shape=(n,), axis=None)


@FAMILY.export
def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> Any:
    """``np.histogram``: the counts (or summed ``weights``) per bin, differentiable in the
    weights. The bin edges and the bin each value falls in depend on ``a`` piecewise
    constantly; a differentiated ``a`` is refused, since its gradient would be lost."""
    kind = kind_of(a)
    if kind is not None and kind.connected(a):
        raise TypeError(
            "np.histogram: the counts are piecewise constant in the values and the bin edges "
            "depend on their range, so no gradient flows to them; pass wg.stop_gradient(a) "
            "if that is what you mean (the weights= may carry a gradient)."
        )
    raw = _raw(a)
    # (the weights only have their shape checked there: a stand-in of that shape keeps
    # the edges a function of the values alone)
    stand_in = None if weights is None else \
        np.broadcast_to(np.zeros((), _ew.dtype_of(weights)), _shape_of(weights))
    edges = np.histogram_bin_edges(raw, bins, range, stand_in)
    if is_traced(bins) and _shape_of(bins):  # traced edges given as bins
        return _histogram_of_traced_edges(a, edges, density, weights)
    if weights is None or not is_traced(weights):
        w_raw = None if weights is None else _raw(weights)
        if is_traced(raw):  # a graph tracer's values: the counts are a step of its graph
            return kind_of(raw).record_call(np.histogram, (raw, edges),
                                            {"density": density, "weights": w_raw},
                                            "np.histogram")
        return np.histogram(raw, edges, density=density, weights=w_raw)
    # Shapes that do not depend on the values (the values may be traced too): each weight
    # goes to its bin, or is zeroed outside the range.
    nbins = len(edges) - 1
    flat = reshape(raw, (-1,)) if is_traced(raw) else raw.ravel()
    index = np.searchsorted(edges, flat, side="right") - 1
    index = np.where(flat == edges[-1], nbins - 1, index)  # the last bin is closed
    inside = (index >= 0) & (index < nbins)
    w = _ew.where(inside, reshape(weights, (-1,)), 0)
    counts = apply(TAKE_ADD, w, np.clip(index, 0, nbins - 1), shape=(nbins,), axis=None)
    if density:  # as NumPy: n / widths / n.sum()
        counts = _ew.divide(_ew.divide(counts, np.diff(edges).astype(float)), counts.sum())
    return counts, edges


def _histogram_of_traced_edges(a: Any, edges: Any, density: Any, weights: Any) -> Any:
    """``np.histogram(a, bins=edges)`` with traced edges: each count is piecewise constant
    in the edges (zero derivative), the density divides by the traced bin widths, and the
    edges come back as NumPy returns the array it was given, with their derivative."""
    plain = _raw(edges)
    if is_traced(plain):  # a graph tracer's edges: the histogram is a step of its graph
        return kind_of(plain).record_call(
            np.histogram, (_raw(a), plain),
            {"density": density, "weights": None if weights is None else _raw(weights)},
            "np.histogram")
    counts = histogram(a, plain, weights=weights)[0]
    if density:
        widths = _ew.subtract(_ix.getitem(edges, slice(1, None)),
                              _ix.getitem(edges, slice(None, -1)))
        total = counts.sum() if is_traced(counts) else np.sum(counts)
        counts = _ew.divide(_ew.divide(counts, widths), total)
    return counts, edges


@FAMILY.export
def take_along_axis(x: Any, indices: Any, axis: Any = -1) -> Any:
    """Pick values along ``axis`` with an index array of the same rank (as after argsort)."""
    index = _index_array(indices)
    if axis is not None:
        axis = int(axis) % builtins.max(len(_shape_of(x)), 1)
    return apply(TAKE_ALONG_AXIS, x, index, axis=axis)


@FAMILY.export
def sort(x: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Any:
    """Sorted copy along ``axis`` (flattened if None); the gradient follows the permutation."""
    if order is not None:
        raise NotImplementedError("wengert.sort does not support order= (structured arrays)")
    nd = len(_shape_of(x))
    if axis is not None:
        axis = int(axis) % builtins.max(nd, 1)
    return apply(SORT, x, axis=axis)


def _to_join(name: str, arrays: Any, out: Any, dtype: Any) -> list[Any]:
    """The arrays ``concatenate`` or ``stack`` join, cast to ``dtype`` (one at least)."""
    no_out(name, out)
    xs = [_cast(a, dtype) for a in arrays]
    if not xs:
        raise ValueError(f"need at least one array to {name}")
    return xs


@FAMILY.export("concat")
def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """Join arrays along an existing axis (flattened first if ``axis`` is None)."""
    xs = _to_join("concatenate", arrays, out, dtype)
    return apply(CONCATENATE, *xs, axis=None if axis is None else int(axis))


concat = concatenate


@FAMILY.export
def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """Join arrays of the same shape along a new axis."""
    return apply(STACK, *_to_join("stack", arrays, out, dtype), axis=int(axis))


def _atleast(nd: int, x: Any) -> Any:
    shape = _shape_of(x)
    if len(shape) >= nd:
        return x
    if nd == 1:
        new = (1,)
    elif nd == 2:
        new = (1,) + shape if shape else (1, 1)
    else:
        new = {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]
    return reshape(x, new)


def _atleast_all(nd: int, arys: tuple[Any, ...]) -> Any:
    res = [_atleast(nd, a) for a in arys]
    return res[0] if len(res) == 1 else res


@FAMILY.export
def atleast_1d(*arys: Any) -> Any:
    """View inputs as arrays with at least one dimension."""
    return _atleast_all(1, arys)


@FAMILY.export
def atleast_2d(*arys: Any) -> Any:
    """View inputs as arrays with at least two dimensions."""
    return _atleast_all(2, arys)


@FAMILY.export
def atleast_3d(*arys: Any) -> Any:
    """View inputs as arrays with at least three dimensions."""
    return _atleast_all(3, arys)


@FAMILY.export
def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack horizontally (along axis 1, or axis 0 for 1-d inputs)."""
    xs = [_atleast(1, a) for a in tup]
    axis = 0 if xs and len(_shape_of(xs[0])) == 1 else 1
    return concatenate(xs, axis=axis, dtype=dtype)


@FAMILY.export
def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack vertically (along axis 0, 1-d inputs becoming rows)."""
    return concatenate([_atleast(2, a) for a in tup], axis=0, dtype=dtype)


@FAMILY.export
def dstack(tup: Any) -> Any:
    """Stack along the third axis."""
    return concatenate([_atleast(3, a) for a in tup], axis=2)


@FAMILY.export
def column_stack(tup: Any) -> Any:
    """Stack 1-d arrays as columns of a 2-d array (2-d inputs are joined as they are)."""
    cols = []
    for a in tup:
        shape = _shape_of(a)
        cols.append(reshape(a, (-1, 1)) if len(shape) < 2 else a)
    return concatenate(cols, axis=1)


def _split_points(n: int, sections: Any, equal: bool) -> list[int]:
    if np.ndim(sections) == 0:
        count = operator.index(sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % count:
            raise ValueError("array split does not result in an equal division")
        each, extras = divmod(n, count)
        sizes = [each + 1] * extras + [each] * (count - extras)
        return [0] + np.cumsum(sizes).tolist()
    return [0] + [operator.index(i) for i in sections] + [n]


def _split(x: Any, sections: Any, axis: int, equal: bool) -> list[Any]:
    shape = _shape_of(x)
    a = int(axis) % len(shape)
    points = _split_points(shape[a], _raw(sections), equal)
    lead = (slice(None),) * a
    return [_ix.getitem(x, lead + (slice(s, e),)) for s, e in zip(points[:-1], points[1:])]


@FAMILY.export
def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections, or at the given indices; each piece is differentiable."""
    return _split(x, indices_or_sections, axis, equal=True)


@FAMILY.export
def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into nearly equal sections, or at the given indices."""
    return _split(x, indices_or_sections, axis, equal=False)


@FAMILY.export
def hsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 1 (axis 0 for 1-d arrays)."""
    nd = len(_shape_of(x))
    if nd == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if nd > 1 else 0)


@FAMILY.export
def vsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 0 (arrays of 2 or more dimensions)."""
    if len(_shape_of(x)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)
