"""The tuned reverse sweep: :func:`backprop`, what every front end runs.

**A fast path.** This module is the tuned equivalent of the reference sweep
:func:`wengert.core.sweep.backward_pass` (read that one first): the same visit of
the nodes newest first, the same VJP rules, the same sums in the same order, so
the same gradients (the tests check it on every registry sample and on random
tapes; on Python floats the float partials may round the last bit differently).
What it adds:

- speed: a chain (the only pending node) skips the heap and the cotangent dict, and
  a chain of common nodes, in a sweep nothing watches, is swept by a loop of its own
  (:func:`_chain`);
  a common node (one or two inputs, no params, no extras a sweep acts on: see
  :data:`~wengert.core.sweep.SWEPT_EXTRAS`) takes a lean path,
  read from its slots with its checks inlined, unless the sweep lifts values or
  hands back wanted nodes' cotangents; the others take a full step
  (:func:`_general_step`); Python floats use the ops' float
  partials (``Op.scalar_deriv``) instead of calling the VJP rules;
- hooks (``register_hook``) and callbacks (``retain_grad``) on nodes, skipped in
  a viewer's replay;
- results for wanted nodes (``wanted``), stopping early when the leaves are not
  needed, and sweeping only a gradient tape's nodes (``restrict``): what a
  non-leaf's gradient, ``GradientTape.gradient`` and views of values need;
- observers (:func:`~wengert.core.sweep.observe_sweep`), told every step;
- freeing each node's saved values as it passes (unless ``retain_graph``);
- recording the backward pass itself (``lift``, ``grad_mode``: ``create_graph``).

Anything new here must cost nothing when unused.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import numpy as np
from wengert.core.bind import SCALAR_FALLBACK
from wengert.core.modes import GRAD_ENABLED
from wengert.core.node import Node
from wengert.core.sweep import (
    OBSERVERS,
    SWEPT_EXTRAS,
    check_versions,
    fit,
    fit_real,
    freed_error,
    node_extras,
    version_error,
)

__all__ = ["backprop"]

_ndarray = np.ndarray


def backprop(
    roots: list[tuple[Any, Any]],
    *,
    wanted: Any = (),
    need_leaves: bool = True,
    retain_graph: bool = False,
    grad_mode: bool = False,
    lift: Callable[[Any, Any], Any] | None = None,
    restrict: Any = None,
    replay: bool = False,
) -> tuple[dict[int, Any], list[tuple[Any, Any]]]:
    """Run the reverse sweep.

    Parameters
    ----------
    roots : list of (edge, seed)
        An edge is a :class:`Node` or a leaf; the seed is its cotangent.
    wanted : iterable of Node
        Nodes whose cotangents to return (after their hooks ran).
    need_leaves : bool
        Whether the leaves' cotangents are needed; without them the sweep
        stops at the oldest wanted node.
    retain_graph : bool
        Keep saved values; otherwise they are freed node by node.
    grad_mode : bool
        Grad mode while the rules run: True records what rules compute on
        tensors (``create_graph``, or the rules of an inner transform that
        see an outer level's tensors).
    lift : callable, optional
        ``lift(raw, edge)``: a saved value as a differentiable value connected
        to ``edge`` (a node, a leaf or ``None``); given, every rule runs on
        lifted values, so the whole backward pass is recorded
        (``create_graph=True``).
    restrict : set of int, optional
        Sweep only the nodes with these ids (a gradient tape's); the others
        keep the cotangents that reach them.
    replay : bool
        A sweep for a viewer (the explorer, the explainer): no hook or callback runs
        (``register_hook``, ``retain_grad``), so it changes nothing.

    Returns
    -------
    (dict, list)
        ``id(node) -> cotangent`` for the wanted nodes reached, and
        ``(leaf, cotangent)`` for every leaf reached, in the order reached.
    """
    observers = OBSERVERS.get()
    wanted_ids = {id(w) for w in wanted}
    # Cotangents keyed by ``seq`` for nodes (negative ints: the heap order) and by
    # ``id`` for leaves (positive: no clash).
    cts: dict[int, Any] = {}
    leaves: dict[int, Any] = {}
    stop = 0  # nodes older than every wanted node need not be visited
    if wanted_ids and not need_leaves:
        stop = max(w.seq for w in wanted)
    heap = []
    for edge, seed in roots:
        key = edge.seq if type(edge) is Node else id(edge)
        if key in cts:
            cts[key] = cts[key] + seed
            continue
        cts[key] = seed
        if key > 0:
            leaves[key] = edge
        elif restrict is None or id(edge) in restrict:
            heap.append((key, edge))
    heapq.heapify(heap)
    for obs in observers:
        obs.begin(roots)
    results: dict[int, Any] = {}
    token = GRAD_ENABLED.set(grad_mode)
    try:
        pop = cts.pop
        heappop = heapq.heappop
        heappush = heapq.heappush
        # ``following``: the only pending node, when it is the only new parent and
        # the heap is empty (a chain), handed on with its cotangent ``following_g``
        # without a trip through the heap and ``cts``. Every node still to be swept
        # is one it was computed from, none sends it a cotangent: it is whole.
        following = None
        following_g = None
        everywhere = restrict is None and stop == 0  # every node reached is swept
        # nothing to lift or hand back: the common nodes take the lean path
        plain = lift is None and not wanted_ids
        # and with no observer, a chain of them the leaner loops
        chains = plain and everywhere and not observers
        while True:
            if following is not None:
                node = following
                g = following_g
                following = None
            elif heap:
                key, node = heappop(heap)
                g = pop(key)
            else:
                break
            op = node.op
            out = node.out
            n = node.nin
            if out is None:
                raise freed_error()
            if plain and n < 3 and node.params is None and (
                    (extra := node.extra) is None or extra.keys().isdisjoint(SWEPT_EXTRAS)):
                # The common node (one or two inputs, no params, no extras the sweep
                # acts on): the same checks and rules as below, in fewer steps.
                if node.version and op.reads_out:
                    raise version_error(node, -1, 0, node.version)
                h = node.holder0
                if h is not None and h.version != node.seen0:
                    raise version_error(node, 0, node.seen0, h.version)
                parent0 = node.parent0
                x0 = node.input0
                if n == 1:
                    if parent0 is None:
                        ct0 = None
                    elif type(out) is float and type(g) is float and \
                            (sd := op.scalar_deriv) is not None:
                        try:
                            ct0 = g * sd[0](out, x0)
                        except SCALAR_FALLBACK:
                            ct0 = op.vjps[0](g, out, x0)
                    elif (rule := op.vjps[0]) is None:
                        parent0 = None
                    else:
                        ct0 = rule(g, out, x0)
                        if op.broadcasting and (type(ct0) is not _ndarray or
                                                type(x0) is not _ndarray or
                                                ct0.shape != x0.shape):
                            ct0 = fit(op, ct0, x0)
                    if observers:
                        sent = [] if parent0 is None else [(0, parent0, ct0)]
                        for obs in observers:
                            obs.step(node, g, sent)
                    if not retain_graph:
                        node.out = node.input0 = None  # free the saved values
                    if parent0 is None:
                        continue
                    if type(parent0) is Node and everywhere and not heap:
                        if chains:
                            # a chain, nothing watching: swept by a lean loop
                            following, following_g, pairs = _chain(
                                parent0, ct0, retain_graph, cts, leaves)
                            if pairs is None:
                                continue
                        else:
                            following = parent0  # a chain: nothing else pending
                            following_g = ct0
                            continue
                    else:
                        pairs = ((parent0, ct0),)
                else:
                    h = node.holder1
                    if h is not None and h.version != node.seen1:
                        raise version_error(node, 1, node.seen1, h.version)
                    parent1 = node.parent1
                    x1 = node.input1
                    if type(out) is float and type(g) is float and \
                            (sd := op.scalar_deriv) is not None:
                        if parent0 is not None:
                            try:
                                ct0 = g * sd[0](out, x0, x1)
                            except SCALAR_FALLBACK:
                                ct0 = op.vjps[0](g, out, x0, x1)
                        if parent1 is not None:
                            try:
                                ct1 = g * sd[1](out, x0, x1)
                            except SCALAR_FALLBACK:
                                ct1 = op.vjps[1](g, out, x0, x1)
                    else:
                        if parent0 is not None:
                            if (rule := op.vjps[0]) is None:
                                parent0 = None
                            else:
                                ct0 = rule(g, out, x0, x1)
                                if op.broadcasting and (type(ct0) is not _ndarray or
                                                        type(x0) is not _ndarray or
                                                        ct0.shape != x0.shape):
                                    ct0 = fit(op, ct0, x0)
                        if parent1 is not None:
                            if (rule := op.vjps[1]) is None:
                                parent1 = None
                            else:
                                ct1 = rule(g, out, x0, x1)
                                if op.broadcasting and (type(ct1) is not _ndarray or
                                                        type(x1) is not _ndarray or
                                                        ct1.shape != x1.shape):
                                    ct1 = fit(op, ct1, x1)
                    if observers:
                        sent = []
                        if parent0 is not None:
                            sent.append((0, parent0, ct0))
                        if parent1 is not None:
                            sent.append((1, parent1, ct1))
                        for obs in observers:
                            obs.step(node, g, sent)
                    if not retain_graph:
                        node.out = node.input0 = node.input1 = None
                    if parent1 is None:
                        if parent0 is None:
                            continue
                        if type(parent0) is Node and everywhere and not heap:
                            following = parent0
                            following_g = ct0
                            continue
                        pairs = ((parent0, ct0),)
                    elif parent0 is None:
                        if type(parent1) is Node and everywhere and not heap:
                            following = parent1
                            following_g = ct1
                            continue
                        pairs = ((parent1, ct1),)
                    else:
                        pairs = ((parent0, ct0), (parent1, ct1))
            else:
                pairs = _general_step(node, op, out, n, g, lift, observers, replay,
                                      results, wanted_ids, retain_graph)
            for parent, ct in pairs:
                if type(parent) is Node:
                    if following is None and everywhere and not heap:
                        # Nothing else is pending, so no cotangent reached it yet.
                        following = parent
                        following_g = ct
                        continue
                    pkey = parent.seq
                    if pkey in cts:
                        cts[pkey] = cts[pkey] + ct
                    elif parent is following:  # a second edge to it (x * x)
                        following_g = following_g + ct
                    elif everywhere or (
                        pkey <= stop and (restrict is None or id(parent) in restrict)
                    ):
                        if following is None and not heap:
                            following = parent
                            following_g = ct
                        else:
                            if following is not None:  # no longer alone: to the heap
                                cts[following.seq] = following_g
                                heappush(heap, (following.seq, following))
                                following = following_g = None
                            cts[pkey] = ct
                            heappush(heap, (pkey, parent))
                    else:  # outside the region swept: kept for the wanted results
                        cts[pkey] = ct
                else:
                    pkey = id(parent)
                    if pkey in cts:
                        cts[pkey] = cts[pkey] + ct
                    else:
                        cts[pkey] = ct
                        leaves[pkey] = parent
    finally:
        GRAD_ENABLED.reset(token)
    reached = [(leaf, cts.pop(key)) for key, leaf in leaves.items() if key in cts]
    if wanted_ids:
        for w in wanted:  # wanted nodes the sweep stopped at (restrict, stop)
            if id(w) not in results and w.seq in cts:
                results[id(w)] = cts[w.seq]
    for obs in observers:
        obs.end(reached)
    return results, reached


def _chain(node: Node, g: Any, retain_graph: bool, cts: dict[int, Any],
           leaves: dict[int, Any]) -> tuple[Any, Any, Any]:
    """Sweep a chain of common nodes (one or two inputs, no params, no extras), each
    handing its cotangent on to the one node it was computed from, in :func:`backprop`'s
    lean steps: the same checks, rules (float partials on Python floats), fits and sums,
    a leaf's cotangent summed into ``cts`` (registered in ``leaves``). Only for a sweep
    with nothing to lift, hand back or tell, that visits every node reached, along a
    chain (nothing else pending).

    Returns ``(node, g, None)``: the node to sweep next in full, one this loop does not
    take (another kind of node, a float partial that declines, an input without a rule),
    with its cotangent; or ``(None, None, pairs)``: the last node swept sent
    ``(parent, cotangent)`` ``pairs`` to two nodes (or none).
    """
    while True:
        out = node.out
        if out is None:
            raise freed_error()
        if node.params is not None or node.extra is not None or (n := node.nin) > 2:
            return node, g, None
        op = node.op
        if type(out) is float and type(g) is float:
            sd = op.scalar_deriv  # Python floats: the record's float partials
            if sd is None:
                return node, g, None
        else:
            sd = None
            vjps = op.vjps
        if node.version and op.reads_out:
            raise version_error(node, -1, 0, node.version)
        h = node.holder0
        if h is not None and h.version != node.seen0:
            raise version_error(node, 0, node.seen0, h.version)
        parent0 = node.parent0
        x0 = node.input0
        if n == 1:
            if parent0 is None:
                return node, g, None
            if sd is not None:
                try:
                    ct0 = g * sd[0](out, x0)
                except SCALAR_FALLBACK:
                    return node, g, None
            else:
                rule = vjps[0]
                if rule is None:
                    return node, g, None
                ct0 = rule(g, out, x0)
                if op.broadcasting and (type(ct0) is not _ndarray or
                                        type(x0) is not _ndarray or ct0.shape != x0.shape):
                    ct0 = fit(op, ct0, x0)
            if not retain_graph:
                node.out = node.input0 = None
            if type(parent0) is Node:
                node = parent0
                g = ct0
                continue
            key = id(parent0)
            if key in cts:
                cts[key] = cts[key] + ct0
            else:
                cts[key] = ct0
                leaves[key] = parent0
            return None, None, ()
        h = node.holder1
        if h is not None and h.version != node.seen1:
            raise version_error(node, 1, node.seen1, h.version)
        parent1 = node.parent1
        x1 = node.input1
        if sd is not None:
            try:
                ct0 = None if parent0 is None else g * sd[0](out, x0, x1)
                ct1 = None if parent1 is None else g * sd[1](out, x0, x1)
            except SCALAR_FALLBACK:
                return node, g, None
        else:
            if parent0 is not None:
                rule = vjps[0]
                if rule is None:
                    return node, g, None
                ct0 = rule(g, out, x0, x1)
                if op.broadcasting and (type(ct0) is not _ndarray or
                                        type(x0) is not _ndarray or ct0.shape != x0.shape):
                    ct0 = fit(op, ct0, x0)
            if parent1 is not None:
                rule = vjps[1]
                if rule is None:
                    return node, g, None
                ct1 = rule(g, out, x0, x1)
                if op.broadcasting and (type(ct1) is not _ndarray or
                                        type(x1) is not _ndarray or ct1.shape != x1.shape):
                    ct1 = fit(op, ct1, x1)
        if not retain_graph:
            node.out = node.input0 = node.input1 = None
        # (the cotangents go out in input order, as in backprop: a leaf's sums too)
        if type(parent0) is Node:
            if type(parent1) is Node:
                return None, None, ((parent0, ct0), (parent1, ct1))
            if parent1 is not None:
                key = id(parent1)
                if key in cts:
                    cts[key] = cts[key] + ct1
                else:
                    cts[key] = ct1
                    leaves[key] = parent1
            node = parent0
            g = ct0
            continue
        if parent0 is not None:
            key = id(parent0)
            if key in cts:
                cts[key] = cts[key] + ct0
            else:
                cts[key] = ct0
                leaves[key] = parent0
        if type(parent1) is Node:
            node = parent1
            g = ct1
            continue
        if parent1 is not None:
            key = id(parent1)
            if key in cts:
                cts[key] = cts[key] + ct1
            else:
                cts[key] = ct1
                leaves[key] = parent1
        return None, None, ()


def _general_step(node: Node, op: Any, out: Any, n: int, g: Any, lift: Any, observers: Any,
                  replay: bool, results: dict[int, Any], wanted_ids: set[int],
                  retain_graph: bool) -> list[tuple[Any, Any]]:
    """One node of :func:`backprop` in full: its extras (hooks, callbacks, real inputs),
    its wanted result, version checks for any number of inputs, rules with params or
    lifted values, and the observers; returns its ``(parent, cotangent)`` pairs."""
    if node.extra is not None:
        g = node_extras(node, node.extra, g, replay, observers)
    if wanted_ids and id(node) in wanted_ids:
        results[id(node)] = g
    check_versions(node)  # before any rule reads a value: was it modified in place?
    # Python floats in and out (the float path ran forward): the record's float
    # partials give the cotangents without calling the rules.
    sd = op.scalar_deriv if type(out) is float and type(g) is float and lift is None \
        else None
    params = node.params
    vjps = op.vjps
    parents = node.parents()
    values = node.inputs()
    if lift is not None:
        args = [lift(x, p) for p, x in zip(parents, values)]
        out = lift(out, node)
        g = lift(g, None)
    else:
        args = values
    # True: a broadcasting op's cotangents may need summing to their input's shape; a
    # tuple (indices of real inputs, real part), on a node with a complex output and
    # real inputs: those take the real part too.
    fits = op.broadcasting
    extra = node.extra
    if extra is not None and "real_inputs" in extra:
        fits = extra["real_inputs"]
    pairs = []
    sent = [] if observers else None
    for i in range(n):
        parent = parents[i]
        if parent is None:
            continue
        if sd is not None:  # elementwise: one or two inputs
            try:
                ct = g * sd[i](out, *values)
            except SCALAR_FALLBACK:
                ct = vjps[i](g, out, *values)
        else:
            rule = vjps[i]
            if rule is None:
                continue
            ct = rule(g, out, *args, **params) if params else rule(g, out, *args)
            if fits:
                x = values[i]
                if fits is not True:
                    if i in fits[0]:
                        ct = fit_real(op, ct, x, fits)
                    elif op.broadcasting:
                        ct = fit(op, ct, x)
                elif type(ct) is not _ndarray or type(x) is not _ndarray \
                        or ct.shape != x.shape:
                    ct = fit(op, ct, x)
        pairs.append((parent, ct))
        if sent is not None:
            sent.append((i, parent, ct))
    if sent is not None:
        for obs in observers:
            obs.step(node, g, sent)
    if not retain_graph:
        node.free()
    return pairs
