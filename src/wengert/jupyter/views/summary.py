"""Short, deterministic text for values: what a table cell or a graph node shows.

Numbers print with a fixed number of significant digits; arrays print their
first few entries and, when shortened, their shape and norm, never a wall of
digits. Everything here is a pure function of the value, so notebook outputs
compare equal between runs (nbval).

Examples
--------
>>> import numpy as np
>>> format_number(3.14159265)
'3.142'
>>> summarize(np.arange(4.0))
'[0, 1, 2, 3]'
>>> summarize(np.arange(1000.0))
'[0, 1, 2, 3, …, 999]  (1000,) ‖·‖=1.8e+04'
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import numpy as np

__all__ = ["format_number", "summarize", "summarize_many", "shape_text", "nbytes_text"]


def format_number(x: Any, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits, without trailing zeros (``1.5``, ``-2``,
    ``1e-08``, ``nan``, ``inf``); booleans and integers as they are.

    Examples
    --------
    >>> format_number(2.0), format_number(-0.000012345), format_number(float("nan"))
    ('2', '-1.234e-05', 'nan')
    """
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (complex, np.complexfloating)):
        return f"{format_number(x.real, digits)}{'+' if x.imag >= 0 else '-'}" \
               f"{format_number(abs(x.imag), digits)}j"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def shape_text(shape: tuple[int, ...] | None) -> str:
    """``()`` -> ``scalar``, ``(3, 4)`` -> ``3×4``, ``None`` -> ``?``.

    Examples
    --------
    >>> shape_text(()), shape_text((3, 4)), shape_text((5,))
    ('scalar', '3×4', '5')
    """
    if shape is None:
        return "?"
    if len(shape) == 0:
        return "scalar"
    return "×".join(str(n) for n in shape)


def nbytes_text(n: int) -> str:
    """A byte count for people: ``512 B``, ``2.0 kB``, ``2.1 MB``, ``4.3 GB`` (powers of 1000).

    Examples
    --------
    >>> nbytes_text(512), nbytes_text(2_097_152)
    ('512 B', '2.1 MB')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def summarize(value: Any, max_items: int = 6, digits: int = 4) -> str:
    """A one-line summary of a number or an array.

    Arrays of at most ``max_items`` entries print in full (nested brackets for
    2-d); longer ones print their first entries, the last one, their shape and
    their 2-norm. ``None`` (a value that was not kept) prints as ``—``.

    Examples
    --------
    >>> summarize(None), summarize(2.5), summarize(np.array([[1.0, 2.0], [3.0, 4.0]]))
    ('—', '2.5', '[[1, 2], [3, 4]]')
    >>> summarize(np.zeros((0, 3)))
    '[]  (0, 3)'
    """
    if type(value) is np.ndarray and value.ndim == 1 and 0 < value.size <= max_items \
            and value.dtype.kind == "f":  # the common case, first: one C-level format
        text = _row_format(value.size, digits) % tuple(value.tolist())
        return _NEG_ZERO.sub("0", text) if "-0," in text or "-0]" in text else text
    if value is None:
        return "—"
    primal = getattr(value, "primal", None)  # a dual number: its value
    if primal is not None:
        return summarize(primal, max_items, digits)
    a = np.asarray(value)
    if a.ndim == 0:
        return format_number(a.item(), digits)
    if a.size == 0:
        return f"[]  {a.shape}"
    if a.size <= max_items:
        return _nested(a, digits)
    flat = a.ravel()
    floats = a.dtype.kind == "f"
    head = ", ".join(_number_texts(flat[: max_items - 2].tolist(), digits, floats))
    tail = _number_texts([flat[-1].item()], digits, floats)[0]
    text = f"[{head}, …, {tail}]  {a.shape}"
    if a.dtype.kind in "fiu":
        with np.errstate(over="ignore", invalid="ignore"):  # a display never warns
            norm = float(np.linalg.norm(flat.astype(np.float64)))
        text += f" ‖·‖={format_number(norm, 2)}"
    return text


def summarize_many(values: list[Any], max_items: int = 6, digits: int = 4) -> list[str]:
    """``[summarize(v) for v in values]``, formatted in bulk: Python floats and short 1-d
    float arrays (the values of big scalar and small-vector tapes) go through one ``%``
    per kind and length instead of one call each.

    Examples
    --------
    >>> summarize_many([0.5, -0.0, np.array([1.0, 2.5]), None, 3])
    ['0.5', '0', '[1, 2.5]', '—', '3']
    """
    if all([type(v) is float for v in values]):  # a scalar tape: one format for all
        return _formatted(f"%.{digits}g", values, len(values))
    out: list[Any] = [None] * len(values)
    buckets: dict[int, tuple[list[int], list[float]]] = {}  # length (0: a float) -> rows
    for k, v in enumerate(values):
        t = type(v)
        if t is float:
            rows = buckets.get(0)
            if rows is None:
                rows = buckets[0] = ([], [])
            rows[0].append(k)
            rows[1].append(v)
        elif t is np.ndarray and v.ndim == 1 and 0 < v.size <= max_items \
                and v.dtype.kind == "f":
            rows = buckets.get(v.size)
            if rows is None:
                rows = buckets[v.size] = ([], [])
            rows[0].append(k)
            rows[1].extend(v.tolist())
        else:
            out[k] = summarize(v, max_items, digits)
    for size, (where, numbers) in buckets.items():
        one = f"%.{digits}g" if size == 0 else _row_format(size, digits)
        for k, text in zip(where, _formatted(one, numbers, len(where))):
            out[k] = text
    return out


def _formatted(one: str, numbers: list[float], count: int) -> list[str]:
    """``count`` texts: ``one`` (a ``%`` format) filled from ``numbers`` in order, by one
    ``%``; a ``-0`` becomes ``0`` as in :func:`format_number`."""
    joined = "\0".join([one] * count) % tuple(numbers)
    texts = joined.split("\0") if count else []
    if "-0" in joined:
        texts = ["0" if t == "-0" else _NEG_ZERO.sub("0", t) if "-0" in t else t
                 for t in texts]
    return texts


_SPECS = {d: f".{d}g" for d in range(1, 18)}
#: A ``-0`` standing alone in a list of numbers (format_number writes 0).
_NEG_ZERO = re.compile(r"(?<![\w.])-0(?=[,\]])")


@functools.cache
def _row_format(n: int, digits: int) -> str:
    """``"[%.4g, %.4g]"`` for ``n`` numbers: a whole row formatted by one ``%``."""
    return "[" + ", ".join([f"%.{digits}g"] * n) + "]"


def _number_texts(items: list[Any], digits: int, floats: bool = False) -> list[str]:
    """:func:`format_number` of each of ``items`` (plain Python numbers from ``tolist``);
    ``floats``: all are floats, formatted with one spec (``'g'`` writes inf and nan as
    format_number does; only ``-0`` needs mending)."""
    if not floats:
        return [format_number(v, digits) for v in items]
    spec = _SPECS.get(digits) or f".{digits}g"
    texts = [format(v, spec) for v in items]
    if "-0" in texts:
        texts = ["0" if t == "-0" else t for t in texts]
    return texts


def _nested(a: np.ndarray, digits: int) -> str:
    if a.ndim == 1:
        return "[" + ", ".join(_number_texts(a.tolist(), digits, a.dtype.kind == "f")) + "]"
    return "[" + ", ".join(_nested(row, digits) for row in a) + "]"
