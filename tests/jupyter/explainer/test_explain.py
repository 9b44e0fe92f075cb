"""wg.explain: why a gradient is None, zero or NaN, where, and the fix.

Every cause is built for real (no hand-made tapes): the situation a user runs into, then
the explanation's status, cause, equation, line of code and fix are checked. Lines are
found by the marker comments at the end of the lines that should be named.
"""

from __future__ import annotations

import inspect
import math
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.core.formatting import summarize
from wengert.jupyter.explainer.explain import Explanation, explain
from wengert.jupyter.explainer.rerun import CutWatcher, sites_for
from wengert.jupyter.explainer.source import RETURN, cut_sites
from wengert.jupyter.explainer.words import double_where

HERE = inspect.getsource(sys.modules[__name__]).splitlines()


def line_of(marker: str) -> int:
    """The line number of this file's line ending with ``# <marker>``."""
    found = [i + 1 for i, text in enumerate(HERE) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, f"marker {marker!r} found {len(found)} times"
    return found[0]


def plain(e: Explanation) -> str:
    """The text/plain form, checked to be deterministic."""
    text = repr(e)
    assert text == str(e)
    assert not re.search(r"0x[0-9a-f]{4,}|#\d+|\bid\(", text), text
    return text


# -- fine --------------------------------------------------------------------------------


def test_ok_gradient_is_summarised():
    w = wg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * 3.0).sum()
    e = explain(loss, w)
    assert (e.status, e.cause, e.ok) == ("ok", "ok", True)
    assert e.gradient == "[3, 3]"
    assert e.target == "loss" and e.wrt == "w"
    assert plain(e).startswith("gradient of loss with respect to w: OK")
    assert w.grad is None  # explaining does not fill .grad


def test_ok_with_a_gradient_tape_and_a_variable():
    v = wg.Variable(2.0)
    with wg.GradientTape() as tape:
        loss = v * v
    e = explain(loss, v, tape=tape)
    assert (e.status, e.gradient) == ("ok", "4")


def test_a_target_that_is_the_input_itself():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    e = explain(x, x)
    assert (e.status, e.gradient) == ("ok", "[1, 1]")


def test_a_finite_gradient_of_a_non_finite_value_is_ok_with_a_note():
    q = wg.tensor([np.nan, 1.0], requires_grad=True)
    e = explain((q * 2.0).sum(), q)
    assert e.status == "ok" and "not finite" in e.notes[0]


# -- None: not tracked ------------------------------------------------------------------------


def test_a_plain_array_is_not_a_tensor():
    data = np.ones(3)
    x = wg.tensor(data, requires_grad=True)
    e = explain((x * 2.0).sum(), data)
    assert (e.status, e.cause) == ("none", "not_a_tensor")
    assert "`data = wg.tensor(data, requires_grad=True)`" in e.fix


def test_a_tensor_that_does_not_require_grad():
    t = wg.tensor([1.0, 2.0])
    loss = (t * 2.0).sum()
    e = explain(loss, t)
    assert (e.status, e.cause) == ("none", "requires_grad_false")
    assert "requires_grad=True" in e.fix and "tape.watch(t)" in e.fix


def test_a_tensor_a_gradient_tape_does_not_watch():
    c = wg.tensor(2.0)
    with wg.GradientTape() as tape:
        y = c * c
    assert tape.gradient(y, c) is None
    e = explain(y, c, tape=tape)
    assert (e.status, e.cause) == ("none", "not_watched")
    assert "`tape.watch(c)`" in e.fix


def test_a_variable_that_is_not_trainable():
    v = wg.Variable(2.0, trainable=False)
    with wg.GradientTape() as tape:
        y = v * v
    e = explain(y, v, tape=tape)
    assert (e.status, e.cause) == ("none", "not_watched")
    assert "trainable" in e.message and "`tape.watch(v)`" in e.fix


def test_a_value_computed_before_the_tape_opened():
    code = textwrap.dedent("""\
        w = wg.Variable(2.0)
        h = w * 3.0
        with wg.GradientTape() as tape:
            loss = h ** 2
        """)
    ns = {"wg": wg}
    exec(compile(code, "<cell>", "exec"), ns)
    w, loss, tape = ns["w"], ns["loss"], ns["tape"]
    assert tape.gradient(loss, w) is None
    e = explain(loss, w, tape=tape, source=code, namespace=ns)
    assert (e.status, e.cause) == ("none", "before_tape")
    assert (e.source.lineno, e.source.text) == (2, "h = w * 3.0")
    assert "`h`" in e.message and "before the `GradientTape` opened" in e.message
    assert "Move that line into the `with wg.GradientTape() as tape:` block" in e.fix
    # Without the code the cause is the same, only the line is unknown.
    e = explain(loss, w, tape=tape, source="", namespace=ns)
    assert (e.cause, e.source) == ("before_tape", None)


def test_a_value_computed_inside_stop_recording():
    code = textwrap.dedent("""\
        x = wg.tensor(3.0)
        with wg.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                h = x * x
            y = h + 1.0
        """)
    ns = {"wg": wg}
    exec(code, ns)
    assert ns["tape"].gradient(ns["y"], ns["x"]) is None
    e = explain(ns["y"], ns["x"], tape=ns["tape"], source=code, namespace=ns)
    assert (e.status, e.cause, e.source.lineno) == ("none", "stop_recording", 4)
    assert "out of the `with tape.stop_recording():` block" in e.fix


# -- None: a non-leaf ----------------------------------------------------------------------------


def test_a_copy_that_made_a_non_leaf():
    with wg.source_lines():
        w = wg.tensor([1.0, 2.0], requires_grad=True) * 1.0  # non-leaf multiply
        loss = (w * w).sum()
    e = explain(loss, w)
    assert (e.status, e.cause, e.op) == ("none", "non_leaf", "multiply")
    assert e.source.lineno == line_of("non-leaf multiply")
    assert e.equation == 0 and e.equation_text == "t0 = multiply(x0, 1)"
    assert e.gradient == "[2, 4]"  # it does reach w
    assert "a copy that made a non-leaf" in e.message
    assert "`w.retain_grad()`" in e.fix and "requires_grad=True" in e.fix
    loss.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert w.grad is None


