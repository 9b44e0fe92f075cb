"""The registry sweep: every primitive's rules against finite differences, to second order.

Parametrized over ``REGISTRY.names()``, so a new op is checked as soon as it is
registered. Each op brings its own test inputs (``Op.samples``): inside its
domain and away from kinks. For each sample the differentiable inputs are the
floating point ones whose VJP slot is not ``None``; the others (index arrays,
conditions) and the params stay fixed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import wengert as wg
import wengert.numpy as wnp
from sweep_helpers import cases, describe, diff_positions, scalar_combos
from wengert.core.bind import apply
from wengert.ops import FAMILIES, REGISTRY
from wengert.recording import shape_stand_in
from wengert.tensor import Tensor, value_of
from wengert.testing import GradcheckError, check_grads

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


# -- the registry as a whole ---------------------------------------------------------
def test_op_names_are_unique():
    names = [op.name for family in FAMILIES for op in family.OPS]
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
    assert any(r is not None for r in op.vjps), f"op {name}: no input has a VJP rule"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.__name__.rsplit(".", 1)[-1] for f in FAMILIES])
def test_wengert_numpy_exposes_every_public_name(family):
    public = getattr(family, "PUBLIC", ())
    missing = [n for n in public if not callable(getattr(wnp, n, None))]
    assert not missing, f"wengert.numpy lacks {missing} from {family.__name__}.PUBLIC"
    different = [n for n in public if getattr(wnp, n) is not getattr(family, n)]
    assert not different, f"wengert.numpy.{different} are not {family.__name__}'s functions"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.__name__.rsplit(".", 1)[-1] for f in FAMILIES])
def test_dispatch_tables_name_numpy_functions(family):
    for name, fn in getattr(family, "UFUNCS", {}).items():
        assert isinstance(getattr(np, name, None), np.ufunc), f"np.{name} is not a ufunc"
        assert callable(fn)
    for np_fn, fn in getattr(family, "NUMPY", {}).items():
        assert callable(np_fn) and callable(fn), f"{family.__name__}.NUMPY[{np_fn!r}]"


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
