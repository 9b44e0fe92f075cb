"""Running a function again while watching where it cuts values from the graph.

``wg.explain(f, *args)`` calls ``f`` once more on fresh leaf tensors, inside
``wg.source_lines()`` and ``wg.keep_values()``, with a :class:`CutWatcher`
installed as the thread's profile function (``sys.setprofile``). The watcher
notes each call that user code makes to a wengert function that cuts a value
from the graph: ``.detach()``, ``wg.stop_gradient``, ``.data``, ``float()``,
``int()``, ``.item()``, ``.tolist()``, ``.numpy()``, ``np.asarray`` of a
tensor, ``.astype`` to an integer or boolean dtype, comparisons,
``wg.no_grad()`` (and any tensor the user's code computes with while grad
is off), ``tape.stop_recording()``; each with the tensor involved and the
user's line. Afterwards :func:`sites_for` keeps the events whose tensor was
computed from a given input, as :class:`~wengert.jupyter.explainer.source.Site`
records.

The watcher replaces the thread's profile function for the duration of the
call (a profiler running at the same time is paused and restored) and slows
the call down several times: it is a debugging tool, like
``wg.detect_anomaly()``.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> def f(x):
...     return float(x.sum()) * x
>>> with CutWatcher() as watcher:
...     y = f(x)
>>> [(s.kind, s.text) for s in sites_for(watcher, x)]
[('to_python', 'return float(x.sum()) * x')]
"""

from __future__ import annotations

import functools
import linecache
import sys
import sysconfig
from types import CodeType, FrameType
from typing import Any

import numpy as np
from wengert.core.modes import is_grad_enabled, no_grad
from wengert.core.source import is_library
from wengert.jupyter.explainer.source import Site
from wengert.reverse.gradient_tape import GradientTape, Variable
from wengert.reverse.tape_reading import tape_of
from wengert.reverse.tensor import Tensor, stop_gradient

__all__ = ["CutWatcher", "Event", "sites_for"]

#: Events kept per run (a loop that converts a value a million times needs only a few).
MAX_EVENTS = 200
#: The conversions whose result is kept (to find it again on the result's tape).
_RESULTS = ("to_python", "to_numpy")
#: An event's result before its call returned.
NOTHING = object()

_STDLIB = tuple(p for p in {sysconfig.get_paths().get("stdlib"),
                            sysconfig.get_paths().get("platstdlib")} if p)


@functools.cache
def _watched() -> dict[CodeType, str]:
    """The code of each wengert function that cuts a value from the graph -> its kind."""
    codes = {
        Tensor.detach: "detach", stop_gradient: "stop_gradient",
        Tensor.__float__: "to_python", Tensor.__int__: "to_python",
        Tensor.item: "to_python", Tensor.tolist: "to_python",
        Tensor.numpy: "to_numpy", Variable.numpy: "to_numpy", Tensor.__array__: "to_numpy",
        Tensor.astype: "integer",
        Tensor.__gt__: "comparison", Tensor.__ge__: "comparison", Tensor.__lt__: "comparison",
        Tensor.__le__: "comparison", Tensor.__eq__: "comparison", Tensor.__ne__: "comparison",
        no_grad: "no_grad_open",
        GradientTape.stop_recording.__wrapped__: "stop_recording",  # type: ignore[attr-defined]
    }
    found = {fn.__code__: kind for fn, kind in codes.items()}
    data = Tensor.data.fget
    if data is not None:
        found[data.__code__] = "data"
    return found


def _is_stdlib(filename: str) -> bool:
    return filename.startswith(_STDLIB) or filename.startswith("<frozen")


def _caller(frame: FrameType) -> tuple[FrameType | None, bool]:
    """The first frame of user code above ``frame``, and whether it called ``frame``
    directly (through standard-library frames such as ``contextlib`` only)."""
    direct = True
    up = frame.f_back
    while up is not None:
        name = up.f_code.co_filename
        if is_library(name):
            direct = False
        elif not _is_stdlib(name):
            return up, direct
        up = up.f_back
    return None, False


def _name_in(frame: FrameType, value: Any) -> str:
    for name, v in frame.f_locals.items():
        if v is value and not name.startswith("_"):
            return name
    return ""


class Event:
    """One cut seen by the watcher: ``kind``, the ``tensor`` it applied to (``None`` for
    the opening of a block), the user's ``filename``, ``lineno`` and line ``text``, the
    variable ``name`` holding the tensor there, and for a use under ``wg.no_grad()`` the
    line of the ``no_grad()`` call (``opened_at``)."""

    __slots__ = ("kind", "tensor", "filename", "lineno", "text", "name", "opened_at",
                 "result")

    def __init__(self, kind: str, tensor: Any, frame: FrameType, name: str,
                 opened_at: tuple[str, int, str] | None = None) -> None:
        self.kind = kind
        self.tensor = tensor
        self.filename = frame.f_code.co_filename
        self.lineno = frame.f_lineno
        self.text = linecache.getline(self.filename, self.lineno).strip()
        self.name = name
        self.opened_at = opened_at
        #: What a conversion returned (the Python number, the array): :data:`NOTHING`
        #: until it returned.
        self.result: Any = NOTHING

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, line {self.lineno}: {self.text!r})"


