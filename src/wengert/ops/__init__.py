"""The primitives, grouped by family; :data:`REGISTRY` holds them all.

The registry is built here, explicitly, from each family's ``OPS`` tuple:
importing a module registers nothing by side effect.
"""

from __future__ import annotations

from ..core.op import Registry
from . import elementwise, indexing, linalg, reduce, shape

FAMILIES = (elementwise, reduce, shape, indexing, linalg)
REGISTRY = Registry(op for family in FAMILIES for op in family.OPS)

__all__ = ["REGISTRY", "FAMILIES", "elementwise", "reduce", "shape", "indexing", "linalg"]
