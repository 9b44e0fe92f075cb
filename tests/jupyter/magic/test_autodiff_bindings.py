"""%%autodiff sees every binding Python can make: inputs bound by any binding form become
leaves, the output is the last binding executed, and where a binding cannot be followed
the result says so instead of showing a derivative."""

from __future__ import annotations

import ast
import contextlib

import pytest

import numpy as np
import wengert as wg
from wengert.jupyter.magic.cell import rewrite_cell
from wengert.jupyter.magic.runner import AutodiffUsageError, run_autodiff


def _run(source, inputs, mode="reverse", **ns):
    namespace = {"np": np, "wg": wg, "contextlib": contextlib, **ns}
    return run_autodiff(source, namespace, inputs, mode=mode), namespace


# -- binding forms ----------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_augmented_assignment_on_an_input_acts_as_out_of_place(mode):
    # s *= 3.0 on the leaf is s = s * 3.0: the input is the value s held first (2.0)
    r, ns = _run("s = 2.0\ns *= 3.0\ny = s ** 2", ["s"], mode)
    assert (r.value, r.grads["s"], r.input_values["s"]) == (36.0, 36.0, 2.0)
    assert ns["s"] == 6.0 and type(ns["s"]) is float
    r, _ = _run("s = 2.0\ns = s * 3.0\ny = s ** 2", ["s"], mode)
    assert r.grads["s"] == 36.0


def test_augmented_assignments_chain_and_on_an_input_defined_before():
    r, ns = _run("x **= 2\nx -= 1\ny = x * 1.0", ["x"], x=2.0)
    assert (r.value, r.grads["x"], r.input_values["x"]) == (3.0, 4.0, 2.0)
    r, ns = _run("x += 1\ny = np.sum(x ** 2)", ["x"], x=np.array([1.0, 2.0]))
    np.testing.assert_array_equal(r.grads["x"], [4.0, 6.0])
    np.testing.assert_array_equal(ns["x"], [2.0, 3.0])


def test_augmented_assignment_on_a_computed_value_stays_in_place():
    # y is computed from the input: y += 1 is the in-place operation, seen through z
    r, ns = _run("y = x * 2\nz = y\ny += 1\nout = np.sum(z * 1.0)", ["x"],
                 x=np.array([1.0, 2.0]))
    assert r.value == 8.0
    np.testing.assert_array_equal(r.grads["x"], [2.0, 2.0])


def test_augmented_assignment_on_an_aliased_input_array_is_refused():
    with pytest.raises(AutodiffUsageError, match=r"x \+= .*line 2.*'b' holds the same array"):
        _run("b = x\nx += 1\ny = np.sum(b * x)", ["x"], x=np.array([1.0, 2.0]))


@pytest.mark.parametrize("source", [
    "(x := 3.0)\ny = x ** 2",
    "y = (x := 3.0) ** 2",
    "vals = [(x := 3.0) ** 2 for _ in range(1)]\ny = x ** 2",
    "y = sum((x := v) ** 2 for v in [3.0])",
])
def test_walrus_binds_an_input_also_inside_comprehensions(source):
    r, ns = _run(source, ["x"])
    assert (r.value, r.grads["x"], r.input_values["x"]) == (9.0, 6.0, 3.0)
    assert type(ns["x"]) is float


def test_walrus_in_a_comprehension_that_is_the_last_expression():
    r, _ = _run("[(x := 3.0) ** 2 for _ in range(1)]", ["x"])
    assert r.output_name == "x" and r.grads["x"] == 1.0
    assert "last expression is a list, not a number" in r.notes[0]


