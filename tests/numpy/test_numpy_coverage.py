"""The NumPy functions wengert covers work on tensors, with correct gradients.

Each case calls the *NumPy* function (routed through ``__array_ufunc__`` /
``__array_function__``) and checks it with ``wg.gradcheck`` against central
finite differences, over axis/keepdims variants and broadcasting.
"""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import numpy as np
import wengert as wg

rng = np.random.default_rng(7)
A = rng.uniform(0.3, 0.9, (3, 4))  # inside every unary domain (log, arcsin, ...)
V = rng.uniform(0.3, 0.9, 4)
M = rng.normal(size=(3, 3)) + 3 * np.eye(3)
SPD = M @ M.T + np.eye(3)
OFFGRID = rng.integers(-3, 3, (3, 4)) + rng.uniform(0.2, 0.8, (3, 4))

UNARY = [
    np.negative, np.positive, np.abs, np.sign, np.exp, np.exp2, np.expm1, np.log, np.log2,
    np.log10, np.log1p, np.sqrt, np.cbrt, np.square, np.reciprocal, np.sin, np.cos, np.tan,
    np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arctanh,
    np.deg2rad, np.rad2deg, np.sinc,
]


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
def test_unary(fn):
    assert wg.gradcheck(lambda x: fn(x), (A,))


def test_arccosh_and_rounding():
    assert wg.gradcheck(np.arccosh, (A + 1.5,))
    for fn in (np.floor, np.ceil, np.round):
        assert wg.gradcheck(fn, (OFFGRID,))
        np.testing.assert_array_equal(wg.grad(lambda x, fn=fn: np.sum(fn(x)))(OFFGRID), 0.0)


BINARY = [
    np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum, np.minimum, np.fmax,
    np.fmin, np.arctan2, np.hypot, np.logaddexp, np.logaddexp2, np.mod,
]


@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4))])
def test_binary_with_broadcasting(fn, shapes):
    x = rng.uniform(0.5, 2.0, shapes[0])
    y = rng.uniform(0.5, 2.0, shapes[1]) + 0.013  # no ties, no mod jumps
    assert wg.gradcheck(lambda a, b: fn(a, b), (x, y))


def test_clip_and_where():
    assert wg.gradcheck(lambda x: np.clip(x, -1.0, 1.0), (rng.normal(size=(3, 4)) * 2 + 0.05,))
    cond = A > 0.6
    assert wg.gradcheck(lambda x, y: np.where(cond, x, y), (A, V))


AXES = [
    ({}, "all"), ({"axis": 0}, "0"), ({"axis": 1}, "1"), ({"axis": -1, "keepdims": True}, "-1k"),
    ({"axis": (0, 1)}, "01"),
]
REDUCTIONS = [np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std]


