"""What every op family shares: applying ops, reading values under traced layers, linear JVPs.

The families import only :mod:`wengert.core` and each other, in one order
(``broadcast`` → ``elementwise`` → ``indexing`` → ``shape`` → ``reduce`` →
``linalg``), never a front end: a rule applies ops with :func:`apply` (which
finds the tensor, dual number or tracer among its arguments) and looks at
values only through :func:`primal` (masks, signs, shapes), never with
``np.asarray`` on a traced value.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.core.bind import (
    apply,
    binary_function,
    dtype_of,
    forward,
    is_traced,
    kind_of,
    primal,
    shape_of,
    unary_function,
)
from wengert.core.op import Op

__all__ = [
    "apply",
    "forward",
    "primal",
    "shape_of",
    "dtype_of",
    "is_traced",
    "unary_function",
    "binary_function",
    "linear",
    "linear_variadic",
    "float_dtype",
    "no_out",
    "concrete",
]


def concrete(v: Any) -> Any:
    """A graph tracer's 0-d number where an op needs its value (a ``kth``, a quantile, an
    index that sets a shape): the traced example's value as a Python number (the trace
    records a guard, so a compiled function traces again for another value); anything
    else as it is."""
    if is_traced(v):
        kind = kind_of(v)
        if kind is not None and kind.opaque and shape_of(v) == ():
            k = dtype_of(v).kind
            return operator.index(v) if k in "iub" else complex(v) if k == "c" else float(v)
    return v


def linear(op: Op, **fixed: Any) -> Op:
    """Give an op linear in input 0 its JVP: the op itself applied to the tangent.

    The other inputs (index arrays) and the params are passed along;
    ``fixed`` overrides params (``pad`` pads the tangent with zeros, not with
    ``constant_values``). Returns ``op``.
    """

    def jvp(ts: tuple[Any, ...], ans: Any, x: Any, *rest: Any, **params: Any) -> Any:
        if fixed:
            params = {**params, **fixed}
        t = ts[0]
        if type(t) is np.ndarray:  # what apply does with a plain array
            return forward(op, (t, *rest), params)
        return apply(op, t, *rest, **params)

    jvp.__name__ = f"{op.name}_jvp"
    op.jvp = jvp
    return op


def linear_variadic(op: Op) -> Op:
    """Give a variadic op linear in every input its JVP: the op on the tangents
    (zeros for a missing one). Returns ``op``."""

    def jvp(ts: tuple[Any, ...], ans: Any, *xs: Any, **params: Any) -> Any:
        dtype = dtype_of(ans)
        parts = [np.zeros(shape_of(x), dtype) if t is None else t for t, x in zip(ts, xs)]
        return apply(op, *parts, **params)

    jvp.__name__ = f"{op.name}_jvp"
    op.jvp = jvp
    return op


def float_dtype(*vals: Any) -> np.dtype:
    """The dtype an elementwise op on ``vals`` gives (Python floats are weak; a lone
    one is float64), float64 for non-float data; for masks and zeros."""
    dt = np.result_type(*[primal(v) for v in vals])
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def no_out(name: str, out: Any) -> None:
    """Refuse ``out=`` (the gradient would be lost)."""
    if out is not None:
        raise TypeError(
            f"wengert.{name}: out= is not supported on tensors (the gradient would be lost); "
            "assign the result instead (y = np.f(x))."
        )
