"""The registry sweep: every primitive's rules against finite differences, to second order,
in both modes and every mix of them.

Parametrized over ``REGISTRY.names()``, so a new op is checked as soon as it is
registered. Each op brings its own test inputs (``Op.samples``): inside its
domain and away from kinks. For each sample the differentiable inputs are the
floating point ones whose VJP slot is not ``None``; the others (index arrays,
conditions) and the params stay fixed.

What is checked, for every op and sample, through the public transforms
(``wg.vjp``, ``wg.jvp``), so the rules run on plain arrays, tensors, dual
numbers and tensors over duals / duals over tensors:

* first order against central finite differences: reverse mode
  (``test_rules_against_finite_differences``, which also does reverse over
  reverse) and forward mode (``test_forward_mode_against_finite_differences``);
* ``<v, J u> == <J^T v, u>`` between ``wg.jvp`` and ``wg.vjp``, tightly
  (``test_first_order_adjoint_identity``);
* second order against central finite differences, each mix of modes
  (``test_second_order_against_finite_differences[...-rev-over-rev]``,
  ``fwd-over-rev``, ``rev-over-fwd``, ``fwd-over-fwd``): the outer mode
  differentiates the pullback ``(x, v) -> vjp(f, x)[1](v)`` or the
  push-forward ``(x, t) -> jvp(f, x, t)[1]``, in the point *and* in the
  cotangent or tangent, so the rules meet a traced ``x``, a traced ``g`` and a
  traced tangent; a rule that unboxes a dual (``np.asarray``, NumPy called on
  it) raises there;
* the adjoint identity of those derivative functions (the pullback's JVP
  against its VJP, the push-forward's JVP against its VJP), and the second
  derivative ``sum_i v_i d2 f_i [t, u]`` computed four ways (rev over rev, fwd
  over rev, rev over fwd, fwd over fwd), which must agree to rounding
  (``test_second_order_adjoint_identities``);
* float32 stays float32 in both modes (``test_float32_stays_float32``,
  ``test_float32_stays_float32_in_forward_mode``,
  ``test_float32_stays_float32_through_forward_over_traced``).

A NaN or an infinity anywhere in a check fails it (finite differences and
:func:`wengert.testing.gradcheck` treat them as failures; the adjoint checks run
with NumPy's floating point errors raised, so a NaN that a rule produces and
then masks fails too).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from sweep_helpers import (
    cases,
    describe,
    diff_positions,
    pairing,
    problems,
    random_like,
    scalar_combos,
)
from wengert.core.bind import apply
from wengert.ops import FAMILIES, REGISTRY
from wengert.reverse.recording import shape_stand_in
from wengert.reverse.tensor import Tensor, value_of
from wengert.testing import GradcheckError, check_grads, gradcheck

NAMES = REGISTRY.names()


def _as_function(op: Any, args: tuple[Any, ...], params: dict[str, Any], diff: list[int]):
    def f(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return apply(op, *full, **params)

    f.__name__ = op.name
    return f


@pytest.mark.parametrize("name", NAMES)
def test_op_has_samples(name):
    op = REGISTRY[name]
    if op.samples is None:
        pytest.fail(f"op {name} has no samples")
    cases = op.samples(np.random.default_rng(0))
    assert isinstance(cases, list) and cases, f"op {name}: samples(rng) must return a list"
    for k, case in enumerate(cases):
        assert isinstance(case, tuple) and len(case) == 2, (
            f"op {name}: case {k} is not (args, params)"
        )
        args, params = case
        assert isinstance(args, tuple) and isinstance(params, dict), (
            f"op {name}: case {k} must be (tuple of args, dict of params)"
        )
        if op.nin != -1:  # -1: variadic (concatenate, stack)
            assert len(args) == op.nin, (
                f"op {name}: case {k} has {len(args)} args, the op has {op.nin} inputs"
            )


@pytest.mark.parametrize("name", NAMES)
def test_forward_on_tensors_matches_impl(name):
    op = REGISTRY[name]
    for k, (args, params) in enumerate(cases(name)):
        where = f"op {name}, sample {k} ({describe(args, params)})"
        expected = op.impl(*args, **params)
        diff = diff_positions(op, args)
        boxed = [wg.tensor(a, requires_grad=True) if i in diff else a for i, a in enumerate(args)]
        out = apply(op, *boxed, **params)
        if diff:
            assert isinstance(out, Tensor), f"{where}: apply on tensors returned {type(out)}"
            assert out.requires_grad, f"{where}: the output does not require grad"
        got = value_of(out)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=where)
        assert np.shape(got) == np.shape(expected), f"{where}: shape {np.shape(got)}"
        assert np.result_type(got) == np.result_type(expected), (
            f"{where}: output dtype {np.result_type(got)}, impl gives {np.result_type(expected)}"
        )


@pytest.mark.parametrize("name", NAMES)
def test_rules_against_finite_differences(name):
    """First and second order (the VJP rule differentiated again) for every sample."""
    op = REGISTRY[name]
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        if not diff:
            continue
        f = _as_function(op, args, params, diff)
        failure = None
        try:
            check_grads(f, tuple(args[i] for i in diff), order=2)
        except GradcheckError as exc:
            failure = str(exc)
        if failure is not None:
            pytest.fail(
                f"op {name}, sample {k} ({describe(args, params)}); the differentiated "
                f"arguments {diff} are numbered 0, 1, ... below.\n{failure}",
                pytrace=False,
            )


@pytest.mark.parametrize("name", NAMES)
def test_float32_stays_float32(name):
    """float32 in, float32 out, and float32 cotangents (no silent upcast in a rule)."""
    op = REGISTRY[name]
    for k, (args, params) in enumerate(cases(name)):
        args = tuple(
            np.float32(a)
            if isinstance(a, np.floating)
            else a.astype(np.float32)
            if isinstance(a, np.ndarray) and a.dtype.kind == "f"
            else a
            for a in args
        )
        where = f"op {name}, sample {k} in float32 ({describe(args, params)})"
        diff = diff_positions(op, args)
        expected = np.result_type(op.impl(*args, **params))
        if not diff:
            continue
        out, pullback = wg.vjp(_as_function(op, args, params, diff), *(args[i] for i in diff))
        assert np.result_type(out) == expected, f"{where}: output dtype {np.result_type(out)}"
        cts = pullback(np.ones(np.shape(out), dtype=np.result_type(out)))
        for j, i in enumerate(diff):
            a = args[i]
            if type(a) is float:
                continue
            assert np.result_type(cts[j]) == np.result_type(a), (
                f"{where}: the cotangent of input {i} is {np.result_type(cts[j])}, the input "
                f"is {np.result_type(a)}"
            )


# -- forward mode and the mixed second orders ------------------------------------------
#: ``<a, b>`` computed two ways agrees to rounding: relative to the sum of the
#: magnitudes of its terms (first order), and of the larger set of terms (second).
ADJOINT_RTOL = 1e-10
ADJOINT2_RTOL = 1e-9

#: The second-order mixes: which derivative function, and the outer mode.
SECOND_ORDERS = {
    "rev-over-rev": ("pullback", "rev"),
    "fwd-over-rev": ("pullback", "fwd"),
    "rev-over-fwd": ("pushforward", "rev"),
    "fwd-over-fwd": ("pushforward", "fwd"),
}


def _raised(where: str, what: str, exc: Exception) -> AssertionError:
    return AssertionError(f"{where}: {what} raised {type(exc).__name__}: {exc}")


def _agree(values: dict[str, tuple[float, float]], rtol: float) -> str | None:
    """``None`` when the pairings agree within ``rtol`` of their largest scale and are
    finite; otherwise a message listing them."""
    vals = np.array([v for v, _ in values.values()])
    scale = max(s for _, s in values.values())
    allowed = 1e-13 + rtol * scale
    if np.all(np.isfinite(vals)) and np.isfinite(scale) and vals.max() - vals.min() <= allowed:
        return None
    listed = ", ".join(f"{k} = {v:.15e}" for k, (v, _) in values.items())
    return (f"{listed} (spread {vals.max() - vals.min():.3e}, allowed {allowed:.3e} = "
            f"1e-13 + {rtol:g} x the sum of the terms' magnitudes)")


def _zero_like(x: Any) -> Any:
    return 0.0 if type(x) is float else np.zeros_like(x)


@pytest.mark.parametrize("name", NAMES)
def test_forward_mode_against_finite_differences(name):
    """First order through ``wg.jvp`` (dual numbers), against central differences."""
    failures = []
    for p in problems(name, 100):
        try:
            gradcheck(p.f, p.xs, modes=("fwd",))
        except GradcheckError as exc:
            failures.append(f"{p.where}\n{exc}")
        except Exception as exc:
            raise _raised(p.where, "wg.jvp", exc) from exc
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_first_order_adjoint_identity(name):
    """``<v, J u>`` from ``wg.jvp`` equals ``<J^T v, u>`` from ``wg.vjp``, for a tangent
    on each input alone and on all of them at once."""
    failures = []
    for p in problems(name, 200):
        subsets = [(j,) for j in range(p.n)] + ([tuple(range(p.n))] if p.n > 1 else [])
        with np.errstate(divide="raise", invalid="raise", over="raise"):
            try:
                cts = wg.vjp(p.f, *p.xs)[1](p.v)
                for which in subsets:
                    us = tuple(u if j in which else _zero_like(x)
                               for j, (x, u) in enumerate(zip(p.xs, p.us)))
                    tangent = wg.jvp(p.f, p.xs, us)[1]
                    bad = _agree({"<v, J u> (jvp)": pairing(p.v, tangent),
                                  "<J^T v, u> (vjp)": pairing(cts, us)}, ADJOINT_RTOL)
                    if bad:
                        failures.append(f"{p.where}, tangent on x{list(which)}: {bad}")
            except (FloatingPointError, TypeError, ValueError) as exc:
                raise _raised(p.where, "wg.jvp or wg.vjp", exc) from exc
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("order", list(SECOND_ORDERS))
@pytest.mark.parametrize("name", NAMES)
def test_second_order_against_finite_differences(name, order):
    """The outer mode's derivative of the pullback ``(x, v) -> vjp(f, x)[1](v)`` or the
    push-forward ``(x, t) -> jvp(f, x, t)[1]`` against central differences of it."""
    which, mode = SECOND_ORDERS[order]
    failures = []
    for p in problems(name, 300):
        if which == "pullback":
            fn, inputs, names = p.pullback_of_point_and_cotangent(), p.xs + (p.v,), "v"
        else:
            fn, inputs, names = p.pushforward_of_point_and_tangent(), p.xs + p.ts, "t0, t1, ..."
        try:
            gradcheck(fn, inputs, modes=(mode,))
        except GradcheckError as exc:
            failures.append(
                f"{p.where}; {order}: gradcheck inputs 0..{p.n - 1} are x0, x1, ..., the "
                f"next {names}.\n{exc}"
            )
        except Exception as exc:
            raise _raised(p.where, order, exc) from exc
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_second_order_adjoint_identities(name):
    """The derivative functions' JVPs against their VJPs, and one second derivative four ways.

    With ``g(x, v) = J(x)^T v`` and ``h(x, t) = J(x) t``: ``<t, Jg (u, w)>`` (fwd over
    rev) equals ``<Jg^T t, (u, w)>`` (rev over rev); ``<v, Jh (u, s)>`` (fwd over fwd)
    equals ``<Jh^T v, (u, s)>`` (rev over fwd); and ``sum_i v_i d2 f_i [t, u]`` comes
    out the same from all four mixes (the pullback's JVP, the JVP's pullback...).
    """
    failures = []
    for p in problems(name, 400):
        g = p.pullback_of_point_and_cotangent()
        h = p.pushforward_of_point_and_tangent()
        xv, xt = p.xs + (p.v,), p.xs + p.ts
        # directions: u on the point, w on the cotangent, t (reused) on the tangent
        uw, ut = p.us + (p.w,), p.us + p.ts
        with np.errstate(divide="raise", invalid="raise", over="raise"):
            try:
                checks = {
                    "pullback": {
                        "<t, J_g (u, w)> (fwd over rev)": pairing(p.ts, wg.jvp(g, xv, uw)[1]),
                        "<J_g^T t, (u, w)> (rev over rev)": pairing(wg.vjp(g, *xv)[1](p.ts), uw),
                    },
                    "push-forward": {
                        "<v, J_h (u, t)> (fwd over fwd)": pairing(p.v, wg.jvp(h, xt, ut)[1]),
                        "<J_h^T v, (u, t)> (rev over fwd)": pairing(wg.vjp(h, *xt)[1](p.v), ut),
                    },
                }
                zv, zt = _zero_like(p.v), tuple(_zero_like(t) for t in p.ts)
                checks["second derivative v . d2f[t, u]"] = {
                    "rev over rev": pairing(wg.vjp(g, *xv)[1](p.ts)[: p.n], p.us),
                    "fwd over rev": pairing(p.ts, wg.jvp(g, xv, p.us + (zv,))[1]),
                    "rev over fwd": pairing(wg.vjp(h, *xt)[1](p.v)[: p.n], p.us),
                    "fwd over fwd": pairing(p.v, wg.jvp(h, xt, p.us + zt)[1]),
                }
            except (FloatingPointError, TypeError, ValueError) as exc:
                raise _raised(p.where, "a second-order transform", exc) from exc
        for what, values in checks.items():
            bad = _agree(values, ADJOINT2_RTOL)
            if bad:
                failures.append(f"{p.where}; {what}: {bad}")
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


def _float32(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        np.float32(a)
        if isinstance(a, np.floating)
        else a.astype(np.float32)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f"
        else a
        for a in args
    )


def _float32_problem(op: Any, k: int, args: tuple[Any, ...], params: dict[str, Any]):
    """``(where, output dtype, f, xs, us, inputs)`` for a sample cast to float32 (``xs``
    the differentiated inputs, ``us`` float32 tangents for them), or ``None`` when it has
    no differentiable input."""
    args = _float32(args)
    diff = diff_positions(op, args)
    if not diff:
        return None
    where = f"op {op.name}, sample {k} in float32 ({describe(args, params)})"
    expected = np.result_type(op.impl(*args, **params))
    xs = tuple(args[i] for i in diff)
    rng = np.random.default_rng(500 + k)
    us = tuple(random_like(rng, x) for x in xs)
    return where, expected, _as_function(op, args, params, diff), xs, us, list(xs)


def _dtype_failures(where: str, checks: list[tuple[str, Any, Any]]) -> list[str]:
    """``(what, value, dtype wanted or None for an input that is a Python float)``."""
    return [
        f"{where}: {what} is {np.result_type(value)}, it should be {want}"
        for what, value, want in checks
        if want is not None and np.result_type(value) != want
    ]


def _want(x: Any) -> Any:
    return None if type(x) is float else np.result_type(x)


@pytest.mark.parametrize("name", NAMES)
def test_float32_stays_float32_in_forward_mode(name):
    """float32 primals and tangents: ``wg.jvp`` gives a float32 output and tangent, and
    forward over reverse (the JVP of the pullback) float32 cotangents and tangents."""
    op = REGISTRY[name]
    failures = []
    for k, (args, params) in enumerate(cases(name)):
        problem = _float32_problem(op, k, args, params)
        if problem is None:
            continue
        where, expected, f, xs, us, inputs = problem
        try:
            out, tangent = wg.jvp(f, xs, us)
            g = np.ones(np.shape(out), dtype=np.result_type(out))

            def pullback(*xs: Any, f=f, g=g) -> Any:
                return tuple(wg.vjp(f, *xs)[1](g))

            cts, ct_tangents = wg.jvp(pullback, xs, us)
        except Exception as exc:
            raise _raised(where, "wg.jvp", exc) from exc
        checks = [("the output", out, expected), ("the output's tangent", tangent, expected)]
        for j, x in enumerate(inputs):
            checks += [(f"fwd over rev: the cotangent of x{j}", cts[j], _want(x)),
                       (f"fwd over rev: the cotangent's tangent of x{j}", ct_tangents[j], _want(x))]
        failures += _dtype_failures(where, checks)
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_float32_stays_float32_through_forward_over_traced(name):
    """float32 through forward mode on traced primals: fwd over fwd (the JVP of the JVP)
    and rev over fwd (the JVP on tensors, and its pullback) stay float32."""
    failures = _float32_over_traced_failures(REGISTRY[name])
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


def _float32_over_traced_failures(op: Any) -> list[str]:
    failures = []
    for k, (args, params) in enumerate(cases(op.name)):
        problem = _float32_problem(op, k, args, params)
        if problem is None:
            continue
        where, expected, f, xs, us, inputs = problem

        def pushforward(*xs: Any, f=f, us=us) -> Any:
            return wg.jvp(f, xs, us)[1]

        try:
            _, second = wg.jvp(pushforward, xs, us)
            value, pullback = wg.vjp(pushforward, *xs)
            cts = pullback(np.ones(np.shape(value), dtype=expected))
        except Exception as exc:
            raise _raised(where, "wg.jvp", exc) from exc
        checks = [("fwd over fwd: the second tangent", second, expected),
                  ("rev over fwd: the tangent on tensors", value, expected)]
        checks += [(f"rev over fwd: the cotangent of x{j}", cts[j], _want(x))
                   for j, x in enumerate(inputs)]
        failures += _dtype_failures(where, checks)
    return failures


# -- the registry as a whole ---------------------------------------------------------
def test_op_names_are_unique():
    names = [op.name for family in FAMILIES for op in family.FAMILY.ops]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"ops registered twice: {dupes}"
    assert len(REGISTRY) == len(names)


@pytest.mark.parametrize("name", NAMES)
def test_op_record_is_well_formed(name):
    op = REGISTRY[name]
    assert op.name == name
    assert isinstance(op.formula, str), f"op {name}: formula is {type(op.formula)}"
    assert isinstance(op.symbol, str) and op.symbol, f"op {name}: symbol is {op.symbol!r}"
    assert callable(op.impl)
    if op.nin == -1:  # variadic: one rule object serves input i as vjps[i]
        assert all(callable(op.vjps[i]) for i in range(3)), f"op {name}: variadic vjps"
        return
    assert isinstance(op.vjps, tuple) and op.nin == len(op.vjps)
    assert all(r is None or callable(r) for r in op.vjps)
    if all(r is None for r in op.vjps):  # only an integer result has no derivative at all
        args, params = op.samples(np.random.default_rng(0))[0]
        assert np.asarray(op.impl(*args, **params)).dtype.kind in "iub", (
            f"op {name}: no input has a VJP rule")


def _grads_at(fn: Any, xs: tuple[Any, ...]) -> list[float]:
    ts = [wg.tensor(x, requires_grad=True) for x in xs]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(*ts).backward()
    return [float(np.asarray(t.grad)) for t in ts]


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].scalar_deriv is not None])
def test_float_backward_matches_the_rules_everywhere(name):
    """Tensors over Python floats take the records' float partials in the backward
    sweep; they must give exactly what the VJP rules give on 0-d arrays, at kinks,
    domain edges, infinities and NaNs too (where a partial raises, the rule runs)."""
    fn = getattr(wnp, name)
    for xs in scalar_combos(REGISTRY[name].nin):
        assert type(value_of(wg.tensor(xs[0]))) is float  # the scalar path
        on_floats = _grads_at(fn, xs)
        on_arrays = _grads_at(fn, tuple(np.array(x) for x in xs))
        # math and NumPy may differ in the last bit; infinities and NaNs must agree
        np.testing.assert_allclose(on_floats, on_arrays, rtol=1e-14, atol=0, err_msg=f"{name}{xs}")


def _unread(v: Any) -> Any:
    """What the tape keeps of a value no rule reads: its shape and dtype, NaN inside."""
    if isinstance(v, np.ndarray):
        return shape_stand_in(v)
    if isinstance(v, (float, np.floating)):
        return type(v)(np.nan)
    return v


@pytest.mark.parametrize("name", NAMES)
def test_rules_read_only_the_declared_values(name):
    """``Op.reads`` / ``reads_out`` list every value the VJP rules read (the others are
    looked at for shape and dtype only): the tape keeps large unread values as
    stand-ins, and version checks cover only declared reads. Each rule must give
    the same cotangent when every undeclared value is a NaN-filled stand-in."""
    op = REGISTRY[name]
    for k, (args, params) in enumerate(cases(name)):
        ans = op.impl(*args, **params)
        g = np.random.default_rng(k).normal(size=np.shape(ans))
        g = g.astype(np.result_type(ans)) if np.ndim(g) else float(g)
        hidden = tuple(a if i in op.reads else _unread(a) for i, a in enumerate(args))
        hidden_ans = ans if op.reads_out else _unread(ans)
        for i in diff_positions(op, args):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = np.asarray(op.vjps[i](g, ans, *args, **params))
                got = np.asarray(op.vjps[i](g, hidden_ans, *hidden, **params))
            np.testing.assert_allclose(
                got, want, rtol=1e-12, atol=1e-14,
                err_msg=f"op {name}, sample {k}, input {i}: the rule reads an undeclared value "
                f"(reads={op.reads!r}, reads_out={op.reads_out}; {describe(args, params)})",
            )


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].crossed])
def test_crossed_rules_read_only_the_other_input(name):
    """``Op.crossed``: the rule for each input reads only the other input's value (its own
    is version-checked only when the other one gets a gradient)."""
    op = REGISTRY[name]
    assert op.nin == 2
    for k, (args, params) in enumerate(cases(name)):
        ans = op.impl(*args, **params)
        g = np.random.default_rng(k).normal(size=np.shape(ans))
        g = g.astype(np.result_type(ans)) if np.ndim(g) else float(g)
        for i in diff_positions(op, args):
            hidden = tuple(_unread(a) if j == i else a for j, a in enumerate(args))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = np.asarray(op.vjps[i](g, ans, *args, **params))
                got = np.asarray(op.vjps[i](g, _unread(ans), *hidden, **params))
            np.testing.assert_allclose(
                got, want, rtol=1e-12, atol=1e-14,
                err_msg=f"op {name}, sample {k}, input {i}: the rule reads its own input "
                f"(crossed=True; {describe(args, params)})")


# -- complex values ----------------------------------------------------------------------
#: The ops whose rules hold for complex values (``Op.complex_rules``).
COMPLEX_NAMES = [n for n in NAMES if REGISTRY[n].complex_rules]


def _complexified(op: Any, args: tuple[Any, ...], diff: list[int], seed: int,
                  only_first: bool) -> tuple[Any, ...]:
    """The sample with its differentiated inputs (or only the first) given an imaginary
    part: small enough to stay inside the op's domain and off its branch cuts."""
    rng = np.random.default_rng(seed)
    out = list(args)
    for i in diff[:1] if only_first else diff:
        a = np.asarray(args[i], dtype=np.float64)
        out[i] = a + 0.3j * rng.uniform(-1.0, 1.0, a.shape)
    return tuple(out)


