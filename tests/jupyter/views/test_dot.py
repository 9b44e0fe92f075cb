"""DOT drawings of tapes (wengert.jupyter.views.dot): styles from the leaf table, values and
gradients on nodes, grouping of big tapes in one pass, determinism, valid DOT."""

from __future__ import annotations

import doctest
import re
import shutil
import sys

import graph_examples as examples
import pytest
from graph_examples import B, W, X, branchy, drop_dead, drop_times_one, grad_graph_of, model, svg_of
from test_html import abc, assert_clean, chain, loss

import numpy as np
import wengert as wg
from wengert.core.collector import collector_paused
from wengert.core.equations import Tape
from wengert.core.ir import Equation, Literal, Var
from wengert.core.source import SourceLine
from wengert.graph.program import Graph
from wengert.jupyter.views import dot as dot_module
from wengert.jupyter.views.diff import diff_graphs
from wengert.jupyter.views.dot import (
    GRAPH_LEGEND,
    MAX_NODES,
    dot_source,
    equation_formula,
    node_value_lines,
    pass_dot,
)
from wengert.jupyter.views.drawing import draw, draw_pass
from wengert.jupyter.views.grouping import group_equations
from wengert.jupyter.views.html import graph_html
from wengert.jupyter.views.subject import AdjointCollector, TapeNames, names_from_namespace
from wengert.jupyter.views.text import passes_text
from wengert.ops import REGISTRY

HAS_DOT = shutil.which("dot") is not None


def node_lines(source: str) -> dict[str, str]:
    """The statement of every node by its id."""
    found = {}
    for line in source.splitlines():
        m = re.match(r'\s+"([^"]+)" \[', line)
        if m:
            found[m.group(1)] = line
    return found


def edges(source: str) -> list[tuple[str, str]]:
    return re.findall(r'^\s+"([^"]+)" -> "([^"]+)"', source, flags=re.M)


def test_abc_nodes_have_values_gradients_and_leaf_styles():
    tape, adjoints, ns = abc()
    source = dot_source(tape, adjoints=adjoints, names=names_from_namespace(tape, ns))
    nodes = node_lines(source)
    assert set(nodes) == {"x0", "x1", "x2", "t0", "t1"}
    for leaf, value, grad in (("x0", "2", "4"), ("x1", "3", "4"), ("x2", "4", "5")):
        line = nodes[leaf]
        assert 'peripheries="2"' in line and 'color="#1d4ed8"' in line  # blue double ring
        assert f">{value}</FONT>" in line and f"<I>grad {grad}</I>" in line
    assert "<B>t0</B>&#160;=&#160;a + b" in nodes["t0"] and ">5</FONT>" in nodes["t0"]
    assert "<I>grad 4</I>" in nodes["t0"] and 'shape="box"' in nodes["t0"]
    assert "<B>y</B>&#160;=&#160;t0 × c" in nodes["t1"] and ">20</FONT>" in nodes["t1"]
    assert 'penwidth="2.5"' in nodes["t1"] and "t1 · output" in nodes["t1"]
    assert edges(source) == [("x0", "t0"), ("x1", "t0"), ("t0", "t1"), ("x2", "t1")]
    assert_clean(source)


def test_loss_constants_are_grey_dashed_and_named():
    tape, adjoints, ns = loss()
    source = dot_source(tape, adjoints=adjoints, names=names_from_namespace(tape, ns))
    nodes = node_lines(source)
    assert {"c:0:0", "c:2:1", "c:3:1"} <= set(nodes)
    for constant in ("c:0:0", "c:2:1", "c:3:1"):
        assert 'style="filled,dashed"' in nodes[constant] and "peripheries" not in \
            nodes[constant]
    assert "<B>x</B>" in nodes["c:0:0"] and ">1.5</FONT>" in nodes["c:0:0"]
    assert "<B>y</B>" in nodes["c:2:1"] and ">0.1</FONT>" in nodes["c:2:1"]
    assert ">2</FONT>" in nodes["c:3:1"]  # the exponent, unnamed
    assert "x × w" in nodes["t0"] and "1.2" in nodes["t0"] and "grad 2.6" in nodes["t0"]
    assert "t1 − y" in nodes["t2"] and "1.3" in nodes["t2"]
    assert "<B>L</B>&#160;=&#160;t2 ** 2" in nodes["t3"] and "1.69" in nodes["t3"]
    assert "grad 3.9" in nodes["x0"] and "grad 2.6" in nodes["x1"]
    assert ("c:0:0", "t0") in edges(source) and ("x0", "t0") in edges(source)


