"""The reverse sweep over the tape, shared by ``Tensor.backward``, the
functional transforms and :class:`~wengert.GradientTape`.

The sweep is one loop over a heap of the nodes that have received a cotangent,
newest first (a topological order: a node's ``SEQ`` key decreases with creation
time), pulling each node's cotangent through its VJP rules. A node enters the
heap when its first cotangent arrives, so nothing is visited twice, nothing is
collected beforehand, and nothing recurses. In a chain, where the node just
reached is the only one pending, it is handed straight to the next iteration
with its cotangent, past the heap and the cotangent dict.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

from .anomaly import ANOMALY, check_cotangent
from .core.modes import GRAD_ENABLED
from .core.node import EDGES, OP, OUT, SEQ, STRIDE, Node, free, node_name
from .dual import Dual
from .tensor import _SCALAR_FALLBACK, Tensor, _const, value_of
from .tensor import shape_of as _shape

__all__ = ["backprop", "tensor_backward", "check_seed"]

_ndarray = np.ndarray
#: Per number of inputs ``n < 8``: the pairs ``(i, k)`` of input ``i`` and its first field.
_EDGES = tuple(tuple((i, EDGES + STRIDE * i) for i in range(n)) for n in range(8))
_ONE = _EDGES[1]
_TWO = _EDGES[2]

_SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or wg.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    from .ops.reduce import sum_to

    return sum_to(g, shape)


def _wrap_input(raw: Any, parent: Any) -> Any:
    """Rebuild a differentiable input for a ``create_graph`` sweep."""
    if parent is None:
        return _const(raw) if not isinstance(raw, Tensor) else raw
    if isinstance(parent, Tensor):
        return parent
    t = _const(raw)
    t._node = parent
    t._rg = True
    return t


def _version_error(node: Node, index: int, saved: int, now: int) -> RuntimeError:
    what = "its output" if index < 0 else f"input {index}"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} of {node_name(node)} (op {node[OP].name!r}, #{-node[SEQ]}) is at "
        f"version {now}; expected version {saved} instead. Compute the value out of place "
        "(x = x + 1 instead of x += 1), or .copy() it before modifying it."
    )


def _graph_inputs(node: Node, g: Any) -> tuple[Any, Any, list[Any]]:
    """``g``, the output and the inputs as tensors, for a ``create_graph`` sweep."""
    args = [_wrap_input(node[k + 1], node[k]) for k in range(EDGES, len(node), STRIDE)]
    out = _wrap_input(node[OUT], node)
    if not isinstance(g, Tensor):
        g = _const(g)
    return g, out, args


def _fit(ct: Any, x: Any) -> Any:
    """The cotangent of a broadcasting op, summed back to its input's shape."""
    if type(ct) is np.ndarray and type(x) is np.ndarray:
        return ct if ct.shape == x.shape else _sum_to(ct, x.shape)
    shape = _shape(x)
    return ct if _shape(ct) == shape else _sum_to(ct, shape)


