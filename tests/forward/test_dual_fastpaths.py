"""The direct forward-mode paths for dual numbers agree with the generic path.

The dual kind hands ``core.bind`` a specialised function per op (the float
path from the record's ``scalar_impl``/``scalar_deriv``; arrays through the
record's NumPy forward and JVP rule). Each case here is checked, bit for bit,
against the generic path (``DualKind.process``) and against the public
function, for every operand kind the fast paths accept or decline (floats,
ints, arrays, duals of another level, tensors).
"""

from __future__ import annotations

import operator

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert import Dual
from wengert.core.bind import owner
from wengert.core.errors import EscapedLevelError
from wengert.core.levels import Tag
from wengert.ops import elementwise as ew

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2.0, 5)
TX = RNG.normal(size=5)
Y = RNG.uniform(0.5, 2.0, 5)
TY = RNG.normal(size=5)

BINARY = [
    (operator.add, np.add, ew.ADD),
    (operator.sub, np.subtract, ew.SUBTRACT),
    (operator.mul, np.multiply, ew.MULTIPLY),
    (operator.truediv, np.divide, ew.DIVIDE),
    (operator.pow, np.power, ew.POWER),
]


def _apply_dual(op, args, params):
    """The generic path: the innermost kind's ``process`` (no specialised function)."""
    kind, level = owner(args)
    return kind.process(op, args, params, level)


def _same(a, b):
    """Equal duals: same tag and types, the same values bit for bit -- except that the
    float path (the record's float partials, ``scalar_deriv``) may differ from the JVP
    rule in the last bit (``t * (1 / y)`` against ``t / y``)."""
    assert type(a) is Dual and type(b) is Dual
    assert a.tag is b.tag
    for u, v in ((a.primal, b.primal), (a.tangent, b.tangent)):
        assert type(u) is type(v)
        if type(u) is Dual:
            _same(u, v)
            continue
        assert np.shape(u) == np.shape(v)
        if type(u) is float:
            np.testing.assert_allclose(u, v, rtol=4e-16, atol=0)
        else:
            np.testing.assert_array_equal(u, v)


def _operands(tag):
    d = Dual(X, TX, tag)
    e = Dual(Y, TY, tag)
    return d, e, [e, Y, 2.0, 2, 0.5, np.float64(1.5)]


@pytest.mark.parametrize("pyop, ufunc, op", BINARY, ids=[b[2].name for b in BINARY])
def test_array_dual_operators_match_generic_path(pyop, ufunc, op):
    tag = Tag("test")
    d, _, others = _operands(tag)
    for o in others:
        _same(pyop(d, o), _apply_dual(op, (d, o), None))
        _same(pyop(o, d), _apply_dual(op, (o, d), None))
        _same(ufunc(d, o), _apply_dual(op, (d, o), None))
        _same(ufunc(o, d), _apply_dual(op, (o, d), None))
    tag.active = False


@pytest.mark.parametrize("pyop, ufunc, op", BINARY, ids=[b[2].name for b in BINARY])
def test_array_arithmetic_matches_generic_path_for_every_operand_kind(pyop, ufunc, op):
    """Shapes that broadcast, 0-d arrays, float32 against float64, integer arrays
    and Python ints: the array path gives the generic path's values and types."""
    tag = Tag("test")
    rng = np.random.default_rng(7)
    cases = [
        (rng.normal(size=(3, 1)), rng.normal(size=(4,))),  # both broadcast
        (rng.normal(size=(2, 3)), rng.normal(size=(3,))),  # y broadcasts
        (rng.normal(size=()), rng.normal(size=(3,))),  # a 0-d array
        (rng.normal(size=()), rng.normal(size=())),  # 0-d result
        (rng.normal(size=(3,)).astype(np.float32), rng.normal(size=(3,))),
    ]
    for xv, yv in cases:
        d = Dual(xv, np.ones_like(xv) * 0.5, tag)
        e = Dual(yv, np.full_like(yv, -1.5), tag)
        for a, b in ((d, e), (e, d), (d, yv), (yv, d), (d, 3), (2, d),
                     (d, np.arange(3)), (np.arange(3), d)):
            _same(pyop(a, b), _apply_dual(op, (a, b), None))
            _same(ufunc(a, b), _apply_dual(op, (a, b), None))
    tag.active = False


