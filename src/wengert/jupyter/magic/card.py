"""The result card of ``%%autodiff``: the output, its derivatives and the views asked for.

:func:`card_html` is a pure function of an
:class:`~wengert.jupyter.magic.runner.AutodiffResult`: a header (mode, output and
value), a table with one row per input (its value, the derivative of the
output with respect to it, and in ``both`` mode the forward-mode tangent and
whether the two modes agree), then each view of ``--show``: the tape table,
the graph (SVG from Graphviz, or a line saying why not), the reverse sweep
step by step (``adjoint``) and the vector-Jacobian products it computed
without building a Jacobian (``vjp``). The text/plain form is the result's
``repr``.
"""

from __future__ import annotations

import html
import re
from typing import Any

import numpy as np
from wengert.core.formatting import shape_text, value_text
from wengert.jupyter.views.drawing import draw
from wengert.jupyter.views.html import STYLE, tape_html
from wengert.jupyter.views.sweep import adjoint_table_html, vjp_table_html

__all__ = ["card_html", "derivative_label", "modes_agree", "modes_difference"]

_CARD_STYLE = """<style>
.wg-card .wg-ad-value{font-size:14px;margin:2px 0 6px}
.wg-card .wg-ad-ok{color:#1b7f3b;font-weight:600}
.wg-card .wg-ad-bad{color:#b3261e;font-weight:600}
.wg-card .wg-ad-svg svg{max-width:100%;height:auto}
body[data-jp-theme-light="false"] .wg-card .wg-ad-ok{color:#6fd08c}
body[data-jp-theme-light="false"] .wg-card .wg-ad-bad{color:#ff8a80}
</style>"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def modes_difference(reverse: Any, forward: Any) -> float:
    """The largest absolute difference between the two modes' derivatives: entries both
    modes computed the same (the same infinity, NaN in both) differ by 0; an infinity or
    a NaN against anything else by ``inf``.

    Examples
    --------
    >>> modes_difference([np.inf, 2.0], [np.inf, 2.5]), modes_difference([np.nan], [1.0])
    (0.5, inf)
    """
    a, b = np.asarray(reverse, dtype=float), np.asarray(forward, dtype=float)
    with np.errstate(invalid="ignore"):
        d = np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.abs(a - b))
    return float(np.max(np.where(np.isnan(d), np.inf, d), initial=0.0))


def modes_agree(difference: float, derivative: Any) -> bool:
    """Whether forward and reverse mode agree to rounding: their largest absolute
    ``difference`` (:func:`modes_difference`) is at most 1e-7 relative to the
    derivative's largest finite entry.

    Examples
    --------
    >>> modes_agree(1e-12, 3.0), modes_agree(0.1, 3.0), modes_agree(0.0, np.inf)
    (True, False, True)
    """
    a = np.asarray(derivative, dtype=float)
    finite = np.abs(a[np.isfinite(a)])
    return difference <= 1e-7 * (1.0 + (float(np.max(finite)) if finite.size else 0.0))


def derivative_label(output: str, name: str, mode: str) -> str:
    """``∂L/∂w`` for a gradient, ``∂L/∂w (tangent)`` in forward mode.

    Examples
    --------
    >>> derivative_label("L", "w", "reverse"), derivative_label("L", "w", "forward")
    ('∂L/∂w', '∂L/∂w (tangent)')
    """
    label = f"∂{output}/∂{name}"
    return label + " (tangent)" if mode == "forward" else label


def _shape_note(value: Any, grad: Any) -> str:
    """What the derivative is: a gradient of the input's shape, or a Jacobian."""
    g = np.shape(grad)
    v = np.shape(value)
    if g == v:
        return shape_text(g)
    return f"Jacobian {shape_text(g)}"


