"""Export of graphs to JAX (``wengert.graph.backends.export``): the exported ``jax.numpy`` function
gives wengert's values (rtol 1e-12) and, under ``jax.grad``, wengert's gradients (rtol 1e-10),
for whole programs, for gradient graphs and for every op of the registry.

Tests that run the exported code need JAX (``pip install jax``); without it they skip.
The ones that read the source or its refusals run everywhere.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from decomposition_examples import eigh_loss, hermitian, matrix, qr_loss, svd_loss
from wengert.core.op import Op
from wengert.core.tree import flatten, leaves_like
from wengert.graph import Equation, Graph, Literal, Var
from wengert.graph.backends.export import (
    CODE_FORMS,
    INLINE_LIMIT,
    JAX_CALLS,
    JAX_FORMS,
    REFUSED_CALLS,
    REFUSED_FORMS,
    NotExportable,
    to_jax,
    to_jax_source,
)
from wengert.graph.tracer import _call_op
from wengert.ops import REGISTRY

RTOL_VALUE = 1e-12
RTOL_GRAD = 1e-10

#: Registry ops the export refuses, with the reason (every other primitive has a JAX
#: form). An op listed here is checked to raise NotExportable instead.
REFUSED_OPS: dict[str, str] = {"eig_vectors": "NumPy's phase of each column"}


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="the JAX export is checked against JAX: "
                                            "pip install jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def close(got, want, rtol=RTOL_VALUE, atol=0.0):
    """Same structure (dict entries matched by key: JAX sorts them), shapes and dtypes, and
    values within ``rtol``."""
    want_leaves, want_tree = flatten(want)
    got_leaves = leaves_like(got, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def exported_matches(jax, f, *args, argnums=0, grad_graph=True):
    """``f`` traced and exported: values equal to eager wengert, ``jax.grad`` of the
    export equal to ``wg.grad(f)``, and the export of ``trace(grad(f))`` too."""
    graph = wg.trace(f, *args)
    fj = to_jax(graph)
    close(fj(*args), f(*args))
    close(jax.jit(fj)(*args), f(*args))
    want = wg.grad(f, argnums=argnums)(*args)
    close(jax.grad(fj, argnums=argnums)(*args), want, RTOL_GRAD, 1e-14)
    if grad_graph:
        gj = to_jax(wg.trace(wg.grad(f, argnums=argnums), *args))
        close(gj(*args), want, RTOL_GRAD, 1e-14)
    return graph


# -- whole programs -------------------------------------------------------------------------
def mlp_loss(params, x, onehot):
    """Mean softmax cross-entropy of a two-layer tanh MLP."""
    h = np.tanh(x @ params["w1"] + params["b1"])
    z = h @ params["w2"] + params["b2"]
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return (np.sum(lse) - np.sum(z * onehot)) / x.shape[0]


def mlp_data(seed=0):
    rng = np.random.default_rng(seed)
    params = {"w1": rng.normal(size=(5, 8)) / 2, "b1": rng.normal(size=8) * 0.1,
              "w2": rng.normal(size=(8, 3)) / 3, "b2": rng.normal(size=3) * 0.1}
    x = rng.normal(size=(6, 5))
    onehot = np.eye(3)[rng.integers(0, 3, 6)]
    return params, x, onehot


def test_mlp_loss_values_and_gradients(jax):
    params, x, onehot = mlp_data()
    graph = exported_matches(jax, mlp_loss, params, x, onehot)
    grads = jax.grad(to_jax(graph))(params, x, onehot)
    assert sorted(grads) == ["b1", "b2", "w1", "w2"]  # the params' dict, as wengert's


def test_gradient_and_tangent_graphs(jax):
    """The backward program (wg.grad_graph) and the tangent program (wg.jvp_graph) export
    like any graph."""
    params, x, onehot = mlp_data()
    value, grads = to_jax(wg.grad_graph(wg.trace(mlp_loss, params, x, onehot)))(
        params, x, onehot)
    close((value, grads), wg.value_and_grad(mlp_loss)(params, x, onehot), RTOL_GRAD)
    f = lambda x: np.sin(x) * np.exp(-x)
    x = np.linspace(0.0, 2.0, 4)
    jg = wg.jvp_graph(wg.trace(f, x))
    close(to_jax(jg)((x,), (np.ones(4),)), jg((x,), (np.ones(4),)), RTOL_GRAD)


def test_mlp_with_max_shift_and_jit(jax):
    """The stable softmax (a max over a batch axis) and a jitted gradient step."""

    def loss(params, x, onehot):
        z = np.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
        m = np.max(z, axis=1, keepdims=True)
        lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
        return np.mean(lse[:, 0] - np.sum(z * onehot, axis=1))

    params, x, onehot = mlp_data(1)
    fj = to_jax(wg.trace(loss, params, x, onehot))
    step = jax.jit(lambda p: jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p,
                                                    jax.grad(fj)(p, x, onehot)))
    want = wg.grad(loss)(params, x, onehot)
    got = step(params)
    for k in params:
        np.testing.assert_allclose(got[k], params[k] - 0.1 * want[k], rtol=RTOL_GRAD)


def w1_chain(x, n=60):
    """The W1 scalar chain: sin, cos, tanh, *0.9, +x, **1.5 (on Python floats)."""
    y = x
    for _ in range(n // 6):
        y = np.sin(y)
        y = np.cos(y)
        y = np.tanh(y)
        y = y * 0.9
        y = y + x
        y = y**1.5
    return y


def test_scalar_chain(jax):
    graph = exported_matches(jax, w1_chain, 0.5)
    assert len(graph) == 60
    source = to_jax_source(graph)
    assert "t0 = jnp.sin(x)  # sin" in source and "jnp.power(t4, 1.5)" in source


def test_where_maximum_abs(jax):
    def f(x, y):
        a = np.where(x > 0.2, x * y, -0.5 * x)
        b = np.maximum(a, np.abs(y) - 1.0) + np.minimum(x, 0.3)
        return np.sum(np.clip(b, -1.0, 1.5) ** 2) + np.sum(np.abs(x - y))

    rng = np.random.default_rng(2)
    exported_matches(jax, f, rng.normal(size=(3, 4)), rng.normal(size=4), argnums=(0, 1))


def test_shapes_indexing_reductions_and_products(jax):
    idx = np.array([2, 0, 2, 1])
    mask = np.array([True, False, True, True])

    def f(x, w):
        a = np.reshape(x, (4, 6)).T @ w  # (6, 3)
        b = np.concatenate([a, np.stack([a[:, 0], a[:, 2]], axis=1)], axis=1)  # (6, 5)
        c = np.transpose(np.reshape(b, (2, 3, 5)), (2, 0, 1))  # (5, 2, 3)
        d = np.sum(c, axis=(0, 2)) + np.mean(c, axis=1).sum(axis=0)[:2]
        e = np.einsum("ijk,k->ij", c, w[idx[:3], 0]) * 0.1
        g = x[1:4, ::2, 0] * x[mask][:, 1, [1, 0]]
        return (np.sum(d) + np.linalg.norm(e) + np.sum(g[::-1] ** 2)
                + np.linalg.norm(x[..., 1], axis=0).sum() + np.var(x, axis=0).sum())

    rng = np.random.default_rng(3)
    # (the gradient graph is not exported: the rules of norm and var leave guards in it)
    exported_matches(jax, f, rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 3)),
                     argnums=(0, 1), grad_graph=False)


def test_pytrees_in_and_out(jax):
    def f(inputs, scale, extra):
        (a, b), d = inputs
        out = {"sum": np.sum(a * d["u"]) * scale, "pair": [np.tanh(b), b[0] + d["v"]]}
        return out, (np.sin(scale),)

    args = (((np.arange(3.0), np.ones(2)), {"u": np.linspace(0, 1, 3), "v": 2.0}), 0.7, None)
    graph = wg.trace(f, *args)
    fj = to_jax(graph)
    close(fj(*args), f(*args))
    source = to_jax_source(graph)
    assert "def f(inputs, scale, arg2):" in source
    assert "inputs_0_0 = jnp.asarray(inputs[0][0])" in source
    assert "inputs_1_v = jnp.asarray(inputs[1]['v'])" in source


def test_static_argnums(jax):
    def f(x, n):
        for _ in range(n):
            x = np.sin(x)
        return np.sum(x)

    graph = wg.trace(f, np.ones(3), 3, static_argnums=1)
    fj = to_jax(graph)
    assert "def f(x):" in to_jax_source(graph)
    np.testing.assert_allclose(jax.grad(fj)(np.full(3, 0.3)),
                               wg.grad(lambda x: f(x, 3))(np.full(3, 0.3)), rtol=RTOL_GRAD)


def test_recorded_numpy_calls(jax):
    """Comparisons, tests, argmax and friends are recorded calls: written with jnp."""

    def f(x):
        bad = np.isnan(x) | np.isinf(x) | ~np.isfinite(x)
        keep = np.logical_and(x > -1.0, np.logical_not(bad))
        k = np.argmax(x) + np.argmin(x, axis=0) + np.count_nonzero(keep)
        order = np.argsort(x)
        near = np.isclose(x, 0.5, atol=0.1)
        pos = np.searchsorted(np.array([-1.0, 0.0, 1.0]), x) + np.digitize(x, [0.0, 0.5])
        return (np.where(keep, x, 0.0) * k, order, near, pos, np.any(x > 2), np.all(x > -9))

    x = np.array([0.3, -2.0, 1.7, 0.45, 2.5])
    graph = wg.trace(f, x)
    ops = {eq.op.name for eq in graph}
    assert {"isnan", "argmax", "argsort", "isclose", "searchsorted", "digitize"} <= ops
    fj = to_jax(graph)
    close(fj(x), f(x))
    close(jax.jit(fj)(x), f(x))


def test_recorded_calls_with_a_jax_form(jax):
    """The recorded NumPy calls that jax.numpy has: values, shapes and dtypes as NumPy's."""
    mask = np.array([True, False, True, True])
    edges = np.array([0.0, 1.0, 2.5])

    def f(x, n):
        bad = np.isneginf(x) | np.isposinf(x)
        likes = (np.zeros_like(x), np.ones_like(x, dtype=np.float32),
                 np.full_like(x, 2.5), np.empty_like(x, shape=(2,)))
        ints = (np.gcd(n, 6), np.lcm(n, 4), np.bitwise_count(n), np.isin(n, [2, 3]))
        rows, cols = np.ix_(n[:2] % 2, n[1:] % 3)
        picks = (np.choose(np.array([0, 1, 0, 1]), [x, -x]), np.compress(mask, x),
                 np.extract(mask, x * 2.0), rows + cols)
        numbers = (np.nanargmax(x), np.nanargmin(x, axis=0), np.geomspace(1.0, 3.0, 3),
                   np.polyadd(x, edges), np.polysub(x[:2], x),
                   np.histogram_bin_edges(x, bins=3), np.linalg.matrix_rank(np.outer(x, x)),
                   np.astype(x, np.float32))
        bits = np.unpackbits(np.packbits(x > 1.0))
        return bad, likes, ints, picks, numbers, bits

    x = np.array([0.5, 3.0, 1.5, 2.0])
    n = np.array([4, 9, 2, 3])
    graph = wg.trace(f, x, n)
    names = {eq.op.name for eq in graph}
    # (choose, compress, extract, ix_, polysub are written with primitives)
    assert {"isneginf", "zeros_like", "gcd", "take", "nanargmax",
            "linalg.matrix_rank", "astype", "packbits"} <= names, names
    fj = to_jax(graph)

    def want(x, n):  # np.empty_like's values are unspecified: zeros exported and folded
        bad, likes, *rest = f(x, n)
        return (bad, (*likes[:3], np.zeros(2)), *rest)

    close(jax.jit(fj)(x, n), want(x, n))

    def special(x):
        return np.isneginf(x) | np.isposinf(x), np.nanargmax(x), np.nanargmin(x)

    y = np.array([-np.inf, 0.0, np.nan, np.inf])
    close(jax.jit(to_jax(wg.trace(special, x)))(y), special(y))