def _complex_cases(name: str) -> list[tuple[str, tuple[Any, ...], dict[str, Any], list[int]]]:
    """Each sample with complex inputs, and (two inputs or more) a complex first input
    next to real ones: the real ones must get real gradients."""
    op = REGISTRY[name]
    found = []
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        if not diff:
            continue
        for only_first in (False, True) if len(diff) > 1 else (False,):
            cargs = _complexified(op, args, diff, k, only_first)
            try:
                op.impl(*cargs, **params)
            except TypeError:  # an op of real inputs (rfft): its real samples only
                continue
            where = (f"op {name}, complex sample {k} ({describe(cargs, params)}); the "
                     f"differentiated arguments {diff} are numbered 0, 1, ... below")
            found.append((where, cargs, params, diff))
    return found


def test_the_ops_with_complex_rules():
    """The holomorphic and linear ops, the selections (in NumPy's lexicographic order of
    complex numbers), and those with complex rules of their own; the others refuse
    complex values (tests/test_silent_errors.py)."""
    assert {"real", "imag", "conjugate", "angle", "abs", "exp", "log", "multiply", "divide",
            "power", "sum", "getitem", "reshape", "matmul", "einsum", "inv", "det", "solve",
            "norm", "mean", "prod", "eigh_values", "eigh_vectors", "svd_values", "svd_u",
            "svd_vt", "pinv", "cholesky", "qr_q", "qr_r", "qr_completion"} <= set(COMPLEX_NAMES)
    assert not {"sign", "relu", "floor", "logsumexp", "slogdet",
                "hypot", "arctan2"} & set(COMPLEX_NAMES)


