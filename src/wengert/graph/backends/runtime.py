"""What generated code imports: ``op``, the NumPy forwards of wengert's registered ops.

Code from :meth:`Graph.to_source` starts with
``from wengert.graph.backends.runtime import GuardFailed, op`` and calls ``op.sum(t1, axis=0,
keepdims=False)`` for an op whose forward is wengert's own (NumPy functions are
called as ``np.sin`` directly).

Float code (a program of Python floats, see :mod:`wengert.graph.backends.codegen`) runs its
equations with ``math`` and Python's operators inside ``try``; where one of them raises
(``log(-1.0)``, ``1.0 / 0.0``, ``exp(1000.0)``: :data:`FLOAT_ERRORS`) it runs them again
with ``fallback.<name>``, which is what eager mode computes on floats: the float path,
and where that raises, NumPy's answer (``nan``, ``inf``) with NumPy's warning.

Examples
--------
>>> import numpy as np
>>> op.sum_to(np.ones((2, 3)), shape=(3,))
array([2., 2., 2.])
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     fallback.divide(1.0, 0.0), fallback.log(1.0)
(inf, 0.0)
>>> [str(w.message) for w in caught]
['divide by zero encountered in divide']
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from wengert.core.bind import SCALAR_FALLBACK, forward
from wengert.graph.ir import GuardFailed
from wengert.ops import REGISTRY
from wengert.ops.linalg import eigh as _eigh

__all__ = ["op", "floats", "fallback", "float_forward", "FLOAT_ERRORS", "raise_reported",
           "as_returned", "hermitian_part", "GuardFailed", "registered"]

#: What a float path raises where NumPy gives ``nan`` or ``inf`` (and a warning), and what
#: NumPy raises under ``np.errstate(all="raise")``.
FLOAT_ERRORS = (*SCALAR_FALLBACK, FloatingPointError)


def float_forward(record: Any) -> Callable[..., Any]:
    """The op's forward on Python floats, as eager mode runs it
    (:func:`wengert.core.bind.forward`): its float path, NumPy's answer where that
    raises."""

    def run(*args: Any) -> Any:
        return forward(record, args, None)

    run.__name__ = run.__qualname__ = record.name
    return run


def raise_reported() -> Any:
    """``np.errstate`` under which division by zero, overflow and invalid operations raise
    ``FloatingPointError`` (underflow keeps the current setting, NumPy's default ignoring
    it).

    Float code runs its equations on NumPy scalars under it, so that a first run reports
    nothing: where it raises, the second run reports what eager mode reports, once (and
    computes what eager mode computes, also where these conditions are ignored)."""
    return np.errstate(divide="raise", over="raise", invalid="raise")


def as_returned(value: Any, t: type) -> Any:
    """A 0-d result as the type ``t`` the traced function returned (a Python float, a
    NumPy scalar, a 0-d array); a traced value (the code run on tensors or dual numbers)
    as it is.

    Examples
    --------
    >>> as_returned(np.float64(2.0), float), as_returned(np.array(2.0), np.float32)
    (2.0, np.float32(2.0))
    """
    if type(value) is t:
        return value
    if isinstance(value, (float, int, complex, np.generic, np.ndarray)):
        return np.asarray(value) if t is np.ndarray else t(value)
    return value


def hermitian_part(a: Any) -> np.ndarray:
    """``(a + aᴴ)/2`` (the symmetric part of a real ``a``): what the ``eigh`` primitives
    decompose, so ``np.linalg.eigh(hermitian_part(a), UPLO=uplo)`` is their answer bit
    for bit.

    Examples
    --------
    >>> hermitian_part(np.array([[1.0, 2.0], [0.0, 1.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    return _eigh.hermitian_part(a)


#: ``op.<name>``: the forward (``impl``) of every registered op, by its name.
op = SimpleNamespace(**{record.name: record.impl for record in REGISTRY})
#: ``floats.<name>``: the float path (``scalar_impl``) of every registered op that has one.
floats = SimpleNamespace(**{record.name: record.scalar_impl for record in REGISTRY
                            if record.scalar_impl is not None})
#: ``fallback.<name>``: :func:`float_forward` of every registered op with a float path.
fallback = SimpleNamespace(**{record.name: float_forward(record) for record in REGISTRY
                              if record.scalar_impl is not None})


def registered(record: object) -> bool:
    """Whether ``record`` is the registry's op of its name (so ``op.<name>`` is its forward)."""
    name = getattr(record, "name", None)
    return name in REGISTRY and REGISTRY[name] is record
