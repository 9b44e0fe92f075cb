"""The bindings of a running ``%%autodiff`` cell: each input is a leaf from the moment
it is bound.

:class:`CellRun` is what the rewritten cell (:mod:`wengert.jupyter.magic.cell`)
calls at each binding it reports. It notes when each binding ran (the output
is the last one executed) and makes the inputs leaves of the cell's
transform level:

* An input that the notebook holds before the cell (a number, an array, a
  tensor) is a leaf from the start: its value then is its first binding.
* A binding of an input's name to a value computed from the inputs (a tensor
  of this run that carries a derivative) continues it: in
  ``for _ in range(3): x = x - 0.1 * g(x)`` the derivative is with respect to
  the value ``x`` held first, through every update.
* A binding to a value that is not computed from the inputs (``x = 2.0``)
  makes a new leaf: from then on that value is the input. The derivative is
  with respect to the last such value; the runner reports what the output owes
  to earlier ones.
* An augmented assignment on the leaf itself (``s *= 3.0``) acts as
  ``s = s * 3.0``: an input is never changed in place (it would change the
  value the derivative is taken at, and PyTorch refuses it on a leaf). On a
  value computed from the inputs it is the in-place operation it is.

Examples
--------
>>> from wengert.jupyter.magic.cell import rewrite_cell
>>> from wengert.core.modes import transform_scope
>>> cell = rewrite_cell("s = 2.0\\ns *= 3.0\\ny = s ** 2", ["s"])
>>> ns = {}
>>> with transform_scope() as level:
...     run = CellRun(cell, ["s"], level, None, ns)
...     ns.update(run.hooks())
...     exec(compile(cell.tree, "<cell>", "exec"), ns)
...     [h.value for h in run.history["s"]], run.updates["s"][0], run.last_bound()
([2.0], 1, ['y', 's'])
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from wengert.forward.dual import Dual
from wengert.jupyter.magic.cell import AT, BIND, IN_PLACE, OUT_OF_PLACE, TICK, Cell
from wengert.reverse.tensor import Tensor
from wengert.transforms.reverse import leaf_for, unbox_level

__all__ = ["AutodiffUsageError", "CellRun", "Leaf", "MAX_TANGENTS", "plain", "primal_all",
           "input_value"]

#: The most tangent entries forward mode pushes at once (the product over the inputs of
#: one plus their size, minus one): beyond it, reverse mode is the tool.
MAX_TANGENTS = 4096
#: The site of a binding made by code of another cell (a function defined there).
ELSEWHERE = -1


class AutodiffUsageError(ValueError):
    """A misuse of ``%%autodiff`` (an unknown input, a non-numeric output, ...); the
    magic shows it as a usage error."""


def primal_all(v: Any) -> Any:
    """``v`` with every forward-mode perturbation dropped."""
    while type(v) is Dual:
        v = v.primal
    return v


def plain(v: Any) -> Any:
    """A plain NumPy value or Python number (a 0-d float64 array gives a float)."""
    v = primal_all(v)
    if isinstance(v, Tensor):  # a tensor of an outer level: its value
        v = v.numpy()
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype == np.float64:
        return float(v)
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype == np.complex128:
        return complex(v)
    return v


def numeric(v: Any) -> bool:
    """Whether ``v`` is a number, an array of numbers or a traced value (by its type:
    ``isinstance`` may run the code of a proxy object)."""
    t = type(v)
    if issubclass(t, (Tensor, Dual)):
        return True
    if issubclass(t, (bool, np.bool_)):
        return False
    if issubclass(t, (int, float, complex)):
        return True
    return issubclass(t, (np.ndarray, np.generic)) and v.dtype.kind in "fiuc"


def input_value(name: str, value: Any, forward: bool = False) -> Any:
    """The value an input's leaf starts from: numbers, and float or complex arrays as a copy
    of their own (integers become float64), so that nothing the notebook does to its
    arrays changes the point the derivative is taken at; anything else is refused, and
    complex values in forward mode (``forward``), which pushes one real tangent per
    entry."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise AutodiffUsageError(
            f"%%autodiff: input {name!r} is {type(value).__name__} {value!r}; inputs must be "
            "numbers or arrays of floats (e.g. x = 2.0 or x = np.array([1.0, 2.0]))."
        )
    if type(value) is float:
        return value
    if isinstance(value, int):
        return float(value)
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise AutodiffUsageError(f"%%autodiff: input {name!r} is not an array ({e}).") from e
    if a.dtype.kind == "c":
        if forward:
            raise AutodiffUsageError(
                f"%%autodiff: input {name!r} is complex ({a.dtype}), and forward mode "
                "(--mode forward or both) pushes one real tangent per entry, which gives "
                "only the derivative "
                "along the real axis; use --mode reverse, whose gradient follows wengert's "
                "complex convention (df/dx − i·df/dy), or make the real and imaginary parts "
                "two real inputs."
            )
        return a.copy() if a.ndim else complex(a)
    if a.dtype.kind in "biu":
        return a.astype(np.float64)
    if a.dtype.kind == "f" and isinstance(value, np.ndarray):
        return a.copy()
    if a.dtype.kind != "f":
        what = type(value).__name__ + (f" of dtype {a.dtype}" if a.dtype != object else "")
        raise AutodiffUsageError(
            f"%%autodiff: input {name!r} is {what}; inputs must be numbers or arrays of "
            "floats (e.g. x = 2.0 or x = np.array([1.0, 2.0]))."
        )
    return a


