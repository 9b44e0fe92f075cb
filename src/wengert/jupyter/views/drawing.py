"""``wg.draw(y)``: the tape behind a value as a Graphviz drawing, shown as SVG in Jupyter.

:func:`draw` returns a ``graphviz.Digraph`` built from
:func:`~wengert.jupyter.views.tape_dot.tape_dot`, so everything graphviz offers works on it
(``.source``, ``.render("tape", format="png")``, ``.pipe()``). In a notebook it shows as
SVG; when Graphviz's ``dot`` program is not installed it shows one line saying how to
install it and the tape as a table instead of a traceback. The ``graphviz`` package is
imported only when :func:`draw` is called.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable, Mapping
from typing import Any

from wengert.core.equations import Tape
from wengert.graph.program import Graph
from wengert.jupyter.views.graph_dot import graph_drawing, pass_drawing
from wengert.jupyter.views.render import STYLE, NameKey, tape_html
from wengert.jupyter.views.tape_dot import MAX_NODES, tape_dot
from wengert.jupyter.views.targets import as_tape

__all__ = ["kept_adjoints", "draw", "draw_pass", "NOT_INSTALLED", "drawing_class"]

#: What a notebook shows above the tape table when ``dot`` cannot be found.
NOT_INSTALLED = (
    "Graphviz's `dot` is not installed: showing the tape as a table. Install it with "
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
                    f"Graphviz's `dot` failed on this drawing ({first}): showing the tape "
                    "as a table.") + self.fallback_html}
            bundle["text/plain"] = self.summary
            return bundle

        def __repr__(self) -> str:
            return self.summary

    return TapeDrawing


def kept_adjoints(tape: Tape) -> dict[int, Any] | None:
    """The cotangent each equation received in the sweep ``backward()`` ran from the
    tape's output, as the view-keeping mode kept it (equation index -> value; after its
    hooks, as its rule used it); ``None`` when no complete sweep from that output was kept.
    Equations the sweep did not reach have no entry; leaves keep showing their ``.grad``.

    Examples
    --------
    >>> import wengert as wg
    >>> with wg.keep_values():
    ...     x = wg.tensor(2.0, requires_grad=True)
    ...     y = x * x + 1.0
    ...     y.backward()
    >>> kept_adjoints(wg.tape_of(y))
    {1: 1.0, 0: 1.0}
    """
    if len(tape.outputs) != 1:
        return None
    out = tape[tape.outputs[0]]
    record = out.sweep
    if record is None or record.released is not None or not record.complete \
            or record.root_seqs != (out.node.seq,):
        return None
    # (one cotangent per equation: a decomposition's several outputs have none here)
    index = {eq.node.seq: eq.index for eq in tape if len(eq.outs) == 1}
    return {index[step.seq]: step.g for step in record.steps if step.seq in index}


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
    """Draw the tape behind ``target`` as a graph (a ``graphviz.Digraph``).

    Parameters
    ----------
    target : Tensor, GradientTape, Tape, Graph, or an ``%%autodiff`` result
        What to draw (see :func:`~wengert.jupyter.views.targets.as_tape`); a traced graph
        (``wg.trace``) is drawn as its program (:func:`~wengert.jupyter.views.graph_dot.graph_dot`).
        An object with a ``tape`` attribute may also carry ``names`` and ``adjoints``, used
        unless given here.
    adjoints, names, group, expand, max_nodes, legend
        As for :func:`~wengert.jupyter.views.tape_dot.tape_dot`: adjoints after a backward pass,
        user names, how to group a big tape (``"auto"``, ``"line"``, ``"function"``,
        ``"chunk"``, or ``None`` for every equation), which groups to draw in full
        (``expand=["line 12"]``), the size above which ``"auto"`` groups, and the legend.

    Returns
    -------
    graphviz.Digraph
        Shown as SVG in a notebook (the tape table when ``dot`` is not installed).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> drawing = draw(x * x + 1.0)
    >>> drawing
    <wg.draw: 2 equations, 1 leaf>
    >>> print(drawing.source.splitlines()[0])
    digraph tape {
    """
    if isinstance(target, Graph):
        if group == "function":
            raise ValueError("draw: a graph groups by 'line' or 'chunk' ('auto' picks); "
                             "'function' is for tapes")
        return drawing_class()(**graph_drawing(target, group=group, expand=expand,
                                               max_nodes=max_nodes, legend=legend))
    tape = as_tape(target)
    if names is None:
        names = getattr(target, "names", None)
    if adjoints is None:
        adjoints = getattr(target, "adjoints", None)
    if adjoints is None:
        adjoints = kept_adjoints(tape)
    source = tape_dot(tape, adjoints=adjoints, names=names, group=group, expand=expand,
                      max_nodes=max_nodes, legend=legend)
    lines = source.splitlines()
    body = [line + "\n" for line in lines[1:-1]]  # between "digraph tape {" and "}"
    leaves = len(tape.leaves)
    summary = (f"<wg.draw: {len(tape):,} equation{'s' if len(tape) != 1 else ''}, "
               f"{leaves:,} lea{'f' if leaves == 1 else 'ves'}>")
    return drawing_class()(
        name="tape", body=body, summary=summary,
        fallback_html=tape_html(tape, adjoints, names=names),
    )


def draw_pass(before: Graph, after: Graph, report: Any = None, **options: Any) -> Any:
    """Draw what a pass (or ``graph.optimize()``) changed: both programs on one drawing,
    removed equations struck through in red, rewritten ones in amber.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sin(x) * 1.0 + 0.0 * np.exp(x), 0.5)
    >>> print(draw_pass(g, g.optimize()).source.splitlines()[0])
    digraph program {
    """
    return drawing_class()(**pass_drawing(before, after, report, **options))