def backprop(
    roots: list[tuple[Any, Any]],
    *,
    wanted: list[Any] | None = None,
    accumulate: bool = True,
    retain_graph: bool = False,
    create_graph: bool = False,
    restrict: Any = None,
    only_leaves: set[int] | None = None,
    leaf_hooks: bool = True,
) -> dict[int, Any]:
    """Run the reverse sweep.

    Parameters
    ----------
    roots : list of (edge, seed)
        An edge is a node or a leaf :class:`Tensor`; the seed is its cotangent
        (a NumPy value, or a tensor when ``create_graph``).
    wanted : list of edges, optional
        Edges whose cotangents to return (keyed by ``id``).
    accumulate : bool
        Add the cotangents of leaf tensors to their ``.grad``.
    retain_graph : bool
        Keep saved values; otherwise they are freed node by node.
    create_graph : bool
        Run the rules on tensors so the backward pass is recorded.
    restrict : set of int, optional
        Sweep only through the nodes with these ids (a gradient tape's).
    only_leaves : set of ids, optional
        With ``accumulate``, the leaves that may receive gradients.
    leaf_hooks : bool
        Run the hooks registered on leaf tensors (off for the partial sweeps
        that ``wengert.checkpoint`` runs inside a rule).

    Returns
    -------
    dict
        ``id(edge) -> cotangent`` for each wanted edge that was reached.
    """
    # Cotangents are keyed by ``SEQ`` for nodes (negative ints, and the heap
    # order) and by ``id`` for leaf tensors (positive: no clash).
    wanted_keys = {_key(w): id(w) for w in wanted} if wanted else {}
    min_key = 0  # nodes older than every wanted node need not be visited
    if wanted and not accumulate and all(type(w) is Node for w in wanted):
        min_key = max(wanted_keys)
    cts: dict[int, Any] = {}
    leaves: dict[int, Tensor] = {}
    # Newest node first: a min-heap on the SEQ keys (a topological order).
    heap = []
    for edge, seed in roots:
        key = _key(edge)
        if key in cts:
            cts[key] = cts[key] + seed
            continue
        cts[key] = seed
        if key > 0:
            leaves[key] = edge
        elif restrict is None or id(edge) in restrict:
            heap.append((key, edge))
    heapq.heapify(heap)
    results: dict[int, Any] = {}
    anomaly = ANOMALY.get() is not None  # wg.detect_anomaly(): read once per sweep
    token = GRAD_ENABLED.set(bool(create_graph))
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
        everywhere = restrict is None and min_key == 0  # every node reached is swept
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
            # Fields by position (see core.node): VERSION 0, OP 1, OUT 2, PARAMS 3,
            # SEQ 4, EXTRA 5, NIN 6, then four fields per input.
            op = node[1]
            out = node[2]
            n = node[6]
            if out is None:
                raise RuntimeError(_SECOND_TIME)
            if node[5] is not None:
                g = _node_extras(node, node[5], g)
            if wanted_keys and node[4] in wanted_keys:  # SEQ
                results[wanted_keys[node[4]]] = g
            if node[0] and op.reads_out:  # its output was written in place
                raise _version_error(node, -1, 0, node[0])
            # Per input i at k = 7 + 4 i: parent, value, version holder, version.
            # Before any rule reads a value: was it modified in place?
            if n == 1:
                slots = _ONE
                holder = node[9]
                if holder is not None and holder[0] != node[10]:
                    raise _version_error(node, 0, node[10], holder[0])
            elif n == 2:
                slots = _TWO
                holder = node[9]
                if holder is not None and holder[0] != node[10]:
                    raise _version_error(node, 0, node[10], holder[0])
                holder = node[13]
                if holder is not None and holder[0] != node[14]:
                    raise _version_error(node, 1, node[14], holder[0])
            else:
                slots = _EDGES[n] if n < 8 else tuple((i, 7 + 4 * i) for i in range(n))
                for i, k in slots:
                    holder = node[k + 2]
                    if holder is not None and holder[0] != node[k + 3]:
                        raise _version_error(node, i, node[k + 3], holder[0])
            # Python floats in and out (the scalar path ran forward): the record's
            # float partials give the cotangents without the rules' calls.
            if type(out) is float and type(g) is float and not create_graph:
                sd = op.scalar_deriv
            else:
                sd = None
            if sd is None:
                params = node[3]
                vjps = op.vjps
                if create_graph:
                    g, out, args = _graph_inputs(node, g)
                    call = 0  # every input from ``args``
                elif params or n > 2:
                    args = node[8::4]
                    call = 0
                else:
                    call = n  # the inputs straight from the node
                fits = op.broadcasting
            for i, k in slots:
                parent = node[k]
                if parent is None:
                    continue
                if sd is not None:  # elementwise: one or two inputs
                    try:
                        if n == 1:
                            ct = g * sd[0](out, node[8])
                        else:
                            ct = g * sd[i](out, node[8], node[12])
                    except _SCALAR_FALLBACK:
                        ct = op.vjps[i](g, out, *node[8::4])
                else:
                    rule = vjps[i]
                    if rule is None:
                        continue
                    if call == 1:
                        ct = rule(g, out, node[8])
                    elif call == 2:
                        ct = rule(g, out, node[8], node[12])
                    elif params:
                        ct = rule(g, out, *args, **params)
                    else:
                        ct = rule(g, out, *args)
                    if fits:
                        x = node[k + 1]
                        if type(ct) is _ndarray and type(x) is _ndarray:
                            if ct.shape != x.shape:
                                ct = _fit(ct, x)
                        elif type(ct) is not float:
                            # Dual numbers over arrays of the input's shape (forward
                            # over reverse) need no summing either.
                            px = x.primal if type(x) is Dual else x
                            pc = ct.primal if type(ct) is Dual else ct
                            if (type(pc) is not _ndarray or type(px) is not _ndarray
                                    or pc.shape != px.shape):
                                ct = _fit(ct, x)
                if anomaly:
                    check_cotangent(node, i, ct)
                if type(parent) is Node:
                    if following is None and everywhere and not heap:
                        # Nothing else is pending, so no cotangent reached it yet.
                        following = parent
                        following_g = ct
                        continue
                    pkey = parent[4]  # SEQ
                    if pkey in cts:
                        cts[pkey] = cts[pkey] + ct
                    elif parent is following:  # a second edge to it (x * x)
                        following_g = following_g + ct
                    elif everywhere or (
                        pkey <= min_key and (restrict is None or id(parent) in restrict)
                    ):
                        if following is None and not heap:
                            following = parent
                            following_g = ct
                        else:
                            if following is not None:  # no longer alone: to the heap
                                cts[following[4]] = following_g
                                heappush(heap, (following[4], following))
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
            if not retain_graph:
                if n == 1:
                    node[2] = node[8] = None  # OUT and the input: free the saved values
                elif n == 2:
                    node[2] = node[8] = node[12] = None
                else:
                    free(node)
    finally:
        GRAD_ENABLED.reset(token)
    for key, leaf in leaves.items():
        g = cts.pop(key, None)
        if g is None:
            continue
        extra = getattr(leaf, "_extra", None)
        if leaf_hooks and extra is not None and extra.get("hooks"):
            for hook in list(extra["hooks"]):
                new = hook(g)
                if new is not None:
                    g = new
        if key in wanted_keys:
            results[key] = g
        if accumulate and leaf._rg and (only_leaves is None or key in only_leaves):
            _accumulate(leaf, g, create_graph)
    for key, ident in wanted_keys.items():  # wanted nodes the sweep stopped at (restrict)
        if ident not in results and key in cts:
            results[ident] = cts[key]
    return results


