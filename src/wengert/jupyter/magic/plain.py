"""Leaving a namespace without the traced values a cell stored into it.

:func:`make_plain` walks everything a notebook's namespace reaches that code
could have stored a value into, and replaces each value that ``convert``
changes (the ``%%autodiff`` runner's tensors and dual numbers, by their
plain values):

* lists, dicts (keys and values), sets, deques, tuples and frozensets (rebuilt,
  and put back where they were found), NumPy arrays of objects;
* the attributes of objects of the user's own classes (``__dict__`` and
  ``__slots__``; classes defined in the notebook or in a module that is not
  installed, i.e. not under Python's or the environment's library folders),
  ``types.SimpleNamespace``, and the attributes of those classes themselves;
* functions defined in the namespace (their closure cells, defaults and
  attributes), bound methods, ``functools.partial``.

It does not enter modules, classes and objects of installed libraries (their
object graphs are large, and a notebook rarely stores a cell's values into
them), nor wengert's own objects. The cache of a ``functools.lru_cache`` (or
``functools.cache``) function cannot be read: :func:`caches` notes the
notebook's such functions before a cell, and :func:`clear_caches` empties those
that computed something new during it. What it finds but cannot replace (a
generator suspended with such a value in its frame, an immutable object of
an unknown type) is reported. The walk is iterative (no recursion), visits
each object once, and skips a large list or dict of numbers and strings at C
speed.

Examples
--------
>>> class Box:
...     pass
>>> class Traced:  # stands for a tensor of the cell
...     def __repr__(self):
...         return "T"
>>> t, box = Traced(), Box()
>>> box.val, box.items = t, (t, 2.0)
>>> ns = {"__name__": Box.__module__, "box": box, "f": lambda y=[t]: y}
>>> make_plain(ns, lambda v: "plain" if v is t else v)
[]
>>> box.val, box.items, ns["f"].__defaults__
('plain', ('plain', 2.0), (['plain'],))
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import functools
import os
import sys
import sysconfig
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["make_plain", "caches", "clear_caches"]

#: Types whose instances hold no other object.
_ATOMS = frozenset({int, float, complex, bool, str, bytes, type(None), range, slice,
                    np.float64, np.float32, np.int64, np.int32, np.bool_, np.complex128,
                    type(Ellipsis), type(NotImplemented)})
_SKIP = (types.ModuleType, types.BuiltinFunctionType, types.CodeType, types.FrameType,
         types.GetSetDescriptorType, types.MemberDescriptorType, types.WrapperDescriptorType,
         types.MethodWrapperType, types.MethodDescriptorType, property)

_LIBRARY_DIRS = tuple(sorted({os.path.normcase(os.path.realpath(p)) for key in (
    "stdlib", "platstdlib", "purelib", "platlib") if (p := sysconfig.get_paths().get(key))}
    | {os.path.normcase(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix)}))


@functools.lru_cache(maxsize=4096)
def _installed(module: str) -> bool:
    """Whether ``module`` is Python's or an installed library's (or has no file)."""
    if module.split(".")[0] in ("wengert", "builtins", "IPython", "ipykernel", "numpy"):
        return True
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if not path:
        return True
    path = os.path.normcase(os.path.realpath(path))
    return any(path.startswith(d + os.sep) for d in _LIBRARY_DIRS)


class _Walk:
    def __init__(self, convert: Callable[[Any], Any], namespace: dict[str, Any]) -> None:
        self.convert = convert
        self.namespace = namespace
        self.home = namespace.get("__name__", "builtins")  # its classes are the user's
        self.seen: dict[int, Any] = {}  # id -> the object (kept alive while walking)
        self.rebuilt: dict[int, Any] = {}  # id of an immutable container -> its plain copy
        self.problems: list[str] = []

    def users(self, cls: type) -> bool:
        """Whether ``cls`` is a class of the user's (see the module docstring)."""
        module = getattr(cls, "__module__", None)
        if module == "builtins":  # a namespace without __name__ defines classes there
            return self.home == "builtins" and getattr(builtins, cls.__name__, None) is not cls
        return self.mine(module)

    def mine(self, module: Any) -> bool:
        """Whether code of ``module`` (a name) is the user's."""
        return isinstance(module, str) and (module == self.home or not _installed(module))

    # The walk: a stack of frames (object, where it was found, its children still to
    # see, the replacements found). A child is replaced when ``convert`` changes it, or
    # when it is an immutable container rebuilt after its own walk.
    def run(self, root: Any, label: str) -> Any:
        """``root`` made plain; a new object only when ``root`` is an immutable
        container that had to be rebuilt (or is itself converted)."""
        new = self.leaf(root)
        if new is not root:
            return new
        if not self.enter(root):
            return root
        stack = [(root, label, _Slots(self.children(root)), [])]
        while stack:
            obj, where, children, changes = stack[-1]
            for slot, child in children:
                new = self.leaf(child)
                if new is not child:
                    changes.append((slot, new))
                    continue
                if self.enter(child):
                    stack.append((child, f"{where}{_slot_text(slot)}",
                                  _Slots(self.children(child)), []))
                    break
                done = self.rebuilt.get(id(child))
                if done is not None:
                    changes.append((slot, done))
            else:
                stack.pop()
                replacement = self.apply(obj, where, changes) if changes else obj
                if replacement is not obj:
                    self.rebuilt[id(obj)] = replacement
                if stack:
                    if replacement is not obj:
                        stack[-1][3].append((stack[-1][2].last, replacement))
                else:
                    return replacement
        return root

    def leaf(self, v: Any) -> Any:
        if type(v) in _ATOMS:
            return v
        return self.convert(v)

    def enter(self, v: Any) -> bool:
        """Whether ``v`` is a container to walk, seen for the first time."""
        if type(v) in _ATOMS or _is(v, _SKIP) or id(v) in self.seen:
            return False
        if type(v) is np.ndarray and v.dtype != object:
            return False
        self.seen[id(v)] = v
        return True

    def children(self, obj: Any) -> Any:
        """``(slot, child)`` pairs of ``obj`` (an iterator; empty when not walked)."""
        # (containers are read through their base type: a subclass's own methods, which
        # may do anything, never run)
        t = type(obj)
        if _is(obj, (list, collections.deque)):
            values = list(list.__iter__(obj) if _is(obj, list)
                          else collections.deque.__iter__(obj))
            if _only_atoms(values):
                return iter(())
            return iter(list(enumerate(values)))
        if _is(obj, tuple):
            values = list(tuple.__iter__(obj))
            if not _only_atoms(values):
                return iter(list(enumerate(values)) + self.attributes(obj))
            return iter(self.attributes(obj))
        if _is(obj, dict):
            pairs = list(dict.items(obj))
            items = []
            if not (_only_atoms(v for _, v in pairs) and _only_atoms(k for k, _ in pairs)):
                items = [(("key", k), k) for k, _ in pairs if type(k) not in _ATOMS]
                items += [(("item", k), v) for k, v in pairs]
            return iter(items + self.attributes(obj))
        if _is(obj, (set, frozenset)):
            values = list(set.__iter__(obj) if _is(obj, set) else frozenset.__iter__(obj))
            if _only_atoms(values):
                return iter(())
            return iter([(("member", v), v) for v in values])
        if t is np.ndarray:  # of objects
            return iter([(("flat", i), v) for i, v in enumerate(obj.flat)])
        if t is types.FunctionType:
            return iter(self.function(obj))
        if t is types.MethodType:
            return iter([(("self",), obj.__self__), (("func",), obj.__func__)])
        if _is(obj, functools.partial):
            return iter([(("partial", "func"), obj.func), (("partial", "args"), obj.args),
                         (("partial", "keywords"), obj.keywords)])
        if _is(obj, (types.GeneratorType, types.CoroutineType,
                            types.AsyncGeneratorType)):
            self.suspended(obj)
            return iter(())
        if _is(obj, type):
            if not self.users(obj):
                return iter(())
            return iter([(("class", k), v) for k, v in list(vars(obj).items())
                         if not k.startswith("__")])
        if t is types.SimpleNamespace or self.users(t):
            return iter(self.attributes(obj))
        return iter(())

    def attributes(self, obj: Any) -> list[tuple[Any, Any]]:
        """The ``__dict__`` and ``__slots__`` entries of an object of the user's class."""
        t = type(obj)
        if t is not types.SimpleNamespace and not self.users(t):
            return []
        out: list[tuple[Any, Any]] = []
        d = _instance_dict(obj)
        if d is not None:
            out += [(("attr", k), v) for k, v in d.items()]
        for cls in t.__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name in ("__dict__", "__weakref__"):
                    continue
                if name.startswith("__") and not name.endswith("__"):
                    name = f"_{cls.__name__.lstrip('_')}{name}"
                descriptor = cls.__dict__.get(name)
                if type(descriptor) is not types.MemberDescriptorType:
                    continue
                with contextlib.suppress(AttributeError):  # an empty slot
                    out.append((("slot", descriptor), descriptor.__get__(obj, t)))
        return out

    def function(self, f: types.FunctionType) -> list[tuple[Any, Any]]:
        if f.__globals__ is not self.namespace and not self.mine(f.__module__):
            return []
        out: list[tuple[Any, Any]] = []
        for cell in f.__closure__ or ():
            with contextlib.suppress(ValueError):  # an empty cell
                out.append((("closure", cell), cell.cell_contents))
        if f.__defaults__:
            out.append((("defaults",), f.__defaults__))
        if f.__kwdefaults__:
            out.append((("kwdefaults",), f.__kwdefaults__))
        out += [(("attr", k), v) for k, v in f.__dict__.items()]
        return out

    def suspended(self, gen: Any) -> None:
        frame = getattr(gen, "gi_frame", None) or getattr(gen, "cr_frame", None) \
            or getattr(gen, "ag_frame", None)
        if frame is None:
            return
        for name, v in frame.f_locals.items():
            if self.leaf(v) is not v:
                self.problems.append(
                    f"the suspended {type(gen).__name__} {gen.__qualname__} holds one in "
                    f"its variable {name!r}")
                return

    # -- replacing ---------------------------------------------------------------------
    def apply(self, obj: Any, where: str, changes: list[tuple[Any, Any]]) -> Any:
        """Put the replacements into ``obj`` (mutable) or build its plain copy."""
        if _is(obj, (list, collections.deque)):
            setitem = list.__setitem__ if _is(obj, list) else collections.deque.__setitem__
            for slot, new in changes:
                if isinstance(slot, int):
                    setitem(obj, slot, new)
                else:
                    self.set_attribute(obj, slot, new, where)
            return obj
        if _is(obj, dict):
            for slot, new in changes:
                kind = slot[0]
                if kind == "item":
                    dict.__setitem__(obj, slot[1], new)
                elif kind == "key":
                    value = dict.pop(obj, slot[1])
                    dict.__setitem__(obj, new, value)
                else:
                    self.set_attribute(obj, slot, new, where)
            return obj
        if _is(obj, set):
            for slot, new in changes:
                set.discard(obj, slot[1])
                set.add(obj, new)
            return obj
        if _is(obj, frozenset):
            old = {id(slot[1]) for slot, _ in changes}
            new_set = frozenset.__new__(type(obj), [v for v in frozenset.__iter__(obj)
                                                    if id(v) not in old]
                                        + [new for _, new in changes])
            _copy_state(obj, new_set)
            return new_set
        if _is(obj, tuple):
            items = list(tuple.__iter__(obj))
            rest = []
            for slot, new in changes:
                if isinstance(slot, int):
                    items[slot] = new
                else:
                    rest.append((slot, new))
            return self.rebuild_tuple(obj, items, rest, where)
        if type(obj) is np.ndarray:
            for slot, new in changes:
                obj.flat[slot[1]] = new
            return obj
        if type(obj) is types.FunctionType:
            for slot, new in changes:
                kind = slot[0]
                if kind == "closure":
                    slot[1].cell_contents = new
                elif kind == "defaults":
                    obj.__defaults__ = new
                elif kind == "kwdefaults":
                    obj.__kwdefaults__ = new
                else:
                    obj.__dict__[slot[1]] = new
            return obj
        if type(obj) is types.MethodType:
            parts = {slot[0]: new for slot, new in changes}
            return types.MethodType(parts.get("func", obj.__func__),
                                    parts.get("self", obj.__self__))
        if _is(obj, functools.partial):
            parts = {slot[1]: new for slot, new in changes}
            return type(obj)(parts.get("func", obj.func), *parts.get("args", obj.args),
                             **parts.get("keywords", obj.keywords))
        if _is(obj, type):
            for slot, new in changes:
                type.__setattr__(obj, slot[1], new)  # (not a metaclass's own)
            return obj
        for slot, new in changes:
            self.set_attribute(obj, slot, new, where)
        return obj

    def set_attribute(self, obj: Any, slot: Any, new: Any, where: str) -> None:
        kind, key = slot
        if kind == "attr":
            _instance_dict(obj)[key] = new  # type: ignore[index]
        elif kind == "slot":
            key.__set__(obj, new)

    def rebuild_tuple(self, obj: tuple, items: list[Any], rest: list[Any], where: str
                      ) -> Any:
        t = type(obj)
        if t is tuple:
            return tuple(items)
        # a subclass (a named tuple, the user's): built as a tuple of its type, its own
        # __new__ not run, its attributes carried over
        new = tuple.__new__(t, items)
        _copy_state(obj, new)
        for slot, value in rest:
            self.set_attribute(new, slot, value, where)
        return new


