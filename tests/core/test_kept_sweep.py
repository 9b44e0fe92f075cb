"""The view-keeping mode (wengert.core.kept): backward() first, then the views.

Inside ``wg.keep_values()`` (and in a notebook after ``%load_ext wengert``, see
test_magic.py) a backward pass keeps the sweep it ran, so ``wg.explore`` and
``wg.explain`` called after it show the real sweep; ``backward()`` itself, ``.grad``
and the second-backward error are those of the plain mode.
"""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

import numpy as np
import wengert as wg
from wengert.core.formatting import summarize
from wengert.core.kept import KEEPER, Keeper, budget_text, kept_sweep, parse_budget
from wengert.core.sweep import SECOND_TIME
from wengert.jupyter.explorer.frames import explorer_frames, step_view


def frames_of(y, **kw):
    return explorer_frames(wg.tape_of(y), **kw)


def leaf_adjoints(data):
    """The explorer's final adjoint of each leaf, by name."""
    nodes = data["nodes"]
    return {name: adj for name, adj, kind in zip(nodes["name"], nodes["adjoint"], nodes["kind"])
            if kind == 1}


# -- backward() first, then explore and explain ----------------------------------------
def test_explore_and_explain_after_backward_in_keep_values():
    pytest.importorskip("anywidget")
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (np.sin(x) * x).sum()
        y.backward()
    view = wg.explore(y)
    assert view.data["steps"] == {"forward": 3, "reverse": 3, "total": 7}
    assert leaf_adjoints(view.data) == {"x": summarize(x.grad)}
    assert "backward() ran" in view.data["sweep_note"]
    e = wg.explain(y, x)
    assert e.status == "ok" and e.gradient == summarize(x.grad)


def test_explain_names_the_op_of_an_infinity_after_backward():
    with wg.keep_values(), np.errstate(divide="ignore"):
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (np.sqrt(x - 1) * x).sum()
        y.backward()
    e = wg.explain(y, x)
    assert (e.status, e.cause, e.op) == ("nan", "infinite_derivative", "sqrt")
    assert e.gradient == summarize(x.grad) == "[inf, 2]"
    assert "freed" not in e.message


def test_a_plain_backward_still_refuses_and_says_how_to_keep():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (np.sin(x) * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="%load_ext wengert.*keep_values"):
        wg.explore(y)
    assert wg.explain(y, x).cause == "graph_freed"
    assert kept_sweep(y.grad_fn.node) is None


def test_a_graph_recorded_in_keep_values_keeps_its_backward_run_outside():
    x = wg.tensor(3.0, requires_grad=True)
    with wg.keep_values():
        y = x * x + 1.0
    y.backward()
    assert frames_of(y)["nodes"]["adjoint"] == ["1", "1", "6", None]  # the constant: none


# -- backward() is unchanged -----------------------------------------------------------------
def test_backward_semantics_are_unchanged():
    def run(keep):
        x = wg.tensor([0.5, -1.0], requires_grad=True)
        with wg.keep_values() if keep else _nothing():
            y = (np.tanh(x) * x).sum()
            y.backward()
            with pytest.raises(RuntimeError) as err:
                y.backward()
        return x.grad, str(err.value)

    plain, kept = run(False), run(True)
    assert np.array_equal(plain[0], kept[0])
    assert plain[1] == kept[1] == SECOND_TIME


def test_retain_graph_twice_accumulates_and_the_explorer_says_so():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward(retain_graph=True)
        y.backward()  # the graph can still be swept: retain_graph is honoured
    data = frames_of(y, leaf_names=["x"])
    assert x.grad.tolist() == [6.0, 12.0]
    assert leaf_adjoints(data) == {"x": "[2, 4]"}  # this sweep's; .grad holds the sum
    assert "last of 3 sweeps" in data["sweep_note"] and "sum" in data["sweep_note"]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


# -- hooks ---------------------------------------------------------------------------------
def hooked_graph():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    t = x * 3.0
    t.register_hook(lambda g: g * 10)
    t.retain_grad()

    def clip(g):
        return np.clip(g, -100.0, 100.0)

    x.register_hook(clip)
    y = (t * t).sum()
    return x, t, y