def test_array_dual_negative_matches_generic_path():
    tag = Tag("test")
    d = Dual(X, TX, tag)
    _same(-d, _apply_dual(ew.NEGATIVE, (d,), None))
    _same(np.negative(d), _apply_dual(ew.NEGATIVE, (d,), None))
    _same(wnp.negative(d), _apply_dual(ew.NEGATIVE, (d,), None))
    tag.active = False


def test_fast_paths_keep_levels_apart():
    """Duals of two tags (forward over forward) take the generic path: the inner
    tag's op is applied with the outer dual as a constant."""
    outer, inner = Tag("outer"), Tag("inner")
    a = Dual(X, TX, outer)
    b = Dual(Y, TY, inner)
    for pyop, _, op in BINARY:
        _same(pyop(a, b), _apply_dual(op, (a, b), None))
        _same(pyop(b, a), _apply_dual(op, (b, a), None))
    assert (a * b).tag is inner
    inner.active = outer.active = False


def test_escaped_array_dual_still_raises():
    tag = Tag("gone")
    d = Dual(X, TX, tag)
    tag.active = False
    for f in (lambda: d * d, lambda: d + 1.0, lambda: X * d, lambda: -d, lambda: d ** 2):
        with pytest.raises(RuntimeError, match="finished forward-mode transform"):
            f()


def test_dual_with_tensor_takes_the_public_function():
    x = wg.tensor(Y, requires_grad=True)
    d = Dual(X, TX)
    for pyop, _, op in BINARY:
        fn = {"add": wnp.add, "subtract": wnp.subtract, "multiply": wnp.multiply,
              "divide": wnp.divide, "power": wnp.power}[op.name]
        got, want = _leaves(pyop(d, x)), _leaves(fn(d, x))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            if isinstance(w, type):
                assert g is w
            else:
                np.testing.assert_array_equal(g, w)


def _leaves(v):
    """The plain values inside nested tensors and duals, with their nesting types."""
    if isinstance(v, wg.Tensor):
        return [wg.Tensor, *_leaves(v._value)]
    if type(v) is Dual:
        return [Dual, *_leaves(v.primal), *_leaves(v.tangent)]
    return [v]


def test_shape_of_dual():
    tag = Tag("test")
    assert np.shape(Dual(X, TX, tag)) == (5,)
    assert np.shape(Dual(1.0, 2.0, tag)) == ()
    tag.active = False


@pytest.mark.parametrize("x", [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan])
def test_square_rule_at_special_values(x):
    """d/dx x**2 = 2x by the y == 2 shortcut, as by the general rule (2 * x**1.0)."""
    xs = np.array([x, 1.0])
    g = np.array([0.7, -1.3])
    with np.errstate(all="ignore"):
        got = ew._pow_dx(g, xs ** 2, xs, 2)
        general = g * 2 * np.power(xs, 2 - 1.0)
    np.testing.assert_array_equal(got, general)
    assert np.signbit(got[0]) == np.signbit(general[0])


@pytest.mark.parametrize("y", [2, 2.0, 0.5, -1.0, 1.0, 0.0, 3.0, -2.0, 1.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_, np.complex128,
                                   np.longdouble, np.dtype(">f8")])
def test_power_forward_matches_np_power(y, dtype):
    """The power op computes a float32/float64 array to a Python number with
    NumPy's ``**`` (np.square for 2, np.sqrt for 0.5) and anything else with
    np.power: np.power's values, signs and dtype either way."""
    specials = [-0.0, 0.0, 2.0, -2.0, 1e-300, 1e300, 3.5]
    if np.dtype(dtype).kind == "f":
        specials += [np.inf, -np.inf, np.nan]
    if dtype in (np.int64, np.bool_) and y < 0:
        return  # NumPy refuses negative integer powers of integers either way
    with np.errstate(all="ignore"):
        x = np.array(specials).astype(dtype)
        if dtype is np.int64:
            x = np.arange(-3, 4)
        elif dtype is np.complex128:
            x = x * (1.0 - 0.5j)
        got, want = ew.POWER.impl(x, y), np.power(x, y)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))
    r = np.random.default_rng(3).normal(size=10_000) * 100.0
    np.testing.assert_array_equal(ew.POWER.impl(r, 2.0), np.power(r, 2.0))


def test_square_higher_derivatives():
    f = lambda x: x ** 2 * wnp.sin(x)  # noqa: E731
    x0 = 0.7
    # d³/dx³ (x² sin x) = 6 cos x - 6 x sin x - x² cos x
    third = 6 * np.cos(x0) - 6 * x0 * np.sin(x0) - x0 ** 2 * np.cos(x0)
    for d3 in (
        wg.derivative(wg.derivative(wg.derivative(f))),
        wg.grad(wg.grad(wg.grad(f))),
        wg.derivative(wg.grad(wg.derivative(f))),
    ):
        assert np.isclose(d3(x0), third)


