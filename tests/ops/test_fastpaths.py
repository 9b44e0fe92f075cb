"""Every fast path is checked against the op's record, for every op of the registry.

The kinds hand ``core.bind`` specialised functions for one- and two-input ops
(tensors: compute and record inline; dual numbers: the record's float path and
float partials, or the NumPy forward and the JVP rule), and tensors' operators
and ``np.*`` ufuncs call them directly. Each is compared here with the kind's
generic ``process`` -- values, recorded op, gradients and tangents -- on the
op's own samples, so a fast path that differs from its record (a wrong sign, a
missed broadcast, a lost dtype) fails.
"""

from __future__ import annotations

import warnings

import pytest

import numpy as np
import wengert as wg
from wengert.core.bind import owner
from wengert.core.levels import Tag
from wengert.forward.dual import Dual
from wengert.interop.dispatch import tables
from wengert.numpy import UFUNC_TABLE
from wengert.ops import REGISTRY

#: op name -> its public fast function (built by core.bind for 1- and 2-input ops).
FAST = {fn.op.name: fn for fn in UFUNC_TABLE.values() if hasattr(fn, "op")}


def _generic(op, args):
    kind, level = owner(args)
    return kind.process(op, args, None, level)


def _float_samples(op):
    cases = []
    for args, params in op.samples(np.random.default_rng(1)):
        if params or not all(isinstance(a, (np.ndarray, float, np.floating)) for a in args):
            continue
        if any(np.asarray(a).dtype.kind in "iub" for a in args):  # (ldexp's exponents)
            continue
        cases.append(tuple(np.asarray(a, dtype=float) for a in args))
    return cases


def _eq(a, b, where, rtol=0.0):
    a, b = np.asarray(wg.core.bind.primal(a)), np.asarray(wg.core.bind.primal(b))
    assert a.shape == b.shape and a.dtype == b.dtype, where
    if rtol:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, err_msg=where)
    else:
        np.testing.assert_array_equal(a, b, err_msg=where)


@pytest.mark.parametrize("name", sorted(FAST))
def test_tensor_fast_path_matches_the_generic_path(name):
    op = REGISTRY[name]
    fn = FAST[name]
    for k, args in enumerate(_float_samples(op)):
        for as_float in (False, True):
            vals = [float(a) if as_float and a.ndim == 0 else a for a in args]
            where = f"{name}, sample {k}, floats={as_float}"
            results = []
            for how in ("fast", "generic"):
                ts = [wg.tensor(v, requires_grad=True) for v in vals]
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fn(*ts) if how == "fast" else _generic(op, tuple(ts))
                    assert out.grad_fn.op is op, where
                    square = out * out
                    # (a Python float output keeps the sweep on the float path: the
                    # record's float partials, scalar_deriv)
                    (square if square.shape == () else square.sum()).backward()
                results.append((out, [t.grad for t in ts]))
            (fo, fg), (go, gg) = results
            _eq(fo._value, go._value, where + ": value")
            for i, (a, b) in enumerate(zip(fg, gg)):
                # The float path may differ from the rules in the last bit (math vs NumPy).
                _eq(a, b, where + f": gradient {i}", rtol=1e-14 if as_float else 0.0)


@pytest.mark.parametrize("name", sorted(FAST))
def test_dual_fast_path_matches_the_generic_path(name):
    op = REGISTRY[name]
    fn = FAST[name]
    rng = np.random.default_rng(2)
    for k, args in enumerate(_float_samples(op)):
        tag = Tag("test")
        duals = [Dual(a, rng.normal(size=a.shape), tag) for a in args]
        for pick in range(len(args)):  # each input as the dual, the others plain
            mixed = tuple(d if i == pick or len(args) == 1 else a
                          for i, (d, a) in enumerate(zip(duals, args)))
            for operands in (tuple(duals), mixed):
                with np.errstate(all="ignore"):
                    fast = fn(*operands)
                    generic = _generic(op, operands)
                where = f"{name}, sample {k}, operands {[type(o).__name__ for o in operands]}"
                _eq(fast.primal, generic.primal, where + ": primal")
                _eq(fast.tangent, generic.tangent, where + ": tangent", rtol=4e-16)
        tag.active = False


def test_operators_and_ufuncs_on_tensors_use_the_same_functions():
    x = wg.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = wg.tensor(np.array([2.0, -1.0]), requires_grad=True)
    pairs = [(x + y, FAST["add"](x, y)), (x - y, FAST["subtract"](x, y)),
             (x * y, FAST["multiply"](x, y)), (x / y, FAST["divide"](x, y)),
             (x ** 2.0, FAST["power"](x, 2.0)), (np.sin(x), FAST["sin"](x)),
             (np.hypot(x, y), FAST["hypot"](x, y))]
    for a, b in pairs:
        assert a.grad_fn.op is b.grad_fn.op
        np.testing.assert_array_equal(a._value, b._value)
    ufuncs = tables()[0]
    assert all(ufuncs[u] is FAST[u.__name__] for u in ufuncs if u.__name__ in FAST)
