"""What the views can show, and what they know of it beyond the IR.

Every public view (``wg.draw``, the listings and cards, the plots) takes its subject
through :func:`as_subject`: a tensor (the equations recorded behind it), a
:class:`~wengert.GradientTape` (what it recorded), a
:class:`~wengert.core.equations.Tape`, an ``%%autodiff`` result (an object with a
``tape``), or a traced :class:`~wengert.graph.program.Graph`. A tape is read through the
public tape API only; both are the one IR of :mod:`wengert.core.ir`.

A tape's views also show what only a tape knows: the user's names of its values
(:class:`TapeNames`, :func:`names_from_namespace`), the adjoints of a backward pass
(:class:`AdjointCollector`, :func:`kept_adjoints`) and its leaves' values and gradients.

Names
-----
Leaves are ``x0, x1, …`` and equations' outputs ``t0, t1, …`` by default; a variable
shows its own name (``wg.Variable(1.0, name="w")``). A ``names`` mapping gives the user's
names: keys are tape names (``"x0"``, ``"t3"``), leaf indices (``0`` for ``x0``) or
``(equation, input position)`` pairs for constants. An ``adjoints`` mapping holds
cotangents by variable: ``"t3"`` (an equation's output, as the tables name it: after a
decomposition with several outputs a variable's number is not its equation's), ``"x0"``
or the user's name of a leaf; an integer key is the index of an equation with one output.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wengert.core.equations import Equation, Tape
from wengert.core.formatting import constant_text, literal_text
from wengert.core.ir import Literal, Var
from wengert.core.source import SourceLine, is_notebook_cell
from wengert.core.sweep import SweepObserver
from wengert.forward.dual import Dual
from wengert.graph.program import Graph
from wengert.reverse.gradient_tape import GradientTape, Variable
from wengert.reverse.tape_reading import tape_of
from wengert.reverse.tensor import Tensor

__all__ = [
    "as_tape",
    "Known",
    "tape_known",
    "atom",
    "as_subject",
    "Subject",
    "TapeNames",
    "NameKey",
    "names_from_namespace",
    "AdjointCollector",
    "kept_adjoints",
    "swept_adjoints",
    "adjoints_of_equation",
    "output_names",
    "adjoint_of_leaf",
    "source_text",
    "value_shape_dtype",
    "leaf_grad",
    "leaf_value",
    "leaf_requires_grad_text",
]

#: Characters of a line of code shown in a table cell.
SOURCE_WIDTH = 60

# -- values ---------------------------------------------------------------------------------


def source_text(line: SourceLine | None, width: int = SOURCE_WIDTH) -> str:
    """The user's line of code as a table shows it: ``line 4: y = x * x`` for a notebook
    cell, ``file.py:4  y = x * x`` for a file, ``f · …`` inside a function ``f``; at most
    ``width`` characters (``…`` when cut), ``""`` when no line was recorded.

    Examples
    --------
    >>> cell, file = "/tmp/ipykernel_7/123.py", "/home/me/model.py"
    >>> source_text(SourceLine(cell, 4, "<module>", "y = x * x"))
    'line 4: y = x * x'
    >>> source_text(SourceLine(file, 12, "loss", "return (p - t) ** 2"))
    'loss · model.py:12  return (p - t) ** 2'
    """
    if line is None:
        return ""
    text = f"line {line.lineno}: {line.text}" if is_notebook_cell(line.filename) \
        else line.short()
    if line.function not in ("<module>", ""):
        text = f"{line.function} · {text}"
    return text if len(text) <= width else text[: width - 1] + "…"


# -- names ----------------------------------------------------------------------------------

NameKey = int | str | tuple[int, int]


def _key_of_tensor(tape: Tape, t: Tensor) -> str:
    """The tape name of tensor ``t``: ``x<i>`` for a leaf, the name of its variable
    (``t<k>``) for an equation's output (any output of a decomposition)."""
    for i, leaf in enumerate(tape.leaves):
        if leaf is t:
            return f"x{i}"
    node = t._node
    eq = tape.equation_of(node) if node is not None else None
    if eq is None:
        raise ValueError(f"names: the tensor {t!r:.40} is not on this tape (neither a leaf "
                         "nor the output of one of its equations).")
    return next(v.name for n, v in zip(eq.nodes, eq.outs) if n is node)


