"""The Jupyter views of static graphs: a graph's HTML listing, a pass's before and after
(HTML, text and drawing), a compiled function's traces, the DOT drawing of a graph, and
the memory plot. Pure functions, tested without a kernel; the drawings are parsed by
Graphviz's ``dot`` when it is installed, and the pages are opened in Chromium (marked
``browser``; screenshots go to ``/tmp/shots/hE/``).

The "after" graphs are made here by hand (:func:`drop_dead`, :func:`drop_times_one`), so
these tests do not depend on the passes; each helper is checked to keep values and
gradients, as a pass must.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_render import assert_clean, assert_well_formed

import numpy as np
import wengert as wg
from wengert.core.collector import collector_paused
from wengert.core.display import html_of
from wengert.core.formatting import params_text
from wengert.graph.ir import Literal, Var
from wengert.graph.program import Graph
from wengert.jupyter.views.diff import diff_graphs, returns_text
from wengert.jupyter.views.dot import GRAPH_LEGEND, dot_source, equation_formula, pass_dot
from wengert.jupyter.views.drawing import draw, draw_pass
from wengert.jupyter.views.grouping import group_equations
from wengert.jupyter.views.html import PassView, compiled_html, graph_html, passes_html
from wengert.jupyter.views.plots import bytes_text, memory_plot
from wengert.jupyter.views.text import passes_text

matplotlib = pytest.importorskip("matplotlib")  # the jupyter extra: not in the NumPy-floor stage
matplotlib.use("Agg")

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
SHOTS = Path("/tmp/shots/hE")


# -- programs and hand-made passes -------------------------------------------------------------


def loss(x, w, b):
    h = np.tanh(x @ w + b)
    return np.sum(h ** 2)


def model(x, w):
    unused = np.exp(x)  # noqa: F841 - dead code, for the pass views
    h = np.sin(x @ w) * 1.0
    return np.sum(h * np.cos(x @ w))


def branchy(x):
    if np.sum(x) > 0:
        return np.sum(np.sin(x) * 2.0)
    return np.sum(np.cos(x) - 1.0)


X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
W = np.linspace(0.1, 0.6, 6).reshape(3, 2)
B = np.array([0.1, -0.2])


def drop_dead(graph: Graph) -> Graph:
    """Dead code elimination by hand: one backward sweep from the outputs and guards."""
    live = {v for v in graph.outputs if type(v) is Var} | {g.var for g in graph.guards}
    for eq in reversed(graph.equations):
        if eq.out in live:
            live.update(v for v in eq.ins if type(v) is Var)
    return graph.replace(equations=[eq for eq in graph.equations if eq.out in live])


def drop_times_one(graph: Graph) -> Graph:
    """``t = u * 1.0`` with ``u`` of ``t``'s shape and dtype: later readers read ``u``."""
    mapping: dict[Var, Var] = {}
    kept = []
    for eq in graph.equations:
        if any(type(v) is Var and v in mapping for v in eq.ins):
            eq = eq.replace(ins=[mapping.get(v, v) if type(v) is Var else v for v in eq.ins])
        a = eq.ins[0] if eq.ins else None
        if (eq.op.name == "multiply" and type(eq.ins[1]) is Literal and eq.ins[1].value == 1.0
                and type(a) is Var and a.shape == eq.out.shape and a.dtype == eq.out.dtype
                and a.scalar == eq.out.scalar):
            mapping[eq.out] = a
            continue
        kept.append(eq)
    outputs = [mapping.get(v, v) if type(v) is Var else v for v in graph.outputs]
    return graph.replace(equations=kept, outputs=outputs)


def grad_graph_of(f, *args) -> Graph:
    return wg.trace(wg.grad(f, argnums=tuple(range(len(args)))), *args)


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


# -- the graph card -----------------------------------------------------------------------------


def test_graph_html_lists_names_avals_ops_inputs_params_and_lines():
    g = wg.trace(loss, X, W, B)
    page = graph_html(g)
    assert_clean(page)
    assert_well_formed(page)
    for text in ("loss(x: f64[4,3], w: f64[3,2], b: f64[2])", "5 equations", "3 inputs",
                 "t0", "t4", "f64[4,2]", "matmul", "tanh", "power", "sum", "axis=None",
                 "return</span> t4", "h = np.tanh(x @ w + b)"):
        assert text in page, text
    assert '<span class="wg-in-rg">x</span>' in page  # inputs of the graph are marked
    assert '<span class="wg-in-const">2</span>' in page  # literals too
    assert "generated Python" in page and "np.tanh(t1)" in page  # the code it runs
    assert page == graph_html(wg.trace(loss, X, W, B))  # deterministic


