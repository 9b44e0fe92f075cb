"""autograd.numpy -> NumPy itself: wengert routes np.* on its values."""
import numpy as _np
from numpy import *  # noqa: F401,F403
from numpy import fft, linalg, random  # noqa: F401

__version__ = _np.__version__
import wengert.numpy as _wnp

array = _wnp.array  # builds an array from values that carry gradients, as autograd's does