def test_astype_float_makes_a_non_leaf_too():
    w = wg.tensor([1.0, 2.0], requires_grad=True).astype(float)
    loss = (w * w).sum()
    loss.backward()
    e = explain(loss, w)
    assert (e.cause, e.op, e.gradient) == ("non_leaf", "astype", None)  # the graph is freed
    assert "`.astype`" in e.message


def test_a_non_leaf_that_retains_its_grad_is_fine():
    w = wg.tensor([1.0, 2.0], requires_grad=True) * 1.0
    w.retain_grad()
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    assert explain(loss, w).status == "ok"


# -- None: the path is cut ------------------------------------------------------------------------


def test_no_grad_block_found_from_the_code():
    code = textwrap.dedent("""\
        h = np.sin(w)
        with wg.no_grad():
            z = h * 2
        loss = (z * 3).sum()
        """)
    ns = {"np": np, "wg": wg, "w": wg.tensor([1.0, 2.0], requires_grad=True)}
    exec(code, ns)
    e = explain(ns["loss"], ns["w"], source=code, namespace=ns)
    assert (e.status, e.cause) == ("none", "no_grad")
    assert (e.source.lineno, e.source.text) == (2, "with wg.no_grad():")
    assert "outside the `with wg.no_grad():` block" in e.fix


def test_detach_found_on_the_tape_and_in_the_code():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    b = wg.tensor([3.0, 4.0], requires_grad=True)
    with wg.source_lines():
        d = x.detach()  # detach line
        loss = (d * b).sum()  # re-enters
    e = explain(loss, x)
    assert (e.status, e.cause) == ("none", "detached")
    assert e.source.lineno == line_of("detach line")
    assert "by `.detach()`" in e.message
    # The tape shows where the cut value came back in: equation 0, which shares x's memory.
    assert e.equation == 0 and e.equation_text == "t0 = multiply(const, x0)"
    assert any(str(line_of("re-enters")) in n for n in e.notes)


def test_detach_without_code_is_found_from_shared_memory():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    b = wg.tensor([3.0, 4.0], requires_grad=True)
    loss = (wg.stop_gradient(x) * b).sum()
    e = explain(loss, x, source="")
    assert (e.cause, e.equation, e.source) == ("detached", 0, None)
    assert "shares `x`'s memory" in e.message


def test_a_python_number_found_from_an_equal_constant():
    x = wg.tensor([1.5, 2.5], requires_grad=True)
    b = wg.tensor([3.0, 4.0], requires_grad=True)
    loss = (wg.tensor(x.tolist()) * b).sum()
    e = explain(loss, x, source="")
    assert (e.status, e.cause, e.equation) == ("none", "to_python", 0)
    assert "probably" in e.message


def test_an_integer_cast_found_from_the_constant():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    b = wg.tensor([3.0, 4.0], requires_grad=True)
    loss = (x.astype(int) * b).sum()
    e = explain(loss, x, source="")
    assert (e.status, e.cause, e.equation) == ("none", "integer_dtype", 0)
    assert "straight-through" in e.fix


def test_code_of_the_calling_scope_is_read_by_default():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    n = x.numpy()  # numpy line
    loss = wg.tensor(n * 2.0).sum()
    e = explain(loss, x)
    assert (e.status, e.cause) == ("none", "to_numpy")
    assert e.source.lineno == line_of("numpy line")
    assert "`np.*` functions take tensors directly" in e.fix


def test_only_lines_that_feed_the_target_are_cited():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    unused = x.detach()  # noqa: F841 (a cut that does not matter here)
    s = float(x.sum())  # float line
    loss = wg.tensor(s) * 2.0
    e = explain(loss, x)
    assert (e.cause, e.source.lineno) == ("to_python", line_of("float line"))
    assert all(site.kind != "detach" for site in e.lines)


def test_a_target_that_is_a_plain_number():
    x = wg.tensor(2.0, requires_grad=True)
    y = x.item() * 3.0  # item line
    e = explain(y, x)
    assert (e.status, e.cause, e.source.lineno) == ("none", "to_python", line_of("item line"))
    e = explain(y, x, source="")
    assert (e.status, e.cause) == ("none", "target_not_tensor")


def test_disconnected_without_evidence():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    other = wg.tensor([3.0], requires_grad=True)
    e = explain((other * 2.0).sum(), x, source="")
    assert (e.status, e.cause) == ("none", "disconnected")
    assert "wg.explain(f, *args)" in e.fix


# -- None: the graph -------------------------------------------------------------------------


def test_a_freed_graph_says_so_and_keeps_what_grad_knows():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    e = explain(loss, x)
    assert (e.status, e.cause, e.gradient) == ("ok", "graph_freed", "[2, 4]")
    assert "retain_graph=True" in e.fix and "wg.keep_values()" in e.fix


def test_a_freed_graph_without_a_grad_is_none():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    b = wg.tensor(1.0, requires_grad=True)
    loss = (x * x).sum() * b
    loss.backward(inputs=[b])
    e = explain(loss, x)
    assert (e.status, e.cause) == ("none", "graph_freed")


def test_a_backward_that_found_the_graph_freed_by_another_output_gives_no_number():
    # y1.backward() freed h's equation; y2.backward() then stopped: x.grad holds dy1/dx,
    # not dy2/dx = [81, 324], so it is not shown as y2's gradient
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3.0
        y1 = (h * h).sum()
        y1.backward()
        y2 = (h ** 3).sum()
        with pytest.raises(RuntimeError, match="second time"):
            y2.backward()
    e = explain(y2, x)
    assert (e.status, e.cause, e.gradient) == ("none", "graph_freed", None)
    assert "freed by the backward() of another output" in e.message
    assert "holds [18, 36], from the backward pass of that other output: not the gradient " \
        "of `y2`" in e.message


def test_a_backward_that_stopped_does_not_claim_what_grad_holds_from_an_earlier_pass():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        (x * 2.0).sum().backward()  # x.grad = [2, 2]
        h = x * 3.0

        def fails(g):
            raise ValueError("hook fails")

        h.register_hook(fails)
        y = (h * h).sum()
        with pytest.raises(ValueError, match="hook fails"):
            y.backward()
    e = explain(y, x)
    assert (e.status, e.cause, e.gradient) == ("none", "graph_freed", None)
    assert "stopped with ValueError: hook fails" in e.message
    assert "holds [2, 2], from an earlier backward pass" in e.message
    assert "not the gradient of `y`" in e.message


