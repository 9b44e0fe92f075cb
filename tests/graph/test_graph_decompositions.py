"""A decomposition in a traced graph is one equation with several outputs (as a tape reads
it): ``w, v = eigh(a)``. Every way of running a graph agrees with eager mode on it."""

import pytest

import numpy as np
import wengert as wg
from wengert.graph.passes.pipeline import checkpointed, fusing, optimize

RNG = np.random.default_rng(7)


def _matrix(shape, dtype):
    a = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


def _hermitian(shape, dtype):
    a = _matrix(shape, dtype)
    return a + np.conj(np.swapaxes(a, -1, -2))


def _eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, w.shape[-1] + 1)) + np.sum(np.abs(v) ** 4)


def _svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2) + np.sum(np.abs(u) ** 4) + np.sum(np.abs(vh[..., 0, :]) ** 3)


def _qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.abs(q) ** 3) + np.sum(np.abs(r) ** 2)


def _qr_complete_loss(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(np.abs(q[..., :, -1]) ** 3) + np.sum(r ** 2)


def _eig_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v[..., 0, :]) ** 2)


#: name -> (the loss, the input maker, the dtypes it is checked with)
LOSSES = {
    "eigh": (_eigh_loss, _hermitian, ["float64", "float32", "complex128"]),
    "svd": (_svd_loss, _matrix, ["float64", "float32", "complex128"]),
    "qr": (_qr_loss, _matrix, ["float64", "float32", "complex128"]),
    "qr complete": (_qr_complete_loss, None, ["float64"]),
    "eig": (_eig_loss, _matrix, ["float64"]),
}

#: the primitive each loss's graph holds as one equation, and its outputs
MULTI = {"eigh": ("eigh", 2), "svd": ("svd", 3), "qr": ("qr", 2), "qr complete": ("qr", 3),
         "eig": ("eig", 2)}

PIPELINES = {
    "default": None,
    "compile": ["fold_constants", "simplify", "cse", "dce", "fuse", "plan_memory"],
    "fused": ["cse", fusing(min_elements=0), "dce"],
    "remat": ["cse", "dce", checkpointed(10 ** 9)],
}


def _input(name, shape, dtype):
    if name == "qr complete":
        return _matrix(shape[:-1] + (shape[-1] + 2, shape[-1]), dtype)  # tall: a completion
    return LOSSES[name][1](shape, dtype)


def _tolerance(dtype):
    if np.dtype(dtype) == np.float32:
        return dict(rtol=2e-3, atol=2e-3)
    return dict(rtol=1e-7, atol=1e-9)


CASES = [(name, dtype, shape) for name, (_, _, dtypes) in LOSSES.items() for dtype in dtypes
         for shape in [(3, 3), (2, 3, 3)]]


@pytest.mark.parametrize("name,dtype,shape", CASES)
def test_a_decomposition_is_one_equation_whose_graph_agrees_with_eager(name, dtype, shape):
    loss = LOSSES[name][0]
    a = _input(name, shape, dtype)
    tol = _tolerance(dtype)
    g = wg.trace(loss, a)
    prim, n = MULTI[name]
    multi = [eq for eq in g if len(eq.outs) > 1]
    assert [(eq.primitive, len(eq.outs)) for eq in multi] == [(prim, n)]
    assert f" = {prim}(" in str(g)
    expected = loss(a)
    np.testing.assert_allclose(g(a), expected, **tol)
    grad = wg.grad(loss)(a)
    np.testing.assert_allclose(wg.grad(g)(a), grad, **tol)
    np.testing.assert_allclose(wg.grad_graph(g)(a)[1], grad, **tol)
    compiled = wg.compile(loss)
    np.testing.assert_allclose(compiled(a), expected, **tol)
    np.testing.assert_allclose(wg.grad(compiled)(a), grad, **tol)
    for passes in PIPELINES.values():
        np.testing.assert_allclose(optimize(g, passes)(a), expected, **tol)
        gg = optimize(wg.grad_graph(g), passes)
        np.testing.assert_allclose(gg(a)[1], grad, **tol)


@pytest.mark.parametrize("name,shape", [("eigh", (2, 4, 4))] + [
    (name, shape) for name in ["svd", "qr", "qr complete"]
    for shape in [(2, 4, 4), (2, 5, 3), (3, 2, 4)]])
def test_a_graph_of_a_decomposition_computes_the_eager_values_bit_for_bit(name, shape):
    a = _input(name, shape, "float64")
    f = {"eigh": lambda a: tuple(np.linalg.eigh(a)),
         "svd": lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
         "qr": lambda a: tuple(np.linalg.qr(a)),
         "qr complete": lambda a: tuple(np.linalg.qr(a, mode="complete"))}[name]
    expected = [np.asarray(x) for x in f(wg.tensor(a))]
    for got in (wg.trace(f, a)(a), wg.compile(f)(a)):
        assert len(got) == len(expected)
        for x, y in zip(got, expected):
            assert np.array_equal(x, y)


def test_a_second_derivative_through_a_graph_of_eigh_agrees_with_eager():
    a = _hermitian((3, 3), "float64")
    g = wg.trace(_eigh_loss, a)
    hv = wg.jvp(wg.grad(g), (a,), (np.eye(3),))[1]
    expected = wg.jvp(wg.grad(_eigh_loss), (a,), (np.eye(3),))[1]
    np.testing.assert_allclose(hv, expected, rtol=1e-7, atol=1e-9)
    second = wg.grad_graph(wg.trace(lambda a: wg.grad(_eigh_loss)(a)[0, 1], a))
    np.testing.assert_allclose(second(a)[1], wg.grad(lambda a: wg.grad(_eigh_loss)(a)[0, 1])(a),
                               rtol=1e-7, atol=1e-9)