def test_graph_html_escapes_the_users_code():
    def f(x):
        return np.where(x < 0.5, x, 0.0) + (x > 1.0)

    page = graph_html(wg.trace(f, np.ones(3)))
    assert_well_formed(page)
    assert "x &lt; 0.5" in page and "x < 0.5" not in page
    assert "&lt;script" not in page and "<script" not in page


def test_graph_html_of_a_gradient_graph_shows_the_adjoints_and_the_tuple_returned():
    g = wg.grad_graph(wg.trace(loss, X, W, B), argnums=(1, 2))
    page = graph_html(g)
    assert_clean(page)
    assert "w_bar" in page and "b_bar" in page and "sum_to" in page
    assert returns_text(g) == "(t4, (w_bar, b_bar))"
    assert "(t4, (w_bar, b_bar))" in page


def test_a_long_graph_is_shortened_to_its_first_and_last_rows():
    def chain(x):
        for _ in range(10_000):
            x = x * 1.0001
        return x

    g = wg.trace(chain, 1.0, source_lines=False)
    page = graph_html(g, max_rows=40)
    assert_well_formed(page)
    assert "… 9,960 more equations …" in page
    assert ">t0<" in page and ">t19<" in page and ">t9999<" in page
    assert ">t20<" not in page and ">t5000<" not in page
    assert len(page) < 40_000
    assert "print(graph.to_source())" in page  # too long to inline the code


def test_guards_show_under_the_equation_they_test():
    g = wg.trace(branchy, np.ones(3))
    page = graph_html(g)
    assert "1 guard" in page
    assert re.search(r"guard bool\(t1\) == True\s+·\s+branchy · test_graph_views\.py:\d+  "
                     r"if np\.sum\(x\) &gt; 0:", page)
    assert page.index(">t1<") < page.index("guard bool(t1)") < page.index(">t2<")


def test_importing_the_module_makes_it_the_html_repr_of_graphs():
    g = wg.trace(loss, X, W, B)
    assert g._repr_html_() == graph_html(g)
    f = wg.compile(branchy)
    f(np.ones(3))
    assert html_of(f) == compiled_html(f)  # shown once Compiled has a _repr_html_


def test_params_text_never_shows_an_address():
    assert params_text({"f": lambda v: v, "axis": (0, 1)}) == "f=<lambda>, axis=(0, 1)"
    assert_clean(params_text({"obj": object(), "ufunc": np.add}))


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
    g = wg.trace(loss, X, W, B)
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


# -- compiled functions -----------------------------------------------------------------------


def test_compiled_html_lists_both_branches_with_their_guards_and_calls():
    f = wg.compile(branchy)
    f(np.ones(3))
    f(-np.ones(3))
    f(np.ones(3))
    page = compiled_html(f)
    assert_clean(page)
    assert_well_formed(page)
    assert "compiled branchy" in page and "2 traces · 3 calls" in page
    table = page[: page.index("</table>")]
    assert "bool(t1) == True" in table and "bool(t1) == False" in table
    assert table.count("if np.sum(x) &gt; 0:") == 2
    assert re.search(r"<td>2</td></tr><tr><td>2</td>", table)  # trace 1 served two calls
    assert page.count("<details>") >= 2 and "np.cos" in page and "np.sin" in page
    assert compiled_html(f.cache_info()) == page
    assert "no trace yet" in compiled_html(wg.compile(branchy))


# -- drawings ---------------------------------------------------------------------------------


def svg_of(source: str) -> str:
    done = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert not done.stderr.strip(), done.stderr  # no warning either
    return done.stdout


def test_graph_dot_draws_inputs_literals_equations_outputs():
    g = wg.trace(loss, X, W, B)
    source = dot_source(g)
    assert_clean(source)
    assert source.startswith("digraph program {")
    for edge in ('"x" -> "t0"', '"w" -> "t0"', '"t0" -> "t1"', '"b" -> "t1"', '"c:3:1" -> "t3"'):
        assert edge in source, edge
    assert "<B>t0</B>&#160;=&#160;x @ w" in source and "<B>t4</B>&#160;=&#160;Σ(t3)" in source
    assert 'peripheries="2"' in source and 'penwidth="2.5"' in source  # inputs, the output
    assert GRAPH_LEGEND.split(" · ")[0] in source
    assert source == dot_source(wg.trace(loss, X, W, B))
    assert [equation_formula(eq) for eq in g] == ["x @ w", "t0 + b", "tanh(t1)", "t2 ** 2",
                                               "Σ(t3)"]


