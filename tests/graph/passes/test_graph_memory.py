"""Memory planning (liveness, buffer reuse, peak bytes) and checkpointing (remat)."""

import gc
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.tree import flatten
from wengert.graph import Equation, Graph, Var
from wengert.graph.passes.fuse import fuse
from wengert.graph.passes.memory import (
    MemoryPlan,
    accepts_out,
    buffer_of,
    deaths,
    memory_plan,
    memory_timeline,
    peak_bytes,
    plan_memory,
    run_planned,
    view_inputs,
)
from wengert.graph.passes.remat import BudgetError, remat, waiting_values
from wengert.ops import REGISTRY

RNG = np.random.default_rng(0)


def mlp_loss(params, X, onehot):
    W1, b1, W2, b2, W3, b3 = params
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    m = np.max(wg.stop_gradient(z), axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return (np.sum(lse) - np.sum(z * onehot)) / X.shape[0]


def mlp_args(seed, batch=32, sizes=(20, 16, 16, 5)):
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [rng.normal(size=(a, b)) / np.sqrt(a), 0.1 * rng.normal(size=b)]
    X = rng.normal(size=(batch, sizes[0]))
    onehot = np.eye(sizes[-1])[rng.integers(0, sizes[-1], batch)]
    return params, X, onehot


def chain_loss(x):
    for _ in range(10):
        x = np.tanh(x) * 1.5 + 0.1
    return np.sum(x * x)


def deep_mlp(ws, x):
    for w in ws:
        x = np.tanh(x @ w)
    return np.sum(x * x)


def traced_peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    return peak


def leaves_of(*args):
    return flatten(tuple(args))[0]


# -- liveness and plans -----------------------------------------------------------------
def test_liveness_lists_each_value_once_at_its_last_use():
    g = wg.trace(lambda x: (np.sin(x) * np.cos(x), np.exp(x)), np.ones(3))
    d = deaths(g)
    assert [[v.name for v in row] for row in d] == [[], [], ["t0", "t1"], []]
    plan = memory_plan(g)
    assert plan.frees == tuple(d)


def test_a_value_nothing_reads_dies_where_it_is_made():
    g = wg.trace(lambda x: (np.sum(np.sin(x)), x * 2.0)[1], np.ones(3))
    assert [[v.name for v in row] for row in deaths(g)] == [[], ["t0", "t1"], []]


def test_the_plan_reads_as_a_program():
    g = wg.trace(lambda x: np.exp(np.sin(x)) + x, np.ones(3), source_lines=False)
    plan = memory_plan(g)
    assert str(plan) == (
        "memory plan for f: 2 buffers reused, 2 values freed\n"
        "    t0 = sin(x)\n"
        "    t1 = exp(t0)    out=t0; del t0\n"
        "    t2 = add(t1, x)    out=t1; del t1")
    assert repr(plan) == "<MemoryPlan f: 3 equations, 2 reused, 2 freed>"
    assert plan.holds_for(g)


def test_the_plan_never_writes_into_inputs_or_live_buffers():
    def f(x):
        t = np.sin(x)
        v = t.T  # a view of t, used after cos(t)
        y = np.cos(t)
        return y + v.T, np.exp(x)

    x = RNG.normal(size=(4, 3))
    g = wg.trace(f, x)
    plan = memory_plan(g)
    cos_at = next(i for i, eq in enumerate(g) if eq.op.name == "cos")
    exp_at = next(i for i, eq in enumerate(g) if eq.op.name == "exp")
    assert plan.into[cos_at] is None  # t's view is still live
    assert plan.into[exp_at] is None  # x is the caller's
    keep = x.copy()
    got = run_planned(g, [x], plan)
    np.testing.assert_array_equal(x, keep)
    for a, b in zip(got, f(keep)):
        np.testing.assert_array_equal(a, b)


def test_a_view_ends_the_buffer_life_only_with_its_base():
    def f(x):
        t = np.exp(x)
        v = t[0]  # basic index: a view of t
        y = np.sin(t)  # t dies here, but v is used below: no reuse of t
        return y * v

    x = RNG.normal(size=(3, 4))
    g = wg.trace(f, x)
    plan = memory_plan(g)
    sin_at = next(i for i, eq in enumerate(g) if eq.op.name == "sin")
    assert plan.into[sin_at] is None
    roots = buffer_of(g, plan)
    names = [v.name for v in g.variables()]
    assert roots[names.index("t1")] == roots[names.index("t0")]
    np.testing.assert_array_equal(run_planned(g, [x], plan)[0], f(x))


def test_advanced_indexing_copies():
    g = wg.trace(lambda x: x[np.array([0, 2])] * 2.0, np.ones(4))
    assert view_inputs(g.equations[0]) == ()
    g = wg.trace(lambda x: x[1:] * 2.0, np.ones(4))
    assert view_inputs(g.equations[0]) == (0,)


def test_views_cost_no_bytes_and_reuse_counts_once():
    g = wg.trace(lambda x: np.sin(x.T) * 2.0, np.ones((100, 10)))
    # x 8000; transpose: a view; sin 8000; multiply into sin's buffer
    assert memory_timeline(g) == [8000, 16000, 24000]
    assert memory_timeline(g, memory_plan(g)) == [8000, 16000, 16000]
    assert peak_bytes(g) == 24000 and peak_bytes(g, memory_plan(g)) == 16000


def test_accepts_out_only_for_elementwise_ufuncs_and_kernels():
    g = wg.trace(lambda x, w: np.sum(np.tanh(x @ w) ** 2), np.ones((2, 3)), np.ones((3, 3)))
    assert [(eq.op.name, sorted(accepts_out(eq))) for eq in g] == [
        ("matmul", []), ("tanh", [0]), ("power", []), ("sum", [])]
    fused = fuse(g)
    kernel = next(eq for eq in fused if eq.op.name.startswith("fused"))
    assert accepts_out(kernel) == frozenset(kernel.op.out_aliases)


def test_a_stale_plan_is_refused():
    g = wg.trace(lambda x: np.sin(x) * 2.0, np.ones(3))
    plan = memory_plan(g)
    h = fuse(g)
    with pytest.raises(ValueError, match="plan again"):
        peak_bytes(h, plan)
    with pytest.raises(ValueError, match="one entry"):
        MemoryPlan(g.equations, [()], [None])


def test_scalar_programs_and_graphs_without_a_plan_field():
    g = wg.trace(lambda x: wnp.sin(x) * 2.0, 0.5)  # Python floats: float code
    assert plan_memory(g) is g
    h = wg.trace(lambda x: np.sin(x) * 2.0, np.ones(3))
    if "plan" in Graph.__slots__:
        planned = plan_memory(h)
        assert planned.plan.holds_for(planned)
        assert peak_bytes(planned) == peak_bytes(h, memory_plan(h))
    else:
        with pytest.raises(TypeError, match="memory_plan"):
            plan_memory(h)


def test_registry_ops_the_planner_calls_fresh_make_new_writable_arrays():
    """The planner writes into the outputs of ops it does not list as views: every
    such op's forward must return a new, writable array (on its samples)."""
    rng = np.random.default_rng(5)
    checked = 0
    for op in REGISTRY:
        for args, params in op.samples(rng):
            out = op.impl(*args, **params)
            if not isinstance(out, np.ndarray) or out.ndim == 0:
                continue
            ins = [Var(f"x{k}", np.shape(a), np.result_type(a)) for k, a in enumerate(args)]
            eq = Equation(op, ins, params, Var("y", out.shape, out.dtype))
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            if view_inputs(eq):
                continue
            checked += 1
            assert out.flags.writeable, op.name
            assert not any(np.shares_memory(out, a) for a in arrays), op.name
    assert checked > 80


# -- values and gradients under a plan -------------------------------------------------------
def test_the_mlp_gradient_keeps_its_values_under_a_plan():
    args = mlp_args(1)
    g = wg.trace(wg.value_and_grad(mlp_loss), *args)
    plan = memory_plan(g)
    assert plan.reused > 5
    new = mlp_args(2)
    want = flatten(wg.value_and_grad(mlp_loss)(*new))[0]
    got = run_planned(g, leaves_of(*new), plan)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert peak_bytes(g, plan) < 0.75 * peak_bytes(g)


def test_fused_and_planned_gradients():
    args = mlp_args(3, batch=300, sizes=(30, 64, 64, 5))
    g = fuse(wg.trace(wg.value_and_grad(mlp_loss), *args))
    plan = memory_plan(g)
    assert any(into is not None and eq.op.name.startswith("fused")
               for eq, into in zip(g.equations, plan.into))
    new = mlp_args(4, batch=300, sizes=(30, 64, 64, 5))
    want = flatten(wg.value_and_grad(mlp_loss)(*new))[0]
    for a, b in zip(run_planned(g, leaves_of(*new), plan), want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_the_computed_peak_is_what_tracemalloc_measures():
    x = RNG.normal(size=(200, 300))
    g = wg.trace(wg.grad(chain_loss), x)
    plan = memory_plan(g)
    inputs = x.nbytes
    run_planned(g, [x], plan)  # warm up
    measured = traced_peak(lambda: run_planned(g, [x], plan)) + inputs
    computed = peak_bytes(g, plan)
    assert computed <= measured <= 1.02 * computed + 16384
    unplanned = traced_peak(lambda: g(x)) + inputs
    assert peak_bytes(g) <= unplanned <= 1.02 * peak_bytes(g) + 16384
    assert computed < 0.5 * peak_bytes(g)


def test_guards_are_checked_by_the_planned_run():
    def f(x):
        y = np.sin(x)
        if np.sum(y) > 0:
            return y * 2.0
        return y

    g = wg.trace(f, np.ones(3))
    from wengert.graph import GuardFailed

    with pytest.raises(GuardFailed):
        run_planned(g, [-np.ones(3)], memory_plan(g))


VIEWS = ["T", "reshape", "slice", "broadcast", "expand"]
ELEMENTWISE = ["sin", "exp", "neg", "mul", "add", "square"]


@st.composite
def view_programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 14))):
        steps.append((draw(st.sampled_from(VIEWS + ELEMENTWISE)), draw(st.integers(0, 99)),
                      draw(st.integers(0, 99))))
    outs = draw(st.lists(st.integers(0, 99), min_size=1, max_size=3))
    return steps, outs


