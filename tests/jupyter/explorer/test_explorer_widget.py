"""The explorer widget (wengert.jupyter.explorer.widget): traits, steps, text form, the shipped
ES module and style sheet, packed frames as binary buffers (live and in saved widget state)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

import pytest

import numpy as np
import wengert as wg
from wengert.core.equations import Tape
from wengert.core.levels import Tag
from wengert.jupyter.explorer.frames import explorer_frames
from wengert.jupyter.explorer.widget import (
    CSS_PATH,
    ESM_PATH,
    css_source,
    esm_source,
    explore,
    explorer_class,
    explorer_state,
    explorer_text,
    pack,
    unpack,
)

pytest.importorskip("anywidget")


def seed_example():
    x, w = wg.tensor(1.5, requires_grad=True), wg.tensor(0.8, requires_grad=True)
    b, y = wg.tensor(0.2, requires_grad=True), wg.tensor(0.1)
    L = (x * w + b - y) ** 2
    return x, w, b, L


def test_traits_hold_the_frames_and_the_step():
    x, w, b, L = seed_example()
    view = explore(L)
    assert view.frames == explorer_frames(wg.tape_of(L), leaf_names=["x", "w", "b"])
    assert view.step == 0 and view.label == "forward · step 1/4"
    assert view.trait_metadata("frames", "sync") and view.trait_metadata("step", "sync")
    state = view.get_state()
    assert state["step"] == 0 and state["frames"]["steps"]["total"] == 9
    json.dumps(state["frames"])  # what travels to the browser is JSON


def test_the_step_is_set_from_python_and_clamped():
    *_, L = seed_example()
    view = explore(L)
    view.step = 5
    assert view.label == "reverse · step 1/4" and view.get_state()["step"] == 5
    view.step = 4
    assert view.label == "reverse · seed"
    view.step = 99
    assert view.step == 8 and view.label == "reverse · step 4/4"
    view.step = -3
    assert view.step == 0


def test_a_step_from_the_browser_updates_the_trait():
    *_, L = seed_example()
    view = explore(L)
    seen = []
    view.observe(lambda change: seen.append(change["new"]), names="step")
    view.set_state({"step": 6})  # what a message from the front end does
    assert view.step == 6 and seen == [6]


def test_repr_is_deterministic_text():
    *_, L = seed_example()
    first, second = explore(L), explore(L)
    assert repr(first) == repr(second) == "<wg.explore: 4 equations, 9 steps; step 1 (forward)>"
    first.step = 6
    assert repr(first) == "<wg.explore: 4 equations, 9 steps; step 7 (reverse)>"
    assert not re.search(r"0x[0-9a-f]+|id=", repr(first))
    bundle = first._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle  # anywidget: (data, metadata)
    assert data["text/plain"] == repr(first)


def test_forward_mode_only():
    x = wg.tensor(wg.Dual(2.0, 1.0), requires_grad=True)
    with wg.keep_values():
        y = x * x
    view = explore(y, mode="forward")
    assert repr(view) == "<wg.explore: 1 equation, 1 step; step 1 (forward)>"
    assert view.frames["nodes"]["tangent"][0] == [["ε₁", "4"]]


def test_the_esm_and_css_are_the_shipped_files():
    cls = explorer_class()
    assert str(cls._esm) == ESM_PATH.read_text(encoding="utf-8") == esm_source()
    assert str(cls._css) == CSS_PATH.read_text(encoding="utf-8") == css_source()
    assert ESM_PATH.name == "explorer.js" and ESM_PATH.parent.name == "explorer"
    assert CSS_PATH.name == "explorer.css" and CSS_PATH.parent == ESM_PATH.parent
    text = esm_source()
    assert "export default" in text and "render" in text
    # No dependency: nothing imported, nothing fetched from a URL.
    assert not re.search(r"^\s*import\s", text, re.M)
    assert not re.search(r"\bimport\(|https?://(?!www\.w3\.org/2000/svg)", text)
    # The style lives in the style sheet, not in strings of the module.
    assert "<style" not in text and "createElement(\"style\")" not in text
    assert ".wgx {" in css_source() and "@import" not in css_source()
    assert explorer_class() is cls  # made once


def test_the_widget_state_carries_the_module_and_style_as_text():
    """In a notebook's saved state (and so in a static HTML export) the module and the
    style travel as text: nothing is read from wengert's files by the page."""
    state = explore(seed_example()[-1]).get_state()
    assert state["_esm"] == esm_source() and state["_css"] == css_source()


def test_the_files_are_watched_only_in_a_development_setup(monkeypatch):
    """anywidget watches a path given as _esm/_css for changes (hot reload) only with
    ANYWIDGET_HMR=1: by default no thread is started."""
    monkeypatch.delenv("ANYWIDGET_HMR", raising=False)
    cls = explorer_class()
    assert cls._esm._background_thread is None and cls._css._background_thread is None


