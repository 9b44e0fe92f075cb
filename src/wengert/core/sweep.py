"""The reverse sweep over the tape: what it is, in a few lines, and what it tells.

:func:`backward_pass` is the sweep as a definition (HIPS autograd's
``backward_pass``): visit the nodes that received a cotangent newest first (a
topological order: a node's ``seq`` key decreases with creation time), pull
each node's cotangent back through its op's VJP rules (:func:`pull`), and add
what each input receives to what it already has. Nothing is visited twice,
nothing is collected beforehand, nothing recurses.

The sweep every front end runs is :func:`wengert.core.sweep_fast.backprop`: the
same loop, tuned (a chain skips the heap, one- and two-input nodes are read from
their slots, Python floats use the ops' float partials) and with what the front
ends need (hooks, ``retain_grad``, results for wanted nodes, observers,
freeing, ``create_graph``). The tests check that both give the same gradients.

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

The reference sweep on the same kind of graph:

>>> x = wg.tensor(3.0, requires_grad=True)
>>> y = x * x
>>> [(leaf is x, ct) for leaf, ct in backward_pass([(y._node, 1.0)])]
[(True, 6.0)]
"""

from __future__ import annotations

import heapq
from contextvars import ContextVar
from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, shape_of
from wengert.core.errors import GraphFreedError, HookError, InplaceModifiedError
from wengert.core.modes import ContextPush
from wengert.core.node import Node

__all__ = [
    "backward_pass",
    "pull",
    "check_saved",
    "SweepObserver",
    "observe_sweep",
    "SWEPT_EXTRAS",
    "SECOND_TIME",
    "version_error",
    "freed_error",
    "OBSERVERS",
    "run_hooks",
]

_ndarray = np.ndarray

SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or wg.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def freed_error() -> GraphFreedError:
    """The error for a sweep reaching a node an earlier sweep freed."""
    return GraphFreedError(SECOND_TIME)


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


class observe_sweep(ContextPush):  # noqa: N801 (used as a context manager, like a function)
    """``with observe_sweep(observer):`` reports every reverse sweep run in the block."""

    __slots__ = ()
    context = OBSERVERS


def version_error(node: Node, index: int, saved: int, now: int) -> InplaceModifiedError:
    """The error for a value modified in place after ``node`` saved it (-1: the output)."""
    what = "its output" if index < 0 else f"input {index}"
    error = InplaceModifiedError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} of {node.name} (op {node.op.name!r}, #{-node.seq}) is at "
        f"version {now}; expected version {saved} instead. Compute the value out of place "
        "(x = x + 1 instead of x += 1), or .copy() it before modifying it."
    )
    error.node, error.index, error.saved, error.now = node, index, saved, now
    return error


def check_versions(node: Node) -> None:
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


def _kind(v: Any) -> str:
    """The dtype kind of a value a hook returned (``"O"`` for what is not a number)."""
    try:
        return dtype_of(v).kind
    except TypeError:
        return "O"


def run_hooks(hooks: list[Any], g: Any, what: str) -> Any:
    """Call each hook on the cotangent ``g``; a hook may return a replacement of ``g``'s
    shape. ``what`` names the tensor for messages."""
    for hook in list(hooks):
        new = hook(g)
        if new is not None:
            kind = _kind(new)
            if kind not in "biufc":
                raise HookError(
                    f"hook {_hook_name(hook)!r} registered on {what} returned a "
                    f"{type(new).__name__}, not a gradient. A hook must return None or a "
                    "gradient of the same shape."
                )
            if shape_of(new) != shape_of(g):
                raise HookError(
                    f"hook {_hook_name(hook)!r} registered on {what} returned a gradient of "
                    f"shape {shape_of(new)}, but the gradient it received has shape "
                    f"{shape_of(g)}. A hook must return None or a gradient of the same shape."
                )
            if kind == "c" and _kind(g) != "c":
                raise HookError(
                    f"hook {_hook_name(hook)!r} registered on {what} returned a complex "
                    f"gradient ({dtype_of(new)}) for a real one ({dtype_of(g)}): the imaginary "
                    "part would be dropped. A hook must return a real gradient here (take "
                    "np.real of it if that is what you mean)."
                )
            g = new
    return g


