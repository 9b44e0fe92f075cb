"""Hypothesis properties of reverse mode: linearity, the adjoint identity, forward = NumPy.

Functions are short random programs: a list of steps drawn from a table of
elementwise and reduction steps that stay inside their domains for any
bounded real input. Each step is written with plain ``np.*`` calls, so the
same program runs on NumPy arrays (the reference) and on wengert tensors.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numpy as np
import wengert as wg

SETTINGS = settings(max_examples=30, deadline=None)
H = 1e-6

#: Program steps: each maps an array of shape S to an array of shape S.
STEPS = {
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "arctan": np.arctan,
    "exp_small": lambda x: np.exp(0.1 * x),
    "half_square": lambda x: 0.5 * x * x,
    "plus_one": lambda x: x + 1.0,
    "x_sin_x": lambda x: x * np.sin(x),
    "rational": lambda x: x / (1.0 + x * x),
    "softplus": lambda x: np.logaddexp(x, 0.0),
    "hypot_one": lambda x: np.hypot(x, 1.0),
    "plus_sum_axis0": lambda x: x + np.sum(x, axis=0),  # reduce, broadcast back
    "times_sum_last": lambda x: x * np.sum(np.sin(x), axis=-1, keepdims=True),
    "scale_by_total": lambda x: x * np.tanh(np.sum(x)),  # full reduction
}
#: Steps whose output is a scalar: ends of programs.
ENDS = {
    "none": lambda x: x,
    "sum": np.sum,
    "sum_axis0": lambda x: np.sum(x, axis=0),
    "sum_squares": lambda x: np.sum(x * x),
}

floats = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, width=64)
shapes = hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4)
arrays = shapes.flatmap(lambda s: hnp.arrays(np.float64, s, elements=floats))
programs = st.tuples(
    st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
    st.sampled_from(sorted(ENDS)),
)
seeds = st.integers(0, 2**32 - 1)


def run(program, x):
    steps, end = program
    for name in steps:
        x = STEPS[name](x)
    return ENDS[end](x)


def make(program):
    def f(x):
        return run(program, x)

    f.__name__ = " -> ".join([*program[0], program[1]])
    return f


def _close(a, b, scale, rtol=1e-5, atol=1e-8):
    """|a - b| <= atol + rtol * scale, with a message."""
    err = abs(a - b)
    assert err <= atol + rtol * scale, f"{a!r} != {b!r} (abs error {err:.3e}, scale {scale:.3e})"


# -- forward ----------------------------------------------------------------------------
@SETTINGS
@given(programs, arrays)
def test_forward_on_tensors_equals_numpy(program, x):
    expected = run(program, x)
    t = wg.tensor(x, requires_grad=True)
    got = run(program, t)
    assert isinstance(got, wg.Tensor)
    assert got.shape == np.shape(expected)
    assert got.dtype == np.result_type(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-300)


@SETTINGS
@given(
    hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    seeds,
    st.sampled_from(["add", "subtract", "multiply", "maximum", "hypot", "logaddexp", "arctan2"]),
)
def test_binary_broadcasting_forward_and_adjoint(shapes_, seed, name):
    rng = np.random.default_rng(seed)
    (sx, sy), sout = shapes_.input_shapes, shapes_.result_shape
    x = rng.uniform(0.5, 2.0, sx) * rng.choice([-1.0, 1.0], sx)
    y = rng.uniform(0.5, 2.0, sy) * rng.choice([-1.0, 1.0], sy)
    ufunc = getattr(np, name)
    out, pullback = wg.vjp(ufunc, x, y)
    np.testing.assert_allclose(out, ufunc(x, y), rtol=1e-12)
    assert np.shape(out) == sout
    v = rng.standard_normal(sout)
    gx, gy = pullback(v)
    assert np.shape(gx) == sx and np.shape(gy) == sy
    for i, (arg, g) in enumerate([(x, gx), (y, gy)]):
        u = rng.standard_normal(np.shape(arg))
        if i == 0:
            jvp = (ufunc(x + H * u, y) - ufunc(x - H * u, y)) / (2 * H)
        else:
            jvp = (ufunc(x, y + H * u) - ufunc(x, y - H * u)) / (2 * H)
        lhs = float(np.sum(v * jvp))
        rhs = float(np.sum(g * u))
        _close(lhs, rhs, np.linalg.norm(g) * np.linalg.norm(u) + abs(rhs))


# -- linearity of the VJP ---------------------------------------------------------------
@SETTINGS
@given(programs, arrays, seeds, floats, floats)
def test_vjp_is_linear_in_the_cotangent(program, x, seed, a, b):
    rng = np.random.default_rng(seed)
    out, pullback = wg.vjp(make(program), x)
    u = rng.standard_normal(np.shape(out))
    v = rng.standard_normal(np.shape(out))
    (combined,) = pullback(a * u + b * v)
    (gu,) = pullback(u)
    (gv,) = pullback(v)
    expected = a * gu + b * gv
    scale = abs(a) * np.abs(gu) + abs(b) * np.abs(gv)
    assert np.all(np.abs(combined - expected) <= 1e-9 * (1.0 + scale)), (combined, expected)


@SETTINGS
@given(
    shapes.flatmap(
        lambda s: st.tuples(
            hnp.arrays(np.float64, s, elements=floats), hnp.arrays(np.float64, s, elements=floats)
        )
    ),
    seeds,
    floats,
    floats,
)
def test_vjp_of_two_input_composition_is_linear(xy, seed, a, b):
    x, y = xy
    f = lambda x, y: np.sin(x) * y + np.tanh(x * y) - np.sum(y * y, axis=0)
    rng = np.random.default_rng(seed)
    out, pullback = wg.vjp(f, x, y)
    u = rng.standard_normal(np.shape(out))
    v = rng.standard_normal(np.shape(out))
    combined = pullback(a * u + b * v)
    for c, gu, gv in zip(combined, pullback(u), pullback(v)):
        scale = abs(a) * np.abs(gu) + abs(b) * np.abs(gv)
        assert np.all(np.abs(c - (a * gu + b * gv)) <= 1e-9 * (1.0 + scale))


# -- the adjoint identity <v, J u> = <J^T v, u> -----------------------------------------------
@SETTINGS
@given(programs, arrays, seeds)
def test_adjoint_identity_on_random_programs(program, x, seed):
    """<v, J u> by central finite differences equals <J^T v, u> from the VJP."""
    f = make(program)
    rng = np.random.default_rng(seed)
    out, pullback = wg.vjp(f, x)
    u = rng.standard_normal(x.shape)
    v = rng.standard_normal(np.shape(out))
    (g,) = pullback(v)
    assert np.shape(g) == x.shape
    jvp = (np.asarray(f(x + H * u)) - np.asarray(f(x - H * u))) / (2 * H)
    lhs = float(np.sum(v * jvp))
    rhs = float(np.sum(g * u))
    # Rounding in the finite difference grows with the size of f; the scale of the
    # product is bounded by |J^T v| |u| (Cauchy-Schwarz).
    size = 1.0 + float(np.max(np.abs(out)))
    _close(
        lhs,
        rhs,
        np.linalg.norm(g) * np.linalg.norm(u) + abs(rhs),
        atol=1e-8 * size * (1.0 + np.linalg.norm(v)),
    )


# -- grad of a sum is the VJP with ones ---------------------------------------------------
@SETTINGS
@given(programs, arrays)
def test_grad_of_sum_is_vjp_with_ones(program, x):
    f = make(program)
    g = wg.grad(lambda x: np.sum(f(x)))(x)
    out, pullback = wg.vjp(f, x)
    (expected,) = pullback(np.ones(np.shape(out)))
    assert np.shape(g) == x.shape
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(programs, arrays)
def test_backward_equals_grad(program, x):
    """The PyTorch dialect (leaf tensor, .backward()) and the functional one agree."""
    f = make(program)
    t = wg.tensor(x, requires_grad=True)
    np.sum(f(t)).backward()
    expected = wg.grad(lambda x: np.sum(f(x)))(x)
    np.testing.assert_allclose(t.grad, expected, rtol=1e-12, atol=1e-12)