def test_tensor_over_dual_arithmetic_is_exact_in_hvp():
    """Inside wg.hvp the tape's tensors hold duals, and +, -, * on them (and with
    numbers, on either side) take the inline rules: on small integers the
    Hessian-vector product is exact, and so is the gradient riding along."""
    def f(x):
        a, b = x[:-1], x[1:]
        return np.sum(a * b - 2.0 * a + b * b + (1.0 - a) * 3.0 - b + a - 4.0 * b * 1.0)

    x = np.array([1.0, -2.0, 3.0, 0.5, 4.0])
    v = np.array([1.0, 2.0, -1.0, 3.0, -2.0])
    # H v: a*b couples x[i] and x[i+1]; b*b puts 2 on the diagonal from index 1.
    hv = np.zeros(5)
    hv[:-1] += v[1:]
    hv[1:] += v[:-1] + 2.0 * v[1:]
    np.testing.assert_array_equal(wg.hvp(f, x, v), hv)
    g = wg.jvp(wg.grad(f), (x,), (v,))[0]
    want = np.zeros(5)
    want[:-1] += x[1:] - 2.0 - 3.0 + 1.0
    want[1:] += x[:-1] + 2.0 * x[1:] - 1.0 - 4.0
    np.testing.assert_array_equal(g, want)


def test_hvp_rosenbrock_matches_analytic():
    def rosen(x):
        a, b = x[:-1], x[1:]
        return np.sum(100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2)

    x = RNG.uniform(-2.0, 2.0, 7)
    v = RNG.normal(size=7)
    a, b = x[:-1], x[1:]
    diag = np.zeros_like(x)
    diag[:-1] += 1200.0 * a * a - 400.0 * b + 2.0
    diag[1:] += 200.0
    off = -400.0 * a
    hv = diag * v
    hv[:-1] += off * v[1:]
    hv[1:] += off * v[:-1]
    np.testing.assert_allclose(wg.hvp(rosen, x, v), hv, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wg.hessian(rosen)(x) @ v, hv, rtol=1e-12, atol=1e-12)


def test_ufunc_table_matches_public_functions():
    """Each ufunc on dual numbers runs the public function of the op record of that
    name, and gives the generic path's dual."""
    from wengert.interop.dispatch import tables
    from wengert.ops import REGISTRY

    tag = Tag("test")
    d = Dual(np.abs(X) * 0.4 + 0.1, TX, tag)
    e = Dual(np.abs(Y) * 0.4 + 0.2, TY, tag)
    checked = 0
    for ufunc, public in tables()[0].items():
        if public.__name__ not in REGISTRY:
            continue
        op = REGISTRY[public.__name__]
        if op.nin not in (1, 2) or op.samples is None or None in op.vjps:
            continue  # (and ldexp, whose exponents are integers)
        args = (d, e) if ufunc.nin == 2 else (d,)
        with np.errstate(all="ignore"):
            _same(ufunc(*args), public(*args))
            _same(ufunc(*args), _apply_dual(op, args, None))
        checked += 1
    assert checked > 30
    tag.active = False


def test_batched_fast_paths_match_generic_path():
    tag = Tag("test", batch=3)
    d = Dual(X, RNG.normal(size=(3, 5)), tag)
    e = Dual(Y, RNG.normal(size=(3, 5)), tag)
    for pyop, _, op in BINARY:
        for o in (e, Y, 2.0):
            _same(pyop(d, o), _apply_dual(op, (d, o), None))
            _same(pyop(o, d), _apply_dual(op, (o, d), None))
    for f, op in ((np.tanh, ew.TANH), (np.sin, ew.SIN), (np.negative, ew.NEGATIVE)):
        _same(f(d), _apply_dual(op, (d,), None))
    a = np.arange(15.0).reshape(3, 5)
    from wengert.ops.linalg import basic as linalg

    _same(a @ d, _apply_dual(linalg.MATMUL, (a, d), None))
    from wengert.ops import reduce

    params = {"axis": None, "keepdims": False}
    _same(wnp.sum(d), _apply_dual(reduce.SUM, (d,), params))
    tag.active = False


