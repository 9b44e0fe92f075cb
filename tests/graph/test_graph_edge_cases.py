"""Static graphs (``wengert.graph``) at their edges: compiled and traced code agrees with
eager code where it is easy to get wrong.

The first part states one behaviour per test (each docstring says what holds, then what
it rules out), grouped by what would go wrong otherwise: values and gradients, results
shared or stale between calls, crashes and leaks, messages. The second part covers
control flow on traced values, pytrees, threads, sessions, dtypes and JAX export.
"""

from __future__ import annotations

import gc
import math
import threading
import warnings
import weakref
from collections import namedtuple
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.graph import GuardError, TraceError, define, gradients, placeholder
from wengert.graph.passes.fuse import fuse
from wengert.graph.passes.memory import plan_memory
from wengert.interop.dispatch import tables


def _symmetrize(a):
    c = np.sin(a)
    return (c + c.T) * 0.5


# =====================================================================================
# Part 1: what compiled and traced code must not get wrong
# =====================================================================================

# -- values and gradients --------------------------------------------------------------


def test_compiled_symmetrization_of_a_large_matrix_matches_eager():
    """The compiled function equals eager NumPy (a kernel must not write into a buffer that
    another of its inputs views).

    What it rules out: ``wg.compile(lambda a: (np.sin(a) + np.sin(a).T) * 0.5)`` on a
    300x300 matrix returns a result that is not even symmetric (errors of 0.5).

    ``fuse`` makes a chunked kernel ``fused_add_mul(t0, t1)`` (t1 = t0.T, a view) and
    ``plan_memory`` lets it write into ``out=t0``: chunk after chunk overwrites t0 while
    later chunks still read t1, the transposed view of the same buffer."""
    a = np.random.default_rng(0).normal(size=(300, 300))
    np.testing.assert_allclose(wg.compile(_symmetrize)(a), _symmetrize(a), rtol=1e-12,
                               atol=1e-12)


def test_plan_memory_after_fuse_never_writes_into_a_buffer_read_through_a_view():
    """Every pass, and every composition of passes, keeps the values.

    What it rules out: the same case through the passes themselves, with a reversed view
    (``c[::-1]``): ``plan_memory(fuse(g))`` differs from ``g`` on a 70x1000 array."""
    def f(y):
        c = np.cos(y)
        return np.minimum(c, np.minimum(c[::-1], np.tanh(c)))

    y = np.random.default_rng(1).normal(size=(70, 1000))
    g = wg.trace(f, y)
    np.testing.assert_allclose(plan_memory(fuse(g))(y), f(y), rtol=1e-12, atol=1e-12)


def test_grad_of_compiled_float_conversion_refuses_as_eager():
    """Raise the eager TypeError (or give the true gradient), never a silent 1.0. The same
    holds for ``wg.jvp(compile(f))`` and ``wg.grad(wg.trace(f, x))``.

    What it rules out: ``wg.grad(wg.compile(f))`` for ``f(x) = math.sin(x) + x`` returns
    1.0: the trace turned ``math.sin(x)`` into a constant (``float(x)`` is a guard), and
    running the traced graph on tensors differentiates only ``+ x``. Eager
    ``wg.grad(f)`` refuses with a TypeError (float() would drop the derivative); the
    true gradient is cos(0.5) + 1."""
    f = wg.compile(lambda x: math.sin(x) + x)
    try:
        g = wg.grad(f)(0.5)
    except TypeError:
        return
    assert g == pytest.approx(math.cos(0.5) + 1.0)


def test_stop_gradient_is_kept_when_traced():
    """A ``stop_gradient`` equation (identity forward, zero derivative), as JAX's
    primitive.

    What it rules out: ``wg.stop_gradient`` records nothing in a trace (the listing of
    ``sum(stop_gradient(x) * x)`` is ``multiply(x, x); sum``), so
    ``wg.grad(wg.compile(f))``, ``wg.jvp(wg.compile(f))`` and ``wg.grad_graph``
    differentiate through it: 2x instead of x; a straight-through estimator ``x +
    stop_gradient(round(x) - x)`` gets zero gradients. ``wg.compile(wg.grad(f))`` is
    right."""
    x = np.array([0.5, -1.0, 2.0])

    def f(x):
        return np.sum(wg.stop_gradient(x) * x)

    np.testing.assert_allclose(wg.grad(f)(x), x)
    np.testing.assert_allclose(wg.grad(wg.compile(f))(x), x)


def test_no_grad_block_is_kept_when_traced():
    """The same gradient as eager ``wg.grad(f)``.

    What it rules out: values computed inside ``with wg.no_grad():`` carry no gradient
    eagerly, but the trace records them as ordinary equations, so
    ``wg.grad(wg.compile(f))`` and ``wg.grad_graph(wg.trace(f, x))`` differentiate
    through the block (2x instead of x)."""
    x = np.array([0.5, -1.0, 2.0])

    def f(x):
        with wg.no_grad():
            c = x * 2.0
        return np.sum(c * x)

    np.testing.assert_allclose(wg.grad(f)(x), 2.0 * x)
    np.testing.assert_allclose(wg.grad(wg.compile(f))(x), 2.0 * x)