@pytest.mark.parametrize("f, why", [
    (lambda x: np.compress(x > 1.0, x), "shape depends on the values"),
    (lambda x: np.polydiv(x, [1.0, 2.0])[0], "guard"),  # the remainder's leading zeros
    (lambda x: np.polymul(x, [1.0, 2.0]), "guard"),  # poly1d's leading zeros
    (lambda x: np.geomspace(1.0, x[1], 3), "guard"),  # NumPy raises at a zero endpoint
    (lambda x: np.histogram_bin_edges(x, bins="auto"), "bins='auto'"),
])
def test_recorded_calls_without_a_faithful_jax_form(f, why):
    with pytest.raises(NotExportable, match=why):
        to_jax_source(wg.trace(f, np.array([0.5, 3.0, 1.5])))


def test_set_routines_of_traced_values_are_refused_by_the_trace():
    with pytest.raises(TypeError, match="intersect1d.*depends on the values"):
        wg.trace(lambda x: np.intersect1d(x, [1.0, 2.0]), np.array([0.5, 3.0, 1.5]))


def test_folded_shape_constants_export(jax):
    x = np.arange(6.0).reshape(2, 3)
    f = lambda x: x * np.ones_like(x) + np.full_like(x, 0.5) + np.empty_like(x)  # noqa: E731
    graph = wg.trace(f, x).optimize()
    assert "ones_like" not in str(graph) and "np.full((2, 3), 0.5" in to_jax_source(graph)
    close(to_jax(graph)(x), x + 0.5)


