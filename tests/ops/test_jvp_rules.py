"""The forward-mode registry sweep: every primitive's JVP rule, to second order.

The companion of ``tests/test_rules.py`` (the VJP sweep), parametrized over
``REGISTRY.names()`` so a new op is checked as soon as it is registered. For
every op and every sample from ``op.samples(rng)``:

* the op has a JVP rule (an op without one fails the sweep);
* the JVP against central finite differences of ``op.impl`` in float64, for a
  random tangent on each differentiable input alone and on all of them at once
  (the other tangents ``None``, the rules' zero tangent);
* the JVP against the VJP through ``<v, J u> = <J^T v, u>``, input by input;
* second order: the map ``(x, u) -> jvp(u, f(x), x)`` run on tensors and
  differentiated in reverse mode (:func:`wengert.testing.gradcheck`, which
  uses :func:`wengert.vjp`) against finite differences, so the rule itself is
  differentiable, in the primals and in the tangents;
* the rule's output has ``ans``'s shape, and float32 stays float32.

The rule contract (``core/op.py``): ``jvp(tangents, ans, *inputs, **params)``
with one tangent per positional input, ``None`` for a zero tangent, returning
the output tangent with exactly ``ans``'s shape.

The differentiable inputs are the floating point ones whose VJP slot is not
``None`` (index arrays, conditions and the params stay fixed), as in the VJP
sweep.

These call the rule directly; ``tests/test_rules.py`` checks the same rules
through ``wg.jvp`` and ``wg.vjp`` (forward mode against finite differences,
``<v, J u> = <J^T v, u>``, and every second-order mix: fwd over rev, rev over
fwd, fwd over fwd, rev over rev).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import pytest

import numpy as np
import wengert as wg
from sweep_helpers import cases, describe, diff_positions, scalar_combos
from wengert.core.bind import apply
from wengert.ops import REGISTRY
from wengert.testing import GradcheckError, gradcheck

NAMES = REGISTRY.names()

#: Central-difference step and the tolerances, first and second order.
H = 1e-6
RTOL = 1e-4
ATOL = 1e-6
#: ``<v, J u>`` and ``<J^T v, u>`` are both exact up to rounding: relative to
#: the sum of the magnitudes of their terms.
ADJOINT_RTOL = 1e-9




def _op_with_jvp(name: str) -> Any:
    op = REGISTRY[name]
    if op.jvp is None:
        pytest.skip(f"op {name} has no JVP rule (see test_op_has_jvp)")
    return op








def _tangent(rng: np.random.Generator, a: Any) -> Any:
    """A random tangent for input ``a``: same type, shape and dtype."""
    if type(a) is float:
        return float(rng.standard_normal())
    if isinstance(a, np.generic):
        return a.dtype.type(rng.standard_normal())
    return rng.standard_normal(a.shape).astype(a.dtype)


def _tangents(n: int, us: dict[int, Any], which: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(us[i] if i in which else None for i in range(n))


def _subsets(diff: list[int]) -> list[tuple[int, ...]]:
    """Each differentiable input alone, then all of them together."""
    subsets = [(i,) for i in diff]
    if len(diff) > 1:
        subsets.append(tuple(diff))
    return subsets


def _displaced(args: tuple[Any, ...], us: dict[int, Any], which: tuple[int, ...],
               h: float) -> list[Any]:
    return [a + h * us[i] if i in which else a for i, a in enumerate(args)]


def _f64(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _run_jvp(op: Any, tangents: tuple[Any, ...], ans: Any, args: tuple[Any, ...],
             params: dict[str, Any], where: str) -> Any:
    try:
        return op.jvp(tangents, ans, *args, **params)
    except Exception as exc:
        raise AssertionError(
            f"{where}: the JVP rule raised {type(exc).__name__}: {exc}"
        ) from exc


def _check_shape(out: Any, ans: Any, where: str) -> str | None:
    if np.shape(out) != np.shape(ans):
        return (f"{where}: the JVP has shape {np.shape(out)}, the output has shape "
                f"{np.shape(ans)} (a rule must return exactly ans's shape)")
    return None


def _worst(analytic: np.ndarray, numeric: np.ndarray, k: int = 5) -> str:
    """A table of the worst entries (non-finite ones first)."""
    with np.errstate(invalid="ignore", over="ignore"):
        excess = np.abs(analytic - numeric) - (ATOL + RTOL * np.abs(numeric))
    excess = np.where(np.isfinite(excess), excess, np.inf).ravel()
    order = np.argsort(-excess, kind="stable")[:k]
    lines = [f"    {'index':<16} {'jvp':>14} {'finite diff':>14}"]
    for pos in order:
        if excess[pos] <= 0:
            break
        idx = np.unravel_index(int(pos), analytic.shape) if analytic.shape else ()
        lines.append(
            f"    {str(tuple(int(j) for j in idx)):<16} "
            f"{analytic.ravel()[pos]:>14.6e} {numeric.ravel()[pos]:>14.6e}"
        )
    return "\n".join(lines)


def _sum_to(ct: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast cotangent back to ``shape`` (what the backward sweep does)."""
    ct = np.asarray(ct)
    lead = ct.ndim - len(shape)
    if lead > 0:
        ct = ct.sum(axis=tuple(range(lead)))
    axes = tuple(k for k, n in enumerate(shape) if n == 1 and ct.shape[k] != 1)
    if axes:
        ct = ct.sum(axis=axes, keepdims=True)
    return ct


