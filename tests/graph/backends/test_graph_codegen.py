"""Generated code computes what the graph computes, run op by op, on edge values.

The reference is :func:`wengert.graph.program.evaluate`: each equation through
:func:`wengert.core.bind.forward`, as eager mode runs the op on the same values (a
Python float takes the op's float path, and NumPy's answer where that raises; NumPy
scalars and 0-d arrays take NumPy). ``graph(*args)`` and ``exec(graph.to_source())`` must
give the same values (bit for bit, any NaN as NaN), the same types and dtypes, and the
same warnings, also under ``np.errstate``.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.bind import apply
from wengert.graph.backends.codegen import float_equation, is_scalar_program
from wengert.graph.backends.runtime import as_returned
from wengert.graph.program import evaluate
from wengert.ops import REGISTRY
from wengert.ops.elementwise import FAMILY as ELEMENTWISE_FAMILY

POINTS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, 1e300, np.inf, -np.inf, np.nan,
          710.0, -745.5)
KINDS = {"float": float, "float64": np.float64, "0-d": np.array}
FLOAT_OPS = sorted(op.name for op in REGISTRY if op.scalar_impl is not None)


def outcome(fn: Any, args: tuple[Any, ...], err: str | None) -> Any:
    """What calling ``fn`` gives: each result's type, dtype and bits (NaN as NaN), and the
    warnings (NumPy's "scalar divide" read as "divide"); or the exception's type."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with np.errstate(all=err) if err else warnings.catch_warnings():
                result = fn(*args)
        except Exception as e:  # noqa: BLE001 - the exception's type is compared
            return ("raises", type(e).__name__)
    messages = sorted((w.category.__name__, str(w.message).replace("scalar ", ""))
                      for w in caught)
    leaves = result if isinstance(result, tuple) else (result,)
    values = [(type(v).__name__, np.asarray(v).dtype.name, _bits(np.asarray(v)))
              for v in leaves]
    return values, messages


def _bits(a: np.ndarray) -> tuple[bytes, bytes]:
    """The bits of ``a``, every NaN read as one NaN (NumPy's scalar and array loops may
    set a NaN's sign differently), and where the NaNs are."""
    if a.dtype.kind not in "fc":
        return a.tobytes(), b""
    nan = np.isnan(a)
    return np.where(nan, np.zeros((), a.dtype), a).tobytes(), nan.tobytes()


def programs(op: Any) -> list[Any]:
    def alone(*xs: Any) -> Any:
        return apply(op, *xs)

    def then_log(*xs: Any) -> Any:  # the op, then a float path that may raise
        y = apply(op, *xs)
        return np.log(y * 1.0 + 1.0), y

    def then_numpy_scalars(*xs: Any) -> Any:  # Python floats, then NumPy scalars
        y = np.sin(xs[0]) * 0.5 + apply(op, *xs)
        z = y * np.float64(1.0)
        w = apply(op, z) if len(xs) == 1 else apply(op, z, xs[1])
        return np.log(w / z), w

    return [alone, then_log, then_numpy_scalars]


@pytest.mark.parametrize("name", FLOAT_OPS)
def test_generated_code_runs_as_the_graph_on_edge_values(name):
    op = REGISTRY[name]
    for kind, convert in KINDS.items():
        example = tuple(convert(v) for v in (0.7, 1.3)[:op.nin])
        for f in programs(op):
            g = wg.trace(f, *example)
            namespace = g.namespace()
            exec(g.to_source(), namespace)
            compiled = namespace[g.name]

            def reference(*args: Any, g: Any = g) -> Any:
                out = [as_returned(v, t) for v, t in zip(evaluate(g, list(args)),
                                                         g.out_types)]
                return out[0] if len(out) == 1 else tuple(out)

            for point in itertools.product(POINTS, repeat=op.nin):
                args = tuple(convert(v) for v in point)
                for err in (None, "raise", "ignore"):
                    want = outcome(reference, args, err)
                    where = f"{name} {kind} {f.__name__}{point} errstate={err}"
                    assert outcome(g, args, err) == want, where
                    assert outcome(compiled, args, err) == want, where


INTEGER_POINTS = (0, 1, -1, 2, -3, 7)
FLOAT32_POINTS = (0.0, -0.0, 1.5, -2.5, np.inf, np.nan)
OTHER_KINDS = {
    "int": (int, INTEGER_POINTS), "int64": (np.int64, INTEGER_POINTS),
    "int32 array": (lambda v: np.array([v, 3], np.int32), INTEGER_POINTS),
    "float32": (np.float32, FLOAT32_POINTS),
    "float32 array": (lambda v: np.array([v, 1.0], np.float32), FLOAT32_POINTS),
}


@pytest.mark.parametrize("name", sorted(op.name for op in ELEMENTWISE_FAMILY.ops
                                         if op.nin in (1, 2)))
def test_generated_code_runs_as_the_graph_on_integers_and_float32(name):
    # Integer division and remainder by zero, integer powers, NumPy's promotion of the
    # Python float 2.5 with float32 (it stays float32) and with integers.
    op = REGISTRY[name]
    for kind, (convert, points) in OTHER_KINDS.items():
        example = tuple(convert(v) for v in (points[1], points[3])[:op.nin])

        def f(*xs: Any, op: Any = op) -> Any:
            y = apply(op, *xs)
            return y, y * 2.5

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = wg.trace(f, *example)
        except TypeError:  # (an op without integer or real values: complex parts)
            continue
        namespace = g.namespace()
        exec(g.to_source(), namespace)
        for point in itertools.product(points, repeat=op.nin):
            args = tuple(convert(v) for v in point)
            for err in (None, "raise"):
                want = outcome(lambda *a, g=g: tuple(evaluate(g, list(a))), args, err)
                where = f"{name} {kind}{point} errstate={err}"
                assert outcome(g, args, err) == want, where
                assert outcome(namespace[g.name], args, err) == want, where


def test_division_by_zero_and_domain_errors_give_numpy_answers_in_exec_source():
    # wengert's functions on Python floats take the float path (np.log would give NumPy
    # scalars, computed by NumPy)
    g = wg.trace(lambda x: (1.0 / x, wnp.log(x - 1.0), wnp.exp(x * 1000.0)), 0.5)
    assert is_scalar_program(g)
    namespace = {}
    exec(g.to_source(), namespace)  # the source alone: no constants to pass in
    with pytest.warns(RuntimeWarning) as caught:
        inv, log, exp = namespace["f"](0.0)
    assert (inv, exp) == (np.inf, 1.0) and np.isnan(log)
    assert all(type(v) is float for v in (inv, log, exp))  # Python floats, as eagerly
    assert sorted(str(w.message) for w in caught) == [
        "divide by zero encountered in divide", "invalid value encountered in log"]
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        namespace["f"](0.0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        inv, log, exp = namespace["f"](0.0)
    assert inv == np.inf


def test_numpy_scalars_are_never_computed_with_math():
    # math.tanh and np.tanh differ in the last bit here: a float64 argument takes
    # NumPy's, as eagerly, and gives a NumPy scalar.
    x = np.float64(-0.39631458987390566)
    f = lambda x: np.tanh(x) * 2.0  # noqa: E731
    for arg in (x, np.array(x)):
        got = wg.compile(f)(arg)
        assert type(got) is np.float64
        assert got.tobytes() == f(arg).tobytes()
        assert "tanh(" in wg.trace(f, arg).to_source() and "np.tanh" in \
            wg.trace(f, arg).to_source()


@pytest.mark.parametrize("op", [lambda a, b: a * b, lambda a, b: a / b,
                                lambda a, b: a * b + a / b - b])
def test_compiled_complex_numpy_scalars_give_eagers_bits(op):
    # NumPy's scalar ``*`` and ``/`` on complex128 round differently from its ufuncs in
    # about half the cases; eager mode calls the ufunc, so the compiled code does too.
    rng = np.random.default_rng(3)
    pairs = rng.uniform(-1, 1, (64, 4))
    compiled = wg.compile(op)
    for ar, ai, br, bi in pairs:
        a, b = np.complex128(complex(ar, ai)), np.complex128(complex(br, bi))
        eager = op(wg.tensor(a), wg.tensor(b)).numpy()
        assert np.asarray(compiled(a, b)).tobytes() == np.asarray(eager).tobytes()


def test_a_numpy_warning_before_a_math_error_is_reported_once():
    def f(x):
        big = x * np.float64(1e308)  # a NumPy scalar that overflows: a warning
        return big, wnp.log(x - 2.0)  # then math.log raises: the float code runs again

    g = wg.trace(f, 0.5)
    assert is_scalar_program(g)
    source = g.to_source()
    assert "raise_reported()" in source
    namespace = g.namespace()
    exec(source, namespace)
    for run in (namespace["f"], g):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            big, log = run(1.9)
        assert big == np.inf and np.isnan(log) and type(big) is np.float64
        assert sorted(str(w.message).replace("scalar ", "") for w in caught) == [
            "invalid value encountered in log", "overflow encountered in multiply"]


def test_gradient_of_a_power_runs_on_python_floats():
    # The backward sweep of a program traced on a Python float is seeded with 1.0 as
    # eagerly, so `1.5 * x ** 0.5` stays a Python float (no NumPy scalar slows it).
    g = wg.trace(wg.grad(lambda x: x ** 1.5 + np.sin(x)), 0.3, source_lines=False)
    assert all(float_equation(eq) for eq in g.equations)
    assert "np." not in g.to_source().split("def f")[1]
    got = wg.compile(wg.grad(lambda x: x ** 1.5 + np.sin(x)))(0.3)
    assert type(got) is float and got == wg.grad(lambda x: x ** 1.5 + np.sin(x))(0.3)


def test_a_float_equation_in_an_array_program_runs_as_eagerly():
    def f(x, v):
        s = wnp.tanh(x) * 2.0  # Python floats: the float path, a Python float
        return s, v * s

    x = -0.39631458987390566
    g = wg.trace(f, x, np.ones(2))
    assert not is_scalar_program(g)
    assert "fallback.tanh(x)" in g.to_source()
    s, vs = wg.compile(f)(x, np.ones(2))
    want = evaluate(g, [x, np.ones(2)])
    assert type(s) is float and s == want[0]
    np.testing.assert_array_equal(vs, want[1])


def test_long_float_programs_fall_back_block_by_block(monkeypatch):
    from wengert.graph.backends import codegen

    monkeypatch.setattr(codegen, "BLOCK", 4)

    def f(x):
        y = x
        for _ in range(5):
            y = wnp.log(y) + 1.0
        return y

    g = wg.trace(f, 3.0)
    source = g.to_source()
    assert source.count("except FLOAT_ERRORS") == 3  # one per block
    namespace = g.namespace()
    exec(source, namespace)
    with pytest.warns(RuntimeWarning):
        got = namespace["f"](0.5)
    with pytest.warns(RuntimeWarning):
        want = evaluate(g, [0.5])[0]
    assert (got != got and want != want) or got == want


# -- decompositions: one line per equation with several outputs -------------------------
SYMMETRIC = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])


