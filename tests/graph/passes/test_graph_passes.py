"""The rewriting passes dce, fold_constants, cse and simplify: each acts where it must,
leaves alone what it must, preserves values and gradients, keeps guards, and never
touches the graph it is given."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.tree import flatten
from wengert.graph import Equation, Graph, Guard, GuardError, Literal, Var
from wengert.graph.backends.codegen import is_scalar_program
from wengert.graph.passes.cse import cse, value_key
from wengert.graph.passes.dce import dce, live_variables
from wengert.graph.passes.fold import MAX_FOLDED_SIZE, fold_constants
from wengert.graph.passes.rewrite import PassReport, interchangeable, substitute_ins, use_counts
from wengert.graph.passes.simplify import simplify
from wengert.ops import REGISTRY
from wengert.ops.linalg.checks import checked

F64 = np.float64
PASSES = (dce, fold_constants, cse, simplify)


def pipeline(graph: Graph, reports: list[PassReport] | None = None) -> Graph:
    """The four passes in the order the default pipeline is meant to run them."""
    for p in (fold_constants, simplify, cse, dce):
        graph = p(graph, reports=reports)
    return graph


ALL = (*PASSES, pipeline)


def report_of(p, graph: Graph) -> PassReport:
    reports: list[PassReport] = []
    p(graph, reports=reports)
    return reports[0]


def hand_graph(inputs, equations, outputs, guards=(), name="f") -> Graph:
    """A graph built from its parts (inputs in, one flat output or a tuple out)."""
    in_tree = flatten(tuple(range(len(inputs))))[1]
    out_tree = flatten(0 if len(outputs) == 1 else tuple(range(len(outputs))))[1]
    return Graph(inputs, equations, outputs, in_tree, out_tree, guards, name)


def var(name, shape=(), dtype=F64, scalar=False) -> Var:
    return Var(name, shape, dtype, scalar)


def eq(op_name, ins, out, **params) -> Equation:
    op = REGISTRY[op_name] if isinstance(op_name, str) else op_name
    return Equation(op, [v if isinstance(v, (Var, Literal)) else Literal(v) for v in ins],
                    params, out)


def listing(before: Graph, after: Graph) -> str:
    return f"\n--- before:\n{before}\n--- after:\n{after}"


def assert_same(a, b, msg="") -> None:
    """Equal pytrees of values (NaN equal to NaN), same dtypes."""
    la, _ = flatten(a)
    lb, _ = flatten(b)
    assert len(la) == len(lb), msg
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y), msg
        assert np.result_type(x) == np.result_type(y), msg
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-300, equal_nan=True, err_msg=msg)


def snapshot(graph: Graph):
    """Everything a pass could change in place, by value and identity."""
    return (graph.inputs, graph.outputs, graph.guards, graph.equations,
            [(e.op, e.ins, dict(e.params), e.out, e.source) for e in graph.equations],
            [(g.var, g.how, g.expected) for g in graph.guards], str(graph))


# -- dce ------------------------------------------------------------------------------------
def test_dce_removes_what_nothing_reads():
    def f(x):
        dead = np.exp(x) * 3.0
        _ = np.cos(dead)
        return np.sin(x) * 2.0

    g = wg.trace(f, np.ones(3))
    h = dce(g)
    assert [e.op.name for e in h] == ["sin", "multiply"], listing(g, h)
    assert str(report_of(dce, g)) == \
        "dce: 5 → 2 equations; removed 3 (exp: 1, multiply: 1, cos: 1)"
    x = np.array([0.3, -1.0, 2.0])
    assert_same(h(x), f(x), listing(g, h))


def test_dce_keeps_everything_live():
    g = wg.trace(lambda x, y: (np.sin(x) * y, np.cos(y)), np.ones(2), 2.0)
    h = dce(g)
    assert h is not g and h.equations == g.equations, listing(g, h)
    assert report_of(dce, g).total == 0


def test_dce_keeps_unread_equations_that_may_raise():
    """An unread step that raises on some values (a Cholesky factor of a matrix that is
    not positive definite, an index out of range, a log under ``np.errstate(divide=
    'raise')``) stays: an optimised graph and a compiled function (and its gradient)
    refuse where eager code refuses, instead of returning a number."""

    def f(x, i):
        with np.errstate(divide="raise"):
            np.log(x)
        np.linalg.cholesky(np.diag(x))
        np.take(x, i)
        np.exp(x)  # (cannot raise: removed)
        return np.sum(x * 2.0)

    good, i = np.array([1.0, 2.0]), np.array([1])
    g = wg.trace(f, good, i)
    h = dce(g)
    assert [eq.op.name for eq in h] == [eq.op.name for eq in g if eq.op.name != "exp"]
    for bad, error in (((np.array([-1.0, 2.0]), i), np.linalg.LinAlgError),
                       ((good, np.array([5])), IndexError),
                       ((np.array([0.0, 2.0]), i), FloatingPointError)):
        for run in (f, pipeline(g), wg.compile(f), wg.compile(wg.grad(f))):
            with pytest.raises(error):
                run(*bad)
    assert pipeline(g)(good, i) == f(good, i) == 6.0


def test_dce_keeps_a_check_nothing_reads():
    """A derivative computed and then dropped still refuses where it does not exist, in
    eager code and so in the compiled function: the check it carries (here on its own,
    read by nothing) stays when the rest of the derivative goes."""

    def f(a):
        checked(a, "qr_full_rank")  # (what a rule's check leaves when nothing reads it)
        wg.grad(lambda m: wnp.sum(np.linalg.qr(m)[1]))(a)
        return wnp.sum(a * 2.0)

    good = np.array([[2.0, 1.0], [1.0, 3.0]])
    bad = np.array([[1.0, 2.0], [2.0, 4.0]])
    g = wg.trace(f, good)
    h = dce(g)
    assert [eq.op.name for eq in h][0] == "check" and len(h) < len(g)
    for run in (f, pipeline(g), wg.compile(f)):
        assert run(good) == 14.0
        with pytest.raises(np.linalg.LinAlgError, match="rank-deficient"):
            run(bad)


def test_dce_keeps_guarded_values():
    def f(x):
        s = np.sin(x)
        if s > 0:  # the output does not read s, but the guard does
            return x * 2.0
        return x * 3.0

    g = wg.trace(f, 1.0)
    h = dce(g)
    assert [e.op.name for e in h] == ["sin", "greater", "multiply"], listing(g, h)
    assert h.guards == g.guards
    assert h(0.5) == 1.0
    with pytest.raises(GuardError):
        h(-1.0)  # sin(-1) < 0: the other branch


def test_dce_outputs_may_be_inputs_and_literals():
    x = var("x", (2,))
    t0 = var("t0", (2,))
    g = hand_graph([x], [eq("sin", [x], t0)], [x, Literal(2.5)])
    h = dce(g)
    assert len(h) == 0 and h.outputs == g.outputs, listing(g, h)
    assert_same(h(np.ones(2)), (np.ones(2), 2.5))


def _chain(n: int) -> tuple[Var, list[Equation]]:
    x = var("x", (), scalar=True)
    sin = REGISTRY["sin"]
    eqs = []
    v = x
    for i in range(n):
        out = Var(f"t{i}", (), F64, True)
        eqs.append(Equation(sin, (v,), None, out))
        v = out
    return x, eqs


@pytest.fixture(scope="module")
def million_chain():
    return _chain(1_000_000)


@pytest.mark.slow
@pytest.mark.parametrize("alive", [1_000_000, 500_000, 0])
def test_dce_of_a_million_equation_chain(million_chain, alive):
    x, eqs = million_chain
    out = eqs[alive - 1].out if alive else x
    g = hand_graph([x], eqs, [out])
    t = time.perf_counter()
    h = dce(g)
    elapsed = time.perf_counter() - t
    assert len(h) == alive
    assert h.equations[:3] == tuple(eqs[:min(3, alive)])
    print(f"dce of a {len(g):,}-equation chain ({alive:,} alive): {elapsed:.3f} s")


def test_live_variables_and_use_counts():
    g = wg.trace(lambda x: (np.exp(x), np.sin(x) * np.sin(x))[1], 1.0)
    assert sorted(v.name for v in live_variables(g)) == ["t1", "t2", "t3", "x"]
    counts = use_counts(g)
    assert [counts.get(v, 0) for v in g.variables()] == [3, 0, 1, 1, 1]


# -- fold_constants -----------------------------------------------------------------------
def test_fold_computes_constant_chains():
    x = var("x", (2,))
    t0, t1, t2 = (var(f"t{i}", (2,)) for i in range(3))
    g = hand_graph([x], [eq("sqrt", [np.array([1.0, 4.0])], t0), eq("negative", [t0], t1),
                         eq("multiply", [x, t1], t2)], [t2])
    h = fold_constants(g)
    assert [str(e) for e in h] == ["t2: f64[2] = multiply(x, array(f64[2]))"], listing(g, h)
    assert str(report_of(fold_constants, g)) == \
        "fold_constants: 3 → 1 equations; folded 2 (sqrt: 1, negative: 1)"
    assert_same(h(np.array([3.0, 1.0])), np.array([-3.0, -2.0]))
    assert_same(h(np.array([3.0, 1.0])), g(np.array([3.0, 1.0])))


def test_fold_leaves_what_would_warn_or_fail():
    x = var("x")
    t0, t1, t2, t3, t4 = (var(f"t{i}") for i in range(5))
    g = hand_graph([x], [eq("log", [np.float64(-1.0)], t0),  # NaN with a warning
                         eq("divide", [np.float64(1.0), np.float64(0.0)], t1),  # inf, warns
                         eq("exp", [np.float64(1000.0)], t3),  # overflows, warns
                         eq("exp", [np.float64(-1000.0)], t4),  # underflows silently: folds
                         eq("add", [x, t0], t2)], [t2, t1, t3, t4])
    h = fold_constants(g)
    assert [e.op.name for e in h] == ["log", "divide", "exp", "add"], listing(g, h)
    assert report_of(fold_constants, g).skipped == {"error": 3}
    with pytest.warns(RuntimeWarning):
        out = h(np.float64(1.0))
    with np.errstate(all="ignore"):
        assert_same(out, g(np.float64(1.0)))


def test_fold_does_not_store_huge_results():
    x = var("x")
    big = var("t0", (1001, 1000))
    small = var("t1", (10, 10))
    out = var("t2", (1001, 1000))
    g = hand_graph([x], [eq("broadcast_to", [np.float64(1.0)], big, shape=(1001, 1000)),
                         eq("broadcast_to", [np.float64(2.0)], small, shape=(10, 10)),
                         eq("multiply", [big, x], out)], [out, small])
    assert MAX_FOLDED_SIZE < 1001 * 1000
    h = fold_constants(g)
    assert [e.op.name for e in h] == ["broadcast_to", "multiply"], listing(g, h)
    assert report_of(fold_constants, g).skipped == {"too large": 1}
    assert_same(h(np.float64(3.0)), g(np.float64(3.0)))


def test_fold_recorded_numpy_calls():
    call = wg.trace(lambda x: np.argmax(x), np.ones(3)).equations[0]
    assert all(r is None for r in call.op.vjps), "argmax should be a recorded call"
    x, t1 = var("x"), var("t1")
    e = call.replace(ins=(Literal(np.array([1.0, 5.0, 2.0])),))
    g = hand_graph([x], [e, eq("multiply", [x, e.out], t1)], [t1])
    h = fold_constants(g)
    assert [str(q) for q in h] == ["t1: f64[] = multiply(x, 1)"], listing(g, h)
    assert_same(h(np.float64(2.5)), np.float64(2.5))


def test_fold_keeps_python_floats_python_floats():
    x = var("x", scalar=True)
    t0, t1 = var("t0", scalar=True), var("t1", scalar=True)
    g = hand_graph([x], [eq("sin", [0.5], t0), eq("multiply", [x, t0], t1)], [t1])
    h = fold_constants(g)
    (only,) = h.equations
    assert type(only.ins[1].value) is float, listing(g, h)
    assert is_scalar_program(h)
    assert type(h(2.0)) is float and h(2.0) == 2.0 * math.sin(0.5)
    # a NumPy result for a variable that holds a Python float becomes a Python float
    t2 = var("t2", scalar=True)
    g = hand_graph([x], [eq("add", [1, 0.5], t0), eq("multiply", [x, t0], t2)], [t2])
    h = fold_constants(g)
    assert [str(e) for e in h] == ["t2: f64[] = multiply(x, 1.5)"], listing(g, h)
    assert is_scalar_program(h)


def test_fold_keeps_numpy_scalars_strong():
    # a f64[] NumPy value times a float32 array is float64; a Python float would not be
    x = var("x", (3,), np.float32)
    t0, t1 = var("t0"), var("t1", (3,))
    g = hand_graph([x], [eq("exp", [np.float64(0.0)], t0), eq("multiply", [x, t0], t1)], [t1])
    h = fold_constants(g)
    assert len(h) == 1 and isinstance(h.equations[0].ins[1].value, np.float64), listing(g, h)
    out = h(np.ones(3, np.float32))
    assert out.dtype == np.float64
    assert_same(out, g(np.ones(3, np.float32)))


def test_folded_arrays_are_read_only_and_returned_as_copies():
    x = var("x", (2,))
    t0, t1 = var("t0", (2,)), var("t1", (2,))
    g = hand_graph([x], [eq("exp", [np.zeros(2)], t0), eq("sin", [x], t1)], [t0, t1])
    h = fold_constants(g)
    assert not h.outputs[0].value.flags.writeable
    first, _ = h(np.ones(2))
    first += 1.0  # the caller's own copy: the constant is untouched
    assert_same(h(np.ones(2))[0], np.ones(2))


def test_fold_and_guards():
    x = var("x", scalar=True)
    t0, t1, t2 = var("t0", scalar=True), var("t1", scalar=True), var("t2", scalar=True)
    holds = Guard(t0, "bool", True, None)  # sin(0.5) != 0: holds for every argument
    fails = Guard(t1, "float", 0.0, None)  # cos(0.5) is not 0.0: can never hold
    g = hand_graph([x], [eq("sin", [0.5], t0), eq("cos", [0.5], t1),
                         eq("multiply", [x, t0], t2)], [t2], guards=(holds, fails))
    h = fold_constants(g)
    assert [e.op.name for e in h] == ["cos", "multiply"], listing(g, h)
    assert h.guards == (fails,)
    assert report_of(fold_constants, g).skipped == {"guard": 1}
    for graph in (g, h):
        with pytest.raises(GuardError):
            graph(1.0)


def test_fold_after_simplify_of_integer_times_zero():
    def f(n, x):
        return x * np.sum(n * 0 + 3)

    g = wg.trace(f, np.arange(3), 2.0)
    h = dce(fold_constants(simplify(g)))
    assert [str(e) for e in h] == ["t3: f64[] = multiply(x, 9)"], listing(g, h)
    assert_same(h(np.arange(3) + 7, 0.5), f(np.arange(3) + 7, 0.5))


def test_fold_what_depends_only_on_shapes_and_dtypes():
    def f(x):
        n = x.shape[0] * 2 + x.size + x.ndim + len(x) + np.shape(x)[0]  # Python ints
        ones, zeros = np.ones_like(x), np.zeros_like(x)
        full, empty = np.full_like(x, 2.5), np.empty_like(x)
        return x * ones + zeros + full * n + empty, np.ones_like(x, dtype=np.int32, shape=(2,))

    x = np.arange(4.0)
    g = wg.trace(f, x)
    assert [e.op.name for e in g][:4] == ["ones_like", "zeros_like", "full_like", "empty_like"]
    result = g.optimize(report=True)
    fold = result.reports[0]
    assert fold.changes == {"ones_like": 2, "zeros_like": 1, "full_like": 1, "empty_like": 1,
                            "multiply": 1}, str(fold)
    assert str(result.after) == "\n".join([  # x * 1 simplified away; + 0.0 stays (-0.0 + 0.0)
        "graph f(x: f64[4]):",
        "    t5: f64[4] = add(x, array(f64[4]))",
        "    t7: f64[4] = add(t5, array(f64[4]))",
        "    t8: f64[4] = add(t7, array(f64[4]))",
        "    return t8, array(i32[2])"])
    total, ints = result.after(x + 1.0)
    assert_same(total, x + 1.0 + 2.5 * 21)  # (empty_like folds to zeros)
    assert_same(ints, np.ones(2, np.int32))
    assert ints.flags.writeable and ints.flags.owndata  # the caller's own array


def test_folded_shape_constants_are_arrays_as_eagerly():
    """``np.full_like(x, 0.1)`` folds to the array eager code makes: a broadcast view of
    one value would give ``matmul`` and ``einsum`` other bits (other loops run)."""
    x = np.zeros((1000, 1000))
    g = fold_constants(wg.trace(lambda x: np.full_like(x, 3.0), x))
    (lit,) = g.outputs
    assert type(lit) is Literal and lit.value.shape == x.shape
    assert lit.value.flags.c_contiguous and not lit.value.flags.writeable
    source = g.to_source()
    assert "c0 = np.full((1000, 1000), np.float64(3.0))" in source
    namespace = {}
    exec(source, namespace)  # written out: the source runs on its own
    out = namespace["f"](x)
    assert out.flags.writeable and out.shape == x.shape and (out == 3.0).all()
    assert not namespace["c0"].flags.writeable
    too_large = fold_constants(wg.trace(lambda x: np.ones_like(x), np.zeros(1_000_001)))
    assert [e.op.name for e in too_large] == ["ones_like"]  # computed when run, as eagerly
    for f in (lambda a, w: np.full_like(a, 0.1) @ w,
              lambda a, w: np.einsum("i,ij->j", np.full_like(a, 0.1), w),
              lambda a, w: w.T @ (np.ones_like(a) / 3.0)):
        cf = wg.compile(f)
        for seed in range(5):
            rng = np.random.default_rng(seed)
            a, w = rng.normal(size=100), rng.normal(size=(100, 3))
            assert_same(cf(a, w), f(a, w))


def test_fold_leaves_like_functions_of_traced_fill_values():
    g = wg.trace(lambda x, c: np.full_like(x, c), np.ones(3), 2.0)
    assert [e.op.name for e in fold_constants(g)] == ["broadcast_to", "copy"]
    assert_same(fold_constants(g)(np.ones(3), 5.0), np.full(3, 5.0))


def test_folded_zeros_written_in_place_stay_constant():
    def f(x):
        y = np.zeros_like(x)
        y[1:] = x[:-1] * 2.0
        y += 1.0
        return y

    cf = wg.compile(f)
    for x in (np.arange(5.0), np.ones(5)):
        assert_same(cf(x), f(x))
    assert "zeros_like" not in cf.graph_for(np.ones(5)).to_source()


# -- cse ------------------------------------------------------------------------------------
def test_cse_merges_duplicates_and_commuted_inputs():
    def f(x, y):
        a = np.sin(x) * y
        b = y * np.sin(x)
        return a + b + np.exp(x) + np.exp(x)

    g = wg.trace(f, np.ones(3), 2.0)
    h = cse(g)
    assert [e.op.name for e in h] == ["sin", "multiply", "add", "exp", "add", "add"], \
        listing(g, h)
    assert str(report_of(cse, g)) == \
        "cse: 9 → 6 equations; merged 3 (sin: 1, multiply: 1, exp: 1)"
    x = np.array([0.1, -2.0, 3.0])
    assert_same(h(x, 0.7), f(x, 0.7), listing(g, h))


@pytest.mark.parametrize("make", [
    lambda x: (x * 0.0, x * -0.0),
    lambda x: (x * 2, x * 2.0),
    lambda x: (x * 2.0, x * np.float64(2.0)),
    lambda x: (x - 1.0, 1.0 - x),
    lambda x: (np.maximum(x, 0.5), np.maximum(0.5, x)),
    lambda x: (np.sum(x, axis=0), np.sum(x, axis=1)),
    lambda x: (x[np.array([0, 1])], x[np.array([0, 2])]),
    lambda x: (x * np.ones(3), x * np.ones(3, np.float32)),
], ids=["signed-zero", "int-float", "weak-strong", "subtract", "maximum", "params",
        "array-params", "array-dtypes"])
def test_cse_keeps_what_differs(make):
    g = wg.trace(make, np.linspace(-1.0, 1.0, 9).reshape(3, 3))
    h = cse(g)
    assert len(h) == len(g), listing(g, h)
    x = np.linspace(-2.0, 2.0, 9).reshape(3, 3)
    assert_same(h(x), g(x))


def test_cse_keeps_different_ops_made_for_recorded_calls():
    # two ops made for recorded calls are equal only if they are the same object
    first, second = (wg.trace(lambda v: v > 0.0, np.ones(3)).equations[0].op for _ in range(2))
    assert first is not second and first.name == second.name == "greater"
    x = var("x", (3,))
    b0, b1 = var("b0", (3,), bool), var("b1", (3,), bool)
    g = hand_graph([x], [eq(first, [x, 0.0], b0), eq(second, [x, 0.0], b1)], [b0, b1])
    h = cse(g)
    assert len(h) == 2, listing(g, h)
    assert_same(h(np.array([-1.0, 0.0, 2.0])), g(np.array([-1.0, 0.0, 2.0])))


def test_cse_merges_equal_values_of_every_kind():
    x = var("x", (3,), np.float32)
    nan = float("nan")
    outs = [var(f"t{i}", (3,), np.float32) for i in range(8)]
    index = [var(f"i{i}", (2,), np.float32) for i in range(2)]
    greater = wg.trace(lambda v: v > 0.0, np.ones(3)).equations[0].op  # one recorded op
    b = [var(f"b{i}", (3,), bool) for i in range(2)]
    g = hand_graph([x], [
        eq("multiply", [x, nan], outs[0]), eq("multiply", [nan, x], outs[1]),
        eq("add", [x, np.ones(3, np.float32)], outs[2]),
        eq("add", [np.ones(3, np.float32), x], outs[3]),
        eq("getitem", [x], index[0], index=np.array([2, 0])),
        eq("getitem", [x], index[1], index=np.array([2, 0])),
        eq("transpose", [x], outs[4], axes=(0,)), eq("transpose", [x], outs[5], axes=(0,)),
        eq(greater, [x, 0.0], b[0]), eq(greater, [x, 0.0], b[1]),
    ], [*outs[:6], *index, *b])
    h = cse(g)
    assert [e.op.name for e in h] == ["multiply", "add", "getitem", "transpose", "greater"], \
        listing(g, h)
    v = np.array([1.0, -2.0, 3.0], np.float32)
    assert_same(h(v), g(v))


def test_cse_moves_guards_to_the_kept_variable():
    def f(x):
        a = np.sin(x)
        b = np.sin(x)
        if b:  # a guard on b, which merges into a
            return a * b
        return a

    g = wg.trace(f, 1.0)
    h = cse(g)
    assert len(h) == 2 and h.guards[0].var is h.equations[0].out, listing(g, h)
    assert h(0.5) == math.sin(0.5) ** 2
    with pytest.raises(GuardError):
        h(0.0)


def test_value_key():
    assert value_key(np.float64(2.0)) != value_key(2.0)
    assert value_key(np.array(2.0)) != value_key(np.float64(2.0))
    assert value_key(np.zeros(3)) != value_key(np.zeros(4))
    assert value_key(np.zeros(3)) != value_key(np.zeros(3, np.float32))
    assert value_key([1, 2]) != value_key((1, 2))
    assert value_key(True) != value_key(1)
    assert value_key({"a": (slice(None), 0)}) == value_key({"a": (slice(None), 0)})
    big = np.zeros(100_000)
    assert value_key(big) == value_key(big) and value_key(big) != value_key(big.copy())


# -- simplify -------------------------------------------------------------------------------
A = np.linspace(-1.5, 2.0, 6).reshape(2, 3)
IDENTITIES = [
    # (name of the rule, function, example arguments)
    ("x+0", lambda x: np.sin(x) + -0.0, (A,)),
    ("x+0", lambda x: 0 + x * 2, (np.arange(3),)),
    ("x+0", lambda x: np.sin(x) + np.full(3, -0.0), (A,)),
    ("x+0", lambda x: np.sin(x) + -0.0, (A.astype(np.float32),)),
    ("x+0", lambda x: np.sin(x) + complex(-0.0, -0.0), (A + 1j,)),
    ("x+0", lambda x: (x > 0) + False, (A,)),
    ("x-0", lambda x: np.sin(x) - 0.0, (A,)),
    ("x-0", lambda x: np.sin(x) - 0, (A + 1j,)),
    ("x*1", lambda x: np.sin(x) * 1.0, (A,)),
    ("x*1", lambda x: 1.0 * np.sin(x), (0.5,)),
    ("x*1", lambda x: np.sin(x) * np.ones((2, 3)), (A,)),
    ("x/1", lambda x: np.sin(x) / 1.0, (A,)),
    ("x**1", lambda x: np.sin(x) ** 1, (A,)),
    ("x**1", lambda x: np.sin(x) ** 1.0, (0.5,)),
    ("+x", lambda x: +np.sin(x), (A,)),
    ("-(-x)", lambda x: np.negative(np.negative(np.sin(x))), (A,)),
    ("-(-x)", lambda x: np.negative(np.negative(np.sin(x))), (0.5,)),
    ("x+(-y)", lambda x: (x * 3) + (-(x * 2)), (np.arange(3),)),
    ("x+(-y)", lambda x: (-(x * 2)) + (x * 3), (np.arange(3, dtype=np.uint8),)),
    ("x-(-y)", lambda x: (x * 3) - (-(x * 2)), (np.arange(3, dtype=np.int8),)),
    ("x*(-1)", lambda x: -1 * (x + 1), (np.arange(3),)),
    ("x*0 (integers)", lambda x: x * 0 + x, (np.arange(3),)),
    ("x*0 (integers)", lambda x: 0 * (x > 1), (A,)),
    ("transpose identity", lambda x: np.transpose(np.sin(x), (0, 1)), (A,)),
    ("transpose identity", lambda x: np.sin(x).T, (np.ones(3),)),
    ("transpose∘transpose", lambda x: np.sin(x).T.T, (A,)),
    ("transpose∘transpose",
     lambda x: np.transpose(np.transpose(x, (1, 2, 0)), (2, 0, 1)) * 2.0, (np.ones((2, 3, 4)),)),
    ("transpose∘transpose",
     lambda x: np.transpose(np.transpose(x, (1, 2, 0)), (1, 2, 0)) * 2.0, (np.ones((2, 3, 4)),)),
    ("transpose∘transpose",  # same shape, not the identity: merged into one transpose
     lambda x: np.transpose(np.transpose(x, (1, 0, 2)), (0, 2, 1)),
     (np.arange(8.0).reshape(2, 2, 2),)),
    ("reshape chain", lambda x: np.reshape(np.reshape(x, (3, 2)), (6,)) * 2.0, (A,)),
    ("reshape chain", lambda x: np.reshape(np.squeeze(x), (2, 2)) * 2.0, (np.ones((1, 4)),)),
    ("reshape chain", lambda x: np.reshape(np.expand_dims(x, 0), (3, 2)) * 2.0, (A,)),
    ("reshape to the same shape", lambda x: np.reshape(np.sin(x), (2, 3)), (A,)),
    ("reshape to the same shape", lambda x: np.reshape(x.reshape(6), (2, -1)) * 2.0, (A,)),
    ("squeeze to the same shape", lambda x: np.squeeze(np.sin(x)), (A,)),
    ("broadcast_to to the same shape", lambda x: np.broadcast_to(np.sin(x), (2, 3)), (A,)),
    ("astype to the same dtype", lambda x: np.sin(x).astype(np.float64), (A,)),
    ("sum over unit axes", lambda x: np.sum(np.sin(x)), (np.float64(0.5),)),
    ("sum over unit axes", lambda x: np.sum(np.sin(x), axis=1, keepdims=True),
     (np.ones((3, 1)),)),
    ("mean over unit axes", lambda x: np.mean(np.sin(x), axis=0, keepdims=True),
     (np.ones((1, 3)),)),
    ("where(c, x, x)", lambda x: (lambda s: np.where(x > 0, s, s))(np.sin(x)), (A,)),
    ("where(constant, x, y)", lambda x: np.where(np.ones((2, 3), bool), np.sin(x), x), (A,)),
    ("where(constant, x, y)", lambda x: np.where(np.zeros((2, 3), bool), x, np.sin(x)), (A,)),
]


def _new_args(args):
    """Other arguments of the same shapes and dtypes."""
    out = []
    for a in args:
        if type(a) is float:
            out.append(a * 1.3 - 0.2)
        elif type(a) is int:
            out.append(a * 2 - 1)
        else:
            a = np.asarray(a)
            shifted = a * 1.3 - 0.2 if a.dtype.kind == "f" else a * 2 - 1
            out.append(shifted.astype(a.dtype)[()] if a.ndim == 0 else shifted.astype(a.dtype))
    return out


@pytest.mark.parametrize("rule, f, args", IDENTITIES,
                         ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(IDENTITIES)])
def test_simplify_applies(rule, f, args):
    g = wg.trace(f, *args)
    h = simplify(g)
    report = report_of(simplify, g)
    assert report.changes.get(rule, 0) >= 1, f"{report}{listing(g, h)}"
    optimised = pipeline(g)
    assert len(optimised) < len(g) or rule == "x*(-1)", listing(g, optimised)
    for a in (args, _new_args(args)):
        expected = f(*a)
        for graph in (h, optimised):
            assert_same(graph(*a), expected, listing(g, graph))


NOT_IDENTITIES = [
    # (why not, function, example arguments)
    ("broadcasts", lambda x: x + np.zeros(3), (np.float64(1.0),)),
    ("broadcasts", lambda x: x * np.ones((2, 1)), (np.ones(3),)),
    ("int + 0.0 is a float", lambda x: x + 0.0, (np.arange(3),)),
    ("-0.0 + 0.0 is +0.0", lambda x: x + 0.0, (A,)),
    ("0.0 + -0.0 is +0.0", lambda x: 0 + x, (A,)),
    ("-0.0 + zeros is +0.0", lambda x: x + np.zeros(3), (A,)),
    ("-0.0 - -0.0 is +0.0", lambda x: x - (-0.0), (A.astype(np.float32),)),
    ("complex -0.0 + 0.0 is +0.0", lambda x: x + -0.0, (A + 1j,)),
    ("bool * 1 is an int", lambda x: (x > 0) * 1, (A,)),
    ("f32 * f64 is f64", lambda x: x * np.float64(1.0), (A.astype(np.float32),)),
    ("f32 * f64 array is f64", lambda x: x * np.ones(3), (A.astype(np.float32),)),
    ("float * 0 is not 0", lambda x: x * 0.0, (A,)),
    ("x + (-y) flips the sign of a NaN y", lambda x: np.cos(x) + (-np.sin(x)), (A,)),
    ("(-y) + x flips the sign of a NaN y", lambda x: (-np.sin(x)) + np.cos(x), (0.5,)),
    ("x - (-y) flips the sign of a NaN y", lambda x: np.cos(x) - (-np.sin(x)), (A,)),
    ("nan * -1.0 keeps the sign of the NaN", lambda x: np.sin(x) * -1.0, (A,)),
    ("a complex product is not exact", lambda x: np.sin(x) * 1.0, (A + 1j,)),
    ("a complex quotient is not exact", lambda x: np.sin(x) / 1, (A + 1j,)),
    ("a complex power is not exact", lambda x: np.sin(x) ** 1, (A + 1j,)),
    ("complex times -1 is not negative", lambda x: np.sin(x) * -1, (A + 1j,)),
    ("int * -0.0 is a float whose sign depends on x", lambda x: x * -0.0, (np.arange(3) - 1,)),
    ("-n of a Python int is a NumPy int", lambda x, n: x + (-n), (np.arange(3, dtype=np.int32), 2)),
    ("int / 1 is a float", lambda x: x / 1, (np.arange(3),)),
    ("x**2", lambda x: x ** 2.0, (A,)),
    ("x - x", lambda x: x - x, (A,)),
    ("0 - x", lambda x: 0.0 - x, (A,)),
    ("a square transpose", lambda x: np.transpose(x), (np.ones((3, 3)),)),
    ("a Python float is not a 0-d array", lambda x: np.reshape(x, ()), (0.5,)),
    ("a Python float is not a NumPy float", lambda x: np.sum(x), (0.5,)),
    ("sum over an axis", lambda x: np.sum(x, axis=1, keepdims=True), (A,)),
    ("sum of int32 is int64", lambda x: np.sum(x, axis=()), (np.arange(3, dtype=np.int32),)),
    ("astype to another dtype", lambda x: x.astype(np.float32), (A,)),
    ("where of different values", lambda x: np.where(x > 0, x, -x), (A,)),
    ("where with a mixed condition", lambda x: np.where(np.array([True, False, True]), x, -x),
     (A,)),
    ("where that broadcasts", lambda x: np.where(np.ones((2, 3), bool), x, x), (np.ones(3),)),
]


@pytest.mark.parametrize("why, f, args", NOT_IDENTITIES,
                         ids=[w for w, _, _ in NOT_IDENTITIES])
def test_simplify_leaves(why, f, args):
    g = wg.trace(f, *args)
    h = simplify(g)
    assert report_of(simplify, g).total == 0, f"{why}{listing(g, h)}"
    assert [str(e) for e in h] == [str(e) for e in g]
    for a in (args, _new_args(args)):
        assert_same(h(*a), g(*a))
        np.testing.assert_allclose(h(*a), f(*a), rtol=1e-12)  # (dtypes: the tracer's)


def test_simplify_composes_transposes():
    g = wg.trace(lambda x: np.transpose(np.transpose(x, (1, 2, 0)), (1, 2, 0)), np.ones((2, 3, 4)))
    h = dce(simplify(g))
    assert [str(e) for e in h] == ["t1: f64[4,2,3] = transpose(x, axes=(2, 0, 1))"], listing(g, h)
    x = np.arange(24.0).reshape(2, 3, 4)
    assert_same(h(x), np.transpose(np.transpose(x, (1, 2, 0)), (1, 2, 0)))


def test_simplify_collapses_chains_in_one_pass():
    def f(x):
        y = x
        for _ in range(6):
            y = -(y * 1.0)
        return np.reshape(np.reshape(np.reshape(y, (6,)), (3, 2)), (2, 3)) - 0.0

    g = wg.trace(f, A)
    h = dce(simplify(g))
    assert len(h) == 0 and h.outputs == g.inputs, listing(g, h)


def test_simplify_keeps_the_sign_of_zero():
    """``-0.0 + 0.0`` is ``+0.0``: only the additions of a zero that keep every value
    (``x + (-0.0)``, ``x - 0.0``; for complex ``x`` a real ``-0.0`` has a ``+0.0``
    imaginary part) are rewritten, so a simplified graph gives eager code's signs
    (``1 / y`` is ``-inf`` where it is ``-0.0``)."""
    x = np.array([-0.0, 0.0, 1.0, -np.inf, np.nan])
    for f, rewritten in ((lambda x: x + 0.0, (False, False)), (lambda x: 0.0 + x, (False, False)),
                         (lambda x: x - (-0.0), (False, False)),
                         (lambda x: x + (-0.0), (True, False)), (lambda x: -0.0 + x, (True, False)),
                         (lambda x: x + complex(-0.0, -0.0), (False, True)),
                         (lambda x: x - 0.0, (True, True)), (lambda x: x - 0, (True, True))):
        for arg in (x, x.astype(np.float32), x + 0j, x * 1j - x):
            g = wg.trace(f, arg)
            h = dce(simplify(g))
            assert (len(h) == 0) is rewritten[arg.dtype.kind == "c"], listing(g, h)
            want = f(arg)
            for got in (h(arg), wg.compile(f)(arg), wg.compile(f)(arg)):
                assert got.dtype == want.dtype
                assert got.tobytes() == want.tobytes(), (got, want)


def test_simplify_keeps_nan_signs_and_complex_products():
    """``x * 1`` is not ``x`` for complex ``x`` (``(inf+1j) * 1`` is ``inf+nanj``,
    ``(-0-0j) * 1`` is ``0-0j``), and ``x + (-y)``, ``x - (-y)``, ``x * -1`` give a NaN of
    another sign than ``x - y``, ``x + y``, ``-x``: a simplified graph gives eager
    code's bits."""
    z = np.array([complex(np.inf, 1.0), complex(np.nan, 1.0), complex(-0.0, -0.0), 2 - 1j])
    f64 = np.array([np.nan, -np.nan, 1.0, -0.0])
    cases = [(lambda x: x * 1.0, z), (lambda x: 1 * x, z), (lambda x: x / 1.0, z),
             (lambda x: x ** 1, z), (lambda x: x * -1.0, z), (lambda x: x * -1.0, f64),
             (lambda x: x * -1, f64.astype(np.float32)),
             (lambda x, y: x + (-y), f64[::-1].copy(), f64),
             (lambda x, y: (-y) + x, f64[::-1].copy(), f64),
             (lambda x, y: x - (-y), f64[::-1].copy(), f64)]
    for f, *args in cases:
        g = wg.trace(f, *args)
        want = f(*args)
        for got in (simplify(g)(*args), pipeline(g)(*args), wg.compile(f)(*args)):
            assert got.dtype == want.dtype
            assert got.tobytes() == want.tobytes(), (got, want, listing(g, simplify(g)))


