"""What :func:`wengert.explain` returns: an :class:`Explanation`, as text and as HTML.

An explanation has structured fields for programs (``status``, ``cause``,
``equation``, ``source``, ...) and renders the same content for people: as
plain text (its ``repr``, what a terminal and a notebook's ``text/plain``
show) and as a compact HTML card for JupyterLab (light and dark themes; the
status is told by an icon, a word and the border's style, not by colour
alone). Both are pure functions of the fields: no ids, no addresses, no
timings, so a notebook's output is the same on every run.

Examples
--------
>>> e = Explanation("zero", "piecewise_constant", "`np.round` is flat: its derivative is 0.",
...                 "Use a straight-through estimator.", target="y", wrt="x", op="round")
>>> print(e)
gradient of y with respect to x: zero
  why    `np.round` is flat: its derivative is 0.
  fix    Use a straight-through estimator.
>>> e.status, e.cause
('zero', 'piecewise_constant')
"""

from __future__ import annotations

import html
import os
import re
import textwrap
from dataclasses import dataclass, field

from wengert.core.source import SourceLine, is_notebook_cell
from wengert.jupyter.explainer.source import Site

__all__ = ["Explanation", "STATUS_WORDS", "explanation_text", "explanation_html", "where_text"]

#: How each status reads in a header (icon, word).
STATUS_WORDS = {
    "ok": ("✓", "OK"),
    "none": ("∅", "None"),
    "zero": ("0", "zero"),
    "nan": ("!", "NaN"),
    "cut": ("✂", "partly cut"),
}
_WIDTH = 92


@dataclass(frozen=True)
class Explanation:
    """Why the gradient of ``target`` with respect to ``wrt`` is what it is.

    Attributes
    ----------
    status : str
        ``"ok"``, ``"none"`` (no gradient reaches ``wrt``, or ``.grad`` stays ``None``),
        ``"zero"`` (exactly zero everywhere), ``"nan"`` (a NaN or an infinity) or ``"cut"``
        (a gradient reaches ``wrt``, but one of its paths was cut: it misses that part).
    cause : str
        A short machine-readable code (``"no_grad"``, ``"detached"``,
        ``"where_nan"``, ...; ``"ok"`` when fine). See :func:`wengert.explain`.
    message : str
        Why, in words (code in backticks).
    fix : str
        What to do about it (empty when nothing needs doing).
    target, wrt : str
        The names used for the result and the input (the user's variable names when known).
    equation : int or None
        The index, on the tape of ``target`` (``wg.tape_of(target)``), of the equation at
        fault: the op that zeroed or broke the gradient, or the one where a value cut
        from the graph came back in as a constant.
    equation_text : str or None
        That equation as the tape writes it (``t1 = sqrt(x0)``).
    op : str or None
        The name of the op at fault (``"sqrt"``).
    source : SourceLine or None
        The user's line at fault, when known (recorded inside ``wg.source_lines()``, found
        by ``wg.explain(f, *args)``, or read from the ``source=`` code).
    lines : tuple of Site
        Other lines of the code worth a look (from the ``source=`` code or the run of ``f``).
    gradient : str or None
        A one-line summary of the gradient, when it could be computed.
    notes : tuple of str
        Extra remarks (how to see more, what was assumed).
    parts : tuple of Explanation
        One explanation per input when ``wrt`` is a list, tuple or dict of tensors; the
        other fields then repeat those of the first part with the worst status.
    """

    status: str
    cause: str
    message: str
    fix: str = ""
    target: str = "the result"
    wrt: str = "x"
    equation: int | None = None
    equation_text: str | None = None
    op: str | None = None
    source: SourceLine | None = None
    lines: tuple[Site, ...] = ()
    gradient: str | None = None
    notes: tuple[str, ...] = ()
    parts: tuple[Explanation, ...] = field(default=())

    def __str__(self) -> str:
        return explanation_text(self)

    def __repr__(self) -> str:
        return explanation_text(self)

    def _repr_html_(self) -> str:
        return explanation_html(self)

    @property
    def ok(self) -> bool:
        """Whether the gradient is fine (``status == "ok"``)."""
        return self.status == "ok"