@pytest.mark.parametrize("f,line", [
    (lambda a: tuple(np.linalg.eigh(a)),
     "t2, t3 = np.linalg.eigh(hermitian_part(t1), UPLO='L')  # eigh"),
    (lambda a: tuple(np.linalg.eigh(a, UPLO="U")),
     "t2, t3 = np.linalg.eigh(hermitian_part(t1), UPLO='U')  # eigh"),
    (lambda a: tuple(np.linalg.svd(a)), "t0, t1, t2 = np.linalg.svd(a, full_matrices=False)"),
    (lambda a: tuple(np.linalg.qr(a)), "t0, t1 = np.linalg.qr(a)  # qr"),
    (lambda a: tuple(np.linalg.eig(a)), "t0, t1 = np.linalg.eig(a)  # eig"),
    (lambda a: tuple(np.linalg.qr(a[:, :2], mode="complete")),
     "t1, t2, t3 = op.qr_q(t0), op.qr_r(t0), op.qr_completion(t0)  # qr"),
])
def test_a_decomposition_is_one_readable_line_of_the_same_values(f, line):
    g = wg.trace(f, SYMMETRIC)
    assert line in g.to_source()
    got = g(SYMMETRIC)
    for x, y in zip(got, f(SYMMETRIC)):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def test_the_parts_of_eigh_are_those_of_its_hermitian_part_as_eagerly():
    a = np.array([[2.0, 1.0 + 1.0j], [1.0 - 1.0j, 3.0 + 0.5j]])  # an imaginary diagonal
    f = lambda a: tuple(np.linalg.eigh(a))  # noqa: E731
    for x, y in zip(wg.trace(f, a)(a), f(wg.tensor(a))):
        np.testing.assert_array_equal(x, y.numpy())