@needs_dot
def test_every_drawing_parses_with_dot():
    g = wg.trace(loss, X, W, B)
    f = wg.compile(branchy)
    f(np.ones(3))
    before = grad_graph_of(model, X, W)
    for source in (dot_source(g), dot_source(wg.grad_graph(g, argnums=(1, 2))),
                   dot_source(f.cache_info()[0].graph), pass_dot(before, drop_dead(before)),
                   pass_dot(before, drop_times_one(before))):
        assert "<svg" in svg_of(source)


def test_a_guard_hangs_from_the_value_it_tests():
    source = dot_source(wg.trace(branchy, -np.ones(3)))
    assert '"guard:0"' in source and '"t1" -> "guard:0"' in source
    assert "guard bool(t1) == False" in source and "if np.sum(x) &gt; 0:" in source


def test_pass_dot_marks_removed_new_and_rewritten_equations():
    before = wg.trace(model, X, W)
    after = drop_dead(drop_times_one(before))
    source = pass_dot(before, after)
    assert_clean(source)
    diff = diff_graphs(before, after)
    removed = [row.before.out.name for row in diff.rows if row.kind == "removed"]
    assert len(removed) == 2
    for name in removed:
        assert f"<S><B>{name}</B>" in source
    assert source.count('style="filled,dashed", fillcolor="#fee4e2"') == 2
    assert "was t" in source and "~ <B>" in source  # the rewritten one, with its old form
    assert "→ read as" in source
    assert 'style="dashed"' in source  # edges into removed boxes


def test_a_big_graph_is_grouped_and_says_how_many():
    def chain(x):
        for _ in range(400):
            x = np.sin(x) * 1.01
        return x

    g = wg.trace(chain, 0.5)
    source = dot_source(g)
    assert "800 equations in 20 groups (by consecutive runs)" in source
    assert '"g:0"' in source and '"g:19"' in source and '"t5"' not in source
    assert "sin ×20" in source and "× ×20" not in source
    assert "expand=[&quot;t0–t39&quot;]" in source
    expanded = dot_source(g, expand=["t40–t79"])
    assert 'subgraph "cluster_g1"' in expanded and '"t40"' in expanded
    assert dot_source(g, max_nodes=1000).count("->") > 800  # under the limit: every equation
    if HAS_DOT:
        svg_of(source)
        svg_of(expanded)


def test_a_graph_from_several_lines_is_grouped_by_line():
    def net(x, w):
        for _ in range(100):
            x = np.tanh(x @ w)
            x = x * 0.5 + 0.1
        return np.sum(x)

    g = wg.trace(net, np.ones((2, 3)), np.eye(3))
    grouping = group_equations(g.equations, "line")
    assert len(grouping.labels) == 3 and sum(grouping.sizes) == len(g)
    source = dot_source(g)
    assert f"{len(g)} equations in 3 groups (by source line)" in source
    assert "x = np.tanh(x @ w)" in source and "×100" in source  # edge counts between groups


def test_a_big_pass_drawing_counts_the_changes_per_group():
    def f(x):
        for _ in range(300):
            unused = np.exp(x)  # noqa: F841 - dead
            x = np.sin(x)
        return x

    before = wg.trace(f, 0.5, source_lines=False)
    source = pass_dot(before, drop_dead(before))
    assert "600 equations in 20 groups" in source
    assert source.count("− 15 removed") == 20
    if HAS_DOT:
        svg_of(source)


