"""NumPy's API on wengert values: ``import wengert.numpy as wnp``, a drop-in for ``import
numpy as np`` (as ``autograd.numpy`` is).

Every public name of NumPy's namespace is here, and of ``numpy.linalg``, ``numpy.fft``,
``numpy.emath`` and ``numpy.random`` in ``wnp.linalg``, ``wnp.fft``, ``wnp.emath`` and
``wnp.random``. The differentiable functions are wengert's (recording on tensors, dual
numbers and graph values; on plain NumPy values they return plain NumPy values), and the
same tables route ``np.*`` calls on traced values, so ``np.sin(x)`` and ``wnp.sin(x)`` are
the same op. The others are NumPy's own (see :mod:`wengert.numpy.namespace`): functions
without a derivative answer on the values (``wnp.argmax(x)``), functions without a rule
raise on a value that carries a derivative, random numbers, dtypes, classes and constants
are NumPy's. Where NumPy's function would convert its argument, and so cannot be
intercepted, ``wengert.numpy`` has its own (:mod:`~wengert.numpy.creation`: ``array``,
``asarray``, ``full`` ...; :mod:`~wengert.numpy.functional`: ``apply_along_axis``,
``vectorize`` ...; :mod:`~wengert.numpy.index_tricks`: ``r_``, ``c_``, ``ix_``).

The elementwise functions take their inputs only (positionally), for speed: NumPy's ufunc
keywords (``out=``, ``where=``, ``dtype=``) go through NumPy's ufunc, ``np.add(x, y,
out=z)``.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> x = wg.tensor([0.0, 1.0], requires_grad=True)
>>> y = wnp.sum(np.sin(x) * x)
>>> y.backward()
>>> np.round(x.grad, 4)
array([0.    , 1.3818])
>>> wnp.argmax(x), wnp.pi, wnp.random.normal is np.random.normal
(np.int64(1), 3.141592653589793, True)
"""

from __future__ import annotations

import numpy as _np
from wengert.numpy.creation import (
    array,
    asanyarray,
    asarray,
    asarray_chkfinite,
    ascontiguousarray,
    asfortranarray,
    full,
    full_like,
    isscalar,
    require,
)
from wengert.numpy.functional import apply_along_axis, apply_over_axes, vectorize
from wengert.numpy.index_tricks import c_, ix_, r_
from wengert.numpy.lists import as_array_args as _as_array_args
from wengert.numpy.namespace import complete as _complete
from wengert.ops import FAMILIES as _FAMILIES

#: ufunc -> wengert function (``np.sin`` -> :func:`sin`)
UFUNC_TABLE: dict = {}
#: NumPy function -> wengert function (``np.sum`` -> :func:`sum`)
FUNCTION_TABLE: dict = {}
#: ufunc -> function for ``ufunc.reduce`` (``np.add.reduce`` -> :func:`sum`)
REDUCE_TABLE: dict = {}
#: ufunc -> function for ``ufunc.accumulate``
ACCUMULATE_TABLE: dict = {}
#: ufunc -> function for ``ufunc.at`` on a traced first argument (``np.add.at``)
AT_TABLE: dict = {}
#: NumPy function that writes into its first argument -> the function writing into a
#: traced value (``np.copyto``, ``np.put``)
IN_PLACE_TABLE: dict = {}

__all__: list[str] = []
#: What each op family declares (:class:`wengert.ops.base.Family`), in the families' order.
_DECLARED = [_family.FAMILY for _family in _FAMILIES]
_ufunc_functions = {id(fn) for _d in _DECLARED for f, fn in _d.routes.items()
                    if isinstance(f, _np.ufunc)}
#: function -> the same taking lists and tuples of traced values as arrays
_wrapped: dict = {}


def _public(fn, name):
    """``fn`` as ``wengert.numpy`` and the dispatch tables give it: elementwise functions
    as they are (their fast paths), the others taking lists and tuples that hold traced
    values as arrays (:mod:`wengert.numpy.lists`)."""
    if id(fn) in _ufunc_functions or not callable(fn):
        return fn
    if id(fn) not in _wrapped:
        _wrapped[id(fn)] = _as_array_args(fn, name)
    return _wrapped[id(fn)]


def _exported(space):
    """Name -> function of what the families export to ``space`` (``"linalg"``...), as
    :func:`_public` gives them."""
    return {name: _public(fn, name) for d in _DECLARED for name, fn in d.exports[space].items()}


globals().update(_exported("numpy"))
__all__ += [_name for _d in _DECLARED for _name in _d.exports["numpy"]]
for _d in _DECLARED:
    for _f, _fn in _d.routes.items():
        if isinstance(_f, _np.ufunc):
            UFUNC_TABLE[_f] = _fn
        else:
            FUNCTION_TABLE[_f] = _public(_fn, getattr(_fn, "__name__", ""))
    REDUCE_TABLE.update(_d.methods["reduce"])
    ACCUMULATE_TABLE.update(_d.methods["accumulate"])
    AT_TABLE.update(_d.methods["at"])
    IN_PLACE_TABLE.update(_d.in_place)

# NumPy's functions that convert their argument, written for traced values (creation,
# functional, index_tricks); those NumPy dispatches on are routed to them too, unless an
# op family has a rule of its own
for _f, _fn in ((_np.full_like, full_like), (_np.apply_along_axis, apply_along_axis),
                (_np.apply_over_axes, apply_over_axes), (_np.ix_, ix_)):
    FUNCTION_TABLE.setdefault(_f, _fn)
__all__ += ["r_", "c_", "ix_", "array", "asarray", "asanyarray", "ascontiguousarray",
            "asfortranarray", "asarray_chkfinite", "require", "full", "full_like", "isscalar",
            "apply_along_axis", "apply_over_axes", "vectorize"]

from wengert.numpy import emath, fft, linalg, random  # noqa: E402 (they read the tables above)

# Every other public name of NumPy: an alias of a function above, or NumPy's own
__all__ = list(dict.fromkeys(__all__ + _complete(globals(), _np, FUNCTION_TABLE,
                                                 UFUNC_TABLE, _wrapped)))
__version__ = _np.__version__
