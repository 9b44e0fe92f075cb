"""NumPy's set functions: NumPy 2's array-API ``np.unique_values``, ``unique_counts``,
``unique_inverse`` and ``unique_all``, and ``np.union1d``, ``intersect1d``, ``setdiff1d``
and ``setxor1d`` of two arrays.

As ``np.unique``, each value of the result is the first occurrence of that value, taken
from the input (``ar1`` before ``ar2``; ``intersect1d`` from ``ar1``), so it gets the
gradient of its value (as in JAX); the indices, inverse indices and counts are integers
NumPy computes, in NumPy's named tuples. Which values the result holds is NumPy's answer
on the values (membership is piecewise constant: no gradient).

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
from wengert.ops import shape as _shape
from wengert.ops.base import Family, is_traced
from wengert.ops.base import primal as _raw

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("set_routines")


def _first(x: Any) -> tuple[Any, Any]:
    """The flat input and NumPy's ``unique_all`` of its values (the indices of first
    occurrences among them)."""
    raw = _raw(x)
    if is_traced(raw):
        raise TypeError("unique: how many values are unique depends on the values, so it "
                        "cannot be traced into a graph; call it eagerly")
    return _shape.ravel(x if is_traced(x) else np.asarray(x)), np.unique_all(raw)


@FAMILY.export
def unique_values(x: Any) -> Any:
    """The sorted unique values of ``x``, as ``np.unique_values``."""
    flat, found = _first(x)
    return _shape.take(flat, found.indices)


@FAMILY.export
def unique_counts(x: Any) -> Any:
    """``(values, counts)``, as ``np.unique_counts``."""
    flat, found = _first(x)
    return np.unique_counts(_raw(x))._replace(values=_shape.take(flat, found.indices))


@FAMILY.export
def unique_inverse(x: Any) -> Any:
    """``(values, inverse_indices)``, as ``np.unique_inverse``."""
    flat, found = _first(x)
    return np.unique_inverse(_raw(x))._replace(values=_shape.take(flat, found.indices))


@FAMILY.export
def unique_all(x: Any) -> Any:
    """``(values, indices, inverse_indices, counts)``, as ``np.unique_all``."""
    flat, found = _first(x)
    return found._replace(values=_shape.take(flat, found.indices))


# -- the set operations of two arrays ------------------------------------------------------
def _plain_values(x: Any, what: str) -> np.ndarray:
    raw = _raw(x)
    if is_traced(raw):
        raise TypeError(f"np.{what}: which values the result holds depends on the values, so "
                        "it cannot be traced into a graph; call it eagerly")
    return np.asarray(raw).ravel()


def _from(values: np.ndarray, sources: list[Any], plains: list[np.ndarray]) -> Any:
    """``values`` (found by NumPy among the sources' values) taken from the sources: each
    from its first occurrence, in the first source that holds it."""
    plain = np.concatenate(plains) if len(plains) > 1 else plains[0]
    uniq, first = np.unique(plain, return_index=True)
    where = np.searchsorted(uniq, values) if values.size else np.zeros(0, np.intp)
    flat = [_shape.ravel(s if is_traced(s) else np.asarray(s)) for s in sources]
    joined = _shape.concatenate(flat) if len(flat) > 1 else flat[0]
    return _shape.take(joined, first[where])


@FAMILY.implements(np.union1d)
def union1d(ar1: Any, ar2: Any) -> Any:
    """The sorted unique values of both arrays, as ``np.union1d``: each value is taken from
    its first occurrence (in ``ar1``, else in ``ar2``) and gets the gradient there."""
    p1, p2 = _plain_values(ar1, "union1d"), _plain_values(ar2, "union1d")
    return _from(np.union1d(p1, p2), [ar1, ar2], [p1, p2])


@FAMILY.implements(np.intersect1d)
def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False) -> Any:
    """The sorted values found in both arrays, as ``np.intersect1d``: each taken from
    ``ar1`` (at the index NumPy returns with ``return_indices``), which gets the gradient
    (the equal entry of ``ar2`` gets none: one value, one source)."""
    p1, p2 = _plain_values(ar1, "intersect1d"), _plain_values(ar2, "intersect1d")
    _, i1, i2 = np.intersect1d(p1, p2, assume_unique=assume_unique, return_indices=True)
    values = _shape.take(_shape.ravel(ar1 if is_traced(ar1) else np.asarray(ar1)), i1)
    return (values, i1, i2) if return_indices else values


@FAMILY.implements(np.setdiff1d)
def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    """The values of ``ar1`` not in ``ar2``, as ``np.setdiff1d`` (sorted and unique, or in
    ``ar1``'s order with ``assume_unique``), taken from ``ar1``."""
    p1, p2 = _plain_values(ar1, "setdiff1d"), _plain_values(ar2, "setdiff1d")
    if assume_unique:
        keep = np.flatnonzero(~np.isin(p1, p2, assume_unique=True))
        return _shape.take(_shape.ravel(ar1 if is_traced(ar1) else np.asarray(ar1)), keep)
    return _from(np.setdiff1d(p1, p2), [ar1], [p1])


@FAMILY.implements(np.setxor1d)
def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    """The sorted values in exactly one of the arrays, as ``np.setxor1d``, each taken from
    its first occurrence there."""
    p1, p2 = _plain_values(ar1, "setxor1d"), _plain_values(ar2, "setxor1d")
    return _from(np.setxor1d(p1, p2, assume_unique=assume_unique), [ar1, ar2], [p1, p2])


