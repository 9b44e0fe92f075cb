"""What a backward pass keeps for the views: the sweep it really ran, within a memory budget.

A reverse sweep frees the values it saved as it goes, so a viewer called after
``backward()`` (the explorer, the explainer) has nothing left to replay. In the
*view-keeping mode* -- a :class:`Keeper` in the context variable :data:`KEEPER`,
entered by ``wengert.keep_values()`` and, for every cell, by ``%load_ext wengert`` --
the front ends run their sweeps under a :class:`SweepRecord`: a sweep observer that
keeps, step by step, the cotangent each node received (before and after its hooks),
what it sent to each input, the node's saved values (read before the sweep frees
them) and, per leaf, the cotangent, what its hooks made of it and whether ``.grad``
received it. Every node swept points to the record (``node.extra["swept"]``); the
record points to no node (it keys them by ``seq``), so the tape stays free of cycles
and the record dies with the graph.

The keeper holds its records weakly, counts the bytes of the arrays they hold, and
past its budget releases the oldest first; a released record keeps only the sentence
that says so. Without a keeper none of this runs: the sweep and the per-op path pay
nothing.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> with wg.keep_values():
...     x = wg.tensor([1.0, 4.0], requires_grad=True)
...     y = np.sqrt(x).sum()
...     y.backward()
>>> record = kept_sweep(y.grad_fn.node)
>>> [(step.op, step.g) for step in record.steps]
[('sum', array(1.)), ('sqrt', array([1., 1.]))]
>>> record.leaves[0].ct
array([0.5 , 0.25])
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

import numpy as np
from wengert.core.errors import error_name
from wengert.core.node import Node, is_stand_in
from wengert.core.sweep import SweepObserver

__all__ = [
    "KEEPER", "DEFAULT_BUDGET", "Keeper", "SweepRecord", "KeptStep", "KeptLeaf",
    "kept_sweep", "kept_inputs", "kept_value", "budget_text", "parse_budget", "foreign_sweep",
]

#: The budget of a new keeper: what its records may hold after ``backward()``.
DEFAULT_BUDGET = 256 << 20


def budget_text(nbytes: int) -> str:
    """A byte count as people write it.

    Examples
    --------
    >>> budget_text(256 << 20), budget_text(1536), budget_text(3 << 30)
    ('256 MB', '1.5 kB', '3 GB')
    """
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes} bytes"


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def parse_budget(value: Any) -> int:
    """A budget given as bytes (an int) or text (``"512 MB"``, ``"2GB"``, ``"0"``).

    Examples
    --------
    >>> parse_budget("512 MB"), parse_budget(1000), parse_budget("1.5 gb")
    (536870912, 1000, 1610612736)
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number, unit = float(value), ""
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("kmgib")
        try:
            number, unit = float(digits), text[len(digits):]
        except ValueError:
            number, unit = -1.0, "?"
    else:
        number, unit = -1.0, "?"
    if number < 0 or unit not in _UNITS or number != number:
        raise ValueError(
            f"a memory budget is a number of bytes (an int) or a text such as '512 MB' or "
            f"'2 GB'; got {value!r}."
        )
    return int(number * _UNITS[unit])


class KeptStep:
    """One step of a kept sweep: node ``seq`` (its op named ``op``) received ``g``.

    ``before`` is the cotangent before the node's hooks (``None`` when it has none),
    ``hooks`` their names, ``ran`` whether they ran (not in a viewer's replay); ``sent``
    lists ``(input position, contribution)``; ``inner`` names the ops of the sweeps run
    inside this node's rules (a checkpoint's recomputation, a custom rule's own tape).
    """

    __slots__ = ("seq", "op", "g", "before", "hooks", "ran", "sent", "inner")

    def __init__(self, seq: int, op: str, g: Any, sent: list[tuple[int, Any]]) -> None:
        self.seq = seq
        self.op = op
        self.g = g
        self.before: Any = None
        self.hooks: tuple[str, ...] = ()
        self.ran = True
        self.sent = sent
        self.inner: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<KeptStep #{-self.seq} {self.op}>"