def output_names(tape: Tape) -> dict[int, str]:
    """``id`` of the node of every equation's output -> the name of its variable (``t3``;
    each output of a decomposition has its own).

    Examples
    --------
    >>> import wengert as wg
    >>> a = wg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> w, v = np.linalg.eigh(a)
    >>> tape = wg.tape_of(np.sum(w) + np.sum(v))
    >>> names = output_names(tape)
    >>> names[id(w.grad_fn.node)], names[id(v.grad_fn.node)], tape[2].index
    ('t2', 't3', 2)
    """
    return {id(node): v.name for eq in tape for node, v in zip(eq.nodes, eq.outs)}


class TapeNames:
    """The names a tape's values are shown with.

    Parameters
    ----------
    tape : Tape
        The tape.
    names : mapping or sequence, optional
        User names: keys a tensor on the tape (a leaf or an equation's output),
        ``"x0"`` or ``0`` (leaf 0), ``"t3"`` (the variable ``t3``, an equation's output
        as the tables name it), or ``(3, 1)`` (the constant that is input 1 of equation
        3); ``{"w": w}`` (as ``wg.explore`` takes) is ``{w: "w"}``; a sequence gives
        one name per leaf. Without one, a leaf that is a ``wg.Variable`` with its own
        name shows that name.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(1.0, requires_grad=True)
    >>> tape = wg.tape_of(w * 2.0)
    >>> names = TapeNames(tape, {"x0": "w", "t0": "y"})
    >>> names.leaf(0), names.var(tape[0].out), names.input(tape[0], 1)
    ('w', 'y', '2')
    """

    def __init__(self, tape: Tape, names: Mapping[NameKey, str] | Sequence[str] | None = None
                 ) -> None:
        given: dict[str | tuple[int, int], str] = {}
        if names is not None and not isinstance(names, Mapping):  # one name per leaf
            if isinstance(names, str) or not all(isinstance(n, str) for n in names):
                raise TypeError("names: give a mapping ({'x0': 'w'}) or one name (a string) "
                                f"per leaf, got {type(names).__name__} {names!r:.40}.")
            names = dict(enumerate(names))
        for key, name in (names or {}).items():
            if isinstance(name, Tensor) and isinstance(key, str):  # {"w": w}, as explore
                key, name = name, key
            if not isinstance(name, str):
                raise TypeError(f"names: a name must be a string; got {type(name).__name__} "
                                f"{name!r:.40} for {key!r:.40}.")
            if isinstance(key, int) and not isinstance(key, bool):
                given[f"x{key}"] = str(name)
            elif isinstance(key, (str, tuple)):
                given[key] = str(name)
            elif isinstance(key, Tensor):
                given[_key_of_tensor(tape, key)] = str(name)
            else:
                raise TypeError(
                    f"names: a key must be a tensor on the tape, a leaf number (0), a tape "
                    f"name ('x0', 't3') or (equation, input) for a constant; got "
                    f"{type(key).__name__} {key!r:.40}.")
        self._given = given
        leaf_names = []
        for i, leaf in enumerate(tape.leaves):
            name = given.get(f"x{i}")
            if name is None and isinstance(leaf, Variable) and leaf.name != "Variable":
                name = leaf.name
            leaf_names.append(name)
        # Two leaves with the same user name (two variables named "w") keep their tape name.
        seen: dict[str, int] = {}
        for name in leaf_names:
            if name is not None:
                seen[name] = seen.get(name, 0) + 1
        self._leaves = [
            f"x{i}" if name is None else name if seen[name] == 1 else f"{name} (x{i})"
            for i, name in enumerate(leaf_names)
        ]
        # A user's name of a result that is also a leaf's or another result's (x, rebound
        # in a loop) would not say which value a formula reads: those keep the tape's name.
        taken = [name for key, name in given.items() if isinstance(key, str)
                 and key[:1] == "t"] + [n for n in leaf_names if n is not None]
        counts: dict[str, int] = {}
        for name in taken:
            counts[name] = counts.get(name, 0) + 1
        self._ambiguous = {name for name, c in counts.items() if c > 1}

    def leaf(self, i: int) -> str:
        """The name of leaf ``i`` (``w``, or ``x0``)."""
        return self._leaves[i] if i < len(self._leaves) else f"x{i}"

    def user_leaf(self, i: int) -> str | None:
        """The user's name of leaf ``i``, ``None`` when it has only its tape name."""
        name = self.leaf(i)
        return None if name == f"x{i}" else name

    def var(self, v: Var) -> str:
        """The name a variable is shown with: a leaf's, or the user's name of an equation's
        output (``t3`` when it has none, or when another value has the same user name)."""
        if v.source == "leaf":
            return self.leaf(v.index)  # type: ignore[arg-type]
        name = self._given.get(v.name)
        return v.name if name is None or name in self._ambiguous else name

    def user_var(self, v: Var) -> str | None:
        """The user's name of an equation's output, ``None`` when it has none."""
        return self._given.get(v.name)

    def constant(self, k: int, position: int) -> str | None:
        """The user's name of the constant input ``position`` of equation ``k``."""
        return self._given.get((k, position))

    def input(self, eq: Equation, position: int) -> str:
        """How input ``position`` of ``eq`` reads: a name, or a constant's value."""
        inp = eq.inputs[position]
        if inp.source in ("equation", "leaf"):
            return self.var(inp)  # type: ignore[arg-type]
        return self.constant(eq.index, position) or constant_text(inp.value)