def test_simplify_moves_guards_to_the_replacement():
    def f(x):
        y = x * 1.0
        if y:
            return np.sin(y)
        return y

    g = wg.trace(f, 1.0)
    h = dce(simplify(g))
    assert [e.op.name for e in h] == ["sin"] and h.guards[0].var is h.inputs[0], listing(g, h)
    assert h(0.5) == math.sin(0.5)
    with pytest.raises(GuardError):
        h(0.0)


def test_interchangeable():
    assert interchangeable(var("t", (3,), np.float32), var("x", (3,), np.float32))
    assert not interchangeable(var("t", (3,)), var("x", (3,), np.float32))
    assert not interchangeable(var("t"), var("x", scalar=True))
    assert interchangeable(var("t", (), np.int64, scalar=True), Literal(0))
    assert not interchangeable(var("t", (), np.int64, scalar=True), Literal(0.0))
    assert not interchangeable(var("t", (), F64), Literal(0.0))
    assert interchangeable(var("t", (), F64), Literal(np.float64(0.0)))


# -- every pass: values, gradients, guards, purity ------------------------------------------
def mlp_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def w1_like(x, n=60):
    """The W1 benchmark's cycle: sin, cos, tanh, *0.9, +x, **1.5."""
    y = x
    for _ in range(n // 6):
        y = np.sin(y)
        y = np.cos(y)
        y = np.tanh(y)
        y = y * 0.9
        y = y + x
        y = y ** 1.5
    return y


def where_max(x):
    y = np.where(x > 0, x ** 2, -x) + np.maximum(x, 0.5 * x) * 1.0
    return np.sum(y * np.minimum(x, 0.25) + 0.0)


def shapes(x, w):
    y = x.reshape(3, 2).T.reshape(6).reshape(2, 3) * w
    z = np.transpose(np.transpose(y)) + np.sum(y.T, axis=1)
    return np.sum(np.tanh(z) ** 2)


def _mlp_args(rng):
    return ({"w1": rng.normal(size=(4, 5)), "b1": rng.normal(size=5),
             "w2": rng.normal(size=(5, 2)), "b2": rng.normal(size=2)},
            rng.normal(size=(7, 4)), rng.normal(size=(7, 2)))


GRADIENT_CASES = {
    "mlp": (mlp_loss, _mlp_args),
    "w1": (w1_like, lambda rng: (float(rng.uniform(0.2, 0.9)),)),
    "where-maximum": (where_max, lambda rng: (rng.normal(size=6),)),
    "reshape-transpose": (shapes, lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=3))),
}


