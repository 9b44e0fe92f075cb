"""What generated code imports: ``op``, the NumPy forwards of wengert's registered ops.

Code from :meth:`Graph.to_source` starts with
``from wengert.graph.runtime import GuardFailed, op`` and calls ``op.sum(t1, axis=0,
keepdims=False)`` for an op whose forward is wengert's own (NumPy functions are
called as ``np.sin`` directly).

Examples
--------
>>> import numpy as np
>>> op.sum_to(np.ones((2, 3)), shape=(3,))
array([2., 2., 2.])
"""

from __future__ import annotations

from types import SimpleNamespace

from ..ops import REGISTRY
from .ir import GuardFailed

__all__ = ["op", "floats", "GuardFailed", "registered"]

#: ``op.<name>``: the forward (``impl``) of every registered op, by its name.
op = SimpleNamespace(**{record.name: record.impl for record in REGISTRY})
#: ``floats.<name>``: the float path (``scalar_impl``) of every registered op that has one.
floats = SimpleNamespace(**{record.name: record.scalar_impl for record in REGISTRY
                            if record.scalar_impl is not None})


def registered(record: object) -> bool:
    """Whether ``record`` is the registry's op of its name (so ``op.<name>`` is its forward)."""
    name = getattr(record, "name", None)
    return name in REGISTRY and REGISTRY[name] is record
