"""Short, deterministic text for values, dtypes, parameters and indices: the one
formatter every view uses (tape and graph listings, HTML tables, DOT drawings, the
explorer's frames, formulas of adjoints).

Numbers print with a fixed number of significant digits; arrays print their
first few entries and, when shortened, their shape and norm, never a wall of
digits; parameters never print an object's address. Everything here is a pure
function of the value, so notebook outputs compare equal between runs (nbval).

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

__all__ = ["format_number", "summarize", "summarize_many", "shape_text", "nbytes_text",
           "dtype_text", "aval_text", "literal_text", "index_text", "param_text",
           "params_text", "short_text", "constant_text", "value_text", "without_address",
           "factor_text"]


#: A number that needs parentheses as a factor: negative, or complex with a real part.
_SIGNED = re.compile(r"^-|[^eE][+-]")


def factor_text(text: str) -> str:
    """A number's text as an operand of an infix formula: negative numbers, and complex
    ones with a real part (``1-2j``), in parentheses; names and other numbers as they are.

    Examples
    --------
    >>> factor_text("-3"), factor_text("1-2j"), factor_text("1e-05"), factor_text("t3")
    ('(-3)', '(1-2j)', '1e-05', 't3')
    """
    return f"({text})" if _SIGNED.search(text) else text


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


# -- dtypes, literals, indices and parameters -----------------------------------------------

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "uint64": "u64", "uint32": "u32",
          "bool": "bool", "complex128": "c128", "complex64": "c64"}
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def dtype_text(dtype: Any) -> str:
    """``f64`` for float64, ``i64`` for int64, ``bool``, ``c128`` ... (``?`` for ``None``).

    Examples
    --------
    >>> dtype_text(np.float32), dtype_text(np.dtype(bool)), dtype_text(None)
    ('f32', 'bool', '?')
    """
    if dtype is None:
        return "?"
    name = np.dtype(dtype).name
    return _SHORT.get(name, name)


def aval_text(shape: tuple[int, ...] | None, dtype: Any) -> str:
    """``f64[3,4]``: a dtype and a shape, as jaxprs write them (``f64[?]`` for an unknown
    shape).

    Examples
    --------
    >>> aval_text((3, 4), np.float64), aval_text((), np.int64), aval_text(None, None)
    ('f64[3,4]', 'i64[]', '?[?]')
    """
    dims = "?" if shape is None else ",".join(str(n) for n in shape)
    return f"{dtype_text(dtype)}[{dims}]"


def literal_text(value: Any) -> str:
    """A literal as it reads in a listing: ``0.9``, ``True``, ``array(f64[3,4])``.

    Examples
    --------
    >>> literal_text(0.9), literal_text(np.float64(2)), literal_text(np.zeros((3, 4)))
    ('0.9', '2.0', 'array(f64[3,4])')
    """
    if isinstance(value, np.ndarray):
        if value.size == 1 and value.ndim == 0:
            return repr(value.item())
        return f"array({aval_text(value.shape, value.dtype)})"
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _index_part(i: Any) -> str:
    if type(i) is slice:
        start = "" if i.start is None else repr(i.start)
        stop = "" if i.stop is None else repr(i.stop)
        return f"{start}:{stop}" + ("" if i.step is None else f":{i.step!r}")
    if i is Ellipsis:
        return "..."
    if i is None:
        return "None"
    if isinstance(i, (np.ndarray, np.generic, list)):
        a = np.asarray(i)
        if a.ndim == 0:
            return repr(a.item())
        if a.dtype == bool:
            return f"mask({shape_text(a.shape)})"
        if a.size <= 4:
            return str(a.tolist()).replace(" ", "")
        return literal_text(a)
    return repr(i)


def index_text(index: Any, brackets: bool = True) -> str:
    """An index as it is written between brackets: ``[:, 0]``, ``[1:3]``, ``[...]``
    (without the brackets for ``brackets=False``).

    Examples
    --------
    >>> index_text((slice(None), 0)), index_text(slice(1, None, 2)), index_text(Ellipsis)
    ('[:, 0]', '[1::2]', '[...]')
    >>> index_text((np.int64(1), np.array([True, False]), np.arange(9)), brackets=False)
    '1, mask(2), array(i64[9])'
    """
    parts = index if type(index) is tuple else (index,)
    text = ", ".join(_index_part(i) for i in parts)
    return f"[{text}]" if brackets else text


def without_address(text: str) -> str:
    """``text`` without the object addresses a repr writes (`` at 0x7f...``).

    Examples
    --------
    >>> without_address("<function f at 0x7f00deadbeef>")
    '<function f>'
    """
    return _ADDRESS.sub("", text)


def param_text(value: Any, key: str = "") -> str:
    """One parameter's value: an index as it is written (key ``index``), an array by its
    dtype and shape, a function by its name, anything else by its repr without an
    object's address.

    Examples
    --------
    >>> param_text((0, slice(None)), "index"), param_text(np.ones(2)), param_text(np.add)
    ('[0, :]', 'array(f64[2])', 'add')
    """
    if key == "index":
        return index_text(value)
    if isinstance(value, np.ndarray):
        return literal_text(value)
    if isinstance(value, np.dtype):
        return str(value)
    if callable(value) and not isinstance(value, type) and hasattr(value, "__name__"):
        return value.__name__  # a function by its name (its repr has an address)
    return _ADDRESS.sub("", repr(value))


def params_text(params: Any, width: int | None = None, skip_unset: bool = False) -> str:
    """An equation's parameters as ``axis=None, keepdims=False``; ``skip_unset`` leaves
    out those that are ``None`` or ``False``, ``width`` shortens the text with ``…``.

    Examples
    --------
    >>> params_text({"axis": 0, "index": np.arange(3)})
    'axis=0, index=[[0,1,2]]'
    >>> params_text({"reduce": np.add, "dtype": np.dtype("float32")})
    'reduce=add, dtype=float32'
    >>> params_text({"axis": None, "keepdims": False, "ord": 2}, skip_unset=True)
    'ord=2'
    """
    text = ", ".join(f"{k}={param_text(v, k)}" for k, v in params.items()
                     if not (skip_unset and (v is None or v is False)))
    if width is not None and len(text) > width:
        return text[: width - 1] + "…"
    return text


def value_text(value: Any, max_items: int = 6) -> str:
    """A one-line summary of a value, a tensor or a cotangent (``—`` for ``None``).

    Examples
    --------
    >>> import wengert as wg
    >>> value_text(np.arange(3.0)), value_text(wg.tensor(2.0)), value_text(None)
    ('[0, 1, 2]', '2', '—')
    """
    if hasattr(value, "requires_grad") and hasattr(value, "numpy"):  # a tensor
        try:
            value = value.numpy()
        except (TypeError, RuntimeError):  # a tensor over a traced value (inside wg.jvp)
            return f"traced {shape_text(tuple(value.shape))}"
    try:
        return summarize(value, max_items=max_items)
    except (TypeError, ValueError, AttributeError):  # not a number (a rule's saved object)
        return type(value).__name__.lstrip("_")


def constant_text(value: Any) -> str:
    """How a constant input reads in a table or a formula: its value when it is a number
    (``2``, ``1.5``), else ``const`` (with its NumPy shape when known).

    Examples
    --------
    >>> constant_text(2), constant_text(None), constant_text(np.zeros((3, 4)))
    ('2', 'const', 'const (3, 4)')
    """
    if value is None:
        return "const"
    shape = np.shape(value) if not hasattr(value, "primal") else np.shape(value.primal)
    if shape == ():
        return value_text(value)
    return f"const {shape}"


def short_text(value: Any, index: bool = False, depth: int = 0) -> str:
    """A value in a few deterministic characters, as a formula shows a parameter
    (never a repr with an address); ``index=True`` writes a tuple as the parts of a
    subscript (``1:3, 0``).

    Examples
    --------
    >>> short_text((slice(1, 3), 0), index=True), short_text(0.5), short_text(np.ones(9))
    ('1:3, 0', '0.5', 'array(9)')
    """
    if depth > 2:
        return "…"
    if value is None or isinstance(value, (bool, int, str)):
        return str(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, slice):
        parts = ["" if v is None else short_text(v, depth=depth + 1)
                 for v in (value.start, value.stop, value.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if value.step is not None else "")
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, (tuple, list)):
        parts = [short_text(v, index=index, depth=depth + 1) for v in value]
        if index and isinstance(value, tuple):
            return ", ".join(parts)
        inner = ", ".join(parts) + ("," if len(parts) == 1 and isinstance(value, tuple) else "")
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, type):  # a scalar type (np.float64)
        return value.__name__
    return _array_short(value, index, depth)


def _array_short(value: Any, index: bool, depth: int) -> str:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if dtype is None and hasattr(value, "kind") and hasattr(value, "itemsize"):  # a dtype
        return str(getattr(value, "name", type(value).__name__))
    if isinstance(shape, tuple) and dtype is not None:  # a NumPy array or scalar
        if not shape and hasattr(value, "item"):
            return short_text(value.item(), index=index, depth=depth + 1)
        dims = "×".join(str(n) for n in shape)
        if getattr(dtype, "kind", "") == "b":
            return f"mask({dims})"
        if len(shape) == 1 and shape[0] <= 8 and hasattr(value, "tolist"):
            return short_text(value.tolist(), depth=depth + 1)
        return f"array({dims})"
    return type(value).__name__
