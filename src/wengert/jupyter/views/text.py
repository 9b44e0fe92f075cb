"""The text medium: a tape's table and a pass's diff as plain text (stable, no ids, no
memory addresses), and the cell texts the HTML tables share.

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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wengert.core.equations import Equation, Tape
from wengert.core.formatting import shape_text, value_text
from wengert.graph.ir import Var
from wengert.graph.program import Graph
from wengert.jupyter.views.diff import DiffRow, atom_text, count_text, diff_graphs, returns_text
from wengert.jupyter.views.subject import (
    NameKey,
    TapeNames,
    adjoint_of_leaf,
    adjoints_of_equation,
    leaf_grad,
    leaf_requires_grad_text,
    leaf_value,
    source_text,
    value_shape_dtype,
)

__all__ = ["tape_text", "passes_text", "shown_rows", "equation_cells", "leaf_cells",
           "selected_rows", "gap_text", "MAX_ROWS", "CONTEXT"]

#: Rows of a table shown before it is shortened (first half, "… N more …", last half).
MAX_ROWS = 40
#: Unchanged equations shown around each change of a diff.
CONTEXT = 2
_TEXT_MARKS = {"same": " ", "removed": "-", "added": "+", "changed": "~"}


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
    >>> cells = equation_cells(tape[0], TapeNames(tape), {"t0": 1.0})
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
    adjoint = _adjoint_cell(adjoints_of_equation(adjoints, eq))
    op = eq.primitive  # a decomposition's parts read as one: eigh
    if len(eq.outs) > 1:  # the parts of one decomposition: each part's shape and value
        shape_cell = ", ".join(shape_text(v.shape) for v in eq.outs)
        if eq.value is not None:
            value = "; ".join("?" if v.value is None else value_text(v.value) for v in eq.outs)
    else:
        shape_cell = shape_text(shape)
    several = len(eq.outs) > 1
    symbol = op if several else eq.op.symbol  # a part's symbol (λ) is not the whole's
    users = [names.user_var(v) or "" for v in eq.outs]
    return {
        "#": ", ".join(v.name for v in eq.outs),
        "name": ", ".join(u or "·" for u in users) if several and any(users) else users[0],
        "symbol": symbol,
        "op": op,
        "op text": op if symbol == op else f"{symbol} {op}",
        "inputs": ", ".join(names.input(eq, p) for p in range(len(eq.inputs))),
        "shape": shape_cell,
        "dtype": "?" if dtype is None else str(dtype),
        "value": value,
        "adjoint": adjoint,
        "line": source_text(eq.source),
    }


def _adjoint_cell(found: list[Any]) -> str:
    """The adjoint of each output (``—``: the sweep reached none of them; an output of a
    decomposition that it reached only through the others received no cotangent).

    Examples
    --------
    >>> _adjoint_cell([None]), _adjoint_cell([2.0]), _adjoint_cell([1.0, None])
    ('—', '2', '1; not reached')
    """
    if all(g is None for g in found):
        return "—"
    return "; ".join("not reached" if g is None else value_text(g) for g in found)


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
        Cotangents after a backward pass, by variable (``"t3"``) and leaf name (see
        :class:`AdjointCollector`); adds an ``adjoint`` column.
    names : mapping, optional
        User names (see :class:`TapeNames`).
    max_rows : int
        Longer lists show their first and last rows around a "… N more …" row
        (``0``: show all).

    Examples
    --------
    >>> import numpy as np
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
            # as a leaf's row: the name shown (the user's), then the tape's in parentheses
            shown = ", ".join(table_names.var(v) for v in tape[k].outs)
            name = shown if shown == cells["#"] else f"{shown} ({cells['#']})"
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


# -- passes --------------------------------------------------------------------------------


def selected_rows(rows: Sequence[DiffRow], context: int | None, max_rows: int) -> list[int]:
    """The indices of the rows shown: the changes with ``context`` unchanged rows around
    each (all rows when ``context`` is ``None``), then at most ``max_rows`` of them (the
    first and the last)."""
    n = len(rows)
    if context is None or all(row.kind == "same" for row in rows):
        keep = list(range(n))
    else:
        marked = bytearray(n)
        for k, row in enumerate(rows):
            if row.kind != "same":
                for q in range(max(0, k - context), min(n, k + context + 1)):
                    marked[q] = 1
        keep = [k for k in range(n) if marked[k]]
    head, hidden, tail = shown_rows(len(keep), max_rows)
    return [keep[k] for k in head] + [keep[k] for k in tail] if hidden else keep


def gap_text(rows: Sequence[DiffRow], start: int, stop: int) -> str:
    kinds = {"removed": 0, "added": 0, "changed": 0}
    for k in range(start, stop):
        kind = rows[k].kind
        if kind != "same":
            kinds[kind] += 1
    n = stop - start
    changes = [f"{kinds[k]:,} {w}" for k, w in (("removed", "removed"), ("added", "new"),
                                                 ("changed", "rewritten")) if kinds[k]]
    if not changes:
        return f"… {count_text(n, 'unchanged equation')} …"
    return f"… {count_text(n, 'more equation')} ({', '.join(changes)}) …"


def _report_lines(report: Any) -> list[str]:
    if report is None:
        return []
    if isinstance(report, str):
        return [report]
    if isinstance(report, Iterable):
        return [str(r) for r in report]
    return [str(report)]


def passes_text(before: Graph, after: Graph, report: Any = None, *,
                context: int | None = CONTEXT, max_rows: int = MAX_ROWS) -> str:
    """The diff of a pass (or a pipeline) as text: the reports, the counts, then the
    listing with ``-`` before removed lines, ``+`` before new ones and ``-``/``+`` pairs
    for rewritten ones; unchanged runs are shortened to ``context`` lines around changes.

    A rewritten equation's input that no longer exists in the new graph (its equation
    was removed) is written ``?t1`` on the ``+`` line when the pass did not substitute it.

    Parameters
    ----------
    before, after : Graph
        The graph given to the pass and the one it returned.
    report : PassReport, sequence of PassReport, or str, optional
        What the pass(es) said (shown first, one line each).
    context : int or None
        Unchanged equations shown around each change (``None``: every equation).
    max_rows : int
        At most this many equation rows (the first and the last ones).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> def f(x):
    ...     np.exp(x)  # never used
    ...     return np.sin(x)
    >>> g = wg.trace(f, np.ones(2))
    >>> print(passes_text(g, g.replace(equations=g.equations[1:]), "dce: removed 1"))
    dce: removed 1
    2 → 1 equation: 1 removed
    graph f(x: f64[2]):
      -  t0: f64[2] = exp(x)
         t1: f64[2] = sin(x)
         return t1
    """
    diff = diff_graphs(before, after)
    lines = _report_lines(report) + [diff.summary(), f"graph {after.signature()}:"]
    live = set(after.inputs) | {v for eq in after.equations for v in eq.outs}
    rows = diff.rows
    shown = selected_rows(rows, context, max_rows)
    last = -1
    for k in shown:
        if k > last + 1:
            lines.append(f"     {gap_text(rows, last + 1, k)}")
        last = k
        row = rows[k]
        if row.kind == "changed":
            assert row.before is not None and row.after is not None
            lines.append(f"  -  {row.before}")
            lines.append(f"  +  {_with_missing(row.after, live)}")
        else:
            instead = diff.replaced.get(row.equation.out) if row.kind == "removed" else None
            note = f"    # → {atom_text(instead)}" if instead is not None else ""
            lines.append(f"  {_TEXT_MARKS[row.kind]}  {row.equation}{note}")
    if last < len(rows) - 1:
        lines.append(f"     {gap_text(rows, last + 1, len(rows))}")
    if diff.outputs_changed:
        lines.append(f"  -  return {returns_text(before)}")
        lines.append(f"  +  return {returns_text(after)}")
    else:
        lines.append(f"     return {returns_text(after)}")
    lines += [f"  -  guard {g}    # {g.where()}" for g in diff.guards_removed]
    lines += [f"  +  guard {g}    # {g.where()}" for g in diff.guards_added]
    return "\n".join(line.rstrip() for line in lines)


def _with_missing(eq: Equation, live: set[Var]) -> str:
    """``str(eq)`` with inputs that the graph does not define written ``?t1``."""
    if all(type(v) is not Var or v in live for v in eq.ins):
        return str(eq)
    ins = [Var("?" + v.name, v.shape, v.dtype) if type(v) is Var and v not in live else v
           for v in eq.ins]
    return str(eq.replace(ins=ins))
