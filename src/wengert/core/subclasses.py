"""NumPy array subclasses whose arithmetic is not ndarray's: refused, never converted.

A masked array (``np.ma.MaskedArray``) leaves its masked entries out of every
result, and an ``np.matrix`` multiplies with ``*`` and keeps two dimensions
through reductions. wengert computes with plain arrays: converting either one
silently (``np.asarray`` drops the mask, a tensor multiplies elementwise) would
differentiate another function than the one NumPy computes. So they are
refused where they enter (a transform's input, a tensor, a dual number, an
operand of an op on traced values), with the conversion to write instead.

Examples
--------
>>> import numpy as np
>>> refused_subclass(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "grad") is not None
True
>>> refused_subclass(np.ones(2), "grad") is None
True
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

__all__ = ["refused_subclass", "refuse_subclass", "REFUSED_TYPES", "masked_message",
           "matrix_message", "masked_caller"]

#: The ndarray subclasses refused as values to differentiate or compute with.
REFUSED_TYPES = (np.ma.MaskedArray, np.matrix)


def masked_message(where: str) -> str:
    """What to write instead of a masked array."""
    return (
        f"{where}: got a NumPy masked array (np.ma.MaskedArray). wengert computes with plain "
        "arrays and would silently use the masked entries as if they were not masked (so the "
        "values and gradients would not be those of NumPy's masked arithmetic). Say what the "
        "masked entries should be: pass x.filled(value) (e.g. x.filled(0.0)), x.compressed() "
        "for the unmasked entries only, or np.ma.getdata(x) for the data including the masked "
        "entries; to weight by the mask, pass the data and use np.where(np.ma.getmaskarray(x), "
        "0.0, ...)."
    )


def matrix_message(where: str) -> str:
    """What to write instead of an ``np.matrix``."""
    return (
        f"{where}: got an np.matrix, whose * and ** are matrix products (an array's are "
        "elementwise) and whose reductions keep two dimensions. wengert computes with plain "
        "arrays, so it would differentiate another function than NumPy computes. Convert it "
        "with np.asarray(m) and write matrix products with @ (m @ w), as NumPy recommends "
        "(np.matrix may be removed in a future NumPy)."
    )


def refused_subclass(x: Any, where: str) -> TypeError | None:
    """The error for a masked array or an ``np.matrix`` (``None`` for anything else)."""
    if isinstance(x, np.ma.MaskedArray):
        return TypeError(masked_message(where))
    if isinstance(x, np.matrix):
        return TypeError(matrix_message(where))
    return None


def refuse_subclass(x: Any, where: str) -> None:
    """Raise :func:`refused_subclass`'s error for ``x``, if any.

    A plain array, a float or a traced value costs one type test.
    """
    t = type(x)
    if t is np.ndarray or t is float:
        return
    error = refused_subclass(x, where)
    if error is not None:
        raise error


_MA_DIR = os.path.dirname(os.path.abspath(np.ma.__file__)) + os.sep


def masked_caller(depth: int = 1) -> bool:
    """Whether the Python code ``depth`` frames above the caller is NumPy's masked-array
    module (a traced value meeting a masked array there is converted by ``np.ma``,
    ``m + x``): asked only on the way to an error, to name the cause."""
    frame: Any = sys._getframe(depth + 1)
    return frame is not None and frame.f_code.co_filename.startswith(_MA_DIR)
