"""wg.trace, the Graph it returns, and the code generated from it."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.tree import flatten
from wengert.graph import GuardError, Literal, TraceError, Var
from wengert.graph.backends.codegen import SCALAR_FORMS, SCALAR_MATH, is_scalar_program
from wengert.graph.passes.pipeline import COMPILE_PASSES, DEFAULT_PASSES
from wengert.ops import REGISTRY


def mlp(x, params):
    h = np.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"]
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    p = np.exp(shifted) / np.sum(np.exp(shifted), axis=1, keepdims=True)
    return -np.mean(np.log(p[:, 0] + 1e-9))


def mlp_args(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(5, 3)), {"w1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
                                     "w2": rng.normal(size=(4, 2))}


def test_listing_names_shapes_and_dtypes():
    g = wg.trace(lambda x, w: np.sum(np.sin(x) * w), np.ones(3), 2.0, source_lines=False)
    assert str(g) == (
        "graph f(x: f64[3], w: f64[]):\n"
        "    t0: f64[3] = sin(x)\n"
        "    t1: f64[3] = multiply(t0, w)\n"
        "    t2: f64[] = sum(t1, axis=None, keepdims=False)\n"
        "    return t2")
    assert repr(g) == "<Graph f: 3 equations, 2 inputs, 1 output>"
    assert len(g) == 3 and [eq.op.name for eq in g] == ["sin", "multiply", "sum"]


def test_pytrees_in_and_out_and_argument_names():
    x, params = mlp_args()
    g = wg.trace(lambda x, params: {"loss": mlp(x, params), "h": np.tanh(x)}, x, params)
    assert [v.name for v in g.inputs] == ["x", "params_w1", "params_b1", "params_w2"]
    x2, p2 = mlp_args(1)
    out = g(x2, p2)
    assert set(out) == {"loss", "h"}
    np.testing.assert_allclose(out["loss"], mlp(x2, p2), rtol=1e-14)
    np.testing.assert_allclose(out["h"], np.tanh(x2))


def test_running_on_new_values_of_every_dtype_kept():
    for dtype in (np.float32, np.float64, np.int64, np.complex128):
        x = np.arange(1, 5).astype(dtype)
        g = wg.trace(lambda x: x * x + x, x)
        y = g(x + 1)
        assert y.dtype == (x * x + x).dtype
        np.testing.assert_array_equal(y, (x + 1) * (x + 1) + (x + 1))


def test_empty_and_zero_d_arrays():
    g = wg.trace(lambda x: np.sum(np.exp(x)), np.zeros((0, 3)))
    assert g(np.zeros((0, 3))) == 0.0
    g0 = wg.trace(lambda x: np.exp(x) * 2.0, np.float64(1.0))
    assert g0(np.float64(0.0)) == 2.0


def test_wrong_shape_dtype_or_structure_is_a_clear_error():
    g = wg.trace(lambda x, y: x + y, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"input y was traced as f64\[3\], got f64\[4\]"):
        g(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"input x was traced as f64\[3\], got f32\[3\]"):
        g(np.ones(3, np.float32), np.ones(3))
    with pytest.raises(TypeError, match=r"grouped as .* f\(x, y\)"):
        g(np.ones(3))


def test_static_arguments_are_not_inputs():
    def f(x, n):
        for _ in range(n):
            x = np.sin(x)
        return x

    g = wg.trace(f, 0.5, 3, static_argnums=1)
    assert len(g.inputs) == 1 and len(g) == 3
    assert g(0.2) == pytest.approx(np.sin(np.sin(np.sin(0.2))))


def test_closures_over_arrays_are_literals_and_over_grad_tensors_refused():
    w = np.array([1.0, 2.0])
    g = wg.trace(lambda x: x * w, np.ones(2))
    assert any(type(v) is Literal for v in g.equations[0].ins)
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TraceError, match="Pass it as an argument"):
        wg.trace(lambda x: x * t, np.ones(2))
    plain = wg.tensor([1.0, 2.0])  # no gradient: its value is a constant
    np.testing.assert_array_equal(wg.trace(lambda x: x * plain, np.ones(2))(np.ones(2) * 3),
                                  [3.0, 6.0])


def test_drawing_from_np_random_while_traced_is_refused():
    """A graph would hold the draw as a constant and give the same numbers at every run,
    where eagerly each call draws new ones: tracing and compiling refuse, with the fix."""
    def noisy(x):
        return x + np.random.normal(size=x.shape)

    def seeded(x):
        np.random.seed(0)  # (eagerly a call also resets the caller's global state)
        return x * np.random.uniform()

    for f in (noisy, seeded):
        np.random.seed(1)
        with pytest.raises(TraceError, match="np.random.*pass them in"):
            wg.trace(f, np.ones(3))
        np.random.seed(1)
        cf = wg.compile(f)
        with pytest.raises(TraceError, match="np.random"):
            cf(np.ones(3))
        assert len(cf.cache_info()) == 0
    noise = np.random.normal(size=3)  # drawn outside, passed in: fine
    np.testing.assert_array_equal(wg.compile(lambda x, n: x + n)(np.ones(3), noise), 1 + noise)


def test_closed_over_arrays_keep_their_memory_order_and_broadcast_axes():
    """A closure's array is copied as it is laid out (Fortran order, a broadcast view's
    repeated axes), so ``matmul`` runs the loops it runs eagerly."""
    rng = np.random.default_rng(0)
    fortran = np.asfortranarray(rng.normal(size=(50, 100)))
    row = np.broadcast_to(rng.normal(size=(1, 100)), (50, 100))
    uniform = np.broadcast_to(0.1, (100,))
    for c in (fortran, row, uniform):
        f = lambda w, c=c: c @ w  # noqa: E731
        g = wg.trace(f, np.ones((100, 3)))
        (lit,) = g.equations[0].ins[:1]
        assert lit.value.strides == c.strides and not lit.value.flags.writeable
        cf = wg.compile(f)
        for seed in range(5):
            w = np.random.default_rng(seed).normal(size=(100, 3))
            got, want = cf(w), f(w)
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_escaped_tracers_and_asarray_are_refused():
    kept = []
    wg.trace(lambda x: kept.append(x * 2.0) or x, 1.0)
    with pytest.raises(TraceError, match="escaped"):
        kept[0] + 1.0
    with pytest.raises(TraceError, match="freeze"):
        wg.trace(lambda x: np.asarray(x) * 2, np.ones(2))


def test_comparisons_argmax_and_where_are_recorded_not_frozen():
    def f(x):
        i = np.argmax(x)
        return np.where(x > 0, x, 0.0) * np.sum(x == x[i])

    g = wg.trace(f, np.array([1.0, -1.0, 3.0]))
    names = [eq.op.name for eq in g]
    assert "greater" in names and "argmax" in names
    for x in (np.array([-2.0, 5.0, 1.0]), np.array([3.0, 3.0, -1.0])):
        np.testing.assert_array_equal(g(x), f(x))


def test_python_branches_become_guards_and_a_failing_guard_raises():
    def f(x):
        if x > 0:
            return x * 2.0
        return -x

    g = wg.trace(f, 1.0)
    assert len(g.guards) == 1 and g.guards[0].expected is True
    assert "guard bool(t0) == True" in str(g)
    assert g(5.0) == 10.0
    with pytest.raises(GuardError, match=r"if x > 0.*gives False"):
        g(-1.0)


def test_float_conversion_is_guarded_and_a_traced_index_is_an_input():
    def f(x, i):
        return x[i] * float(x[0])

    g = wg.trace(f, np.array([2.0, 3.0]), np.int64(1))
    assert "take" in [eq.op.name for eq in g]
    assert g(np.array([2.0, 5.0]), np.int64(1)) == 10.0
    assert g(np.array([2.0, 5.0]), np.int64(0)) == 4.0  # a new index: taken, not frozen
    with pytest.raises(GuardError, match="float"):
        g(np.array([4.0, 5.0]), np.int64(1))  # float(x[0]) changed


def test_a_traced_boolean_mask_or_index_array_in_a_tuple_is_refused():
    with pytest.raises(TypeError, match="np.where"):
        wg.trace(lambda x: np.sum(x[x > 0]), np.ones(3))
    with pytest.raises(TypeError, match="np.take"):
        wg.trace(lambda x: x[0, np.argsort(x[0])], np.ones((2, 3)))


def test_to_source_executes_and_matches():
    x, params = mlp_args()
    x2, p2 = mlp_args(3)
    flat = [x2] + [p2[k] for k in ("w1", "b1", "w2")]
    for g in (wg.trace(mlp, x, params), wg.grad_graph(wg.trace(mlp, x, params), argnums=1)):
        namespace = g.namespace()
        exec(g.to_source(), namespace)
        got = namespace[g.name](*flat)
        got = [got] if len(g.outputs) == 1 else list(got)
        want = flatten(g(x2, p2))[0]
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-14)


def test_scalar_programs_compile_to_float_code_with_a_numpy_fallback():
    g = wg.trace(lambda x: wnp.log(x) * wnp.sin(x), 2.0)  # float paths: math
    assert is_scalar_program(g)
    source = g.to_source()
    code = [line.split("#")[0] for line in source.split("def f")[1].splitlines()]
    assert "from math import log, sin" in source and not any("np." in c for c in code)
    namespace = {}
    exec(source, namespace)  # no large constants: runs on its own
    assert namespace["f"](2.0) == pytest.approx(np.log(2.0) * np.sin(2.0))
    with pytest.warns(RuntimeWarning):
        assert np.isnan(g(-1.0))  # math.log raises: NumPy's NaN, as eager mode gives


def test_grad_graph_matches_eager_gradients_and_names_adjoints():
    x, params = mlp_args()
    g = wg.grad_graph(wg.trace(mlp, x, params), argnums=1)
    x2, p2 = mlp_args(2)
    value, grads = g(x2, p2)
    want = wg.grad(mlp, argnums=1)(x2, p2)
    assert value == pytest.approx(mlp(x2, p2))
    for k in want:
        np.testing.assert_allclose(grads[k], want[k], rtol=1e-12)
    names = [v.name for v in g.outputs]
    assert names[1:] == ["params_w1_bar", "params_b1_bar", "params_w2_bar"]


def test_jvp_graph_matches_forward_mode():
    f = lambda x: np.sum(np.tanh(x) * x)  # noqa: E731
    g = wg.jvp_graph(wg.trace(f, np.ones(3)))
    x, v = np.array([0.1, -0.4, 2.0]), np.array([1.0, 0.5, -2.0])
    value, tangent = g((x,), (v,))
    want = wg.jvp(f, (x,), (v,))
    assert value == pytest.approx(want[0]) and tangent == pytest.approx(want[1])
    assert [v.name for v in g.inputs] == ["x", "x_dot"]


def test_grad_of_a_graph_with_where_follows_the_new_values():
    f = lambda x: np.sum(np.where(x > 0, x, 0.1 * x) ** 2)  # noqa: E731
    g = wg.trace(wg.grad(f), np.array([1.0, -1.0]))
    for x in (np.array([-2.0, 3.0]), np.array([0.5, 0.7])):
        np.testing.assert_allclose(g(x), wg.grad(f)(x))


def test_running_a_graph_on_tensors_differentiates_it_to_second_order():
    g = wg.trace(lambda x: np.sin(x) * x, 0.3)
    assert wg.grad(g)(0.7) == pytest.approx(np.cos(0.7) * 0.7 + np.sin(0.7))
    assert wg.hessian(g)(0.7) == pytest.approx(wg.hessian(lambda x: np.sin(x) * x)(0.7))
    assert wg.jvp(g, (0.7,), (2.0,))[1] == pytest.approx(2 * (np.cos(0.7) * 0.7 + np.sin(0.7)))


def test_a_long_chain_traces_and_runs_without_recursion():
    def chain(x):
        for _ in range(50_000):
            x = x * 0.9999 + 0.0001
        return x

    g = wg.trace(chain, 1.0, source_lines=False)
    assert len(g) == 100_000
    assert g(1.0) == pytest.approx(chain(1.0))


def test_traces_in_threads_do_not_mix():
    results = {}

    def work(k):
        g = wg.trace(lambda x: np.sin(x) * k, 0.5)
        results[k] = (len(g), g(1.0))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {k: r[0] for k, r in results.items()} == dict.fromkeys(range(8), 2)
    for k, (_, y) in results.items():
        assert y == pytest.approx(np.sin(1.0) * k)


ELEMENTWISE = [np.sin, np.cos, np.tanh, np.exp, np.abs, lambda v: v * 0.7, lambda v: v + 1.0,
               lambda v: np.maximum(v, 0.1), lambda v: np.where(v > 0, v, -v)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(ELEMENTWISE) - 1), min_size=1, max_size=12),
       st.lists(st.floats(-2, 2), min_size=3, max_size=3),
       st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_random_programs_agree_eager_traced_and_gradient(ops, a, b):
    def f(x):
        for k in ops:
            x = ELEMENTWISE[k](x)
        return np.sum(x * x)

    x0, x1 = np.array(a), np.array(b)
    g = wg.trace(f, x0)
    np.testing.assert_allclose(g(x1), f(x1), rtol=1e-12)
    gg = wg.grad_graph(g)
    value, grad = gg(x1)
    np.testing.assert_allclose(value, f(x1), rtol=1e-12)
    np.testing.assert_allclose(grad, wg.grad(f)(x1), rtol=1e-10, atol=1e-14)
    assert all(type(v) in (Var, Literal) for v in gg.outputs)
    for passes in (DEFAULT_PASSES, COMPILE_PASSES):  # after the pipelines, and compiled
        value, grad = gg.optimize(passes)(x1)
        np.testing.assert_allclose(grad, wg.grad(f)(x1), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(wg.compile(wg.grad(f))(x1), wg.grad(f)(x1), rtol=1e-10,
                               atol=1e-14)


@pytest.mark.parametrize("name", sorted(op.name for op in [*SCALAR_FORMS, *SCALAR_MATH]))
def test_inline_float_forms_equal_the_ops_float_paths(name):
    op = REGISTRY[name]
    args = [(0.7,), (-2.5,), (3.0,), (1e-300,), (0.0,)] if op.nin == 1 else \
        [(0.7, 1.5), (2.0, 0.5), (3.0, -2.0), (0.0, 2.0)]
    for a in args:
        form = SCALAR_FORMS.get(op)
        inline = (lambda a=a, form=form: eval(form.format(*map(repr, a)))) if form \
            else (lambda a=a: SCALAR_MATH[op](*a))  # noqa: S307
        try:
            got = op.scalar_impl(*a)
        except ZeroDivisionError:
            with pytest.raises(ZeroDivisionError):
                inline()
            continue
        want = inline()
        assert got == want or (got != got and want != want)


# -- functions of shapes and dtypes --------------------------------------------------------
def test_shape_and_dtype_functions_are_answered_at_trace_time():
    """np.common_type, einsum_path and the *_indices_from read only dtypes and shapes, as
    np.result_type does, so a trace answers them instead of recording steps (recorded,
    common_type would be an object value, v.astype(np.common_type(v)) an object array,
    and the indices traced integers that indexing refuses)."""
    x = np.array([1.5, -2.25, 0.7])
    out = wg.compile(lambda v: v.astype(np.common_type(v)) * 2)(x)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, 2 * x)
    m = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(wg.compile(lambda a: a[np.triu_indices_from(a, k=1)])(m),
                                  m[np.triu_indices_from(m, k=1)])
    np.testing.assert_array_equal(wg.compile(lambda a: a[np.diag_indices_from(a)])(m),
                                  np.diag(m))
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 4))
    path = np.einsum_path("ij,jk->ik", a, b)[0]
    np.testing.assert_allclose(
        wg.compile(lambda a, b: np.einsum("ij,jk->ik", a, b,
                                          optimize=np.einsum_path("ij,jk->ik", a, b)[0]))(a, b),
        np.einsum("ij,jk->ik", a, b, optimize=path))


def test_a_graph_run_inside_another_trace_keeps_the_lines_of_its_equations():
    def compute(a, b, c):
        total = a + b
        return total * c

    inner = wg.trace(compute, 1.0, 2.0, 3.0)

    def outer_function(a, b, c):
        return inner(a, b, c) * 2.0

    outer = wg.trace(outer_function, 1.0, 2.0, 3.0)
    assert [eq.source.text for eq in outer.equations] == [
        "total = a + b", "return total * c", "return inner(a, b, c) * 2.0"]


# -- decompositions: one equation with several outputs, as a tape reads them ----------
SYMMETRIC = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])


@pytest.mark.parametrize("f,expected", [
    (lambda a: np.linalg.eigh(a), [("eigh", 2)]),
    (lambda a: np.linalg.eigh(a, UPLO="U"), [("eigh", 2)]),
    (lambda a: np.linalg.eigvalsh(a), [("eigh_values", 1)]),
    (lambda a: np.linalg.svd(a), [("svd", 3)]),
    (lambda a: np.linalg.svd(a, full_matrices=False), [("svd", 3)]),
    (lambda a: np.linalg.svd(a, compute_uv=False), [("svd_values", 1)]),
    (lambda a: np.linalg.svd(a, hermitian=True), [("eigh", 2)]),
    (lambda a: np.linalg.svd(a, hermitian=True, compute_uv=False), [("eigh_values", 1)]),
    (lambda a: np.linalg.qr(a), [("qr", 2)]),
    (lambda a: np.linalg.qr(a, mode="r"), [("qr_r", 1)]),
    (lambda a: np.linalg.qr(a[:, :2], mode="complete"), [("qr", 3)]),
    (lambda a: np.linalg.qr(a[:2, :]), [("qr", 2)]),
    (lambda a: np.linalg.eig(a), [("eig", 2)]),
    (lambda a: np.linalg.eigvals(a), [("eig_values", 1)]),
])
def test_a_traced_decomposition_is_one_equation_with_an_output_per_part(f, expected):
    g = wg.trace(f, SYMMETRIC)
    parts = [(eq.primitive, len(eq.outs)) for eq in g
             if eq.op.part is not None]
    assert parts == expected
    for eq in g:
        if len(eq.outs) > 1:
            assert [op.part for op in eq.ops] == sorted(op.part for op in eq.ops)
            assert eq.op is eq.ops[0]


def test_a_traced_graph_and_a_tape_list_a_decomposition_alike():
    def f(a):
        w, v = np.linalg.eigh(a)
        u, s, vh = np.linalg.svd(a)
        return np.sum(w * 2.0) + np.sum(v ** 2) + np.sum(s) + np.sum(u * vh)

    g = wg.trace(f, SYMMETRIC)
    tape = wg.tape_of(f(wg.tensor(SYMMETRIC, requires_grad=True)))
    assert str(tape).replace("x0", "a") == "\n".join(str(eq) for eq in g)
    assert "t2: f64[3], t3: f64[3,3] = eigh(t1, uplo='L')" in str(g)


def test_a_rules_part_of_a_decomposition_joins_the_equation_of_the_forward():
    g = wg.trace(wg.grad(lambda a: np.sum(np.linalg.eigvalsh(a))), SYMMETRIC)
    eighs = [eq for eq in g if eq.op.part is not None]
    assert [(eq.primitive, [op.name for op in eq.ops]) for eq in eighs] == \
        [("eigh", ["eigh_values", "eigh_vectors"])]


def test_parts_under_no_grad_and_outside_it_stay_apart():
    from wengert.core.bind import apply
    from wengert.ops.linalg.eigh import EIGH_VALUES, EIGH_VECTORS

    def f(a):
        w = apply(EIGH_VALUES, a, uplo="L")
        with wg.no_grad():
            v = apply(EIGH_VECTORS, a, uplo="L")
        return np.sum(w) + np.sum(v), apply(EIGH_VECTORS, a, uplo="L")

    g = wg.trace(f, SYMMETRIC)
    parts = [([op.name for op in eq.ops], eq.grad_off) for eq in g if eq.op.part is not None]
    assert parts == [(["eigh_values", "eigh_vectors"], False), (["eigh_vectors"], True)]
    total = lambda a: f(a)[0]  # noqa: E731
    np.testing.assert_allclose(wg.grad(wg.trace(total, SYMMETRIC))(SYMMETRIC),
                               wg.grad(total)(SYMMETRIC))


def test_a_graph_lists_each_output_of_a_decomposition_among_its_variables():
    g = wg.trace(lambda a: np.linalg.eigh(a)[1], SYMMETRIC)
    names = [v.name for v in g.variables()]
    assert names == ["a", "t0", "t1", "t2", "t3"]


def test_a_guard_on_an_output_of_a_decomposition_is_checked_after_it():
    def f(a):
        w, v = np.linalg.eigh(a)
        return v * (2.0 if w else 3.0)  # a 1×1 matrix: w has one element

    a = np.array([[0.0]])
    g = wg.trace(f, a)
    eigh = next(eq for eq in g if eq.primitive == "eigh")
    assert [g.var for g in g.guards] == [eigh.outs[0]]
    assert f"if {eigh.outs[0].name}:" in g.to_source()
    np.testing.assert_array_equal(g(a), f(a))
    with pytest.raises(GuardError):
        g(a + 1.0)
    with pytest.raises(GuardError):
        g(wg.tensor(a + 1.0, requires_grad=True))
