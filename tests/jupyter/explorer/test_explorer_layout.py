"""The explorer's layout (wengert.jupyter.explorer.layout): layered ranks, orders, nested groups."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
from wengert.jupyter.explorer.layout import layered_layout, nested_groups, nested_layout


@st.composite
def dags(draw, max_nodes=40):
    """A DAG in topological index order, some of its sources floating (leaves, constants)."""
    n_fixed = draw(st.integers(1, max_nodes))
    n_float = draw(st.integers(0, 8))
    n = n_fixed + n_float
    src, dst = [], []
    for v in range(1, n_fixed):
        for u in draw(st.lists(st.integers(0, v - 1), max_size=3, unique=True)):
            src.append(u)
            dst.append(v)
    for f in range(n_fixed, n):  # each floating source feeds one or two computed nodes
        for v in draw(st.lists(st.integers(0, n_fixed - 1), min_size=1, max_size=2,
                               unique=True)):
            src.append(f)
            dst.append(v)
    floating = [False] * n_fixed + [True] * n_float
    return n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), floating


def check_layout(n, src, dst, rank, order, part=None):
    part = np.zeros(n, dtype=np.int64) if part is None else np.asarray(part)
    assert rank.shape == order.shape == (n,)
    assert np.all(rank[src] < rank[dst]), "an edge does not go down the ranks"
    assert rank.min(initial=0) >= 0 and order.min(initial=0) >= 0
    coords = set(zip(part.tolist(), rank.tolist(), order.tolist()))
    assert len(coords) == n, "two nodes share coordinates"
    for key in set(zip(part.tolist(), rank.tolist())):  # orders are 0..width-1 in each layer
        members = (part == key[0]) & (rank == key[1])
        assert sorted(order[members].tolist()) == list(range(int(members.sum())))


@settings(max_examples=150, deadline=None)
@given(dags())
def test_edges_go_down_and_coordinates_are_unique(dag):
    n, src, dst, floating = dag
    rank, order = layered_layout(n, src, dst, floating=floating)
    check_layout(n, src, dst, rank, order)
    # A floating source sits right above its first consumer.
    for f in np.flatnonzero(floating):
        assert rank[f] == rank[dst[src == f]].min() - 1


@settings(max_examples=60, deadline=None)
@given(dags())
def test_layout_is_deterministic(dag):
    n, src, dst, floating = dag
    first = layered_layout(n, src, dst, floating=floating)
    again = layered_layout(n, src.copy(), dst.copy(), floating=list(floating))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_longest_path_ranks_and_a_constant_beside_its_consumer():
    # L = (x*w + b - y)**2: leaves x, w, b and constants 0.1 and 2 float.
    src = [4, 5, 0, 6, 1, 7, 2, 8]
    dst = [0, 0, 1, 1, 2, 2, 3, 3]
    rank, order = layered_layout(9, src, dst, floating=[0, 0, 0, 0, 1, 1, 1, 1, 1])
    assert rank.tolist() == [1, 2, 3, 4, 0, 0, 1, 2, 3]
    assert order[:4].tolist() == [0, 0, 0, 0]  # the chain stays in one column


def test_barycenter_untangles_a_crossing():
    # 0 -> 3 and 1 -> 2 cross when 2 and 3 keep index order; the barycenter swaps them.
    rank, order = layered_layout(4, [0, 1], [3, 2])
    assert rank.tolist() == [0, 0, 1, 1]
    assert (order[2] < order[3]) == (order[1] < order[0])


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="topological"):
        layered_layout(2, [1], [0])
    with pytest.raises(ValueError, match="outside"):
        layered_layout(2, [0], [2])
    with pytest.raises(ValueError, match="floating node has an incoming"):
        layered_layout(2, [0], [1], floating=[0, 1])
    with pytest.raises(ValueError, match="crosses parts"):
        layered_layout(2, [0], [1], part=[0, 1])


def test_empty_and_edgeless_graphs():
    rank, order = layered_layout(0, [], [])
    assert rank.size == order.size == 0
    rank, order = layered_layout(3, [], [])
    assert rank.tolist() == [0, 0, 0] and order.tolist() == [0, 1, 2]


@pytest.fixture
def shallow_stack():
    """A recursion limit far below any graph's depth: a recursive layout would fail."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    yield
    sys.setrecursionlimit(old)


def test_a_chain_of_100k_nodes_without_recursion(shallow_stack):
    n = 100_000
    rank, order = layered_layout(n, np.arange(n - 1), np.arange(1, n))
    assert rank.tolist() == list(range(n)) and not order.any()


