"""NumPy functions and methods called on dual numbers: NumPy's own signatures work, and the
tangents are those of the function."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg


def test_clip_takes_numpy_2_min_max_keywords_on_duals_and_tensors():
    d = wg.Dual(np.arange(4.0), np.ones(4))
    for y in (np.clip(d, max=2.0), d.clip(max=2.0), np.clip(d, None, 2.0)):
        np.testing.assert_array_equal(y.primal, [0.0, 1.0, 2.0, 2.0])
        np.testing.assert_array_equal(y.tangent, [1.0, 1.0, 1.0, 0.0])
    y = d.clip(min=1.0)
    np.testing.assert_array_equal(y.tangent, [0.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(wg.tensor(np.arange(4.0)).clip(max=2.0).numpy(),
                                  np.arange(4.0).clip(max=2.0))
    with pytest.raises(ValueError, match="a_min or min, not both"):
        np.clip(d, 1.0, min=2.0)