class KeptLeaf:
    """What a leaf got from a kept sweep: ``ct`` (after its hooks: what ``.grad``
    received when ``stored``), ``before`` (before its hooks; ``None`` without one)."""

    __slots__ = ("ref", "key", "ct", "before", "hooks", "stored")

    def __init__(self, leaf: Any, ct: Any) -> None:
        try:
            self.ref: Callable[[], Any] = weakref.ref(leaf)
        except TypeError:  # a leaf that takes no weak reference is held
            self.ref = (lambda held: lambda: held)(leaf)
        self.key = id(leaf)
        self.ct = ct
        self.before: Any = None
        self.hooks: tuple[str, ...] = ()
        self.stored = True

    @property
    def leaf(self) -> Any:
        """The leaf (``None`` once it is gone)."""
        return self.ref()


def _hook_names(hooks: Iterable[Any]) -> tuple[str, ...]:
    return tuple(getattr(h, "__qualname__", None) or getattr(h, "__name__", None) or
                 type(h).__name__ for h in hooks)


class SweepRecord(SweepObserver):
    """The steps of one reverse sweep, as it ran (see the module docstring).

    Attributes
    ----------
    roots : list of (int or None, Any)
        The ``seq`` of each root node (``None`` for a leaf) and its seed.
    steps : list of KeptStep
        In sweep order.
    values : dict of int to (Any, tuple)
        Per node ``seq``: its output and its saved inputs, read before they were freed
        (shape stand-ins included: :func:`kept_value` and :func:`kept_inputs` leave
        them out).
    leaves : list of KeptLeaf
        The leaves reached, in the order reached.
    count : int
        How many kept sweeps started from these roots (``.grad`` holds their sum).
    complete : bool
        Whether the backward pass finished; else ``error`` says what stopped it.
    released : str or None
        Why the keeper released what this record held (then nothing else is left).
    retain_graph, create_graph, restricted : bool
        How ``backward()`` was called (``restricted``: with ``inputs=``, so only those
        tensors' ``.grad`` received anything).
    """

    def __init__(self, keeper: Keeper, *, retain_graph: bool = False,
                 create_graph: bool = False, plain: Callable[[Any], Any] | None = None,
                 restricted: bool = False, kind: str = "backward()") -> None:
        self.keeper = keeper
        self.kind = kind
        self.roots: list[tuple[int | None, Any]] = []
        self.steps: list[KeptStep] = []
        self.values: dict[int, tuple[Any, tuple[Any, ...]]] = {}
        self.leaves: list[KeptLeaf] = []
        self.count = 1
        self.complete = False
        self.error: str | None = None
        self.released: str | None = None
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.restricted = restricted
        self.nbytes = 0
        self._plain = plain if create_graph else None
        self._depth = 0
        self._inner: list[str] = []
        self._hook: tuple[int, Any, Any, tuple[str, ...]] | None = None
        self._leaf_index: dict[int, KeptLeaf] = {}

    # -- the sweep observer ------------------------------------------------------------
    def begin(self, roots: list[tuple[Any, Any]]) -> None:
        self._depth += 1
        if self._depth == 1:
            plain = self._plain
            self.roots = [(edge.seq if type(edge) is Node else None,
                           seed if plain is None else plain(seed)) for edge, seed in roots]
            for edge, _ in roots:
                if type(edge) is Node and edge.extra is not None:
                    old = edge.extra.get("swept")
                    if old is not None and old.root_seqs == self.root_seqs:
                        self.count = old.count + 1

    @property
    def root_seqs(self) -> tuple[int | None, ...]:
        """The ``seq`` of each root (``None`` for a leaf), in order."""
        return tuple(seq for seq, _ in self.roots)

    def hooked(self, node: Node, before: Any, after: Any, hooks: Iterable[Any]) -> None:
        if self._depth == 1:
            self._hook = (node.seq, before, after, _hook_names(hooks))

    def step(self, node: Node, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        if self._depth != 1:
            self._inner.append(node.op.name)
            return
        plain = self._plain
        seq = node.seq
        if plain is None:  # raw values already (no create_graph): kept as they are
            kept = KeptStep(seq, node.op.name, g, [(i, ct) for i, _, ct in sent])
        else:
            kept = KeptStep(seq, node.op.name, plain(g),
                            [(i, plain(ct)) for i, _, ct in sent])
        hook = self._hook
        if hook is not None and hook[0] == seq:
            kept.before = hook[1] if plain is None else plain(hook[1])
            kept.ran = hook[2] is not None
            kept.hooks = hook[3]
            self._hook = None
        if self._inner:
            kept.inner = tuple(self._inner)
            self._inner = []
        self.steps.append(kept)
        op = node.op
        n = node.nin
        # The saved values, read before the sweep frees them (stand-ins are filtered out
        # when read: see kept_value, kept_inputs).
        inputs = (node.input0,) if n == 1 else (node.input0, node.input1) if n == 2 \
            else node.inputs()
        if op.state_input:  # the rule's own state (a custom rule's): not a value
            inputs = inputs[:-1]
        self.values[seq] = (node.out, inputs)
        extra = node.extra
        if extra is None:
            node.extra = {"swept": self}
        else:
            extra["swept"] = self

    def end(self, leaves: list[tuple[Any, Any]]) -> None:
        self._depth -= 1
        if self._depth == 0:
            plain = self._plain
            for leaf, ct in leaves:
                kept = KeptLeaf(leaf, ct if plain is None else plain(ct))
                self.leaves.append(kept)
                self._leaf_index[id(leaf)] = kept

    # -- told by the front end -----------------------------------------------------------
    def leaf_hooked(self, leaf: Any, before: Any, after: Any, hooks: Iterable[Any]) -> None:
        """The hooks of ``leaf`` turned ``before`` into ``after`` (what ``.grad`` got)."""
        kept = self._leaf_index.get(id(leaf))
        if kept is not None:
            plain = self._plain or (lambda v: v)
            kept.before = plain(before)
            kept.ct = plain(after)
            kept.hooks = _hook_names(hooks)

    def not_stored(self, leaf: Any) -> None:
        """``leaf``'s ``.grad`` did not receive its cotangent (``backward(inputs=...)``)."""
        kept = self._leaf_index.get(id(leaf))
        if kept is not None:
            kept.stored = False

    def finish(self, error: BaseException | None = None) -> None:
        """The backward pass ended (``error``: what stopped it); the keeper takes it."""
        self._depth = 0
        if error is not None:
            self.error = f"{error_name(error)}: {error}"
        else:
            self.complete = True
        self.keeper.admit(self)

    # -- reading -------------------------------------------------------------------------
    def leaf(self, leaf: Any) -> KeptLeaf | None:
        """What ``leaf`` got from this sweep (``None``: the sweep did not reach it)."""
        return self._leaf_index.get(id(leaf)) if self.released is None else None

    def feed(self, observer: SweepObserver, nodes: dict[int, Node]) -> list[tuple[Any, Any]]:
        """Tell ``observer`` this sweep's steps as if it ran again, for the nodes in
        ``nodes`` (``seq -> node``); returns the leaves reached and their cotangents
        (after their hooks, as ``.grad`` got them)."""
        observer.begin([(nodes.get(seq) if seq is not None else None, seed)
                        for seq, seed in self.roots])
        for step in self.steps:
            node = nodes.get(step.seq)
            if node is None:
                continue
            if step.hooks:
                observer.hooked(node, step.before, step.g if step.ran else None, step.hooks)
            parents = node.parents()
            observer.step(node, step.g, [(i, parents[i], ct) for i, ct in step.sent])
        reached = [(kept.leaf, kept.ct) for kept in self.leaves if kept.leaf is not None]
        observer.end(reached)
        return reached

    def arrays(self) -> Iterable[Any]:
        """Every value this record holds (for the keeper's count)."""
        for root in self.roots:
            yield root[1]
        for step in self.steps:
            yield step.g
            yield step.before
            for _, ct in step.sent:
                yield ct
        for out, inputs in self.values.values():
            yield out
            yield from inputs
        for kept in self.leaves:
            yield kept.ct
            yield kept.before

    def release(self, why: str) -> None:
        """Drop everything this record holds; ``why`` is what the views will say."""
        self.released = why
        self.steps = []
        self.values = {}
        self.leaves = []
        self._leaf_index = {}
        self.roots = [(seq, None) for seq, _ in self.roots]
        self.nbytes = 0

    def __repr__(self) -> str:
        state = "released" if self.released else "complete" if self.complete else "stopped"
        return f"<SweepRecord of {len(self.steps)} steps, {state}>"


#: What a kept step costs besides its arrays (the step's own objects), for the count.
_STEP_BYTES = 240


def _nbytes(record: SweepRecord) -> int:
    """The bytes ``record`` holds: its arrays (each counted once) and its steps."""
    nd = np.ndarray
    seen: set[int] = set()
    add = seen.add
    total = _STEP_BYTES * len(record.steps)
    for v in record.arrays():
        if type(v) is nd and id(v) not in seen:
            add(id(v))
            total += v.nbytes
    return total


class Keeper:
    """The view-keeping mode: what backward passes keep for the views, within ``budget``
    bytes (oldest released first).

    Examples
    --------
    >>> keeper = Keeper(budget="1 MB")
    >>> keeper.budget, keeper.held
    (1048576, 0)
    """

    __slots__ = ("budget", "_records", "lines", "__weakref__")

    def __init__(self, budget: Any = DEFAULT_BUDGET, lines: bool = False) -> None:
        self.budget = parse_budget(budget)
        self._records: list[tuple[weakref.ref[SweepRecord], int]] = []
        #: Whether this mode also records each equation's line of code (the kernel's).
        self.lines = lines

    def record(self, **options: Any) -> SweepRecord:
        """A new record for a sweep about to run (options: see :class:`SweepRecord`)."""
        return SweepRecord(self, **options)

    @property
    def held(self) -> int:
        """Bytes held by the records still alive."""
        return sum(n for ref, n in self._records if ref() is not None and not ref().released)

    def admit(self, record: SweepRecord) -> None:
        """Count ``record``'s bytes; release the oldest records past the budget."""
        record.nbytes = _nbytes(record)
        self._records.append((weakref.ref(record), record.nbytes))
        self._trim()

    def _trim(self) -> None:
        live = [(ref, n) for ref, n in self._records
                if (r := ref()) is not None and r.released is None]
        total = sum(n for _, n in live)
        while live and total > self.budget:
            ref, n = live.pop(0)
            r = ref()
            total -= n
            if r is not None:
                r.release(
                    f"the view-keeping mode released what this {r.kind} kept "
                    f"({budget_text(n)}) to stay within its memory budget of "
                    f"{budget_text(self.budget)} (oldest first; newer sweeps hold "
                    f"{budget_text(total)}); raise it with wg.keep_budget('1 GB') (or "
                    "wg.keep_values(budget=...)), or look before calling backward()"
                )
        self._records = live

    def set_budget(self, budget: Any) -> None:
        """A new budget; records past it are released now (oldest first)."""
        self.budget = parse_budget(budget)
        self._trim()

    def __repr__(self) -> str:
        return f"<Keeper: {budget_text(self.held)} held, budget {budget_text(self.budget)}>"


#: The view-keeping mode in force here (``None``: off).
KEEPER: ContextVar[Keeper | None] = ContextVar("wengert_keeper", default=None)


def kept_sweep(node: Any) -> SweepRecord | None:
    """The record of the last kept sweep that swept ``node`` (``None``: none)."""
    extra = node.extra if type(node) is Node else None
    return extra.get("swept") if extra else None


def kept_value(node: Node) -> Any:
    """``node``'s output as the last kept sweep read it (``None``: not kept)."""
    record = kept_sweep(node)
    if record is None:
        return None
    got = record.values.get(node.seq)
    out = got[0] if got is not None else None
    return None if is_stand_in(out) else out


def kept_inputs(node: Node) -> tuple[Any, ...] | None:
    """``node``'s saved inputs as the last kept sweep read them (``None``: not kept)."""
    record = kept_sweep(node)
    if record is None:
        return None
    got = record.values.get(node.seq)
    if got is None:
        return None
    return tuple(None if is_stand_in(v) else v for v in got[1])


def foreign_sweep(nodes: Iterable[Any], roots: tuple[int | None, ...]) -> Any:
    """The kept record of a sweep started from other roots than ``roots`` (their ``seq``)
    that freed one of ``nodes`` (two outputs sharing part of a graph: the backward pass of
    one frees it for the other), and that node; ``(None, None)`` when there is none.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values():
    ...     x = wg.tensor(2.0, requires_grad=True)
    ...     t = x * 3.0
    ...     y1, y2 = t * 2.0, t * 5.0
    ...     y1.backward()
    >>> record, node = foreign_sweep([t.grad_fn.node, y2.grad_fn.node], (y2.grad_fn.node.seq,))
    >>> record.root_seqs == (y1.grad_fn.node.seq,), node is t.grad_fn.node
    (True, True)
    """
    for node in nodes:
        if type(node) is Node and node.out is None:
            record = kept_sweep(node)
            if record is not None and record.root_seqs != roots:
                return record, node
    return None, None
