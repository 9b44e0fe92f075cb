"""The %%autodiff runner without IPython: inputs become leaves when bound, every mode
gives the right derivatives, the namespace is left plain, and misuse is refused."""

from __future__ import annotations

import importlib.util

import pytest

import numpy as np
import wengert as wg
from wengert.core.levels import DUAL_TAG
from wengert.core.modes import GRAD_ENABLED, RECORDERS, TRANSFORM_DEPTH
from wengert.jupyter.magic.runner import VIEWS, AutodiffUsageError, run_autodiff

LOSS = "t1 = x * w\nt2 = t1 + b\nL = (t2 - y) ** 2\n"
POINT = {"x": 1.5, "w": 0.8, "b": 0.1, "y": 1.0}
# L = (x w + b - y)^2 at POINT: r = 0.3, dL/dx = 2 r w, dL/dw = 2 r x, dL/db = 2 r, dL/dy = -2 r
EXPECTED = {"x": 0.48, "w": 0.9, "b": 0.6, "y": -0.6}


def _state():
    return GRAD_ENABLED.get(), RECORDERS.get(), TRANSFORM_DEPTH.get(), DUAL_TAG.get()


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_the_seed_loss_in_every_mode(mode):
    ns = {"np": np}
    r = run_autodiff(LOSS, ns, list(POINT), mode=mode, preset=POINT)
    assert r.output_name == "L" and r.value == pytest.approx(0.09)
    for name, g in EXPECTED.items():
        assert r.grads[name] == pytest.approx(g, abs=1e-15)
        assert type(r.grads[name]) is float
    assert r.mode == mode and r.inputs == ("x", "w", "b", "y")
    if mode == "both":
        assert r.agree and max(r.agreement.values()) < 1e-15
    else:
        assert r.agree is None
    # the namespace holds plain values afterwards
    for name in ("t1", "t2", "L", "x", "w"):
        assert type(ns[name]) is float, name
    assert ns["t1"] == pytest.approx(1.2)


def test_y_equals_a_plus_b_times_c_with_inputs_assigned_in_the_cell():
    ns = {}
    r = run_autodiff("a = 2.0\nb = 3.0\nc = 4.0\ny = (a + b) * c", ns, ["a", "b", "c"])
    assert (r.value, r.grads["a"], r.grads["b"], r.grads["c"]) == (20.0, 4.0, 4.0, 5.0)
    assert [eq.op.name for eq in r.tape] == ["add", "multiply"]
    assert r.adjoints == {"t1": 1.0, "t0": 4.0, "x0": 4.0, "x1": 4.0, "x2": 5.0}  # by variable


def test_the_leaf_starts_when_the_name_is_bound():
    # y uses x before x is rebound to a plain value: the gradient is with respect to the
    # value x holds from its (last) binding on; a use before it is a constant.
    r = run_autodiff("x = 1.0\nz = x * 3.0\nx = 2.0\nout = z + x ** 2", {}, ["x"])
    assert r.grads["x"] == 4.0 and r.value == 7.0


def test_a_value_computed_from_an_input_is_not_a_new_leaf():
    r = run_autodiff("x = 3.0\nx = x * x\nout = x + 1.0", {}, ["x"])
    assert r.grads["x"] == 6.0 and r.value == 10.0


def test_output_choice_last_expression_then_last_assigned_then_of():
    ns = {"np": np, "x": 2.0}
    assert run_autodiff("y = x ** 2\ny * 3", ns, ["x"]).grads["x"] == 12.0
    assert run_autodiff("y = x ** 2\nz = y * 5", ns, ["x"]).grads["x"] == 20.0
    r = run_autodiff("y = x ** 2\nz = y * 5", ns, ["x"], of="y")
    assert r.output_name == "y" and r.grads["x"] == 4.0
    assert run_autodiff("y = x ** 2\nz = y * 5", ns, ["x"]).output_name == "z"


