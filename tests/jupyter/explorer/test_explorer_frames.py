"""The explorer's frames (wengert.jupyter.explorer.frames): every number on the screen, checked."""

from __future__ import annotations

import contextlib
import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.core.formatting import format_number
from wengert.core.levels import Tag
from wengert.jupyter.explorer.frames import explorer_frames, step_view

HAS_RULES = hasattr(wg.tape_of(wg.tensor(1.0, requires_grad=True) * 2.0)[0].op, "adjoint_terms")


def seed_example():
    """L = (x·w + b − y)², the sketch's example, one line per equation."""
    x, w = wg.tensor(1.5, requires_grad=True), wg.tensor(0.8, requires_grad=True)
    b, y = wg.tensor(0.2, requires_grad=True), wg.tensor(0.1)
    with wg.source_lines():
        t1 = x * w
        t2 = t1 + b
        t3 = t2 - y
        L = t3 ** 2
    return (x, w, b, y), L


def frames_of(L, **kw):
    return explorer_frames(wg.tape_of(L), **kw)


def test_every_number_of_the_seed_example():
    (x, w, b, _), L = seed_example()
    data = frames_of(L, leaf_names=["x", "w", "b"])
    nodes = data["nodes"]
    # Hand-computed: t1 = 1.2, t2 = 1.4, t3 = 1.3, L = 1.69; L̄ = 1, t̄3 = 2·1.3 = 2.6,
    # t̄2 = t̄1 = b̄ = 2.6, x̄ = 2.6·0.8 = 2.08, w̄ = 2.6·1.5 = 3.9.
    assert nodes["name"] == ["t1", "t2", "t3", "L", "x", "w", "b", "0.1", "2"]
    assert nodes["kind"] == [0, 0, 0, 0, 1, 1, 1, 2, 2]
    assert nodes["value"] == ["1.2", "1.4", "1.3", "1.69", "1.5", "0.8", "0.2", "0.1", "2"]
    assert nodes["adjoint"] == ["2.6", "2.6", "2.6", "1", "2.08", "3.9", "2.6", None, None]
    assert data["eqs"]["ins"] == [[4, 5], [0, 6], [1, 7], [2, 8]]
    assert data["steps"] == {"forward": 4, "reverse": 4, "total": 9}
    assert data["seeds"] == [[3, "1"]] and data["seed_note"] is None
    assert [e for e, _ in data["reverse"]] == [3, 2, 1, 0]  # newest first
    assert data["title"] == "L = t3 ** 2"
    # The panel, step by step.
    views = [step_view(data, s) for s in range(9)]
    assert [v["label"] for v in views] == [
        "forward · step 1/4", "forward · step 2/4", "forward · step 3/4", "forward · step 4/4",
        "reverse · seed", "reverse · step 1/4", "reverse · step 2/4", "reverse · step 3/4",
        "reverse · step 4/4"]
    assert [v["equation"] for v in views[:4]] == [
        "t1 = x × w = 1.5 × 0.8 = 1.2", "t2 = t1 + b = 1.2 + 0.2 = 1.4",
        "t3 = t2 − 0.1 = 1.4 − 0.1 = 1.3", "L = t3 ** 2 = 1.3 ** 2 = 1.69"]
    assert views[4]["seeds"] == ["L̄ = 1"]
    power, sub, add, mul = views[5:]
    assert power["incoming"] == "L̄ = 1" and sub["incoming"] == "t̄3 = 2.6"
    assert [(s["to"], s["gets"], s["sum"]) for s in power["sends"]] == [
        ("t3", "2.6", "t̄3 = 0 + 2.6 = 2.6")]  # nothing to the exponent
    assert [(s["to"], s["gets"]) for s in sub["sends"]] == [("t2", "2.6")]  # y: a constant
    assert [(s["to"], s["gets"]) for s in add["sends"]] == [("t1", "2.6"), ("b", "2.6")]
    assert [(s["to"], s["gets"], s["sum"]) for s in mul["sends"]] == [
        ("x", "2.08", "x̄ = 0 + 2.08 = 2.08"), ("w", "3.9", "w̄ = 0 + 3.9 = 3.9")]
    if HAS_RULES:
        assert [s["rule"] for s in mul["sends"]] == ["x̄ += t̄1·w", "w̄ += t̄1·x"]
        assert [s["numbers"] for s in mul["sends"]] == ["2.6·0.8", "2.6·1.5"]
        assert [s["rule"] for s in add["sends"]] == ["t̄1 += t̄2", "b̄ += t̄2"]
    else:
        assert mul["sends"][0]["rule"] == "x̄ += t̄1·∂t1/∂x"
    assert mul["sends"][0]["jacobian"] == ["1×1", "1", "8 B"]
    # The same numbers as a real backward pass.
    L.backward()
    assert [format_number(float(t.grad)) for t in (x, w, b)] == ["2.08", "3.9", "2.6"]


