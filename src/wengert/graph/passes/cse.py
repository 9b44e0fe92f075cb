"""Common subexpression elimination: compute each distinct equation once.

Two equations compute the same value when they apply the same op object to
the same inputs with the same params: the later one is dropped and its
readers (and guards) read the earlier one. One walk in order, with a dict
from each equation's key to the variable that first computed it, so chains
of duplicates collapse in one pass (once ``a2`` is found equal to ``a1``,
``sin(a2)`` is ``sin(a1)``).

What "the same" means here (:func:`value_key`):

* **op**: the same object. Ops made for recorded NumPy calls (``np.greater``
  on a traced value) close over fixed arguments, so two of them are equal only
  when they are the same object.
* **inputs**: variables by identity; literals by value *and* type: ``2.0``,
  ``2`` and ``np.float64(2.0)`` differ (NumPy promotes them differently),
  ``0.0`` and ``-0.0`` differ, two NaNs of the same type are equal. Arrays up
  to :data:`MAX_KEYED_BYTES` compare by type, dtype, shape and bytes; larger
  ones (and arrays of Python objects) by identity, so a key never costs more
  than reading 64 KiB.
* **params**: by value, with the same rules for numbers and arrays, through
  tuples, lists, dicts and slices (``axis=(0, 1)``, ``index=(slice(1, 3), 0)``,
  ``dtype=np.dtype('float64')``); an object of any other type by identity.
* **commutative ops** (:data:`COMMUTATIVE`: ``add``, ``multiply``, ``hypot``,
  ``logaddexp``, ``logaddexp2`` of the registry) ignore the order of their two
  inputs: ``x * y`` and ``y * x`` merge. ``maximum`` and ``minimum`` are left
  out on purpose: on a tie between ``0.0`` and ``-0.0`` NumPy returns the second
  input, so swapping them can change the sign of a zero.

The output's shape, dtype and Python-number-ness are part of the key too (for
registry ops they follow from the rest; the check keeps a surprising op safe).

A decomposition's equation with several outputs (``w, v = eigh(s)``) has a key per
output, each that of its part's own equation (:func:`part_keys`): it is dropped when
every part was computed before (the same decomposition again), a part computed
again later (``eigvalsh``'s ``eigh_values(s)``) reads its output, and a decomposition
some of whose parts one earlier equation computed (``eigvalsh`` then ``eigh``) gives
that equation the parts it lacks: the factorisation runs once.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def f(x, y):
...     a = np.sin(x) * y
...     b = y * np.sin(x)
...     return a + b
>>> g = wg.trace(f, np.ones(3), 2.0)
>>> reports = []
>>> print(cse(g, reports=reports))
graph f(x: f64[3], y: f64[]):
    t0: f64[3] = sin(x)
    t1: f64[3] = multiply(t0, y)
    t4: f64[3] = add(t1, t1)
    return t4
>>> print(reports[0])
cse: 5 → 3 equations; merged 2 (sin: 1, multiply: 1)
"""

from __future__ import annotations

from typing import Any

from wengert.core.collector import collector_paused
from wengert.graph.ir import Equation, Var
from wengert.graph.ir import GraphLike as Graph
from wengert.graph.keys import MAX_KEYED_BYTES, value_key
from wengert.graph.passes.rewrite import (
    PassReport,
    Substitution,
    add_report,
    finish,
    substitute_ins,
)
from wengert.ops import REGISTRY

__all__ = ["cse", "value_key", "equation_key", "part_keys", "COMMUTATIVE", "MAX_KEYED_BYTES"]

#: Registry ops whose two inputs may be swapped (exactly, for every value): those declared
#: ``commutative``.
COMMUTATIVE = frozenset(op for op in REGISTRY if op.commutative)
def equation_key(eq: Any) -> Any:
    """The key of ``eq`` (see the module's text): equations with equal keys compute the
    same value.

    Examples
    --------
    >>> import wengert as wg
    >>> g = wg.trace(lambda x, y: (x * y, y * x, x - y, y - x), 1.0, 2.0)
    >>> [equation_key(e) == equation_key(g.equations[k - 1]) for k, e in enumerate(g) if k % 2]
    [True, False]
    """
    op = eq.op
    ins = eq.ins
    if len(ins) == 2:  # (unrolled for the common cases: this runs once per equation)
        a, b = ins
        if type(a) is not Var:  # (a nonzero float inline: the common literal)
            v = a.value
            a = (float, v) if type(v) is float and v != 0.0 and v == v else value_key(v)
        if type(b) is not Var:
            v = b.value
            b = (float, v) if type(v) is float and v != 0.0 and v == v else value_key(v)
        ins_key: Any = frozenset((a, b)) if op in COMMUTATIVE else (a, b)
    elif len(ins) == 1:
        a = ins[0]
        ins_key = (a if type(a) is Var else value_key(a.value),)
    else:
        ins_key = tuple([v if type(v) is Var else value_key(v.value) for v in ins])
    params = eq.params
    out = eq.out
    if params:
        params_key = tuple([(k, value_key(v)) for k, v in params.items()])
        return (op, ins_key, params_key, out.shape, out.dtype, out.scalar, eq.grad_off,
                eq.context)
    return (op, ins_key, (), out.shape, out.dtype, out.scalar, eq.grad_off, eq.context)


