"""``np.histogramdd`` and ``np.histogram2d`` (``wengert.ops.histograms``): NumPy's counts
and edges, the weights' gradient to second order in both modes, and the refusal of a
differentiated sample."""

from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
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
