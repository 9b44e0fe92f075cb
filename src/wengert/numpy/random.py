"""``numpy.random`` in ``wengert.numpy``: NumPy's own functions and classes, as in
``autograd.numpy.random`` (random numbers have no derivative; they draw from NumPy's
global state, the same as ``np.random``'s). Given a value that carries a derivative (a
tensor ``loc``) they raise, as NumPy converts it.

Examples
--------
>>> import numpy as np
>>> import wengert.numpy.random as npr
>>> npr.default_rng(0).normal() == np.random.default_rng(0).normal()
True
"""

from __future__ import annotations

import numpy as _np
from wengert.numpy.namespace import complete as _complete

__all__: list[str] = _complete(globals(), _np.random, {}, {}, {})