def test_the_sweep_leaves_grad_alone_and_can_run_again():
    (x, w, b, _), L = seed_example()
    first = frames_of(L)
    assert x.grad is None and w.grad is None and b.grad is None
    assert frames_of(L) == first  # retain_graph: the graph is still there
    L.backward()
    assert float(x.grad) == pytest.approx(2.08)


def test_retained_gradients_of_intermediates_and_hooks_are_left_alone():
    calls = []
    x = wg.tensor(2.0, requires_grad=True)
    y = x * x
    y.retain_grad()
    y.register_hook(calls.append)
    frames_of(y * 3.0)
    assert y.grad is None and x.grad is None and calls == []


def test_fan_out_sums_grow_term_by_term():
    x = wg.tensor(3.0, requires_grad=True)
    y = x * x  # x twice in one equation
    z = y + x  # and once more in another
    data = frames_of(z, leaf_names=["x"])
    assert data["nodes"]["adjoint"][data["nodes"]["name"].index("x")] == "7"  # 2x + 1
    sums = [s["sum"] for step in range(3, 5) for s in step_view(data, step)["sends"]]
    assert sums == ["t̄0 = 0 + 1 = 1", "x̄ = 0 + 1 = 1", "x̄ = 1 + 3 = 4", "x̄ = 4 + 3 = 7"]
    # The data: the first contribution without a running sum, the next ones with it.
    add, mul = data["reverse"]
    assert [row[:3] for row in add[1]] == [[0, None, None], [1, "1", None]]
    assert [row[:3] for row in mul[1]] == [[0, "3", "4"], [1, "3", "7"]]


def test_a_value_used_by_two_equations_shows_both_contributions():
    x = wg.tensor(2.0, requires_grad=True)
    a = np.sin(x)
    out = a * 3.0 + a * 5.0  # a fans out to two equations
    data = frames_of(out, leaf_names=["x"])
    a_sums = [s["sum"] for step in range(data["steps"]["forward"] + 1, data["steps"]["total"])
              for s in step_view(data, step)["sends"] if s["to"] == "t0"]
    assert a_sums == ["t̄0 = 0 + 5 = 5", "t̄0 = 5 + 3 = 8"]
    assert data["nodes"]["adjoint"][data["nodes"]["name"].index("x")] == \
        format_number(8 * np.cos(2.0))


def nested_dual_tape():
    t1, t2 = Tag("a"), Tag("b")
    assert t1.order < t2.order
    # x = 2 + ε₁ + ε₂ (ε₁ from the inner tag, ε₂ the outer one)
    x = wg.tensor(wg.Dual(wg.Dual(2.0, 1.0, tag=t1), wg.Dual(1.0, 0.0, tag=t1), tag=t2),
                  requires_grad=True)
    with wg.keep_values():
        y = x * x
    return x, y


def test_forward_mode_tangents_and_tags_under_nesting():
    _, y = nested_dual_tape()
    data = frames_of(y, mode="forward", leaf_names=["x"])
    assert data["dual"] and data["eps"] == ["ε₁", "ε₂"]
    assert data["steps"] == {"forward": 1, "reverse": 0, "total": 1}
    # x² = 4 + 4ε₁ + 4ε₂ + 2ε₁ε₂
    assert data["nodes"]["value"] == ["4", "2"]
    assert data["nodes"]["tangent"] == [[["ε₁", "4"], ["ε₂", "4"], ["ε₁ε₂", "2"]],
                                        [["ε₁", "1"], ["ε₂", "1"], ["ε₁ε₂", "0"]]]
    assert step_view(data, 0)["equation"] == "t0 = x × x = 2 × 2 = 4"