def test_the_explorer_after_backward_agrees_with_grad_under_hooks():
    with wg.keep_values():
        x, t, y = hooked_graph()
        y.backward()
    data = frames_of(y, leaf_names=["x"])
    assert leaf_adjoints(data) == {"x": summarize(x.grad)} == {"x": "[100, 100]"}
    assert data["hooks"] == [["<lambda>", "[6, 12]", "[60, 120]"],
                             ["clip", "[180, 360]", "[100, 100]"]]
    views = [step_view(data, k) for k in range(data["steps"]["total"])]
    hooks = [v for v in views if v["phase"] == "hook"]
    assert [(v["before"], v["after"]) for v in hooks] == [
        ("t̄0 = [6, 12]", "t̄0 = [60, 120]"), ("x̄ = [180, 360]", "x̄ = [100, 100]")]
    t0 = next(v for v in views if v["phase"] == "reverse" and v["node"] == 0)
    assert t0["incoming"] == "t̄0 = [60, 120]" == f"t̄0 = {summarize(t.grad)}"
    assert wg.explain(y, x).gradient == summarize(x.grad)


def test_a_replay_shows_each_hook_as_a_step_that_did_not_run():
    x, t, y = hooked_graph()
    data = frames_of(y, leaf_names=["x"])
    assert [h[2] for h in data["hooks"]] == [None, None]
    assert "no hook ran" in data["sweep_note"]
    assert x.grad is None and t.grad is None  # a replay writes nothing


def test_a_hook_that_raises_leaves_a_partial_sweep_said_as_such():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        t = x * 2.0

        def bad(g):
            raise ValueError("boom")

        t.register_hook(bad)
        y = (t * t).sum()
        with pytest.raises(ValueError, match="boom"):
            y.backward()
    data = frames_of(y, leaf_names=["x"])
    assert data["steps"]["reverse"] == 2  # sum and multiply ran; t0's hook raised
    assert data["nodes"]["adjoint"][0] is None  # never swept: no adjoint shown
    assert leaf_adjoints(data) == {"x": None}
    assert "stopped with ValueError: boom" in data["sweep_note"]
    e = wg.explain(y, x)
    assert e.cause == "graph_freed" and "ValueError: boom" in e.message and x.grad is None


# -- partial sweeps, seeds, create_graph -----------------------------------------------------
def test_backward_inputs_shows_which_grads_were_left_alone():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        w = wg.tensor(3.0, requires_grad=True)
        y = ((x * w) ** 2).sum()
        y.backward(inputs=[w])
    data = frames_of(y, leaf_names=["x", "w"])
    assert x.grad is None and leaf_adjoints(data)["w"] == summarize(w.grad)
    assert "x: its adjoint was computed, but .grad was left unchanged" in data["sweep_note"]


def test_backward_inputs_on_a_non_leaf_shows_no_adjoint_where_the_sweep_stopped():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        a = np.sin(x)
        h = a * 2.0
        y = (h * h).sum()
        y.backward(inputs=[h])
    data = frames_of(y, leaf_names=["x"])
    swept = [e for e, rows in data["reverse"]]
    assert 0 not in swept and data["nodes"]["adjoint"][0] is None  # sin: never swept
    assert leaf_adjoints(data) == {"x": None} and x.grad is None
    assert data["nodes"]["adjoint"][1] == summarize(h.grad)


@pytest.mark.parametrize("computed", [True, False], ids=["swept to it", "stopped before"])
def test_explain_after_backward_inputs_says_why_grad_stayed_none(computed):
    # .grad of a leaf backward(inputs=...) did not name stays None: no "OK", no "zero"
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        w = wg.tensor(3.0, requires_grad=True)
        h = np.sin(x) * w
        y = (h * h).sum()
        y.backward(inputs=[w] if computed else [h])
    assert x.grad is None
    e = wg.explain(y, x)
    assert (e.status, e.cause) == ("none", "not_in_inputs")
    assert "inputs=" in e.message and "x.grad" in e.message and "inputs=" in e.fix
    if computed:  # the sweep reached x: what it computed, said as such
        expected = 2 * (np.sin([1.0, 2.0]) * 3.0) * np.cos([1.0, 2.0]) * 3.0
        assert e.gradient == summarize(expected) and "not stored" in e.message
    else:
        assert e.gradient is None and "stopped before" in e.message
    assert wg.explain(y, w if computed else h).status == "ok"


