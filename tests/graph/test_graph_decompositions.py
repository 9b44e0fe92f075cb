"""A decomposition in a traced graph is one equation with several outputs (as a tape reads
it): ``w, v = eigh(a)``. Every way of running a graph agrees with eager mode on it."""

import pytest

import numpy as np
import wengert as wg
from decomposition_examples import (
    eig_loss,
    eigh_loss,
    hermitian,
    matrix,
    qr_complete_loss,
    qr_loss,
    svd_loss,
)
from wengert.graph.passes.pipeline import checkpointed, fusing, optimize

#: name -> (the loss, the input maker, the dtypes it is checked with)
LOSSES = {
    "eigh": (eigh_loss, hermitian, ["float64", "float32", "complex128"]),
    "svd": (svd_loss, matrix, ["float64", "float32", "complex128"]),
    "qr": (qr_loss, matrix, ["float64", "float32", "complex128"]),
    "qr complete": (qr_complete_loss, None, ["float64"]),
    "eig": (eig_loss, matrix, ["float64"]),
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
        return matrix(shape[:-1] + (shape[-1] + 2, shape[-1]), dtype)  # tall: a completion
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
    a = hermitian((3, 3), "float64")
    g = wg.trace(eigh_loss, a)
    hv = wg.jvp(wg.grad(g), (a,), (np.eye(3),))[1]
    expected = wg.jvp(wg.grad(eigh_loss), (a,), (np.eye(3),))[1]
    np.testing.assert_allclose(hv, expected, rtol=1e-7, atol=1e-9)
    second = wg.grad_graph(wg.trace(lambda a: wg.grad(eigh_loss)(a)[0, 1], a))
    np.testing.assert_allclose(second(a)[1], wg.grad(lambda a: wg.grad(eigh_loss)(a)[0, 1])(a),
                               rtol=1e-7, atol=1e-9)
