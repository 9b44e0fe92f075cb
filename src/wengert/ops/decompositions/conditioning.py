"""``np.linalg.cond`` written with the SVD, ``inv`` and ``norm`` (``matrix_rank``, an
integer, needs no rule: on a tensor it runs on the values, in a graph it is a recorded
step).

``cond(x)`` (``p`` None, 2 or -2) is the ratio of the largest and smallest singular
values, differentiated through the SVD's singular values (finite wherever they are
distinct from 0). The other ``p`` are ``norm(x, p) · norm(inv(x), p)``, as NumPy
computes them. At a singular matrix NumPy gives ``inf``: so does wengert through the
SVD (with an infinite or NaN gradient, since the derivative does not exist there);
through ``inv`` a singular matrix that carries a derivative is refused with NumPy's
``LinAlgError`` (a plain one gets NumPy's ``inf``).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = np.array([[3.0, 0.0], [0.0, 0.5]])
>>> wg.grad(lambda a: np.linalg.cond(a))(a)
array([[  2.,   0.],
       [  0., -12.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, is_traced, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.decompositions.composite import norm
from wengert.ops.linalg.basic import inv
from wengert.ops.linalg.matrix import as_matrices
from wengert.ops.linalg.svd import svd

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("conditioning")


@FAMILY.export(space="linalg")
def cond(x: Any, p: Any = None) -> Any:
    """The condition number of a matrix (or stack) in the norm ``p``, as
    ``np.linalg.cond``.

    Parameters
    ----------
    x : array_like, (..., m, n)
    p : {None, 1, -1, 2, -2, inf, -inf, 'fro', 'nuc'}

    Returns
    -------
    The condition number(s); ``inf`` for a singular matrix (see the module).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> np.linalg.cond(wg.tensor([[2.0, 0.0], [0.0, 0.5]]), "fro").item()
    4.25
    """
    if not is_traced(x):
        return np.linalg.cond(x, p)
    shape = shape_of(as_matrices(x))
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        if shape[-1] != shape[-2]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        try:
            inverse = inv(x)
        except np.linalg.LinAlgError as exc:
            raise np.linalg.LinAlgError(
                f"cond(x, p={p!r}) of a singular matrix: NumPy gives inf there, where the "
                "derivative does not exist; use p=None (the SVD's ratio, inf with an "
                "infinite gradient) or wg.stop_gradient(x) for NumPy's value") from exc
        r = norm(x, p, axis=(-2, -1)) * norm(inverse, p, axis=(-2, -1))
    # NaN (0/0 at the zero matrix) becomes inf unless the input holds a NaN, as NumPy's
    nan = np.isnan(_raw(r)) & ~np.any(np.isnan(_raw(x)), axis=(-2, -1))
    out = _ew.where(nan, np.inf, r)
    return out[()] if shape_of(out) == () else out  # (one matrix: a NumPy scalar, as NumPy's)


