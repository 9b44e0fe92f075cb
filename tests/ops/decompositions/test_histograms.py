"""``np.histogramdd`` and ``np.histogram2d`` (``wengert.ops.decompositions.histograms``): NumPy's
counts and edges, the weights' gradient to second order in both modes, and the refusal of a
differentiated sample."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from numeric_gradient import real_gradient
from wengert.testing import check_grads

RNG = np.random.default_rng(3)
X, Y = RNG.normal(size=40), RNG.normal(size=40)
S = RNG.normal(size=(40, 3))
W = RNG.uniform(0.1, 1.0, size=40)
EDGE = np.array([-1.0, 0.0, 0.5, 1.0])
X[:3] = [1.0, -1.0, 0.5]  # samples on the edges: the last bin is closed, as NumPy's

CASES = {
    "2d int bins": lambda w: np.histogram2d(X, Y, bins=4, weights=w),
    "2d two bin counts, density": lambda w: np.histogram2d(X, Y, bins=[3, 5], weights=w,
                                                           density=True),
    "2d edges and a count": lambda w: np.histogram2d(X, Y, bins=[EDGE, 4], weights=w),
    "2d one array of edges": lambda w: np.histogram2d(X, Y, bins=EDGE, weights=w),
    "2d range": lambda w: np.histogram2d(X, Y, bins=3, range=[[-1, 1], [-1, 1]], weights=w),
    "dd": lambda w: np.histogramdd(S, bins=3, weights=w),
    "dd bins range density": lambda w: np.histogramdd(
        S, bins=(2, 3, 4), range=[(-1, 1), (-2, 2), (-1, 2)], weights=w, density=True),
    "dd sequence": lambda w: np.histogramdd((X, Y), bins=3, weights=w),
}


def _parts(result):
    hist, *edges = result
    edges = edges[0] if len(edges) == 1 else edges
    return hist, edges


@pytest.mark.parametrize("name", list(CASES))
def test_counts_and_edges_are_numpys_and_the_weights_differentiate(name):
    f = CASES[name]
    want_hist, want_edges = _parts(f(W))
    got_hist, got_edges = _parts(f(wg.tensor(W)))
    np.testing.assert_allclose(got_hist.numpy(), want_hist, rtol=1e-14)
    for g, w in zip(got_edges, want_edges):
        np.testing.assert_array_equal(g, w)
    assert check_grads(lambda w: f(w)[0] ** 2, (W,), order=2, modes=("rev", "fwd"))


def test_each_weight_goes_to_its_bin():
    x, y = np.array([0.1, 0.6, 0.7, 5.0]), np.array([0.2, 0.9, 0.1, 0.5])
    g = wg.grad(lambda w: np.histogram2d(x, y, bins=2, range=[[0, 1], [0, 1]],
                                         weights=w)[0][1, 0])(np.ones(4))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 0.0])  # (5.0 is outside: no bin)


def test_compiled_with_the_samples_as_constants():
    def f(w):
        return np.sum(np.histogram2d(X, Y, bins=4, weights=w)[0] ** 2)

    np.testing.assert_allclose(wg.compile(f)(W), f(W))
    np.testing.assert_allclose(wg.grad(wg.compile(f))(W), wg.grad(f)(W))


def test_plain_weights_give_numpys_result_and_differentiated_samples_are_refused():
    assert type(np.histogram2d(wg.tensor(X), Y)[0]) is np.ndarray
    with pytest.raises(TypeError, match=r"np\.histogram2d: .*stop_gradient"):
        np.histogram2d(wg.tensor(X, requires_grad=True), Y)
    with pytest.raises(TypeError, match=r"np\.histogramdd: .*stop_gradient"):
        wg.grad(lambda s: np.sum(np.histogramdd(s, weights=W)[0]))(S)
    with pytest.raises(ValueError, match="weights"):
        np.histogramdd(S, weights=wg.tensor(W[:5]))


def test_histogram_with_traced_bin_edges():
    # the counts are piecewise constant in the edges, the density divides by the bin
    # widths, and the edges come back as given, with their derivative (NumPy returns them)
    sample = np.array([0.2, 0.6, 0.7, 1.1, 0.65])
    w = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
    edges0 = np.array([0.1, 0.5, 0.9, 1.3])

    def f(edges, density=False, weights=None):
        counts, e = np.histogram(sample, bins=edges, density=density, weights=weights)
        return np.sum(counts * np.array([1.0, 3.0, 7.0])) + np.sum(e * np.arange(4.0))

    for density in (False, True):
        for weights in (None, w):
            want = real_gradient(lambda e, d=density, ww=weights: f(e, d, ww), edges0)
            got = wg.grad(lambda e, d=density, ww=weights: f(e, d, ww))(edges0)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
            _, tangent = wg.jvp(lambda e, d=density, ww=weights: f(e, d, ww), (edges0,),
                                (np.ones(4),))
            np.testing.assert_allclose(tangent, want.sum(), rtol=1e-6)
    counts, e = np.histogram(sample, bins=wg.tensor(edges0, requires_grad=True))
    np.testing.assert_array_equal(np.asarray(counts), np.histogram(sample, edges0)[0])
    assert e.requires_grad
    # weights carrying a derivative alongside traced edges
    np.testing.assert_allclose(
        wg.grad(lambda ww: np.sum(np.histogram(sample, wg.stop_gradient(edges0) * 1.0,
                                               weights=ww, density=True)[0]))(w),
        real_gradient(lambda ww: np.sum(np.histogram(sample, edges0, weights=ww,
                                                    density=True)[0]), w), rtol=1e-6)


@pytest.mark.parametrize("name", ["2d list", "2d one array", "2d weights", "2d edges",
                                  "dd", "dd tuple", "dd edges"])
def test_multidimensional_histograms_with_traced_bin_edges(name):
    s = np.array([0.2, 0.6, 0.7, 1.1])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    e0 = np.array([0.1, 0.5, 0.9, 1.3])
    k = np.arange(9.0).reshape(3, 3) + 1.0
    two = np.stack([s, s[::-1]], 1)
    f = {
        "2d list": lambda e: np.sum(np.histogram2d(s, s[::-1], bins=[e, e0], density=True)[0]
                                    * k),
        "2d one array": lambda e: np.sum(np.histogram2d(s, s[::-1], bins=e, density=True)[0]
                                         * k),
        "2d weights": lambda e: np.sum(np.histogram2d(s, s[::-1], bins=[e0, e], density=True,
                                                      weights=w)[0] * k),
        "2d edges": lambda e: np.sum(np.histogram2d(s, s, bins=[e, e])[1] * 2.0
                                     + np.histogram2d(s, s, bins=[e, e])[2]),
        "dd": lambda e: np.sum(np.histogramdd(s[:, None], bins=[e], density=True)[0]
                               * np.arange(3.0)),
        "dd tuple": lambda e: np.sum(np.histogramdd(two, bins=(e, e * 1.1), density=True)[0]
                                     * k),
        "dd edges": lambda e: np.sum(np.histogramdd(two, bins=(e, e * 1.1))[1][1]),
    }[name]
    want = real_gradient(f, e0)
    np.testing.assert_allclose(wg.grad(f)(e0), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wg.jvp(f, (e0,), (np.ones(4),))[1], want.sum(), rtol=1e-6,
                               atol=1e-6)


def test_bin_edges_traced_inside_a_compiled_function():
    # np.histogram's is a step of the graph; the multidimensional ones refuse
    s = np.array([0.2, 0.6, 0.7, 1.1])
    e0 = np.array([0.1, 0.5, 0.9, 1.3])
    np.testing.assert_array_equal(wg.compile(lambda e: np.histogram(s, e)[0])(e0),
                                  np.histogram(s, e0)[0])
    np.testing.assert_array_equal(wg.compile(lambda e: np.histogram(s, e + 0.05)[0])(e0),
                                  np.histogram(s, e0 + 0.05)[0])
    with pytest.raises(TypeError, match="bin edges traced inside wg.compile"):
        wg.compile(lambda e: np.sum(np.histogram2d(s, s, bins=[e, e])[0]))(e0)
    np.testing.assert_array_equal(  # the edges alone are the edges given
        wg.compile(lambda e: np.histogram_bin_edges(s, bins=e) * 2.0)(e0), e0 * 2.0)


# -- histogramdd / histogram2d: weights' dtypes as NumPy's ---------------------------------
def test_histogramdd_of_float32_weights_is_float64_as_numpy():
    """NumPy bins the weights with bincount, in float64: the histogram of float32 weights
    is float64 (not summed in float32)."""
    s = np.array([[0.1, 0.2], [0.6, 0.9], [0.7, 0.1], [0.2, 0.3]])
    w = np.array([1e-8, 1.0, 3.0, 1.0], dtype=np.float32)
    want = np.histogramdd(s, bins=2, weights=w)[0]
    got = np.histogramdd(s, bins=2, weights=wg.tensor(w))[0]
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), want)
    got2 = np.histogram2d(s[:, 0], s[:, 1], bins=2, weights=wg.tensor(w))[0]
    assert got2.dtype == np.float64
    g = wg.grad(lambda w: np.histogram2d(s[:, 0], s[:, 1], bins=2, weights=w)[0][0, 0])(w)
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 1.0])


def test_histogramdd_refuses_complex_weights_as_numpy():
    s = np.array([0.1, 0.2, 0.7])
    w = np.array([1.0, 2.0, 3.0]) + 1j
    with pytest.raises(TypeError):
        np.histogramdd(s, bins=2, weights=w)
    with pytest.raises(TypeError, match="float64"):
        np.histogramdd(s, bins=2, weights=wg.tensor(w))