def test_arrays_loops_and_numpy_calls():
    ns = {"np": np, "W": np.array([[1.0, 2.0], [3.0, 4.0]]), "v": np.array([0.5, -1.0])}
    src = "h = v\nfor _ in range(3):\n    h = np.tanh(W @ h)\nloss = np.sum(h ** 2)"
    r = run_autodiff(src, ns, ["W", "v"], mode="both")

    def f(W, v):
        h = v
        for _ in range(3):
            h = np.tanh(W @ h)
        return np.sum(h ** 2)
    gw, gv = wg.grad(f, argnums=(0, 1))(ns["W"], ns["v"])
    np.testing.assert_allclose(r.grads["W"], gw, rtol=1e-12)
    np.testing.assert_allclose(r.grads["v"], gv, rtol=1e-12)
    np.testing.assert_allclose(r.tangents["W"], gw, rtol=1e-12)
    assert r.agree
    assert type(ns["h"]) is np.ndarray and type(ns["W"]) is np.ndarray


def test_a_non_scalar_output_gives_the_jacobian_in_both_modes():
    ns = {"np": np, "x": np.array([0.3, -1.2, 2.0])}
    expected = wg.jacobian(lambda x: np.sin(x) * x[0])(ns["x"])
    for mode in ("reverse", "forward", "both"):
        r = run_autodiff("y = np.sin(x) * x[0]", ns, ["x"], mode=mode)
        assert r.grads["x"].shape == (3, 3)
        np.testing.assert_allclose(r.grads["x"], expected, rtol=1e-12)


def test_integer_inputs_become_floats_and_float32_stays():
    r = run_autodiff("y = x * x", {"x": 3}, ["x"])
    assert r.grads["x"] == 6.0
    r = run_autodiff("y = np.sum(x * x)", {"np": np, "x": np.ones(2, np.float32)}, ["x"])
    assert r.grads["x"].dtype == np.float32


def test_a_users_tensor_stays_a_tensor_and_stays_on_its_graph():
    t = wg.tensor(2.0, requires_grad=True)
    ns = {"t": t}
    r = run_autodiff("y = t ** 3", ns, ["t"])
    assert r.grads["t"] == 12.0 and ns["t"] is t


def test_tensors_inside_containers_are_made_plain():
    ns = {"np": np, "losses": []}
    run_autodiff("for k in range(3):\n    losses.append(x * k)\nout = losses[-1]", ns, ["x"],
                 preset={"x": 2.0})
    assert ns["losses"] == [0.0, 2.0, 4.0] and all(type(v) is float for v in ns["losses"])


def test_python_numbers_of_inputs_raise_instead_of_dropping_the_gradient():
    with pytest.raises(TypeError, match="float"):
        run_autodiff("import math\ny = math.exp(x)", {}, ["x"], preset={"x": 1.0})


def test_state_is_restored_after_an_exception_and_the_namespace_is_plain():
    before = _state()
    ns = {"np": np, "x": 2.0}
    with pytest.raises(ZeroDivisionError):
        run_autodiff("y = x * 3\n1 / 0", ns, ["x"])
    assert _state() == before
    assert type(ns["y"]) is float and ns["y"] == 6.0 and ns["x"] == 2.0
    with wg.no_grad():  # the cell records even when the notebook has grad mode off
        assert run_autodiff("y = x * 3", ns, ["x"]).grads["x"] == 3.0
        assert not wg.is_grad_enabled()


def test_an_output_that_does_not_depend_on_the_inputs_has_zero_derivatives():
    for mode in ("reverse", "forward"):
        r = run_autodiff("y = 5.0 * np.ones(2)", {"np": np, "x": 1.0}, ["x"], mode=mode)
        np.testing.assert_array_equal(r.grads["x"], np.zeros(2))


def test_size_zero_inputs():
    r = run_autodiff("y = np.sum(x) + z * 2.0", {"np": np, "x": np.zeros(0), "z": 1.0},
                     ["x", "z"], mode="both")
    assert r.grads["x"].shape == (0,) and r.grads["z"] == 2.0


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_an_empty_output_has_an_empty_jacobian_in_every_mode(mode):
    # (the drawing needs the graphviz package, which the NumPy-floor stage leaves out)
    views = [v for v in VIEWS if v != "graph" or importlib.util.find_spec("graphviz")]
    r = run_autodiff("y = x ** 2 + z", {"x": np.zeros(0), "z": 1.0}, ["x", "z"], mode=mode,
                     views=views)
    assert r.grads["x"].shape == (0, 0) and r.grads["z"].shape == (0,)
    assert "∂y/∂x = []" in repr(r) and r._repr_html_()


