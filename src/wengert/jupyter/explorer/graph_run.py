"""A traced graph run once on tensors, so the explorer can step through it.

The explorer steps through a *tape* (values, and a reverse sweep to replay). A graph
(:func:`wengert.trace`) is run op by op on tensors made from the values it was traced
with (``keep_values`` on), and the tape of that run is what :func:`wg.explore
<wengert.jupyter.explorer.widget.explore>` shows for a graph, with the graph's own names for its
inputs and results.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> run = GraphRun(wg.trace(lambda x, w: np.sum(np.tanh(x * w)), np.ones(3), 0.5))
>>> len(run.tape), sorted(run.leaf_names.values())
(3, ['w', 'x'])
"""

from __future__ import annotations

import numpy as np
from wengert.core.tree import flatten, unflatten
from wengert.graph.derivatives import examples_of
from wengert.graph.program import Graph
from wengert.graph.tracer import is_recorded_call
from wengert.reverse.tape_reading import keep_values, tape_of
from wengert.reverse.tensor import Tensor, tensor

__all__ = ["GraphRun"]


class GraphRun:
    """``graph`` run on tensors: ``tape``, ``output`` (a tensor, or ``None`` for several
    outputs), ``leaf_names`` (tensor id -> input name) and ``names`` (the tape's variable
    ``t3`` -> the graph's name of that result, when the tape's variables are the graph's
    equations one for one)."""

    def __init__(self, graph: Graph) -> None:
        leaves, spec = flatten(examples_of(graph))
        tensors = []
        self.leaf_names: dict[int, str] = {}
        for var, value in zip(graph.inputs, leaves):
            floating = np.dtype(var.dtype).kind in "fc"
            t = tensor(value, requires_grad=floating)
            if floating:
                self.leaf_names[id(t)] = var.name
            tensors.append(t)
        self._inputs = tensors  # kept alive: leaf_names is keyed by their ids
        with keep_values():
            result = graph(*unflatten(spec, tensors))
        outs = [o for o in flatten(result)[0] if isinstance(o, Tensor) and o.requires_grad]
        if not outs:
            raise ValueError(f"explore: graph {graph.name} has no output that depends on a "
                             "floating-point input; nothing to differentiate")
        self.tape = tape_of(*outs)
        self.output = outs[0] if len(outs) == 1 else None
        self.names: dict[str, str] | None = None
        # one equation of the tape per equation of the graph (a decomposition is one in
        # both): each output of the tape's equation k is named as the graph's equation k's
        if not any(is_recorded_call(eq.op) for eq in graph.equations) \
                and len(self.tape) == len(graph.equations):
            self.names = {v.name: w.name for eq in self.tape
                          for v, w in zip(eq.outs, graph.equations[eq.index].outs)}

    def __repr__(self) -> str:
        return f"<GraphRun: {len(self.tape)} equations>"
