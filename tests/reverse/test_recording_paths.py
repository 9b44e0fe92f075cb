"""The per-op fast paths of tensors (``TensorKind.unary`` / ``binary``, behind
``wnp.sin(x)``, ``x * y`` and ``np.sin(x)``) against the general path
(``core.bind.apply`` → ``TensorKind.process`` → ``recording.record``): the same
output and the same tape node, field by field, on every registry sample of every
one- and two-input op with a public function, for each choice of which inputs
require grad, on small and on large arrays (which a node may keep as stand-ins)."""

from __future__ import annotations

import itertools

import pytest

import numpy as np
import wengert as wg
from sweep_helpers import cases, public_function
from wengert.core.bind import apply
from wengert.core.node import UNREAD_BYTES, Node, is_stand_in
from wengert.ops import REGISTRY
from wengert.reverse.recording import TENSOR
from wengert.reverse.tensor import Tensor

NAMES = [n for n in REGISTRY.names() if public_function(REGISTRY[n]) is not None
         and REGISTRY[n].nin in (1, 2)]


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        if is_stand_in(a) or is_stand_in(b):
            return is_stand_in(a) and is_stand_in(b) and a.shape == b.shape \
                and a.dtype == b.dtype
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a == b or (a != a and b != b)


def assert_same_node(fast: Node, general: Node, where: str) -> None:
    assert fast.op is general.op, where
    assert not fast.params and not general.params, where
    assert (fast.nin, fast.version, fast.extra is None) == \
        (general.nin, general.version, general.extra is None), where
    assert _same_value(fast.out, general.out), f"{where}: out"
    if fast.extra is not None:
        assert fast.extra.keys() == general.extra.keys(), where
        if "real_inputs" in fast.extra:
            assert fast.extra["real_inputs"][0] == general.extra["real_inputs"][0], where
    for i in range(fast.nin):
        (p, x, h, s), (gp, gx, gh, gs) = fast.edge(i), general.edge(i)
        assert p is gp, f"{where}: parent {i}"
        assert h is gh and s == gs, f"{where}: version holder {i}"
        assert _same_value(x, gx), f"{where}: input {i}"


def _variants(args):
    """The sample as it is, as Python floats (the float path) where it is made of
    float64 numbers, and (elementwise ops) its arrays repeated past
    :data:`UNREAD_BYTES`."""
    yield args
    if all(isinstance(a, float | np.ndarray) and np.ndim(a) == 0
           and np.asarray(a).dtype == np.float64 for a in args) \
            and not all(type(a) is float for a in args):
        yield tuple(float(a) for a in args)
    elif len(args) == 2 and all(type(a) is float for a in args) and args[1].is_integer():
        yield (args[0], int(args[1]))  # a Python int beside a float
    if any(isinstance(a, np.ndarray) and a.ndim for a in args):
        n = UNREAD_BYTES // 8 + 1
        yield tuple(np.resize(a, n) if isinstance(a, np.ndarray) and a.ndim else a
                    for a in args)


def _inputs(args, grads):
    return tuple(
        wg.tensor(a, requires_grad=True) if g else
        wg.tensor(a) if isinstance(a, np.ndarray) and g is False else a
        for a, g in zip(args, grads)
    )


@pytest.mark.parametrize("name", NAMES)
def test_fast_recording_builds_the_nodes_the_general_path_builds(name):
    op = REGISTRY[name]
    public = public_function(op)
    fast = TENSOR.unary(op, Tensor, public) if op.nin == 1 else TENSOR.binary(op, Tensor, public)
    checked = 0
    for k, (args, params) in enumerate(cases(name)):
        if params:
            continue
        floats = [isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind in "fc")
                  for a in args]
        for variant in _variants(args):
            # per input: True (requires grad), False (a constant tensor), None (a plain value)
            for grads in itertools.product(*[(True, False, None) if f else (None,)
                                             for f in floats]):
                if True not in grads:
                    continue
                xs = _inputs(variant, grads)
                where = f"op {name}, sample {k}, requires grad {grads}"
                with np.errstate(all="ignore"):
                    try:
                        general = apply(op, *xs)
                    except (TypeError, ValueError) as e:
                        with pytest.raises(type(e)):
                            fast(*xs)
                        continue
                    got = fast(*xs)
                assert type(got) is type(general), where
                assert _same_value(got._value, general._value), where
                assert (got._rg, got._level) == (general._rg, general._level), where
                assert (got._node is None) == (general._node is None), where
                if got._node is not None:
                    assert_same_node(got._node, general._node, where)
                    checked += 1
    if not checked:
        pytest.skip(f"op {name}: no sample records a node")


def _contexts():
    """Modes the float path hands to the general ending: no grad, a gradient tape
    watching the tensor, recorders that only look (source lines)."""
    yield "grad off", lambda x: wg.no_grad()
    yield "watched", lambda x: _watching(x)
    yield "source lines", lambda x: wg.source_lines()


class _watching:
    def __init__(self, x):
        self.tape = wg.GradientTape()
        self.x = x

    def __enter__(self):
        self.tape.__enter__()
        self.tape.watch(self.x)

    def __exit__(self, *exc):
        return self.tape.__exit__(*exc)


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].nin == 2])
def test_a_float_tensor_and_a_number_build_what_the_general_path_builds_in_every_mode(name):
    op = REGISTRY[name]
    fast = TENSOR.binary(op, Tensor, public_function(op))
    samples = [tuple(float(a) for a in args) for args, params in cases(name)
               if not params and all(np.ndim(a) == 0 and np.asarray(a).dtype == np.float64
                                     for a in args)]
    if not samples:
        pytest.skip(f"op {name}: no float sample")
    for k, (a, b) in enumerate(samples):
        for b_kind in (b, int(b)) if b.is_integer() else (b,):
            for mode, context in _contexts():
                where = f"op {name}, sample {k}, {mode}, second input {b_kind!r}"
                results = []
                x = wg.tensor(a, requires_grad=mode != "watched")
                for path in (fast, lambda x, y: apply(op, x, y)):
                    with np.errstate(all="ignore"), context(x):
                        try:
                            results.append(path(x, b_kind))
                        except (TypeError, ValueError, ArithmeticError) as e:
                            results.append(type(e))
                got, general = results
                if not isinstance(got, Tensor) or not isinstance(general, Tensor):
                    assert got == general, where
                    continue
                assert _same_value(got._value, general._value), where
                assert (got._rg, got._level) == (general._rg, general._level), where
                assert (got._node is None) == (general._node is None), where
                if got._node is not None:
                    assert_same_node(got._node, general._node, where)
