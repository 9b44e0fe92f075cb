"""The HTML medium: listings and cards of every subject, pure functions returning strings
(no IPython, no ids, no memory addresses, no timings: the same subject always renders to
the same text).

* A tape (:func:`tape_html`): its leaves (name, shape, dtype, whether it requires grad,
  value, ``.grad``) and its equations in execution order (op, where each input came from,
  shape, dtype, value, the adjoint after a backward pass, the user's line).
* A graph (:func:`graph_html`): its signature, its equations (name, dtype and shape, op,
  inputs, parameters, line), each guard under the equation it tests, what it returns,
  and the Python code it runs folded under a ``<details>``.
* A pass (:func:`passes_html`): a unified diff of the two listings (removed equations
  struck through in red and marked ``−``, new ones green ``+``, rewritten ones amber ``~``
  with the old text struck beside the new), or both side by side (``layout="side"``).
* A compiled function (:func:`compiled_html`): one row per trace, each trace's graph and
  code folding out below.
* Cards of a tensor, a variable, a dual number and a gradient tape.

:func:`listing_html` takes any subject (:func:`~wengert.jupyter.views.subject.as_subject`).
Long listings show their first and last rows around a "… N more equations …" row.
:func:`register` (run on import) makes these the HTML reprs (see
:mod:`wengert.core.display`).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sum(np.sin(x) * 2.0), np.ones(3), source_lines=False)
>>> page = listing_html(g)
>>> "sin" in page and "t1" in page and "wg-card" in page
True
>>> x = wg.tensor(2.0, requires_grad=True)
>>> "multiply" in listing_html(x * 3.0)
True
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wengert.core.display import register_html
from wengert.core.equations import Equation, Tape
from wengert.core.formatting import params_text, shape_text, value_text, without_address
from wengert.core.levels import USER_TAG
from wengert.forward.dual import Dual
from wengert.graph.backends.compile import Compiled, TraceInfo
from wengert.graph.ir import Guard, Literal, Var
from wengert.graph.passes.pipeline import Optimized
from wengert.graph.program import Graph
from wengert.jupyter.views.diff import (
    DiffRow,
    GraphDiff,
    atom_text,
    count_text,
    diff_graphs,
    returns_text,
)
from wengert.jupyter.views.subject import (
    NameKey,
    TapeNames,
    as_subject,
    leaf_grad,
    source_text,
    swept_adjoints,
)
from wengert.jupyter.views.text import (
    CONTEXT,
    MAX_ROWS,
    equation_cells,
    gap_text,
    leaf_cells,
    passes_text,
    selected_rows,
    shown_rows,
)
from wengert.reverse.gradient_tape import GradientTape, Variable
from wengert.reverse.tensor import Tensor

__all__ = [
    "listing_html",
    "tape_html",
    "tape_sections_html",
    "graph_html",
    "graph_sections_html",
    "passes_html",
    "PassView",
    "compiled_html",
    "tensor_html",
    "variable_html",
    "dual_html",
    "gradient_tape_html",
    "epsilon_text",
    "register",
    "STYLE",
    "GRAPH_STYLE",
    "COLUMN_HELP",
    "CODE_UP_TO",
]


def listing_html(target: Any, *, max_rows: int = MAX_ROWS) -> str:
    """The listing of any subject (a tensor, a tape, a ``GradientTape``, an ``%%autodiff``
    result or a graph) as a card: :func:`graph_html` for a graph, :func:`tape_html` with
    its names and adjoints for the rest."""
    subject = as_subject(target)
    if subject.tape is None:
        return graph_html(subject.ir, max_rows=max_rows)  # type: ignore[arg-type]
    return tape_html(subject.tape, subject.adjoints, names=subject.names, max_rows=max_rows)


#: Graphs of at most this many equations show their generated code (``<details>``).
CODE_UP_TO = 200
#: Characters of a parameter list shown in a table cell (the rest in its tooltip).
PARAMS_WIDTH = 40

#: Styles added to :data:`STYLE` for graphs and diffs. Removed,
#: new and rewritten rows differ by mark (``−``, ``+``, ``~``) and text decoration as well as
#: by hue; the hues have a light and a dark JupyterLab variant.
GRAPH_STYLE = """<style>
.wg-card .wg-sig{font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,monospace);
 font-size:12px;font-weight:600}