def test_promotion_follows_numpy(jax):
    """int with float32 is float64 in NumPy, float32 in JAX: the export casts."""

    def f(x, i):
        return x * i + np.sum(i) * x[0] + np.sin(i)

    x = np.ones(3, np.float32) * 0.5
    i = np.array([1, 2, 3], np.int32)
    close(to_jax(wg.trace(f, x, i))(x, i), f(x, i))


def test_float32_program(jax):
    def f(x):
        return np.sum(np.tanh(x) * 2.0) / np.float32(3.0)

    x = np.linspace(-1, 1, 5, dtype=np.float32)
    graph = wg.trace(f, x)
    assert "_check_x64" not in to_jax_source(graph)  # runs in JAX's default 32-bit mode
    close(to_jax(graph)(x), f(x), rtol=1e-6)


def test_hessians_through_helpers(jax):
    """Second derivatives of the helpers that carry wengert's conventions."""

    def f(x):
        y = np.abs(x) * np.logaddexp(x, 0.3) + np.hypot(x, 1.5)
        return np.sum(y ** 3 + np.clip(x, -0.5, 0.5) * x) + np.std(x) + np.linalg.norm(x)

    x = np.array([0.7, -1.2, 0.1, 2.0])
    np.testing.assert_allclose(jax.hessian(to_jax(wg.trace(f, x)))(x), wg.hessian(f)(x),
                               rtol=1e-9, atol=1e-12)


