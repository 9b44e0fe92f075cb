"""The tape table and the rich reprs (wengert.jupyter.views.text, .html, .subject): right
numbers, names, adjoints, shortening, determinism, no addresses."""

from __future__ import annotations

import doctest
import html.parser
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import graph_examples as examples
import pytest
from graph_examples import B, W, X, branchy, drop_dead, drop_times_one, grad_graph_of, model, svg_of
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.core.display import html_of
from wengert.core.formatting import params_text
from wengert.core.levels import Tag
from wengert.jupyter.views import diff as diff_module
from wengert.jupyter.views import html as html_module
from wengert.jupyter.views import subject as subject_module
from wengert.jupyter.views import text as text_module
from wengert.jupyter.views.diff import returns_text
from wengert.jupyter.views.dot import dot_source, pass_dot
from wengert.jupyter.views.html import (
    compiled_html,
    dual_html,
    epsilon_text,
    gradient_tape_html,
    graph_html,
    passes_html,
    tape_html,
    tensor_html,
    variable_html,
)
from wengert.jupyter.views.subject import AdjointCollector, TapeNames, names_from_namespace
from wengert.jupyter.views.text import shown_rows, tape_text

#: What must never appear in anything a person sees: addresses, ids, object reprs.
FORBIDDEN = [re.compile(p) for p in (r"0x[0-9a-fA-F]{3,}", r"\bid\s*=", r" object at ",
                                     r"<function ", r"\bid\(")]


def assert_clean(text: str) -> None:
    for pattern in FORBIDDEN:
        assert not pattern.search(text), f"{pattern.pattern!r} in output:\n{text[:2000]}"


