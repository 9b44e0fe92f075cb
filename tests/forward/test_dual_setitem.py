"""Writing into arrays made from dual numbers (``np.ones_like(d)``, then ``out[i] = ...``):
the NumPy idiom carries tangents in forward mode as it does in reverse mode and traced."""

from __future__ import annotations

import pytest

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


# -- the real and imaginary parts of a complex dual array are views ----------------------
def test_writes_into_real_and_imag_of_a_complex_dual_array_reach_the_array():
    """``z.real[i] = v`` and ``z.imag[...] = v`` write into ``z`` as NumPy's views do (they
    were written into a copy, and ``z`` silently kept its old value and tangent)."""
    z = wg.Dual(np.array([1 + 1j, 2 - 1j]), np.array([1 + 0j, 1j]))
    r = z.real
    r[0] = 5.0
    np.testing.assert_array_equal(z.primal, [5 + 1j, 2 - 1j])
    np.testing.assert_array_equal(z.tangent, [0j, 1j])
    z.imag[1] = wg.Dual(7.0, 3.0)
    np.testing.assert_array_equal(z.primal, [5 + 1j, 2 + 7j])
    np.testing.assert_array_equal(z.tangent, [0j, 3j])
    assert r.primal[0] == 5.0  # the live view follows its base

    def f(x):
        c = x.astype(complex)
        c.imag[:] = x * 2.0  # |x + 2ix| = √5 |x|
        return np.abs(c)

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(wg.jvp(f, (x,), (np.ones(2),))[0], f(x))
    np.testing.assert_allclose(wg.jacfwd(f)(x), np.sqrt(5.0) * np.eye(2))
    np.testing.assert_allclose(wg.derivative(lambda s: f(s * x)[1])(1.0), 2.0 * np.sqrt(5.0))


def test_setting_real_and_imag_of_a_dual_array_writes_into_it_as_numpy_does():
    """``z.real += v`` ends with ``z.real = ...``: the update was made, then refused
    ("property 'real' of 'Dual' object has no setter")."""
    z = wg.Dual(np.array([1 + 1j, 2 - 1j]), np.array([1 + 0j, 1j]))
    z.real += 1.0
    np.testing.assert_array_equal(z.primal, [2 + 1j, 3 - 1j])
    z.imag = wg.Dual(np.array([3.0, 4.0]), np.array([1.0, 0.0]))
    np.testing.assert_array_equal(z.primal, [2 + 3j, 3 + 4j])
    np.testing.assert_array_equal(z.tangent, [1 + 1j, 0j])
    x = wg.Dual(np.array([1.0, 2.0]), np.ones(2))
    x.real *= 3.0
    np.testing.assert_array_equal(x.tangent, [3.0, 3.0])
    with pytest.raises(TypeError, match="imaginary part"):  # NumPy's words
        x.imag = 5.0
    with pytest.raises(AttributeError, match="scalar"):
        wg.Dual(2.0, 1.0).real = 5.0


@pytest.mark.parametrize("dtype, other", [(np.float32, 1j), (np.float64, np.ones(3, complex)),
                                          (np.float32, np.ones(3, np.complex64))])
def test_an_in_place_operator_refuses_a_complex_result_into_a_real_dual_array(dtype, other):
    # NumPy refuses x += 1j for a real x (casting 'same_kind'); a dual array dropped the
    # imaginary part silently (tensors and traced arrays refused already).
    x = np.ones(3, dtype)
    with pytest.raises(TypeError, match="same_kind"):
        x += other
    d = wg.Dual(np.ones(3, dtype), np.ones(3, dtype))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output .* 'same_kind'"):
        d += other
    with pytest.raises(TypeError, match="'multiply'"):
        d *= other
    np.testing.assert_array_equal(d.primal, np.ones(3, dtype))  # (nothing written)
    d += np.ones(3)  # float64 into float32: the same kind, cast as NumPy casts it
    assert d.dtype == dtype and d.tangent.dtype == dtype