def test_tags_are_numbered_by_order_not_by_nesting():
    first, second = Tag("first"), Tag("second")
    assert first.order < second.order
    # The first tag nested inside (a dual number carries duals of earlier tags only):
    # x = 1 + 1·ε₁ + 2·ε₂, ε₁ the first tag made, though the outer dual is the second's.
    x = wg.tensor(wg.Dual(wg.Dual(1.0, 1.0, tag=first), wg.Dual(2.0, 0.0, tag=first),
                          tag=second), requires_grad=True)
    with wg.keep_values():
        y = x * 3.0
    data = frames_of(y, mode="forward")
    assert data["eps"] == ["ε₁", "ε₂"]
    assert data["nodes"]["tangent"][0] == [["ε₁", "3"], ["ε₂", "6"], ["ε₁ε₂", "0"]]


def test_forward_then_reverse_over_dual_numbers():
    x = wg.tensor(wg.Dual(2.0, 1.0), requires_grad=True)
    with wg.keep_values():
        y = x * x + 1.0
    data = frames_of(y, leaf_names=["x"])
    assert data["eps"] == ["ε₁"] and data["steps"]["total"] == 5
    assert data["nodes"]["value"][:2] == ["4", "5"]
    assert data["nodes"]["tangent"][:2] == [[["ε₁", "4"]], [["ε₁", "4"]]]
    # d/dx (x² + 1) = 2x as a dual: 2·(2 + ε) = 4 + 2ε
    assert data["nodes"]["adjoint"][data["nodes"]["name"].index("x")] == "4 + 2ε₁"


def test_non_scalar_output_with_a_seed_and_without():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    data = frames_of(y, seed=[1.0, 0.0, -1.0], leaf_names=["x"])
    assert data["seeds"] == [[0, "[1, 0, -1]"]] and data["seed_note"] is None
    assert data["nodes"]["adjoint"][1] == "[2, 0, -2]"
    ones = frames_of(y, leaf_names=["x"])
    assert ones["seeds"] == [[0, "ones(3)"]]
    assert "not a scalar" in ones["seed_note"] and "seed=" in ones["seed_note"]
    assert ones["nodes"]["adjoint"][1] == "[2, 2, 2]"
    with pytest.raises(ValueError, match="seed= has shape"):
        frames_of(y, seed=[1.0, 2.0])


def test_a_freed_graph_raises_a_clear_error():
    (x, _, _, _), L = seed_example()
    L.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True") as err:
        frames_of(L)
    assert "keep_values" in str(err.value) and "freed" in str(err.value)


def test_the_forward_trace_of_a_freed_graph_shows_what_was_kept():
    x = wg.tensor(2.0, requires_grad=True)
    with wg.keep_values():
        y = x * x + 1.0
    y.backward()
    data = frames_of(y, mode="forward")
    assert data["nodes"]["value"][:2] == ["4", "5"] and data["steps"]["total"] == 2


def test_values_not_kept_are_none_with_their_shape():
    x = wg.tensor(np.linspace(0.0, 1.0, 10_000), requires_grad=True)
    y = (np.sin(x) + np.ones(10_000)).sum()  # large values no rule reads: not kept
    data = frames_of(y)
    assert data["nodes"]["value"][:2] == [None, None]
    shapes = data["shapes"]
    assert shapes[data["nodes"]["shape"][0]] == ["10000", 10000]
    assert data["nodes"]["adjoint"][0].startswith("[1, 1, 1, 1, …, 1]  (10000,)")


