"""The tuned sweep (``core.sweep_fast.backprop``) against the reference sweep
(``core.sweep.backward_pass``): the same gradients, bit for bit.

Both visit the nodes newest first, pull each cotangent through the same rules and
add what each input receives in the same order, so they agree exactly. One
exception is allowed for: on Python floats the tuned sweep multiplies by the ops'
float partials (``Op.scalar_deriv``, written apart from the rules: with ``math``
rather than NumPy, sometimes rearranged, as ``sqrt``'s) where the reference calls
the VJP rules, which may round differently in the last bit; there the two agree
to a few ulps.
"""

from __future__ import annotations

import contextlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from sweep_helpers import leaves, problems
from wengert.core.errors import GraphFreedError, InplaceModifiedError
from wengert.core.node import Node
from wengert.core.sweep import SweepObserver, backward_pass, observe_sweep
from wengert.core.sweep_fast import backprop
from wengert.ops import REGISTRY

NAMES = REGISTRY.names()


def _roots(out, rng):
    """``(node, seed)`` for each recorded output tensor of ``out`` (a pytree)."""
    roots = []
    for t in leaves(out):
        if isinstance(t, wg.Tensor) and type(t._node) is Node:
            v = t.numpy()
            seed = float(rng.standard_normal()) if type(t._value) is float else \
                rng.standard_normal(v.shape).astype(v.dtype if v.dtype.kind in "fc" else float)
            roots.append((t._node, seed))
    return roots


def _same(a, b, floats: bool) -> bool:
    if type(a) is not type(b):
        return False
    if floats and type(a) is float:
        return a == b or (math.isnan(a) and math.isnan(b)) or \
            math.isclose(a, b, rel_tol=1e-11, abs_tol=1e-12)  # ulps, summed along chains
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


class _Steps(SweepObserver):
    """Counts the steps it is told of (watching a sweep sends every node the full way)."""

    def __init__(self):
        self.steps = 0

    def step(self, node, g, sent):
        self.steps += 1


def assert_same_sweep(roots, floats: bool = False) -> None:
    """Both sweeps from ``roots``: the same leaves, in the same order, with the same
    cotangents (``floats``: Python float cotangents may differ by a few ulps). The tuned
    sweep runs three times: asked for the roots' own cotangents (which sends every node
    the full way), watched by an observer, and alone (common nodes take the lean path)."""
    reference = backward_pass(roots)  # frees nothing, so the tuned sweep can run after
    _, full = backprop(roots, retain_graph=True, wanted=[roots[0][0]])
    watcher = _Steps()
    with observe_sweep(watcher):
        _, watched = backprop(roots, retain_graph=True)
    assert watcher.steps > 0
    _, tuned = backprop(roots)
    for name, result in (("full", full), ("watched", watched), ("tuned", tuned)):
        assert [id(leaf) for leaf, _ in result] == [id(leaf) for leaf, _ in reference]
        for (leaf, ct), (_, ref) in zip(result, reference):
            assert _same(ct, ref, floats), f"{leaf!r}: {name} {ct!r}, reference {ref!r}"


@pytest.mark.parametrize("name", NAMES)
def test_tuned_sweep_matches_reference_on_registry_samples(name):
    rng = np.random.default_rng(1)
    for p in problems(name, seed=3):
        xs = [wg.tensor(x, requires_grad=True) for x in p.xs]
        with np.errstate(all="ignore"):
            out = p.f(*xs)
            roots = _roots(out, rng)
            if roots:
                floats = any(type(x) is float for x in p.xs)
                try:
                    assert_same_sweep(roots, floats)
                except AssertionError as e:
                    raise AssertionError(f"{p.where}: {e}") from None


# -- random tapes --------------------------------------------------------------------------
_UNARY = [np.sin, np.cos, np.tanh, np.exp, lambda x: x * x, lambda x: -x, np.abs,
          lambda x: x * 0.5, lambda x: wnp.sum(x, axis=-1, keepdims=True) if x.ndim else x,
          lambda x: x[..., ::-1] if x.ndim else x, lambda x: wnp.sum(x)]
_BINARY = [np.add, np.subtract, np.multiply, lambda x, y: x / (1.5 + y * y),
           np.maximum, lambda x, y: np.where(x > y, x, y)]

