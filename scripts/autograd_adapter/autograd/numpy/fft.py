"""autograd.numpy.fft -> wengert.numpy.fft."""
from wengert.numpy.fft import *  # noqa: F403