# -- wengert's conventions at non-differentiable points -------------------------------------
ZEROS = np.array([0.0, 1.0, -1.0, 2.0])
CONVENTIONS = {
    "abs'(0) = 0": (lambda x: np.sum(np.abs(x)), (ZEROS,)),
    "relu'(0) = 0": (lambda x: np.sum(wg.numpy.relu(x)), (ZEROS,)),
    "sqrt'(0) = inf": (lambda x: np.sum(np.sqrt(x)), (np.array([0.0, 1.0]),)),
    "maximum ties split": (lambda x, y: np.sum(np.maximum(x, y)),
                           (ZEROS, np.array([0.0, 1.0, 0.0, 3.0]))),
    "fmax ties split, NaN loses": (lambda x, y: np.sum(np.fmax(x, y)),
                                   (ZEROS, np.array([0.0, np.nan, 0.0, 2.0]))),
    "fmin ties split, NaN loses": (lambda x, y: np.sum(np.fmin(x, y)),
                                   (ZEROS, np.array([0.0, np.nan, 0.0, 2.0]))),
    "max ties split": (lambda x: np.max(x), (np.array([1.0, 3.0, 3.0]),)),
    "clip bounds inclusive": (lambda x: np.sum(np.clip(x, -1.0, 1.0)), (ZEROS,)),
    "hypot'(0, 0) = 0": (lambda x, y: np.sum(np.hypot(x, y)),
                         (ZEROS, np.array([0.0, 0.0, 1.0, 0.0]))),
    "std' of a constant = 0": (lambda x: np.std(x), (np.ones(3),)),
    "2-norm'(0) = 0": (lambda x: np.linalg.norm(x), (np.zeros(3),)),
    "1-norm' at 0 = 0": (lambda x: np.linalg.norm(x, ord=1), (ZEROS,)),
    "0 ** 0 has gradient 0": (lambda x, y: np.sum(x ** y),
                              (np.array([0.0, 0.0, 2.0]), np.array([0.0, 2.0, 0.5]))),
    "logaddexp at infinities": (lambda x, y: np.sum(np.logaddexp(x, y)),
                                (np.array([np.inf, -np.inf, 1.0]),
                                 np.array([np.inf, -np.inf, 1.0]))),
    "logaddexp2 at infinities": (lambda x, y: np.sum(np.logaddexp2(x, y)),
                                 (np.array([np.inf, -np.inf, 1.0]),
                                  np.array([np.inf, 2.0, 1.0]))),
    "sort ties (stable)": (lambda x: np.sum(np.sort(x) * np.arange(4.0)),
                           (np.array([1.0, 0.0, 1.0, 0.0]),)),
    "det of a singular matrix": (lambda a: np.linalg.det(a), (np.array([[1.0, 2.0],
                                                                         [2.0, 4.0]]),)),
    "prod with zeros": (lambda x: np.prod(x), (np.array([0.0, 2.0, 0.0]),)),
    "sinc'(0) = 0": (lambda x: np.sum(np.sinc(x)), (np.array([0.0, 0.05]),)),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # wengert's own, at 0 and inf
@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_gradient_conventions(jax, name):
    f, args = CONVENTIONS[name]
    nums = tuple(range(len(args)))
    want = wg.grad(f, argnums=nums)(*args)
    got = jax.grad(to_jax(wg.trace(f, *args)), argnums=nums)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL_GRAD, atol=1e-15)


# -- the registry sweep ---------------------------------------------------------------------
def one_equation(op, args, params, index_literals=False):
    """A graph of the single equation ``op(*args, **params)``: NumPy arrays (and NumPy
    scalars) become inputs, Python numbers literals; with ``index_literals``, integer and
    boolean arrays are literals too (as a trace makes index arrays)."""
    ins, inputs, values = [], [], []
    for i, a in enumerate(args):
        array = isinstance(a, np.ndarray | np.generic)
        if array and not (index_literals and np.asarray(a).dtype.kind in "biu"):
            v = Var(f"a{i}", np.shape(a), np.asarray(a).dtype)
            ins.append(v)
            inputs.append(v)
            values.append(a)
        else:
            ins.append(Literal(a))
    want = op.impl(*args, **params)
    out = Var("out", np.shape(want), np.asarray(want).dtype)
    graph = Graph(inputs, [Equation(op, ins, params, out)], [out], flatten(tuple(values))[1],
                  "leaf", name=op.name)
    return graph, values, want


def differentiable(op, graph, values):
    """Positions of the float inputs of the graph that the op has a VJP rule for."""
    eq = graph.equations[0]
    var_at = [i for i, v in enumerate(eq.ins) if type(v) is Var]
    return [k for k, value in enumerate(values) if np.asarray(value).dtype.kind == "f"
            and (op.nin == -1 or op.vjps[var_at[k]] is not None)]


def test_every_registry_op_has_a_jax_form():
    names = set(REGISTRY.names())
    formed = {op.name for op in JAX_FORMS}
    assert names - set(REFUSED_OPS) == formed, sorted(names ^ formed)
    assert set(REFUSED_FORMS) == set(REFUSED_OPS)
    for op in REGISTRY:
        assert op.samples is not None, op.name


