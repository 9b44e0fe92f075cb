"""The ndarray methods of every kind of traced value (tensor, dual number, graph tracer):
NumPy's arguments, in NumPy's order, NumPy's values and dtypes."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.bind import primal

X = np.array([[1.5, -0.25, 2.0], [0.5, -3.0, 0.75]], np.float16)

CALLS = {
    "sum dtype": lambda x: x.sum(dtype=np.float32),
    "sum axis dtype positional": lambda x: x.sum(0, np.float64),
    "sum keepdims positional": lambda x: x.sum(1, None, None, True),
    "mean dtype": lambda x: x.mean(dtype=np.float64),
    "mean keepdims positional": lambda x: x.mean(0, None, None, True),
    "prod dtype": lambda x: x.prod(1, np.float32),
    "max keepdims positional": lambda x: x.max(1, None, True),
    "min": lambda x: x.min(axis=0, keepdims=True),
    "var": lambda x: x.var(),
    "var ddof positional": lambda x: x.var(0, None, None, 1),
    "var dtype": lambda x: x.var(dtype=np.float64, ddof=1),
    "std ddof": lambda x: x.std(axis=1, ddof=1),
    "std dtype keepdims": lambda x: x.std(1, np.float32, keepdims=True),
    "cumsum dtype": lambda x: x.cumsum(1, np.float64),
    "cumprod dtype": lambda x: x.cumprod(dtype=np.float32),
}


def _kinds(x):
    yield "tensor", wg.tensor(x, requires_grad=True)
    yield "dual", wg.Dual(x, np.ones_like(x))


@pytest.mark.parametrize("name", list(CALLS))
def test_reduction_methods_take_numpys_arguments(name):
    # x.sum(dtype=) raised TypeError; x.sum(0, np.float64) took the dtype for keepdims
    # (NumPy's order is axis, dtype, out, keepdims), and a graph tracer's x.var() was its
    # graph variable ('Var' object is not callable).
    f = CALLS[name]
    want = f(X)
    got = [primal(f(v)) for _, v in _kinds(X)]
    got += [wg.trace(f, X)(X), wg.compile(f)(X)]
    for g in got:
        assert type(g) is type(want) and g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=1e-3)


def test_reduction_methods_refuse_out():
    t = wg.tensor(X, requires_grad=True)
    with pytest.raises(TypeError, match="out="):
        t.sum(0, None, np.empty(3, np.float16))


def test_gradient_through_a_method_with_dtype_keeps_the_input_dtype():
    x = X.astype(np.float32)
    g = wg.grad(lambda x: x.var(dtype=np.float64) + x.sum(0, np.float64).sum())(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * (x - x.mean()) / x.size + 1.0, rtol=1e-6)