def test_a_value_written_in_place_after_its_equation_shows_no_value():
    pytest.importorskip("graphviz")
    # h = x * 2 computed [2, 8]; h += 1 wrote [3, 9] into the same memory
    x = wg.tensor([1.0, 4.0], requires_grad=True)
    h = x * 2.0
    h += 1.0
    y = (h * h).sum()
    data = frames_of(y, leaf_names=["x"])
    assert data["nodes"]["value"][:4] == [None, "[3, 9]", "[9, 81]", "90"]
    assert data["changed"] == [0]  # said as such, not "not kept"
    assert step_view(data, 0)["equation"] == "t0 = x × 2"  # and no numbers
    tape = wg.tape_of(y)
    assert tape[0].value is None and tape[0].written and not tape[1].written
    assert "written in place since" in wg.draw(y).source
    assert "written in place since" in tape._repr_html_()
    y.backward()
    np.testing.assert_array_equal(x.grad, [12.0, 36.0])


@pytest.mark.parametrize("keep", [False, True])
def test_a_slice_written_through_to_its_base_shows_no_stale_values(keep):
    # y[:, 0] += 1 writes into y's memory: t0 = x * 10 and the slice t1 = y[:, 0] no longer
    # hold what their ops computed; every other equation shows its own value
    with wg.keep_values() if keep else contextlib.nullcontext():
        x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 10.0
        y[:, 0] += 1.0
        L = (y * y).sum()
    tape = wg.tape_of(L)
    assert [eq.op.name for eq in tape][:3] == ["multiply", "getitem", "add"]
    values = [eq.value for eq in tape]
    assert values[0] is None
    if keep:  # the view's memory is told by the view-keeping mode
        assert values[1] is None
    np.testing.assert_array_equal(values[2], [11.0, 31.0])
    np.testing.assert_array_equal(values[-2], [[121.0, 400.0], [961.0, 1600.0]])
    shown = frames_of(L)["nodes"]["value"]
    assert shown[0] is None and (shown[1] is None or not keep)


def test_jacobian_free_sizes_of_a_matrix_vector_product():
    W = wg.tensor(np.eye(512), requires_grad=True)
    x = wg.tensor(np.ones(512), requires_grad=True)
    y = (W @ x).sum()
    data = frames_of(y, leaf_names=["W", "x"])
    matmul = step_view(data, data["steps"]["total"] - 1)
    assert matmul["equation"].startswith("t0 = W @ x")
    jac = {s["to"]: s["jacobian"] for s in matmul["sends"]}
    assert jac["x"] == ["512×512", "262,144", "2.1 MB"]
    assert jac["W"] == ["512×262144", "134,217,728", "1.1 GB"]


def test_jacobian_free_sizes_count_the_bytes_of_float32_and_complex_entries():
    x = wg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    y = (x * x).sum()
    data = frames_of(y, leaf_names=["x"])
    last = step_view(data, data["steps"]["total"] - 1)
    assert last["sends"][0]["jacobian"] == ["3×3", "9", "36 B"]  # 4 bytes an entry
    z = wg.tensor(np.array([1 + 1j, 2 - 1j]), requires_grad=True)
    q = (z * 2.0).real.sum()
    data = frames_of(q, leaf_names=["z"])
    sends = [s for k in range(data["steps"]["total"])
             for s in step_view(data, k).get("sends", ())]
    assert [s["jacobian"] for s in sends] == [
        ["1×2", "2", "16 B"],  # real to real
        ["2×2", "4", "64 B"],  # real(t0): its input's cotangent is complex
        ["2×2", "4", "64 B"],  # complex to complex
    ]
    s = wg.tensor(np.float32(2.5), requires_grad=True)
    data = frames_of(s * s, leaf_names=["s"])  # a float32 scalar, seeded with 1
    last = step_view(data, data["steps"]["total"] - 1)
    assert [send["jacobian"] for send in last["sends"]] == [["1×1", "1", "4 B"]] * 2