@pytest.mark.parametrize("p", ALL, ids=[p.__name__ for p in ALL])
@pytest.mark.parametrize("case", list(GRADIENT_CASES))
def test_passes_preserve_gradients(case, p):
    f, make = GRADIENT_CASES[case]
    rng = np.random.default_rng(0)
    grad = wg.grad(f)
    g = wg.trace(grad, *make(rng))
    h = p(g)
    for _ in range(3):
        args = make(rng)
        assert_same(h(*args), g(*args), listing(g, h))
        expected = grad(*args)
        for x, y in zip(flatten(h(*args))[0], flatten(expected)[0]):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", list(GRADIENT_CASES))
def test_pipeline_shrinks_value_and_grad_graphs(case):
    f, make = GRADIENT_CASES[case]
    rng = np.random.default_rng(1)
    vg = wg.value_and_grad(f)
    g = wg.trace(vg, *make(rng))
    reports: list[PassReport] = []
    h = pipeline(g, reports)
    assert len(h) <= len(g)
    assert [r.name for r in reports] == ["fold_constants", "simplify", "cse", "dce"]
    assert reports[0].before == len(g) and reports[-1].after == len(h)
    args = make(rng)
    value, grads = h(*args)
    ev, eg = vg(*args)
    np.testing.assert_allclose(value, ev, rtol=1e-12)
    for x, y in zip(flatten(grads)[0], flatten(eg)[0]):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["where-maximum", "reshape-transpose", "w1"])
