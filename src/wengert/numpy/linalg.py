"""``numpy.linalg`` on wengert values: ``import wengert.numpy.linalg as wla``.

Every public name of ``numpy.linalg``: the differentiable functions are wengert's,
``matrix_rank`` (an integer) answers on the values, ``LinAlgError`` is NumPy's.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = wg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> wg.numpy.linalg.det(a).backward()
>>> a.grad
array([[ 3., -1.],
       [-1.,  2.]])
"""

from __future__ import annotations

import numpy as _np
from wengert.numpy import FUNCTION_TABLE as _FUNCTION_TABLE
from wengert.numpy import _public, _wrapped
from wengert.numpy.namespace import complete as _complete
from wengert.ops import FAMILIES as _FAMILIES
from wengert.ops.decompositions.composite import norm as _norm

norm = _public(_norm, "norm")
__all__: list[str] = ["norm"]
for _family in _FAMILIES:
    for _name in getattr(_family, "LINALG_PUBLIC", ()):
        globals()[_name] = _public(getattr(_family, _name), _name)
        __all__.append(_name)
for _name in ("matmul", "tensordot", "vecdot", "outer"):
    if _name in __all__:  # numpy.linalg's own (outer: of 1-d inputs only)
        continue
    for _family in _FAMILIES:
        if _name in getattr(_family, "PUBLIC", ()):
            globals()[_name] = _public(getattr(_family, _name), _name)
            __all__.append(_name)
            break
__all__ = list(dict.fromkeys(__all__ + _complete(globals(), _np.linalg, _FUNCTION_TABLE, {},
                                                 _wrapped)))
