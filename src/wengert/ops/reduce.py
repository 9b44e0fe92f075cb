"""Reductions and their adjoints (broadcasting back), forward and VJP together."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import tensor as _t
from ..core.op import Op


def _raw(x: Any) -> Any:
    return x._value if isinstance(x, _t.Tensor) else x


def _norm_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis)) if ndim else ()
    return (axis % ndim,) if ndim else ()


def _keep_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The shape of a reduction over ``axis`` with keepdims=True."""
    axes = _norm_axis(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _sum_vjp(g: Any, ans: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    shape = np.shape(_raw(x))
    if not keepdims:
        g = reshape_to(g, _keep_shape(shape, axis))
    return broadcast_to(g, shape)


SUM = Op("sum", lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
         (_sum_vjp,), formula="∂/∂x sum(x) = 1 (broadcast back)", symbol="Σ")


def _broadcast_vjp(g: Any, ans: Any, x: Any, shape: Any) -> Any:
    return sum_to(g, np.shape(_raw(x)))


BROADCAST_TO = Op("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                  (_broadcast_vjp,), formula="adjoint: sum over the broadcast axes")


def _sum_to_impl(x: Any, shape: Any) -> Any:
    xs = np.shape(x)
    lead = len(xs) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and xs[i + lead] != 1
    )
    out = np.sum(x, axis=axes, keepdims=True) if axes else x
    return np.reshape(out, shape)


SUM_TO = Op("sum_to", _sum_to_impl, (lambda g, ans, x, shape: broadcast_to(g, np.shape(_raw(x))),),
            formula="sum over broadcast axes; adjoint: broadcast_to")


def _reshape_to_impl(x: Any, shape: Any) -> Any:
    return np.reshape(x, shape)


RESHAPE_TO = Op("reshape_to", _reshape_to_impl,
                (lambda g, ans, x, shape: reshape_to(g, np.shape(_raw(x))),),
                formula="adjoint: reshape back")

OPS = (SUM, BROADCAST_TO, SUM_TO, RESHAPE_TO)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Sum over ``axis`` (all by default); the gradient broadcasts back.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> wg.numpy.sum(x, axis=0)
    tensor([4., 6.], grad_fn=<SumBackward>)
    """
    if isinstance(axis, list):
        axis = tuple(axis)
    return _t.apply(SUM, x, axis=axis, keepdims=keepdims)


def broadcast_to(x: Any, shape: Any) -> Any:
    """Broadcast ``x`` to ``shape``; the gradient sums over the broadcast axes."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if np.shape(_raw(x)) == shape:
        return x
    return _t.apply(BROADCAST_TO, x, shape=shape)


def sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``x`` down to ``shape`` (the adjoint of broadcasting)."""
    shape = tuple(shape)
    if np.shape(_raw(x)) == shape:
        return x
    return _t.apply(SUM_TO, x, shape=shape)


def reshape_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Reshape used inside rules (no view bookkeeping)."""
    shape = tuple(shape)
    if np.shape(_raw(x)) == shape:
        return x
    return _t.apply(RESHAPE_TO, x, shape=shape)


_ = builtins

PUBLIC = ("sum", "broadcast_to", "sum_to")
NUMPY = {np.sum: sum, np.broadcast_to: broadcast_to}
REDUCE = {np.add: lambda x, axis=0, keepdims=False: sum(x, axis=axis, keepdims=keepdims)}