def test_compiled_gradient_of_float32_input_is_float32():
    """Same dtype as eager.

    What it rules out: for a float32 ``x`` and ``f(x) = sum(tanh(x *
    np.float64(2.0)))``, eager ``wg.grad(f)(x)`` is float32 (a gradient has its input's
    dtype, as in JAX), but ``wg.compile(wg.grad(f))(x)`` (and ``wg.trace(wg.grad(f),
    x)``, ``wg.grad_graph``) give float64: the cast of the cotangent to the input's
    dtype (``transforms._plain_ct``) is skipped for traced cotangents."""
    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)

    def f(x):
        return np.sum(np.tanh(x * np.float64(2.0)))

    assert wg.grad(f)(x).dtype == np.float32
    assert wg.compile(wg.grad(f))(x).dtype == np.float32


@pytest.mark.parametrize("name, f, expected", [
    ("conj", lambda z: z * z.conj(), np.array([5.0 + 0.0j])),
    ("real", lambda z: z.real * 2.0, np.array([2.0])),
    ("imag", lambda z: z.imag * 2.0, np.array([4.0])),
])
def test_complex_conj_real_imag_in_compiled_code_match_eager(name, f, expected):
    """The eager values, or a clear error that complex values are not supported.

    What it rules out: tracing accepts complex inputs, but ``z.conj()`` is recorded as
    ``z``, ``z.real`` as ``z`` and ``z.imag`` as ``z * 0``: ``compile(lambda z: z *
    z.conj())`` gives ``-3+4j`` for ``1+2j`` (eager: ``5``).
    ``ArrayMethods.real/imag/conj`` (``arraylike.py``) assume real values."""
    z = np.array([1.0 + 2.0j])
    np.testing.assert_allclose(f(z), expected)
    try:
        got = wg.compile(f)(z)
    except TypeError as e:
        assert "complex" in str(e)
        return
    np.testing.assert_allclose(got, expected)


def test_compiled_relu_of_nan_numpy_scalar_is_nan():
    """NaN, as eager NumPy.

    What it rules out: ``relu(nan)`` is NaN in NumPy (``wnp.relu(np.float64('nan'))``,
    arrays), but the float path of ``relu`` (``x if x > 0.0 else 0.0`` in
    ``ops/elementwise.py``) gives 0.0, and ``wg.compile`` runs a program of float64
    scalars on that float path: the compiled function hides a NaN that the eager one
    reports."""
    nan = np.float64("nan")

    def f(x):
        return wnp.relu(x) * 2.0

    assert math.isnan(f(nan))
    assert math.isnan(wg.compile(f)(nan))


def test_float_guard_tells_negative_zero_from_zero():
    """A float guard compares the sign of zero (as ``keys.value_key`` does), and retraces.

    What it rules out: A guard records ``float(x) == 0.0`` and holds for ``-0.0`` too,
    so a compiled function that used the Python value replays it for the other zero:
    ``np.divide(1.0, float(x))`` gives ``inf`` for ``x = -0.0`` (eager: ``-inf``)."""
    def f(x):
        return np.divide(1.0, float(x)) + x

    cf = wg.compile(f)
    with np.errstate(divide="ignore"):
        assert cf(0.0) == math.inf
        assert cf(-0.0) == f(-0.0) == -math.inf


# -- results shared or stale ------------------------------------------------------------


def test_a_constant_output_is_a_new_array_on_every_call():
    """Each call returns a fresh array (or a read-only one, as folded constants already
    are).

    What it rules out: the gradient of a linear loss is a constant:
    ``wg.compile(wg.grad(lambda w: np.sum(w * c)))`` returns the graph's literal, the
    very same writable array on every call. An optimizer that scales the gradient in
    place (``g *= lr``) changes what the next call returns: SGD steps shrink 0.1, 0.01,
    0.001 instead of 0.1, 0.1, 0.1. ``wg.compile(lambda x: (x * 2.0, np.ones(3)))`` and
    ``graph(*args)`` share their constant outputs the same way. Eager code returns a new
    array per call."""
    c = np.array([1.0, 2.0, 3.0])
    grad = wg.compile(wg.grad(lambda w: np.sum(w * c)))
    w = np.zeros(3)
    for _ in range(3):
        g = grad(w)
        g *= 0.1
        w -= g
    np.testing.assert_allclose(w, -0.3 * c)