def test_long_programs_pass_every_output_of_a_decomposition_between_blocks(monkeypatch):
    from wengert.graph.backends import codegen

    monkeypatch.setattr(codegen, "BLOCK", 3)

    def f(a):
        w, v = np.linalg.eigh(a * 2.0)
        return np.sum(v * 3.0, axis=0) + w * 4.0

    g = wg.trace(f, SYMMETRIC)
    source = g.to_source()
    assert source.count("_block") >= 3
    np.testing.assert_array_equal(g(SYMMETRIC), f(SYMMETRIC))


def test_generated_eigh_overflows_where_the_eager_primitive_does():
    # the primitives decompose (a + aᵀ)/2, which overflows here: NumPy's eigh of a itself
    # would give [0, inf]
    a = np.array([[1e308, 1e308], [1e308, 1e308]])
    f = lambda a: tuple(np.linalg.eigh(a))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = [np.asarray(x) for x in f(wg.tensor(a))]
        got = wg.trace(f, a)(a)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)  # (NaN where NaN)


@pytest.mark.parametrize("c", [complex(-0.0, -0.0), complex(-0.0, 2.0), complex(1.0, -0.0),
                               complex(np.nan, 1.0), complex(-np.inf, -0.0),
                               complex(-np.inf, 1.0), 1.5 - 2j])
def test_complex_literals_keep_the_sign_of_zero_and_nonfinite_parts(c):
    """``repr(complex(-0.0, 2.0))`` is ``(-0+2j)``, which Python reads as ``0.0 + 2j``: the
    generated code writes a complex literal that keeps every part's bits."""
    f = lambda x: x * c + c  # noqa: E731
    x = np.array([-0.0, 0.0, 1.5, -2.0])
    g = wg.trace(f, x)
    namespace = {}
    exec(g.to_source(), namespace)  # written out: the source runs on its own
    cf = wg.compile(f, optimize=False)
    cf(x)
    want = f(x)
    for got in (g(x), namespace["f"](x), cf(x), evaluate(g, [x])[0]):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (got, want)


def test_a_nan_literal_keeps_its_sign():
    """``inf * 0`` is a NaN with its sign bit set: the generated code writes it so."""
    nan = float("inf") * 0.0
    f = lambda x: x + nan  # noqa: E731
    x = np.ones(2)
    g = wg.trace(f, x)
    namespace = {}
    exec(g.to_source(), namespace)
    for got in (g(x), namespace["f"](x)):
        assert got.tobytes() == f(x).tobytes()