def test_optimised_graphs_differentiate(case):
    f, make = GRADIENT_CASES[case]
    rng = np.random.default_rng(2)
    h = pipeline(wg.trace(f, *make(rng)))
    args = make(rng)
    np.testing.assert_allclose(wg.grad(lambda *a: h(*a))(*args), wg.grad(f)(*args),
                               rtol=1e-10)


def test_hessian_graph_shrinks():
    f = lambda x: np.sum(np.maximum(x, 0.0) * x * 1.0)
    g = wg.trace(wg.hessian(f), np.array([0.5, -1.0, 2.0]))
    h = pipeline(g)
    assert len(h) < len(g) * 0.8, listing(g, h)
    x = np.array([1.5, -0.3, 0.7])
    np.testing.assert_allclose(h(x), wg.hessian(f)(x))


def guarded(x):
    if x > 0:
        return np.sin(x * 1.0) + 0.0
    return -x


def guarded_grad(x):
    if x > 0:  # (a branch inside wg.grad cannot be traced yet: branch outside it)
        return wg.value_and_grad(lambda v: np.sin(v * 1.0) ** 2 + 0.0)(x)
    return x, x


@pytest.mark.parametrize("p", ALL, ids=[p.__name__ for p in ALL])
def test_guards_survive(p):
    for g in (wg.trace(guarded, 0.5), wg.trace(guarded_grad, 0.5)):
        h = p(g)
        assert len(h.guards) == len(g.guards) == 1, listing(g, h)
        assert_same(h(1.2), g(1.2))
        with pytest.raises(GuardError):
            h(-1.0)