def test_compiled_gradient_never_returns_the_callers_array_itself():
    """Never return an argument's buffer where the traced code computed a new array (copy
    an output that a pass turned into an input).

    What it rules out: ``wg.compile(wg.grad(lambda w, x: np.sum(w * x)))(w, x)`` returns
    ``x`` itself (``simplify`` rewrote ``x * 1.0`` to ``x``, and the output became the
    input), so an optimizer's ``g *= lr`` silently scales the caller's training data.
    Eager ``wg.grad`` returns a new array, as NumPy's ``x * 1.0`` does."""
    w, x = np.zeros(3), np.array([1.0, 2.0, 3.0])
    g = wg.compile(wg.grad(lambda w, x: np.sum(w * x)))(w, x)
    g *= 0.1
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def test_two_equal_outputs_are_two_arrays():
    """Distinct outputs are distinct arrays (copy an output that appears twice).

    What it rules out: ``init = wg.compile(lambda w: {"m": w * 0.0, "v": w * 0.0})``
    (Adam's moments) returns one array for both: ``cse`` merged the two equations and
    both outputs read the same variable, so ``state["m"] += g`` also changes
    ``state["v"]``. Eager code returns two arrays."""
    init = wg.compile(lambda w: {"m": w * 0.0, "v": w * 0.0})
    state = init(np.ones(3))
    state["m"] += 0.1
    np.testing.assert_array_equal(state["v"], np.zeros(3))


def test_closed_over_arrays_are_read_as_they_were_when_traced():
    """Compiled functions close over arrays that the user then changes in place: one rule
    for every constant, whether used directly (``x + c``) or through a computation (``x
    + np.sin(c2)``): a graph reads a closure's array as it was when traced (a read-only
    copy, as ``jax.jit`` does), which the README states."""
    c = np.ones(3)
    c2 = np.ones(3)
    direct = wg.compile(lambda x: x + c)
    derived = wg.compile(lambda x: x + np.sin(c2))
    returned = wg.compile(lambda x: (x * 2.0, c))
    x = np.zeros(3)
    direct(x)
    derived(x)
    returned(x)
    c[:] = 0.0
    c2[:] = 0.0
    np.testing.assert_array_equal(direct(x), x + 1.0)
    np.testing.assert_array_equal(derived(x), x + np.sin(1.0))
    np.testing.assert_array_equal(returned(x)[1], np.ones(3))
    returned(x)[1][:] = 5.0  # the caller owns what it gets back
    np.testing.assert_array_equal(returned(x)[1], np.ones(3))
    g = wg.trace(lambda x: x + c, x)
    assert not g.equations[0].ins[1].value.flags.writeable


def test_redefined_pytree_class_traces_again():
    """Key on the class itself (as JAX's treedefs), so a new class traces again.

    What it rules out: in a notebook, a ``NamedTuple`` class is edited and its cell run
    again; the compiled function keeps replaying the trace of the old class's method,
    because the cache key is the *text* of the pytree spec (``repr(tree)`` in
    ``compile._key``), and both classes print as ``<class '__main__.State'>``."""
    class State(NamedTuple):
        x: float

        def energy(self):
            return self.x ** 2

    cf = wg.compile(lambda s: s.energy())
    assert cf(State(3.0)) == 9.0

    class State(NamedTuple):  # noqa: F811 - the cell run again with an edit
        x: float

        def energy(self):
            return 0.5 * self.x ** 2

    assert cf(State(3.0)) == State(3.0).energy() == 4.5


def test_in_place_update_of_an_argument_reaches_the_caller_or_raises():
    """The caller sees the same effect as eagerly, or a clear error that compiled functions
    cannot update their arguments in place.

    What it rules out: ``def g(x): x += 1; return x * 2``: eager code updates the
    caller's array, ``wg.compile(g)`` does not (the traced ``+=`` rebinds a tracer) and
    says nothing."""
    def g(x):
        x += 1.0
        return x * 2.0

    x = np.arange(3.0)
    try:
        out = wg.compile(g)(x)
    except (TypeError, ValueError) as e:
        assert "in place" in str(e) or "in-place" in str(e)
        return
    np.testing.assert_array_equal(out, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


# -- crashes, hangs, leaks -----------------------------------------------------------------


@wg.custom_vjp
def _sin_with_rule(x):
    return np.sin(x)


_sin_with_rule.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda res, g: (g * res,))


@wg.custom_vjp
def _clip_gradient(x):
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -0.1, 0.1),))


@wg.custom_jvp
def _sin_with_jvp(x):
    return np.sin(x)


_sin_with_jvp.defjvp(lambda p, t: (np.sin(p[0]), np.cos(p[0]) * t[0]))