def test_leaves_show_their_grad_without_adjoints():
    tape, _, _ = loss()
    nodes = node_lines(dot_source(tape))
    assert ".grad 3.9" in nodes["x0"] and ".grad 2.6" in nodes["x1"]
    assert "<B>x0</B>" in nodes["x0"]


def test_watched_leaves_say_so():
    w = wg.Variable(2.0, name="w")
    with wg.GradientTape() as g:
        w * 3.0
    nodes = node_lines(dot_source(g.recorded))
    assert "<B>w</B>" in nodes["x0"] and "watched by the tape" in nodes["x0"]


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_dot_parses_the_drawings():
    tape, adjoints, ns = loss()
    names = names_from_namespace(tape, ns)
    svg = svg_of(dot_source(tape, adjoints=adjoints, names=names))
    assert "grad 3.9" in svg and "1.69" in svg and "<svg" in svg
    assert not re.search(r"0x[0-9a-fA-F]{3,}", svg)  # graphviz's own ids are "node1", ...
    # awkward names and values are escaped
    odd = dot_source(tape, names={"x0": 'w<"&>\\', "t3": "L{1}"})
    assert "w&lt;&quot;&amp;&gt;\\" in odd
    assert "w&lt;&quot;&amp;&gt;" in svg_of(odd)


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_dot_parses_arrays_indexing_and_many_ops():
    rng = np.random.default_rng(0)
    W = wg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    x = np.arange(4.0)
    with wg.keep_values():
        h = np.tanh(W @ x)
        z = np.concatenate([h, h[1:], -h.T]) / np.linalg.norm(h)
        y = np.sum(z[::2] ** 2, axis=0) + np.einsum("ij,j->", W, x)
    tape = wg.tape_of(y)
    collector = AdjointCollector(tape)
    with wg.observe_sweep(collector):
        y.backward()
    source = dot_source(tape, adjoints=collector.adjoints)
    svg = svg_of(source)
    assert "3×4 · ‖·‖=" in svg and "‖t" in svg
    assert_clean(source)


def formula(eq, names):
    return equation_formula(eq, [names.input(eq, p) for p in range(len(eq.ins))])


def test_formulas():
    x = wg.tensor(np.ones((2, 3)), requires_grad=True)
    with wg.keep_values():
        ys = [x[0, 1:], x[..., None], x.T, -x, np.linalg.norm(x), np.sin(x),
              x.reshape(3, 2), np.concatenate([x, x, x, x, x]), x.astype(np.float32)]
    tape = wg.tape_of(*ys)
    names = TapeNames(tape, {"x0": "x"})
    formulas = {eq.op.name: formula(eq, names) for eq in tape}
    assert formulas["getitem"] in ("x[0, 1:]", "x[..., None]")
    assert formulas["transpose"] == "xᵀ" and formulas["negative"] == "−x"
    assert formulas["norm"] == "‖x‖" and formulas["sin"] == "sin(x)"
    assert formulas["reshape"] == "reshape(x, shape=(3, 2))"
    assert formulas["concatenate"] == "concatenate(x, x, x, … 2 more, axis=0)"
    assert formulas["astype"] == "astype(x, dtype=float32)"
    picks = wg.tape_of(x[x > 0], x[[0, 1], [1, 2]], x[np.arange(2).repeat(3)])
    assert [formula(eq, names) for eq in picks] == [
        "x[mask(2×3)]", "x[[0,1], [1,2]]", "x[array(i64[6])]"]


