"""``with wg.no_grad():`` inside a traced function: the graph remembers it.

Eagerly, values computed under ``no_grad`` carry no gradient in reverse mode (forward
mode is not affected). A graph marks the equations traced there (``Equation.grad_off``)
and runs them under ``no_grad`` again when it is differentiated, so every way of getting
a gradient from a graph agrees with eager mode, and no pass removes the cut.
"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.graph import to_jax
from wengert.graph.passes import cse, fuse, simplify

X = np.array([0.5, -1.0, 2.0])


def scaled_square(x):
    with wg.no_grad():
        c = x * 2.0
    return np.sum(c * x)


def test_equations_inside_no_grad_are_marked_and_listed():
    g = wg.trace(scaled_square, X)
    assert [eq.grad_off for eq in g] == [True, False, False]
    assert "# no_grad" in str(g)
    assert "    with no_grad():\n        t0 = " in g.to_source()


def test_the_generated_source_keeps_the_block():
    """What the user reads is what runs: the source, run on tensors, cuts as eagerly."""
    g = wg.trace(scaled_square, X)
    namespace = g.namespace()
    exec(compile(g.to_source(), "<graph>", "exec"), namespace)
    fn = namespace[g.name]
    np.testing.assert_allclose(fn(X), scaled_square(X))
    np.testing.assert_allclose(wg.grad(fn)(X), wg.grad(scaled_square)(X))


@pytest.mark.parametrize("how", ["grad of compile", "compile of grad", "grad_graph",
                                 "grad_graph after optimize", "vjp of compile"])
def test_reverse_mode_through_a_graph_respects_no_grad(how):
    want = wg.grad(scaled_square)(X)
    np.testing.assert_allclose(want, 2.0 * X)
    if how == "grad of compile":
        got = wg.grad(wg.compile(scaled_square))(X)
    elif how == "compile of grad":
        got = wg.compile(wg.grad(scaled_square))(X)
    elif how == "grad_graph":
        got = wg.grad_graph(wg.trace(scaled_square, X))(X)[1]
    elif how == "grad_graph after optimize":
        got = wg.grad_graph(wg.trace(scaled_square, X).optimize())(X)[1]
    else:
        _, pullback = wg.vjp(wg.compile(scaled_square), X)
        (got,) = pullback(1.0)
    np.testing.assert_allclose(got, want)


def test_forward_mode_is_not_affected_as_eagerly():
    tangent = np.array([1.0, 0.5, -2.0])
    want = wg.jvp(scaled_square, (X,), (tangent,))
    got = wg.jvp(wg.compile(scaled_square), (X,), (tangent,))
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(wg.jvp_graph(wg.trace(scaled_square, X))((X,), (tangent,)),
                               want)


def test_hessian_of_a_compiled_function_agrees_with_eager():
    np.testing.assert_allclose(wg.hessian(wg.compile(scaled_square))(X),
                               wg.hessian(scaled_square)(X))


def test_a_no_grad_around_the_trace_is_not_part_of_the_graph():
    """The first call of a compiled function may happen inside ``no_grad`` (an
    evaluation loop); its cached graph must still differentiate later."""
    cf = wg.compile(lambda x: np.sum(x * x))
    with wg.no_grad():
        cf(X)
        g = wg.trace(lambda x: np.sum(x * x), X)
    assert not any(eq.grad_off for eq in g)
    np.testing.assert_allclose(wg.grad(cf)(X), 2.0 * X)


def test_enable_grad_inside_no_grad_is_recorded_per_equation():
    def f(x):
        with wg.no_grad():
            a = x * 3.0
            with wg.enable_grad():
                b = x * x
        return np.sum(a * x + b)

    assert [eq.grad_off for eq in wg.trace(f, X)][:2] == [True, False]
    np.testing.assert_allclose(wg.grad(wg.compile(f))(X), wg.grad(f)(X))


def test_cse_does_not_merge_across_the_cut():
    def f(x):
        with wg.no_grad():
            c = np.sin(x)
        d = np.sin(x)
        return np.sum(c * x + d)

    g = wg.trace(f, X)
    assert len(cse(g)) == len(g)
    np.testing.assert_allclose(wg.grad_graph(cse(g))(X)[1], wg.grad(f)(X))


def test_simplify_keeps_an_identity_under_no_grad():
    def f(x):
        with wg.no_grad():
            c = x * 1.0
        return np.sum(c * x)

    g = simplify(wg.trace(f, X))
    assert g.equations[0].grad_off
    np.testing.assert_allclose(wg.grad_graph(g)(X)[1], X)
    np.testing.assert_allclose(wg.grad(f)(X), X)


def test_fuse_leaves_no_grad_equations_out_of_kernels():
    def f(x):
        with wg.no_grad():
            c = np.exp(x) * 2.0 + 1.0
        return np.sum(np.sin(c * x) + x)

    x = np.linspace(-1.0, 1.0, 10_000)
    traced = wg.trace(f, x)
    g = fuse(traced)
    assert [eq.op.name for eq in g if eq.grad_off] == ["exp", "multiply", "add"]
    assert any(eq.op.name.startswith("fused_") for eq in g)
    np.testing.assert_array_equal(g(x), traced(x))


def test_session_gradients_respect_no_grad():
    x = wg.placeholder((3,), name="x")
    with wg.no_grad():
        c = x * 2.0
    y = np.sum(c * x)
    (gx,) = wg.gradients(y, [x])
    np.testing.assert_allclose(wg.Session().run(gx, {x: X}), 2.0 * X)


def test_jax_export_stops_the_gradient_there():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    f = to_jax(wg.trace(scaled_square, X))
    np.testing.assert_allclose(jax.grad(f)(X), 2.0 * X)
