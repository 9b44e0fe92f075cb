"""Where an operation was called from: the first frame of user code on the stack.

Frames inside wengert and NumPy are skipped, so the line reported is the one
the user wrote (``y = np.sin(x) * x``). Capturing walks the stack, so it is
done only when asked for (``wengert.source_lines()``, ``wengert.detect_anomaly()``).
"""

from __future__ import annotations

import dis
import linecache
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SourceLine", "capture_stack", "user_frame", "user_line", "is_library",
           "storing_item", "converting_call", "is_notebook_cell", "frame_heading"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
#: Frames kept beyond the first frame of user code.
_KEEP = 24


@dataclass(frozen=True)
class SourceLine:
    """A line of user code: ``filename``, ``lineno``, the enclosing ``function`` and the
    ``text`` of the line (empty when the source is not available).

    Examples
    --------
    >>> SourceLine("<cell 3>", 2, "<module>", "y = x * x").short()
    '<cell 3>:2  y = x * x'
    """

    filename: str
    lineno: int
    function: str
    text: str

    def short(self) -> str:
        """``file:line  code`` on one line (the file without its directory)."""
        name = os.path.basename(self.filename) or self.filename
        return f"{name}:{self.lineno}  {self.text}".rstrip()


def is_library(filename: str) -> bool:
    """Whether a frame's file belongs to wengert or NumPy."""
    return filename.startswith(_PKG_DIR) or filename.startswith(_NUMPY_DIR)


def is_notebook_cell(filename: str) -> bool:
    """Whether ``filename`` names a notebook cell (the kernel's temporary
    ``.../ipykernel_<pid>/<hash>.py`` files, ``<ipython-input-…>``, ``<cell …>``, code run
    from a ``<string>``) rather than a file the user can open.

    Examples
    --------
    >>> is_notebook_cell("/tmp/ipykernel_41/2740.py"), is_notebook_cell("/src/model.py")
    (True, False)
    """
    return "ipykernel_" in filename or filename.startswith(("<ipython-input", "<cell", "<string"))


def frame_heading(filename: str, lineno: int, function: str) -> str:
    """The heading of a traceback entry: ``File "model.py", line 4, in f`` for a file and,
    as IPython's tracebacks name them, ``Cell, line 4, in f`` for a notebook cell (whose
    temporary file name changes every run).

    Examples
    --------
    >>> frame_heading("/tmp/ipykernel_41/2740.py", 4, "root_sum")
    'Cell, line 4, in root_sum'
    >>> frame_heading("/tmp/ipykernel_41/2740.py", 2, "<module>")
    'Cell, line 2'
    >>> frame_heading("/src/model.py", 12, "loss")
    'File "/src/model.py", line 12, in loss'
    """
    if not is_notebook_cell(filename):
        return f'File "{filename}", line {lineno}, in {function}'
    return f"Cell, line {lineno}" + ("" if function == "<module>" else f", in {function}")


