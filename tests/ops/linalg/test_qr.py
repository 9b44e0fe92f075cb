"""``np.linalg.qr`` (wengert.ops.linalg.qr): NumPy's values, modes, wide matrices, refusals. (The
registry sweep checks both primitives' rules to second order in both modes.)"""

from __future__ import annotations

import pytest

import numpy as np
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


@pytest.mark.parametrize("shape", [(3, 5), (2, 3), (1, 4), (2, 2, 4), (3, 3), (5, 2), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_every_shape_in_every_mode(shape, mode):
    """NumPy's Q and R (to rounding), and derivatives of both to second order in both
    modes: wide matrices, and the complete Q of tall ones."""
    a = RNG.normal(size=shape)
    k = min(shape[-2:])
    a[..., :k, :k] += 2.0 * np.eye(k)  # its square part well conditioned
    want = np.linalg.qr(a, mode=mode)
    got = np.linalg.qr(wg.tensor(a), mode=mode)
    if mode == "r":
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
    else:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)

    def f(a):
        out = np.linalg.qr(a, mode=mode)
        if mode == "r":
            return out ** 2
        q, r = out
        return np.sum(q ** 3) + r * np.sum(q[..., 0, :])

    assert check_grads(f, (a,), order=2, modes=("rev", "fwd"))


def test_wide_gradient_against_finite_differences_of_numpy():
    a = RNG.normal(size=(3, 5)) + np.eye(3, 5) * 2.0
    w = RNG.normal(size=(3, 5))

    def loss(a):
        return np.sum(np.linalg.qr(a)[1] * w) + np.sum(np.linalg.qr(a)[0][0] ** 3)

    want = np.zeros_like(a)
    for k in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[k] = 1e-6
        want[k] = (loss(a + e) - loss(a - e)) / 2e-6
    np.testing.assert_allclose(wg.grad(loss)(a), want, rtol=1e-6, atol=1e-8)


def test_wide_compiled_float32_and_nested():
    a = RNG.normal(size=(2, 4)) + np.eye(2, 4) * 2.0

    def f(a):
        q, r = np.linalg.qr(a)
        return np.sum(r[:, 2:] ** 2) + np.sum(q * q[::-1])

    np.testing.assert_allclose(wg.grad(wg.compile(f))(a), wg.grad(f)(a), rtol=1e-10)
    np.testing.assert_allclose(wg.compile(f)(a * 2.0), f(a * 2.0), rtol=1e-12)
    g = wg.grad(f)(a.astype(np.float32))
    assert g.dtype == np.float32
    h = wg.hessian(f)(a)
    assert h.shape == (2, 4, 2, 4) and np.all(np.isfinite(h))
    np.testing.assert_allclose(h.reshape(8, 8), h.reshape(8, 8).T, rtol=1e-8, atol=1e-10)


def test_plain_int_and_empty_inputs():
    ints = np.array([[2, 1, 0], [1, 3, 1]])
    np.testing.assert_allclose(wg.numpy.linalg.qr(ints)[1], np.linalg.qr(ints)[1], atol=1e-14)
    np.testing.assert_allclose(np.linalg.qr(wg.tensor(ints), mode="r").numpy(),
                               np.linalg.qr(ints, mode="r"), atol=1e-14)
    assert np.linalg.qr(wg.tensor(np.zeros((3, 0))))[0].shape == (3, 0)


def test_refusals_say_why():
    with pytest.raises(NotImplementedError, match="raw"):
        np.linalg.qr(wg.tensor(TALL), mode="raw")
    with pytest.raises(ValueError, match="mode"):
        np.linalg.qr(wg.tensor(TALL), mode="bogus")
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        np.linalg.qr(wg.tensor(np.ones(3)))
    with pytest.warns(DeprecationWarning, match="full"):
        r = np.linalg.qr(wg.tensor(TALL), mode="full")
    np.testing.assert_allclose(r[1].numpy(), np.linalg.qr(TALL)[1], atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 2), (5, 1), (2, 3, 2)])