#: The keys of a node's extras that a sweep acts on (:func:`node_extras` and the real
#: inputs' cotangents); a node whose extras hold none of them (a source line, kept
#: values, an anomaly stack) is swept as one without extras.
SWEPT_EXTRAS = frozenset({"out_check", "hooks", "on_grad", "real_inputs"})


def node_extras(node: Node, extra: dict[str, Any], g: Any, replay: bool,
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


def fit(op: Any, ct: Any, x: Any) -> Any:
    """A broadcasting op's cotangent, summed back to its input's shape when they differ."""
    tc = type(ct)
    if tc is float:
        return ct
    shape = x.shape if type(x) is _ndarray else shape_of(x)
    return ct if (ct.shape if tc is _ndarray else shape_of(ct)) == shape else \
        op.unbroadcast(ct, shape)


def fit_real(op: Any, ct: Any, x: Any, real: Any) -> Any:
    """:func:`fit`, then the real part for a real input of a node with a complex output
    (``real``: ``(indices, real_part)``, see ``recording.mark_real_inputs``, checked by
    the caller): a real input always gets a real gradient, in the one place every
    cotangent passes."""
    if op.broadcasting:
        ct = fit(op, ct, x)
    return real[1](ct)


def check_saved(node: Node) -> None:
    """Raise if a value a rule of ``node`` reads was freed or modified in place."""
    if node.out is None:
        raise freed_error()
    check = node.extra.get("out_check") if node.extra is not None else None
    if check is not None and check[0].version != check[1]:
        raise version_error(node, -1, check[1], check[0].version)
    check_versions(node)


def pull(node: Node, g: Any) -> list[Any]:
    """Pull the cotangent ``g`` of ``node``'s output back through its op's VJP rules: per
    input, its cotangent, or ``None`` where no gradient flows (no parent, or no rule)."""
    op = node.op
    args = node.inputs()
    params = node.params or {}
    real = node.extra.get("real_inputs") if node.extra is not None else None
    cts: list[Any] = []
    for i, parent in enumerate(node.parents()):
        rule = op.vjps[i]
        if parent is None or rule is None:
            cts.append(None)
            continue
        ct = rule(g, node.out, *args, **params)
        if op.broadcasting:  # summed back to the input's shape
            ct = fit(op, ct, args[i])
        if real is not None and i in real[0]:  # a real input of a complex output
            ct = real[1](ct)
        cts.append(ct)
    return cts


def backward_pass(roots: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The reverse sweep, as a definition: the leaves reached from ``roots`` (``(node or
    leaf, seed cotangent)`` pairs) and their cotangents, in the order reached.

    It runs no hook and no observer and frees nothing (the graph can be swept again);
    :func:`wengert.core.sweep_fast.backprop` is the same sweep, tuned and complete.
    """
    cts: dict[int, Any] = {}  # id(node or leaf) -> the cotangent summed so far
    heap: list[tuple[int, int, Node]] = []  # the nodes to visit, newest first
    leaves: dict[int, Any] = {}

    def receive(edge: Any, ct: Any) -> None:
        key = id(edge)
        if key in cts:
            cts[key] = cts[key] + ct
            return
        cts[key] = ct
        if type(edge) is Node:
            heapq.heappush(heap, (edge.seq, key, edge))
        else:
            leaves[key] = edge

    for edge, seed in roots:
        receive(edge, seed)
    while heap:
        _, key, node = heapq.heappop(heap)
        g = cts.pop(key)
        check_saved(node)
        for parent, ct in zip(node.parents(), pull(node, g)):
            if ct is not None:
                receive(parent, ct)
    return [(leaf, cts[key]) for key, leaf in leaves.items()]
