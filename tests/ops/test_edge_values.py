"""Derivatives of the primitives at edge values: huge, infinite, zero arguments.

A derivative there is either the finite number the calculus gives or refused; never a
NaN that an unselected branch of a rule leaked in.
"""

from __future__ import annotations

import pytest

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


def test_cbrt_first_and_second_derivatives_at_zero_and_infinity_are_the_limits():
    # cbrt' = 1/(3 ∛x²): +inf at ±0, 0 at ±inf; cbrt'' = −2/(9 x^(5/3)): −inf at +0, +inf
    # at −0, −0 at +inf, +0 at −inf (JAX's values too). The rule 1/(3 ∛x²) gave NaN, its
    # derivative having 2∛x · ∛x' = 0 · inf.
    x = np.array([0.0, -0.0, np.inf, -np.inf, 8.0, -8.0])
    d1 = [np.inf, np.inf, 0.0, 0.0, 1 / 12, 1 / 12]
    d2 = [-np.inf, np.inf, -0.0, 0.0, -1 / 144, 1 / 144]
    f = lambda v: wnp.sum(wnp.cbrt(v))  # noqa: E731
    for got in (wg.grad(f)(x), [wg.jvp(wnp.cbrt, (v,), (1.0,))[1] for v in x]):
        np.testing.assert_allclose(got, d1, rtol=1e-14)
    for got in (np.diagonal(wg.hessian(f)(x)), wg.hvp(f, x, np.ones(6)),
                [wg.grad(wg.grad(wnp.cbrt))(v) for v in x],
                [wg.jacrev(wg.derivative(wnp.cbrt))(v) for v in x],
                [wg.derivative(wg.derivative(wnp.cbrt))(v) for v in x]):
        got = np.asarray(got, dtype=float)
        np.testing.assert_allclose(got, d2, rtol=1e-14)
    # the sign of the zero at ±inf (forward over forward loses it: its product rule adds
    # 0 + (−0) = +0)
    assert list(np.signbit(np.diagonal(wg.hessian(f)(x))[:4])) == [True, False, True, False]
    # the third derivative 10/(27 x^(8/3)) is +inf at ±0; float32 stays float32
    np.testing.assert_array_equal([wg.grad(wg.grad(wg.grad(wnp.cbrt)))(v) for v in x[:2]],
                                  [np.inf, np.inf])
    assert wg.hessian(f)(x.astype(np.float32)).dtype == np.float32


# ∂f/∂y, ∂²f/∂x², ∂²f/∂x∂y, ∂²f/∂y² of f = x ** y at x = 0: the limits as x → 0⁺
POWER_AT_ZERO = {
    -1.0: (-np.inf, np.inf, np.inf, np.inf),
    -0.5: (-np.inf, np.inf, np.inf, np.inf),
    0.0: (0.0, 0.0, np.inf, np.inf),
    0.5: (0.0, -np.inf, -np.inf, 0.0),
    1.0: (0.0, 0.0, -np.inf, 0.0),
    1.5: (0.0, np.inf, 0.0, 0.0),
    2.0: (0.0, 2.0, 0.0, 0.0),
    3.0: (0.0, 0.0, 0.0, 0.0),
}


