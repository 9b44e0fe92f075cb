"""Algebraic simplification: rewrite equations by identities that hold for every value.

One walk over the equations in order. Each equation (reading the
replacements of earlier rewrites) is matched against the rules of its op;
a rule either replaces the equation's output by something already available
(``x * 1`` is ``x``) or rewrites the equation into a simpler one (``reshape``
of a ``reshape`` reads the inner input), which is matched again. Rules look at
the equation that produced an input (``negative(negative(x))``), so chains
collapse in the one walk. An equation whose output is replaced is dropped; an
equation only some rewrite stopped reading stays, for :func:`~.dce.dce`.

The rules (the report counts rewrites by these names):

* ``x+0``: ``x + 0``, ``0 + x`` → ``x``; ``x-0``: ``x - 0`` → ``x`` (for floating-point
  ``x``, ``x + (-0.0)`` and ``x - 0.0`` only: see below)
* ``x*1``: ``x * 1``, ``1 * x`` → ``x``; ``x/1``, ``x**1`` → ``x`` (not for complex ``x``:
  NumPy's complex product is not exact, ``(inf+1j) * 1`` is ``inf+nanj`` and
  ``(-0-0j) * 1`` is ``0-0j``)
* ``+x``: ``positive(x)`` → ``x``
* ``-(-x)``: ``negative(negative(x))`` → ``x``
* ``x+(-y)``: ``x + (-y)``, ``(-y) + x`` → ``x - y``; ``x-(-y)``: ``x - (-y)`` → ``x + y``
  (integers only: for floats a NaN ``y`` gives a NaN of the other sign)
* ``x*(-1)``: ``x * -1``, ``-1 * x`` → ``negative(x)`` (integers only: ``nan * -1.0``
  keeps the NaN's sign, ``negative`` flips it)
* ``x*0 (integers)``: ``x * 0``, ``0 * x`` → zeros, for integer and bool ``x`` only
* ``transpose identity``: a transpose by the identity permutation → ``x``;
  ``transpose∘transpose``: two transposes → one (→ ``x`` when they cancel)
* ``reshape chain``: ``reshape`` (or ``reshape_to``) of a ``reshape``, ``reshape_to``,
  ``squeeze`` or ``expand_dims`` (none reorders the elements) → one reshape of the inner input
* ``<op> to the same shape``: ``reshape``, ``reshape_to``, ``squeeze``, ``broadcast_to``
  or ``sum_to`` to the input's own shape → ``x``
* ``astype to the same dtype`` → ``x``
* ``sum over unit axes``, ``mean over unit axes``: a reduction over no axis, or over
  axes of length 1 kept (``keepdims=True``), → ``x`` (the sum of a 0-d array)
* ``where(c, x, x)`` → ``x``; ``where(constant, x, y)``: a literal condition all true
  (all false) → ``x`` (``y``)

A constant is a literal whose every element equals it (``np.ones(3)`` is a
``1``). Every rule keeps the output's shape, dtype and kind of value exactly
(:func:`~.rewrite.interchangeable`): ``x - 0.0`` with ``x: f32[3]`` is ``x``,
but ``x + np.zeros(3)`` with ``x: f64[]`` broadcasts, ``int + 0.0`` is a float,
and a Python float ``x`` is not the NumPy float64 that ``np.reshape(x, ())``
gives: those stay.

**Special values.** The rules hold for NaN, infinities and the sign of zero (``x * 1``,
``x / 1``, ``x ** 1``, ``--x`` and the rest are exact in IEEE arithmetic). ``x + 0.0``
is **not** ``x`` for floating-point ``x``: it is ``+0.0`` where ``x`` is ``-0.0`` (XLA's
simplifier rewrites it anyway; a compiled function here gives what eager code gives), so
only ``x + (-0.0)`` and ``x - 0.0``, which keep every value, are rewritten for
floating-point and complex ``x``, and ``x + 0`` for integers and bools. ``x * 0`` is
**not** rewritten for floating-point (or
complex) ``x``: it is NaN where ``x`` is NaN or infinite and ``-0.0`` where ``x``
is negative, so only integer and bool ``x`` (always finite) become zeros (XLA's
simplifier likewise rewrites ``x * 0`` for integral types only). ``maximum`` and
``minimum`` identities are not applied either (NaN propagation and ties between
zeros make them value-dependent).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> from wengert.graph.passes.dce import dce
>>> def f(x):
...     y = -(-(x * 1.0)) - 0.0
...     z = np.reshape(np.reshape(y.T, (6,)), (2, 3))
...     return np.transpose(z.T).astype(np.float64)
>>> g = wg.trace(f, np.ones((2, 3)))
>>> print(g)
graph f(x: f64[2,3]):
    t0: f64[2,3] = multiply(x, 1.0)
    t1: f64[2,3] = negative(t0)
    t2: f64[2,3] = negative(t1)
    t3: f64[2,3] = subtract(t2, 0.0)
    t4: f64[3,2] = transpose(t3)
    t5: f64[6] = reshape(t4, shape=(6,))
    t6: f64[2,3] = reshape(t5, shape=(2, 3))
    t7: f64[3,2] = transpose(t6)
    t8: f64[2,3] = transpose(t7)
    t9: f64[2,3] = astype(t8, dtype=float64)
    return t9
>>> reports = []
>>> h = simplify(g, reports=reports)
>>> print(reports[0])  # doctest: +NORMALIZE_WHITESPACE
simplify: 10 → 5 equations; rewrote 6 (x*1: 1, -(-x): 1, x-0: 1, reshape chain: 1,
    transpose∘transpose: 1, astype to the same dtype: 1)
>>> print(dce(h))
graph f(x: f64[2,3]):
    t4: f64[3,2] = transpose(x)
    t6: f64[2,3] = reshape(t4, shape=(2, 3))
    return t6
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from wengert.core.collector import collector_paused
from wengert.graph.ir import Equation, Literal, Var
from wengert.graph.ir import GraphLike as Graph
from wengert.graph.passes.cse import value_key
from wengert.graph.passes.rewrite import (
    Atom,
    PassReport,
    Substitution,
    add_report,
    finish,
    guards_by_var,
    guards_hold,
    interchangeable,
    literal_for,
    substitute_ins,
)
from wengert.ops import REGISTRY
from wengert.ops.broadcast import norm_axis

__all__ = ["simplify", "RULES", "is_constant"]

ADD, SUBTRACT, MULTIPLY, DIVIDE, POWER = (REGISTRY[n] for n in ("add", "subtract", "multiply",
                                                                 "divide", "power"))
NEGATIVE, POSITIVE, ASTYPE, WHERE = (REGISTRY[n] for n in ("negative", "positive", "astype",
                                                            "where"))
TRANSPOSE, RESHAPE, RESHAPE_TO, SQUEEZE, EXPAND_DIMS = (
    REGISTRY[n] for n in ("transpose", "reshape", "reshape_to", "squeeze", "expand_dims"))
BROADCAST_TO, SUM_TO, SUM, MEAN = (REGISTRY[n] for n in ("broadcast_to", "sum_to", "sum",
                                                          "mean"))

#: What a rule gives: the rule's name and the replacement of the output (a variable or
#: a literal), or the rewritten equation; ``None`` when it does not apply.
Rewrite = tuple[str, Var | Literal | Equation] | None
Producers = dict[Var, Equation]
#: How many rules one equation may go through (a rewritten equation is matched again).
_MAX_REWRITES = 8


def is_constant(atom: Atom, c: float) -> bool:
    """Whether ``atom`` is a literal (number or numeric array) whose every element is ``c``.

    Examples
    --------
    >>> is_constant(Literal(1.0), 1), is_constant(Literal(np.ones(3)), 1.0)
    (True, True)
    >>> is_constant(Literal(np.array([1.0, 2.0])), 1), is_constant(Literal(float("nan")), 0)
    (False, False)
    """
    if type(atom) is not Literal:
        return False
    v = atom.value
    t = type(v)
    if t is float or t is int or t is bool or t is complex:
        return bool(v == c)
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biufc":
        return bool(np.all(v == c))
    return False


def _negated(atom: Atom, producers: Producers) -> Atom | None:
    """``y`` when ``atom`` is ``negative(y)`` of the same shape, dtype and kind."""
    if type(atom) is not Var:
        return None
    p = producers.get(atom)
    if p is None or p.op is not NEGATIVE:
        return None
    y = p.ins[0]
    return y if interchangeable(atom, y) else None


def _adds_nothing(out: Var, c: Atom, subtracted: bool) -> bool:
    """Whether adding (subtracting) the literal ``c`` leaves every value of dtype
    ``out.dtype`` as it is: ``c`` is zeros and, for floating-point (and complex) values,
    zeros of the sign that keeps a ``-0.0``: ``-0.0`` added, ``+0.0`` subtracted
    (``-0.0 + 0.0`` is ``+0.0``, ``-0.0 - 0.0`` is ``-0.0``; an integer 0 is a ``+0.0``).

    Examples
    --------
    >>> f64 = Var("t", (), np.float64)
    >>> _adds_nothing(f64, Literal(-0.0), False), _adds_nothing(f64, Literal(0.0), False)
    (True, False)
    >>> i64 = Var("n", (), np.int64)
    >>> _adds_nothing(f64, Literal(0), True), _adds_nothing(i64, Literal(0), False)
    (True, True)
    """
    if not is_constant(c, 0):
        return False
    kind = out.dtype.kind
    if kind not in "fc":
        return True
    v = np.asarray(c.value).astype(np.complex128 if kind == "c" else np.float64)
    signs = [np.signbit(v.real), np.signbit(v.imag)] if kind == "c" else [np.signbit(v)]
    return all(bool(np.all(~s if subtracted else s)) for s in signs)


def _add(eq: Equation, producers: Producers) -> Rewrite:
    x, y = eq.ins
    out = eq.out
    if _adds_nothing(out, y, False) and interchangeable(out, x):
        return "x+0", x
    if _adds_nothing(out, x, False) and interchangeable(out, y):
        return "x+0", y
    if out.dtype.kind not in "iu":  # (floats: a NaN's sign is the negated one's)
        return None
    z = _negated(y, producers)
    if z is not None:
        return "x+(-y)", eq.replace(op=SUBTRACT, ins=(x, z))
    z = _negated(x, producers)
    if z is not None:
        return "x+(-y)", eq.replace(op=SUBTRACT, ins=(y, z))
    return None


def _subtract(eq: Equation, producers: Producers) -> Rewrite:
    x, y = eq.ins
    if _adds_nothing(eq.out, y, True) and interchangeable(eq.out, x):
        return "x-0", x
    if eq.out.dtype.kind not in "iu":
        return None
    z = _negated(y, producers)
    if z is not None:
        return "x-(-y)", eq.replace(op=ADD, ins=(x, z))
    return None


def _multiply(eq: Equation, producers: Producers) -> Rewrite:
    out = eq.out
    pairs = (eq.ins, eq.ins[::-1])
    if out.dtype.kind == "c":  # ((inf+1j) * 1 is inf+nanj, (-0-0j) * 1 is 0-0j)
        return None
    for x, c in pairs:
        if is_constant(c, 1) and interchangeable(out, x):
            return "x*1", x
    for x, c in pairs:
        if is_constant(c, -1) and out.dtype.kind in "iu" and interchangeable(out, x):
            return "x*(-1)", eq.replace(op=NEGATIVE, ins=(x,), params={})
    if out.dtype.kind in "iub":
        for x, c in pairs:
            if is_constant(c, 0) and x.dtype.kind in "iub":
                zeros = literal_for(out, np.zeros(out.shape, out.dtype))
                if zeros is not None:
                    return "x*0 (integers)", zeros
    return None


def _by_one(name: str) -> Callable[[Equation, Producers], Rewrite]:
    def rule(eq: Equation, producers: Producers) -> Rewrite:
        x, y = eq.ins
        if is_constant(y, 1) and eq.out.dtype.kind != "c" and interchangeable(eq.out, x):
            return name, x
        return None

    return rule


def _positive(eq: Equation, producers: Producers) -> Rewrite:
    x = eq.ins[0]
    return ("+x", x) if interchangeable(eq.out, x) else None


def _negative(eq: Equation, producers: Producers) -> Rewrite:
    y = _negated(eq.ins[0], producers)
    if y is not None and interchangeable(eq.out, y):
        return "-(-x)", y
    return None


def _permutation(axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    return tuple(int(a) % ndim for a in axes) if ndim else ()


def _transpose(eq: Equation, producers: Producers) -> Rewrite:
    x = eq.ins[0]
    ndim = len(x.shape)
    perm = _permutation(eq.params.get("axes"), ndim)
    identity = tuple(range(ndim))
    if perm == identity and interchangeable(eq.out, x):
        return "transpose identity", x
    p = producers.get(x) if type(x) is Var else None
    if p is None or p.op is not TRANSPOSE or set(p.params) - {"axes"}:
        return None
    inner = _permutation(p.params.get("axes"), ndim)
    composed = tuple(inner[i] for i in perm)  # axis j of the result is axis inner[perm[j]]
    src = p.ins[0]
    if composed == identity and interchangeable(eq.out, src):
        return "transpose∘transpose", src
    return "transpose∘transpose", eq.replace(ins=(src,), params={"axes": composed})


_RESHAPING = frozenset((RESHAPE, RESHAPE_TO, SQUEEZE, EXPAND_DIMS))


def _same_shape(eq: Equation, producers: Producers) -> Rewrite:
    x = eq.ins[0]
    if x.shape == eq.out.shape and interchangeable(eq.out, x):
        return f"{eq.op.name} to the same shape", x
    return None


def _reshape(eq: Equation, producers: Producers) -> Rewrite:
    done = _same_shape(eq, producers)
    if done is not None:
        return done
    x = eq.ins[0]
    p = producers.get(x) if type(x) is Var else None
    if p is not None and p.op in _RESHAPING:  # (none of them reorders the elements)
        return "reshape chain", eq.replace(ins=(p.ins[0],))
    return None


def _astype(eq: Equation, producers: Producers) -> Rewrite:
    x = eq.ins[0]
    if interchangeable(eq.out, x):
        return "astype to the same dtype", x
    return None


def _reduction(eq: Equation, producers: Producers) -> Rewrite:
    x = eq.ins[0]
    if set(eq.params) - {"axis", "keepdims"} or not interchangeable(eq.out, x):
        return None
    axes = norm_axis(eq.params.get("axis"), len(x.shape))
    if all(x.shape[a] == 1 for a in axes):
        return f"{eq.op.name} over unit axes", x
    return None


def _where(eq: Equation, producers: Producers) -> Rewrite:
    c, x, y = eq.ins
    out = eq.out
    if (x is y or (type(x) is Literal and type(y) is Literal
                   and value_key(x.value) == value_key(y.value))) and interchangeable(out, x):
        return "where(c, x, x)", x
    if type(c) is Literal and isinstance(c.value, (bool, np.bool_, np.ndarray)) \
            and np.asarray(c.value).dtype == bool:
        if np.all(c.value) and interchangeable(out, x):
            return "where(constant, x, y)", x
        if not np.any(c.value) and interchangeable(out, y):
            return "where(constant, x, y)", y
    return None


#: The rules, by op (each tries its op's identities in turn).
RULES: dict[Any, Callable[[Equation, Producers], Rewrite]] = {
    ADD: _add,
    SUBTRACT: _subtract,
    MULTIPLY: _multiply,
    DIVIDE: _by_one("x/1"),
    POWER: _by_one("x**1"),
    POSITIVE: _positive,
    NEGATIVE: _negative,
    TRANSPOSE: _transpose,
    RESHAPE: _reshape,
    RESHAPE_TO: _reshape,
    SQUEEZE: _same_shape,
    BROADCAST_TO: _same_shape,
    SUM_TO: _same_shape,
    ASTYPE: _astype,
    SUM: _reduction,
    MEAN: _reduction,
    WHERE: _where,
}


def simplify(graph: Graph, *, reports: list[PassReport] | None = None) -> Graph:
    """A new graph with the algebraic identities listed in the module's text applied.

    A :class:`~wengert.graph.passes.pipeline.Pass`: ``graph`` is not modified; the report
    appended to ``reports`` counts the rewrites by rule name.

    Returns
    -------
    Graph
        Equations made dead by a rewrite (the inner ``negative`` of ``--x`` when
        nothing else reads it) are left for :func:`~.dce.dce`.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x * 1.0) - 0.0, 0.5)
    >>> [str(e) for e in simplify(g)]
    ['t1: f64[] = sin(x)']
    """
    mapping: Substitution = {}
    producers: Producers = {}
    guards = guards_by_var(graph) if graph.guards else {}
    kept = []
    counts: dict[str, int] = {}
    rules = RULES
    with collector_paused():  # many small acyclic objects: see wengert.core.collector
        for eq in graph.equations:
            eq = substitute_ins(eq, mapping)
            if eq.grad_off or len(eq.outs) > 1:  # (a rewrite could let a gradient through
                kept.append(eq)                    # the no_grad cut; a decomposition has
                continue                           # no rule)
            replacement: Atom | None = None
            for _ in range(_MAX_REWRITES):
                rule = rules.get(eq.op)
                if rule is None:
                    break
                result = rule(eq, producers)
                if result is None:
                    break
                name, new = result
                if type(new) is Equation:
                    eq = new
                elif type(new) is Literal and eq.out in guards \
                        and not guards_hold(guards[eq.out], new.value):
                    break
                else:
                    replacement = new
                counts[name] = counts.get(name, 0) + 1
                if replacement is not None:
                    break
            if replacement is None:
                kept.append(eq)
                producers[eq.out] = eq
            else:
                mapping[eq.out] = replacement
    out = finish(graph, kept, mapping)
    add_report(reports, PassReport("simplify", len(graph), len(out), counts, verb="rewrote"))
    return out
