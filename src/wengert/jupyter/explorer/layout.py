"""Where the explorer draws each node: layered graph layout in NumPy, and collapsible groups.

The tape's execution order is already a topological order, so the layers come
for free: a node's *rank* is the length of the longest path reaching it (one
pass over the edges in order, never a recursion), and the nodes of a rank are
ordered by the barycenter heuristic (each node moves towards the mean position
of its neighbours in the rank above, then below, a few times). Sources that
are not computed (leaves, constants) *float*: they sit one rank above their
first consumer, next to where they are used.

Large tapes are drawn as nested *groups*: contiguous runs of equations (a
function, a loop iteration, a source line, or plain chunks of consecutive
equations), each drawn collapsed as one box with a count until clicked. Every
group is laid out on its own (its children and the edges between them), so the
browser can expand any group from this precomputed data, without the kernel,
by stacking rows of known sizes.

Everything is O(nodes + edges) NumPy apart from one Python loop over the edges
(the longest path), and runs on 10⁵ equations in well under a second.

Examples
--------
>>> rank, order = layered_layout(4, [0, 0, 1, 2], [1, 2, 3, 3])
>>> rank.tolist(), order.tolist()
([0, 1, 1, 2], [0, 0, 1, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat

from numpy.typing import ArrayLike

import numpy as np

__all__ = ["layered_layout", "Groups", "nested_groups", "nested_layout"]

#: Alternating down/up barycenter passes.
SWEEPS = 6


def _as_index(a: ArrayLike) -> np.ndarray:
    return np.asarray(a, dtype=np.int64).reshape(-1)


def _longest_path(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Rank of each node: 0 without predecessors, else 1 + the largest rank of one (edges
    must point forward in index order)."""
    rank = [0] * n
    by_dst = np.argsort(dst, kind="stable")
    # Sorted by destination, every edge into a node comes after every edge into any of
    # its predecessors (they have smaller indices), so each rank is final when read.
    for s, d in zip(src[by_dst].tolist(), dst[by_dst].tolist()):
        r = rank[s] + 1
        if r > rank[d]:
            rank[d] = r
    return np.asarray(rank, dtype=np.int64)


