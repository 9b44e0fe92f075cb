"""Checkpointing: recompute forward values late instead of keeping them, under a budget.

A gradient graph computes the forward values early and reads many of them
again late, in the backward part: between the two uses they only wait, and at
the program's peak most of its memory is such waiting values. :func:`remat`
frees some of them after their early uses and recomputes them right before
their late ones, by copying the forward equations that make them (and, the
same way, any of their inputs that is no longer live) into the program there.

The policy
----------
Chen et al.'s segments ("Training deep nets with sublinear memory cost",
2016), chosen by measuring: the *waiting* values are those live but unused
at the peak of the planned program (:func:`~.memory.memory_plan`), in the
order they are made. Keeping every k-th of them (the checkpoints) and
recomputing the others makes each recomputation start from the last
checkpoint, so a segment's values are recomputed once, when the backward part
first needs one of them, and live only while it works on that segment: about
``m/k + k`` waiting values instead of ``m``, ``2√m`` for ``k = √m``. A
recomputed value is reused by every later use (never recomputed twice).

Rather than trust the ``√m`` estimate (values differ in size, graphs are not
chains), :func:`remat` tries segment lengths k = 2, 3, 4, 6, 9, ... (and
``√m``, and "keep none"), in this order, planning each rewrite and measuring
its peak (an O(n) pass each, O(log m) of them: O(n log n) in all), and
returns the first that fits the budget: the smaller k, the fewer values
dropped, and the less recomputed. When none fits, the one with the lowest peak
becomes the starting point of another round (the peak has moved), at most
:data:`ROUNDS` times; then it raises :class:`BudgetError` with the smallest
peak it reached.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> from wengert.graph.passes.memory import memory_plan, peak_bytes
>>> def f(x):
...     for _ in range(8):
...         x = np.tanh(x) * 1.5
...     return np.sum(x)
>>> g = wg.trace(wg.grad(f), np.ones(1000), source_lines=False)
>>> peak_bytes(g, memory_plan(g))
80008
>>> r = remat(g, budget_bytes=50_000)
>>> peak_bytes(r, memory_plan(r)), len(r) - len(g)
(48008, 7)
>>> np.array_equal(r(np.linspace(0, 1, 1000)), g(np.linspace(0, 1, 1000)))
True
"""

from __future__ import annotations

import math
from typing import Any

from wengert.graph.ir import Equation, Var
from wengert.graph.passes.memory import MemoryPlan, buffer_of, planned
from wengert.graph.passes.rewrite import PassReport, add_report

__all__ = ["remat", "BudgetError", "waiting_values", "ROUNDS"]

#: How many times :func:`remat` starts again from its best rewrite when none fits.
ROUNDS = 6


class BudgetError(ValueError):
    """No recomputation found brings the program's peak within the budget.

    Attributes
    ----------
    budget : int
    smallest_peak : int
        The smallest peak (bytes) reached.
    """

    def __init__(self, message: str, budget: int, smallest_peak: int) -> None:
        super().__init__(message)
        self.budget = budget
        self.smallest_peak = smallest_peak


def _peak(graph: Any, timeline: list[int]) -> tuple[int, int]:
    """The planned peak and the first equation where it is reached (-1: no equations)."""
    if not timeline:
        return sum(math.prod(v.shape) * v.dtype.itemsize for v in graph.inputs), -1
    peak = max(timeline)
    return peak, timeline.index(peak)


def _gaps(graph: Any, plan: MemoryPlan, at: int) -> list[tuple[Var, int, int, int]]:
    """The values waiting across equation ``at``, in the order they are made, as
    ``(v, made, a, b)``: ``v`` is made by equation ``made``, read last at ``a < at`` (or
    ``a == made``) and next at ``b > at``. Only values that own their buffer (not views
    of another value) and share it with nothing else live across ``at``."""
    eqs = graph.equations
    made_by = {id(v): i for i, eq in enumerate(eqs) for v in eq.outs}
    outputs = {id(v) for v in graph.outputs if type(v) is Var}
    uses: dict[int, list[int]] = {}
    for i, eq in enumerate(eqs):
        for v in eq.ins:
            if type(v) is Var:
                lst = uses.setdefault(id(v), [])
                if not lst or lst[-1] != i:
                    lst.append(i)
    root = buffer_of(graph, plan)
    spanning: dict[int, int] = {}  # buffer -> how many of its variables live across `at`
    found: list[tuple[int, Var, int, int, int]] = []
    for k, v in enumerate(graph.variables()):
        made = made_by.get(id(v), -1)
        lst = uses.get(id(v), [])
        if id(v) in outputs or made >= at or not lst or lst[-1] <= at:
            continue
        spanning[root[k]] = spanning.get(root[k], 0) + 1
        if made < 0 or at in lst:
            continue  # a graph input, or read at the peak itself
        if root[k] != k and plan.into[made] is None:
            continue  # a view of another value
        before = [i for i in lst if i < at]
        after = next(i for i in lst if i > at)
        found.append((root[k], v, made, before[-1] if before else made, after))
    return [(v, made, a, b) for r, v, made, a, b in found if spanning[r] == 1]