def test_custom_vjp_function_compiles():
    """It compiles and gives the eager value.

    What it rules out: ``wg.compile(lambda x: np.sum(f(x) ** 2))`` with ``f`` a
    ``wg.custom_vjp`` raises ``TraceError: trace: f() returned a tensor from outside its
    arguments (a closure or a global)`` - untrue, nothing is closed over.
    ``custom_vjp.__call__`` treats the graph tracer like a tensor (``custom.py``: the
    owner kind is neither None nor DUAL) and wraps the traced output in a constant
    tensor. ``wg.trace`` fails the same way."""
    x = np.array([0.3, -1.2, 2.0])

    def loss(x):
        return np.sum(_sin_with_rule(x) ** 2)

    np.testing.assert_allclose(wg.compile(loss)(x), loss(x))


def test_gradient_of_compiled_custom_vjp_uses_the_custom_rule():
    """Equal to eager ``wg.grad(loss)``.

    What it rules out: ``wg.grad(wg.compile(loss))`` with a gradient-clipping
    ``custom_vjp`` inside fails like the test above; once it compiles, the graph run on
    tensors must still apply the user's ``bwd`` (clip to 0.1), not the body's
    derivative."""
    x = np.array([0.3, -1.2, 2.0])

    def loss(x):
        return np.sum(_clip_gradient(x) ** 2)

    np.testing.assert_allclose(wg.grad(wg.compile(loss))(x), wg.grad(loss)(x))


def test_custom_jvp_function_compiles_without_recursion():
    """It compiles and gives the eager value (and its gradient uses the rule).

    What it rules out: ``wg.compile`` (and ``wg.trace``) of a function calling a
    ``wg.custom_jvp`` raises ``RecursionError``: ``custom_jvp.__call__`` sees a non-dual
    traced kind, takes it for a tensor, finds no tensor of its level and calls itself
    again on the same tracers (``out = self(*plain, **kwargs)`` in ``custom.py``)."""
    x = np.array([0.3, -1.2, 2.0])

    def loss(x):
        return np.sum(_sin_with_jvp(x) ** 2)

    np.testing.assert_allclose(wg.compile(loss)(x), loss(x))


@pytest.mark.parametrize("func", [np.median, np.diff, np.linalg.eigvalsh, np.cov],
                         ids=lambda f: f.__name__)
def test_numpy_functions_without_a_rule_compile(func):
    """Record the call (an error only if it is differentiated).

    What it rules out: ``wg.compile(lambda x: np.median(x))`` raises ``TypeError:
    np.median has no wengert gradient rule, and one of its inputs requires grad`` -
    nothing requires grad in a compiled forward function. The README says calls without
    a gradient rule are recorded, not frozen (as ``np.argmax`` is), and ``jax.jit``
    compiles all of these."""
    x = np.array([3.0, -1.0, 2.0, 0.5, -4.0])

    def f(x):
        a = x if func is not np.linalg.eigvalsh else np.outer(x, x) + np.eye(5)
        return func(a)

    np.testing.assert_allclose(wg.compile(f)(x), f(x))


@pytest.mark.parametrize("ufunc", [np.copysign, np.fmod, np.heaviside],
                         ids=lambda f: f.__name__)
def test_numpy_ufuncs_without_a_rule_compile(ufunc):
    """Recorded like ``np.greater``.

    What it rules out: the ufunc path (``dispatch.array_ufunc``) of the case above:
    ``np.copysign(x, -1.0)`` in a compiled function raises "has no wengert gradient
    rule, and one of its inputs requires grad"."""
    x = np.array([3.0, -1.0, 2.0, 0.5, -4.0])

    def f(x):
        return ufunc(x, 0.5) * 2.0

    np.testing.assert_allclose(wg.compile(f)(x), f(x))


def test_item_assignment_on_a_traced_array_is_recorded():
    """It compiles (as a functional ``setitem`` equation) and gives the eager value.

    What it rules out: ``y = x * 1.0; y[0] = 5.0`` works eagerly, under ``wg.grad``
    (tensors support it) and under ``wg.compile(wg.grad(f))``, but ``wg.compile(f)``
    raises ``TypeError: 'Traced' object does not support item assignment`` (no
    ``__setitem__`` on ``Traced``; the registry has a ``setitem`` op)."""
    def f(x):
        y = x * 1.0
        y[0] = 5.0
        return y * 2.0

    x = np.arange(3.0)
    np.testing.assert_array_equal(wg.compile(f)(x), f(x))


def test_static_argnum_naming_a_defaulted_parameter_takes_the_default():
    """The default is the static value (``_positional`` applies defaults only when keywords
    are given).

    What it rules out: ``wg.compile(f, static_argnums=1)(x)`` with ``def f(x, n=2)``
    raises ``ValueError: compile: static_argnums=1 names no argument of the 1 given``,
    while ``jax.jit(f, static_argnums=1)(x)`` uses the default."""
    def f(x, n=2):
        for _ in range(n):
            x = np.sin(x)
        return x

    assert wg.compile(f, static_argnums=1)(1.0) == f(1.0)


