"""Forward mode and the full transform set, as a user meets them.

* Dual numbers over floats and arrays: every operator, ``np.*`` on duals, the repr;
* nesting without perturbation confusion, third derivatives in all eight
  forward/reverse orders, and every pairing of forward mode, functional reverse
  mode, ``GradientTape`` and ``Tensor.backward``;
* ``jvp`` (pytrees, ``has_aux``), ``linearize``, ``jacfwd`` / ``jacrev`` /
  ``jacobian`` (argnums, pytrees, shapes, the mode choice), ``hessian``, ``hvp``;
* hypothesis properties: forward = reverse, symmetric Hessians, ``hvp = H v``,
  the chain rule for Jacobians;
* the errors, each naming the problem and the fix.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert import Dual

SIN, COS = math.sin, math.cos


def third(x):
    """d³/dx³ (x sin x)."""
    return -3.0 * SIN(x) - x * COS(x)


# -- dual numbers: scalars ----------------------------------------------------------------
def test_dual_scalar_fields_and_defaults():
    d = Dual(2.0, 1.0)
    assert (d.primal, d.tangent) == (2.0, 1.0)
    assert type(d.primal) is float and type(d.tangent) is float
    assert d.shape == () and d.ndim == 0 and d.size == 1 and d.dtype == np.float64
    z = Dual(3.0)
    assert (z.primal, z.tangent) == (3.0, 0.0)
    # ints, NumPy scalars and 0-d arrays become Python floats (the scalar fast path)
    for p in (2, np.float64(2.0), np.array(2.0)):
        d = Dual(p, 1)
        assert type(d.primal) is float and type(d.tangent) is float and d.primal == 2.0


@pytest.mark.parametrize(
    "expr, primal, tangent",
    [
        (lambda d: d + 3.0, 5.0, 1.0),
        (lambda d: 3.0 + d, 5.0, 1.0),
        (lambda d: d + 3, 5.0, 1.0),
        (lambda d: 3 + d, 5.0, 1.0),
        (lambda d: d - 0.5, 1.5, 1.0),
        (lambda d: 0.5 - d, -1.5, -1.0),
        (lambda d: d * 3.0, 6.0, 3.0),
        (lambda d: 3.0 * d, 6.0, 3.0),
        (lambda d: d * 3, 6.0, 3.0),
        (lambda d: d * d, 4.0, 4.0),
        (lambda d: d / 4.0, 0.5, 0.25),
        (lambda d: 4.0 / d, 2.0, -1.0),
        (lambda d: d / d, 1.0, 0.0),
        (lambda d: d**3, 8.0, 12.0),
        (lambda d: d**3.0, 8.0, 12.0),
        (lambda d: d**0.5, math.sqrt(2.0), 0.5 / math.sqrt(2.0)),
        (lambda d: 2.0**d, 4.0, 4.0 * math.log(2.0)),
        (lambda d: d**d, 4.0, 4.0 * (math.log(2.0) + 1.0)),
        (lambda d: -d, -2.0, -1.0),
        (lambda d: +d, 2.0, 1.0),
        (lambda d: abs(d), 2.0, 1.0),
        (lambda d: abs(-d), 2.0, 1.0),
        (lambda d: d % 1.5, 0.5, 1.0),
        (lambda d: d // 1.5, 1.0, 0.0),
        (lambda d: np.sin(d), SIN(2.0), COS(2.0)),
        (lambda d: np.cos(d), COS(2.0), -SIN(2.0)),
        (lambda d: np.exp(d), math.exp(2.0), math.exp(2.0)),
        (lambda d: np.log(d), math.log(2.0), 0.5),
        (lambda d: np.sqrt(d), math.sqrt(2.0), 0.5 / math.sqrt(2.0)),
        (lambda d: np.tanh(d), math.tanh(2.0), 1.0 - math.tanh(2.0) ** 2),
        (lambda d: np.arctan(d), math.atan(2.0), 1.0 / 5.0),
        (lambda d: np.square(d), 4.0, 4.0),
        (lambda d: np.maximum(d, 1.0), 2.0, 1.0),
        (lambda d: np.minimum(d, 1.0), 1.0, 0.0),
        (lambda d: np.hypot(d, 0.0), 2.0, 1.0),
        (lambda d: np.sin(d) * d, SIN(2.0) * 2.0, SIN(2.0) + 2.0 * COS(2.0)),
        (lambda d: wnp.sin(d) * d, SIN(2.0) * 2.0, SIN(2.0) + 2.0 * COS(2.0)),
    ],
)
def test_dual_scalar_operators(expr, primal, tangent):
    y = expr(Dual(2.0, 1.0))
    assert isinstance(y, Dual)
    assert type(y.primal) is float and type(y.tangent) is float, repr(y)
    assert y.primal == pytest.approx(primal, rel=1e-15, abs=1e-15)
    assert y.tangent == pytest.approx(tangent, rel=1e-15, abs=1e-15)


def test_dual_scalar_operators_are_exact_where_arithmetic_is():
    d = Dual(2.0, 1.0)
    y = (d * d + 3.0 * d - 1.0) / 2.0  # (x² + 3x - 1)/2 at 2: value 4.5, slope (2x + 3)/2 = 3.5
    assert (y.primal, y.tangent) == (4.5, 3.5)
    assert (abs(Dual(-2.0, 1.0)).primal, abs(Dual(-2.0, 1.0)).tangent) == (2.0, -1.0)
    assert abs(Dual(0.0, 1.0)).tangent == 0.0  # abs'(0) = 0, the documented convention


def test_comparisons_act_on_primals_and_carry_no_tangent():
    d = Dual(2.0, 1.0)
    e = Dual(2.0, 5.0)
    assert (d < 3.0) is np.True_ or (d < 3.0) is True
    assert bool(d == e) and not bool(d != e)  # tangents do not take part
    assert bool(d <= e) and bool(d >= e) and not bool(d > e) and not bool(d < e)
    assert bool(3.0 > d) and bool(1 < d)  # noqa: SIM300 (the reflected comparisons)
    a = Dual(np.array([1.0, 2.0, 3.0]), np.ones(3))
    m = a > 1.5
    assert type(m) is np.ndarray and m.dtype == bool
    np.testing.assert_array_equal(m, [False, True, True])
    g = np.greater(a, 1.5)  # the ufunc too: a plain boolean array, not a tensor or dual
    assert type(g) is np.ndarray and g.tolist() == [False, True, True]
    assert type(np.isnan(a)) is np.ndarray
    # np.zeros_like is a dual with a zero tangent, so that writing into it carries tangents
    # (y = np.zeros_like(x); y[i] = f(x[i])), as it is a constant tensor in reverse mode
    z = np.zeros_like(a)
    assert type(z) is Dual and z.tag is a.tag and not np.any(z.tangent)
    assert type(np.zeros_like(a, dtype=int)) is np.ndarray
    # control flow on the primal works
    assert (lambda x: x * 2.0 if x > 1.0 else x)(d).tangent == 2.0


# -- dual numbers: arrays -----------------------------------------------------------------
X = np.array([1.0, 2.0, 3.0])
U = np.array([1.0, 0.0, 2.0])


def test_dual_array_fields():
    a = Dual(X, U)
    assert a.shape == (3,) and a.ndim == 1 and a.size == 3 and len(a) == 3
    np.testing.assert_array_equal(a.primal, X)
    np.testing.assert_array_equal(a.tangent, U)
    z = Dual(X)
    np.testing.assert_array_equal(z.tangent, np.zeros(3))
    ints = Dual(np.array([1, 2]), np.array([1, 1]))
    assert ints.primal.dtype == np.float64 and ints.tangent.dtype == np.float64
    f32 = Dual(np.ones(2, np.float32), np.ones(2))
    assert f32.primal.dtype == np.float32 and f32.tangent.dtype == np.float32
    assert np.sin(f32).tangent.dtype == np.float32
    assert [e.primal for e in a] == [1.0, 2.0, 3.0]


A = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize(
    "name, fn, primal, tangent",
    [
        ("sum", np.sum, 6.0, 3.0),
        ("method sum", lambda a: a.sum(), 6.0, 3.0),
        ("mean", np.mean, 2.0, 1.0),
        ("prod", np.prod, 6.0, 1.0 * 2 * 3 * (1.0 / 1 + 0.0 / 2 + 2.0 / 3)),
        ("max", np.max, 3.0, 2.0),
        ("dot", lambda a: np.dot(a, a), 14.0, 2 * (1.0 * 1 + 0.0 * 2 + 2.0 * 3)),
        ("norm", np.linalg.norm, math.sqrt(14.0), 7.0 / math.sqrt(14.0)),
        ("index", lambda a: a[1], 2.0, 0.0),
        ("negative index", lambda a: a[-1], 3.0, 2.0),
        ("slice", lambda a: a[1:], [2.0, 3.0], [0.0, 2.0]),
        ("fancy index", lambda a: a[np.array([2, 0])], [3.0, 1.0], [2.0, 1.0]),
        ("reshape", lambda a: np.reshape(a, (3, 1)), [[1.0], [2.0], [3.0]], [[1.0], [0.0], [2.0]]),
        ("method reshape", lambda a: a.reshape(1, 3), [[1.0, 2.0, 3.0]], [[1.0, 0.0, 2.0]]),
        ("matmul", lambda a: A @ a, [8.0, 26.0], [4.0, 13.0]),
        ("np.matmul", lambda a: np.matmul(A, a), [8.0, 26.0], [4.0, 13.0]),
        ("rmatmul", lambda a: a @ A.T, [8.0, 26.0], [4.0, 13.0]),
        ("outer", lambda a: np.outer(a, [1.0, 1.0])[:, 0], [1.0, 2.0, 3.0], [1.0, 0.0, 2.0]),
        ("where const cond", lambda a: np.where(X > 1.5, a, 0.0), [0.0, 2.0, 3.0], [0.0, 0.0, 2.0]),
        ("where dual cond", lambda a: np.where(a > 1.5, a, -a), [-1.0, 2.0, 3.0], [-1.0, 0.0, 2.0]),
        ("maximum", lambda a: np.maximum(a, 2.0), [2.0, 2.0, 3.0], [0.0, 0.0, 2.0]),
        ("clip", lambda a: np.clip(a, 1.5, 2.5), [1.5, 2.0, 2.5], [0.0, 0.0, 0.0]),
        ("cumsum", np.cumsum, [1.0, 3.0, 6.0], [1.0, 1.0, 3.0]),
        ("stack", lambda a: np.stack([a, 2.0 * a])[1], [2.0, 4.0, 6.0], [2.0, 0.0, 4.0]),
        (
            "concatenate",
            lambda a: np.concatenate([a, np.ones(1)]),
            [1.0, 2.0, 3.0, 1.0],
            [1.0, 0.0, 2.0, 0.0],
        ),
        ("exp", np.exp, np.exp(X), np.exp(X) * U),
        ("sin", np.sin, np.sin(X), np.cos(X) * U),
        ("x * sin x", lambda a: a * np.sin(a), X * np.sin(X), (np.sin(X) + X * np.cos(X)) * U),
        (
            "broadcast",
            lambda a: a[:, None] * np.ones((3, 2)),
            np.tile(X[:, None], 2),
            np.tile(U[:, None], 2),
        ),
        (
            "transpose",
            lambda a: (a[:, None] * np.ones((3, 2))).T,
            np.tile(X, (2, 1)),
            np.tile(U, (2, 1)),
        ),
    ],
)
def test_dual_array_numpy_functions(name, fn, primal, tangent):
    y = fn(Dual(X, U))
    assert isinstance(y, Dual), name
    np.testing.assert_allclose(y.primal, primal, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(y.tangent, tangent, rtol=1e-15, atol=1e-15)
    assert np.shape(y.tangent) == np.shape(y.primal)


def test_dual_tangent_is_directional_derivative():
    # the JVP of f(x) = A @ sin(x) along u is A @ (cos(x) * u), for several directions at once
    x = np.array([0.3, -0.2, 1.1])
    for u in np.eye(3):
        y = A @ np.sin(Dual(x, u))
        np.testing.assert_allclose(y.tangent, A @ (np.cos(x) * u), rtol=1e-15)


def test_dual_repr_is_stable():
    assert repr(Dual(2.0, 1.0)) == "Dual(2.0, 1.0)"
    assert repr(Dual(2.0, 1.0) + 3) == "Dual(5.0, 1.0)"
    assert repr(Dual(np.array([1.0, 2.0]), np.array([0.5, 1.0]))) == "Dual([1., 2.], [0.5, 1. ])"
    assert repr(np.sum(Dual(X, U))) == "Dual(6.0, 3.0)"
    # a dual of a running transform shows its tag
    r = wg.jvp(lambda x: (x, repr(x)), (1.0,), (2.0,), has_aux=True)[2]
    assert r.startswith("Dual(1.0, 2.0, tag=jvp#") and r.endswith(")")
    assert repr(wg.tensor(Dual(1.0, 2.0))) == "tensor(Dual(1.0, 2.0))"


def test_a_running_transforms_dual_shows_the_same_tag_at_every_run():
    """A dual number of a running transform shows its tag by its depth among the running
    perturbations (it showed the global counter of levels: rerunning a notebook cell
    printed another number); the tags stay distinct objects, so no perturbation
    confusion."""
    seen = []

    def f(x):
        def g(y):
            seen.append((repr(y), repr(x), repr(y.tag), y.tag, x.tag))
            return x * y

        return wg.derivative(g)(2.0)

    for _ in range(2):
        assert wg.derivative(f)(1.0) == 1.0  # d/dx d/dy (x y) = 1: no confusion
        assert wg.jvp(lambda x: (x, repr(x)), (1.0,), (2.0,), has_aux=True)[2] == \
            "Dual(1.0, 2.0, tag=jvp#1)"
    (r1, rx1, t1, inner1, outer1), (r2, rx2, t2, inner2, outer2) = seen
    assert (r1, rx1, t1) == (r2, rx2, t2) == (
        "Dual(2.0, 1.0, tag=derivative#2)", "Dual(1.0, 1.0, tag=derivative#1)",
        "<Tag derivative #2>")
    assert len({id(inner1), id(outer1), id(inner2), id(outer2)}) == 4
    assert outer1.order < inner1.order < outer2.order < inner2.order
    # a jacfwd / hessian inside jvp: one deeper
    reprs = []
    wg.jvp(lambda x: wg.jacfwd(lambda y: reprs.append(repr(y)) or y * x)(x), (np.ones(2),),
           (np.ones(2),))
    assert "tag=jacfwd#2" in reprs[0]


# -- nesting without perturbation confusion -----------------------------------------------
def test_perturbation_confusion_classic():
    d = wg.derivative
    assert d(lambda x: x * d(lambda y: x + y)(1.0))(1.0) == 1.0
    assert d(lambda x: x * d(lambda y: x * y)(2.0))(3.0) == 6.0
    # the same through jvp and through grad
    inner = lambda x: wg.jvp(lambda y: x + y, (1.0,), (1.0,))[1]
    assert wg.jvp(lambda x: x * inner(x), (1.0,), (1.0,))[1] == 1.0
    assert wg.grad(lambda x: x * wg.grad(lambda y: x + y)(1.0))(1.0) == 1.0
    assert wg.grad(lambda x: x * wg.derivative(lambda y: x * y)(2.0))(3.0) == 6.0
    assert wg.derivative(lambda x: x * wg.grad(lambda y: x * y)(2.0))(3.0) == 6.0


def test_inner_derivative_of_outer_variable_is_zero():
    # d/dy x = 0 inside, so the outer function is 0 and so is its derivative
    assert wg.derivative(lambda x: wg.derivative(lambda y: x)(1.0))(2.0) == 0.0
    assert wg.derivative(lambda x: x * wg.derivative(lambda y: y * y)(x))(3.0) == 12.0  # (2x²)'


@pytest.mark.parametrize("x0", [0.7, -1.3, 2.5, 0.0])
def test_third_derivative_of_x_sin_x_all_eight_orders(x0):
    f = lambda x: np.sin(x) * x
    results = {}
    for combo in itertools.product("DG", repeat=3):
        h = f
        for c in reversed(combo):
            h = (wg.derivative if c == "D" else wg.grad)(h)
        results["".join(combo)] = h(x0)
    values = set(results.values())
    assert len(values) == 1, results  # every order of forward and reverse agrees bit for bit
    (v,) = values
    assert type(v) is float
    assert v == pytest.approx(third(x0), rel=1e-15, abs=1e-15)


def test_third_derivative_through_jacfwd_jacrev_and_hessian():
    f = lambda x: np.sum(np.sin(x) * x)
    x = np.array([0.7, -1.3])
    expect = np.diag([third(0.7), third(-1.3)])
    for outer in (wg.jacfwd, wg.jacrev, wg.jacobian):
        got = outer(lambda v: np.diagonal(wg.hessian(f)(v)))(x)
        np.testing.assert_allclose(got, expect, rtol=1e-14, atol=1e-15)


# -- compositions of modes ----------------------------------------------------------------
def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_hess(x):
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        H[i, i + 1] = H[i + 1, i] = -400.0 * x[i]
        H[i + 1, i + 1] += 200.0
    return H


XR = np.array([-1.2, 1.0, 0.5, 2.0])


def test_forward_over_reverse_hessian_and_hvp():
    H = wg.hessian(rosen)(XR)
    np.testing.assert_allclose(H, rosen_hess(XR), rtol=1e-14)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(wg.hvp(rosen, XR, v), rosen_hess(XR) @ v, rtol=1e-14)


def test_every_second_order_composition_agrees():
    H = rosen_hess(XR)
    ways = {
        "jacfwd(grad)": wg.jacfwd(wg.grad(rosen)),
        "jacrev(grad)": wg.jacrev(wg.grad(rosen)),
        "jacfwd(jacfwd)": wg.jacfwd(wg.jacfwd(rosen)),
        "jacrev(jacfwd)": wg.jacrev(wg.jacfwd(rosen)),
        "jacobian(jacobian)": wg.jacobian(wg.jacobian(rosen)),
    }
    for name, h in ways.items():
        np.testing.assert_allclose(h(XR), H, rtol=1e-13, err_msg=name)


def test_reverse_over_forward():
    x = np.array([0.1, 0.2, 0.3])
    # d/dx [J_sin(x) · 1] = d/dx sum(cos x) = -sin x
    g = wg.grad(lambda x: wg.jvp(lambda y: np.sum(np.sin(y)), (x,), (np.ones(3),))[1])(x)
    np.testing.assert_allclose(g, -np.sin(x), rtol=1e-15)
    # grad of a derivative, vjp of a jvp
    assert wg.grad(wg.derivative(lambda t: t**3))(2.0) == 12.0
    _, f_vjp = wg.vjp(lambda s: wg.jvp(lambda y: np.sin(y) * s, (1.0,), (1.0,))[1], 2.0)
    assert f_vjp(1.0) == (pytest.approx(COS(1.0), rel=1e-15),)


def test_forward_over_vjp():
    out, tan = wg.jvp(lambda s: wg.vjp(lambda y: np.sin(y) * s, 1.0)[1](1.0)[0], (2.0,), (1.0,))
    assert out == pytest.approx(2.0 * COS(1.0), rel=1e-15)
    assert tan == pytest.approx(COS(1.0), rel=1e-15)


def test_reverse_over_reverse():
    assert wg.grad(wg.grad(wg.grad(lambda x: x**4)))(2.0) == 48.0
    g2 = wg.jacrev(wg.grad(rosen))(XR)
    np.testing.assert_allclose(g2, rosen_hess(XR), rtol=1e-14)


def test_outer_reverse_through_inner_hessian_of_a_closure():
    """grad over jvp over grad, where the inner function closes over the outer variable
    (meta-learning through a Hessian-vector product)."""
    loss = lambda w, th: np.sum(th * w**3)
    w0 = np.array([1.0, 2.0])
    th0 = np.array([1.0, 1.0])
    # trace(∂²loss/∂w²) = Σ 6 θ w, so its gradient in θ is 6 w
    g = wg.grad(lambda th: np.trace(wg.hessian(lambda w: loss(w, th))(w0)))(th0)
    np.testing.assert_allclose(g, 6.0 * w0)
    # H v with v = 1 is 6 θ w, whose Jacobian in θ is diag(6 w), in both modes
    for jac in (wg.jacrev, wg.jacfwd):
        J = jac(lambda th: wg.hvp(lambda w: loss(w, th), w0, np.ones(2)))(th0)
        np.testing.assert_allclose(J, np.diag(6.0 * w0), err_msg=jac.__name__)
    # scalar versions: an argument and a closure
    d = wg.derivative
    assert wg.grad(lambda x: d(lambda e: wg.grad(lambda z: z * z * e)(x))(1.0))(2.0) == 2.0
    assert wg.grad(lambda x: d(lambda e: wg.grad(lambda z: z * x * e)(1.0))(1.0))(2.0) == 1.0
    assert d(lambda x: wg.grad(lambda y: d(lambda z: x * y * z * z)(1.0))(2.0))(3.0) == 2.0


def test_transforms_nested_inside_transforms_with_arguments():
    x = np.array([1.0, 2.0])
    g = wg.grad(lambda x: np.sum(wg.hessian(lambda v: np.sum(v**3))(x)))(x)
    np.testing.assert_array_equal(g, [6.0, 6.0])
    g = wg.grad(lambda x: np.sum(wg.hvp(lambda v: np.sum(v**3), x, np.ones(2))))(x)
    np.testing.assert_array_equal(g, [6.0, 6.0])
    for outer in (wg.grad, wg.derivative):
        for inner in (wg.jacfwd, wg.jacrev):
            r = outer(lambda s, inner=inner: np.sum(inner(lambda v: v**3 * s)(x)))(1.0)
            assert r == 15.0, (outer.__name__, inner.__name__)


def test_gradient_tape_inside_jvp():
    def tape_grad(d):  # the tape differentiates x³, forward mode differentiates that again
        x = wg.tensor(d)
        with wg.GradientTape() as tape:
            tape.watch(x)
            y = x * x * x
        return tape.gradient(y, x)

    assert wg.jvp(tape_grad, (2.0,), (1.0,)) == (12.0, 12.0)
    np.testing.assert_array_equal(wg.jacfwd(tape_grad)(np.array([1.0, 2.0])), np.diag([6.0, 12.0]))

    w = wg.Variable(3.0)

    def var_grad(d):  # a Variable read inside the tape: ∂(w² d)/∂w = 2 w d
        with wg.GradientTape() as tape:
            y = w * w * d
        return tape.gradient(y, w)

    assert wg.jvp(var_grad, (2.0,), (1.0,)) == (12.0, 6.0)

    def nested(d):
        x = wg.tensor(d)
        with wg.GradientTape() as outer:
            outer.watch(x)
            with wg.GradientTape() as inner:
                inner.watch(x)
                y = np.sin(x) * x
            g = inner.gradient(y, x)
        return outer.gradient(g, x)

    assert wg.derivative(nested)(0.7) == pytest.approx(third(0.7), rel=1e-15)


def test_jvp_inside_gradient_tapes():
    x = wg.tensor(0.7)
    with wg.GradientTape() as outer:
        outer.watch(x)
        with wg.GradientTape() as inner:
            inner.watch(x)
            _, dy = wg.jvp(lambda z: np.sin(z) * z, (x,), (1.0,))
        g = inner.gradient(dy, x)
    assert outer.gradient(g, x).item() == pytest.approx(third(0.7), rel=1e-15)
    # tape, then jvp, then a tape closing over the outer tape's tensor
    x = wg.tensor(2.0)
    with wg.GradientTape() as tape:
        tape.watch(x)

        def f(d):
            v = wg.tensor(d)
            with wg.GradientTape() as t2:
                t2.watch(v)
                y = v * v * x
            return t2.gradient(y, v)  # 2 v x, whose tangent along v is 2 x

        _, tng = wg.jvp(f, (1.0,), (1.0,))
    assert tape.gradient(tng, x).item() == 2.0


def test_tensor_backward_and_jvp():
    x = wg.tensor(2.0, requires_grad=True)
    _, t = wg.jvp(lambda y: y**3, (x,), (1.0,))  # 3 x², recorded
    t.backward()
    assert x.grad == 12.0

    def backward_inside(d):
        x = wg.tensor(d, requires_grad=True)
        (x * x * x).backward()
        return x.grad

    assert wg.jvp(backward_inside, (2.0,), (1.0,)) == (12.0, 12.0)

    def two_leaves(d):  # a leaf made inside jvp from a constant still gets its gradient
        x = wg.tensor(d, requires_grad=True)
        w = wg.tensor(3.0, requires_grad=True)
        (x * x * w).backward()
        return x.grad, w.grad  # 2 x w and x², whose tangents are 2 w and 2 x

    assert wg.jvp(two_leaves, (2.0,), (1.0,)) == ((12.0, 4.0), (6.0, 4.0))

    # tensors over duals the user made: forward over PyTorch-style reverse
    x = wg.tensor(Dual(2.0, 1.0), requires_grad=True)
    w = wg.tensor(3.0, requires_grad=True)
    (x * x * w).backward()
    assert (x.grad.primal, x.grad.tangent) == (12.0, 6.0)
    assert (w.grad.primal, w.grad.tangent) == (4.0, 4.0)


# -- jvp, linearize, derivative -----------------------------------------------------------
def test_jvp_scalar_and_array():
    out, t = wg.jvp(lambda x: np.sin(x) * x, (0.5,), (1.0,))
    assert type(out) is float and type(t) is float
    assert (out, t) == (pytest.approx(SIN(0.5) * 0.5), pytest.approx(SIN(0.5) + 0.5 * COS(0.5)))
    x = np.array([0.1, 0.2])
    v = np.array([1.0, -1.0])
    out, t = wg.jvp(lambda x: A[:, :2] @ np.exp(x), (x,), (v,))
    np.testing.assert_allclose(out, A[:, :2] @ np.exp(x))
    np.testing.assert_allclose(t, A[:, :2] @ (np.exp(x) * v))
    out, t = wg.jvp(lambda x: x * 2.0, (np.ones(2, np.float32),), (np.ones(2, np.float32),))
    assert out.dtype == np.float32 and t.dtype == np.float32


def test_jvp_pytrees_in_and_out():
    out, t = wg.jvp(lambda a, b: (a * b, a + b), (2.0, 3.0), (1.0, 0.0))
    assert out == (6.0, 5.0) and t == (3.0, 1.0)
    params = {"w": np.array([1.0, 2.0]), "b": 3.0}
    dirs = {"w": np.array([1.0, 1.0]), "b": 1.0}
    out, t = wg.jvp(lambda p: {"y": p["w"] * p["b"], "z": [np.sum(p["w"])]}, (params,), (dirs,))
    assert set(out) == set(t) == {"y", "z"} and isinstance(t["z"], list)
    np.testing.assert_array_equal(out["y"], [3.0, 6.0])
    np.testing.assert_array_equal(t["y"], [4.0, 5.0])  # w' b + w b'
    assert out["z"] == [3.0] and t["z"] == [2.0]
    # lists work as the argument containers too
    assert wg.jvp(lambda x: x * 2.0, [3.0], [1.0]) == (6.0, 2.0)


def test_jvp_constant_outputs_get_zero_tangents():
    assert wg.jvp(lambda x: 5.0, (3.0,), (1.0,)) == (5.0, 0.0)
    out, t = wg.jvp(lambda x: (np.ones(2), x), (3.0,), (1.0,))
    np.testing.assert_array_equal(t[0], [0.0, 0.0])
    assert t[1] == 1.0


def test_jvp_has_aux():
    out, t, aux = wg.jvp(lambda x: (x**2, {"n": 3, "x2": x * 2.0}), (3.0,), (1.0,), has_aux=True)
    assert (out, t) == (9.0, 6.0)
    assert aux == {"n": 3, "x2": 6.0}  # aux holds values, not dual numbers
    assert type(aux["x2"]) is float
    with pytest.raises(TypeError, match="has_aux=True needs the function to return a pair"):
        wg.jvp(lambda x: x, (1.0,), (1.0,), has_aux=True)


def test_linearize():
    y, f_jvp = wg.linearize(lambda x: np.sin(x) * x, 0.5)
    assert y == pytest.approx(SIN(0.5) * 0.5)
    slope = SIN(0.5) + 0.5 * COS(0.5)
    assert f_jvp(1.0) == pytest.approx(slope) and f_jvp(2.0) == pytest.approx(2 * slope)
    y, f_jvp = wg.linearize(lambda x, y: x * y, 2.0, 3.0)
    assert (y, f_jvp(1.0, 0.0), f_jvp(0.0, 1.0), f_jvp(1.0, 1.0)) == (6.0, 3.0, 2.0, 5.0)
    _, f_jvp = wg.linearize(lambda x: x**2, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(f_jvp(np.array([1.0, 1.0])), [2.0, 4.0])
    with pytest.raises(ValueError, match=r"shape \(2,\) but its tangent has shape \(3,\)"):
        f_jvp(np.ones(3))
    with pytest.raises(TypeError, match="takes 1 tangent"):
        f_jvp(np.ones(2), np.ones(2))


def test_linearize_evaluates_the_function_once():
    calls = []

    def f(x):
        calls.append(1)
        return np.sin(x) * x[0]

    x = np.array([0.5, 1.5])
    y, f_jvp = wg.linearize(f, x)
    assert len(calls) == 1
    for v in (np.array([1.0, 0.0]), np.array([0.3, -2.0]), np.ones(2)):
        np.testing.assert_allclose(f_jvp(v), wg.jvp(f, (x,), (v,))[1], rtol=1e-14)
    assert len(calls) == 4  # the three jvp calls above; f_jvp called f never
    np.testing.assert_array_equal(y, np.sin(x) * x[0])
    # a checkpointed part is recomputed once, when the linear program is recorded
    calls.clear()
    _, f_jvp = wg.linearize(lambda x: np.sum(wg.checkpoint(f)(x) ** 2), x)
    assert len(calls) == 2
    want = wg.jvp(lambda x: np.sum((np.sin(x) * x[0]) ** 2), (x,), (np.ones(2),))[1]
    for _ in range(3):
        assert f_jvp(np.ones(2)) == pytest.approx(want)
    assert len(calls) == 2


def test_linearize_pytrees_complex_integer_outputs_and_aux():
    def f(p, s):
        return {"y": p["w"] * s, "n": np.arange(3), "t": (p["b"] ** 2, 1.0)}, p["b"] * 2.0

    p = {"w": np.array([1.0, 2.0]), "b": 3.0}
    y, f_jvp, aux = wg.linearize(f, p, 2.0, has_aux=True)
    assert aux == 6.0 and type(aux) is float
    t = f_jvp({"w": np.array([1.0, 0.0]), "b": 1.0}, 1.0)
    np.testing.assert_array_equal(t["y"], [3.0, 2.0])
    np.testing.assert_array_equal(t["n"], [0.0, 0.0, 0.0])  # integers: zero tangents
    assert t["t"] == (6.0, 0.0)
    # holomorphic and non-holomorphic complex functions, and a real input to a complex output
    z = np.array([1 + 2j, 0.5 - 1j])
    v = np.array([0.3 - 0.1j, 1j])
    for g in (lambda z: np.sin(z) * z[0], lambda z: np.abs(z) ** 2 + np.conj(z) * z[1]):
        np.testing.assert_allclose(wg.linearize(g, z)[1](v), wg.jvp(g, (z,), (v,))[1])
    x = np.array([0.2, 0.7, -1.0])
    g = lambda x: np.fft.fft(x) * 1j + x  # noqa: E731
    np.testing.assert_allclose(wg.linearize(g, x)[1](x), wg.jvp(g, (x,), (x,))[1])
    with pytest.raises(TypeError, match="tangent 0 is complex"):
        wg.linearize(g, x)[1](x * 1j)
    with pytest.raises(ValueError, match=r"the tangent has a dict with keys \['w'\]"):
        wg.linearize(f, p, 2.0, has_aux=True)[1]({"w": np.ones(2)}, 1.0)


def test_linearize_nests_and_takes_custom_vjp_functions():
    assert wg.grad(lambda x: wg.linearize(np.sin, x)[1](1.0))(0.5) == pytest.approx(-SIN(0.5))
    assert wg.jvp(lambda x: wg.linearize(lambda z: z ** 3, x)[1](1.0), (2.0,), (1.0,)) == (
        12.0, 12.0)
    np.testing.assert_allclose(
        wg.hessian(lambda x: np.sum(wg.linearize(lambda z: z ** 3, x)[1](x)))(np.ones(2)),
        18.0 * np.eye(2))  # d²/dx² of 3x² · x

    @wg.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (3.0 * x ** 2 * g,))
    # reverse-mode rule only: linearize transposes its pullback (JAX's linearize refuses)
    np.testing.assert_allclose(wg.linearize(cube, np.array([1.0, 2.0]))[1](np.ones(2)),
                               [3.0, 12.0])


def test_vjp_jvp_and_linearize_work_at_the_point_of_evaluation():
    a = np.array([1.0, 2.0])
    out, f_vjp = wg.vjp(np.sin, a)
    y, f_jvp = wg.linearize(np.sin, a)
    a[:] = 5.0  # the caller changes its array afterwards
    np.testing.assert_array_equal(f_vjp(np.ones(2))[0], np.cos([1.0, 2.0]))
    np.testing.assert_array_equal(f_jvp(np.ones(2)), np.cos([1.0, 2.0]))
    np.testing.assert_array_equal(out, np.sin([1.0, 2.0]))
    # an output that is the input (or a view of it) is the caller's own array, not the
    # transform's copy nor the caller's input
    a = np.array([1.0, 2.0])
    (x_out, s_out), f_vjp = wg.vjp(lambda x: (x, np.sin(x)), a)
    x_out *= 100.0
    np.testing.assert_array_equal(f_vjp((np.zeros(2), np.ones(2)))[0], np.cos([1.0, 2.0]))
    np.testing.assert_array_equal(a, [1.0, 2.0])
    t = np.ones(2)
    p_out, t_out = wg.jvp(lambda x: x[:1], (a,), (t,))
    assert not np.may_share_memory(p_out, a) and not np.may_share_memory(t_out, t)
    p_out, t_out = wg.jvp(lambda x, s: (x, s), (a, 1.0), (t, 1.0))
    assert p_out[0] is not a and t_out[0] is not t


def test_changing_an_output_or_aux_in_place_changes_no_pullback():
    # np.exp's rules read its output: the array vjp and linearize return must not be the
    # one the tape holds (nor an intermediate given back as aux)
    a = np.array([1.0, 2.0])
    want = np.exp(a) * 2.0
    out, f_vjp = wg.vjp(lambda x: np.exp(x) * 2.0, a)
    y, f_jvp = wg.linearize(np.exp, a)
    z, g_vjp, aux = wg.vjp(lambda x: (np.sum(np.exp(x)), np.exp(x)), a, has_aux=True)
    w, g_jvp, aux2 = wg.linearize(lambda x: (np.exp(x), {"e": np.exp(x) * 1.0}), a,
                                  has_aux=True)
    e_out, e_vjp = wg.vjp(np.exp, a)
    for v in (out, y, aux, w, aux2["e"], e_out):
        v[:] = 0.0
    np.testing.assert_allclose(f_vjp(np.ones(2))[0], want)
    np.testing.assert_allclose(f_jvp(np.ones(2) * 2.0), want)
    np.testing.assert_allclose(g_vjp(1.0)[0] * 2.0, want)
    np.testing.assert_allclose(g_jvp(np.ones(2) * 2.0), want)
    np.testing.assert_allclose(e_vjp(np.ones(2) * 2.0)[0], want)


def test_jacfwd_calling_the_function_per_input_entry_sees_one_function():
    # several inputs (or a pytree) are pushed one entry at a time, each a call of the
    # function: np.random's state is replayed for each (so dropout masks are the same, as
    # in a single call), and calls that give other values (a Generator) raise
    def dropout(a, b):
        mask = np.random.uniform(size=2) > 0.3
        return np.where(mask, a * b, 0.0) + np.sin(a)

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.random.seed(5)
    want = wg.jacrev(dropout, (0, 1))(a, b)
    after_one_call = np.random.get_state()[1].copy()
    np.random.seed(5)
    got = wg.jacfwd(dropout, (0, 1))(a, b)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(np.random.get_state()[1], after_one_call)
    np.random.seed(5)
    h = wg.hessian(lambda p: np.sum(dropout(p["a"], p["b"]) ** 2))({"a": a, "b": b})
    assert np.all(np.isfinite(h["a"]["b"]))
    rng = np.random.default_rng(0)

    def drawn(a, b):
        return a * b * rng.normal(size=2)

    with pytest.raises(RuntimeError, match="other values"):
        wg.jacfwd(drawn, (0, 1))(a, b)
    with pytest.raises(RuntimeError, match="other values"):
        wg.hessian(lambda a, b: np.sum(drawn(a, b) ** 2), (0, 1))(a, b)


def test_jacobians_and_hessian_take_has_aux():
    # the values JAX 0.10 gives for the same calls
    f = lambda x: (np.sin(x) * x.sum(), {"a": x * 2.0, "n": 3})  # noqa: E731
    x = np.array([1.0, 2.0])
    want = np.array([[2.4623779, 0.84147098], [0.90929743, -0.33914308]])
    for transform in (wg.jacfwd, wg.jacrev, wg.jacobian):
        jac, aux = transform(f, has_aux=True)(x)
        np.testing.assert_allclose(jac, want, rtol=1e-7)
        np.testing.assert_array_equal(aux["a"], [2.0, 4.0])
        assert aux["n"] == 3 and type(aux["a"]) is np.ndarray
    h, aux = wg.hessian(lambda x: (np.sum(x ** 3), x * 2.0), has_aux=True)(x)
    np.testing.assert_array_equal(h, [[6.0, 0.0], [0.0, 12.0]])
    np.testing.assert_array_equal(aux, [2.0, 4.0])
    # argnums tuples, the one-at-a-time forward path (two inputs), empty inputs
    jac, aux = wg.jacfwd(lambda a, b: (a * b, b), (0, 1), True)(x, 3.0)
    np.testing.assert_array_equal(jac[0], 3.0 * np.eye(2))
    assert aux == 3.0
    jac, aux = wg.jacfwd(lambda a: (a * 2.0, "empty"), has_aux=True)(np.ones(0))
    assert jac.shape == (0, 0) and aux == "empty"
    with pytest.raises(TypeError, match="has_aux=True needs the function to return a pair"):
        wg.jacrev(np.sin, has_aux=True)(x)


def test_jacobian_of_a_custom_vjp_function_uses_reverse_mode():
    @wg.custom_vjp
    def sine(x):
        return np.sin(x)

    sine.defvjp(lambda x: (np.sin(x), x), lambda x, g: (g * np.cos(x),))
    x = np.array([1.0, 2.0])
    tall = lambda x: np.outer(sine(x), x)  # noqa: E731  (4 outputs, 2 inputs: forward first)
    want = wg.jacrev(lambda x: np.outer(np.sin(x), x))(x)
    np.testing.assert_allclose(wg.jacobian(tall)(x), want)
    jac, aux = wg.jacobian(lambda x: (tall(x), "aux"), has_aux=True)(x)
    np.testing.assert_allclose(jac, want)
    with pytest.raises(TypeError, match="wg.jacrev instead of wg.jacfwd"):
        wg.jacfwd(tall)(x)


def test_derivative():
    assert wg.derivative(lambda x: x**3)(2.0) == 12.0
    assert type(wg.derivative(np.sin)(0.0)) is float
    np.testing.assert_array_equal(wg.derivative(lambda x: np.stack([x, x * x]))(2.0), [1.0, 4.0])


# -- Jacobians ----------------------------------------------------------------------------
def f2(x, y):
    return np.sin(x)[:, None] * y[None, :]


XJ = np.array([0.1, 0.2, 0.3])
YJ = np.array([1.0, 2.0])


def f2_jacs():
    jx = np.zeros((3, 2, 3))
    jy = np.zeros((3, 2, 2))
    for i in range(3):
        for j in range(2):
            jx[i, j, i] = np.cos(XJ[i]) * YJ[j]
            jy[i, j, j] = np.sin(XJ[i])
    return jx, jy


JACS = [wg.jacfwd, wg.jacrev, wg.jacobian]


@pytest.mark.parametrize("jac", JACS, ids=lambda j: j.__name__)
def test_jacobian_argnums_and_shapes(jac):
    jx, jy = f2_jacs()
    r = jac(f2)(XJ, YJ)
    assert r.shape == (3, 2) + (3,)  # out.shape + in.shape
    np.testing.assert_allclose(r, jx, rtol=1e-15)
    np.testing.assert_allclose(jac(f2, 1)(XJ, YJ), jy, rtol=1e-15)
    np.testing.assert_allclose(jac(f2, -1)(XJ, YJ), jy, rtol=1e-15)
    both = jac(f2, (0, 1))(XJ, YJ)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[0], jx, rtol=1e-15)
    np.testing.assert_allclose(both[1], jy, rtol=1e-15)
    one = jac(f2, (1,))(XJ, YJ)
    assert isinstance(one, tuple) and one[0].shape == (3, 2, 2)
    assert jac(lambda m: m @ m)(np.eye(2)).shape == (2, 2, 2, 2)


@pytest.mark.parametrize("jac", JACS + [wg.hessian], ids=lambda j: j.__name__)
def test_jacobians_pass_keyword_arguments_through_undifferentiated(jac):
    # as wg.grad and JAX's Jacobians do (the wrapper took positional arguments only, so
    # the call failed with "f() got an unexpected keyword argument", naming the user's f)
    def f(x, scale=1.0, offset=None):
        return np.sum(x ** 3) * scale + offset

    x = np.array([1.0, 2.0])
    if jac is wg.hessian:
        np.testing.assert_allclose(jac(f)(x, scale=2.0, offset=1.0), np.diag(12.0 * x))
        return
    np.testing.assert_allclose(jac(f)(x, scale=2.0, offset=1.0), 6.0 * x ** 2)
    np.testing.assert_allclose(jac(lambda x, w: x * w)(x, w=np.array([3.0, 4.0])),
                               np.diag([3.0, 4.0]))
    assert jac(f, has_aux=False)(2.0, offset=0.0, scale=0.5) == 6.0


@pytest.mark.parametrize("jac", JACS, ids=lambda j: j.__name__)
def test_jacobian_scalar_cases(jac):
    r = jac(lambda s: s * s)(3.0)
    assert r == 6.0 and type(r) is float
    np.testing.assert_array_equal(jac(lambda s: np.stack([s, s * s]))(3.0), [1.0, 6.0])
    np.testing.assert_allclose(jac(lambda v: np.sum(v**2))(XJ), 2 * XJ, rtol=1e-15)
    np.testing.assert_array_equal(jac(lambda v: np.ones(2))(XJ), np.zeros((2, 3)))
    assert jac(lambda v: v * 2.0)(np.ones(2, np.float32)).dtype == np.float32


@pytest.mark.parametrize("jac", JACS + [wg.hessian], ids=lambda j: j.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jacobian_of_a_0d_array_is_a_0d_array_in_every_mode(jac, dtype):
    # as wg.grad gives (and JAX): jacrev and jacobian gave a Python float for float64
    r = jac(lambda x: x ** 3)(np.array(2.0, dtype))
    assert type(r) is np.ndarray and r.shape == () and r.dtype == dtype
    assert r == 12.0  # 3x² = 12, and its derivative 6x = 12 too at x = 2
    wide = jac(lambda x: x ** 3)(np.array([2.0], dtype))
    assert type(wide) is np.ndarray and wide.shape == (1, 1)
    assert type(jac(lambda x: x ** 3)(2.0)) is float  # a Python float stays one


def test_jacfwd_block_of_a_constant_float32_output_is_float32_as_for_a_dependent_one():
    # forward mode gives the output's dtype (JAX too): a float32 output that does not
    # depend on a float64 x had a float64 block, one that does a float32 block
    x = np.ones(2)
    dependent = wg.jacfwd(lambda v: v.astype(np.float32) * 2.0)(x)
    constant = wg.jacfwd(lambda v: np.zeros(2, np.float32))(x)
    mixed = wg.jacfwd(lambda v: (v.astype(np.float32), np.zeros(3, np.float32)))(x)
    assert dependent.dtype == constant.dtype == np.float32
    assert mixed[0].dtype == mixed[1].dtype == np.float32
    assert wg.jacrev(lambda v: np.zeros(2, np.float32))(x).dtype == np.float64  # x's dtype


@pytest.mark.parametrize("jac", JACS, ids=lambda j: j.__name__)
def test_jacobian_pytrees(jac):
    r = jac(lambda p: p["a"] * p["b"])({"a": XJ, "b": 2.0 * XJ})
    assert set(r) == {"a", "b"}
    np.testing.assert_allclose(r["a"], np.diag(2.0 * XJ), rtol=1e-15)
    np.testing.assert_allclose(r["b"], np.diag(XJ), rtol=1e-15)
    r = jac(lambda v: (v, {"sq": v * v}))(XJ)
    assert isinstance(r, tuple) and set(r[1]) == {"sq"}
    np.testing.assert_array_equal(r[0], np.eye(3))
    np.testing.assert_allclose(r[1]["sq"], np.diag(2 * XJ), rtol=1e-15)


def test_jacobian_chooses_the_cheaper_mode():
    """``wg.jacobian`` runs the function once in reverse mode (tensors) to learn the output
    size, then uses forward mode (dual numbers, all tangents in one batched pass) only
    when the Jacobian is tall."""

    def spy(seen, fn):
        def f(x):
            seen.append(type(x).__name__)
            return fn(x)

        return f

    seen: list[str] = []
    wide = wg.jacobian(spy(seen, lambda x: np.sum(x**2)))(np.ones(4))  # 4 inputs, 1 output
    assert set(seen) == {"Tensor"} and len(seen) == 1
    np.testing.assert_array_equal(wide, 2 * np.ones(4))
    seen.clear()
    tall = wg.jacobian(spy(seen, lambda x: np.concatenate([x, x, x])))(np.ones(2))  # 2 -> 6
    assert seen == ["Tensor", "Dual"]
    np.testing.assert_array_equal(tall, np.vstack([np.eye(2)] * 3))
    seen.clear()
    wg.jacobian(spy(seen, lambda x: x * 2.0))(np.ones(3))  # square: the reverse pass is reused
    assert seen == ["Tensor"]


def test_hessian_argnums():
    f = lambda a, b: np.sum(a * b * b)
    a, b = XJ, 2.0 * XJ
    np.testing.assert_allclose(wg.hessian(f, 1)(a, b), np.diag(2 * a), rtol=1e-15)
    H = wg.hessian(f, (0, 1))(a, b)
    assert isinstance(H, tuple) and all(isinstance(row, tuple) and len(row) == 2 for row in H)
    np.testing.assert_array_equal(H[0][0], np.zeros((3, 3)))
    np.testing.assert_allclose(H[0][1], np.diag(2 * b), rtol=1e-15)
    np.testing.assert_allclose(H[1][0], np.diag(2 * b), rtol=1e-15)
    np.testing.assert_allclose(H[1][1], np.diag(2 * a), rtol=1e-15)
    h = wg.hessian(lambda s: s**3)(2.0)
    assert h == 12.0 and type(h) is float
    assert wg.hessian(lambda m: np.sum(m**3))(np.ones((2, 2))).shape == (2, 2, 2, 2)


def test_hvp():
    f = lambda v: np.sum(np.sin(v) * v[::-1])
    x = np.array([0.1, 0.2, 0.3])
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(wg.hvp(f, x, v), wg.hessian(f)(x) @ v, rtol=1e-14)
    assert wg.hvp(lambda s: s**3, 2.0, 1.0) == 12.0
    m = np.ones((2, 2))
    np.testing.assert_array_equal(wg.hvp(lambda m: np.sum(m**3), m, m), 6.0 * m)
    # pytrees: H v for a dict of parameters
    p = {"a": np.array([1.0, 2.0]), "b": 3.0}
    hv = wg.hvp(lambda p: np.sum(p["a"] ** 2) * p["b"], p, {"a": np.ones(2), "b": 1.0})
    np.testing.assert_array_equal(hv["a"], 2.0 * 3.0 * np.ones(2) + 2.0 * p["a"])
    assert hv["b"] == 2.0 * np.sum(p["a"])


# -- properties ---------------------------------------------------------------------------
SETTINGS = settings(max_examples=25, deadline=None)
floats = st.floats(-1.5, 1.5, allow_nan=False, allow_infinity=False, width=64)
vectors = st.integers(1, 4).flatmap(lambda n: hnp.arrays(np.float64, (n,), elements=floats))

#: Vector -> vector steps (same length), smooth everywhere on bounded inputs.
STEPS = {
    "sin": np.sin,
    "tanh": np.tanh,
    "exp_small": lambda x: np.exp(0.3 * x),
    "square_half": lambda x: 0.5 * x * x,
    "x_cos_x": lambda x: x * np.cos(x),
    "rational": lambda x: x / (1.0 + x * x),
    "plus_mean": lambda x: x + np.mean(x),
    "times_sum": lambda x: x * np.sum(np.sin(x)),
    "reverse_mix": lambda x: x * x[::-1],
    "cumsum": lambda x: np.cumsum(x) * 0.5,
    "matmul": lambda x: np.tanh(np.cos(np.arange(x.shape[0] ** 2.0)).reshape(len(x), len(x)) @ x),
    "softplus": lambda x: np.logaddexp(x, 0.0),
}
programs = st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4)


def run(program, x):
    for name in program:
        x = STEPS[name](x)
    return x


@SETTINGS
@given(programs, vectors)
def test_property_forward_equals_reverse(program, x):
    f = lambda v: run(program, v)
    jf = wg.jacfwd(f)(x)
    jr = wg.jacrev(f)(x)
    assert jf.shape == jr.shape == (len(x), len(x))
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-12)


@SETTINGS
@given(programs, vectors, st.integers(0, 2**32 - 1))
def test_property_hessian_symmetric_and_hvp(program, x, seed):
    f = lambda v: np.sum(np.sin(run(program, v)))
    H = wg.hessian(f)(x)
    np.testing.assert_allclose(H, H.T, rtol=1e-9, atol=1e-11)
    v = np.random.default_rng(seed).normal(size=x.shape)
    np.testing.assert_allclose(wg.hvp(f, x, v), H @ v, rtol=1e-9, atol=1e-11)


@SETTINGS
@given(programs, programs, vectors)
def test_property_chain_rule_for_jacobians(p, q, x):
    f = lambda v: run(p, v)
    g = lambda v: run(q, v)
    lhs = wg.jacfwd(lambda v: g(f(v)))(x)
    rhs = wg.jacrev(g)(f(x)) @ wg.jacfwd(f)(x)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-11)


# -- errors -------------------------------------------------------------------------------
def test_error_jvp_shapes_differ():
    with pytest.raises(
        ValueError,
        match=r"primal 0 has shape \(3,\) but its tangent has shape "
        r"\(2,\); each tangent must have exactly",
    ):
        wg.jvp(lambda x: x, (np.zeros(3),), (np.zeros(2),))
    with pytest.raises(ValueError, match="hvp: primal 0 has shape"):
        wg.hvp(lambda v: np.sum(v**3), np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"tangent's shape \(2,\) differs from the primal's"):
        Dual(np.zeros(3), np.zeros(2))


@pytest.mark.parametrize("f, words", [
    (lambda x: x ** 3, r"hvp: grad requires a scalar output \(one element\), got shape \(2,\)"),
    (lambda x: None, r"hvp: the function must return a scalar"),
    (lambda x: np.sum(x) > 0, r"hvp: the output must be floating point"),
])
def test_error_hvp_of_a_function_that_is_not_scalar_names_hvp(f, words):
    with pytest.raises(TypeError, match=words):
        wg.hvp(f, np.ones(2), np.ones(2))


def test_error_jvp_structures_differ():
    with pytest.raises(ValueError, match="different structures.*one tangent per primal"):
        wg.jvp(lambda x, y: x, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="different structures"):
        wg.jvp(lambda p: p["a"], ({"a": 1.0},), ({"b": 1.0},))
    with pytest.raises(TypeError, match=r"must be tuples .*wg.jvp\(f, \(x,\), \(v,\)\)"):
        wg.jvp(lambda x: x, 1.0, 1.0)


@pytest.mark.parametrize("bad", [1, np.array([1, 2]), True, np.array([True])])
def test_error_non_float_primals(bad):
    tangent = np.ones(np.shape(bad))
    with pytest.raises(TypeError, match=r"dtype .*only floating point .* Pass floats"):
        wg.jvp(lambda x: x, (bad,), (tangent,))
    with pytest.raises(TypeError, match="jacfwd: input 0 has dtype"):
        wg.jacfwd(lambda x: x)(bad)
    with pytest.raises(TypeError, match="jacrev: input 0 has dtype"):
        wg.jacrev(lambda x: x)(bad)
    with pytest.raises(TypeError, match="jacobian: input 0 has dtype"):
        wg.jacobian(lambda x: x)(bad)


def test_error_derivative_of_non_scalar_or_int():
    with pytest.raises(TypeError, match=r"derivative: the input must be a scalar.*wg.jacfwd"):
        wg.derivative(lambda x: x)(np.ones(3))
    with pytest.raises(TypeError, match="derivative: the input has dtype int64"):
        wg.derivative(lambda x: x)(2)


def test_error_dual_to_float_or_array_raises():
    d = Dual(1.0, 1.0)
    with pytest.raises(
        TypeError,
        match=r"float\(\) of a dual number would drop its tangent.*"
        r"d\.primal",
    ):
        float(d)
    with pytest.raises(
        TypeError,
        match=r"np\.asarray\(\) of a dual number would drop its "
        r"tangent.*d\.primal",
    ):
        np.asarray(Dual(X, U))
    with pytest.raises(TypeError, match="int.*drop its tangent"):
        int(d)
    with pytest.raises(TypeError, match="drop its tangent"):
        math.sin(d)
    # inside a transform, the same
    with pytest.raises(TypeError, match="would drop its tangent"):
        wg.derivative(lambda x: float(x))(1.0)
    with pytest.raises(TypeError, match="would drop its tangent"):
        wg.jacfwd(lambda x: np.asarray(x) * 2)(np.ones(2))


def test_error_escaped_dual_used_later():
    leaked = []
    assert wg.derivative(lambda x: leaked.append(x) or x * x)(2.0) == 4.0
    (d,) = leaked
    assert d.primal == 2.0  # reading the value is fine
    msg = r"finished forward-mode transform .*closed.*used after the transform returned"
    for use in (
        lambda: d * 2.0,
        lambda: d + d,
        lambda: np.sin(d),
        lambda: 1.0 - d,
        lambda: np.sum(d),
        lambda: d**2,
    ):
        with pytest.raises(RuntimeError, match=msg):
            use()
    # mixed with a live dual of another level, the escaped one is still caught
    with pytest.raises(RuntimeError, match="finished forward-mode transform"):
        wg.derivative(lambda y: y * d)(1.0)


def test_error_grad_of_non_scalar_suggests_sum_or_jacobian():
    with pytest.raises(TypeError, match=r"scalar output.*\.sum\(\).*wg\.jacobian"):
        wg.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match=r"scalar output.*wg\.jacobian"):
        wg.hvp(lambda x: x**3, np.ones(3), np.ones(3))


def test_error_primitive_without_jvp_rule(monkeypatch):
    from wengert.ops import REGISTRY

    op = REGISTRY["sin"]
    monkeypatch.setattr(op, "jvp", None)
    monkeypatch.setattr(op, "scalar_deriv", None)
    with pytest.raises(
        TypeError,
        match=r"primitive 'sin' has no forward-mode \(JVP\) rule.*"
        r"reverse mode",
    ):
        np.sin(Dual(np.ones(2), np.ones(2)))


def test_error_bad_argnums():
    for jac in (wg.jacfwd, wg.jacrev, wg.jacobian, wg.hessian):
        with pytest.raises(ValueError, match=r"argnums=2 but the function got 2 positional"):
            jac(lambda a, b: a * b, argnums=2)(1.0, 2.0)


def test_error_tape_watch_dual_points_to_tensor():
    with pytest.raises(TypeError, match=r"wg\.tensor\(d\)"), wg.GradientTape() as tape:
        tape.watch(Dual(1.0, 1.0))


# -- tensors: higher orders ---------------------------------------------------------------
def test_backward_create_graph_higher_orders():
    x = wg.tensor(2.0, requires_grad=True)
    (x**4).backward(create_graph=True)
    g1 = x.grad
    assert g1.item() == 32.0 and g1.requires_grad  # 4x³
    x.grad = None
    g1.backward(create_graph=True)
    g2 = x.grad
    assert g2.item() == 48.0  # 12x²
    x.grad = None
    g2.backward()
    assert x.grad == 48.0  # 24x


def test_nested_gradient_tapes_second_derivative():
    x = wg.tensor(0.7)
    with wg.GradientTape() as outer:
        outer.watch(x)
        with wg.GradientTape() as inner:
            inner.watch(x)
            y = np.sin(x) * x
        g = inner.gradient(y, x)
    assert outer.gradient(g, x).item() == pytest.approx(2 * COS(0.7) - 0.7 * SIN(0.7), rel=1e-15)


# -- jacfwd where reverse mode is cheaper -------------------------------------------------
def test_jacfwd_warns_when_many_inputs_go_to_few_outputs(monkeypatch):
    import wengert.transforms.forward as forward
    monkeypatch.setattr(forward, "LARGE_TANGENTS", 30 ** 2)
    x = np.linspace(0.0, 1.0, 40)
    with pytest.warns(wg.errors.PerformanceWarning, match=r"one pass per input entry: 40 "
                      r"here, carried as one 40×40 block.*1 output entry.*wg\.jacrev") as rec:
        j = wg.jacfwd(lambda x: np.sum(np.sin(x)))(x)
    assert rec[0].filename == __file__  # at the call of the Jacobian
    np.testing.assert_allclose(j, np.cos(x), rtol=1e-15)  # the result is unchanged
    with pytest.warns(wg.errors.PerformanceWarning, match="40 here, for 5 output entries"):
        wg.jacfwd(lambda d: d["a"][:5] * d["b"][:5])({"a": x[:20], "b": x[20:]})  # a pytree


def test_jacfwd_is_silent_for_square_or_small_jacobians(monkeypatch, recwarn):
    import wengert.transforms.forward as forward
    x = np.linspace(0.0, 1.0, 40)
    wg.jacfwd(lambda x: np.sum(np.sin(x)))(x)  # small: 40 tangents
    monkeypatch.setattr(forward, "LARGE_TANGENTS", 30 ** 2)
    wg.jacfwd(np.sin)(x)  # as many outputs as inputs
    wg.jacfwd(lambda x: x[:6] * 2.0)(x)  # more than an eighth as many outputs
    wg.hessian(lambda x: np.sum(x ** 3))(x)  # forward over reverse: a square Jacobian
    wg.jacobian(lambda x: np.sum(x * x))(x)  # picks reverse mode itself
    assert not [w for w in recwarn if issubclass(w.category, wg.errors.PerformanceWarning)]


@pytest.mark.parametrize("method", ["backward", "register_hook", "retain_grad"])
def test_a_tensor_method_on_a_dual_number_says_what_it_is(method):
    x = wg.tensor(1.0, requires_grad=True)

    def f(s):
        y = x * s * s  # a dual number over tensors
        args = (lambda g: g,) if method == "register_hook" else ()
        getattr(y, method)(*args)
        return y

    with pytest.raises(TypeError, match=rf"{method}\(\) was called on a dual number.*"
                                        r"d.primal / d.tangent"):
        wg.jvp(f, (3.0,), (1.0,))
    assert x.grad is None


@pytest.mark.parametrize("out", [lambda x: "a", lambda x: (x, "a"), lambda x: (x for _ in "a"),
                                 lambda x: {"k": object()}])
@pytest.mark.parametrize("transform", [
    lambda f: wg.jvp(f, (1.0,), (1.0,)),
    lambda f: wg.derivative(f)(1.0),
    lambda f: wg.jacfwd(f)(np.ones(2)),
    lambda f: wg.linearize(f, 1.0),
])
def test_forward_transforms_refuse_an_output_that_is_not_a_number(transform, out):
    # a string or a generator has no tangent: forward mode gave it a zero tangent
    with pytest.raises(TypeError, match="must return arrays or numbers"):
        transform(out)
