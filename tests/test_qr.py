"""``np.linalg.qr`` (wengert.ops.qr): NumPy's values, modes, refusals. (The registry sweep
checks both primitives' rules to second order in both modes.)"""

from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.testing import check_grads

RNG = np.random.default_rng(9)
TALL = RNG.normal(size=(5, 3))


def test_values_equal_numpy():
    q, r = np.linalg.qr(TALL)
    got = np.linalg.qr(wg.tensor(TALL))
    assert type(got).__name__ == "QRResult"
    np.testing.assert_allclose(got.Q.numpy(), q, atol=1e-12)
    np.testing.assert_allclose(got.R.numpy(), r, atol=1e-12)
    np.testing.assert_allclose(np.linalg.qr(wg.tensor(TALL), mode="r").numpy(), r, atol=1e-12)
    square = RNG.normal(size=(3, 3))
    np.testing.assert_allclose(np.linalg.qr(wg.tensor(square), mode="complete")[0].numpy(),
                               np.linalg.qr(square, mode="complete")[0], atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4, 2)])
def test_a_loss_of_q_and_r_to_second_order_in_both_modes(shape):
    a = RNG.normal(size=shape)

    def f(a):
        q, r = np.linalg.qr(a)
        return np.sum(q ** 3) + np.sum(r * r) + np.sum(np.diagonal(r, axis1=-2, axis2=-1))

    assert check_grads(f, (a,), order=2, modes=("rev", "fwd"))


def test_compiled_gradient_equals_eager():
    def f(a):
        return np.sum(np.linalg.qr(a)[0][:, 0] ** 2 * np.arange(5.0))

    np.testing.assert_allclose(wg.grad(wg.compile(f))(TALL), wg.grad(f)(TALL), rtol=1e-10)


def test_refusals_say_why():
    with pytest.raises(NotImplementedError, match="wide"):
        np.linalg.qr(wg.tensor(TALL.T))
    with pytest.raises(NotImplementedError, match="complete"):
        np.linalg.qr(wg.tensor(TALL), mode="complete")
    with pytest.raises(ValueError, match="mode"):
        np.linalg.qr(wg.tensor(TALL), mode="raw")