def test_power_mixed_partials_at_a_zero_base_are_the_limits_in_either_order():
    # f = x ** y at x = 0: ∂²f/∂x∂y = x^(y−1)(1 + y ln x) → 0 (y > 1), −inf (0 < y ≤ 1),
    # +inf (y ≤ 0), the same in either order. They were 1 one way and 0 the other at y = 0
    # and y = 1 (the convention 0 · ln 0 = 0 on one side only), NaN at 0 < y < 1.
    f = lambda x, y: x ** y  # noqa: E731
    for y, (_, fxx, fxy, fyy) in POWER_AT_ZERO.items():
        for h in (wg.hessian(f, (0, 1))(0.0, y), wg.jacfwd(wg.jacfwd(f, (0, 1)), (0, 1))(0.0, y)):
            np.testing.assert_array_equal(np.array(h, dtype=float), [[fxx, fxy], [fxy, fyy]],
                                          err_msg=f"y = {y}")
        # reverse over either mode: each entry the limit or NaN, never another number (a
        # jacrev row's zero cotangent times an infinite partial is NaN, as in JAX and
        # PyTorch, which give NaN or wrong numbers in all four ways)
        for t in (wg.jacrev(wg.jacrev(f, (0, 1)), (0, 1)), wg.jacrev(wg.jacfwd(f, (0, 1)), (0, 1))):
            h = np.array(t(0.0, y), dtype=float)
            want = np.array([[fxx, fxy], [fxy, fyy]])
            assert np.all((h == want) | np.isnan(h)), (y, h)
    # arrays, float32: the same entries (the diagonals: off them, a zero basis tangent
    # meets the infinite ones), the dtype kept
    ys = np.array(list(POWER_AT_ZERO))
    for dt in (np.float64, np.float32):
        h = wg.hessian(lambda x, y: wnp.sum(x ** y), (0, 1))(np.zeros(8, dt), ys.astype(dt))
        assert h[0][1].dtype == dt
        for (i, j), k in [((0, 0), 1), ((0, 1), 2), ((1, 0), 2), ((1, 1), 3)]:
            np.testing.assert_array_equal(np.diagonal(h[i][j]),
                                          [v[k] for v in POWER_AT_ZERO.values()])


def test_power_exponent_derivative_at_a_zero_base_in_both_modes():
    # ∂(x ** y)/∂y at x = 0: 0 for y ≥ 0, its limit −inf for y < 0 (was inf · 0 = NaN;
    # PyTorch gives −inf, JAX NaN), in both modes, arrays and Python floats alike
    ys = np.array(list(POWER_AT_ZERO))
    want = [v[0] for v in POWER_AT_ZERO.values()]
    x = np.zeros(len(ys))
    np.testing.assert_array_equal(wg.grad(lambda y: wnp.sum(x ** y))(ys), want)
    np.testing.assert_array_equal(wg.jvp(lambda y: x ** y, (ys,), (np.ones_like(ys),))[1], want)
    np.testing.assert_array_equal([wg.grad(lambda y: 0.0 ** y)(float(y)) for y in ys], want)
    np.testing.assert_array_equal([wg.derivative(lambda y: 0.0 ** y)(float(y)) for y in ys], want)


def test_power_third_derivative_in_the_exponent_at_a_zero_base_refuses():
    f = lambda x, y: x ** y  # noqa: E731
    with pytest.raises(wg.errors.NoRuleError, match="third and higher.*x = 0"):
        wg.jacfwd(wg.hessian(f, (0, 1)), (0, 1))(0.0, 0.5)
    # away from 0, and at 0 with a constant exponent, every order is computed
    h3 = wg.jacfwd(wg.hessian(f, (0, 1)), (0, 1))(2.0, 0.5)
    assert np.all(np.isfinite(np.array(h3, dtype=float)))
    assert wg.grad(wg.grad(wg.grad(lambda x: x ** 3.0)))(0.0) == 6.0
    assert wg.grad(wg.grad(wg.grad(lambda x: x ** np.array(3.0))))(0.0) == 6.0


def test_power_of_a_negative_base_keeps_its_derivatives_in_the_base():
    # x < 0, y whole: ∂f/∂x and ∂²f/∂x² exist; the derivatives in y do not (f is NaN at
    # every other y nearby): NaN, as in JAX and PyTorch
    f = lambda x, y: x ** y  # noqa: E731
    for y, fx, fxx in [(2.0, -4.0, 2.0), (3.0, 12.0, -12.0), (-1.0, -0.25, -0.25)]:
        g = wg.grad(f, (0, 1))(-2.0, y)
        assert g[0] == fx and np.isnan(g[1])
        h = np.array(wg.hessian(f, (0, 1))(-2.0, y), dtype=float)
        assert h[0, 0] == fxx and np.isnan(h[0, 1]) and np.isnan(h[1, 0])