@dataclass
class Leaf:
    """One leaf an input was given: the tensor, its (plain) value, and where it was
    bound (a site of the cell; ``None``: before the cell; :data:`ELSEWHERE`)."""

    tensor: Tensor
    value: Any
    site: int | None


class CellRun:
    """The hooks of one run of a rewritten cell, and what they saw.

    Attributes
    ----------
    leaves : dict
        Input name -> its current leaf.
    history : dict
        Input name -> every :class:`Leaf` it was given, in order.
    updates : dict
        Input name -> ``[count, site]``: how often it was rebound to a value computed
        from the inputs since its current leaf was made, and where first.
    at : dict
        Binding site (or ``(ELSEWHERE, name)``) -> when it last ran (a tick).
    leaf_names : dict
        ``id`` of every leaf made -> its input's name.
    values : dict
        Input name -> the value of its current leaf.
    derived : dict
        Input name -> the site of its first binding that ran to a value computed from the
        other inputs while it had no leaf yet (so none was made: it has no value of its
        own to differentiate with respect to).
    """

    def __init__(self, cell: Cell, names: Sequence[str], level: float,
                 tags: Mapping[str, Any] | None, namespace: dict[str, Any]) -> None:
        self.cell = cell
        self.names = tuple(names)
        self.level = level
        self.tags = tags
        self.namespace = namespace
        self.at: dict[Any, int] = {}
        self.tick = itertools.count(1).__next__
        self.leaves: dict[str, Tensor] = {}
        self.history: dict[str, list[Leaf]] = {}
        self.updates: dict[str, list[Any]] = {}
        self.leaf_names: dict[int, str] = {}
        self.values: dict[str, Any] = {}
        self.derived: dict[str, int | None] = {}
        self._origin: dict[int, Any] = {}  # id of a leaf -> the object it was made from
        # (name, the notebook's array, the leaf's copy of it) per leaf made from an array
        self._copies: list[tuple[str, np.ndarray, np.ndarray]] = []
        self._plain: dict[int, tuple[Any, Any]] = {}  # id of a value -> (it, its plain copy)
        self._tag_ids = {id(t) for t in tags.values()} if tags else set()

    def hooks(self) -> dict[str, Any]:
        """The names the rewritten cell's top-level code calls."""
        return {BIND: self, AT: self.at, TICK: self.tick}

    # -- the hooks --------------------------------------------------------------------------
    def __call__(self, value: Any, site: int) -> Any:
        """An input bound at ``site`` (top level)."""
        self.at[site] = self.tick()
        return self._bind(self.cell.sites[site].name, value, site)

    def note(self, value: Any, site: int) -> Any:
        """Another name bound at ``site`` by a walrus (top level)."""
        self.at[site] = self.tick()
        return value

    def aug(self, old: Any, value: Any, op: str, site: int) -> Any:
        """``input op= value`` at ``site`` (top level)."""
        name = self.cell.sites[site].name
        new = self._augment(name, old, value, op, site)
        self.at[site] = self.tick()
        return self._bind(name, new, site)

    def bound(self, value: Any, site: int, token: int, name: str, cell_scope: bool) -> Any:
        """A binding of ``name`` in a nested scope (a function, class, comprehension) of
        the cell whose rewrite is ``token``; ``cell_scope``: it binds the namespace's
        variable (a ``global`` declaration, a walrus in a comprehension)."""
        if token != self.cell.token:  # a function defined in another cell
            if not cell_scope:
                return value  # its local variable
            site = ELSEWHERE
            self.at[(ELSEWHERE, name)] = self.tick()
        elif cell_scope:
            self.at[site] = self.tick()
        return self._bind(name, value, site) if name in self.names else value

    def augmented(self, old: Any, value: Any, op: str, site: int, token: int, name: str,
                  cell_scope: bool) -> Any:
        """``name op= value`` of an input in a nested scope (see :meth:`bound`)."""
        own = token == self.cell.token
        if name not in self.names or not (own or cell_scope):
            return IN_PLACE[op](old, value)
        new = self._augment(name, old, value, op, site if own else ELSEWHERE)
        return self.bound(new, site, token, name, cell_scope)

    # -- leaves -----------------------------------------------------------------------------
    def traced(self, v: Any) -> bool:
        """Whether ``v`` is a tensor of this run that carries a derivative."""
        return issubclass(type(v), Tensor) and v._level == self.level and (
            v._rg or v._node is not None)

    def start(self, name: str, value: Any) -> Tensor:
        """The leaf of an input the namespace holds before the cell (a list or tuple is
        refused: as an array, ``x + [3.0]`` would add where the cell concatenates)."""
        if type(value) in (list, tuple):
            kind = type(value).__name__
            raise AutodiffUsageError(
                f"%%autodiff: input {name!r} is a {kind}; make it an array before the cell "
                f"({name} = np.array({name})). As an input it would be one in the cell, so "
                f"+ and * would act on its numbers instead of joining or repeating the {kind}, "
                "and the card would show numbers the cell does not compute.")
        return self._leaf(name, value, None)

    def _bind(self, name: str, value: Any, site: int | None) -> Any:
        if self.traced(value):
            if name in self.leaves:
                update = self.updates.setdefault(name, [0, site])
                update[0] += 1
            else:
                self.derived.setdefault(name, site)
            return value
        return self._leaf(name, value, site)

    def _leaf(self, name: str, value: Any, site: int | None) -> Tensor:
        try:
            start = input_value(name, value, forward=self.tags is not None)
            kept = plain(start) if not isinstance(start, Tensor) else _snapshot(start)
            copy = start if type(start) is np.ndarray else None
            if self.tags is not None:
                start = self._dual(name, start, kept)
        except AutodiffUsageError as e:
            if site is None:
                raise
            raise AutodiffUsageError(f"{e} (Its binding: {self.where(site)}.)") from None
        self.values[name] = kept
        leaf = leaf_for(start, self.level)
        if not issubclass(type(value), Tensor) or value._level != self.level:
            # the leaf stands for this object: wherever the cell put the leaf, the notebook
            # gets the object back (its type, its dtype, the user's tensor), not the
            # leaf's float64 copy
            self._origin[id(leaf)] = value
            if issubclass(type(value), np.ndarray) and copy is not None:
                self._copies.append((name, value, copy))
        self.leaves[name] = leaf
        self.history.setdefault(name, []).append(Leaf(leaf, kept, site))
        self.updates.pop(name, None)
        self.leaf_names[id(leaf)] = name
        return leaf

    def _dual(self, name: str, value: Any, kept: Any) -> Any:
        """A dual number of the input's own tag, one tangent per entry."""
        tag = self.tags[name]
        if type(value) is float:
            tag.batch = None
            return Dual(value, 1.0, tag)
        raw = value.numpy() if isinstance(value, Tensor) else value
        shape = np.shape(primal_all(raw))
        n = math.prod(shape)
        if n == 0:
            return value  # nothing to perturb
        values = dict(self.values)
        values[name] = kept
        total = math.prod(1 + math.prod(np.shape(v)) for v in values.values()) - 1
        if total > MAX_TANGENTS:
            raise AutodiffUsageError(
                f"%%autodiff --mode forward: the inputs {', '.join(values)} need {total:,} "
                f"tangents pushed at once (forward mode gives every input its own perturbation, "
                f"one tangent per entry, nested), more than {MAX_TANGENTS:,}. Use "
                "--mode reverse: one reverse sweep gives the gradient for every input."
            )
        tag.batch = n
        return Dual(value, np.eye(n, dtype=np.result_type(raw)).reshape((n,) + shape), tag)

    def _augment(self, name: str, old: Any, value: Any, op: str, site: int) -> Any:
        """``old op= value``: out of place on an input's leaf, else in place."""
        if not (isinstance(old, Tensor) and id(old) in self.leaf_names
                and old._level == self.level):
            return IN_PLACE[op](old, value)
        if isinstance(primal_all(old._value), np.ndarray):  # its aliases would see a change
            others = [k for k, v in self.namespace.items()
                      if v is old and k != name and not k.startswith("__")]
            if others:
                raise AutodiffUsageError(
                    f"%%autodiff: {name} {_SYMBOLS[op]}= ... ({self.where(site)}) changes the "
                    f"input {name!r} in place, and "
                    f"{others[0]!r} holds the same array: with NumPy both would change, but "
                    "an input is never changed in place (its value is where the derivative "
                    f"is taken). Write {name} = {name} {_SYMBOLS[op]} ... and, if {others[0]} "
                    f"is to follow, bind {others[0]} = {name} after it."
                )
        return OUT_OF_PLACE[op](old, value)

    # -- reading ------------------------------------------------------------------------------
    def where(self, site: int | None) -> str:
        """Where a binding was: ``line 3 (assignment, in a for loop)``."""
        if site is None:
            return "before the cell"
        if site == ELSEWHERE:
            return "a function defined in another cell"
        return self.cell.sites[site].where()

    def site_name(self, key: Any) -> str:
        return key[1] if isinstance(key, tuple) else self.cell.sites[key].name

    def last_bound(self) -> list[str]:
        """The names of the cell's variables, the last bound first."""
        last: dict[str, int] = {}
        for key, tick in self.at.items():
            name = self.site_name(key)
            if tick > last.get(name, 0):
                last[name] = tick
        return sorted(last, key=last.__getitem__, reverse=True)

    def last_site(self, name: str) -> Any:
        """The binding site of ``name`` that ran last."""
        best = None
        for key, tick in self.at.items():
            if self.site_name(key) == name and (best is None or tick > self.at[best]):
                best = key
        return best

    def plain(self, v: Any) -> Any:
        """``v`` as the notebook keeps it after the cell: a tensor or dual number of this
        run becomes its plain value, an array of its own (the tape keeps the value the
        views show); an input's leaf gives back the object it was made from (the user's
        number, array or tensor); anything else is kept."""
        if issubclass(type(v), Tensor):  # (no isinstance: it may run the object's code)
            if v._level != self.level:
                return v
            origin = self._origin.get(id(v))
            if origin is not None:
                return origin
            return self._copy(v, unbox_level(v, self.level))
        if type(v) is Dual and id(v.tag) in self._tag_ids:
            return self._copy(v, v)
        return v

    def _copy(self, v: Any, value: Any) -> Any:
        """The plain value of ``v``, a copy when it is an array (the same copy for every
        place holding ``v``)."""
        done = self._plain.get(id(v))
        if done is not None and done[0] is v:
            return done[1]
        value = plain(value)
        if type(value) is np.ndarray:
            value = value.copy()
        self._plain[id(v)] = (v, value)
        return value

    def changed_inputs(self) -> list[tuple[str, str | None]]:
        """The inputs whose array the notebook holds was changed in place while the cell
        ran (through another name holding it): ``(input, that other name)``."""
        changed = []
        for name, array, copy in self._copies:
            kind = copy.dtype.kind
            same = np.array_equal(np.asarray(array, dtype=copy.dtype), copy,
                                  equal_nan=kind in "fc")
            if not same:
                others = [k for k, v in self.namespace.items()
                          if v is array and not k.startswith("_")]
                changed.append((name, others[0] if others else None))
        return changed


def _snapshot(t: Tensor) -> Any:
    """The value of a user's tensor now, as a plain number or an array of its own."""
    value = plain(t)
    return value.copy() if type(value) is np.ndarray else value


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "matmul": "@", "truediv": "/",
            "floordiv": "//", "mod": "%", "pow": "**", "lshift": "<<", "rshift": ">>",
            "and_": "&", "or_": "|", "xor": "^"}
