"""Assembling and trimming arrays (``ops/decompositions/assembly.py``) as NumPy does."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg


# -- trim_zeros refuses what NumPy refuses -------------------------------------------------
@pytest.mark.parametrize("kwargs, error", [
    ({"trim": "x"}, ValueError),  # not a silent no-op
    ({"axis": 5}, np.exceptions.AxisError),  # not wrapped round to axis 1
    ({"axis": (0, 0)}, (ValueError, TypeError)),  # (NumPy 2.3: a TypeError)
])
def test_trim_zeros_refuses_what_numpy_refuses(kwargs, error):
    a = np.pad(np.ones((2, 2)), 1)
    with pytest.raises(error):
        np.trim_zeros(a, **kwargs)
    with pytest.raises(error):
        np.trim_zeros(wg.tensor(a), **kwargs)