@pytest.mark.parametrize("p", ALL, ids=[p.__name__ for p in ALL])
def test_passes_return_new_graphs_and_leave_theirs_alone(p):
    x = var("x", (3,))
    ts = [var(f"t{i}", (3,)) for i in range(6)]
    g0 = hand_graph([x], [eq("exp", [np.zeros(3)], ts[0]), eq("multiply", [x, ts[0]], ts[1]),
                          eq("sin", [ts[1]], ts[2]), eq("sin", [ts[1]], ts[3]),
                          eq("add", [ts[2], ts[3]], ts[4]), eq("cos", [x], ts[5])],
                    [ts[4]], guards=(Guard(ts[3], "bool", True, None),))
    for g in (g0, wg.trace(wg.grad(where_max), np.ones(4)), wg.trace(guarded, 0.5)):
        before = snapshot(g)
        h = p(g)
        assert h is not g
        assert snapshot(g) == before


def test_reports():
    g = wg.trace(wg.grad(lambda x: np.sum(np.sin(x) * 1.0 + np.sin(x))), np.ones(3))
    reports: list[PassReport] = []
    h = pipeline(g, reports)
    assert [r.before for r in reports[1:]] == [r.after for r in reports[:-1]]
    assert all(str(r).startswith(f"{r.name}: {r.before} → {r.after} equations; ")
               for r in reports)
    assert len(h) < len(g) and sum(r.total for r in reports) >= len(g) - len(h)


