"""wg.compile: a trace per signature, guards per branch, and every transform around it."""

from __future__ import annotations

import threading
import warnings

import pytest

import numpy as np
import wengert as wg
from wengert.graph import TraceError
from wengert.graph.backends.compile import RETRACE_WARNING


def branchy(x):
    if x > 0:
        return x * 2.0
    return -x * 3.0


def test_each_branch_gets_its_own_trace_and_is_never_replayed_wrongly():
    f = wg.compile(branchy)
    for x in (1.0, 2.0, -1.0, -2.0, 3.0, 0.0):
        assert f(x) == branchy(x)
    infos = f.cache_info()
    assert len(infos) == 2
    assert sorted(info.calls for info in infos) == [3, 3]
    assert all(len(info.graph.guards) == 1 for info in infos)


def test_a_new_shape_dtype_or_kind_of_number_traces_again():
    f = wg.compile(lambda x: np.sum(x * x))
    f(np.ones(3))
    f(np.ones(3))
    f(np.ones(4))
    f(np.ones(3, np.float32))
    f(2.0)
    assert [info.signature for info in f.cache_info()] == [
        "f(x: f64[3])", "f(x: f64[4])", "f(x: f32[3])", "f(x: f64[])"]
    assert f(np.ones(3, np.float32)).dtype == np.float32


def test_static_arguments_and_keywords():
    def layers(x, n, scale=1.0):
        for _ in range(n):
            x = np.tanh(x) * scale
        return x

    f = wg.compile(layers, static_argnums=1)
    assert f(0.5, 3) == pytest.approx(layers(0.5, 3))
    assert f(0.5, 2, scale=2.0) == pytest.approx(layers(0.5, 2, 2.0))
    assert f(x=0.5, n=2, scale=2.0) == pytest.approx(layers(0.5, 2, 2.0))
    assert len(f.cache_info()) == 2
    with pytest.raises(TypeError, match="not hashable"):
        wg.compile(lambda x, n: x, static_argnums=1)(1.0, [1, 2])


def test_pytrees_in_and_out():
    f = wg.compile(lambda p: {"y": p["w"] * p["b"][0], "z": (p["b"][1] + 1.0,)})
    out = f({"w": np.ones(2), "b": (2.0, 3.0)})
    np.testing.assert_array_equal(out["y"], [2.0, 2.0])
    assert out["z"] == (4.0,)


def test_compile_of_grad_and_jvp_and_grad_of_compile_agree_with_eager():
    f = lambda x: np.sum(np.tanh(x) ** 2 * np.where(x > 0, x, 0.3))  # noqa: E731
    x = np.array([0.4, -1.2, 2.0])
    want = wg.grad(f)(x)
    np.testing.assert_allclose(wg.compile(wg.grad(f))(x), want, rtol=1e-13)
    np.testing.assert_allclose(wg.grad(wg.compile(f))(x), want, rtol=1e-13)
    v = np.array([1.0, 0.5, -1.0])
    cj = wg.compile(lambda x, v: wg.jvp(f, (x,), (v,)))
    assert cj(x, v)[1] == pytest.approx(wg.jvp(f, (x,), (v,))[1])
    assert wg.jvp(wg.compile(f), (x,), (v,))[1] == pytest.approx(wg.jvp(f, (x,), (v,))[1])
    np.testing.assert_allclose(wg.hessian(wg.compile(f))(x), wg.hessian(f)(x), rtol=1e-12)
    np.testing.assert_allclose(wg.compile(wg.hessian(f))(x), wg.hessian(f)(x), rtol=1e-12)


def test_grad_of_a_compiled_branchy_function_takes_the_right_branch():
    f = wg.compile(branchy)
    assert wg.grad(f)(2.0) == 2.0 and wg.grad(f)(-2.0) == -3.0
    assert wg.compile(wg.grad(branchy))(-5.0) == -3.0


def test_compile_inside_a_trace_hands_its_guards_to_the_outer_graph():
    inner = wg.compile(branchy)
    g = wg.trace(lambda x: inner(x) + 1.0, 1.0)
    assert len(g.guards) == 1
    assert g(4.0) == 9.0
    with pytest.raises(wg.graph.GuardError):
        g(-4.0)


def test_tensors_through_a_compiled_function_record_on_their_tape():
    f = wg.compile(lambda x: np.sum(np.sin(x) * x))
    x = wg.tensor([0.5, 1.5], requires_grad=True)
    f(x).backward()
    np.testing.assert_allclose(x.grad, np.cos([0.5, 1.5]) * [0.5, 1.5] + np.sin([0.5, 1.5]))