def part_keys(eq: Any) -> list[Any]:
    """The key of each output of ``eq`` (:func:`equation_key` for one output; for the
    parts of a decomposition, the key of each part's own equation): an output whose key
    an earlier output has is the same value.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda a: (np.linalg.eigh(a), np.linalg.eigvalsh(a)), np.eye(2))
    >>> [len(part_keys(e)) for e in g if e.primitive.startswith("eigh")]
    [2, 1]
    """
    if len(eq.outs) == 1:
        return [equation_key(eq)]
    return [equation_key(Equation(op, eq.ins, eq.params, v, None, eq.grad_off, eq.context))
            for op, v in zip(eq.ops, eq.outs)]


def cse(graph: Graph, *, reports: list[PassReport] | None = None) -> Graph:
    """A new graph where an equation equal to an earlier one (same op, inputs and params)
    is dropped and its readers read the earlier one's output.

    A :class:`~wengert.graph.passes.pipeline.Pass`: ``graph`` is not modified; the report
    appended to ``reports`` counts the merged equations by op name.

    Returns
    -------
    Graph
        Guards on a merged variable test the variable it merged into.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.exp(x) + np.exp(x), 1.0)
    >>> [str(e) for e in cse(g)]
    ['t0: f64[] = exp(x)', 't2: f64[] = add(t0, t0)']
    """
    mapping: Substitution = {}
    first: dict[Any, Var] = {}
    kept = []
    merged: dict[str, int] = {}
    with collector_paused():  # many small acyclic objects: see wengert.core.collector
        for eq in graph.equations:
            eq = substitute_ins(eq, mapping)
            if len(eq.outs) > 1:  # a decomposition: merged when each part is known
                _merge_parts(eq, first, mapping, kept, merged)
                continue
            try:
                key = equation_key(eq)
                seen = first.get(key)
            except TypeError:  # (an unhashable key part: never merged)
                kept.append(eq)
                continue
            if seen is None:
                first[key] = eq.out
                kept.append(eq)
            else:
                mapping[eq.out] = seen
                merged[eq.op.name] = merged.get(eq.op.name, 0) + 1
    out = finish(graph, kept, mapping)
    add_report(reports, PassReport("cse", len(graph), len(out), merged, verb="merged"))
    return out


def _merge_parts(eq: Any, first: dict[Any, Var], mapping: Substitution, kept: list[Any],
                 merged: dict[str, int]) -> None:
    """An equation with several outputs: dropped when an earlier equation computed each
    of its parts (``w, v = eigh(s)`` twice, or ``eigvalsh``'s ``eigh_values(s)`` after
    ``eigh(s)``), its outputs read from there; when one earlier equation computed some of
    them, that equation takes the others; else kept, its parts known from then on."""
    try:
        keys = part_keys(eq)
        seen = [first.get(k) for k in keys]
    except TypeError:
        kept.append(eq)
        return
    if all(v is not None for v in seen):
        for v, s in zip(eq.outs, seen):
            mapping[v] = s  # type: ignore[assignment]
        merged[eq.primitive] = merged.get(eq.primitive, 0) + 1
        return
    at = _one_producer(kept, [v for v in seen if v is not None])
    if at is not None:
        # Some parts, all from one earlier equation (``eigvalsh`` before ``eigh``): that
        # equation takes the parts it lacks, so the factorisation runs once (its inputs
        # are this one's, so they are defined there).
        before = kept[at]
        pairs = sorted([*zip(before.ops, before.outs),
                        *[(op, v) for op, v, s in zip(eq.ops, eq.outs, seen) if s is None]],
                       key=lambda p: p[0].part[1])
        for v, s in zip(eq.outs, seen):
            if s is not None:
                mapping[v] = s
        ops = [p[0] for p in pairs]
        kept[at] = before.replace(op=ops[0], out=[p[1] for p in pairs], parts=ops)
        merged[eq.primitive] = merged.get(eq.primitive, 0) + 1
        for k, v in zip(keys, eq.outs):
            first.setdefault(k, mapping.get(v, v))
        return
    for k, v in zip(keys, eq.outs):
        first.setdefault(k, v)
    kept.append(eq)


def _one_producer(kept: list[Any], known: list[Var]) -> int | None:
    """The index in ``kept`` of the one equation that made every variable of ``known``
    (``None``: none of them, or several equations)."""
    if not known:
        return None
    for i in range(len(kept) - 1, -1, -1):
        outs = kept[i].outs
        if any(v is known[0] for v in outs):
            return i if all(any(v is k for v in outs) for k in known) else None
    return None
