"""``np.roots``, ``np.poly`` and ``np.polyfit``, as NumPy computes them, with wengert's ops.

* ``roots(p)``: the eigenvalues of the companion matrix (NumPy's construction, so the
  values are NumPy's bit for bit), differentiated through ``eigvals``: ``dr = −p′(r)⁻¹ ·
  dp(r)`` for a simple root. At a repeated root the derivative does not exist (inf or
  NaN, as for ``eigvals``).
* ``poly(seq)``: the coefficients of ``∏ (x − rᵢ)``, multiplied out with ``convolve``
  (of a square matrix: of its eigenvalues, its characteristic polynomial); real when the
  roots come in conjugate pairs, as NumPy's.
* ``polyfit(x, y, deg)``: NumPy's scaled least-squares fit (``vander``, the columns
  scaled to unit norm, ``lstsq``), differentiable in ``x``, ``y`` and the weights ``w``;
  ``full=True`` and ``cov=True`` as NumPy's.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda p: np.max(np.roots(p)))(np.array([1.0, -3.0, 2.0]))  # the root 2
array([-4., -2., -1.])
>>> x = np.array([0.0, 1.0, 2.0, 3.0])
>>> wg.grad(lambda y: np.polyfit(x, y, 1)[0])(np.array([1.0, 3.0, 2.0, 5.0]))  # the slope
array([-0.3, -0.1,  0.1,  0.3])
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
from wengert.ops import elementwise as _ew
from wengert.ops import shape as _shape
from wengert.ops.base import Family, dtype_of, is_traced, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.decompositions.composite import convolve, vander
from wengert.ops.linalg.basic import inv, matmul
from wengert.ops.linalg.eig import eigvals
from wengert.ops.linalg.lstsq import lstsq
from wengert.ops.reduce import sum as _sum

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("polynomial")


def _as_array(x: Any) -> Any:
    return x if is_traced(x) else np.asarray(x)


def _no_roots(p: Any) -> Any:
    """NumPy's empty (float64) array of roots, traced like ``p`` (so a function returning
    it still returns a traced value)."""
    return _ew.astype(p[:0], np.float64) if is_traced(p) else np.array([])


@FAMILY.export
def roots(p: Any) -> Any:
    """The roots of the polynomial with coefficients ``p`` (highest power first), as
    ``np.roots``: the eigenvalues of its companion matrix.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> np.roots(wg.tensor([1.0, -3.0, 2.0])).numpy()
    array([2., 1.])
    """
    p = _as_array(p)
    if len(shape_of(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    nonzero = np.nonzero(_raw(p))[0]
    if is_traced(nonzero):
        raise TypeError("roots: the coefficients' zero pattern decides the polynomial's "
                        "degree, so it cannot be traced into a graph; call np.roots eagerly")
    if len(nonzero) == 0:
        return _no_roots(p)
    trailing = len(p) - nonzero[-1] - 1  # roots at zero
    p = p[int(nonzero[0]):int(nonzero[-1]) + 1]
    if _ew.dtype_of(p).kind not in "fc":  # (NumPy's cast; float32 stays float32)
        p = _ew.astype(p, np.float64)
    n = shape_of(p)[0]
    if n > 1:
        first = _shape.reshape(-p[1:] / p[0], (1, n - 1))
        below = np.eye(n - 2, n - 1, dtype=_ew.dtype_of(p))
        r = eigvals(_shape.concatenate([first, below], axis=0))
    else:
        r = _no_roots(p)
    if trailing:
        r = _shape.concatenate([r, np.zeros(trailing, dtype=_ew.dtype_of(r))])
    return r


@FAMILY.export
def poly(seq_of_zeros: Any) -> Any:
    """The coefficients (highest power first) of the monic polynomial with the given
    roots, or of a square matrix's characteristic polynomial, as ``np.poly``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda r: np.poly(r)[1])(np.array([1.0, 2.0]))  # −(r₀ + r₁)
    array([-1., -1.])
    """
    seq = _as_array(seq_of_zeros)
    if shape_of(seq) == ():
        seq = _shape.reshape(seq, (1,))
    shape = shape_of(seq)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        seq = eigvals(seq)
    elif len(shape) == 1:
        dtype = np.dtype(np.mintypecode(_ew.dtype_of(seq).char))  # (NumPy's cast)
        if dtype != _ew.dtype_of(seq):
            seq = _ew.astype(seq, dtype)
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    n = shape_of(seq)[0]
    if n == 0:
        return 1.0  # (NumPy's answer for no roots)
    dtype = _ew.dtype_of(seq)
    a: Any = np.ones(1, dtype=dtype)
    for k in range(n):
        a = convolve(a, _shape.stack([np.ones((), dtype=dtype), -seq[k]]))
    if _ew.dtype_of(a).kind == "c":
        # (traced into a graph, the test is a guard: the graph holds for new roots only
        # while they too come in conjugate pairs, or not)
        r = _raw(seq)
        if bool(np.all(np.sort(r) == np.sort(np.conjugate(r)))):
            a = _ew.real(a)
    return a


def _polyfit_weights(lhs: Any, rhs: Any, w: Any, n: int) -> tuple[Any, Any]:
    w = _as_array(w)
    if len(shape_of(w)) != 1:
        raise TypeError("expected a 1-d array for weights")
    if shape_of(w)[0] != n:
        raise TypeError("expected w and y to have the same length")
    lhs = lhs * _shape.reshape(w, (n, 1))
    rhs = rhs * (_shape.reshape(w, (n, 1)) if len(shape_of(rhs)) == 2 else w)
    return lhs, rhs


@FAMILY.export
def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """The least-squares polynomial fit of degree ``deg`` (coefficients, highest power
    first), as ``np.polyfit``, differentiable in ``x``, ``y`` and ``w``.

    Parameters
    ----------
    x : array_like, (M,)
    y : array_like, (M,) or (M, K)
    deg : int
    rcond, full, w, cov
        As NumPy's (``cov='unscaled'`` included).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> x = np.array([0.0, 1.0, 2.0])
    >>> np.polyfit(x, wg.tensor([1.0, 3.0, 5.0]), 1).numpy().round(12)
    array([2., 1.])
    """
    order = operator.index(deg) + 1
    x, y = _as_array(x), _as_array(y)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(shape_of(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(shape_of(y)) < 1 or len(shape_of(y)) > 2:
        raise TypeError("expected 1D or 2D array for y")
    n = shape_of(x)[0]
    if shape_of(y)[0] != n:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = n * np.finfo(np.result_type(_ew.dtype_of(x), np.float64)).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        lhs, rhs = _polyfit_weights(lhs, rhs, w, n)
    scale = _ew.sqrt(_sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = _shape.transpose(_shape.transpose(c) / scale)
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        base = inv(matmul(_shape.transpose(lhs), lhs))
        base = base / (_shape.reshape(scale, (order, 1)) * _shape.reshape(scale, (1, order)))
        if cov == "unscaled":
            fac: Any = 1.0
        else:
            if n <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (n - order)
        if len(shape_of(y)) == 1:
            return c, base * fac
        return c, _shape.reshape(base, (order, order, 1)) * fac
    return c


@FAMILY.export
def polyder(p: Any, m: int = 1) -> Any:
    """The coefficients of the ``m``-th derivative of the polynomial ``p``, as
    ``np.polyder``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> np.polyder(wg.tensor([1.0, 2.0, 3.0, 4.0]), 2).numpy()
    array([6., 4.])
    """
    m = int(m)  # (as NumPy's: 2.0 is 2)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _as_array(p)
    for _ in range(m):
        p = p[:-1] * np.arange(shape_of(p)[0] - 1, 0, -1)
    return p


@FAMILY.export
def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The coefficients of an ``m``-th antiderivative of the polynomial ``p``, the
    integration constants ``k`` (differentiable too) last, as ``np.polyint``.

    ``np.polyint`` hands its call to wengert when ``p`` is a traced value; with a plain
    ``p`` and a traced ``k`` call ``wengert.numpy.polyint``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda k: np.sum(wg.numpy.polyint(np.array([3.0, 2.0]), 1, k)))(5.0)
    1.0
    """
    m = int(m)  # (as NumPy's: 2.0 is 2)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        ks: list[Any] = [0.0] * m
    else:  # (NumPy's reading: one constant, alone or in a list, serves every integral)
        k = k if is_traced(k) else np.asarray(k)
        shape = shape_of(k)
        if len(shape) > 1:
            raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
        if not shape:
            k = _shape.reshape(k, (1,))
        n = shape[0] if shape else 1
        ks = [k[0]] * m if n == 1 else [k[i] for i in range(n)]
        if len(ks) < m:
            raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _as_array(p)
    for i in range(m):
        n = shape_of(p)[0]
        p = _shape.concatenate([p / np.arange(n, 0, -1),
                                _shape.reshape(_as_array(ks[i]), (1,))])
    return p