def test_an_op_declares_its_jax_form_or_its_refusal_never_both():
    for op in REGISTRY:
        assert (op.jax is not None) + (op.jax_refused is not None) == 1, op.name
        assert (op in CODE_FORMS) == callable(op.jax), op.name
        assert isinstance(op.jax, str) or op.jax is None or op.jax.__doc__, (
            f"{op.name}: a JAX form function says what it writes in its docstring")


def test_a_template_fills_inputs_params_helpers_and_modules():
    g = wg.trace(lambda x: np.clip(wnp.logsumexp(x[None] * 2.0, axis=1), 0.0, 1.0),
                 np.ones(3), source_lines=False)
    src = to_jax_source(g)
    assert "jax.scipy.special.logsumexp(t1, axis=1, keepdims=False)" in src
    assert "import jax.scipy.special" in src and "def _clip(" in src


@pytest.mark.parametrize("name", REGISTRY.names())
def test_registry_op(jax, name):
    """Every sample of every op, exported and jitted: the value (with index arrays as inputs
    and as constants) and the cotangent of a random weighting of the output, against
    wengert's forward and VJP. (Running the export eagerly is what the program tests do.)"""
    op = REGISTRY[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    for args, params in op.samples(rng):
        graph, values, want = one_equation(op, args, params)
        if name in REFUSED_OPS:
            with pytest.raises(NotExportable, match=name):
                to_jax_source(graph)
            continue
        fj = to_jax(graph)
        if any(np.asarray(a).dtype.kind in "biu" for a in args
               if isinstance(a, np.ndarray | np.generic)):
            lgraph, lvalues, _ = one_equation(op, args, params, index_literals=True)
            close(jax.jit(to_jax(lgraph))(*lvalues), want, atol=1e-300)
        diff = differentiable(op, graph, values)
        if np.asarray(want).dtype.kind != "f" or not diff:
            close(jax.jit(fj)(*values), want, atol=1e-300)
            continue
        w = rng.normal(size=np.shape(want))

        def value_and_cotangents(*xs, fn=fj, diff=diff, values=values, w=w):
            out, vjp = jax.vjp(lambda *ys: fn(*_filled(values, diff, ys)), *xs)
            return out, vjp(jax.numpy.asarray(w))

        out, got = jax.jit(value_and_cotangents)(*[values[k] for k in diff])
        close(out, want, atol=1e-300)
        expected = wg.grad(lambda *xs, graph=graph, diff=diff, values=values, w=w: np.sum(
            graph(*_filled(values, diff, xs)) * w), argnums=tuple(range(len(diff))))(
            *[values[k] for k in diff])
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g), e, rtol=RTOL_GRAD, atol=1e-12)


def _filled(values, positions, xs):
    full = list(values)
    for k, x in zip(positions, xs):
        full[k] = x
    return full


# -- random programs ----------------------------------------------------------------------
_UNARY = ["sin", "cos", "tanh", "exp", "arctan", "sinh", "square", "negative", "sigmoid",
          "abs", "log1p_abs", "sqrt_abs"]
_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "hypot", "logaddexp"]
_REDUCE = ["sum", "mean", "max", "logsumexp", "std"]


def _unary(name, v):
    if name == "sigmoid":
        return wg.numpy.sigmoid(v)
    if name == "log1p_abs":
        return np.log1p(np.abs(v))
    if name == "sqrt_abs":
        return np.sqrt(np.abs(v) + 0.5)
    return getattr(np, name)(v)


@st.composite
def programs(draw):
    """A random program: a few steps of unary and binary elementwise ops, reductions along
    an axis (kept as an operand), reshapes and transposes, on a (2, 3) input."""
    steps = []
    for _ in range(draw(st.integers(2, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "reduce", "shape"]))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(_UNARY))))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(_BINARY)), draw(st.integers(0, 10))))
        elif kind == "reduce":
            steps.append(("reduce", draw(st.sampled_from(_REDUCE)), draw(st.sampled_from(
                [0, 1, -1]))))
        else:
            steps.append(("shape", draw(st.sampled_from(["T", "flip", "roll"]))))
    return steps


def _run(steps, x, spreads=None):
    """The program on ``x``; with a list ``spreads``, the smallest spread (max − min along
    the axis) of every input ``std`` reduces is appended to it."""
    values = [x]
    for step in steps:
        v = values[-1]
        if step[0] == "unary":
            out = _unary(step[1], v)
        elif step[0] == "binary":
            other = values[step[2] % len(values)]
            out = getattr(np, step[1])(v, other if np.shape(other) == np.shape(v) else 0.7)
        elif step[0] == "reduce":
            r = getattr(np, step[1], None) or getattr(wg.numpy, step[1])
            if spreads is not None and step[1] == "std":
                spreads.append(float(np.min(np.ptp(v, axis=step[2]))))
            out = v + r(v, axis=step[2], keepdims=True)
        elif step[1] == "T":
            out = np.transpose(v)
        elif step[1] == "flip":
            out = np.flip(v, axis=0)
        else:
            out = np.roll(v, 1)
        values.append(out)
    return np.sum(values[-1] * np.arange(1.0, 7.0).reshape(np.shape(values[-1])))