#: Names IPython puts in a user namespace that are never the user's own variables.
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


def names_from_namespace(tape: Tape, namespace: Mapping[str, Any]) -> dict[NameKey, str]:
    """User names for a tape's values, found by identity in ``namespace`` (a notebook
    cell's variables): leaves, equation outputs (tensors whose ``grad_fn`` is the
    equation's node) and constants (tensors that do not require grad, NumPy arrays) when
    the tape holds the very object. Names starting with ``_`` are skipped; the first name
    of an object wins.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(0.8, requires_grad=True)
    >>> x = wg.tensor(np.array([1.0, 2.0]))
    >>> y = (x * w).sum()
    >>> names_from_namespace(wg.tape_of(y), {"w": w, "x": x, "y": y})
    {'x0': 'w', (0, 0): 'x', 't1': 'y'}
    """
    leaf_of = {id(leaf): i for i, leaf in enumerate(tape.leaves)}
    variable_of = output_names(tape)
    constants: dict[int, list[tuple[int, int]]] = {}
    for eq in tape:
        for position, inp in enumerate(eq.inputs):
            if inp.source == "constant" and type(inp.value) in (np.ndarray, float):
                constants.setdefault(id(inp.value), []).append((eq.index, position))
    found: dict[NameKey, str] = {}
    for name, obj in namespace.items():
        if name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        keys: list[NameKey] = []
        if id(obj) in leaf_of:
            keys.append(f"x{leaf_of[id(obj)]}")
        elif issubclass(type(obj), Tensor):  # (isinstance may run a proxy's code)
            grad_fn = obj.grad_fn
            if grad_fn is not None and id(grad_fn.node) in variable_of:
                keys.append(variable_of[id(grad_fn.node)])
            elif not obj.requires_grad:
                with contextlib.suppress(TypeError):  # a tensor over a traced value
                    # numpy() and a float's item() hand out the value the tape saw.
                    value = obj.item() if obj.shape == () else obj.numpy()
                    keys.extend(constants.get(id(value), ()))
        elif type(obj) is np.ndarray:
            keys.extend(constants.get(id(obj), ()))
        for key in keys:
            found.setdefault(key, name)
    return found


# -- adjoints -------------------------------------------------------------------------------