@pytest.mark.parametrize("source, inputs, kwargs, message", [
    ("y = 1.0", [], {}, "at least one input"),
    ("y = x", ["q"], {}, "neither defined"),
    ("y = 'text'", ["x"], {}, "must be a floating point"),
    ("y = x > 0", ["x"], {}, "dtype bool"),
    ("pass", ["x"], {}, "has no output"),
    ("y = x", ["x"], {"mode": "sideways"}, "--mode"),
    ("y = x", ["x"], {"of": "nothing"}, "did not define"),
    ("y = x", ["x"], {"views": ["tape", "pictures"]}, "--show"),
    ("y = np.sum(x)", ["x"], {"mode": "forward", "preset": {"x": np.ones(5000)}},
     "Use --mode reverse"),
    ("y = s", ["s"], {"preset": {"s": "text"}}, "numbers or arrays"),
    ("y = x * 1", ["x"], {"preset": {"x": 1j}}, "complex"),
])
def test_misuse_is_a_usage_error(source, inputs, kwargs, message):
    ns = {"np": np, "x": 1.5}
    with pytest.raises(AutodiffUsageError, match=message):
        run_autodiff(source, ns, inputs, **kwargs)


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
@pytest.mark.parametrize("source", ["y = (x > 0).sum()", "y = np.argmax(x)",
                                    "y = x.astype(int).sum()", "y = 3"])
def test_an_integer_output_is_refused_as_by_grad(source, mode):
    # it would show ∂y/∂x = 0, a number no sweep computed (wg.grad refuses it too)
    with pytest.raises(AutodiffUsageError, match=r"output 'y' is an integer \(int"):
        run_autodiff(source, {"np": np}, ["x"], mode=mode,
                     preset={"x": np.array([1.0, -2.0])})


def test_the_tape_has_values_and_the_users_lines():
    r = run_autodiff(LOSS, {}, list(POINT), preset=POINT, filename="<cell>")
    assert [eq.source.lineno for eq in r.tape] == [1, 2, 3, 3]
    assert r.tape[0].source.text == "t1 = x * w"
    assert r.tape[0].value == pytest.approx(1.2)
    names = {r.leaf_names[id(leaf)] for leaf in r.tape.leaves}
    assert names == {"x", "w", "b", "y"}


def test_forward_mode_tape_carries_one_perturbation_per_input():
    r = run_autodiff("y = x * w", {}, ["x", "w"], mode="forward", preset={"x": 2.0, "w": 3.0})
    value = r.tape[0].value
    tags = []
    while isinstance(value, wg.Dual):
        tags.append(value.tag.name)
        value = value.primal
    assert tags == ["∂w", "∂x"] and value == 6.0


def test_repr_is_deterministic_text():
    r1 = run_autodiff(LOSS, {}, list(POINT), preset=POINT, mode="both")
    r2 = run_autodiff(LOSS, {}, list(POINT), preset=POINT, mode="both")
    assert repr(r1) == repr(r2)
    assert "0x" not in repr(r1) and "∂L/∂w = 0.9" in repr(r1) and "agree" in repr(r1)


def test_the_plain_text_of_a_result_says_its_explanation():
    # a text-only front end (terminal IPython) shows --explain's answer too
    r = run_autodiff("y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))", {"np": np}, ["x"],
                     preset={"x": np.array([0.0, 4.0])}, explain="x", filename="<ex1>")
    text = repr(r)
    assert text.startswith("%%autodiff (reverse mode): y = 2")
    assert "gradient of y with respect to x: NaN" in text and "double where" in text
    assert str(r.explanation).splitlines()[0] in text


def test_the_plain_text_of_a_jacobian_puts_one_space_between_rows():
    r = run_autodiff("y = x ** 2", {}, ["x"], preset={"x": np.arange(3.0)})
    assert "∂y/∂x = [[0., 0., 0.], [0., 2., 0.], [0., 0., 4.]]" in repr(r)


