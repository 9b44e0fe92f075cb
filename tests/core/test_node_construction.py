"""Tape nodes are built in one place: the statements of
:func:`wengert.core.node.constructor_body`.

``node1``, ``node2``, ``new_node`` and the recording paths' per-op functions (which
build a node and its output tensor inline, ``wengert.reverse.recording._unary_path`` /
``_binary_path``) are all generated from them; no other module allocates a node.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import wengert as wg
from wengert.core import node as node_module
from wengert.core.node import (
    UNREAD_BYTES,
    constructor_body,
    constructor_source,
    is_stand_in,
    new_node,
    node1,
)
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
    for path, nin in ((recording._unary_path, 1), (recording._binary_path, 2)):
        source = inspect.getsource(path)
        body = constructor_body(nin, recording._TENSOR_TAIL)
        indent = "            "  # (inside ``fn`` inside the factory)
        assert "\n".join(indent + line for line in body) in source
        # the float path's (one level deeper): the same statements, less the stand-ins
        floats = constructor_body(nin, recording._FLOAT_TENSOR_TAIL, floats=True)
        assert "\n".join(indent + "    " + line for line in floats) in source
        assert [line for line in floats if "stand_in" in line] == []
        # (the general path, the float path, and a tensor on a float times a number)
        assert source.count("n = Node()") == 1 + nin
        # every generated frame counts as wengert's own (source lines skip it)
        assert path.__code__.co_filename.startswith(recording.__file__)
    assert node1.__code__.co_filename.startswith(node_module.__file__)


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