class _Balance(html.parser.HTMLParser):
    """Checks that every opened element is closed, in order."""

    VOID = {"br", "img", "hr", "meta", "input", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def assert_well_formed(page: str) -> None:
    parser = _Balance()
    parser.feed(page)
    parser.close()
    assert parser.stack == [], f"unclosed: {parser.stack}"


def abc():
    """y = (a + b) · c at a=2, b=3, c=4: t0 = 5, y = 20; ȳ = 1, t̄0 = c = 4, ā = b̄ = 4,
    c̄ = t0 = 5."""
    a = wg.tensor(2.0, requires_grad=True)
    b = wg.tensor(3.0, requires_grad=True)
    c = wg.tensor(4.0, requires_grad=True)
    with wg.keep_values():
        y = (a + b) * c
    tape = wg.tape_of(y)
    collector = AdjointCollector(tape)
    with wg.observe_sweep(collector):
        y.backward()
    return tape, collector.adjoints, dict(a=a, b=b, c=c, y=y)


def loss():
    """L = (x·w + b − y)² at x=1.5, w=0.8, b=0.2, y=0.1: t0 = 1.2, t1 = 1.4, t2 = 1.3,
    L = 1.69; L̄ = 1, t̄2 = 2·1.3 = 2.6 = t̄1 = t̄0 = b̄, w̄ = 2.6·1.5 = 3.9."""
    x, w = wg.tensor(1.5), wg.tensor(0.8, requires_grad=True)
    b, y = wg.tensor(0.2, requires_grad=True), wg.tensor(0.1)
    with wg.source_lines(), wg.keep_values():
        t0 = x * w
        t1 = t0 + b
        t2 = t1 - y
        L = t2 ** 2
    tape = wg.tape_of(L)
    collector = AdjointCollector(tape)
    with wg.observe_sweep(collector):
        L.backward()
    namespace = dict(x=x, w=w, b=b, y=y, L=L)
    return tape, collector.adjoints, namespace


def rows(text: str) -> dict[str, list[str]]:
    """The rows of a text table by their first cell."""
    return {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}


def test_abc_text_has_the_hand_checked_values_and_adjoints():
    tape, adjoints, ns = abc()
    assert adjoints == {"t1": 1.0, "t0": 4.0, "x0": 4.0, "x1": 4.0, "x2": 5.0}
    names = names_from_namespace(tape, ns)
    assert names == {"x0": "a", "x1": "b", "x2": "c", "t1": "y"}
    text = tape_text(tape, adjoints, names=names)
    r = rows(text)
    assert r["t0"][:6] == ["t0", "+", "add", "a,", "b", "scalar"]
    assert r["t0"][7:9] == ["5", "4"]  # value, adjoint
    assert r["y"][:6] == ["y", "(t1)", "*", "multiply", "t0,", "c"]  # as a leaf's row
    assert "20" in r["y"] and "◀" in r["y"]
    # leaves: value, .grad, adjoint
    assert r["a"][-3:] == ["2", "4", "4"]
    assert r["b"][-3:] == ["3", "4", "4"]
    assert r["c"][-3:] == ["4", "5", "5"]


def test_loss_text_and_html_have_the_hand_checked_numbers():
    tape, adjoints, ns = loss()
    names = names_from_namespace(tape, ns)
    # x and y are constants the tape saw as the very same values: named too.
    assert names == {(0, 0): "x", "x0": "w", "x1": "b", (2, 1): "y", "t3": "L"}
    text = tape_text(tape, adjoints, names=names)
    r = rows(text)
    assert r["t0"][3:5] == ["x,", "w"] and r["t0"][7:9] == ["1.2", "2.6"]
    assert r["t1"][3:5] == ["t0,", "b"] and r["t1"][7:9] == ["1.4", "2.6"]
    assert r["t2"][3:5] == ["t1,", "y"] and r["t2"][7:9] == ["1.3", "2.6"]
    assert r["L"][1] == "(t3)" and "1.69" in r["L"] and "t2," in r["L"]
    assert r["w"][-2:] == ["3.9", "3.9"] and r["b"][-2:] == ["2.6", "2.6"]
    assert "line " in text or "test_html.py:" in text
    assert "t2 = t1 - y" in text  # the user's line
    page = tape_html(tape, adjoints, names=names)
    assert_well_formed(page)
    for number in ("1.2", "1.4", "1.3", "1.69", "2.6", "3.9"):
        assert f">{number}<" in page
    assert "t1 = t0 + b" in page and "after backward()" in page
    assert_clean(text)
    assert_clean(page)


def test_tables_without_adjoints_or_lines_drop_those_columns():
    tape, _, _ = abc()
    text = tape_text(tape)
    assert "adjoint" not in text and "line" not in text.splitlines()[3]
    page = tape_html(tape)
    assert ">adjoint<" not in page and ">line<" not in page


def test_the_leaf_table_shows_grad_and_requires_grad():
    tape, _, _ = loss()
    text = tape_text(tape)  # without names: x0, x1
    r = rows(text)
    assert r["x0"][1:5] == ["scalar", "float64", "True", "0.8"] and r["x0"][5] == "3.9"
    assert r["x1"][5] == "2.6"


def test_values_not_kept_and_values_freed():
    x = wg.tensor(np.ones((300, 300)), requires_grad=True)
    y = (x @ np.ones((300, 300)) + 1.0).sum()
    tape = wg.tape_of(y)
    text = tape_text(tape)
    assert rows(text)["t0"][-2:] == ["not", "kept"]
    y.backward()
    freed = tape_text(wg.tape_of(y))
    assert "freed by backward()" in freed and "?" in rows(freed)["t0"]


def test_kept_values_survive_backward_with_their_shape():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.keep_values():
        y = (x * 3.0).sum()
    y.backward()
    line = next(line for line in tape_text(wg.tape_of(y)).splitlines() if line.startswith("t0"))
    assert re.search(r"\b2\s+float64\s+\[3, 6\]", line), line


def chain(n: int):
    x = wg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return wg.tape_of(y)


def test_long_tapes_show_first_and_last_rows():
    tape = chain(10_000)
    text = tape_text(tape, max_rows=6)
    lines = text.splitlines()
    assert "… 9,994 more equations …" in lines
    shown = [line.split()[0] for line in lines if re.match(r"t\d+ ", line)]
    assert shown == ["t0", "t1", "t2", "t9997", "t9998", "t9999"]
    page = tape_html(tape, max_rows=6)
    assert page.count("<tr") == 1 + 1 + 1 + 7  # leaves: head + row; equations: head + 7
    assert "… 9,994 more equations …" in page
    assert_well_formed(page)
    assert tape_text(tape, max_rows=0).count("\n") > 10_000


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(0, 20))
def test_shown_rows_cover_every_row_once(n, max_rows):
    head, hidden, tail = shown_rows(n, max_rows)
    indices = list(head) + list(tail)
    assert len(indices) + hidden == n
    assert indices == sorted(set(indices))
    if max_rows and n > max_rows:
        assert len(indices) == max_rows and indices[0] == 0
        assert indices[-1] == n - 1 or max_rows == 1
    else:
        assert hidden == 0


def test_output_is_deterministic_for_separately_recorded_tapes():
    first, adj1, ns1 = loss()
    second, adj2, ns2 = loss()
    n1, n2 = names_from_namespace(first, ns1), names_from_namespace(second, ns2)
    assert tape_text(first, adj1, names=n1) == tape_text(second, adj2, names=n2)
    assert tape_html(first, adj1, names=n1) == tape_html(second, adj2, names=n2)
    assert tape_html(first) == tape_html(first)
    a, b = abc(), abc()
    assert tensor_html(a[2]["y"]) == tensor_html(b[2]["y"])
    assert tensor_html(a[2]["a"]) == tensor_html(b[2]["a"])