# -- a sweep of the registry: fold and cse on every op's samples ------------------------------
def _cases():
    rng = np.random.default_rng(3)
    for op in REGISTRY:
        if op.samples is None:
            continue
        for k, (args, params) in enumerate(op.samples(rng)):
            yield pytest.param(op, args, params, id=f"{op.name}-{k}")


def _out_var(name, value):
    if type(value) is float:
        return Var(name, (), F64, scalar=True)
    a = np.asarray(value)
    return Var(name, a.shape, a.dtype, scalar=type(value) in (int, bool))


@pytest.mark.parametrize("op, args, params", list(_cases()))
def test_registry_ops_fold_and_merge(op, args, params):
    value = op.impl(*args, **params)
    if isinstance(value, (tuple, list)):
        pytest.skip("several outputs")
    # fold: every input a literal
    out = _out_var("t0", value)
    g = hand_graph([], [Equation(op, [Literal(a) for a in args], params, out)], [out])
    h = fold_constants(g)
    assert len(h) == 0, f"{report_of(fold_constants, g)}{listing(g, h)}"
    assert_same(h(), g())
    # cse: every input a variable, the equation twice
    ins = [_out_var(f"x{i}", a) for i, a in enumerate(args)]
    o1, o2 = _out_var("t0", value), _out_var("t1", value)
    g = hand_graph(ins, [Equation(op, ins, params, o1), Equation(op, ins, params, o2)],
                   [o1, o2])
    h = cse(g)
    assert len(h) == 1, listing(g, h)
    for p in PASSES:
        assert_same(p(g)(*args), g(*args))