@pytest.mark.parametrize("fun", [
    lambda x: x * x,
    lambda x: wnp.sum(wnp.sin(x)),
    lambda x: (x, 2.0 * x),
    lambda x: {"a": x[0], "b": np.ones(2)},
    lambda x: np.ones(3),
    lambda x: 3.0,
    lambda x: wg.grad(lambda y: wnp.sum(y * x))(x),
    lambda x: wg.jvp(lambda y: y * x, (x,), (x,))[1],
], ids=["square", "sum", "tuple", "dict", "const", "float", "grad_inside", "jvp_inside"])
def test_jvp_single_array_fast_path_matches_general_path(fun):
    """wg.jvp with one float array (a tuple) takes a short path; a list of the same
    primals takes the general one: same results, same types."""
    x = np.array([0.3, -1.2, 2.0])
    v = np.array([1.0, 0.5, -2.0])
    fast = wg.jvp(fun, (x,), (v,))
    general = wg.jvp(fun, [x], [v])
    from wengert.core.tree import flatten

    fl, fs = flatten(fast)
    gl, gs = flatten(general)
    assert fs == gs
    for a, b in zip(fl, gl):
        assert type(a) is type(b)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("layout", ["matrix @ x", "x @ matrix"])
def test_jacfwd_identity_seed_skips_the_product(layout):
    # jacfwd pushes the identity through once; a product with it is skipped.
    # The Jacobian must equal the one from explicit products (no shortcut).
    from wengert.ops.linalg.basic import _matmul_jvp

    a = RNG.normal(size=(4, 5)) if layout == "matrix @ x" else RNG.normal(size=(5, 3))
    x = RNG.normal(size=5)

    def f(v):
        y = a @ v if layout == "matrix @ x" else v @ a
        return np.tanh(y) * 2.0

    jac = wg.jacfwd(f)(x)
    y = a @ x if layout == "matrix @ x" else x @ a
    expected = (a if layout == "matrix @ x" else a.T) * (2.0 / np.cosh(y) ** 2)[:, None]
    np.testing.assert_allclose(jac, expected, rtol=1e-14, atol=1e-15)
    # The shortcut returns a copy: the Jacobian of a bare product does not alias `a`.
    bare = wg.jacfwd(lambda v: a @ v if layout == "matrix @ x" else v @ a)(x)
    assert not np.shares_memory(bare, a)
    np.testing.assert_array_equal(bare, a if layout == "matrix @ x" else a.T)
    # Tangents that are almost the identity take the product.
    eye = np.eye(5)
    for t in (eye * 2.0, eye + 1e-300, np.where(eye == 1, 1.0, np.nan), eye[::-1]):
        args = (a, x) if layout == "matrix @ x" else (x, a)
        tangents = (None, t) if layout == "matrix @ x" else (t, None)
        got = _matmul_jvp(tangents, np.matmul(*args), *args)
        want = t @ a.T if layout == "matrix @ x" else t @ a
        np.testing.assert_array_equal(got, want)


# -- the tuned scalar fast path (the fenced section of wengert.forward.dual) ---------------
from wengert.forward.dual import DUAL, TUNED_BINARY, TUNED_UNARY  # noqa: E402

SPECIAL = [0.5, 1.5, -0.7, 2.0, 0.0, -0.0, 1e-310, 3e300, -3e300, 710.0, 1e20,
           float("inf"), float("-inf"), float("nan")]


def _outcome(fn, *args):
    """What ``fn(*args)`` gives: ``(primal, tangent, tag)`` of a dual as bit patterns
    (-0.0 apart from 0.0; every NaN alike: NumPy does not keep a NaN's sign stable), another
    value's repr, or the error's type."""
    import struct
    import warnings

    def bits(v):
        if type(v) is float:
            return ("float", "nan" if v != v else struct.pack("<d", v))
        if type(v) is Dual:
            return ("dual", bits(v.primal), bits(v.tangent), v.tag)
        return (type(v).__name__, repr(v))

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return bits(fn(*args))
    except Exception as e:  # noqa: BLE001 - the same error is part of agreeing
        return ("error", type(e))


