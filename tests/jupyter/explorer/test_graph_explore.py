"""wg.explore and wg.draw of a traced graph."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.jupyter.explorer.frames import step_view
from wengert.jupyter.explorer.graph_run import GraphRun

pytest.importorskip("anywidget")


def test_explore_a_graph_steps_through_a_run_with_the_graphs_names():
    g = wg.trace(lambda x, w: np.sum(np.tanh(x * w)), np.array([0.5, -1.0, 2.0]), 0.5)
    view = wg.explore(g)
    data = view.data
    assert data["nodes"]["name"][:5] == ["t0", "t1", "t2", "x", "w"]
    last = step_view(data, data["steps"]["total"] - 1)
    assert last["phase"] == "reverse"
    want = wg.grad(lambda x, w: np.sum(np.tanh(x * w)), argnums=1)(
        np.array([0.5, -1.0, 2.0]), 0.5)
    w_node = data["nodes"]["name"].index("w")
    assert float(data["nodes"]["adjoint"][w_node]) == pytest.approx(want, rel=1e-3)


def test_a_gradient_graph_is_explored_with_its_adjoint_names():
    g = wg.grad_graph(wg.trace(lambda x: np.sin(x) * x, 0.7))
    data = wg.explore(g).data
    assert "x_bar" in data["nodes"]["name"]


def test_integer_inputs_are_not_leaves_and_no_float_output_is_a_clear_error():
    g = wg.trace(lambda x, k: x * k, np.ones(2), np.int64(3))
    run = GraphRun(g)
    assert sorted(run.leaf_names.values()) == ["x"]
    with pytest.raises(ValueError, match="nothing to differentiate"):
        GraphRun(wg.trace(lambda k: k * 2, np.int64(3)))


def test_draw_a_graph_and_a_pass():
    g = wg.trace(lambda x: np.sin(x) * 1.0 + 0.0 * np.exp(x), 0.5)
    drawing = wg.draw(g)
    assert drawing.source.startswith("digraph program {")
    assert "sin" in drawing.source
    assert wg.draw_pass(g, g.optimize()).source.startswith("digraph program {")
    assert "(by function)" in wg.draw(g, group="function").source  # as a tape groups


def test_a_graph_with_a_decomposition_runs_to_a_tape_whose_equations_keep_its_names():
    from wengert.jupyter.explorer.graph_run import GraphRun

    def f(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w * 2.0) + np.sum(v ** 2)

    g = wg.trace(f, np.array([[2.0, 1.0], [1.0, 3.0]]))
    run = GraphRun(g)
    eigh = next(eq for eq in run.tape if eq.primitive == "eigh")
    assert len(run.tape) == len(g.equations)  # the decomposition: one equation in both
    assert str(run.tape).replace("x0", "a") == "\n".join(str(eq) for eq in g.equations)
    graph_eigh = g.equations[eigh.index]
    assert [run.names[v.name] for v in eigh.outs] == [v.name for v in graph_eigh.outs]
    for eq, geq in zip(run.tape, g.equations):  # keyed by the tape's variables
        for v, w in zip(eq.outs, geq.outs):
            assert run.names[v.name] == w.name
