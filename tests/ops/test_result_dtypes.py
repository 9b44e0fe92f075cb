"""Result dtypes and types of wengert's functions against NumPy 2's (the oracle), for every
kind of value: plain arrays through ``wengert.numpy``, tensors, dual numbers, traced and
compiled graphs."""

from __future__ import annotations

import warnings

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.bind import primal
from wengert.core.tree import flatten


def kinds(result):
    return [(type(v).__name__, np.result_type(v).name, np.shape(v))
            for v in flatten(result)[0]]


def results(f, *args):
    """``f`` of ``args`` in every mode: plain through wengert.numpy, tensors (that require
    grad where they are floating point), dual numbers, a trace and a compiled function."""
    floats = [np.result_type(a).kind in "fc" for a in args]
    tensors = [wg.tensor(a, requires_grad=fl) for a, fl in zip(args, floats)]
    duals = [wg.Dual(a, np.ones_like(a)) if fl else a for a, fl in zip(args, floats)]
    out = {"wnp": f(wnp, *args), "tensor": f(np, *tensors)}
    if any(floats):
        out["dual"] = f(np, *duals)
    out["trace"] = wg.trace(lambda *a: f(np, *a), *args)(*args)
    out["compile"] = wg.compile(lambda *a: f(np, *a))(*args)
    return {k: [primal(v) for v in flatten(r)[0]] for k, r in out.items()}


def assert_like_numpy(f, *args):
    want = f(np, *args)
    for mode, got in results(f, *args).items():
        assert kinds(got) == kinds(want), mode
        for g, w in zip(got, flatten(want)[0]):
            np.testing.assert_array_equal(g, w, err_msg=mode)


A8 = np.array([1, 2, 3], np.int8)
F16 = np.array([[1.5, 2.0, 0.5], [0.25, 1.0, 3.0]], np.float16)
F32 = np.array([1.0, 2.0, 4.0], np.float32)


@pytest.mark.parametrize("a, w, kw", [
    (A8, F32, {}),
    (A8, F32, {"returned": True}),
    (np.array([True, False, True]), F32, {}),
    (F32, None, {"returned": True}),
    (F16, None, {"axis": 1, "returned": True}),
    (F16, F16[0], {"axis": 1, "returned": True, "keepdims": True}),
    (F32, np.array([1, 2, 3]), {"returned": True}),
], ids=["int8 with float32 weights", "returned", "bool with float32 weights",
        "float32 returned", "float16 along an axis", "keepdims", "integer weights"])
def test_average_takes_numpys_dtypes(a, w, kw):
    # Integer values with float32 weights average in float64 in NumPy (it gave float32),
    # and the sum of weights returned without weights has the average's dtype (it was
    # float64, and a 0-d array where NumPy gives a scalar).
    assert_like_numpy(lambda m, a: m.average(a, weights=w, **kw), a)


@pytest.mark.parametrize("kw", [{}, {"n": 2}, {"prepend": True}, {"axis": 0}])
def test_diff_of_booleans_tells_where_neighbours_differ(kw):
    # NumPy's diff of a boolean array is not_equal (booleans do not subtract); it raised
    # NumPy's TypeError for boolean subtract.
    b = np.array([[True, False, False, True], [True, True, False, False]])
    assert_like_numpy(lambda m, b: m.diff(b, **kw), b)


@pytest.mark.parametrize("start, stop", [
    (0.0, np.array(1.0, np.float32)), (np.float32(0.0), 2.0), (1j, np.float32(2.0)),
    (0.0, np.array([1.0, 2.0], np.float16)), (0, 1), (np.array([0.0, 1.0]), 3),
], ids=["float and float32", "float32 and float", "complex and float32", "float16 array",
        "ints", "float64 array and int"])
@pytest.mark.parametrize("kw", [{}, {"retstep": True}, {"num": 1, "retstep": True},
                                {"endpoint": False, "num": 7}, {"dtype": np.float16}],
                         ids=["default", "retstep", "one", "no endpoint", "dtype"])
def test_linspace_computes_in_numpys_dtype(start, stop, kw):
    # NumPy computes in result_type(start, stop, float(num)) with Python numbers weak:
    # linspace(0.0, float32) is float32 (it was float64, and its step too), and the step
    # of a single value is a Python NaN.
    assert_like_numpy(lambda m, stop: m.linspace(start, stop, **kw), stop)


@pytest.mark.parametrize("x", [np.float16(1.5), np.complex64(1j), np.array(2.5)],
                         ids=["float16 scalar", "complex64 scalar", "0-d array"])