_steps = st.lists(
    st.tuples(st.booleans(), st.integers(0, 63), st.integers(0, 63), st.integers(0, 63)),
    min_size=1, max_size=30,
)


def _run_tape(steps, values):
    """Apply ``steps`` to a pool that starts with ``values`` (every value stays in the pool:
    values are used many times, so cotangents add up)."""
    pool = list(values)
    for binary, k, i, j in steps:
        x = pool[i % len(pool)]
        if binary:
            pool.append(_BINARY[k % len(_BINARY)](x, pool[j % len(pool)]))
        else:
            pool.append(_UNARY[k % len(_UNARY)](x))
    return pool


@settings(max_examples=60, deadline=None)
@given(steps=_steps, n_leaves=st.integers(1, 3), shape=st.sampled_from([(), (3,), (2, 3)]),
       seed=st.integers(0, 2**16), outputs=st.integers(1, 3))
def test_tuned_sweep_matches_reference_on_random_tapes(steps, n_leaves, shape, seed, outputs):
    rng = np.random.default_rng(seed)
    xs = [wg.tensor(rng.uniform(-1, 1, shape), requires_grad=True) for _ in range(n_leaves)]
    with np.errstate(all="ignore"):
        pool = _run_tape(steps, xs)
    recorded = [t for t in pool[n_leaves:] if t._node is not None]
    roots = [(t._node, rng.standard_normal(t.shape)) for t in recorded[-outputs:]]
    if roots:
        assert_same_sweep(roots)


@settings(max_examples=40, deadline=None)
@given(steps=_steps, seed=st.integers(0, 2**16))
def test_tuned_sweep_matches_reference_on_random_float_tapes(steps, seed):
    """Python floats: the tuned sweep takes the float partials (see the module docstring)."""
    rng = np.random.default_rng(seed)
    xs = [wg.tensor(float(rng.uniform(-1, 1)), requires_grad=True) for _ in range(2)]
    unary = [np.sin, np.cos, np.tanh, lambda x: x * x, lambda x: x * 0.5]
    binary = [np.add, np.subtract, np.multiply, lambda x, y: x / (1.5 + y * y)]
    pool = list(xs)
    for is_binary, k, i, j in steps:
        x = pool[i % len(pool)]
        pool.append(binary[k % 4](x, pool[j % len(pool)]) if is_binary else unary[k % 5](x))
    if pool[-1]._node is not None:
        assert_same_sweep([(pool[-1]._node, 1.0)], floats=True)


_FLOAT_UNARY = [np.sin, np.cos, np.tanh, np.sqrt, np.log, lambda x: x * x, lambda x: x * 0.5,
                lambda x: x ** 1.5, lambda x: 2.0 - x, np.abs, lambda x: x ** 2]
_FLOAT_BINARY = [np.add, np.subtract, np.multiply, lambda x, y: x / (1.5 + y * y),
                 lambda x, y: x * 3.0 + y, np.maximum, lambda x, y: x ** y]


_ARRAY_UNARY = [np.sin, np.cos, np.tanh, np.exp, lambda x: x * x, lambda x: x * 0.5,
                lambda x: 2.0 - x, np.abs, np.sign, lambda x: x[..., ::-1],
                lambda x: wnp.sum(x, axis=-1, keepdims=True), lambda x: x.astype(np.float32),
                lambda x: np.sqrt(np.abs(x))]
_ARRAY_BINARY = _FLOAT_BINARY[:-1] + [lambda x, y: np.where(x > y, x, y)]
#: What a chain's leaves are: Python floats, or arrays, some broadcast against the others.
_CHAIN_LEAVES = {"floats": [()], "arrays": [(3,), (2, 3), (1, 3)]}


@settings(max_examples=80, deadline=None)
@given(steps=_steps, seed=st.integers(0, 2**16), n_leaves=st.integers(1, 3),
       outputs=st.integers(1, 2), lines=st.booleans(), chain=st.booleans(),
       kind=st.sampled_from(sorted(_CHAIN_LEAVES)))