def test_a_users_constant_tensor_in_the_namespace_is_left_alone():
    c = wg.tensor([2.0, 3.0])
    ns = {"np": np, "c": c}
    r = run_autodiff("y = np.sum(x * c)", ns, ["x"], preset={"x": np.ones(2)})
    np.testing.assert_array_equal(r.grads["x"], [2.0, 3.0])
    assert ns["c"] is c and type(r.grads["x"]) is np.ndarray


def test_explain_names_the_nan_through_where_and_the_no_grad_cut():
    r = run_autodiff("y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))", {"np": np}, ["x"],
                     preset={"x": np.array([0.0, 4.0])}, explain="x", filename="<ex1>")
    e = r.explanation
    assert (e.status, e.cause, e.op, e.source.lineno) == ("nan", "where_nan", "sqrt", 1)
    assert "double where" in e.fix.lower() and "why" in r._repr_html_()
    r = run_autodiff("with wg.no_grad():\n    z = x * 2\ny = z + 1.0", {"wg": wg}, ["x"],
                     preset={"x": 2.0}, explain="x", filename="<ex2>")
    assert (r.explanation.status, r.explanation.cause) == ("none", "no_grad")
    assert r.grads["x"] == 0.0
    with pytest.raises(AutodiffUsageError, match="--explain q"):
        run_autodiff("y = x", {"x": 1.0}, ["x"], explain="q")


def test_explain_of_a_vector_output_says_it_is_the_sum_not_the_jacobian():
    r = run_autodiff("z = x - x.mean()", {"np": np}, ["x"],
                     preset={"x": np.array([1.0, 2.0, 4.0])}, explain="x")
    assert not np.allclose(r.grads["x"], 0)  # the card's Jacobian
    e = r.explanation
    assert e.status == "zero" and "not a scalar" in e.notes[0]
    assert "sum of the rows of its Jacobian" in e.notes[0]


@pytest.mark.parametrize("mode, steps", [("reverse", 9), ("forward", 4), ("both", 9)])
def test_explore_a_result_in_every_mode(mode, steps):
    pytest.importorskip("anywidget")
    r = run_autodiff(LOSS, {}, list(POINT), preset=POINT, mode=mode, filename=f"<x{mode}>",
                     views=("value", "grads", "adjoint", "vjp"))
    view = r.explore()
    assert view.frames["steps"]["total"] == steps
    html = r._repr_html_()  # the sweep tables read the same frames
    assert ("no reverse sweep" in html) == (mode == "forward")


def test_the_notebooks_numbers_are_named_in_the_views():
    # x and y held by the notebook before the cell are constants here: named, not "1.5"
    pytest.importorskip("anywidget")
    r = run_autodiff("L = (x * w + b - y) ** 2", {}, ["w", "b"],
                     preset={"x": 1.5, "w": 0.8, "b": 0.1, "y": 1.0}, filename="<named>")
    assert r.names[(0, 0)] == "x" and r.names[(2, 1)] == "y"
    names = r.explore().data["nodes"]["name"]
    assert {"x", "y", "w", "b", "L"} <= set(names)


def test_each_cell_shows_its_own_lines_under_the_default_file_name():
    first = run_autodiff("y = x * 2", {}, ["x"], preset={"x": 1.0})
    second = run_autodiff("z = x * 3", {}, ["x"], preset={"x": 1.0})
    assert first.tape[0].source.text == "y = x * 2"
    assert second.tape[0].source.text == "z = x * 3"


def test_a_value_left_out_of_reach_names_the_cell_when_used_again():
    import argparse  # an object of a library's class: not searched

    ns = {"argparse": argparse}
    run_autodiff("holder = argparse.Namespace()\nholder.v = x * 2\ny = x * 1.0", ns, ["x"],
                 preset={"x": 2.0})
    with pytest.raises(RuntimeError, match=r"computed in the %%autodiff cell .*x.numpy\(\)"):
        exec("holder.v * 3", ns)