def run_view_program(steps, outs, x, y):
    vals = [x, y]
    for kind, a, b in steps:
        u = vals[a % len(vals)]
        v = vals[b % len(vals)]
        if kind == "T":
            r = u.T
        elif kind == "reshape":
            r = u.reshape(u.shape[::-1])
        elif kind == "slice":
            r = u[::-1] if u.ndim else u
        elif kind == "broadcast":
            r = np.broadcast_to(u, (2,) + u.shape)[1]
        elif kind == "expand":
            r = np.expand_dims(u, 0)[0]
        elif kind == "sin":
            r = np.sin(u)
        elif kind == "exp":
            r = np.exp(np.tanh(u))
        elif kind == "neg":
            r = -u
        elif kind == "square":
            r = np.square(u)
        elif kind == "mul":
            r = u * (v if v.shape == u.shape else 1.5)
        else:
            r = u + (v if v.shape == u.shape else 0.5)
        vals.append(r)
    return tuple(vals[k % len(vals)] for k in outs)


@settings(max_examples=80, deadline=None)
@given(view_programs(), st.booleans(), st.integers(0, 2**31 - 1))
def test_random_programs_with_views_keep_values_and_inputs(program, fused, seed):
    steps, outs = program
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    g = wg.trace(lambda x, y: run_view_program(steps, outs, x, y), x, y)
    if fused:
        g = fuse(g, chunk_elements=4)
    plan = memory_plan(g)
    x2, y2 = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    keep = x2.copy(), y2.copy()
    got = run_planned(g, [x2, y2], plan)
    np.testing.assert_array_equal(x2, keep[0])
    np.testing.assert_array_equal(y2, keep[1])
    want = run_view_program(steps, outs, *keep)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert peak_bytes(g, plan) <= peak_bytes(g)
    timeline = memory_timeline(g, plan)
    assert len(timeline) == len(g) and all(t >= x.nbytes + y.nbytes for t in timeline)