def test_arctan2_derivatives_at_infinite_arguments_are_zero():
    # atan2 is a number at an infinite argument (π/2, π/4, ...) and its partials
    # x/(x² + y²), −y/(x² + y²) tend to 0 there, as do their derivatives; inf / inf gave NaN
    # (JAX too). A NaN argument stays NaN.
    f = wnp.arctan2
    for y, x in [(np.inf, 1.0), (1.0, np.inf), (np.inf, np.inf), (-np.inf, -np.inf),
                 (np.inf, -np.inf), (-np.inf, 0.0)]:
        for g in (wg.grad(f, (0, 1))(y, x), wg.jacfwd(f, (0, 1))(y, x),
                  wg.grad(wg.compile(f), (0, 1))(y, x)):
            np.testing.assert_array_equal(g, [0.0, 0.0])
        for h in (wg.hessian(f, (0, 1))(y, x), wg.jacfwd(wg.jacfwd(f, (0, 1)), (0, 1))(y, x)):
            np.testing.assert_array_equal(np.array(h, dtype=float), np.zeros((2, 2)))
    assert np.all(np.isnan(wg.grad(f, (0, 1))(np.nan, np.inf)))
    g = wg.grad(lambda y, x: wnp.sum(f(y, x)), (0, 1))(np.array([np.inf, 2.0], np.float32),
                                                      np.float32(3.0))
    assert g[0].dtype == np.float32
    np.testing.assert_allclose(g[0], [0.0, 3 / 13], rtol=1e-6)


def test_arctan2_derivatives_at_infinite_arguments_are_zero_beside_a_nan():
    """A NaN elsewhere in the array does not turn the derivatives at an infinite
    argument into NaN (eagerly as in a compiled gradient)."""
    f = lambda y, x: wnp.sum(wnp.arctan2(y, x))  # noqa: E731
    y, x = np.array([np.inf, np.nan, -np.inf, 1.0]), np.array([np.inf, 1.0, 2.0, -0.0])
    for g in (wg.grad(f, (0, 1))(y, x), wg.compile(wg.grad(f, (0, 1)))(y, x)):
        for got, want in zip(g, ([0.0, np.nan, 0.0, -0.0], [0.0, np.nan, 0.0, -1.0])):
            np.testing.assert_array_equal(got, want)
            assert np.signbit(got[3]) == np.signbit(want[3])


def test_power_derivative_in_the_exponent_at_a_zero_base_and_infinite_exponent_is_zero():
    """``∂(x ** y)/∂y`` at ``x = 0``, ``y = inf`` is 0 (its limit, as eagerly): a compiled
    gradient subtracted the exponent from itself (inf − inf) and gave NaN."""
    f = lambda x, y: wnp.sum(wnp.power(x, y))  # noqa: E731
    x, y = np.array([0.0, -0.0, 0.0, 2.0]), np.array([np.inf, np.inf, 3.0, np.inf])
    want = wg.grad(f, (0, 1))(x, y)
    np.testing.assert_array_equal(want[1][:3], 0.0)
    for got in (wg.compile(wg.grad(f, (0, 1)))(x, y), wg.grad(wg.compile(f), (0, 1))(x, y)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["floor", "ceil"])
def test_floor_and_ceil_of_python_floats_keep_the_sign_of_a_zero_result(name):
    # The float path (a tensor or dual number on a Python float) gives NumPy's values:
    # floor(-0.0) and ceil(-0.5) are -0.0, as np.floor / np.ceil give.
    f = getattr(wnp, name)
    for v in [-0.0, -0.5, 0.0, 0.5, -1.5, 2.5]:
        want = getattr(np, name)(v)
        got = f(wg.tensor(v, requires_grad=True)).item()
        assert got == want and np.signbit(got) == np.signbit(want), (v, got, want)
        d = wg.jvp(f, (v,), (1.0,))[0]
        assert np.signbit(d) == np.signbit(want), (v, d, want)