def test_a_value_modified_in_place():
    a = wg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    loss = (b * b).sum()
    b += 1
    e = explain(loss, a)
    assert (e.status, e.cause) == ("none", "inplace")
    assert "`*`" in e.message and "out of place" in e.fix
    plain(e)  # no node numbers in the text


# -- zero ----------------------------------------------------------------------------------------


def test_dead_relu():
    W = wg.tensor([[-1.0, -2.0], [-3.0, -1.0]], requires_grad=True)
    with wg.source_lines():
        hidden = np.maximum(W @ np.array([1.0, 1.0]), 0.0)  # relu line
        out = hidden.sum()
    e = explain(out, W)
    assert (e.status, e.cause, e.op, e.equation) == ("zero", "relu_dead", "maximum", 1)
    assert e.source.lineno == line_of("relu line")
    assert "dead ReLU" in e.message and "leaky ReLU" in e.fix
    assert e.gradient == "[[0, 0], [0, 0]]"


@pytest.mark.parametrize("fn", [np.round, np.floor, np.sign, np.rint])
def test_piecewise_constant_ops(fn):
    x = wg.tensor([0.3, 1.7], requires_grad=True)
    with wg.source_lines():
        y = fn(x * 2.0).sum()  # flat op
    e = explain(y, x)
    assert (e.status, e.cause, e.op) == ("zero", "piecewise_constant", fn.__name__)
    assert e.source.lineno == line_of("flat op")
    assert "straight-through estimator" in e.fix
    assert f"`x + wg.stop_gradient(np.{fn.__name__}(x) - x)`" in e.fix


def test_clip_outside_its_bounds():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.source_lines():
        y = np.clip(x * 10.0, -1.0, 1.0).sum()  # clip line
    e = explain(y, x)
    assert (e.cause, e.op, e.source.lineno) == ("clipped", "clip", line_of("clip line"))
    assert "[-1, 1]" in e.message


def test_where_choosing_the_other_branch():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.source_lines():
        y = np.where(x > 5.0, x, 0.0).sum()  # where line
    e = explain(y, x)
    assert (e.cause, e.op, e.source.lineno) == ("where_branch", "where", line_of("where line"))
    assert "condition was False for every entry" in e.message and "`x`" in e.message


def test_multiplied_by_zero():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.source_lines():
        y = (x * np.zeros(2)).sum()  # zero factor
    e = explain(y, x)
    assert (e.cause, e.op, e.source.lineno) == ("zero_factor", "multiply", line_of("zero factor"))


def test_minimum_choosing_the_other_operand():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = np.minimum(x, 0.5).sum()
    e = explain(y, x)
    assert (e.cause, e.op) == ("lost_comparison", "minimum")
    assert any("source_lines" in n for n in e.notes)  # how to see the line


def test_abs_at_its_kink():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    e = explain(np.abs(x * 0.0).sum(), x)
    assert (e.status, e.cause, e.op) == ("zero", "kink", "abs")


def test_an_overwritten_value():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.source_lines():
        buf = x * 1.0
        buf[:] = 5.0  # overwrite
        y = (buf * 1.0).sum()
    e = explain(y, x)
    assert (e.cause, e.op, e.source.lineno) == ("overwritten", "setitem", line_of("overwrite"))


def test_a_custom_rule_that_returns_none():
    @wg.custom_vjp
    def scale(x, y):
        return x * y

    scale.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1], None))
    x = wg.tensor(2.0, requires_grad=True)
    y = wg.tensor(3.0, requires_grad=True)
    e = explain(scale(x, y), y)
    assert (e.status, e.cause, e.op) == ("zero", "zero_derivative", "scale")
    assert "`scale.defvjp(fwd, bwd)`" in e.fix and "custom rule of `scale`" in e.message


def test_contributions_that_cancel():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    e = explain((x - x).sum(), x)
    assert (e.status, e.cause, e.equation) == ("zero", "cancelled", None)


# -- NaN ----------------------------------------------------------------------------------------


def test_sqrt_inside_where_is_the_double_where_trap():
    x = wg.tensor([0.0, 4.0], requires_grad=True)
    with wg.source_lines():
        y = np.where(x > 0, np.sqrt(x), 0.0).sum()  # the where trap
    e = explain(y, x)
    assert (e.status, e.cause, e.op, e.equation) == ("nan", "where_nan", "sqrt", 0)
    assert e.source.lineno == line_of("the where trap")
    assert e.equation_text == "t0 = sqrt(x0)"
    assert "x = 0 (entry 0)" in e.message and "0 · inf = NaN" in e.message
    assert "`np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0)`" in e.fix
    assert e.gradient == "[nan, 0.25]"
    # The fix works.
    x2 = wg.tensor([0.0, 4.0], requires_grad=True)
    y2 = np.where(x2 > 0, np.sqrt(np.where(x2 > 0, x2, 1.0)), 0.0).sum()
    assert explain(y2, x2).status == "ok"


def test_a_where_inside_a_numpy_function_is_named_by_that_function():
    # np.nan_to_num is written with where: the line has no np.where to point at
    x = wg.tensor([0.0, 4.0], requires_grad=True)
    with np.errstate(divide="ignore"), wg.source_lines():
        y = np.nan_to_num(np.log(x)).sum()  # nan_to_num of log
    e = explain(y, x)
    assert (e.status, e.cause, e.op) == ("nan", "where_nan", "log")
    assert e.source.lineno == line_of("nan_to_num of log")
    assert "`np.where`" not in e.message and "`np.nan_to_num` on the same line" in e.message
    assert "np.where(c, np.log(np.where(c, x, 1.0)), other)" not in e.fix
    assert "`np.log(np.where(mask, x, 1.0))`" in e.fix
    x2 = wg.tensor([0.0, 4.0], requires_grad=True)
    y2 = np.nan_to_num(np.log(np.where(x2 > 0, x2, 1.0))).sum()
    assert explain(y2, x2).status == "ok"


