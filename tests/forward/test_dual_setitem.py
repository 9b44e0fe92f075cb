"""Writing into arrays made from dual numbers (``np.ones_like(d)``, then ``out[i] = ...``):
the NumPy idiom carries tangents in forward mode as it does in reverse mode and traced."""

from __future__ import annotations

import numpy as np
import wengert as wg


# -- ones_like, then setitem ---------------------------------------------------------------
def test_ones_like_then_setitem_carries_tangents_in_every_mode():
    """``out = np.zeros_like(x); out[i] = ...`` (the NumPy idiom) works in every mode: in
    forward mode zeros_like of a dual is a dual with a zero tangent."""
    x = np.array([1.5, -2.25, 0.7])

    def m(x):
        out = np.ones_like(x)
        for i in range(1, 3):
            out[i] = out[i - 1] * x[i]
        return out

    want = wg.jacrev(m)(x)
    np.testing.assert_allclose(wg.jacfwd(m)(x), want)
    np.testing.assert_allclose(wg.jvp(m, (x,), (np.ones(3),))[1], want.sum(axis=1))
    np.testing.assert_allclose(wg.jacfwd(wg.compile(m))(x), want)
