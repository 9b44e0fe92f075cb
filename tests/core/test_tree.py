"""Pytrees: flatten/unflatten round trips, at any nesting depth."""

from __future__ import annotations

import collections

import numpy as np
import wengert as wg
from wengert.core.tree import flatten, tree_map, unflatten

Point = collections.namedtuple("Point", "x y")


def test_round_trips_keep_structure_and_types():
    trees = [1.0, None, (), [], {}, {"w": 1.0, "b": (2.0, 3.0)},
             [1.0, (2.0, [3.0, {"k": 4.0}]), None, []], (Point(1.0, 2.0),)]
    for tree in trees:
        leaves, spec = flatten(tree)
        back = unflatten(spec, leaves)
        assert back == tree and type(back) is type(tree)
    assert flatten({"b": (2.0, 3.0), "a": [1.0]})[0] == [2.0, 3.0, 1.0]  # insertion order
    assert flatten((Point(1.0, 2.0),))[0] == [1.0, 2.0]  # a namedtuple is a container
    assert type(unflatten(flatten(Point(1.0, 2.0))[1], [3.0, 4.0])) is Point
    assert tree_map(lambda v: v * 10, {"w": 1.0, "b": (2.0, None)}) == {"w": 10.0,
                                                                       "b": (20.0, None)}


def test_deep_nesting_needs_no_recursion():
    depth = 5000  # well past Python's recursion limit
    tree = np.arange(3.0)
    for _ in range(depth):
        tree = [tree]
    leaves, spec = flatten(tree)
    back = unflatten(spec, [leaf * 2 for leaf in leaves])
    for _ in range(depth):
        back = back[0]
    np.testing.assert_array_equal(back, [0.0, 2.0, 4.0])

    def f(t):
        for _ in range(depth):
            t = t[0]
        return np.sum(t**2)

    g = wg.grad(f)(tree)
    for _ in range(depth):
        g = g[0]
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])


def test_structures_compare_at_any_depth():
    from wengert.core.tree import same_structure

    depth = 20_000  # far past the recursion limit
    a, b, c = np.arange(3.0), np.ones(3), np.ones(3)
    for _ in range(depth):
        a, b, c = [a], [b], (c,)
    assert same_structure(flatten(a)[1], flatten(b)[1])
    assert not same_structure(flatten(a)[1], flatten(c)[1])
    assert not same_structure(flatten({"a": 1.0})[1], flatten({"b": 1.0})[1])
    assert not same_structure(flatten([1.0, 2.0])[1], flatten([1.0])[1])
    assert not same_structure(flatten([1.0, None])[1], flatten([1.0, 2.0])[1])


def test_transforms_take_pytrees_nested_past_the_recursion_limit():
    depth = 20_000  # far past the recursion limit
    for wrap in (lambda t: [t], lambda t: (t,), lambda t: {"a": t}):
        tree = np.arange(3.0)
        for _ in range(depth):
            tree = wrap(tree)

        def f(t):
            for _ in range(depth):
                t = t["a"] if isinstance(t, dict) else t[0]
            return np.sum(t**2)

        g = wg.grad(f)(tree)
        _, pull = wg.vjp(f, tree)
        (g2,) = pull(1.0)
        y, dy = wg.jvp(f, (tree,), (tree,))
        for _ in range(depth):
            g = g["a"] if isinstance(g, dict) else g[0]
            g2 = g2["a"] if isinstance(g2, dict) else g2[0]
        np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(g2, [0.0, 2.0, 4.0])
        assert y == 5.0 and dy == 10.0