def test_division_by_zero_inside_where():
    z = wg.tensor([0.0, 2.0], requires_grad=True)
    with np.errstate(divide="ignore"), wg.source_lines():
        r = np.where(z != 0, 1.0 / z, 0.0).sum()
    e = explain(r, z)
    assert (e.cause, e.op) == ("where_nan", "divide")
    assert "b = 0" in e.message
    assert "`np.where(z != 0, 1.0 / np.where(z != 0, z, 1.0), 0.0)`" in e.fix


def test_a_mask_times_sqrt():
    z = wg.tensor([0.0, 4.0], requires_grad=True)
    y = ((z > 0) * np.sqrt(z)).sum()
    e = explain(y, z)
    assert (e.status, e.cause, e.op) == ("nan", "masked_nan", "sqrt")
    assert "np.sqrt(np.where(mask, x, 1.0))" in e.fix


def test_sqrt_at_zero_has_an_infinite_gradient():
    z = wg.tensor([0.0, 4.0], requires_grad=True)
    with wg.source_lines():
        y = np.sqrt(z).sum()  # sqrt at 0
    e = explain(y, z)
    assert (e.status, e.cause, e.op) == ("nan", "infinite_derivative", "sqrt")
    assert e.source.lineno == line_of("sqrt at 0")
    assert e.gradient == "[inf, 0.25]" and plain(e).splitlines()[0].endswith(": inf")


