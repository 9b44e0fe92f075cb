"""fuse: elementwise chains and trees become one kernel; values and gradients unchanged."""

import tracemalloc
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.core.bind import apply
from wengert.core.tree import flatten
from wengert.graph.passes.fuse import CHUNK_ELEMENTS, FusedOp, fusable, fuse, fused_kernels
from wengert.graph.passes.memory import memory_plan, run_planned
from wengert.ops import REGISTRY
from wengert.ops.elementwise import FAMILY as ELEMENTWISE_FAMILY

RNG = np.random.default_rng(0)


def chain8(x, y):
    return np.tanh(np.exp(np.sin(x) * y + 0.5) - x) * 2.0 + y


def mlp_loss(params, X, onehot):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(wg.stop_gradient(z), axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return (np.sum(lse) - np.sum(z * onehot)) / X.shape[0]


def mlp_args(rng, batch=8, sizes=(5, 7, 3)):
    params = [rng.normal(size=(sizes[0], sizes[1])) / 2, rng.normal(size=sizes[1]),
              rng.normal(size=(sizes[1], sizes[2])) / 2, rng.normal(size=sizes[2])]
    X = rng.normal(size=(batch, sizes[0]))
    onehot = np.eye(sizes[2])[rng.integers(0, sizes[2], batch)]
    return params, X, onehot


def assert_same(got, want):
    for a, b in zip(flatten(got)[0], flatten(want)[0]):
        np.testing.assert_array_equal(a, b)


def test_a_chain_of_eight_becomes_one_kernel_with_the_same_bits():
    x, y = RNG.normal(size=1000), RNG.normal(size=1000)
    g = wg.trace(chain8, x, y)
    f = fuse(g)
    assert len(g) == 8 and len(f) == 1
    op = f.equations[0].op
    assert isinstance(op, FusedOp)
    assert op.name == "fused_sin_mul_add_exp_sub_and_3_more"
    assert op.members == ("sin", "multiply", "add", "exp", "subtract", "tanh", "multiply",
                          "add")
    assert op.formula == "tanh(exp(sin(x0) * x1 + 0.5) - x0) * 2.0 + x1"
    x2, y2 = RNG.normal(size=1000), RNG.normal(size=1000)
    np.testing.assert_array_equal(f(x2, y2), chain8(x2, y2))


def test_the_kernel_source_is_readable_and_deterministic():
    x, y = np.ones(5), np.ones(5)
    a = fused_kernels(fuse(wg.trace(chain8, x, y)))[0]
    b = fused_kernels(fuse(wg.trace(chain8, x, y)))[0]
    assert a.kernel_source == b.kernel_source
    assert a.kernel_source.startswith(f"def {a.name}(x0, x1, out=None):\n")
    assert "np.sin(x0, out=s0)" in a.kernel_source
    assert "0x" not in a.kernel_source  # no addresses
    namespace = dict(a.kernel_globals)
    exec(a.kernel_source, namespace)  # what the code generator will print runs
    np.testing.assert_array_equal(namespace[a.name](x, y), chain8(x, y))


@pytest.mark.parametrize("n", [4 * CHUNK_ELEMENTS, 10**6 + 3])
def test_large_kernels_run_in_chunks_and_allocate_only_their_output(n):
    x, y = RNG.normal(size=n), RNG.normal(size=n)
    f = fuse(wg.trace(chain8, x, y))
    op = f.equations[0].op
    assert "for i in range(" in op.kernel_source
    out = op.impl(x, y)  # warm up
    tracemalloc.start()
    try:
        out = op.impl(x, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the output, one chunk of scratch and small change: no full-size intermediate
    assert peak < out.nbytes + 8 * CHUNK_ELEMENTS + 65536
    np.testing.assert_array_equal(out, chain8(x, y))


def test_chunking_keeps_broadcast_operands_whole():
    def f(x, b, c):
        return np.tanh(x + b) * (1 - np.exp(c)) + np.where(x > 0, x, 0.1 * x)

    x, b, c = RNG.normal(size=(301, 512)), RNG.normal(size=512), RNG.normal(size=(301, 1))
    g = wg.trace(f, x, b, c)
    fused = fuse(g)
    assert len(fused) == 1
    src = fused.equations[0].op.kernel_source
    assert "x0[i:j]" in src and "x2[i:j]" in src and "x1[i:j]" not in src
    np.testing.assert_array_equal(fused(x, b, c), f(x, b, c))
    np.testing.assert_array_equal(fuse(g, chunk_elements=0)(x, b, c), f(x, b, c))


def test_values_computed_before_the_chunk_loop_keep_their_buffers():
    def f(x, b1, b2):
        return (x + np.exp(b1)) * np.sin(b2)  # exp(b1) dies before sin(b2) is made

    x, b1, b2 = RNG.normal(size=(301, 512)), RNG.normal(size=512), RNG.normal(size=512)
    fused = fuse(wg.trace(f, x, b1, b2))
    assert "for i in range(0, 301, 32):" in fused.equations[0].op.kernel_source
    np.testing.assert_array_equal(fused(x, b1, b2), f(x, b1, b2))


def test_values_used_twice_returned_or_guarded_stay_outside():
    def f(x):
        a = np.sin(x)
        b = a * 2.0  # a is used twice: b and c start their own kernels' trees
        c = np.cos(a)
        d = np.exp(b) + c
        return d, np.tanh(d) * 3.0

    g = wg.trace(f, np.ones(4))
    fused = fuse(g)
    kept = {eq.out.name for eq in fused}
    assert {"t0", "t4"} <= kept  # a has two consumers; d is returned and used again
    x = RNG.normal(size=4)
    assert_same(fused(x), f(x))

    def guarded(x):
        b = np.sin(x) > 0
        if b:  # a guard on b, an elementwise value with one elementwise consumer
            return np.logical_not(b) * 2.0
        return x

    g = wg.trace(guarded, np.ones(1))
    assert [eq.op.name for eq in g] == ["sin", "greater", "logical_not", "multiply"]
    assert [gd.var.name for gd in g.guards] == ["t1"]
    fused = fuse(g)
    assert [eq.op.name for eq in fused] == ["fused_sin_gt", "fused_not_mul"]
    assert fused.guards[0].var is fused.equations[0].out
    np.testing.assert_array_equal(fused(np.array([0.3])), guarded(np.array([0.3])))


def test_a_scalar_program_is_left_alone():
    g = wg.trace(lambda x: np.sin(x) * 2.0 + 1.0, 0.5)
    assert fuse(g) is g


def test_zero_dimensional_values_are_not_fused():
    g = wg.trace(lambda x: np.sin(np.sum(x)) * 2.0, np.ones(3))
    assert fuse(g) is g


def test_identical_groups_share_one_kernel_and_names_stay_unique():
    def f(x, y):
        return np.sin(x) * 2.0, np.sin(y) * 2.0, np.cos(x) * 2.0 + y

    g = wg.trace(f, np.ones(3), np.ones(3))
    kernels = fused_kernels(fuse(g))
    assert [k.name for k in kernels] == ["fused_sin_mul", "fused_cos_mul_add"]
    ops = [eq.op for eq in fuse(g)]
    assert ops[0] is ops[1]


def test_array_and_nonfinite_literals_become_kernel_inputs():
    c = RNG.normal(size=3)
    g = wg.trace(lambda x: np.maximum(np.sin(x) * c, -np.inf) + np.nan * 0, np.ones(3))
    fused = fuse(g)
    eq = fused.equations[-1]
    assert isinstance(eq.op, FusedOp)
    assert "inf" not in eq.op.kernel_source.split('"""')[2]
    x = RNG.normal(size=3)
    np.testing.assert_array_equal(fused(x), g(x))


def test_out_aliases_may_be_passed_as_out():
    def f(x, y, z):
        return np.where(x > 0, np.sin(y), z) * 2.0 + np.exp(x)

    x, y, z = (RNG.normal(size=(40, 7)) for _ in range(3))
    op = fuse(wg.trace(f, x, y, z)).equations[0].op
    want = f(x, y, z)
    for k in op.out_aliases:
        args = [x.copy(), y.copy(), z.copy()]
        got = op.impl(*args, out=args[k])
        assert got is args[k]
        np.testing.assert_array_equal(got, want)


def before(x):
    """An elementwise op in front of an input, so that the op under test has one to fuse
    with."""
    return np.logical_not(np.logical_not(x)) if x.dtype == bool else np.positive(x)


@pytest.mark.parametrize("op", [op for op in ELEMENTWISE_FAMILY.ops], ids=lambda op: op.name)
def test_every_elementwise_op_fuses_with_the_same_bits(op):
    """Each fusable op of the registry, after an elementwise op on each array input."""
    fused_any = False
    for args, params in op.samples(np.random.default_rng(1)):
        arrays = [a for a in args if isinstance(a, np.ndarray) and a.ndim]
        if not arrays:
            continue

        def f(*xs, args=args, params=params):
            it = iter(xs)
            ins = [before(next(it)) if isinstance(a, np.ndarray) and a.ndim else a
                   for a in args]
            return apply(op, *ins, **params)

        g = wg.trace(f, *arrays)
        fused = fuse(g)
        want = op.impl(*args, **params)
        got = fused(*arrays)
        np.testing.assert_array_equal(got, want)
        assert np.result_type(got) == np.result_type(want)
        if len(fused) < len(g):
            fused_any = True
    expected = op.name not in ("sinc", "real", "imag", "angle")  # (not NumPy ufuncs)
    assert fused_any == expected, f"{op.name} fused: {fused_any}"


def test_recorded_ufunc_calls_fuse():
    g = wg.trace(lambda x, y: np.logical_and(x > 0, y < 1) | (x == y), np.ones(3), np.ones(3))
    fused = fuse(g)
    assert len(fused) == 1
    assert fusable(g.equations[0])
    x, y = np.array([1.0, -1.0, 2.0]), np.array([0.0, 0.0, 2.0])
    np.testing.assert_array_equal(fused(x, y), np.logical_and(x > 0, y < 1) | (x == y))


def test_gradient_graphs_keep_values_and_gradients():
    rng = np.random.default_rng(3)
    params, X, onehot = mlp_args(rng)
    g = wg.trace(wg.value_and_grad(mlp_loss), params, X, onehot)
    fused = fuse(g)
    assert len(fused) < len(g)
    params2, X2, onehot2 = mlp_args(np.random.default_rng(4))
    want = wg.value_and_grad(mlp_loss)(params2, X2, onehot2)
    for a, b in zip(flatten(fused(params2, X2, onehot2))[0], flatten(want)[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert_same(fused(params2, X2, onehot2), g(params2, X2, onehot2))


def test_a_long_chain_gradient_keeps_its_gradient():
    def f(x):
        for k in range(30):
            x = np.sin(x) * 1.1 + 0.01 * k
        return np.sum(x * x)

    x = RNG.normal(size=(50, 40))
    g = wg.trace(wg.grad(f), x)
    fused = fuse(g)
    assert len(fused) < len(g) // 2
    x2 = RNG.normal(size=(50, 40))
    np.testing.assert_allclose(fused(x2), wg.grad(f)(x2), rtol=1e-13)
    planned = memory_plan(fused)
    np.testing.assert_array_equal(run_planned(fused, [x2], planned)[0], g(x2))


def test_differentiating_through_a_kernel_says_to_fuse_after():
    x = RNG.normal(size=3)
    g = fuse(wg.trace(lambda x: np.sum(np.sin(x) * 2.0 + x), x))
    with pytest.raises(TypeError, match="differentiate first, then fuse"):
        wg.grad(lambda x: g(x))(x)
    with pytest.raises(TypeError, match="forward-mode"):
        wg.jvp(lambda x: g(x), (x,), (x,))


def test_fusing_twice_changes_nothing():
    g = fuse(wg.trace(chain8, np.ones(3), np.ones(3)))
    assert fuse(g) is g


def test_fused_graphs_run_op_by_op_on_plain_arrays():
    from wengert.graph.program import evaluate

    x, y = RNG.normal(size=5), RNG.normal(size=5)
    f = fuse(wg.trace(chain8, x, y))
    np.testing.assert_array_equal(evaluate(f, [x, y])[0], chain8(x, y))


# -- random programs --------------------------------------------------------------------
UNARY = ["sin", "cos", "tanh", "exp", "negative", "square", "abs", "sigmoid", "relu", "sqrt"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "power", "hypot", "arctan2"]
SHAPES = [(6, 5), (5,), (6, 1), (1, 5)]


@st.composite
def programs(draw):
    n_inputs = draw(st.integers(1, 4))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    steps = []
    count = n_inputs
    for _ in range(draw(st.integers(1, 20))):
        kind = draw(st.sampled_from(["unary", "binary", "const", "where"]))
        a = draw(st.integers(0, count - 1))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(UNARY)), a))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(BINARY)), a,
                          draw(st.integers(0, count - 1))))
        elif kind == "const":
            steps.append(("const", draw(st.sampled_from(["add", "multiply", "power"])), a,
                          draw(st.sampled_from([2, 0.5, -1.5, 3.0]))))
        else:
            steps.append(("where", a, draw(st.integers(0, count - 1)),
                          draw(st.integers(0, count - 1))))
        count += 1
    n_out = draw(st.integers(1, 2))
    return shapes, steps, n_out


