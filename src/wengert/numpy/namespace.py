"""How ``wengert.numpy`` (and its ``linalg``, ``fft``, ``emath`` and ``random``) hold every
public name of NumPy's namespace.

Each NumPy name is one of:

* **recorded**: the wengert function of the op (``wnp.sin``, ``wnp.linalg.det``), also
  under NumPy's other names for the same object (``wnp.acos`` is ``wnp.arccos``,
  ``wnp.pow`` is ``wnp.power``). ``np.sin(x)`` on a traced value reaches the same function
  through ``__array_ufunc__``; the elementwise ones also carry their ufunc's methods
  (``wnp.add.reduce``, ``wnp.multiply.outer``: NumPy's, which dispatch on traced values);
* **written for traced values** by ``wengert.numpy`` itself, where NumPy's function
  would convert its argument (``array``, ``asarray``, ``full``, ``apply_along_axis``,
  ``vectorize`` ...);
* **passed through**: NumPy's own object. A NumPy function that dispatches
  (``__array_function__``) reaches wengert's handler on a traced value: a function
  without derivative answers on the values (``argmax``, ``isclose``, ``shape``), one
  without a rule raises on a value that carries a derivative, never dropping it. Such a
  function is wrapped to take lists holding traced values as arrays, as the recorded
  ones do (``wnp.argmax([x, y])``); ``wnp.argmax.__wrapped__ is np.argmax``. Functions
  that do not dispatch (``np.zeros``, ``np.random.normal``), classes and dtypes
  (``wnp.ndarray``, ``wnp.float64``), constants and modules are NumPy's own objects:
  ``isinstance(x, wnp.ndarray)`` is false for a tensor, as for an autograd box.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
from wengert.numpy.lists import as_array_args

__all__ = ["complete", "UFUNC_ATTRIBUTES"]

#: What the elementwise functions take over from their ufunc.
UFUNC_ATTRIBUTES = ("reduce", "accumulate", "reduceat", "outer", "at", "nin", "nout",
                    "nargs", "ntypes", "types", "identity", "signature")


def public_names(module: types.ModuleType) -> list[str]:
    """The public names of a NumPy module, as ``dir`` lists them."""
    return [n for n in dir(module) if not n.startswith("_")]


def _dispatches(obj: Any) -> bool:
    """Whether ``obj`` is a NumPy function that dispatches through ``__array_function__``."""
    return callable(obj) and hasattr(obj, "_implementation") and not isinstance(obj, type)


def give_ufunc_methods(fn: Any, ufunc: np.ufunc) -> None:
    """``fn`` (a wengert elementwise function) given ``ufunc``'s methods and attributes."""
    for attribute in UFUNC_ATTRIBUTES:
        if not hasattr(fn, attribute):
            setattr(fn, attribute, getattr(ufunc, attribute))


def complete(namespace: dict[str, Any], module: types.ModuleType,
             functions: dict[Any, Any], ufuncs: dict[Any, Any],
             wrapped: dict[int, Any]) -> list[str]:
    """Bind in ``namespace`` every public name of NumPy's ``module`` it lacks (see the
    module), and return the names of ``module``.

    ``functions`` and ``ufuncs`` map NumPy's callables to their wengert functions (the
    routing tables); ``wrapped`` keeps one list-taking wrapper per NumPy function.
    """
    names = public_names(module)
    for name in names:
        obj = getattr(module, name)
        if isinstance(obj, np.ufunc):
            mine = namespace.get(name, ufuncs.get(obj))
            if mine is not None and mine is not obj:
                give_ufunc_methods(mine, obj)
                namespace[name] = mine
                continue
        if name in namespace:
            continue
        try:
            routed = functions.get(obj)
        except TypeError:  # unhashable: a value
            routed = None
        if routed is not None:
            namespace[name] = routed
        elif _dispatches(obj):
            if id(obj) not in wrapped:
                wrapped[id(obj)] = as_array_args(obj, name)
            namespace[name] = wrapped[id(obj)]
        else:
            namespace[name] = obj
    return names
