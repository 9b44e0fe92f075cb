"""NumPy's floating-point routines and remaining arithmetic ufuncs (``wengert.ops.floating``):
NumPy's values at the special values, derivatives against finite differences to second
order in both modes, compiled graphs, and the integer ufuncs that carry no gradient."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.testing import check_grads

X = np.array([2.1, -3.3, 0.7, -0.45])
Y = np.array([1.5, 2.0, -0.4, -2.2])
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e308, 3.5, -2.0])

CASES = {
    "spacing": lambda x: np.spacing(x) * 1e15 + x,
    "nextafter": lambda x: np.nextafter(x ** 2, Y),
    "nextafter toward": lambda y: np.nextafter(X, y) * y,
    "copysign": lambda x: np.copysign(x ** 2, Y) + np.copysign(x, -1.0),
    "heaviside h0": lambda h: np.heaviside(np.array([0.0, 1.0, -1.0, 0.0]), h) * h,
    "fmod": lambda x: np.fmod(x, Y * 3.0) ** 2,
    "fmod divisor": lambda y: np.fmod(X, y * 3.0) ** 2,
    "ldexp": lambda x: np.ldexp(x ** 2, np.array([3, -2, 0, 1])),
    "modf": lambda x: np.modf(x * 3.0)[0] ** 2 + np.modf(x)[1],
    "frexp": lambda x: np.frexp(x ** 3)[0],
    "divmod": lambda x: np.divmod(x, 0.65)[1] ** 2 + np.divmod(x, 0.65)[0],
    "float_power": lambda x: np.float_power(np.abs(x), 2.5),
    "matvec": lambda x: np.matvec(np.outer(x, Y), x),
    "vecmat batched": lambda x: np.vecmat(x.reshape(2, 2), np.stack([np.outer(x[:2], Y[:2])] * 2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_derivatives_to_second_order(name):
    f = CASES[name]
    x = Y if name in ("nextafter toward", "fmod divisor", "heaviside h0") else X
    np.testing.assert_allclose(f(wg.tensor(x)).numpy(), f(x), rtol=1e-15)
    np.testing.assert_allclose(wg.compile(f)(x), f(x), rtol=1e-15)
    assert check_grads(f, (x,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("ufunc", [np.spacing, np.modf, np.frexp])
def test_special_values_are_numpys(ufunc):
    with np.errstate(all="ignore"):
        want = ufunc(SPECIAL)
        got = ufunc(wg.tensor(SPECIAL))
    for w, g in zip(want, got) if isinstance(want, tuple) else [(want, got)]:
        g = g.numpy()
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_two_input_special_values_are_numpys():
    a, b = np.meshgrid(SPECIAL, SPECIAL)
    with np.errstate(all="ignore"):
        for ufunc in (np.nextafter, np.copysign, np.heaviside, np.fmod):
            want = ufunc(a, b)
            got = ufunc(wg.tensor(a), wg.tensor(b)).numpy()
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        n = np.array([0, 1, -1, 1100, -1100, 3, 2, -2, 5])
        np.testing.assert_array_equal(np.ldexp(wg.tensor(SPECIAL), n).numpy(),
                                      np.ldexp(SPECIAL, n))


def test_the_rules_at_their_edges():
    # copysign flips the derivative where the sign changes, -0.0 included
    g = wg.grad(lambda x: np.sum(np.copysign(x, np.array([1.0, -0.0, -1.0]))))
    np.testing.assert_array_equal(g(np.array([2.0, 2.0, -2.0])), [1.0, -1.0, 1.0])
    # heaviside: no derivative in x; in h0 only where x == 0
    hx = wg.grad(lambda x: np.sum(np.heaviside(x, 0.5)))(np.array([0.0, 1.0]))
    np.testing.assert_array_equal(hx, [0.0, 0.0])
    # ldexp's derivative is 2ⁿ exactly, even where 2ⁿ alone would overflow
    d = wg.grad(lambda x: np.sum(np.ldexp(x, np.array([1030, -3]))))(np.array([1e-300, 1.0]))
    np.testing.assert_array_equal(d, [np.ldexp(1.0, 1030), 0.125])
    # frexp: the mantissa's derivative is 2^-e; the exponent is a plain integer
    m, e = np.frexp(wg.tensor([3.0, 0.3], requires_grad=True))
    assert e.dtype.kind == "i" and not getattr(e, "requires_grad", False)
    np.testing.assert_array_equal(wg.grad(lambda x: np.sum(np.frexp(x)[0]))(np.array([3.0, 0.3])),
                                  [0.25, 2.0])


def test_float_power_promotes_as_numpy():
    for x in (np.arange(1, 4), np.arange(1.0, 4.0, dtype=np.float32), np.array([1 + 1j, 2j])):
        want = np.float_power(x, 2)
        got = np.float_power(wg.tensor(x), 2).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want)
    g = wg.grad(lambda x: np.sum(np.float_power(x, 3)))(np.array([1.0, 2.0], dtype=np.float32))
    np.testing.assert_allclose(g, [3.0, 12.0])


def test_vecmat_conjugates_its_vector_as_numpy():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    a = rng.normal(size=(2, 4)) + 1j * rng.normal(size=(2, 4))
    np.testing.assert_allclose(np.vecmat(wg.tensor(v), a).numpy(), np.vecmat(v, a))
    np.testing.assert_allclose(np.matvec(a.T, wg.tensor(v)).numpy(), np.matvec(a.T, v))


def test_integer_ufuncs_carry_no_gradient_and_raise_nothing():
    i = np.array([4, 6, 9])
    for ufunc in (np.gcd, np.lcm):
        np.testing.assert_array_equal(np.asarray(ufunc(wg.tensor(i), 6)), ufunc(i, 6))
    np.testing.assert_array_equal(np.asarray(np.bitwise_count(wg.tensor(i))), np.bitwise_count(i))


def test_unsupported_arguments_say_so():
    x = wg.tensor(X, requires_grad=True)
    with pytest.raises(TypeError, match="np.copysign with arguments"):
        np.copysign(x, 1.0, where=np.array([True, False, True, True]))
    with pytest.raises(NotImplementedError, match="matvec"):
        wg.numpy.matvec(np.eye(4), x, axes=[(0, 1), 0, 0])


# -- matvec and vecmat: shapes and operands as NumPy's -------------------------------------
def test_matvec_of_a_vector_raises_as_numpy():
    # NumPy's gufunc needs a matrix (m, n) as the first operand, not a vector.
    with pytest.raises(ValueError, match="dimensions"):
        np.matvec(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="dimensions"):
        np.matvec(wg.tensor(np.ones(3)), np.ones(3))
    with pytest.raises(ValueError, match="dimensions"):
        wg.grad(lambda v: np.sum(np.matvec(np.ones(3), v)))(np.ones(3))


def test_vecmat_of_a_scalar_or_a_vector_matrix_raises_a_clear_error():
    # As NumPy: "does not have enough dimensions" (a ValueError, not an IndexError).
    with pytest.raises(ValueError, match="dimensions"):
        np.vecmat(wg.tensor(1.0), np.ones((3, 3)))
    with pytest.raises(ValueError, match="dimensions"):
        np.vecmat(wg.tensor(np.ones(3)), np.ones(3))


def test_matvec_and_vecmat_take_lists_as_numpy():
    # A list operand is an array, as for NumPy.
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.matvec(wg.tensor(a), [1.0, 2.0]).numpy(),
                                  np.matvec(a, [1.0, 2.0]))
    np.testing.assert_array_equal(np.vecmat([1.0, 2.0], wg.tensor(a)).numpy(),
                                  np.vecmat([1.0, 2.0], a))
    g = wg.grad(lambda a: np.sum(np.matvec(a, [1.0, 2.0])))(a)
    np.testing.assert_array_equal(g, [[1.0, 2.0], [1.0, 2.0]])
