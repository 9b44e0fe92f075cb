"""Dead code elimination: drop the equations whose results nothing needs.

The roots are the graph's outputs and the variables its guards test (a
guarded value must still be computed, or the guard could not be checked).
One backward sweep over the equations marks what the roots read; the
equations whose output was never marked are dropped. A decomposition's equation
with several outputs (``w, v = eigh(s)``) keeps only the outputs that are read: its
other parts are dropped, so with one left it is that part's own equation
(``w = eigh_values(s)``, what ``np.linalg.eigvalsh`` traces to), which computes the same
value, frees the unread output's memory at once and merges (cse) with the same part
computed elsewhere. The sweep is a loop
(no recursion), linear in the number of equations and their inputs, so a
chain of a million equations takes a fraction of a second. Inputs stay (they
are the graph's signature) even when nothing reads them.

Ops are pure functions of their inputs (an op made for a recorded NumPy call
too), so an equation nothing reads can go, except one that may raise on the
values it is given (:func:`may_raise`: ``cholesky`` of a matrix that is not
positive definite, ``inv`` of a singular one, an index out of range, a step
under ``np.errstate(...='raise')``): it stays, so the graph refuses where eager
code refuses. What is lost is a warning a removed equation would have given.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: (np.exp(x), np.sin(x) * 2.0)[1], np.ones(3))  # exp: unused
>>> reports = []
>>> print(dce(g, reports=reports))
graph f(x: f64[3]):
    t1: f64[3] = sin(x)
    t2: f64[3] = multiply(t1, 2.0)
    return t2
>>> print(reports[0])
dce: 3 → 2 equations; removed 1 (exp: 1)
"""

from __future__ import annotations

from typing import Any

from wengert.graph.ir import Equation, Var
from wengert.graph.ir import GraphLike as Graph
from wengert.graph.passes.rewrite import PassReport, add_report
from wengert.ops import FAMILIES

__all__ = ["dce", "live_variables", "may_raise"]

_ELEMENTWISE = frozenset(op for family in FAMILIES if family.FAMILY.fusable
                         for op in family.FAMILY.ops)


def may_raise(eq: Any) -> bool:
    """Whether ``eq`` may raise on some values of its inputs: it runs under a context
    (``np.errstate(divide='raise')``, warnings as errors), its op declares that it may
    (``Op.raises``: a singular matrix, one that is not positive definite, a factorisation
    that does not converge, a failed check), or it reads a traced integer array other
    than elementwise (``np.take(x, i)``: an index out of range).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda a, i: (np.linalg.inv(a), np.take(a, i), a @ a), np.eye(2),
    ...              np.array([0]))
    >>> [may_raise(eq) for eq in g]
    [True, True, False]
    """
    if eq.context is not None:
        return True
    if any(op.raises for op in eq.ops):
        return True
    if eq.op in _ELEMENTWISE:
        return False
    return any(type(v) is Var and v.dtype.kind in "iu" for v in eq.ins)


def live_variables(graph: Graph) -> set[Var]:
    """The variables the outputs, the guards and the equations that may raise
    (:func:`may_raise`) need (computed or read, directly or not).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: (np.exp(x), np.sin(x))[1], 1.0)
    >>> sorted(v.name for v in live_variables(g))
    ['t1', 'x']
    """
    live: set[Var] = {v for v in graph.outputs if type(v) is Var}
    live.update(g.var for g in graph.guards)
    add = live.add
    for eq in reversed(graph.equations):
        read = eq.out in live or (len(eq.outs) > 1 and any(v in live for v in eq.outs))
        if read or may_raise(eq):
            if not read:  # (of a decomposition, the first part: it raises as the whole)
                add(eq.out)
            for v in eq.ins:
                if type(v) is Var:
                    add(v)
    return live


def _narrowed(eq: Equation, live: set[Var], removed: dict[str, int]) -> Equation | None:
    """A decomposition's equation with only its live outputs (each part's op computes its
    output alone: ``w = eigh_values(s)`` where only ``w`` of ``w, v = eigh(s)`` is
    read), its dropped parts counted in ``removed`` by op name; ``None`` when none is live."""
    keep = [(op, v) for op, v in zip(eq.ops, eq.outs) if v in live]
    if len(keep) == len(eq.outs):
        return eq
    for op, v in zip(eq.ops, eq.outs):
        if v not in live:
            removed[op.name] = removed.get(op.name, 0) + 1
    if not keep:
        return None
    ops = [op for op, _ in keep]
    return eq.replace(op=ops[0], outs=[v for _, v in keep], parts=ops)


def dce(graph: Graph, *, reports: list[PassReport] | None = None) -> Graph:
    """A new graph without the equations that neither an output nor a guard needs.

    A :class:`~wengert.graph.passes.pipeline.Pass`: ``graph`` is not modified; the report
    appended to ``reports`` counts the removed equations by op name.

    Returns
    -------
    Graph
        The same inputs, outputs and guards; the live equations in their order.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: (np.exp(x), np.sin(x))[1], 1.0)
    >>> [eq.op.name for eq in dce(g)]
    ['sin']
    """
    live = live_variables(graph)
    kept = []
    removed: dict[str, int] = {}
    for eq in graph.equations:
        if len(eq.outs) > 1:
            eq = _narrowed(eq, live, removed)
            if eq is None:
                continue
        if eq.out in live:
            kept.append(eq)
        else:
            name = eq.op.name
            removed[name] = removed.get(name, 0) + 1
    out = graph.replace(equations=tuple(kept))
    add_report(reports, PassReport("dce", len(graph), len(out), removed, verb="removed"))
    return out