def test_power_second_exponent_derivative_beside_a_zero_base_is_not_nan():
    # ∂²(x ** y)/∂y² = x^y ln²x: 0 at x = 0 for y > 0, and finite at every x > 0. The
    # limit at x = 0 is built with a ∛ whose unselected lanes must not send 0 · ∞ = NaN
    # into the other entries (nor, in a graph, which takes that branch for every input,
    # into the only entry).
    x = np.array([0.0, 0.0, 2.0])
    y = np.array([1.5, 1.0, 2.0])
    want = [0.0, 0.0, 4.0 * np.log(2.0) ** 2]

    def d2(yy):
        return wg.grad(lambda b: wnp.sum(wg.grad(lambda t: wnp.sum(x ** t))(b)))(yy)

    np.testing.assert_allclose(d2(y), want, rtol=1e-15)
    np.testing.assert_allclose(wg.compile(d2)(y), want, rtol=1e-15)
    scalar = wg.grad(wg.grad(lambda t: 0.0 ** t))
    assert scalar(1.5) == 0.0
    assert wg.compile(scalar)(np.array(1.5)) == 0.0


# σ(x) to full relative precision, from the exact e^x / (1 + e^x) in decimal arithmetic
def _exact_sigmoid(x: float) -> float:
    from decimal import Decimal, getcontext

    getcontext().prec = 50
    e = Decimal(x).exp()
    return float(e / (1 + e))


_SIGMOID_POINTS = [-745.0, -700.0, -100.0, -40.0, -37.0, -30.0, -20.0, -5.0, -0.5, 0.0,
                   0.5, 5.0, 20.0, 36.0, 40.0, 700.0]


def test_sigmoid_keeps_its_relative_precision_at_very_negative_arguments():
    # (tanh(x/2) + 1) / 2 cancels for x < 0: it gave σ(-37) = 1.1e-16 (true 8.5e-17) and
    # σ(-40) = 0 (true 4.2e-18); every path now agrees with the exact value to a few ulps
    want = np.array([_exact_sigmoid(x) for x in _SIGMOID_POINTS])
    xs = np.array(_SIGMOID_POINTS)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow either
        eager = wnp.sigmoid(xs)
        floats = np.array([wnp.sigmoid(x) for x in _SIGMOID_POINTS])
        tensors = np.array([wnp.sigmoid(wg.tensor(x)).item() for x in _SIGMOID_POINTS])
        compiled = wg.compile(lambda v: wnp.sigmoid(v) * 1.0)(xs)  # a fused kernel
    for got in (eager, floats, tensors, compiled):
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)
    np.testing.assert_array_equal(compiled, eager)
    np.testing.assert_allclose(wnp.sigmoid(xs.astype(np.float32)), want.astype(np.float32),
                               rtol=4e-7, atol=1e-45)
    # its derivative σ(1 − σ) inherits the precision where σ is small
    d = wg.grad(lambda v: wnp.sum(wnp.sigmoid(v)))(xs)
    small = xs < -20
    np.testing.assert_allclose(d[small], want[small] * (1 - want[small]), rtol=4e-16)


def test_sigmoid_in_a_fused_kernel_gives_the_eager_bits():
    from wengert.graph.passes.fuse import fuse
    from wengert.graph.program import evaluate

    f = lambda v: wnp.sigmoid(v) * 2.0 + 1.0  # noqa: E731
    xs = np.array(_SIGMOID_POINTS + [np.nan, np.inf, -np.inf])
    for x in (xs, xs.astype(np.float32), np.array([-3, 0, 4]), np.array([True, False]),
              np.array([1 + 2j, -40 - 1j])):
        fused = fuse(wg.trace(f, x))
        assert any(eq.op.name.startswith("fused") for eq in fused), fused
        np.testing.assert_array_equal(evaluate(fused, [x])[0], f(x))


