"""autograd.numpy -> NumPy itself (wengert routes np.* on its values), with wengert.numpy's
functions where NumPy has the name: the same ops, which also take lists of traced values
as arrays (np.mean([x, y]), np.r_[x, y]), as autograd.numpy's functions do."""
import importlib as _importlib

import numpy as _np
from numpy import *  # noqa: F401,F403
from numpy import fft, random  # noqa: F401

import wengert.numpy as _wnp
from wengert.ops.shape import diagonal_embed as _diagonal_embed

__version__ = _np.__version__
for _name in _wnp.__all__:
    if hasattr(_np, _name):
        globals()[_name] = getattr(_wnp, _name)
array = _wnp.array  # builds an array from values that carry gradients, as autograd's does


def make_diagonal(D, offset=0, axis1=0, axis2=1):  # noqa: N803 - autograd's names
    """autograd.numpy.make_diagonal (the adjoint of np.diagonal; autograd supports only
    offset=0, axis1=-1, axis2=-2) -> wengert's diagonal_embed."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("Currently make_diagonal only supports offset=0, axis1=-1, "
                                  "axis2=-2")
    shape = _np.shape(D)
    return _diagonal_embed(D, shape + shape[-1:], 0, -1, -2)


# (``from . import linalg`` would hand back numpy.linalg, bound above by the star import)
linalg = _importlib.import_module(__name__ + ".linalg")
