"""A format spec on a tensor or a dual number (``f"{loss:.4f}"``) formats its value as
NumPy formats an array: a number for a one-element 0-d value, a TypeError otherwise."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.forward.dual import Dual


def test_a_format_spec_formats_the_value_of_a_0d_tensor_or_dual_number():
    x = wg.tensor(2.0, requires_grad=True)
    loss = x * x
    assert f"{loss:.3f}" == "4.000" and f"{loss:>6}" == "   4.0"
    assert f"{wg.tensor(np.float32(1.5)):.2f}" == "1.50"
    assert f"{Dual(1.5, 2.0):.1f}" == "1.5"
    assert f"{loss}" == str(loss)  # no spec: the tensor as it prints


def test_a_format_spec_works_inside_a_transform_and_changes_nothing():
    seen = []

    def f(x):
        seen.append(f"{x:.2f}")
        return x * x

    assert wg.grad(f)(3.0) == 6.0
    assert wg.jvp(f, (3.0,), (1.0,)) == (9.0, 6.0)
    assert wg.hessian(f)(3.0) == 2.0
    assert seen == ["3.00"] * 3


def test_a_format_spec_on_an_array_is_refused_as_numpy_refuses_it():
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{wg.tensor([1.0, 2.0]):.2f}"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{Dual(np.ones(2), np.ones(2)):.2f}"


def test_a_format_spec_on_a_value_being_traced_is_refused():
    def f(x):
        return f"{x:.2f}"

    with pytest.raises(TypeError, match="unsupported format string"):
        wg.trace(f, 1.0)
