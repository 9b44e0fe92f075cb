"""The tuned reverse sweep: :func:`backprop`, what every front end runs.

**A fast path.** This module is the tuned equivalent of the reference sweep
:func:`wengert.core.sweep.backward_pass` (read that one first): the same visit of
the nodes newest first, the same VJP rules, the same sums in the same order, so
the same gradients (the tests check it on every registry sample and on random
tapes; on Python floats the float partials may round the last bit differently).
What it adds:

- speed: a chain (the only pending node) skips the heap and the cotangent dict;
  one- and two-input nodes are read from their slots, their version checks
  inlined; Python floats use the ops' float partials (``Op.scalar_deriv``)
  instead of calling the VJP rules;
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
    check_versions,
    fit,
    fit_real,
    freed_error,
    node_extras,
    version_error,
)

__all__ = ["backprop"]

_ndarray = np.ndarray
#: ``range`` objects as tuples, per number of inputs (the loop over a node's inputs).
_RANGE = tuple(tuple(range(n)) for n in range(8))


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
            if node.extra is not None:
                g = node_extras(node, node.extra, g, replay, observers)
            if wanted_ids and id(node) in wanted_ids:
                results[id(node)] = g
            # Before any rule reads a value: was it modified in place? (inlined for
            # one and two inputs: every node pays this)
            if node.version and op.reads_out:
                raise version_error(node, -1, 0, node.version)
            if n == 1:
                h = node.holder0
                if h is not None and h.version != node.seen0:
                    raise version_error(node, 0, node.seen0, h.version)
            elif n == 2:
                h = node.holder0
                if h is not None and h.version != node.seen0:
                    raise version_error(node, 0, node.seen0, h.version)
                h = node.holder1
                if h is not None and h.version != node.seen1:
                    raise version_error(node, 1, node.seen1, h.version)
            else:
                check_versions(node)
            # Python floats in and out (the float path ran forward): the record's
            # float partials give the cotangents without calling the rules.
            sd = op.scalar_deriv if type(out) is float and type(g) is float and lift is None \
                else None
            if sd is None:
                params = node.params
                vjps = op.vjps
                if lift is not None:
                    args = [lift(x, p) for p, x in zip(node.parents(), node.inputs())]
                    out = lift(out, node)
                    g = lift(g, None)
                    call = 0  # every input from ``args``
                elif params or n > 2:
                    args = node.inputs()
                    call = 0
                else:
                    call = n  # the inputs straight from the node
                # True: a broadcasting op's cotangents may need summing to their input's
                # shape; a tuple (indices of real inputs, real part), on a node with a
                # complex output and real inputs: those take the real part too.
                fits = op.broadcasting
                extra = node.extra
                if extra is not None and "real_inputs" in extra:
                    fits = extra["real_inputs"]
            sent = [] if observers else None
            for i in _RANGE[n] if n < 8 else range(n):
                parent = node.parent0 if i == 0 else node.parent1 if i == 1 else \
                    node.rest[4 * (i - 2)]
                if parent is None:
                    continue
                if sd is not None:  # elementwise: one or two inputs
                    try:
                        if n == 1:
                            ct = g * sd[0](out, node.input0)
                        else:
                            ct = g * sd[i](out, node.input0, node.input1)
                    except SCALAR_FALLBACK:
                        ct = op.vjps[i](g, out, *node.inputs())
                else:
                    rule = vjps[i]
                    if rule is None:
                        continue
                    if call == 1:
                        ct = rule(g, out, node.input0)
                    elif call == 2:
                        ct = rule(g, out, node.input0, node.input1)
                    elif params:
                        ct = rule(g, out, *args, **params)
                    else:
                        ct = rule(g, out, *args)
                    if fits:
                        x = node.input0 if i == 0 else node.input1 if i == 1 else \
                            node.rest[4 * (i - 2) + 1]
                        if fits is not True:
                            if i in fits[0]:
                                ct = fit_real(op, ct, x, fits)
                            elif op.broadcasting:
                                ct = fit(op, ct, x)
                        elif type(ct) is not _ndarray or type(x) is not _ndarray \
                                or ct.shape != x.shape:
                            ct = fit(op, ct, x)
                if sent is not None:
                    sent.append((i, parent, ct))
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
            if sent is not None:
                for obs in observers:
                    obs.step(node, g, sent)
            if not retain_graph:
                if n == 1:
                    node.out = node.input0 = None  # free the saved values
                elif n == 2:
                    node.out = node.input0 = node.input1 = None
                else:
                    node.free()
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