@pytest.mark.slow
def test_a_million_equations_draw_in_one_pass():
    n = 10**6
    x = Var("x", (), np.float64, scalar=True)
    mul = wg.ops.REGISTRY["multiply"]
    one = Literal(1.0)
    with collector_paused():
        outs = [Var(f"t{k}", (), np.float64, scalar=True) for k in range(n)]
        eqs = [wg.graph.Equation(mul, [outs[k - 1] if k else x, one], None, outs[k])
               for k in range(n)]
    identity = wg.trace(lambda v: v, 1.0)
    g = Graph([x], eqs, [outs[-1]], identity.in_tree, identity.out_tree)
    source = dot_source(g)
    assert "1,000,000 equations in 20 groups" in source
    assert '"g:0" -> "g:1"' in source
    assert len(graph_html(g)) < 40_000
    half = g.replace(equations=eqs[: n // 2], outputs=[outs[n // 2 - 1]])
    assert "500,000 removed" in passes_text(g, half)


def test_wg_draw_of_a_graph_and_of_a_pass_are_digraphs_with_the_listing_as_fallback():
    graphviz = pytest.importorskip("graphviz")
    g = wg.trace(loss, X, W, B)
    drawing = draw(g)
    assert isinstance(drawing, graphviz.Digraph)
    assert repr(drawing) == "<wg.draw: graph loss, 5 equations, 3 inputs>"
    assert drawing.source == dot_source(g)
    assert "wg-card" in drawing.fallback_html
    before = wg.trace(model, X, W)
    view = draw_pass(before, drop_dead(before), "dce")
    assert repr(view) == "<wg.draw: pass, 8 → 7 equations: 1 removed>"
    assert view.source == pass_dot(before, drop_dead(before))


# -- memory plot --------------------------------------------------------------------------------


def test_memory_plot_draws_two_timelines_with_their_peaks():
    before = [16_000, 24_000, 1_200_000, 1_200_008]
    after = [16_000, 16_000, 616_000, 16_008]
    fig = memory_plot({"before": before, "after plan_memory": after},
                      names=["t0", "t1", "t2", "t3"])
    ax = fig.axes[0]
    labelled = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in labelled] == ["before (peak 1.2 MB)",
                                                       "after plan_memory (peak 616.0 kB)"]
    np.testing.assert_allclose(labelled[0].get_ydata()[:4], np.array(before) / 1e6)
    assert [t.get_text() for t in ax.texts] == ["peak 1.2 MB at t3", "peak 616.0 kB at t2"]
    assert fig.wengert_data["peaks"] == {"before": (3, 1_200_008),
                                         "after plan_memory": (2, 616_000)}
    assert fig.wengert_data["unit"] == "MB" and ax.get_ylabel() == "memory held (MB)"
    assert ax.get_title(loc="left") == "peak memory 1.2 MB → 616.0 kB (−49%)"
    assert fig._repr_png_().startswith(b"\x89PNG")


def test_memory_plot_keeps_the_peak_of_a_long_timeline():
    rng = np.random.default_rng(0)
    timeline = rng.integers(0, 1000, 200_000)
    timeline[123_457] = 5_000
    fig = memory_plot({"one": timeline})
    (line,) = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("_")]
    assert len(line.get_xdata()) <= 4_002 and line.get_ydata().max() == 5.0
    assert fig.wengert_data["peaks"]["one"] == (123_457, 5_000)


def test_memory_plot_refuses_bad_timelines():
    with pytest.raises(ValueError, match="at least one timeline"):
        memory_plot({})
    with pytest.raises(ValueError, match="non-empty"):
        memory_plot({"a": []})
    with pytest.raises(ValueError, match="negative"):
        memory_plot({"a": [1, -2]})
    assert bytes_text(999) == "999 B" and bytes_text(1_500_000) == "1.5 MB"


# -- in a browser -------------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
THEMES = {  # JupyterLab's own theme colours, as a notebook page has them
    "light": """--jp-layout-color0: white; --jp-layout-color2: #eee;
      --jp-content-font-color1: rgba(0,0,0,.87); --jp-content-font-color2: rgba(0,0,0,.54);
      --jp-content-font-color3: rgba(0,0,0,.38); --jp-border-color1: #bdbdbd;
      background: white; color: rgba(0,0,0,.87);""",
    "dark": """--jp-layout-color0: #111; --jp-layout-color2: #424242;
      --jp-content-font-color1: #fff; --jp-content-font-color2: rgba(255,255,255,.7);
      --jp-content-font-color3: rgba(255,255,255,.5); --jp-border-color1: #616161;
      background: #111; color: #fff;""",
}


