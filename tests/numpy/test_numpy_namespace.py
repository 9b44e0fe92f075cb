"""``wengert.numpy`` as a drop-in for ``numpy``: every public name is there, each either
recorded (a wengert function, the one ``np.*`` dispatch reaches), written for traced
values by ``wengert.numpy``, or NumPy's own object; and no name drops a derivative."""

from __future__ import annotations

import types
import warnings

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.bind import is_traced, primal
from wengert.interop import dispatch
from wengert.numpy import creation, functional, index_tricks
from wengert.numpy.namespace import UFUNC_ATTRIBUTES, public_names

MODULES = [(np, wnp), (np.linalg, wnp.linalg), (np.fft, wnp.fft), (np.emath, wnp.emath),
           (np.random, wnp.random)]
#: wengert.numpy's own versions of NumPy functions that convert their argument
WRITTEN = {name: getattr(m, name) for m in (creation, functional, index_tricks)
           for name in m.__all__ if hasattr(np, name)}


@pytest.mark.parametrize("module,mine", MODULES, ids=lambda m: getattr(m, "__name__", ""))
def test_every_public_numpy_name_is_there(module, mine):
    """A NumPy release that adds a name fails here, listing it."""
    missing = [n for n in public_names(module) if not hasattr(mine, n)]
    assert not missing, f"{mine.__name__} lacks {len(missing)} of {module.__name__}'s " \
                        f"names: {missing}"
    not_exported = [n for n in public_names(module) if n not in mine.__all__]
    assert not not_exported, f"{mine.__name__}.__all__ lacks {not_exported}"


def test_star_import_gives_the_whole_namespace():
    space: dict = {}
    exec("from wengert.numpy import *", space)  # noqa: S102
    assert set(public_names(np)) <= set(space)
    assert space["linalg"] is wnp.linalg and space["random"] is wnp.random


def _kind(module, mine, name):
    """'recorded', 'written' or 'passed' (and why), for one public name."""
    ufuncs, functions = dispatch.tables()
    obj, got = getattr(module, name), getattr(mine, name)
    try:
        routed = functions.get(obj) or ufuncs.get(obj)
    except TypeError:
        routed = None
    if routed is not None:
        # (NumPy's aliases: np.transpose is np.permute_dims)
        aliases = [getattr(mine, n) for n in public_names(module) if getattr(module, n) is obj]
        return "recorded" if any(routed is a for a in aliases) else \
            f"{name}: np dispatch and wnp differ"
    if WRITTEN.get(name) is got:
        return "written"
    if got is obj or getattr(got, "__wrapped__", None) is obj:
        return "passed"
    if isinstance(obj, types.ModuleType) and got.__name__.startswith("wengert.numpy."):
        return "written"
    if name in getattr(mine, "__all__", ()) and callable(got) and \
            getattr(got, "__module__", "").startswith("wengert"):
        return "recorded"
    return f"{name}: neither recorded nor NumPy's"


@pytest.mark.parametrize("module,mine", MODULES, ids=lambda m: getattr(m, "__name__", ""))
def test_each_name_is_recorded_written_or_numpys_own(module, mine):
    kinds = {n: _kind(module, mine, n) for n in public_names(module)}
    odd = [k for k in kinds.values() if k not in ("recorded", "written", "passed")]
    assert not odd, odd


def test_the_split_on_examples():
    x = wg.tensor([0.5, 2.0, 1.0], requires_grad=True)
    # recorded: the same function np.* dispatch reaches; aliases are the same op
    assert wnp.sin is dispatch.tables()[0][np.sin]
    assert wnp.acos is wnp.arccos and wnp.pow is wnp.power and wnp.atan2 is wnp.arctan2
    assert wnp.linalg.det is dispatch.tables()[1][np.linalg.det]
    assert wnp.emath.sqrt is dispatch.tables()[1][np.emath.sqrt]
    # passed through: NumPy's own objects
    for name in ("float64", "ndarray", "dtype", "finfo", "errstate", "pi", "newaxis",
                 "zeros", "arange", "random", "ma", "lib", "equal", "logical_and"):
        assert getattr(wnp, name) is getattr(np, name) or name == "random", name
    assert wnp.random.normal is np.random.normal and wnp.random.default_rng is \
        np.random.default_rng
    assert wnp.linalg.LinAlgError is np.linalg.LinAlgError
    assert wnp.fft.fftfreq is np.fft.fftfreq
    # a function without derivative answers on the values, lists of tensors too
    assert wnp.argmax.__wrapped__ is np.argmax
    assert wnp.argmax(x) == 1 and wnp.argmax([x[0], x[1] * 0.0]) == 0
    assert wnp.shape(x) == (3,) and wnp.isclose(x, x).all()
    assert not isinstance(x, wnp.ndarray)  # NumPy's class, as for an autograd box


