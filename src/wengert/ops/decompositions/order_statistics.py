"""Order statistics: ``median``, ``quantile``, ``percentile`` and their ``nan*`` forms.

Each is NumPy's function written with wengert's ``sort`` and ``take_along_axis``: the
input is sorted along the axis (NaN last, as NumPy sorts), NumPy's own formula for the
chosen ``method`` gives, for each quantile and each lane, the two sorted positions it
lies between and the weight ``γ`` between them, and the result is
``low + γ·(high − low)`` (``high − (1 − γ)·(high − low)`` for ``γ ≥ ½``, NumPy's
``_lerp``). So the value is NumPy's to rounding and the derivative is that of the
interpolation: the gradient of a quantile goes to the one or two entries it is made of
(ties split as ``np.sort``'s rule does), in both modes and to any order. The
positions and weights are computed from plain values (no derivative, as the derivative
of a rank is zero almost everywhere); in a graph they are recorded steps, so a compiled
function follows new inputs, new NaN patterns included.

All thirteen of NumPy's ``method`` values are supported; ``weights`` are not.

NaN: where a lane holds a NaN, ``median``/``quantile``/``percentile`` give NaN, as
NumPy, and the gradient goes to that NaN entry (PyTorch's ``median`` does the same).
The ``nan*`` forms skip NaN entries: each lane interpolates among its own non-NaN
entries, the NaN entries get no gradient, and a lane of NaN only gives NaN (with
NumPy's "All-NaN slice encountered" warning) and no gradient.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = np.array([3.0, np.nan, 1.0, 2.0, 5.0])
>>> wg.grad(lambda x: np.nanmedian(x))(x)  # the mean of 2 and 3
array([0.5, 0. , 0. , 0.5, 0. ])
>>> wg.grad(lambda x: np.quantile(x, 0.25, method="lower"))(np.array([4.0, 1.0, 3.0, 2.0]))
array([0., 1., 0., 0.])
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
from wengert.ops import elementwise as _ew
from wengert.ops import reduce as _reduce
from wengert.ops import shape as _shape
from wengert.ops.base import Family, concrete, is_traced, shape_of
from wengert.ops.base import primal as _raw

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("order_statistics")


#: ``method`` -> (alpha, beta) of Hyndman and Fan's continuous sample quantiles: the
#: virtual index is ``n·q + alpha + q·(1 − alpha − beta) − 1`` (NumPy's table).
_CONTINUOUS = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5),
               "weibull": (0.0, 0.0), "median_unbiased": (1 / 3.0, 1 / 3.0),
               "normal_unbiased": (3 / 8.0, 3 / 8.0)}
METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _positions(n: Any, q: np.ndarray, method: str) -> tuple[Any, Any]:
    """NumPy's sorted positions and weights for quantiles ``q`` of ``n`` sorted entries.

    Returns ``(low, gamma)``: the quantile is ``s[low] + gamma·(s[low + 1] − s[low])``
    (``gamma`` None where it is always 0, a selection). ``n`` is a number or an array of
    counts (one per lane, broadcasting against ``q``); the formulas are NumPy's
    ``_QuantileMethods``, with its clipping to ``[0, n − 1]``.
    """
    if method in ("inverted_cdf", "closest_observation"):
        if method == "inverted_cdf":
            index = n * q - 1
            previous = np.floor(index)
            take_previous = (index - previous) == 0
        else:
            index = n * q - 1.5
            previous = np.floor(index)
            take_previous = ((index - previous) == 0) & (previous % 2 == 1)
        low = np.where(take_previous, previous, previous + 1)
        return np.maximum(low, 0), None
    if method == "lower":
        return np.floor((n - 1) * q), None
    if method == "higher":
        return np.ceil((n - 1) * q), None
    if method == "nearest":
        return np.around((n - 1) * q), None
    if method == "linear":
        index = (n - 1) * q
    elif method == "midpoint":
        index = 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    elif method == "averaged_inverted_cdf":
        index = n * q - 1
    else:
        alpha, beta = _CONTINUOUS[method]
        index = n * q + (alpha + q * (1 - alpha - beta)) - 1
    low = np.floor(index)
    gamma = index - low
    if method == "averaged_inverted_cdf":
        gamma = np.where(gamma == 0, 0.5, 1.0)
    elif method == "midpoint":
        gamma = np.where(index % 1 == 0, 0.0, 0.5)
    # NumPy's _get_indexes: past the last entry both neighbours are the last one, before
    # the first both are the first (and then the weight does not matter: it is set to 0).
    above = index >= n - 1
    below = index < 0
    low = np.where(above, n - 1, np.where(below, 0, low))
    return low, np.where(above | below, 0.0, gamma)


def _lerp(low: Any, high: Any, gamma: Any, work: Any = None) -> Any:
    """NumPy's ``_lerp``: ``low + γ·(high − low)``, from the far end where ``γ ≥ ½``.

    ``γ`` is a Python float or an array of float64 weights (then ``γ`` and ``1 − γ`` are
    taken in float64 and rounded to ``work``, as NumPy rounds a Python float). ``work``:
    the dtype NumPy interpolates in when it is not the values' (a ``q`` that is not a
    Python number promotes float32 values to float64): the difference is taken in the
    values' dtype, the rest in ``work``."""
    if type(gamma) is float and gamma == 0.0:
        return low
    step = high - low
    if work is not None and work != _ew.dtype_of(step):
        low, high, step = (_ew.astype(v, work) for v in (low, high, step))
    if type(gamma) is float:
        return high - step * (1.0 - gamma) if gamma >= 0.5 else low + step * gamma
    dtype = _ew.dtype_of(step)
    return _ew.where(gamma >= 0.5, high - step * _ew.astype(1.0 - gamma, dtype),
                     low + step * _ew.astype(gamma, dtype))