def test_per_equation_data_stays_under_a_kilobyte():
    _, L = seed_example()
    small = frames_of(L)
    assert len(json.dumps(small, ensure_ascii=False).encode()) / 4 <= 1024
    x = wg.tensor(np.linspace(-1.0, 1.0, 300), requires_grad=True)
    w = wg.tensor(np.linspace(0.5, 1.5, 300), requires_grad=True)
    y = x
    with wg.source_lines(), wg.keep_values():
        for _ in range(300):
            y = np.tanh(y * w + 0.1)
        total = y.sum()
    data = frames_of(total)
    n = data["equations"]
    size = len(json.dumps(data, ensure_ascii=False).encode())
    assert n == 901 and size / n <= 1024, f"{size / n:.0f} bytes per equation"


def test_frames_are_json_and_deterministic():
    def build():
        x = wg.tensor([0.5, -1.5], requires_grad=True)
        with wg.source_lines():
            y = (np.exp(x) * x).sum()
        return frames_of(y)

    first, second = build(), build()
    assert json.loads(json.dumps(first)) == first
    assert first == second


def test_names_from_the_code_and_collisions():
    x = wg.tensor(2.0, requires_grad=True)
    with wg.source_lines():
        y = x * 3.0
        y = y + 1.0  # y twice: neither equation takes the name
        z = np.sin(y)
    data = frames_of(z, leaf_names=["x"])
    assert data["nodes"]["name"][:3] == ["t0", "t1", "z"]
    clash = frames_of(z, leaf_names=["z"])  # a leaf named like a result: the leaf keeps it
    assert clash["nodes"]["name"][2:4] == ["t2", "z"]
    worse = frames_of(z, leaf_names=["t0"])  # like an equation's tape name: tape names
    assert worse["nodes"]["name"][:4] == ["t0", "t1", "t2", "x0"]


def test_a_clash_keeps_the_tape_name_of_those_values_only():
    # after the loop the notebook's x is the last update (a clash with the leaf x), its g
    # the last gradient: g names its value, x only the leaf
    from wengert.jupyter.magic.runner import run_autodiff

    r = run_autodiff("for i in range(2):\n    g = 2 * x\n    x = x - 0.1 * g\n"
                     "loss = np.sum(x ** 2)", {"np": np}, ["x"],
                     preset={"x": np.array([1.0, 2.0])})
    names = explorer_frames(r.tape, leaf_names=["x"], value_names=r.names)["nodes"]["name"]
    assert names.count("x") == 1 and names[3] == "g" and names[5] == "t5"
    assert "loss" in names


def test_a_lambda_assigned_on_a_line_does_not_name_its_body():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with wg.source_lines():
        h = np.tanh(x * 2.0)
        f = lambda v: v * 3.0  # noqa: E731 (the case under test)
        s = np.sum(h * h)
        z = f(s) + 1.0
    names = frames_of(z, leaf_names=["x"])["nodes"]["name"]
    assert names[:6] == ["t0", "h", "t2", "s", "t4", "z"]  # t4 = v·3, not "f"


def test_a_gradient_tape_sweeps_its_own_equations():
    v = wg.Variable(1.0)
    with wg.GradientTape() as tape:
        loss = (v * 3.0 - 1.0) ** 2
    data = explorer_frames(tape.recorded, leaf_names=["v"])
    assert data["nodes"]["adjoint"][data["nodes"]["name"].index("v")] == "12"
    assert float(tape.gradient(loss, v)) == 12.0


def test_lines_and_groups_of_a_loop():
    x = wg.tensor(0.5, requires_grad=True)
    y = x
    with wg.source_lines():
        for _ in range(200):
            y = y * 0.9
            y = np.tanh(y)
    data = frames_of(y)
    layout = data["layout"]
    assert layout["collapsed"]  # 400 equations: groups start collapsed
    labels = layout["groups"]["label"]
    assert "pass 1 · lines" in " ".join(labels) and any(s.startswith("passes 1–") for s in labels)
    assert all(line[0] == "test_explorer_frames.py" for line in data["lines"])
    n_items = len(data["nodes"]["name"]) + len(labels)
    assert len(layout["container"]) == len(layout["rank"]) == n_items


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "mul", "sub", "sin", "square"]),
                          st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=12),
       st.lists(st.floats(-2.0, 2.0, allow_nan=False), min_size=3, max_size=3))