def test_compile_cache_does_not_keep_the_arguments_alive():
    """The cache holds shapes and dtypes, not the caller's arrays.

    What it rules out: after ``cf(x)``, ``del x`` does not free ``x``: the cached trace
    keeps the example values it was traced with (``Graph.examples`` of
    ``TraceInfo.traced``), so a compiled training step holds its first batch (per
    signature) for its lifetime. ``jax.jit`` keeps no argument."""
    cf = wg.compile(lambda x: np.sum(x * 2.0))
    x = np.ones(100_000)
    ref = weakref.ref(x)
    cf(x)
    del x
    gc.collect()
    assert ref() is None


def test_concurrent_first_calls_trace_one_signature_once():
    """One trace per signature, no warning (look the key up again under the lock).

    What it rules out: 48 threads calling a new compiled function at once trace it about
    a dozen times for the same signature (``Compiled.__call__`` looks the cache up
    outside its lock and does not look again inside), wasting the trace and compile time
    and raising the false warning "traced 8 times ... because its Python code turns
    traced values into Python values" for a function without a single guard."""
    def f(x):
        for _ in range(300):
            x = np.sin(x) * 1.01
        return np.sum(x)

    for _ in range(3):
        cf = wg.compile(f)
        n = 48
        barrier = threading.Barrier(n)
        errors = []

        def work(cf=cf, barrier=barrier, errors=errors):
            barrier.wait()
            try:
                cf(np.ones(3))
            except Exception as e:  # noqa: BLE001 - collected for the main thread
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(n)]
        with warnings.catch_warnings():  # (set once, here: the filters are global)
            warnings.simplefilter("error")
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert errors == []
        assert len(cf.cache_info()) == 1


# -- messages ------------------------------------------------------------------------------------


def test_guard_of_a_nested_compiled_function_names_its_own_line():
    """The guard says where the user's branch is (the inner guard's source).

    What it rules out: ``wg.trace(wg.compile(f), x)`` keeps ``f``'s guard, but its
    message names the line of the ``wg.trace`` call, not ``if np.sum(x) > 0:`` in ``f``:
    the outer guard is made by ``evaluate`` converting the tracer, with the caller's
    frame as its source."""
    def f(x):
        if np.sum(x) > 0:
            return np.tanh(x)
        return 0.1 * x

    g = wg.trace(wg.compile(f), np.ones(3))
    with pytest.raises(GuardError) as e:
        g(-np.ones(3))
    assert "if np.sum(x) > 0:" in str(e.value)


def test_jvp_graph_takes_the_arguments_its_signature_shows():
    """Accept the flat arguments it prints, or say the expected structure.

    What it rules out: ``print(wg.jvp_graph(g))`` shows ``jvp_f(x: f64[3], x_dot:
    f64[3])``, but calling it so raises "got 2 argument(s) with 2 value(s) in another
    structure" without saying which structure: it takes ``((x,), (x_dot,))``."""
    g = wg.jvp_graph(wg.trace(lambda x: np.sum(np.sin(x)), np.ones(3)))
    x, v = np.ones(3), np.ones(3)
    try:
        out = g(x, v)
    except TypeError as e:
        assert "(x,)" in str(e) or "primals" in str(e) or "tangents" in str(e), str(e)
        return
    np.testing.assert_allclose(out[1], np.sum(np.cos(x)))


def test_grad_graph_of_a_gradient_graph_says_what_it_needs():
    """Say that ``grad_graph`` needs a graph with one scalar output and that this one
    returns two values.

    What it rules out: ``wg.grad_graph(wg.grad_graph(g))`` fails (the gradient graph
    returns ``(value, grad)``) with "grad: the function must return a scalar ... Use
    has_aux=True", but ``grad_graph`` takes no ``has_aux``."""
    gg = wg.grad_graph(wg.trace(lambda x: np.sum(np.sin(x)), np.ones(3)))
    with pytest.raises(TypeError) as e:
        wg.grad_graph(gg)
    assert "has_aux" not in str(e.value), str(e.value)


def test_function_passed_as_an_argument_is_static():
    """An argument that is not an array or a number is static (as torch.compile treats it):
    passed as it is, one trace per function.

    What it rules out: ``wg.compile(lambda x, fn: fn(x))(x, np.sin)`` raised
    ``TypeError: 'Traced' object is not callable``: ``np.sin`` became an object-dtype
    traced input."""
    f = wg.compile(lambda x, fn: fn(x))
    np.testing.assert_array_equal(f(np.ones(2), np.sin), np.sin(np.ones(2)))
    np.testing.assert_array_equal(f(np.ones(2), np.cos), np.cos(np.ones(2)))
    assert [i.signature for i in f.cache_info()] == [
        "f(x: f64[2]) with fn=<ufunc 'sin'>", "f(x: f64[2]) with fn=<ufunc 'cos'>"]