def _middle(low: Any, high: Any, gamma: Any, dtype: Any) -> Any:
    """NumPy's median of the middle entries ``low`` and ``high`` (``gamma``: ½ where there
    are two, 0 where one): their mean as ``np.mean`` takes it, ``(0 + low + high) / 2`` or
    ``(0 + low) / 1`` in ``dtype`` (float16 summed in float32, as NumPy's mean), so the
    bits are NumPy's (``-0.0`` alone gives ``0.0``) and not an interpolation's."""
    dtype = np.dtype(dtype if dtype is not None else _ew.dtype_of(low))
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    low, high = (v if _ew.dtype_of(v) == work else _ew.astype(v, work) for v in (low, high))
    one = low + 0.0
    two = (one + high) / 2.0
    if type(gamma) is float:
        out = one if gamma == 0.0 else two
    else:
        out = _ew.where(gamma == 0.5, two, one)
    return out if work == dtype else _ew.astype(out, dtype)


def _lanes_last(a: Any, axis: Any, what: str) -> tuple[Any, tuple[int, ...]]:
    """``a`` with the reduced axes moved last and merged into one, and the shape
    ``keepdims`` gives the result (without the quantiles' axes)."""
    shape = shape_of(a)
    ndim = len(shape)
    if axis is None:
        axes = tuple(range(ndim))
    else:
        given = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = []
        for ax in given:
            ax = operator.index(ax)
            if not -ndim <= ax < ndim:
                raise np.exceptions.AxisError(
                    f"{what}: axis {ax} is out of bounds for array of dimension {ndim}")
            axes.append(ax % ndim)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{what}: repeated axis in {axis!r}")
        axes = tuple(sorted(axes))
    kept = tuple(d for d in range(ndim) if d not in axes)
    kept_shape = tuple(1 if d in axes else shape[d] for d in range(ndim))
    if tuple(range(ndim)) != kept + axes:
        a = _shape.transpose(a, kept + axes)
    merged = tuple(shape[d] for d in kept) + (int(np.prod([shape[d] for d in axes],
                                                          dtype=np.int64)),)
    if shape_of(a) != merged:
        a = _shape.reshape(a, merged)
    return a, kept_shape


def _all_nan_warning(count: Any) -> None:
    if not is_traced(count) and np.any(count == 0):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)


def _empty_axis(lanes: Any, qs: np.ndarray, kept_shape: tuple[int, ...], keepdims: bool,
                what: str, result_dtype: Any) -> Any:
    """NumPy's answer over an empty axis: ``quantile``/``percentile`` raise, the others
    give NaN (with NumPy's warning), here with no gradient but still traced."""
    if what in ("quantile", "percentile"):
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    warnings.warn("Mean of empty slice" if what == "median" else "All-NaN slice encountered",
                  RuntimeWarning, stacklevel=4)
    none = _reduce.sum(lanes, axis=-1)
    out = _ew.where(np.ones(qs.shape + shape_of(none), dtype=bool), np.nan, none)
    if keepdims:
        out = _shape.reshape(out, qs.shape + kept_shape)
    if shape_of(out) == ():
        out = out[()]  # (a NumPy scalar, as NumPy's)
    return out if result_dtype is None else _ew.astype(out, result_dtype)