@pytest.mark.parametrize("fn", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kw", [a[0] for a in AXES], ids=[a[1] for a in AXES])
def test_reductions(fn, kw):
    assert wg.gradcheck(lambda x: fn(x, **kw), (A,))


def test_var_std_ddof_cumulative_norm_trace():
    assert wg.gradcheck(lambda x: np.var(x, axis=0, ddof=1), (A,))
    assert wg.gradcheck(lambda x: np.std(x, ddof=1), (A,))
    for axis in (None, 0, 1):
        assert wg.gradcheck(lambda x, axis=axis: np.cumsum(x, axis=axis), (A,))
        assert wg.gradcheck(lambda x, axis=axis: np.cumprod(x, axis=axis), (A,))
    assert wg.gradcheck(lambda x: np.linalg.norm(x), (V,))
    assert wg.gradcheck(lambda x: np.linalg.norm(x), (A,))  # Frobenius
    assert wg.gradcheck(lambda x: np.linalg.norm(x, axis=1, keepdims=True), (A,))
    assert wg.gradcheck(lambda x: np.linalg.norm(x, "fro"), (A,))
    assert wg.gradcheck(lambda x: np.trace(x), (M,))


SHAPE_CASES = {
    "reshape": lambda x: np.reshape(x, (4, 3)),
    "ravel": np.ravel,
    "transpose": lambda x: np.transpose(x[None], (2, 0, 1)),
    "swapaxes": lambda x: np.swapaxes(x, 0, 1),
    "moveaxis": lambda x: np.moveaxis(x[None], 0, -1),
    "expand_dims": lambda x: np.expand_dims(x, 1),
    "squeeze": lambda x: np.squeeze(x[:, None, :], axis=1),
    "flip": lambda x: np.flip(x, axis=1),
    "roll": lambda x: np.roll(x, 2, axis=1),
    "tile": lambda x: np.tile(x, (2, 1)),
    "repeat": lambda x: np.repeat(x, 2, axis=0),
    "broadcast_to": lambda x: np.broadcast_to(x[0], (2, 4)),
    "pad": lambda x: np.pad(x, ((1, 0), (0, 2))),
    "diagonal": np.diagonal,
    "diag": lambda x: np.diag(x[0]) * np.diag(x[:, :3]).sum(),
    "triu": lambda x: np.triu(x, 1),
    "tril": np.tril,
    "take": lambda x: np.take(x, [0, 2, 2], axis=1),
    "sort": lambda x: np.sort(x, axis=1),
    "concatenate": lambda x: np.concatenate([x, 2 * x], axis=0),
    "stack": lambda x: np.stack([x, x * x], axis=1),
    "hstack": lambda x: np.hstack([x, x]),
    "vstack": lambda x: np.vstack([x, x[0]]),
    "split": lambda x: np.split(x, 2, axis=1)[1] * 3.0,
    "getitem": lambda x: (
        (x[1:, ::2] * x[[0, 2]][:, None, 1]).sum()
        + x[x > 0.5].sum()
        + (x[..., None][0] ** 2).sum()
        + x[-1, [1, 1, 3]]
    ),
}


@pytest.mark.parametrize("name", SHAPE_CASES)
def test_shape_and_indexing(name):
    assert wg.gradcheck(SHAPE_CASES[name], (A,))


def test_setitem():
    def f(x):
        y = x * 1.0
        y[0, 1:3] = x[2, :2] ** 2
        return y

    assert wg.gradcheck(f, (A,))


LINALG = {
    "dot": lambda a, b: np.dot(a, b),
    "matmul": lambda a, b: np.matmul(a, b),
    "inner": lambda a, b: np.inner(a, b.T),
    "outer": lambda a, b: np.outer(a[0], b[:, 0]),
    "tensordot": lambda a, b: np.tensordot(a, b, axes=([1], [0])),
    "einsum": lambda a, b: np.einsum("ij,jk->ik", a, b),
    "kron": lambda a, b: np.kron(a[:2, :2], b[:2, :2]),
}


@pytest.mark.parametrize("name", LINALG)
def test_products(name):
    assert wg.gradcheck(LINALG[name], (A, rng.normal(size=(4, 2))))


def test_matmul_batched_broadcast_and_vectors():
    assert wg.gradcheck(np.matmul, (rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))))
    assert wg.gradcheck(np.matmul, (rng.normal(size=(4,)), rng.normal(size=(2, 4, 3))))
    assert wg.gradcheck(np.matmul, (rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(5, 4, 2))))
    assert wg.gradcheck(np.matmul, (rng.normal(size=(4,)), rng.normal(size=(4,))))


def test_matrix_functions():
    assert wg.gradcheck(np.linalg.inv, (M,))
    assert wg.gradcheck(np.linalg.det, (M,))
    assert wg.gradcheck(lambda a: np.linalg.slogdet(a)[1], (M,))
    assert wg.gradcheck(np.linalg.solve, (M, rng.normal(size=(3, 2))))
    assert wg.gradcheck(lambda a: np.linalg.cholesky(a @ a.T + np.eye(3)), (M,))
    sign, _ = np.linalg.slogdet(wg.tensor(-SPD, requires_grad=True))
    assert float(sign) == -1.0


def test_unique_bincount_and_histogram_carry_gradients_or_refuse():
    x = np.array([3.0, 1.0, 2.0, 1.0])
    idx = np.array([0, 1, 1, 2])
    g = wg.grad(lambda x: np.sum(np.unique(x) * np.arange(1.0, 4.0)))(x)
    np.testing.assert_array_equal(g, [3.0, 1.0, 2.0, 0.0])  # the first occurrences (JAX)
    values, index, inverse, counts = np.unique(wg.tensor(x, requires_grad=True),
                                               return_index=True, return_inverse=True,
                                               return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, 3.0])
    assert index.tolist() == [1, 2, 0] and counts.tolist() == [2, 1, 1]
    assert inverse.tolist() == [2, 0, 1, 0]
    g = wg.grad(lambda w: np.sum(np.bincount(idx, weights=w, minlength=5) * np.arange(5.0)))(x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 2.0])
    g = wg.grad(lambda w: np.sum(np.histogram(x, bins=2, weights=w)[0] * np.arange(1.0, 3.0)))(x)
    np.testing.assert_array_equal(g, [2.0, 1.0, 2.0, 1.0])
    counts, edges = np.histogram(x, bins=2, weights=wg.tensor(x, requires_grad=True))
    np.testing.assert_array_equal(counts.numpy(), np.histogram(x, bins=2, weights=x)[0])
    np.testing.assert_array_equal(edges, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="piecewise constant"):
        wg.grad(lambda a: np.sum(np.histogram(a, bins=2)[0] * 1.0))(x)
    # jvp agrees
    t = wg.jvp(lambda w: np.bincount(idx, weights=w), (x,), (np.ones(4),))[1]
    np.testing.assert_array_equal(t, [1.0, 2.0, 1.0])