@settings(max_examples=10, deadline=None)
@given(steps=programs(), seed=st.integers(0, 2**16))
def test_random_programs(jax, steps, seed):
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, (2, 3))
    spreads: list[float] = []
    _run(steps, x, spreads)
    # std of a row that is constant but for rounding (v + s - v) is the std of that
    # rounding: its derivative is the floating-point one, O(1) and direction-dependent,
    # and two correct evaluation orders (eager, JAX) disagree on it.
    assume(all(spread > 1e-9 for spread in spreads))
    f = lambda x: _run(steps, x)
    fj = to_jax(wg.trace(f, x))
    np.testing.assert_allclose(fj(x), f(x), rtol=1e-11)
    np.testing.assert_allclose(jax.grad(fj)(x), wg.grad(f)(x), rtol=1e-9, atol=1e-12)


# -- decompositions and lists of tensors ------------------------------------------------
_A = np.random.default_rng(23).normal(size=(3, 3))
_WIDE = np.random.default_rng(23).normal(size=(2, 4)) + np.eye(2, 4) * 2.0
_COUNT = np.arange(9.0).reshape(3, 3)

DECOMPOSITIONS = {
    "eigh UPLO": (lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 2)
                  + np.sum(np.linalg.eigh(a)[1][0] ** 2), _A),
    "qr wide": (lambda a: np.sum(np.linalg.qr(a)[1] ** 2) + np.sum(np.linalg.qr(a)[0] ** 3),
                _WIDE),
    "svd hermitian": (lambda a: np.sum(np.linalg.svd(a, hermitian=True)[2] * _COUNT)
                      + np.sum(np.linalg.svd(a, hermitian=True, compute_uv=False)),
                      _A + _A.T),
    "cond": (lambda a: np.linalg.cond(a) + np.linalg.cond(a, "fro"), _A),
    "r_ c_": (lambda a: np.sum(wg.numpy.r_[a[0], 1.0, a[1]] ** 2)
              + np.sum(wg.numpy.c_[a[0], a[1]] ** 3), _A),
    "mean of a list": (lambda a: wg.numpy.mean([a[0], a[1] * 2.0]), _A),
    "matrix_rank": (lambda a: np.linalg.matrix_rank(a) * np.sum(a), _A),
}


