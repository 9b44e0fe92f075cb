"""The reverse sweep over the tape, shared by every reverse-mode front end.

The sweep is one loop over a heap of the nodes that have received a cotangent,
newest first (a topological order: a node's ``seq`` key decreases with creation
time), pulling each node's cotangent through its op's VJP rules. A node enters
the heap when its first cotangent arrives, so nothing is visited twice, nothing
is collected beforehand, and nothing recurses. In a chain, where the node just
reached is the only one pending, it is handed straight to the next iteration
with its cotangent, past the heap and the cotangent dict.

The sweep knows nodes, not tensors: a root or a parent that is not a
:class:`~wengert.core.node.Node` is a *leaf* (whatever object the front end
put there), whose cotangent is returned to the caller. What happens at leaves
(hooks, ``.grad``) is the front end's business.

Observers
---------
An object with the methods of :class:`SweepObserver`, opened with
:func:`observe_sweep`, is told about every step of every sweep in its context:
the node, the cotangent it received and what each input got from it. The
explorer widget and ``wg.detect_anomaly`` are built on this.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor(3.0, requires_grad=True)
>>> y = x * x
>>> class Printer(SweepObserver):
...     def step(self, node, g, sent):
...         print(node.op.name, g, [(i, ct) for i, _, ct in sent])
>>> with observe_sweep(Printer()):
...     y.backward()
multiply 1.0 [(0, 3.0), (1, 3.0)]
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy as np
from wengert.core.bind import SCALAR_FALLBACK, shape_of
from wengert.core.modes import GRAD_ENABLED
from wengert.core.node import Node

__all__ = [
    "backprop",
    "SweepObserver",
    "observe_sweep",
    "SECOND_TIME",
    "version_error",
    "OBSERVERS",
]

_ndarray = np.ndarray
#: ``range`` objects as tuples, per number of inputs (the loop over a node's inputs).
_RANGE = tuple(tuple(range(n)) for n in range(8))

SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or wg.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class SweepObserver:
    """Told about each step of a reverse sweep (subclass it; every method is optional)."""

    def begin(self, roots: list[tuple[Any, Any]]) -> None:
        """A sweep starts from ``roots``: ``(node or leaf, seed cotangent)`` pairs."""

    def step(self, node: Node, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        """``node`` received cotangent ``g`` and sent ``ct`` to input ``i`` (from
        ``parent``) for each ``(i, parent, ct)`` in ``sent``; inputs that get no
        gradient are not listed."""

    def hooked(self, node: Node, before: Any, after: Any, hooks: list[Any]) -> None:
        """The hooks registered on ``node``'s output (``register_hook``) turned its
        cotangent ``before`` into ``after`` (told just before :meth:`step` of ``node``);
        ``after`` is ``None`` when they did not run (a viewer's replay)."""

    def end(self, leaves: list[tuple[Any, Any]]) -> None:
        """The sweep finished; ``leaves`` are the leaves reached and their cotangents."""


#: The observers of sweeps run in this context (see :func:`observe_sweep`).
OBSERVERS: ContextVar[tuple[SweepObserver, ...]] = ContextVar("wengert_observers", default=())


class observe_sweep:  # noqa: N801 (used as a context manager, like a function)
    """``with observe_sweep(observer):`` reports every reverse sweep run in the block."""

    __slots__ = ("observer", "_token")

    def __init__(self, observer: SweepObserver) -> None:
        self.observer = observer

    def __enter__(self) -> SweepObserver:
        self._token = OBSERVERS.set(OBSERVERS.get() + (self.observer,))
        return self.observer

    def __exit__(self, *exc: object) -> None:
        OBSERVERS.reset(self._token)


def version_error(node: Node, index: int, saved: int, now: int) -> RuntimeError:
    """The error for a value modified in place after ``node`` saved it (-1: the output)."""
    what = "its output" if index < 0 else f"input {index}"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} of {node.name} (op {node.op.name!r}, #{-node.seq}) is at "
        f"version {now}; expected version {saved} instead. Compute the value out of place "
        "(x = x + 1 instead of x += 1), or .copy() it before modifying it."
    )


