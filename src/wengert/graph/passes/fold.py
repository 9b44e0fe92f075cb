"""Constant folding: compute now what depends on no input.

An equation whose inputs are all literals gives the same result on every
run: the pass computes it once, with the same forward the trace ran
(:func:`wengert.core.bind.forward`: the op's NumPy forward ``op.impl``, or its
float path for Python floats, so the literal is exactly what eager code and
the compiled graph compute), and every later reader gets the result as a
literal. Folding walks the equations in order, so a chain of constant
equations folds completely in one pass. Ops made for recorded NumPy calls
(``np.argmax`` and friends, whose forward closes over fixed arguments) fold
like registry ops.

What is not folded, and why (counted in the report's ``skipped``):

* **too large**: a result of more than :data:`MAX_FOLDED_SIZE` elements
  (10**6, 8 MB of float64) would be stored in the graph (and in every graph
  derived from it); it is computed at run time instead. The size is known
  from the output's shape before anything is computed.
* **error**: the forward raises, or warns (the floating-point conditions NumPy
  warns about by default, invalid, divide by zero and overflow, are turned into
  errors while folding: ``log(-1.0)``, ``1.0 / 0.0``, ``exp(1000.0)``; underflow is
  silent, as in NumPy). The equation stays, so running the graph warns or raises
  as eager code does.
* **mismatch**: the result's shape or dtype is not the traced output's.
* **guard**: the output is tested by a guard that the constant does not pass
  (a guard it passes holds for every argument and is dropped).

A folded array is made read-only: it is shared by every run of the graph,
and a run that returns it must not let the caller change the next run's
result. A result for a variable traced as a Python number (``Var.scalar``)
becomes a Python number, NumPy values stay NumPy values, so NumPy's
promotion rules treat the literal as they treated the traced value.

**What depends only on shapes and dtypes** folds too, as TensorFlow's Grappler folds
``ZerosLike``, ``OnesLike`` and ``Fill``: ``np.zeros_like(x)``, ``np.ones_like(x)``,
``np.full_like(x, 3.0)`` and ``np.empty_like(x)`` of a variable ``x`` become a literal of
``x``'s (or the given) shape and dtype, whatever ``x`` holds, so what reads them folds or
simplifies in turn (``x * np.ones_like(x)`` is ``x``). The literal is the array eager code
makes (read-only, at most :data:`MAX_FOLDED_SIZE` elements like any folded value; a
broadcast view of one value would be smaller, but ``matmul`` and ``einsum`` run other
loops on it, with other bits), written ``np.full((1000,), np.float64(1.0))`` in generated
code. ``np.empty_like`` folds to
zeros: its values are unspecified, eagerly whatever its memory held, and the compiled
function gives zeros on every call (as ``jnp.empty_like`` does). The report counts these
by function name (``ones_like: 1``). Shape arithmetic itself (``x.shape[0] * 2``,
``x.size``, ``x.ndim``, ``len(x)``, ``np.shape(x)``) never becomes an equation: shapes
are Python numbers while tracing.

Traced programs compute their other constants eagerly (NumPy on plain values is not
recorded), so constant equations appear when a graph is built by hand or
when another pass turns a variable into a literal (:func:`~.simplify.simplify`
rewrites an integer ``n * 0`` to zeros, say).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> from wengert.graph import Equation, Literal, Var
>>> from wengert.ops import REGISTRY
>>> g = wg.trace(lambda x: x, np.ones(2))
>>> x, t0, t1, t2 = g.inputs[0], *(Var(f"t{i}", (2,), np.float64) for i in range(3))
>>> g = g.replace(equations=[
...     Equation(REGISTRY["sqrt"], [Literal(np.array([1.0, 4.0]))], None, t0),
...     Equation(REGISTRY["negative"], [t0], None, t1),
...     Equation(REGISTRY["multiply"], [x, t1], None, t2)], outputs=[t2])
>>> reports = []
>>> h = fold_constants(g, reports=reports)
>>> print(h)
graph f(x: f64[2]):
    t2: f64[2] = multiply(x, array(f64[2]))
    return t2
>>> print(reports[0])
fold_constants: 3 → 1 equations; folded 2 (sqrt: 1, negative: 1)
>>> h(np.array([1.0, 1.0]))
array([-1., -2.])
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from wengert.core.bind import forward
from wengert.core.tree import unflatten
from wengert.graph.ir import GraphLike as Graph
from wengert.graph.ir import Literal, Var
from wengert.graph.passes.rewrite import (
    PassReport,
    Substitution,
    add_report,
    finish,
    guards_by_var,
    guards_hold,
    literal_for,
    substitute_ins,
)
from wengert.graph.tracer import is_recorded_call

__all__ = ["fold_constants", "MAX_FOLDED_SIZE", "SHAPE_FUNCTIONS"]

#: The largest result (in elements) that folding stores in a graph.
MAX_FOLDED_SIZE = 1_000_000


def fold_constants(graph: Graph, *, reports: list[PassReport] | None = None) -> Graph:
    """A new graph where every equation whose inputs are all literals is replaced by the
    literal it computes.

    A :class:`~wengert.graph.passes.pipeline.Pass`: ``graph`` is not modified; the report
    appended to ``reports`` counts the folded equations by op name, and those left
    (``too large``, ``error``, ``mismatch``, ``guard``; see the module's text).

    Returns
    -------
    Graph

    Examples
    --------
    A log of a negative number is left for run time (it warns there, as NumPy does):

    >>> from wengert.graph import Equation, trace
    >>> from wengert.ops import REGISTRY
    >>> t0, t1 = Var("t0", (), np.float64), Var("t1", (), np.float64)
    >>> g = trace(lambda x: x, np.float64(1.0)).replace(equations=[
    ...     Equation(REGISTRY["log"], [Literal(np.float64(-1.0))], None, t0),
    ...     Equation(REGISTRY["exp"], [Literal(np.float64(0.0))], None, t1)], outputs=[t0, t1])
    >>> reports = []
    >>> print(fold_constants(g, reports=reports))
    graph f(x: f64[]):
        t0: f64[] = log(-1.0)
        return t0, 1.0
    >>> print(reports[0])
    fold_constants: 2 → 1 equations; folded 1 (exp: 1); left 1 (error: 1)
    """
    mapping: Substitution = {}
    guards = guards_by_var(graph) if graph.guards else {}
    kept = []
    folded: dict[str, int] = {}
    skipped: dict[str, int] = {}
    for eq in graph.equations:
        eq = substitute_ins(eq, mapping)
        reason = _fold(eq, mapping, guards)
        if reason is None:
            folded[eq.primitive] = folded.get(eq.primitive, 0) + 1
            continue
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
        kept.append(eq)
    out = finish(graph, kept, mapping)
    add_report(reports, PassReport("fold_constants", len(graph), len(out), folded,
                                   verb="folded", skipped=skipped))
    return out


#: NumPy functions of a prototype's shape and dtype only, and the value they fill with
#: (``None``: their ``fill_value``; ``np.empty_like``'s unspecified values are zeros).
SHAPE_FUNCTIONS: dict[Any, Any] = {np.zeros_like: 0, np.ones_like: 1, np.empty_like: 0,
                                   np.full_like: None}


def _like_signature(func: Any) -> inspect.Signature:
    """The signature of one of :data:`SHAPE_FUNCTIONS` (NumPy < 2.4's ``empty_like`` is a
    builtin without one: NumPy's documented parameters)."""
    try:
        return inspect.signature(func)
    except ValueError:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        names = ["prototype", "dtype", "order", "subok", "shape"]
        params = [inspect.Parameter(n, kind, **({} if i == 0 else {"default": None}))
                  for i, n in enumerate(names)]
        params.append(inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY,
                                        default=None))
        return inspect.Signature(params)


def _is_like(eq: Any) -> bool:
    """Whether ``eq`` is a call of one of :data:`SHAPE_FUNCTIONS`."""
    if not is_recorded_call(eq.op):
        return False
    impl = eq.op.impl
    return impl.func in SHAPE_FUNCTIONS and impl.part is None and not impl.replay


def _like(eq: Any) -> Any:
    """For ``np.ones_like(x)`` (and the others of :data:`SHAPE_FUNCTIONS`) of a variable
    ``x`` and literals: its result, an array of the output's shape filled with one value
    (as eagerly: a broadcast view of one value would make ``matmul`` and ``einsum`` run
    other loops, with other bits); else ``None``."""
    if not _is_like(eq):
        return None
    impl = eq.op.impl
    fill = SHAPE_FUNCTIONS[impl.func]
    leaves = list(impl.fixed)
    for k, v in zip(impl.positions, eq.ins):
        leaves[k] = v
    args, kwargs = unflatten(impl.spec, leaves)
    try:
        bound = _like_signature(impl.func).bind(*args, **kwargs).arguments
    except TypeError:
        return None
    if any(type(value) is Var for value in list(bound.values())[1:]):
        return None  # (the prototype, first, may be a variable; nothing else)
    if fill is None:
        fill = bound.get("fill_value")
        fill = fill.value if type(fill) is Literal else fill
        if np.ndim(fill) != 0:
            return None
    out = eq.out
    return np.full(out.shape, fill, dtype=out.dtype)


def _fold(eq: Any, mapping: Substitution, guards: dict[Var, list[Any]]) -> str | None:
    """Fold ``eq`` into ``mapping``: ``None`` when done, else why not (``""``: it reads
    a variable)."""
    like = any(type(v) is not Literal for v in eq.ins)
    if like and not _is_like(eq):
        return ""
    if any(int(np.prod(out.shape, dtype=np.int64)) > MAX_FOLDED_SIZE for out in eq.outs):
        return "too large"
    if like:
        value = _like(eq)
        return "" if value is None else _bind(eq.out, value, mapping, guards)
    values = []
    try:
        with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"):
            for op in eq.ops:  # (each part of a decomposition: all or none is folded)
                values.append(forward(op, tuple(v.value for v in eq.ins), eq.params))
    except Exception:  # noqa: BLE001 - any failure leaves the equation to run (and fail) later
        return "error"
    if len(values) == 1:
        return _bind(eq.out, values[0], mapping, guards)
    bound: Substitution = {}
    for out, value in zip(eq.outs, values):
        reason = _bind(out, value, bound, guards)
        if reason is not None:
            return reason
    mapping.update(bound)
    return None


def _bind(out: Var, value: Any, mapping: Substitution, guards: dict[Var, list[Any]]
          ) -> str | None:
    """``out`` replaced by the literal ``value`` in ``mapping``; else why not."""
    lit = literal_for(out, value)
    if lit is None:
        return "mismatch"
    if guards and out in guards and not guards_hold(guards[out], lit.value):
        return "guard"
    mapping[out] = lit
    return None