def test_complete_q_of_a_tall_matrix_against_finite_differences_of_numpy(shape):
    """The last m − n columns of the complete Q are LAPACK's completion: a smooth function
    of the input, differentiated as such (JAX 0.10 agrees; PyTorch refuses)."""
    a = RNG.normal(size=shape)
    w = RNG.normal(size=shape[:-1] + (shape[-2],))

    def loss(a):
        q, r = np.linalg.qr(a, mode="complete")
        return np.sum(q * w) + np.sum(r ** 2)

    want = np.zeros_like(a)
    for k in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[k] = 1e-6
        want[k] = (loss(a + e) - loss(a - e)) / 2e-6
    np.testing.assert_allclose(wg.grad(loss)(a), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wg.grad(wg.compile(loss))(a), want, rtol=1e-6, atol=1e-8)
    q = np.linalg.qr(wg.tensor(a.astype(np.float32)), mode="complete")[0].numpy()
    assert q.dtype == np.float32 and q.shape == shape[:-1] + (shape[-2],)


def test_complete_q_at_a_trivial_reflection_says_why():
    a = np.triu(np.ones((3, 2)))  # the reflections are trivial: no derivative there
    with pytest.raises(np.linalg.LinAlgError, match="trivial"):
        wg.grad(lambda a: np.sum(np.linalg.qr(a, mode="complete")[0]))(a)
    np.testing.assert_allclose(np.linalg.qr(wg.tensor(a), mode="complete")[0].numpy(),
                               np.linalg.qr(a, mode="complete")[0])  # the value is fine


def _qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * q[..., ::-1, :] * np.arange(q.shape[-1])) + np.sum(r ** 3)


RANK_DEFICIENT = {
    "tall": np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]),  # column 1 = 2 × column 0
    "square zero column": np.array([[1.0, 0.0, 2.0], [3.0, 0.0, 1.0], [0.5, 0.0, 4.0]]),
    "wide, square part singular": np.array([[1.0, 2.0, 1.0], [2.0, 4.0, 0.0]]),
    "one of a stack": np.stack([np.eye(2) + 1.0, np.ones((2, 2))]),
    "complex": np.array([[1.0 + 1j, 2.0 + 2j], [1j, 2j]]),
}


@pytest.mark.parametrize("name", list(RANK_DEFICIENT))
def test_rank_deficient_matrix_refuses_in_both_modes_to_second_order(name):
    """A zero on R's diagonal: the decomposition has no derivative (JAX and PyTorch give
    first derivatives of order 1/ε and Hessians that disagree with each other and with
    finite differences); every mode and order refuses, saying why."""
    a = RANK_DEFICIENT[name]
    f = (lambda a: np.real(_qr_loss(a))) if a.dtype.kind == "c" else _qr_loss
    calls = {
        "grad": lambda: wg.grad(f)(a),
        "jvp": lambda: wg.jvp(f, (a,), (np.ones_like(a),)),
        "hessian": lambda: wg.hessian(f)(a),
        "jacfwd(jacrev)": lambda: wg.jacfwd(wg.jacrev(f))(a),
        "jacrev(jacfwd)": lambda: wg.jacrev(wg.jacfwd(f))(a),
        "hvp": lambda: wg.hvp(f, a, np.ones_like(a)),
    }
    if a.dtype.kind == "c":
        del calls["jvp"], calls["hessian"], calls["jacfwd(jacrev)"], calls["jacrev(jacfwd)"]
        del calls["hvp"]
    for call in calls.values():
        with pytest.raises(np.linalg.LinAlgError, match="rank-deficient.*full column rank"):
            call()
    np.testing.assert_allclose(np.linalg.qr(wg.tensor(a))[1].numpy(), np.linalg.qr(a)[1])


def test_near_rank_deficient_and_badly_scaled_matrices_keep_their_derivatives():
    """Full column rank, however close to deficient or however scaled, is differentiated:
    both modes agree to second order, and the gradient matches finite differences."""
    near = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-6], [3.0, 6.0]])
    scaled = np.array([[1e-30, 2.0], [3e-30, 1.0], [0.0, 1.0]])
    for a in (near, scaled):
        h_rev = wg.hessian(_qr_loss)(a)
        h_fwd = wg.jacrev(wg.jacfwd(_qr_loss))(a)
        assert np.all(np.isfinite(h_rev))
        np.testing.assert_allclose(h_fwd, h_rev, rtol=1e-6, atol=1e-8 * np.abs(h_rev).max())
    assert check_grads(_qr_loss, (near * [1.0, 1e-3] + [0.0, 1.0]), order=2,
                       modes=("rev", "fwd"))
    # a wide matrix whose later columns are dependent is fine: only its square part counts
    wide = np.array([[2.0, 1.0, 2.0, 4.0], [1.0, 3.0, 1.0, 2.0]])
    assert check_grads(lambda a: np.sum(np.linalg.qr(a)[1] ** 2), (wide,), order=2,
                       modes=("rev", "fwd"))