@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_decompositions_export_values_and_gradients(jax, name):
    f, x = DECOMPOSITIONS[name]
    fj = to_jax(wg.trace(f, x))
    np.testing.assert_allclose(fj(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(jax.grad(fj)(x), wg.grad(f)(x), rtol=1e-10, atol=1e-12)


def test_partition_is_refused_with_the_reason():
    with pytest.raises(NotExportable, match="argpartition"):
        to_jax_source(wg.trace(lambda a: np.sum(np.partition(a, 1)), _A))


# -- constants ----------------------------------------------------------------------------
def test_constants_are_exact(jax):
    rng = np.random.default_rng(4)
    big = rng.normal(size=INLINE_LIMIT + 1)
    small = np.array([0.1, -0.0, np.nan, np.inf, -np.inf, 1e-310])
    ints = np.array([[3, -1], [2**40, 0]])
    ones = np.ones((2, 3), np.float32)

    def f(x):
        return (x * big, np.sum(x[:6] * small), x[:4].reshape(2, 2) * ints,
                ones * np.float32(1.5), x[:6].reshape(2, 3) + ones)

    x = rng.normal(size=INLINE_LIMIT + 1)
    graph = wg.trace(f, x)
    source = to_jax_source(graph)
    assert "_npy(" in source and "np.full((2, 3), 1.0, dtype=np.float32)" in source
    assert "-0.0, np.nan, np.inf, -np.inf, 1e-310" in source
    got = to_jax(graph)(x)
    for g, w in zip(got, f(x)):
        np.testing.assert_array_equal(np.asarray(g), w)


# -- the source -------------------------------------------------------------------------
def test_source_reads_like_the_graph():
    params, x, onehot = mlp_data()
    graph = wg.trace(mlp_loss, params, x, onehot)
    source = to_jax_source(graph)
    assert source == to_jax_source(graph)  # deterministic
    lines = source.splitlines()
    assert lines[0].startswith("# mlp_loss(params_w1: f64[5,8]")
    assert 'jax.config.update("jax_enable_x64", True)' in source
    assert "def mlp_loss(params, x, onehot):" in lines
    assert "    params_w1 = jnp.asarray(params['w1'])" in lines
    body = [ln.strip() for ln in lines if re.match(r"    t\d+ = ", ln)]
    assert len(body) == len(graph)
    assert body[0].startswith("t0 = jnp.matmul(x, params_w1)  # matmul  (line ")
    assert "h = np.tanh(x @ params[\"w1\"] + params[\"b1\"])" in body[0]
    compile(source, "<export>", "exec")


def test_names_that_shadow_the_modules():
    def f(np_, jnp, jax, _c0, _abs):
        return np.abs(jnp * _c0 + np_) - jax * _abs

    np_ = np.arange(3.0)
    graph = wg.trace(f, np_, np_ + 1, 2.0, np.full(3, -1.0), 0.5)
    source = to_jax_source(graph)
    assert "def f(np_, jnp_1, jax_1, _c0, _abs_1):" in source


def test_names_shadowing_modules_run(jax):
    def f(jnp, jax_, np_):
        return np.sum(np.abs(jnp) * jax_) + np_

    args = (np.array([-1.0, 2.0]), np.array([0.5, 0.25]), 1.0)
    close(to_jax(wg.trace(f, *args))(*args), f(*args))


def test_module_checks_64_bit_mode():
    """Run in a fresh interpreter with JAX's 32-bit default: a float64 export refuses to
    compute in float32; a float32 one runs."""
    pytest.importorskip("jax", reason="needs JAX: pip install jax")
    f64 = to_jax_source(wg.trace(lambda x: np.sum(np.sin(x)), np.ones(3)))
    f32 = to_jax_source(wg.trace(lambda x: np.sum(np.sin(x)), np.ones(3, np.float32)))
    script = textwrap.dedent(f"""
        import numpy as np
        ns64, ns32 = {{}}, {{}}
        exec({f64!r}, ns64)
        exec({f32!r}, ns32)
        try:
            ns64["f"](np.ones(3))
        except RuntimeError as e:
            print("refused:", e)
        print("f32:", float(ns32["f"](np.ones(3, np.float32))))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "jax_enable_x64" in out.stdout
    value = float(out.stdout.split("f32:")[1])
    np.testing.assert_allclose(value, 3 * np.sin(1.0), rtol=1e-6)


def test_large_graph_without_recursion():
    """10^5 equations (a long chain, deeply nested results): written iteratively."""
    graph = wg.trace(lambda x: w1_chain(x, 100_002), 0.5, source_lines=False)
    n = len(graph)
    assert n == 100_002
    source = to_jax_source(graph)
    assert source.count("\n    t") == n and f"return t{n - 1}" in source


# -- refusals -------------------------------------------------------------------------------
def test_graph_with_guards_is_refused():
    def f(x):
        if np.sum(x) > 0:  # a Python branch on a traced value: a guard
            return np.sin(x)
        return np.cos(x)

    graph = wg.trace(f, np.ones(2))
    assert graph.guards
    with pytest.raises(NotExportable, match=r"guard.*if np.sum\(x\) > 0.*np.where"):
        to_jax_source(graph)


def test_value_dependent_shapes_are_refused():
    graph = wg.trace(lambda x: np.nonzero(x > 0)[0], np.array([1.0, -1.0]))
    with pytest.raises(NotExportable, match="nonzero.*depends on the values"):
        to_jax_source(graph)
    assert {"nonzero", "flatnonzero", "argwhere"} <= set(REFUSED_CALLS)


def test_unknown_numpy_call_is_refused():
    op = _call_op(np.unique, "np.unique", flatten(((0,), {}))[1], [None], [0])
    x = Var("x", (3,), np.float64)
    out = Var("t0", (3,), np.float64)
    graph = Graph([x], [Equation(op, [x], None, out)], [out], flatten((0,))[1], "leaf")
    with pytest.raises(NotExportable, match=r"np.unique.*no JAX form"):
        to_jax_source(graph)
    assert "argmax" in JAX_CALLS and "unique" not in JAX_CALLS


def test_custom_op_is_refused():
    twice = Op("twice", lambda x: 2 * x, (lambda g, ans, x: 2 * g,))
    x = Var("x", (2,), np.float64)
    out = Var("t0", (2,), np.float64)
    graph = Graph([x], [Equation(twice, [x], None, out)], [out], flatten((0,))[1], "leaf")
    with pytest.raises(NotExportable, match="'twice'.*not one of wengert's primitives"):
        to_jax_source(graph)
    # an op that borrows a registry name is not taken for the primitive either
    fake = Op("sin", np.cos, (None,))
    graph = graph.replace(equations=[Equation(fake, [x], None, out)])
    with pytest.raises(NotExportable, match="'sin'"):
        to_jax_source(graph)


def test_namedtuple_result_is_refused():
    Pair = collections.namedtuple("Pair", "a b")
    graph = wg.trace(lambda x: Pair(np.sin(x), x), np.ones(2))
    with pytest.raises(NotExportable, match="namedtuple"):
        to_jax_source(graph)


def test_to_jax_without_jax_says_how_to_install(monkeypatch):
    graph = wg.trace(lambda x: np.sin(x), np.ones(2))
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax fails
    with pytest.raises(ModuleNotFoundError, match="pip install jax"):
        to_jax(graph)


def test_export_helpers_are_the_functions_of_the_helper_module():
    """Each helper an exported module defines is the source of a function of
    ``jax_helpers`` (with its ``defjvp`` rule), and runs there as written."""
    pytest.importorskip("jax")
    from wengert.graph.backends import export, jax_helpers

    for name, source in export._HELPERS.items():
        assert callable(getattr(jax_helpers, name))
        assert f"def {name}(" in source
    assert "@_copysign.defjvp" in export._HELPERS["_copysign"]
    assert export._HELPER_NEEDS["_logaddexp2"] == ("_logaddexp",)
    assert export._HELPER_NEEDS["_logaddexp"] == ("_share",)
    assert export._HELPER_IMPORTS["_npy"] == ("base64", "io")
    assert {"_nextafter_jvp", "_copysign_jvp", "_logaddexp_jvp"} <= export._HELPER_NAMES


def test_exported_logaddexp2_splits_equal_infinities_as_wengert():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def f(x, y):
        return np.sum(np.logaddexp2(x, y))

    x, y = np.array([np.inf, 1.0, -3.0]), np.array([np.inf, 2.0, 5.0])
    fj = to_jax(wg.trace(f, x, y))
    gx, gy = jax.grad(fj, argnums=(0, 1))(x, y)
    ex, ey = wg.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gx), ex, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), ey, rtol=1e-12)
    np.testing.assert_allclose(float(fj(x, y)), f(x, y), rtol=1e-15)

# -- decompositions: one JAX call for an equation with several outputs ---------------------
DECOMPOSITION_LOSSES = {"eigh": (eigh_loss, hermitian), "svd": (svd_loss, matrix),
                        "qr": (qr_loss, matrix)}


@pytest.mark.parametrize("name,dtype", [("eigh", "float64"), ("svd", "float64"),
                                        ("qr", "float64"), ("eigh", "float32"),
                                        ("qr", "complex128")])
def test_the_jax_export_of_a_decomposition_agrees_with_jax(name, dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    loss, make = DECOMPOSITION_LOSSES[name]
    a = make((2, 3, 3), dtype)
    g = wg.trace(loss, a)
    exported = to_jax(g)
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "float32" else dict(rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(exported(a)), loss(a), **tol)
    np.testing.assert_allclose(np.asarray(jax.grad(exported)(a)), wg.grad(loss)(a), **tol)


def test_the_jax_export_writes_a_decomposition_as_one_call():
    a = hermitian((3, 3), "float64")
    src = wg.trace(lambda a: tuple(np.linalg.eigh(a)), a).to_source(target="jax")
    assert "t2, t3 = jnp.linalg.eigh(t1, UPLO='L')" in src
    src = wg.trace(lambda a: tuple(np.linalg.svd(a)), a).to_source(target="jax")
    assert "t0, t1, t2 = jnp.linalg.svd(a, full_matrices=False)" in src
    src = wg.trace(lambda a: tuple(np.linalg.qr(a)), a).to_source(target="jax")
    assert "t0, t1 = jnp.linalg.qr(a)" in src


def test_the_jax_export_of_a_decomposition_of_integers_casts_them_as_numpy():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    a = np.array([[2, 1], [1, 3]])
    f = lambda a: tuple(np.linalg.svd(a))  # noqa: E731
    g = wg.trace(f, a)
    assert "jnp.linalg.svd(jnp.asarray(a, dtype=jnp.float64), full_matrices=False)" in \
        g.to_source(target="jax")
    for x, y in zip(to_jax(g)(a), f(a)):
        assert np.asarray(x).dtype == y.dtype
        np.testing.assert_allclose(np.abs(np.asarray(x)), np.abs(y), rtol=1e-12)


def test_complex_constants_keep_the_sign_of_zero_and_nonfinite_parts(jax):
    """``repr(complex(-0.0, 1.0))`` is ``(-0+1j)``, read back as ``0.0 + 1j``: the export
    writes complex numbers whose parts keep their bits, and non-finite ones too."""
    def f(x):
        return (x * complex(-0.0, 1.0), x * np.complex128(complex(-0.0, -0.0)),
                x * np.array([complex(-0.0, 2.0), complex(1.0, -0.0)]), x + complex(np.inf, 1.0))

    x = np.array([1.0, -2.0])
    source = to_jax_source(wg.trace(f, x))
    assert "complex(-0.0, 1.0)" in source and "complex(np.inf, 1.0)" in source
    for g, w in zip(to_jax(wg.trace(f, x))(x), f(x)):
        assert np.asarray(g).dtype == w.dtype and np.asarray(g).tobytes() == w.tobytes()


def test_integer_floor_division_by_zero_is_zero_as_in_numpy(jax):
    """NumPy's ``n // 0`` is 0 (with a warning); XLA's integer division gives -1 there."""
    f = lambda x, y: (x // y, np.floor_divide(x, 0), x / 2 // y)  # noqa: E731
    for dtype in (np.int64, np.int8, np.uint8):
        x = np.array([5, 0, 7, 100], dtype)
        y = np.array([0, 0, 2, 3], dtype)
        with np.errstate(divide="ignore"):
            want = f(x, y)
            got = to_jax(wg.trace(f, x, y))(x, y)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == w.dtype
            assert np.asarray(g).tobytes() == w.tobytes(), (g, w)
