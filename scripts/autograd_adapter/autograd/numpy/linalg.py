"""autograd.numpy.linalg -> wengert.numpy.linalg, with autograd's two helpers."""
from wengert.numpy import matmul as _dot  # noqa: F401 - autograd's batched-matmul helper
from wengert.numpy import swapaxes as _swapaxes
from wengert.numpy.linalg import *  # noqa: F403


def T(x):  # noqa: N802 - autograd's helper: the transpose of the last two axes
    return _swapaxes(x, -1, -2)