def _check_versions(node: Node) -> None:
    """Raise if a value a rule of ``node`` reads was modified in place since it was saved."""
    if node.version and node.op.reads_out:  # its output was written in place
        raise version_error(node, -1, 0, node.version)
    n = node.nin
    if n >= 1:
        h = node.holder0
        if h is not None and h.version != node.seen0:
            raise version_error(node, 0, node.seen0, h.version)
    if n >= 2:
        h = node.holder1
        if h is not None and h.version != node.seen1:
            raise version_error(node, 1, node.seen1, h.version)
    if n > 2:
        rest = node.rest
        for k in range(2, len(rest), 4):
            h = rest[k]
            if h is not None and h.version != rest[k + 1]:
                raise version_error(node, 2 + k // 4, rest[k + 1], h.version)


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__qualname__", None) or getattr(hook, "__name__", None) or repr(hook)


def run_hooks(hooks: list[Any], g: Any, what: str) -> Any:
    """Call each hook on the cotangent ``g``; a hook may return a replacement of ``g``'s
    shape. ``what`` names the tensor for messages."""
    for hook in list(hooks):
        new = hook(g)
        if new is not None:
            if shape_of(new) != shape_of(g):
                raise RuntimeError(
                    f"hook {_hook_name(hook)!r} registered on {what} returned a gradient of "
                    f"shape {shape_of(new)}, but the gradient it received has shape "
                    f"{shape_of(g)}. A hook must return None or a gradient of the same shape."
                )
            g = new
    return g


def _node_extras(node: Node, extra: dict[str, Any], g: Any, replay: bool,
                 observers: tuple[SweepObserver, ...]) -> Any:
    """Hooks and callbacks of a node (not in a replay); the output check of an in-place op.
    The observers are told what the hooks did (or that they did not run)."""
    check = extra.get("out_check")
    if check is not None and check[0].version != check[1]:
        raise version_error(node, -1, check[1], check[0].version)
    hooks = extra.get("hooks")
    if replay:
        if hooks:
            for obs in observers:
                obs.hooked(node, g, None, list(hooks))
        return g
    if hooks:
        before = g
        g = run_hooks(hooks, g, f"the output of {node.name} (#{-node.seq})")
        for obs in observers:
            obs.hooked(node, before, g, list(hooks))
    for callback in extra.get("on_grad", ()):
        callback(g)
    return g


def _fit(op: Any, ct: Any, x: Any) -> Any:
    """A broadcasting op's cotangent, summed back to its input's shape when they differ."""
    tc = type(ct)
    if tc is float:
        return ct
    shape = x.shape if type(x) is _ndarray else shape_of(x)
    return ct if (ct.shape if tc is _ndarray else shape_of(ct)) == shape else \
        op.unbroadcast(ct, shape)


def _fit_real(op: Any, ct: Any, x: Any, real: Any) -> Any:
    """:func:`_fit`, then the real part for a real input of a node with a complex output
    (``real``: ``(indices, real_part)``, see ``recording.mark_real_inputs``, checked by
    the caller): a real input always gets a real gradient, in the one place every
    cotangent passes."""
    if op.broadcasting:
        ct = _fit(op, ct, x)
    return real[1](ct)


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
                raise RuntimeError(SECOND_TIME)
            if node.extra is not None:
                g = _node_extras(node, node.extra, g, replay, observers)
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
                _check_versions(node)
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
                                ct = _fit_real(op, ct, x, fits)
                            elif op.broadcasting:
                                ct = _fit(op, ct, x)
                        elif type(ct) is not _ndarray or type(x) is not _ndarray \
                                or ct.shape != x.shape:
                            ct = _fit(op, ct, x)
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
