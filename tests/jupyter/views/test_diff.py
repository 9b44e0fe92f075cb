"""What a pass changed (wengert.jupyter.views.diff), as text and HTML: the diff of two
graphs, its counts, what a removed value is read as, guards dropped or added; the
hand-made passes of graph_examples keep values and gradients.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import graph_examples as examples
import pytest
from graph_examples import B, W, X, branchy, drop_dead, drop_times_one, grad_graph_of, model
from hypothesis import given, settings
from hypothesis import strategies as st
from test_html import assert_clean, assert_well_formed

import numpy as np
import wengert as wg
from wengert.jupyter.views.diff import diff_graphs
from wengert.jupyter.views.html import PassView, passes_html
from wengert.jupyter.views.text import passes_text

matplotlib = pytest.importorskip("matplotlib")  # the jupyter extra: not in the NumPy-floor stage
matplotlib.use("Agg")

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
SHOTS = Path("/tmp/shots/hE")


@pytest.mark.parametrize("by_hand", [drop_dead, drop_times_one])
def test_the_hand_made_passes_keep_values_and_gradients(by_hand):
    g = grad_graph_of(model, X, W)
    after = by_hand(g)
    assert len(after) < len(g)
    eager = wg.grad(model, argnums=(0, 1))(X, W)
    for got in (after(X, W), g(X, W)):
        for a, b in zip(got, eager):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    forward = wg.trace(model, X, W)
    np.testing.assert_allclose(by_hand(forward)(X, W), model(X, W), rtol=1e-12)
    # and the gradient of the rewritten forward graph, through the graph itself
    np.testing.assert_allclose(wg.grad(by_hand(forward), argnums=1)(X, W),
                               wg.grad(model, argnums=1)(X, W), rtol=1e-12)


def test_importing_the_views_loads_no_plotting_or_drawing_package():
    code = ("import sys, wengert, wengert.jupyter.views.html, wengert.jupyter.views.diff, "
            "wengert.jupyter.views.dot, wengert.jupyter.views.plots; "
            "print(sorted(m for m in ('matplotlib', 'graphviz', 'IPython') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


# -- passes ---------------------------------------------------------------------------------------


def test_passes_html_strikes_what_dce_removed():
    before = wg.trace(model, X, W)
    after = drop_dead(before)
    page = passes_html(before, after, "dce: 8 → 7 equations; removed 1 (exp: 1)")
    assert_clean(page)
    assert_well_formed(page)
    assert page.count('class="wg-del"') == 1 and "exp" in page
    assert "−1 removed" in page and "8 → 7 equations" in page
    assert "dce: 8 → 7 equations; removed 1 (exp: 1)" in page
    assert "generated Python after" in page


def test_passes_html_shows_a_rewritten_equation_with_its_old_inputs_struck():
    before = wg.trace(model, X, W)
    after = drop_times_one(before)
    diff = diff_graphs(before, after)
    assert diff.counts == {"removed": 1, "added": 0, "changed": 1, "same": 6}
    (removed,) = [row.before for row in diff.rows if row.kind == "removed"]
    (changed,) = [row for row in diff.rows if row.kind == "changed"]
    assert removed.op.name == "multiply" and diff.replaced[removed.out] is removed.ins[0]
    page = passes_html(before, after)
    assert f"<del>{removed.out.name}</del> <ins>{removed.ins[0].name}</ins>" in page
    assert f"→ {removed.ins[0].name}" in page  # where the removed value went
    text = passes_text(before, after)
    assert f"  -  {changed.before}" in text and f"  +  {changed.after}" in text
    assert f"# → {removed.ins[0].name}" in text


def test_passes_text_of_a_pipeline_lists_each_report_and_the_diff():
    before = grad_graph_of(model, X, W)
    after = drop_dead(drop_times_one(before))
    reports = ["simplify: rewrote 3 (x*1: 3)", "dce: removed 1 (exp: 1)"]
    text = passes_text(before, after, reports, context=None, max_rows=0)
    lines = text.splitlines()
    assert lines[:2] == reports
    diff = diff_graphs(before, after)
    c = diff.counts
    assert lines[2] == diff.summary()
    assert sum(1 for line in lines if line.startswith("  -  ")) == c["removed"] + c["changed"]
    assert sum(1 for line in lines if line.startswith("  +  ")) == c["added"] + c["changed"]
    assert len(before) == c["removed"] + c["changed"] + c["same"]
    assert len(after) == c["added"] + c["changed"] + c["same"]


def test_passes_text_reads_every_output_of_a_decomposition_as_defined():
    from wengert.graph.passes import cse

    def f(a):
        w, v = np.linalg.eigh(a)
        w2, v2 = np.linalg.eigh(a)  # merged into the first by cse
        return np.sum(v2 * 2.0) + np.sum(w)

    g = wg.trace(f, np.array([[2.0, 1.0], [1.0, 3.0]]))
    text = passes_text(g, cse(g))
    assert "  +  t8: f64[2,2] = multiply(t3, 2.0)" in text and "?t3" not in text


def test_unchanged_runs_collapse_around_the_changes():
    def f(x):
        for _ in range(50):
            x = np.sin(x)
        y = np.exp(x)  # noqa: F841 - dead
        for _ in range(50):
            x = np.cos(x)
        return x

    before = wg.trace(f, 0.5, source_lines=False)
    text = passes_text(before, drop_dead(before), context=2)
    assert "… 48 unchanged equations …" in text and "… 48 unchanged equations …" in text
    assert sum(1 for line in text.splitlines() if line.startswith("     t")) == 4
    page = passes_html(before, drop_dead(before), layout="side")
    assert_well_formed(page)
    assert page.count("unchanged equations") == 2


def test_no_change_says_unchanged():
    g = wg.trace(examples.loss, X, W, B)
    assert diff_graphs(g, g).summary() == "5 → 5 equations: unchanged"
    assert "unchanged" in passes_html(g, g)
    assert repr(PassView(g, g)) == "<pass view: 5 → 5 equations: unchanged>"


def test_a_pass_view_shows_itself_in_a_notebook_and_as_text():
    before = wg.trace(model, X, W)
    after = drop_dead(before)
    view = PassView(before, after, "dce", layout="side", context=1)
    assert view._repr_html_() == passes_html(before, after, "dce", layout="side", context=1)
    assert str(view) == passes_text(before, after, "dce", context=1)
    assert repr(view) == "<pass view: 8 → 7 equations: 1 removed>"


def test_guards_that_a_pass_drops_or_adds_are_shown():
    g = wg.trace(branchy, np.ones(3))
    without = g.replace(guards=())
    text = passes_text(g, without)
    assert "guards 1 removed, 0 new" in text.splitlines()[0]
    assert "  -  guard bool(t1) == True" in text
    assert "  +  guard bool(t1) == True" in passes_text(without, g)


def test_a_long_diff_is_shortened_and_stays_small():
    def f(x):
        for _ in range(5_000):
            unused = np.exp(x)  # noqa: F841 - dead
            x = np.sin(x)
        return x

    before = wg.trace(f, 0.5, source_lines=False)
    page = passes_html(before, drop_dead(before), max_rows=40)
    assert_well_formed(page)
    assert len(page) < 60_000 and "−5,000 removed" in page
    assert re.search(r"… 9,9\d\d more equations \(4,9\d\d removed\) …", page)


@st.composite
def programs(draw):
    """A random straight-line program: each step applies a unary or binary op to earlier
    values; some results are never used (dead)."""
    steps = draw(st.lists(st.tuples(st.sampled_from(["sin", "exp", "neg", "add", "mul"]),
                                    st.integers(0, 10_000), st.integers(0, 10_000)),
                          min_size=1, max_size=25))
    out = draw(st.integers(0, 10_000))
    return steps, out


def run_program(spec, x):
    steps, out = spec
    values = [x]
    for op, i, j in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        values.append({"sin": np.sin, "exp": lambda v: np.exp(v * 0.1), "neg": np.negative}
                      [op](a) if op in ("sin", "exp", "neg") else a + b if op == "add"
                      else a * b)
    return np.sum(values[1 + out % (len(values) - 1)])


@settings(max_examples=60, deadline=None)
@given(programs())
def test_the_diff_of_dead_code_elimination_is_exactly_the_dead_equations(spec):
    before = wg.trace(lambda x: run_program(spec, x), np.linspace(0.1, 0.9, 3))
    after = drop_dead(before)
    np.testing.assert_allclose(after(np.ones(3)), before(np.ones(3)), rtol=1e-12)
    diff = diff_graphs(before, after)
    dead = [eq for eq in before.equations if eq not in set(after.equations)]
    assert [row.before for row in diff.rows if row.kind == "removed"] == dead
    assert diff.count("same") == len(after) and diff.count("added") == 0
    assert diff.count("changed") == 0 and not diff.outputs_changed
    # the union keeps both orders
    assert [row.before for row in diff.rows] == list(before.equations)
    assert [row.after for row in diff.rows if row.after] == list(after.equations)
    assert diff_graphs(before, before).counts["same"] == len(before)
    text = passes_text(before, after, context=None, max_rows=0)
    assert sum(1 for line in text.splitlines() if line.startswith("  -  t")) == len(dead)


def test_the_passes_of_the_graph_package_diff_cleanly():
    cse = pytest.importorskip("wengert.graph.passes.cse").cse
    dce = pytest.importorskip("wengert.graph.passes.dce").dce
    before = grad_graph_of(model, X, W)
    reports: list = []
    after = dce(cse(before, reports=reports), reports=reports)
    np.testing.assert_allclose(after(X, W)[1], wg.grad(model, argnums=1)(X, W), rtol=1e-12)
    page = passes_html(before, after, reports)
    assert_clean(page)
    assert_well_formed(page)
    diff = diff_graphs(before, after)
    assert diff.count("removed") >= 1
    assert len(before) - diff.count("removed") + diff.count("added") == len(after)
    for report in reports:
        assert str(report).replace("→", "→") in page


def _decomposition_graph():
    """``t0, t1 = eigh(x); t2 = sum(t1); t3 = sum(t0); t4 = t2 + t3``, built by hand."""
    from wengert.graph.ir import Equation, Var
    from wengert.ops import REGISTRY

    g = wg.trace(lambda a: np.sum(a), np.eye(2), source_lines=False)
    x = g.inputs[0]
    t0, t1 = Var("t0", (2,), np.float64), Var("t1", (2, 2), np.float64)
    t2, t3, t4 = (Var(f"t{k}", (), np.float64) for k in (2, 3, 4))
    eqs = [Equation(REGISTRY["eigh_values"], [x], {"uplo": "L"}, [t0, t1],
                    parts=(REGISTRY["eigh_values"], REGISTRY["eigh_vectors"])),
           Equation(REGISTRY["sum"], [t1], {"axis": None, "keepdims": False}, t2),
           Equation(REGISTRY["sum"], [t0], {"axis": None, "keepdims": False}, t3),
           Equation(REGISTRY["add"], [t2, t3], {}, t4)]
    return g.replace(equations=eqs, outputs=[t4])


def test_a_decomposition_rebuilt_with_equal_outputs_is_unchanged_and_so_are_its_readers():
    from wengert.graph.ir import Var

    before = _decomposition_graph()
    eigh, *rest = before.equations
    outs = [Var(v.name, v.shape, v.dtype) for v in eigh.outs]  # new objects, same names
    renamed = {old: new for old, new in zip(eigh.outs, outs)}
    after = before.replace(equations=[eigh.replace(out=outs)] + [
        eq.replace(ins=[renamed.get(v, v) for v in eq.ins]) for eq in rest])
    d = diff_graphs(before, after)
    assert [row.kind for row in d.rows] == ["same"] * 4, d.rows
    assert d.summary() == "4 → 4 equations: unchanged"


def test_a_decomposition_whose_second_output_changed_is_not_the_same_equation():
    from wengert.graph.ir import Var

    before = _decomposition_graph()
    eigh, s1, s0, add = before.equations
    vectors = Var("t5", (2, 2), np.float64)  # another second output, read by the sum
    after = before.replace(equations=[eigh.replace(out=[eigh.outs[0], vectors]),
                                      s1.replace(ins=[vectors]), s0, add])
    d = diff_graphs(before, after)
    kinds = [(row.kind, ", ".join(v.name for v in row.equation.outs)) for row in d.rows]
    assert ("same", "t0, t1") not in kinds and ("added", "t0, t5") in kinds, kinds
    assert ("removed", "t0, t1") in kinds
    text = passes_text(before, after)
    assert "+  t0: f64[2], t5: f64[2,2] = eigh(a" in text and "sum(t5" in text  # not ?t5
    page = passes_html(before, after)
    assert '<span class="wg-name">t0</span>, <span class="wg-name">t5</span>' in page
    assert "f64[2], f64[2,2]" in page
    from wengert.jupyter.views.dot import pass_dot
    source = pass_dot(before, after)
    assert source.count("=&#160;eigh(a") == 2  # the removed box and the new one, each its own
