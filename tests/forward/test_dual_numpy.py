"""NumPy functions and methods called on dual numbers: NumPy's own signatures work, and the
tangents are those of the function."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.levels import Tag


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


def test_a_dual_over_a_dual_of_its_own_tag_is_refused():
    # Dual(Dual(2, 1), Dual(1, 0)) would be 2 + ε + ε with one ε: a dual number of that
    # tag meeting it (* Dual(3, 1)) would silently take one of the two perturbations
    with pytest.raises(ValueError, match="same tag"):
        wg.Dual(wg.Dual(2.0, 1.0), wg.Dual(1.0, 0.0))
    with pytest.raises(ValueError, match="same tag"):
        wg.Dual(1.0, wg.Dual(1.0, 0.0))
    inner = Tag("inner")
    x = wg.Dual(wg.Dual(2.0, 1.0, tag=inner), wg.Dual(1.0, 0.0, tag=inner))
    y = x * x
    assert (y.primal.primal, y.primal.tangent, y.tangent.primal, y.tangent.tangent) == (
        4.0, 4.0, 4.0, 2.0)