def test_node_values():
    assert node_value_lines(2.0) == ("", "2")
    assert node_value_lines(np.array([[1.0, 2.0], [3.0, 4.0]])) == ("", "[[1, 2], [3, 4]]")
    head, entries = node_value_lines(np.arange(10.0))
    assert head == "10 · ‖·‖=17" and entries == "[0, 1, …, 9]"
    assert node_value_lines(wg.tensor([1.0, 2.0])) == ("", "[1, 2]")


def test_deterministic_for_separately_recorded_tapes():
    first, adj1, ns1 = loss()
    second, adj2, ns2 = loss()
    a = dot_source(first, adjoints=adj1, names=names_from_namespace(first, ns1))
    b = dot_source(second, adjoints=adj2, names=names_from_namespace(second, ns2))
    assert a == b
    assert dot_source(chain(1000)) == dot_source(chain(1000))


def test_grouping_starts_above_max_nodes():
    at = dot_source(chain(MAX_NODES))
    above = dot_source(chain(MAX_NODES + 1))
    assert '"t299"' in at and "groups" not in at
    assert '"t0"' not in above and '"g:0"' in above and "301 equations in 19 groups" in above
    assert 'expand=[&quot;t0–t15&quot;]' in above and "group=None" in above
    everything = node_lines(dot_source(chain(MAX_NODES + 1), group=None))
    assert sum(1 for node in everything if re.fullmatch(r"t\d+", node)) == MAX_NODES + 1
    assert '"g:0"' in dot_source(chain(10), group="chunk")
    assert '"g:0"' in dot_source(chain(50), max_nodes=40)


def test_grouping_by_line_with_a_loop_and_expanding_a_group():
    W = wg.tensor(np.eye(3) * 0.5, requires_grad=True)
    h = wg.tensor(np.ones(3))
    with wg.source_lines():
        for _ in range(200):
            z = W @ h
            h = np.tanh(z)
        out = h.sum()
    tape = wg.tape_of(out)
    source = dot_source(tape, names={"x0": "W"})
    labels = re.findall(r"<B>(line \d+)</B>", source)
    assert len(labels) == 3 and "401 equations in 3 groups (by source line)" in source
    assert "z = W @ h" in source and "200 equations" in source and "tanh ×200" in source
    groups = edges(source)
    assert ("x0", "g:0") in groups and ("g:0", "g:1") in groups and ("g:1", "g:0") in groups
    assert re.search(r'"g:1" -> "g:0" \[label="×199"', source)
    assert re.search(r'"x0" -> "g:0" \[label="×200"', source)
    # the output's group is drawn thick
    assert 'penwidth="2.5"' in node_lines(source)["g:2"]
    expanded = dot_source(tape, expand=[labels[2]], names={"x0": "W"})
    assert 'subgraph "cluster_g2"' in expanded and '"t400"' in expanded
    assert '"g:2"' not in node_lines(expanded) and '"t0"' not in expanded
    assert ("g:1", "t400") in edges(expanded)  # the last line: t400 = Σ(t399)
    assert "No group is labelled &#x27;nope&#x27;" in dot_source(tape, expand=["nope"])
    assert "may take minutes" in dot_source(tape, expand=[labels[0]], max_nodes=150)
    assert "may take minutes" not in expanded
    functions = dot_source(tape, group="function")
    assert "<B>test_grouping_by_line_with_a_loop_and_expanding_a_group()</B>" in functions
    assert "401 equations in 1 group (by function)" in functions
    # one line recording everything: consecutive runs, each showing that line
    g = wg.tensor(np.ones(3))
    with wg.source_lines():
        for _ in range(400): g = np.tanh(W @ g)  # noqa: E701
    one_line = dot_source(wg.tape_of(g))
    assert "(by consecutive runs)" in one_line
    assert one_line.count("for _ in range(400): g = np.tanh(W @ g)") == 20


