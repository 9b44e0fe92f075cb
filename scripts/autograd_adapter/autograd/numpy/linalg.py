"""autograd.numpy.linalg -> numpy.linalg, with wengert.numpy.linalg's functions where
NumPy has the name (they take lists of traced values as arrays, as autograd's do)."""
import numpy.linalg as _la
from numpy import matmul as _dot  # noqa: F401 - autograd's batched-matmul helper
from numpy import swapaxes as _swapaxes
from numpy.linalg import *  # noqa: F401,F403

import wengert.numpy.linalg as _wla

for _name in _wla.__all__:
    if hasattr(_la, _name):
        globals()[_name] = getattr(_wla, _name)


def T(x):  # noqa: N802 - autograd's helper: the transpose of the last two axes
    return _swapaxes(x, -1, -2)