def test_leaf_adjoints_match_a_real_backward_pass(program, start):
    apply = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b,
             "sin": lambda a, b: np.sin(a), "square": lambda a, b: a * a}

    def run():
        leaves = [wg.tensor(v, requires_grad=True) for v in start]
        values = list(leaves)
        for op, i, j in program:
            values.append(apply[op](values[i % len(values)], values[j % len(values)]))
        return leaves, values[-1]

    leaves, out = run()
    if not isinstance(out, wg.Tensor) or out.grad_fn is None:
        return
    data = frames_of(out)
    out.backward()
    names = data["nodes"]["name"]
    tape = wg.tape_of(out)
    for k, leaf in enumerate(tape.leaves):
        node = data["eqs"]["op"].__len__() + k
        assert names[node] == f"x{k}"
        assert data["nodes"]["adjoint"][node] == format_number(float(leaf.grad))


def test_adjoint_names_that_are_one_character_travel_sparsely():
    a, g = wg.tensor(1.5, requires_grad=True), wg.tensor(0.5, requires_grad=True)
    with wg.source_lines():
        y = a * g
        z = np.sin(y)
    data = frames_of(z, leaf_names=["a", "g"])
    assert data["nodes"]["name"][:4] == ["y", "z", "a", "g"]
    # ȳ, ā, ḡ are precomposed characters; z̄ and the tape's own names need no entry.
    assert data["bars"] == {"0": "ȳ", "2": "ā", "3": "ḡ"}
    view = step_view(data, data["steps"]["forward"] + 2)  # y's reverse step
    assert view["incoming"].startswith("ȳ = ")
    assert [s["rule"].split(" += ")[0] for s in view["sends"]] == ["ā", "ḡ"]
    plain = frames_of(wg.tensor(2.0, requires_grad=True) * 3.0)
    assert "bars" not in plain


@pytest.mark.parametrize("make", ["custom_vjp", "custom_jvp", "checkpoint"])
def test_a_rules_saved_object_is_no_input_of_its_equation(make):
    # the object a custom rule saves for its backward pass is not shown as an input
    if make == "custom_vjp":
        f = wg.custom_vjp(lambda a: np.sin(a))
        f.defvjp(lambda a: (np.sin(a), np.cos(a)), lambda c, g: (c * g,))
    elif make == "custom_jvp":
        f = wg.custom_jvp(lambda a: np.sin(a))
        f.defjvp(lambda p, t: (np.sin(p[0]), np.cos(p[0]) * t[0]))
    else:
        f = wg.checkpoint(lambda a: np.sin(a))
    x = wg.tensor(0.7, requires_grad=True)
    with wg.keep_values():
        y = f(x) * 2.0
    data = explorer_frames(wg.tape_of(y))
    assert not any("Saved" in str(v) for v in data["nodes"]["value"])
    assert [i.source for i in wg.tape_of(y)[0].inputs] == ["leaf"]
    last = step_view(data, data["steps"]["total"] - 1)
    assert last["sends"][0]["total"] == format_number(2 * np.cos(0.7))


# -- equations with several outputs (the parts of one decomposition) -------------------------

_A = np.array([[2.0, 1.0, 0.3], [1.0, 3.0, 0.2], [0.3, 0.2, 1.0]])
_TALL = np.array([[2.0, 1.0], [1.0, 3.0], [0.5, 1.0]])