def test_the_point_named_is_the_value_the_op_saw_not_one_written_since():
    # sqrt saw x = [0, 4]; an optimizer's step then changed x in place
    with wg.keep_values():
        x = wg.tensor([0.0, 4.0], requires_grad=True)
        y = np.sqrt(x).sum()
        y.backward()
    with wg.no_grad():
        x += 1.0
    e = explain(y, x)
    assert (e.cause, e.gradient) == ("infinite_derivative", "[inf, 0.25]")
    assert "x = 1" not in e.message and "changed in place since" in e.message
    # h = x * 1 saw [-1, 4]; h += 10 overwrote it: no made-up "x = 0" either
    x = wg.tensor([-1.0, 4.0], requires_grad=True)
    h = x * 1.0
    with np.errstate(invalid="ignore"):
        y = np.where(h > 0, np.sqrt(h), 0.0).sum()
    with wg.no_grad():
        h += 10.0
    e = explain(y, x)
    assert e.cause == "where_nan" and "x = " not in e.message
    x = wg.tensor([-1.0, 4.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        y = np.where(x > 0, np.sqrt(x * 1.0), 0.0).sum()
    assert "evaluated at x = -1 (entry 0)" in explain(y, x).message  # what it saw


def test_log_of_zero_is_a_forward_problem():
    z = wg.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(divide="ignore"), wg.source_lines():
        y = np.log(z).sum()  # log of 0
    e = explain(y, z)
    assert (e.status, e.cause, e.op) == ("nan", "nan_forward", "log")
    assert e.source.lineno == line_of("log of 0")
    assert "the log of 0 is -inf" in e.message
    assert "wg.detect_anomaly(check_forward=True)" in e.fix


def test_nan_made_in_the_forward_pass():
    z = wg.tensor([0.0, 2.0], requires_grad=True)
    with np.errstate(invalid="ignore"), wg.source_lines():
        y = (np.sqrt(z - 1.0) * 2.0).sum()  # negative sqrt
    e = explain(y, z)
    assert (e.cause, e.op, e.equation) == ("nan_forward", "sqrt", 1)
    assert e.source.lineno == line_of("negative sqrt")
    assert "square root of a negative number is NaN" in e.message


def test_nan_in_the_data():
    q = wg.tensor([np.nan, 1.0], requires_grad=True)
    e = explain((q * q).sum(), q)
    assert (e.status, e.cause, e.op) == ("nan", "nan_input", "multiply")
    assert e.message.startswith("`q` already contains NaN")


# -- several inputs --------------------------------------------------------------------------------


def test_a_dict_of_inputs_is_explained_per_entry():
    a = wg.tensor(1.0, requires_grad=True)
    b = wg.tensor(2.0, requires_grad=True)
    params = {"a": a, "b": b}
    loss = a * 3.0 + b.detach()
    e = explain(loss, params, source="")
    assert [p.wrt for p in e.parts] == ["params['a']", "params['b']"]
    assert [p.status for p in e.parts] == ["ok", "none"]
    assert (e.status, e.cause) == ("none", "detached")
    assert "1 of 2 not OK" in plain(e).splitlines()[0]


def test_a_list_of_fine_inputs():
    xs = [wg.tensor(1.0, requires_grad=True), wg.tensor(2.0, requires_grad=True)]
    e = explain(xs[0] * xs[1], xs)
    assert (e.status, [p.gradient for p in e.parts]) == ("ok", ["2", "1"])
    assert [p.wrt for p in e.parts] == ["xs[0]", "xs[1]"]


def test_an_empty_input_has_an_empty_gradient_not_a_zero_one():
    e = explain(lambda t: np.sqrt(t), np.zeros((0, 2)))
    assert (e.status, e.gradient) == ("ok", "[]  (0, 2)")
    assert "empty" in e.message and "exactly 0" not in e.message
    x = wg.tensor(np.zeros(0), requires_grad=True)
    e = explain(np.sum(x ** 2), x)
    assert e.status == "ok" and "`x` is empty" in e.message


def test_a_complex_target_has_no_gradient_to_explain():
    # backward() and wg.grad refuse a complex output: explain shows no number for it
    x = wg.tensor(1.0, requires_grad=True)
    y = x * 1j
    e = explain(y, x)
    assert (e.status, e.cause, e.gradient) == ("none", "complex_target", None)
    assert "complex128" in e.message and "np.abs(y) ** 2" in e.fix
    e = explain(lambda t: t * 1j, 1.0)
    assert (e.status, e.cause, e.gradient) == ("none", "complex_target", None)
    assert explain(lambda t: np.abs(t * 1j) ** 2, 1.0).gradient == "2"


def test_a_list_of_inputs_written_in_the_call_is_named_by_its_variables():
    # wg.explain(y, [a, u]): the parts are a and u, not the parameter's own name
    a = wg.tensor(2.0, requires_grad=True)
    u = wg.tensor(1.0, requires_grad=True)
    with wg.source_lines():
        b = a * 2.0  # b from a only
    e = explain(b, [a, u])
    assert [p.wrt for p in e.parts] == ["a", "u"]
    assert plain(e).splitlines()[0] == "gradients of b with respect to a, u: 1 of 2 not OK"
    assert "wrt" not in plain(e)
    e = explain(b, {"first": a, "second": u})
    assert [p.wrt for p in e.parts] == ["a", "u"] and "wrt" not in plain(e)
    e = explain(b, [a, a * 1.0])  # a value with no name keeps its place in the list
    assert [p.wrt for p in e.parts] == ["a", "wrt[1]"]
    with wg.no_grad():
        k = u * 2  # u cut here
    e = explain(a * k, [a, u])  # the code is read for the cut of each named entry
    assert e.parts[1].cause == "no_grad" and e.parts[1].source.lineno == line_of("u cut here") - 1


# -- functions -------------------------------------------------------------------------------------


def f_no_grad(x):
    h = np.sin(x)
    with wg.no_grad():  # f no_grad
        z = h * 2
    return (z * 3).sum()


def f_detach(x):
    h = x * 2
    d = h.detach()  # f detach
    return (d ** 2).sum()


def f_stop_gradient(x):
    return (wg.stop_gradient(x) * 3.0).sum()  # f stop_gradient


def f_float(x):
    s = float(x.sum())  # f float
    return wg.tensor(s) * 2.0


def f_math(x):
    return wg.tensor(math.exp(x)) * 2.0  # f math


def f_numpy(x):
    a = x.numpy()  # f numpy
    return wg.tensor(a).sum()


def f_astype(x):
    k = x.astype(int)  # f astype
    return (k * 1.5).sum()


def f_compare(x):
    m = x > 1.5  # f compare
    return (m * 2.0).sum()


def f_data(x):
    return (x.data * 2.0).sum()  # f data


@pytest.mark.parametrize("f, arg, cause, marker, words", [
    (f_no_grad, np.array([1.0, 2.0]), "no_grad", "f no_grad", "outside the `with wg.no_grad():`"),
    (f_detach, np.array([1.0, 2.0]), "detached", "f detach", "`h` itself"),
    (f_stop_gradient, np.array([1.0, 2.0]), "detached", "f stop_gradient", "`x` itself"),
    (f_float, np.array([1.0, 2.0]), "to_python", "f float", "`math.exp(x)`"),
    (f_math, 1.5, "to_python", "f math", "`np.exp(x)`"),
    (f_numpy, np.array([1.0, 2.0]), "to_numpy", "f numpy", "take tensors directly"),
    (f_astype, np.array([1.0, 2.0]), "integer_dtype", "f astype", "straight-through"),
    (f_compare, np.array([1.0, 2.0]), "comparison", "f compare", "smooth surrogate"),
    (f_data, np.array([1.0, 2.0]), "detached", "f data", "`x` itself"),
])
def test_cuts_inside_a_function_are_found_while_it_runs(f, arg, cause, marker, words):
    e = explain(f, arg)
    assert (e.status, e.cause) == ("none", cause), plain(e)
    assert e.source.lineno == line_of(marker)
    assert e.source.filename == __file__
    assert words in e.fix
    assert e.target == f"{f.__name__}(x)" and e.wrt == "x"


def f_relu(w, x):
    h = np.maximum(w @ x, 0.0)  # f relu
    return h.sum()


def test_a_dead_relu_inside_a_function():
    e = explain(f_relu, -np.ones((2, 2)), np.ones(2))
    assert (e.status, e.cause, e.source.lineno) == ("zero", "relu_dead", line_of("f relu"))
    assert "in f_relu" in plain(e)


def f_where(x):
    return np.where(x > 0, np.sqrt(x), 0.0).sum()  # f where


def test_the_where_trap_inside_a_function():
    e = explain(f_where, np.array([0.0, 4.0]))
    assert (e.cause, e.op, e.source.lineno) == ("where_nan", "sqrt", line_of("f where"))


def test_argnums_and_pytrees_of_a_function():
    def model(p, x):
        return (p["w"] * x + p["b"].detach()).sum()  # model detach

    e = explain(model, {"w": np.ones(2), "b": np.zeros(2)}, np.ones(2))
    assert [(p.wrt, p.status) for p in e.parts] == [("p['w']", "ok"), ("p['b']", "none")]
    bad = e.parts[1]
    assert (bad.cause, bad.source.lineno) == ("detached", line_of("model detach"))
    assert "`p['b']` is cut from the graph by `.detach()`" in bad.message

    e = explain(lambda x, y: (x * y).sum(), np.ones(2), np.full(2, 3.0), argnums=(0, 1))
    assert e.status == "ok" and [p.gradient for p in e.parts] == ["[3, 3]", "[1, 1]"]
    assert e.target == "f(x, y)"


def test_a_lambda_that_converts_to_a_number():
    e = explain(lambda x: wg.tensor(float(x)) * 2.0, 3.0)
    assert (e.status, e.cause) == ("none", "to_python")
    assert "float(x)" in e.source.text


def test_a_function_that_raises_is_explained_by_its_error():
    def bad(x):
        return np.asarray(x) * 2  # raises

    e = explain(bad, np.ones(2))
    assert (e.status, e.cause, e.source.lineno) == ("none", "error", line_of("raises"))
    assert "TypeError" in e.message and "requires grad" in e.message


def test_integer_inputs_of_a_function():
    e = explain(lambda x: x * 2.0, np.array([1, 2]))
    assert (e.status, e.cause) == ("none", "integer_input")
    assert "dtype=float" in e.fix


def test_a_vector_output_is_summed_with_a_note():
    e = explain(lambda x: x * 2.0, np.ones(2))
    assert e.status == "ok" and "sum of its entries" in e.notes[0]


def test_a_vector_target_says_its_gradient_is_that_of_the_sum():
    # the sum's gradient is zero, but every entry of z changes with x: saying only
    # "zero" would deny the nonzero Jacobian the %%autodiff card shows next to it
    x = wg.tensor([1.0, 2.0, 4.0], requires_grad=True)
    z = x - x.mean()
    e = explain(z, x)
    assert e.status == "zero" and e.gradient == "[0, 0, 0]"
    assert "shape (3,), not a scalar" in e.notes[0] and "sum of its entries" in e.notes[0]
    assert "wg.explain(z[0], x)" in e.notes[0]
    assert explain(z[0], x).gradient == "[0.6667, -0.3333, -0.3333]"
    e = explain(lambda a: a - a.mean(), np.array([1.0, 2.0, 4.0]))
    assert e.status == "zero" and len(e.notes) == 1 and "f(a)[0]" in e.notes[0]


def test_a_vector_target_after_backward_with_a_cotangent_names_the_cotangent():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0, 4.0], requires_grad=True)
        z = x - x.mean()
        z.backward(np.array([1.0, 0.0, 0.0]))
    e = explain(z, x)
    assert e.status == "ok" and e.gradient == summarize(x.grad)
    assert "cotangent backward() was given, [1, 0, 0]" in e.notes[0]
    assert "sum of its entries" not in plain(e)


