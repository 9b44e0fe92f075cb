"""One reverse sweep, watched step by step: where a gradient became zero or NaN.

:func:`watched_sweep` runs the reverse sweep from a target over its tape
(``retain_graph=True``, so nothing is freed and no ``.grad`` is written) with
a :class:`~wengert.core.sweep.SweepObserver` that looks at every step on the
*path*: the equations computed from the input being explained. It keeps, as
the sweep goes (nothing per step is stored):

- the *blockers*: steps that received a non-zero cotangent but sent exactly
  zero to every input on the path (a ReLU that is off everywhere, ``np.round``,
  a ``clip`` outside its bounds, ``np.where`` choosing the other branch, a
  product with zero);
- the first step that received a finite cotangent and sent a NaN or an
  infinity to the path, and whether that happened where its cotangent was
  exactly zero (``0 · inf``: the classic ``np.where`` trap);
- what the input itself received, term by term (terms that cancel).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([-1.0, -2.0], requires_grad=True)
>>> y = np.maximum(x, 0.0).sum()
>>> tape = wg.tape_of(y)
>>> facts = watched_sweep(tape, tape.outputs[0], y, x, path_of(tape, x))
>>> facts.gradient, [tape[k].op.name for k in facts.blockers]
(array([0., 0.]), ['maximum'])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wengert.core.equations import Tape, freed_by_another
from wengert.core.kept import foreign_sweep
from wengert.core.sweep import SweepObserver, observe_sweep
from wengert.core.sweep_fast import backprop
from wengert.forward.dual import Dual
from wengert.reverse.tape_reading import tape_of
from wengert.reverse.tensor import Tensor

__all__ = ["SweepFacts", "watched_sweep", "watched_record", "kept_record", "foreign_record",
           "path_of", "edge_of", "as_array", "is_finite", "is_zero", "node_of",
           "value_of"]


def as_array(value: Any) -> np.ndarray | None:
    """A cotangent or value as an array, ``None`` when it is not numeric here (a traced
    value of an outer level).

    Examples
    --------
    >>> as_array(2.0), as_array(None), as_array("text"), as_array(Dual(np.nan, 1.0))
    (array(2.), None, None, array(nan))
    """
    while isinstance(value, Dual):  # (a sweep over dual numbers: its primal is the number)
        value = value.primal
    if value is None:
        return None
    try:
        a = np.asarray(value)
    except TypeError:
        return None
    return a if a.dtype.kind in "fcbiu" else None


def value_of(t: Any) -> np.ndarray | None:
    """The value of tensor ``t`` as NumPy; ``None`` where it holds a traced value (a tensor
    over dual numbers, as in ``%%autodiff --mode forward``).

    Examples
    --------
    >>> import wengert as wg
    >>> value_of(wg.tensor([1.0, 2.0], requires_grad=True)), value_of(2.0)
    (array([1., 2.]), None)
    """
    try:
        return t.detach().numpy()
    except (AttributeError, TypeError):
        return None


def is_finite(value: Any) -> bool:
    """Whether every entry is finite (a value that is not numeric here counts as finite).

    Examples
    --------
    >>> is_finite(1.0), is_finite(np.array([1.0, np.inf])), is_finite(np.array([2, 3]))
    (True, False, True)
    >>> is_finite(np.array([1 + 2j])), is_finite(np.array([1 + 1j * np.nan]))
    (True, False)
    """
    if type(value) is float:
        return math.isfinite(value)
    a = as_array(value)
    if a is None or a.dtype.kind not in "fc":
        return True
    # One reduction: a finite sum means finite entries (an inf or a NaN would spread; a
    # complex sum is finite when both of its parts are).
    total = a.sum()
    return (math.isfinite(total) if a.dtype.kind == "f" else bool(np.isfinite(total))) \
        or bool(np.isfinite(a).all())


def is_zero(value: Any) -> bool:
    """Whether every entry is exactly zero.

    Examples
    --------
    >>> is_zero(0.0), is_zero(np.zeros(3)), is_zero(np.array([0.0, 1e-300]))
    (True, True, False)
    """
    if type(value) is float:
        return value == 0.0
    a = as_array(value)
    return a is not None and not a.any()


def edge_of(tape: Tape, wrt: Any) -> tuple[int | None, int | None]:
    """Where ``wrt`` is on ``tape``: ``(leaf index, None)``, ``(None, equation index)`` for
    a value computed on it, or ``(None, None)`` when the tape does not reach it.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> h = x * 3.0
    >>> tape = wg.tape_of(h * h)
    >>> edge_of(tape, x), edge_of(tape, h), edge_of(tape, wg.tensor(1.0))
    ((0, None), (None, 0), (None, None))
    """
    for i, leaf in enumerate(tape.leaves):
        if leaf is wrt:
            return i, None
    eq = tape.equation_of(node_of(wrt))
    return (None, eq.index) if eq is not None else (None, None)


def node_of(t: Any) -> Any:
    """The node that computed ``t`` (``None`` for a leaf or a constant); a gradient tape's
    value that does not require grad has no ``grad_fn`` but has a node all the same.

    Examples
    --------
    >>> import wengert as wg
    >>> c = wg.tensor([1.0, 2.0])
    >>> recording = wg.GradientTape()
    >>> with recording:
    ...     recording.watch(c); s = np.sin(c).sum()
    >>> (s.grad_fn, node_of(s).op.name, node_of(c))
    (None, 'sum', None)
    """
    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        return grad_fn.node
    if not isinstance(t, Tensor) or t.requires_grad:
        return None
    tape = tape_of(t)
    return tape[tape.outputs[0]].node if tape.outputs else None


def path_of(tape: Tape, wrt: Any, node: Any = None) -> list[bool]:
    """Per equation of ``tape``: whether it was computed from ``wrt`` (a leaf, or the value
    of equation ``node`` when given).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> w = wg.tensor(3.0, requires_grad=True)
    >>> path_of(wg.tape_of(w * 2.0 + x), x)
    [False, True]
    """
    if node is None:
        leaf, _ = edge_of(tape, wrt)
        node = node_of(wrt)
    else:
        leaf = None
    start = _var_of(tape, node)  # the value itself: one output of a decomposition
    on = [False] * len(tape)
    for eq in tape:
        for inp in eq.inputs:
            if (inp.source == "leaf" and inp.index == leaf and leaf is not None) or \
                    (inp.source == "equation" and (inp is start or on[inp.index])):
                on[eq.index] = True
                break
    return on


def _var_of(tape: Tape, node: Any) -> Any:
    """The variable ``node`` computed on ``tape`` (``None`` when it is not on it)."""
    eq = tape.equation_of(node) if node is not None else None
    if eq is None:
        return None
    return next(v for n, v in zip(eq.nodes, eq.outs) if n is node)


@dataclass
class SweepFacts:
    """What a watched sweep found (see the module docstring).

    Attributes
    ----------
    gradient : Any
        The cotangent that reached the input (``None``: none did).
    blockers : list of int
        Equations (indices on the tape) that received a non-zero cotangent and sent
        exactly zero to the path, in sweep order (newest first).
    received : dict of int to Any
        For each blocker, the cotangent it received.
    first_bad : int or None
        The first equation, in sweep order, that received a finite cotangent and sent a
        NaN or an infinity to the path.
    bad_input : int
        Which input of ``first_bad`` got it.
    bad_where_zero : bool
        Whether every non-finite entry it sent sits where its own cotangent was 0 (0 · inf).
    bad_entries : list of int
        Flat positions of the first non-finite entries it sent (at most 5).
    terms : list of Any
        The contributions the input received, one per step that sent it one.
    hook : tuple or None
        A gradient hook on the path (``register_hook``) that turned a non-zero, finite
        cotangent into 0 before any op blocked it: ``(equation index or None for the
        input itself, hook names, the cotangent before)``.
    """

    gradient: Any = None
    blockers: list[int] = field(default_factory=list)
    received: dict[int, Any] = field(default_factory=dict)
    first_bad: int | None = None
    bad_input: int = 0
    bad_where_zero: bool = False
    bad_entries: list[int] = field(default_factory=list)
    terms: list[Any] = field(default_factory=list)
    hook: tuple[int | None, tuple[str, ...], Any] | None = None


class _Watch(SweepObserver):
    def __init__(self, tape: Tape, path: Sequence[bool], wrt_edge: Any) -> None:
        self.index = {id(n): eq.index for eq in tape for n in eq.nodes}
        self.path = path
        self.wrt_edge = wrt_edge
        self.facts = SweepFacts()

    def _on_path(self, parent: Any) -> bool:
        if parent is self.wrt_edge:
            return True
        k = self.index.get(id(parent))
        return k is not None and self.path[k]

    def hooked(self, node: Any, before: Any, after: Any, hooks: list[Any]) -> None:
        k = self.index.get(id(node))
        if k is not None and self.path[k]:
            self.zeroed_by_hook(k, before, after, hooks)

    def zeroed_by_hook(self, k: int | None, before: Any, after: Any, hooks: Any) -> None:
        """Hooks turned ``before`` into ``after``: note it when they zeroed a gradient
        before any op on the path did (``after`` is ``None`` when they did not run)."""
        facts = self.facts
        if facts.hook is None and not facts.blockers and after is not None \
                and is_zero(after) and not is_zero(before) and is_finite(before):
            names = tuple(h if isinstance(h, str) else getattr(h, "__qualname__", None)
                          or type(h).__name__ for h in hooks)
            facts.hook = (k, names, before)

    def step(self, node: Any, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        k = self.index.get(id(node))
        if k is None or not self.path[k]:
            return
        facts = self.facts
        for _, parent, ct in sent:
            if parent is self.wrt_edge:
                facts.terms.append(ct)
        to_path = [(i, ct) for i, parent, ct in sent if self._on_path(parent)]
        if all(is_zero(ct) for _, ct in to_path) and not is_zero(g) and is_finite(g):
            facts.blockers.append(k)
            facts.received[k] = g
        if facts.first_bad is None:
            for i, ct in to_path:
                if not is_finite(ct):
                    if is_finite(g):
                        self._first_bad(k, i, g, ct)
                    break

    def _first_bad(self, k: int, i: int, g: Any, ct: Any) -> None:
        facts = self.facts
        facts.first_bad = k
        facts.bad_input = i
        ga, ca = as_array(g), as_array(ct)
        bad = ~np.isfinite(ca)
        facts.bad_entries = [int(j) for j in np.flatnonzero(bad)[:5]]
        if ga is not None and ga.shape == ca.shape:
            facts.bad_where_zero = bool(np.all(ga[bad] == 0))
        elif ga is not None and ga.size == 1:
            facts.bad_where_zero = bool(ga.reshape(()) == 0)


def watched_sweep(tape: Tape, out_index: int | None, target: Any, wrt: Any,
                  path: Sequence[bool]) -> SweepFacts:
    """Run the reverse sweep from ``target`` (equation ``out_index`` of ``tape``, or the
    leaf ``target`` itself when ``None``) and watch the path to ``wrt``.

    Raises whatever the sweep raises: ``RuntimeError`` for a freed graph or a value
    modified in place since it was saved.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([0.0, 4.0], requires_grad=True)
    >>> y = np.sqrt(x).sum()
    >>> tape = wg.tape_of(y)
    >>> facts = watched_sweep(tape, tape.outputs[0], y, x, path_of(tape, x))
    >>> facts.first_bad, facts.bad_entries, facts.bad_where_zero
    (0, [0], False)
    """
    root = tape[out_index].node if out_index is not None else target
    wrt_node = node_of(wrt)
    wrt_edge = wrt_node if wrt_node is not None else wrt
    seed: Any = 1.0 if target.shape == () else np.ones(target.shape, dtype=target.dtype)
    watch = _Watch(tape, path, wrt_edge)
    with observe_sweep(watch), np.errstate(all="ignore"):
        results, reached = backprop([(root, seed)], wanted=[wrt_node] if wrt_node else (),
                                    retain_graph=True, replay=True)
    if wrt_node is not None:
        watch.facts.gradient = results.get(id(wrt_node))
    else:
        for leaf, g in reached:
            if leaf is wrt:
                watch.facts.gradient = g
    if root is wrt:
        watch.facts.gradient = seed
    return watch.facts


def kept_record(tape: Tape, out_index: int | None) -> tuple[Any, str | None]:
    """The sweep ``backward()`` ran from equation ``out_index``, as the view-keeping mode
    kept it (``wg.keep_values()``, ``%load_ext wengert``), or ``None`` and, when a record
    is there but cannot serve, why."""
    if out_index is None:
        return None, None
    record = tape[out_index].sweep
    if record is None:
        return None, freed_by_another(tape, (tape[out_index].node.seq,))
    if record.released is not None:
        return None, record.released
    if record.root_seqs != (tape[out_index].node.seq,):
        return None, (f"the {record.kind} that swept it started from another output, so "
                      "the sweep it kept is not this output's")
    if record.error is not None:
        # (a backward() that found the graph freed by another output's: say that one)
        other = freed_by_another(tape, (tape[out_index].node.seq,))
        if other is not None:
            return None, other
        return None, (f"the {record.kind} that freed it stopped with {record.error}, so "
                      "its sweep never reached the inputs")
    return record, None


def foreign_record(tape: Tape, out_index: int | None) -> Any:
    """The kept record of a ``backward()`` from another output that swept (and freed) the
    graph of equation ``out_index`` (``None``: there is none): what ``.grad`` got from it
    is that output's gradient, not this one's."""
    if out_index is None:
        return None
    root = tape[out_index].node
    record = tape[out_index].sweep
    if record is not None and record.root_seqs != (root.seq,):
        return record
    if record is not None and record.error is None:
        return None
    # (none, or this output's own that stopped: another's may have freed the graph first)
    return foreign_sweep((n for eq in tape for n in eq.nodes), (root.seq,))[0]


def watched_record(tape: Tape, record: Any, target: Any, wrt: Any,
                   path: Sequence[bool]) -> SweepFacts:
    """:func:`watched_sweep` over the steps ``backward()`` ran, as kept in ``record``
    (nothing runs again: the cotangents are those the sweep computed, hooks included).

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values(), np.errstate(divide="ignore"):
    ...     x = wg.tensor([1.0, 4.0], requires_grad=True)
    ...     y = np.sqrt(x - 1.0).sum()
    ...     y.backward()
    >>> tape = wg.tape_of(y)
    >>> record, _ = kept_record(tape, tape.outputs[0])
    >>> facts = watched_record(tape, record, y, x, path_of(tape, x))
    >>> tape[facts.first_bad].op.name, facts.bad_entries
    ('sqrt', [0])
    """
    wrt_node = node_of(wrt)
    wrt_edge = wrt_node if wrt_node is not None else wrt
    watch = _Watch(tape, path, wrt_edge)
    with np.errstate(all="ignore"):
        reached = record.feed(watch, {n.seq: n for eq in tape for n in eq.nodes})
    kept = record.leaf(wrt) if wrt_node is None else None
    if kept is not None and kept.hooks:  # the input's own hooks, after the sweep
        watch.zeroed_by_hook(None, kept.before, kept.ct, kept.hooks)
    if wrt_node is not None:
        for step in record.steps:
            if step.seq == wrt_node.seq:
                watch.facts.gradient = step.g
    else:
        for leaf, g in reached:
            if leaf is wrt:
                watch.facts.gradient = g
    if target is wrt:
        watch.facts.gradient = record.roots[0][1]
    return watch.facts
