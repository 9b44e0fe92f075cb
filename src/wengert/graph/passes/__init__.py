"""Optimisation passes: each a pure function ``pass_(graph, *, reports=None) -> Graph``
that keeps the values (and appends what it changed to ``reports`` when given a list).

``dce``, ``fold_constants``, ``cse``, ``simplify`` (rewrites that keep a graph
differentiable; ``graph.optimize()`` runs them), ``fuse`` and ``plan_memory`` (what
``wg.compile`` adds), ``remat`` (checkpointing under a memory budget), and ``optimize``,
the pipeline (:mod:`.pipeline`).
"""

from wengert.graph.passes.cse import cse
from wengert.graph.passes.dce import dce
from wengert.graph.passes.fold import fold_constants
from wengert.graph.passes.fuse import fuse
from wengert.graph.passes.memory import memory_timeline, peak_bytes, plan_memory
from wengert.graph.passes.pipeline import (
           COMPILE_PASSES,
           DEFAULT_PASSES,
           Optimized,
           Pass,
           checkpointed,
           fusing,
           optimize,
)
from wengert.graph.passes.remat import BudgetError, remat
from wengert.graph.passes.rewrite import PassReport
from wengert.graph.passes.simplify import simplify

__all__ = ["dce", "fold_constants", "cse", "simplify", "fuse", "plan_memory", "remat",
           "peak_bytes", "memory_timeline", "optimize", "Optimized", "PassReport",
           "BudgetError", "Pass", "checkpointed", "fusing", "DEFAULT_PASSES", "COMPILE_PASSES"]
