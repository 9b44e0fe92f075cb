"""Keys equal for values an op cannot tell apart: to merge equal equations (``cse``), to
reuse one op for repeated identical NumPy calls while tracing, and to look up a compiled
function's traces by the values of its static arguments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["value_key", "static_key", "MAX_KEYED_BYTES"]

#: Arrays larger than this (in bytes) compare by identity, not by content.
MAX_KEYED_BYTES = 65536

_SIMPLE = (type(None), bool, int, str, type(Ellipsis))
_NAN, _ZERO, _NEGATIVE_ZERO = (float, "nan"), (float, "0.0"), (float, "-0.0")


def value_key(value: Any) -> Any:
    """A hashable key equal for values that an op cannot tell apart.

    Examples
    --------
    >>> value_key(2.0) == value_key(2), value_key(0.0) == value_key(-0.0)
    (False, False)
    >>> value_key(float("nan")) == value_key(float("nan"))
    True
    >>> value_key(np.arange(3.0)) == value_key(np.arange(3.0))
    True
    >>> value_key((slice(1, 3), 0)) == value_key((slice(1, 3), 0))
    True
    """
    t = type(value)
    if t in _SIMPLE:
        return (t, value)
    if t is float:
        if value != value:
            return _NAN
        if value == 0.0:
            return _NEGATIVE_ZERO if math.copysign(1.0, value) < 0.0 else _ZERO
        return (float, value)
    if t is complex:
        return (complex, value.real.hex(), value.imag.hex())
    if t is tuple or t is list:
        return (t, *[value_key(v) for v in value])
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.hasobject or value.nbytes > MAX_KEYED_BYTES:
            return (_Identity, id(value))
        return (t, value.dtype, value.shape, np.ascontiguousarray(value).tobytes())
    if t is slice:
        return (slice, value_key(value.start), value_key(value.stop), value_key(value.step))
    if t is dict:
        return (dict, *[(value_key(k), value_key(v)) for k, v in value.items()])
    if isinstance(value, np.dtype):
        return (np.dtype, value)
    if isinstance(value, type):
        return (type, value)
    return (_Identity, id(value))


def static_key(value: Any) -> Any:
    """A cache key for a static argument: equal only for values that Python code cannot
    tell apart by what they compute with (``1``, ``1.0`` and ``True`` are three keys,
    ``0.0`` and ``-0.0`` two, NaN equals NaN); any other hashable object is its own key
    (compared with ``==``). Raises ``TypeError`` for an unhashable value.

    Examples
    --------
    >>> len({static_key(1), static_key(1.0), static_key(True)})
    3
    >>> static_key((2, "a")) == static_key((2, "a")), static_key((1,)) == static_key((True,))
    (True, False)
    """
    t = type(value)
    if t in _SIMPLE or t is float or t is complex:
        return value_key(value)
    if t is tuple or t is frozenset:
        items = [static_key(v) for v in value]  # (as deep as the value: a few levels)
        return (t, frozenset(items) if t is frozenset else tuple(items))
    if t is slice:  # (not hashable before Python 3.12)
        return (slice, static_key(value.start), static_key(value.stop),
                static_key(value.step))
    hash(value)
    return (t, value)


class _Identity:
    """The marker of keys by identity (the graph keeps the object alive while keyed)."""