def _restorable(profiler: Any) -> bool:
    """Whether ``sys.setprofile`` can put ``profiler`` (what ``sys.getprofile()`` gave)
    back: none, or a Python function. A profiler written in C (``cProfile``) is not
    callable from Python: it is left running, and nothing is watched."""
    return profiler is None or callable(profiler)


#: How many returns of the function a :class:`CutWatcher` keeps the variables of (a
#: recursive function returns from several frames).
MAX_FRAMES = 100


class CutWatcher:
    """Context manager: the calls that cut values from the graph made inside the block
    (``events``, in order). See the module docstring. Given the function ``keep``, it
    also keeps the variables of each of its frames as it returns (``frames``): what a
    line that turned a value into a number bound (``k = float(h) * 2``)."""

    def __init__(self, keep: Any = None) -> None:
        self.events: list[Event] = []
        self.frames: list[dict[str, Any]] = []
        self._keep = getattr(keep, "__code__", None)
        self._codes = _watched()
        self._opened: tuple[str, int, str] | None = None
        self._previous: Any = None
        self._returning: dict[int, Event] = {}  # id of a conversion's frame -> its event

    def __enter__(self) -> CutWatcher:
        self._previous = sys.getprofile()
        if _restorable(self._previous):
            sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        if _restorable(self._previous):
            sys.setprofile(self._previous)

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            if event == "return":
                if self._returning:
                    done = self._returning.pop(id(frame), None)
                    if done is not None:
                        done.result = arg
                if frame.f_code is self._keep and len(self.frames) < MAX_FRAMES:
                    self.frames.append(dict(frame.f_locals))
            return
        if len(self.events) >= MAX_EVENTS:
            return
        kind = self._codes.get(frame.f_code)
        if kind is None:
            if not is_grad_enabled() and is_library(frame.f_code.co_filename):
                self._use_without_grad(frame)
            return
        user, direct = _caller(frame)
        if user is None or not direct:
            return
        args = frame.f_locals
        if kind == "no_grad_open":
            self._opened = (user.f_code.co_filename, user.f_lineno,
                            linecache.getline(user.f_code.co_filename, user.f_lineno).strip())
            return
        if kind == "stop_recording":
            self.events.append(Event(kind, None, user, ""))
            return
        tensor = args.get("self", args.get("x"))
        if kind == "integer" and not _is_integer(args.get("dtype")):
            return
        if isinstance(tensor, Tensor):
            self.events.append(Event(kind, tensor, user, _name_in(user, tensor)))
            if kind in _RESULTS:
                self._returning[id(frame)] = self.events[-1]

    def _use_without_grad(self, frame: FrameType) -> None:
        """A wengert function called by user code while grad is off: note the tensors that
        require grad among its arguments (their use is not recorded)."""
        user, direct = _caller(frame)
        if user is None or not direct:
            return
        code = frame.f_code
        local = frame.f_locals
        values = [local.get(n) for n in code.co_varnames[:code.co_argcount]]
        for v in list(values):
            if isinstance(v, tuple):
                values.extend(v)
        for v in values:
            if isinstance(v, Tensor) and v.requires_grad:
                self.events.append(Event("no_grad", v, user, _name_in(user, v), self._opened))
                return


def _is_integer(dtype: Any) -> bool:
    try:
        return np.dtype(dtype).kind in "biu"
    except TypeError:
        return False


def _depends(tensor: Any, leaf: Any, cache: dict[int, bool]) -> bool:
    """Whether ``tensor`` is ``leaf`` or was computed from it on the graph."""
    if tensor is leaf:
        return True
    key = id(tensor)
    if key not in cache:
        ok = isinstance(tensor, Tensor) and (tensor.requires_grad or tensor.grad_fn is not None)
        cache[key] = ok and any(lf is leaf for lf in tape_of(tensor).leaves)
    return cache[key]


def sites_for(watcher: CutWatcher, leaf: Any, name: str = "") -> list[Site]:
    """The events of ``watcher`` that cut a value computed from ``leaf`` (or, for
    ``tape.stop_recording()``, any block), as sites in the order they happened, one per
    line and kind; ``name`` names ``leaf`` where its variable name is not known.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> with CutWatcher() as watcher:
    ...     n = x.numpy()
    >>> [(s.kind, s.name, s.text) for s in sites_for(watcher, x)]
    [('to_numpy', 'x', 'n = x.numpy()')]
    """
    cache: dict[int, bool] = {}
    found: dict[tuple[str, int, str], list[Any]] = {}
    for ev in watcher.events:
        if ev.tensor is not None and not _depends(ev.tensor, leaf, cache):
            continue
        if ev.kind == "no_grad" and ev.opened_at is not None:
            filename, lineno, text = ev.opened_at
        else:
            filename, lineno, text = ev.filename, ev.lineno, ev.text
        key = (filename, lineno, ev.kind)
        if key not in found:
            named = ev.name or (name if ev.tensor is leaf else "")
            found[key] = [lineno, text, ev.kind, named, filename, ev.tensor, []]
        if ev.result is not NOTHING:
            found[key][-1].append(ev.result)
    return [Site(*fields[:-1], results=tuple(fields[-1])) for fields in found.values()]