def test_grouping_by_function():
    def layer(h, W):
        return np.tanh(W @ h)

    W = wg.tensor(np.eye(2), requires_grad=True)
    h = wg.tensor(np.ones(2))
    with wg.source_lines():
        for _ in range(3):
            h = layer(h, W)
        total = h.sum()
    grouping = group_equations(wg.tape_of(total), "function")
    assert grouping.labels == ["layer()", "test_grouping_by_function()"]
    assert grouping.sizes == [6, 1]
    with pytest.raises(ValueError, match="group='lines'"):
        group_equations(wg.tape_of(total), "lines")


def test_many_leaves_become_one_node():
    xs = [wg.tensor(float(i), requires_grad=True) for i in range(400)]
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    source = dot_source(wg.tape_of(total))
    assert '":inputs"' in source and "400 leaves" in source and '"x1"' not in source


def synthetic_tape(n: int, lines: int = 0) -> Tape:
    """A chain of ``n`` equations ``t_k = t_{k-1} * const`` built with the public tape
    records directly (reading a real 10⁵-op tape takes seconds in ``read_tape``); with
    ``lines``, equation ``k`` comes from line ``k % lines`` of a loop body."""
    multiply = REGISTRY["multiply"]
    leaf = wg.tensor(1.0, requires_grad=True)
    code = [SourceLine("/tmp/ipykernel_1/1.py", 10 + j, "<module>", f"h = h * {j}")
            for j in range(lines)]
    constant = Literal(1.0)
    equations = []
    first = Var("x0", (), np.float64, source="leaf", index=0, leaf=leaf)
    for k in range(n):
        out = Var(f"t{k}", (), np.float64, source="equation", index=k, value=1.0)
        equations.append(Equation(multiply, (first, constant), None, out,
                                  code[k % lines] if lines else None, index=k))
        first = out
    return Tape(equations, [leaf], [n - 1])


@pytest.mark.parametrize("lines", [0, 3])
def test_grouping_is_one_pass_without_recursion_at_100k_equations(lines):
    tape = synthetic_tape(100_000, lines)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # any recursion over the graph would fail here
    try:
        source = dot_source(tape)
        grouping = group_equations(tape, "chunk")
    finally:
        sys.setrecursionlimit(limit)
    if lines:
        assert "100,000 equations in 3 groups (by source line)" in source
        assert re.search(r'"g:2" -> "g:0" \[label="×33,333"', source)
    else:
        assert "100,000 equations in 20 groups (by consecutive runs)" in source
    assert sum(grouping.sizes) == 100_000 and len(grouping.of) == 100_000
    assert len(source.splitlines()) < 60
    if HAS_DOT:
        svg_of(source)


@pytest.mark.slow
def test_a_recorded_100k_tape_draws_grouped():
    source = dot_source(chain(100_000))
    assert "100,000 equations in 20 groups" in source
    if HAS_DOT:
        svg_of(source)


def test_empty_tape():
    x = wg.tensor(1.0, requires_grad=True)
    source = dot_source(wg.tape_of(x))
    assert '"x0"' in source and "->" not in source
    assert "no equations recorded" in dot_source(wg.tape_of(wg.tensor(1.0)))