def test_names_of_the_leaves_come_from_the_caller():
    x, w, b, L = seed_example()
    assert explore(L).frames["nodes"]["name"][4:7] == ["x", "w", "b"]
    named = explore(L, names={"alpha": x, "beta": w})
    assert named.frames["nodes"]["name"][4:7] == ["alpha", "beta", "x2"]
    listed = explore(L, names=["p", "q", "r"])
    assert listed.frames["nodes"]["name"][4:7] == ["p", "q", "r"]


@dataclass
class Result:
    """What %%autodiff returns: a tape, the output tensor, names of the leaves."""

    tape: Tape
    output: Any
    leaf_names: dict

    def explore(self, **kw):
        return explore(self, **kw)


def test_a_result_with_tape_and_output():
    x = wg.tensor(2.0, requires_grad=True)
    with wg.keep_values(), wg.source_lines():
        u = x * x
        v = u + 1.0
        side = np.sin(x)  # also on the tape, not part of the output
    tape = wg.tape_of(v, side)
    result = Result(tape, v, {id(x): "x"})
    data = result.explore().frames
    assert data["seeds"] == [[1, "1"]]  # the sweep starts from .output only
    assert data["nodes"]["name"][3] == "x" and data["nodes"]["adjoint"][3] == "4"
    assert explorer_state(result, leaf_names=["x"]) == data
    detached = Result(tape, wg.tensor(1.0), {})
    with pytest.raises(ValueError, match="not computed on its tape"):
        explore(detached)


def test_targets_a_tape_and_a_gradient_tape():
    x = wg.tensor(3.0, requires_grad=True)
    y = x * x
    assert explore(wg.tape_of(y)).frames["nodes"]["adjoint"][1] == "6"
    v = wg.Variable(2.0)
    with wg.GradientTape() as tape:
        z = v * v * 5.0
    assert explore(tape).frames["nodes"]["adjoint"][2] == "20"
    assert float(tape.gradient(z, v)) == 20.0
    with pytest.raises(TypeError, match="expected a tensor"):
        explore(3.0)


def test_a_freed_graph_says_what_to_do():
    *_, L = seed_example()
    L.backward()
    with pytest.raises(RuntimeError, match=r"%load_ext wengert.*keep_values.*retain_graph=True"):
        explore(L)


def test_large_frames_travel_packed():
    x = wg.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = x
    for _ in range(30):
        y = np.sin(y) * 1.5 + x  # fan-out: running sums next to plain sends
    data = explorer_state(np.sum(y), leaf_names=["x"])
    packed = pack(data, limit=len(data["eqs"]["op"]) - 1)
    assert "packed" in packed and "nodes" not in packed and unpack(packed) == data
    assert isinstance(packed["packed"], bytes) and packed["packed"][:2] == b"\x1f\x8b"  # gzip
    assert pack(data, limit=10) == packed  # deterministic: no timestamp in the gzip header
    assert pack(data) == data and unpack(data) == data  # small: as it is
    old = {k: v for k, v in packed.items() if k != "packing"}  # an earlier version's form
    with pytest.raises(ValueError, match=r"another version of wengert.*run explore\(\) again"):
        unpack(old)
    as_text = {**packed, "packed": "H4sIAAAA"}  # base64 text where bytes belong
    with pytest.raises(ValueError, match=r"'packed' must be bytes.*got str"):
        unpack(as_text)


def _packed_view():
    x = wg.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = x
    for _ in range(20):
        y = np.sin(y) * 1.5 + x
    data = explorer_state(np.sum(y), leaf_names=["x"])
    return explorer_class()(frames=pack(data, limit=1)), data


def test_packed_frames_travel_as_a_binary_buffer():
    """The packed bytes leave the JSON of the state: ipywidgets sends them as a buffer of
    the comm message, at the path frames.packed."""
    from ipywidgets.widgets.widget import _remove_buffers

    view, data = _packed_view()
    state, paths, buffers = _remove_buffers(view.get_state())
    assert paths == [["frames", "packed"]]
    assert bytes(buffers[0]) == view.frames["packed"]
    assert "packed" not in state["frames"] and state["frames"]["packing"] == 3
    json.dumps(state)  # the rest is JSON
    assert view.data == data


def test_frames_packed_already_are_not_packed_again():
    """explore(frames=view.frames) with the frames of a packed view: they stay as they are."""
    view, data = _packed_view()
    assert pack(view.frames, limit=1) == view.frames
    again = explore(None, frames=view.frames)
    assert again.frames == view.frames and again.data == data


def test_a_binary_buffer_from_the_front_end_becomes_bytes_again():
    view, data = _packed_view()
    blob = view.frames["packed"]
    view.set_state({"frames": {**view.frames, "packed": memoryview(blob)}})
    assert isinstance(view.frames["packed"], bytes) and view.data == data