def test_sigmoid_of_integers_booleans_and_complex_values():
    np.testing.assert_allclose(wnp.sigmoid(np.array([3, 200], dtype=np.uint8)),
                               [_exact_sigmoid(3.0), _exact_sigmoid(200.0)], rtol=1e-15)
    np.testing.assert_allclose(wnp.sigmoid(np.array([True, False])),
                               [_exact_sigmoid(1.0), 0.5], rtol=1e-15)
    z = np.array([1 + 2j, -3 - 0.5j])
    np.testing.assert_allclose(wnp.sigmoid(z), 1 / (1 + np.exp(-z)), rtol=1e-14)
    assert np.isnan(wnp.sigmoid(np.nan)) and wnp.sigmoid(-np.inf) == 0.0


def _clip_front_ends(x, lo, hi):
    """np.clip(x, lo, hi) as each front end gives it, as plain values."""
    from wengert.graph.passes.fuse import fuse
    from wengert.graph.program import evaluate

    f = lambda v: np.clip(v, lo, hi)  # noqa: E731
    got = {"wnp": wnp.clip(x, lo, hi), "tensor": f(wg.tensor(x)).numpy(),
           "compile": wg.compile(f)(x), "trace": evaluate(wg.trace(f, x), [x])[0]}
    if np.asarray(x).dtype.kind in "fc":
        got["dual"] = f(wg.Dual(x, np.ones_like(x))).primal
        chain = lambda v: np.clip(v * 1, lo, hi) - 0  # noqa: E731
        fused = fuse(wg.trace(chain, x))
        assert any(eq.op.name.startswith("fused") for eq in fused), fused
        got["fused"] = evaluate(fused, [x])[0]
    return got


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)])
def test_clip_keeps_a_signed_zero_that_ties_a_bound_as_numpy_does(lo, hi):
    # NumPy's clip keeps x where it equals a bound: clip(-0.0, 0.0, 1.0) is -0.0
    x = np.array([-0.0, 0.0, -1.0, 2.0, np.nan, -np.inf])
    want = np.clip(x, lo, hi)
    for name, got in _clip_front_ends(x, lo, hi).items():
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=name)
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert np.signbit(wnp.clip(-0.0, 0.0, 1.0))
    assert np.signbit(np.clip(wg.tensor(-0.0), 0.0, 1.0).item())
    # the gradient at a bound passes to x (bounds included), -0.0 included
    g = wg.grad(lambda v: wnp.sum(wnp.clip(v, 0.0, 1.0)))(np.array([-0.0, 0.0, 1.0, -1.0]))
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0, 0.0])
    assert wg.jvp(lambda v: wnp.clip(v, 0.0, 1.0), (-0.0,), (1.0,))[1] == 1.0


@pytest.mark.parametrize("lo, hi", [(-10, 10), (-1000, 1000), (0, 200), (-200, 0), (None, 300),
                                    (-300, None), (np.int8(-3), np.int8(3)), (-128, 127),
                                    (-10.5, 10.5), (np.int16(-1000), 1000)])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_clip_of_small_integers_with_bounds_beyond_their_range_is_numpys(dtype, lo, hi):
    # A Python integer bound beyond the dtype's range clips nothing (NumPy's clip), where
    # maximum(x, -1000) on int8 raises OverflowError
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min + 1, 0, 5, info.max], dtype)
    try:
        want = np.clip(x, lo, hi)
    except OverflowError:
        for f in [lambda: wnp.clip(x, lo, hi), lambda: np.clip(wg.tensor(x), lo, hi),
                  lambda: wg.compile(lambda v: np.clip(v, lo, hi))(x)]:
            with pytest.raises(OverflowError):
                f()
        return
    for name, got in _clip_front_ends(x, lo, hi).items():
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want, err_msg=name)
