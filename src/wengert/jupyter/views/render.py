"""Rich reprs and the tape table: pure functions from wengert objects to text and HTML.

The tape table lists a tape's leaves (name, shape, dtype, whether it requires grad, its
value and ``.grad``) and its equations in execution order: index, op (symbol and name),
where each input came from, output shape and dtype, value, the adjoint after a backward
pass (when given) and the user's line of code (when recorded). Long tapes show their first
and last rows around a "… N more equations …" row. Cards for a tensor, a variable, a dual
number and a gradient tape use the same styles. Everything here reads tapes through the
public tape API only and returns strings: no IPython, no ids, no memory addresses, so the
same computation always renders to the same text.

:func:`register` (run on import) makes these the HTML reprs of tensors, variables, dual
numbers, gradient tapes and tapes (see :mod:`wengert.core.display`).

Names
-----
Leaves are ``x0, x1, …`` and equations ``t0, t1, …`` by default (``Input.name``); a
variable shows its own name (``wg.Variable(1.0, name="w")``). A ``names`` mapping gives the
user's names: keys are tape names (``"x0"``, ``"t3"``), leaf indices (``0`` for ``x0``) or
``(equation, input position)`` pairs for constants; :func:`names_from_namespace` builds one
from a namespace (the variables of a notebook cell). An ``adjoints`` mapping holds
cotangents by equation index (``3`` or ``"t3"``) and leaf name (``"x0"`` or the user's
name); :class:`AdjointCollector` records one during a backward pass.

Examples
--------
>>> import wengert as wg
>>> w = wg.tensor(0.8, requires_grad=True)
>>> with wg.keep_values():
...     y = w * 1.5 + 0.5
>>> print(tape_text(wg.tape_of(y), names={"x0": "w"}))
leaf    shape   dtype    requires_grad  value  .grad
w (x0)  scalar  float64  True           0.8    —
<BLANKLINE>
#   op          inputs   shape   dtype    value
t0  * multiply  w, 1.5   scalar  float64  1.2
t1  + add       t0, 0.5  scalar  float64  1.7    ◀ output
"""

from __future__ import annotations

import contextlib
import html
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from wengert.core.display import register_html
from wengert.core.equations import Equation, Tape
from wengert.core.formatting import constant_text, shape_text, value_text
from wengert.core.levels import USER_TAG
from wengert.core.source import SourceLine
from wengert.core.sweep import SweepObserver
from wengert.forward.dual import Dual
from wengert.reverse.gradient_tape import GradientTape, Variable
from wengert.reverse.tensor import Tensor

__all__ = [
    "tape_text",
    "tape_html",
    "tensor_html",
    "variable_html",
    "dual_html",
    "gradient_tape_html",
    "register",
    "TapeNames",
    "names_from_namespace",
    "AdjointCollector",
    "adjoint_of_equation",
    "adjoint_of_leaf",
    "value_text",
    "source_text",
    "constant_text",
    "shown_rows",
    "is_notebook_cell",
    "value_shape_dtype",
    "leaf_grad",
    "leaf_value",
    "leaf_requires_grad_text",
    "equation_cells",
    "leaf_cells",
    "tape_sections_html",
    "epsilon_text",
    "NameKey",
    "STYLE",
    "COLUMN_HELP",
    "MAX_ROWS",
]

#: Rows of a tape table shown before it is shortened (first half, "… N more …", last half).
MAX_ROWS = 40
#: Characters of a line of code shown in a table cell.
SOURCE_WIDTH = 60

# -- values ---------------------------------------------------------------------------------


def source_text(line: SourceLine | None, width: int = SOURCE_WIDTH) -> str:
    """The user's line of code as a table shows it: ``line 4: y = x * x`` for a notebook
    cell, ``file.py:4  y = x * x`` for a file, ``f · …`` inside a function ``f``; at most
    ``width`` characters (``…`` when cut), ``""`` when no line was recorded.

    Examples
    --------
    >>> source_text(SourceLine("/tmp/ipykernel_7/123.py", 4, "<module>", "y = x * x"))
    'line 4: y = x * x'
    >>> source_text(SourceLine("/home/me/model.py", 12, "loss", "return (p - t) ** 2"))
    'loss · model.py:12  return (p - t) ** 2'
    """
    if line is None:
        return ""
    text = f"line {line.lineno}: {line.text}" if is_notebook_cell(line.filename) \
        else line.short()
    if line.function not in ("<module>", ""):
        text = f"{line.function} · {text}"
    return text if len(text) <= width else text[: width - 1] + "…"


