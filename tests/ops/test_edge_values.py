"""Derivatives of the primitives at edge values: huge, infinite, zero arguments.

A derivative there is either the finite number the calculus gives or refused; never a
NaN that an unselected branch of a rule leaked in.
"""

from __future__ import annotations

import numpy as np
import wengert as wg
import wengert.numpy as wnp


def test_sinc_second_derivative_is_finite_at_huge_arguments():
    # sinc''(x) ~ -2 cos(πx)/x² + ... -> 0; the small-argument series, not selected there,
    # must not turn it into NaN (its own derivative overflows at x = 1e300).
    for x in [1e300, -1e300, 1e200]:
        d2 = wg.grad(wg.grad(wnp.sinc))(x)
        assert np.isfinite(d2) and abs(d2) < 1e-100, (x, d2)
        h = wg.hessian(lambda v: wnp.sum(wnp.sinc(v)))(np.array([x, 0.0]))
        assert np.all(np.isfinite(h)), (x, h)
        np.testing.assert_allclose(h[1, 1], -np.pi ** 2 / 3)