def test_a_non_scalar_backward_shows_the_gradient_it_was_given():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.backward(gradient=np.array([1.0, -1.0]))
    data = frames_of(y, leaf_names=["x"])
    assert data["seeds"] == [[0, "[1, -1]"]] and "given" in data["seed_note"]
    assert leaf_adjoints(data) == {"x": summarize(x.grad)} == {"x": "[2, -4]"}
    with pytest.raises(RuntimeError, match="another cotangent"):
        frames_of(y, seed=[1.0, 1.0])


def test_create_graph_keeps_values_not_the_backward_graph():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x * x).sum()
        y.backward(create_graph=True)
    record = kept_sweep(y.grad_fn.node)
    assert all(type(step.g) is not wg.Tensor for step in record.steps)
    data = frames_of(y, leaf_names=["x"])
    assert leaf_adjoints(data) == {"x": "[3, 12]"} and "create_graph" in data["sweep_note"]
    x.grad.sum().backward()  # the recorded backward pass still works


def test_explore_of_an_intermediate_swept_from_another_output_refuses():
    with wg.keep_values():
        x = wg.tensor(2.0, requires_grad=True)
        h = x * 3.0
        z = h * h
        z.backward()
    with pytest.raises(RuntimeError, match="started from another output"):
        frames_of(h)
    assert frames_of(z)["nodes"]["adjoint"][:2] == ["12", "1"]


def test_explain_of_an_intermediate_swept_from_another_output_gives_no_number_of_that_one():
    # x.grad holds dz/dx = 36, not dh/dx = 3: it is not shown as h's gradient
    with wg.keep_values():
        x = wg.tensor(2.0, requires_grad=True)
        h = x * 3.0
        z = h * h
        z.backward()
    e = wg.explain(h, x)
    assert (e.status, e.cause, e.gradient) == ("none", "graph_freed", None)
    assert "started from another output" in e.message and "not the gradient of `h`" in e.message


def test_a_graph_freed_by_the_backward_of_another_output_says_so():
    # y1 and y2 share t: y1.backward() freed t's equation; y2 was never swept
    with wg.keep_values():
        x = wg.tensor([1.0, 4.0], requires_grad=True)
        t = np.sqrt(x)
        y1 = (t * 2.0).sum()
        y2 = (t * 3.0).sum()
        y1.backward()
    with pytest.raises(RuntimeError, match=r"t0 .*freed by the backward\(\) of another output"):
        frames_of(y2)
    e = wg.explain(y2, x)
    assert (e.status, e.cause, e.gradient) == ("none", "graph_freed", None)
    assert "freed by the backward() of another output" in e.message
    assert "not the gradient of `y2`" in e.message and "view-keeping mode was not on" \
        not in e.message
    with pytest.raises(RuntimeError, match="second time"):  # PyTorch refuses it too
        y2.backward()


# -- custom rules and checkpoints --------------------------------------------------------------
def custom_functions():
    def block(v):
        return np.sin(v) * v

    @wg.custom_vjp
    def double(v):
        return v * 2.0

    double.defvjp(lambda v: (v * 2.0, None), lambda res, g: (g * 2.0,))

    @wg.custom_jvp
    def sine(v):
        return np.sin(v)

    @sine.defjvp
    def sine_jvp(p, t):
        return np.sin(p[0]), np.cos(p[0]) * t[0]

    return {"checkpoint": wg.checkpoint(block), "custom_vjp": double, "custom_jvp": sine}