def _float32(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        np.float32(a)
        if isinstance(a, np.floating)
        else a.astype(np.float32)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f"
        else a
        for a in args
    )


# -- the sweep --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_op_has_jvp(name):
    op = REGISTRY[name]
    if op.jvp is None:
        pytest.fail(f"op {name} has no JVP rule", pytrace=False)
    assert callable(op.jvp), f"op {name}: jvp is {op.jvp!r}, not a callable"


@pytest.mark.parametrize("name", NAMES)
def test_jvp_against_finite_differences(name):
    """J u from the rule vs (f(x + h u) - f(x - h u)) / 2h, in float64."""
    op = _op_with_jvp(name)
    failures = []
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        if not diff:
            continue
        rng = np.random.default_rng(1000 + k)
        us = {i: _tangent(rng, args[i]) for i in diff}
        ans = op.impl(*args, **params)
        for which in _subsets(diff):
            where = (f"op {name}, sample {k} ({describe(args, params)}), "
                     f"tangents on inputs {list(which)}")
            out = _run_jvp(op, _tangents(len(args), us, which), ans, args, params, where)
            bad_shape = _check_shape(out, ans, where)
            if bad_shape:
                failures.append(bad_shape)
                continue
            plus = _f64(op.impl(*_displaced(args, us, which, H), **params))
            minus = _f64(op.impl(*_displaced(args, us, which, -H), **params))
            numeric = (plus - minus) / (2.0 * H)
            analytic = _f64(out)
            with np.errstate(invalid="ignore", over="ignore"):
                ok = (np.abs(analytic - numeric) <= ATOL + RTOL * np.abs(numeric)) & (
                    np.isfinite(analytic) & np.isfinite(numeric))
            if not ok.all():
                failures.append(
                    f"{where}: the JVP differs from central finite differences in "
                    f"{int((~ok).sum())} of {ok.size} entries (h={H:g}, rtol={RTOL:g}, "
                    f"atol={ATOL:g}). Worst entries:\n{_worst(analytic, numeric)}"
                )
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_matches_vjp(name):
    """<v, J_i u_i> from the JVP rule equals <J_i^T v, u_i> from the VJP rule, per input."""
    op = _op_with_jvp(name)
    failures = []
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        if not diff:
            continue
        rng = np.random.default_rng(2000 + k)
        us = {i: _tangent(rng, args[i]) for i in diff}
        ans = op.impl(*args, **params)
        v = rng.standard_normal(np.shape(ans)).astype(np.result_type(ans))
        for i in diff:
            where = f"op {name}, sample {k} ({describe(args, params)}), input {i}"
            out = _run_jvp(op, _tangents(len(args), us, (i,)), ans, args, params, where)
            bad_shape = _check_shape(out, ans, where)
            if bad_shape:
                failures.append(bad_shape)
                continue
            try:
                ct = op.vjps[i](v, ans, *args, **params)
            except Exception as exc:
                raise AssertionError(f"{where}: the VJP rule raised {exc!r}") from exc
            ct = np.asarray(ct)
            shape = np.shape(args[i])
            if op.broadcasting:
                ct = _sum_to(ct, shape)
            if ct.shape != shape:
                failures.append(f"{where}: the VJP cotangent has shape {ct.shape}, the input "
                                f"{shape}")
                continue
            fwd_terms = _f64(v) * _f64(out)
            rev_terms = _f64(ct) * _f64(us[i])
            fwd, rev = float(fwd_terms.sum()), float(rev_terms.sum())
            scale = float(np.abs(fwd_terms).sum() + np.abs(rev_terms).sum())
            if not (np.isfinite(fwd) and np.isfinite(rev)) or abs(fwd - rev) > (
                1e-12 + ADJOINT_RTOL * scale
            ):
                failures.append(
                    f"{where}: <v, J u> = {fwd:.12e} from the JVP but <J^T v, u> = {rev:.12e} "
                    f"from the VJP (difference {abs(fwd - rev):.3e}, allowed "
                    f"{1e-12 + ADJOINT_RTOL * scale:.3e})"
                )
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_rule_differentiates_again(name):
    """Second order: (x, u) -> jvp(u, f(x), x) on tensors, reverse mode vs finite differences.

    ``ans`` is ``apply(op, *x)``, so on tensors it is recorded too; the rule must
    be written with wengert functions for the gradients to flow. Differentiating
    in ``u`` as well checks that the rule runs on tensor tangents (the case of
    forward-over-forward).
    """
    op = _op_with_jvp(name)
    failures = []
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        if not diff:
            continue
        rng = np.random.default_rng(3000 + k)
        us = [_tangent(rng, args[i]) for i in diff]
        n = len(diff)

        def pushed(*xs_us: Any, args=args, params=params, diff=diff, n=n) -> Any:
            full = list(args)
            tangents: list[Any] = [None] * len(args)
            for j, i in enumerate(diff):
                full[i] = xs_us[j]
                tangents[i] = xs_us[n + j]
            ans = apply(op, *full, **params)
            return op.jvp(tuple(tangents), ans, *full, **params)

        pushed.__name__ = f"jvp_{name}"
        try:
            gradcheck(pushed, tuple(args[i] for i in diff) + tuple(us),
                      eps=H, atol=ATOL, rtol=RTOL)
        except GradcheckError as exc:
            failures.append(
                f"op {name}, sample {k} ({describe(args, params)}): the JVP rule, "
                f"differentiated in reverse mode, disagrees with finite differences. "
                f"gradcheck inputs 0..{n - 1} are the primals of inputs {diff}, inputs "
                f"{n}..{2 * n - 1} their tangents.\n{exc}"
            )
        except Exception as exc:
            raise AssertionError(
                f"op {name}, sample {k} ({describe(args, params)}): the JVP rule failed on "
                f"tensors: {type(exc).__name__}: {exc}"
            ) from exc
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_float32_stays_float32(name):
    """float32 primals and tangents give a float32 tangent of ans's shape (no silent upcast)."""
    op = _op_with_jvp(name)
    failures = []
    for k, (args, params) in enumerate(cases(name)):
        args = _float32(args)
        diff = diff_positions(op, args)
        if not diff:
            continue
        rng = np.random.default_rng(4000 + k)
        us = {i: _tangent(rng, args[i]) for i in diff}
        ans = op.impl(*args, **params)
        for which in _subsets(diff):
            where = (f"op {name}, sample {k} in float32 ({describe(args, params)}), "
                     f"tangents on inputs {list(which)}")
            out = _run_jvp(op, _tangents(len(args), us, which), ans, args, params, where)
            bad_shape = _check_shape(out, ans, where)
            if bad_shape:
                failures.append(bad_shape)
            elif np.result_type(out) != np.result_type(ans):
                failures.append(f"{where}: the JVP is {np.result_type(out)}, the output is "
                                f"{np.result_type(ans)}")
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