@pytest.mark.parametrize("op", list(TUNED_UNARY), ids=lambda op: op.name)
def test_tuned_unary_matches_generic_function(op):
    tuned = DUAL.unary(op, Dual, None)
    generic = DUAL.generic_unary(op)
    assert tuned is not generic
    other = Tag("outer")  # made first: a dual of ``tag`` may carry duals of it
    tag = Tag("test")
    for p in SPECIAL:
        for t in (1.0, -2.5, 0.0, -0.0, float("nan"), 1e300):
            for d in (Dual(p, t, tag), Dual(p, t), Dual(np.float32(p), np.float32(t), tag),
                      Dual(Dual(p, t, other), Dual(t, p, other), tag)):
                assert _outcome(tuned, d) == _outcome(generic, d), (p, t, d)
        d = Dual(np.array([p, 0.25]), np.array([1.0, -1.0]), tag)
        assert _outcome(tuned, d) == _outcome(generic, d)
    closed = Tag("closed")
    closed.active = False
    d = Dual(0.5, 1.0, closed)
    assert _outcome(tuned, d) == _outcome(generic, d) == ("error", EscapedLevelError)
    tag.active = other.active = False


@pytest.mark.parametrize("op", list(TUNED_BINARY), ids=lambda op: op.name)
def test_tuned_binary_matches_generic_function(op):
    tuned = DUAL.binary(op, Dual, None)
    generic = DUAL.generic_binary(op)
    assert tuned is not generic
    other = Tag("outer")
    tag = Tag("test")
    values = SPECIAL + [3.0, -2.0, 0.3]
    for p in values:
        for q in values:
            x = Dual(p, 1.25, tag)
            for y in (q, Dual(q, -0.75, tag), Dual(q, float("nan"), tag), Dual(q, 0.5, other),
                      Dual(q, 0.5), int(q) if q == q and abs(q) < 1e300 else 7,
                      np.float64(q), np.array([q, 2.0])):
                for a, b in ((x, y), (y, x)):
                    if type(a) is not Dual and type(b) is not Dual:
                        continue
                    got = _outcome(tuned, a, b)
                    assert got == _outcome(generic, a, b), (op.name, a, b)
    closed = Tag("closed")
    closed.active = False
    x = Dual(0.5, 1.0, closed)
    assert _outcome(tuned, x, 2.0) == _outcome(generic, x, 2.0) == ("error", EscapedLevelError)
    tag.active = other.active = False


def test_operators_and_ufuncs_use_the_tuned_functions():
    """Dual's operators, np.* ufuncs on duals and wnp.* reach the tuned functions (the
    speed of W1d depends on it), and still agree with the float reference."""
    assert "_tuned_multiply" in Dual.__mul__.__qualname__
    assert "_tuned_add" in Dual.__add__.__qualname__
    assert "_tuned_power" in Dual.__pow__.__qualname__
    x = Dual(0.5, 1.0)
    y = x
    for _ in range(3):
        y = wnp.tanh(np.cos(wnp.sin(y))) * 0.9 + x
        y = (y ** 1.5 - 0.25) * np.exp(y)
    assert "_tuned_sin" in wnp.sin.handlers[Dual].__qualname__
    from wengert.forward.dual import _FAST_UFUNCS

    assert "_tuned_cos" in _FAST_UFUNCS[np.cos].__qualname__
    h = 1e-6
    def f(v):
        import math
        w = v
        for _ in range(3):
            w = math.tanh(math.cos(math.sin(w))) * 0.9 + v
            w = (w ** 1.5 - 0.25) * math.exp(w)
        return w
    assert y.primal == pytest.approx(f(0.5), rel=1e-15)
    assert y.tangent == pytest.approx((f(0.5 + h) - f(0.5 - h)) / (2 * h), rel=1e-6)


def test_tuned_paths_keep_nested_perturbations_apart():
    """derivative of x * derivative(y -> x + y): the inner tag's tuned add sees an outer
    dual as a constant; with perturbation confusion the answer would be 2."""
    inner = wg.derivative(lambda x: x * wg.derivative(lambda y: x + y)(1.0))(1.0)
    assert inner == 1.0
    assert wg.derivative(lambda x: wg.derivative(lambda y: wnp.sin(x * y))(2.0))(0.5) \
        == pytest.approx(np.cos(1.0) - 1.0 * np.sin(1.0), rel=1e-14)


def test_tuned_functions_count_as_library_code_for_source_lines():
    """The tuned functions are generated code: a tape recording beneath them (a dual
    number holding a tensor) names the user's line, not the generated function's."""
    import inspect

    x = wg.tensor(0.5, requires_grad=True)
    with wg.source_lines():
        y = wnp.sin(Dual(x, 1.0)) * 2.0
        line = inspect.currentframe().f_lineno - 1
    for node in (y.primal._node, y.primal._node.parent0):
        source = node.extra["source"]
        assert (source.filename, source.lineno) == (__file__, line)
    assert "forward/dual.py<generated _tuned_sin>" in wnp.sin.handlers[Dual].__code__.co_filename
