"""Tape nodes are built in one place: the template of :func:`wengert.core.node.constructor_source`.

``node1``, ``node2``, ``new_node`` and the recording paths' one-call functions (a node
and its output tensor, ``wengert.reverse.recording._tensor1`` / ``_tensor2``) are all
generated from it; no other module allocates a node.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import wengert as wg
from wengert.core import node as node_module
from wengert.core.node import UNREAD_BYTES, constructor_source, is_stand_in, new_node, node1
from wengert.ops import elementwise as ew
from wengert.reverse import recording

SRC = Path(node_module.__file__).resolve().parent.parent


def test_no_module_but_core_node_allocates_a_node():
    allocation = re.compile(r"\bNode\(\)|__new__\(Node\b|_NEW\(Node\b")
    found = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
             if p.name != "node.py" and allocation.search(p.read_text())]
    assert found == []


def test_constructors_are_generated_from_the_template():
    assert inspect.getsource(node1) == constructor_source(1, "node1")
    assert inspect.getsource(recording._tensor1) == constructor_source(
        1, "_tensor1", ", level, recs", recording._TENSOR_TAIL)
    assert inspect.getsource(recording._tensor2) == constructor_source(
        2, "_tensor2", ", level, recs", recording._TENSOR_TAIL)
    # every generated frame counts as wengert's own (source lines skip it)
    assert node1.__code__.co_filename.startswith(node_module.__file__)
    assert recording._tensor2.__code__.co_filename.startswith(recording.__file__)


def test_new_node_of_many_inputs_keeps_what_the_rules_read():
    big = np.ones(UNREAD_BYTES // 8 + 1)
    x = wg.tensor(1.0, requires_grad=True)
    node = new_node(ew.ADD, 2.0, None, [(x, big, None, 0), (None, 1.0, None, 0),
                                        (x, big, None, 0), (None, big, x._version, 0)])
    assert node.nin == 4 and node.parents() == (x, None, x, None)
    kept = node.inputs()
    assert is_stand_in(kept[0]) and kept[1] == 1.0 and is_stand_in(kept[2])
    assert kept[3] is big  # version-checked: kept as it is
    node.free()
    assert node.inputs() == (None, None, None, None)
    assert new_node(ew.ADD, 2.0, None, []).parents() == ()
