"""The compact form of the explorer's frames (what large tapes travel in) loses nothing."""

from __future__ import annotations

import json

import pytest

import numpy as np
import wengert as wg
from wengert.jupyter.explorer.compact import compact, expand
from wengert.jupyter.explorer.frames import explorer_frames


def _chain():
    x = wg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(20):
        y = np.sin(y) * 1.001
    return wg.tape_of(y), None


def _fan_out_with_names():
    w = wg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    v = wg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    with wg.source_lines():
        h = np.tanh(w @ v)
        loss = np.sum(h * h) + np.sum(np.transpose(w)[0])
    return wg.tape_of(loss), ["w", "v"]


@pytest.mark.parametrize("make", [_chain, _fan_out_with_names], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", [None, "forward", "reverse"])
def test_expand_gives_back_the_frames(make, mode):
    tape, names = make()
    data = explorer_frames(tape, mode=mode, leaf_names=names)
    short = compact(data)
    assert short["compact"] == 1
    assert expand(json.loads(json.dumps(short))) == data
    assert len(json.dumps(short)) < len(json.dumps(data))


def test_user_names_and_parameters_survive():
    tape, names = _fan_out_with_names()
    data = explorer_frames(tape, leaf_names=names, value_names={"t1": "h"})
    short = compact(data)
    assert short["nodes"]["eq_names"] == {"1": "h"}
    assert short["eqs"]["params"]
    assert expand(short) == data


def test_frames_that_are_not_compact_pass_through():
    tape, _ = _chain()
    data = explorer_frames(tape)
    assert expand(data) == data