@pytest.mark.parametrize("source, value, grad", [
    ("for x in [1.0, 2.0]:\n    pass\ny = x ** 3", 8.0, 12.0),
    ("with contextlib.nullcontext(3.0) as x:\n    y = x ** 2", 9.0, 6.0),
    ("a, *x = [1.0, 2.0, 3.0]\ny = np.sum(x ** 2)", 13.0, [4.0, 6.0]),
    ("(a, (x, b)) = (1.0, (2.0, 3.0))\ny = x * b", 6.0, 3.0),
    ("p = q = x = 2.0\ny = x * 5", 10.0, 5.0),
    ("x: float = 2.0\ny = x * 5", 10.0, 5.0),
    ("match [1.0, 2.0]:\n    case [a, x]:\n        y = a * x ** 2", 4.0, 4.0),
    ("match {'k': 2.0}:\n    case {'k': x}:\n        y = x ** 2", 4.0, 4.0),
    ("from math import pi as x\ny = x * 2", 2 * np.pi, 2.0),
    ("try:\n    x = 2.0\nfinally:\n    y = x ** 2", 4.0, 4.0),
    ("x = 3.0\ndel x\nx = 5.0\ny = x ** 2", 25.0, 10.0),
])
def test_every_statement_that_binds(source, value, grad):
    r, _ = _run(source, ["x"])
    assert r.value == pytest.approx(value)
    np.testing.assert_allclose(r.grads["x"], grad)


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_global_in_a_function_defined_in_the_cell_is_followed(mode):
    r, ns = _run("def f():\n    global x\n    x = 4.0\nf()\ny = x ** 2", ["x"], mode, x=1.0)
    assert (r.value, r.grads["x"], r.input_values["x"]) == (16.0, 8.0, 4.0)
    assert ns["x"] == 4.0 and type(ns["x"]) is float
    r, _ = _run("def f():\n    global x\n    x += 1.0\nf()\ny = x ** 2", ["x"], mode, x=1.0)
    assert (r.value, r.grads["x"], r.input_values["x"]) == (4.0, 4.0, 1.0)


def test_global_in_nested_functions_and_class_bodies():
    src = ("def outer():\n    def inner():\n        global x\n        x = 4.0\n    inner()\n"
           "outer()\ny = x ** 2")
    assert _run(src, ["x"], x=1.0)[0].grads["x"] == 8.0
    r, _ = _run("class C:\n    global x\n    x = 3.0\ny = x ** 2", ["x"])
    assert r.grads["x"] == 6.0


def test_a_function_of_the_cell_runs_as_written_after_it():
    # the hooks in its body do nothing outside the run, in a later plain cell
    r, ns = _run("def f(v):\n    global x\n    x = v\n    x *= 2\n    return x\ny = f(1.5) ** 2",
                 ["x"], x=1.0)
    assert r.grads["x"] == 12.0  # y = (2 x)², x = 1.5
    exec("z = f(5.0)", ns)
    assert ns["z"] == 10.0 and ns["x"] == 10.0


def test_a_function_of_an_earlier_cell_rebinding_the_input_is_followed():
    ns = {"np": np}
    run_autodiff("def reset():\n    global x\n    x = 4.0\ny = x * 1.0", ns, ["x"],
                 preset={"x": 1.0})
    r = run_autodiff("reset()\nq = x ** 2", ns, ["x"])
    assert r.grads["x"] == 8.0 and r.input_values["x"] == 4.0


def test_function_parameters_named_like_a_cell_variable_are_their_own():
    r, _ = _run("def f(x):\n    return x ** 2\ny = f(x) + f(3.0)", ["x"], x=2.0)
    assert (r.value, r.grads["x"]) == (13.0, 4.0) and r.notes == ()


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_an_input_that_is_only_a_parameter_is_followed_at_each_call(mode):
    r, _ = _run("def f(x):\n    '''doc'''\n    return x ** 2\ny = f(3.0)", ["x"], mode)
    assert (r.value, r.grads["x"], r.input_values["x"]) == (9.0, 6.0, 3.0)
    assert "no variable of the cell" in r.notes[0] and "a parameter in f" in r.notes[0]
    r, ns = _run("g = lambda x: x * 5\ny = g(2.0)", ["x"], mode)
    assert r.grads["x"] == 5.0 and ns["g"](1.0) == 5.0
    r, _ = _run("g = lambda: (x := 3.0) * 2\ny = g()", ["x"], mode)
    assert r.grads["x"] == 2.0