# -- arithmetic of coefficient arrays -------------------------------------------------------
def _coefficients(p: Any, what: str) -> Any:
    """``p`` as a 1-d coefficient array (highest power first; a scalar is one coefficient)."""
    p = _as_array(p)
    shape = shape_of(p)
    if not shape:
        return _shape.reshape(p, (1,))
    if len(shape) != 1:
        raise ValueError(f"np.{what}: the coefficients must be one-dimensional")
    return p


def _aligned(a1: Any, a2: Any, what: str) -> tuple[Any, Any]:
    """Both coefficient arrays padded at the front (the high powers) to one length."""
    a1, a2 = _coefficients(a1, what), _coefficients(a2, what)
    diff = shape_of(a2)[0] - shape_of(a1)[0]
    if diff > 0:
        a1 = _shape.pad(a1, ((diff, 0),))
    elif diff < 0:
        a2 = _shape.pad(a2, ((-diff, 0),))
    return a1, a2


@FAMILY.implements(np.polyadd)
def polyadd(a1: Any, a2: Any) -> Any:
    """The coefficients of the sum of two polynomials, as ``np.polyadd`` (the shorter one
    padded with leading zeros; a ``poly1d`` comes back as an array)."""
    a1, a2 = _aligned(a1, a2, "polyadd")
    return _ew.add(a1, a2)


