"""After an %%autodiff cell nothing the namespace reaches holds a value of the cell's
transform: variables, items of containers, attributes of the user's objects, closures and
defaults of functions hold plain values, and the next cell runs."""

from __future__ import annotations

import collections
import functools
import gc
import types

import pytest

import numpy as np
import wengert as wg
from wengert.core.levels import DUAL_TAG
from wengert.core.modes import GRAD_ENABLED, RECORDERS, TRANSFORM_DEPTH
from wengert.jupyter.magic.plain import make_plain
from wengert.jupyter.magic.runner import run_autodiff
from wengert.reverse.tensor import Tensor


def _traced_reachable(ns):
    """Every tensor or dual number reachable from the namespace by any reference
    (``gc.get_referents``), modules, classes and functions of libraries aside: a check
    independent of the walk under test. A user's tensor made before the cell is allowed."""
    found = []
    seen = set()
    todo = [(v, k) for k, v in ns.items() if not k.startswith("__") and k not in ("np", "wg")]
    while todo:
        obj, where = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (Tensor, wg.Dual)):
            if not (isinstance(obj, Tensor) and obj._level == 0):
                found.append(where)
            continue
        if isinstance(obj, types.ModuleType) or (
                isinstance(obj, type) and obj.__module__ != "builtins"):
            continue
        if isinstance(obj, types.FunctionType) and obj.__globals__ is not ns:
            continue
        children = gc.get_referents(obj)
        if isinstance(obj, np.ndarray) and obj.dtype == object:  # not seen by the gc
            children = list(obj.flat)
        for child in children:
            if child is ns:
                continue
            todo.append((child, f"{where}>{type(child).__name__}"))
    return found


def _state():
    return GRAD_ENABLED.get(), RECORDERS.get(), TRANSFORM_DEPTH.get(), DUAL_TAG.get()


