"""``np.i0`` and its derivative ``I₁`` (``wengert.ops.bessel``): ``I₁`` against SciPy,
the derivatives to third order in both modes, and NumPy's values and refusals."""

from __future__ import annotations

import math

import pytest

import numpy as np
import wengert as wg
from wengert.ops.bessel import _i1_impl, i1
from wengert.testing import check_grads

X = np.array([0.0, -0.5, 1.3, 19.5, 21.0, -30.0, 45.0])


def test_i1_against_scipy_to_a_few_ulp():
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-40.0, 40.0, 4001), np.linspace(0.0, 700.0, 1000),
                        [19.999999, 20.0, 20.000001, 1e-300, -1e-300]])
    np.testing.assert_allclose(_i1_impl(x), special.i1(x), rtol=4e-15, atol=0)


def test_i1_at_special_values():
    with np.errstate(over="ignore"):
        got = _i1_impl(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.9, 800.0]))
    np.testing.assert_array_equal(got[:5], [0.0, -0.0, np.inf, -np.inf, np.nan])
    assert np.signbit(got[1])
    assert np.isfinite(got[5]) and got[6] == np.inf  # (I₁(709.9) ≈ 3.0e306 still fits)
    assert _i1_impl(np.float32(2.0)).dtype == np.float32
    assert _i1_impl(np.array([1, 2])).dtype == np.float64


def test_i0_values_are_numpys():
    for x in (X, np.float32(1.5), np.arange(4), np.array(2.0)):
        want = np.i0(x)
        got = np.i0(wg.tensor(x)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_the_derivatives_of_i0():
    special = pytest.importorskip("scipy.special")
    np.testing.assert_allclose(wg.grad(lambda x: np.sum(np.i0(x)))(X), special.i1(X),
                               rtol=4e-15)
    # I₀'' = (I₀ + I₂)/2, and I₀''' at 0 is 0 (I₀ is even)
    np.testing.assert_allclose(wg.hessian(np.i0)(1.5),
                               (special.i0(1.5) + special.iv(2, 1.5)) / 2, rtol=1e-14)
    assert wg.derivative(wg.derivative(wg.derivative(np.i0)))(0.0) == 0.0
    assert wg.derivative(wg.derivative(i1))(0.0) == 0.0


@pytest.mark.parametrize("x", [X, np.array(2.5), np.array([[0.3, -2.0], [4.0, 25.0]])])
def test_i0_to_second_order_in_both_modes_and_compiled(x):
    def f(x):
        return np.i0(x * 0.9) * x

    assert check_grads(f, (x,), order=2, modes=("rev", "fwd"))
    np.testing.assert_allclose(wg.compile(f)(x), f(x))
    g = wg.grad(lambda x: np.sum(f(x)))
    np.testing.assert_allclose(wg.compile(g)(x), g(x), rtol=1e-14)


def test_complex_input_is_refused_as_numpy():
    with pytest.raises(TypeError, match="complex"):
        np.i0(wg.tensor(np.array([1.0 + 1j])))


# -- i0: higher derivatives near 0 and overflow --------------------------------------------
def _i0_derivative(n, x):
    """The n-th derivative of I₀ from its power series Σ (x/2)^2k / k!²."""
    total = 0.0
    for k in range(40):
        if 2 * k >= n:
            c = 1.0 / (4.0 ** k * math.factorial(k) ** 2)
            total += c * math.factorial(2 * k) / math.factorial(2 * k - n) * x ** (2 * k - n)
    return total


@pytest.mark.parametrize("x", [0.0, 1e-8, 1e-4, 0.5, 1.9, 2.1])
def test_i0_higher_derivatives_near_zero(x):
    """I₁′ = I₀ − I₁/x cancels in its derivatives near 0: the power series gives the
    fourth derivative of i0 as 3/8 at 0 and at 1e-8 (cancellation would give 6.5 at 1e-8,
    and −2.3e9 for the fifth)."""
    g = np.i0
    for n in range(1, 7):
        g = wg.grad(g)
        np.testing.assert_allclose(g(x), _i0_derivative(n, x), rtol=1e-9, atol=1e-15)
    f = np.i0
    for n in range(1, 5):
        f = (lambda h: lambda u: wg.jvp(h, (u,), (1.0,))[1])(f)
        np.testing.assert_allclose(f(x), _i0_derivative(n, x), rtol=1e-9, atol=1e-15)


def test_i0_second_derivative_overflows_to_inf():
    """Past x ≈ 713 (92 in float32) I₀ and I₁ are inf: I₁′ is inf there, not
    inf − inf/x = NaN."""
    d2 = wg.grad(wg.grad(np.i0))
    with np.errstate(all="ignore"):
        assert d2(800.0) == np.inf and d2(-800.0) == np.inf
        assert d2(np.float32(100.0)) == np.inf