def capture_stack(depth: int) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` per frame, innermost first, from ``depth`` frames above
    the caller, cut a little past the first frame of user code."""
    frame: Any = sys._getframe(depth + 1)
    frames: list[tuple[str, int, str]] = []
    user = -1
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        frames.append((filename, frame.f_lineno, code.co_name))
        if user < 0 and not is_library(filename):
            user = len(frames) - 1
        elif user >= 0 and len(frames) - user > _KEEP:
            break
        frame = frame.f_back
    return frames


#: filename -> whether it is wengert's or NumPy's (frames of a loop ask the same files).
_LIBRARY_FILE: dict[str, bool] = {}
#: (id of a code object, line) -> the code object and its SourceLine (a loop records the
#: same lines again; two cells compiled under one file name are two code objects).
_LINES: dict[tuple[int, int], tuple[Any, SourceLine]] = {}
_MAX_LINES = 4096


def user_line(depth: int) -> SourceLine | None:
    """The first line of user code from ``depth`` frames above the caller (what
    ``user_frame(capture_stack(depth))`` gives, without listing the frames around it)."""
    frame: Any = sys._getframe(depth + 1)
    library = _LIBRARY_FILE
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        lib = library.get(filename)
        if lib is None:
            lib = library[filename] = is_library(filename)
        if not lib:
            lineno = frame.f_lineno
            key = (id(code), lineno)
            known = _LINES.get(key)
            if known is not None and known[0] is code:
                return known[1]
            if len(_LINES) >= _MAX_LINES:
                _LINES.clear()
            line = SourceLine(filename, lineno, code.co_name,
                              linecache.getline(filename, lineno).strip())
            _LINES[key] = (code, line)
            return line
        frame = frame.f_back
    return None


def user_frame(frames: list[tuple[str, int, str]]) -> SourceLine | None:
    """The first frame of user code among ``frames`` (innermost first)."""
    for filename, lineno, function in frames:
        if not is_library(filename):
            text = linecache.getline(filename, lineno).strip()
            return SourceLine(filename, lineno, function, text)
    return None


#: The opcodes of an item assignment: ``STORE_SUBSCR``, and from Python 3.12 on
#: ``STORE_SLICE`` for ``buf[a:b] = x``.
_STORES = bytes(dis.opmap[name] for name in ("STORE_SUBSCR", "STORE_SLICE")
                if name in dis.opmap)


def storing_item(depth: int = 1) -> bool:
    """Whether the Python code ``depth`` frames above the caller is executing an item
    assignment (``buf[i] = x``, ``buf[a:b] = x``): a conversion such as ``float(x)`` or
    ``np.asarray(x)`` that NumPy makes from C code while storing ``x`` into an array,
    rather than one the user asked for. Asked only where a conversion would drop a derivative.

    Examples
    --------
    >>> storing_item(0)
    False
    """
    frame: Any = sys._getframe(depth + 1)
    if frame is None:
        return False
    code = frame.f_code.co_code
    i = frame.f_lasti
    return 0 <= i < len(code) and code[i] in _STORES


#: The instructions that load the function a call calls (``np.arange``, ``full``).
_LOADS = frozenset(("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF",
                    "LOAD_FAST"))


def converting_call(depth: int = 1) -> str | None:
    """The name of the NumPy function whose call converts a value with ``np.asarray``
    ``depth`` frames above the caller (``__array__``), or stores it with ``np.copyto``
    (wengert's frames skipped): a NumPy function written in Python
    (``np.full``) names itself; one written in C (``np.arange``) is read from the
    calling instruction of the user's code. ``None`` when neither says. Asked only on
    the way to an error, to name the cause.

    Examples
    --------
    >>> converting_call(0) is None
    True
    """
    frame: Any = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename.startswith(_PKG_DIR):
        frame = frame.f_back  # (wengert's own dispatch, between NumPy and the conversion)
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    if filename.startswith(_NUMPY_DIR):
        while frame.f_back is not None and frame.f_back.f_code.co_filename.startswith(_NUMPY_DIR):
            frame = frame.f_back  # (the function the user called, not its helpers)
        return frame.f_code.co_name
    if is_library(filename):
        return None
    return _called_name(frame.f_code, frame.f_lasti)


def _called_name(code: Any, lasti: int) -> str | None:
    """The name a call instruction at offset ``lasti`` of ``code`` calls (``arange`` for
    ``np.arange(x)``): the last name loaded by the expression that starts where the
    call's does, from the instructions' source positions."""
    call = None
    loads = []
    for ins in dis.get_instructions(code):
        if ins.offset == lasti:
            call = ins
            break
        if ins.opname in _LOADS:
            loads.append(ins)
    if call is None or not call.opname.startswith("CALL") or call.positions is None:
        return None
    start = (call.positions.lineno, call.positions.col_offset)
    end = (call.positions.end_lineno, call.positions.end_col_offset)
    best, best_end = None, None
    for ins in loads:
        pos = ins.positions
        if pos is None or (pos.lineno, pos.col_offset) != start:
            continue
        stop = (pos.end_lineno, pos.end_col_offset)
        if stop < end and (best_end is None or stop >= best_end):
            best, best_end = ins, stop
    return best.argval if best is not None and isinstance(best.argval, str) else None
