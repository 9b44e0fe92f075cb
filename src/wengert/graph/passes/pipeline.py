"""``graph.optimize()``: the passes in a sensible order, and what each changed.

The default pipeline is ``fold_constants, simplify, cse, dce``: each feeds the
next (simplify exposes constants and duplicates, cse exposes ``where(c, x, x)``,
and dce removes what the others left unused). Every pass is a pure function with
one signature, ``pass_(graph, *, reports=None) -> Graph``, that appends one
:class:`~wengert.graph.passes.rewrite.PassReport` to ``reports`` when given a list;
a pass with options takes them by keyword with defaults (``fuse(graph,
min_elements=...)``), or a factory makes one (:func:`checkpointed`, :func:`fusing`).
:func:`optimize` runs them in order and, when asked, returns an :class:`Optimized`
with the graph before and after and the reports (the Jupyter layer shows it as a
before/after view).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: np.sum(np.sin(x) * 1.0 + np.sin(x)), np.ones(3))
>>> result = optimize(g, report=True)
>>> print(result)
optimize f: 5 → 3 equations
  fold_constants: 5 → 5 equations; folded 0
  simplify: 5 → 4 equations; rewrote 1 (x*1: 1)
  cse: 4 → 3 equations; merged 1 (sin: 1)
  dce: 3 → 3 equations; removed 0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from wengert.core.display import html_of
from wengert.graph.ir import GraphLike
from wengert.graph.passes.cse import cse
from wengert.graph.passes.dce import dce
from wengert.graph.passes.fold import fold_constants
from wengert.graph.passes.fuse import fuse
from wengert.graph.passes.memory import plan_memory
from wengert.graph.passes.remat import remat
from wengert.graph.passes.rewrite import PassReport
from wengert.graph.passes.simplify import simplify

__all__ = ["optimize", "Optimized", "Pass", "PASSES", "DEFAULT_PASSES", "COMPILE_PASSES",
           "MIN_FUSED_ELEMENTS", "checkpointed", "fusing"]


class Pass(Protocol):
    """What :func:`optimize` runs: ``pass_(graph, *, reports=None) -> Graph``, appending
    one :class:`~wengert.graph.passes.rewrite.PassReport` to ``reports`` when it is a
    list."""

    def __call__(self, graph: GraphLike, *, reports: list[PassReport] | None = None
                 ) -> GraphLike: ...


def fusing(min_elements: int = 0, chunk_elements: int | None = None) -> Pass:
    """A pass for :func:`optimize`: :func:`~wengert.graph.passes.fuse.fuse` with these
    options.

    Examples
    --------
    >>> passes = ["fold_constants", "simplify", "cse", "dce", fusing(min_elements=1000)]
    """
    options: dict[str, int] = {"min_elements": min_elements}
    if chunk_elements is not None:
        options["chunk_elements"] = chunk_elements

    def fuse_pass(graph: GraphLike, *, reports: list[PassReport] | None = None) -> GraphLike:
        return fuse(graph, reports=reports, **options)

    fuse_pass.__name__ = "fuse"
    return fuse_pass

#: The pipeline's ``fuse`` leaves arrays smaller than this unfused (measured: below a few
#: thousand elements a kernel runs no faster, and W3's 75,000 kernels of 16 elements
#: took 8.6 s to build).
MIN_FUSED_ELEMENTS = 4096
#: The passes by name.
PASSES: dict[str, Pass] = {
    "fold_constants": fold_constants, "simplify": simplify, "cse": cse, "dce": dce,
    "fuse": fusing(min_elements=MIN_FUSED_ELEMENTS), "plan_memory": plan_memory,
}
#: What ``graph.optimize()`` runs, in order: rewrites that keep the graph differentiable.
DEFAULT_PASSES: tuple[str, ...] = ("fold_constants", "simplify", "cse", "dce")
#: What ``wg.compile`` runs: the rewrites, then fusion of elementwise chains and the
#: memory plan (a fused graph runs, but is no longer differentiated: fuse last).
COMPILE_PASSES: tuple[str, ...] = DEFAULT_PASSES + ("fuse", "plan_memory")


class Optimized:
    """A pipeline's result: ``before``, ``after`` and one report per pass."""

    def __init__(self, before: GraphLike, after: GraphLike, reports: list[PassReport]) -> None:
        self.before = before
        self.after = after
        self.reports = reports

    def __str__(self) -> str:
        lines = [f"optimize {self.before.name}: {len(self.before.equations)} → "
                 f"{len(self.after.equations)} equations"]
        return "\n".join(lines + [f"  {r}" for r in self.reports])

    def _repr_html_(self) -> str | None:
        return html_of(self)

    def __repr__(self) -> str:
        return (f"<optimize {self.before.name}: {len(self.before.equations)} → "
                f"{len(self.after.equations)} equations, {len(self.reports)} passes>")


def _resolve(p: str | Pass) -> Pass:
    if isinstance(p, str):
        try:
            return PASSES[p]
        except KeyError:
            raise ValueError(f"optimize: unknown pass {p!r}; the passes are "
                             f"{', '.join(PASSES)}") from None
    if not callable(p):
        raise TypeError("optimize: a pass is a name or a function "
                        f"pass_(graph, *, reports=None) -> Graph, got {p!r}")
    return p


def optimize(graph: GraphLike, passes: Sequence[str | Pass] | None = None,
             report: bool = False) -> Any:
    """Run ``passes`` (names or :class:`Pass` functions; by default
    :data:`DEFAULT_PASSES`) in order.

    Returns the optimised graph, or with ``report=True`` an :class:`Optimized` holding
    the graph before and after and what each pass changed. Each pass is called as
    ``pass_(graph, reports=reports)`` and appends its report.
    """
    reports: list[PassReport] = []
    current = graph
    if isinstance(passes, str):  # one pass by name
        passes = [passes]
    for p in DEFAULT_PASSES if passes is None else passes:
        fn = _resolve(p)
        try:
            current = fn(current, reports=reports)
        except TypeError as e:
            if "unexpected keyword argument 'reports'" not in str(e):
                raise
            raise TypeError(
                f"optimize: the pass {getattr(fn, '__name__', fn)!r} does not take "
                "reports=; a pass is pass_(graph, *, reports=None) -> Graph (append a "
                "PassReport to reports when it is a list)") from e
    return Optimized(graph, current, reports) if report else current


def checkpointed(budget_bytes: int) -> Pass:
    """A pass for :func:`optimize`: recompute forward values instead of keeping them so
    the planned peak fits ``budget_bytes`` (:func:`~wengert.graph.passes.remat.remat`).

    Examples
    --------
    >>> passes = ["fold_constants", "simplify", "cse", "dce", checkpointed(10_000_000)]
    """
    def checkpoint(graph: GraphLike, *, reports: list[PassReport] | None = None
                   ) -> GraphLike:
        return remat(graph, budget_bytes, reports=reports)

    checkpoint.__name__ = f"remat(budget={budget_bytes:,} B)"
    return checkpoint