def is_notebook_cell(filename: str) -> bool:
    """Whether ``filename`` names a notebook cell (IPython's ``ipykernel_…`` files,
    ``<ipython-input-…>``, ``<cell …>``) rather than a file the user can open.

    Examples
    --------
    >>> is_notebook_cell("/tmp/ipykernel_41/2740.py"), is_notebook_cell("/src/model.py")
    (True, False)
    """
    return "ipykernel_" in filename or filename.startswith(("<ipython-input", "<cell", "<string"))


# -- names ----------------------------------------------------------------------------------

NameKey = int | str | tuple[int, int]


class TapeNames:
    """The names a tape's values are shown with.

    Parameters
    ----------
    tape : Tape
        The tape.
    names : mapping, optional
        User names: keys ``"x0"`` or ``0`` (leaf 0), ``"t3"`` (equation 3), or
        ``(3, 1)`` (the constant that is input 1 of equation 3). Without one, a leaf
        that is a ``wg.Variable`` with its own name shows that name.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(1.0, requires_grad=True)
    >>> tape = wg.tape_of(w * 2.0)
    >>> names = TapeNames(tape, {"x0": "w", "t0": "y"})
    >>> names.leaf(0), names.equation(0), names.input(tape[0], 1)
    ('w', 'y', '2')
    """

    def __init__(self, tape: Tape, names: Mapping[NameKey, str] | None = None) -> None:
        given: dict[str | tuple[int, int], str] = {}
        for key, name in (names or {}).items():
            if isinstance(key, int) and not isinstance(key, bool):
                given[f"x{key}"] = str(name)
            elif isinstance(key, (str, tuple)):
                given[key] = str(name)
        self._given = given
        # the tape's names of the equations' outputs (after a decomposition's several
        # outputs, equation k's is not t{k})
        self._tape = [", ".join(v.name for v in eq.outs) for eq in tape] \
            if any(len(eq.outs) > 1 for eq in tape) else None
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

    def equation(self, k: int) -> str:
        """The name of equation ``k``'s output (the user's, or ``t3``: also when another
        value has the same user name)."""
        name = self._given.get(f"t{k}")
        if name is None or name in self._ambiguous:
            return f"t{k}" if self._tape is None else self._tape[k]
        return name

    def user_equation(self, k: int) -> str | None:
        """The user's name of equation ``k``'s output, ``None`` when it has none."""
        return self._given.get(f"t{k}")

    def constant(self, k: int, position: int) -> str | None:
        """The user's name of the constant input ``position`` of equation ``k``."""
        return self._given.get((k, position))

    def input(self, eq: Equation, position: int) -> str:
        """How input ``position`` of ``eq`` reads: a name, or a constant's value."""
        inp = eq.inputs[position]
        if inp.source == "equation":
            # (one output of a decomposition: its own name)
            return self.equation(inp.index) if self._tape is None else inp.name
        if inp.source == "leaf":
            return self.leaf(inp.index)
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
    # (a decomposition's outputs are several values of one equation: not named here)
    equation_of = {id(eq.node): eq.index for eq in tape if len(eq.outs) == 1}
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
            if grad_fn is not None and id(grad_fn.node) in equation_of:
                keys.append(f"t{equation_of[id(grad_fn.node)]}")
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

    ``collector.adjoints`` maps equation indices (``3``) and leaf names (``"x0"``) to
    cotangents, the format :func:`tape_text`, :func:`tape_html` and ``tape_dot`` take.
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
    {1: 1.0, 0: 1.0, 'x0': 6.0}
    """

    def __init__(self, tape: Tape) -> None:
        # (one cotangent per equation: a decomposition's several outputs have none here)
        self._equation_of = {id(eq.node): eq.index for eq in tape if len(eq.outs) == 1}
        self._leaf_of = {id(leaf): i for i, leaf in enumerate(tape.leaves)}
        self.adjoints: dict[int | str, Any] = {}

    def step(self, node: Any, g: Any, sent: list[tuple[int, Any, Any]]) -> None:
        k = self._equation_of.get(id(node))
        if k is not None:
            self.adjoints[k] = g

    def end(self, leaves: list[tuple[Any, Any]]) -> None:
        for leaf, ct in leaves:
            i = self._leaf_of.get(id(leaf))
            if i is not None:
                self.adjoints[f"x{i}"] = ct


def adjoint_of_equation(adjoints: Mapping[Any, Any] | None, k: int) -> Any:
    """The adjoint of equation ``k`` in ``adjoints`` (key ``k`` or ``"t{k}"``), or None.

    Examples
    --------
    >>> adjoint_of_equation({3: 2.5}, 3), adjoint_of_equation({"t3": 2.5}, 3)
    (2.5, 2.5)
    """
    if not adjoints:
        return None
    found = adjoints.get(k)
    return adjoints.get(f"t{k}") if found is None else found


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
    """The value of a leaf tensor as NumPy (``None`` when it holds a traced value).

    Examples
    --------
    >>> import wengert as wg
    >>> leaf_value(wg.tensor([1.0, 2.0], requires_grad=True))
    array([1., 2.])
    """
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


# -- rows -----------------------------------------------------------------------------------


def shown_rows(n: int, max_rows: int) -> tuple[range, int, range]:
    """Which of ``n`` rows a table shows: the first ones, how many are left out, the last.

    Examples
    --------
    >>> shown_rows(5, 40)
    (range(0, 5), 0, range(5, 5))
    >>> shown_rows(1000, 10)
    (range(0, 5), 990, range(995, 1000))
    """
    if max_rows <= 0 or n <= max_rows:
        return range(n), 0, range(n, n)
    head = (max_rows + 1) // 2
    tail = max_rows - head
    return range(head), n - head - tail, range(n - tail, n)


def equation_cells(eq: Equation, names: TapeNames, adjoints: Mapping[Any, Any] | None,
                   ) -> dict[str, str]:
    """The text of each cell of one equation's row.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> tape = wg.tape_of(x * 3.0)
    >>> cells = equation_cells(tape[0], TapeNames(tape), {0: 1.0})
    >>> cells["op text"], cells["inputs"], cells["value"], cells["adjoint"]
    ('* multiply', 'x0, 3', '6', '1')
    """
    shape, dtype = eq.shape, eq.dtype
    if eq.value is not None:
        value = value_text(eq.value)
        if shape is None:  # freed by backward(), but kept by wg.keep_values()
            shape, dtype = value_shape_dtype(eq.value)
    elif eq.written:
        value = "written in place since"
    elif shape is None:
        value = "freed by backward()"
    else:
        value = "not kept"
    adjoint = adjoint_of_equation(adjoints, eq.index)
    if len(eq.outs) > 1:  # a decomposition: its outputs in one row, one cell each
        cells = [equation_cells(eq.replace(out=v, nodes=(n,)), names, None)
                 for v, n in zip(eq.outs, eq.nodes)]
        row = {k: " · ".join(c[k] for c in cells) for k in ("#", "shape", "dtype", "value")}
        return {**cells[0], **row, "symbol": eq.primitive, "op": eq.primitive,
                "op text": eq.primitive, "adjoint": "—"}
    return {
        "#": eq.name,
        "name": names.user_equation(eq.index) or "",
        "symbol": eq.op.symbol,
        "op": eq.op.name,
        "op text": eq.op.name if eq.op.symbol == eq.op.name else f"{eq.op.symbol} {eq.op.name}",
        "inputs": ", ".join(names.input(eq, p) for p in range(len(eq.inputs))),
        "shape": shape_text(shape),
        "dtype": "?" if dtype is None else str(dtype),
        "value": value,
        "adjoint": "—" if adjoint is None else value_text(adjoint),
        "line": source_text(eq.source),
    }


def leaf_cells(tape: Tape, i: int, names: TapeNames, adjoints: Mapping[Any, Any] | None,
               changed: set[int] | None = None) -> dict[str, str]:
    """The text of each cell of leaf ``i``'s row (``changed``: the leaves changed in place
    since the equations used them, :meth:`~wengert.core.equations.Tape.changed_leaves`; their
    value now is said to be another than the one the equations used).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> tape = wg.tape_of(x * 3.0)
    >>> cells = leaf_cells(tape, 0, TapeNames(tape, {"x0": "x"}), None)
    >>> cells["leaf"], cells["shape"], cells["requires_grad"], cells["value"], cells[".grad"]
    ('x (x0)', 'scalar', 'True', '2', '—')
    """
    leaf = tape.leaves[i]
    grad = leaf_grad(leaf)
    adjoint = adjoint_of_leaf(adjoints, i, names.user_leaf(i))
    shape = getattr(leaf, "shape", None)
    dtype = getattr(leaf, "dtype", None)
    user = names.user_leaf(i)
    return {
        "leaf": f"x{i}" if user is None else user if user.endswith(f"(x{i})")
        else f"{user} (x{i})",
        "name": names.leaf(i),
        "shape": shape_text(shape),
        "dtype": "?" if dtype is None else str(dtype),
        "requires_grad": leaf_requires_grad_text(leaf),
        "value": value_text(leaf_value(leaf)) + (
            " now (changed in place since the equations used it)"
            if changed is not None and i in changed else ""),
        ".grad": "—" if grad is None else value_text(grad),
        "adjoint": "—" if adjoint is None else value_text(adjoint),
    }


# -- text -----------------------------------------------------------------------------------


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str] | str]) -> list[str]:
    """Aligned columns; a row given as a plain string spans the table (a gap row)."""
    widths = [len(h) for h in headers]
    for row in rows:
        if not isinstance(row, str):
            widths = [max(w, len(c)) for w, c in zip(widths, row)]
    lines = []
    for row in [headers, *rows]:
        if isinstance(row, str):
            lines.append(row)
        else:
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return lines


def tape_text(tape: Tape, adjoints: Mapping[Any, Any] | None = None, *,
              names: Mapping[NameKey, str] | None = None, max_rows: int = MAX_ROWS) -> str:
    """The tape table as plain text: its leaves, then its equations.

    Parameters
    ----------
    tape : Tape
        From ``wg.tape_of(y)``, ``GradientTape.recorded`` or ``as_tape``.
    adjoints : mapping, optional
        Cotangents after a backward pass, by equation index and leaf name (see
        :class:`AdjointCollector`); adds an ``adjoint`` column.
    names : mapping, optional
        User names (see :class:`TapeNames`).
    max_rows : int
        Longer lists show their first and last rows around a "… N more …" row
        (``0``: show all).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> print(tape_text(wg.tape_of(np.sin(x).sum())))
    leaf  shape  dtype    requires_grad  value   .grad
    x0    2      float64  True           [1, 2]  —
    <BLANKLINE>
    #   op     inputs  shape   dtype    value
    t0  sin    x0      2       float64  [0.8415, 0.9093]
    t1  Σ sum  t0      scalar  float64  1.751             ◀ output
    """
    table_names = TapeNames(tape, names)
    with_adjoints = bool(adjoints)
    with_lines = any(eq.source is not None for eq in tape)
    blocks = []
    if tape.leaves:
        headers = ["leaf", "shape", "dtype", "requires_grad", "value", ".grad"]
        if with_adjoints:
            headers.append("adjoint")
        head, hidden, tail = shown_rows(len(tape.leaves), max_rows)
        rows: list[Sequence[str] | str] = []
        changed = tape.changed_leaves()
        for i in head:
            cells = leaf_cells(tape, i, table_names, adjoints, changed)
            rows.append([cells[h] for h in headers])
        if hidden:
            rows.append(f"… {hidden:,} more leaves …")
        for i in tail:
            cells = leaf_cells(tape, i, table_names, adjoints, changed)
            rows.append([cells[h] for h in headers])
        blocks.append("\n".join(_text_table(headers, rows)))
    if len(tape) == 0:
        blocks.append("(no equations recorded)")
    else:
        outputs = set(tape.outputs)
        headers = ["#", "op", "inputs", "shape", "dtype", "value"]
        if with_adjoints:
            headers.append("adjoint")
        rows = []
        head, hidden, tail = shown_rows(len(tape), max_rows)

        def row(k: int) -> list[str]:
            cells = equation_cells(tape[k], table_names, adjoints)
            name = cells["#"] + (f" ({cells['name']})" if cells["name"] else "")
            out = [name, cells["op text"]]
            out += [cells[h] for h in headers[2:]]
            notes = []
            if k in outputs:
                notes.append("◀ output")
            if with_lines and cells["line"]:
                notes.append(cells["line"])
            return out + ["  ".join(notes)]

        for k in head:
            rows.append(row(k))
        if hidden:
            rows.append(f"… {hidden:,} more equations …")
        for k in tail:
            rows.append(row(k))
        blocks.append("\n".join(_text_table([*headers, "line" if with_lines else ""], rows)))
    return "\n\n".join(blocks)


# -- HTML -----------------------------------------------------------------------------------

#: The styles of every card and table, scoped by the ``wg-`` class prefix. Colours come
#: from JupyterLab's theme variables (with light-theme fallbacks); the leaf kinds are told
#: apart by border style as well as hue (solid double blue ring / grey dashed / plain).
STYLE = """<style>
.wg-card{display:inline-block;box-sizing:border-box;max-width:100%;overflow-x:auto;
 margin:2px 0;padding:6px 10px 8px;border:1px solid var(--jp-border-color1,#bdbdbd);
 border-radius:6px;background:var(--jp-layout-color0,#fff);
 color:var(--jp-content-font-color1,#1f1f1f);line-height:1.45;text-align:left;
 font:12px/1.45 var(--jp-ui-font-family,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif)}
.wg-card .wg-head{display:flex;flex-wrap:wrap;align-items:center;gap:4px 8px;margin:0 0 4px}
.wg-card .wg-title{font-weight:600;font-size:13px}
.wg-card .wg-meta,.wg-card .wg-dim{color:var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-code,.wg-card .wg-table,.wg-card .wg-kv td{
 font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace)}
.wg-card .wg-chip{display:inline-block;padding:0 7px;border-radius:10px;font-size:11px;
 line-height:17px;white-space:nowrap;border:1px solid var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-rg{border:3px double #2563eb;font-weight:600}
.wg-card .wg-const{border:1px dashed #8a8a8a;color:var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-result{border:1px solid var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-state{border:1px solid var(--jp-content-font-color3,#9aa0a6)}
.wg-card .wg-section{margin:8px 0 2px;font-weight:600;font-size:11px;letter-spacing:.04em;
 text-transform:uppercase;color:var(--jp-content-font-color2,#5f6368)}
.wg-card table.wg-table,.wg-card table.wg-kv{border-collapse:collapse;border:none;
 margin:0;font-size:11.5px;table-layout:auto}
.wg-card .wg-table th,.wg-card .wg-table td,.wg-card .wg-kv th,.wg-card .wg-kv td{
 padding:1px 10px 1px 0;text-align:left;vertical-align:top;white-space:nowrap;
 line-height:1.45;border:none;max-width:none;background:none}
.wg-card .wg-table th,.wg-card .wg-kv th{font-weight:600;
 color:var(--jp-content-font-color2,#5f6368);font-family:var(--jp-ui-font-family,sans-serif)}
.wg-card .wg-table thead th{border-bottom:1px solid var(--jp-border-color1,#bdbdbd)}
.wg-card .wg-table tbody tr,.wg-card .wg-kv tbody tr:nth-child(n){background:none}
.wg-card .wg-table tbody tr:nth-child(even){background:rgba(127,127,127,.1)}
.wg-card .wg-table tbody tr:hover{background:rgba(66,165,245,.18)}
.wg-card .wg-table td.wg-src{white-space:pre;color:var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-sym{display:inline-block;min-width:1.7em;font-weight:700}
.wg-card .wg-name{font-weight:600}
.wg-card .wg-user{color:var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-adj{color:#a34a00;font-style:italic}
body[data-jp-theme-light="false"] .wg-card .wg-adj{color:#ffb870}
.wg-card .wg-in-rg{padding:0 3px;border-radius:3px;box-shadow:inset 0 0 0 1.5px #2563eb}
body[data-jp-theme-light="false"] .wg-card .wg-rg{border-color:#6ea8fe}
body[data-jp-theme-light="false"] .wg-card .wg-in-rg{box-shadow:inset 0 0 0 1.5px #6ea8fe}
.wg-card .wg-in-const{color:var(--jp-content-font-color2,#5f6368);font-style:italic}
.wg-card tr.wg-out td{font-weight:600}
.wg-card tr.wg-gap td{text-align:center;font-style:italic;
 color:var(--jp-content-font-color2,#5f6368);background:none}
.wg-card .wg-eps{font-style:italic}
</style>"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _chip(text: str, kind: str) -> str:
    # The spaces around it keep words apart where the styles are stripped (an untrusted
    # notebook); inside the head's flex box they take no room.
    return f' <span class="wg-chip wg-{kind}">{_e(text)}</span> '


def _gradient_html(text: str) -> str:
    """A gradient's cell: coloured and italic, or a plain dash when there is none."""
    if text == "—":
        return '<span class="wg-dim">—</span>'
    return f'<span class="wg-adj">{_e(text)}</span>'


def _input_html(eq: Equation, position: int, names: TapeNames) -> str:
    inp = eq.inputs[position]
    text = _e(names.input(eq, position))
    if inp.source == "leaf":
        return f'<span class="wg-in-rg">{text}</span>'
    if inp.source == "constant":
        return f'<span class="wg-in-const">{text}</span>'
    return text


#: What a column means, shown when the pointer rests on its header.
COLUMN_HELP = {
    "adjoint": "the gradient of the output with respect to this value (its cotangent), "
               "from the backward pass",
    ".grad": "the gradient accumulated into this leaf by backward()",
    "requires_grad": "True: a leaf you made with requires_grad=True; watched: a variable "
                     "or tensor a GradientTape watches",
    "value": "the value computed in the forward pass (not kept: the tape did not keep it; "
             "record inside wg.keep_values() to see it; written in place since: an in-place "
             "operation wrote another value into its memory afterwards)",
    "line": "the line of your code that recorded the equation",
    "inputs": "where each input comes from: an earlier equation (t3), a leaf, or a constant",
}


def _html_table(headers: Sequence[str], rows: Iterable[str]) -> str:
    head = "".join(
        f'<th title="{_e(COLUMN_HELP[h])}">{_e(h)}</th>' if h in COLUMN_HELP
        else f"<th>{_e(h)}</th>" for h in headers)
    return (f'<table class="wg-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _gap_row(text: str, span: int) -> str:
    return f'<tr class="wg-gap"><td colspan="{span}">{_e(text)}</td></tr>'


def _leaves_table(tape: Tape, names: TapeNames, adjoints: Mapping[Any, Any] | None,
                  max_rows: int) -> str:
    headers = ["leaf", "shape", "dtype", "requires_grad", "value", ".grad"]
    if adjoints:
        headers.append("adjoint")

    changed = tape.changed_leaves()

    def row(i: int) -> str:
        c = leaf_cells(tape, i, names, adjoints, changed)
        user = names.user_leaf(i)
        shown = user.removesuffix(f" (x{i})") if user else f"x{i}"
        label = (f'<span class="wg-in-rg wg-name">{_e(shown)}</span>'
                 + (f' <span class="wg-user">x{i}</span>' if user else ""))
        cells = [label, _e(c["shape"]), _e(c["dtype"]), _e(c["requires_grad"]), _e(c["value"]),
                 _gradient_html(c[".grad"])]
        if adjoints:
            cells.append(_gradient_html(c["adjoint"]))
        return "<tr>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>"

    head, hidden, tail = shown_rows(len(tape.leaves), max_rows)
    rows = [row(i) for i in head]
    if hidden:
        rows.append(_gap_row(f"… {hidden:,} more leaves …", len(headers)))
    rows += [row(i) for i in tail]
    return _html_table(headers, rows)


def _equations_table(tape: Tape, names: TapeNames, adjoints: Mapping[Any, Any] | None,
                     max_rows: int) -> str:
    with_lines = any(eq.source is not None for eq in tape)
    headers = ["#", "op", "inputs", "shape", "dtype", "value"]
    if adjoints:
        headers.append("adjoint")
    if with_lines:
        headers.append("line")
    outputs = set(tape.outputs)

    def row(k: int) -> str:
        eq = tape[k]
        c = equation_cells(eq, names, adjoints)
        label = f'<span class="wg-name">{_e(c["#"])}</span>'
        if c["name"]:
            label += f' <span class="wg-user">{_e(c["name"])}</span>'
        if k in outputs:
            label += ' <span class="wg-dim" title="output">◀</span>'
        cells = [
            label,
            (f'<span class="wg-sym">{_e(c["symbol"])}</span>' if c["symbol"] != c["op"] else
             '<span class="wg-sym"></span>') + f' <span class="wg-dim">{_e(c["op"])}</span>',
            ", ".join(_input_html(eq, p, names) for p in range(len(eq.inputs))),
            _e(c["shape"]), _e(c["dtype"]),
            f'<span class="wg-dim">{_e(c["value"])}</span>' if eq.value is None
            else _e(c["value"]),
        ]
        if adjoints:
            cells.append(_gradient_html(c["adjoint"]))
        if with_lines:
            cells.append(_e(c["line"]))
        tds = "".join(f"<td>{x}</td>" for x in cells[:-1])
        last_class = ' class="wg-src"' if with_lines else ""
        tds += f"<td{last_class}>{cells[-1]}</td>"
        row_class = ' class="wg-out"' if k in outputs else ""
        return f"<tr{row_class}>{tds}</tr>"

    head, hidden, tail = shown_rows(len(tape), max_rows)
    rows = [row(k) for k in head]
    if hidden:
        rows.append(_gap_row(f"… {hidden:,} more equations …", len(headers)))
    rows += [row(k) for k in tail]
    return _html_table(headers, rows)


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def tape_sections_html(tape: Tape, adjoints: Mapping[Any, Any] | None = None, *,
                       names: Mapping[NameKey, str] | None = None,
                       max_rows: int = MAX_ROWS) -> str:
    """The leaves and equations tables of a tape, without the card around them (what
    :func:`tape_html` and :func:`gradient_tape_html` put in their cards).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> tape_sections_html(wg.tape_of(x * 3.0)).count("<table")
    2
    """
    table_names = TapeNames(tape, names)
    parts = []
    if tape.leaves:
        parts.append('<div class="wg-section">leaves</div>')
        parts.append(_leaves_table(tape, table_names, adjoints, max_rows))
    parts.append('<div class="wg-section">equations</div>')
    if len(tape):
        parts.append(_equations_table(tape, table_names, adjoints, max_rows))
    else:
        parts.append('<div class="wg-dim">(no equations recorded)</div>')
    return "".join(parts)


def tape_html(tape: Tape, adjoints: Mapping[Any, Any] | None = None, *,
              names: Mapping[NameKey, str] | None = None, max_rows: int = MAX_ROWS) -> str:
    """The tape table as HTML (a card with the leaves and the equations).

    Parameters are those of :func:`tape_text`.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> page = tape_html(wg.tape_of(x * x))
    >>> "multiply" in page and "wg-card" in page
    True
    """
    title = (f'<span class="wg-title">Tape</span> <span class="wg-meta">'
             f'{_count(len(tape), "equation")} · {_count(len(tape.leaves), "leaf")}'
             "</span>").replace("leafs", "leaves")
    if adjoints:
        title += _chip("after backward()", "state")
    return (f'{STYLE}<div class="wg-card wg-tape"><div class="wg-head">{title}</div>'
            f"{tape_sections_html(tape, adjoints, names=names, max_rows=max_rows)}</div>")


def _kv(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="wg-kv"><tbody>{body}</tbody></table>'


def tensor_html(t: Tensor) -> str:
    """A tensor's card: its value, shape and dtype, where it stands in the leaf table
    (leaf that requires grad, result of an op, or constant), its ``grad_fn`` and ``.grad``.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(3.0, requires_grad=True)
    >>> "requires grad" in tensor_html(w), "MultiplyBackward" in tensor_html(w * w)
    (True, True)
    """
    if isinstance(t, Variable):
        return variable_html(t)
    grad_fn = t.grad_fn
    if t.requires_grad and t.is_leaf:
        chip = _chip("leaf · requires grad", "rg")
    elif t.requires_grad:
        chip = _chip("result of an op", "result")
    else:
        chip = _chip("constant", "const")
    meta = f"{shape_text(t.shape)} · {t.dtype}"
    rows = [("value", _e(value_text(t, max_items=8)))]
    if grad_fn is not None:
        op = grad_fn.op
        op_text = op.name if op.symbol == op.name else f"{op.symbol} {op.name}"
        rows.append(("grad_fn", f'{_e(grad_fn.name)} <span class="wg-dim">({_e(op_text)})'
                                "</span>"))
    grad = leaf_grad(t)
    if grad is not None:
        rows.append((".grad", f'<span class="wg-adj">{_e(value_text(grad, max_items=8))}</span>'))
    elif t.requires_grad and t.is_leaf:
        rows.append((".grad", '<span class="wg-dim">None (call backward())</span>'))
    return (f'{STYLE}<div class="wg-card wg-tensor"><div class="wg-head">'
            f'<span class="wg-title">tensor</span>{chip}<span class="wg-meta">{_e(meta)}</span>'
            f"</div>{_kv(rows)}</div>")


def variable_html(v: Variable) -> str:
    """A ``wg.Variable``'s card: name, value, shape and dtype, trainable or not.

    Examples
    --------
    >>> import wengert as wg
    >>> "Variable &#x27;w&#x27;" in variable_html(wg.Variable(1.0, name="w"))
    True
    """
    chip = _chip("trainable · watched by tapes", "rg") if v.trainable \
        else _chip("not trainable", "const")
    meta = f"{shape_text(v.shape)} · {v.dtype}"
    return (f'{STYLE}<div class="wg-card wg-variable"><div class="wg-head">'
            f'<span class="wg-title">Variable {_e(repr(v.name))}</span>{chip}'
            f'<span class="wg-meta">{_e(meta)}</span></div>'
            f'{_kv([("value", _e(value_text(v.numpy(), max_items=8)))])}</div>')


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def epsilon_text(tag: Any) -> str:
    """The infinitesimal of a dual number's tag: ``ε`` for a dual the user made, ``ε₃``
    for one of a transform's perturbation (its order).

    Examples
    --------
    >>> import wengert as wg
    >>> epsilon_text(wg.Dual(1.0, 1.0).tag)
    'ε'
    """
    if tag is USER_TAG:
        return "ε"
    return "ε" + str(getattr(tag, "order", "")).translate(_SUBSCRIPTS)


def dual_html(d: Dual) -> str:
    """A dual number's card: ``primal + tangent·ε``, shape and dtype, and its tag.

    Examples
    --------
    >>> import wengert as wg
    >>> page = dual_html(wg.Dual(2.0, 1.0))
    >>> "2 + 1·ε" in page
    True
    """
    eps = epsilon_text(d.tag)
    primal, tangent = value_text(d.primal, max_items=8), value_text(d.tangent, max_items=8)
    meta = f"{shape_text(d.shape)} · {d.dtype}"
    rows = []
    if d.shape == ():
        formula = f"{primal} + {tangent}·{eps}"
        rows.append(("value", f'<span class="wg-code">{_e(formula)}</span>'))
    rows += [("primal", _e(primal)), ("tangent", f'<span class="wg-adj">{_e(tangent)}</span>')]
    if d.tag is USER_TAG:
        tag = "ε: made by you (wg.Dual), ε² = 0"
    else:
        name = getattr(d.tag, "name", "jvp")
        state = "" if getattr(d.tag, "active", True) else ", transform finished"
        tag = f"{eps}: perturbation of {name}{state}"
    rows.append(("tag", f'<span class="wg-eps">{_e(tag)}</span>'))
    return (f'{STYLE}<div class="wg-card wg-dual"><div class="wg-head">'
            f'<span class="wg-title">Dual</span> <span class="wg-meta">{_e(meta)}</span>'
            f"</div>{_kv(rows)}</div>")




def gradient_tape_html(tape: GradientTape, *, max_rows: int = MAX_ROWS) -> str:
    """A gradient tape's card: its state, what it watches, the equations it recorded.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.Variable(2.0, name="w")
    >>> with wg.GradientTape() as g:
    ...     y = w * w
    >>> page = gradient_tape_html(g)
    >>> "closed" in page and "multiply" in page
    True
    """
    recorded = tape.recorded
    chips = _chip(tape.state, "state")
    if tape.persistent:
        chips += _chip("persistent", "state")
    meta = f"{_count(len(recorded), 'equation')}"
    watched = tape.watched_variables()
    rows = []
    if watched:
        names = ", ".join(
            f'<span class="wg-in-rg">{_e(v.name)}</span>' for v in watched)
        rows.append(("watched variables", names))
    return (f'{STYLE}<div class="wg-card wg-gradient-tape"><div class="wg-head">'
            f'<span class="wg-title">GradientTape</span>{chips}'
            f'<span class="wg-meta">{_e(meta)}</span></div>'
            f'{_kv(rows) if rows else ""}'
            f"{tape_sections_html(recorded, max_rows=max_rows)}</div>")


def register() -> None:
    """Make these renderers the HTML reprs of tensors, variables, dual numbers, gradient
    tapes and tapes (called when this module is imported).

    Examples
    --------
    >>> import wengert as wg
    >>> register()
    >>> x = wg.tensor(1.0)
    >>> x._repr_html_() == tensor_html(x)
    True
    """
    register_html(Tensor, tensor_html)
    register_html(Variable, variable_html)
    register_html(Dual, dual_html)
    register_html(GradientTape, gradient_tape_html)
    register_html(Tape, tape_html)


register()
