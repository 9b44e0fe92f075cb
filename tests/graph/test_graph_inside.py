"""What a traced function may do inside: branch on arguments it does not differentiate,
make tensors, tapes and Variables, hash values, compute shapes from values."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.graph import GuardError, TraceError


def pick(a, b):
    if a > b:
        return np.sum(b ** 2)
    return np.sum(b ** 3)


@pytest.mark.parametrize("a", [0.7, np.array(0.7), np.float32(0.7)])
def test_a_branch_on_an_argument_not_differentiated_is_guarded_under_every_transform(a):
    transforms = {
        "grad": lambda f: wg.grad(f, argnums=1),
        "value_and_grad": lambda f: wg.value_and_grad(f, argnums=1),
        "grad of grad": lambda f: wg.grad(wg.grad(f, argnums=1), argnums=1),
        "hessian": lambda f: wg.hessian(f, argnums=1),
        "jacfwd": lambda f: wg.jacfwd(f, argnums=1),
        "jacrev": lambda f: wg.jacrev(f, argnums=1),
        "jvp": lambda f: lambda a, b: wg.jvp(lambda bb: f(a, bb), (b,), (1.0,)),
        "hvp": lambda f: lambda a, b: wg.hvp(lambda bb: f(a, bb), b, 1.0),
    }
    for name, t in transforms.items():
        eager, compiled = t(pick), wg.compile(t(pick))
        for b in (0.5, 0.9, 0.5):  # both branches, then the first again
            np.testing.assert_allclose(compiled(a, b), eager(a, b), rtol=1e-12, err_msg=name)
        assert len(compiled.cache_info()) == 2, name


def test_a_tensor_that_requires_grad_made_inside_backpropagates_inside():
    def f(x):
        t = wg.tensor(np.ones(2), requires_grad=True)
        y = np.sum(np.sin(t * x))
        y.backward()
        return t.grad

    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(wg.compile(f)(x), f(x), rtol=1e-15)
    np.testing.assert_allclose(wg.compile(f)(2 * x), f(2 * x), rtol=1e-15)


def test_a_tensor_of_an_argument_backpropagates_inside():
    def f(x):
        t = wg.tensor(x, requires_grad=True)
        (t ** 2).sum().backward()
        return t.grad, float(t[0])

    x = np.array([1.0, 3.0])
    got, want = wg.compile(f)(x), f(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_a_gradient_tape_and_variables_made_inside_work():
    def f(x):
        v = wg.Variable(np.ones(2))
        with wg.GradientTape(persistent=True) as tape:
            y = np.sum(v * x * v)
            z = y * 2.0
        return tape.gradient(y, v), tape.gradient(z, v)

    x = np.array([0.0, 1.5])
    for got, want in zip(wg.compile(f)(x), f(x)):
        np.testing.assert_array_equal(got, want)

    def g(x):
        with wg.GradientTape() as tape:
            t = wg.tensor(x)
            tape.watch(t)
            y = np.sum(t ** 3)
        return tape.gradient(y, t)

    np.testing.assert_array_equal(wg.compile(g)(x), g(x))


def test_a_variable_from_outside_watched_by_a_tape_inside_is_refused_not_lost():
    v = wg.Variable(np.ones(2))

    def f(x):
        with wg.GradientTape() as tape:
            y = np.sum(v * x)
        return tape.gradient(y, v)

    with pytest.raises(TraceError, match="Variable"):
        wg.compile(f)(np.arange(2.0))


def test_returning_a_tensor_that_requires_grad_made_inside_says_what_is_wrong():
    def f(x):
        t = wg.tensor(np.ones(2), requires_grad=True)
        return np.sum(x * t)

    with pytest.raises(TraceError, match="made inside it") as e:
        wg.compile(f)(np.ones(2))
    assert "closure" not in str(e.value)
    assert wg.compile(lambda x: f(x).detach())(np.ones(2) * 3) == 6.0


def test_a_tensor_made_inside_and_used_after_the_trace_is_refused():
    kept = []

    def f(x):
        kept.append(wg.tensor(np.ones(2), requires_grad=True))
        return x * 1.0

    wg.compile(f)(np.ones(2))
    u = wg.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="after the trace ended"):
        kept[0] * u


def test_traced_values_are_unhashable_as_in_jax():
    for f in (lambda x: {x: 1}, lambda x: x in {1, 2}, lambda x: hash(x),
              lambda x: len({x[0], x[1]})):
        with pytest.raises(TypeError, match="unhashable"):
            wg.compile(f)(np.arange(4.0))
    # placeholders stay feed-dict keys
    with wg.graph.define() as graph:
        p = wg.graph.placeholder((), name="p")
        y = p * 2.0
    with wg.Session(graph) as sess:
        assert sess.run(y, {p: 3.0}) == 6.0


def test_masks_from_constants_and_histograms_of_constant_samples():
    samples = np.array([0.1, 0.5, 0.7])
    cases = [
        lambda w: np.histogram(samples, bins=2, weights=w)[0],
        lambda w: np.bincount(np.array([0, 1, 1, 2]), weights=w),
        lambda w: w[np.unique(np.array([0, 1, 1, 2]))],
        lambda w: w[np.array([1.0, 2.0, 3.0, 4.0]) > 2],
        lambda w: np.sum(w[np.arange(4) > 1]),
    ]
    for f in cases:
        w = np.arange(1.0, 5.0)[:3] if f is cases[0] else np.arange(1.0, 5.0)
        np.testing.assert_array_equal(wg.compile(f)(w), f(w))
    g = lambda w: np.sum(np.histogram(samples, bins=2, weights=w)[0] ** 2)  # noqa: E731
    np.testing.assert_array_equal(wg.compile(wg.grad(g))(np.ones(3)), wg.grad(g)(np.ones(3)))


def test_histograms_of_traced_samples():
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    fs = [lambda a, w: np.histogram(a, bins=3)[0],
          lambda a, w: np.histogram(a, bins=3, weights=w)[0],
          lambda a, w: np.histogram(a, bins="auto")[1],
          lambda a, w: np.histogram(a, bins=3, density=True)[0]]
    for f in fs:
        cf = wg.compile(f)
        for a in (np.array([0.1, 0.5, 0.7, 1.0, 0.2]), np.array([3.0, 0.0, 1.0, 1.0, 1.0]),
                  np.linspace(0.0, 1.0, 40) ** 3):
            np.testing.assert_allclose(cf(a, w[:1].repeat(len(a))), f(a, w[:1].repeat(len(a))),
                                       rtol=1e-15)


def test_a_numpy_call_whose_shape_depends_on_the_values_is_guarded_on_that_shape():
    cases = [lambda x: np.flatnonzero(x > 1) * 2 + 1,
             lambda x: np.sum(np.extract(x > 1, x) ** 2),
             lambda x: np.argwhere(x > 1).shape[0] * x]
    for f in cases:
        cf = wg.compile(f)
        for x in (np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 3.0]),
                  np.array([3.0, 2.0, 3.0])):
            np.testing.assert_array_equal(cf(x), f(x))
    g = wg.trace(lambda x: np.flatnonzero(x > 1) + 0, np.array([1.0, 2.0, 3.0]))
    assert [guard.how for guard in g.guards] == ["shape"]
    with pytest.raises(GuardError, match="shape"):
        g(np.array([1.0, 1.0, 3.0]))


def test_a_tensor_of_an_argument_is_returned_as_the_traced_value_not_a_constant():
    f = lambda x: np.sum(wg.tensor(x) ** 2)  # noqa: E731
    cf = wg.compile(f)
    assert cf(np.arange(2.0)) == 1.0 and cf(np.arange(2.0) + 1) == 5.0
    assert wg.trace(f, np.arange(2.0)).outputs[0].name == "t2"


def test_a_tensor_of_an_argument_cuts_or_refuses_as_eagerly_when_differentiated():
    f = lambda x: np.sum(wg.tensor(x) ** 2) + np.sum(x)  # noqa: E731

    def g(x):
        t = wg.tensor(x, requires_grad=True)
        (t ** 2).sum().backward()
        return np.sum(t.grad)

    x = np.arange(2.0)
    for h in (f, g):
        with pytest.raises(TypeError, match="would cut it"):
            wg.grad(h)(x)
        with pytest.raises(TypeError, match="would cut it"):
            wg.grad(wg.compile(h))(x)
    v = np.ones(2)
    np.testing.assert_array_equal(wg.jvp(wg.compile(f), (x,), (v,)), wg.jvp(f, (x,), (v,)))
    t = wg.tensor(x, requires_grad=True)
    wg.compile(f)(t).backward()
    np.testing.assert_array_equal(t.grad, [1.0, 1.0])  # the copy is cut, as eagerly


def test_a_variable_made_inside_is_assigned_traced_values_and_read_back():
    def f(x):
        v = wg.Variable(np.ones(2))
        v.assign_add(x)
        with wg.GradientTape() as tape:
            y = np.sum(v * v)
        return v.numpy() * 1.0, tape.gradient(y, v)

    cf = wg.compile(f)
    for x in (np.arange(2.0), np.array([3.0, -1.0])):
        for got, want in zip(cf(x), f(x)):
            np.testing.assert_array_equal(got, want)
    outside = wg.Variable(np.ones(2))
    with pytest.raises(TypeError, match="made outside the traced function"):
        wg.compile(lambda x: outside.assign(x) and x)(np.arange(2.0))


def test_numpy_functions_that_write_into_a_traced_value_are_recorded_as_eagerly():
    def add_at(x):
        y = x * 1.0
        np.add.at(y, [0, 0], 1.0)
        return y

    def copy_into(x):
        y = x * 1.0
        np.copyto(y, x * 3.0)
        return y

    for f in (add_at, copy_into):
        x = np.arange(3.0)
        np.testing.assert_array_equal(wg.compile(f)(x), f(x))
        loss = lambda x: np.sum(f(x) ** 2)  # noqa: B023, E731
        np.testing.assert_array_equal(wg.compile(wg.grad(loss))(x), wg.grad(loss)(x))


def test_multidimensional_histograms_of_traced_samples_are_refused_and_of_constants_trace():
    s = np.array([[0.1, 0.2], [0.6, 0.9], [0.7, 0.1]])
    with pytest.raises(TypeError, match="inside wg.compile"):
        wg.compile(lambda s: np.histogramdd(s, bins=2)[0])(s)
    f = lambda w: np.histogramdd(s, bins=2, weights=w)[0]  # noqa: E731
    np.testing.assert_array_equal(wg.compile(f)(np.array([1.0, 2.0, 3.0])),
                                  f(np.array([1.0, 2.0, 3.0])))


def test_numpy_writes_under_no_grad_inside_a_compiled_function_are_recorded_or_refused():
    def f(x):
        y = x * 1.0
        with wg.no_grad():
            np.copyto(y, x * 3.0)
            np.add.at(y, [0, 0], 1.0)
        return y

    x = np.arange(3.0)
    np.testing.assert_array_equal(wg.compile(f)(x), f(x))

    def g(x):
        y = x * 1.0
        np.multiply.at(y, [1], 2.0)
        return y

    with pytest.raises(TypeError, match="no rule that records it"):
        wg.compile(g)(x)