def _order_statistic(a: Any, q: Any, axis: Any, keepdims: bool, method: str, what: str,
                     skip_nan: bool, result_dtype: Any = None, weak: bool = True) -> Any:
    """The quantiles ``q`` (in [0, 1]) of ``a`` along ``axis`` (see the module), as
    ``result_dtype``; ``weak``: ``q`` was a Python number (NumPy then interpolates in the
    values' precision, else in the promoted ``result_dtype``)."""
    if method not in METHODS:
        raise ValueError(f"{what}: {method!r} is not a valid method. Use one of: "
                         f"{', '.join(METHODS)}")
    q = concrete(q)
    if is_traced(q):
        raise TypeError(f"{what}: q must be plain numbers (no gradient flows to it)")
    qs = np.asarray(q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)) or np.any(np.isnan(qs)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    a = a if is_traced(a) else np.asarray(a)
    if what in ("median", "nanmedian") and _ew.dtype_of(a).kind == "b":
        a = _ew.astype(a, np.float64)  # (NumPy's median is a mean: booleans count as 0, 1)
    scalar = shape_of(a) == () and axis is None
    lanes, kept_shape = _lanes_last(_shape.reshape(a, (1,)) if scalar else a, axis, what)
    if scalar:
        kept_shape = ()
    n = shape_of(lanes)[-1]
    if n == 0:
        return _empty_axis(lanes, qs, kept_shape, keepdims, what, result_dtype)
    s = _shape.sort(lanes, axis=-1)
    raw = _raw(s)
    median = what in ("median", "nanmedian")  # (np.mean of the middle entries)
    dtype = _ew.dtype_of(s)
    inexact = dtype.kind in "fc"
    work = None if weak or result_dtype is None or dtype.kind != "f" else np.dtype(result_dtype)
    if skip_nan and inexact:
        count = np.sum(~np.isnan(raw), axis=-1, keepdims=True)
        _all_nan_warning(count)
        empty = count == 0
        low, gamma = _positions(np.maximum(count, 1), qs.reshape(qs.shape + (1,) * len(
            shape_of(s))), method)
    else:
        low, gamma = _positions(n, qs, method)
    results = []
    for k in np.ndindex(qs.shape):
        if skip_nan and inexact:
            lo = _ew.astype(low[k], np.intp)
            lo_value = _shape.take_along_axis(s, lo, axis=-1)
            if gamma is None:
                value = lo_value
            else:
                hi = np.minimum(lo + 1, np.maximum(count, 1) - 1)
                high = _shape.take_along_axis(s, hi, axis=-1)
                value = _middle(lo_value, high, gamma[k], result_dtype) if median else \
                    _lerp(lo_value, high, gamma[k], work or dtype)
            value = _ew.where(empty, np.nan, value)
            value = _shape.squeeze(value, axis=-1)
        else:
            lo = int(low if np.ndim(low) == 0 else low[k])
            lo_value = _shape.take(s, lo, axis=-1)
            g = 0.0 if gamma is None else float(gamma if np.ndim(gamma) == 0 else gamma[k])
            if median:
                value = _middle(lo_value, _shape.take(s, min(lo + 1, n - 1), axis=-1), g,
                                result_dtype)
            else:
                value = lo_value if g == 0.0 else _lerp(
                    lo_value, _shape.take(s, min(lo + 1, n - 1), axis=-1), g, work)
            if inexact:
                last = _shape.take(s, n - 1, axis=-1)  # NaN sorts last
                nan = np.isnan(_raw(last))
                if is_traced(nan) or np.any(nan):
                    value = _ew.where(nan, last, value)  # NaN, its gradient to that entry
        results.append(value)
    out = results[0] if qs.ndim == 0 else _shape.reshape(
        _shape.stack(results, axis=0), qs.shape + shape_of(results[0]))
    if keepdims:
        out = _shape.reshape(out, qs.shape + kept_shape)
    if result_dtype is not None and result_dtype != _ew.dtype_of(out):
        out = _ew.astype(out, result_dtype)
    return out[()] if shape_of(out) == () else out  # (a NumPy scalar, as NumPy gives)


def _numpy_dtype(fn: Any, a: Any, q: Any, **kwargs: Any) -> Any:
    """The dtype NumPy's ``fn`` gives for ``a``'s dtype and this ``q`` (a Python number
    weighs less than an array in NumPy's promotion, and integers interpolate as floats):
    asked of NumPy itself, on one entry, so it follows the installed version."""
    q = concrete(q)
    if is_traced(q):
        raise TypeError(f"{fn.__name__}: q must be plain numbers (no gradient flows to it)")
    one = np.zeros(1, dtype=_ew.dtype_of(a))
    return fn(one, q, **kwargs).dtype if q is not None else fn(one, **kwargs).dtype


def _check_real(a: Any, what: str) -> None:
    if _ew.dtype_of(a).kind == "c":
        raise TypeError(f"{what}: a must be an array of real numbers (NumPy's quantiles "
                        "refuse complex values; median and nanmedian take them)")


def _refuse(what: str, out: Any, weights: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{what}: out= is not supported by wengert; use the "
                                  "returned value")
    if weights is not None:
        raise NotImplementedError(f"{what}: weights= is not supported by wengert")


def _percent(q: Any, what: str) -> np.ndarray:
    q = concrete(q)
    if is_traced(q):
        raise TypeError(f"{what}: q must be plain numbers (no gradient flows to it)")
    qs = np.true_divide(np.asarray(q, dtype=np.float64), 100.0)
    if np.any((qs < 0) | (qs > 1)) or np.any(np.isnan(qs)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return qs


def _quantiles(numpy_fn: Any, a: Any, q: Any, axis: Any, out: Any, weights: Any, method: str,
               interpolation: Any, keepdims: bool) -> Any:
    """``np.quantile``, ``percentile``, ``nanquantile`` or ``nanpercentile`` (``numpy_fn``):
    their checks, then :func:`_order_statistic` with NumPy's dtype for this ``q``."""
    what = numpy_fn.__name__
    _refuse(what, out, weights)
    _check_real(a, what)
    method = interpolation or method
    qs = _percent(q, what) if what.endswith("percentile") else q
    return _order_statistic(a, qs, axis, keepdims, method, what,
                            skip_nan=what.startswith("nan"),
                            result_dtype=_numpy_dtype(numpy_fn, a, q, method=method),
                            weak=type(q) in (int, float))


@FAMILY.export
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Any:
    """The ``q``-th quantile(s) of ``a`` along ``axis``, as ``np.quantile``.

    Parameters
    ----------
    a : array_like (real)
    q : float or array_like of float, in [0, 1] (plain numbers: no gradient flows to them)
    axis : int, tuple of int or None
    method : str
        Any of NumPy's thirteen methods (``'linear'`` by default).
    keepdims : bool

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: np.quantile(x, 0.75))(np.array([4.0, 1.0, 3.0, 2.0]))
    array([0.25, 0.  , 0.75, 0.  ])
    """
    return _quantiles(np.quantile, a, q, axis, out, weights, method, interpolation, keepdims)


@FAMILY.export
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False, *, weights: Any = None,
               interpolation: Any = None) -> Any:
    """The ``q``-th percentile(s) of ``a`` along ``axis`` (``quantile`` of ``q / 100``),
    as ``np.percentile``; see :func:`quantile`."""
    return _quantiles(np.percentile, a, q, axis, out, weights, method, interpolation,
                      keepdims)


@FAMILY.export
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median of ``a`` along ``axis`` (the mean of the two middle entries for an even
    count; complex values in NumPy's lexicographic order), as ``np.median``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: np.median(x))(np.array([3.0, 1.0, 2.0, 5.0]))
    array([0.5, 0. , 0.5, 0. ])
    """
    _refuse("median", out, None)
    return _order_statistic(a, 0.5, axis, keepdims, "linear", "median", skip_nan=False,
                            result_dtype=_numpy_dtype(np.median, a, None))


@FAMILY.export
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None,
                interpolation: Any = None) -> Any:
    """The ``q``-th quantile(s) of the non-NaN entries of ``a`` along ``axis``, as
    ``np.nanquantile`` (NaN entries get no gradient); see :func:`quantile`.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> x = np.array([[1.0, np.nan, 3.0], [2.0, 4.0, 8.0]])
    >>> wg.grad(lambda x: np.sum(np.nanquantile(x, 0.5, axis=1)))(x)
    array([[0.5, 0. , 0.5],
           [0. , 1. , 0. ]])
    """
    return _quantiles(np.nanquantile, a, q, axis, out, weights, method, interpolation,
                      keepdims)


@FAMILY.export
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """The ``q``-th percentile(s) of the non-NaN entries of ``a`` along ``axis``, as
    ``np.nanpercentile``; see :func:`nanquantile`."""
    return _quantiles(np.nanpercentile, a, q, axis, out, weights, method, interpolation,
                      keepdims)


@FAMILY.export
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """The median of the non-NaN entries of ``a`` along ``axis``, as ``np.nanmedian``;
    see :func:`median` and :func:`nanquantile`."""
    _refuse("nanmedian", out, None)
    return _order_statistic(a, 0.5, axis, keepdims, "linear", "nanmedian", skip_nan=True,
                            result_dtype=_numpy_dtype(np.nanmedian, a, None))