def waiting_values(graph: Any) -> list[Var]:
    """The values that wait, live but unused, across the peak of the planned program, in
    the order they are made: what :func:`remat` chooses from.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(wg.grad(lambda x: np.sum(np.sin(np.tanh(x)))), np.ones(1000))
    >>> [v.name for v in waiting_values(g)]
    ['t0']
    """
    plan, timeline = planned(graph)
    _, at = _peak(graph, timeline)
    return [v for v, _, _, _ in _gaps(graph, plan, at)] if at >= 0 else []


def _fresh_name(base: str, taken: set[str]) -> str:
    name, k = f"{base}_r", 2
    while name in taken:
        name = f"{base}_r{k}"
        k += 1
    taken.add(name)
    return name


def _rewrite(graph: Any, drops: list[tuple[Var, int, int, int]]) -> Any:
    """``graph`` with each dropped value ``(v, made, a, b)`` freed after its read at ``a``
    and recomputed right before equation ``b``, with the inputs it needs that are no
    longer live (each value recomputed once); every later read uses the copy. A value
    read nowhere before its gap (``a == made``, no guard) is moved rather than copied."""
    eqs = graph.equations
    made: dict[int, int] = {id(v): i for i, eq in enumerate(eqs) for v in eq.outs}
    last: dict[int, int] = {}
    for i, eq in enumerate(eqs):
        for v in eq.ins:
            if type(v) is Var:
                last[id(v)] = i
    for v in graph.outputs:
        if type(v) is Var:
            last[id(v)] = len(eqs)
    guarded = {id(g.var) for g in graph.guards}
    taken = {v.name for v in graph.variables()}
    kept_until = {id(v): a for v, _, a, _ in drops}
    at: dict[int, list[Var]] = {}
    for v, _, _, b in drops:
        at.setdefault(b, []).append(v)
    moved = {i for v, i, a, _ in drops if a == i and id(v) not in guarded
             and len(eqs[i].outs) == 1}  # (a decomposition's other outputs stay)
    clone: dict[int, Var] = {}
    new: list[Equation] = []

    def available(w: Var, t: int) -> bool:
        key = id(w)
        if key not in made:
            return True  # a graph input
        if key in kept_until:
            return t <= kept_until[key]
        return last.get(key, made[key]) >= t

    def materialize(v: Var, t: int) -> None:
        stack = [v]
        while stack:
            u = stack[-1]
            if id(u) in clone:
                stack.pop()
                continue
            eq = eqs[made[id(u)]]
            pending = [w for w in eq.ins if type(w) is Var and id(w) not in clone
                       and not available(w, t)]
            if pending:
                stack.extend(reversed(pending))
                continue
            ins = [clone.get(id(w), w) if type(w) is Var else w for w in eq.ins]
            copy = Var(_fresh_name(u.name, taken), u.shape, u.dtype, u.scalar)
            if len(eq.outs) > 1:  # the part of a decomposition that made u, alone
                op = eq.ops[eq.outs.index(u)]
                new.append(eq.replace(op=op, ins=ins, out=copy, parts=None))
            else:
                new.append(eq.replace(ins=ins, out=copy))
            clone[id(u)] = copy
            stack.pop()

    for i, eq in enumerate(eqs):
        for v in at.get(i, ()):
            materialize(v, i)
        if i in moved:
            continue
        if any(type(w) is Var and id(w) in clone for w in eq.ins):
            eq = eq.replace(ins=[clone.get(id(w), w) if type(w) is Var else w
                                 for w in eq.ins])
        new.append(eq)
    return graph.replace(equations=new)


def _segment_lengths(m: int) -> list[int]:
    """2, 3, 4, 6, 9, ... (×1.5), √m, and m + 1 (keep none), in increasing order."""
    ks = {2, 3, 4, math.isqrt(m), math.isqrt(m) + 1, m + 1}
    k = 4.0
    while k < m:
        k *= 1.5
        ks.add(int(k))
    return sorted(x for x in ks if 2 <= x <= m + 1)


