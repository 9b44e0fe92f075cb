"""autograd.numpy.random -> wengert.numpy.random (NumPy's own)."""
from wengert.numpy.random import *  # noqa: F403