@pytest.mark.parametrize("dtype", [np.float32, bool, np.float16])
def test_np_astype_of_a_numpy_scalar_is_a_numpy_scalar(x, dtype):
    # wengert.numpy.astype made a NumPy scalar a 0-d array first
    want, got = np.astype(x, dtype), wnp.astype(x, dtype)
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize("spec, args", [
    ("...->", (np.arange(3.0),)),
    ("...,...->...", (np.array([True, False]), np.array([0.75, -3.0], np.float32))),
    ("ij,jk->ik", (np.ones((2, 3), np.float16), np.ones((3, 2), np.float32))),
], ids=["an output without the ellipsis", "bool times float32", "float16 and float32"])
def test_einsum_of_plain_arrays_is_numpys(spec, args):
    # wengert.numpy.einsum of plain arrays ran NumPy's einsum with optimize="greedy",
    # another code path than NumPy's default: it accepted "...->" of a 1-d array, which
    # NumPy refuses, and gave -0.0 where NumPy gives 0.0 (False * -3.0)
    try:
        want = np.einsum(spec, *args)
    except ValueError as e:
        with pytest.raises(ValueError, match="more dimensions than subscripts"):
            wnp.einsum(spec, *args)
        assert "ellipsis" in str(e)
        return
    got = wnp.einsum(spec, *args)
    assert type(got) is type(want) and got.dtype == want.dtype
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ary, kw", [
    (np.array([1.5, 2.0, 4.0], np.float32), {"to_begin": np.array([1.0])}),
    (np.array([1, 5, 2]), {"to_end": [7, 8], "to_begin": 0}),
    (np.array([1.5, 2.0], np.float16), {"to_end": np.float64(2.0)}),
], ids=["float32 with a float64 to_begin", "ints", "float16 with a float64 to_end"])
def test_ediff1d_keeps_the_arrays_dtype(ary, kw):
    # NumPy's ediff1d writes into an array of ary's dtype (to_begin and to_end cast to it);
    # the concatenation promoted them (a float32 array became float64)
    assert_like_numpy(lambda m, a: m.ediff1d(a, **kw), ary)


@pytest.mark.parametrize("ary, kw", [(np.array([True, False]), {}),
                                     (np.array([1, 2]), {"to_begin": 0.5})],
                         ids=["booleans", "a float to_begin for ints"])
def test_ediff1d_refuses_what_numpy_refuses(ary, kw):
    for f in (np.ediff1d, wnp.ediff1d, lambda a, **kw: np.ediff1d(wg.tensor(a), **kw)):
        with pytest.raises(TypeError):
            f(ary, **kw)


X32 = np.array([1.5, -2.0, 0.5], np.float32)


@pytest.mark.parametrize("default", [1.0, np.float64(1.0), 0, X32.astype(np.float16)],
                         ids=["a Python float", "a float64 scalar", "an int", "float16"])
def test_select_takes_numpys_dtype(default):
    # NumPy's select: result_type of the choices and the default, Python numbers weak
    # (a float32 choice with the default 1.0 stays float32; it became float64)
    assert_like_numpy(lambda m, x: m.select([x > 0, x < -1], [x, x * 2], default), X32)


def test_select_refuses_conditions_that_are_not_boolean():
    with pytest.raises(TypeError, match="should be boolean"):
        np.select([np.array([1, 0, 1])], [X32])
    with pytest.raises(TypeError, match="should be boolean"):
        np.select([np.array([1, 0, 1])], [wg.tensor(X32, requires_grad=True)])


F32 = np.array([0.5, -2.0, 7.0], np.float32)