def test_variables_show_their_names_and_duplicates_keep_tape_names():
    w = wg.Variable(2.0, name="w")
    v = wg.Variable(3.0, name="w")
    u = wg.Variable(1.0)
    with wg.GradientTape() as g:
        y = w * v + u
    names = TapeNames(g.recorded)
    assert [names.leaf(i) for i in range(3)] == ["w (x0)", "w (x1)", "x2"]
    assert names.user_leaf(2) is None
    lines = tape_text(g.recorded).splitlines()
    assert lines[1].split()[:6] == ["w", "(x0)", "scalar", "float64", "watched", "2"]
    assert lines[2].split()[:2] == ["w", "(x1)"] and lines[3].split()[0] == "x2"
    assert y is not None


def test_names_by_index_and_for_constants():
    tape, _, _ = abc()
    names = TapeNames(tape, {0: "alpha", "t0": "s", (1, 1): "ignored"})
    assert names.leaf(0) == "alpha" and names.var(tape[0].out) == "s"
    assert names.input(tape[1], 0) == "s"


def test_constants_read_as_their_value_or_const_and_shape():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * np.array([3.0, 4.0]) + 2.0
    text = tape_text(wg.tape_of(y))
    assert "x0, const (2,)" in text and "t0, 2" in text


def test_tensor_cards():
    tape, adjoints, ns = abc()
    a, y = ns["a"], ns["y"]
    card = tensor_html(a)
    assert_well_formed(card)
    assert "leaf · requires grad" in card and ">2<" in card and ".grad" in card and ">4<" in card
    card = tensor_html(y)
    assert "result of an op" in card and "MultiplyBackward" in card and ">20<" in card
    assert ".grad" not in card  # a non-leaf without retain_grad has none (and no warning)
    const = tensor_html(wg.tensor([1.0, 2.0]))
    assert "constant" in const and "[1, 2]" in const
    fresh = tensor_html(wg.tensor(1.0, requires_grad=True))
    assert "None (call backward())" in fresh
    for page in (card, const, fresh):
        assert_clean(page)


def test_retained_grad_of_a_non_leaf_is_shown_without_a_warning():
    x = wg.tensor(2.0, requires_grad=True)
    y = x * x
    y.retain_grad()
    (y * 3.0).backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading .grad must not warn here
        card = tensor_html(y)
    assert ".grad" in card and ">3<" in card


def test_variable_and_dual_cards():
    card = variable_html(wg.Variable(np.arange(3.0), name="w"))
    assert_well_formed(card)
    assert "Variable &#x27;w&#x27;" in card and "[0, 1, 2]" in card and "trainable" in card
    assert "not trainable" in variable_html(wg.Variable(1.0, trainable=False))
    card = dual_html(wg.Dual(2.0, 1.0))
    assert_well_formed(card)
    assert "2 + 1·ε" in card and "made by you" in card
    card = dual_html(wg.Dual(np.array([1.0, 2.0]), np.array([0.5, 0.0])))
    assert "[1, 2]" in card and "[0.5, 0]" in card
    tag = Tag("jvp")
    assert epsilon_text(tag) == "ε" + str(tag.order).translate(str.maketrans(
        "0123456789", "₀₁₂₃₄₅₆₇₈₉"))
    inner = []
    wg.jvp(lambda x: inner.append(dual_html(x)) or x, (1.0,), (1.0,))
    assert len(inner) == 1  # the transform hands the function a dual of its own tag
    assert "perturbation of jvp" in inner[0] and "ε₀" not in inner[0]
    assert_clean(inner[0])


def test_gradient_tape_card():
    w = wg.Variable(2.0, name="w")
    g = wg.GradientTape(persistent=True)
    assert "new" in gradient_tape_html(g) and "no equations recorded" in gradient_tape_html(g)
    with g:
        y = (w * 3.0 - 1.0) ** 2
        assert "recording" in gradient_tape_html(g)
    card = gradient_tape_html(g)
    assert_well_formed(card)
    assert "closed" in card and "persistent" in card and "watched variables" in card
    assert ">25<" in card and "subtract" in card
    g.gradient(y, w)
    assert_clean(card)