def build(steps, n_out):
    def f(*xs):
        vals = list(xs)
        for s in steps:
            if s[0] == "unary":
                x = vals[s[2]]
                if s[1] == "sqrt":
                    x = np.abs(x)
                vals.append(apply(REGISTRY[s[1]], x))
            elif s[0] == "binary":
                x, y = vals[s[2]], vals[s[3]]
                if s[1] == "power":
                    x = np.abs(x) + 0.5
                vals.append(apply(REGISTRY[s[1]], x, y))
            elif s[0] == "const":
                x = vals[s[2]]
                if s[1] == "power":
                    x = np.abs(x) + 0.5
                vals.append(apply(REGISTRY[s[1]], x, s[3]))
            else:
                vals.append(np.where(vals[s[1]] > 0, vals[s[2]], vals[s[3]]))
        return tuple(vals[-n_out:]) if n_out > 1 else vals[-1]

    return f


@settings(max_examples=150, deadline=None)
@given(programs(), st.integers(0, 2**31 - 1))
@example(([(6, 5), (5,), (5,)], [("unary", "exp", 1), ("binary", "add", 0, 3),
                                  ("unary", "sin", 2), ("binary", "multiply", 4, 5)], 1), 0)
def test_random_elementwise_programs_keep_their_values(program, seed):
    shapes, steps, n_out = program
    rng = np.random.default_rng(seed)
    f = build(steps, n_out)
    args = [rng.normal(size=s) for s in shapes]
    with np.errstate(all="ignore"):
        g = wg.trace(f, *args)
        fused = fuse(g)
        small = fuse(g, chunk_elements=4)  # chunks of rows, also on these small shapes
        new = [rng.normal(size=s) for s in shapes]
        keep = [x.copy() for x in new]
        want = g(*new)
        assert_same(fused(*new), want)
        assert_same(small(*new), want)
        leaves = flatten(tuple(new))[0]
        for h in (fused, small):
            got = run_planned(h, leaves, memory_plan(h))
            for a, b in zip(got, flatten(want)[0]):
                np.testing.assert_array_equal(a, b)
    for x, x0 in zip(new, keep):
        np.testing.assert_array_equal(x, x0)  # the caller's arrays are never written


