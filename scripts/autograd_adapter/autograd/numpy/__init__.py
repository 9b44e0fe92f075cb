"""autograd.numpy -> wengert.numpy, the whole of it (``from wengert.numpy import *``), so
HIPS autograd's tests measure wengert.numpy as a drop-in; with autograd's one helper that
NumPy lacks (``make_diagonal``)."""
import importlib as _importlib

import wengert.numpy as _wnp
from wengert.numpy import *  # noqa: F403
from wengert.ops.shape import diagonal_embed as _diagonal_embed

__version__ = _wnp.__version__


def make_diagonal(D, offset=0, axis1=0, axis2=1):  # noqa: N803 - autograd's names
    """autograd.numpy.make_diagonal (the adjoint of np.diagonal; autograd supports only
    offset=0, axis1=-1, axis2=-2) -> wengert's diagonal_embed."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("Currently make_diagonal only supports offset=0, axis1=-1, "
                                  "axis2=-2")
    shape = _wnp.shape(D)
    return _diagonal_embed(D, shape + shape[-1:], 0, -1, -2)


# autograd's submodules (``from . import linalg`` would find wengert.numpy's, bound above)
linalg = _importlib.import_module(__name__ + ".linalg")
fft = _importlib.import_module(__name__ + ".fft")
random = _importlib.import_module(__name__ + ".random")
