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


def test_logsumexp_at_infinite_entries_follows_logaddexp():
    # logsumexp is the n-ary logaddexp: an infinite entry equal to the result takes the
    # whole weight (shared evenly on a tie), where exp(inf − inf) would give NaN.
    from wengert.ops.reduce import logsumexp

    for x, want in [([np.inf, 0.0], [1.0, 0.0]), ([np.inf, np.inf, 1.0], [0.5, 0.5, 0.0]),
                    ([-np.inf, -np.inf], [0.5, 0.5]), ([-np.inf, 0.0], [0.0, 1.0])]:
        x = np.array(x)
        np.testing.assert_array_equal(wg.grad(logsumexp)(x), want)
        np.testing.assert_array_equal(wg.grad(lambda v: wnp.logaddexp(v[0], v[1]))(x[:2]),
                                      np.asarray(want)[:2] / np.sum(np.asarray(want)[:2]))
        t = np.arange(1.0, x.size + 1)
        assert wg.jvp(logsumexp, (x,), (t,))[1] == np.dot(want, t)
        assert np.all(np.isfinite(wg.hessian(logsumexp)(x)))
    m = np.array([[np.inf, 0.0], [1.0, 2.0]], np.float32)
    g = wg.grad(lambda v: wnp.sum(logsumexp(v, axis=1)))(m)
    assert g.dtype == np.float32
    e = np.exp(-1.0)
    np.testing.assert_allclose(g, [[1.0, 0.0], [e / (1 + e), 1 / (1 + e)]], rtol=1e-6)
