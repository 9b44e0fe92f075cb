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

#: ufunc name -> wengert function (``np.sin`` -> :func:`sin`)
UFUNC_TABLE: dict = {}
#: NumPy function -> wengert function (``np.sum`` -> :func:`sum`)
FUNCTION_TABLE: dict = {}
#: ufunc -> function for ``ufunc.reduce`` (``np.add.reduce`` -> :func:`sum`)
REDUCE_TABLE: dict = {}
#: ufunc -> function for ``ufunc.accumulate``
ACCUMULATE_TABLE: dict = {}

__all__: list[str] = []
for _family in _FAMILIES:
    for _name in getattr(_family, "PUBLIC", ()):
        globals()[_name] = getattr(_family, _name)
        __all__.append(_name)
    UFUNC_TABLE.update(getattr(_family, "UFUNCS", {}))
    FUNCTION_TABLE.update(getattr(_family, "NUMPY", {}))
    REDUCE_TABLE.update(getattr(_family, "REDUCE", {}))
    ACCUMULATE_TABLE.update(getattr(_family, "ACCUMULATE", {}))

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
float64 = _np.float64
float32 = _np.float32

from . import fft, linalg  # noqa: E402
