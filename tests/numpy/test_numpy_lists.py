"""``wengert.numpy`` with lists and tuples holding tensors (wengert.numpy.lists), and the
index tricks ``wnp.r_`` / ``wnp.c_`` (wengert.numpy.index_tricks): NumPy's values, the
gradients reaching every item, both modes to second order, and compiled."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.testing import check_grads

RNG = np.random.default_rng(5)
X = RNG.normal(size=3)
Y = RNG.normal(size=3)
M = RNG.normal(size=(2, 3))

CASES = {
    "mean": (lambda x, y: wnp.mean([x, y]), lambda x, y: np.mean([x, y])),
    "mean axis": (lambda x, y: wnp.mean([x, y], axis=0), lambda x, y: np.mean([x, y], axis=0)),
    "sum tuple": (lambda x, y: wnp.sum((x, y * 2.0), axis=1),
                  lambda x, y: np.sum((x, y * 2.0), axis=1)),
    "std": (lambda x, y: wnp.std([x, y]), lambda x, y: np.std([x, y])),
    "var": (lambda x, y: wnp.var([x, y], axis=1), lambda x, y: np.var([x, y], axis=1)),
    "max scalars": (lambda x, y: wnp.max([x[0], y[1], 0.5]),
                    lambda x, y: np.max([x[0], y[1], 0.5])),
    "dot": (lambda x, y: wnp.dot([x[0], y[0]], [[1.0, 2.0], [3.0, 4.0]]),
            lambda x, y: np.dot([x[0], y[0]], [[1.0, 2.0], [3.0, 4.0]])),
    "linalg.norm": (lambda x, y: wnp.linalg.norm([x[0], y[1]]),
                    lambda x, y: np.linalg.norm([x[0], y[1]])),
    "average weights": (lambda x, y: wnp.average(x, weights=[y[0] ** 2, 1.0, y[2] ** 2]),
                        lambda x, y: np.average(x, weights=[y[0] ** 2, 1.0, y[2] ** 2])),
    "concatenate nested": (lambda x, y: wnp.concatenate([[x[0], y[0]], x]),
                           lambda x, y: np.concatenate([[x[0], y[0]], x])),
    "stack of lists": (lambda x, y: wnp.stack([[x[0], y[0]], [x[1], 2.0]], axis=1),
                       lambda x, y: np.stack([[x[0], y[0]], [x[1], 2.0]], axis=1)),
    "np.append list": (lambda x, y: np.append(x, [y[0], 1.0]),
                       lambda x, y: np.append(x, [y[0], 1.0])),
    "r_": (lambda x, y: wnp.r_[x, 0.5, y[:2] * 2.0], lambda x, y: np.r_[x, 0.5, y[:2] * 2.0]),
    "r_ slice": (lambda x, y: wnp.r_[x, 0:3, y] * wnp.r_[1:4, y, x],
                 lambda x, y: np.r_[x, 0:3, y] * np.r_[1:4, y, x]),
    "r_ linspace": (lambda x, y: wnp.r_[0:1:4j, x], lambda x, y: np.r_[0:1:4j, x]),
    "r_ 2-d axis": (lambda x, y: wnp.r_["-1", x[None], y[None]],
                    lambda x, y: np.r_["-1", x[None], y[None]]),
    "r_ ndmin trans1d": (lambda x, y: wnp.r_["0,2,0", x, y], lambda x, y: np.r_["0,2,0", x, y]),
    "r_ ndmin": (lambda x, y: wnp.r_["1,2", x, y], lambda x, y: np.r_["1,2", x, y]),
    "c_": (lambda x, y: wnp.c_[x, y, x * y], lambda x, y: np.c_[x, y, x * y]),
    "c_ 0-d": (lambda x, y: wnp.c_[x[0], y[1]], lambda x, y: np.c_[x[0], y[1]]),
    "r_ 0-d": (lambda x, y: wnp.r_[x[0], y[1], 3.0], lambda x, y: np.r_[x[0], y[1], 3.0]),
    "r_ list item": (lambda x, y: wnp.r_[[x[0], y[0]], x], lambda x, y: np.r_[[x[0], y[0]], x]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_equal_numpy_and_derivatives_to_second_order(name):
    f, plain = CASES[name]
    want = plain(X, Y)
    got = f(wg.tensor(X, requires_grad=True), wg.tensor(Y, requires_grad=True))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    assert got.numpy().dtype == np.asarray(want).dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(f(X, Y), want, rtol=1e-12)  # plain values stay plain NumPy
    assert check_grads(f, (X, Y), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("name", ["mean", "r_", "c_", "np.append list", "concatenate nested"])
def test_compiled(name):
    f, plain = CASES[name]
    cf = wg.compile(f)
    np.testing.assert_allclose(cf(X, Y), plain(X, Y), rtol=1e-12)
    np.testing.assert_allclose(cf(Y, X), plain(Y, X), rtol=1e-12)
    loss = lambda x, y: np.sum(f(x, y) ** 2)  # noqa: E731
    np.testing.assert_allclose(wg.grad(wg.compile(loss))(X, Y), wg.grad(loss)(X, Y), rtol=1e-12)


def test_without_traced_items_they_are_numpys():
    assert wnp.r_ is not np.r_
    np.testing.assert_array_equal(wnp.r_[1:4, 7, [8, 9]], np.r_[1:4, 7, [8, 9]])
    assert wnp.r_[1:4].dtype == np.r_[1:4].dtype
    np.testing.assert_array_equal(wnp.c_[[1, 2], [3, 4]], np.c_[[1, 2], [3, 4]])
    assert wnp.mean([1.0, 2.0]) == 1.5


def test_dtypes_follow_numpy():
    x32 = wg.tensor(X.astype(np.float32), requires_grad=True)
    assert wnp.r_[x32, 1.0].numpy().dtype == np.float32  # a Python float is weak
    assert wnp.r_[x32, np.arange(2)].numpy().dtype == np.r_[X.astype(np.float32),
                                                            np.arange(2)].dtype
    assert wnp.r_[x32, 1:3].numpy().dtype == np.r_[X.astype(np.float32), 1:3].dtype
    g = wg.grad(lambda x: np.sum(wnp.r_[x, 2.0] ** 2))(X.astype(np.float32))
    assert g.dtype == np.float32


def test_misuse_says_what_to_do():
    x = wg.tensor(X, requires_grad=True)
    with pytest.raises(NotImplementedError, match="matrix directive"):
        wnp.r_["r", x, x]
    with pytest.raises(ValueError, match="first entry"):
        wnp.r_[x, "0"]
    with pytest.raises(ValueError, match="unknown special directive"):
        wnp.r_["a,b", x]
    with pytest.raises(TypeError, match="np.stack"):  # NumPy converts the list itself
        np.mean([x, x])


def test_functions_taking_sequences_keep_their_items_apart():
    """concatenate, stack, select ... take a list of arrays of different shapes: their
    items are built, not the list."""
    x = wg.tensor(X, requires_grad=True)
    out = wnp.concatenate([x, [x[0], 1.0]])
    assert out.shape == (5,)
    s = wnp.select([X > 0, X <= 0], [x * 2.0, [1.0, x[1], 3.0]])
    np.testing.assert_allclose(s.numpy(), np.select([X > 0, X <= 0],
                                                     [X * 2.0, [1.0, X[1], 3.0]]))
    y = wnp.hstack((x, [x[2]]))
    np.sum(y).backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0, 2.0])


# -- splits and other functions of lists and tuples with rules of their own -------------
M3 = RNG.normal(size=(4, 3))
MORE = {
    "average weights": (lambda x, w: np.average(x, axis=0, weights=w ** 2 + 0.5),
                        (M3, RNG.normal(size=4))),
    "average full weights": (lambda x, w: np.average(x, weights=np.exp(w)), (M3, M3[::-1])),
    "average 1-d weights": (lambda x, w: np.average(x, axis=1, weights=w ** 2 + 0.5), (M3, Y)),
    "ptp": (lambda x, w: np.ptp(x, axis=0) * w, (M3, Y)),
    "atleast_1d/2d/3d": (lambda x, w: np.atleast_3d(x[0, 0]) * np.sum(np.atleast_2d(w))
                         + np.atleast_1d(w[0]), (M3, Y)),
    "hsplit": (lambda x, w: np.hsplit(x, 3)[1] * w[0], (M3, Y)),
    "vsplit": (lambda x, w: np.vsplit(x, [1, 3])[1] * w, (M3, Y)),
    "array_split": (lambda x, w: np.array_split(x, 3, axis=0)[0] * w, (M3, Y)),
}


@pytest.mark.parametrize("name", list(MORE))
def test_functions_of_lists_and_splits_match_numpy_and_differentiate(name):
    f, args = MORE[name]
    want = f(*args)
    got = f(*[wg.tensor(a) for a in args])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(wg.compile(f)(*args), want, rtol=1e-12)
    assert check_grads(f, args, order=2, modes=("rev", "fwd"))


def test_searchsorted_and_digitize_give_plain_indices_without_gradient():
    x = wg.tensor([0.5, 1.5, 2.5], requires_grad=True)
    edges = wg.tensor([0.0, 1.0, 2.0], requires_grad=True)
    i = np.searchsorted(edges, x)
    assert isinstance(i, np.ndarray) and i.tolist() == [1, 2, 3]
    assert np.digitize(x, edges).tolist() == np.digitize([0.5, 1.5, 2.5], [0.0, 1.0, 2.0]).tolist()
    g = wg.grad(lambda x: np.sum(x * np.searchsorted([0.0, 1.0, 2.0], x)))(np.array([0.5, 1.5]))
    np.testing.assert_array_equal(g, [1.0, 2.0])


def test_average_with_weights_summing_to_zero_raises_eagerly_and_compiled():
    f = wg.compile(lambda x, w: np.average(x, weights=w))
    assert f(np.ones(3), np.array([1.0, 2.0, 3.0])) == 1.0
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        f(np.ones(3), np.array([1.0, -1.0, 0.0]))  # a guard of the graph: checked each run
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        np.average(wg.tensor(np.ones(3)), weights=np.array([1.0, -1.0, 0.0]))
