"""``np.partition`` / ``np.argpartition`` on wengert values (wengert.ops.decompositions.partition):
NumPy's layout, the gradient routed by the indices NumPy chose, both modes to second order,
compiled graphs that follow new inputs, and the refusals."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.graph.backends.export import NotExportable, to_jax_source
from wengert.testing import check_grads

RNG = np.random.default_rng(11)
V = RNG.permutation(np.arange(7.0)) + RNG.uniform(0, 0.5, 7)
M = RNG.normal(size=(3, 5))


@pytest.mark.parametrize("kth, axis, x", [(2, -1, V), ([1, 4], -1, V), (1, 0, M), (3, 1, M),
                                           (-1, -1, V), (6, None, M)])
def test_layout_is_numpys_and_the_gradient_follows_argpartition(kth, axis, x):
    got = np.partition(wg.tensor(x), kth, axis=axis).numpy()
    flat = x.ravel() if axis is None else x
    ax = -1 if axis is None else axis
    idx = np.argpartition(flat, kth, axis=ax)
    np.testing.assert_array_equal(got, np.take_along_axis(flat, idx, axis=ax))
    want = np.partition(x, kth, axis=axis)
    for k in np.atleast_1d(kth):  # NumPy specifies the kth entries and the parts' contents
        np.testing.assert_array_equal(np.take(got, k, axis=ax), np.take(want, k, axis=ax))
    np.testing.assert_array_equal(np.sort(got, axis=ax), np.sort(want, axis=ax))
    w = RNG.normal(size=got.shape)
    g = wg.grad(lambda x: np.sum(np.partition(x, kth, axis=axis) * w))(x)
    expected = np.zeros_like(flat)
    np.put_along_axis(expected, idx, w, axis=ax)
    np.testing.assert_array_equal(g, expected.reshape(x.shape))
    assert check_grads(lambda x: np.partition(x, kth, axis=axis) ** 2, (x,), order=2,
                       modes=("rev", "fwd"))


def test_argpartition_and_the_wengert_numpy_name():
    t = wg.tensor(V, requires_grad=True)
    idx = np.argpartition(t, 3)
    assert isinstance(idx, np.ndarray) and idx.dtype.kind == "i"
    np.testing.assert_array_equal(idx, np.argpartition(V, 3))
    np.testing.assert_array_equal(wnp.partition(V, 3), np.partition(V, 3))
    assert wnp.partition(t, 3).requires_grad


def test_ties_send_the_gradient_to_one_entry_each():
    x = np.array([2.0, 1.0, 1.0, 3.0, 1.0])
    g = wg.grad(lambda x: np.sum(np.partition(x, 2)[:3] * np.array([1.0, 10.0, 100.0])))(x)
    assert sorted(g[[1, 2, 4]]) == [1.0, 10.0, 100.0] and g[0] == g[3] == 0.0


def test_float32_nesting_and_dual_numbers():
    x32 = V.astype(np.float32)
    g = wg.grad(lambda x: np.partition(x, 2)[2] ** 2)(x32)
    assert g.dtype == np.float32
    h = wg.hessian(lambda x: np.sum(np.partition(x, 2)[:3] ** 3))(V)
    smallest = np.argsort(V)[:3]
    np.testing.assert_allclose(np.diag(h)[smallest], 6.0 * V[smallest])
    _, t = wg.jvp(lambda x: np.partition(x, 0)[0], (V,), (np.arange(7.0),))
    assert t == float(np.argmin(V))


def test_compiled_follows_new_inputs_and_export_is_refused():
    def f(x):
        return np.sum(np.partition(x, 2)[:3] ** 2)

    cf = wg.compile(wg.grad(f))
    for x in (V, V[::-1].copy(), -V):
        np.testing.assert_allclose(cf(x), wg.grad(f)(x))
    graph = wg.trace(f, V)
    np.testing.assert_allclose(graph(-V), f(-V))
    with pytest.raises(NotExportable, match="argpartition"):
        to_jax_source(graph)


def test_refusals():
    with pytest.raises(TypeError, match="kth"):
        wg.grad(lambda k: np.sum(wnp.partition(V, k)))(2.0)
    with pytest.raises(NotImplementedError, match="order"):
        np.partition(wg.tensor(V), 1, order="x")
    with pytest.raises(ValueError):
        np.partition(wg.tensor(V), 9)
    with pytest.raises(np.exceptions.AxisError, match="dimension 0"):
        np.partition(wg.tensor(1.0), 0)  # as NumPy's