@pytest.mark.parametrize("a0, fn, name", [
    (_A, lambda a: np.linalg.eigh(a), "eigh"),
    (_A, lambda a: np.linalg.eig(a), "eig"),
    (_A, lambda a: np.linalg.svd(a), "svd"),
    (_A, lambda a: np.linalg.qr(a), "qr"),
    (_TALL, lambda a: np.linalg.qr(a, mode="complete"), "qr"),
])
def test_a_decomposition_is_one_node_one_step_and_its_numbers_are_the_sweeps(a0, fn, name):
    from wengert.jupyter.explorer.compact import compact, expand
    from wengert.jupyter.explorer.schema import check_frames
    from wengert.jupyter.explorer.widget import pack, unpack
    a = wg.tensor(a0, requires_grad=True)
    outs = fn(a)
    y = sum(np.sum(np.real(o) * (k + 1.0)) for k, o in enumerate(outs))
    tape = wg.tape_of(y)
    data = explorer_frames(tape, leaf_names=["a"])
    check_frames(data)
    assert expand(compact(data)) == data and unpack(pack(data, limit=1)) == data
    eq = next(eq for eq in tape if eq.primitive == name)
    parts = data["outs"][str(eq.index)]
    assert len(parts) == len(eq.outs) - 1
    assert [data["nodes"]["kind"][p] for p in parts] == [3] * len(parts)
    assert [data["nodes"]["name"][o] for o in (eq.index, *parts)] == [v.name for v in eq.outs]
    steps = [step[0] for step in data["reverse"] if step[1] is not None]
    assert steps.count(eq.index) == 1 and len(steps) == len(tape)  # one step per equation
    view = next(step_view(data, k) for k in range(data["steps"]["total"])
                if step_view(data, k).get("node") == eq.index
                and step_view(data, k)["phase"] == "reverse")
    names = ", ".join(v.name for v in eq.outs)
    assert view["equation"].startswith(f"{names} = {name}(")
    assert view["incoming"].count("; ") == len(eq.outs) - 1
    assert all(send["numbers"] is None for send in view["sends"])  # arrays: no numbers
    forward = step_view(data, eq.index)
    assert forward["equation"].startswith(f"{names} = {name}(")
    # every output's value, and the input's adjoint, are what the tape and the sweep hold
    from wengert.core.formatting import summarize
    for o, var in zip((eq.index, *parts), eq.outs):
        assert data["nodes"]["value"][o] == summarize(var.value)
    y.backward()
    leaf = data["nodes"]["name"].index("a")
    assert data["nodes"]["adjoint"][leaf] == summarize(a.grad)


def test_an_output_of_a_decomposition_no_cotangent_reached_is_said_and_has_no_number():
    a = wg.tensor(_A, requires_grad=True)
    with wg.GradientTape() as g:
        g.watch(a)
        w, v = np.linalg.eigh(a)
        y = np.sum(w * 2.0)
    data = explorer_frames(g.recorded, leaf_names=["a"])
    e = next(int(k) for k in data["outs"])
    vectors = data["outs"][str(e)][0]
    assert data["nodes"]["adjoint"][vectors] is None
    view = next(step_view(data, k) for k in range(data["steps"]["forward"] + 1,
                                                  data["steps"]["total"])
                if step_view(data, k)["node"] == e)
    assert view["incoming"] == "t̄2 = [2, 2, 2]; t̄3: not used, no cotangent reached it " \
                               "(its term is 0)"
    got = g.gradient(y, a)
    from wengert.core.formatting import summarize
    assert data["nodes"]["adjoint"][data["nodes"]["name"].index("a")] == summarize(got)


def test_the_inputs_of_a_consumer_of_a_second_output_are_that_output():
    a = wg.tensor(_A, requires_grad=True)
    w, v = np.linalg.eigh(a)
    data = explorer_frames(wg.tape_of(np.sum(v * 3.0) + np.sum(w)), leaf_names=["a"])
    e = next(int(k) for k in data["outs"])
    vectors = data["outs"][str(e)][0]
    reader = next(k for k, ins in enumerate(data["eqs"]["ins"]) if vectors in ins)
    assert step_view(data, reader)["equation"].startswith(
        f"{data['nodes']['name'][reader]} = {data['nodes']['name'][vectors]} × 3")
    assert data["layout"]["container"][vectors] == data["layout"]["container"][e]


def test_a_hook_on_the_second_output_of_a_decomposition_is_that_outputs_step():
    a = wg.tensor(_A, requires_grad=True)
    w, v = np.linalg.eigh(a)
    v.register_hook(lambda g: g * 2.0)
    data = explorer_frames(wg.tape_of(np.sum(w) + np.sum(v)), leaf_names=["a"])
    e = next(int(k) for k in data["outs"])
    vectors = data["outs"][str(e)][0]
    hook = next(step for step in data["reverse"] if step[1] is None)
    assert hook[0] == vectors
    view = next(step_view(data, k) for k in range(data["steps"]["total"])
                if step_view(data, k)["phase"] == "hook")
    assert view["before"].startswith(f"t̄{data['nodes']['name'][vectors][1:]} = ")