def test_compiled_method_binds_self():
    """It binds ``self`` (as ``wg.custom_vjp`` does) and works, or says how to compile a
    method (``static_argnums=0``).

    What it rules out: ``@wg.compile`` on a method: ``M().f(3.0)`` raises ``M.f()
    missing 1 required positional argument: 'x'`` (``Compiled`` is no descriptor, so
    ``self`` is not bound)."""
    class M:
        scale = 2.0

        @wg.compile
        def f(self, x):
            return x * self.scale

    try:
        assert M().f(3.0) == 6.0
    except TypeError as e:
        assert "static_argnums" in str(e), str(e)


def test_optimize_given_one_pass_name_as_a_string_takes_it_whole():
    """A string is one pass name (or the error says to pass a list of names).

    What it rules out: ``wg.compile(f, optimize="cse")`` fails at the first call with
    ``unknown pass 'c'``."""
    f = wg.compile(lambda x: np.sin(x) + np.sin(x), optimize="cse")
    try:
        f(np.ones(3))
    except (TypeError, ValueError) as e:
        assert "'c'" not in str(e), str(e)


# =====================================================================================
# Part 2: control flow, pytrees, threads, sessions, dtypes, export
# =====================================================================================


def test_every_branch_of_a_while_loop_on_traced_values():
    def halve(x):
        while np.sum(x) > 1.0:
            x = x / 2.0
        return x

    cf = wg.compile(halve)
    for v in (4.0, 3.0, 100.0, 0.5, 3.5):
        np.testing.assert_array_equal(cf(np.array([v])), halve(np.array([v])))


def test_data_dependent_integer_index_is_recorded_not_frozen():
    cf = wg.compile(lambda x: x[np.argmax(x)] * 2.0)
    assert cf(np.array([1.0, 5.0, 2.0])) == 10.0
    assert cf(np.array([7.0, 1.0, 2.0])) == 14.0
    assert len(cf.cache_info()) == 1


def test_boolean_mask_from_traced_values_is_a_clear_error():
    with pytest.raises(TypeError, match="np.where"):
        wg.compile(lambda x: np.sum(x[x > 0]))(np.array([1.0, -1.0]))


def test_exception_in_one_branch_keeps_the_other_cached():
    def f(x):
        if x > 0:
            raise ValueError("positive")
        return x

    cf = wg.compile(f)
    with pytest.raises(ValueError):
        cf(1.0)
    assert cf(-1.0) == -1.0
    with pytest.raises(ValueError):
        cf(2.0)


def test_nested_transforms_agree_with_eager():
    def f(x):
        return np.sum(np.sin(x) ** 3)

    x = np.array([0.3, -1.2, 2.0])
    h = wg.hessian(f)(x)
    np.testing.assert_allclose(wg.compile(wg.hessian(f))(x), h, atol=1e-12)
    np.testing.assert_allclose(wg.hessian(wg.compile(f))(x), h, atol=1e-12)
    np.testing.assert_allclose(wg.jacfwd(wg.compile(wg.grad(f)))(x), h, atol=1e-12)
    np.testing.assert_allclose(wg.jacrev(wg.compile(wg.grad(f)))(x), h, atol=1e-12)
    np.testing.assert_allclose(wg.compile(wg.compile(f))(x), f(x))
    np.testing.assert_allclose(wg.trace(wg.compile(f), x)(x), f(x))
    out, tangent = wg.compile(lambda x, v: wg.jvp(f, (x,), (v,)))(x, np.ones(3))
    np.testing.assert_allclose(tangent, wg.jvp(f, (x,), (np.ones(3),))[1])


def test_checkpoint_inside_compile_and_under_grad():
    def loss(x):
        return np.sum(wg.checkpoint(lambda y: np.sin(y) ** 2)(x))

    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(wg.compile(wg.grad(loss))(x), wg.grad(loss)(x))
    np.testing.assert_allclose(wg.grad(wg.compile(loss))(x), wg.grad(loss)(x))


def test_nested_compiled_branches_retrace_in_the_outer_function():
    def f(x):
        if np.sum(x) > 0:
            return np.tanh(x)
        return 0.1 * x

    inner = wg.compile(f)
    outer = wg.compile(lambda x: inner(x) * 2.0)
    for s in (1.0, -1.0, 2.0, -3.0):
        np.testing.assert_allclose(outer(np.full(3, s)), f(np.full(3, s)) * 2.0)


def test_namedtuples_with_the_same_name_and_other_fields_trace_apart():
    p1 = namedtuple("P", "a b")
    p2 = namedtuple("P", "b a")
    cf = wg.compile(lambda p: p.a - p.b)
    assert cf(p1(1.0, 2.0)) == -1.0
    assert cf(p2(1.0, 2.0)) == 1.0