# -- the scan: every public NumPy function, called as NumPy code calls it ---------------------
def _scan_module():
    path = Path(__file__).resolve().parents[2] / "scripts" / "numpy_coverage.py"
    spec = importlib.util.spec_from_file_location("numpy_coverage", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("numpy_coverage", module)
    spec.loader.exec_module(module)
    return module


#: What the scan is refused, and why: NumPy converts a tensor it does not dispatch on
#: (creation from values, an argument its dispatcher skips), a write into a plain array,
#: a piecewise constant function of the samples, or a q that carries a derivative.
NOT_DISPATCHED = (r"(Can't convert a tensor that requires grad|np\.asarray\(\) of a dual"
                  r"|np\.\w+\(\) converted a (tensor|dual number))")
STORE = r"stores a value that carries a derivative into a plain NumPy array"
REFUSED = {
    "np.arange": NOT_DISPATCHED, "np.array": NOT_DISPATCHED, "np.asanyarray": NOT_DISPATCHED,
    "np.asarray": NOT_DISPATCHED, "np.asarray_chkfinite": NOT_DISPATCHED,
    "np.ascontiguousarray": NOT_DISPATCHED, "np.asfortranarray": NOT_DISPATCHED,
    "np.asmatrix": NOT_DISPATCHED, "np.bmat": NOT_DISPATCHED, "np.full": NOT_DISPATCHED,
    "np.kaiser": NOT_DISPATCHED, "np.mintypecode": NOT_DISPATCHED,
    "np.require": NOT_DISPATCHED,
    "np.pad": r"constant_values=: " + NOT_DISPATCHED,  # (a traced array takes traced ones)
    "np.select": r"default=: " + NOT_DISPATCHED,  # (likewise with traced choices)
    "np.copyto": STORE, "np.fill_diagonal": STORE, "np.place": STORE, "np.put": STORE,
    "np.put_along_axis": STORE, "np.putmask": STORE,
    "np.full_like": r"argument 1: np\.full_like\(\) converted a",
    "np.histogram": "piecewise constant", "np.histogram2d": "piecewise constant",
    "np.histogramdd": "piecewise constant",
    "np.percentile": "q must be plain", "np.nanpercentile": "q must be plain",
    "np.quantile": "q must be plain", "np.nanquantile": "q must be plain",
    "np.isfortran": "no attribute 'flags'",
}


@pytest.mark.parametrize("mode", ["tensor", "dual"])
def test_every_public_numpy_function_keeps_the_gradient_or_refuses(mode):
    report = _scan_module().scan(mode)
    assert report.no_rule == {}
    assert report.dropped == {}
    assert report.differs == {}
    refused = {name: why for name, why in report.refused.items() if name in REFUSED}
    assert refused == report.refused, f"new refusals: {set(report.refused) - set(REFUSED)}"
    for name, why in report.refused.items():
        assert re.search(REFUSED[name], why), (name, why)
    assert len(report.covered) >= 330


def test_the_scan_finds_what_it_looks_for():
    scan = _scan_module()
    # a function without a rule, one that drops a gradient, one with wrong values
    no_rule = lambda x, y: np.char.upper(x)  # noqa: E731
    dropped = lambda x, y: x + wg.stop_gradient(y)  # noqa: E731
    wrong = lambda x, y: x * 2.0  # noqa: E731
    for fn, kind in ((no_rule, "no_rule"), (dropped, "dropped"), (wrong, "differs")):
        outcome: dict[str, str] = {}
        plain = (scan.V, scan.W)
        want = scan.V + scan.W
        for place in ((0,), (1,)):
            scan._try("np.demo", fn, plain, {}, [place], want, outcome, "tensor")
        assert kind in outcome, (kind, outcome)


# -- the rules the scan asked for ------------------------------------------------------------
X3 = np.array([0.5, 0.25, 0.75])
Y3 = np.array([0.3, 0.6, 0.2])


def test_choose_compress_extract():
    idx = np.array([1, 0, 1])
    assert wg.gradcheck(lambda a, b: np.choose(idx, [a, b]), (X3, Y3))
    assert wg.gradcheck(lambda a, b: np.choose(idx + 2, [a, b], mode="wrap"), (X3, Y3))
    assert wg.gradcheck(lambda a, b: np.choose(idx * 5, [a, b[:1]], mode="clip"), (X3, Y3))
    np.testing.assert_array_equal(
        wg.grad(lambda a: np.sum(np.choose(idx, [a, 2.0 * a])))(X3), [2.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        np.choose(idx + 1, [wg.tensor(X3), X3])
    mask = [True, False, True]
    assert wg.gradcheck(lambda a: np.compress(mask, a), (X3,))
    assert wg.gradcheck(lambda a: np.compress([False, True], a, axis=1), (A,))
    with pytest.raises(IndexError, match="out of bounds"):
        np.compress([False] * 4 + [True], wg.tensor(X3))
    assert wg.gradcheck(lambda a: np.extract(a > 0.5, a), (A,))
    np.testing.assert_array_equal(np.extract(A > 0.5, wg.tensor(A)).numpy(), A[A > 0.5])


def _writer(write):
    def f(x):
        y = x * 1.0
        write(y, x)
        return y
    return f


WRITES = {
    "copyto": lambda y, x: np.copyto(y, x[::-1] * 2.0, where=np.array([True, False, True])),
    "put": lambda y, x: np.put(y, [0, 2, 0], x[:2] * 10.0),  # v cycled; 0 written twice
    "put-wrap": lambda y, x: np.put(y, [4, -1], x[:2] * 3.0, mode="wrap"),
    "putmask": lambda y, x: np.putmask(y, np.array([True, False, True]), x * 5.0),
    "place": lambda y, x: np.place(y, np.array([True, False, True]), x[1:] * 7.0),
    "add.at": lambda y, x: np.add.at(y, [0, 0, 2], x * 2.0),  # 0 twice: added twice
    "subtract.at": lambda y, x: np.subtract.at(y, [1, 1], x[:2]),
}


@pytest.mark.parametrize("name", WRITES)
def test_numpy_functions_that_write_into_a_traced_array(name):
    f = _writer(WRITES[name])
    y = np.array(X3)
    WRITES[name](y, X3)  # NumPy on the values
    np.testing.assert_array_equal(f(wg.tensor(X3)).numpy(), y)
    assert wg.gradcheck(f, (X3,))
    np.testing.assert_allclose(wg.jacfwd(f)(X3), wg.jacrev(f)(X3))


def test_diagonal_and_along_axis_writes():
    def fill(x):
        y = np.zeros_like(x, shape=(3, 3)) + x
        np.fill_diagonal(y, x[:2] * 4.0)  # the two values repeated down the diagonal
        return y

    def along(x):
        y = np.zeros_like(x, shape=(3, 3)) + x
        np.put_along_axis(y, np.array([[0], [2], [0]]), x[:, None] * 3.0, 1)
        return y

    for f in (fill, along):
        assert wg.gradcheck(f, (X3,))
        np.testing.assert_allclose(wg.jacfwd(f)(X3), wg.jacrev(f)(X3))
    want = np.zeros((3, 3)) + X3
    np.fill_diagonal(want, X3[:2] * 4.0)
    np.testing.assert_array_equal(fill(wg.tensor(X3)).numpy(), want)
    tall = wg.tensor(np.zeros((5, 2)))
    np.fill_diagonal(tall, wg.tensor([1.0, 2.0], requires_grad=True), wrap=True)
    want = np.zeros((5, 2))
    np.fill_diagonal(want, [1.0, 2.0], wrap=True)
    np.testing.assert_array_equal(tall.numpy(), want)


def test_writing_a_traced_value_into_a_constant_tensor_keeps_its_gradient():
    # np.copyto(c, x) with a constant tensor c writes x's values and keeps their gradient
    def f(x):
        c = wg.tensor(np.zeros(3))
        np.copyto(c, x * 2.0)
        np.add.at(c, [1, 1], x[0])
        return c

    np.testing.assert_array_equal(wg.jacrev(f)(X3), [[2, 0, 0], [2, 2, 0], [0, 0, 2]])
    # under no_grad NumPy writes the values (an optimizer step), as before
    w = wg.tensor(X3, requires_grad=True)
    with wg.no_grad():
        np.copyto(w, np.zeros(3))
        np.put(w, [0], [5.0])
    np.testing.assert_array_equal(w.numpy(), [5.0, 0.0, 0.0])
    assert w.requires_grad and w.is_leaf
    with pytest.raises(TypeError, match="np.multiply.at on a value that carries a derivative"):
        np.multiply.at(w * 1.0, [0], 2.0)


def test_set_routines_of_two_arrays():
    a = np.array([0.5, 0.25, 0.75, 0.25])
    b = np.array([0.75, 0.1, 0.5])
    apart = (np.array([0.5, 0.25, 0.75]), np.array([0.9, 0.1]))  # (no ties for differences)
    for fn in (np.union1d, np.intersect1d, np.setdiff1d, np.setxor1d):
        got = fn(wg.tensor(a), wg.tensor(b)).numpy()
        np.testing.assert_array_equal(got, fn(a, b))
        np.testing.assert_array_equal(wg.jacrev(fn, (0, 1))(a, b)[0],
                                      wg.jacfwd(fn, (0, 1))(a, b)[0])
        assert wg.gradcheck(lambda x, y, fn=fn: fn(x, y), apart)
    # each value of the result from its first occurrence (in a before b)
    ja, jb = wg.jacrev(np.union1d, (0, 1))(a, b)
    np.testing.assert_array_equal(ja, [[0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]])
    np.testing.assert_array_equal(jb, [[0, 1, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]])
    values, ia, ib = np.intersect1d(wg.tensor(a), b, return_indices=True)
    assert ia.tolist() == [0, 2] and ib.tolist() == [2, 0]
    np.testing.assert_array_equal(
        np.setdiff1d(wg.tensor(a), b, assume_unique=True).numpy(),
        np.setdiff1d(a, b, assume_unique=True))
    assert np.isin(wg.tensor(a, requires_grad=True), b).tolist() == np.isin(a, b).tolist()


def test_polynomial_arithmetic():
    p, q = np.array([1.0, -2.0, 0.5]), np.array([0.5, 1.5])
    for fn in (np.polyadd, np.polysub, np.polymul):
        np.testing.assert_array_equal(fn(wg.tensor(p), q).numpy(), fn(p, q))
        np.testing.assert_array_equal(fn(q, wg.tensor(p)).numpy(), fn(q, p))
        assert wg.gradcheck(lambda a, b, fn=fn: fn(a, b), (p, q))
    for u, v in ((p, q), (q, p), (np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]))):
        qn, rn = np.polydiv(u, v)
        qw, rw = np.polydiv(wg.tensor(u), wg.tensor(v))
        np.testing.assert_allclose(np.asarray(wg.stop_gradient(qw)), qn)
        np.testing.assert_allclose(np.asarray(wg.stop_gradient(rw)), rn)
        assert wg.gradcheck(lambda a, b: np.polydiv(a, b)[0], (u, v))
    assert wg.gradcheck(lambda a, b: np.polydiv(a, b)[1], (p, q))
    np.testing.assert_array_equal(np.polyadd(wg.tensor(3.0), p).numpy(), np.polyadd(3.0, p))


def test_astype_full_like_and_functions_applied_to_slices():
    x = wg.tensor(X3, requires_grad=True)
    assert np.astype(x, np.float32).dtype == np.float32
    assert not np.astype(x, np.int64).requires_grad
    assert np.astype(x, np.float64, copy=False) is x
    assert wg.grad(lambda c: np.sum(np.full_like(wg.tensor(X3), c)))(2.0) == 3.0
    # NumPy's own full_like (of a plain array) converts the fill value
    with pytest.raises(TypeError, match=r"np\.full_like\(\) converted .*np\.ones_like"):
        wg.grad(lambda c: np.sum(np.full_like(X3, c)))(2.0)
    filled = np.full_like(wg.tensor(np.arange(3)), wg.tensor(2.5, requires_grad=True))
    assert filled.dtype == np.int64 and filled.numpy().tolist() == [2, 2, 2]  # NumPy's cast
    d = np.full_like(wg.Dual(X3, np.ones(3)), np.nan)
    d[0] = wg.Dual(1.0, 3.0)  # full_like of a dual number takes dual numbers written later
    assert d.tangent.tolist() == [3.0, 0.0, 0.0]
    assert wg.gradcheck(lambda a: np.apply_along_axis(lambda r: r * np.sum(r), 1, a), (A,))
    assert wg.gradcheck(lambda a: np.apply_along_axis(lambda r: np.sum(r ** 2), 0, a), (A,))
    np.testing.assert_allclose(
        np.apply_along_axis(lambda r: np.outer(r, r), 1, wg.tensor(A)).numpy(),
        np.apply_along_axis(lambda r: np.outer(r, r), 1, A))
    assert wg.gradcheck(lambda a: np.apply_over_axes(np.sum, a, [0, 1]), (A,))


def test_geomspace_gradient_spacing_padding_constants_weights_and_bin_edges():
    for args, kw in (((0.2, 1.7, 5), {}), ((-0.2, -1.7, 4), {"endpoint": False}),
                     ((np.array([1.0, 2.0]), np.array([3.0, 5.0]), 3), {"axis": 1})):
        np.testing.assert_allclose(np.geomspace(wg.tensor(args[0]), *args[1:], **kw).numpy(),
                                   np.geomspace(*args, **kw), rtol=1e-15)
        assert wg.gradcheck(lambda a, b, args=args, kw=kw: np.geomspace(a, b, *args[2:], **kw),
                            args[:2])
    assert wg.gradcheck(lambda f, h: np.gradient(f, h), (X3, 0.7))  # (h was made a float)
    assert wg.gradcheck(lambda x, c: np.pad(x, 1, constant_values=c), (X3, 0.7))
    c = np.array([[1.0, 2.0], [3.0, 4.0]])
    m = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(
        np.pad(wg.tensor(m), ((1, 2), (2, 1)), constant_values=wg.tensor(c)).numpy(),
        np.pad(m, ((1, 2), (2, 1)), constant_values=c))
    assert wg.gradcheck(lambda x, c: np.pad(x, ((1, 2), (2, 1)), constant_values=c), (m, c))
    fw = np.array([1, 2, 1])
    for kw in ({"aweights": X3}, {"fweights": fw}, {"aweights": X3, "fweights": fw},
               {"aweights": X3, "ddof": 0}, {"aweights": X3, "bias": True}):
        np.testing.assert_allclose(np.cov(wg.tensor(M), **kw).numpy(), np.cov(M, **kw))
        assert wg.gradcheck(lambda m, kw=kw: np.cov(m, **kw), (M,))
    assert wg.gradcheck(lambda w: np.cov(M, aweights=w), (X3,))
    with pytest.raises(TypeError, match="fweights must be integer"):
        np.cov(wg.tensor(M), fweights=X3)
    v = np.array([0.5, 0.25, 0.75, 0.1])
    for kw in ({"bins": 2}, {"bins": "auto"}):
        np.testing.assert_array_equal(np.histogram_bin_edges(wg.tensor(v), **kw).numpy(),
                                      np.histogram_bin_edges(v, **kw))
    np.testing.assert_array_equal(  # from the smallest to the largest value
        wg.jacrev(lambda a: np.histogram_bin_edges(a, bins=2))(v),
        [[0, 0, 0, 1], [0, 0, 0.5, 0.5], [0, 0, 1, 0]])
    edges = np.histogram_bin_edges(wg.tensor(v, requires_grad=True), bins=2, range=(0, 1))
    assert isinstance(edges, np.ndarray)  # over a given range they do not depend on v


def test_numpy_writes_in_every_mode_and_in_a_compiled_function():
    def f(x):
        y = x * 1.0
        np.put(y, [0, 2], x[:2] * 10.0)
        np.add.at(y, [1, 1], x[0])
        np.copyto(y, x * 2.0, where=np.array([True, False, False]))
        return np.sum(y * np.arange(1.0, 4.0))

    want = wg.grad(f)(X3)
    np.testing.assert_array_equal(want, [6.0, 32.0, 0.0])
    np.testing.assert_array_equal(wg.compile(wg.grad(f))(X3), want)
    np.testing.assert_array_equal(wg.grad(wg.compile(f))(X3), want)
    assert wg.compile(f)(X3) == f(X3)
    assert wg.jvp(f, (X3,), (np.ones(3),))[1] == pytest.approx(np.sum(want))