@FAMILY.implements(np.polysub)
def polysub(a1: Any, a2: Any) -> Any:
    """The coefficients of ``a1 - a2``, as ``np.polysub``."""
    a1, a2 = _aligned(a1, a2, "polysub")
    return _ew.subtract(a1, a2)


def _as_poly1d(p: Any) -> Any:
    """The coefficients as ``np.poly1d`` reads them: leading zeros dropped (all zeros: one
    zero). How many are dropped depends on the values (a static graph guards them)."""
    p = _coefficients(p, "polymul")
    n = shape_of(p)[0]
    values = _raw(p)
    k = 0
    while k < n and not bool(values[k] != 0):
        k += 1
    if k == n:  # (an empty p: one zero, which gets no gradient)
        return p[n - 1:] if n else _shape.pad(p, ((1, 0),))
    return p[k:] if k else p


@FAMILY.implements(np.polymul)
def polymul(a1: Any, a2: Any) -> Any:
    """The coefficients of the product of two polynomials (their convolution), as
    ``np.polymul``: its inputs read as ``np.poly1d`` reads them (leading zeros dropped).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda a: np.sum(np.polymul(a, [1.0, 2.0])))(np.array([0.0, 2.0, 3.0]))
    array([0., 3., 3.])
    """
    return convolve(_as_poly1d(a1), _as_poly1d(a2))


@FAMILY.implements(np.polydiv)
def polydiv(u: Any, v: Any) -> tuple[Any, Any]:
    """The quotient and remainder of ``u / v``, as ``np.polydiv`` computes them (long
    division; the remainder's leading entries that NumPy finds zero are dropped, which
    depends on the values, not on their derivatives)."""
    u = _ew.add(_coefficients(u, "polydiv"), 0.0)
    v = _ew.add(_coefficients(v, "polydiv"), 0.0)
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = _ew.divide(1.0, v[0])
    dtype = np.result_type(dtype_of(u), dtype_of(v))
    r = _ew.astype(u, dtype) if dtype_of(u) != dtype else u
    quotient = []
    for k in range(m - n + 1):
        d = _ew.multiply(scale, r[k])
        quotient.append(d)
        r = _ew.subtract(r, _shape.pad(_ew.multiply(d, v), ((k, m - n - k),)))
    q = _shape.stack(quotient) if quotient else np.zeros(1, dtype)
    while shape_of(r)[0] > 1 and np.allclose(_raw(r[0]), 0, rtol=1e-14):
        r = r[1:]
    return q, r


