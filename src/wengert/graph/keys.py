"""Keys equal for values an op cannot tell apart: to merge equal equations (``cse``), to
reuse one op for repeated identical NumPy calls while tracing, and to look up a compiled
function's traces by the values of its static arguments."""

from __future__ import annotations

import functools
import math
import types
from typing import Any

import numpy as np

__all__ = ["value_key", "static_key", "changed_attributes", "MAX_KEYED_BYTES"]

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
    attributes = _attributes(value)
    if attributes is not None:
        return (t, value, attributes)
    return (t, value)


#: Objects keyed by identity alone, whatever attributes they carry.
_OPAQUE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.ModuleType, functools.partial)


def _attributes(value: Any) -> tuple[Any, ...] | None:
    """For an object compared by identity (a class's instance without ``__eq__``), what
    its attributes are bound to: Python code reads them as it runs (``self.lr``), so a
    new binding (``model.lr = 0.01``, ``model.w = new_array``) is a new key. Numbers and
    strings by value, other objects by identity (held, so the identity stays theirs;
    an array changed in place is the same key). ``None`` for other values."""
    t = type(value)
    if t.__hash__ is not object.__hash__ or t.__eq__ is not object.__eq__ \
            or isinstance(value, _OPAQUE):
        return None
    attributes = getattr(value, "__dict__", None)
    if type(attributes) is not dict:
        return None
    return tuple((k, value_key(v) if type(v) in _SIMPLE or type(v) in (float, complex)
                  else _Held(v)) for k, v in attributes.items())


class _Held:
    """An object in a key, equal only to itself (held: its identity stays its own)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return type(other) is _Held and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def changed_attributes(a: Any, b: Any) -> list[str]:
    """The attributes bound otherwise in two keys of one object (see :func:`static_key`).

    Examples
    --------
    >>> class Model:
    ...     pass
    >>> m = Model()
    >>> m.lr = 0.1
    >>> before = static_key(m)
    >>> m.lr = 0.01
    >>> changed_attributes(before, static_key(m))
    ['lr']
    """
    if len(a) != 3 or len(b) != 3 or a[1] is not b[1]:
        return []
    old, new = dict(a[2]), dict(b[2])
    return [k for k in {**old, **new} if old.get(k, _MISSING) != new.get(k, _MISSING)]


_MISSING = object()


class _Identity:
    """The marker of keys by identity (the graph keeps the object alive while keyed)."""