def _with_plan(graph: Any, plan: MemoryPlan) -> Any:
    if "plan" in getattr(type(graph), "__slots__", ()):
        return graph.replace(plan=plan)
    return graph


def _reported(graph: Any, out: Any, budget_bytes: int,
              reports: list[PassReport] | None) -> Any:
    """``out``, with remat's report appended: the equations it repeats, by op name."""
    if reports is not None:
        counts: dict[str, int] = {}
        for eq in out.equations:
            counts[eq.primitive] = counts.get(eq.primitive, 0) + 1
        for eq in graph.equations:
            counts[eq.primitive] = counts.get(eq.primitive, 0) - 1
        recomputed = {name: n for name, n in counts.items() if n > 0}
        add_report(reports, PassReport(_remat_name(budget_bytes), len(graph.equations),
                                       len(out.equations), recomputed, verb="recomputed"))
    return out


def _remat_name(budget_bytes: int) -> str:
    return f"remat(budget={budget_bytes:,} B)"


def remat(graph: Any, budget_bytes: int, *, reports: list[PassReport] | None = None) -> Any:
    """Recompute forward values late instead of keeping them, so that the planned
    program's peak fits ``budget_bytes`` (see the module for the policy).

    Parameters
    ----------
    graph : Graph
        Typically a gradient graph (``wg.trace(wg.grad(f), ...)``).
    budget_bytes : int
        The largest peak allowed, as :func:`~.memory.peak_bytes` counts it with the
        program's memory plan (inputs and outputs included). (A pass for
        ``graph.optimize`` takes the graph alone: :func:`~.pipeline.checkpointed` makes
        one with a budget.)
    reports : list of PassReport, optional
        When given, a :class:`~wengert.graph.passes.rewrite.PassReport` is appended
        (the equations recomputed, by op name).

    Returns
    -------
    Graph
        The same values, with some forward equations repeated before their late uses
        (the copies are named ``t5_r``); the graph itself when it already fits. Its
        peak is that of a run with :func:`~.memory.memory_plan` (the graph carries the
        plan when ``Graph`` has a ``plan`` field).

    Raises
    ------
    BudgetError
        A ``ValueError`` saying the smallest peak reached, when no rewrite fits.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(wg.grad(lambda x: np.sum(np.tanh(np.tanh(x)))), np.ones(1000))
    >>> try:
    ...     remat(g, budget_bytes=1000)
    ... except BudgetError as e:
    ...     print(e.smallest_peak > 1000)
    True
    """
    plan, timeline = planned(graph)
    base_peak, at = _peak(graph, timeline)
    if base_peak <= budget_bytes:
        return _reported(graph, _with_plan(graph, plan), budget_bytes, reports)
    floor = sum(math.prod(v.shape) * v.dtype.itemsize for v in graph.inputs) + sum(
        math.prod(v.shape) * v.dtype.itemsize for v in graph.outputs
        if type(v) is Var and v not in graph.inputs)
    best_peak = base_peak
    current, current_peak = graph, base_peak
    for _ in range(ROUNDS):
        waiting = _gaps(current, plan, at) if at >= 0 else []
        if not waiting:
            break
        best: tuple[int, Any, MemoryPlan, list[int]] | None = None
        for k in _segment_lengths(len(waiting)):  # the fewer dropped, the less recomputed
            drops = [w for j, w in enumerate(waiting) if (j + 1) % k != 0]
            rewritten = _rewrite(current, drops)
            rplan, rtimeline = planned(rewritten)
            peak = max(rtimeline) if rtimeline else 0
            if peak <= budget_bytes:
                return _reported(graph, _with_plan(rewritten, rplan), budget_bytes, reports)
            if best is None or peak < best[0]:
                best = (peak, rewritten, rplan, rtimeline)
        assert best is not None
        peak, rewritten, rplan, rtimeline = best
        best_peak = min(best_peak, peak)
        if peak >= current_peak:
            break
        current, current_peak, plan = rewritten, peak, rplan
        _, at = _peak(current, rtimeline)
    raise BudgetError(
        f"remat: cannot bring the peak memory of {graph.name} within budget_bytes="
        f"{budget_bytes}: the smallest peak reached by recomputing forward values is "
        f"{best_peak} bytes (without recomputation {base_peak}; the inputs and outputs "
        f"alone take {floor}). Raise the budget to at least {best_peak}.",
        budget_bytes, best_peak)