CASES = {
    "attributes": ("class B:\n    pass\nbox = B()\nbox.val = x * 3\n"
                   "box.items = [x, (x * 2, {'k': x})]"),
    "slots": ("class S:\n    __slots__ = ('a', '__b')\n    def __init__(self, v):\n"
              "        self.a = v\n        self.__b = v\ns = S(x * 2)"),
    "closures and defaults": ("def make():\n    a = x * 2\n    return lambda: a\ng = make()\n"
                              "h = lambda q=x * 3, *, r=x: q + r\ndef k():\n    pass\nk.attr = x"),
    "containers": ("st = {x * 2, 3.0}\nfs = frozenset([x * 3])\nt = (1, [x])\n"
                   "d = {x * 1.0: 'key'}\nq = collections.deque([x, x * 2])\nnested = [[[(x,)]]]"),
    "namedtuple and partial": ("P = collections.namedtuple('P', 'a b')\npt = P(x, 2.0)\n"
                               "pa = functools.partial(max, x * 2, key=None)"),
    "object arrays": "o = np.empty(2, dtype=object)\no[0] = x * 3\no[1] = [x]",
    "class attributes": "class C:\n    attr = x * 2\n    stuff = [x]",
    "simple namespace and methods": ("sn = types.SimpleNamespace(v=x * 2)\nclass M:\n"
                                     "    def f(self):\n        return 1\nm = M()\nm.v = x\n"
                                     "bound = m.f"),
    "dict subclasses": "dd = collections.defaultdict(list)\ndd['a'].append(x)\nod = "
                       "collections.OrderedDict(a=x)",
    "a list the notebook had": "seen.append(x * 2)\nseen_map['k'] = x",
    "cycles": "a = [x]\na.append(a)\nb = {'self': None, 'v': x}\nb['self'] = b",
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", list(CASES))
def test_nothing_reachable_holds_a_traced_value_and_the_next_cell_runs(case, mode):
    ns = {"np": np, "wg": wg, "collections": collections, "functools": functools,
          "types": types, "seen": [], "seen_map": {}}
    before = _state()
    r = run_autodiff(CASES[case] + "\ny = x * 5.0", ns, ["x"], mode=mode, preset={"x": 2.0})
    assert r.grads["x"] == 5.0 and r.notes == ()
    assert _traced_reachable(ns) == []
    assert _state() == before
    # the next cell, with or without %%autodiff, uses what the cell stored
    exec("probe = [v for v in list(globals().values())]", ns)
    assert run_autodiff("z = x * 7.0", ns, ["x"]).grads["x"] == 7.0


def test_values_are_plain_numbers_and_arrays_in_place():
    ns = {"np": np, "seen": []}
    keep = ns["seen"]
    run_autodiff(CASES["attributes"] + "\nseen.append(x * np.ones(2))\ny = x * 1.0", ns, ["x"],
                 preset={"x": 2.0})
    box = ns["box"]
    assert box.val == 6.0 and type(box.val) is float
    assert box.items == [2.0, (4.0, {"k": 2.0})]
    assert ns["seen"] is keep and type(keep[0]) is np.ndarray
    exec("w = box.val * 2 + box.items[1][0]", ns)
    assert ns["w"] == 16.0


def test_closures_defaults_and_slots_hold_plain_values():
    ns = {"np": np}
    run_autodiff(CASES["closures and defaults"] + "\n" + CASES["slots"] + "\ny = x * 1.0", ns,
                 ["x"], preset={"x": 2.0})
    assert ns["g"]() == 4.0 and ns["h"]() == 8.0 and ns["k"].attr == 2.0
    assert ns["s"].a == 4.0 and ns["s"]._S__b == 4.0


def test_an_exception_mid_cell_leaves_the_namespace_clean_and_the_state_intact():
    ns = {"np": np, "seen": []}
    before = _state()
    with pytest.raises(KeyError):
        run_autodiff(CASES["attributes"] + "\nseen.append(x)\nraise KeyError('boom')", ns,
                     ["x"], preset={"x": 2.0})
    assert _state() == before and _traced_reachable(ns) == []
    assert ns["seen"] == [2.0] and ns["box"].val == 6.0
    assert all(not k.startswith("__wengert") for k in ns)
    assert run_autodiff("y = x ** 2", ns, ["x"]).grads["x"] == 4.0


def test_a_users_tensor_input_stays_that_tensor_wherever_the_cell_put_it():
    t = wg.tensor(2.0, requires_grad=True)
    ns = {"t": t, "store": []}
    r = run_autodiff("store.append(t)\ny = t ** 3", ns, ["t"])
    assert r.grads["t"] == 12.0 and ns["t"] is t and ns["store"][0] is t


def test_a_generator_holding_a_traced_value_is_reported():
    ns = {}
    r = run_autodiff("def gen():\n    a = x * 2\n    yield a\n    yield a\ng = gen()\nnext(g)\n"
                     "y = x * 1.0", ns, ["x"], preset={"x": 2.0})
    assert "suspended generator gen holds one in its variable 'a'" in r.notes[-1]


def test_the_walk_skips_libraries_and_big_lists_fast():
    calls = []

    def convert(v):
        calls.append(type(v))
        return v

    ns = {"np": np, "big": list(range(100_000)), "table": dict.fromkeys(range(1000), 1.0),
          "arr": np.zeros(10_000)}
    assert make_plain(ns, convert) == []
    assert calls == [types.ModuleType, list, dict, np.ndarray]  # not the items


def test_the_walk_runs_no_code_of_the_users_objects():
    class Guarded:
        def __getattribute__(self, name):
            raise RuntimeError(f"read {name}")

    class Prop:
        @property
        def __dict__(self):
            raise RuntimeError("read __dict__")

    g = Guarded()
    object.__setattr__(g, "v", "T")
    ns = {"__name__": Guarded.__module__, "g": g, "p": Prop()}
    assert make_plain(ns, lambda v: v) == []
    assert run_autodiff("y = x * 2\nh = g", ns, ["x"], preset={"x": 1.0}).grads["x"] == 2.0


def test_the_walk_runs_no_code_of_the_users_container_subclasses():
    # a subclass of list, dict, set, frozenset or tuple holding a value of the cell is made
    # plain through the base type: its own methods (which may raise) never run
    class Loud:
        def __init__(self, *a, **k):
            raise RuntimeError("user code ran")

        __setitem__ = __iter__ = __getitem__ = add = discard = items = keys = values = \
            __len__ = __contains__ = __init__

    class LoudList(Loud, list):
        pass

    class LoudDict(Loud, dict):
        pass

    class LoudSet(Loud, set):
        pass

    class LoudFrozen(frozenset):
        def __new__(cls, *a):
            raise RuntimeError("user code ran")

        __iter__ = __contains__ = __len__ = Loud.__init__

    class LoudTuple(tuple):
        def __new__(cls, *a):
            raise RuntimeError("user code ran")

        __iter__ = __getitem__ = __len__ = Loud.__init__

    ns = {"np": np, "__name__": Loud.__module__}
    for name, cls in [("ll", LoudList), ("ld", LoudDict), ("ls", LoudSet)]:
        ns[name] = cls.__new__(cls)
    cell = ("list.append(ll, x * 2)\ndict.__setitem__(ld, 'k', x * 3)\nset.add(ls, x * 4)\n"
            "lf = frozenset.__new__(LoudFrozen, [x * 5])\nlt = tuple.__new__(LoudTuple, (x * 6,))\n"
            "y = x * 7")
    ns.update(LoudFrozen=LoudFrozen, LoudTuple=LoudTuple)
    r = run_autodiff(cell, ns, ["x"], preset={"x": 1.0})
    assert r.grads["x"] == 7.0 and r.notes == () and _traced_reachable(ns) == []
    assert list.__getitem__(ns["ll"], 0) == 2.0 and dict.__getitem__(ns["ld"], "k") == 3.0
    assert set(set.__iter__(ns["ls"])) == {4.0} and type(ns["lf"]) is LoudFrozen
    assert set(frozenset.__iter__(ns["lf"])) == {5.0}
    assert type(ns["lt"]) is LoudTuple and tuple.__getitem__(ns["lt"], 0) == 6.0


@pytest.mark.parametrize("value", [
    3, np.array([1, 2]), np.float32(2.0), np.array([1.0, 2.0], np.float32), np.array(2.0),
    np.int64(4),
], ids=["int", "int array", "float32 scalar", "float32 array", "0-d array", "int64 scalar"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_an_input_the_cell_does_not_rebind_keeps_its_object(value, mode):
    # the leaf is made of a float64 copy, but the notebook's variable is left as it was
    ns = {"np": np, "x": value}
    run_autodiff("y = np.sum(x * x)\nkept = [x]", ns, ["x"], mode=mode)
    assert ns["x"] is value and ns["kept"][0] is value


def test_an_input_bound_in_the_cell_keeps_the_object_it_was_bound_to():
    ns = {"np": np}
    run_autodiff("x = 3\ny = x * x", ns, ["x"])
    assert type(ns["x"]) is int and ns["x"] == 3
