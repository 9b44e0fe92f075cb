"""Shape primitives (reshape, transpose, ...): forward and VJP together."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import tensor as _t
from ..core.op import Op


def _raw(x: Any) -> Any:
    return x._value if isinstance(x, _t.Tensor) else x


RESHAPE = Op("reshape", lambda x, shape: np.reshape(x, shape),
             (lambda g, ans, x, shape: reshape(g, np.shape(_raw(x))),),
             formula="adjoint: reshape back", view=True)


def _transpose_vjp(g: Any, ans: Any, x: Any, axes: Any = None) -> Any:
    if axes is None:
        return transpose(g)
    return transpose(g, tuple(np.argsort(axes)))


TRANSPOSE = Op("transpose", lambda x, axes=None: np.transpose(x, axes), (_transpose_vjp,),
               formula="adjoint: inverse permutation", symbol="ᵀ", view=True)
SWAPAXES = Op("swapaxes", lambda x, axis1, axis2: np.swapaxes(x, axis1, axis2),
              (lambda g, ans, x, axis1, axis2: swapaxes(g, axis1, axis2),),
              formula="adjoint: swap back", view=True)

OPS = (RESHAPE, TRANSPOSE, SWAPAXES)


def reshape(x: Any, shape: Any, order: str = "C") -> Any:
    """Reshape; the gradient is reshaped back."""
    if order != "C":
        raise NotImplementedError("wengert.reshape supports order='C' only")
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    return _t.apply(RESHAPE, x, shape=tuple(shape))


def ravel(x: Any) -> Any:
    """Flatten to 1-d."""
    return reshape(x, (-1,))


def transpose(x: Any, axes: Any = None) -> Any:
    """Permute axes (reverse them by default)."""
    if axes is None:
        return _t.apply(TRANSPOSE, x)
    return _t.apply(TRANSPOSE, x, axes=tuple(int(a) for a in axes))


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """Swap two axes."""
    return _t.apply(SWAPAXES, x, axis1=axis1, axis2=axis2)

PUBLIC = ("reshape", "ravel", "transpose", "swapaxes")
NUMPY = {np.reshape: reshape, np.ravel: ravel, np.transpose: transpose, np.swapaxes: swapaxes}
