"""Broadcasting and summation: the adjoint pair under every other family's rules.

``broadcast_to`` and ``sum`` (with ``sum_to``, which sums a broadcast value back
to a shape, and ``reshape_to``) are each other's adjoints and all linear, so
their JVPs are themselves. Every family below uses them: an elementwise op's
cotangent is summed back to a broadcast input's shape with :func:`sum_to`, a
reduction's cotangent is broadcast back with :func:`expand`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op
from wengert.ops.base import Family, apply, forward, is_traced, linear, shape_of

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("broadcast")
# Every op here is linear: its rules hold for complex values as they are (complex_rules=True,
# see ops/elementwise.py).

__all__ = ["broadcast_to", "broadcast_arrays", "sum_to", "unbroadcast", "reshape_to", "sum_along",
           "expand", "keep_shape", "norm_axis", "axis_samples"]


def norm_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis)) if ndim else ()
    return (axis % ndim,) if ndim else ()


def keep_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The shape of a reduction over ``axis`` with keepdims=True."""
    axes = norm_axis(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand(g: Any, shape: tuple[int, ...], axis: Any, keepdims: bool) -> Any:
    """Broadcast a reduction's cotangent (or output) back to the input ``shape``."""
    if not keepdims and axis is not None:  # (over every axis, g is a scalar: it broadcasts)
        g = reshape_to(g, keep_shape(shape, axis))
    return _reshaped(BROADCAST_TO, g, shape)  # (shape: a tuple of ints already)


def axis_samples(draw: Any) -> Any:
    """Sample cases of a reduction over every kind of ``axis`` (for the registry sweep)."""

    def samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        cases = [
            ((), {"axis": None, "keepdims": False}),
            ((4,), {"axis": None, "keepdims": False}),
            ((4,), {"axis": 0, "keepdims": True}),
            ((2, 3), {"axis": 0, "keepdims": False}),
            ((2, 3), {"axis": -1, "keepdims": True}),
            ((2, 3, 4), {"axis": (0, 2), "keepdims": False}),
            ((2, 3, 4), {"axis": (-1, 1), "keepdims": True}),
            ((3, 1, 2), {"axis": None, "keepdims": True}),
        ]
        return [((draw(rng, s),), p) for s, p in cases]

    return samples


# -- sum ----------------------------------------------------------------------------
def _sum_vjp(g: Any, ans: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return expand(g, shape_of(x), axis, keepdims)


def _sum_impl(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    if type(x) is np.ndarray:  # what ndarray.sum runs, without np.sum's dispatch
        return _add_reduce(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


_add_reduce = np.add.reduce
SUM = linear(Op(
    "sum", _sum_impl,
    (_sum_vjp,), formula="∂/∂x sum(x) = 1 (broadcast back)", symbol="Σ",
    adjoint=("ḡ broadcast to the shape of {0}",),
    samples=axis_samples(lambda rng, shape: rng.normal(size=shape)),
    jax="jnp.sum({0}, axis={axis}, keepdims={keepdims})", complex_rules=True))
FAMILY.op(SUM)


def sum_along(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``sum`` over ``axis`` for rules (no dtype or out handling)."""
    return apply(SUM, x, axis=axis, keepdims=keepdims)


# -- broadcast_to, sum_to, reshape_to ---------------------------------------------
def _broadcast_vjp(g: Any, ans: Any, x: Any, shape: Any) -> Any:
    return sum_to(g, shape_of(x))


def _broadcast_to_impl(x: Any, shape: tuple[int, ...]) -> Any:
    """``np.broadcast_to``; a float scalar (a full reduction's cotangent) directly.

    For a Python float or ``np.float64`` (immutable, so nothing can write
    through to the view), the result is the read-only zero-stride view that
    ``np.broadcast_to`` returns, built with one constructor call instead of
    its Python-level argument handling.
    """
    tx = type(x)
    if tx is float or tx is np.float64:
        one = np.array(x)  # 0-d float64: the view's memory
        view = np.ndarray(shape, one.dtype, one, 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    return np.broadcast_to(x, shape)


BROADCAST_TO = linear(Op(
    "broadcast_to", _broadcast_to_impl, (_broadcast_vjp,),
    formula="adjoint: sum over the broadcast axes", view=True,
    adjoint=("ḡ summed back to the shape of {0}",),
    samples=lambda rng: [
        ((rng.normal(size=(3,)),), {"shape": (2, 3)}),
        ((rng.normal(size=(2, 1)),), {"shape": (4, 2, 3)}),
        ((np.float64(rng.normal()),), {"shape": (2, 2)}),
    ], jax="jnp.broadcast_to({0}, shape={shape})", complex_rules=True))
FAMILY.op(BROADCAST_TO)


def _sum_to_impl(x: Any, shape: Any) -> Any:
    xs = np.shape(x)
    lead = len(xs) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and xs[i + lead] != 1
    )
    out = np.sum(x, axis=axes, keepdims=True) if axes else x
    return np.reshape(out, shape)


def _sum_to_jax(s: JaxStep) -> str:
    """The sum over the broadcast axes, written with the static axes."""
    xs, shape = s.shape(0), tuple(s.params["shape"])
    lead = len(xs) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and xs[i + lead] != 1)
    x = f"jnp.sum({s.args[0]}, axis={axes!r}, keepdims=True)" if axes else s.args[0]
    return f"jnp.reshape({x}, {shape!r})"


SUM_TO = linear(Op(
    "sum_to", _sum_to_impl, (lambda g, ans, x, shape: broadcast_to(g, shape_of(x)),),
    formula="sum over broadcast axes; adjoint: broadcast_to",
    adjoint=("ḡ broadcast to the shape of {0}",),
    samples=lambda rng: [
        ((rng.normal(size=(2, 3)),), {"shape": (3,)}),
        ((rng.normal(size=(4, 2, 3)),), {"shape": (2, 1)}),
        ((rng.normal(size=(2, 2)),), {"shape": ()}),
    ], complex_rules=True, jax=_sum_to_jax))
FAMILY.op(SUM_TO)


def _reshape_to_impl(x: Any, shape: Any) -> Any:
    return np.reshape(x, shape)


RESHAPE_TO = linear(Op(
    "reshape_to", _reshape_to_impl, (lambda g, ans, x, shape: reshape_to(g, shape_of(x)),),
    formula="adjoint: reshape back", view=True,
    adjoint=("ḡ reshaped to the shape of {0}",),
    samples=lambda rng: [((rng.normal(size=(2, 3)),), {"shape": (3, 2)}),
                         ((rng.normal(size=(4,)),), {"shape": (2, 1, 2)})],
                         jax="jnp.reshape({0}, shape={shape})", complex_rules=True))
FAMILY.op(RESHAPE_TO)


# -- public functions --------------------------------------------------------------
@FAMILY.export
def broadcast_to(x: Any, shape: Any) -> Any:
    """Broadcast ``x`` to ``shape``; the gradient sums over the broadcast axes.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: wg.numpy.broadcast_to(x, (3, 2)).sum())(np.array([1.0, 2.0]))
    array([3., 3.])
    """
    shape = tuple(int(n) for n in shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    if is_traced(x):  # always the op, as NumPy always returns a (read-only) view
        return apply(BROADCAST_TO, x, shape=shape)
    return _reshaped(BROADCAST_TO, x, shape)


@FAMILY.export
def broadcast_arrays(*args: Any) -> list[Any]:
    """Broadcast the inputs against each other (``numpy.broadcast_arrays``)."""
    shape = np.broadcast_shapes(*[shape_of(a) for a in args])
    return [broadcast_to(a, shape) for a in args]


@FAMILY.export
def sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``x`` down to ``shape`` (the adjoint of broadcasting).

    Examples
    --------
    >>> import numpy as np
    >>> sum_to(np.ones((2, 3)), (1, 3))
    array([[2., 2., 2.]])
    """
    return _reshaped(SUM_TO, x, tuple(shape))


def unbroadcast(ct: Any, shape: tuple[int, ...]) -> Any:
    """A broadcasting op's cotangent summed back to an input's ``shape`` (``Op.unbroadcast``)."""
    return _reshaped(SUM_TO, ct, shape)


def reshape_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Reshape used inside rules (no parameter checks)."""
    return _reshaped(RESHAPE_TO, x, tuple(shape))


def _reshaped(op: Op, x: Any, shape: tuple[int, ...]) -> Any:
    """``op(x, shape=shape)``, or ``x`` itself when it has that shape already.

    A plain array or float scalar (the rules of a backward pass, a full
    reduction's cotangent) goes straight to the NumPy forward, as ``apply``
    would send it.
    """
    tx = type(x)
    if tx is np.ndarray or tx is float or tx is np.float64:
        if (x.shape if tx is np.ndarray else ()) == shape:
            return x
        return forward(op, (x,), {"shape": shape})
    if shape_of(x) == shape:
        return x
    return apply(op, x, shape=shape)