def test_a_cell_run_inside_a_cell_keeps_the_outer_cells_hooks():
    ns = {"np": np}
    ns["inner"] = lambda: run_autodiff("q = w * 3.0", ns, ["w"], preset={"w": 1.0})
    r = run_autodiff("a = x * 2\nres = inner()\nb = x * 5", ns, ["x"], preset={"x": 1.0})
    assert (r.output_name, r.grads["x"]) == ("b", 5.0) and ns["res"].grads["w"] == 3.0


@pytest.mark.parametrize("cut", ["with wg.no_grad():\n    c = x * 2", "c = x.detach() * 2"])
def test_a_cut_that_stops_only_reverse_mode_is_said_in_forward_mode(cut):
    # forward mode differentiates through no_grad and detach (as PyTorch's forward AD)
    ns = {"np": np, "wg": wg}
    src = cut + "\ny = np.sum(c * x)"
    x = np.array([0.7, -1.2])
    r = run_autodiff(src, ns, ["x"], mode="forward", preset={"x": x})
    np.testing.assert_allclose(r.grads["x"], 4 * x)
    assert "reverse mode does not differentiate through it, forward mode does" in r.notes[0]
    r = run_autodiff(src, ns, ["x"], mode="both", preset={"x": x})
    assert not r.agree and "two modes give different derivatives" in r.notes[0]
    r = run_autodiff("y = np.sum(wg.stop_gradient(x) * 2 * x)", ns, ["x"], mode="both",
                     preset={"x": x})
    assert r.agree and r.notes == ()


def test_the_results_numbers_do_not_follow_later_changes_of_the_notebooks_arrays():
    # the notebook keeps using its arrays after the cell; what the card shows stays what
    # the cell computed
    x = np.array([1.0, 2.0])
    ns = {"np": np, "x": x}
    r = run_autodiff("y = x * 3.0\nL = np.sum(y ** 2)", ns, ["x"], views=("value", "grads",
                                                                           "tape"))
    before = r._repr_html_()
    x[0] = 100.0
    ns["y"][0] = 999.0
    np.testing.assert_array_equal(r.input_values["x"], [1.0, 2.0])
    np.testing.assert_array_equal(r.tape[0].value, [3.0, 6.0])
    np.testing.assert_array_equal(r.tape.leaves[0].numpy(), [1.0, 2.0])
    assert r._repr_html_() == before


def test_an_input_changed_in_place_through_another_name_is_refused():
    # NumPy would change the input while the cell differentiates at it: its value would be
    # no single point
    a = np.array([1.0, 2.0])
    ns = {"np": np, "a": a, "x": a}
    with pytest.raises(AutodiffUsageError, match=r"'x' .*changed in place.*\ba\b"):
        run_autodiff("L1 = np.sum(x * 2)\na[0] = 100.0\nL = L1 + np.sum(x ** 2)", ns, ["x"])
    assert ns["x"] is a


def test_the_sweep_tables_of_a_non_scalar_output_say_which_sweep_they_show():
    # the card's Jacobian took one sweep per output entry; the step tables show one sweep
    # from ones, the gradient of the sum: they say so
    r = run_autodiff("L = np.sin(x) * 3.0", {"np": np}, ["x"], preset={"x": np.array([0.5, 1.0])},
                     views=("value", "grads", "adjoint", "vjp"))
    html = r._repr_html_()
    assert html.count("the gradient of the sum of its 2 entries") == 2
    r = run_autodiff("L = np.sum(np.sin(x))", {"np": np}, ["x"],
                     preset={"x": np.array([0.5, 1.0])}, views=("value", "adjoint"))
    assert "the gradient of the sum" not in r._repr_html_()