def test_a_closed_over_tensor_that_requires_grad_is_refused():
    w = wg.tensor(2.0, requires_grad=True)
    with pytest.raises(TraceError, match="derivative would be lost"):
        wg.compile(lambda x: x * w)(3.0)


def test_an_exception_in_the_function_caches_nothing_and_the_next_call_traces():
    calls = []

    def f(x):
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("first call")
        return x + 1.0

    cf = wg.compile(f)
    with pytest.raises(ZeroDivisionError):
        cf(1.0)
    assert cf.cache_info() == []
    assert cf(1.0) == 2.0


def test_endless_retracing_warns_once_naming_the_line():
    f = wg.compile(lambda x: x * float(x))
    with pytest.warns(RuntimeWarning, match=r"traced \d+ times.*float\(x\)"):
        for k in range(RETRACE_WARNING + 2):
            assert f(float(k)) == float(k) ** 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(100.0)  # no second warning


def test_threads_share_one_compiled_function():
    f = wg.compile(lambda x: np.sum(np.sin(x)))
    errors, results = [], []

    def work(k):
        try:
            results.append((k, f(np.full(3, float(k)))))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, y in results:
        assert y == pytest.approx(3 * np.sin(k))


def test_scalar_w1_like_chain_compiles_to_float_code():
    def chain(x):
        y = x
        for _ in range(200):
            y = np.tanh(np.sin(y) * 0.9 + x) ** 1.5
        return y

    cf = wg.compile(wg.grad(chain))
    assert cf(0.3) == pytest.approx(wg.grad(chain)(0.3), rel=1e-12)
    assert isinstance(cf(0.3), float)
    source = cf.graph_for(0.3).to_source()
    assert "from math import" in source


def test_repr_and_cache_info_text_are_deterministic():
    f = wg.compile(branchy)
    f(1.0)
    f(-1.0)
    assert repr(f) == "<compiled branchy: 2 trace(s)>"
    assert [repr(i) for i in f.cache_info()] == [
        "<trace branchy(x: f64[]): 2 equations, 1 guard, 1 call>",
        "<trace branchy(x: f64[]): 3 equations, 1 guard, 1 call>"]
    assert "if x > 0" in f.cache_info()[0].guards[0]


def test_int_of_a_traced_float_guards_on_the_int_it_gives():
    f = wg.compile(lambda x: x * int(x))
    for x in (2.7, 2.2, 3.5, -0.5, 0.9, 2.0):
        assert f(x) == x * int(x)
    assert len(f.cache_info()) == 3  # int(x) gave 2, 3 and 0
    g = wg.compile(lambda x: x * int(x[0]))
    np.testing.assert_array_equal(g(np.array([1.5, 4.0])), np.array([1.5, 4.0]))
    np.testing.assert_array_equal(g(np.array([1.7, 4.0])), np.array([1.7, 4.0]))
    with pytest.raises(ValueError, match="NaN"):  # as int(nan) eagerly
        f(float("nan"))


