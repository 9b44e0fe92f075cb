"""Derivative programs as graphs: the backward (or tangent) program is itself a graph.

:func:`grad_graph` traces the reverse sweep of a graph: the graph is run op
by op on tensors over tracers (:func:`wengert.graph.program.evaluate`), and
the op records' VJP rules, which are written with wengert's own ops, run on
the tracers, so every step of the backward pass becomes an equation. The
result can be listed, optimised, compiled and turned into source like any
graph. :func:`jvp_graph` does the same for forward mode with the JVP rules.

The cotangent flowing into each traced value is named after it (``t3_bar``,
``x_bar``) so the adjoint program reads like the one written by hand.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sin(x) * x, 0.5, source_lines=False)
>>> print(wg.grad_graph(g))
graph grad_f(x: f64[]):
    t0: f64[] = sin(x)
    t1: f64[] = multiply(t0, x)
    t0_bar: f64[] = multiply(1.0, x)
    t2: f64[] = multiply(1.0, t0)
    t3: f64[] = cos(x)
    t4: f64[] = multiply(t0_bar, t3)
    x_bar: f64[] = add(t2, t4)
    return t1, x_bar
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from wengert.core.sweep import SweepObserver, observe_sweep
from wengert.core.tree import flatten, unflatten
from wengert.graph.ir import Var
from wengert.graph.program import Graph
from wengert.graph.trace import trace
from wengert.graph.tracer import Traced
from wengert.transforms.forward import jvp
from wengert.transforms.reverse import argnums_at, value_and_grad

__all__ = ["grad_graph", "jvp_graph", "examples_of"]

_FRESH = re.compile(r"t\d+")


def examples_of(graph: Graph) -> tuple[Any, ...]:
    """Arguments to trace ``graph`` again: the values it was traced with, or ones of the
    inputs' shapes and dtypes (placeholders, graphs built by hand)."""
    if graph.examples is not None:
        leaves = list(graph.examples)
    else:
        leaves = [1.0 if v.scalar and v.dtype == np.float64 else np.ones(v.shape, v.dtype)
                  for v in graph.inputs]
    return tuple(unflatten(graph.in_tree, leaves))


class _NameAdjoints(SweepObserver):
    """Names each cotangent of the traced sweep after the value it belongs to."""

    def step(self, node: Any, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        out = node.out  # the raw values of a sweep over tensors whose values are traced
        if type(out) is Traced and type(g) is Traced and _FRESH.fullmatch(g._var.name) \
                and g._var is not out._var:
            g._var.name = f"{out._var.name}_bar"


def renumber(graph: Graph) -> None:
    """Number the tape-style names (``t12``) again from ``t0``, in order, so renamed
    adjoints leave no gaps (other names are kept)."""
    fresh = [v for v in graph.variables() if _FRESH.fullmatch(v.name)]
    taken = {v.name for v in graph.variables()} - {v.name for v in fresh}
    k = 0
    for v in fresh:
        while f"t{k}" in taken:
            k += 1
        v.name = f"t{k}"
        k += 1


def _rename_inputs(graph: Graph, names: Sequence[str]) -> None:
    """The traced program's inputs take the names of the graph it came from."""
    for v, name in zip(graph.inputs, names):
        v.name = name


def _rename_outputs(graph: Graph, outputs: Sequence[Any], names: Sequence[str]) -> None:
    """Give the gradient outputs the names of their inputs with ``_bar`` when free."""
    taken = {v.name for v in graph.variables()}
    for v, name in zip(outputs, names):
        if type(v) is Var and _FRESH.fullmatch(v.name) and name not in taken:
            taken.discard(v.name)
            v.name = name
            taken.add(name)


def grad_graph(graph: Graph, argnums: int | Sequence[int] = 0) -> Graph:
    """The graph of ``(value, gradient)`` of ``graph``'s scalar output.

    Parameters
    ----------
    graph : Graph
        A traced function with one scalar output (``wg.trace(loss, ...)``).
    argnums : int or sequence of int
        Which arguments to differentiate with respect to (as :func:`wengert.grad`).

    Returns
    -------
    Graph
        Same inputs; outputs ``(value, grad)`` (``grad`` a tuple for several argnums):
        the forward equations, then the backward ones built from the op records' VJP
        rules.

    Examples
    --------
    >>> import wengert as wg
    >>> g = wg.grad_graph(wg.trace(lambda x, y: x * y + y, 2.0, 3.0), argnums=(0, 1))
    >>> g(2.0, 3.0)
    (9.0, (3.0, 3.0))
    """
    outs = graph.outputs
    if len(outs) != 1 or outs[0].shape != ():
        raise TypeError(
            f"grad_graph: {graph.name} returns {len(outs)} value(s) "
            f"({', '.join(v.name if type(v) is Var else 'a constant' for v in outs[:4])}), "
            "but a gradient needs one scalar output. Take grad_graph of a graph of one number "
            "(a gradient graph returns the value and the gradient: trace a function returning "
            "the quantity to differentiate instead)."
        )
    args = examples_of(graph)
    nums, _ = argnums_at(argnums, len(args), "grad_graph")

    def program(*a: Any) -> Any:
        return graph(*a)

    program.__name__ = f"grad_{graph.name}"
    with observe_sweep(_NameAdjoints()):
        out = trace(value_and_grad(program, argnums), *args, source_lines=False)
    out = out.replace(name=program.__name__)
    _rename_inputs(out, [v.name for v in graph.inputs])
    _rename_outputs(out, out.outputs[1:], argument_leaf_names(graph, args, nums))
    renumber(out)
    return out


def argument_leaf_names(graph: Graph, args: tuple[Any, ...], nums: Sequence[int]) -> list[str]:
    """``x_bar``, ``params_w_bar`` ...: the gradient outputs' names, in order."""
    names: list[str] = []
    start = 0
    for i, a in enumerate(args):
        n = len(flatten(a)[0])
        if i in nums:
            names += [f"{v.name}_bar" for v in graph.inputs[start:start + n]]
        start += n
    return names


def jvp_graph(graph: Graph) -> Graph:
    """The graph of ``(value, tangent)``: inputs are the primals, then the tangents (same
    structure), outputs the value and its directional derivative.

    Examples
    --------
    >>> import wengert as wg
    >>> g = wg.jvp_graph(wg.trace(lambda x: x * x * x, 2.0))
    >>> g((2.0,), (1.0,))
    (8.0, 12.0)
    """
    args = examples_of(graph)

    def program(*a: Any) -> Any:
        return graph(*a)

    def pushforward(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        return jvp(program, primals, tangents)

    pushforward.__name__ = f"jvp_{graph.name}"
    tangents = tuple(unflatten(flatten(args)[1], [
        np.ones_like(x) if isinstance(x, np.ndarray) else 1.0 for x in flatten(args)[0]]))
    out = trace(pushforward, tuple(args), tangents, source_lines=False)
    names = [v.name for v in graph.inputs]
    _rename_inputs(out, names + [f"{name}_dot" for name in names])
    renumber(out)
    return out