def where_text(line: SourceLine | None) -> str:
    """Where a line is, for people: ``line 4`` in a notebook cell or code given as text,
    ``model.py:12`` in a file, with ``in f`` inside a function ``f``.

    Examples
    --------
    >>> where_text(SourceLine("/tmp/ipykernel_7/123.py", 4, "<module>", "y = x * x"))
    'line 4'
    >>> where_text(SourceLine("/home/me/model.py", 12, "loss", "return p ** 2"))
    'model.py:12 in loss'
    """
    if line is None:
        return ""
    name = line.filename
    if not name or is_notebook_cell(name) or name.startswith("<"):
        text = f"line {line.lineno}"
    else:
        text = f"{os.path.basename(name)}:{line.lineno}"
    if line.function and line.function not in ("<module>", "<lambda>"):
        text += f" in {line.function}"
    return text


def _headline(e: Explanation) -> str:
    word = STATUS_WORDS.get(e.status, ("", e.status))[1]
    if e.status == "nan" and e.gradient is not None and "nan" not in e.gradient:
        word = "inf"
    if e.parts:
        bad = sum(1 for p in e.parts if p.status != "ok")
        return f"gradients of {e.target} with respect to {e.wrt}: " + \
            ("all OK" if not bad else f"{bad} of {len(e.parts)} not OK")
    return f"gradient of {e.target} with respect to {e.wrt}: {word}"


def _where(e: Explanation) -> str:
    parts = []
    if e.source is not None:
        parts.append(f"{where_text(e.source)}  {e.source.text}".rstrip())
    if e.equation_text:
        parts.append(f"(tape: {e.equation_text})" if parts else f"tape: {e.equation_text}")
    return "  ".join(parts)


def _rows(e: Explanation) -> list[tuple[str, str]]:
    rows = [("why", e.message)]
    where = _where(e)
    if where:
        rows.append(("where", where))
    if e.fix:
        rows.append(("fix", e.fix))
    for site in e.lines:
        rows.append(("check", site.describe()))
    if e.gradient is not None:
        rows.append(("value", e.gradient))
    for note in e.notes:
        rows.append(("note", note))
    return rows


def explanation_text(e: Explanation) -> str:
    """The plain-text form (``repr``): a headline, then labelled rows, wrapped at 92
    characters.

    Examples
    --------
    >>> print(explanation_text(Explanation("ok", "ok", "Fine.", target="y", wrt="w",
    ...                                    gradient="[3, 3]")))
    gradient of y with respect to w: OK
      why    Fine.
      value  [3, 3]
    """
    out = [_headline(e)]
    if e.parts:
        for part in e.parts:
            out.append("")
            out.extend("  " + line for line in explanation_text(part).splitlines())
        return "\n".join(out)
    for label, text in _rows(e):
        wrapped = textwrap.wrap(text, _WIDTH - 9, break_long_words=False,
                                break_on_hyphens=False) or [""]
        out.append(f"  {label:<6} {wrapped[0]}")
        out.extend(f"         {more}" for more in wrapped[1:])
    return "\n".join(out)


_CODE_MARK = re.compile(r"`([^`]+)`")


#: Status colours: the same in light and dark themes (white text on them reads in both),
#: written inline so that a notebook whose HTML JupyterLab sanitizes (not trusted) keeps
#: them; the border's style tells the status without colour too.
_COLOURS = {"ok": "#2e7d32", "none": "#0277bd", "zero": "#b34700", "nan": "#c62828",
            "cut": "#6a1b9a"}
_BORDERS = {"ok": "solid", "none": "dashed", "zero": "dotted", "nan": "double",
            "cut": "dashed"}

#: Theme refinements for a trusted notebook (JupyterLab drops ``<style>`` otherwise; the
#: inline styles alone read well in both themes).
STYLE = """<style>
.wg-explain{font-family:var(--jp-ui-font-family,system-ui,-apple-system,"Segoe UI",sans-serif);
 color:var(--jp-content-font-color1,inherit)}
.wg-explain code{font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,
 "DejaVu Sans Mono",monospace);color:inherit;background-color:var(--jp-layout-color2,
 rgba(127,127,127,0.16))}
.wg-explain .wg-explain-label{color:var(--jp-content-font-color2,inherit)}
</style>"""

_CARD = ("box-sizing:border-box;max-width:100%;margin:2px 0;padding:6px 12px 8px 10px;"
         "border:1px solid rgba(127,127,127,0.4);border-radius:6px;text-align:left;"
         "line-height:1.5;font-size:13px")
_ROW = "display:flex;gap:10px;margin:3px 0;align-items:baseline"
_LABEL = ("flex:0 0 4.9em;font-size:10.5px;font-weight:700;text-transform:uppercase;"
          "letter-spacing:0.05em;opacity:0.7;white-space:nowrap")
