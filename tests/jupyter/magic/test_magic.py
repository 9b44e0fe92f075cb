"""%load_ext wengert and %%autodiff through IPython's InteractiveShell."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import numpy as np

pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from wengert.core.formatting import format_number  # noqa: E402
from wengert.jupyter.explorer.frames import step_view  # noqa: E402


@pytest.fixture()
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "wengert")
    shell.run_cell("import numpy as np\nimport wengert as wg")
    yield shell
    shell.run_line_magic("unload_ext", "wengert")
    for name in ("x", "w", "b", "y", "L", "_autodiff", "res", "t", "z", "q", "h", "double"):
        shell.user_ns.pop(name, None)
    shell.extension_manager.loaded.discard("wengert")


def _run(ip, cell):
    result = ip.run_cell(cell)
    return result


def test_autodiff_card_value_grads_and_plain_variables(ip):
    ip.run_cell("x = 1.5; w = 0.8; b = 0.1; y = 1.0")
    r = _run(ip, "%%autodiff x w b y\nL = (x * w + b - y) ** 2")
    assert r.error_in_exec is None and r.error_before_exec is None
    res = ip.user_ns["_autodiff"]
    assert r.result is res
    assert res.grads["w"] == pytest.approx(0.9) and res.value == pytest.approx(0.09)
    assert type(ip.user_ns["L"]) is float and type(ip.user_ns["w"]) is float


def test_forward_and_both_modes_and_as(ip):
    r = _run(ip, "%%autodiff a b c --mode both --as res\na = 2.0\nb = 3.0\nc = 4.0\n(a + b) * c")
    assert r.error_in_exec is None
    res = ip.user_ns["res"]
    assert res.agree and res.grads == {"a": 4.0, "b": 4.0, "c": 5.0}
    assert res.output_name == "output" and res.value == 20.0
    r = _run(ip, "%%autodiff t --mode forward\nt = 0.5\nz = np.sin(t)")
    assert ip.user_ns["_autodiff"].grads["t"] == pytest.approx(np.cos(0.5))


def test_of_selects_the_output(ip):
    _run(ip, "%%autodiff t --of z\nt = 3.0\nz = t ** 2\nq = z + 1.0")
    assert ip.user_ns["_autodiff"].output_name == "z" and ip.user_ns["_autodiff"].grads["t"] == 6.0


def test_a_failing_cell_leaves_no_earlier_result_behind(ip):
    # after a cell that raised, _autodiff must not show the numbers of an earlier run
    ip.run_cell("x = 1.5; w = 0.8")
    assert _run(ip, "%%autodiff x w\nL = (x * w) ** 2").error_in_exec is None
    assert ip.user_ns["_autodiff"].value == pytest.approx(1.44)
    r = _run(ip, "%%autodiff x w\nL = (x * w) ** 3\nraise ValueError('boom')")
    assert isinstance(r.error_in_exec, ValueError)
    assert "_autodiff" not in ip.user_ns and ip.user_ns["L"] == pytest.approx(1.728)
    # a refusal after the cell ran (a complex output) too, and under --as
    _run(ip, "%%autodiff x w --as res\nL = (x * w) ** 2")
    r = _run(ip, "%%autodiff x w --as res\nL = (x * w) * 1j")
    assert r.error_in_exec is not None and "res" not in ip.user_ns
    # a variable that is no result is left alone
    ip.run_cell("res = 5")
    _run(ip, "%%autodiff x w --as res\nraise KeyError('k')")
    assert ip.user_ns["res"] == 5


def test_a_hook_handle_or_a_mode_as_a_cells_last_line_shows_no_memory_address(ip):
    ip.run_cell("x = wg.tensor([1.0, 2.0], requires_grad=True)\ndef double(g):\n"
                "    return g * 2\nh = x * 3")
    handle = ip.run_cell("h.register_hook(double)").result
    texts = [ip.display_formatter.format(handle)[0]["text/plain"]]
    texts.append(ip.display_formatter.format(ip.run_cell("wg.no_grad()").result)[0]["text/plain"])
    assert texts == ["<hook handle: double, registered>", "wg.no_grad()"]
    handle.remove()
    assert repr(handle) == "<hook handle: double, removed>"
    assert repr(ip.run_cell("h.register_hook(lambda g: g)").result) == \
        "<hook handle: <lambda>, registered>"
    assert repr(ip.run_cell("wg.enable_grad()").result) == "wg.enable_grad()"
    assert repr(ip.run_cell("wg.source_lines()").result) == "wg.source_lines()"
    assert repr(ip.run_cell("wg.keep_values('1 MB')").result) == \
        "wg.keep_values(budget=1048576)"


def test_trailing_semicolon_silences_the_card(ip):
    r = _run(ip, "%%autodiff t\nt = 3.0\nz = t ** 2;")
    assert r.result is None and ip.user_ns["_autodiff"].grads["t"] == 6.0


def test_an_exception_propagates_at_the_users_line_and_state_is_restored(ip, capsys):
    from wengert.core.modes import GRAD_ENABLED, RECORDERS, TRANSFORM_DEPTH
    ip.colors = "nocolor"
    before = (GRAD_ENABLED.get(), RECORDERS.get(), TRANSFORM_DEPTH.get())
    r = _run(ip, "%%autodiff t\nt = 3.0\nz = t * 2\nraise KeyError('from the cell')")
    assert isinstance(r.error_in_exec, KeyError)
    out = capsys.readouterr().out
    assert "raise KeyError('from the cell')" in out and "----> 3" in out
    assert "contextvars" not in out and "def _run" not in out  # our frames are hidden
    assert (GRAD_ENABLED.get(), RECORDERS.get(), TRANSFORM_DEPTH.get()) == before
    assert ip.user_ns["z"] == 6.0  # plain, not a dead tensor
    assert _run(ip, "%%autodiff t\nt = 2.0\nz = t ** 3").error_in_exec is None


@pytest.mark.parametrize("line, message", [
    ("%%autodiff t --bogus", "unrecognized arguments"),
    ("%%autodiff t --mode sideways", "invalid choice"),
    ("%%autodiff t --show tape,pictures", "--show pictures"),
    ("%%autodiff nothing_here", "neither defined"),
    # the result would replace the input or a variable of the cell, or bind no variable
    ("%%autodiff t --as t", "--as t: t is an input"),
    ("%%autodiff t --as z", "--as z: the cell binds z"),
    ("%%autodiff t --as 1abc", "--as 1abc: not a variable name"),
    ("%%autodiff t --as for", "--as for: not a variable name"),
])
def test_misuse_raises_usage_error_with_the_usage_line(ip, line, message):
    ip.user_ns.pop("z", None)
    r = _run(ip, line + "\nt = 1.0\nz = t * 2")
    err = r.error_in_exec or r.error_before_exec
    assert isinstance(err, UsageError) and message in str(err)
    assert "z" not in ip.user_ns and "1abc" not in ip.user_ns  # refused before it ran


def test_as_a_name_the_cell_reads_is_refused(ip):
    # --as np in a cell that calls np.sin: the result would replace numpy, and the cell
    # (and every later one) would no longer run
    r = _run(ip, "%%autodiff t --as np\nt = 1.0\nz = np.sin(t) * 2")
    err = r.error_in_exec or r.error_before_exec
    assert isinstance(err, UsageError) and "--as np: the cell reads np" in str(err)
    assert ip.user_ns["np"] is np
    r = _run(ip, "%%autodiff t --as f\nt = 1.0\ndef f(a):\n    return a * 2\nz = f(t)")
    assert "--as f: the cell binds f" in str(r.error_in_exec or r.error_before_exec)
    r = _run(ip, "%%autodiff t --as g\nt = 1.0\ndef g(a):\n    return a\nz = t * 2")
    assert "--as g: the cell binds g" in str(r.error_in_exec or r.error_before_exec)
    r = _run(ip, "%%autodiff t --as math\nimport math\nt = 1.0\nz = t * 2")
    assert "--as math: the cell binds math" in str(r.error_in_exec or r.error_before_exec)
    assert _run(ip, "%%autodiff t --as res\nt = 1.0\nz = np.sin(t)").error_in_exec is None


def test_usage_error_shows_the_usage_line(ip):
    r = _run(ip, "%%autodiff zz\nt = 1.0")
    assert "usage: %%autodiff [--of NAME]" in str(r.error_in_exec)


def test_help_text(ip):
    doc = ip.find_cell_magic("autodiff").__doc__
    assert "--mode {reverse,forward,both}" in doc and "--of NAME" in doc and "_autodiff" in doc


def test_ipython_syntax_inside_the_cell(ip):
    r = _run(ip, "%%autodiff t\nt = 2.0\n%time z = t ** 2\nz")
    assert r.error_in_exec is None and ip.user_ns["_autodiff"].grads["t"] == 4.0


def test_unload_removes_the_magic(ip):
    ip.run_line_magic("unload_ext", "wengert")
    assert ip.find_cell_magic("autodiff") is None
    ip.run_line_magic("load_ext", "wengert")
    assert ip.find_cell_magic("autodiff") is not None


def test_import_wengert_loads_no_jupyter_dependency():
    code = ("import sys, wengert, wengert.jupyter; "
            "bad = [m for m in ('IPython', 'ipywidgets', 'anywidget', 'matplotlib', 'graphviz', "
            "'traitlets', 'ipykernel') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_complex_inputs_in_reverse_mode_follow_wengerts_convention(ip):
    ip.run_cell("z = np.array([1 + 2j, 0.5 - 1j]); c = 1 + 2j")
    r = _run(ip, "%%autodiff c\nL = np.abs(c) ** 2")
    assert r.error_in_exec is None
    grads = ip.user_ns["_autodiff"].grads
    assert grads["c"] == pytest.approx(2 - 4j) and type(grads["c"]) is complex  # 2·conj(c)
    assert type(ip.user_ns["c"]) is complex  # the variable keeps its plain value
    r = _run(ip, "%%autodiff z\nL = np.sum(np.abs(np.exp(1j * z) * np.conj(z)) ** 2)")
    assert r.error_in_exec is None
    import wengert as wg
    want = wg.grad(lambda z: np.sum(np.abs(np.exp(1j * z) * np.conj(z)) ** 2))(
        np.array([1 + 2j, 0.5 - 1j]))
    np.testing.assert_allclose(ip.user_ns["_autodiff"].grads["z"], want)
    assert type(ip.user_ns["z"]) is np.ndarray and "∂L/∂z" in repr(ip.user_ns["_autodiff"])


@pytest.mark.parametrize("cell, message", [
    ("%%autodiff z --mode forward\nL = np.sum(np.abs(z))", r"complex.*--mode reverse"),
    ("%%autodiff z --mode both\nL = np.sum(np.abs(z))", r"complex.*--mode reverse"),
    ("%%autodiff z\nw = np.exp(1j * z)\nw", r"output 'output' is complex.*np\.abs"),
])
def test_complex_misuse_says_what_to_do(ip, cell, message):
    ip.run_cell("z = np.array([1 + 2j, 0.5 - 1j])")
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("autodiff", cell.split("\n", 1)[0].removeprefix("%%autodiff "),
                          cell.split("\n", 1)[1])


# -- the view-keeping mode: backward() first, then look ------------------------------------
def _ok(ip, cell):
    r = ip.run_cell(cell)
    assert r.error_in_exec is None and r.error_before_exec is None, r.error_in_exec
    return r


def test_after_load_ext_explore_and_explain_come_after_backward(ip):
    _ok(ip, "x = wg.tensor([1.0, 2.0], requires_grad=True); y = (np.sin(x) * x).sum()\n"
            "y.backward()")
    _ok(ip, "v = wg.explore(y)")  # a later cell
    data = ip.user_ns["v"].data
    assert data["nodes"]["adjoint"][-1] == "[1.382, 0.077]" and "backward() ran" in \
        data["sweep_note"]
    _ok(ip, "with np.errstate(divide='ignore'):\n"
            "    x = wg.tensor([1.0, 2.0], requires_grad=True); y = (np.sqrt(x-1) * x).sum()\n"
            "    y.backward()")
    _ok(ip, "e = wg.explain(y, x)")
    e = ip.user_ns["e"]
    assert (e.status, e.op) == ("nan", "sqrt") and "np.sqrt(x-1)" in e.source.text
    _ok(ip, "second = None\ntry:\n    y.backward()\nexcept RuntimeError as err:\n"
            "    second = str(err)")
    assert ip.user_ns["second"].startswith("Trying to backward through the graph a second time")
    for name in ("v", "e", "second"):
        ip.user_ns.pop(name, None)


def test_the_mode_holds_its_budget_across_cells_and_ends_with_unload(ip):
    _ok(ip, "wg.keep_budget('64 MB')")
    _ok(ip, "budget = wg.keep_budget()")
    assert ip.user_ns.pop("budget") == 64 << 20
    _ok(ip, "wg.keep_budget('256 MB')")
    ip.run_line_magic("unload_ext", "wengert")
    r = ip.run_cell("wg.keep_budget()")
    assert isinstance(r.error_in_exec, RuntimeError)
    ip.run_line_magic("load_ext", "wengert")
    ip.run_line_magic("load_ext", "wengert")  # twice: one set of cell hooks
    from wengert.jupyter.magic.extension import CellHooks
    hooks = [c for c in ip.events.callbacks["pre_execute"]
             if isinstance(getattr(c, "__self__", None), CellHooks)]
    assert len(hooks) == 1


def test_a_silent_cell_that_loads_the_extension_leaves_the_mode_after_it(ip):
    import wengert as wg

    ip.run_line_magic("unload_ext", "wengert")
    ip.run_cell("%load_ext wengert", silent=True).raise_error()
    with pytest.raises(RuntimeError, match="view-keeping mode is not on"):
        wg.keep_budget()  # outside any cell
    r = ip.run_cell("budget = wg.keep_budget()", silent=True)  # a silent cell is in it
    r.raise_error()
    assert ip.user_ns.pop("budget") == 256 << 20
    with pytest.raises(RuntimeError, match="view-keeping mode is not on"):
        wg.keep_budget()


def test_a_cell_that_raises_leaves_the_mode_for_the_next_cell(ip):
    r = ip.run_cell("1 / 0")
    assert isinstance(r.error_in_exec, ZeroDivisionError)
    _ok(ip, "x = wg.tensor(2.0, requires_grad=True); y = x * x; y.backward()")
    _ok(ip, "v = wg.explore(y)")
    assert ip.user_ns.pop("v").data["nodes"]["adjoint"] == ["1", "4"]


@pytest.mark.parametrize("kind", ["wg.checkpoint(block)", "double"])
def test_custom_rules_in_autodiff_and_after_backward(ip, kind):
    _ok(ip, "def block(v):\n    return np.sin(v) * v\n"
            "@wg.custom_vjp\ndef double(v):\n    return v * 2.0\n"
            "double.defvjp(lambda v: (v * 2.0, None), lambda res, g: (g * 2.0,))")
    _ok(ip, f"%%autodiff x\nx = np.array([1.0, 2.0])\nL = {kind}(x).sum()")
    res = ip.user_ns["_autodiff"]
    data = res.explore().data
    assert data["nodes"]["adjoint"][-1] == ip.user_ns["wg"].core.formatting.summarize(
        res.grads["x"])
    _ok(ip, f"x = wg.tensor([1.0, 2.0], requires_grad=True); y = {kind}(x).sum(); y.backward()")
    _ok(ip, "v = wg.explore(y)")
    assert ip.user_ns.pop("v").data["nodes"]["name"] == ["t0", "t1", "x"]


@pytest.mark.slow
def test_a_real_kernel_keeps_the_mode_across_cells():
    """Through ipykernel (jupyter_client): the cell hooks enter the mode in each cell."""
    manager = pytest.importorskip("jupyter_client.manager")
    km, kc = manager.start_new_kernel(kernel_name="python3")

    def run(code):
        kc.execute(code)
        out = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            kind = msg["msg_type"]
            if kind == "stream":
                out.append(msg["content"]["text"])
            elif kind == "error":
                out.append("ERROR " + msg["content"]["ename"] + ": " + msg["content"]["evalue"])
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                return "".join(out)

    try:
        src = str(Path(__file__).parents[3] / "src")
        run(f"import sys; sys.path.insert(0, {src!r})")
        run("%load_ext wengert")
        run("import numpy as np, wengert as wg\n"
            "x = wg.tensor([1.0, 2.0], requires_grad=True); y = (np.sin(x) * x).sum()\n"
            "y.backward()")
        out = run("print(wg.explore(y).data['nodes']['adjoint'][-1]); print(wg.keep_budget())")
        assert out.split() == ["[1.382,", "0.077]", str(256 << 20)], out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# -- the namespace after the cell ----------------------------------------------------------
def test_the_next_cell_runs_after_a_cell_stored_traced_values(ip):
    ip.run_cell("x = 2.0")
    r = _run(ip, "%%autodiff x\nclass B:\n    pass\nbox = B()\nbox.val = x * 3\n"
                 "keep = [x * 2, {'k': (x,)}]\ng = (lambda a: lambda: a)(x * 5)\ny = x * 1.0")
    assert r.error_in_exec is None
    r = _run(ip, "z = box.val * 2 + keep[0] + keep[1]['k'][0] + g()")
    assert r.error_in_exec is None and ip.user_ns["z"] == 28.0
    assert type(ip.user_ns["box"].val) is float
    for name in ("B", "box", "keep", "g", "z"):
        ip.user_ns.pop(name, None)


def test_ipythons_own_names_are_left_alone(ip):
    out = ip.user_ns["Out"]
    r = _run(ip, "%%autodiff t\nt = 2.0\nz = t ** 2")
    assert r.error_in_exec is None and ip.user_ns["Out"] is out


# -- custom rules, checkpoint, hooks, tapes and variables in a cell --------------------------
FEATURES = {
    "custom_vjp": ("@wg.custom_vjp\ndef f(a):\n    return np.sin(a)\n"
                   "f.defvjp(lambda a: (np.sin(a), np.cos(a)), lambda c, g: (c * g,))\n"
                   "y = f(x) * 2.0", 2 * np.cos(0.7)),
    "custom_jvp": ("@wg.custom_jvp\ndef f(a):\n    return np.sin(a)\n@f.defjvp\n"
                   "def f_jvp(primals, tangents):\n    return np.sin(primals[0]), "
                   "np.cos(primals[0]) * tangents[0]\ny = f(x) * 2.0", 2 * np.cos(0.7)),
    "checkpoint": ("g = wg.checkpoint(lambda a: np.sin(a) * a)\ny = g(x) * 2.0",
                   2 * (np.cos(0.7) * 0.7 + np.sin(0.7))),
    "hook": ("seen = []\nq = x * 3.0\nq.register_hook(lambda g: seen.append(g))\ny = q ** 2",
             18 * 0.7),
    "gradient tape": ("with wg.GradientTape() as tape:\n    tape.watch(x)\n    u = x ** 3\n"
                      "du = tape.gradient(u, x)\ny = du * 1.0", 6 * 0.7),
    "variable": ("v = wg.Variable(2.0)\ny = v * x", 2.0),
}


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
@pytest.mark.parametrize("feature", list(FEATURES))
def test_features_inside_a_cell_work_with_every_show_and_mode(ip, feature, mode):
    pytest.importorskip("anywidget")
    source, grad = FEATURES[feature]
    ip.run_cell("x = 0.7")
    r = _run(ip, f"%%autodiff x --mode {mode} --show all\n{source}")
    assert r.error_in_exec is None, r.error_in_exec
    res = ip.user_ns["_autodiff"]
    assert res.grads["x"] == pytest.approx(grad, rel=1e-12)
    html = res._repr_html_()
    assert "Error" not in html and "wg.grad" not in html
    assert res.explore().frames is not None
    if mode == "both":
        assert res.agree
    import wengert as wg
    assert wg.explore(res).frames is not None  # the module function too
    assert _run(ip, "probe = y * 2").error_in_exec is None  # the next cell


def test_a_hook_that_changes_the_gradient_is_said_in_every_mode(ip):
    ip.run_cell("x = 0.7")
    cell = "q = x * 3.0\nq.register_hook(lambda g: g * 2)\ny = q ** 2"
    _run(ip, f"%%autodiff x --show all\n{cell}")
    res = ip.user_ns["_autodiff"]
    assert res.grads["x"] == pytest.approx(36 * 0.7)  # the hook doubled q's cotangent
    html = res._repr_html_()  # the steps of the cell's own sweep, the hook's effect in them
    assert "x̄ = 25.2" in html and "x̄ = 12.6" not in html and "replay" not in html
    # the hook is a row of its own in both tables: no step number is skipped
    rows = re.findall(r"<tr><td>(\d*)</td>", html)
    assert [r for r in rows if r] == ["1", "2", "3", "1", "2", "3"]
    assert "q̄ = 4.2 → q̄ = 8.4" in html and "1×1: 1 entry," in html
    _run(ip, f"%%autodiff x --mode forward\n{cell}")
    res = ip.user_ns["_autodiff"]
    assert res.grads["x"] == pytest.approx(18 * 0.7) and "forward mode runs none" in res.notes[0]
    _run(ip, f"%%autodiff x --mode both\n{cell}")
    res = ip.user_ns["_autodiff"]
    assert not res.agree and "differ from reverse mode's where a hook changed" in res.notes[0]


def test_a_hook_on_the_input_runs_as_backward_runs_it(ip):
    ip.run_cell("x = 0.7")
    _run(ip, "%%autodiff x\nseen = []\nx.register_hook(lambda g: seen.append(g))\ny = x ** 2")
    assert ip.user_ns["seen"] == [pytest.approx(1.4)]


@pytest.mark.parametrize("cell, message", [
    ("y = x ** 2\ny.backward()", "backward() was called in the %%autodiff cell"),
    ("v = wg.Variable(2.0)\nwith wg.GradientTape() as tape:\n    u = v * x ** 2\n"
     "gv = tape.gradient(u, v)", "computed in the %%autodiff cell from its inputs, which the "
                                 "tape does not watch"),
    ("v = wg.Variable(2.0)\nwith wg.GradientTape() as tape:\n    tape.watch(x)\n"
     "    u = v * x ** 2\ngv = tape.gradient(u, v)", "a Variable, which belongs to no transform"),
    ("y = float(x) * 2", "float() of a value computed in the %%autodiff cell from its inputs"),
    ("import math\ny = math.exp(x)", "the %%autodiff cell would show a wrong derivative"),
    ("y = x.item() * 2", "item() of a value computed in the %%autodiff cell"),
    ("y = x * 3\nprint('%.2f' % y)", "To print a value, use print(y) or an f-string"),
])
def test_refusals_inside_a_cell_speak_of_the_cell(ip, capsys, cell, message):
    ip.run_cell("x = 0.7")
    r = _run(ip, f"%%autodiff x\n{cell}")
    assert isinstance(r.error_in_exec, RuntimeError | TypeError)
    said = str(r.error_in_exec)
    assert message in said and "wg.grad /" not in said and "wengert transform" not in said
    said = str(_run(ip, f"%%autodiff x --mode forward\n{cell}").error_in_exec)
    assert "wg.grad /" not in said and "wengert transform" not in said


def test_the_explorer_steps_through_the_cells_own_sweep_with_its_hooks(ip):
    # reverse mode keeps the sweep the cell ran; both mode, and a sweep the budget
    # released, show a replay, which says it is not the card's numbers
    pytest.importorskip("anywidget")
    ip.run_cell("x = 0.7")
    cell = "q = x * 3.0\nq.register_hook(lambda g: g * 2)\ny = q ** 2"
    _run(ip, f"%%autodiff x --show all\n{cell}")
    res = ip.user_ns["_autodiff"]
    data = res.explore().data
    assert res.sweep_kept() and "the %%autodiff cell ran" in data["sweep_note"]
    assert data["seed_note"] is None
    hook = next(step_view(data, k) for k in range(data["steps"]["total"])
                if step_view(data, k)["phase"] == "hook")
    assert (hook["before"], hook["after"]) == ("q̄ = 4.2", "q̄ = 8.4")
    leaf = data["nodes"]["name"].index("x")
    assert data["nodes"]["adjoint"][leaf] == "25.2" == format_number(res.grads["x"])
    _run(ip, f"%%autodiff x --mode both\n{cell}")
    assert "not the numbers of the card" in ip.user_ns["_autodiff"].explore().data["seed_note"]
    ip.run_cell("wg.keep_budget(0)")
    try:
        _run(ip, f"%%autodiff x --show all\n{cell}")
        res = ip.user_ns["_autodiff"]
        assert not res.sweep_kept()
        assert "not the numbers of the card" in res.explore().data["seed_note"]
        assert "a replay of the sweep runs without hooks" in res._repr_html_()
    finally:
        ip.run_cell("wg.keep_budget('256 MB')")


def test_a_name_bound_by_a_line_magic_is_pointed_to(ip):
    ip.run_cell("x = 2.0")
    _run(ip, "%%autodiff x\nt = 2.0\n%time z = x ** 2")
    res = ip.user_ns["_autodiff"]
    assert res.output_name == "t" and "but z does" in res.notes[0] and "--of z" in res.notes[0]
    assert type(ip.user_ns["z"]) is float
    _run(ip, "%%autodiff x --of z\n%time z = x ** 2")
    assert ip.user_ns["_autodiff"].grads["x"] == 4.0


def test_an_lru_cache_filled_in_the_cell_is_emptied(ip):
    ip.run_cell("x = 2.0\nimport functools\n@functools.cache\ndef old(a):\n    return a + 1.0\n"
                "old(1.0)")
    r = _run(ip, "%%autodiff x\n@functools.lru_cache\ndef f(a):\n    return a * x\ny = f(2.0)")
    assert r.error_in_exec is None and ip.user_ns["f"].cache_info().currsize == 0
    assert ip.user_ns["old"].cache_info().currsize == 1  # untouched by the cell: kept
    assert _run(ip, "q = f(2.0) * 3").error_in_exec is None and ip.user_ns["q"] == 12.0
    for name in ("f", "old", "functools", "q"):
        ip.user_ns.pop(name, None)


EIGH_CELL = ("%%autodiff a --show tape,graph,adjoint\na = a0\nw, v = np.linalg.eigh(a)\n"
             "L = np.sum(w) + np.sum(v[0] ** 2)")


def _decomposition_card(ip):
    ip.run_cell("a0 = np.array([[2.0, 0.5], [0.5, 1.0]])")
    assert _run(ip, EIGH_CELL).error_in_exec is None
    res = ip.user_ns["_autodiff"]
    eq = next(eq for eq in res.tape if len(eq.outs) == 2)
    return res, eq


def test_the_card_shows_the_cotangent_of_every_output_of_a_decomposition(ip):
    from wengert.core.formatting import value_text
    from wengert.jupyter.views.subject import TapeNames
    from wengert.jupyter.views.text import equation_cells

    res, eq = _decomposition_card(ip)
    _, vectors = np.linalg.eigh(ip.user_ns["a0"])
    w_bar, v_bar = np.ones(2), np.zeros((2, 2))
    v_bar[0] = 2.0 * vectors[0]  # L = Σw + Σ v[0]²
    np.testing.assert_allclose(res.adjoints[eq.outs[0].name], w_bar)
    np.testing.assert_allclose(res.adjoints[eq.outs[1].name], v_bar, atol=1e-12)
    cell = equation_cells(eq, TapeNames(res.tape, res.names), res.adjoints)["adjoint"]
    assert cell == f"{value_text(res.adjoints[eq.outs[0].name])}; " \
                   f"{value_text(res.adjoints[eq.outs[1].name])}"
    assert value_text(res.adjoints[eq.outs[1].name]) in res._repr_html_()
    for name in ("a0", "a", "v"):
        ip.user_ns.pop(name, None)


def test_every_output_of_a_decomposition_has_the_users_name(ip):
    from wengert.jupyter.views.subject import TapeNames

    res, eq = _decomposition_card(ip)
    names = TapeNames(res.tape, res.names)
    assert [names.var(v) for v in eq.outs] == ["w", "v"]
    last = res.tape[len(res.tape) - 1]  # L = Σw + Σ v[0]²: the add, not the sum before it
    assert last.primitive == "add" and names.var(last.out) == "L"
    assert [names.var(v) for v in res.tape[len(res.tape) - 2].outs] != ["L"]
    assert "<B>w, v</B>" in res.graph.source
    for name in ("a0", "a", "v"):
        ip.user_ns.pop(name, None)


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_explain_in_every_mode(ip, mode):
    ip.run_cell("x = 2.5")
    r = _run(ip, f"%%autodiff x --mode {mode} --explain x\nh = x * 2.0\nL = h * 5.0")
    assert r.error_in_exec is None, r.error_in_exec
    e = ip.user_ns["_autodiff"].explanation
    assert e.status == "ok" and e.gradient == "10"


def test_printing_a_formatted_value_in_a_cell_works_in_every_mode(ip, capsys):
    # print(f"{loss:.3f}") is ordinary Python: the string carries no derivative
    ip.run_cell("x = 1.5")
    for mode in ("reverse", "forward", "both"):
        r = _run(ip, f"%%autodiff x --mode {mode}\ny = x ** 2\nprint(f'y = {{y:.3f}}')")
        assert r.error_in_exec is None and ip.user_ns["_autodiff"].grads["x"] == 3.0
        assert "y = 2.250" in capsys.readouterr().out
    r = _run(ip, "%%autodiff x\ny = np.stack([x, x])\nprint(f'{y:.3f}')")
    assert isinstance(r.error_in_exec, TypeError) and "is not one number" in str(r.error_in_exec)


def test_explain_takes_a_result_and_the_name_of_one_of_its_inputs(ip):
    # wg.explain(_autodiff, "x"), as wg.draw(_autodiff) and _autodiff.explore() take it
    ip.run_cell("x = np.array([0.0, 4.0]); w = 2.0")
    cell = "y = np.sum(np.where(x > 0, np.sqrt(x), 0.0)) * w"
    assert _run(ip, f"%%autodiff x w\n{cell}").error_in_exec is None
    e = ip.run_cell("wg.explain(_autodiff, 'x')").result
    assert (e.status, e.cause, e.op) == ("nan", "where_nan", "sqrt")
    assert e.target == "y" and e.wrt == "x" and "np.where(x > 0" in e.fix
    assert ip.run_cell("wg.explain(_autodiff, 'w')").result.status == "ok"
    r = ip.run_cell("wg.explain(_autodiff, 'q')")
    assert isinstance(r.error_in_exec, TypeError) and "'x', 'w'" in str(r.error_in_exec)
    # forward mode: its dual numbers ended with the cell; --explain kept the answer
    _run(ip, f"%%autodiff x w --mode both --explain x\n{cell}")
    assert ip.run_cell("wg.explain(_autodiff, 'x')").result.cause == "where_nan"
    r = ip.run_cell("wg.explain(_autodiff, 'w')")
    assert isinstance(r.error_in_exec, TypeError) and "--explain w" in str(r.error_in_exec)


@pytest.mark.parametrize("mode", ["reverse", "forward", "both"])
def test_explain_of_a_nan_gradient_in_every_mode_says_nan(ip, mode):
    # the reverse sweep over dual numbers (forward and both modes) made a NaN: not "OK"
    ip.run_cell("x = np.array([0.0, 4.0])")
    _run(ip, f"%%autodiff x --mode {mode} --explain x\n"
             "y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))")
    res = ip.user_ns["_autodiff"]
    e = res.explanation
    assert (e.status, e.cause, e.gradient) == ("nan", "where_nan", "[nan, 0.25]")
    if mode == "forward":  # the card shows forward mode's derivative, which has no NaN
        assert list(res.grads["x"]) == [0.0, 0.25] and "forward mode's derivative" in e.notes[-1]
    else:
        assert not e.notes or "forward mode's derivative" not in e.notes[-1]
