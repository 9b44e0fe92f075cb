"""Compiled transforms give the dtypes and the types eager transforms give.

``wg.compile(t(f))`` and ``t(wg.compile(f))`` return, leaf for leaf, what ``t(f)`` returns:
float32 (float16) results for float32 (float16) inputs, as JAX, also where the function
holds a float64 constant or a gradient does not depend on the input; and a 0-d result
as the same type (a Python float for a Python float, a NumPy scalar for a NumPy scalar,
a 0-d array for a 0-d array).
"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.tree import flatten

FUNCTIONS = {
    "square": lambda x: (x ** 2).sum(),
    "python constants": lambda x: (x * 0.5 + 1.0).sum() / 3.0,
    "mean of exp": lambda x: np.mean(np.exp(x) / 2.0),
    "log and sin": lambda x: np.sum(np.log(x + 2.0) * np.sin(x)),
    "where": lambda x: np.sum(np.where(x > 0.5, x ** 2, -x)),
    "norm": lambda x: np.linalg.norm(x),
    "tanh": lambda x: np.sum(np.tanh(x) * 3.0 - 1.0 / (1.0 + x ** 2)),
    "std and var": lambda x: np.std(x) + np.var(x),
    "max": lambda x: np.max(x) + np.sum(np.maximum(x, 0.2)),
    "logsumexp": lambda x: np.log(np.sum(np.exp(x))),
    "prod": lambda x: np.prod(x),
    "float64 constant": lambda x: np.sum(x * np.float64(2.0)),
    "constant gradient": lambda x: np.sum(x) * 3.0,
}
TRANSFORMS = {
    "grad": wg.grad,
    "value_and_grad": wg.value_and_grad,
    "hessian": wg.hessian,
    "jacfwd of grad": lambda f: wg.jacfwd(wg.grad(f)),
    "jacrev of grad": lambda f: wg.jacrev(wg.grad(f)),
    "vjp": lambda f: (lambda x: wg.vjp(f, x)[1](np.ones((), x.dtype))),
}


def kinds(result):
    return [(type(v).__name__, np.result_type(v).name, np.shape(v)) for v in flatten(result)[0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_compiled_transforms_keep_the_input_dtype(name, dtype):
    f = FUNCTIONS[name]
    x = np.array([0.3, 0.7, 0.9], dtype)
    for t_name, t in TRANSFORMS.items():
        want = t(f)(x)
        for how, got in (("compile(t(f))", wg.compile(t(f))(x)),
                         ("t(compile(f))", t(wg.compile(f))(x))):
            assert kinds(got) == kinds(want), (t_name, how)
            for a, b in zip(flatten(got)[0], flatten(want)[0]):
                np.testing.assert_allclose(a, b, rtol=1e-2 if dtype is np.float16 else 1e-5)
    grads = [flatten(TRANSFORMS[t](f)(x))[0][-1] for t in ("grad", "hessian")]
    assert all(np.result_type(g) == dtype for g in grads)


def test_a_constant_gradient_takes_the_input_dtype():
    # The gradient of x * float64(2) does not depend on x: traced, it is a constant of the
    # graph, which takes the input's dtype as eagerly (it stayed float64).
    f = lambda x: np.sum(x * np.float64(2.0))  # noqa: E731
    x = np.ones(3, np.float32)
    assert wg.grad(f)(x).dtype == np.float32
    for got in (wg.compile(wg.grad(f))(x), wg.trace(wg.grad(f), x)(x),
                wg.compile(wg.value_and_grad(f))(x)[1]):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.full(3, 2.0, np.float32))


@pytest.mark.parametrize("x", [0.7, np.float64(0.7), np.float32(0.7), np.array(0.7),
                               np.array(0.7, np.float32)],
                         ids=["float", "float64", "float32", "0-d", "0-d float32"])
@pytest.mark.parametrize("name", ["cube", "python constants", "float64 constant", "tanh"])
def test_gradient_types_follow_the_input(name, x):
    f = {"cube": lambda x: x ** 3, "python constants": lambda x: (x * 0.5 + 1.0) / 3.0,
         "float64 constant": lambda x: x * np.float64(2.0),
         "tanh": lambda x: np.tanh(x) * 3.0}[name]
    for t in (wg.grad, wg.value_and_grad):
        want = t(f)(x)
        for got in (wg.compile(t(f))(x), t(wg.compile(f))(x)):
            if t is wg.value_and_grad:  # the value as computed: x ** 3 of a Python float is
                # one on the tape (its float path), a float64 in a graph (NumPy's power)
                assert np.result_type(got[0]) == np.result_type(want[0])
                got, want_ = got[1], want[1]
            else:
                want_ = want
            assert kinds(got) == kinds(want_), t.__name__
    if type(x) is float or type(x) is np.ndarray:
        for t in (wg.hessian, wg.jacfwd, wg.jacrev):
            g = t(wg.grad(f)) if t is not wg.hessian else t(f)
            assert kinds(wg.compile(g)(x)) == kinds(g(x)), t.__name__


def test_compiled_function_returns_the_types_it_returned():
    def f(x):
        s = np.sum(np.where(x > 0.5, x ** 2, -x))  # a NumPy scalar (the passes drop the sum)
        return s, x * 2.0, np.sin(x)

    for x in (0.7, np.float64(0.7), np.array(0.7)):
        want = f(x) if type(x) is not float else (np.float64(f(x)[0]), *f(x)[1:])
        got = wg.compile(f)(x)
        assert [type(v) for v in got] == [type(v) for v in wg.trace(f, x)(x)]
        assert type(got[0]) is np.float64 and type(want[0]) is np.float64
        if type(x) is not float:  # NumPy values all along: NumPy's types
            assert [type(v) for v in got] == [type(v) for v in want]


def test_second_derivatives_keep_float32_as_jax():
    # A float64 constant makes the value float64; the gradient is cast to the input's
    # float32, and so is what forward mode pushes through it (JAX 0.10 gives float32 for
    # each of these; the eager transforms gave float64 through jvp, hessian and hvp).
    g = lambda x: np.sum(np.sin(x) * np.float64(2.0))  # noqa: E731
    linear = lambda x: np.sum(x * np.float64(2.0))  # noqa: E731
    x = np.array([0.3, 0.7, 0.9], np.float32)
    t = np.ones(3, np.float32)
    results = [wg.hessian(g)(x), wg.hessian(linear)(x), wg.jacfwd(wg.grad(g))(x),
               *wg.jvp(wg.grad(g), (x,), (t,)), wg.hvp(g, x, t), wg.linearize(wg.grad(g), x)[1](t)]
    for how in (lambda f: f, wg.compile):
        results += [how(wg.hessian(g))(x), how(lambda x: wg.hvp(g, x, t))(x)]
    assert [np.result_type(r) for r in results] == [np.float32] * len(results)
    np.testing.assert_allclose(results[0], np.diag(-2.0 * np.sin(x)), rtol=1e-6)


@pytest.mark.parametrize("f, x", [
    (lambda x: np.einsum("...->...", x), np.array([True, False])),
    (lambda x: np.einsum("i->", x), np.array([True, False])),
    (lambda x: np.einsum("ii->", x), np.arange(4).reshape(2, 2)),
    (lambda x: np.einsum("ij->j", x), np.arange(6.0, dtype=np.float32).reshape(2, 3)),
    (lambda x: x.astype(np.int64), np.float32(2.5)),
    (lambda x: x.astype(np.float32), np.array(2.5)),
    (lambda x: x.astype(np.int8), np.complex128(3 + 1j)),
], ids=["einsum bool", "einsum bool sum", "einsum int trace", "einsum float32",
        "astype of a numpy scalar", "astype of a 0-d array", "astype of a complex scalar"])
def test_compiled_numpy_calls_keep_numpys_dtype_and_type(f, x):
    cf = wg.compile(f)
    for _ in range(2):  # the call that traces, and the compiled code
        got, want = cf(x), f(x)
        assert type(got) is type(want) and got.dtype == want.dtype, (got, want)
        np.testing.assert_array_equal(got, want)