def _copy_state(obj: Any, new: Any) -> None:
    """Give ``new`` (a rebuilt immutable container of ``obj``'s type) ``obj``'s attributes
    (``__dict__`` and ``__slots__``), reading and writing them without running its code."""
    d = _instance_dict(obj)
    if d:
        target = _instance_dict(new)
        if target is not None:
            target.update(d)
    t = type(obj)
    for cls in t.__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{cls.__name__.lstrip('_')}{name}"
            descriptor = cls.__dict__.get(name)
            if type(descriptor) is types.MemberDescriptorType:
                with contextlib.suppress(AttributeError):  # an empty slot
                    descriptor.__set__(new, descriptor.__get__(obj, t))


def _instance_dict(obj: Any) -> dict[str, Any] | None:
    """``obj``'s own ``__dict__`` (not a property of that name: no user code runs)."""
    for cls in type(obj).__mro__:
        d = cls.__dict__.get("__dict__")
        if d is not None:
            if type(d) not in (types.GetSetDescriptorType, types.MemberDescriptorType):
                return None
            got = d.__get__(obj, type(obj))
            return got if type(got) is dict else None
    return None


def _is(obj: Any, types_: Any) -> bool:
    """``isinstance`` by the object's real type (``isinstance`` may read ``__class__``,
    which runs the user's ``__getattribute__``)."""
    return issubclass(type(obj), types_)


