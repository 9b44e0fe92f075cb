"""wg.compile's arguments: which are traced, which are static (and keys of the cache), and
Python numbers computing as they do eagerly."""

from __future__ import annotations

import dataclasses
import enum
import warnings

import pytest

import numpy as np
import wengert as wg
from wengert.graph.backends.compile import CACHE_LIMIT, RETRACE_WARNING, is_static_leaf
from wengert.graph.keys import static_key


def same(got, want):
    """Equal values of the same Python type (np.float64(3.0) is not 3.0 here)."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want, (got, want)


def test_one_one_point_zero_and_true_are_three_traces_with_eager_dtypes():
    f = lambda x, n: np.arange(3) * n  # noqa: E731
    cf = wg.compile(f)
    for n in (1, 1.0, True, 1, 1.0, True):
        same(cf(np.ones(2), n), f(np.ones(2), n))
    assert len(cf.cache_info()) == 3
    assert [info.calls for info in cf.cache_info()] == [2, 2, 2]


def test_static_keys_tell_apart_what_python_tells_apart():
    assert len({static_key(1), static_key(1.0), static_key(True)}) == 3
    assert static_key(0.0) != static_key(-0.0)
    assert static_key(float("nan")) == static_key(float("nan"))
    assert static_key((1, "a")) == static_key((1, "a")) != static_key((True, "a"))
    with pytest.raises(TypeError):
        static_key({1, 2})


def test_python_ints_are_static_where_numpy_needs_an_int():
    x = np.arange(12.0)
    cases = [
        (lambda x, n: x[:n].sum(), (2, 5)),
        (lambda x, n: x[n], (2, -1)),
        (lambda x, n: sum(x[i] for i in range(n)), (2, 4)),
        (lambda x, n: np.zeros(n) + x[0], (2, 3)),
        (lambda x, d: np.round(x / 7, decimals=d), (1, 2)),
        (lambda x, a: np.sum(x.reshape(3, 4), axis=a), (0, 1)),
        (lambda x, n: x.reshape(n, -1), (2, 3)),
        (lambda x, n: np.pad(x, n), (1, 2)),
        (lambda x, n: np.linspace(0, 1, n) * x[1], (4, 5)),
        (lambda x, k: np.roll(x, k), (2, -3)),
        (lambda x, s: x.reshape(s), ((3, 4), (6, 2))),
    ]
    for f, values in cases:
        cf = wg.compile(f)
        for n in values + values:
            same(cf(x, n), f(x, n))
        assert len(cf.cache_info()) == 2


def test_slices_with_three_static_bounds():
    f = lambda x, i, j, k: x[i:j:k]  # noqa: E731
    cf = wg.compile(f)
    same(cf(np.arange(6.0), 1, 5, 2), f(np.arange(6.0), 1, 5, 2))
    same(cf(np.arange(6.0), 4, None, -1), f(np.arange(6.0), 4, None, -1))


def test_python_int_arithmetic_never_wraps():
    x = np.ones(2)
    for f, n in [(lambda x, n: n ** 70, 2), (lambda x, n: n * 10 ** 20, 3),
                 (lambda x, n: -n // 3, 4), (lambda x, n: n % -3, 4),
                 (lambda x, n: n * n, 2 ** 40), (lambda x, n: 1 << n, 70),
                 (lambda x, n: n ** -1, 2), (lambda x, n: divmod(n, 3), 7),
                 (lambda x, n: n + 0.5, 3), (lambda x, n: n / 2, 3),
                 (lambda x, n: (n.bit_length(), str(n), [0] * n, {n: 1}), 5)]:
        same(wg.compile(f)(x, n), f(x, n))


def test_numpy_integer_arguments_are_traced_and_wrap_as_numpy_does():
    f = wg.compile(lambda n: n * n)
    with np.errstate(over="ignore"):
        same(f(np.int64(2 ** 40)), np.int64(2 ** 40) * np.int64(2 ** 40))
        same(f(np.int64(3)), np.int64(9))
    assert len(f.cache_info()) == 1


def test_numpy_integers_where_numpy_needs_an_int_are_guarded():
    """A traced integer as an axis, a slice bound, a size or a count: the example's
    value, guarded (a new value traces again); not an "escaped" tracer."""
    x = np.arange(6.0)
    cases = [
        (lambda x, n: x[:n], 2, 3),
        (lambda x, n: x[n:], 2, 3),
        (lambda x, d: np.round(x / 7, decimals=d), 1, 2),
        (lambda x, a: np.sum(x.reshape(2, 3), axis=a), 0, 1),
        (lambda x, a: x.reshape(2, 3).sum(axis=a), 0, 1),
        (lambda x, a: np.cumsum(x.reshape(2, 3), axis=a), 0, 1),
        (lambda x, n: x.reshape(n, -1), 2, 3),
        (lambda x, n: np.pad(x, n), 1, 2),
        (lambda x, n: np.repeat(x, n), 1, 2),
        (lambda x, n: np.arange(n) * x[1], 2, 3),
        (lambda x, n: x[[n, 0]], 1, 2),
        (lambda x, n: np.delete(x, n), 1, 2),
        (lambda x, n: np.insert(x, n, 7.0), 1, 2),
        (lambda x, n: np.partition(x[::-1], n), 1, 2),
    ]
    for f, a, b in cases:
        cf = wg.compile(f)
        for v in (a, b, a):
            same(cf(x, np.int64(v)), f(x, np.int64(v)))
    q = wg.compile(lambda x, q: np.percentile(x, q))
    for v in (50.0, 25.0):
        assert q(x, np.float64(v)) == np.percentile(x, v)
    g = wg.compile(lambda x, i, j, k: x[i:j:k])
    same(g(x, np.int64(1), np.int64(5), np.int64(2)), x[1:5:2])
    h = wg.compile(lambda x: x[:np.argmax(x)])
    same(h(np.array([1.0, 3.0, 2.0])), np.array([1.0]))
    same(h(np.array([1.0, 2.0, 3.0])), np.array([1.0, 2.0]))


def test_non_array_arguments_are_static_automatically():
    class Mode(enum.Enum):
        DOUBLE = 2
        TRIPLE = 3

    @dataclasses.dataclass(frozen=True)
    class Config:
        scale: int = 2

    x = np.arange(3.0)
    for f, v in [(lambda x, s: x * 2 if s == "a" else x, "a"),
                 (lambda x, s: x if s is None else x * 2, None),
                 (lambda x, e: x * e.value, Mode.TRIPLE),
                 (lambda x, c: x * c.scale, Config()),
                 (lambda x, fn: fn(x), np.sin),
                 (lambda x, s: x[s], slice(1, 3)),
                 (lambda x, r: x[r.start:r.stop], range(1, 3)),
                 (lambda x, p: x * p["n"] + p["w"], {"n": 3, "w": np.ones(3)})]:
        same(wg.compile(f)(x, v), f(x, v))
    assert all(map(is_static_leaf, (3, True, "a", None, Mode.DOUBLE, Config(), np.sin)))
    assert not any(map(is_static_leaf, (3.0, 1j, np.int64(3), np.ones(2), wg.tensor(1.0))))


def test_an_unhashable_non_array_argument_says_why_and_what_to_do():
    with pytest.raises(TypeError, match="hashable") as e:
        wg.compile(lambda x, s: x)(np.ones(2), {1, 2})
    assert "argument s" in str(e.value)


def test_a_trace_shows_its_static_values():
    f = wg.compile(lambda x, n, mode: x[:n] * (2.0 if mode == "double" else 1.0))
    f(np.ones(4), 2, "double")
    assert f.cache_info()[0].signature == "f(x: f64[4]) with n=2, mode='double'"
    assert f.graph_for(np.ones(4), 2, "double") is f.cache_info()[0].graph


def test_the_retrace_warning_names_the_static_argument_that_changes():
    f = wg.compile(lambda x, n: x * n)
    with pytest.warns(RuntimeWarning, match=r"static arguments change.*n \(0, 1, 2, 3, \.\.\.\)"):
        for n in range(RETRACE_WARNING):
            f(np.ones(2), n)


def test_the_cache_is_bounded_and_then_runs_eagerly():
    calls = []

    def f(x, n):
        calls.append(n)
        return x * n

    cf = wg.compile(f, cache_limit=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(3):
            same(cf(np.ones(2), n), np.ones(2) * n)
    with pytest.warns(RuntimeWarning, match="cache_limit"):
        same(cf(np.ones(2), 7), np.ones(2) * 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once
        same(cf(np.ones(2), 8), np.ones(2) * 8.0)
        same(cf(np.ones(2), 1), np.ones(2))  # a cached trace still runs compiled
    assert len(cf.cache_info()) == 3 and calls == [0, 1, 2, 7, 8]
    assert CACHE_LIMIT >= RETRACE_WARNING
    with pytest.raises(ValueError, match="cache_limit"):
        wg.compile(f, cache_limit=0)
    cf.clear_cache()
    same(cf(np.ones(2), 9), np.ones(2) * 9)
    assert len(cf.cache_info()) == 1


def test_python_floats_compute_as_python_floats():
    f = lambda x, a: (a * 2, a + 1, round(a), round(a, 1), round(x[0]))  # noqa: E731
    cf = wg.compile(f)
    for a in (1.26, 2.5, -0.5):
        got, want = cf(np.array([2.5]), a), f(np.array([2.5]), a)
        for g, w in zip(got, want):
            same(g, w)


def test_numpy_functions_of_python_numbers_give_numpy_scalars_as_eagerly():
    # np.tanh of a Python float is NumPy's float64 (math.tanh differs in the last bit
    # at x); operators and attributes of Python numbers give Python numbers.
    x = -0.39631458987390566
    cases = [
        lambda x: np.tanh(x), lambda x: np.tanh(x) * 2.0, lambda x: np.multiply(x, 2.0),
        lambda x: (np.sinh(x), x * 2.0, -x, abs(x)), lambda x: x > 0.0,
        lambda x: (x == 1.0, x <= 0.0, (x > 0.0) * 2.0),
        # float64 keeps a float32 from promoting it (a Python float would not)
        lambda x: np.nextafter(np.heaviside(x, 0.5), np.float32(0.5)),
        # beside a NumPy value a Python float is weak: float32
        lambda x: (np.hypot(x, np.float32(0.5)), np.add(x, np.ones(2, np.float32))),
    ]
    for f in cases:
        cf = wg.compile(f)
        for a in (x, 1.0, 0.0):
            got, want = cf(a), f(a)
            for g, w in zip(got if isinstance(want, tuple) else [got],
                            want if isinstance(want, tuple) else [want]):
                same(g, w)
                assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def test_python_complex_numbers_compute_as_python_complex_numbers():
    z = 3.0 + 4.0j
    f = lambda z: (z * 2, abs(z), z.real, z.imag, z.conjugate(), z + 1.0, np.abs(z))  # noqa: E731
    cf = wg.compile(f)
    for a in (z, -1.5j, 0j):
        for g, w in zip(cf(a), f(a)):
            same(g, w)


def test_round_of_an_array_raises_as_eagerly_and_of_a_number_rounds():
    for x in (np.array(3.14159), np.array([3.14159]), np.array(3, np.int32)):
        for f in (lambda x: round(x), lambda x: round(x, 2)):
            with pytest.raises(TypeError, match="doesn't define __round__"):
                f(x)
            with pytest.raises(TypeError, match="doesn't define __round__"):
                wg.compile(f)(x)
    f = lambda x, y: (round(x.sum(), 2), round(y[0]), round(np.float32(1.5) * y[0], 1))  # noqa: E731
    args = (np.array([1.23456, 2.0]), np.array([2.5, 1.0]))
    for g, w in zip(wg.compile(f)(*args), f(*args)):
        same(g, w)


def test_keyword_only_arguments_and_var_keywords():
    def f(x, y=2.0, *, z=3.0, n=1):
        return x[:n] * y + z

    cf = wg.compile(f)
    x = np.arange(3.0)
    for kwargs in ({}, {"z": 1.0}, {"z": np.ones(2), "n": 2}, {"y": np.ones(3), "n": 3},
                   {"n": 2}, {"z": 5.0}):
        same(cf(x, **kwargs), f(x, **kwargs))
    assert [i.signature for i in cf.cache_info()] == [
        "f(x: f64[3])", "f(x: f64[3], z: f64[])", "f(x: f64[3], z: f64[2]) with n=2",
        "f(x: f64[3], y: f64[3]) with n=3", "f(x: f64[3]) with n=2"]

    def g(*args, **kwargs):
        return sum(args) + sum(v * 2.0 for v in kwargs.values())

    cg = wg.compile(g)
    same(cg(x, 1.0, a=x, b=2.0), g(x, 1.0, a=x, b=2.0))
    same(cg(x, 1.0, b=x, a=2.0), g(x, 1.0, b=x, a=2.0))
    same(cg(x, a=x), g(x, a=x))
    same(wg.grad(lambda x: cf(x, z=x[1]).sum())(x), np.array([2.0, 1.0, 0.0]))
    # a dict passed by position is another call than keywords
    d = wg.compile(lambda x, *args, **kwargs: x + (args[0]["z"] if args else kwargs["z"]))
    same(d(x, {"z": 1.0}), x + 1.0)
    same(d(x, z=2.0), x + 2.0)


def test_tensors_with_python_int_arguments_differentiate():
    f = wg.compile(lambda x, n: np.sum(x[:n] ** 2))
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    f(x, 2).backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0, 0.0])
    np.testing.assert_array_equal(wg.grad(f)(np.array([1.0, 2.0, 3.0]), 1), [2.0, 0.0, 0.0])


def test_a_returned_object_that_would_be_shared_between_calls_is_refused():
    for f, what in ((lambda x: (x * k for k in range(2)), "generator"),
                    (lambda x: (x, {1, 2}), "set"), (lambda x: [x, bytearray(2)], "bytearray")):
        with pytest.raises(wg.graph.TraceError, match=what):
            wg.compile(f)(np.ones(2))
    cf = wg.compile(lambda x: {"n": len(x), "s": "hi", "t": np.float64, "l": [1, 2]})
    first = cf(np.ones(1))
    first["l"].append(3)  # containers are new on each call
    assert cf(np.ones(1)) == {"n": 1, "s": "hi", "t": np.float64, "l": [1, 2]}


def test_a_rebound_attribute_of_a_static_object_traces_again():
    class Model:
        def __init__(self):
            self.lr = 0.1
            self.w = np.ones(2)
            self.name = "m"

        @wg.compile
        def step(self, x):
            return x * self.lr * self.w

    m = Model()
    x = np.ones(2)
    same(m.step(x), x * 0.1)
    m.lr = 0.01  # eagerly read again on each call: so here
    same(m.step(x), x * 0.01)
    m.w = np.full(2, 3.0)
    same(m.step(x), x * 0.03)
    same(m.step(x), x * 0.03)
    assert len(Model.step.cache_info()) == 3
    m.w[:] = 5.0  # changed in place: read as traced, as a closure's array (jax.jit's rule)
    same(m.step(x), x * 0.03)
    with pytest.warns(RuntimeWarning, match="self's attributes lr"):
        for k in range(RETRACE_WARNING + 1):
            m.lr = float(k)
            m.step(x)