def test_a_parameter_bound_at_two_calls_gives_the_last_and_says_what_is_left_out():
    r, _ = _run("def f(x):\n    return x ** 2\ny = f(3.0) + f(4.0)", ["x"])
    assert (r.value, r.grads["x"]) == (25.0, 8.0)
    assert "∂y = 6, not included" in r.notes[1]
    r, _ = _run("def f(x):\n    return x ** 2\ny = f(3.0) + f(4.0)", ["x"], "forward")
    assert r.grads["x"] is None and "use --mode reverse" in r.notes[1]
    r, _ = _run("def f(x):\n    return x ** 2\ny = f(3.0) + f(4.0)", ["x"], "both")
    assert r.grads["x"] == 8.0 and r.tangents["x"] is None and "x" not in r.agreement


def test_nonlocal_rebinding_of_an_inner_input():
    src = ("def outer():\n    x = 1.0\n    def inner():\n        nonlocal x\n        x = x * 3\n"
           "    inner()\n    return x\ny = outer()")
    r, _ = _run(src, ["x"])
    assert (r.value, r.grads["x"]) == (3.0, 3.0)


# -- which value is the input ----------------------------------------------------------------
def test_an_input_defined_before_the_cell_is_a_leaf_from_the_start():
    # x = x * 2 continues the leaf: the derivative is at x's value before the cell
    r, ns = _run("x = x * 2\ny = x ** 2", ["x"], x=3.0)
    assert (r.value, r.grads["x"], r.input_values["x"]) == (36.0, 24.0, 3.0)
    assert ns["x"] == 6.0
    assert "rebound once" in r.notes[0] and "before the cell" in r.notes[0]


def test_a_gradient_descent_loop_differentiates_through_every_update():
    src = "x = 2.0\nfor i in range(3):\n    x = x - 0.1 * 2 * x\n    loss = x ** 2"
    for mode in ("reverse", "forward", "both"):
        r, ns = _run(src, ["x"], mode)
        # loss = (0.8³ x₀)², d loss/d x₀ = 2 · 0.8⁶ · x₀
        assert r.output_name == "loss" and r.grads["x"] == pytest.approx(2 * 0.8 ** 6 * 2.0)
        assert r.input_values["x"] == 2.0 and ns["x"] == pytest.approx(1.024)
        assert "rebound 3 times" in r.notes[1] and "through every update" in r.notes[1]


def test_a_new_plain_value_makes_a_new_leaf_and_the_rest_is_reported():
    r, _ = _run("x = 1.0\nz = x * 3.0\nx = 2.0\nout = z + x ** 2", ["x"])
    assert (r.value, r.grads["x"], r.input_values["x"]) == (7.0, 4.0, 2.0)
    assert "earlier value of x: 1 (line 1" in r.notes[0] and "∂out = 3" in r.notes[0]
    r, _ = _run("x = 1.0\nz = x * 3.0\nx = 2.0\nout = z + x ** 2", ["x"], "both")
    assert r.grads["x"] == 4.0 and r.tangents["x"] is None and r.agree


def test_forward_mode_does_not_mix_the_tangents_of_two_values_of_an_input():
    # one tangent for x went through both values: the forward number would be 7
    r, _ = _run("x = 1.0\nz = x * 3.0\nx = 2.0\nout = z + x ** 2", ["x"], "forward")
    assert r.grads["x"] is None and "cannot tell the last value's part" in r.notes[0]


def test_an_unused_earlier_value_is_not_mentioned():
    r, _ = _run("x = 5.0\ny = x ** 2", ["x"], x=1.0)
    assert (r.grads["x"], r.notes) == (10.0, ())
    r, _ = _run("x = 5.0\ny = x ** 2", ["x"], "forward", x=1.0)
    assert (r.grads["x"], r.notes) == (10.0, ())


def test_a_non_numeric_value_before_the_cell_waits_for_the_cells_binding():
    r, ns = _run("x = np.array(x)\ny = np.sum(x ** 2)", ["x"], x=[1.0, 2.0])
    np.testing.assert_array_equal(r.grads["x"], [2.0, 4.0])
    r, _ = _run("x = 2.0\ny = x ** 2", ["x"], x=None)
    assert r.grads["x"] == 4.0