def test_a_chunked_kernel_warns_once_per_step_as_eagerly():
    f = lambda x: np.log(np.sin(x) * 2.0 + 0.5) * np.sqrt(x)  # noqa: E731
    x = -np.ones(300_000)
    cf = wg.compile(f)
    cf(x)
    assert "for i in range" in cf.graph_for(x).to_source()  # (chunked)
    for run in (f, cf):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = run(x)
        assert sorted(str(w.message) for w in caught) == [
            "invalid value encountered in log", "invalid value encountered in sqrt"]
        np.testing.assert_array_equal(got, f(x))
    reported = []
    with np.errstate(all="call"):
        old = np.seterrcall(lambda *a: reported.append(a))
        try:
            f(x)
            cf(x)
        finally:
            np.seterrcall(old)
    assert len(reported) == 4  # two per run
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        cf(x)
    np.testing.assert_array_equal(cf(np.abs(x)), f(np.abs(x)))  # (no condition: chunks)


def test_fuse_leaves_a_decomposition_alone_and_fuses_around_it():
    a = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])

    def f(a):
        w, v = np.linalg.eigh(np.sin(a) * 2.0 + a)
        return np.exp(v) * 2.0 + np.tanh(w)

    g = wg.trace(f, a)
    fused = fuse(g, min_elements=0)
    (eigh,) = [eq for eq in fused if len(eq.outs) > 1]
    assert eigh.primitive == "eigh" and len(fused) < len(g)
    assert any(isinstance(eq.op, FusedOp) for eq in fused)
    np.testing.assert_array_equal(fused(a), f(a))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("power", "ufunc"), [(0.5, "sqrt"), (-1, "reciprocal"), (-1.0, "power"),
                                              (2, "square"), (3, "power")])
