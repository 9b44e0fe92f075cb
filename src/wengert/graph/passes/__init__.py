"""Optimisation passes: each a pure function ``Graph -> Graph`` that keeps the values.

``dce``, ``fold_constants``, ``cse``, ``simplify`` (rewrites that keep a graph
differentiable; ``graph.optimize()`` runs them), ``fuse`` and ``plan_memory`` (what
``wg.compile`` adds), ``remat`` (checkpointing under a memory budget), and ``optimize``,
the pipeline (:mod:`.pipeline`).
"""

from .cse import cse
from .dce import dce
from .fold import fold_constants
from .fuse import fuse
from .memory import memory_timeline, peak_bytes, plan_memory
from .pipeline import COMPILE_PASSES, DEFAULT_PASSES, Optimized, checkpointed, optimize
from .remat import BudgetError, remat
from .rewrite import PassReport
from .simplify import simplify

__all__ = ["dce", "fold_constants", "cse", "simplify", "fuse", "plan_memory", "remat",
           "peak_bytes", "memory_timeline", "optimize", "Optimized", "PassReport",
           "BudgetError", "checkpointed", "DEFAULT_PASSES", "COMPILE_PASSES"]
