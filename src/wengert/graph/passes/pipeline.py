"""``graph.optimize()``: the passes in a sensible order, and what each changed.

The default pipeline is ``fold_constants, simplify, cse, dce``: each feeds the
next (simplify exposes constants and duplicates, cse exposes ``where(c, x, x)``,
and dce removes what the others left unused). Every pass is a pure function
``Graph -> Graph``; :func:`optimize` runs them in order and, when asked, returns
an :class:`Optimized` with the graph before and after and one
:class:`~wengert.graph.passes.rewrite.PassReport` per pass (the Jupyter layer
shows it as a before/after view).

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

import inspect
from collections.abc import Callable, Sequence
from typing import Any

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

__all__ = ["optimize", "Optimized", "PASSES", "DEFAULT_PASSES", "COMPILE_PASSES",
           "MIN_FUSED_ELEMENTS",
           "checkpointed"]

#: The pipeline's ``fuse`` leaves arrays smaller than this unfused (measured: below a few
#: thousand elements a kernel runs no faster, and W3's 75,000 kernels of 16 elements
#: took 8.6 s to build).
MIN_FUSED_ELEMENTS = 4096
#: The passes by name.
PASSES: dict[str, Callable[..., Any]] = {
    "fold_constants": fold_constants, "simplify": simplify, "cse": cse, "dce": dce,
    "fuse": lambda graph: fuse(graph, min_elements=MIN_FUSED_ELEMENTS),
    "plan_memory": plan_memory,
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


def _resolve(p: str | Callable[..., Any]) -> Callable[..., Any]:
    if isinstance(p, str):
        try:
            return PASSES[p]
        except KeyError:
            raise ValueError(f"optimize: unknown pass {p!r}; the passes are "
                             f"{', '.join(PASSES)}") from None
    if not callable(p):
        raise TypeError(f"optimize: a pass is a name or a function Graph -> Graph, got {p!r}")
    return p


def _takes_reports(fn: Callable[..., Any]) -> bool:
    try:
        return "reports" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def optimize(graph: GraphLike, passes: Sequence[str | Callable[..., Any]] | None = None,
             report: bool = False) -> Any:
    """Run ``passes`` (names or functions; by default :data:`DEFAULT_PASSES`) in order.

    Returns the optimised graph, or with ``report=True`` an :class:`Optimized` holding
    the graph before and after and what each pass changed.
    """
    reports: list[PassReport] = []
    current = graph
    if isinstance(passes, str):  # one pass by name
        passes = [passes]
    for p in DEFAULT_PASSES if passes is None else passes:
        fn = _resolve(p)
        if _takes_reports(fn):
            current = fn(current, reports=reports)
        else:
            before = len(current.equations)
            current = fn(current)
            name = p if isinstance(p, str) else getattr(fn, "__name__", "pass")
            reports.append(PassReport(name, before, len(current.equations), {}))
    return Optimized(graph, current, reports) if report else current


def checkpointed(budget_bytes: int) -> Callable[..., Any]:
    """A pass for :func:`optimize`: recompute forward values instead of keeping them so
    the planned peak fits ``budget_bytes`` (:func:`~wengert.graph.passes.remat.remat`).

    Examples
    --------
    >>> passes = ["fold_constants", "simplify", "cse", "dce", checkpointed(10_000_000)]
    """
    def checkpoint(graph: GraphLike) -> GraphLike:
        return remat(graph, budget_bytes)

    checkpoint.__name__ = f"remat(budget={budget_bytes:,} B)"
    return checkpoint