.wg-card .wg-table td.wg-mark{font-weight:700;text-align:center;padding-right:6px;width:1em}
.wg-card .wg-table td.wg-params{color:var(--jp-content-font-color2,#5f6368)}
.wg-card .wg-table tr.wg-guard td{color:#8a5300;font-style:italic}
.wg-card .wg-table tr.wg-del td{color:#b42318;text-decoration:line-through;
 text-decoration-color:rgba(180,35,24,.6)}
.wg-card .wg-table tr.wg-del td.wg-mark{text-decoration:none}
.wg-card .wg-table tbody tr.wg-del{background:rgba(240,68,56,.12)}
.wg-card .wg-table tbody tr.wg-ins{background:rgba(18,183,106,.14)}
.wg-card .wg-table tr.wg-ins td{color:#05603a}
.wg-card .wg-table tbody tr.wg-chg{background:rgba(247,144,9,.12)}
.wg-card .wg-table tr.wg-chg td.wg-mark,.wg-card .wg-chip.wg-chg{color:#8a5300}
.wg-card .wg-table tr.wg-ins td.wg-mark,.wg-card .wg-chip.wg-ins{color:#05603a}
.wg-card .wg-table tr.wg-del td.wg-mark,.wg-card .wg-chip.wg-del{color:#b42318}
.wg-card del{color:#b42318;text-decoration:line-through}
.wg-card ins{color:#05603a;text-decoration:none;font-weight:600}
.wg-card .wg-chip.wg-del{border-color:#b42318}
.wg-card .wg-chip.wg-ins{border-color:#05603a}
.wg-card .wg-chip.wg-chg{border-color:#8a5300}
.wg-card .wg-side{border-left:1px solid var(--jp-border-color1,#bdbdbd);padding-left:8px}
.wg-card details{margin:6px 0 0}
.wg-card details>summary{cursor:pointer;color:var(--jp-content-font-color2,#5f6368);
 font-size:11.5px;font-weight:600}
.wg-card .wg-section .wg-sig{text-transform:none;letter-spacing:normal}
.wg-card .wg-repl{display:inline-block;text-decoration:none;font-weight:400;color:#05603a}
.wg-card .wg-report.wg-dim{color:var(--jp-content-font-color3,#9aa0a6)}
.wg-card pre.wg-code{margin:4px 0 0;padding:6px 8px;border-radius:4px;font-size:11.5px;
 line-height:1.4;white-space:pre;overflow-x:auto;color:inherit;
 background:var(--jp-layout-color2,#f3f3f3)}
.wg-card .wg-report{margin:2px 0;font-family:var(--jp-code-font-family,monospace);
 font-size:11.5px}
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-del td,
body[data-jp-theme-light="false"] .wg-card del,
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-del td.wg-mark,
body[data-jp-theme-light="false"] .wg-card .wg-chip.wg-del{color:#ff9c94;border-color:#ff9c94}
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-ins td,
body[data-jp-theme-light="false"] .wg-card ins,
body[data-jp-theme-light="false"] .wg-card .wg-repl,
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-ins td.wg-mark,
body[data-jp-theme-light="false"] .wg-card .wg-chip.wg-ins{color:#75e0a7;border-color:#75e0a7}
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-chg td.wg-mark,
body[data-jp-theme-light="false"] .wg-card .wg-table tr.wg-guard td,
body[data-jp-theme-light="false"] .wg-card .wg-chip.wg-chg{color:#fec84b;border-color:#fec84b}
</style>"""

#: Marks of the rows of a diff, by kind.
MARKS = {"same": "", "removed": "−", "added": "+", "changed": "~"}
_ROW_CLASS = {"same": "", "removed": "wg-del", "added": "wg-ins", "changed": "wg-chg"}


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


def _cut_text(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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
    "shape": "the value's shape (in a graph with its dtype: f64[3,4] is float64, 3×4)",
    "op": "the primitive applied (point at it for its derivative rule)",
    "inputs": "where each input comes from: an earlier equation (t3), a leaf or an input "
              "of the graph (blue ring), or a constant (grey italics)",
    "params": "the op's static parameters",
    "line": "the line of your code that made the equation",
    "": "− removed · + new · ~ rewritten (the old text struck through)",
}


def _table(headers: Sequence[str], rows: Iterable[str]) -> str:
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
    return _table(headers, rows)


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
        # as the leaves' rows and the drawing: the name shown in bold (the user's where
        # it has one), the tape's names after it in grey
        shown = ", ".join(names.var(v) for v in eq.outs)
        label = f'<span class="wg-name">{_e(shown)}</span>'
        if shown != c["#"]:
            label += f' <span class="wg-user">{_e(c["#"])}</span>'
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
    return _table(headers, rows)


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
             f'{count_text(len(tape), "equation")} · {count_text(len(tape.leaves), "leaf")}'
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
    adjoints = swept_adjoints(recorded, tape.last_sweep)
    if adjoints:
        chips += _chip("after gradient()", "state")
    meta = f"{count_text(len(recorded), 'equation')}"
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
            f"{tape_sections_html(recorded, adjoints, max_rows=max_rows)}</div>")


# -- graphs: rows -------------------------------------------------------------------------------


class _Listing:
    """What the rows of one table need to know about the graph(s) they come from."""

    def __init__(self, graphs: Sequence[Graph], with_lines: bool) -> None:
        self.inputs: set[Var] = set()
        self.outputs: dict[Var, int] = {}
        for g in graphs:
            self.inputs.update(g.inputs)
        last = graphs[-1]
        for k, v in enumerate(last.outputs):
            if type(v) is Var:
                self.outputs.setdefault(v, k)
        self.many_outputs = len(last.outputs) > 1
        self.with_lines = with_lines

    def atom_html(self, atom: Var | Literal) -> str:
        if type(atom) is Literal:
            return f'<span class="wg-in-const">{_e(atom_text(atom))}</span>'
        if atom in self.inputs:
            return f'<span class="wg-in-rg">{_e(atom.name)}</span>'
        return _e(atom.name)


def _op_html(op: Any) -> str:
    name, symbol = op.name, op.symbol
    title = getattr(op, "formula", "") or ""
    if getattr(op, "kernel_source", None) is not None:
        title = f"fused kernel: {title}"
    attr = f' title="{_e(title)}"' if title else ""
    sym = f'<span class="wg-sym">{_e(symbol)}</span>' if symbol != name else \
        '<span class="wg-sym"></span>'
    return f'<span{attr}>{sym} <span class="wg-dim">{_e(name)}</span></span>'


def _params_html(params: Mapping[str, Any]) -> str:
    text = params_text(params)
    if len(text) <= PARAMS_WIDTH:
        return _e(text)
    return f'<span title="{_e(text)}">{_e(_cut_text(text, PARAMS_WIDTH))}</span>'


def _name_html(eq: Equation, listing: _Listing) -> str:
    names = []
    for v in eq.outs:  # (a decomposition: one name per part)
        out = f'<span class="wg-name">{_e(v.name)}</span>'
        k = listing.outputs.get(v)
        if k is not None:
            note = f"output {k}" if listing.many_outputs else "output"
            out += f' <span class="wg-dim" title="{note}">◀</span>'
        names.append(out)
    return ", ".join(names)


def _parts_html(eq: Equation) -> str:
    """A decomposition's op cell: its name, each part's rule in the tooltip."""
    title = "; ".join(f"{op.name}: {op.formula}" if getattr(op, "formula", "") else op.name
                      for op in eq.ops)
    return (f'<span title="{_e(title)}"><span class="wg-sym"></span> '
            f'<span class="wg-dim">{_e(eq.primitive)}</span></span>')


def _cells(eq: Equation, listing: _Listing) -> list[str]:
    """name, aval, op, inputs, params (and the line) of one equation, as HTML."""
    several = len(eq.outs) > 1
    cells = [_name_html(eq, listing), _e(", ".join(v.aval for v in eq.outs)),
             _parts_html(eq) if several else _op_html(eq.op),
             ", ".join(listing.atom_html(v) for v in eq.ins), _params_html(eq.params)]
    if listing.with_lines:
        cells.append(_e(source_text(eq.source)))
    return cells


def _changed(old: str, new: str) -> str:
    return new if old == new else f"<del>{old}</del> <ins>{new}</ins>"


def _changed_cells(old: Equation, new: Equation, listing: _Listing) -> list[str]:
    """The cells of a rewritten equation: each that differs shows the old text struck."""
    before, after = _cells(old, listing), _cells(new, listing)
    if len(old.ins) == len(new.ins):
        after[3] = ", ".join(
            _changed(listing.atom_html(a), listing.atom_html(b)) if atom_text(a) != atom_text(b)
            or type(a) is not type(b) else listing.atom_html(b)
            for a, b in zip(old.ins, new.ins))
        before[3] = after[3]
    return [_changed(b, a) for b, a in zip(before, after)]


_HEADERS = ["#", "shape", "op", "inputs", "params"]


def _tr(cells: Sequence[str], cls: str = "", mark: str | None = None, line: bool = False
        ) -> str:
    """A table row; ``line``: the last cell is a line of code (kept on one line)."""
    last = len(cells) - 1
    tds = "".join(f'<td class="wg-src">{c}</td>' if line and i == last else f"<td>{c}</td>"
                  for i, c in enumerate(cells))
    if mark is not None:
        tds = f'<td class="wg-mark">{_e(mark)}</td>' + tds
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def _guard_row(g: Guard, span: int, kind: str = "same", mark: str | None = None) -> str:
    where = source_text(g.source) or g.where()
    text = f"guard {g.how}({g.var.name}) == {g.expected!r}  ·  {where}"
    cls = "wg-guard" + (f" {_ROW_CLASS[kind]}" if kind != "same" else "")
    mark_td = f'<td class="wg-mark">{_e(mark)}</td>' if mark is not None else ""
    return (f'<tr class="{cls}">{mark_td}<td colspan="{span}" title="the graph holds only '
            f'while this gives the same answer: compiled code checks it">{_e(text)}</td></tr>')


def _guards_of(graph: Graph) -> dict[Var, list[Guard]]:
    out: dict[Var, list[Guard]] = {}
    for g in graph.guards:
        out.setdefault(g.var, []).append(g)
    return out


def _graph_equations_table(graph: Graph, max_rows: int) -> str:
    with_lines = any(eq.source is not None for eq in graph.equations)
    listing = _Listing([graph], with_lines)
    headers = _HEADERS + (["line"] if with_lines else [])
    span = len(headers)
    guards = _guards_of(graph)
    rows: list[str] = [_guard_row(g, span) for v in graph.inputs for g in guards.get(v, ())]
    head, hidden, tail = shown_rows(len(graph.equations), max_rows)
    eqs = graph.equations

    def add(k: int) -> None:
        eq = eqs[k]
        out = any(v in listing.outputs for v in eq.outs)
        rows.append(_tr(_cells(eq, listing), "wg-out" if out else "", line=with_lines))
        rows.extend(_guard_row(g, span) for v in eq.outs for g in guards.get(v, ()))

    for k in head:
        add(k)
    if hidden:
        hidden_guards = sum(len(guards.get(v, ())) for k in range(head.stop, tail.start)
                            for v in eqs[k].outs) if guards else 0
        note = f" ({count_text(hidden_guards, 'guard')})" if hidden_guards else ""
        rows.append(_gap_row(f"… {hidden:,} more equations{note} …", span))
    for k in tail:
        add(k)
    return _table(headers, rows)


def _code_html(graph: Graph, what: str = "generated Python") -> str:
    """The graph's ``to_source()`` folded under a ``<details>`` (for small graphs)."""
    if len(graph) > CODE_UP_TO:
        return (f'<div class="wg-dim">{len(graph):,} equations: print(graph.to_source()) for '
                "the generated Python.</div>")
    try:
        source = graph.to_source()
    except Exception as error:  # noqa: BLE001 - a repr must not raise; say why instead
        return (f'<div class="wg-dim">graph.to_source() failed: {_e(type(error).__name__)}: '
                f"{_e(without_address(str(error)))}</div>")
    return (f"<details><summary>{_e(what)} · graph.to_source()</summary>"
            f'<pre class="wg-code">{_e(source.rstrip())}</pre></details>')


def _returns_html(graph: Graph) -> str:
    avals = ", ".join(f"{atom_text(v)}: {v.aval}" if type(v) is Var else atom_text(v)
                      for v in graph.outputs)
    return (f'<div class="wg-code" title="{_e(avals)}"><span class="wg-dim">return</span> '
            f"{_e(returns_text(graph))}</div>")


def graph_sections_html(graph: Graph, *, max_rows: int = MAX_ROWS, code: bool = True) -> str:
    """The equations table, what the graph returns and its generated code, without the card
    around them (what :func:`graph_html` and :func:`compiled_html` put in their cards).

    Examples
    --------
    >>> import wengert as wg
    >>> graph_sections_html(wg.trace(lambda x: x * x, 2.0)).count("<table")
    1
    """
    parts = ['<div class="wg-section">equations</div>']
    if graph.equations:
        parts.append(_graph_equations_table(graph, max_rows))
    else:
        parts.append('<div class="wg-dim">(no equations: the graph returns its inputs or '
                     "constants)</div>")
        parts += [f'<div class="wg-dim">guard {_e(str(g))}  ·  {_e(g.where())}</div>'
                  for g in graph.guards]
    parts.append(_returns_html(graph))
    if code:
        parts.append(_code_html(graph))
    return "".join(parts)


def _graph_meta(graph: Graph) -> str:
    n_out = len(graph.outputs)
    return (f"{count_text(len(graph), 'equation')} · {count_text(len(graph.inputs), 'input')} · "
            f"{count_text(n_out, 'output')}")


def graph_html(graph: Graph, *, max_rows: int = MAX_ROWS, code: bool = True) -> str:
    """A graph as an HTML card: signature, equations, guards, outputs, generated code.

    Parameters
    ----------
    graph : Graph
        From ``wg.trace``, ``wg.grad_graph``, a pass, ``cf.graph_for(...)``.
    max_rows : int
        Longer listings show their first and last rows around a "… N more equations …"
        row (``0``: every row).
    code : bool
        Fold the generated Python (``graph.to_source()``) under the listing (graphs of at
        most :data:`CODE_UP_TO` equations).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> page = graph_html(wg.trace(lambda x: np.sum(np.tanh(x)), np.ones(2)))
    >>> "tanh" in page and "f64[2]" in page and "wg-card" in page
    True
    """
    chips = ""
    if graph.guards:
        chips += _chip(count_text(len(graph.guards), "guard"), "state")
    if graph.plan is not None:
        chips += _chip("memory planned", "state")
    return (f'{STYLE}{GRAPH_STYLE}<div class="wg-card wg-graph"><div class="wg-head">'
            f'<span class="wg-title">graph</span> <span class="wg-sig">'
            f"{_e(graph.signature())}</span>{chips}"
            f'<span class="wg-meta">{_e(_graph_meta(graph))}</span></div>'
            f"{graph_sections_html(graph, max_rows=max_rows, code=code)}</div>")


# -- passes ----------------------------------------------------------------------------------


def _diff_rows_html(diff: GraphDiff, listing: _Listing, rows_shown: list[int],
                    side: bool) -> list[str]:
    rows = diff.rows
    width = 5 + listing.with_lines
    span = 2 * 4 + 1 + listing.with_lines if side else width + 1
    after_guards = _guards_of(diff.after)
    removed_guards: dict[Var, list[Guard]] = {}
    for g in diff.guards_removed:
        removed_guards.setdefault(g.var, []).append(g)
    added = set(map(id, diff.guards_added))
    out: list[str] = []
    last = -1

    def guard_rows(row: DiffRow) -> None:
        if row.after is not None:
            for g in (g for v in row.after.outs for g in after_guards.get(v, ())):
                kind = "added" if id(g) in added else "same"
                out.append(_guard_row(g, span - 1, kind, MARKS[kind]))
        if row.before is not None:
            for g in (g for v in row.before.outs for g in removed_guards.get(v, ())):
                out.append(_guard_row(g, span - 1, "removed", MARKS["removed"]))

    for v in diff.after.inputs:
        for g in after_guards.get(v, ()):
            kind = "added" if id(g) in added else "same"
            out.append(_guard_row(g, span - 1, kind, MARKS[kind]))
    for v in diff.before.inputs:
        for g in removed_guards.get(v, ()):
            out.append(_guard_row(g, span - 1, "removed", MARKS["removed"]))
    for k in rows_shown:
        if k > last + 1:
            out.append(_gap_row(gap_text(rows, last + 1, k), span))
        last = k
        row = rows[k]
        if side:
            out.append(_side_row(row, listing))
        elif row.kind == "changed":
            assert row.before is not None and row.after is not None
            out.append(_tr(_changed_cells(row.before, row.after, listing), "wg-chg", "~",
                           listing.with_lines))
        else:
            cells = _cells(row.equation, listing)
            cls = _ROW_CLASS[row.kind]
            instead = diff.replaced.get(row.equation.out) if row.kind == "removed" else None
            if instead is not None:
                cells[0] += (f' <span class="wg-repl" title="what the rewritten equations read '
                             f'instead">→ {_e(atom_text(instead))}</span>')
            if row.kind == "same" and row.equation.out in listing.outputs:
                cls = "wg-out"
            out.append(_tr(cells, cls, MARKS[row.kind], listing.with_lines))
        guard_rows(row)
    if last < len(rows) - 1:
        out.append(_gap_row(gap_text(rows, last + 1, len(rows)), span))
    return out


def _side_row(row: DiffRow, listing: _Listing) -> str:
    """One row of the side-by-side layout: before (name, shape, op, inputs), the mark,
    after (the same), the line."""
    blank = ["", "", "", ""]
    if row.kind == "changed":
        assert row.before is not None and row.after is not None
        left = _cells(row.before, listing)[:4]
        right = _changed_cells(row.before, row.after, listing)[:4]
        right = [re.sub(r"<del>.*?</del> ", "", c) for c in right]
    else:
        left = _cells(row.before, listing)[:4] if row.before is not None else blank
        right = _cells(row.after, listing)[:4] if row.after is not None else blank
    if row.kind == "removed":
        left = [f"<del>{c}</del>" if c else c for c in left]
    elif row.kind == "added":
        right = [f"<ins>{c}</ins>" if c else c for c in right]
    tds = "".join(f"<td>{c}</td>" for c in left)
    tds += f'<td class="wg-mark">{_e(MARKS[row.kind])}</td>'
    tds += "".join(f'<td class="wg-side">{c}</td>' if i == 0 else f"<td>{c}</td>"
                   for i, c in enumerate(right))
    if listing.with_lines:
        tds += f"<td>{_e(source_text(row.equation.source))}</td>"
    cls = {"same": "", "removed": "", "added": "", "changed": "wg-chg"}[row.kind]
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def _reports_html(report: Any) -> str:
    """One line per report; a report that changed nothing (``total == 0``) is dimmed."""
    if report is None:
        return ""
    reports = [report] if isinstance(report, str) or not isinstance(report, Iterable) \
        else list(report)
    return "".join(
        f'<div class="wg-report{" wg-dim" if getattr(r, "total", 1) == 0 else ""}">'
        f"{_e(str(r))}</div>" for r in reports)


def _outputs_diff_html(diff: GraphDiff) -> str:
    if not diff.outputs_changed:
        return _returns_html(diff.after)
    return (f'<div class="wg-code"><span class="wg-dim">return</span> '
            f"<del>{_e(returns_text(diff.before))}</del> "
            f"<ins>{_e(returns_text(diff.after))}</ins></div>")


def passes_html(before: Graph, after: Graph, report: Any = None, *, layout: str = "diff",
                context: int | None = CONTEXT, max_rows: int = MAX_ROWS,
                code: bool = True, diff: GraphDiff | None = None) -> str:
    """What a pass (or a pipeline of passes) changed, as an HTML card.

    Parameters
    ----------
    before, after : Graph
        The graph given to the pass and the one it returned (``after`` may also be made
        by hand, e.g. ``before.replace(equations=...)``).
    report : PassReport, sequence of PassReport, or str, optional
        What the pass(es) reported (``reports=`` of the passes); one line each, on top.
    layout : {"diff", "side"}
        ``"diff"``: one listing, removed rows struck through in red (``−``), new rows
        green (``+``), rewritten rows amber (``~``) with each changed cell's old text
        struck before its new text. ``"side"``: the two listings side by side, row
        against row.
    context : int or None
        Unchanged equations shown around each change; longer unchanged runs collapse to
        one "… N unchanged equations …" row (``None``: every row).
    max_rows : int
        At most this many rows (the first and the last ones).
    code : bool
        Fold the generated Python of ``after`` under the listing (small graphs).
    diff : GraphDiff, optional
        ``diff_graphs(before, after)`` when already computed.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> def dead_exp(x):
    ...     np.exp(x)  # computed, never used
    ...     return np.sin(x)
    >>> g = wg.trace(dead_exp, np.ones(2))
    >>> page = passes_html(g, g.replace(equations=g.equations[1:]), "dce: removed 1 (exp: 1)")
    >>> 'class="wg-del"' in page and "exp" in page and "1 removed" in page
    True
    """
    if layout not in ("diff", "side"):
        raise ValueError(f"passes_html: layout={layout!r}; use 'diff' or 'side'")
    if diff is None:
        diff = diff_graphs(before, after)
    with_lines = any(row.equation.source is not None for row in diff.rows)
    listing = _Listing([before, after], with_lines)
    shown = selected_rows(diff.rows, context, max_rows)
    rows = _diff_rows_html(diff, listing, shown, layout == "side")
    if layout == "side":
        headers = [f"before: {h}" if h == "#" else h for h in _HEADERS[:4]] + [""] + \
            [f"after: {h}" if h == "#" else h for h in _HEADERS[:4]]
    else:
        headers = ["", *_HEADERS]
    if with_lines:
        headers.append("line")
    c = diff.counts
    chips = "".join(_chip(f"{MARKS[k]}{c[k]:,} {word}", cls) for k, word, cls in (
        ("removed", "removed", "del"), ("added", "new", "ins"), ("changed", "rewritten", "chg"))
        if c[k])
    if not chips:
        chips = _chip("unchanged", "state")
    title = f"{len(before):,} → {count_text(len(after), 'equation')}"
    parts = [f'{STYLE}{GRAPH_STYLE}<div class="wg-card wg-passes"><div class="wg-head">'
             f'<span class="wg-title">{_e(title)}</span>{chips}'
             f'<span class="wg-meta">{_e(diff.summary())}</span></div>',
             _reports_html(report),
             f'<div class="wg-section">graph <span class="wg-sig">{_e(after.signature())}'
             "</span></div>",
             _table(headers, rows) if diff.rows else '<div class="wg-dim">(no equations)</div>',
             _outputs_diff_html(diff)]
    if code:
        parts.append(_code_html(after, "generated Python after"))
    parts.append("</div>")
    return "".join(parts)


class PassView:
    """A pass's before and after as one object a notebook shows (:func:`passes_html`),
    whose text is :func:`passes_text` and whose ``repr`` is one deterministic line.
    ``options`` go to :func:`passes_html` (``layout``, ``context``, ``max_rows``, ``code``);
    ``view.diff`` is the :class:`GraphDiff`.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * 1.0, np.ones(2))
    >>> view = PassView(g, g.replace(equations=g.equations[:1], outputs=(g.equations[0].out,)))
    >>> view
    <pass view: 2 → 1 equation: 1 removed, outputs rewritten>
    """

    def __init__(self, before: Graph, after: Graph, report: Any = None, **options: Any
                 ) -> None:
        self.before = before
        self.after = after
        self.report = report
        self.options = options
        self.diff = diff_graphs(before, after)

    def _repr_html_(self) -> str:
        return passes_html(self.before, self.after, self.report, diff=self.diff,
                           **self.options)

    def __str__(self) -> str:
        options = {k: v for k, v in self.options.items() if k in ("context", "max_rows")}
        return passes_text(self.before, self.after, self.report, **options)

    def __repr__(self) -> str:
        return f"<pass view: {self.diff.summary()}>"


# -- compiled functions ----------------------------------------------------------------------


def _guards_html(graph: Graph) -> str:
    if not graph.guards:
        return '<span class="wg-dim">none</span>'
    lines = []
    for g in graph.guards:
        where = source_text(g.source) or g.where()
        lines.append(f'<div><span class="wg-code">{_e(g.how)}({_e(g.var.name)}) == '
                     f'{_e(repr(g.expected))}</span> <span class="wg-dim">{_e(where)}</span>'
                     "</div>")
    return "".join(lines)


def _trace_name(infos: Sequence[TraceInfo], compiled: Any) -> str:
    if infos:
        return infos[0].graph.name
    fun = getattr(compiled, "fun", None)
    name = getattr(fun, "__name__", None) or "f"
    return "f" if name == "<lambda>" else name


def compiled_html(compiled: Compiled | Sequence[TraceInfo], *, max_rows: int = MAX_ROWS
                  ) -> str:
    """A compiled function's traces (``cf.cache_info()``) as an HTML card.

    One row per trace, oldest first: its signature, its guards (what each Python
    conversion of a traced value gave, and the line that made it: one trace per branch),
    its equations as traced and as run after optimisation, and how many calls it served.
    Each trace's graph and generated code fold out under the table.

    Parameters
    ----------
    compiled : Compiled or sequence of TraceInfo
        ``wg.compile(f)``, or what its ``cache_info()`` returned.
    max_rows : int
        Rows of each trace's listing (the first and the last ones).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> branch = wg.compile(lambda x: np.sin(x) if np.sum(x) > 0 else np.cos(x))
    >>> _ = branch(np.ones(2)), branch(-np.ones(2))
    >>> page = compiled_html(branch)
    >>> "bool(t1) == True" in page and "bool(t1) == False" in page
    True
    """
    infos = list(compiled.cache_info()) if isinstance(compiled, Compiled) else list(compiled)
    name = _trace_name(infos, compiled)
    calls = sum(info.calls for info in infos)
    meta = f"{count_text(len(infos), 'trace')} · {count_text(calls, 'call')}"
    head = (f'{STYLE}{GRAPH_STYLE}<div class="wg-card wg-compiled"><div class="wg-head">'
            f'<span class="wg-title">compiled {_e(name)}</span>'
            f'<span class="wg-meta">{_e(meta)}</span></div>')
    if not infos:
        return (head + '<div class="wg-dim">no trace yet: the first call traces f for its '
                "arguments' shapes and dtypes</div></div>")
    rows = []
    for k, info in enumerate(infos):
        sizes = (f"{len(info.traced):,} → {len(info.graph):,}" if info.traced is not info.graph
                 else f"{len(info.graph):,}")
        rows.append(_tr([str(k + 1), f'<span class="wg-code">{_e(info.signature)}</span>',
                         _guards_html(info.graph), _e(sizes), f"{info.calls:,}"]))
    table = _table(["#", "signature", "guards (what the trace's Python saw)",
                    "equations (traced → run)", "calls"], rows)
    details = []
    for k, info in enumerate(infos):
        details.append(
            f"<details><summary>trace {k + 1}: {_e(info.signature)} · the graph that runs"
            f"</summary>{graph_sections_html(info.graph, max_rows=max_rows)}</details>")
    note = ""
    if len(infos) > 1 and any(info.graph.guards for info in infos):
        note = ('<div class="wg-dim">Each call runs the first trace whose signature and guards '
                "match; a call whose guards match none traces again.</div>")
    return head + table + note + "".join(details) + "</div>"


def register() -> None:
    """Make these renderers the HTML reprs of tensors, variables, dual numbers, gradient
    tapes, tapes, graphs, compiled functions and optimized graphs (called when this module
    is imported; a class shows it once its ``_repr_html_`` asks
    :func:`wengert.core.display.html_of`).

    Examples
    --------
    >>> import wengert as wg
    >>> register()
    >>> x = wg.tensor(1.0)
    >>> x._repr_html_() == tensor_html(x)
    True
    >>> g = wg.trace(lambda x: x * x, 2.0)
    >>> g._repr_html_() == graph_html(g)
    True
    """
    register_html(Tensor, tensor_html)
    register_html(Variable, variable_html)
    register_html(Dual, dual_html)
    register_html(GradientTape, gradient_tape_html)
    register_html(Tape, tape_html)
    register_html(Graph, graph_html)
    register_html(Compiled, compiled_html)
    register_html(Optimized, lambda r: passes_html(r.before, r.after, r.reports))


register()