def test_a_non_numeric_binding_says_where():
    with pytest.raises(AutodiffUsageError, match=r"input 'x' is function.*line 1, a def"):
        _run("def x():\n    pass\ny = 1.0", ["x"])
    with pytest.raises(AutodiffUsageError, match=r"NoneType.*line 2, an assignment"):
        _run("y = 1.0\nx = None", ["x"])


@pytest.mark.parametrize("source, message", [
    ("for x in []:\n    pass\ny = 2.0", r"never bound: its bindings \(line 1, a for target"),
    ("if False:\n    x = 3.0\ny = 2.0", r"line 2, an assignment in an if block\) did not run"),
    ("y = [x ** 2 for x in range(3)]", "only at line 1, a comprehension variable"),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as x:\n    y = 1.0",
     "only at line 3, an except ... as"),
    ("def f():\n    x = 1.0\ny = 2.0", r"line 2, an assignment in f\) did not run"),
])
def test_an_input_that_was_never_bound_says_why(source, message):
    with pytest.raises(AutodiffUsageError, match=message):
        _run(source, ["x"])


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_an_input_bound_only_to_values_of_the_other_inputs_says_so(mode):
    # its binding ran: the refusal must not say that it did not
    with pytest.raises(AutodiffUsageError) as caught:
        _run("y = x ** 2\nz = y + 1", ["x", "y"], mode=mode, x=2.0)
    message = str(caught.value)
    assert "did not run" not in message
    assert "input 'y' has no value of its own" in message
    assert "(line 1, an assignment) to a value computed from the other inputs" in message
    with pytest.raises(AutodiffUsageError, match=r"line 1, a parameter in f\) to a value "):
        _run("def f(y):\n    return y * 2\nz = f(x ** 2)", ["x", "y"], mode=mode, x=2.0)


def test_a_loop_that_runs_zero_times_keeps_the_value_before_the_cell():
    r, _ = _run("for x in []:\n    pass\ny = x * 2", ["x"], x=2.0)
    assert (r.value, r.grads["x"]) == (4.0, 2.0)


# -- bindings the rewrite cannot see -------------------------------------------------------
@pytest.mark.parametrize("source", [
    "exec('x = 5.0')\ny = x ** 2",
    "globals()['x'] = 5.0\ny = x ** 2",
])
@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_an_untracked_rebinding_shows_no_derivative_and_says_why(source, mode):
    r, ns = _run(source, ["x"], mode, x=2.0)
    assert r.value == 25.0 and r.grads["x"] is None
    assert "cannot see" in r.notes[0] and "holds 5" in r.notes[0]
    assert "∂y/∂x = —" in repr(r) and "not known" in r._repr_html_()
    assert ns["x"] == 5.0


def test_a_function_of_another_plain_cell_rebinding_the_input_is_reported():
    ns = {"np": np}
    exec("def reset():\n    global x\n    x = 4.0", ns)
    r = run_autodiff("reset()\ny = x ** 2", ns, ["x"], preset={"x": 1.0})
    assert r.grads["x"] is None and "cannot see" in r.notes[0]


# -- the output -------------------------------------------------------------------------------
@pytest.mark.parametrize("source, name, grad", [
    ("x = 1.0\nif True:\n    y = x * 2\nelse:\n    z = 1.0", "y", 2.0),
    ("x = 1.0\nk = 0\nwhile k < 2:\n    y = x * 2\n    k += 1", "y", 2.0),
    ("x = 1.0\nwith contextlib.nullcontext():\n    y = x * 3", "y", 3.0),
    ("x = 1.0\ntry:\n    y = x * 4\nexcept ValueError:\n    pass", "y", 4.0),
    ("x = 1.0\ndef f():\n    global y\n    y = x * 5\nf()", "y", 5.0),
    ("x = 1.0\ny = x * 7\nlen([1])", "y", 7.0),
    ("x = 1.0\ny = x * 8\n_ = None", "y", 8.0),
])
def test_the_output_is_the_last_binding_executed(source, name, grad):
    r, _ = _run(source, ["x"])
    assert (r.output_name, r.grads["x"]) == (name, grad)
    assert f"The output is {name}" in r.notes[0] and "--of NAME" in r.notes[0]


