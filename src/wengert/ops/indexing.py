"""Indexing primitives (getitem and its adjoint): forward and VJP together."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import tensor as _t
from ..core.op import Op


def _raw(x: Any) -> Any:
    return x._value if isinstance(x, _t.Tensor) else x


def _raw_index(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(_raw(i) for i in index)
    return _raw(index)


def _getitem_vjp(g: Any, ans: Any, x: Any, index: Any) -> Any:
    return _t.apply(SCATTER_ADD, g, shape=np.shape(_raw(x)), index=index)


def _scatter_add_impl(g: Any, shape: Any, index: Any) -> Any:
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out, index, g)
    return out


GETITEM = Op("getitem", lambda x, index: np.asarray(x)[index], (_getitem_vjp,),
             formula="adjoint: scatter-add into zeros", symbol="[]", view=True)
SCATTER_ADD = Op("scatter_add", _scatter_add_impl,
                 (lambda g, ans, h, shape, index: getitem(g, index),),
                 formula="adjoint: gather")

def _setitem_impl(x: Any, v: Any, index: Any) -> Any:
    out = np.array(x, copy=True)
    out[index] = v
    return out


def _setitem_dx(g: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    return _t.apply(SETITEM, g, 0.0, index=index)


def _setitem_dv(g: Any, ans: Any, x: Any, v: Any, index: Any) -> Any:
    from .reduce import sum_to

    return sum_to(getitem(g, index), np.shape(_raw(v)))


SETITEM = Op("setitem", _setitem_impl, (_setitem_dx, _setitem_dv),
             formula="x̄ = ḡ with the written places zeroed; v̄ = ḡ[index] summed to v's shape",
             symbol="[]=")

OPS = (GETITEM, SCATTER_ADD, SETITEM)


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` for slices, ints, integer arrays, masks, Ellipsis and None."""
    return _t.apply(GETITEM, x, index=_raw_index(index))

PUBLIC = ()
NUMPY = {}
