"""``np.emath`` (complex outside the real domain, ``wengert.ops.emath``) and
``np.lib.stride_tricks.sliding_window_view`` (``wengert.ops.assembly``): NumPy's values
and dtypes, derivatives to second order in both modes, and their refusals."""

from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.testing import check_grads

SWV = np.lib.stride_tricks.sliding_window_view
EMATH = {
    "sqrt": (np.emath.sqrt, np.array([4.0, -4.0])),
    "sqrt real": (np.emath.sqrt, np.array([4.0, 9.0])),
    "log": (np.emath.log, np.array([1.5, -2.0])),
    "log2": (np.emath.log2, np.array([1.5, -2.0])),
    "log10": (np.emath.log10, np.array([1.5, -2.0])),
    "logn": (lambda a: np.emath.logn(2, a), np.array([8.0, -8.0])),
    "logn base": (lambda n: np.emath.logn(n, np.array([3.0, 5.0])), np.array([-2.0, 3.0])),
    "power": (lambda a: np.emath.power(a, 1 / 3), np.array([-8.0, 8.0])),
    "arccos": (np.emath.arccos, np.array([0.5, 2.0])),
    "arcsin": (np.emath.arcsin, np.array([0.5, -2.0])),
    "arctanh": (np.emath.arctanh, np.array([0.5, 2.0])),
}


@pytest.mark.parametrize("name", list(EMATH))
def test_emath_values_dtypes_and_derivatives(name):
    f, x = EMATH[name]
    want, got = f(x), f(wg.tensor(x)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14)

    def real_loss(a):  # a real function of the (possibly complex) result
        y = f(a)
        return np.real(y) * np.imag(y) + np.real(y)

    assert check_grads(real_loss, (x,), order=2, modes=("rev", "fwd"))


def test_emath_dtypes_of_float32_and_integers_as_numpy():
    for x in (np.array([-4.0], dtype=np.float32), np.array([-4, 9]), np.array([4, 9])):
        np.testing.assert_array_equal(np.emath.sqrt(wg.tensor(x)).numpy(), np.emath.sqrt(x))
        assert np.emath.sqrt(wg.tensor(x)).dtype == np.emath.sqrt(x).dtype
    x = np.array([-2, 4])
    np.testing.assert_allclose(np.emath.power(wg.tensor(x), -2).numpy(), np.emath.power(x, -2))


def test_emath_gradient_of_a_real_input_is_real():
    g = wg.grad(lambda x: np.sum(np.abs(np.emath.sqrt(x)) ** 2))(np.array([4.0, -4.0]))
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, [1.0, -1.0])  # |sqrt(x)|² = |x|


def test_emath_under_a_trace_is_refused():
    with pytest.raises(TypeError, match="depends on the values"):
        wg.compile(np.emath.sqrt)(np.array([4.0, -4.0]))


@pytest.mark.parametrize("kwargs", [dict(window_shape=(2, 2)), dict(window_shape=2, axis=0),
                                    dict(window_shape=(2, 3), axis=(0, 1)),
                                    dict(window_shape=2, axis=-1),
                                    dict(window_shape=(2, 2), axis=(1, 1))])
def test_sliding_windows_are_numpys_and_differentiate(kwargs):
    x = np.arange(12.0).reshape(3, 4) * 0.3 - 1.0
    want = SWV(x, **kwargs)
    got = SWV(wg.tensor(x), **kwargs)
    np.testing.assert_array_equal(got.numpy(), want)
    assert check_grads(lambda a: SWV(a, **kwargs) ** 2, (x,), order=2, modes=("rev", "fwd"))
    f = lambda a: np.sum(SWV(a, **kwargs) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.compile(f)(x), f(x))
    np.testing.assert_allclose(wg.grad(wg.compile(f))(x), wg.grad(f)(x))


def test_each_entry_gets_the_sum_over_its_windows():
    g = wg.grad(lambda x: np.sum(SWV(x, 2)))(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0, 2.0, 1.0])


def test_sliding_window_misuse_as_numpy():
    x = wg.tensor(np.ones((3, 4)), requires_grad=True)
    with pytest.raises(ValueError, match="window_shape"):
        SWV(x, 2)  # one window size for two axes
    with pytest.raises(ValueError, match="writeable"):
        SWV(x, (2, 2), writeable=True)