def test_a_random_dag_of_100k_nodes(shallow_stack):
    rng = np.random.default_rng(7)
    n = 100_000
    dst = np.repeat(np.arange(1, n), 2)
    src = (rng.random(dst.size) * dst).astype(np.int64)  # each node reads two earlier ones
    rank, order = layered_layout(n, src, dst)
    assert np.all(rank[src] < rank[dst])
    pairs = rank.astype(np.int64) * n + order
    assert np.unique(pairs).size == n


def check_groups(groups, n, max_children):
    start, end, parent = groups.start, groups.end, groups.parent
    for g in range(len(groups)):
        assert 0 <= start[g] < end[g] <= n
        p = parent[g]
        assert p < g, "parents come before children"
        if p >= 0:
            assert start[p] <= start[g] and end[g] <= end[p]
            assert (start[p], end[p]) != (start[g], end[g])
    # The container of each equation is the innermost group holding it.
    for e in range(n):
        holding = [g for g in range(len(groups)) if start[g] <= e < end[g]]
        innermost = min(holding, key=lambda g: end[g] - start[g]) if holding else -1
        assert groups.container[e] == innermost
    # No container has more than max_children children.
    kids: dict[int, int] = {}
    for g in range(len(groups)):
        kids[int(parent[g])] = kids.get(int(parent[g]), 0) + 1
    for e in range(n):
        kids[int(groups.container[e])] = kids.get(int(groups.container[e]), 0) + 1
    for g in range(len(groups)):
        assert kids.get(g, 0) >= 2, "a group of one child"
    assert max(kids.values(), default=0) <= max_children


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 120), st.integers(2, 12), st.data())
def test_nested_groups_nest_and_stay_narrow(n, max_children, data):
    lines = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    funcs = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    groups = nested_groups(n, [funcs, lines], max_children=max_children)
    check_groups(groups, n, max_children)


def test_runs_of_keys_make_groups_and_loose_equations_stay_loose():
    g = nested_groups(7, [[5, 5, 5, 6, 7, 7, 8]])
    assert list(zip(g.start.tolist(), g.end.tolist())) == [(0, 3), (4, 6)]
    assert g.container.tolist() == [0, 0, 0, -1, 1, 1, -1]
    assert g.level.tolist() == [0, 0]


def test_chunks_of_a_long_run_and_their_depth():
    g = nested_groups(100_000, max_children=40)
    assert len(g) > 0 and int(g.depth.max()) == 3
    top = g.parent == -1
    assert int(top.sum()) <= 40 and g.start[top][0] == 0 and g.end[top][-1] == 100_000
    assert np.all(g.level == -1)


@settings(max_examples=60, deadline=None)
@given(dags(max_nodes=60), st.integers(2, 6))
def test_nested_layout_keeps_edges_down_inside_every_container(dag, max_children):
    n, src, dst, floating = dag
    n_eq = n - int(sum(floating))
    groups = nested_groups(n_eq, max_children=max_children)
    container, rank, order = nested_layout(n, src, dst, groups)
    items = n + len(groups)
    assert container.shape == rank.shape == order.shape == (items,)
    # Lift each edge to the two items drawn in the deepest container holding both ends.
    def path(item):  # (item, its container) up to the top level
        out = [(item, int(container[item]))]
        while out[-1][1] >= 0:
            g = out[-1][1]
            out.append((n + g, int(groups.parent[g])))
        return out

    for a, b in zip(src.tolist(), dst.tolist()):
        pa, pb = path(a), path(b)
        shared = {c for _, c in pb}
        deepest = next(c for _, c in pa if c in shared)
        ia = next(i for i, c in pa if c == deepest)
        ib = next(i for i, c in pb if c == deepest)
        assert ia != ib and rank[ia] < rank[ib]
    coords = set(zip(container.tolist(), rank.tolist(), order.tolist()))
    assert len(coords) == items


def test_nested_layout_of_100k_equations_in_chunks(shallow_stack):
    n = 100_000
    groups = nested_groups(n, max_children=40)
    src = np.concatenate([np.arange(n - 1), np.full(n, n)])  # a chain, and one leaf for all
    dst = np.concatenate([np.arange(1, n), np.arange(n)])
    container, rank, order = nested_layout(n + 1, src, dst, groups, node_container=[-1])
    top = np.flatnonzero(container == -1)
    assert container[n] == -1 and rank[n] == 0  # the leaf, above everything
    assert top.size == int((groups.parent == -1).sum()) + 1
    again = nested_layout(n + 1, src, dst, groups, node_container=[-1])
    assert all(np.array_equal(a, b) for a, b in zip((container, rank, order), again))