@pytest.mark.parametrize(
    "name", [n for n in REGISTRY.names() if REGISTRY[n].scalar_deriv is not None]
)
def test_scalar_derivatives_match_the_rules(name):
    """The float fast path of dual numbers agrees with the op's JVP rule."""
    op = REGISTRY[name]
    rng = np.random.default_rng(3)
    for args, params in op.samples(rng):
        if any(np.shape(a) != () for a in args):
            continue
        xs = tuple(float(a) for a in args)
        ans = float(op.impl(*xs, **params))
        for i, d in enumerate(op.scalar_deriv):
            tangents = tuple(1.0 if j == i else None for j in range(len(xs)))
            expected = float(np.asarray(op.jvp(tangents, ans, *xs, **params)))
            np.testing.assert_allclose(d(ans, *xs), expected, rtol=1e-12, atol=1e-14)
        dual = wg.Dual(xs[0], 1.0)
        args_d = (dual,) + xs[1:]
        out = wg.numpy.__dict__[name](*args_d) if name in wg.numpy.__all__ else None
        if out is not None:
            np.testing.assert_allclose(out.tangent, float(np.asarray(
                op.jvp((1.0,) + (None,) * (len(xs) - 1), ans, *xs, **params))), rtol=1e-12)


@pytest.mark.parametrize("name", REGISTRY.names())
def test_batched_tangents_match_reverse_mode(name):
    """jacfwd pushes all basis tangents at once (a leading batch axis); every op's
    forward rule must then agree with reverse mode, whether it handles the batch
    itself (``op.batch_jvp``) or is called once per tangent."""
    op = REGISTRY[name]
    rng = np.random.default_rng(5)
    for args, params in op.samples(rng):
        diff = [
            i for i, a in enumerate(args)
            if op.vjps[i] is not None and np.asarray(a).dtype.kind == "f" and np.ndim(a) > 0
        ] if op.nin != -1 else [0]
        if len(diff) != 1:
            continue
        i = diff[0]

        def f(x, args=args, i=i, params=params):
            full = list(args)
            full[i] = x
            return apply(op, *full, **params)

        x = np.asarray(args[i], dtype=float)
        if np.iscomplexobj(op.impl(*args, **params)):
            # a complex output (fft of a real x): reverse mode gives only Re J per row,
            # so the batched pass is checked against one JVP per basis tangent
            cols = [wg.jvp(f, (x,), (e.reshape(x.shape),))[1] for e in np.eye(x.size)]
            want = np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(cols[0]) + x.shape)
        else:
            want = wg.jacrev(f)(x)
        np.testing.assert_allclose(
            wg.jacfwd(f)(x), want, rtol=1e-9, atol=1e-12,
            err_msg=f"{name}: batched forward mode disagrees with reverse mode",
        )