def test_registered_as_html_reprs():
    x = wg.tensor(2.0, requires_grad=True)
    y = x * x
    assert y._repr_html_() == tensor_html(y)
    assert wg.tape_of(y)._repr_html_() == tape_html(wg.tape_of(y))
    assert wg.Dual(1.0, 2.0)._repr_html_() == dual_html(wg.Dual(1.0, 2.0))
    w = wg.Variable(1.0, name="w")
    assert w._repr_html_() == variable_html(w)
    with wg.GradientTape() as g:
        w * 2.0
    assert g._repr_html_() == gradient_tape_html(g)


def test_no_third_party_jupyter_import():
    code = ("import sys, wengert.jupyter.views.html, wengert.jupyter.views.dot, "
            "wengert.jupyter.views.drawing; "
            "bad = [m for m in ('IPython', 'ipywidgets', 'anywidget', 'traitlets', "
            "'matplotlib', 'graphviz') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("module", [html_module, text_module, subject_module, diff_module])
def test_docstring_examples_run(module):
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3


HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
SHOTS = Path("/tmp/shots/hE")


# -- the graph card -----------------------------------------------------------------------------


def test_graph_html_lists_names_avals_ops_inputs_params_and_lines():
    g = wg.trace(examples.loss, X, W, B)
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
    assert page == graph_html(wg.trace(examples.loss, X, W, B))  # deterministic


def test_graph_html_escapes_the_users_code():
    def f(x):
        return np.where(x < 0.5, x, 0.0) + (x > 1.0)

    page = graph_html(wg.trace(f, np.ones(3)))
    assert_well_formed(page)
    assert "x &lt; 0.5" in page and "x < 0.5" not in page
    assert "&lt;script" not in page and "<script" not in page


def test_graph_html_of_a_gradient_graph_shows_the_adjoints_and_the_tuple_returned():
    g = wg.grad_graph(wg.trace(examples.loss, X, W, B), argnums=(1, 2))
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
    assert re.search(r"guard bool\(t1\) == True\s+·\s+branchy · graph_examples\.py:\d+  "
                     r"if np\.sum\(x\) &gt; 0:", page)
    assert page.index(">t1<") < page.index("guard bool(t1)") < page.index(">t2<")


def test_importing_the_module_makes_it_the_html_repr_of_graphs():
    g = wg.trace(examples.loss, X, W, B)
    assert g._repr_html_() == graph_html(g)
    f = wg.compile(branchy)
    f(np.ones(3))
    assert html_of(f) == compiled_html(f)  # shown once Compiled has a _repr_html_


def test_params_text_never_shows_an_address():
    assert params_text({"f": lambda v: v, "axis": (0, 1)}) == "f=<lambda>, axis=(0, 1)"
    assert_clean(params_text({"obj": object(), "ufunc": np.add}))


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
    g = wg.trace(examples.loss, X, W, B)
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
def test_the_views_in_chromium_in_both_jupyterlab_themes(tmp_path, playwright_session):
    SHOTS.mkdir(parents=True, exist_ok=True)
    views = _views()
    colours: dict[str, str] = {}
    browser = playwright_session.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    try:
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
    finally:
        browser.close()
    assert not errors, errors
    assert colours["light"] != colours["dark"]  # the red is lighter on the dark theme


def test_a_tape_read_with_its_decompositions_grouped_names_inputs_by_their_variable():
    from wengert.core.equations import read_tape

    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    y = np.sum(w) + np.sum(v)
    grouped = read_tape([y.grad_fn.node])
    r = rows(tape_text(grouped, names={"t4": "sw", "t5": "sv"}))
    assert r["t2,"][1] == "t3"  # the parts of eigh: one row
    add = next(row for key, row in r.items() if "add" in row)
    assert "sw," in add and "sv" in add  # not the names of equations 3 and 4


def test_a_graph_card_lists_every_output_of_a_decomposition_in_one_row():
    from wengert.jupyter.views.html import graph_html, passes_html

    def f(a):
        w, v = np.linalg.eigh(a)
        return w, v * 2.0

    g = wg.trace(f, np.array([[2.0, 1.0], [1.0, 3.0]]))
    page = graph_html(g)
    assert_well_formed(page)
    row = next(r for r in page.split("<tr") if ">t2</span>" in r)
    assert ">t3</span>" in row and "f64[2], f64[2,2]" in row and ">eigh</span>" in row
    assert "eigh_vectors: dV" in row  # each part's rule, in the tooltip
    assert row.count("◀") == 1  # t2 is returned, t3 is not
    changed = passes_html(g, g.optimize(), "optimize")
    assert_well_formed(changed)
    assert ">t3</span>" in changed


def test_listing_html_takes_every_subject():
    from wengert.jupyter.views.html import listing_html

    x = wg.tensor(2.0, requires_grad=True)
    with wg.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x + 1.0
    for subject in (y, wg.tape_of(y), g, wg.trace(lambda x: x * x + 1.0, 2.0)):
        page = listing_html(subject)
        assert_clean(page)
        assert_well_formed(page)
        assert "multiply" in page or "×" in page
    with pytest.raises(TypeError, match="expected a tensor"):
        listing_html([1.0])


def test_every_table_and_the_drawing_bold_the_name_shown_and_grey_the_tapes():
    w = wg.tensor(0.8, requires_grad=True)
    h = w * 2.0
    y = h + 1.0
    tape = wg.tape_of(y)
    names = {"x0": "w", "t1": "y"}
    page = tape_html(tape, names=names)
    assert '<span class="wg-in-rg wg-name">w</span> <span class="wg-user">x0</span>' in page
    assert '<span class="wg-name">y</span> <span class="wg-user">t1</span>' in page
    assert '<span class="wg-name">t0</span></td>' in page  # no user name: the tape's
    source = dot_source(tape, names=names)
    assert "<B>y</B>" in source and "<B>w</B>" in source


def test_an_output_of_a_decomposition_the_sweep_did_not_reach_says_so():
    from wengert.jupyter.views.subject import AdjointCollector

    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    sw, sv = np.sum(w), np.sum(v)
    tape = wg.tape_of(sw, sv)  # both outputs on the tape, the sweep from Σw only
    collector = AdjointCollector(tape)
    with wg.observe_sweep(collector):
        sw.backward()
    eq = next(eq for eq in tape if len(eq.outs) == 2)
    assert eq.outs[0].name in collector.adjoints and eq.outs[1].name not in collector.adjoints
    row = rows(tape_text(tape, collector.adjoints))["t2,"]
    assert " ".join(row).endswith("[1, 1]; not reached")
    source = dot_source(tape, adjoints=collector.adjoints)
    assert "grad: not reached by the sweep" in source


def test_after_a_kept_backward_each_output_of_a_decomposition_shows_its_cotangent():
    from wengert.jupyter.views.subject import kept_adjoints

    with wg.keep_values():
        a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
        w, v = np.linalg.eigh(a)
        y = np.sum(w * 2.0) + np.sum(v[0])
        y.backward()
    tape = wg.tape_of(y)
    eq = next(eq for eq in tape if len(eq.outs) == 2)
    adjoints = kept_adjoints(tape)
    np.testing.assert_allclose(adjoints[eq.outs[0].name], [2.0, 2.0])
    np.testing.assert_allclose(adjoints[eq.outs[1].name], [[1.0, 1.0], [0.0, 0.0]])
    assert " ".join(rows(tape_text(tape, adjoints))["t2,"]).endswith("[2, 2]; [[1, 1], [0, 0]]")


def test_a_gradient_tapes_text_counts_the_equations_its_card_shows():
    a = wg.Variable(np.array([[2.0, 1.0], [1.0, 3.0]]))
    with wg.GradientTape() as g:
        w, _ = np.linalg.eigh(a)
        w.sum()
    n = len(g.recorded)
    assert n < len(g._nodes)  # eigh's parts are one equation
    assert repr(g) == f"<wg.GradientTape closed: {n} equations, 1 watched>"
    assert f"{n} equations" in g._repr_html_()
    with wg.GradientTape() as one:
        a * 2.0
    assert repr(one) == "<wg.GradientTape closed: 1 equation, 1 watched>"


def test_a_tapes_text_says_one_equation_and_one_leaf_in_the_singular():
    x = wg.tensor(2.0, requires_grad=True)
    assert repr(wg.tape_of(x * 3.0)) == "<Tape of 1 equation, 1 leaf>"
    assert repr(wg.tape_of(x * x + x)) == "<Tape of 2 equations, 1 leaf>"


def test_a_tensors_text_says_the_shape_of_an_empty_array_and_a_dtype_not_the_default():
    assert repr(wg.tensor(np.zeros((0, 3)))) == "tensor([], size=(0, 3))"
    assert repr(wg.tensor(np.zeros(0))) == "tensor([])"
    assert repr(wg.tensor(np.float32(1.5), requires_grad=True)) == \
        "tensor(1.5, dtype=float32, requires_grad=True)"
    assert repr(wg.tensor(np.ones(2, np.float16), requires_grad=True) * 2) == \
        "tensor([2., 2.], dtype=float16, grad_fn=<MultiplyBackward>)"
    for plain in (1.5, np.arange(2), np.array(True), np.array([1j])):
        assert "dtype" not in repr(wg.tensor(plain))
