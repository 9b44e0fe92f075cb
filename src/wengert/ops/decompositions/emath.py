"""``np.emath`` (``numpy.lib.scimath``): the functions whose result turns complex outside
the real domain.

As NumPy computes them: when some real entry lies outside the real domain (a negative
number for ``sqrt``, ``log``, ``log2``, ``log10``, ``logn`` and ``power``; one of
magnitude above 1 for ``arccos``, ``arcsin`` and ``arctanh``) the whole input is cast to
complex first (complex64 for float32 and the 8- and 16-bit integers, complex128 for the
others, float16 too), and the ordinary function follows. So their derivatives are those
of the cast and of the holomorphic function, in wengert's complex convention; a real
input gets a real gradient. Whether to cast depends on the values: under a graph trace it
is refused.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> np.emath.sqrt(wg.tensor([4.0, -4.0])).numpy()
array([2.+0.j, 0.+2.j])
>>> wg.grad(lambda x: np.sum(np.abs(np.emath.sqrt(x)) ** 2))(np.array([4.0, -4.0]))
array([ 1., -1.])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, dtype_of, is_traced
from wengert.ops.base import primal as _raw

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("emath")


def _complex_if(x: Any, outside: Any, what: str) -> Any:
    """``x``, cast to complex when ``outside(values)`` holds somewhere among its real
    entries (NumPy's ``_fix_real_lt_zero`` and ``_fix_real_abs_gt_1``)."""
    x = x if is_traced(x) else np.asarray(x)
    dtype = dtype_of(x)
    if dtype.kind == "c":
        return x
    raw = _raw(x)
    if is_traced(raw):
        raise TypeError(f"np.emath.{what}: whether the result is complex depends on the "
                        "values, so it cannot be traced into a graph; call it eagerly, or "
                        "cast to complex first (x.astype(complex)) and use np.{what}")
    if np.any(outside(np.asarray(raw))):
        return _ew.astype(x, np.complex64 if dtype in _SINGLE else np.complex128)
    return x


#: The dtypes NumPy's emath makes complex64 (its ``_tocomplex``); every other real one,
#: float16 included, becomes complex128.
_SINGLE = frozenset(np.dtype(t) for t in (np.float32, np.int8, np.int16, np.uint8, np.uint16))


def _negative(v: np.ndarray) -> Any:
    return v < 0


def _beyond_one(v: np.ndarray) -> Any:
    return np.abs(v) > 1


def _scimath(fn: Any, outside: Any, name: str, domain: str) -> Any:
    """``np.emath.<name>``: ``fn`` of ``x``, cast to complex first where ``outside``."""

    def scimath(x: Any) -> Any:
        return fn(_complex_if(x, outside, name))

    scimath.__name__ = scimath.__qualname__ = name
    scimath.__doc__ = f"``np.emath.{name}``: complex where some entry is {domain}."
    return FAMILY.route(scimath, getattr(np.emath, name))


sqrt = _scimath(_ew.sqrt, _negative, "sqrt", "negative")
log = _scimath(_ew.log, _negative, "log", "negative")
log2 = _scimath(_ew.log2, _negative, "log2", "negative")
log10 = _scimath(_ew.log10, _negative, "log10", "negative")
arccos = _scimath(_ew.arccos, _beyond_one, "arccos", "of magnitude above 1")
arcsin = _scimath(_ew.arcsin, _beyond_one, "arcsin", "of magnitude above 1")
arctanh = _scimath(_ew.arctanh, _beyond_one, "arctanh", "of magnitude above 1")


@FAMILY.implements(np.emath.logn)
def logn(n: Any, x: Any) -> Any:
    """``np.emath.logn``: ``log(x) / log(n)``, each complex where negative."""
    return _ew.divide(_ew.log(_complex_if(x, _negative, "logn")),
                      _ew.log(_complex_if(n, _negative, "logn")))


@FAMILY.implements(np.emath.power)
def power(x: Any, p: Any) -> Any:
    """``np.emath.power``: ``x ** p``, complex where some entry of ``x`` is negative (and
    a negative integer ``p`` taken as a float, as NumPy's)."""
    p_raw = _raw(p)
    if not is_traced(p_raw) and np.asarray(p_raw).dtype.kind in "iu" and np.any(
            np.asarray(p_raw) < 0):
        p = _ew.astype(p if is_traced(p) else np.asarray(p), np.float64)
    return _ew.power(_complex_if(x, _negative, "power"), p)


