"""The integer columns of the explorer's frames as binary arrays (what large tapes
travel in, next to a JSON header of everything else).

For a 10⁵-equation tape more than half of the JSON is lists of small integers (each
equation's op, rule, line and inputs, every node's shape, layout and the reverse
steps), which ``json.dumps`` writes and the browser's ``JSON.parse`` reads one number at
a time. :func:`to_bytes` writes them as binary arrays after the header instead;
``explorer.js`` reads them as typed-array views of the same buffer.

The payload: the header's length (4 bytes, little endian), the header (UTF-8 JSON,
padded with spaces to a multiple of 4 bytes), then each column's values in the order
the header's ``columns`` lists them (``[path, length, width]``: little-endian signed
integers of 1, 2 or 4 bytes, the narrowest that holds the column, each column padded
with zero bytes to a multiple of 4). Two columns of
the compact form (:mod:`wengert.jupyter.explorer.compact`) change shape on the way:

* ``eqs.ins`` (one list per equation) travels as ``eqs.ins_flat`` (all of them, one after
  another) and ``eqs.ins_count`` (each equation's number of inputs);
* ``reverse`` travels as ``reverse_e``, ``reverse_i`` and ``reverse_j`` (a plain step
  ``[e, i, j]``; ``i`` is ``-1`` for a step with other sends, which stay in the header's
  ``reverse_rows``: step number, as text -> sends; ``-2`` for a hook step ``[node, None,
  j]``).

Examples
--------
>>> short = {"eqs": {"op": [0, 1], "ins": [[2], [0, 3]]},
...          "reverse": [[1, 0, 0], [0, [[0, "6", None, 0]]]],
...          "layout": {"rank": [0, 1]}, "nodes": {"shape": [0, 0]}}
>>> from_bytes(to_bytes(short)) == short
True
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np

__all__ = ["to_bytes", "from_bytes", "COLUMNS"]

#: The integer columns that travel as binary, by path (``eqs.ins`` and ``reverse`` are
#: first reshaped, see the module's text).
COLUMNS = (
    ("nodes", "shape"), ("eqs", "op"), ("eqs", "rule"), ("eqs", "line"),
    ("eqs", "ins_flat"), ("eqs", "ins_count"),
    ("layout", "container"), ("layout", "rank"), ("layout", "order"),
    ("reverse_e",), ("reverse_i",), ("reverse_j",),
)


#: The column types by width in bytes (little-endian signed integers).
_WIDTHS = {1: np.dtype("i1"), 2: np.dtype("<i2"), 4: np.dtype("<i4")}


def _narrowest(values: np.ndarray) -> np.dtype:
    """The narrowest of int8, int16 and int32 that holds ``values``."""
    if values.size == 0:
        return _WIDTHS[1]
    low, high = int(values.min()), int(values.max())
    for dtype in _WIDTHS.values():
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return dtype
    raise ValueError(f"explorer columns: {high} does not fit in 32 bits")


def _split_reverse(reverse: list[list[Any]]) -> tuple[list[int], list[int], list[int],
                                                       dict[str, Any]]:
    """The columns ``reverse_e``, ``reverse_i``, ``reverse_j`` and the rows of the steps
    with other sends (see the module's text); one comprehension per column (a 10⁵-step
    sweep is read three times at C speed rather than once in a Python loop)."""
    e_col = [step[0] for step in reverse]
    # i: the input position of a plain step, -2 for a hook step, -1 for other sends.
    i_col = [(-2 if step[1] is None else step[1]) if len(step) == 3 else -1
             for step in reverse]
    j_col = [step[2] if len(step) == 3 else -1 for step in reverse]
    rows = {str(k): step[1] for k, step in enumerate(reverse) if len(step) != 3}
    return e_col, i_col, j_col, rows


def to_bytes(short: Mapping[str, Any]) -> bytes:
    """The payload for ``short`` (a compact form): header, then the int32 columns."""
    head: dict[str, Any] = {k: (dict(v) if isinstance(v, Mapping) else v)
                            for k, v in short.items()}
    eqs = head["eqs"]
    ins = eqs.pop("ins")
    eqs["ins_flat"] = list(chain.from_iterable(ins))
    eqs["ins_count"] = list(map(len, ins))
    (head["reverse_e"], head["reverse_i"], head["reverse_j"],
     head["reverse_rows"]) = _split_reverse(head.pop("reverse"))
    arrays, listed = [], []
    for path in COLUMNS:
        where = head
        for key in path[:-1]:
            where = where.get(key, {})
        if path[-1] not in where:
            continue
        values = np.asarray(where.pop(path[-1]), dtype=np.int64)
        dtype = _narrowest(values)
        column = values.astype(dtype).tobytes()
        arrays.append(column + b"\0" * (-len(column) % 4))  # the next column stays aligned
        listed.append([".".join(path), int(values.size), dtype.itemsize])
    head["columns"] = listed
    text = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    return b"".join([struct.pack("<I", len(text)), text, *arrays])


def from_bytes(payload: bytes) -> dict[str, Any]:
    """The compact form :func:`to_bytes` wrote (the inverse of :func:`to_bytes`)."""
    (size,) = struct.unpack_from("<I", payload)
    head = json.loads(payload[4:4 + size].decode("utf-8"))
    offset = 4 + size
    for path, length, width in head.pop("columns"):
        keys = path.split(".")
        where = head
        for key in keys[:-1]:
            where = where.setdefault(key, {})
        where[keys[-1]] = np.frombuffer(payload, dtype=_WIDTHS[width], count=length,
                                        offset=offset).tolist()
        offset += width * length + (-(width * length) % 4)
    eqs = head["eqs"]
    flat, counts = eqs.pop("ins_flat"), eqs.pop("ins_count")
    ins, at = [], 0
    for c in counts:
        ins.append(flat[at:at + c])
        at += c
    eqs["ins"] = ins
    rows = head.pop("reverse_rows")
    head["reverse"] = [[e, i, j] if i >= 0 else [e, None, j] if i == -2 else [e, rows[str(k)]]
                       for k, (e, i, j) in enumerate(zip(head.pop("reverse_e"),
                                                         head.pop("reverse_i"),
                                                         head.pop("reverse_j")))]
    return head