def test_a_constant_the_notebook_changes_in_place_after_the_cell_is_not_replayed():
    # the explorer would replay the sweep with X's new values: -303 where the card says -6
    pytest.importorskip("anywidget")
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    ns = {"np": np, "X": X, "yv": np.array([1.0, 0.0])}
    r = run_autodiff("L = np.sum((X @ w - yv) ** 2)", ns, ["w"],
                     preset={"w": np.array([0.5, -0.5])}, views=("value", "grads", "graph",
                                                                 "tape", "adjoint"))
    np.testing.assert_array_equal(r.grads["w"], [-6.0, -10.0])
    X[0, 0] = 100.0
    with pytest.raises(RuntimeError, match=r"X\b.*changed in place since the cell ran"):
        r.explore()
    with pytest.raises(RuntimeError, match=r"X\b.*changed in place since the cell ran"):
        wg.explore(r)
    html = r._repr_html_()
    assert "[[100," not in html and "changed in place since the cell ran" in html
    assert "[[100," not in r.graph.source
    assert r.tape[0].inputs[0].value is None  # the tape no longer shows it
    # a result whose frames were made before the change keeps them
    X2 = np.array([[1.0, 2.0], [3.0, 4.0]])
    ns["X"] = X2
    r2 = run_autodiff("L = np.sum((X @ w - yv) ** 2)", ns, ["w"],
                      preset={"w": np.array([0.5, -0.5])}, views=("value", "adjoint"))
    r2._repr_html_()
    X2[0, 0] = 100.0
    assert "-303" not in str(r2.explore().frames)


@pytest.mark.parametrize("name", ["magic.runner", "magic.bindings", "magic.plain",
                                  "magic.cell", "magic.card", "views.sweep", "views.subject"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"wengert.jupyter.{name}")
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_a_decomposition_in_a_cell_is_one_equation_on_the_card_and_in_its_sweep_tables():
    import re
    r = run_autodiff("w, v = np.linalg.eigh(a)\nL = np.sum(w * 2.0) + np.sum(v ** 2)",
                     {"np": np}, ["a"], preset={"a": np.array([[2.0, 1.0], [1.0, 3.0]])},
                     views=("value", "grads", "tape", "adjoint", "vjp"))
    text = re.sub(r"\s+", " ", re.sub("<[^>]+>", " ", r._repr_html_()))
    assert "w, v t2, t3 eigh t1 2, 2×2" in text  # the tape: one row, both outputs named
    assert "[2, 2]; [[" in text  # and the cotangent of each
    assert "t5 Σ sum t4" in text and "t6 ** power v, 2" in text  # each output by its name
    # the sweep: one step, each output's cotangent, one rule per input adding their terms
    assert "w, v = eigh(t1) w̄ = [2, 2]; v̄ = [[" in text
    assert "t̄1 += (V diag(w̄) Vᵀ) + (sym(v (F ∘ (vᵀ v̄)) vᵀ))" in text
    assert text.count("w, v = eigh(t1)") == 2  # the adjoint and the VJP tables
    assert "eigh_values" not in text and "eigh_vectors" not in text
    np.testing.assert_allclose(r.grads["a"], [[2.0, 0.0], [0.0, 2.0]], atol=1e-12)


@pytest.mark.parametrize("source, point, agree", [
    ("y = np.sqrt(x)", 0.0, True),  # inf in both modes
    ("y = np.sqrt(x) * 0.0", 0.0, True),  # NaN in both modes
    ("y = x ** 2", 3.0, True),
])
def test_modes_that_give_the_same_infinity_or_nan_agree(source, point, agree):
    with np.errstate(all="ignore"):
        r = run_autodiff(source, {"np": np}, ["x"], preset={"x": point}, mode="both")
    assert r.agree is agree and "DISAGREE" not in repr(r)
    assert "largest difference 0.0e+00" in repr(r)


def test_an_infinity_against_a_finite_number_is_a_disagreement():
    from wengert.jupyter.magic.card import modes_agree, modes_difference
    d = modes_difference(np.array([np.inf, 1.0]), np.array([1e300, 1.0]))
    assert d == np.inf and not modes_agree(d, np.array([np.inf, 1.0]))
    assert modes_difference(np.array([np.nan]), np.array([1.0])) == np.inf


def test_run_autodiff_takes_all_views_as_the_magic_does():
    r = run_autodiff("y = x ** 2", {}, ["x"], views=["all"], preset={"x": 3.0})
    assert r.views == VIEWS and r.grads["x"] == 6.0
    with pytest.raises(AutodiffUsageError, match="choose among"):
        run_autodiff("y = x ** 2", {}, ["x"], views=["tapes"], preset={"x": 3.0})