@pytest.mark.parametrize("name, call", [
    ("vander float32", lambda m, x: m.vander(x)),
    ("vander increasing", lambda m, x: m.vander(x, 4, increasing=True)),
    ("vander complex64", lambda m, x: m.vander(x.astype(np.complex64) * (1 + 1j))),
    ("vander float16", lambda m, x: m.vander(x.astype(np.float16), 3)),
    ("interp float32", lambda m, x: m.interp(x, [0.0, 1.0, 4.0], [1.0, 3.0, -1.0])),
    ("interp float32 samples", lambda m, x: m.interp(0.7, m.sort(x), x)),
    ("interp complex64 values", lambda m, x: m.interp(x, [0.0, 1.0], x[:2] * 1j)),
    ("unwrap float32", lambda m, x: m.unwrap(x)),
    ("unwrap float16", lambda m, x: m.unwrap(x.astype(np.float16), period=4.0)),
    ("bincount float32 weights", lambda m, x: m.bincount([0, 1, 1], weights=x)),
    ("emath float16", lambda m, x: m.emath.sqrt(x.astype(np.float16))),
    ("emath float32", lambda m, x: m.emath.log(x)),
    ("polyfit float32", lambda m, x: m.polyfit(x, x * 2.0 + 1.0, 1)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_numpy_functions_take_numpys_result_dtype(name, call):
    # vander is in promote_types(dtype, int) (float32 -> float64, powers by repeated
    # multiplication); interp and bincount's weights are float64 whatever the inputs;
    # unwrap keeps float32 (a Python period is weak; it became float64); emath makes float16
    # complex128 as NumPy's _tocomplex does (it gave complex64); polyfit follows vander
    if "emath" in name or "polyfit" in name:  # (they decide on the values: no graph)
        want = call(np, F32)
        for x in (wg.tensor(F32, requires_grad=True), wg.Dual(F32, np.ones_like(F32))):
            got = primal(call(np, x))
            assert kinds([got]) == kinds([want])
            np.testing.assert_allclose(got, want, rtol=1e-4)
        return
    assert_like_numpy(call, F32)


@pytest.mark.parametrize("f", [lambda x: np.sum(np.vander(x, 3)),
                               lambda x: np.sum(np.interp(x, [0.0, 1.0], [1.0, 3.0]) ** 2),
                               lambda x: np.sum(np.bincount([0, 1, 1], weights=x) ** 2),
                               lambda x: np.sum(np.unwrap(x) ** 2)],
                         ids=["vander", "interp", "bincount", "unwrap"])
def test_gradients_through_float64_computations_keep_the_input_dtype(f):
    g = wg.grad(f)(F32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, wg.grad(f)(F32.astype(np.float64)), rtol=1e-5)


def test_bincount_refuses_complex_weights_as_numpy():
    with pytest.raises(TypeError, match="'safe'"):
        np.bincount([0, 1], weights=wg.tensor(np.array([1j, 2.0]), requires_grad=True))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("x", [np.array(1.5, np.float32), np.float16(2.0)], ids=["0-d", "scalar"])
def test_pad_of_a_0d_array_is_a_copy_as_numpy(x, mode):
    # np.pad of a 0-d array has nothing to pad and returns a 0-d copy; wengert asked NumPy
    # to pad with an empty (float) pad_width, which NumPy refused
    assert_like_numpy(lambda m, x: m.pad(x, 1, mode=mode), x)
    assert wg.grad(lambda a: np.pad(a, 2) * 3.0)(np.array(1.5, np.float32)) == 3.0


@pytest.mark.parametrize("a", [np.zeros(0), np.zeros(0, np.float32), np.zeros((0, 2), np.float16)],
                         ids=["float64", "float32", "2-d float16"])
def test_median_of_an_empty_array_is_numpys_nan_scalar(a):
    # np.median of an empty array is a NumPy scalar NaN (with NumPy's warning); it was a
    # 0-d array
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_like_numpy(lambda m, a: m.median(a), a)


@pytest.mark.parametrize("name", ["nanmean", "nanvar", "nanstd", "nanprod", "nancumsum",
                                  "nancumprod"])
@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_nan_reductions_take_dtype(name, dtype):
    # their dtype= was accepted and ignored (float32 results for dtype=np.float64)
    x = np.array([[1.5, np.nan], [3.25, 0.5]], np.float32)
    want = getattr(np, name)(x, dtype=dtype)
    for got in (getattr(wnp, name)(x, dtype=dtype),
                primal(getattr(np, name)(wg.tensor(x, requires_grad=True), dtype=dtype)),
                wg.compile(lambda a: getattr(np, name)(a, dtype=dtype))(x)):
        assert kinds([got]) == kinds([want])
        np.testing.assert_allclose(got, want, rtol=1e-3)
    g = wg.grad(lambda a: np.sum(getattr(np, name)(a, dtype=dtype)))(np.nan_to_num(x))
    assert g.dtype == np.float32


@pytest.mark.parametrize("p", [None, -2, "fro", 1, np.inf, "nuc"])
def test_cond_of_one_matrix_is_a_numpy_scalar(p):
    # np.linalg.cond of one matrix is a NumPy scalar; of a tensor it held a 0-d array
    m = np.array([[1.5, -2.5], [3.25, 0.5]], np.float32)
    for a in (m, np.stack([m, 2 * m])):
        want = np.linalg.cond(a, p)
        for mode, got in results(lambda mod, x: mod.linalg.cond(x, p), a).items():
            assert kinds(got) == kinds(want), mode
            np.testing.assert_allclose(got[0], want, rtol=1e-6)  # (nuc: the last bit)


@pytest.mark.parametrize("spec, kw", [
    ("ij->", {"dtype": np.float64}), ("ij,jk->ik", {"dtype": np.float64}),
    ("ij,j", {"dtype": np.float16, "casting": "same_kind"}),
], ids=["sum in float64", "product in float64", "float16 same_kind"])
def test_einsum_takes_dtype(spec, kw):
    # einsum's dtype= on a traced operand was refused ("does not support the arguments")
    x = np.array([[1.5, -2.5], [3.25, 0.5]], np.float32)
    args = (x,) if spec == "ij->" else (x, x) if spec.startswith("ij,jk") else (x, x[0])
    assert_like_numpy(lambda m, a: m.einsum(spec, a, *args[1:], **kw), x)
    assert wg.grad(lambda a: np.sum(np.einsum(spec, a, *args[1:], **kw)))(x).dtype == np.float32


def test_einsum_refuses_a_dtype_the_operands_cannot_reach_safely():
    x = wg.tensor(np.ones((2, 2)), requires_grad=True)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        np.einsum("ij->", x, dtype=np.float32)
