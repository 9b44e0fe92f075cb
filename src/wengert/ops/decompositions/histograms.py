"""``np.histogramdd`` and ``np.histogram2d``, differentiable in their ``weights``.

The bin each sample falls in depends on the samples piecewise constantly, and the bin
edges on their range, so no gradient flows to the samples: a differentiated sample is
refused, as for ``np.histogram`` (pass ``wg.stop_gradient(sample)`` if that is what you
mean). The weights are summed into their bins with ``take_add`` (a scatter-add whose
derivative is a gather), with NumPy's binning exactly (each bin half-open but the last,
which is closed; samples outside the range dropped), so the counts are NumPy's;
``density=True`` divides by their sum and the bins' volumes, also differentiably.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x, y = np.array([0.1, 0.6, 0.7]), np.array([0.2, 0.9, 0.1])
>>> w = np.array([1.0, 2.0, 3.0])
>>> wg.grad(lambda w: np.histogram2d(x, y, bins=2, weights=w)[0][1, 1])(w)
array([0., 1., 0.])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, kind_of
from wengert.ops import elementwise as _ew
from wengert.ops import shape as _shape
from wengert.ops.base import Family, apply, is_traced, primal, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.decompositions.composite import linspace
from wengert.ops.reduce import max as _max
from wengert.ops.reduce import min as _min
from wengert.ops.reduce import sum as _sum

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("histograms")


def _refuse_traced_samples(sample: Any, what: str) -> None:
    kind = kind_of(primal(sample)) if is_traced(sample) else None
    if kind is not None and kind.opaque:
        raise TypeError(
            f"np.{what} of samples computed inside wg.compile / wg.trace is not supported (the "
            "bin of each sample would be a step of the graph): compute the histogram outside "
            "the traced function, or pass the samples as constants (the weights= may be "
            "traced), or use np.histogram, which traces.")
    kind = kind_of(sample)
    if kind is not None and kind.connected(sample):
        raise TypeError(
            f"np.{what}: the counts are piecewise constant in the samples and the bin edges "
            "depend on their range, so no gradient flows to them; pass "
            "wg.stop_gradient(sample) if that is what you mean (the weights= may carry a "
            "gradient).")


def _bin_of_each(sample: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    """The flat index of each sample's bin among the bins with NumPy's outlier bins
    around them (index 0 and n + 1 along each axis), as ``np.histogramdd`` computes it."""
    counts = []
    for i, e in enumerate(edges):
        index = np.searchsorted(e, sample[:, i], side="right")
        index[sample[:, i] == e[-1]] -= 1  # the last bin is closed
        counts.append(index)
    return np.ravel_multi_index(counts, [len(e) + 1 for e in edges])


@FAMILY.export
def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002
                weights: Any = None) -> tuple[Any, list[np.ndarray]]:
    """The multidimensional histogram of ``sample`` (``(N, D)``, or a sequence of ``D``
    arrays), as ``np.histogramdd``, differentiable in ``weights``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> s = np.array([[0.1, 0.2], [0.6, 0.9], [0.7, 0.1]])
    >>> h, edges = np.histogramdd(s, bins=2, weights=wg.tensor([1.0, 2.0, 3.0]))
    >>> h.numpy()
    array([[1., 0.],
           [3., 2.]])
    """
    return _histogramdd(sample, bins, range, density, weights, "histogramdd")


def _histogramdd(sample: Any, bins: Any, range: Any, density: Any,  # noqa: A002
                 weights: Any, what: str) -> tuple[Any, list[np.ndarray]]:
    parts = sample if isinstance(sample, (list, tuple)) else (sample,)
    for part in parts:
        _refuse_traced_samples(part, what)
    if is_traced(bins) and shape_of(bins):  # (one array of bins per axis, stacked)
        bins = list(bins)
    if isinstance(bins, (list, tuple)) and any(is_traced(b) for b in bins):
        return _histogramdd_of_traced_edges(sample, bins, range, density, weights, what)
    raw = [_raw(p) for p in parts] if isinstance(sample, (list, tuple)) else _raw(sample)
    if weights is None or not is_traced(weights):
        return np.histogramdd(raw, bins, range, density,
                              None if weights is None else _raw(weights))
    _, edges = np.histogramdd(raw, bins, range)
    points = np.atleast_2d(raw).T if isinstance(sample, (list, tuple)) else np.asarray(raw)
    if points.ndim == 1:
        points = points[:, None]
    n = points.shape[0]
    w = _shape.reshape(weights, (-1,))
    if shape_of(w)[0] != n:
        raise ValueError(f"histogramdd: weights has {shape_of(w)[0]} entries for {n} samples")
    dtype = dtype_of(w)
    if dtype.kind == "c":  # (NumPy's bincount takes float64 weights)
        raise TypeError(f"Cannot cast array data from {dtype!r} to dtype('float64') according "
                        "to the rule 'safe'")
    if dtype != np.float64:  # (float32 weights: a float64 histogram, summed in float64)
        w = _ew.astype(w, np.float64)
    flat = _bin_of_each(points, edges)
    padded = tuple(len(e) + 1 for e in edges)
    total = apply(_shape.TAKE_ADD, w, flat, shape=(int(np.prod(padded)),), axis=None)
    hist = _shape.reshape(total, padded)[(slice(1, -1),) * len(edges)]
    if density:
        hist = hist / _sum(hist)
        for i, e in enumerate(edges):
            widths = np.diff(e).reshape([-1 if j == i else 1 for j, _ in enumerate(edges)])
            hist = hist / widths
    return hist, edges


def refuse_graph_edges(edges: Any, what: str) -> Any:
    """The plain values of traced bin edges; edges a graph traces are refused (which bin
    each sample falls in would be a step the graph cannot hold)."""
    plain = primal(edges)
    if is_traced(plain):
        raise TypeError(
            f"np.{what}: bin edges traced inside wg.compile / wg.trace decide which bin each "
            "value falls in, which the graph cannot hold; pass the edges as a constant (a "
            "closure or a NumPy array), or call it outside the traced function.")
    return plain


def _histogramdd_of_traced_edges(sample: Any, bins: Any, range: Any,  # noqa: A002
                                 density: Any, weights: Any, what: str) -> Any:
    """:func:`histogramdd` with traced edges along some axes: the counts are piecewise
    constant in the edges (zero derivative), the density divides by the traced bin widths,
    and the edges come back as given (as NumPy gives back the arrays it was given)."""
    plain = [refuse_graph_edges(b, what) if is_traced(b) else b for b in bins]
    hist, edges = _histogramdd(sample, plain, range, False, weights, what)
    edges = [b if is_traced(b) else e for b, e in zip(bins, edges)]
    if density:
        hist = _ew.divide(hist, _sum(hist) if is_traced(hist) else np.sum(hist))
        for i, e in enumerate(edges):
            widths = _ew.subtract(e[1:], e[:-1]) if is_traced(e) else np.diff(e)
            hist = _ew.divide(hist, _shape.reshape(
                widths, [-1 if j == i else 1 for j, _ in enumerate(edges)]))
    return hist, edges


@FAMILY.export
def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                density: Any = None, weights: Any = None) -> tuple[Any, np.ndarray, np.ndarray]:
    """The two-dimensional histogram of ``x`` and ``y``, as ``np.histogram2d``,
    differentiable in ``weights``; see :func:`histogramdd`."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:  # (NumPy's reading: one array of edges for both axes)
        bins = [bins, bins] if is_traced(bins) else [np.asarray(bins), np.asarray(bins)]
    hist, edges = _histogramdd([x, y], bins, range, density, weights, "histogram2d")
    return hist, edges[0], edges[1]