def test_the_last_binding_executed_not_the_last_written():
    src = "x = 1.0\nfor i in range(2):\n    y = x * i\n    if i == 0:\n        z = x * 10"
    r, _ = _run(src, ["x"])
    assert (r.output_name, r.value, r.grads["x"]) == ("y", 1.0, 1.0)
    assert "line 3, an assignment in a for loop" in r.notes[0]


def test_a_plain_cell_gets_no_note():
    r, _ = _run("a = 2.0\nb = a * x\nL = b ** 2", ["x"], x=1.5)
    assert r.output_name == "L" and r.notes == ()
    r, _ = _run("y = x * 6\nprint(end='')", ["x"], x=1.0)  # a last expression of None
    assert (r.output_name, r.grads["x"], r.notes) == ("y", 6.0, ())


def test_an_input_as_the_output_is_said_and_another_suggested():
    r, _ = _run("w = 1.0\nfor _ in range(2):\n    loss = (w - 3.0) ** 2\n"
                "    w = w - 0.1 * 2 * (w - 3.0)", ["w"])
    assert r.output_name == "w" and r.grads["w"] == pytest.approx(0.8 ** 2)
    assert "w is an input" in r.notes[0] and "--of loss" in r.notes[0]


@pytest.mark.parametrize("held", [[1.0, 2.0], (1.0, 2.0)])
def test_a_list_held_before_the_cell_is_refused_as_an_input(held):
    # in the cell it would be an array: x + [3.0] would add, not concatenate, and the card
    # would show a number the plain cell does not compute
    with pytest.raises(AutodiffUsageError, match=r"np\.array\(x\)"):
        _run("z = x + [3.0]\ny = np.sum(np.stack(z))", ["x"], x=held)
    r, _ = _run("a, *x = [1.0, 2.0, 3.0]\ny = np.sum(x ** 2)", ["x"], x=held)
    assert r.value == 13.0  # a list the cell binds is an array from there on, as before


def test_an_input_rebound_to_a_constant_as_the_output_points_to_no_missing_note():
    r, _ = _run("y = x ** 2\nx = 7.0", ["x"], x=1.5)
    assert r.output_name == "x" and r.grads["x"] == 1.0 and len(r.notes) == 1
    assert "x is an input" in r.notes[0] and "see below" not in r.notes[0]
    assert "--of y" in r.notes[0]


def test_of_overrides_and_a_cell_of_non_numbers_has_no_output():
    r, _ = _run("x = 1.0\nfor i in range(2):\n    y = x * i", ["x"])
    assert r.output_name == "y"
    r = run_autodiff("x = 1.0\nfor i in range(2):\n    y = x * i", {}, ["x"], of="x")
    assert (r.output_name, r.grads["x"], r.notes) == ("x", 1.0, ())
    with pytest.raises(AutodiffUsageError, match="'s' is str; it must be a floating point"):
        run_autodiff("s = 'text'", {"x": 1.0}, ["x"])


# -- the rewrite ----------------------------------------------------------------------------
def test_the_rewrite_keeps_docstrings_and_future_imports():
    ns = {}
    r = run_autodiff("from __future__ import annotations\ndef f(x):\n    '''doc'''\n"
                     "    return x * 3\ny = f(2.0)", ns, ["x"])
    assert ns["f"].__doc__ == "doc" and (r.value, r.grads["x"]) == (6.0, 3.0)


def test_the_rewrite_keeps_the_users_line_numbers():
    cell = rewrite_cell("a = 1\nfor x in range(2):\n    b = x\n(c := 3)", ["x", "c"])
    lines = {n.lineno for n in ast.walk(cell.tree) if hasattr(n, "lineno")}
    assert lines == {1, 2, 3, 4}


def test_a_cell_run_twice_gives_the_same_result_and_a_plain_namespace():
    ns = {"np": np}
    src = "x = 2.0\nfor i in range(3):\n    x = x - 0.1 * 2 * x\n    loss = x ** 2"
    r1 = run_autodiff(src, ns, ["x"])
    r2 = run_autodiff(src, ns, ["x"])
    assert (r1.value, r1.grads, r1.notes) == (r2.value, r2.grads, r2.notes)
    assert all(k not in ns for k in ("__wengert_bind__", "__wengert_at__", "__wengert_tick__"))
