"""Every NumPy function the issue lists works on tensors, with correct gradients.

Each case calls the *NumPy* function (routed through ``__array_ufunc__`` /
``__array_function__``) and checks it with ``wg.gradcheck`` against central
finite differences, over axis/keepdims variants and broadcasting.
"""

import numpy as np
import pytest

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
