"""Memory planning: liveness analysis, buffer reuse, and the peak bytes of a program.

A graph's generated code without a plan keeps every value until the function
returns. A :class:`MemoryPlan` says, for each equation, which variables die
after it (``del`` them) and whether its output may be written into the buffer
of an input that dies there (``np.sin(t3, out=t3)``). :func:`memory_plan`
computes one; :func:`peak_bytes` and :func:`memory_timeline` count the bytes a
run holds with or without it.

Buffers and views
-----------------
The planner follows buffers, not names. An op that may return a view of its
input (``reshape``, ``transpose``, ``getitem`` with basic indices,
``broadcast_to``, ``sum_to`` that sums nothing, and any op it does not know,
such as a recorded NumPy call that is not a ufunc) puts its output in its
input's buffer: the buffer stays live while any of its views is, and is reused
only when it and all its views are dead. The planner never writes into a graph
input's buffer (the caller's arrays) or into a view: only into a fresh array
an op made (an elementwise op, a matmul, a reduction, a fused kernel ...).

What is counted
---------------
The bytes of the program's values: the inputs (held by the caller throughout)
and each value an equation makes, from the equation that makes it until its
buffer dies (outputs never die). A view costs nothing; a reused buffer is
counted once. Temporaries inside an op's own forward (those of ``np.matmul``
or of a fused kernel's chunks) and the graph's constants are not counted.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sum(np.tanh(np.sin(x) * 2.0)), np.ones(1000),
...              source_lines=False)
>>> plan = memory_plan(g)
>>> print(plan)
memory plan for f: 2 buffers reused, 3 values freed
    t0 = sin(x)
    t1 = multiply(t0, 2.0)    out=t0; del t0
    t2 = tanh(t1)    out=t1; del t1
    t3 = sum(t2)    del t2
>>> peak_bytes(g), peak_bytes(g, plan)
(32008, 16008)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from wengert.core.bind import apply
from wengert.graph.backends.codegen import is_scalar_program
from wengert.graph.ir import Equation, GuardFailed, Var
from wengert.graph.passes.fuse import FusedOp
from wengert.graph.passes.rewrite import PassReport, add_report
from wengert.ops import REGISTRY
from wengert.ops.broadcast import SUM_TO
from wengert.ops.elementwise import FAMILY as ELEMENTWISE
from wengert.ops.indexing import GETITEM

__all__ = ["MemoryPlan", "memory_plan", "plan_memory", "peak_bytes", "memory_timeline",
           "deaths", "buffer_of", "run_planned", "accepts_out", "view_inputs", "planned"]

_NEVER = 1 << 62  # the death of a buffer that lives to the end (inputs, outputs)


class MemoryPlan:
    """What to free after each equation and which input buffer receives its output.

    Attributes
    ----------
    equations : tuple of Equation
        The equations planned (the very tuple of the graph: a plan holds only for it).
    frees : tuple of tuple of Var
        ``frees[i]``: the variables whose last use is equation ``i`` (``del`` them after
        it, and after its guards). Graph inputs and outputs are never freed.
    into : tuple of (Var or None)
        ``into[i]``: an input of equation ``i`` that dies there and whose buffer receives
        the output (call the op with ``out=into[i]``), or None.
    """

    __slots__ = ("equations", "frees", "into", "name")

    def __init__(self, equations: Sequence[Equation], frees: Sequence[Sequence[Var]],
                 into: Sequence[Var | None], name: str = "f") -> None:
        self.equations = tuple(equations)
        self.frees = tuple(tuple(f) for f in frees)
        self.into = tuple(into)
        self.name = name
        if not len(self.frees) == len(self.into) == len(self.equations):
            raise ValueError("MemoryPlan: one entry of frees and into per equation")

    def holds_for(self, graph: Any) -> bool:
        """Whether this plan was made for ``graph``'s equations."""
        return self.equations is graph.equations or self.equations == graph.equations

    @property
    def reused(self) -> int:
        """How many equations write into a dying input's buffer."""
        return sum(v is not None for v in self.into)

    def __str__(self) -> str:
        freed = sum(len(f) for f in self.frees)
        lines = [f"memory plan for {self.name}: {self.reused} buffer"
                 f"{'s' * (self.reused != 1)} reused, {freed} value{'s' * (freed != 1)} freed"]
        for eq, frees, into in zip(self.equations, self.frees, self.into):
            args = [v.name if type(v) is Var else repr(v) for v in eq.ins]
            line = f"    {', '.join(v.name for v in eq.outs)} = {eq.primitive}({', '.join(args)})"
            notes = []
            if into is not None:
                notes.append(f"out={into.name}")
            if frees:
                notes.append("del " + ", ".join(v.name for v in frees))
            lines.append(line + ("    " + "; ".join(notes) if notes else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        n = len(self.equations)
        return (f"<MemoryPlan {self.name}: {n} equation{'s' * (n != 1)}, {self.reused} "
                f"reused, {sum(len(f) for f in self.frees)} freed>")


# -- what each op does with memory ------------------------------------------------------
#: The registry's ops and its elementwise ufuncs (``np.<name>`` with one output), by id.
_REGISTERED = frozenset(id(op) for op in REGISTRY)
_ELEMENTWISE_UFUNCS = frozenset(
    id(op) for op in ELEMENTWISE.ops
    if isinstance(op.impl, np.ufunc) and op.impl.nout == 1
    and getattr(np, op.impl.__name__, None) is op.impl)


def _nbytes(v: Var) -> int:
    return math.prod(v.shape) * v.dtype.itemsize


def _advanced(index: Any) -> bool:
    parts = index if type(index) is tuple else (index,)
    return any(isinstance(p, (np.ndarray, list, bool, np.bool_)) for p in parts)


def _is_ufunc_call(op: Any) -> bool:
    """A recorded NumPy call of a ufunc: it returns a new array."""
    f = getattr(op.impl, "func", None)
    return isinstance(f, np.ufunc) and getattr(op.impl, "part", None) is None


def view_inputs(eq: Equation) -> tuple[int, ...]:
    """The inputs whose buffer the output of ``eq`` may share (a view, or the input
    itself); every input for an op the planner does not know.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x.T)[0], np.ones((2, 3)))
    >>> [(eq.op.name, view_inputs(eq)) for eq in g]
    [('transpose', (0,)), ('sin', ()), ('getitem', (0,))]
    """
    op = eq.op
    if id(op) in _REGISTERED:
        if not op.view:
            if op is SUM_TO:  # sums nothing when the size stays: a reshape
                x = eq.ins[0]
                return (0,) if type(x) is Var and \
                    math.prod(x.shape) == math.prod(eq.out.shape) else ()
            return ()
        if op is GETITEM and _advanced(eq.params.get("index")):
            return ()
        return (0,)
    if isinstance(op, FusedOp) or _is_ufunc_call(op):
        return ()
    return tuple(range(len(eq.ins)))


def accepts_out(eq: Equation) -> frozenset[int]:
    """The input positions of ``eq`` whose buffer may receive its output through ``out=``:
    every input of an elementwise ufunc of the registry (``np.sin(t3, out=t3)``), the
    ``out_aliases`` of a fused kernel, nothing for other ops.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sum(np.sin(x) * x), np.ones(3))
    >>> [(eq.op.name, sorted(accepts_out(eq))) for eq in g]
    [('sin', [0]), ('multiply', [0, 1]), ('sum', [])]
    """
    op = eq.op
    if eq.out.scalar or eq.out.shape == ():
        return frozenset()
    if id(op) in _ELEMENTWISE_UFUNCS and not eq.params:
        return frozenset(range(len(eq.ins)))
    if isinstance(op, FusedOp):
        return frozenset(op.out_aliases)
    return frozenset()


# -- buffers ---------------------------------------------------------------------------
class _Buffers:
    """Union-find over the variables (the inputs, then each equation's output): one set
    per buffer (a value, its views, the values written into it), with each set's death
    (the last read of any of its variables; never for a set holding a graph input or
    output) and the bytes its variables allocated.

    Built with the given ``into`` (a plan's), or choosing it (``choose=True``): an
    elementwise equation writes into an input that is a fresh array of its shape and
    dtype whose whole buffer dies there.
    """

    def __init__(self, graph: Any, into: Sequence[Var | None] | None = None,
                 choose: bool = False) -> None:
        eqs = graph.equations
        n_in = len(graph.inputs)
        self.n_in = n_in
        self.index = index = {id(v): k for k, v in enumerate(graph.inputs)}
        self.made: list[Var] = []  # the variables after the inputs (equations' outputs)
        made_by: list[int] = []  # the equation of each
        self.first: list[int] = []  # per equation: its first output's position
        k = n_in
        for i, eq in enumerate(eqs):
            self.first.append(k)
            for v in eq.outs:  # (a decomposition: several)
                index[id(v)] = k
                k += 1
                self.made.append(v)
                made_by.append(i)
        n = k
        self.parent = list(range(n))
        last = [-1] * n  # per variable: the last equation that reads it
        for i, eq in enumerate(eqs):
            for v in eq.ins:
                if type(v) is Var:
                    last[index[id(v)]] = i
        for k in range(n_in, n):  # a value nothing reads dies where it is made
            if last[k] < 0:
                last[k] = made_by[k - n_in]
        for v in graph.outputs:
            if type(v) is Var:
                last[index[id(v)]] = _NEVER
        self.last = last
        self.death = list(last)  # per root: the set's death
        for k in range(n_in):
            self.death[k] = _NEVER
        self.bytes = [0] * n  # per root: the set's allocated bytes
        self.into: list[Var | None] = list(into) if into is not None else [None] * len(eqs)
        fresh = [False] * n
        for i, eq in enumerate(eqs):
            k_out = self.first[i]
            if len(eq.outs) > 1:  # a decomposition: each output a new array
                for j, out in enumerate(eq.outs):
                    fresh[k_out + j] = True
                    self.bytes[k_out + j] += _nbytes(out)
                continue
            aliases = view_inputs(eq)
            for p in aliases:
                if type(eq.ins[p]) is Var:
                    self.union(k_out, index[id(eq.ins[p])])
            out = eq.out
            fresh[k_out] = not aliases and not out.scalar and out.shape != ()
            target = self.into[i]
            if choose and not aliases:
                target = self.into[i] = self._target(eq, i, fresh)
            if target is not None:
                self.union(k_out, index[id(target)])
            elif not aliases or id(eq.op) not in _REGISTERED:  # a registered view is free
                self.bytes[self.find(k_out)] += _nbytes(out)

    def _target(self, eq: Equation, i: int, fresh: list[bool]) -> Var | None:
        allowed = accepts_out(eq)
        if not allowed:
            return None
        index = self.index
        for p in sorted(allowed):
            v = eq.ins[p]
            if type(v) is not Var or v.shape != eq.out.shape or v.dtype != eq.out.dtype:
                continue
            k = index[id(v)]
            if not fresh[k]:  # a graph input, a view, a number
                continue
            root = self.find(k)
            if self.death[root] != i:  # a buffer holding an input or output never dies
                continue
            # Another input viewing the same buffer must not see it overwritten: NumPy's
            # ufuncs guard against overlap, but a fused kernel writes ``out`` chunk by chunk
            # while still reading its inputs (a.T, a[::-1] of the buffer written).
            chunked = isinstance(eq.op, FusedOp)
            if any(type(w) is Var and self.find(index[id(w)]) == root
                   and (q not in allowed or (chunked and w is not v))
                   for q, w in enumerate(eq.ins)):
                continue
            return v
        return None

    def find(self, k: int) -> int:
        parent = self.parent
        root = k
        while parent[root] != root:
            root = parent[root]
        while parent[k] != root:  # path compression, iteratively
            parent[k], k = root, parent[k]
        return root

    def union(self, a: int, b: int) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        if rb < ra:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.death[ra] = max(self.death[ra], self.death[rb])
        self.bytes[ra] += self.bytes[rb]
        return ra

    def deaths(self, graph: Any) -> list[tuple[Var, ...]]:
        out: list[list[Var]] = [[] for _ in graph.equations]
        for k, v in enumerate(self.made, self.n_in):
            last = self.last[k]
            if last != _NEVER:
                out[last].append(v)
        return [tuple(d) for d in out]

    def timeline(self, graph: Any) -> list[int]:
        """Bytes held while each equation runs, each buffer freed after its death."""
        held = sum(_nbytes(v) for v in graph.inputs)
        made: list[int] = [0] * len(graph.equations)  # bytes each equation allocates
        dying: dict[int, list[int]] = {}
        for k in range(len(self.parent)):
            root = self.find(k)
            if root == k and self.death[k] < _NEVER:
                dying.setdefault(self.death[k], []).append(k)
        for i, eq in enumerate(graph.equations):
            if self.into[i] is None and (not view_inputs(eq) or id(eq.op) not in _REGISTERED
                                         or len(eq.outs) > 1):
                made[i] = sum(_nbytes(v) for v in eq.outs)
        timeline = []
        for i in range(len(made)):
            held += made[i]
            timeline.append(held)
            for root in dying.get(i, ()):
                held -= self.bytes[root]
        return timeline


def buffer_of(graph: Any, plan: MemoryPlan | None = None) -> list[int]:
    """For each variable (the inputs, then each equation's output), the buffer it lives
    in: the position of the first variable of that buffer. A view shares its base's
    buffer; with a plan, so does an output written into a dying input (``out=``).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x).T * 2.0, np.ones((2, 3)))
    >>> [v.name for v in g.variables()], buffer_of(g, memory_plan(g))
    (['x', 't0', 't1', 't2'], [0, 1, 1, 3])
    """
    plan = _plan_of(graph, plan)
    buffers = _Buffers(graph, plan.into if plan is not None else None)
    return [buffers.find(k) for k in range(len(buffers.parent))]


def deaths(graph: Any) -> list[tuple[Var, ...]]:
    """Liveness: for each equation, the variables whose last use it is (read by no later
    equation, not an output). A value nothing reads dies at the equation that makes it.
    Graph inputs are not listed (the caller holds them).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * np.cos(x), np.ones(3))
    >>> [[v.name for v in d] for d in deaths(g)]
    [[], [], ['t0', 't1']]
    """
    return _Buffers(graph).deaths(graph)


def planned(graph: Any) -> tuple[MemoryPlan, list[int]]:
    """:func:`memory_plan` and the :func:`memory_timeline` it gives, in one pass.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sum(np.exp(np.sin(x))), np.ones(1000))
    >>> plan, timeline = planned(g)
    >>> timeline == memory_timeline(g, plan), plan.reused
    (True, 1)
    """
    buffers = _Buffers(graph, choose=True)
    plan = MemoryPlan(graph.equations, buffers.deaths(graph), buffers.into, graph.name)
    return plan, buffers.timeline(graph)


def memory_plan(graph: Any) -> MemoryPlan:
    """Plan the memory of a run of ``graph``: free each value after its last use, and let
    an elementwise equation write into the buffer of an input that dies there.

    An input's buffer receives the output when the input has the output's shape and
    dtype, is a fresh array made by an op of the graph (not a graph input, not a view),
    and neither it nor any view of it is used later or returned.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    MemoryPlan

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.exp(np.sin(x)) + x, np.ones(3), source_lines=False)
    >>> plan = memory_plan(g)
    >>> [v.name if v is not None else None for v in plan.into]
    [None, 't0', 't1']
    >>> [[v.name for v in f] for f in plan.frees]
    [[], ['t0'], ['t1']]
    """
    buffers = _Buffers(graph, choose=True)
    return MemoryPlan(graph.equations, buffers.deaths(graph), buffers.into, graph.name)


def plan_memory(graph: Any, *, reports: list[PassReport] | None = None) -> Any:
    """``graph`` with its :class:`MemoryPlan` attached (``graph.plan``), for the code
    generator to emit ``del`` lines and ``out=`` arguments.

    A scalar program (Python floats only) is returned as it is: its values are floats,
    with nothing to reuse. Needs a ``Graph`` with a ``plan`` field; until then use
    :func:`memory_plan`. With ``reports``, a
    :class:`~wengert.graph.passes.rewrite.PassReport` counts the outputs written into a
    dying input's buffer.
    """
    n = len(graph.equations)
    if is_scalar_program(graph):
        add_report(reports, PassReport("plan_memory", n, n, {}, verb="reused"))
        return graph
    if "plan" not in getattr(type(graph), "__slots__", ()):
        raise TypeError("plan_memory: this Graph has no plan field; use memory_plan(graph) "
                        "and pass the plan to peak_bytes, memory_timeline or run_planned")
    plan = memory_plan(graph)
    reused = {"buffers": plan.reused} if plan.reused else {}
    add_report(reports, PassReport("plan_memory", n, n, reused, verb="reused"))
    return graph.replace(plan=plan)


def _plan_of(graph: Any, plan: MemoryPlan | None) -> MemoryPlan | None:
    if plan is None:
        plan = getattr(graph, "plan", None)
    if plan is not None and not plan.holds_for(graph):
        raise ValueError(f"the memory plan of {plan.name} was made for other equations than "
                         f"those of graph {graph.name}: plan again (memory_plan(graph))")
    return plan


def memory_timeline(graph: Any, plan: MemoryPlan | None = None) -> list[int]:
    """Bytes held while each equation runs: the buffers live before it, plus its output.

    Without a plan (and none attached to the graph), nothing is freed before the end, as
    in generated code without ``del``: the timeline only grows. With one, each buffer is
    freed after the last use of its last view, and a reused buffer counts once.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sum(np.exp(np.sin(x))), np.ones(1000))
    >>> memory_timeline(g)
    [16000, 24000, 24008]
    >>> memory_timeline(g, memory_plan(g))
    [16000, 16000, 16008]
    """
    plan = _plan_of(graph, plan)
    if plan is not None:
        return _Buffers(graph, plan.into).timeline(graph)
    held = sum(_nbytes(v) for v in graph.inputs)
    timeline: list[int] = []
    for eq in graph.equations:
        if not view_inputs(eq) or id(eq.op) not in _REGISTERED or len(eq.outs) > 1:
            held += sum(_nbytes(v) for v in eq.outs)
        timeline.append(held)
    return timeline


def peak_bytes(graph: Any, plan: MemoryPlan | None = None) -> int:
    """The largest number of bytes a run of ``graph`` holds (inputs and outputs counted).

    Parameters
    ----------
    graph : Graph
    plan : MemoryPlan, optional
        Count with this plan (default: the graph's own plan, if it has one; without a
        plan nothing is freed before the end, as in generated code without ``del``).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(wg.grad(lambda x: np.sum(np.tanh(x) ** 2)), np.ones(1000))
    >>> peak_bytes(g) > peak_bytes(g, memory_plan(g))
    True
    """
    timeline = memory_timeline(graph, plan)
    if timeline:
        return max(timeline)
    return sum(_nbytes(v) for v in graph.inputs)


def run_planned(graph: Any, leaves: Sequence[Any], plan: MemoryPlan | None = None
                ) -> list[Any]:
    """Run ``graph`` on plain NumPy ``leaves`` following ``plan``: each value is dropped
    after its last use and outputs go into the planned buffers (``out=``). The reference
    semantics of a plan (what generated code with the plan does); returns the flat
    outputs. Guards are checked (:class:`~wengert.graph.ir.GuardFailed`).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.exp(np.sin(x)) + x, np.ones(3))
    >>> x = np.linspace(0.0, 1.0, 3)
    >>> np.array_equal(run_planned(g, [x], memory_plan(g))[0], g(x))
    True
    """
    plan = _plan_of(graph, plan)
    if plan is None:
        plan = memory_plan(graph)
    env: dict[int, Any] = {id(v): x for v, x in zip(graph.inputs, leaves)}
    guards: dict[int, list[Any]] = {}
    for g in graph.guards:
        guards.setdefault(id(g.var), []).append(g)
    for v in graph.inputs:
        for g in guards.get(id(v), ()):
            if not g.holds(env[id(v)]):
                raise GuardFailed(g, env[id(v)])
    for eq, frees, into in zip(graph.equations, plan.frees, plan.into):
        values = [env[id(v)] if type(v) is Var else v.value for v in eq.ins]
        if into is not None:
            outs = (eq.op.impl(*values, out=env[id(into)], **eq.params),)
        else:
            outs = tuple(apply(op, *values, **eq.params) for op in eq.ops)
        del values
        for v, out in zip(eq.outs, outs):
            env[id(v)] = out
            for g in guards.get(id(v), ()):
                if not g.holds(out):
                    raise GuardFailed(g, out)
        del outs, out
        for v in frees:
            del env[id(v)]
    return [env[id(v)] if type(v) is Var else v.value for v in graph.outputs]