@pytest.mark.parametrize("kind", ["checkpoint", "custom_vjp", "custom_jvp"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_custom_rules_and_checkpoints_are_one_step(kind, when):
    fn = custom_functions()[kind]
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = fn(x).sum()
        if when == "after":
            y.backward()
    data = frames_of(y, leaf_names=["x"])
    assert data["nodes"]["name"] == ["t0", "t1", "x"]  # no input for the rule's state
    assert [e for e, _ in data["reverse"]] == [1, 0]
    expected = wg.grad(lambda v: fn(v).sum())(np.array([1.0, 2.0]))
    assert leaf_adjoints(data) == {"x": summarize(expected)}
    views = [step_view(data, k) for k in range(data["steps"]["total"])]
    inner = views[-1]["inner"]
    if kind == "checkpoint":
        assert "recomputed" in inner and "sin" in inner and "multiply" in inner
    elif kind == "custom_jvp":
        assert "sweep of its own" in inner
    else:
        assert inner is None
    assert wg.explain(y, x).status == "ok"


# -- the budget --------------------------------------------------------------------------------
def test_the_budget_releases_the_oldest_first_and_says_so():
    with wg.keep_values(budget="100 kB"):
        xs, ys = [], []
        for _ in range(3):
            x = wg.tensor(np.ones(1000), requires_grad=True)  # 8 kB a value
            y = (np.sin(x) * x).sum()
            y.backward()
            xs.append(x)
            ys.append(y)
        assert wg.keep_budget() == 100 << 10
    with pytest.raises(RuntimeError, match=r"released.*budget of 100 kB.*wg.keep_budget"):
        frames_of(ys[0])
    e = wg.explain(ys[0], xs[0])
    assert e.cause == "graph_freed" and "budget of 100 kB" in e.message
    assert leaf_adjoints(frames_of(ys[2])) == {"x0": summarize(xs[2].grad)}


def test_a_smaller_budget_releases_at_once_and_a_dead_graph_frees_its_record():
    keeper = Keeper()
    with wg.keep_values(budget=keeper.budget) as kv:
        x = wg.tensor(np.ones(1000), requires_grad=True)
        y = (x * x).sum()
        y.backward()
        record = weakref.ref(kept_sweep(y.grad_fn.node))
        assert kv.keeper.held > 8000
        del y
        gc.collect()
        assert record() is None and kv.keeper.held == 0
        x2 = wg.tensor(np.ones(1000), requires_grad=True)
        y2 = (x2 * x2).sum()
        y2.backward()
        wg.keep_budget(0)
        assert kept_sweep(y2.grad_fn.node).released is not None


def test_budget_texts_and_misuse():
    assert parse_budget("2 GB") == 2 << 30 and budget_text(parse_budget("512MB")) == "512 MB"
    for bad in ("lots", -1, "1 TB", 1.5, True):
        with pytest.raises(ValueError, match="memory budget"):
            parse_budget(bad)
    with pytest.raises(RuntimeError, match="not on here"):
        wg.keep_budget()


# -- other front ends, threads ----------------------------------------------------------------
def test_a_non_persistent_gradient_tape_then_explore():
    pytest.importorskip("anywidget")
    c = wg.tensor([1.0, 2.0])
    with wg.GradientTape() as tape:
        tape.watch(c)
        z = (c * c).sum()
    tape.gradient(z, c)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape let go"):
        wg.explore(tape)
    with wg.keep_values():
        with wg.GradientTape() as tape:
            tape.watch(c)
            z = (c * c).sum()
        g = tape.gradient(z, c)
    data = wg.explore(tape).data
    assert data["nodes"]["adjoint"][-1] == summarize(g) and "GradientTape" in data["sweep_note"]


def test_a_thread_runs_outside_the_mode_and_the_message_says_so():
    out = {}

    def work():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        out["y"] = y
        out["keeper"] = KEEPER.get()

    with wg.keep_values():
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert out["keeper"] is None
    with pytest.raises(RuntimeError, match="a thread starts outside it"):
        frames_of(out["y"])


def test_keeping_in_each_thread_of_its_own():
    results = {}

    def work(k):
        with wg.keep_values():
            x = wg.tensor(float(k), requires_grad=True)
            y = x * x
            y.backward()
        results[k] = (leaf_adjoints(frames_of(y)), x.grad)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(adj == {"x0": summarize(g)} for adj, g in results.values())


def test_a_leaf_changed_in_place_after_backward_shows_no_value():
    from wengert.jupyter.views.dot import dot_source

    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
    with wg.no_grad():
        x -= 0.5 * x.grad  # an optimizer's step: x is now [0, 0]
    data = frames_of(y, leaf_names=["x"])
    assert data["nodes"]["value"] == ["[1, 4]", "5", None]  # not x's value now
    assert "changed in place since the equations used it" in dot_source(wg.tape_of(y))
    assert wg.tape_of(y).changed_leaves() == {0}


@pytest.mark.parametrize("mode", ["keep_values", "view_mode"])
def test_a_leaf_no_rule_reads_changed_in_place_after_backward_shows_no_value(mode):
    pytest.importorskip("graphviz")
    # sqrt's rule reads its output, not x: the version x had is noted when recording
    from wengert.jupyter.views.dot import dot_source
    from wengert.reverse.tape_reading import view_mode

    with wg.keep_values() if mode == "keep_values" else view_mode(Keeper(lines=True)):
        x = wg.tensor([1.0, 4.0], requires_grad=True)
        y = np.sqrt(x).sum()
        y.backward()
        with wg.no_grad():
            x -= 0.1 * x.grad  # an optimizer's step: x is now [0.95, 3.975]
        data = frames_of(y, leaf_names=["x"])
        assert data["nodes"]["value"] == ["[1, 2]", "3", None] and data["changed"] == [2]
        assert wg.tape_of(y).changed_leaves() == {0}
        assert "changed in place since the equations used it" in dot_source(wg.tape_of(y))
        assert "0.95" not in wg.draw(y).source
        # the tape's card shows the leaf as it is now, and says it is not what was used
        assert "[0.95, 3.975] now (changed in place since the equations used it)" in \
            wg.tape_of(y)._repr_html_()


@pytest.mark.parametrize("on", ["intermediate", "input"])
def test_explain_after_backward_names_the_hook_that_zeroed_the_gradient(on):
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        with wg.source_lines():
            q = x * 3.0
            (q if on == "intermediate" else x).register_hook(lambda g: g * 0)  # zeroes
            y = (q ** 2).sum()
        y.backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
    e = wg.explain(y, x)
    assert (e.status, e.cause) == ("zero", "hook")
    assert "<lambda>" in e.message and "register_hook" in e.message
    # what it received, made 0: q̄ = 2q, or x̄ = 3 q̄
    assert ("[6, 12]" if on == "intermediate" else "[18, 36]") in e.message
    if on == "intermediate":
        assert e.equation == 0 and e.source.text == "q = x * 3.0"


def test_draw_after_backward_shows_the_kept_adjoints_and_nothing_else():
    pytest.importorskip("graphviz")
    from wengert.jupyter.views.dot import dot_source
    from wengert.jupyter.views.subject import kept_adjoints

    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        t = x * 3.0
        t.register_hook(lambda g: g * 10)
        y = (t * t).sum()
        y.backward()
    adjoints = kept_adjoints(wg.tape_of(y))
    assert summarize(adjoints["t0"]) == "[60, 120]"  # after the hook: what its rule used
    source = wg.draw(y).source
    assert "[60, 120]" in source and f".grad {summarize(x.grad)}" in source
    x2 = wg.tensor([1.0, 2.0], requires_grad=True)
    y2 = (x2 * 3.0).sum()
    y2.backward()
    assert kept_adjoints(wg.tape_of(y2)) is None  # plain mode: nothing kept, none shown
    assert "[3, 3]" not in dot_source(wg.tape_of(y2)).split(".grad")[0]


def test_explain_says_when_a_replay_did_not_run_the_hooks():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    t = x * 3.0
    t.register_hook(lambda g: g * 0.0)  # backward() would give a zero gradient
    y = (t * t).sum()
    e = wg.explain(y, x)
    assert e.status == "ok" and "did not run in this replay" in e.notes[-1]
    with wg.keep_values():
        y.backward(retain_graph=True)
    e = wg.explain(y, x)  # the kept sweep: what .grad got
    assert e.status == "zero" and e.gradient == summarize(x.grad) == "[0, 0]"


def test_a_transforms_own_sweep_is_not_kept_and_the_message_says_so():
    seen = []

    def f(v):
        y = (v * v).sum()
        seen.append(y)
        return y

    with wg.keep_values():
        assert wg.grad(f)(np.array([1.0, 2.0])).tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match=r"transform's own \(wg.grad, wg.vjp\)"):
        frames_of(seen[0])
