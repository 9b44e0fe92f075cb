"""``np.emath`` (complex outside the real domain, ``wengert.ops.decompositions.emath``) and
``np.lib.stride_tricks.sliding_window_view`` (``wengert.ops.decompositions.assembly``): NumPy's
values and dtypes, derivatives to second order in both modes, and their refusals."""

from __future__ import annotations

import pytest

import numpy as np
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


# -- the derivative follows NumPy's own branch on both sides of every cut ---------------------
H = 1e-6


def _z(re, im):
    """A complex number with this real and imaginary part (a signed zero kept)."""
    z = np.empty((), complex)
    z.real, z.imag = re, im
    return z[()]


def _derivatives(f, z, across):
    """(∂f/∂x, ∂f/∂y) of NumPy's f at z: along the cut central differences, across it
    (``across`` names the part the cut separates: "re" or "im") one-sided ones that stay
    on the side its signed zero names."""
    def partial(dim):
        def at(k):  # (z.imag + 0.0 would turn −0 into +0: a step is added to one part)
            if k == 0:
                return f(z)
            return f(_z(z.real + k, z.imag) if dim == "re" else _z(z.real, z.imag + k))
        if dim != across:
            return (at(H) - at(-H)) / (2 * H)
        s = -H if np.signbit(z.real if dim == "re" else z.imag) else H
        return (-3 * at(0.0) + 4 * at(s) - at(2 * s)) / (2 * s)

    return partial("re"), partial("im")


def _cut(points, across):
    """Each point on both sides: +0 and −0 in the part that crosses the cut."""
    if across == "im":
        return [(_z(x, s), across) for x in points for s in (0.0, -0.0)]
    return [(_z(s, y), across) for y in points for s in (0.0, -0.0)]


CUTS = {
    "emath.sqrt": (np.emath.sqrt, _cut([-2.0, -0.5], "im")),
    "emath.log": (np.emath.log, _cut([-2.0], "im")),
    "emath.log2": (np.emath.log2, _cut([-2.0], "im")),
    "emath.log10": (np.emath.log10, _cut([-2.0], "im")),
    "emath.logn": (lambda z: np.emath.logn(3.0, z), _cut([-2.0], "im")),
    "emath.logn base": (lambda n: np.emath.logn(n, 3.0), _cut([-2.0], "im")),
    "emath.power": (lambda z: np.emath.power(z, 2.5), _cut([-2.0], "im")),
    "emath.power exponent": (lambda p: np.emath.power(-2.0, p), [(_z(0.5, 0.3), "none")]),
    "emath.arccos": (np.emath.arccos, _cut([2.0, -2.0], "im")),
    "emath.arcsin": (np.emath.arcsin, _cut([2.0, -2.0], "im")),
    "emath.arctanh": (np.emath.arctanh, _cut([2.0, -2.0], "im")),
    "arcsinh": (np.arcsinh, _cut([2.0, -2.0], "re")),
    "arctan": (np.arctan, _cut([2.0, -2.0], "re")),
    "arccosh": (np.arccosh, _cut([0.5, -0.5, -2.0], "im")),
    "log1p": (np.log1p, _cut([-3.0], "im")),
    "arccosh left half-plane": (np.arccosh, [(_z(-2.5, 0.4), "none"), (_z(-0.5, -1.5), "none")]),
}


@pytest.mark.parametrize("name", list(CUTS))
def test_complex_derivatives_follow_numpys_branch_on_both_sides_of_each_cut(name):
    # the gradients of the real and imaginary parts, the JVPs along x and y, and the
    # holomorphic derivative, against differences of NumPy's own function that stay on the
    # side of the cut that the signed zero names (arccos and arcsin took the other side at
    # x ± 0j, arcsinh at ±0 + iy and arccosh everywhere left of the imaginary axis)
    f, points = CUTS[name]
    for z, across in points:
        dx, dy = _derivatives(f, z, across)
        for got, want in (
            (wg.jvp(f, (z,), (1.0 + 0j,))[1], dx),
            (wg.jvp(f, (z,), (1j,))[1], dy),
            (wg.grad(lambda t: np.real(f(t)))(z), dx.real - 1j * dy.real),
            (wg.grad(lambda t: np.imag(f(t)))(z), dx.imag - 1j * dy.imag),
            (wg.grad(f, holomorphic=True)(z), dx),
        ):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=repr(z))


REAL_OUTSIDE = {  # real inputs NumPy casts to complex (+0j: the upper side of each cut)
    "sqrt": (np.emath.sqrt, [-4.0, -0.5, 2.0]),
    "log": (np.emath.log, [-4.0, 0.5]),
    "log10": (np.emath.log10, [-4.0]),
    "arccos": (np.emath.arccos, [2.0, -2.0, 3.0, 0.5]),
    "arcsin": (np.emath.arcsin, [2.0, -2.0, 0.5]),
    "arctanh": (np.emath.arctanh, [2.0, -3.0, 0.5]),
    "power": (lambda x: np.emath.power(x, 0.5), [-4.0, 2.0]),
}


@pytest.mark.parametrize("name", list(REAL_OUTSIDE))
def test_real_inputs_outside_the_domain_differentiate_numpys_values(name):
    f, points = REAL_OUTSIDE[name]
    x = np.array(points)
    for part in (np.real, np.imag):
        want = [(part(f(x + H * e)) - part(f(x - H * e))) @ e / (2 * H) for e in np.eye(len(x))]
        np.testing.assert_allclose(wg.grad(lambda a, p=part: np.sum(p(f(a))))(x), want,
                                   rtol=1e-6, atol=1e-7)
    t = wg.jvp(f, (x,), (np.ones(len(x)),))[1]
    np.testing.assert_allclose(t, (f(x + H) - f(x - H)) / (2 * H), rtol=1e-6, atol=1e-7)
    # -0.0 among negative entries: cast with the others, NumPy's value and a finite slope
    # next to it
    with_zero = np.array([-0.0, -4.0])
    with np.errstate(divide="ignore", invalid="ignore"):  # (log of 0: -inf, as NumPy)
        np.testing.assert_array_equal(f(wg.tensor(with_zero)).numpy(), f(with_zero))
