"""Define-and-run: placeholders, Session.run, gradients (wengert.graph.session)."""

from __future__ import annotations

import contextvars
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.graph.program import Graph
from wengert.graph.session import (
    GraphDefinition,
    Session,
    SessionCacheInfo,
    default_graph,
    define,
    gradients,
    placeholder,
    reset_default_graph,
)
from wengert.graph.tracer import Traced, TraceError


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Each test builds in a default graph of its own."""
    with define() as g:
        yield g


# -- the TensorFlow 1.x example -----------------------------------------------
def test_tf1_example():
    x = placeholder(())
    y = x * x
    z = 2.0 * y * x
    with Session() as sess:
        result = sess.run([y, z], {x: 3.0})
        assert result == [9.0, 54.0]
        assert all(type(r) is float for r in result)  # a program of floats runs as float code
        for fed in (3, np.float64(3.0), np.array(3.0), np.float32(3.0), True):
            result = sess.run([y, z], {x: fed})
            assert result == ([9.0, 54.0] if fed is not True else [1.0, 2.0])
            assert all(type(r) is float for r in result)


def test_tf1_example_gradient():
    x = placeholder((), name="x")
    z = 2.0 * x * x * x
    dz = gradients(z, x)
    assert type(dz) is Traced
    with Session() as sess:
        assert sess.run(dz, {x: 3.0}) == 54.0
        assert sess.run([z, dz], {x: 3.0}) == [54.0, 54.0]


def test_a_placeholder_is_a_traced_value():
    x = placeholder((), name="x")
    assert type(x) is Traced
    assert repr(x) == "Traced(x: f64[])"
    assert repr(placeholder((2, 3), np.float32)) == "Traced(x1: f32[2,3])"


# -- placeholders ---------------------------------------------------------------
def test_default_names_are_unique():
    a = placeholder(())
    b = placeholder(())
    c = placeholder((), name="x3")
    d = placeholder(())
    e = placeholder(())
    assert [p._var.name for p in (a, b, c, d, e)] == ["x0", "x1", "x3", "x4", "x5"]
    f = placeholder((), name="x6")
    assert f._var.name == "x6"
    assert placeholder(())._var.name == "x7"


def test_shapes_and_dtypes():
    assert placeholder(3).shape == (3,)
    assert placeholder([2, 3]).shape == (2, 3)
    assert placeholder(np.int64(4)).shape == (4,)
    assert placeholder((), int).dtype == np.int64
    assert placeholder((), "complex64").dtype == np.complex64
    assert placeholder(2, bool).dtype == np.bool_


@pytest.mark.parametrize("name, words", [
    ("x", "already has a placeholder named 'x'"),
    ("t3", "reserved"),
    ("c0", "reserved"),
    ("np", "reserved"),
    ("my input", "not a Python identifier"),
    ("lambda", "not a Python identifier"),
])
def test_bad_names(name, words):
    placeholder((), name="x")
    with pytest.raises(ValueError, match=words):
        placeholder((), name=name)


def test_a_duplicate_name_points_to_a_fresh_graph():
    placeholder((), name="x")
    with pytest.raises(ValueError, match="reset_default_graph") as e:
        placeholder((), name="x")
    assert "define()" in str(e.value)


@pytest.mark.parametrize("shape, error, words", [
    ((None, 3), ValueError, "unknown dimension"),
    ((-1,), ValueError, "negative"),
    ((2.5,), TypeError, "int or a tuple of ints"),
    ("abc", TypeError, "int or a tuple of ints"),
])
def test_bad_shapes(shape, error, words):
    with pytest.raises(error, match=words) as e:
        placeholder(shape, name="inp")
    assert "inp" in str(e.value)


@pytest.mark.parametrize("dtype", [object, str, "not a dtype"])
def test_bad_dtypes(dtype):
    with pytest.raises(TypeError, match="inp"):
        placeholder(3, dtype, name="inp")


# -- default graphs ---------------------------------------------------------------
def test_define_makes_a_fresh_default_graph_and_restores_the_outer_one(fresh_default_graph):
    outer = default_graph()
    assert outer is fresh_default_graph
    with define("inner") as inner:
        assert default_graph() is inner
        p = placeholder((), name="x")
        assert p.builder is inner
    assert default_graph() is outer
    q = placeholder((), name="x")  # the same name in another graph is fine
    assert q.builder is outer
    assert inner.placeholders == (p,)


def test_the_default_graph_is_made_on_first_use_per_context():
    def fresh() -> tuple[GraphDefinition, GraphDefinition]:
        return default_graph(), default_graph()

    a, b = contextvars.Context().run(fresh)
    assert a is b
    assert isinstance(a, GraphDefinition)
    c, _ = contextvars.Context().run(fresh)
    assert c is not a
    assert default_graph() is not a


def test_a_thread_has_its_own_default_graph():
    mine = default_graph()
    theirs = []
    thread = threading.Thread(target=lambda: theirs.append(default_graph()))
    thread.start()
    thread.join()
    assert theirs[0] is not mine and isinstance(theirs[0], GraphDefinition)


def test_reset_default_graph():
    x = placeholder((), name="x")
    y = x + 1.0
    old = default_graph()
    new = reset_default_graph()
    assert default_graph() is new is not old
    x2 = placeholder((), name="x")  # a cell run again
    assert x2.builder is new
    with Session(old) as sess:  # the old graph's values still run
        assert sess.run(y, {"x": 1.0}) == 2.0


def test_two_graphs_do_not_mix():
    with define("first"):
        a = placeholder((), name="a")
    with define("second"):
        b = placeholder((), name="b")
    for make in (lambda: a * b, lambda: b * a, lambda: np.add(a, b),
                 lambda: np.where(a > 0, b, 0.0)):
        with pytest.raises(TraceError, match="first"):
            make()


def test_graph_definition_text():
    with define("model") as g:
        w = placeholder(2, name="w")
        h = np.tanh(w)
        _ = h * 2.0
    assert repr(g) == "<GraphDefinition model: 1 placeholder, 2 equations>"
    assert str(g.as_graph()) == (
        "graph model(w: f64[2]):\n"
        "    t0: f64[2] = tanh(w)\n"
        "    t1: f64[2] = multiply(t0, 2.0)\n"
        "    return t1"
    )
    assert g.lookup("w") is w
    with pytest.raises(KeyError, match="w"):
        g.lookup("v")
    with pytest.raises(ValueError, match="identifier"):
        GraphDefinition("not a name")


# -- running ----------------------------------------------------------------------------
def test_fetch_pytrees():
    x = placeholder((), name="x")
    v = placeholder(3, name="v")
    y = x * 2.0
    s = np.sum(v * x)
    const = np.arange(3.0)
    with Session() as sess:
        out = sess.run({"y": y, "pair": (s, [y, 7]), "c": const, "none": None},
                       {x: 2.0, v: np.ones(3)})
        assert out["y"] == 4.0
        assert out["pair"][0] == 6.0
        assert out["pair"][1] == [4.0, 7]
        assert type(out["pair"]) is tuple and type(out["pair"][1]) is list
        assert out["c"] is const
        assert out["none"] is None
        assert sess.run(y, {x: 5.0}) == 10.0
        assert sess.run((y,), {x: 5.0}) == (10.0,)
        assert sess.run([y, y], {x: 5.0}) == [10.0, 10.0]
        assert sess.run([1.0, "text"]) == [1.0, "text"]  # nothing to compute, nothing fed
        with pytest.raises(ValueError, match="placeholder v"):
            sess.run(1.0, {v: np.ones(2)})  # feeds are checked all the same
        assert sess.run(x, {x: 5.0}) == 5.0  # a placeholder itself


def test_name_keyed_feeds():
    x = placeholder((), name="x")
    w = placeholder(2, name="w")
    y = np.sum(w) * x
    with Session() as sess:
        assert sess.run(y, {"x": 2.0, "w": [1.0, 2.0]}) == 6.0
        assert sess.run(y, {x: 2.0, "w": [1.0, 2.0]}) == 6.0


def test_unneeded_feeds_are_checked_but_not_required():
    x = placeholder((), name="x")
    u = placeholder(2, name="u")
    y = x * 3.0
    with Session() as sess:
        assert sess.run(y, {x: 1.0, u: np.zeros(2)}) == 3.0
        with pytest.raises(ValueError, match="placeholder u"):
            sess.run(y, {x: 1.0, u: np.zeros(3)})
        assert sess.graph_of(y).inputs == (x._var,)


def test_float32_placeholders_stay_float32():
    x = placeholder((), np.float32, name="x")
    v = placeholder(3, np.float32, name="v")
    y = np.sin(x) * 2.0 + v
    s = np.sum(y * y)
    with Session() as sess:
        out_y, out_s = sess.run([y, s], {x: 0.5, v: [1.0, 2.0, 3.0]})  # Python floats cast
    assert out_y.dtype == np.float32 and out_s.dtype == np.float32
    v32 = np.array([1.0, 2.0, 3.0], np.float32)
    want = np.sin(np.float32(0.5)) * 2.0 + v32
    np.testing.assert_allclose(out_y, want, rtol=1e-6)
    np.testing.assert_allclose(out_s, np.sum(want * want), rtol=1e-6)


def test_float64_data_into_a_float32_placeholder_is_rounded():
    v = placeholder(2, np.float32, name="v")
    with Session() as sess:
        out = sess.run(v * 1.0, {v: np.array([0.1, 0.2])})
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([0.1, 0.2], np.float32))


def test_linear_layer():
    W = placeholder((3, 4), name="W")
    x = placeholder((4,), name="x")
    b = placeholder((3,), name="b")
    y = W @ x + b
    rng = np.random.default_rng(0)
    feeds = {W: rng.normal(size=(3, 4)), x: rng.normal(size=4), b: rng.normal(size=3)}
    with Session() as sess:
        out = sess.run(y, feeds)
        assert out.shape == (3,)
        np.testing.assert_allclose(out, feeds[W] @ feeds[x] + feeds[b])
        graph = sess.graph_of(y)
    assert [v.name for v in graph.inputs] == ["W", "x", "b"]
    assert [eq.op.name for eq in graph] == ["matmul", "add"]


def test_where_and_comparisons():
    x = placeholder(4, name="x")
    y = np.where(x > 0, x, 0.1 * x)
    mask = (x >= 1.0) & (x < 3.0)
    count = np.sum(mask)
    feed = np.array([-2.0, 0.5, 1.0, 3.0])
    with Session() as sess:
        out_y, out_mask, out_count = sess.run([y, mask, count], {x: feed})
    np.testing.assert_allclose(out_y, np.where(feed > 0, feed, 0.1 * feed))
    np.testing.assert_array_equal(out_mask, [False, False, True, False])
    assert out_count == 1


def test_shape_ops_and_methods():
    m = placeholder((2, 3), name="m")
    y = m.T.reshape(3, 2)[1:].sum(axis=0) + np.mean(m, axis=1)
    feed = np.arange(6.0).reshape(2, 3)
    with Session() as sess:
        np.testing.assert_allclose(sess.run(y, {m: feed}),
                                   feed.T.reshape(3, 2)[1:].sum(axis=0) + feed.mean(axis=1))


def test_python_control_flow_on_a_placeholder_raises():
    x = placeholder((), name="x")
    with pytest.raises(TraceError, match="np.where"):
        if x > 0:
            pass
    with pytest.raises(TraceError):
        float(x * 2.0)
    with pytest.raises(TraceError):
        np.asarray(x)


def test_outputs_match_eager_numpy_for_integer_and_bool_placeholders():
    i = placeholder(3, np.int32, name="i")
    flag = placeholder((), bool, name="flag")
    y = np.where(flag, i * 2, i - 1)
    with Session() as sess:
        out = sess.run(y, {i: [1, 2, 3], flag: True})
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, [2, 4, 6])
        np.testing.assert_array_equal(sess.run(y, {i: [1, 2, 3], flag: False}), [0, 1, 2])


# -- the graph a session runs -------------------------------------------------------
def test_graph_of_has_exactly_the_needed_placeholders_in_order_of_creation():
    a = placeholder((), name="a")
    unused = placeholder((), name="unused")
    b = placeholder((), name="b")
    c = b * 2.0 + a  # b first in the expression, a created first
    _ = unused * 3.0
    with Session() as sess:
        g = sess.graph_of({"c": c, "k": 1.5})
        assert isinstance(g, Graph)
        assert [v.name for v in g.inputs] == ["a", "b"]
        assert len(g) == 2
        assert g(1.0, 2.0) == {"c": 5.0, "k": 1.5}
        assert str(g) == ("graph graph(a: f64[], b: f64[]):\n"
                          "    t0: f64[] = multiply(b, 2.0)\n"
                          "    t1: f64[] = add(t0, a)\n"
                          "    return t1, 1.5")
        assert sess.graph_of(3.0).inputs == ()


def test_generated_source_runs_and_matches():
    x = placeholder(3, name="x")
    y = np.tanh(x) * np.exp(-x)
    with Session() as sess:
        g = sess.graph_of(y)
        namespace: dict = {}
        exec(g.to_source(), namespace)
        feed = np.array([0.1, -1.0, 2.0])
        np.testing.assert_allclose(namespace["graph"](feed), sess.run(y, {x: feed}))


def test_repeated_runs_reuse_the_compiled_graph():
    x = placeholder((), name="x")
    y = x * x
    z = 2.0 * y * x
    with Session() as sess:
        assert sess.cache_info() == SessionCacheInfo(0, 0, 0)
        for k in range(10):
            assert sess.run([y, z], {x: float(k)}) == [k * k, 2.0 * k ** 3]
        assert sess.cache_info() == SessionCacheInfo(hits=9, misses=1, size=1)
        sess.run((y, z), {x: 1.0})  # another structure, the same values: the same graph
        sess.run({"a": y, "b": z, "c": 3}, {x: 1.0})
        assert sess.cache_info() == SessionCacheInfo(hits=11, misses=1, size=1)
        sess.run(y, {x: 1.0})
        assert sess.cache_info().misses == 2
        g1 = sess.graph_of([y, z])
        g2 = sess.graph_of([y, z])
        assert g1.equations == g2.equations


def test_the_cache_is_bounded():
    x = placeholder((), name="x")
    with Session(cache_size=3) as sess:
        values = [x * float(k) for k in range(5)]
        for k, v in enumerate(values):
            assert sess.run(v, {x: 2.0}) == 2.0 * k
        assert sess.cache_info() == SessionCacheInfo(hits=0, misses=5, size=3)


def test_a_long_chain_is_walked_without_recursion():
    x = placeholder((), name="x")
    y = x
    for _ in range(5000):
        y = y * 1.0001
    with Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: 2.0}), 2.0 * 1.0001 ** 5000)
        assert len(sess.graph_of(y)) == 5000


# -- errors ---------------------------------------------------------------------
def test_unfed_placeholder():
    x = placeholder((), name="xin")
    w = placeholder(2, name="w")
    z = np.sum(w) * x
    with Session() as sess:
        with pytest.raises(ValueError, match="placeholder xin") as e:
            sess.run(z, {w: np.ones(2)})
        message = str(e.value)
        assert "not fed: add it to feed_dict" in message
        assert "needed by t1" in message and "z = np.sum(w) * x" in message
        with pytest.raises(ValueError, match="placeholder w .* not fed"):
            sess.run(z, {"xin": 1.0})
        with pytest.raises(ValueError, match="placeholder xin .*is fetched but not fed"):
            sess.run([x, z])


def test_wrong_shape():
    W = placeholder((3, 4), name="W")
    y = W * 2.0
    with Session() as sess, pytest.raises(ValueError, match="placeholder W") as e:
        sess.run(y, {W: np.ones((4, 3))})
    assert "(3, 4)" in str(e.value) and "(4, 3)" in str(e.value)
    assert "float64" in str(e.value)


@pytest.mark.parametrize("dtype, value, words", [
    (np.int32, np.array([1.5, 2.0]), "float64"),
    (np.float64, np.array([1 + 2j, 0j]), "complex128"),
    (np.float32, np.array(["a", "b"]), "<U1"),
    (np.int8, [1, 300], "outside the range of int8"),
    (np.float64, [[1.0], [2.0, 3.0]], "cannot read as an array"),
])
def test_dtypes_that_do_not_cast(dtype, value, words):
    p = placeholder(2, dtype, name="inp")
    with Session() as sess, pytest.raises((TypeError, ValueError), match="placeholder inp") as e:
        sess.run(p + 1, {p: value})
    assert words in str(e.value)


def test_casts_that_keep_the_kind_are_fine():
    f32 = placeholder(2, np.float32, name="f32")
    f64 = placeholder(2, name="f64")
    i16 = placeholder(2, np.int16, name="i16")
    with Session() as sess:
        assert sess.run(f32 * 1.0, {f32: [1, 2]}).dtype == np.float32  # ints into floats
        assert sess.run(f64 * 1.0, {f64: [True, False]}).dtype == np.float64
        np.testing.assert_array_equal(sess.run(i16 + 1, {i16: np.array([1, 2])}), [2, 3])


def test_feeding_what_is_not_a_placeholder():
    x = placeholder((), name="x")
    y = x * 2.0
    with Session() as sess:
        with pytest.raises(TypeError, match="t0 .* is not a placeholder"):
            sess.run(y, {y: 1.0})
        with pytest.raises(ValueError, match="no placeholder named 'q'.*its placeholders: x"):
            sess.run(y, {"q": 1.0})
        with pytest.raises(TypeError, match="keys are placeholders or their names"):
            sess.run(y, {3: 1.0})
        with pytest.raises(TypeError, match="placeholder x: feed_dict gives a traced value"):
            sess.run(y, {x: y})
        with pytest.raises(ValueError, match="placeholder x is fed twice"):
            sess.run(y, {x: 1.0, "x": 2.0})
        with pytest.raises(TypeError, match="feed_dict must be a dict"):
            sess.run(y, [(x, 1.0)])


def test_a_fetch_from_another_graph():
    with define("other") as other:
        a = placeholder((), name="a")
        b = a + 1.0
    x = placeholder((), name="x")
    with Session() as sess:
        with pytest.raises(ValueError, match="fetch t0 .*belongs to graph .other."):
            sess.run(b, {a: 1.0})
        with pytest.raises(ValueError, match="feed_dict key a .*belongs to graph .other."):
            sess.run(x * 1.0, {x: 1.0, a: 1.0})
    with Session(other) as sess:
        assert sess.run(b, {a: 1.0}) == 2.0
        with define("other"), pytest.raises(ValueError, match="another graph of the same name"):
            sess.run(placeholder((), name="a"))


def test_a_fetch_escaped_from_a_trace():
    leaked = []
    wg.trace(lambda v: leaked.append(v * 2.0) or v, 1.0)
    with Session() as sess, pytest.raises(ValueError, match="was made while tracing"):
        sess.run(leaked[0])
    with pytest.raises(TypeError, match="GraphDefinition"):
        Session(graph="graph")


def test_a_closed_session():
    x = placeholder((), name="x")
    sess = Session()
    assert sess.run(x * 2.0, {x: 1.0}) == 2.0
    sess.close()
    assert sess.closed and sess.cache_info().size == 0
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(x * 2.0, {x: 1.0})
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.graph_of(x)
    with pytest.raises(RuntimeError, match="closed Session"), sess:
        pass
    with Session() as s2:
        pass
    assert s2.closed
    assert repr(s2) == "<Session of graph 'graph': closed>"


# -- gradients ----------------------------------------------------------------------
def _mlp_loss(W, x, b):
    h = np.tanh(W @ x + b)
    return np.sum(h * h) + 0.5 * np.sum(W * W)


def test_gradients_match_eager_grad():
    W = placeholder((3, 4), name="W")
    x = placeholder(4, name="x")
    b = placeholder(3, name="b")
    loss = _mlp_loss(W, x, b)
    grads = gradients(loss, [W, x, b])
    assert isinstance(grads, list) and all(type(g) is Traced for g in grads)
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3)]
    with Session() as sess:
        out = sess.run(grads, dict(zip([W, x, b], values)))
    eager = wg.grad(_mlp_loss, argnums=(0, 1, 2))(*values)
    for got, want in zip(out, eager):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradients_of_a_gradient():
    x = placeholder((), name="x")
    y = np.sin(x) * x
    (dy,) = gradients(y, [x])
    d2y = gradients(dy, x)
    with Session() as sess:
        got = sess.run([dy, d2y], {x: 0.7})
    np.testing.assert_allclose(got[0], wg.grad(lambda v: np.sin(v) * v)(0.7))
    np.testing.assert_allclose(got[1], wg.grad(wg.grad(lambda v: np.sin(v) * v))(0.7))


def test_gradients_with_respect_to_an_intermediate_value():
    x = placeholder((), name="x")
    y = x * x
    z = 2.0 * y * x
    dz_dy, dz_dx = gradients(z, [y, x])
    with Session() as sess:
        assert sess.run([dz_dy, dz_dx], {x: 3.0}) == [6.0, 54.0]  # 2x; every path: 6x²


def test_gradients_of_several_ys_and_grad_ys():
    x = placeholder(2, name="x")
    y1 = x * 3.0
    y2 = np.sum(x * x)
    g = gradients([y1, y2], x)
    gw = gradients([y1, y2], x, grad_ys=[np.array([1.0, 10.0]), 2.0])
    with Session() as sess:
        got, got_w = sess.run([g, gw], {x: [1.0, 2.0]})
    np.testing.assert_allclose(got, [3.0 + 2.0, 3.0 + 4.0])
    np.testing.assert_allclose(got_w, [3.0 + 4.0, 30.0 + 8.0])
    with pytest.raises(ValueError, match="2 ys but 1 grad_ys"):
        gradients([y1, y2], x, grad_ys=[np.ones(2)])


def test_unconnected_gradients():
    x = placeholder((), name="x")
    u = placeholder(2, np.float32, name="u")
    y = x * 2.0
    assert gradients(y, [x, u])[1] is None
    zero = gradients(y, u, unconnected_gradients="zero")
    assert zero.dtype == np.float32 and zero.shape == (2,) and not zero.any()
    with pytest.raises(ValueError, match="unconnected_gradients"):
        gradients(y, x, unconnected_gradients="nan")


def test_gradients_refuse_mixed_graphs_and_plain_values():
    x = placeholder((), name="x")
    with define("other"):
        a = placeholder((), name="a")
    with pytest.raises(ValueError, match="belongs to graph .other."):
        gradients(x * 2.0, a)
    with pytest.raises(TypeError, match="define-and-run graph"):
        gradients(x * 2.0, 1.0)
    with pytest.raises(ValueError, match="ys is empty"):
        gradients([], x)


def test_gradients_through_where_and_comparisons():
    x = placeholder(4, name="x")
    y = np.sum(np.where(x > 0, x * x, -x))
    g = gradients(y, x)
    feed = np.array([-2.0, 0.5, 1.0, 3.0])
    with Session() as sess:
        got = sess.run(g, {x: feed})
    np.testing.assert_allclose(got, wg.grad(lambda v: np.sum(np.where(v > 0, v * v, -v)))(feed))


# -- properties ---------------------------------------------------------------------
_UNARY = [np.sin, np.tanh, np.exp, lambda v: v * v, lambda v: -v, np.cos,
          lambda v: np.sqrt(v * v + 1.0)]
_BINARY = [np.add, np.subtract, np.multiply, lambda a, b: a / (b * b + 1.0), np.maximum]

_programs = st.lists(
    st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)),
    min_size=1, max_size=12,
)


def _run_program(program, a, b):
    values = [a, b]
    for unary, k, i, j in program:
        if unary:
            values.append(_UNARY[k % len(_UNARY)](values[i % len(values)]))
        else:
            values.append(_BINARY[k % len(_BINARY)](values[i % len(values)],
                                                    values[j % len(values)]))
    return np.sum(values[-1] * np.arange(1.0, 4.0)) + np.sum(a) * 0.0 + np.sum(b) * 0.0


@settings(max_examples=60, deadline=None)
@given(_programs, st.lists(st.floats(-2, 2), min_size=6, max_size=6))
def test_random_programs_match_eager_values_and_gradients(program, numbers):
    with define():
        a = placeholder(3, name="a")
        b = placeholder(3, name="b")
        out = _run_program(program, a, b)
        grads = gradients(out, [a, b])
        av, bv = np.array(numbers[:3]), np.array(numbers[3:])
        with Session() as sess:
            got, got_grads = sess.run([out, grads], {a: av, b: bv})
            again = sess.run(out, {"a": bv, "b": av})
    np.testing.assert_allclose(got, _run_program(program, av, bv), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(again, _run_program(program, bv, av), rtol=1e-12, atol=1e-12)
    eager = wg.grad(lambda x, y: _run_program(program, x, y), argnums=(0, 1))(av, bv)
    for g, e in zip(got_grads, eager):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=0, max_size=3),
       st.sampled_from([np.float32, np.float64, np.int64]))
def test_any_shape_and_dtype_round_trips(shape, dtype):
    with define():
        p = placeholder(tuple(shape), dtype, name="p")
        value = (np.arange(int(np.prod(shape))) % 5).reshape(shape).astype(dtype)
        with Session() as sess:
            out = sess.run(p * 2, {p: value})
    expected = value * 2
    assert np.asarray(out).dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


def test_a_session_graph_differentiates_as_a_traced_graph():
    W = placeholder((3, 4), name="W")
    x = placeholder(4, name="x")
    b = placeholder(3, name="b")
    loss = _mlp_loss(W, x, b)
    with Session() as sess:
        graph = sess.graph_of(loss)
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3)]
    value, grads = wg.grad_graph(graph, argnums=(0, 1, 2))(*values)
    np.testing.assert_allclose(value, _mlp_loss(*values))
    for got, want in zip(grads, wg.grad(_mlp_loss, argnums=(0, 1, 2))(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# -- decompositions ---------------------------------------------------------------------
def test_a_decomposition_is_one_equation_of_a_define_and_run_graph():
    a_value = np.array([[2.0, 1.0], [1.0, 3.0]])
    a = placeholder((2, 2), name="a")
    w, v = np.linalg.eigh(a)
    loss = np.sum(w ** 2) + np.sum(v ** 4)
    (eq,) = [eq for eq in default_graph().equations if len(eq.outs) > 1]
    assert eq.primitive == "eigh" and eq.outs == (w._var, v._var)
    with Session() as sess:
        got_v, got_loss = sess.run([v, loss], {a: a_value})
    np.testing.assert_array_equal(got_v, np.linalg.eigh(a_value)[1])
    assert got_loss == pytest.approx(float(np.sum(np.linalg.eigh(a_value)[0] ** 2)
                                           + np.sum(np.linalg.eigh(a_value)[1] ** 4)))
    assert default_graph().describe(v._var).startswith(f"{v._var.name} (f64[2,2], line ")


def test_a_part_that_joins_an_equation_already_run_is_found_by_a_later_fetch():
    from wengert.core.bind import apply
    from wengert.ops.linalg.eigh import EIGH_VALUES, EIGH_VECTORS

    a_value = np.array([[2.0, 1.0], [1.0, 3.0]])
    a = placeholder((2, 2), name="a")
    w = apply(EIGH_VALUES, a, uplo="L")
    with Session() as sess:
        sess.run(w, {a: a_value})  # the equations so far are indexed
        v = apply(EIGH_VECTORS, a, uplo="L")  # joins the equation of w
        (eq,) = default_graph().equations
        assert eq.outs == (w._var, v._var)
        got = sess.run(v * 2.0, {a: a_value})
    np.testing.assert_array_equal(got, np.linalg.eigh(a_value)[1] * 2.0)
