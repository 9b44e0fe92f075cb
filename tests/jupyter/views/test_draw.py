"""wg.draw (wengert.jupyter.views.drawing): a graphviz.Digraph of the tape, shown as SVG, and the
tape table with one clear line when Graphviz's dot is missing or fails."""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest
from test_html import abc, assert_clean, assert_well_formed, loss

import numpy as np
import wengert as wg
from wengert.jupyter.views import drawing as draw_module
from wengert.jupyter.views.dot import dot_source
from wengert.jupyter.views.drawing import NOT_INSTALLED, draw
from wengert.jupyter.views.subject import names_from_namespace

graphviz = pytest.importorskip("graphviz")
HAS_DOT = shutil.which("dot") is not None


def test_draw_returns_a_digraph_with_the_tapes_dot_source():
    tape, adjoints, ns = abc()
    drawing = draw(ns["y"], adjoints=adjoints, names=names_from_namespace(tape, ns))
    assert isinstance(drawing, graphviz.Digraph)
    expected = dot_source(tape, adjoints=adjoints, names=names_from_namespace(tape, ns))
    assert drawing.source == expected
    assert repr(drawing) == "<wg.draw: 2 equations, 3 leaves>"
    copy = drawing.copy()
    assert repr(copy) == repr(drawing) and copy.source == drawing.source


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_the_notebook_shows_svg():
    tape, adjoints, ns = loss()
    drawing = draw(tape, adjoints=adjoints, names=names_from_namespace(tape, ns))
    bundle = drawing._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/plain"}
    svg = bundle["image/svg+xml"]
    assert svg.lstrip().startswith("<?xml") and "grad 3.9" in svg and "1.69" in svg
    assert bundle["text/plain"] == "<wg.draw: 4 equations, 2 leaves>"
    assert not re.search(r"0x[0-9a-fA-F]{3,}", svg)
    assert draw(tape)._repr_mimebundle_() == draw(tape)._repr_mimebundle_()  # deterministic