# -- random programs ------------------------------------------------------------------------
UNARY = [np.sin, np.cos, np.tanh, np.negative, np.positive, np.square,
         lambda v: np.transpose(np.transpose(v)),
         lambda v: np.reshape(np.reshape(v, -1), np.shape(v)),
         lambda v: np.sum(v, axis=-1, keepdims=True) if np.ndim(v) else np.sum(v)]
BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.hypot,
          lambda a, b: a / (1.5 + np.cos(b)), lambda a, b: np.where(a > b, a, b)]
LITERALS = [0.0, 1.0, -1.0, 2.0, 0.5, -0.0, 1, 0, np.ones(3), np.zeros(3), np.float64(1.0)]
WITH_LITERAL = [np.add, np.subtract, np.multiply, np.true_divide,
                lambda a, c: c + a, lambda a, c: c * a, lambda a, c: np.tanh(a) ** 1,
                lambda a, c: np.where(np.ones(3, bool), a, c)]

step = st.one_of(
    st.tuples(st.just("unary"), st.integers(0, len(UNARY) - 1), st.integers(0, 99)),
    st.tuples(st.just("binary"), st.integers(0, len(BINARY) - 1), st.integers(0, 99),
              st.integers(0, 99)),
    st.tuples(st.just("literal"), st.integers(0, len(WITH_LITERAL) - 1), st.integers(0, 99),
              st.integers(0, len(LITERALS) - 1)),
    st.tuples(st.just("again"), st.integers(0, 99)),
)


def _step(spec, n):
    """One step of a random program: a function of the values so far (its operands fixed,
    so applying it again computes the same expression again)."""
    kind, k, i = spec[0], spec[1], spec[2] % n
    if kind == "unary":
        return lambda vals: UNARY[k](vals[i])
    if kind == "binary":
        j = spec[3] % n
        return lambda vals: BINARY[k](vals[i], vals[j])
    c = LITERALS[spec[3]]
    if WITH_LITERAL[k] is np.true_divide and not np.all(np.asarray(c) != 0):
        c = 2.0
    return lambda vals: WITH_LITERAL[k](vals[i], c)


def make_program(steps):
    def program(x, y, s):
        vals = [x, y, s]
        made = []
        for spec in steps:
            if spec[0] == "again":  # the same expression again (a common subexpression)
                if not made:
                    continue
                fn = made[spec[1] % len(made)]
            else:
                fn = _step(spec, len(vals))
                made.append(fn)
            vals.append(fn(vals))
        return np.sum(vals[-1]) + np.sum(vals[len(vals) // 2]), vals[-1]

    return program


def freeze(graph: Graph, values: dict[int, object]) -> Graph:
    """``graph`` with some inputs (by position) replaced by literals of ``values``."""
    mapping = {graph.inputs[i]: Literal(v) for i, v in values.items()}
    inputs = [v for i, v in enumerate(graph.inputs) if i not in values]
    return hand_graph(inputs, [substitute_ins(e, mapping) for e in graph.equations],
                      [mapping.get(v, v) for v in graph.outputs])


def _args(rng):
    return rng.normal(size=(2, 3)), rng.normal(size=3), float(rng.normal())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=14), st.integers(0, 2**32 - 1))
def test_random_programs_keep_their_values(steps, seed):
    program = make_program(steps)
    rng = np.random.default_rng(seed)
    g = wg.trace(program, *_args(rng))
    args = _args(rng)
    expected = program(*args)
    assert_same(g(*args), expected)
    for p in ALL:
        h = p(g)
        assert_same(h(*args), expected, f"{p.__name__}{listing(g, h)}")
    # y and s frozen to literals: everything computed from them alone folds
    frozen = freeze(g, {1: args[1], 2: args[2]})
    reports: list[PassReport] = []
    h = pipeline(frozen, reports)
    assert_same(h(args[0]), expected, f"{reports}{listing(frozen, h)}")
    # and the gradient of the sum of the outputs
    total = lambda x, y, s: program(x, y, s)[0]
    gg = wg.trace(wg.grad(total, argnums=(0, 1, 2)), *_args(rng))
    want = wg.grad(total, argnums=(0, 1, 2))(*args)
    for p in ALL:
        h = p(gg)
        assert_same(h(*args), want, f"{p.__name__}{listing(gg, h)}")


# -- decompositions: equations with several outputs ---------------------------------------
SYMMETRIC = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])


