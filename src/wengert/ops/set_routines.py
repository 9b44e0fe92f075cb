"""NumPy 2's array-API set functions: ``np.unique_values``, ``unique_counts``,
``unique_inverse`` and ``unique_all``.

As ``np.unique``, each unique value is the first occurrence of that value, taken from the
input, so it gets the gradient of its value (as in JAX); the indices, inverse indices and
counts are integers NumPy computes, in NumPy's named tuples.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda x: np.sum(np.unique_counts(x).values * np.array([1.0, 2.0])))(
...     np.array([3.0, 1.0, 3.0]))
array([2., 1., 0.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import shape as _shape
from .base import is_traced
from .base import primal as _raw

OPS: tuple[Any, ...] = ()


def _first(x: Any) -> tuple[Any, Any]:
    """The flat input and NumPy's ``unique_all`` of its values (the indices of first
    occurrences among them)."""
    raw = _raw(x)
    if is_traced(raw):
        raise TypeError("unique: how many values are unique depends on the values, so it "
                        "cannot be traced into a graph; call it eagerly")
    return _shape.ravel(x if is_traced(x) else np.asarray(x)), np.unique_all(raw)


def unique_values(x: Any) -> Any:
    """The sorted unique values of ``x``, as ``np.unique_values``."""
    flat, found = _first(x)
    return _shape.take(flat, found.indices)


def unique_counts(x: Any) -> Any:
    """``(values, counts)``, as ``np.unique_counts``."""
    flat, found = _first(x)
    return np.unique_counts(_raw(x))._replace(values=_shape.take(flat, found.indices))


def unique_inverse(x: Any) -> Any:
    """``(values, inverse_indices)``, as ``np.unique_inverse``."""
    flat, found = _first(x)
    return np.unique_inverse(_raw(x))._replace(values=_shape.take(flat, found.indices))


def unique_all(x: Any) -> Any:
    """``(values, indices, inverse_indices, counts)``, as ``np.unique_all``."""
    flat, found = _first(x)
    return found._replace(values=_shape.take(flat, found.indices))


PUBLIC = ("unique_values", "unique_counts", "unique_inverse", "unique_all")
#: NumPy function -> function, for ``Tensor.__array_function__``.
NUMPY = {np.unique_values: unique_values, np.unique_counts: unique_counts,
         np.unique_inverse: unique_inverse, np.unique_all: unique_all}