def test_without_dot_the_notebook_shows_one_line_and_the_table(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no dot anywhere
    tape, adjoints, ns = loss()
    drawing = draw(tape, adjoints=adjoints, names=names_from_namespace(tape, ns))
    bundle = drawing._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    page = bundle["text/html"]
    assert NOT_INSTALLED.replace("`", "") in page.replace("`", "")
    assert "apt-get install graphviz" in page and "brew install graphviz" in page
    assert "conda install graphviz" in page
    assert "t1 = t0 + b" in page and ">3.9<" in page and ">1.69<" in page  # the table
    assert page.count("Graphviz") == 1 and "Traceback" not in page
    assert_well_formed(page)
    assert_clean(page)
    with pytest.raises(graphviz.ExecutableNotFound):  # graphviz's own API still raises
        drawing.pipe()


def test_when_dot_fails_the_notebook_says_so_and_shows_the_table(monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: syntax error in line 1' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    tape, _, _ = abc()
    page = draw(tape)._repr_mimebundle_()["text/html"]
    assert "`dot` failed on this drawing (Error: syntax error in line 1)" in page
    assert "add" in page and "multiply" in page


def test_an_autodiff_result_passes_its_names_and_adjoints():
    tape, adjoints, ns = loss()
    result = SimpleNamespace(tape=tape, names={"x0": "weight"}, adjoints=adjoints)
    source = draw(result).source
    assert "<B>weight</B>" in source and "grad 3.9" in source
    overridden = draw(result, names={"x0": "w2"}, adjoints={}).source
    assert "<B>w2</B>" in overridden and "<I>grad 3.9" not in overridden
    assert ".grad 3.9" in overridden  # the leaf's own .grad still shows


@pytest.mark.parametrize("mode", ["forward", "both"])
def test_a_forward_mode_autodiff_result_shows_its_inputs_values(mode):
    # the card shows x = 1.5 and w = 0.8: its tape and drawing show them too (the
    # primals of the inputs' dual numbers), not a dash or a dtype
    from wengert.jupyter.magic.runner import run_autodiff

    r = run_autodiff("L = (x * w) ** 2", {}, ["x", "w"], mode=mode,
                     preset={"x": 1.5, "w": 0.8}, views=("value", "tape"))
    source = draw(r).source
    assert '<B>x</B><BR/><FONT POINT-SIZE="9">1.5</FONT>' in source
    assert '<B>w</B><BR/><FONT POINT-SIZE="9">0.8</FONT>' in source
    assert "f64[]" not in source
    card = re.sub(r"<[^>]+>", " ", r._repr_html_())
    assert re.search(r"x\s+x0\s+scalar\s+float64\s+True\s+1\.5", card)


def test_draw_targets_and_options():
    w = wg.Variable(2.0, name="w")
    with wg.GradientTape() as g:
        w * 3.0 + 1.0
    assert "<B>w</B>" in draw(g).source
    x = wg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(400):
        y = y * 1.01
    assert '"g:0"' in draw(y).source
    assert '"t399"' in draw(y, group=None).source
    assert '"t0"' in draw(y, expand=["t0–t19"]).source
    assert "blue double ring" not in draw(x * 2.0, legend=False).source
    with pytest.raises(TypeError, match="expected a tensor"):
        draw(np.ones(3))


def test_no_graphviz_import_until_draw_is_called():
    code = ("import sys, wengert.jupyter.views.drawing as d, wengert as wg; "
            "print('graphviz' in sys.modules); "
            "d.draw(wg.tensor(1.0, requires_grad=True) * 2.0); "
            "print('graphviz' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_docstring_examples_run():
    with np.printoptions(legacy=False):
        result = doctest.testmod(draw_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3


def test_a_name_that_two_values_have_is_not_used_in_the_drawing():
    # x is the cell's input (a leaf) and, after the loop, the variable x holds the last
    # update: "x ** 2" would not say which; the drawing keeps the tape's names there
    from wengert.jupyter.magic.runner import run_autodiff

    r = run_autodiff("for i in range(2):\n    x = x - 0.1 * 2 * x\nloss = np.sum(x ** 2)",
                     {"np": np}, ["x"], preset={"x": np.array([1.0, 2.0])})
    source = draw(r).source
    labels = re.findall(r"<B>([^<]*)</B>", source)
    assert labels.count("x") == 1  # the leaf only
    assert "t3 ** 2" in source and "x ** 2" not in source
    assert "loss" in labels  # a name no other value has is used


def test_draw_takes_every_subject():
    x = wg.tensor(2.0, requires_grad=True)
    with wg.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x + 1.0
    graph = wg.trace(lambda x: x * x + 1.0, 2.0)
    for subject in (y, wg.tape_of(y), g, graph):
        drawing = draw(subject)
        assert isinstance(drawing, graphviz.Digraph)
        assert "t0" in drawing.source and "t1" in drawing.source
        assert_clean(repr(drawing))
    assert repr(draw(graph)) == "<wg.draw: graph f, 2 equations, 1 input>"


def test_names_keyed_by_tensors_name_their_leaf_and_equation():
    from wengert.jupyter.views.subject import TapeNames

    a = wg.tensor(1.0, requires_grad=True)
    b = a * 2.0
    y = np.sin(b)
    tape = wg.tape_of(y)
    names = TapeNames(tape, {a: "a", b: "b"})
    assert names.leaf(0) == "a" and names.var(tape[0].out) == "b"
    assert '"a"' in wg.draw(y, names={a: "a"}).source or ">a<" in wg.draw(y, names={a: "a"}).source


def test_names_with_a_key_of_another_kind_or_a_tensor_off_the_tape_are_refused():
    a = wg.tensor(1.0, requires_grad=True)
    y = a * 2.0
    with pytest.raises(TypeError, match="names: a key must be"):
        wg.draw(y, names={1.5: "a"})
    with pytest.raises(ValueError, match="not on this tape"):
        wg.draw(y, names={wg.tensor(3.0, requires_grad=True): "c"})


def test_names_keyed_by_tensors_name_each_output_of_a_decomposition_and_what_follows():
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    y = np.sum(w) + np.sum(v)
    source = dot_source(wg.tape_of(y), names={w: "vals", v: "vecs", y: "y"})
    assert "<B>vals, vecs</B>" in source and ">t2, t3<" in source  # the tape's names under
    assert re.search(r"<B>y</B>&#160;=&#160;t\d \+ t\d", source), source
    found = names_from_namespace(wg.tape_of(y), {"w": w, "v": v, "y": y})
    assert found == {"t2": "w", "t3": "v", "t6": "y"}  # t6: the add, after t2 and t3


def test_a_drawing_after_a_kept_backward_shows_each_output_of_a_decomposition_its_grad():
    with wg.keep_values():
        a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
        w, v = np.linalg.eigh(a)
        y = np.sum(w * 2.0) + np.sum(v[0])
        y.backward()
    assert wg.draw(y).source.count("grad [") >= 3  # the leaf's, and each output's


def test_names_as_explore_takes_them_and_misuse_is_refused():
    # wg.explore(y, names={"w": w}) or ["w"]: the drawing takes the same forms
    w = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = (w ** 2).sum()
    for names in ({"w": w}, ["w"], {"x0": "w"}, {w: "w"}):
        assert "<B>w</B>" in wg.draw(y, names=names).source
    with pytest.raises(TypeError, match="a name must be a string"):
        wg.draw(y, names={"x0": 3})  # the leaf would read as the constant 3
    with pytest.raises(TypeError, match="one name"):
        wg.draw(y, names="w")


def _grad_lines(source: str) -> dict[str, str]:
    """The italic gradient line of each drawn node: name -> text."""
    found = {}
    for name, label in re.findall(r'^\s*"([^"]+)" \[label=<(.*)>,', source, flags=re.M):
        grad = re.search(r"<I>(\.?grad [^<]*)</I>", label)
        if grad:
            found[name] = grad.group(1)
    return found


def test_a_gradient_tape_is_drawn_with_the_adjoints_its_last_gradient_computed():
    from wengert.jupyter.views.html import gradient_tape_html

    with wg.keep_values():
        x = wg.tensor([1.0, 2.0])
        with wg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = np.sin(x) * x
        dx = tape.gradient(y, x, output_gradients=np.array([3.0, 5.0]))
    # d/dx sum(v * sin(x) * x) = v * (cos(x) * x + sin(x)); t0 = sin(x) receives v * x
    want = np.array([3.0, 5.0]) * (np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0]))
    np.testing.assert_allclose(dx.numpy(), want)
    assert tape.last_sweep is not None and tape.last_sweep.complete
    grads = _grad_lines(draw(tape).source)
    assert grads == {"x0": "grad [4.15, 0.385]", "t0": "grad [3, 10]", "t1": "grad [3, 5]"}
    page = gradient_tape_html(tape)
    assert "after gradient()" in page and "[4.145, 0.385]" in page and "[3, 10]" in page
    # A Jacobian runs one sweep per row: no one sweep's adjoints are shown after it.
    tape.jacobian(y, x)
    assert tape.last_sweep is None
    assert _grad_lines(draw(tape).source) == {}
    assert "after gradient()" not in gradient_tape_html(tape)


def test_a_gradient_tape_shows_no_adjoints_outside_the_view_keeping_mode():
    x = wg.tensor(2.0)
    with wg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).item() == 4.0
    assert tape.last_sweep is None
    with pytest.raises(RuntimeError, match="let go of what it recorded"):
        draw(tape)