def _eigh_twice(a):
    w, v = np.linalg.eigh(a)
    w2, v2 = np.linalg.eigh(a)
    return np.sum(w * v2[0]) + np.sum(v * w2)


def test_cse_merges_two_identical_decompositions_output_by_output():
    g = wg.trace(_eigh_twice, SYMMETRIC)
    reports: list[PassReport] = []
    h = cse(g, reports=reports)
    assert [eq.primitive for eq in h if len(eq.outs) > 1] == ["eigh"]
    assert reports[0].changes["eigh"] == 1
    assert h(SYMMETRIC) == pytest.approx(_eigh_twice(SYMMETRIC))
    np.testing.assert_allclose(wg.grad(h)(SYMMETRIC), wg.grad(_eigh_twice)(SYMMETRIC))


def test_cse_merges_a_part_computed_again_into_the_decomposition():
    def f(a):
        w, v = np.linalg.eigh(a)
        return np.sum(v) + np.sum(np.linalg.eigvalsh(a))  # eigvalsh: eigh's values again

    h = cse(wg.trace(f, SYMMETRIC))
    assert [eq.primitive for eq in h if eq.op.part is not None] == ["eigh"]
    assert h(SYMMETRIC) == pytest.approx(f(SYMMETRIC))


def eigvalsh_then_eigh(a):
    return np.sum(np.linalg.eigvalsh(a)) + np.sum(np.linalg.eigh(a)[1])


def svdvals_then_svd(a):
    s = np.linalg.svd(a, compute_uv=False)
    u, s2, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s * 2.0) + np.sum(s2) + np.sum(u @ vh)


def qr_r_then_qr(a):
    r = np.linalg.qr(a, mode="r")
    q, r2 = np.linalg.qr(a)
    return np.sum(r ** 2) + np.sum(q @ r2)


@pytest.mark.parametrize("f,name,parts", [
    (eigvalsh_then_eigh, "eigh", 2), (svdvals_then_svd, "svd", 3), (qr_r_then_qr, "qr", 2)],
    ids=lambda v: getattr(v, "__name__", str(v)))
def test_cse_factorises_once_when_a_part_was_computed_before_the_decomposition(f, name, parts):
    g = wg.trace(f, SYMMETRIC[:, :2] if name != "eigh" else SYMMETRIC)
    a = SYMMETRIC[:, :2].copy() if name != "eigh" else SYMMETRIC
    reports: list[PassReport] = []
    h = cse(g, reports=reports)
    decompositions = [(eq.primitive, len(eq.outs)) for eq in h if eq.op.part is not None]
    assert decompositions == [(name, parts)]
    assert reports[0].after < reports[0].before
    assert h(a) == g(a)  # the same parts of the same factorisation: bit for bit
    want = wg.grad(f)(a)  # (cse sums the cotangents of merged inputs in another order)
    np.testing.assert_allclose(wg.grad(h)(a), want, rtol=1e-14, atol=1e-15)
    compiled = wg.compile(f)
    assert compiled(a) == g(a)
    np.testing.assert_allclose(wg.grad(compiled)(a), want, rtol=1e-14, atol=1e-15)
    code = [line.split("#")[0] for line in h.to_source().splitlines()]
    assert sum("np.linalg." in line for line in code) == 1


@pytest.mark.parametrize("used,left", [(0, "eigh_values"), (1, "eigh_vectors")])
def test_dce_narrows_a_decomposition_to_the_parts_that_are_read(used, left):
    f = lambda a: np.linalg.eigh(a)[used] * 2.0  # noqa: E731
    g = wg.trace(f, SYMMETRIC)
    reports: list[PassReport] = []
    h = dce(g, reports=reports)
    eq = next(eq for eq in h if eq.op.part is not None)
    assert len(eq.outs) == 1 and eq.primitive == left and eq.out is \
        next(e for e in g if e.op.part is not None).outs[used]
    assert len(h) == len(g)
    dropped = "eigh_vectors" if used == 0 else "eigh_values"
    assert reports[0].changes == {dropped: 1}
    assert str(reports[0]) == f"dce: {len(g)} → {len(g)} equations; removed 1 ({dropped}: 1)"
    np.testing.assert_array_equal(h(SYMMETRIC), f(SYMMETRIC))
    assert f"{eq.out.name} = op.{left}(" in h.to_source()


def test_dce_keeps_a_decomposition_whose_outputs_are_all_read_and_drops_an_unread_one():
    def f(a):
        u, s, vh = np.linalg.svd(a)
        np.linalg.qr(a)  # unread
        return np.sum(u) + np.sum(s) + np.sum(vh)

    g = wg.trace(f, SYMMETRIC)
    h = dce(g)
    assert [(eq.primitive, len(eq.outs)) for eq in h if eq.op.part is not None] == \
        [("svd", 3)]
    assert live_variables(g) >= set(next(eq for eq in g if eq.primitive == "svd").outs)
    u, s, vh = np.linalg.svd(SYMMETRIC)
    narrowed = dce(cse(wg.trace(lambda a: (np.linalg.svd(a)[0], np.linalg.svd(a)[2]),
                                SYMMETRIC)))
    (eq,) = [eq for eq in narrowed if eq.op.part is not None]
    assert [op.name for op in eq.ops] == ["svd_u", "svd_vt"] and eq.primitive == "svd"
    got = narrowed(SYMMETRIC)
    np.testing.assert_array_equal(got[0], u)
    np.testing.assert_array_equal(got[1], vh)


def test_fold_constants_folds_every_output_of_a_decomposition_of_constants():
    from wengert.ops.linalg.eigh import EIGH_VALUES, EIGH_VECTORS
    base = wg.trace(lambda x: (x, x), np.ones(3))
    x = base.inputs[0]
    w, v, t = Var("w", (3,), F64), Var("v", (3, 3), F64), Var("t", (3,), F64)
    eigh = Equation(EIGH_VALUES, [Literal(SYMMETRIC)], {"uplo": "L"}, [w, v],
                    parts=[EIGH_VALUES, EIGH_VECTORS])
    use = Equation(REGISTRY["matmul"], [v, x], None, t)
    g = base.replace(equations=[eigh, use], outputs=(w, t))
    assert str(g.equations[0]).startswith("w: f64[3], v: f64[3,3] = eigh(array(f64[3,3])")
    reports: list[PassReport] = []
    h = fold_constants(g, reports=reports)
    assert [eq.primitive for eq in h] == ["matmul"]
    assert reports[0].changes == {"eigh": 1}
    ws, vs = np.linalg.eigh(SYMMETRIC)
    got = h(np.arange(3.0))
    np.testing.assert_array_equal(got[0], ws)
    np.testing.assert_allclose(got[1], vs @ np.arange(3.0))


def test_simplify_leaves_a_decomposition_as_it_is():
    g = wg.trace(_eigh_twice, SYMMETRIC)
    h = simplify(g)
    assert [str(eq) for eq in h] == [str(eq) for eq in g]


def test_substitute_ins_keeps_every_output_of_a_decomposition():
    g = wg.trace(lambda a: np.linalg.svd(a), SYMMETRIC)
    (eq,) = g.equations
    y = Var("y", (3, 3), F64)
    new = substitute_ins(eq, {g.inputs[0]: y})
    assert new.outs == eq.outs and new.ops == eq.ops and str(new).endswith("= svd(y)")