def _within(seconds, fun):
    """``fun()``'s result, run in a thread that must finish within ``seconds``."""
    out = []
    t = threading.Thread(target=lambda: out.append(fun()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "did not finish (a deadlock)"
    return out[0]


def test_a_compiled_function_calling_itself_while_traced():
    @wg.compile
    def power(x, n):
        return x if n == 0 else x * power(x, n - 1)

    assert _within(60, lambda: power(np.full(2, 3.0), 3)).tolist() == [81.0, 81.0]
    assert _within(60, lambda: power(2.0, 2)) == 8.0

    @wg.compile
    def countdown(x):  # recursion on a traced value: each depth a trace, guarded
        return x if x <= 0 else countdown(x - 1.0) + 1.0

    assert _within(60, lambda: countdown(2.0)) == 2.0
    assert _within(60, lambda: countdown(-1.0)) == -1.0


def _outcome(fn, *args):
    """What a call gives: its value (or the exception's type) and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(*args)
        except Exception as e:  # noqa: BLE001 - compared by type
            value = type(e)
    return value, sorted(str(w.message) for w in caught)


def _same_outcomes(f, calls):
    cf = wg.compile(f)
    for args in calls:
        (got, warned), (want, want_warned) = _outcome(cf, *args), _outcome(f, *args)
        if isinstance(want, type):
            assert got is want, (args, got, want)
        else:
            np.testing.assert_array_equal(got, want)
        assert warned == want_warned, (args, warned, want_warned)
    return cf


def test_np_errstate_set_inside_the_function_holds_in_compiled_code():
    def quiet(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.log(x) / x
        return y * 2.0  # warns as the caller's errstate says

    def strict(x):
        with np.errstate(divide="raise"):
            return 1.0 / x

    def silenced(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.log(x)

    zeros, ones = np.zeros(2), np.ones(2)
    for f in (quiet, strict, silenced):
        _same_outcomes(f, [(ones,), (zeros,), (ones,), (zeros,)])
    assert "np.errstate(divide='ignore'" in wg.compile(quiet).graph_for(ones).to_source()
    with np.errstate(all="raise"):  # the caller's errstate still counts outside the block
        _same_outcomes(quiet, [(ones,), (np.full(2, np.inf),)])
    for x in (ones, np.array([0.0, 1.0])):  # differentiated: run op by op, as traced
        got, warned = _outcome(wg.grad(wg.compile(lambda x: np.sum(quiet(x)))), x)
        want, want_warned = _outcome(wg.grad(lambda x: np.sum(quiet(x))), x)
        np.testing.assert_array_equal(got, want)
        assert warned == want_warned


def test_an_error_the_function_catches_is_part_of_the_trace():
    def safe_inverse(x):
        with np.errstate(divide="raise"):
            try:
                return 1.0 / x
            except FloatingPointError:
                return x

    def factor(a):
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            return np.zeros_like(a)

    def whole(x):
        try:
            return x * int(x)
        except ValueError:  # int(nan)
            return x

    for f, good, bad in ((safe_inverse, 2.0 * np.ones(2), np.zeros(2)),
                         (factor, np.eye(2), -np.eye(2)), (whole, 2.5, float("nan"))):
        _same_outcomes(f, [(good,), (bad,), (good,), (bad,)])  # traced where it works
        cf = _same_outcomes(f, [(bad,), (good,), (bad,), (good,)])  # where it raises
        assert len(cf.cache_info()) == 2
    cf = wg.compile(lambda a: np.linalg.cholesky(a))  # not caught: raised, nothing kept
    cf(np.eye(2))
    with pytest.raises(np.linalg.LinAlgError):
        cf(-np.eye(2))
    assert len(cf.cache_info()) == 1


def test_a_call_that_traces_warns_once_as_eagerly():
    def f(x):
        return np.log(x), np.var(x, ddof=1), 1.0 / x

    cf = wg.compile(f)
    for x in (np.zeros(1), np.zeros(1), np.ones(1), np.full(1, -1.0)):
        (got, warned), (want, want_warned) = _outcome(cf, x), _outcome(f, x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert type(g) is type(w)
        assert warned == want_warned
    out = cf(np.zeros(1))  # arrays the caller owns, also from the call that traced
    assert out[0].flags.writeable and not np.shares_memory(out[0], cf(np.zeros(1))[0])


def test_differentiating_a_compiled_function_warns_once_as_eagerly():
    def f(x):
        return np.sum(np.log1p(x) + np.sqrt(x))

    x = np.array([-2.0, 0.5])
    cf = wg.grad(wg.compile(f))
    for _ in range(2):
        (got, warned), (want, want_warned) = _outcome(cf, x), _outcome(wg.grad(f), x)
        np.testing.assert_array_equal(got, want)
        assert warned == want_warned


def test_np_errstate_inside_the_function_sets_only_what_it_names():
    def f(x):
        with np.errstate(divide="ignore"):
            y = 1.0 / x
        return y * np.log(x - 1.0)  # invalid: as the caller says

    cf = _same_outcomes(f, [(np.zeros(2),), (np.zeros(2),)])
    with np.errstate(invalid="raise"):  # only divide is the function's own
        with pytest.raises(FloatingPointError):
            f(np.zeros(2))
        with pytest.raises(FloatingPointError):
            cf(np.zeros(2))
    assert "np.errstate(divide='ignore')" in cf.graph_for(np.zeros(2)).to_source()



def test_a_compiled_function_traced_inside_another_keeps_the_outer_ones_warnings():
    inner = wg.compile(lambda x: np.log(x))
    outer = wg.compile(lambda x: inner(x) * 2.0)
    outer(np.zeros(1))
    assert "errstate" not in outer.graph_for(np.zeros(1)).to_source()
    assert _outcome(outer, np.zeros(1))[1] == ["divide by zero encountered in log"]