def _key(edge: Any) -> int:
    """The sweep's dictionary key of an edge: ``SEQ`` (negative) for a node, ``id``
    (positive) for a leaf."""
    return edge[SEQ] if type(edge) is Node else id(edge)


def _node_extras(node: Node, extra: dict[str, Any], g: Any) -> Any:
    """Hooks and ``retain_grad`` of a node; the output check of an in-place op."""
    check = extra.get("out_check")
    if check is not None and check[0][0] != check[1]:
        raise _version_error(node, -1, check[1], check[0][0])
    for hook in list(extra.get("hooks", ())):
        new = hook(g)
        if new is not None:
            g = new
    ref = extra.get("retain")
    if ref is not None:
        t = ref()
        if t is not None and t._node is node:
            prev = t._extras().get("grad")
            t._extras()["grad"] = g if prev is None else prev + g
    return g


def _accumulate(leaf: Tensor, g: Any, create_graph: bool) -> None:
    if not create_graph or not isinstance(g, Tensor) or not (g._rg or g._node is not None):
        g = value_of(g)
        lv = leaf._value
        # A leaf over a dual number (inside wg.jvp) keeps the gradient, tangent and all.
        dual = isinstance(g, Dual) or isinstance(lv, Dual)
        if not dual and type(lv) is not float:
            g = np.asarray(g)
            if g.shape != np.shape(lv):
                g = np.broadcast_to(g, np.shape(lv))
            if g.dtype != lv.dtype:
                g = g.astype(lv.dtype)
            elif not g.flags.writeable or g.base is not None:
                g = g.copy()
        elif not dual:
            g = float(g)
    extra = leaf._extras()
    prev = extra.get("grad")
    extra["grad"] = g if prev is None else prev + g


def check_seed(out: Tensor, gradient: Any) -> Any:
    """Validate the output cotangent for ``backward``; ``None`` means 1 for scalars."""
    shape = out.shape
    if gradient is None:
        if math.prod(shape) != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs (this output has shape "
                f"{shape}). Reduce it first (y.sum().backward()), or pass gradient= with the "
                "output's shape (y.backward(gradient=np.ones_like(y))), or use wg.jacobian."
            )
        v = out._value
        if type(v) is float:
            return 1.0
        return np.ones(shape, dtype=v.dtype)
    g = gradient
    gv = value_of(g)
    if _shape(gv) != shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output has a shape of {_shape(gv)} and output has a shape "
            f"of {shape}. Pass a gradient with exactly the output's shape."
        )
    if not isinstance(g, Tensor):
        g = np.asarray(g) if not isinstance(g, float) else g
        if np.asarray(g).dtype.kind not in "fc":
            raise TypeError(f"the gradient seed must be floating point, got {np.asarray(g).dtype}")
    return g


def tensor_backward(
    outputs: list[Tensor],
    gradients: list[Any],
    *,
    retain_graph: bool | None,
    create_graph: bool,
    inputs: Any = None,
) -> None:
    """``Tensor.backward`` for one or several outputs."""
    if retain_graph is None:
        retain_graph = create_graph
    roots = []
    for out, gradient in zip(outputs, gradients):
        if not out._rg:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn: this "
                "tensor was not computed from any tensor with requires_grad=True (or it was "
                "computed under wg.no_grad()). Create the inputs with "
                "wg.tensor(..., requires_grad=True)."
            )
        seed = check_seed(out, gradient)
        if not create_graph:
            seed = value_of(seed)
        roots.append((out._node if out._node is not None else out, seed))
    only = None
    if inputs is not None:
        items = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        only = {id(t) for t in items}
    backprop(
        roots,
        accumulate=True,
        retain_graph=retain_graph,
        create_graph=create_graph,
        only_leaves=only,
    )