def test_a_scalar_target_has_no_shape_note():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    assert explain((x * x).sum(), x).notes == ()


def test_a_container_output_is_refused():
    with pytest.raises(TypeError, match="must return one"):
        explain(lambda x: (x, x), np.ones(2))


def test_bad_arguments():
    x = wg.tensor(1.0, requires_grad=True)
    with pytest.raises(TypeError, match="give the result and one input"):
        explain(x * 2.0, x, x)
    with pytest.raises(ValueError, match="argnums"):
        explain(lambda x: x, 1.0, argnums=3)


def test_the_watcher_restores_the_previous_profiler():
    calls = []

    def profiler(frame, event, arg):
        calls.append(event)

    sys.setprofile(profiler)
    try:
        explain(f_detach, np.ones(2))
        with pytest.raises(ZeroDivisionError), CutWatcher():
            1 / 0  # noqa: B018
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)


def test_watched_sites_name_the_variable_and_follow_the_input():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    other = wg.tensor([1.0], requires_grad=True)
    with CutWatcher() as watcher:
        h = x * 2.0
        h.detach()
        other.detach()
    sites = sites_for(watcher, x)
    assert [(s.kind, s.name) for s in sites] == [("detach", "h")]
    assert [s.kind for s in sites_for(watcher, other)] == ["detach"]


# -- output ----------------------------------------------------------------------------------------


def _where_trap():
    x = wg.tensor([0.0, 4.0], requires_grad=True)
    with wg.source_lines():
        y = np.where(x > 0, np.sqrt(x), 0.0).sum()
    return explain(y, x)


def test_text_and_html_are_deterministic():
    a, b = _where_trap(), _where_trap()
    assert plain(a) == plain(b)
    assert a._repr_html_() == b._repr_html_()
    html = a._repr_html_()
    assert 'class="wg-explain wg-nan"' in html and "<script" not in html
    assert not re.search(r"0x[0-9a-f]{4,}", html)
    assert "<code" in html and "np.sqrt(np.where(x &gt; 0, x, 1.0))" in html
    # the status reads without colour: an icon and a word, and a border style per status
    assert "! NaN" in html and "double" in html


def test_every_status_has_its_own_badge_and_border():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    cases = {
        "ok": explain((x * 2.0).sum(), x),
        "none": explain((x.detach() * 2.0).sum(), x, source=""),
        "zero": explain(np.round(x).sum(), x),
        "nan": _where_trap(),
    }
    styles = {}
    for status, e in cases.items():
        assert e.status == status
        html = e._repr_html_()
        styles[status] = re.search(r"border-left:5px (\w+)", html).group(1)
        assert f"wg-badge-{status}" in html
    assert len(set(styles.values())) == 4


def test_html_escapes_user_code():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.source_lines():
        y = np.round(x).sum()  # <b>not bold</b>
    html = explain(y, x)._repr_html_()
    assert "<b>not bold</b>" not in html and "&lt;b&gt;not bold&lt;/b&gt;" in html


MODULES = ["explain", "broken", "cut", "function", "one", "result", "rerun", "source",
           "subject", "sweep", "words"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"wengert.jupyter.explainer.{name}")
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_importing_the_explainer_loads_no_jupyter_package():
    code = ("import sys, wengert.jupyter.explainer.explain; "
            "bad = [m for m in ('IPython', 'ipywidgets', 'anywidget', 'traitlets', "
            "'matplotlib', 'graphviz') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# -- reading code ----------------------------------------------------------------------------------


def test_cut_sites_follow_values_through_assignments():
    code = textwrap.dedent("""\
        h = np.sin(x)
        g = h + 1
        a = g.detach()
        b = float(g)
        c = g.numpy()
        d = g.astype(np.int32)
        e = g.data
        k = math.exp(g)
        unrelated = y.detach()
        with wg.no_grad():
            z = h * 2
        """)
    sites = cut_sites(code, ["x"])
    assert [(s.lineno, s.kind, s.name) for s in sites] == [
        (3, "detach", "g"), (4, "to_python", "g"), (5, "to_numpy", "g"), (6, "integer", "g"),
        (7, "data", "g"), (8, "to_python", "g"), (10, "no_grad", "h"),
    ]


def test_cut_sites_of_a_function_and_its_return_value():
    code = textwrap.dedent("""\
        def f(x, y):
            a = x.detach()
            b = y.item()
            return a * 2
        """)
    assert [(s.lineno, s.kind) for s in cut_sites(code, ["x"], 10, RETURN)] == [(11, "detach")]
    assert cut_sites(code, ["y"], 10, RETURN) == []  # b does not reach the return value
    assert [s.kind for s in cut_sites(code, ["y"], 10)] == ["to_python"]


def test_cut_sites_read_ipython_cells_and_broken_code():
    cell = "%%time\nh = x.detach()\n!ls\n"
    assert [(s.lineno, s.kind) for s in cut_sites(cell, ["x"])] == [(2, "detach")]
    broken = "h = x.detach(\ny = float(x"
    assert [(s.lineno, s.kind) for s in cut_sites(broken, ["x"])] == [
        (1, "detach"), (2, "to_python")]


def test_cut_sites_in_a_loop_and_before_a_tape():
    code = textwrap.dedent("""\
        for i in range(3):
            acc = prev
            prev = w * 2
        with wg.GradientTape() as tape:
            loss = acc ** 2
        """)
    sites = cut_sites(code, ["w"], target="loss")
    assert [(s.lineno, s.kind, s.name) for s in sites] == [(2, "before_tape", "acc")]


@pytest.mark.parametrize("line, op, expected", [
    ("y = np.where(x > 0, np.sqrt(x), 0.0)", "sqrt",
     "np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0)"),
    ("y = np.where(x <= 0, 0.0, np.log(x))", "log",
     "np.where(x <= 0, 0.0, np.log(np.where(x <= 0, 1.0, x)))"),
    ("r = wg.numpy.where(d != 0, n / d, 0.0).sum()", "divide",
     "wg.numpy.where(d != 0, n / wg.numpy.where(d != 0, d, 1.0), 0.0)"),
    ("y = np.where(x < 1, np.arcsin(x), 0.0)", "arcsin",
     "np.where(x < 1, np.arcsin(np.where(x < 1, x, 0.0)), 0.0)"),
    ("y = np.sqrt(x)", "sqrt", None),
    ("y = np.where(x > 0,", "sqrt", None),
])
def test_double_where_is_written_from_the_users_line(line, op, expected):
    assert double_where(line, op) == expected


# -- properties and size ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False).filter(lambda v: abs(v) > 1e-3),
                min_size=1, max_size=6),
       st.floats(-3, 3).filter(lambda v: abs(v) > 1e-3))