def test_pytrees_with_none_and_constant_leaves():
    point = namedtuple("point", "w b")

    def loss(p, x):
        return {"out": np.sum(p.w * x + p.b), "none": None, "const": 3.0, "pair": (x, p.b)}

    p, x = point(np.ones(2), 0.5), np.arange(2.0)
    got = wg.compile(loss)(p, x)
    want = loss(p, x)
    assert got["none"] is None and got["const"] == 3.0
    np.testing.assert_allclose(got["out"], want["out"])
    grad = wg.compile(wg.grad(lambda p, x: loss(p, x)["out"]))(p, x)
    assert isinstance(grad, point)
    np.testing.assert_allclose(grad.w, x)


def test_threads_compiling_one_function_for_many_shapes():
    def loss(x):
        return np.sum(np.tanh(x) ** 2 * np.arange(x.shape[0]))

    cf = wg.compile(wg.grad(loss))
    errors = []

    def work(k):
        x = np.linspace(-1.0, 1.0, 1 + k % 7) * (1 + k)
        try:
            np.testing.assert_allclose(cf(x), wg.grad(loss)(x))
        except Exception as e:  # noqa: BLE001 - collected for the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({info.signature for info in cf.cache_info()}) == 7


def test_float32_and_float16_stay_in_their_dtype_through_compile_grad():
    def loss(x):
        return np.sum(np.tanh(x) ** 2)

    for dtype in (np.float32, np.float16):
        x = np.linspace(-1.0, 1.0, 5).astype(dtype)
        assert wg.compile(wg.grad(loss))(x).dtype == dtype
        assert wg.compile(loss)(x).dtype == dtype


def test_passes_composed_keep_values_gradients_and_guards():
    from wengert.graph.passes.remat import remat

    def f(x):
        y = np.tanh(x) * 1.0 + 0.0
        if np.sum(y) > 0:
            y = y * 2.0
        for _ in range(5):
            y = np.sin(y) * 1.5
        return np.sum(y ** 2)

    x = np.linspace(-1.0, 2.0, 5000)
    g = wg.trace(wg.grad(f), x)
    want = wg.grad(f)(x)
    once = g.optimize()
    budget = int(once.peak_bytes() * 0.7)
    for h in (once, once.optimize(), fuse(g), plan_memory(g), plan_memory(fuse(once)),
              remat(once, budget), plan_memory(fuse(remat(once, budget)))):
        np.testing.assert_allclose(h(x), want, rtol=1e-12)
        with pytest.raises(GuardError):
            h(-x)


def test_session_feed_errors_name_the_placeholder():
    with define() as graph:
        x = placeholder((3,), name="x")
        s = placeholder((), name="s")
        y = np.sum(x ** 2) * s
    with wg.Session(graph) as sess:
        assert sess.run(y, {x: [1, 2, 3], s: 2}) == 28.0
        with pytest.raises(ValueError, match="placeholder x"):
            sess.run(y, {x: np.ones(4), s: 2.0})
        with pytest.raises(TypeError, match="placeholder x"):
            sess.run(y, {x: "abc", s: 2.0})
        with pytest.raises(ValueError, match="placeholder s"):
            sess.run(y, {x: np.ones(3)})
        with pytest.raises(TypeError, match="not a placeholder"):
            sess.run(y, {x: np.ones(3), s: 2.0, y: 1.0})
        dx, ds = sess.run(gradients(y, [x, s]), {x: np.ones(3), s: 2.0})
        np.testing.assert_allclose(dx, [4.0, 4.0, 4.0])
        assert ds == 3.0
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(y, {x: np.ones(3), s: 2.0})


def test_session_runs_from_many_threads():
    with define() as graph:
        x = placeholder((3,), name="x")
        y = np.sum(x ** 2)
    errors = []
    with wg.Session(graph) as sess:
        def work(k):
            got = sess.run(y, {x: np.full(3, float(k))})
            if got != 3.0 * k * k:
                errors.append((k, got))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_branching_on_a_placeholder_is_a_clear_error():
    with define():
        p = placeholder((), name="p")
        with pytest.raises(TraceError, match="np.where"):
            if p > 0:
                pass


def test_randomness_is_frozen_at_trace_time_as_in_jax():
    rng = np.random.default_rng(0)
    f = wg.compile(lambda x: x + rng.normal(size=x.shape))
    np.testing.assert_array_equal(f(np.zeros(2)), f(np.zeros(2)))


def test_generated_texts_are_deterministic_across_runs():
    def f(x, w):
        if np.sum(x) > 0:
            x = x * 2.0
        return np.sum(np.tanh(x @ w) ** 2) + np.argmax(x) * 1.0

    x, w = np.ones((4, 3)), np.ones((3, 3))

    def texts():
        g = wg.trace(wg.grad(f, argnums=1), x, w)
        cf = wg.compile(wg.grad(f, argnums=1))
        cf(x, w)
        return [str(g), g.to_source(), g.optimize().to_source(), repr(cf.cache_info()),
                cf.graph_for(x, w).to_source(), str(g.optimize(report=True))]

    assert texts() == texts()


