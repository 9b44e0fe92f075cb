"""``wg.draw(y)``: a tape or a graph as a Graphviz drawing, shown as SVG in Jupyter.

:func:`draw` returns a ``graphviz.Digraph`` built from
:func:`~wengert.jupyter.views.dot.dot_source`, so everything graphviz offers works on it
(``.source``, ``.render("tape", format="png")``, ``.pipe()``). In a notebook it shows as
SVG; when Graphviz's ``dot`` program is not installed it shows one line saying how to
install it and the listing (:func:`~wengert.jupyter.views.html.listing_html`) instead of a
traceback. The ``graphviz`` package is imported only when :func:`draw` is called.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable, Mapping
from typing import Any

from wengert.graph.program import Graph
from wengert.jupyter.views.diff import diff_graphs
from wengert.jupyter.views.dot import MAX_NODES, dot_source, pass_dot
from wengert.jupyter.views.html import STYLE, graph_html, passes_html, tape_html
from wengert.jupyter.views.subject import NameKey, as_subject

__all__ = ["draw", "draw_pass", "NOT_INSTALLED", "drawing_class"]

#: What a notebook shows above the tape table when ``dot`` cannot be found.
NOT_INSTALLED = (
    "Graphviz's `dot` is not installed: showing the listing instead. Install it with "
    "`apt-get install graphviz` / `brew install graphviz` / `conda install graphviz`."
)


def _note_html(text: str) -> str:
    return (f'{STYLE}<div class="wg-card wg-note"><span class="wg-dim">'
            f"{text.replace('&', '&amp;').replace('<', '&lt;')}</span></div><br>")


@functools.cache
def drawing_class() -> type:
    """The ``graphviz.Digraph`` subclass :func:`draw` returns (made on first use, so that
    importing wengert never imports graphviz).

    Examples
    --------
    >>> import graphviz
    >>> issubclass(drawing_class(), graphviz.Digraph)
    True
    """
    import graphviz

    class TapeDrawing(graphviz.Digraph):
        """A tape's drawing: a ``graphviz.Digraph`` whose notebook display falls back to
        the tape table when ``dot`` is missing, with a deterministic ``repr``."""

        def __init__(self, *, fallback_html: str = "", summary: str = "<wg.draw>",
                     **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.fallback_html = fallback_html
            self.summary = summary

        def _copy_kwargs(self, **kwargs: Any) -> dict[str, Any]:
            copied = super()._copy_kwargs(**kwargs)
            copied.update(fallback_html=self.fallback_html, summary=self.summary)
            return copied

        def _repr_mimebundle_(self, include: Any = None, exclude: Any = None,
                              **kwargs: Any) -> dict[str, Any]:
            try:
                bundle = super()._repr_mimebundle_(include, exclude, **kwargs)
            except graphviz.ExecutableNotFound:
                bundle = {"text/html": _note_html(NOT_INSTALLED) + self.fallback_html}
            except subprocess.CalledProcessError as error:
                detail = error.stderr or ""
                if isinstance(detail, bytes):
                    detail = detail.decode(errors="replace")
                detail = detail.strip()
                first = detail.splitlines()[0] if detail else f"exit status {error.returncode}"
                bundle = {"text/html": _note_html(
                    f"Graphviz's `dot` failed on this drawing ({first}): showing the "
                    "listing instead.") + self.fallback_html}
            bundle["text/plain"] = self.summary
            return bundle

        def __repr__(self) -> str:
            return self.summary

    return TapeDrawing


def draw(
    target: Any,
    *,
    adjoints: Mapping[Any, Any] | None = None,
    names: Mapping[NameKey, str] | None = None,
    group: str | None = "auto",
    expand: Iterable[str] = (),
    max_nodes: int = MAX_NODES,
    legend: bool = True,
) -> Any:
    """Draw a tape or a graph (a ``graphviz.Digraph``).

    Parameters
    ----------
    target : Tensor, GradientTape, Tape, Graph, or an ``%%autodiff`` result
        What to draw (see :func:`~wengert.jupyter.views.subject.as_subject`): the tape
        behind a tensor with its values, or a traced graph (``wg.trace``) as its program.
        An ``%%autodiff`` result also carries ``names`` and ``adjoints``, used unless
        given here.
    adjoints, names, group, expand, max_nodes, legend
        As for :func:`~wengert.jupyter.views.dot.dot_source`: adjoints after a backward
        pass, user names (as :class:`~wengert.jupyter.views.subject.TapeNames` takes them:
        ``{"x0": "w"}``, ``{"w": w}``, or one name per leaf), how to group a big drawing
        (``"auto"``, ``"line"``, ``"function"``, ``"chunk"``, or ``None`` for every
        equation), which groups to draw
        in full (``expand=["line 12"]``), the size above which ``"auto"`` groups, and the
        legend.

    Returns
    -------
    graphviz.Digraph
        Shown as SVG in a notebook (the listing when ``dot`` is not installed).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> drawing = draw(x * x + 1.0)
    >>> drawing
    <wg.draw: 2 equations, 1 leaf>
    >>> print(drawing.source.splitlines()[0])
    digraph tape {
    >>> draw(wg.trace(lambda x: x * x + 1.0, 2.0))
    <wg.draw: graph f, 2 equations, 1 input>
    """
    subject = as_subject(target, names=names, adjoints=adjoints)
    source = dot_source(subject.ir, adjoints=subject.adjoints, names=subject.names,
                        group=group, expand=expand, max_nodes=max_nodes, legend=legend)
    ir = subject.ir
    n = len(ir)
    count = f"{n:,} equation{'s' if n != 1 else ''}"
    if isinstance(ir, Graph):
        k = len(ir.inputs)
        summary = f"<wg.draw: graph {ir.name}, {count}, {k:,} input{'s' if k != 1 else ''}>"
        fallback = graph_html(ir)
    else:
        k = len(ir.leaves)
        summary = f"<wg.draw: {count}, {k:,} lea{'f' if k == 1 else 'ves'}>"
        fallback = tape_html(ir, subject.adjoints, names=subject.names)
    return drawing_class()(name=source.split(" ", 2)[1], body=_body(source),
                           summary=summary, fallback_html=fallback)


def _body(source: str) -> list[str]:
    """The statements of a DOT graph (between ``digraph name {`` and ``}``)."""
    return [line + "\n" for line in source.splitlines()[1:-1]]


def draw_pass(before: Graph, after: Graph, report: Any = None, *, group: str | None = "auto",
              expand: Iterable[str] = (), max_nodes: int = MAX_NODES,
              legend: bool = True) -> Any:
    """Draw what a pass (or ``graph.optimize()``) changed: both programs on one drawing,
    removed equations struck through in red, rewritten ones in amber (the listing of
    :func:`~wengert.jupyter.views.html.passes_html` when ``dot`` is missing).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * 1.0 + 0.0 * np.exp(x), 0.5)
    >>> drawing = draw_pass(g, g.optimize())
    >>> print(drawing.source.splitlines()[0])
    digraph program {
    >>> draw_pass(g, g)
    <wg.draw: pass, 5 → 5 equations: unchanged>
    """
    diff = diff_graphs(before, after)
    source = pass_dot(before, after, group=group, expand=expand, max_nodes=max_nodes,
                      legend=legend, diff=diff)
    return drawing_class()(name="program", body=_body(source),
                           summary=f"<wg.draw: pass, {diff.summary()}>",
                           fallback_html=passes_html(before, after, report, diff=diff))