def test_elementwise_functions_carry_their_ufuncs_methods():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for name in ("add", "multiply", "maximum", "sin", "arctan2"):
        for attribute in UFUNC_ATTRIBUTES:
            assert getattr(getattr(wnp, name), attribute) == getattr(getattr(np, name),
                                                                     attribute)
    y = wnp.add.reduce(x) + wnp.multiply.reduce(x)
    y.backward()
    np.testing.assert_allclose(x.grad, [7.0, 4.0, 3.0])
    np.testing.assert_array_equal(wnp.multiply.outer(np.arange(2), np.arange(3)),
                                  np.multiply.outer(np.arange(2), np.arange(3)))
    assert wnp.add.nin == 2 and wnp.sin.nout == 1


def test_plain_values_stay_plain_numpy():
    a = np.arange(6.0).reshape(2, 3)
    for name, call in {
        "array": lambda m: m.array([[1, 2], [3, 4]], dtype=np.float32, ndmin=3),
        "asarray": lambda m: m.asarray([1.0, 2.0]),
        "ascontiguousarray": lambda m: m.ascontiguousarray(np.float64(3.0)),
        "asfortranarray": lambda m: m.asfortranarray(a),
        "full": lambda m: m.full((2, 2), 3, dtype=np.int8),
        "full_like": lambda m: m.full_like(a, 7.5, dtype=int),
        "require": lambda m: m.require(a, requirements="F"),
        "apply_along_axis": lambda m: m.apply_along_axis(lambda r: r[::-1] * 2, 1, a),
        "apply_over_axes": lambda m: m.apply_over_axes(np.sum, a, [0, 1]),
        "vectorize": lambda m: m.vectorize(lambda u: u * 2 if u > 2 else 0)(a),
        "ix_": lambda m: m.ix_([True, False, True], [1, 2])[0],
        "acos": lambda m: m.acos(np.array([0.5])),
        "isscalar": lambda m: m.isscalar(3.0),
    }.items():
        got, want = call(wnp), call(np)
        assert type(got) is type(want), name
        np.testing.assert_array_equal(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype, name


# -- wnp.array and friends on traced values -----------------------------------------------
X0 = np.array([1.5, -0.5])


def _matrix(x):
    return wnp.array([[x[0], 1.0], [2.0, x[1]]])


def test_array_of_nested_lists_in_every_mode():
    want = np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]])
    np.testing.assert_array_equal(wg.jacfwd(_matrix)(X0), want)
    np.testing.assert_array_equal(wg.jacrev(_matrix)(X0), want)
    _, tangent = wg.jvp(_matrix, (X0,), (np.array([1.0, 2.0]),))
    np.testing.assert_array_equal(tangent, [[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_array_equal(wg.derivative(lambda s: wnp.array([[s, 1.0], [2.0, s * s]]))
                                  (3.0), [[1.0, 0.0], [0.0, 6.0]])
    np.testing.assert_array_equal(wg.compile(_matrix)(X0), [[1.5, 1.0], [2.0, -0.5]])
    deep = lambda x: wnp.sum(wnp.array([[[x[0], 1.0]], [(2.0, x[1] * x[0])]]) ** 2)  # noqa: E731
    assert wg.check_grads(deep, (X0,), order=2, modes=("rev", "fwd"))
    assert wg.check_grads(lambda x: wnp.sum(wg.compile(_matrix)(x) ** 3), (X0,), order=1)


def test_array_of_values_of_different_transforms():
    """Nested derivatives: items of an outer and an inner transform in one list."""
    def inner(a):
        return wg.grad(lambda b: wnp.sum(wnp.array([[a * b, b], [a, 1.0]]) ** 2))(3.0)

    want = wg.grad(lambda a: wg.grad(lambda b: (a * b) ** 2 + b ** 2 + a ** 2)(3.0))(2.0)
    assert wg.grad(inner)(2.0) == want == 24.0
    assert float(wg.derivative(inner)(2.0)) == want
    assert wg.grad(lambda a: wg.derivative(
        lambda b: wnp.sum(wnp.array([[a * b, b], [a, 1.0]]) ** 2))(3.0))(2.0) == want


def test_array_arguments():
    s = wg.tensor(1.5, requires_grad=True)
    assert wnp.array([[s, 1]], dtype=np.float32).dtype == np.float32
    assert wnp.array([[s, 1.0]], dtype=int).numpy().tolist() == [[1, 1]]
    assert wnp.array([s], ndmin=3).shape == (1, 1, 1)
    assert wnp.array(s, copy=False) is s and wnp.array(s, copy=None) is s
    assert wnp.array(s) is not s
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        wnp.array([s, 1.0], copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        wnp.array(s, dtype=np.float32, copy=False)
    # NumPy's promotion: a Python float in a list is float64, as in np.array
    x32 = wg.tensor(np.float32(1.0), requires_grad=True)
    assert wnp.array([x32, 1.0]).dtype == np.array([np.float32(1.0), 1.0]).dtype
    assert wnp.array([s, 1j]).dtype == np.complex128
    with pytest.raises(ValueError):
        wnp.array([[s, 1.0], [2.0]])


def test_asarray_family_on_traced_values():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    for f in (wnp.asarray, wnp.asanyarray, wnp.asarray_chkfinite, wnp.require):
        assert f(x) is x, f.__name__
    assert wnp.ascontiguousarray(x[0]).shape == (1,) == wnp.asfortranarray(x[0]).shape
    assert wnp.require(x, requirements=["O"]) is not x
    y = wnp.asarray([x[1], 3.0]) * wnp.asanyarray((x[0], x[0]))
    np.sum(y).backward()
    np.testing.assert_array_equal(x.grad, [5.0, 1.0])
    with pytest.raises(ValueError, match="infs or NaNs"):
        wnp.asarray_chkfinite([x[0], np.nan])
    assert wg.grad(lambda v: np.sum(wnp.asarray(v, dtype=np.float32)))(np.ones(2)).dtype \
        == np.float64
    with pytest.raises(ValueError, match="Cannot specify both"):
        wnp.require(x, requirements="CF")
    # NumPy's own cannot be intercepted (it converts the list itself): they raise
    for f in (np.asarray, np.asanyarray, np.ascontiguousarray, np.array):
        with pytest.raises(TypeError, match="np.stack"):
            f([x, x])


def test_full_and_full_like():
    assert wg.grad(lambda s: wnp.sum(wnp.full((2, 3), s)))(1.5) == 6.0
    assert wg.grad(lambda s: wnp.sum(wnp.full_like(np.zeros(3), s) * [1.0, 2.0, 3.0]))(
        2.0) == 6.0
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    for f in (wnp.full_like, np.full_like):  # np.full_like on a tensor comes here
        c = f(x, 7.6, dtype=int)
        assert c.dtype == np.int64 and c.numpy().tolist() == [7, 7] and not c.requires_grad
        assert f(x, 1, dtype=bool).numpy().tolist() == [True, True]
    g = wg.grad(lambda v: np.sum(np.full_like(v, v[0]) * [1.0, 2.0, 3.0]))(np.ones(3))
    np.testing.assert_array_equal(g, [6.0, 0.0, 0.0])
    z = wnp.full(3, x[0])
    z[1] = 0.0  # a new array, not a read-only broadcast view
    assert z.numpy().tolist() == [1.0, 0.0, 1.0]
    np.testing.assert_array_equal(wg.jvp(lambda s: wnp.full((2,), s), (1.0,), (2.0,))[1],
                                  [2.0, 2.0])


def test_full_like_of_a_traced_array_with_an_array_fill_broadcasts_as_numpy():
    c = np.array([5.0, 6.0, 7.0])
    x0 = np.arange(6.0).reshape(2, 3)
    for f in (wnp.full_like, np.full_like):
        got = f(wg.tensor(x0, requires_grad=True), c)
        np.testing.assert_array_equal(got.numpy(), np.full_like(x0, c))
        assert not got.requires_grad
        np.testing.assert_array_equal(f(wg.tensor(x0), c, dtype=int).numpy(),
                                      np.full_like(x0, c, dtype=int))
        assert wg.grad(lambda x, f=f: np.sum(f(x, c) * x))(x0).tolist() == [[5.0, 6.0, 7.0]] * 2
        with pytest.raises(ValueError, match="could not broadcast"):
            f(wg.tensor(x0), np.ones(2))


# -- functions that call a Python function ------------------------------------------------
M = np.arange(6.0).reshape(2, 3) + 0.5
A3 = np.arange(24.0).reshape(2, 3, 4) / 10


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("func1d", [np.sum, lambda r: np.outer(r, r[:2]), lambda r: r[::-1]],
                         ids=["scalar", "matrix", "vector"])
def test_apply_along_axis(axis, func1d):
    want = np.apply_along_axis(func1d, axis, A3)
    got = wnp.apply_along_axis(func1d, axis, wg.tensor(A3))
    np.testing.assert_allclose(got.numpy(), want)
    f = lambda a: np.apply_along_axis(lambda r: func1d(r) ** 2, axis, a)  # noqa: E731
    assert wg.check_grads(f, (A3,), order=1, modes=("rev", "fwd"))


def test_apply_along_axis_closing_over_a_tensor_and_apply_over_axes():
    assert wg.grad(lambda a: np.sum(wnp.apply_along_axis(lambda r: r * a, 1, M)))(2.0) == \
        M.sum()
    f = lambda m: np.sum(np.apply_over_axes(np.sum, m ** 2, [0, 1]))  # noqa: E731
    np.testing.assert_allclose(wg.grad(f)(M), 2 * M)
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        wnp.apply_along_axis(np.sum, 0, wg.tensor(np.zeros((2, 0))))


def test_vectorize():
    step = wnp.vectorize(lambda a: a * a if a > 2 else -a)
    np.testing.assert_array_equal(wg.grad(lambda m: np.sum(step(m)))(M),
                                  np.where(M > 2, 2 * M, -1.0))
    np.testing.assert_array_equal(wg.jacfwd(step)(np.array([1.0, 3.0])), [[-1, 0], [0, 6]])
    assert float(wg.derivative(step)(3.0)) == 6.0
    assert wg.grad(lambda a: np.sum(wnp.vectorize(lambda b: a * b)(M)))(2.0) == M.sum()
    rows = wnp.vectorize(lambda r: r @ r, signature="(n)->()")
    np.testing.assert_array_equal(wg.grad(lambda m: np.sum(rows(m)))(M), 2 * M)
    outer = wnp.vectorize(lambda r: np.outer(r, r), signature="(n)->(n,n)")
    assert outer(wg.tensor(M)).shape == (2, 3, 3)
    two = wnp.vectorize(lambda a, p: (a ** p, -a), excluded={1})(wg.tensor(M), 2)
    assert isinstance(two, tuple) and two[0].shape == M.shape
    assert wnp.vectorize(lambda a: a * 2, otypes=[np.float32])(wg.tensor(M)).dtype == \
        np.float32
    assert isinstance(step, np.vectorize)
    with pytest.raises(ValueError, match="wrong number of outputs"):
        wnp.vectorize(lambda r: (r, r), signature="(n)->()")(wg.tensor(M))
    # np.frompyfunc makes a NumPy ufunc wengert cannot see into: it refuses
    with pytest.raises(TypeError, match="no wengert gradient rule"):
        wnp.frompyfunc(lambda a: a * 2, 1, 1)(wg.tensor(M, requires_grad=True))


def test_ix():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a, b = np.ix_(x, x)  # routed: the values keep their derivative
    np.sum(a * b).backward()
    np.testing.assert_array_equal(x.grad, [6.0, 6.0])
    for args in ([1, 2], [0, 3]), ([True, False, True],), ([], [1]):
        for got, want in zip(wnp.ix_(*args), np.ix_(*args)):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
    mask, = wnp.ix_(x > 1.5)
    np.testing.assert_array_equal(mask, [1])


def test_isscalar_reads_the_value_beneath():
    assert wnp.isscalar(wg.tensor(1.0)) and not wnp.isscalar(wg.tensor(np.array(1.0)))
    assert wg.derivative(lambda s: s * float(wnp.isscalar(s)))(2.0) == 1.0


# -- no name drops a derivative -----------------------------------------------------------
SKIP = {"info", "test", "show_config", "show_runtime", "get_include", "save", "savez",
        "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile",
        "fromregex", "memmap", "printoptions", "set_printoptions", "setbufsize", "seterr",
        "seterrcall", "frombuffer", "from_dlpack", "seed", "set_state", "set_bit_generator"}
#: plain float results without a derivative by nature (slogdet's sign; empty residuals)
NATURAL = {"slogdet", "lstsq"}


def _leaves(r):
    todo, out = [r], []
    while todo:
        a = todo.pop()
        if isinstance(a, (list, tuple)):
            todo.extend(a)
        elif isinstance(a, dict):
            todo.extend(a.values())
        else:
            out.append(a)
    return out


def _drops(a):
    """A plain floating result, where a traced value was given."""
    if is_traced(a):
        return False
    return (isinstance(a, (float, complex, np.floating, np.complexfloating))
            or isinstance(a, np.ndarray) and a.dtype.kind in "fc" and a.size > 0)


def _calls():
    for module in (wnp, wnp.linalg, wnp.fft, wnp.emath, wnp.random):
        for name in public_names(module):
            fn = getattr(module, name)
            if name in SKIP or name in NATURAL or not callable(fn) or isinstance(
                    fn, types.ModuleType) or isinstance(fn, type) and not issubclass(
                    fn, np.generic):
                continue
            yield f"{module.__name__}.{name}", fn


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("nargs", [1, 2])
def test_no_function_drops_a_derivative(mode, nargs):
    """Every callable name of wengert.numpy, called on values that carry a derivative
    (inside a transform), returns traced values, results without a derivative by nature
    (integers, booleans, shapes, strings), or raises: never a plain float."""
    m = np.array([[0.5, 1.5, 2.0], [0.3, -0.7, 1.1], [0.9, 0.2, -0.4]])
    dropped = []
    state = np.random.get_state()
    for name, fn in _calls():
        for base in (m, m[0]):
            seen = {}

            def f(x, fn=fn, seen=seen):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        seen["result"] = fn(*([x] * nargs))
                except Exception as e:  # noqa: BLE001 - refusals and wrong arguments
                    seen["error"] = str(e)
                return wnp.sum(x)

            if mode == "rev":
                wg.grad(f)(base)
            else:
                wg.jvp(f, (base,), (np.ones_like(base),))
            if "result" in seen:
                if any(_drops(a) for a in _leaves(seen["result"])):
                    dropped.append(name)
                break
    np.random.set_state(state)
    assert not dropped, dropped


def test_histogram_bin_edges_follow_the_samples_range():
    """Evenly spaced from the smallest to the largest value: the first and last edges
    get the gradient (np.histogram's counts of such a sample are refused instead)."""
    x = wg.tensor([0.5, 1.5, 2.0], requires_grad=True)
    np.sum(np.histogram_bin_edges(x, bins=2)).backward()
    np.testing.assert_allclose(x.grad, [1.5, 0.0, 1.5])
    np.testing.assert_array_equal(np.histogram_bin_edges(wg.tensor([0.5, 1.5, 2.0]), bins=2),
                                  [0.5, 1.25, 2.0])
    with pytest.raises(TypeError, match="histogram"):
        np.histogram(x, bins=2)


def test_out_of_a_function_without_rule_is_written_by_its_kind():
    """np.isneginf(x, out=x) wrote 0/1 into a tensor's values behind its back."""
    x = wg.tensor([0.5, -np.inf, 2.0], requires_grad=True)
    for call in (lambda: np.isneginf(x, out=x), lambda: np.isneginf(x, x)):
        with pytest.raises(RuntimeError, match="in-place"):
            call()
    np.testing.assert_array_equal(x.detach().numpy(), [0.5, -np.inf, 2.0])
    out = wg.tensor(np.zeros(3, bool))
    assert np.isposinf(wg.tensor([np.inf, 1.0, 2.0]), out) is out
    assert out.numpy().tolist() == [True, False, False] and out._version.version == 1
    index = wg.tensor(np.zeros(1, np.intp))
    np.argmax(wg.tensor([[0.5, 3.0, 2.0]], requires_grad=True), axis=1, out=index)
    assert index.numpy().tolist() == [1]
    plain = np.zeros(3, bool)
    assert np.isneginf(x, out=plain) is plain and plain.tolist() == [False, True, False]


def test_random_is_numpys():
    import wengert.numpy.random as npr

    npr.seed(3)
    a = npr.randn(2)
    np.random.seed(3)
    np.testing.assert_array_equal(a, np.random.randn(2))
    with pytest.raises(TypeError, match="requires grad"):
        npr.normal(wg.tensor([1.0], requires_grad=True))


def test_fft_linalg_and_emath_take_lists_of_tensors():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = wnp.fft.fft([x[0], x[1], 0.0]).real.sum() + wnp.linalg.norm([x[0], 3.0]) \
        + wnp.emath.sqrt([x[1], 4.0]).real.sum()
    y.backward()
    np.testing.assert_allclose(x.grad, [3.0 + 1.0 / np.sqrt(10.0), 0.5 / np.sqrt(2.0)])


@pytest.mark.parametrize("a", [np.array(1.5, np.float16), np.array(3), np.array([1.0, 2.0])],
                         ids=["0-d float16", "0-d int", "1-d"])
@pytest.mark.parametrize("kind", ["tensor", "dual"])
def test_full_like_of_a_traced_0d_array_is_a_0d_array(a, kind):
    # np.full_like of a 0-d array is a 0-d array; of a tensor or dual number it held a
    # NumPy scalar (the fill was added to zeros, and NumPy's 0-d sums are scalars).
    x = wg.tensor(a) if kind == "tensor" or a.dtype.kind != "f" else wg.Dual(a, np.ones_like(a))
    for fill in (2, 2.7):
        want = np.full_like(a, fill)
        got = primal(np.full_like(x, fill))
        assert type(got) is type(want) and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