def test_docstring_examples_run():
    with np.printoptions(legacy=False):
        result = doctest.testmod(dot_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 10


needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")


# -- drawings ---------------------------------------------------------------------------------




def test_graph_dot_draws_inputs_literals_equations_outputs():
    g = wg.trace(examples.loss, X, W, B)
    source = dot_source(g)
    assert_clean(source)
    assert source.startswith("digraph program {")
    for edge in ('"x" -> "t0"', '"w" -> "t0"', '"t0" -> "t1"', '"b" -> "t1"', '"c:3:1" -> "t3"'):
        assert edge in source, edge
    assert "<B>t0</B>&#160;=&#160;x @ w" in source and "<B>t4</B>&#160;=&#160;Σ(t3)" in source
    assert 'peripheries="2"' in source and 'penwidth="2.5"' in source  # inputs, the output
    assert GRAPH_LEGEND.split(" · ")[0] in source
    assert source == dot_source(wg.trace(examples.loss, X, W, B))
    assert [equation_formula(eq) for eq in g] == ["x @ w", "t0 + b", "tanh(t1)", "t2 ** 2",
                                               "Σ(t3)"]


@needs_dot
def test_every_drawing_parses_with_dot():
    g = wg.trace(examples.loss, X, W, B)
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
    g = wg.trace(examples.loss, X, W, B)
    drawing = draw(g)
    assert isinstance(drawing, graphviz.Digraph)
    assert repr(drawing) == "<wg.draw: graph loss, 5 equations, 3 inputs>"
    assert drawing.source == dot_source(g)
    assert "wg-card" in drawing.fallback_html
    before = wg.trace(model, X, W)
    view = draw_pass(before, drop_dead(before), "dce")
    assert repr(view) == "<wg.draw: pass, 8 → 7 equations: 1 removed>"
    assert view.source == pass_dot(before, drop_dead(before))


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
    drawn = dot_source(tape)
    assert drawn.startswith("digraph tape {") and '"x0"' in drawn
    nodes = {line.split()[0] for line in drawn.splitlines() if "->" in line}
    defined = {line.split()[0] for line in drawn.splitlines()
               if line.startswith('  "') and "->" not in line}
    assert nodes <= defined  # every edge starts at a drawn node: the parts share one
    assert "t2, t3</B>" in drawn and "eigh(t1" in drawn
    assert ">t2: [" in drawn and "t3: 2×2" not in drawn  # each part's value, named


def test_a_graph_equation_with_several_outputs_is_one_box_its_parts_read_from_it():
    def parts(a):
        w, v = np.linalg.eigh(a)
        return np.sum(v) + np.sum(w)

    g = wg.trace(parts, np.array([[2.0, 1.0], [1.0, 3.0]]))
    assert str(g.equations[2]) == "t2: f64[2], t3: f64[2,2] = eigh(t1, uplo='L')"
    source = dot_source(g)
    nodes = node_lines(source)
    assert "t3" not in nodes and "<B>t2, t3</B>" in nodes["t2"]
    assert "t2: f64[2]" in nodes["t2"] and "t3: f64[2,2]" in nodes["t2"]
    assert ("t2", "t4") in edges(source)  # t4 = Σ(t3) reads the box of t3's equation
    defined = set(nodes)
    assert {a for a, _ in edges(source)} <= defined


@pytest.mark.parametrize("group", [None, "chunk"])
def test_a_decomposition_is_one_box_and_every_edge_starts_at_a_drawn_node(group):
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    u, s, vt = np.linalg.svd(a)
    tape = wg.tape_of(np.sum(w * 2.0) + np.sum(v ** 2) + np.sum(s) + np.sum(u * vt))
    source = dot_source(tape, group=group, expand=["t0 … t4"] if group else ())
    lines = source.splitlines()
    drawn = {line.split()[0] for line in lines if line.startswith('  "') and "->" not in line}
    drawn |= {line.split()[0] for line in lines if line.startswith('    "')}
    for line in lines:
        if "->" in line:
            start, end = line.split("->")
            assert start.split()[0] in drawn and end.split()[0] in drawn, line
    if group is None:
        assert "t2, t3</B>&#160;=&#160;eigh(t1" in source
        assert "t4, t5, t6</B>&#160;=&#160;svd(x0)" in source
        assert '"t4" -> "t10"' not in source and "eigh_values" not in source


def test_a_complex_or_negative_constant_is_a_factor_in_parentheses():
    x = wg.tensor(2.0, requires_grad=True)
    tape = wg.tape_of(-(x * (1 - 2j) - (-3.0)))
    assert [equation_formula(eq) for eq in tape] == ["x0 × (1-2j)", "t0 − (-3)", "−t1"]
    assert "x0 × (1-2j)" in dot_source(tape).replace("&#160;", " ")