def test_the_title_leaves_out_the_semicolon_that_silences_the_line():
    from wengert.jupyter.magic.runner import run_autodiff

    r = run_autodiff("y = (x * 3.0) ** 2;  ", {}, ["x"], preset={"x": 2.0})
    assert r.tape[-1].source.text.rstrip().endswith(";")
    assert frames_of(r.output)["title"] == "y = (x * 3.0) ** 2"
    r = run_autodiff("y = x * 3.0; z = y ** 2;", {}, ["x"], preset={"x": 2.0})
    assert frames_of(r.output)["title"] == "y = x * 3.0; z = y ** 2"


def test_cotangents_that_add_to_nan_are_shown_without_a_numpy_warning():
    # x reaches y along two paths whose cotangents are +inf and -inf: the sweep's sum is
    # NaN, and the explorer shows that NaN as computed, without warning from its own sums
    x = wg.tensor(1.0, requires_grad=True)
    with wg.keep_values(), np.errstate(all="ignore"):
        q = np.stack([x, x]) @ np.stack([x, 2 * x])
        y = q / (x - 1.0)
        y.backward()
    assert np.isnan(x.grad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = frames_of(y)
    leaf = data["nodes"]["name"].index("x0")
    assert data["nodes"]["adjoint"][leaf] == "nan"


def test_a_freed_tape_of_one_equation_is_said_in_the_singular():
    x = wg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match=r"freed the graph \(t0 no longer holds its saved "):
        frames_of(y)
    z = x * x * x
    z.backward()
    with pytest.raises(RuntimeError, match=r"\(t0 and 1 other equation no longer hold their "):
        frames_of(z)


def test_a_complex_output_says_the_cotangent_chosen_and_takes_a_complex_seed():
    # backward() asks for gradient= for a complex output: the explorer says which it took
    x = wg.tensor(1.0, requires_grad=True)
    y = x * (1 + 2j)
    data = frames_of(y)
    leaf = data["nodes"]["name"].index("x0")
    assert data["nodes"]["adjoint"][leaf] == "1"
    assert "is complex" in data["seed_note"] and "g = 1" in data["seed_note"]
    with pytest.raises(TypeError, match="seed= must be a number"):
        frames_of(y, seed="a")
    data = frames_of(y, seed=1j)
    y.backward(gradient=1j)
    assert data["nodes"]["adjoint"][leaf] == format_number(x.grad) == "-2"


def test_a_complex_or_negative_constant_is_a_factor_in_parentheses():
    # x0 × 1-2j would read as (x0 × 1) − 2j
    x = wg.tensor(2.0, requires_grad=True)
    with np.errstate(all="ignore"):
        y = np.abs(x * (1 - 2j) - (-3.0)) ** 2
    data = frames_of(y)
    assert step_view(data, 0)["equation"] == "t0 = x0 × (1-2j) = 2 × (1-2j) = 2-4j"
    assert step_view(data, 1)["equation"] == "t1 = t0 − (-3) = (2-4j) − (-3) = 5-4j"
    assert step_view(data, 2)["equation"] == "t2 = abs(t1) = abs(5-4j) = 6.403"


def test_the_seed_note_names_the_call_that_started_the_kept_sweep():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0])
        with wg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = np.sin(x) * x
        tape.gradient(y, x, output_gradients=np.array([3.0, 5.0]))
        z = wg.tensor([1.0, 2.0], requires_grad=True) * 2.0
        z.backward(np.array([1.0, 4.0]))
    data = explorer_frames(tape.recorded)
    assert data["seeds"] == [[1, "[3, 5]"]]
    assert data["seed_note"].startswith("GradientTape.gradient() started the sweep")
    assert explorer_frames(wg.tape_of(z))["seed_note"].startswith("backward() started")