def test_relu_status_matches_the_gradient(values, scale):
    x = wg.tensor(np.array(values), requires_grad=True)
    y = np.maximum(x * scale, 0.0).sum()
    e = explain(y, x)
    g = wg.grad(lambda v: np.maximum(v * scale, 0.0).sum())(np.array(values))
    assert e.status == ("zero" if not np.any(g) else "ok")
    if e.status == "zero":
        assert (e.cause, e.op) == ("relu_dead", "maximum")
    else:
        assert e.gradient == explain(y, x).gradient  # explaining twice changes nothing


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 4, allow_nan=False), min_size=1, max_size=5))
def test_where_trap_is_found_exactly_when_an_entry_is_zero(values):
    x = wg.tensor(np.array(values), requires_grad=True)
    y = np.where(x > 0, np.sqrt(x), 0.0).sum()
    e = explain(y, x)
    has_zero = any(v == 0 for v in values)
    if has_zero:
        assert (e.status, e.cause) == ("nan", "where_nan")
    else:
        assert e.status == "ok"


def test_a_long_chain_is_swept_without_recursion():
    x = wg.tensor([0.5, -0.5], requires_grad=True)
    h = x
    for _ in range(20_000):
        h = h * 1.0
    y = np.maximum(h, 5.0).sum()
    e = explain(y, x)
    assert (e.status, e.cause, e.equation) == ("zero", "lost_comparison", 20_000)


def test_the_explainers_sweep_has_no_side_effects():
    calls = []
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    h.retain_grad()
    h.register_hook(lambda g: calls.append(g))
    y = np.sum(h * h)
    explain(y, x)
    assert calls == [] and h.grad is None and x.grad is None


# -- equations with several outputs (the parts of one decomposition) -------------------------

def test_a_nan_from_a_decomposition_names_the_whole_equation():
    a = wg.tensor(np.eye(2), requires_grad=True)  # a repeated eigenvalue
    w, v = np.linalg.eigh(a)
    y = np.sum(w) + np.sum(v[:, 0] * np.array([1.0, 2.0]))
    e = wg.explain(y, a)
    assert (e.status, e.cause, e.op) == ("nan", "nan_backward", "eigh")
    assert e.equation_text == "t2, t3 = eigh(t1)"
    assert "`np.linalg.eigh`" in str(e)


def test_a_block_after_the_second_output_of_a_decomposition_is_found():
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    e = wg.explain(np.sum(np.floor(v)) + np.sum(np.floor(w)), a)
    assert (e.status, e.cause, e.op) == ("zero", "piecewise_constant", "floor")
    assert e.equation_text.split(" = ")[1] in ("floor(t2)", "floor(t3)")


def test_the_path_from_one_output_of_a_decomposition_leaves_out_the_others():
    from wengert.jupyter.explainer.sweep import edge_of, path_of
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    tape = wg.tape_of(np.sum(w * 2.0) + np.sum(v))
    eigh = next(eq for eq in tape if eq.primitive == "eigh")
    assert edge_of(tape, v) == (None, eigh.index) == edge_of(tape, w)
    on = path_of(tape, v)
    reads = {eq.index: [inp.name for inp in eq.inputs] for eq in tape}
    assert [k for k, yes in enumerate(on) if yes] == [
        k for k in reads if "t3" in reads[k]] + [len(tape) - 1]


def test_a_path_cut_by_item_while_another_path_remains_is_not_ok():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    h = (x ** 2).sum()
    z = (x * h.item()).sum()  # partial item line
    e = explain(z, x)
    assert (e.status, e.cause) == ("cut", "to_python") and not e.ok
    assert e.source.lineno == line_of("partial item line")
    assert "`h`" in e.message and "t" in e.message and e.equation is not None
    assert e.gradient == "[5, 5]"  # what backward() gives: the paths that remain
    assert "partly cut" in plain(e) and "partly cut" in e._repr_html_()
    assert "[5, 5]" in plain(e)


def test_a_path_cut_by_a_number_computed_from_float_of_a_value_is_not_ok():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    h = (x ** 2).sum()
    k = float(h) * 2  # scaled float line
    z = x.sum() * k
    e = explain(z, x)
    assert (e.status, e.cause) == ("cut", "to_python") and not e.ok
    assert e.source.lineno == line_of("scaled float line")
    assert "(through `k`)" in e.message and "multiply(t0, 10)" in e.message
    assert e.gradient == "[10, 10]"
    z2 = x.sum() * 10.0  # k's value, but not k: no evidence of a cut
    assert explain(z2, x).status == "ok"


def test_a_path_cut_by_an_array_built_from_a_number_is_not_ok():
    x = wg.tensor(0.3, requires_grad=True)
    h = np.sin(x)
    a = h.item() + 0.5  # two-hop item line
    b = np.array([a, a])
    z = (x * b).sum()
    e = explain(z, x)
    assert (e.status, e.cause) == ("cut", "to_python") and not e.ok
    assert e.source.lineno == line_of("two-hop item line")
    assert "(through `b`)" in e.message


def f_scaled_float(x):
    h = (x ** 2).sum()
    k = float(h) * 2  # function scaled float line
    return x.sum() * k


