"""Plain np.* calls on tensors route to wengert ops; wengert.numpy mirrors NumPy."""

import warnings

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.bind import primal
from wengert.interop.dispatch import tables


def test_ufuncs_route_to_wengert_ops():
    x = wg.tensor([0.5, 1.0], requires_grad=True)
    y = np.exp(np.sin(x)) + np.power(x, 2.0) - np.arctan2(x, 2.0)
    assert isinstance(y, wg.Tensor) and y.grad_fn.name == "SubtractBackward"
    y.sum().backward()
    xv = x.numpy()
    expected = np.exp(np.sin(xv)) * np.cos(xv) + 2 * xv - 2.0 / (xv**2 + 4.0)
    np.testing.assert_allclose(x.grad, expected, rtol=1e-12)


def test_wengert_numpy_on_plain_arrays_returns_plain_arrays():
    a = np.array([0.1, 0.2])
    r = wnp.tanh(a)
    assert type(r) is np.ndarray
    np.testing.assert_array_equal(r, np.tanh(a))
    assert type(wnp.sin(0.5)) is float


def test_every_routed_ufunc_exists_in_numpy():
    ufuncs, functions = tables()
    assert len(ufuncs) > 40 and len(functions) > 40
    for ufunc, fn in ufuncs.items():
        assert isinstance(ufunc, np.ufunc) and callable(fn)
    for func, fn in functions.items():
        assert callable(func) and callable(fn)


def test_ufunc_out_argument_on_tensor_is_in_place():
    t = wg.tensor(np.zeros(3))
    np.add(t, 1.0, out=t)
    np.testing.assert_array_equal(t.numpy(), np.ones(3))
    x = wg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(TypeError, match="out=ndarray"):
        np.multiply(x, 2.0, out=np.empty(3))