def _only_atoms(values: Any) -> bool:
    """Whether every entry is a number, string or ``None`` (checked at C speed)."""
    return set(map(type, values)) <= _ATOMS


def _slot_text(slot: Any) -> str:
    if isinstance(slot, int):
        return f"[{slot}]"
    kind = slot[0]
    if kind in ("item", "key"):
        return f"[{slot[1]!r}]"
    if kind in ("attr", "class"):
        return f".{slot[1]}"
    if kind == "slot":
        return f".{getattr(slot[1], '__name__', '?')}"
    if kind == "closure":
        return ".<closure>"
    if kind in ("defaults", "kwdefaults"):
        return f".__{kind}__"
    return f".{kind}"


class _Slots:
    """An iterator over ``(slot, child)`` that remembers the last slot it gave."""

    __slots__ = ("_it", "last")

    def __init__(self, pairs: Any) -> None:
        self._it = iter(pairs)
        self.last = None

    def __iter__(self) -> _Slots:
        return self

    def __next__(self) -> tuple[Any, Any]:
        slot, child = next(self._it)
        self.last = slot
        return slot, child


def make_plain(namespace: dict[str, Any], convert: Callable[[Any], Any],
               skip: Mapping[str, Any] | None = None) -> list[str]:
    """Replace, everywhere ``namespace`` reaches (see the module docstring), each value
    ``v`` for which ``convert(v) is not v`` by ``convert(v)``.

    ``skip``: names whose values are not entered (IPython's own, e.g. ``Out``).
    Returns descriptions of the places holding such a value that could not be changed.
    """
    walk = _Walk(convert, namespace)
    for name in list(namespace):
        if name.startswith("__") and name.endswith("__"):
            continue
        value = namespace[name]
        if skip is not None and name in skip and skip[name] is value:
            continue
        new = walk.run(value, name)
        if new is not value:
            namespace[name] = new
    return walk.problems


_LRU = type(functools.lru_cache(maxsize=1)(len))


def caches(namespace: Mapping[str, Any]) -> dict[int, tuple[Any, int]]:
    """The ``functools.lru_cache`` functions among ``namespace``'s variables (``id`` ->
    the function and how many values it has computed so far)."""
    return {id(v): (v, v.cache_info().misses) for v in list(namespace.values())
            if type(v) is _LRU}


def clear_caches(namespace: Mapping[str, Any], before: Mapping[int, tuple[Any, int]]
                 ) -> list[str]:
    """Empty the caches of ``namespace``'s ``lru_cache`` functions that computed values since
    ``before`` (:func:`caches`): they may hold the cell's traced values. Their names."""
    cleared = []
    for name, v in list(namespace.items()):
        if type(v) is not _LRU:
            continue
        then = before.get(id(v))
        if then is None or then[0] is not v or v.cache_info().misses != then[1]:
            v.cache_clear()
            cleared.append(name)
    return cleared