@pytest.mark.parametrize(
    "name", [n for n in REGISTRY.names() if REGISTRY[n].scalar_deriv is not None]
)
def test_float_duals_match_the_rules_everywhere(name):
    """Dual numbers over Python floats take the float partials; they must agree with
    the JVP rule on 0-d arrays at kinks, domain edges, infinities and NaNs too.
    Ops with a Python operator are checked through the operator as well (the
    dual's own fast paths)."""
    _check_float_duals(name, getattr(wg.numpy, name))
    if name in OPERATORS:
        _check_float_duals(name, OPERATORS[name])


OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
             "divide": operator.truediv, "power": operator.pow}


def _check_float_duals(name: str, fn: Any) -> None:
    nin = REGISTRY[name].nin
    for xs in scalar_combos(nin):
        for i in range(nin):
            results = []
            for wrap in (float, np.array):
                args = [
                    wg.Dual(wrap(x), wrap(1.0)) if j == i else wrap(x) for j, x in enumerate(xs)
                ]
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fn(*args)
                results.append([float(np.asarray(out.primal)), float(np.asarray(out.tangent))])
            np.testing.assert_allclose(results[0], results[1], rtol=1e-14, atol=0,
                                       err_msg=f"{name}{xs} (value, d/dx{i})")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", ["arctan2", "power", "hypot", "logaddexp", "maximum",
                                  "multiply", "divide", "copysign", "fmod"])
def test_jvp_with_a_python_int_operand_keeps_the_output_dtype(name, dtype):
    """A Python int beside a float32 array is weak (NumPy keeps float32): the tangent of
    ``f(x, 2)`` and ``f(2, x)`` has the output's dtype, as the value has."""
    f = getattr(wg.numpy, name)
    x = np.array([0.3, 0.7], dtype)
    for fn in (lambda a: f(a, 2), lambda a: f(2, a)):
        value, tangent = wg.jvp(fn, (x,), (np.ones(2, dtype),))
        assert value.dtype == dtype
        assert tangent.dtype == dtype, (name, tangent.dtype)