def test_chains_sweep_as_the_lean_path_bit_for_bit(steps, seed, n_leaves, outputs, lines,
                                                   chain, kind):
    """Chains take a loop of their own when nothing watches the sweep (on Python floats
    and on arrays): the same cotangents, bit for bit, in the same leaf order, as the lean
    path an observer sees and the full steps a wanted node gets (also through float
    partials that decline, as ``sqrt`` and ``log`` at 0 or below, cotangents summed back
    to a broadcast input's shape, ops with params or no rule, and nodes with extras:
    source lines)."""
    rng = np.random.default_rng(seed)
    shapes = _CHAIN_LEAVES[kind]
    xs = [wg.tensor(float(rng.uniform(-1, 1)) if kind == "floats" else
                    rng.uniform(-1, 1, shapes[i % len(shapes)]), requires_grad=True)
          for i in range(n_leaves)]
    unary, binary = (_FLOAT_UNARY, _FLOAT_BINARY) if kind == "floats" else \
        (_ARRAY_UNARY, _ARRAY_BINARY)
    pool = list(xs)
    with np.errstate(all="ignore"), wg.source_lines() if lines else contextlib.nullcontext():
        for is_binary, k, i, j in steps:
            x = pool[-1] if chain else pool[i % len(pool)]  # (chain: each step on the last)
            pool.append(binary[k % len(binary)](x, pool[j % len(pool)])
                        if is_binary else unary[k % len(unary)](x))
    recorded = [t for t in pool[n_leaves:] if t._node is not None]
    roots = [(t._node, float(rng.standard_normal()) if kind == "floats" else
              rng.standard_normal(t.shape).astype(t.dtype)) for t in recorded[-outputs:]]
    if not roots:
        return
    with np.errstate(all="ignore"):
        _, full = backprop(roots, retain_graph=True, wanted=[roots[0][0]])
        with observe_sweep(_Steps()):
            _, lean = backprop(roots, retain_graph=True)
        _, chained = backprop(roots)
    for other in (full, lean):
        assert [id(leaf) for leaf, _ in chained] == [id(leaf) for leaf, _ in other]
        for (_, a), (_, b) in zip(chained, other):
            assert _same(a, b, floats=False), (a, b)
    for node, _ in roots:  # every node swept was freed
        with pytest.raises(GraphFreedError):
            backprop([(node, 1.0)])


def _reachable(roots):
    """The nodes ``roots`` were computed from (themselves included)."""
    seen, todo = {}, [node for node, _ in roots]
    while todo:
        node = todo.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            todo.extend(p for p in node.parents() if type(p) is Node)
    return list(seen.values())


def test_a_chain_sums_broadcast_inputs_cotangents_to_their_shapes_and_frees_its_nodes():
    """Along a chain of array nodes, an input broadcast against the other (a leaf on
    either side, or a node) gets its cotangent summed back to its own shape, exactly as
    the lean path and the reference sweep give it, and every node swept is freed."""
    rng = np.random.default_rng(5)
    x = wg.tensor(rng.uniform(-1, 1, (2, 3)), requires_grad=True)
    b = wg.tensor(rng.uniform(-1, 1, 3), requires_grad=True)
    c = wg.tensor(rng.uniform(-1, 1, (1, 3)), requires_grad=True)
    y = x
    for _ in range(4):
        y = np.sin(y) + b  # a smaller leaf second
        y = c * np.cos(y)  # a smaller leaf first
        y = np.tanh(y) - np.sum(y, axis=0)  # a smaller node second
    roots = [(y._node, rng.standard_normal(y.shape))]
    reference = backward_pass(roots)
    with observe_sweep(_Steps()):
        _, lean = backprop(roots, retain_graph=True)
    _, chained = backprop(roots)
    for result in (lean, chained):
        assert [id(leaf) for leaf, _ in result] == [id(leaf) for leaf, _ in reference]
        for (leaf, ct), (_, ref) in zip(result, reference):
            assert ct.shape == leaf.shape and np.array_equal(ct, ref), leaf
    assert all(node.out is None for node in _reachable(roots))


def test_chains_free_every_node_they_sweep():
    for start, seed in ((0.3, 1.0), (np.array([0.3, -0.2]), np.ones(2))):
        x = wg.tensor(start, requires_grad=True)
        y = x
        for _ in range(5):
            y = np.exp(np.sin(y) * 0.5 + x) ** 1.5
        roots = [(y._node, seed)]
        nodes = _reachable(roots)
        assert len(nodes) == 25
        backprop(roots)
        assert all(node.out is None for node in nodes)