def test_a_fused_power_runs_the_ufunc_of_numpys_operator(power, ufunc, dtype):
    """NumPy's ``x ** 0.5`` runs ``np.sqrt`` (``x ** -1`` ``np.reciprocal``, ``x ** -1.0``
    ``np.power``): a kernel runs the same ufunc, so it warns as eagerly."""
    f = lambda x: x ** power + 1.0  # noqa: E731
    x = np.linspace(-2.0, 2.0, 5001).astype(dtype)  # (a 0 and negatives)
    g = fuse(wg.trace(f, x), min_elements=0)
    assert f"np.{ufunc}(" in g.equations[0].op.kernel_source
    for run in (f, g):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = run(x)
        assert_same(got, f(x))
        assert {str(w.message).rsplit(" ", 1)[-1] for w in caught} <= {ufunc}
        assert len(caught) == (power not in (2, 3))


def test_fusing_a_long_chain_takes_memory_in_proportion_to_its_length():
    """A chain fused into one kernel keeps its formula's parts short (``…``): their texts,
    each nesting the ones before, took memory growing as the square of the length (a
    chain of 10⁵ steps ran out of memory)."""

    def chain(n):
        def f(x):
            for _ in range(n):
                x = np.sin(x) * 1.0001
            return x

        return f

    def peak(n):
        g = wg.trace(chain(n), np.linspace(0, 1, 4))
        tracemalloc.start()
        try:
            return tracemalloc.get_traced_memory()[1] if fuse(g) else 0
        finally:
            tracemalloc.stop()

    small, large = peak(1000), peak(4000)
    assert large < 6 * small, (small, large)
    x = np.linspace(0, 1, 4)
    h = fuse(wg.trace(chain(4000), x))
    formula = h.equations[0].op.formula
    assert "…" in formula and len(formula) < 1000, formula
    assert h(x).tobytes() == chain(4000)(x).tobytes()