def _numpy_edges(values: Any, bins: Any, range: Any, weights: Any) -> Any:  # noqa: A002
    """NumPy's bin edges of ``values``; for values a static graph traces, a step of that
    graph (how many edges there are is guarded: it may depend on the values)."""
    if is_traced(values) and kind_of(values).opaque:
        return kind_of(values).record_call(np.histogram_bin_edges,
                                           (values, bins, range, weights), {},
                                           "np.histogram_bin_edges")
    return np.histogram_bin_edges(np.asarray(values), bins, range, weights)


@FAMILY.implements(np.histogram_bin_edges)
def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002 (NumPy's)
                        weights: Any = None) -> Any:
    """The bin edges ``np.histogram`` uses, as ``np.histogram_bin_edges``: evenly spaced
    from the smallest to the largest value of ``a`` (or over ``range``), so they are
    differentiable in those (the number of bins is NumPy's, found from the values); edges
    given as an array come back as they are."""
    raw_bins = _raw(bins)
    if is_traced(raw_bins):  # edges a graph traces: given back as they are
        return bins
    if np.ndim(raw_bins) == 1:  # the edges themselves
        edges = _numpy_edges(_raw(a), raw_bins, None, None)  # (NumPy's checks)
        return bins if is_traced(bins) else edges
    raw_range = None if range is None else tuple(_raw(r) for r in range)
    edges = _numpy_edges(_raw(a), raw_bins, raw_range,
                         None if weights is None else _raw(weights))
    if range is not None:
        first, last = range
        if not (is_traced(first) or is_traced(last)):
            return edges  # (they do not depend on a)
    else:
        values = _raw(a)
        if not is_traced(a) or np.size(values) == 0:
            return edges
        flat = _shape.reshape(a, (-1,))
        first, last = _min(flat), _max(flat)
        # as NumPy: one value makes a unit-wide range around it (a choice written with
        # where, so a static graph needs no guard on it)
        same = np.equal(_raw(first), _raw(last))
        first = _ew.where(same, _ew.subtract(first, 0.5), first)
        last = _ew.where(same, _ew.add(last, 0.5), last)
    return linspace(first, last, shape_of(edges)[0], dtype=dtype_of(edges))