# -- checkpointing ------------------------------------------------------------------------
def test_remat_fits_the_budget_and_keeps_gradients():
    x = RNG.normal(size=2000)
    g = wg.trace(wg.grad(chain_loss), x)
    base = peak_bytes(g, memory_plan(g))
    assert [v.name for v in waiting_values(g)][:3] == ["t0", "t3", "t6"]
    x2 = RNG.normal(size=2000)
    want = wg.grad(chain_loss)(x2)
    peaks = []
    for fraction in (0.8, 0.6):
        budget = int(base * fraction)
        r = remat(g, budget)
        plan = memory_plan(r)
        peaks.append(peak_bytes(r, plan))
        assert peaks[-1] <= budget
        assert len(r) > len(g)
        assert any(eq.out.name.endswith("_r") for eq in r)
        np.testing.assert_allclose(run_planned(r, [x2], plan)[0], want, rtol=1e-13)
        np.testing.assert_allclose(r(x2), want, rtol=1e-13)
        measured = traced_peak(lambda r=r, plan=plan: run_planned(r, [x2], plan)) + x2.nbytes
        assert measured <= 1.02 * peaks[-1] + 16384
    assert peaks[1] < peaks[0] < base


def test_remat_returns_the_graph_when_it_fits():
    g = wg.trace(wg.grad(chain_loss), np.ones(100))
    r = remat(g, peak_bytes(g, memory_plan(g)))
    assert r.equations == g.equations