def _views() -> dict[str, tuple[str, str]]:
    g = wg.trace(loss, X, W, B)
    before = grad_graph_of(model, X, W)
    after = drop_dead(drop_times_one(before))
    f = wg.compile(branchy)
    f(np.ones(3))
    f(-np.ones(3))
    return {
        "trace": (graph_html(g), dot_source(g)),
        "grad": (graph_html(wg.grad_graph(g, argnums=(1, 2))),
                 dot_source(wg.grad_graph(g, argnums=(1, 2)))),
        "pass": (passes_html(before, after, ["simplify (by hand)", "dce (by hand)"]),
                 pass_dot(before, after)),
        "compiled": (compiled_html(f), dot_source(f.cache_info()[1].graph)),
    }


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium at /usr/bin/chromium")
@needs_dot
def test_the_views_in_chromium_in_both_jupyterlab_themes(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(parents=True, exist_ok=True)
    views = _views()
    colours: dict[str, str] = {}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        for theme, css in THEMES.items():
            for name, (card, dot) in views.items():
                svg = svg_of(dot)
                path = tmp_path / f"{name}_{theme}.html"
                path.write_text(
                    f'<!doctype html><html><head><meta charset="utf-8"><style>:root {{ {css} }}'
                    f" body {{ margin: 12px; font-family: sans-serif; }}</style></head>"
                    f'<body data-jp-theme-light="{str(theme == "light").lower()}">'
                    f'<div id="card">{card}</div><div id="svg">{svg[svg.index("<svg"):]}</div>'
                    "</body></html>", encoding="utf-8")
                page.goto(path.as_uri())
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                page.locator("#card").screenshot(path=str(SHOTS / f"test_{name}_{theme}.png"))
                page.locator("#svg").screenshot(path=str(SHOTS / f"test_{name}_{theme}_svg.png"))
                box = page.locator("#card .wg-card").bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 60
                if name == "pass":
                    removed = page.locator("#card tr.wg-del td").nth(1)
                    assert "line-through" in removed.evaluate(
                        "e => getComputedStyle(e).textDecorationLine")
                    colours[theme] = removed.evaluate("e => getComputedStyle(e).color")
                    card_bg = page.locator("#card .wg-card").evaluate(
                        "e => getComputedStyle(e).backgroundColor")
                    assert card_bg == ("rgb(255, 255, 255)" if theme == "light"
                                       else "rgb(17, 17, 17)")
        browser.close()
    assert not errors, errors
    assert colours["light"] != colours["dark"]  # the red is lighter on the dark theme


def _layer(x):
    return np.tanh(x) * 2.0


def test_a_graph_groups_by_function_as_a_tape_does():
    def model(x):
        return np.sum(_layer(_layer(x)))

    g = wg.trace(model, np.ones(3))
    grouping = group_equations(g.equations, "function")
    assert grouping.labels == ["_layer()", "model()"] and grouping.sizes == [4, 1]
    source = dot_source(g, group="function", max_nodes=2)
    assert "(by function)" in source and 'expand=[&quot;_layer()&quot;]' in source


def test_a_tape_and_a_graph_of_one_function_list_the_same_equations():
    x = wg.tensor(np.ones(3), requires_grad=True)
    tape = wg.tape_of(np.sum(np.sin(x) * 2.0))
    g = wg.trace(lambda x: np.sum(np.sin(x) * 2.0), np.ones(3))
    strip = [str(eq).split("=", 1)[1].replace("x0", "x") for eq in tape]
    assert strip == [str(eq).split("=", 1)[1].replace("x0", "x") for eq in g.equations]


def test_a_tape_with_a_decomposition_draws_its_parts_as_one_box():
    x = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    with wg.keep_values():
        w, v = np.linalg.eigh(x)
        tape = wg.tape_of(np.sum(w) + np.sum(v))
    source = dot_source(tape)
    assert source.startswith("digraph tape {") and '"x0"' in source
    assert "Σ(t" in source and "\"t1\" -> \"t3\"" in source  # read one by one
    from wengert.core.equations import read_tape
    grouped = read_tape([eq.node for eq in tape if eq.index == tape.outputs[0]], group=True)
    drawn = dot_source(grouped)
    nodes = {line.split()[0] for line in drawn.splitlines() if "->" in line}
    defined = {line.split()[0] for line in drawn.splitlines()
               if line.startswith('  "') and "->" not in line}
    assert nodes <= defined  # every edge starts at a drawn node: the parts share one
    assert "t2, t3</B>" in drawn and "eigh(t1" in drawn
    assert ">t2: [" in drawn and "t3: 2×2" not in drawn  # each part's value, named
