"""The explorer's frames against their schema (wengert.jupyter.explorer.schema): what
explorer_frames gives fits it for every kind of tape, and frames that do not fit are refused
with the path of what is wrong."""

from __future__ import annotations

import copy
import json
import typing

import pytest

import numpy as np
import wengert as wg
from wengert.core.equations import Tape
from wengert.jupyter.explorer.compact import compact, expand
from wengert.jupyter.explorer.frames import explorer_frames
from wengert.jupyter.explorer.schema import (
    Frames,
    FramesError,
    Nodes,
    PackedFrames,
    check_frames,
)
from wengert.jupyter.explorer.widget import pack, unpack


def _seed():
    x, w = wg.tensor(1.5, requires_grad=True), wg.tensor(0.8, requires_grad=True)
    b, y = wg.tensor(0.2, requires_grad=True), wg.tensor(0.1)
    with wg.source_lines():
        L = (x * w + b - y) ** 2
    return explorer_frames(wg.tape_of(L), leaf_names=["x", "w", "b"])


def _arrays():
    w = wg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    v = wg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    with wg.source_lines():
        h = np.tanh(w @ v)
        loss = np.sum(h * h) + np.sum(np.transpose(w)[0])
    return explorer_frames(wg.tape_of(loss), leaf_names=["w", "v"], value_names={"t1": "h"})


def _dual():
    x = wg.tensor(wg.Dual(2.0, 1.0), requires_grad=True)
    with wg.keep_values(), wg.source_lines():
        y = np.sin(x * x)
    return explorer_frames(wg.tape_of(y), mode="forward", leaf_names=["x"])


def _hooks_after_backward():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        with wg.source_lines():
            t = x * 3.0
            t.register_hook(lambda g: g * 10)
            x.register_hook(lambda g: np.clip(g, -100.0, 100.0))
            y = (t * t).sum()
        y.backward()
    return explorer_frames(wg.tape_of(y), leaf_names=["x"])


def _replayed_hooks():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    t = x * 3.0
    t.register_hook(lambda g: g * 10)
    return explorer_frames(wg.tape_of((t * t).sum()), leaf_names=["x"])


def _changed_in_place():
    with wg.keep_values():
        x = wg.tensor([1.0, 4.0], requires_grad=True)
        h = x * 2.0
        h += 1.0
        y = (np.sqrt(h)).sum()
        y.backward()
        with wg.no_grad():
            x -= 0.1 * x.grad
    return explorer_frames(wg.tape_of(y), leaf_names=["x"])


def _grouped_loop():
    x, w = wg.tensor(0.5, requires_grad=True), wg.tensor(1.01, requires_grad=True)
    y = x
    with wg.source_lines():
        for _ in range(300):
            y = np.sin(y * w)
    return explorer_frames(wg.tape_of(y), leaf_names=["x", "w"])


def _complex():
    z = wg.tensor(np.array([1.0 + 2.0j, -0.5j]), requires_grad=True)
    return explorer_frames(wg.tape_of(np.sum(np.abs(z * z))), leaf_names=["z"])


def _two_outputs():
    x = wg.tensor(2.0, requires_grad=True)
    a, b = x * 3.0, np.sin(x)
    return explorer_frames(wg.tape_of(a, b), leaf_names=["x"])


CASES = {
    "seed": _seed, "arrays": _arrays, "dual": _dual, "hooks": _hooks_after_backward,
    "replayed_hooks": _replayed_hooks, "changed": _changed_in_place, "groups": _grouped_loop,
    "complex": _complex, "two_outputs": _two_outputs,
    "empty": lambda: explorer_frames(Tape([], [], [])),
    "reverse_only": lambda: explorer_frames(
        wg.tape_of(wg.tensor(2.0, requires_grad=True) * 3.0), mode="reverse"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_explorer_frames_fit_the_schema(case):
    data = CASES[case]()
    check_frames(data)
    check_frames(json.loads(json.dumps(data)))  # as the browser gets them
    check_frames(expand(compact(data)))
    packed = pack(data, limit=-1)
    check_frames(packed)
    check_frames(unpack(packed))


def test_the_optional_keys_appear_where_they_belong():
    assert "hooks" in _hooks_after_backward() and "sweep_note" in _hooks_after_backward()
    assert "changed" in _changed_in_place()
    assert "tangent" in _dual()["nodes"] and "tangent" not in _seed()["nodes"]
    # Every key the frames have is named in the schema.
    for make in CASES.values():
        data = make()
        assert data.keys() <= Frames.__required_keys__ | Frames.__optional_keys__
        assert data["nodes"].keys() <= Nodes.__required_keys__ | Nodes.__optional_keys__


def test_the_schema_types_resolve():
    hints = typing.get_type_hints(Frames)
    assert hints["nodes"] is Nodes and hints["equations"] is int
    assert typing.get_type_hints(PackedFrames)["packed"] is bytes


def _broken(change):
    data = copy.deepcopy(_seed())
    change(data)
    return data


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("layout"), r"\(top\) lacks layout"),
    (lambda d: d.update(extra=1), r"\(top\) has unknown keys extra"),
    (lambda d: d.update(format=2), r"format must be 1"),
    (lambda d: d.update(mode="sideways"), r"mode must be"),
    (lambda d: d["nodes"]["name"].append("z"), r"nodes.kind has 9 entries, expected 10"),
    (lambda d: d["nodes"]["kind"].reverse(), r"nodes.kind must list the equations"),
    (lambda d: d["nodes"]["value"].__setitem__(0, 1.2), r"nodes.value\[0\] must be text"),
    (lambda d: d["eqs"]["ins"][0].append(99), r"eqs.ins\[0\]\[2\] must be an int in 0..8"),
    (lambda d: d["eqs"]["op"].__setitem__(1, True), r"eqs.op\[1\] must be an int"),
    (lambda d: d["eqs"]["rule"].pop(), r"eqs.rule has 3 entries, expected 4"),
    (lambda d: d["steps"].update(total=10), r"steps must be"),
    (lambda d: d["reverse"][0][1][0].__setitem__(3, 5),
     r"reverse\[0\].sends\[0\] jacobian must be an int in 0..0, got 5"),
    (lambda d: d["reverse"].__setitem__(0, [3, None, 0]),
     r"reverse\[0\] hook must be an int in 0..-1, got 0"),
    (lambda d: d["reverse"].__setitem__(0, [9, []]), r"reverse\[0\] equation must be"),
    (lambda d: d["layout"]["rank"].pop(), r"layout.rank has"),
    (lambda d: d["layout"].update(collapsed=0), r"layout.collapsed must be a bool"),
    (lambda d: d.update(changed=[42]), r"changed\[0\] must be an int in 0..8"),
])
def test_frames_that_do_not_fit_are_refused_with_the_path(change, message):
    with pytest.raises(FramesError, match=message):
        check_frames(_broken(change))


def test_packed_frames_must_hold_bytes():
    packed = pack(_seed(), limit=-1)
    check_frames(packed)
    with pytest.raises(FramesError, match="packed must be bytes, got str"):
        check_frames({**packed, "packed": "H4sI"})
    with pytest.raises(FramesError, match="lacks packing"):
        check_frames({k: v for k, v in packed.items() if k != "packing"})