@pytest.mark.parametrize("call", [
    lambda x, out: np.clip(x, -1.0, 1.0, out=out),
    lambda x, out: np.clip(x, -1.0, 1.0, out),
    lambda x, out: np.round(x, 1, out=out),
    lambda x, out: np.cumsum(x, out=out),
    lambda x, out: np.cumsum(x, 0, None, out),
    lambda x, out: np.einsum("i,i->i", x, np.array([1.0, 2.0, 0.5]), out=out),
])
def test_out_argument_of_numpy_functions_with_a_rule_writes_as_a_ufuncs_does(call):
    # np.clip(w, -c, c, out=w) under no_grad (weight clipping) updates the leaf; into a
    # computed tensor the write is recorded; into a plain array it refuses where a
    # derivative would be lost, as a ufunc's out= does
    x0 = np.array([-2.0, 0.56, 3.0])
    w = wg.tensor(x0, requires_grad=True)
    with wg.no_grad():
        assert call(w, w) is w
    np.testing.assert_array_equal(w.numpy(), call(x0, x0.copy()))
    assert w.requires_grad and w.is_leaf
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        call(w, w)
    buf = np.zeros(3)
    with pytest.raises(TypeError, match=r"out=ndarray"):
        call(w, buf)
    with wg.no_grad():
        assert call(w, buf) is buf
    weights = np.array([1.0, 10.0, 100.0])

    def f(x):
        y = x * 1.0
        assert call(y, y) is y
        return np.sum(y * weights)

    def numeric(x):
        return np.array([(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(3) * 1e-6])

    np.testing.assert_allclose(wg.grad(f)(x0), numeric(x0), atol=1e-6)
    np.testing.assert_allclose(wg.jvp(f, (x0,), (np.ones(3),))[1], numeric(x0).sum(),
                               atol=1e-6)


def test_non_differentiable_functions_work_on_grad_tensors():
    x = wg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    assert np.argmax(x) == 0
    np.testing.assert_array_equal(np.argsort(x), [1, 2, 0])
    assert np.shape(x) == (3,)
    assert bool(np.all(np.isfinite(x)))
    z = np.zeros_like(x)
    assert isinstance(z, wg.Tensor) and not z.requires_grad


def test_ufunc_reduce_routes_to_sum():
    x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    np.add.reduce(x, axis=0).sum().backward()
    np.testing.assert_array_equal(x.grad, np.ones((2, 2)))


def test_mixed_ndarray_and_tensor_operands():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a = np.array([10.0, 20.0])
    for y in (a * x, x * a, a + x, a - x, a / x, np.multiply(a, x)):
        assert isinstance(y, wg.Tensor) and y.requires_grad


def test_fractional_diagonal_and_rotation_counts_read_as_numpy_reads_them():
    # np.tril/np.triu/np.rot90 accept a float k; their values are NumPy's reading of it,
    # and the gradient that of the same (linear) function: NumPy's, entry by entry
    a = np.arange(16.0).reshape(4, 4) + 1.0
    weights = np.cos(np.arange(16.0)).reshape(4, 4)
    basis = np.eye(16).reshape(16, 4, 4)
    for k in (0.7, -0.5, 1.5, -1.2, 2.0, np.int64(1)):
        for f in (np.tril, np.triu, np.rot90):
            np.testing.assert_array_equal(f(wg.tensor(a), k).numpy(), f(a, k))
            want = np.array([np.sum(f(e, k) * weights) for e in basis]).reshape(4, 4)
            g = wg.grad(lambda x, f=f, k=k: np.sum(f(x, k) * weights))(a)
            np.testing.assert_array_equal(g, want)


# -- ufuncs of two outputs with out= -------------------------------------------------------
@pytest.mark.parametrize("name", ["modf", "frexp", "divmod"])
def test_two_output_ufuncs_fill_an_out_tuple(name):
    # np.modf(tensor, out=(a, b)) writes each output into its own array (not both
    # into the first).
    x = np.array([1.5, -2.25, 0.7, 3.0])
    args = (x, 0.65) if name == "divmod" else (x,)
    fn = getattr(np, name)
    want = fn(*args)
    outs = tuple(np.empty(4, dtype=w.dtype) for w in want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fn(wg.tensor(x), *args[1:], out=outs)
    assert isinstance(got, tuple) and got[0] is outs[0] and got[1] is outs[1]
    for o, w in zip(outs, want):
        np.testing.assert_array_equal(o, w)


@pytest.mark.parametrize("name", ["modf", "divmod"])
def test_two_output_ufuncs_refuse_an_ndarray_out_tuple_under_grad(name):
    x = np.array([1.5, -2.25, 0.7, 3.0])

    def f(x):
        r = getattr(np, name)(x, *((0.65,) if name == "divmod" else ()),
                              out=(np.empty(4), np.empty(4)))
        return np.sum(r[0])

    with pytest.raises(TypeError, match="gradient would be lost"):
        wg.grad(f)(x)


@pytest.mark.parametrize("call", [
    lambda x, out: np.add(x, 1.0, where=x > 0, out=out),
    lambda x, out: np.sqrt(x, where=x > 0, out=out),
    lambda x, out: np.maximum(x, 2.0, where=x < 3, out=(out,)),
], ids=["add", "sqrt", "maximum with an out tuple"])
def test_a_ufunc_with_where_keeps_the_other_entries_of_out(call):
    # NumPy's out= keeps its entries where where= is false; the ufunc ran without out=
    # (uninitialised memory there, written into the target whole), eagerly on tensors that
    # require no grad and in compiled code.
    x = np.arange(20000, dtype=np.float32) - 5.0
    want = np.full(x.shape, 7.0, np.float32)
    call(x, want)
    t, buf = wg.tensor(x), wg.tensor(np.full(x.shape, 7.0, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (NumPy's, for where= without out=)
        _ = [np.random.default_rng(k).normal(size=x.shape) for k in range(4)]  # dirty memory
        got = call(t, buf)
        assert (got[0] if isinstance(got, tuple) else got) is buf
        np.testing.assert_array_equal(buf.numpy(), want)
        f = lambda x: call(x, np.full_like(x, 7.0))  # noqa: E731
        for run in (wg.trace(f, x), wg.compile(f), wg.compile(f)):
            got = run(x)
            np.testing.assert_array_equal(got[0] if isinstance(got, tuple) else got, want)


@pytest.mark.parametrize("call", [
    lambda x: np.add(x, 1.0, dtype=np.float64), lambda x: np.sin(x, dtype=np.float64),
    lambda x: np.multiply(x, x[::-1], dtype=np.float16),
    lambda x: np.ldexp(x, np.array([1, 2, 3]), dtype=np.float64),
    lambda x: np.matmul(x, x, dtype=np.float64),
], ids=["add", "sin", "multiply float16", "ldexp", "matmul"])
def test_a_ufunc_with_dtype_computes_in_numpys_loop_and_differentiates(call):
    # dtype= on a value that requires grad was refused ("has no wengert gradient rule")
    x = np.array([1.5, -2.5, 3.0], np.float32)
    want = call(x)
    for v in (wg.tensor(x, requires_grad=True), wg.Dual(x, np.ones_like(x))):
        got = primal(call(v))
        assert type(got) is type(want) and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-3)
    compiled = wg.compile(call)(x)
    assert compiled.dtype == want.dtype
    g = wg.grad(lambda x: np.sum(call(x)))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, wg.grad(lambda x: np.sum(call(x)))(x.astype(np.float64)),
                               rtol=1e-2)


def test_a_ufunc_with_dtype_refuses_what_numpy_refuses():
    x = wg.tensor(np.array([1.5, 2.5]), requires_grad=True)
    with pytest.raises(TypeError, match="same_kind"):
        np.multiply(x, 2, dtype=np.int64)
    with pytest.raises(TypeError, match="No loop"):
        np.sin(x, dtype=np.int64)