def f_array_of_item(x):
    h = np.sin(x)
    a = h.item() + 0.5  # function two-hop item line
    b = np.array([a, a])
    return (x * b).sum()


def f_printed_float(x):
    h = (x ** 2).sum()
    k = float(h) * 2
    print(f"{k:.3f}")
    return x.sum() * 3.0


@pytest.mark.parametrize("f, x, marker, name", [
    (f_scaled_float, np.array([1.0, 2.0]), "function scaled float line", "k"),
    (f_scaled_float, 0.3, "function scaled float line", "k"),
    (f_array_of_item, 0.3, "function two-hop item line", "b"),
])
def test_a_function_whose_path_a_derived_number_cuts_is_not_ok(f, x, marker, name):
    e = explain(f, x)
    assert (e.status, e.cause) == ("cut", "to_python") and not e.ok
    assert e.source.lineno == line_of(marker)
    assert f"(through `{name}`)" in e.message
    with pytest.raises(wg.errors.LostDerivativeError):
        wg.grad(f)(x)  # (a transform refuses the conversion instead)


def test_a_number_a_function_only_prints_cuts_nothing(capsys):
    assert explain(f_printed_float, np.array([1.0, 2.0])).status == "ok"
    assert capsys.readouterr().out.strip() == "10.000"


def test_explaining_a_function_leaves_a_running_profiler_in_place():
    calls = []

    def profiler(frame, event, arg):
        calls.append(event)

    before = sys.getprofile()
    sys.setprofile(profiler)
    try:
        explain(f_scaled_float, np.array([1.0, 2.0]))
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(before)
    assert "call" in calls and "return" in calls


def test_explaining_a_function_under_cprofile_leaves_it_running():
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        e = explain(f_printed_float, np.array([1.0, 2.0]))
        assert sys.getprofile() is profiler
    finally:
        profiler.disable()
    assert e.status == "ok"
    assert f_printed_float.__code__ in [s.code for s in profiler.getstats()]


def f_recursive_scaled_float(x, n=2):
    h = (x ** 2).sum()
    k = float(h) * 2  # recursive scaled float line
    if n == 0:
        return x.sum() * k
    return f_recursive_scaled_float(x, n - 1)


def f_scaled_float_by(x, c):
    h = (x ** 2).sum()
    k = float(h) * c  # partial scaled float line
    return x.sum() * k


def test_a_recursive_function_whose_innermost_call_cuts_is_not_ok():
    # (the number on the tape is the innermost call's k, not the outermost's equal one)
    e = explain(f_recursive_scaled_float, np.array([1.0, 2.0]))
    assert (e.status, e.cause) == ("cut", "to_python") and not e.ok
    assert e.source.lineno == line_of("recursive scaled float line")
    assert "(through `k`)" in e.message


def test_a_partial_function_whose_path_a_derived_number_cuts_is_not_ok():
    import functools

    e = explain(functools.partial(f_scaled_float_by, c=2.0), np.array([1.0, 2.0]))
    assert (e.status, e.cause) == ("cut", "to_python") and not e.ok
    assert e.source.lineno == line_of("partial scaled float line")


def f_number_then_rebound(x):
    k = float(x.sum())
    print(k)
    k = 3.0
    return (x * k).sum()


def test_a_number_whose_name_is_rebound_to_a_constant_cuts_nothing(capsys):
    # k at the end is the literal 3.0, the constant on the tape: not the number float() made
    assert explain(f_number_then_rebound, np.array([1.0, 2.0])).status == "ok"
    assert capsys.readouterr().out.strip() == "3.0"


def f_small_int_printed(x):
    n = int(x.sum())
    print(n)
    return (x * 3).sum()


def test_a_small_int_a_function_only_prints_cuts_nothing(capsys):
    # int(x.sum()) is 3, the very object the literal 3 on the tape is (small ints are
    # shared): no evidence that it came back
    assert explain(f_small_int_printed, np.array([1.0, 2.0])).status == "ok"
    assert capsys.readouterr().out.strip() == "3"


def f_partly_cut(x):
    h = (x ** 2).sum()
    return x.sum() * float(h)  # partial float line


def test_a_function_whose_path_float_cuts_is_not_ok():
    e = explain(f_partly_cut, np.array([1.0, 2.0]))
    assert (e.status, e.cause) == ("cut", "to_python")
    assert e.source.lineno == line_of("partial float line")


def test_a_number_printed_along_the_way_cuts_nothing():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    h = (x ** 2).sum()
    logged = h.item()  # noqa: F841 (logged, not used: the gradient is whole)
    z = (x * 3.0).sum()
    assert explain(z, x).status == "ok"
    assert explain(lambda x: (x * 3.0).sum() + 0 * len(str(float(x.sum()))),
                   np.array([1.0, 2.0])).status == "ok"


def test_a_number_cut_in_another_cell_is_said_without_a_line():
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell("import numpy as np\nimport wengert as wg\n"
                   "x = wg.tensor([1.0, 2.0], requires_grad=True)\n"
                   "h = (x ** 2).sum()\nz = (x * h.item()).sum()")
    shell.run_cell("e = wg.explain(z, x)")  # another cell: its code shows no cut
    e = shell.user_ns["e"]
    assert (e.status, e.cause, e.equation) == ("cut", "to_python", 0)
    assert "`h`" in e.message and "5" in e.message and e.gradient == "[5, 5]"
    shell.run_cell("z1 = (x * 3.0).sum()\ne1 = wg.explain(z1, x)")  # 3.0: no value held
    assert shell.user_ns["e1"].status == "ok"
    shell.run_cell("z2 = (x * 5.0).sum() + h")  # 5.0 is h's value, but h is on z2's tape
    shell.run_cell("e2 = wg.explain(z2, x)")
    assert shell.user_ns["e2"].status == "ok"
    shell.run_cell("h3 = (x ** 3).sum()\nz3 = (x * 9.0).sum()\ne3 = wg.explain(z3, x)")
    assert shell.user_ns["e3"].status == "ok"  # the code computing z3 is read: no cut in it
    for name in ("x", "h", "z", "e", "z1", "e1", "z2", "e2", "h3", "z3", "e3"):
        shell.user_ns.pop(name, None)