_TEXT = "flex:1 1 auto;min-width:0;text-align:left"
_CODE = ("font-size:12px;padding:0 4px;border-radius:3px;"
         "background-color:rgba(127,127,127,0.16);white-space:pre-wrap")
_DIM = "opacity:0.75"


def _inline(text: str) -> str:
    """Escape ``text``; `backticks` become ``<code>``."""
    pieces = _CODE_MARK.split(text)
    return "".join(html.escape(p) if k % 2 == 0 else _code(p) for k, p in enumerate(pieces))


def _code(text: str) -> str:
    return f'<code style="{_CODE}">{html.escape(text)}</code>'


def _badge(status: str, gradient: str | None = None) -> str:
    icon, word = STATUS_WORDS.get(status, ("?", status))
    if status == "nan" and gradient is not None and "nan" not in gradient:
        word = "inf"
    colour = _COLOURS.get(status, "#616161")
    return (f'<span class="wg-badge wg-badge-{html.escape(status)}" style="display:inline-block;'
            f"padding:0 8px;margin-right:6px;border-radius:10px;background-color:{colour};"
            f'color:#ffffff;font-weight:700;font-size:11.5px;line-height:18px">'
            f"{icon} {word}</span>")


def _row(label: str, cell: str, extra: str = "") -> str:
    return (f'<div class="wg-explain-row wg-explain-{label}" style="{_ROW}">'
            f'<div class="wg-explain-label" style="{_LABEL}">{label}</div>'
            f'<div class="wg-explain-text" style="{_TEXT}{extra}">{cell}</div></div>')


def _html_rows(e: Explanation) -> str:
    rows = [_row("why", _inline(e.message))]
    if e.source is not None or e.equation_text:
        cells = []
        if e.source is not None:
            cells.append(f'<span style="{_DIM}">{html.escape(where_text(e.source))}</span> '
                         + _code(e.source.text))
        if e.equation_text:
            cells.append(f'<span style="{_DIM};font-size:12px">tape: '
                         f"{html.escape(e.equation_text)}</span>")
        rows.append(_row("where", " &nbsp; ".join(cells)))
    if e.fix:
        rows.append(_row("fix", _inline(e.fix), ";font-weight:500"))
    if e.lines:
        items = "".join(f'<li style="margin:0">{_inline(s.describe())}</li>' for s in e.lines)
        rows.append(_row("check", f'<ul style="margin:0;padding-left:1.1em">{items}</ul>'))
    if e.gradient is not None:
        rows.append(_row("value", _code(e.gradient)))
    for note in e.notes:
        rows.append(_row("note", _inline(note), f";{_DIM}"))
    return "".join(rows)


def _head(e: Explanation) -> str:
    what = "gradients" if e.parts else "gradient"
    tail = ""
    if e.parts:
        bad = sum(1 for p in e.parts if p.status != "ok")
        tail = ": all OK" if not bad else f": {bad} of {len(e.parts)} not OK"
    return (f'<div class="wg-explain-head" style="font-weight:600;margin:0 0 4px">'
            f"{_badge(e.status, e.gradient)}{what} of {_code(e.target)} with respect to "
            f"{_code(e.wrt)}{html.escape(tail)}</div>")


def explanation_html(e: Explanation) -> str:
    """The HTML card: classes prefixed ``wg-explain``; inline styles that JupyterLab keeps
    even when it sanitizes an untrusted notebook, readable in light and dark themes; a
    ``<style>`` block adds the theme's fonts and colours when the notebook is trusted.

    Examples
    --------
    >>> html = explanation_html(Explanation("none", "no_grad", "Cut by `wg.no_grad()`."))
    >>> 'class="wg-explain wg-none"' in html, "border-left:5px dashed" in html
    (True, True)
    >>> "<code" in html and "wg.no_grad()</code>" in html
    True
    """
    colour = _COLOURS.get(e.status, "#616161")
    border = f"border-left:5px {_BORDERS.get(e.status, 'solid')} {colour}"
    if e.parts:
        inner = "".join(
            f'<div class="wg-explain-part" style="margin:6px 0 0;padding:4px 0 0 8px;'
            f'border-top:1px solid rgba(127,127,127,0.3)">{_head(p)}{_html_rows(p)}</div>'
            for p in e.parts)
    else:
        inner = _html_rows(e)
    return (f'{STYLE}<div class="wg-explain wg-{html.escape(e.status)}" '
            f'style="{_CARD};{border}">{_head(e)}{inner}</div>')