def _inputs_table(result: Any) -> str:
    both = result.agreement is not None
    head = ["input", "value", derivative_label(result.output_name, "input", result.mode),
            "shape"]
    if both:
        head += ["forward mode", "agree"]
    rows = []
    for name in result.inputs:
        value = result.input_values[name]
        grad = result.grads[name]
        cells = [f"<b>{_e(name)}</b>", _e(value_text(value)),
                 f'<span class="wg-adj">{_e(value_text(grad))}</span>' if grad is not None
                 else '<span class="wg-dim">not known (see the notes)</span>',
                 _e(_shape_note(value, grad)) if grad is not None else ""]
        if both:
            diff = result.agreement.get(name)
            tangent = result.tangents[name]
            if diff is None:
                check = '<span class="wg-dim">—</span>'
            else:
                ok = modes_agree(diff, grad)
                check = (f'<span class="{"wg-ad-ok" if ok else "wg-ad-bad"}">'
                         f'{"✓" if ok else "✗"} {diff:.0e}</span>')
            cells += [_e(value_text(tangent)) if tangent is not None
                      else '<span class="wg-dim">not known</span>', check]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    return (f'<table class="wg-table"><thead><tr>{header}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


_SVG_HEAD = re.compile(r"^.*?(?=<svg)", re.S)


def _graph_html(result: Any) -> str:
    """The drawing as inline SVG, or (no ``dot``) the line that says why and the table."""
    bundle = draw(result)._repr_mimebundle_()
    svg = bundle.get("image/svg+xml")
    if svg is None:
        return bundle.get("text/html", "")
    return f'<div class="wg-ad-svg">{_SVG_HEAD.sub("", svg)}</div>'


def _section(title: str, body: str) -> str:
    return f'<div class="wg-section">{_e(title)}</div>{body}'


def card_html(result: Any) -> str:
    """The card of an ``%%autodiff`` result (see the module docstring).

    Examples
    --------
    >>> from wengert.jupyter.magic.runner import run_autodiff
    >>> r = run_autodiff("y = x ** 2", {}, ["x"], preset={"x": 3.0})
    >>> "∂y/∂input" in card_html(r) and ">6<" in card_html(r)
    True
    """
    changed = result.changed_constants()  # (then the views show no value for them)
    mode = {"reverse": "reverse mode", "forward": "forward mode",
            "both": "forward and reverse mode"}[result.mode]
    parts = [
        f'{STYLE}{_CARD_STYLE}<div class="wg-card wg-autodiff"><div class="wg-head">'
        f'<span class="wg-title">%%autodiff</span><span class="wg-meta">{_e(mode)}</span></div>',
        f'<div class="wg-ad-value"><b>{_e(result.output_name)}</b> = '
        f'{_e(value_text(result.value))} <span class="wg-dim">'
        f'{_e(shape_text(np.shape(result.value)))}</span></div>',
    ]
    notes = getattr(result, "notes", ())
    if changed:
        notes = (*notes, f"{', '.join(changed)} changed in place since the cell ran: the "
                 "views show no value for it (the numbers above are the cell's).")
    if notes:
        parts.append('<ul class="wg-ad-notes" style="margin:2px 0 6px;padding-left:18px;'
                     'font-size:12px;max-width:60em">' + "".join(
            f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    views = result.views
    if "grads" in views:
        parts.append(_inputs_table(result))
        if result.agreement is not None:
            verdict = ("forward and reverse mode agree" if result.agree
                       else "forward and reverse mode DISAGREE")
            parts.append(f'<div class="{"wg-ad-ok" if result.agree else "wg-ad-bad"}">'
                         f"{_e(verdict)}</div>")
    if "tape" in views:
        parts.append(_section("tape", tape_html(result.tape, result.adjoints,
                                                names=result.names)))
    if "graph" in views:
        parts.append(_section("graph", _graph_html(result)))
    if "adjoint" in views:
        parts.append(_section("reverse sweep, step by step", adjoint_table_html(result)))
    if "vjp" in views:
        parts.append(_section("vector-Jacobian products (no Jacobian built)",
                              vjp_table_html(result)))
    explanation = result.extras.get("explanation")
    if explanation is not None:
        parts.append(_section("why", explanation._repr_html_()))
    parts.append("</div>")
    return "".join(parts)

