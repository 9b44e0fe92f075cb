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
from wengert.numpy import _exported, _wrapped
from wengert.numpy.namespace import complete as _complete

globals().update(_exported("linalg"))
__all__: list[str] = list(_exported("linalg"))
__all__ = list(dict.fromkeys(__all__ + _complete(globals(), _np.linalg, _FUNCTION_TABLE, {},
                                                 _wrapped)))