class AdjointCollector(SweepObserver):
    """Records the adjoint (cotangent) of every equation and leaf of ``tape`` during the
    backward passes run inside ``with wg.observe_sweep(collector):``.

    ``collector.adjoints`` maps variable names (``"t3"``, every output of a decomposition
    its own) and leaf names (``"x0"``) to cotangents, the format the text, HTML and DOT
    views of a tape take. A variable the sweep did not reach has no entry.
    A later sweep replaces the adjoints of an earlier one.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(3.0, requires_grad=True)
    >>> y = w * w + 1.0
    >>> collector = AdjointCollector(wg.tape_of(y))
    >>> with wg.observe_sweep(collector):
    ...     y.backward()
    >>> collector.adjoints
    {'t1': 1.0, 't0': 1.0, 'x0': 6.0}
    """

    def __init__(self, tape: Tape) -> None:
        self._variable_of = output_names(tape)
        self._leaf_of = {id(leaf): i for i, leaf in enumerate(tape.leaves)}
        self.adjoints: dict[int | str, Any] = {}

    def step(self, node: Any, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        name = self._variable_of.get(id(node))
        if name is not None:
            self.adjoints[name] = g

    def end(self, leaves: list[tuple[Any, Any]]) -> None:
        for leaf, ct in leaves:
            i = self._leaf_of.get(id(leaf))
            if i is not None:
                self.adjoints[f"x{i}"] = ct


def adjoints_of_equation(adjoints: Mapping[Any, Any] | None, eq: Equation) -> list[Any]:
    """The adjoint of each output of ``eq`` in ``adjoints`` (key: the output's variable
    name ``"t3"``; for an equation with one output also its index ``3``), ``None`` for an
    output that has none.

    Examples
    --------
    >>> import wengert as wg
    >>> tape = wg.tape_of(wg.tensor(2.0, requires_grad=True) * 3.0)
    >>> adjoints_of_equation({"t0": 2.5}, tape[0]), adjoints_of_equation({0: 2.5}, tape[0])
    ([2.5], [2.5])
    """
    if not adjoints:
        return [None] * len(eq.outs)
    found = [adjoints.get(v.name) for v in eq.outs]
    if len(found) == 1 and found[0] is None and eq.index is not None:
        found[0] = adjoints.get(eq.index)
    return found


def adjoint_of_leaf(adjoints: Mapping[Any, Any] | None, i: int, name: str | None = None) -> Any:
    """The adjoint of leaf ``i`` in ``adjoints`` (key ``"x{i}"`` or the user's ``name``).

    Examples
    --------
    >>> adjoint_of_leaf({"x0": 6.0}, 0), adjoint_of_leaf({"w": 6.0}, 0, "w")
    (6.0, 6.0)
    """
    if not adjoints:
        return None
    found = adjoints.get(f"x{i}")
    return adjoints.get(name) if found is None and name is not None else found


def value_shape_dtype(value: Any) -> tuple[tuple[int, ...], Any]:
    """The shape and dtype of a value (a number, an array, a tensor, a dual number).

    Examples
    --------
    >>> value_shape_dtype(1.5), value_shape_dtype(np.zeros((2, 3), np.float32))
    (((), dtype('float64')), ((2, 3), dtype('float32')))
    """
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        a = np.asarray(value)
        return a.shape, a.dtype
    return tuple(shape), dtype


def leaf_grad(leaf: Any) -> Any:
    """``leaf.grad`` (``None`` when it has none), without the non-leaf warning.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(3.0, requires_grad=True)
    >>> (w * w).backward()
    >>> leaf_grad(w), leaf_grad(w * 2.0)
    (6.0, None)
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(leaf, "grad", None)


def leaf_value(leaf: Any) -> Any:
    """The value of a leaf tensor as NumPy: the primal of a dual number (a forward-mode
    ``%%autodiff`` cell's input), ``None`` when it holds a traced value.

    Examples
    --------
    >>> import wengert as wg
    >>> leaf_value(wg.tensor([1.0, 2.0], requires_grad=True))
    array([1., 2.])
    >>> leaf_value(wg.tensor(wg.Dual(np.array([1.5]), np.array([1.0]))))
    array([1.5])
    """
    value = getattr(leaf, "_value", None)
    if type(value) is Dual:
        while type(value) is Dual:
            value = value.primal
        return np.asarray(value) if isinstance(value, (np.ndarray, np.generic, float)) \
            else None
    try:
        return leaf.numpy()
    except (TypeError, AttributeError):
        return None


def leaf_requires_grad_text(leaf: Any) -> str:
    """``True`` for a leaf that requires grad, ``watched`` for one a gradient tape
    watches (a variable or ``tape.watch(x)``).

    Examples
    --------
    >>> import wengert as wg
    >>> leaf_requires_grad_text(wg.tensor(1.0, requires_grad=True))
    'True'
    >>> leaf_requires_grad_text(wg.Variable(1.0))
    'watched'
    """
    return "True" if getattr(leaf, "requires_grad", False) else "watched"


# -- subjects ------------------------------------------------------------------------------


def as_tape(target: Any) -> Tape:
    """The tape behind ``target``.

    Parameters
    ----------
    target : Tensor, GradientTape, Tape, or an ``%%autodiff`` result
        A tensor gives the equations recorded behind it (``wg.tape_of``), a
        gradient tape the equations it recorded.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> len(as_tape(x * x + 1.0))
    2
    """
    if isinstance(target, Tape):
        return target
    if isinstance(target, Tensor):
        return tape_of(target)
    if isinstance(target, GradientTape):
        tape = target.recorded
        if not len(tape) and target.state == "used":
            raise RuntimeError(
                "this non-persistent GradientTape let go of what it recorded when its "
                "gradient was computed, so there is nothing to show. Pass the target "
                "instead (wg.explore(z)), use GradientTape(persistent=True), or compute the "
                "gradient in the view-keeping mode (%load_ext wengert, or inside "
                "wg.keep_values()), where the tape keeps its equations for the views."
            )
        return tape
    if isinstance(target, Graph):
        raise TypeError("this view shows a recorded tape; a traced graph (wg.trace) has no "
                        "recorded values: draw it with wg.draw(graph) or list it with "
                        "graph._repr_html_()")
    check = getattr(target, "changed_constants", None)
    if callable(check):  # an %%autodiff result: no value of a constant changed since
        check()
    tape = getattr(target, "tape", None)
    if isinstance(tape, Tape):
        return tape
    raise TypeError(
        "expected a tensor, a GradientTape, a tape (wg.tape_of(y)), an %%autodiff result "
        "or (for wg.draw, the listings and memory_plot) a traced graph (wg.trace), "
        f"got {type(target).__name__}. To look at a computation, make its inputs tensors "
        "that require grad (wg.tensor(x, requires_grad=True)) and pass the result."
    )


@dataclass(frozen=True)
class Subject:
    """What a view shows: a read tape (with the user's ``names`` and the ``adjoints`` of a
    backward pass, when known) or a traced graph."""

    ir: Tape | Graph
    names: Mapping[NameKey, str] | None = None
    adjoints: Mapping[Any, Any] | None = None

    @property
    def tape(self) -> Tape | None:
        """The tape, ``None`` for a graph."""
        return self.ir if isinstance(self.ir, Tape) else None


def as_subject(target: Any, *, names: Mapping[NameKey, str] | None = None,
               adjoints: Mapping[Any, Any] | None = None) -> Subject:
    """What every view shows of ``target``: a tensor, a ``GradientTape``, a tape, an
    ``%%autodiff`` result (its ``names`` and ``adjoints`` used unless given) or a traced
    graph. A tape's adjoints are, unless given, the ones the view-keeping mode kept of a
    complete backward pass from its output (:func:`kept_adjoints`).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> len(as_subject(x * x + 1.0).ir), as_subject(wg.trace(lambda x: x * x, 2.0)).tape
    (2, None)
    """
    if isinstance(target, Subject):
        return target
    if isinstance(target, Graph):
        return Subject(target)
    tape = as_tape(target)
    if names is None:
        names = getattr(target, "names", None)
    if adjoints is None:
        adjoints = getattr(target, "adjoints", None)
    if adjoints is None:
        adjoints = swept_adjoints(tape, target.last_sweep) \
            if isinstance(target, GradientTape) else kept_adjoints(tape)
    return Subject(tape, names, adjoints)


def kept_adjoints(tape: Tape) -> dict[str, Any] | None:
    """The cotangent each variable received in the sweep ``backward()`` ran from the
    tape's output, as the view-keeping mode kept it (variable name -> value, every output
    of a decomposition its own; after its hooks, as its rule used it); ``None`` when no
    complete sweep from that output was kept. Variables the sweep did not reach have no
    entry; leaves keep showing their ``.grad``.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values():
    ...     x = wg.tensor(2.0, requires_grad=True)
    ...     y = x * x + 1.0
    ...     y.backward()
    >>> kept_adjoints(wg.tape_of(y))
    {'t1': 1.0, 't0': 1.0}
    """
    if len(tape.outputs) != 1:
        return None
    out = tape[tape.outputs[0]]
    record = out.sweep
    if record is None or record.root_seqs != (out.node.seq,):
        return None
    return _step_adjoints(tape, record)


def _step_adjoints(tape: Tape, record: Any) -> dict[str, Any] | None:
    """Variable name -> the cotangent it received in ``record``'s steps; ``None`` when
    the sweep did not finish or its values were released."""
    if record.released is not None or not record.complete:
        return None
    name = {node.seq: v.name for eq in tape for node, v in zip(eq.nodes, eq.outs)}
    return {name[step.seq]: step.g for step in record.steps if step.seq in name}


def swept_adjoints(tape: Tape, record: Any) -> dict[str, Any] | None:
    """The cotangent each variable of ``tape`` received in the kept sweep ``record`` (a
    :class:`~wengert.core.kept.SweepRecord`: a ``GradientTape.gradient`` call's), its leaves
    included (``"x0"``: what the call returned for it, before fitting it to the leaf's
    dtype); ``None`` without a record, or when the sweep did not finish or its values
    were released.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values():
    ...     x = wg.tensor(2.0)
    ...     with wg.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = x * x + 1.0
    ...     dy = tape.gradient(y, x)
    >>> swept_adjoints(tape.recorded, tape.last_sweep)
    {'t1': 1.0, 't0': 1.0, 'x0': 4.0}
    """
    adjoints = None if record is None else _step_adjoints(tape, record)
    if adjoints is not None:
        for i, leaf in enumerate(tape.leaves):
            kept = record.leaf(leaf)
            if kept is not None:
                adjoints[f"x{i}"] = kept.ct
    return adjoints


def atom(v: Var | Literal) -> str:
    """An input as a formula reads it: a name, a number (``2``), ``array(f64[3])``.

    Examples
    --------
    >>> atom(Literal(2.0)), atom(Literal(np.ones(3))), atom(Literal(None))
    ('2', 'array(f64[3])', 'const')
    """
    if type(v) is Var:
        return v.name
    return constant_text(v.value) if np.ndim(v.value) == 0 else literal_text(v.value)


# -- what a tape knows, by variable ---------------------------------------------------------


@dataclass
class Known:
    """Annotations of a drawing, by variable: what a tape knows beyond the IR (empty for a
    traced graph).

    ``names`` the user's name shown for a variable; ``values`` the value it held;
    ``grads`` its gradient and the word it is shown with (``"grad"`` for an adjoint of the
    sweep, ``".grad"`` for a leaf's own); ``notes`` grey lines under it (written in place,
    watched); ``constants`` the user's names of literals, by (equation index, input
    position); ``unreached`` the outputs of a decomposition the sweep reached through
    its other outputs only (they received no cotangent).
    """

    names: dict[Var, str] = field(default_factory=dict)
    values: dict[Var, Any] = field(default_factory=dict)
    grads: dict[Var, tuple[str, Any]] = field(default_factory=dict)
    notes: dict[Var, list[str]] = field(default_factory=dict)
    constants: dict[tuple[int, int], str] = field(default_factory=dict)
    unreached: set[Var] = field(default_factory=set)

    def name(self, v: Var | Literal, k: int = -1, p: int = -1) -> str:
        """How input ``p`` of equation ``k`` (or a variable) reads in a formula."""
        if type(v) is Var:
            return self.names.get(v, v.name)
        return self.constants.get((k, p)) or atom(v)


def tape_known(tape: Tape, names: Mapping[NameKey, str] | None = None,
               adjoints: Mapping[Any, Any] | None = None) -> Known:
    """What a tape's drawing shows beyond its equations: user names, kept values,
    adjoints (by variable and leaf name, else a leaf's ``.grad``) and notes.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(3.0, requires_grad=True)
    >>> tape = wg.tape_of(w * w)
    >>> known = tape_known(tape, {"x0": "w"}, {"t0": 1.0, "x0": 6.0})
    >>> sorted(known.names.values()), [g for g in known.grads.values()]
    (['w'], [('grad', 6.0), ('grad', 1.0)])
    """
    table = TapeNames(tape, names)
    known = Known()
    changed = tape.changed_leaves()
    for v in tape.inputs:
        i = v.index
        leaf = tape.leaves[i]
        user = table.user_leaf(i)
        if user is not None:
            known.names[v] = user
        if i not in changed:
            known.values[v] = leaf_value(leaf)
        adjoint = adjoint_of_leaf(adjoints, i, user)
        grad = ("grad", adjoint) if adjoint is not None else (".grad", leaf_grad(leaf))
        if grad[1] is not None:
            known.grads[v] = grad
        notes = []
        if i in changed:
            notes.append("changed in place since the equations used it")
        if leaf_requires_grad_text(leaf) == "watched":
            notes.append("watched by the tape")
        if notes:
            known.notes[v] = notes
    for eq in tape:
        for v in eq.outs:
            shown = table.var(v)
            if shown != v.name:
                known.names[v] = shown
            if v.value is not None:
                known.values[v] = v.value
        found = adjoints_of_equation(adjoints, eq)
        for v, adjoint in zip(eq.outs, found):
            if adjoint is not None:
                known.grads[v] = ("grad", adjoint)
            elif len(found) > 1 and any(g is not None for g in found):
                known.unreached.add(v)  # its cotangent was never computed: no number
        if eq.value is None and eq.written:
            known.notes[eq.out] = ["written in place since"]
        for p, inp in enumerate(eq.ins):
            if type(inp) is Literal:
                user = table.constant(eq.index, p)
                if user is not None:
                    known.constants[(eq.index, p)] = user
    return known