def _positions(key: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Centered x of each node from its order in its layer (``key`` names the layer)."""
    width = np.bincount(key, minlength=int(key.max()) + 1 if key.size else 0)
    return order - (width[key] - 1) / 2.0


def _order_by(key: np.ndarray, value: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Position of each node in its layer ``key`` when sorted by ``value``, then ``tie``."""
    n = key.size
    perm = np.lexsort((tie, value, key))
    sorted_key = key[perm]
    first = np.ones(n, dtype=bool)
    first[1:] = sorted_key[1:] != sorted_key[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    order = np.empty(n, dtype=np.int64)
    order[perm] = np.arange(n) - start
    return order


def layered_layout(
    n: int,
    src: ArrayLike,
    dst: ArrayLike,
    floating: ArrayLike | None = None,
    part: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rank (layer) and order (position in the layer) of the nodes of a DAG.

    Parameters
    ----------
    n : int
        Number of nodes, ``0 .. n-1``.
    src, dst : array_like of int
        The edges ``src[k] -> dst[k]``. Index order must be a topological order:
        ``src < dst`` for every edge whose source is not floating.
    floating : array_like of bool, optional
        Sources placed one rank above their first (lowest-ranked) consumer instead
        of at rank 0 (leaves and constants); they must have no incoming edge.
    part : array_like of int, optional
        Independent parts laid out side by side in one call (the groups of a nested
        layout): ranks are counted from 0 in each part and orders within each
        (part, rank); edges must not cross parts.

    Returns
    -------
    rank, order : ndarray of int
        Every edge goes from a lower to a higher rank; ``(part, rank, order)`` is
        unique per node.

    Examples
    --------
    A diamond with a constant feeding its last node:

    >>> rank, order = layered_layout(5, [0, 0, 1, 2, 4], [1, 2, 3, 3, 3],
    ...                              floating=[0, 0, 0, 0, 1])
    >>> rank.tolist()
    [0, 1, 1, 2, 1]
    """
    src, dst = _as_index(src), _as_index(dst)
    if src.shape != dst.shape:
        raise ValueError("layered_layout: src and dst must have the same length")
    if src.size and (src.min() < 0 or dst.min() < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"layered_layout: an edge names a node outside 0..{n - 1}")
    float_mask = np.zeros(n, dtype=bool) if floating is None else \
        np.asarray(floating, dtype=bool).reshape(-1)
    parts = np.zeros(n, dtype=np.int64) if part is None else _as_index(part)
    if float_mask.size != n or parts.size != n:
        raise ValueError("layered_layout: floating and part need one entry per node")
    if parts.size and parts.min() < 0:
        parts = parts - parts.min()
    if np.any(float_mask[dst]):
        raise ValueError("layered_layout: a floating node has an incoming edge")
    fixed = ~float_mask[src]
    if np.any(src[fixed] >= dst[fixed]):
        raise ValueError("layered_layout: index order is not topological (an edge points back)")
    if np.any(parts[src] != parts[dst]):
        raise ValueError("layered_layout: an edge crosses parts")

    rank = _longest_path(n, src[fixed], dst[fixed])
    if float_mask.any():
        big = np.iinfo(np.int64).max
        first_use = np.full(n, big, dtype=np.int64)
        np.minimum.at(first_use, src[~fixed], rank[dst[~fixed]])
        floats = np.flatnonzero(float_mask)
        used = first_use[floats] != big
        rank[floats] = np.where(used, first_use[floats] - 1, 0)
        # A part whose ranks went below 0 is shifted down by one.
        low = np.zeros(int(parts.max()) + 1 if n else 0, dtype=np.int64)
        np.minimum.at(low, parts, rank)
        rank -= low[parts]

    # Layers are (part, rank) pairs, numbered densely.
    layer = np.unique(parts * (int(rank.max()) + 1 if n else 1) + rank, return_inverse=True)[1] \
        if n else np.zeros(0, dtype=np.int64)
    index = np.arange(n)
    order = _order_by(layer, index.astype(float), index)
    x = _positions(layer, order)
    if src.size:
        for sweep in range(SWEEPS):
            # Down: move towards the predecessors; up: towards the successors.
            a, b = (src, dst) if sweep % 2 == 0 else (dst, src)
            total = np.bincount(b, weights=x[a], minlength=n)
            count = np.bincount(b, minlength=n)
            center = np.where(count > 0, total / np.maximum(count, 1), x)
            order = _order_by(layer, center, order)
            x = _positions(layer, order)
    return rank, order


@dataclass(frozen=True)
class Groups:
    """Nested contiguous runs of equations ``[start, end)``.

    Attributes
    ----------
    start, end : ndarray of int
        The equations of each group.
    parent : ndarray of int
        The enclosing group (``-1``: the whole tape); parents come before children.
    level : ndarray of int
        Which key made the group (an index into the ``keys`` given to
        :func:`nested_groups`), or ``-1`` for a chunk of consecutive children.
    container : ndarray of int
        The innermost group of each equation (``-1``: none).
    """

    start: np.ndarray
    end: np.ndarray
    parent: np.ndarray
    level: np.ndarray
    container: np.ndarray

    def __len__(self) -> int:
        return int(self.start.size)

    @property
    def depth(self) -> np.ndarray:
        """Nesting depth of each group (1 for a child of the whole tape)."""
        depth = np.zeros(len(self), dtype=np.int64)
        for g, p in enumerate(self.parent.tolist()):  # parents come first
            depth[g] = 1 if p < 0 else depth[p] + 1
        return depth


def _runs(key: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """Starts of the maximal runs of equal ``key`` that do not cross a ``cut``."""
    change = np.ones(key.size, dtype=bool)
    change[1:] = (key[1:] != key[:-1]) | cut[1:]
    return np.flatnonzero(change)


@dataclass
class _GroupList:
    """The groups made so far, in creation order (``nested_groups`` numbers them last)."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    levels: list[int] = field(default_factory=list)

    def add(self, start: int, end: int, parent: int, level: int) -> int:
        self.starts.append(start)
        self.ends.append(end)
        self.parents.append(parent)
        self.levels.append(level)
        return len(self.starts) - 1


def _key_groups(n: int, keys: Sequence[ArrayLike], made: _GroupList) -> np.ndarray:
    """Make the groups of each key level (outermost first) into ``made``; return the owner
    of each equation: the group of the deepest level that holds it (``-1``: none)."""
    cut = np.zeros(n, dtype=bool)
    if n:
        cut[0] = True
    owner = np.full(n, -1, dtype=np.int64)
    for lvl, key in enumerate(keys):
        key = _as_index(key)
        if key.size != n:
            raise ValueError("nested_groups: every key needs one entry per equation")
        run_start = _runs(key, cut)
        run_end = np.append(run_start[1:], n)
        parent = owner[run_start]
        # The parent's extent: the whole tape when there is none yet.
        p_start = np.where(parent >= 0, np.asarray(made.starts + [0], dtype=np.int64)[parent], 0)
        p_end = np.where(parent >= 0, np.asarray(made.ends + [n], dtype=np.int64)[parent], n)
        make = (run_end - run_start >= 2) & ~((run_start == p_start) & (run_end == p_end))
        for s, e, p in zip(run_start[make].tolist(), run_end[make].tolist(),
                           parent[make].tolist()):
            owner[s:e] = made.add(s, e, p, lvl)
        cut[run_start] = True
    return owner


Child = tuple[int, int, int]  # (start, end, group or -1 for one equation)


def _wide_children(n: int, made: _GroupList, owner: np.ndarray,
                   max_children: int) -> dict[int, list[Child]]:
    """The children of each container (the tape is ``-1``) that has more than
    ``max_children``: its groups and the equations no deeper group holds (the others
    need no chunking, and their lists are never made)."""
    count = len(made.starts)
    parents = np.asarray(made.parents, dtype=np.int64).reshape(-1)
    width = np.bincount(parents + 1, minlength=count + 1) + \
        np.bincount(owner + 1, minlength=count + 1)
    children: dict[int, list[Child]] = {
        c: [] for c in (np.flatnonzero(width > max_children) - 1).tolist()}
    if not children:
        return children
    for g in np.flatnonzero(np.isin(parents, list(children))).tolist():
        children[made.parents[g]].append((made.starts[g], made.ends[g], g))
    for c, kids in children.items():
        if c < 0:
            mine = np.flatnonzero(owner == -1)
        else:
            inside = np.arange(made.starts[c], made.ends[c])
            mine = inside[owner[inside] == c]
        kids.extend(zip(mine.tolist(), (mine + 1).tolist(), repeat(-1)))
    return children


def _chunk_wide(children: dict[int, list[Child]], made: _GroupList, max_children: int) -> None:
    """Split every container with more than ``max_children`` children into chunks of
    consecutive children (repeatedly: chunks of chunks), each chunk a new group."""
    todo = sorted(children)
    while todo:
        c = todo.pop()
        kids = sorted(children[c])
        while len(kids) > max_children:
            chunked = []
            for k in range(0, len(kids), max_children):
                part = kids[k:k + max_children]
                if len(part) == 1:
                    chunked.append(part[0])
                    continue
                g = made.add(part[0][0], part[-1][1], c, -1)
                for _s, _e, child in part:
                    if child >= 0:
                        made.parents[child] = g
                children[g] = part
                chunked.append((part[0][0], part[-1][1], g))
            kids = chunked
        children[c] = kids


def _numbered(n: int, made: _GroupList) -> Groups:
    """The groups numbered so that parents come before children (by start, then
    outermost), with the innermost group of each equation."""
    count = len(made.starts)
    start_a = np.asarray(made.starts, dtype=np.int64)
    end_a = np.asarray(made.ends, dtype=np.int64)
    perm = np.lexsort((-end_a, start_a)) if count else np.zeros(0, dtype=np.int64)
    new_id = np.empty(count, dtype=np.int64)
    new_id[perm] = np.arange(count)
    parent_a = np.asarray(made.parents, dtype=np.int64)
    parent_a = np.where(parent_a >= 0, new_id[np.maximum(parent_a, 0)], -1)[perm] if count \
        else parent_a
    container = np.full(n, -1, dtype=np.int64)
    for g, (s, e) in enumerate(zip(start_a[perm].tolist(), end_a[perm].tolist())):
        container[s:e] = g  # later (deeper) groups overwrite their parents
    return Groups(start=start_a[perm], end=end_a[perm], parent=parent_a,
                  level=np.asarray(made.levels, dtype=np.int64)[perm] if count else
                  np.zeros(0, dtype=np.int64), container=container)


def nested_groups(
    n: int, keys: Sequence[ArrayLike] = (), max_children: int = 40
) -> Groups:
    """Group ``n`` equations into nested runs, then chunk any container that stays too wide.

    Parameters
    ----------
    n : int
        Number of equations (in tape order).
    keys : sequence of array_like of int
        One key per equation for each level, outermost first (a function, a loop
        iteration, a source line): a group is a maximal run of equal keys inside
        its parent group. Runs of one equation, and runs as large as their
        parent, make no group.
    max_children : int
        A container (the tape or a group) with more children is split into chunks
        of ``max_children`` consecutive children, repeatedly.

    Returns
    -------
    Groups

    Examples
    --------
    Three source lines, the middle one recorded three times in a row:

    >>> g = nested_groups(5, [[7, 8, 8, 8, 9]])
    >>> g.start.tolist(), g.end.tolist(), g.container.tolist()
    ([1], [4], [-1, 0, 0, 0, -1])
    >>> g = nested_groups(100, max_children=10)
    >>> len(g), g.end[:3].tolist(), int(g.container[99])
    (10, [10, 20, 30], 9)
    """
    if max_children < 2:
        raise ValueError("nested_groups: max_children must be at least 2")
    made = _GroupList()
    owner = _key_groups(n, keys, made)
    children = _wide_children(n, made, owner, max_children)
    _chunk_wide(children, made, max_children)
    return _numbered(n, made)


def nested_layout(
    n: int,
    src: ArrayLike,
    dst: ArrayLike,
    groups: Groups,
    node_container: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lay out each group's children on their own: the data to draw any set of expanded groups.

    Parameters
    ----------
    n : int
        Number of nodes: equations ``0 .. len(groups.container) - 1`` (in tape order),
        then sources (leaves, constants) that float above their first consumer.
    src, dst : array_like of int
        Edges between nodes; every ``dst`` is an equation.
    groups : Groups
        The groups of the equations (:func:`nested_groups`).
    node_container : array_like of int, optional
        The container of each source node (``-1``: the top level); by default
        the container of its first consumer.

    Returns
    -------
    container, rank, order : ndarray of int
        For each *item* (the ``n`` nodes, then the groups): the group it is drawn in
        (``-1``: the top level) and its rank and order there. An edge between two
        items of one container goes from a lower to a higher rank.

    Examples
    --------
    A chain of 6 equations in chunks of 3: two boxes at the top level, each laid
    out inside as a chain.

    >>> g = nested_groups(6, max_children=3)
    >>> container, rank, order = nested_layout(6, [0, 1, 2, 3, 4], [1, 2, 3, 4, 5], g)
    >>> container.tolist(), rank.tolist()
    ([0, 0, 0, 1, 1, 1, -1, -1], [0, 1, 2, 0, 1, 2, 0, 1])
    """
    src, dst = _as_index(src), _as_index(dst)
    n_eq = groups.container.size
    if src.size and dst.min() < 0:
        raise ValueError("nested_layout: an edge ends outside the nodes")
    if src.size and dst.max() >= n_eq:
        raise ValueError("nested_layout: every edge must end at an equation")
    container = _item_containers(n, src, dst, groups, node_container)
    a, b = _lifted_edges(n, src, dst, groups, container)
    perm = _topological_items(n, groups)
    items = perm.size
    pos = np.empty(items, dtype=np.int64)
    pos[perm] = np.arange(items)
    if a.size:  # distinct edges: one int64 key per pair (a 1-d sort, not a row sort)
        keys = np.sort(pos[a] * items + pos[b])
        keys = keys[np.append(True, keys[1:] != keys[:-1])]
        pa, pb = keys // items, keys % items
    else:
        pa = pb = np.zeros(0, dtype=np.int64)
    floating = np.zeros(items, dtype=bool)
    floating[n_eq:n] = True  # sources float above their first consumer
    rank_p, order_p = layered_layout(items, pa, pb, floating=floating[perm],
                                     part=container[perm])
    return container, rank_p[pos], order_p[pos]


def _item_containers(n: int, src: np.ndarray, dst: np.ndarray, groups: Groups,
                     node_container: ArrayLike | None) -> np.ndarray:
    """The container of every item (nodes, then groups): equations and groups as
    ``groups`` says, sources as given or else with their first consumer."""
    n_eq = groups.container.size
    eq_container = groups.container
    container = np.full(n + len(groups), -1, dtype=np.int64)
    container[:n_eq] = eq_container
    if node_container is not None:
        container[n_eq:n] = _as_index(node_container)
    elif src.size:
        sources = src >= n_eq
        first = np.full(n, n_eq, dtype=np.int64)
        np.minimum.at(first, src[sources], dst[sources])
        used = first[n_eq:] < n_eq
        container[n_eq:n] = np.where(used, eq_container[np.minimum(first[n_eq:], n_eq - 1)]
                                     if n_eq else -1, -1)
    container[n:] = groups.parent
    return container


def _lifted_edges(n: int, src: np.ndarray, dst: np.ndarray, groups: Groups,
                  container: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each edge moved to the two items it joins inside the deepest container holding
    both ends (an end inside a deeper group becomes that group); edges that fall inside
    one item are dropped."""
    depth = np.concatenate([groups.depth, [0]])  # depth[-1] is the top level
    a, b = src.copy(), dst.copy()
    ca, cb = container[a], container[b]
    while True:
        differ = np.flatnonzero(ca != cb)
        if differ.size == 0:
            break
        lift_a = depth[ca[differ]] >= depth[cb[differ]]
        lift_b = depth[cb[differ]] >= depth[ca[differ]]
        ia, ib = differ[lift_a], differ[lift_b]
        a[ia] = n + ca[ia]
        ca[ia] = container[a[ia]]
        b[ib] = n + cb[ib]
        cb[ib] = container[b[ib]]
    keep = a != b
    return a[keep], b[keep]


def _topological_items(n: int, groups: Groups) -> np.ndarray:
    """The items in a topological index order: equations and groups by start, groups
    (outer first) before the equation they start with, sources last by id (equations of
    one container and its child groups never share a start)."""
    n_eq = groups.container.size
    items = n + len(groups)
    start = np.empty(items, dtype=np.int64)
    start[:n_eq] = np.arange(n_eq)
    start[n_eq:n] = n_eq  # sources float: their position is irrelevant
    start[n:] = groups.start
    kind = np.zeros(items, dtype=np.int64)
    kind[:n_eq] = 1
    kind[n:] = -(groups.end - groups.start)
    return np.lexsort((np.arange(items), kind, start))