@pytest.mark.parametrize("start", [0.4, np.array([0.4, -0.3])], ids=["float", "array"])
def test_a_chain_refuses_what_the_lean_path_refuses(start):
    """A value a rule reads that was written after it was saved (its version counter
    bumped, as an in-place write does; a Python float is never written in place, so
    there it is bumped by hand) is refused by the chain loop where the lean path refuses
    it, and a freed graph too."""
    seed = 1.0 if type(start) is float else np.ones(2)

    def outcome(where, watch):
        x = wg.tensor(start, requires_grad=True)
        chain = [x]
        for k in range(6):  # sin's rule reads its input, tanh's its output, * 1.5 + x neither
            chain.append((chain[-1] * 1.5 + x, np.sin(chain[-1]), np.tanh(chain[-1]))[k % 3])
        if where:
            chain[where]._version.version += 1
        with observe_sweep(_Steps()) if watch else contextlib.nullcontext():
            try:
                return backprop([(chain[-1]._node, seed)])[1][0][1]
            except InplaceModifiedError as e:
                return ("refused", e.index, e.saved, e.now)

    outcomes = [outcome(where, False) for where in range(7)]
    watched = [outcome(where, True) for where in range(7)]
    for a, b in zip(outcomes, watched):
        assert type(a) is type(b) and np.array_equal(a, b)
    refused = [w for w, o in enumerate(outcomes) if isinstance(o, tuple)]
    assert refused == [1, 3, 4, 6]  # sin's inputs, tanh's outputs
    x = wg.tensor(start, requires_grad=True)
    y = np.tanh(np.sin(x) * 2.0 + x)
    backprop([(y._node, seed)])
    with pytest.raises(GraphFreedError):
        backprop([(y._node, seed)])


def test_tuned_sweep_lean_and_full_paths_free_and_refuse_alike():
    """A common node (the lean path, watched or not) and one whose cotangent is asked for
    (the full step) free their values and refuse a second sweep, and refuse a value
    modified in place."""
    for watch in (False, True):
        x = wg.tensor(np.array([0.5, 1.0]), requires_grad=True)
        y = wnp.sin(x) * x
        roots = [(y._node, np.ones(2))]
        with observe_sweep(_Steps()) if watch else contextlib.nullcontext():
            backprop(roots, wanted=[y._node] if watch else ())
            with pytest.raises(GraphFreedError):
                backprop(roots)
        x = wg.tensor(np.array([0.5, 1.0]), requires_grad=True)
        a = x * 1.0
        y = wnp.sin(a)
        with wg.no_grad():
            a[0] = 3.0
        with observe_sweep(_Steps()) if watch else contextlib.nullcontext(), \
                pytest.raises(InplaceModifiedError):
            backprop([(y._node, np.ones(2))], wanted=[y._node] if watch else ())


def test_reference_sweep_refuses_a_freed_graph():
    x = wg.tensor(2.0, requires_grad=True)
    y = np.sin(x) * x
    y.backward()
    with pytest.raises(wg.errors.GraphFreedError):
        backward_pass([(y._node, 1.0)])


def test_reference_sweep_refuses_a_value_modified_in_place():
    x = wg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x * 1.0
    z = y * y
    y += 1.0
    with pytest.raises(wg.errors.InplaceModifiedError, match="modified by an inplace"):
        backward_pass([(z._node, np.ones(2))])


def test_tuned_sweep_matches_reference_on_nodes_with_extras():
    """Nodes that carry a source line (extras no sweep acts on) take the lean path, a node
    with a hook the full step; both give the reference's cotangents, and the hook runs."""
    def tape():
        x = wg.tensor(np.array([0.3, -0.7]), requires_grad=True)
        with wg.source_lines():
            a = wnp.sin(x) * 1.5
            b = wnp.tanh(a) + x
        return x, a, b

    x, a, b = tape()
    assert a._node.extra and "source" in a._node.extra
    assert_same_sweep([(b._node, np.array([1.0, 2.0]))])
    x, a, b = tape()
    a.register_hook(lambda g: 2 * g)
    b.backward(np.array([1.0, 2.0]))
    expected = np.array([1.0, 2.0]) * (1 + 2 * (1 - np.tanh(1.5 * np.sin([0.3, -0.7])) ** 2)
                                        * 1.5 * np.cos([0.3, -0.7]))
    np.testing.assert_allclose(x.grad, expected)
