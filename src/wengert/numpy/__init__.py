"""NumPy's API on wengert values: ``import wengert.numpy as wnp``.

Every function here works on tensors (recording gradients) and on plain NumPy
values (returning plain NumPy values). The same tables route ``np.*`` calls on
tensors, so ``np.sin(x)`` and ``wnp.sin(x)`` are the same op.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> x = wg.tensor([0.0, 1.0], requires_grad=True)
>>> y = wnp.sum(np.sin(x) * x)
>>> y.backward()
>>> np.round(x.grad, 4)
array([0.    , 1.3818])
"""

from __future__ import annotations

import numpy as _np

from ..ops import FAMILIES as _FAMILIES
from .index_tricks import c_, r_
from .lists import as_array_args as _as_array_args

#: ufunc name -> wengert function (``np.sin`` -> :func:`sin`)
UFUNC_TABLE: dict = {}
#: NumPy function -> wengert function (``np.sum`` -> :func:`sum`)
FUNCTION_TABLE: dict = {}
#: ufunc -> function for ``ufunc.reduce`` (``np.add.reduce`` -> :func:`sum`)
REDUCE_TABLE: dict = {}
#: ufunc -> function for ``ufunc.accumulate``
ACCUMULATE_TABLE: dict = {}

__all__: list[str] = []
_ufunc_functions = set()
for _family in _FAMILIES:
    _ufunc_functions.update(id(f) for f in getattr(_family, "UFUNCS", {}).values())
#: family function -> the same taking lists and tuples of traced values as arrays
_wrapped: dict = {}


def _public(fn, name):
    """``fn`` as ``wengert.numpy`` and the dispatch tables give it: elementwise functions
    as they are (their fast paths), the others taking lists and tuples that hold traced
    values as arrays (:mod:`wengert.numpy.lists`)."""
    if id(fn) in _ufunc_functions or name == "array" or not callable(fn):
        return fn
    if id(fn) not in _wrapped:
        _wrapped[id(fn)] = _as_array_args(fn, name)
    return _wrapped[id(fn)]


for _family in _FAMILIES:
    for _name in getattr(_family, "PUBLIC", ()):
        globals()[_name] = _public(getattr(_family, _name), _name)
        __all__.append(_name)
    UFUNC_TABLE.update(getattr(_family, "UFUNCS", {}))
    FUNCTION_TABLE.update({f: _public(fn, getattr(fn, "__name__", ""))
                           for f, fn in getattr(_family, "NUMPY", {}).items()})
    REDUCE_TABLE.update(getattr(_family, "REDUCE", {}))
    ACCUMULATE_TABLE.update(getattr(_family, "ACCUMULATE", {}))

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
float64 = _np.float64
float32 = _np.float32
__all__ += ["r_", "c_"]

from . import fft, linalg  # noqa: E402