def test_saved_widget_state_keeps_packed_frames_as_base64_buffers():
    """What a notebook saved with its widget state holds (ipywidgets' embed format, as
    nbclient's store_widget_state writes): the buffer base64-encoded under ``buffers``,
    from which the frames come back unchanged."""
    import base64

    import ipywidgets

    view, data = _packed_view()
    saved = ipywidgets.Widget.get_manager_state(widgets=[view])["state"][view.model_id]
    (buffer,) = saved["buffers"]
    assert buffer["path"] == ["frames", "packed"] and buffer["encoding"] == "base64"
    json.dumps(saved)
    frames = {**saved["state"]["frames"], "packed": base64.b64decode(buffer["data"])}
    assert unpack(frames) == data


def _packable_tapes():
    """Tapes whose frames exercise every column: fan-out, arrays, parameters, constants,
    names, nested dual numbers (tangents), an empty tape."""
    x = wg.tensor(np.array([[0.5, -1.0], [2.0, 0.25]]), requires_grad=True)
    with wg.source_lines():
        h = np.tanh(x @ x)
        loss = np.sum(h * h, axis=0).max() + np.transpose(x)[0, 1]
    t1, t2 = Tag("a"), Tag("b")  # two perturbations: a dual over a dual needs two tags
    d = wg.tensor(wg.Dual(wg.Dual(2.0, 1.0, tag=t1), wg.Dual(1.0, 0.0, tag=t1), tag=t2),
                  requires_grad=True)
    return {"arrays": (wg.tape_of(loss), ["x"]), "dual": (wg.tape_of(d * d * 3.0), ["d"]),
            "empty": (Tape([], [], []), None)}


@pytest.mark.parametrize("case", ["arrays", "dual", "empty"])
@pytest.mark.parametrize("mode", [None, "forward", "reverse"])
def test_packing_loses_nothing(case, mode):
    tape, names = _packable_tapes()[case]
    data = explorer_frames(tape, mode=mode, leaf_names=names)
    packed = pack(data, limit=-1)
    assert "packed" in packed and unpack(packed) == data
    assert json.loads(json.dumps(unpack(packed))) == data  # still plain JSON-able data


def test_a_packed_widget_keeps_its_text_form():
    x = wg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(60):
        y = y * 0.5 + 1.0
    data = explorer_state(y)
    view = explorer_class()(frames=pack(data, limit=10))
    assert "packed" in view.frames and view.data == data
    view.step = 200
    assert repr(view) == "<wg.explore: 120 equations, 241 steps; step 201 (reverse)>"


def test_importing_wengert_imports_no_widget_library():
    code = textwrap.dedent("""
        import sys
        import wengert, wengert.jupyter.explorer.widget
        import wengert.jupyter.explorer.frames, wengert.jupyter.explorer.layout
        heavy = ["anywidget", "traitlets", "ipywidgets", "IPython", "matplotlib", "graphviz"]
        print(",".join(m for m in heavy if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_widget_state_is_the_same_for_the_same_computation():
    def build():
        x = wg.tensor(np.array([0.5, 1.5]), requires_grad=True)
        return explore((np.exp(x) * x).sum(), names=["x"])

    a, b = build(), build()
    # Everything but the layout widget's model id (the widget protocol's own reference).
    state_a, state_b = a.get_state(), b.get_state()
    assert state_a.pop("layout") != state_b.pop("layout")
    assert state_a == state_b


@pytest.mark.parametrize("module", ["frames", "layout", "widget"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"wengert.jupyter.explorer.{module}")
    with np.printoptions(legacy=False):
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_plain_text_says_one_step_in_the_singular():
    data = {"equations": 1, "steps": {"forward": 1, "reverse": 0, "total": 1}}
    assert explorer_text(data, 0) == "<wg.explore: 1 equation, 1 step; step 1 (forward)>"
    x = wg.tensor(2.0, requires_grad=True)
    assert repr(explore(x * 3.0, mode="forward")) == \
        "<wg.explore: 1 equation, 1 step; step 1 (forward)>"


def test_names_as_wg_draw_takes_them_and_misuse_is_refused():
    # wg.draw(y, names={"x0": "w"}) names by the tape's names: explore takes the same
    x, w, b, L = seed_example()
    named = explore(L, names={"x0": "alpha", "t0": "xw"})
    assert named.frames["nodes"]["name"][4:7] == ["alpha", "w", "b"]
    assert named.frames["nodes"]["name"][0] == "xw"
    with pytest.raises(TypeError, match="names="):
        explore(L, names={"alpha": x, "x1": "beta"})
    with pytest.raises(ValueError, match="4 names for 3 leaves"):
        explore(L, names=["p", "q", "r", "s"])
