"""``numpy.emath`` (``numpy.lib.scimath``) on wengert values: the square root, logarithms,
power and inverse trigonometric functions that turn complex outside the real domain, as
NumPy's (:mod:`wengert.ops.decompositions.emath`).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.numpy.emath.sqrt(wg.tensor([-4.0, 4.0]))
tensor([0.+2.j, 2.+0.j])
"""

from __future__ import annotations

import numpy as _np
from wengert.numpy import FUNCTION_TABLE as _FUNCTION_TABLE
from wengert.numpy import _wrapped
from wengert.numpy.namespace import complete as _complete

__all__: list[str] = _complete(globals(), _np.emath, _FUNCTION_TABLE, {}, _wrapped)