def test_remat_says_when_the_budget_cannot_be_met():
    g = wg.trace(wg.grad(chain_loss), np.ones(1000))
    with pytest.raises(BudgetError) as info:
        remat(g, 20_000)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.budget == 20_000 and e.smallest_peak > 20_000
    assert f"{e.smallest_peak} bytes" in str(e)
    r = remat(g, e.smallest_peak)  # the reported peak is reachable
    assert peak_bytes(r, memory_plan(r)) <= e.smallest_peak


def test_remat_of_a_deep_mlp_recomputes_segments():
    rng = np.random.default_rng(7)
    ws = [rng.normal(size=(16, 16)) / 4 for _ in range(12)]
    x = rng.normal(size=(256, 16))
    g = wg.trace(wg.grad(deep_mlp), ws, x)
    base = peak_bytes(g, memory_plan(g))
    r = remat(g, int(base * 0.7))
    plan = memory_plan(r)
    assert peak_bytes(r, plan) <= base * 0.7
    ws2 = [rng.normal(size=(16, 16)) / 4 for _ in range(12)]
    x2 = rng.normal(size=(256, 16))
    want = flatten(wg.grad(deep_mlp)(ws2, x2))[0]
    for a, b in zip(run_planned(r, leaves_of(ws2, x2), plan), want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    recomputed = [eq for eq in r if eq.out.name.endswith("_r") or "_r" in eq.out.name]
    assert 0 < len(recomputed) < len(g)


def test_remat_then_fuse_keeps_gradients():
    x = RNG.normal(size=(40, 50))
    g = wg.trace(wg.grad(chain_loss), x)
    r = fuse(remat(g, int(peak_bytes(g, memory_plan(g)) * 0.7)))
    x2 = RNG.normal(size=(40, 50))
    np.testing.assert_allclose(run_planned(r, [x2], memory_plan(r))[0],
                               wg.grad(chain_loss)(x2), rtol=1e-13)


# -- decompositions: an equation with several outputs -----------------------------------
def _eigh_graph(n=4):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(n, n))
    a = a + a.T

    def f(a):
        w, v = np.linalg.eigh(a)
        return np.exp(v) + w

    return wg.trace(f, a), a, f


def test_memory_counts_each_output_of_a_decomposition():
    g, a, _ = _eigh_graph()
    (k,) = [k for k, eq in enumerate(g.equations) if len(eq.outs) > 1]
    timeline = memory_timeline(g)
    assert timeline[k] - timeline[k - 1] == 4 * 8 + 4 * 4 * 8  # w and v
    assert len(buffer_of(g)) == len(g.variables()) == len(g.inputs) + len(g.equations) + 1
    dead = deaths(g)
    w, v = g.equations[k].outs
    assert any(v in d for d in dead) and any(w in d for d in dead)


def test_an_unread_output_of_a_decomposition_dies_where_it_is_made():
    g = wg.trace(lambda a: np.exp(np.linalg.eigh(a)[1]), np.eye(3))
    (k,) = [k for k, eq in enumerate(g.equations) if len(eq.outs) > 1]
    assert g.equations[k].outs[0] in deaths(g)[k]


def test_a_planned_run_of_a_decomposition_agrees_with_the_graph():
    g, a, f = _eigh_graph()
    plan = memory_plan(g)
    np.testing.assert_array_equal(run_planned(g, [a], plan)[0], f(a))
    planned_graph = plan_memory(g)
    assert "t4 = np.exp(t3, out=t3)" in planned_graph.to_source()  # a dying output reused
    np.testing.assert_array_equal(planned_graph(a), f(a))


def test_remat_recomputes_the_part_of_a_decomposition_it_drops():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(40, 40))
    a = a + a.T

    def f(a):
        w, v = np.linalg.eigh(a)
        h = np.tanh(np.tanh(np.tanh(v * 2.0)))
        return np.sum(h * h) + np.sum(w)

    g = wg.trace(wg.grad(f), a).optimize()
    r = remat(g, int(peak_bytes(g, memory_plan(g)) * 0.9))
    copies = [eq for eq in r if eq.out.name.endswith("_r") and eq.op.part is not None]
    assert copies and all(len(eq.outs) == 1 for eq in copies)
    np.testing.assert_allclose(r(a), wg.grad(f)(a))
