"""``np.partition`` written with ``np.argpartition`` and ``take_along_axis``.

NumPy's ``partition`` puts the ``kth`` smallest entry where a sort would put it, the
smaller ones before it and the larger ones after, in an order NumPy does not specify.
wengert asks NumPy where it put each entry (``np.argpartition``, no gradient) and picks
the entries with ``take_along_axis``: the gradient of each output position goes to the
entry of the input that NumPy put there, whatever the order inside the parts, in both
modes and to any order (``take_along_axis``'s rules). Ties go to the entry NumPy chose;
the result's values are NumPy's ``partition``'s wherever NumPy specifies them (the
``kth`` positions, and which values fall on each side). In a graph the
``argpartition`` is a recorded step, so the compiled function follows new inputs; its
JAX export is refused (JAX orders the parts differently).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = np.array([3.0, 1.0, 4.0, 1.5, 5.0])
>>> wg.grad(lambda x: np.partition(x, 1)[1])(x)  # the second smallest entry, 1.5
array([0., 0., 0., 1., 0.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.ops.base import Family, concrete, is_traced, shape_of
from wengert.ops.shape import ravel, take_along_axis

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("partition")


@FAMILY.export
def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """A copy of ``a`` with the ``kth`` entry (or entries) in sorted position along
    ``axis`` (flattened when None), as ``np.partition``.

    Parameters
    ----------
    a : array_like
    kth : int or sequence of ints
        Plain integers (the result's layout depends on them).
    axis : int or None
    kind : str
        Passed to ``np.argpartition``.
    order : None
        Structured arrays are not supported.

    Returns
    -------
    The partitioned copy; its gradient goes to the entries NumPy put at each position.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> np.partition(wg.tensor([3.0, 1.0, 2.0]), 0)[0].item()
    1.0
    """
    if order is not None:
        raise NotImplementedError("wengert.partition does not support order= (structured "
                                  "arrays)")
    kth = concrete(kth)
    if is_traced(kth):
        raise TypeError("partition: kth must be plain integers (the result's layout depends "
                        "on it)")
    if not is_traced(a):
        a = np.asarray(a)
    if axis is None:
        a, axis = ravel(a), -1
    ndim = len(shape_of(a))
    if not -ndim <= operator.index(axis) < ndim:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension "
                                      f"{ndim}")
    index = np.argpartition(a, kth, axis=axis, kind=kind)
    return take_along_axis(a, index, axis=axis)


