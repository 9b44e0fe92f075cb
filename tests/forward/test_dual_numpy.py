"""NumPy functions and methods called on dual numbers: NumPy's own signatures work, and the
tangents are those of the function."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.errors import EscapedLevelError
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
    outer = Tag("outer")  # made after wg.Dual's own tag: inside it
    x = wg.Dual(wg.Dual(2.0, 1.0), wg.Dual(1.0, 0.0), tag=outer)
    y = x * x
    assert (y.primal.primal, y.primal.tangent, y.tangent.primal, y.tangent.tangent) == (
        4.0, 4.0, 4.0, 2.0)


def test_a_dual_over_a_value_of_a_level_inside_its_tag_is_refused():
    # wg.Dual(x, 1.0) inside wg.derivative would be outside the derivative's level, so an
    # op meeting it and x took it for a constant there: d/dx (Dual(x, 1) * x).primal was 0
    with pytest.raises(ValueError, match="inside the level of this dual number"):
        wg.derivative(lambda x: (wg.Dual(x, 1.0) * x).primal)(2.0)
    with pytest.raises(ValueError, match="inside the level of this dual number"):
        wg.derivative(lambda x: wg.Dual(1.0, x))(2.0)
    with pytest.raises(ValueError, match="a tensor of level"):
        wg.grad(lambda x: (wg.Dual(x, 1.0) * x).primal)(2.0)
    later = Tag("later")  # a dual number of a later tag is inside wg.Dual's own
    with pytest.raises(ValueError, match="inside the level of this dual number"):
        wg.Dual(wg.Dual(2.0, 1.0, tag=later), 1.0)

    def f(x):  # the spelling the message gives: a tag made inside the transform
        return (wg.Dual(x, 1.0, tag=Tag()) * x).primal

    assert wg.derivative(f)(2.0) == 4.0
    assert wg.grad(f)(2.0) == 4.0
    x = wg.tensor(2.0, requires_grad=True)  # a user's tensor is at wg.Dual's level
    assert (wg.Dual(x, 1.0) * x).tangent.item() == 2.0


def test_a_dual_over_a_value_that_escaped_its_transform_raises_the_escape_error():
    kept = []
    wg.derivative(lambda x: kept.append(x) or x)(1.0)
    wg.grad(lambda x: kept.append(x) or x)(1.0)
    for value in kept:
        with pytest.raises(EscapedLevelError, match="finished"):
            wg.Dual(value, 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64])
def test_linspace_of_duals_keeps_numpy_dtype(dtype):
    a = np.array([1.0, 2.0], dtype=dtype)
    b = np.array([3.0, 5.0], dtype=dtype)
    y = np.linspace(wg.Dual(a, np.ones(2, dtype=dtype)), b, 4)
    want = np.linspace(a, b, 4)
    assert y.primal.dtype == y.tangent.dtype == want.dtype
    np.testing.assert_allclose(y.primal, want, rtol=1e-3)
    np.testing.assert_allclose(y.tangent, np.linspace(np.ones(2), np.zeros(2), 4), rtol=1e-3)


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef])
def test_cov_and_corrcoef_of_float32_duals_are_float64_as_in_numpy(fn):
    a = (np.arange(6.0).reshape(2, 3) ** 2).astype(np.float32)
    y = fn(wg.Dual(a, np.ones((2, 3), dtype=np.float32)))
    assert y.primal.dtype == y.tangent.dtype == fn(a).dtype == np.float64
    np.testing.assert_allclose(y.primal, fn(a))


@pytest.mark.parametrize("value", [np.float32(1.5), np.float16(1.5), np.complex64(1 + 1j),
                                   np.array(1.5, dtype=np.float32)])
def test_a_float_tangent_takes_the_dtype_of_a_0d_primal(value):
    d = wg.Dual(value, 1.0)
    assert type(d.tangent) is np.ndarray and d.tangent.dtype == d.primal.dtype
    assert d.tangent.shape == () and d.tangent == 1.0
    assert repr(wg.Dual(np.float32(1.5), 1.0)) == "Dual(1.5, 1.0)"


def test_setting_a_dual_numbers_shape_or_dtype_is_refused_with_the_spelling_to_use():
    d = wg.Dual(np.arange(4.0), np.ones(4))
    with pytest.raises(AttributeError, match=r"shape of a dual number in place.*x\.reshape"):
        d.shape = (2, 2)
    with pytest.raises(AttributeError, match=r"dtype of a dual number in place.*x\.astype"):
        d.dtype = np.float32
    assert d.shape == (4,)