@pytest.mark.parametrize("name", COMPLEX_NAMES)
def test_complex_rules_against_finite_differences(name):
    """Both modes, first and second order, on complex samples: the VJP at ``g`` is the
    gradient of ``Re(g·f)`` and the JVP the derivative along complex tangents (see
    wengert.testing); a real input next to complex ones gets a real gradient; a NaN
    anywhere fails."""
    op = REGISTRY[name]
    for where, args, params, diff in _complex_cases(name):
        f = _as_function(op, args, params, diff)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", np.exceptions.ComplexWarning)
                check_grads(f, tuple(args[i] for i in diff), order=2, modes=("rev", "fwd"))
        except GradcheckError as exc:
            pytest.fail(f"{where}.\n{exc}", pytrace=False)


@pytest.mark.parametrize("name", COMPLEX_NAMES)
def test_complex64_stays_complex64(name):
    """complex64 in (next to float32), the output's dtype out; each cotangent in its
    input's dtype, in both modes."""
    op = REGISTRY[name]
    for where, args, params, diff in _complex_cases(name):
        args = tuple(a.astype(np.complex64) if isinstance(a, np.ndarray) and a.dtype.kind == "c"
                     else a.astype(np.float32) if isinstance(a, np.ndarray)
                     and a.dtype.kind == "f" else a for a in args)
        expected = np.result_type(op.impl(*args, **params))
        f = _as_function(op, args, params, diff)
        xs = tuple(args[i] for i in diff)
        out, pullback = wg.vjp(f, *xs)
        assert np.result_type(out) == expected, f"{where}: output dtype {np.result_type(out)}"
        cts = pullback(np.ones(np.shape(out), dtype=np.result_type(out)))
        for j, x in enumerate(xs):
            assert np.result_type(cts[j]) == np.result_type(x), (
                f"{where}: the cotangent of input {j} is {np.result_type(cts[j])}, the input "
                f"is {np.result_type(x)}"
            )
        _, t = wg.jvp(f, xs, tuple(np.ones_like(x) for x in xs))
        assert np.result_type(t) == expected, f"{where}: tangent dtype {np.result_type(t)}"
