"""``numpy.fft`` on wengert values: ``import wengert.numpy.fft as wfft``.

The transforms are linear; their VJPs are transforms of the cotangent (see
:mod:`wengert.ops.fft` for the convention and the Hermitian weights of ``irfft``).
``fftfreq`` and ``rfftfreq`` are NumPy's (a traced ``d`` scales their result).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([1.0, 0.0, -1.0, 0.5], requires_grad=True)
>>> np.sum(np.abs(wg.numpy.fft.fft(x)) ** 2).backward()   # Parseval: 2·n·x
>>> x.grad
array([ 8.,  0., -8.,  4.])
"""

from __future__ import annotations

import numpy as _np
from wengert.numpy import FUNCTION_TABLE as _FUNCTION_TABLE
from wengert.numpy import _exported, _wrapped
from wengert.numpy.namespace import complete as _complete

globals().update(_exported("fft"))
__all__: list[str] = list(_exported("fft"))
__all__ = list(dict.fromkeys(__all__ + _complete(globals(), _np.fft, _FUNCTION_TABLE, {},
                                                 _wrapped)))