def test_jax_export_of_tricky_ops_matches_eager():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.0])
    cases = [
        (lambda x: x // 2.0, x), (lambda x: np.mod(x, -2.0), x), (lambda x: np.round(x), x),
        (lambda x: np.argmax(x), x), (lambda x: x ** 3, np.arange(5)),
        (lambda x: x // 2, np.arange(-5, 5)), (lambda x: x * np.float64(2.0), x.astype(np.float32)),
        (lambda x: np.where(x > 0, x, 0.0), x),
        (wg.grad(lambda x: np.sum(np.maximum(x, 0.0))), np.array([-1.0, 0.0, 1.0])),
        (wg.grad(lambda x: np.max(x)), np.array([1.0, 1.0, 0.0])),
        (lambda a: np.take_along_axis(a, np.argsort(a), 0), x),
    ]
    for f, arg in cases:
        g = wg.trace(f, arg)
        namespace: dict = {}
        exec(g.to_source(target="jax"), namespace)
        got, want = np.asarray(namespace[g.name](arg)), np.asarray(f(arg))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want)


def _random_program(draw_ops, x, y):
    unary = [np.sin, np.tanh, lambda a: np.exp(-a * a), np.abs, lambda a: a ** 2,
             lambda a: np.where(a > 0, a, 0.5 * a), lambda a: np.clip(a, -0.5, 0.7),
             lambda a: a - np.sum(a, axis=1, keepdims=True) / a.shape[1]]
    binary = [np.add, np.multiply, np.subtract, np.maximum,
              lambda a, b: a / (1.0 + b * b), lambda a, b: np.hypot(a, b)]
    values = [x, y]
    for kind, k, i, j in draw_ops:
        a, b = values[i % len(values)], values[j % len(values)]
        if kind == 0:
            values.append(unary[k % len(unary)](a))
        else:
            values.append(binary[k % len(binary)](a, b))
    return values[-1], values[len(values) // 2]


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 20), st.integers(0, 50),
                              st.integers(0, 50)), min_size=1, max_size=10),
       rows=st.sampled_from([3, 300]))
def test_random_programs_without_views_compile_to_eager_values_and_gradients(ops, rows):
    rng = np.random.default_rng(len(ops) * 7 + rows)
    x, y = rng.normal(size=(rows, 256)), rng.normal(size=(rows, 256))
    x0, y0 = x.copy(), y.copy()

    def f(x, y):
        return _random_program(ops, x, y)

    def loss(x, y):
        out, mid = f(x, y)
        return np.sum(out * out) + 0.1 * np.sum(mid)

    with np.errstate(all="ignore"):
        for got, want in zip(wg.compile(f)(x, y), f(x0, y0)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        for got, want in zip(wg.compile(wg.grad(loss, argnums=(0, 1)))(x, y),
                             wg.grad(loss, argnums=(0, 1))(x0, y0)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)



def test_a_function_without_a_rule_runs_compiled_but_its_derivative_is_refused(monkeypatch):
    """Recorded as a step of the graph (forward works), refused when differentiated, as
    eager mode refuses it: never a silently lost gradient."""
    monkeypatch.delitem(tables()[1], np.emath.sqrt)  # (every numeric function has a rule)
    f = lambda x: np.emath.sqrt(x)[0] * np.sum(x)  # noqa: E731
    x = np.array([1.0, 3.0, 2.0])
    assert wg.compile(f)(x) == f(x)
    for attempt in (lambda: wg.grad(wg.compile(f))(x), lambda: wg.compile(wg.grad(f))(x),
                    lambda: wg.grad_graph(wg.trace(f, x)),
                    lambda: wg.jvp(wg.compile(f), (x,), (np.ones(3),))):
        with pytest.raises(TypeError, match="no wengert gradient rule"):
            attempt()


def test_slogdet_and_unique_under_a_trace_do_not_recurse():
    """Both computed NumPy's answer on the raw value, which under a trace is the tracer
    itself: np.linalg.slogdet / np.unique of it came back to wengert forever."""
    a = np.array([[2.0, 1.0], [0.5, 3.0]])

    def f(a):
        sign, logdet = np.linalg.slogdet(a)
        return sign * logdet

    np.testing.assert_allclose(wg.compile(f)(-a), f(-a))
    np.testing.assert_allclose(wg.grad(wg.compile(f))(-a), wg.grad(f)(-a))
    with pytest.raises(TypeError, match="cannot be traced into a graph"):
        wg.compile(lambda a: np.unique(a))(a)


def test_setting_the_shape_of_a_traced_value_is_refused_with_the_spelling_to_use():
    def f(x):
        x.shape = (2, 2)
        return x

    with pytest.raises(AttributeError, match=r"shape of a traced value.*x\.reshape"):
        wg.compile(f)(np.arange(4.0))
