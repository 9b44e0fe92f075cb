"""Reductions and scans: forward, JVP and VJP of each together.

A linear op's JVP is the op itself applied to the tangent (:func:`_linear`);
the nonlinear ones (prod, cumprod, max/min, var/std, logsumexp, norm) have
their own rules, written, like the VJPs, with wengert's functions.

Conventions: ties in ``max``/``min`` (and in the ``inf``-norms) split the
gradient evenly among the tied elements, as in PyTorch and JAX; the gradient
of a 2-norm at zero is zero. ``prod`` and ``cumprod`` never divide by the
input, so their gradients are exact when the input holds zeros, to any order.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op, Words
from wengert.ops import elementwise as _ew
from wengert.ops import indexing as _ix
from wengert.ops import shape as _sh
from wengert.ops.base import Family, apply, linear, shape_of
from wengert.ops.base import primal as _raw
from wengert.ops.broadcast import (
    SUM,
    axis_samples,
    broadcast_to,
    expand,
    keep_shape,
    norm_axis,
    reshape_to,
)

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("reduce")
# The ops whose rules hold for complex values say so (complex_rules=True; see
# ops/elementwise.py): the linear and holomorphic ones; norm, var and std (whose rules use
# conj(z) for complex z); max and min, which select entries in NumPy's (lexicographic)
# order of complex numbers. logsumexp refuses complex values.

_shape_of = shape_of
_norm_axis = norm_axis
_keep_shape = keep_shape
_expand = expand
_axis_samples = axis_samples


def _count(shape: tuple[int, ...], axis: Any) -> int:
    """How many elements a reduction over ``axis`` combines."""
    n = 1
    for a in _norm_axis(axis, len(shape)):
        n *= shape[a]
    return n


def _expand_raw(v: Any, shape: tuple[int, ...], axis: Any, keepdims: bool) -> Any:
    v = _raw(v)
    if not keepdims:
        v = np.reshape(v, _keep_shape(shape, axis))
    return v


def _axis_param(axis: Any) -> Any:
    if isinstance(axis, list):
        return tuple(axis)
    if isinstance(axis, np.integer):
        return int(axis)
    return axis


def _no_extras(name: str, out: Any = None, **unsupported: Any) -> None:
    if out is not None:
        raise TypeError(
            f"wengert.{name}: out= is not supported on tensors (the gradient would be lost); "
            "assign the result instead (y = np.f(x))."
        )
    for key, value in unsupported.items():
        if value is not None and not (key == "where" and value is True):
            raise NotImplementedError(f"wengert.{name} does not support {key}=")


def _cast(x: Any, dtype: Any) -> Any:
    return x if dtype is None else _ew.astype(x, dtype)


# -- sample generators for the registry sweep -----------------------------------------
def _distinct(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Values with gaps of at least 0.25 (no ties, safe for central differences)."""
    size = int(np.prod(shape, dtype=np.int64))
    v = (rng.permutation(size) - size / 2.0) * 0.35 + rng.uniform(0.0, 0.1, size)
    return v.reshape(shape)


def _normal(rng: Any, shape: tuple[int, ...]) -> Any:
    return rng.normal(size=shape)


# -- mean ---------------------------------------------------------------------------------
def _mean_vjp(g: Any, ans: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    shape = _shape_of(x)
    n = _count(shape, axis)
    return _expand(g, shape, axis, keepdims) * (1.0 / n if n else math.nan)


MEAN = linear(Op(
    "mean", lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
    (_mean_vjp,), formula="∂/∂x mean(x) = 1/n (broadcast back)", symbol="mean",
    adjoint=("ḡ / n broadcast to the shape of {0}",),
    samples=_axis_samples(_normal), jax="jnp.mean({0}, axis={axis}, keepdims={keepdims})",
    complex_rules=True))
FAMILY.op(MEAN)


# -- prod and cumulative scans -----------------------------------------------------------
def _shift(x: Any, axis: int, by: int, fill: float) -> Any:
    """Shift ``x`` along ``axis`` by ``by`` places (right if positive), filling with ``fill``."""
    shape = _shape_of(x)
    nd = len(shape)
    n = shape[axis]
    k = builtins.min(builtins.abs(by), n)
    lead = (slice(None),) * axis
    width = [(0, 0)] * nd
    if by > 0:
        part = _ix.getitem(x, lead + (slice(0, n - k),))
        width[axis] = (k, 0)
    else:
        part = _ix.getitem(x, lead + (slice(k, n),))
        width[axis] = (0, k)
    return _sh.pad(part, tuple(width), constant_values=fill)


def _scan(g: Any, c: Any, axis: int, step: int = -1) -> Any:
    """Solve ``s[j] = g[j] + c[j] * s[j+1]`` along ``axis`` (``s[n] = 0``).

    With ``step=1`` the recurrence runs forward instead:
    ``s[j] = g[j] + c[j] * s[j-1]`` (``s[-1] = 0``).
    A Hillis-Steele scan in ``log2(n)`` steps of shifts, products and sums:
    no division, so it is exact for zeros in ``c`` and differentiable again.
    """
    n = _shape_of(g)[axis]
    s, a = g, c
    d = 1
    while d < n:
        s = s + a * _shift(s, axis, step * d, 0.0)
        if 2 * d < n:
            a = a * _shift(a, axis, step * d, 0.0)
        d *= 2
    return s


def _cumprod_along(g: Any, ans: Any, x: Any, axis: int) -> Any:
    # x̄[j] = Π_{k<j} x[k] · Σ_{i≥j} ḡ[i] Π_{j<k≤i} x[k]
    if _shape_of(x)[axis] == 0:
        return g
    left = _shift(ans, axis, 1, 1.0)
    return left * _scan(g, _shift(x, axis, -1, 0.0), axis)


def _cumprod_vjp(g: Any, ans: Any, x: Any, axis: Any = None) -> Any:
    shape = _shape_of(x)
    if axis is None:
        return reshape_to(_cumprod_along(g, ans, reshape_to(x, (-1,)), 0), shape)
    return _cumprod_along(g, ans, x, axis % len(shape))


def _cumprod_jvp_along(t: Any, ans: Any, x: Any, axis: int) -> Any:
    # ẏ[j] = Σ_{i≤j} t[i] Π_{k<i} x[k] Π_{i<k≤j} x[k]: s[j] = t[j] ans[j-1] + x[j] s[j-1]
    if _shape_of(x)[axis] == 0:
        return t
    return _scan(t * _shift(ans, axis, 1, 1.0), x, axis, step=1)


def _cumprod_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = None) -> Any:
    t = ts[0]
    if axis is None:
        return _cumprod_jvp_along(reshape_to(t, (-1,)), ans, reshape_to(x, (-1,)), 0)
    return _cumprod_jvp_along(t, ans, x, axis % len(_shape_of(x)))


def _prod_others(x: Any, axes: tuple[int, ...]) -> Any:
    """For each element, the product of the others in its reduction group (no division)."""
    shape = _shape_of(x)
    keep = [i for i in range(len(shape)) if i not in axes]
    perm = tuple(keep) + tuple(axes)
    xt = x if perm == tuple(range(len(shape))) else _sh.transpose(x, perm)
    tshape = tuple(shape[i] for i in perm)
    n = _count(shape, axes)
    flat = reshape_to(xt, tshape[: len(keep)] + (n,))
    a = len(keep)
    left = _shift(cumprod(flat, axis=a), a, 1, 1.0)
    right = _sh.flip(_shift(cumprod(_sh.flip(flat, a), axis=a), a, 1, 1.0), a)
    others = reshape_to(left * right, tshape)
    if xt is x:
        return others
    return _sh.transpose(others, tuple(int(i) for i in np.argsort(perm)))


def _prod_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    one = np.array([1.3, 0.0, -0.7, 1.1])
    two = np.array([[0.0, 1.2, 0.0], [0.9, -1.4, 0.8]])
    return _axis_samples(_normal)(rng) + [
        ((one,), {"axis": None, "keepdims": False}), ((two,), {"axis": 1, "keepdims": False}),
        ((two,), {"axis": None, "keepdims": True})]


def _prod_vjp(g: Any, ans: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    shape = _shape_of(x)
    axes = _norm_axis(axis, len(shape))
    ge = _expand(g, shape, axis, keepdims)
    if not axes:
        return ge
    if _count(shape, axes) == 0:
        return ge * 0.0
    return ge * _prod_others(x, axes)


def _prod_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = None,
              keepdims: bool = False) -> Any:
    t = ts[0]
    shape = _shape_of(x)
    axes = _norm_axis(axis, len(shape))
    if not axes:
        return t
    if _count(shape, axes) == 0:
        return sum(t, axis=axis, keepdims=keepdims) * 0.0
    return sum(t * _prod_others(x, axes), axis=axis, keepdims=keepdims)


PROD = Op("prod", lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims),
          (_prod_vjp,), jvp=_prod_jvp, reads=(0,),
          formula="∂/∂xᵢ Πx = Π_{j≠i} xⱼ (exact with zeros)", symbol="Π", samples=_prod_samples,
          adjoint=("ḡ·(the product of the other entries)",),
          jax="jnp.prod({0}, axis={axis}, keepdims={keepdims})", complex_rules=True)
FAMILY.op(PROD)


def _cumsum_vjp(g: Any, ans: Any, x: Any, axis: Any = None) -> Any:
    shape = _shape_of(x)
    if axis is None:
        return reshape_to(_sh.flip(cumsum(_sh.flip(g, 0), axis=0), 0), shape)
    return _sh.flip(cumsum(_sh.flip(g, axis), axis=axis), axis)


def _scan_samples(draw: Any) -> Any:
    def samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        cases = [((), {"axis": None}), ((5,), {"axis": None}), ((5,), {"axis": 0}),
                 ((2, 3), {"axis": None}), ((2, 3), {"axis": 1}), ((3, 2, 4), {"axis": -1}),
                 ((3, 2, 4), {"axis": 0})]
        return [((draw(rng, s),), p) for s, p in cases]

    return samples


CUMSUM = linear(Op("cumsum", lambda x, axis=None: np.cumsum(x, axis=axis), (_cumsum_vjp,),
                    formula="adjoint: reversed cumulative sum", symbol="cumsum",
                    adjoint=("ḡ summed from the end (reversed cumsum)",),
                    samples=_scan_samples(_normal), jax="jnp.cumsum({0}, axis={axis})",
                    complex_rules=True))
FAMILY.op(CUMSUM)
CUMPROD = Op("cumprod", lambda x, axis=None: np.cumprod(x, axis=axis), (_cumprod_vjp,),
             jvp=_cumprod_jvp, reads=(0,), reads_out=True,
             formula="x̄ⱼ = Π_{k<j} xₖ · Σ_{i≥j} ḡᵢ Π_{j<k≤i} xₖ (no division)", symbol="cumprod",
             adjoint=("Σ_(i≥j) ḡᵢ·Π_(k≤i, k≠j) {0}ₖ, for each j",),
             samples=lambda rng: _scan_samples(_normal)(rng) + [
                 ((np.array([1.2, 0.0, -0.8, 1.5, 0.0, 0.7]),), {"axis": 0}),
                 ((np.array([[0.0, 1.1, 0.9], [1.3, 0.0, -1.2]]),), {"axis": -1})],
                 jax="jnp.cumprod({0}, axis={axis})", complex_rules=True)
FAMILY.op(CUMPROD)


# -- max, min ----------------------------------------------------------------------------
def _extreme_weight(ans: Any, x: Any, axis: Any, keepdims: bool) -> np.ndarray:
    """1/count at the extreme elements of each group (ties share), 0 elsewhere."""
    xv = _raw(x)
    if not isinstance(xv, np.ndarray) and not _ew.is_traced(xv):
        xv = np.asarray(xv)
    best = _expand_raw(ans, xv.shape, axis, keepdims)
    mask = (xv == best) | (np.isnan(xv) & np.isnan(best))
    count = np.sum(mask, axis=_norm_axis(axis, xv.ndim), keepdims=True)
    dtype = np.result_type(xv.dtype, np.float16)
    return _ew.as_dtype(mask, dtype) / _ew.as_dtype(np.maximum(count, 1), dtype)


def _extreme_vjp(g: Any, ans: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _expand(g, _shape_of(x), axis, keepdims) * _extreme_weight(ans, x, axis, keepdims)


def _extreme_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = None,
                 keepdims: bool = False) -> Any:
    return sum(ts[0] * _extreme_weight(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)


def _extreme_op(name: str, impl: Any, what: str) -> Op:
    """``max`` or ``min``: the gradient goes to the extreme entries, split evenly on ties."""
    return FAMILY.op(Op(
        name, lambda x, axis=None, keepdims=False: impl(x, axis=axis, keepdims=keepdims),
        (_extreme_vjp,), jvp=_extreme_jvp, reads=(0,), reads_out=True,
        formula=f"gradient to the {what}; ties split it evenly", symbol=name,
        adjoint=(f"ḡ at the {name} of {{0}}, split evenly on ties",),
        samples=_axis_samples(_distinct),
        jax=f"jnp.{name}({{0}}, axis={{axis}}, keepdims={{keepdims}})", complex_rules=True))


MAX = _extreme_op("max", np.max, "maximum")
MIN = _extreme_op("min", np.min, "minimum")


# -- var, std ----------------------------------------------------------------------------
def _centered(x: Any, axis: Any) -> Any:
    return x - mean(x, axis=axis, keepdims=True)


def _centered_conj(x: Any, axis: Any) -> Any:
    """``conj(x − mean)``: ∂|d|²/∂d is 2·conj(d) for complex ``d`` (NumPy's variance of
    complex values is the mean of ``|x − mean|²``)."""
    d = _centered(x, axis)
    return _ew.conj(d) if _ew.dtype_of(d).kind == "c" else d


def _var_vjp(g: Any, ans: Any, x: Any, axis: Any = None, ddof: int = 0,
             keepdims: bool = False) -> Any:
    shape = _shape_of(x)
    dof = _count(shape, axis) - ddof
    scale = 2.0 / dof if dof > 0 else math.inf
    return _expand(g, shape, axis, keepdims) * _centered_conj(x, axis) * scale


def _std_vjp(g: Any, ans: Any, x: Any, axis: Any = None, ddof: int = 0,
             keepdims: bool = False) -> Any:
    shape = _shape_of(x)
    dof = _count(shape, axis) - ddof
    scale = 1.0 / dof if dof > 0 else math.inf
    g_over_std = _ew.divide(g, _ew.zeros_to_one(ans))  # 0 where the input is constant
    return _expand(g_over_std, shape, axis, keepdims) * _centered_conj(x, axis) * scale


def _var_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = None, ddof: int = 0,
             keepdims: bool = False) -> Any:
    dof = _count(_shape_of(x), axis) - ddof
    scale = 2.0 / dof if dof > 0 else math.inf
    return _ew.real(sum(_centered_conj(x, axis) * ts[0], axis=axis, keepdims=keepdims)) * scale


def _std_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = None, ddof: int = 0,
             keepdims: bool = False) -> Any:
    dof = _count(_shape_of(x), axis) - ddof
    scale = 1.0 / dof if dof > 0 else math.inf
    d = _ew.real(sum(_centered_conj(x, axis) * ts[0], axis=axis, keepdims=keepdims))
    return _ew.divide(d * scale, _ew.zeros_to_one(ans))


def _var_impl(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    return np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)


def _std_impl(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    return np.std(x, axis=axis, ddof=ddof, keepdims=keepdims)


def _var_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    base = _axis_samples(_normal)(rng)[1:]  # a 0-d variance is constant zero
    base = [(a, {**p, "ddof": 0}) for a, p in base]
    return base + [((rng.normal(size=(3, 4)),), {"axis": 1, "ddof": 1, "keepdims": False}),
                   ((rng.normal(size=(5,)),), {"axis": None, "ddof": 1, "keepdims": True})]


VAR = Op("var", _var_impl, (_var_vjp,), jvp=_var_jvp, reads=(0,),
         formula="∂/∂x var(x) = 2 (x - mean) / (n - ddof)", symbol="var", samples=_var_samples,
         adjoint=("ḡ·2·({0} − mean) / (n − {ddof})",), complex_rules=True,
         complex_adjoint="ḡ·2·conj({0} − mean) / (n − {ddof})",
         jax="jnp.var({0}, axis={axis}, ddof={ddof}, keepdims={keepdims})",
         words=Words(zero="degenerate"))
FAMILY.op(VAR)
STD = Op("std", _std_impl, (_std_vjp,), jvp=_std_jvp, reads=(0,), reads_out=True,
         formula="∂/∂x std(x) = (x - mean) / ((n - ddof) std)", symbol="std",
         adjoint=("ḡ·({0} − mean) / ((n − {ddof})·{out})  (0 where {out} = 0)",),
         samples=_var_samples, complex_rules=True,
         complex_adjoint="ḡ·conj({0} − mean) / ((n − {ddof})·{out})  (0 where {out} = 0)",
         jax="_std({0}, axis={axis}, ddof={ddof}, keepdims={keepdims})",
         words=Words(zero="degenerate"))
FAMILY.op(STD)


# -- logsumexp ---------------------------------------------------------------------------
def _logsumexp_impl(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = np.asarray(x)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=keepdims))
    return s + (m if keepdims else np.reshape(m, np.shape(s)))


def _softmax(x: Any, ans: Any, axis: Any, keepdims: bool) -> Any:
    """The weights ``exp(x − ans)`` of ``ans = logsumexp(x)``, also where an infinite entry
    equals ``ans`` (``inf − inf``): those entries share the weight evenly (1 for a lone
    one), as ``logaddexp`` and ties of ``max`` do."""
    a = _expand(ans, _shape_of(x), axis, keepdims)
    xv = _raw(x)
    same = np.isinf(xv) & (xv == _raw(a))
    if not (_ew.is_traced(same) or np.any(same)):
        return _ew.exp(x - a)
    count = np.sum(same, axis=axis, keepdims=True)
    split = np.where(same, 1.0 / np.maximum(count, 1), 0.0).astype(_ew.dtype_of(ans))
    return _ew.where(same, split, _ew.exp(_ew.where(same, 0.0, x) - _ew.where(same, 0.0, a)))


def _logsumexp_vjp(g: Any, ans: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _expand(g, _shape_of(x), axis, keepdims) * _softmax(x, ans, axis, keepdims)


def _logsumexp_jvp(ts: tuple[Any, ...], ans: Any, x: Any, axis: Any = None,
                   keepdims: bool = False) -> Any:
    return sum(ts[0] * _softmax(x, ans, axis, keepdims), axis=axis, keepdims=keepdims)


LOGSUMEXP = Op("logsumexp", _logsumexp_impl, (_logsumexp_vjp,), jvp=_logsumexp_jvp,
               reads=(0,), reads_out=True,
               formula="∂/∂x log Σ eˣ = softmax(x)", symbol="logsumexp",
               adjoint=("ḡ·exp({0} − {out})",),
               samples=_axis_samples(_normal),
               jax="jax.scipy.special.logsumexp({0}, axis={axis}, keepdims={keepdims})")
FAMILY.op(LOGSUMEXP)


# -- norms -------------------------------------------------------------------------------
def _norm_axes(ord: Any, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        if ord is None or ndim == 0:
            return tuple(range(ndim))
        return (0,) if ndim == 1 else (0, 1)
    if isinstance(axis, tuple):
        return tuple(a % ndim for a in axis)
    return (axis % ndim,)


def _tie_weight(values: np.ndarray, best: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    mask = values == best
    count = np.sum(mask, axis=axes, keepdims=True)
    dtype = np.result_type(values.dtype, np.float16)
    return _ew.as_dtype(mask, dtype) / _ew.as_dtype(np.maximum(count, 1), dtype)


def _norm_terms(ans: Any, x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """``(axes, w, d)`` with ``∂‖x‖/∂x = w / d``: ``w`` of x's shape (None: zero), ``d`` of
    the output's shape (None: one). The VJP is ``ḡ w / d``, the JVP ``Σ_axes(t w) / d``."""
    xv = _raw(x)
    if not isinstance(xv, np.ndarray) and not _ew.is_traced(xv):
        xv = np.asarray(xv)
    axes = _norm_axes(ord, axis, xv.ndim)
    matrix = len(axes) == 2
    cplx = xv.dtype.kind == "c"
    if matrix and ord in (2, -2, "nuc"):
        raise NotImplementedError(
            f"wengert.norm: the matrix norm ord={ord!r} (from singular values) has no gradient "
            "rule; use the Frobenius norm ord='fro', or the 1- or inf-norm."
        )
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return axes, _ew.conjugate(x) if cplx else x, _ew.zeros_to_one(ans)
    best = _expand_raw(ans, xv.shape, axes, keepdims)
    # ∂|x|/∂x: sign(x), or conj(z)/|z| for complex z (not piecewise constant: traced)
    sgn = _ew.divide(_ew.conjugate(x), _ew.zeros_to_one(_ew.abs(x))) if cplx else np.sign(xv)
    if matrix:
        # ord = ±1: extreme column sum (sum over rows); ord = ±inf: extreme row sum
        summed = axes[0] if ord in (1, -1) else axes[1]
        other = axes[1] if ord in (1, -1) else axes[0]
        sums = np.sum(np.abs(xv), axis=summed, keepdims=True)
        return axes, sgn * _tie_weight(sums, best, (other,)), None
    if ord == 1:
        return axes, sgn, None
    if ord in (math.inf, -math.inf):
        return axes, sgn * _tie_weight(np.abs(xv), best, axes), None
    if ord == 0:
        return axes, None, None
    p = float(ord)
    return axes, sgn * _ew.power(_ew.abs(x), p - 1.0), _ew.power(ans, p - 1.0)


def _norm_vjp(g: Any, ans: Any, x: Any, ord: Any = None, axis: Any = None,
              keepdims: bool = False) -> Any:
    shape = _shape_of(x)
    axes, w, d = _norm_terms(ans, x, ord, axis, keepdims)
    ge = _expand(g, shape, axes, keepdims)
    if w is None:
        return ge * 0.0
    out = ge * w
    return out if d is None else _ew.divide(out, _expand(d, shape, axes, keepdims))


def _norm_jvp(ts: tuple[Any, ...], ans: Any, x: Any, ord: Any = None, axis: Any = None,
              keepdims: bool = False) -> Any:
    axes, w, d = _norm_terms(ans, x, ord, axis, keepdims)
    if w is None:
        return _ew.real(sum(ts[0], axis=axes, keepdims=keepdims)) * 0.0
    out = _ew.real(sum(ts[0] * w, axis=axes, keepdims=keepdims))  # Re(conj(z)·dz) for complex
    return out if d is None else _ew.divide(out, d)


def _norm_impl(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _norm_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    def nz(*shape: int) -> np.ndarray:
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)

    return [
        ((rng.normal(size=(4,)),), {"ord": None, "axis": None, "keepdims": False}),
        ((rng.normal(size=(2, 3, 2)),), {"ord": None, "axis": None, "keepdims": True}),
        ((rng.normal(size=(3, 4)),), {"ord": None, "axis": -1, "keepdims": False}),
        ((rng.normal(size=(3, 4)),), {"ord": 2, "axis": 0, "keepdims": True}),
        ((rng.normal(size=(3, 4)),), {"ord": "fro", "axis": None, "keepdims": False}),
        ((rng.normal(size=(2, 3, 4)),), {"ord": "fro", "axis": (2, 0), "keepdims": False}),
        ((nz(5),), {"ord": 1, "axis": None, "keepdims": False}),
        ((_distinct(rng, (2, 5)),), {"ord": math.inf, "axis": 1, "keepdims": False}),
        ((_distinct(rng, (2, 5)),), {"ord": -math.inf, "axis": 1, "keepdims": True}),
        ((nz(3, 4),), {"ord": 3, "axis": 1, "keepdims": False}),
        ((nz(3, 4),), {"ord": 1, "axis": None, "keepdims": False}),
        ((nz(3, 4),), {"ord": math.inf, "axis": None, "keepdims": False}),
        ((nz(2, 3, 4),), {"ord": -1, "axis": (0, 2), "keepdims": True}),
    ]


def _norm_jax(s: JaxStep) -> str:
    """The 2-norms through a helper (gradient 0 at 0, as wengert's), the others with
    ``jnp.linalg.norm``."""
    ord_, axis = s.params["ord"], s.params["axis"]
    nd = len(s.shape(0))
    matrix = (isinstance(axis, tuple) and len(axis) == 2) or (axis is None and ord_ is not None
                                                                and nd == 2)
    two = ord_ is None or ord_ == "fro" or (ord_ == 2 and not matrix)
    real = s.dtype(0).kind in "fiub"
    if two and real:
        s.helper("_norm2")
        return f"_norm2({s.args[0]}{s.keywords('axis', 'keepdims')})"
    x = s.args[0]
    if real and s.dtype(0).kind == "f" and not (matrix and ord_ in (2, -2, "nuc")):
        x = f"{s.helper('_abs')}({x})"  # these norms read |x| only: abs'(0) = 0 as wengert's
    return f"jnp.linalg.norm({x}{s.keywords('ord', 'axis', 'keepdims')})"


NORM = Op("norm", _norm_impl, (_norm_vjp,), jvp=_norm_jvp, reads=(0,), reads_out=True,
          formula="∂/∂x ‖x‖₂ = x / ‖x‖₂ (0 at x = 0; conj(z) / ‖z‖₂ for complex z)",
          symbol="‖·‖", samples=_norm_samples,
          adjoint=("ḡ·∂‖{0}‖/∂{0}  (2-norm: ḡ·{0} / {out}, 0 at 0)",), complex_rules=True,
          complex_adjoint="ḡ·∂‖{0}‖/∂{0}  (2-norm: ḡ·conj({0}) / {out}, 0 at 0)", jax=_norm_jax,
          words=Words(zero="degenerate"))
FAMILY.op(NORM)


# -- trace -------------------------------------------------------------------------------
def _diag_len(shape: tuple[int, ...], offset: int, axis1: int, axis2: int) -> int:
    n1, n2 = shape[axis1], shape[axis2]
    if offset >= 0:
        return builtins.max(0, builtins.min(n1, n2 - offset))
    return builtins.max(0, builtins.min(n1 + offset, n2))


def _trace_vjp(g: Any, ans: Any, x: Any, offset: int = 0, axis1: int = 0,
               axis2: int = 1) -> Any:
    shape = _shape_of(x)
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    k = _diag_len(shape, offset, a1, a2)
    rest = tuple(n for i, n in enumerate(shape) if i not in (a1, a2))
    diag = broadcast_to(reshape_to(g, rest + (1,)), rest + (k,))
    return _sh.diagonal_embed(diag, shape, offset, a1, a2)


TRACE = linear(Op(
    "trace", lambda x, offset=0, axis1=0, axis2=1: np.trace(x, offset, axis1, axis2),
    (_trace_vjp,), formula="adjoint: the cotangent on the diagonal", symbol="tr",
    adjoint=("zeros like {0} with ḡ on the traced diagonal",),
    samples=lambda rng: [
        ((rng.normal(size=(3, 3)),), {"offset": 0, "axis1": 0, "axis2": 1}),
        ((rng.normal(size=(3, 4)),), {"offset": 1, "axis1": 0, "axis2": 1}),
        ((rng.normal(size=(4, 3)),), {"offset": -2, "axis1": 0, "axis2": 1}),
        ((rng.normal(size=(2, 3, 4)),), {"offset": 0, "axis1": -1, "axis2": 0}),
        ((rng.normal(size=(3, 2, 3)),), {"offset": -1, "axis1": 2, "axis2": 0}),
    ], jax="jnp.trace({0}, offset={offset}, axis1={axis1}, axis2={axis2})", complex_rules=True))
FAMILY.op(TRACE)


# -- public functions --------------------------------------------------------------------
@FAMILY.export
def sum(x: Any, axis: Any = None, keepdims: bool = False, *, dtype: Any = None,  # noqa: A001
        out: Any = None, initial: Any = None, where: Any = None) -> Any:
    """Sum over ``axis`` (all by default); the gradient broadcasts back.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> wg.numpy.sum(x, axis=0)
    tensor([4., 6.], grad_fn=<SumBackward>)
    """
    _no_extras("sum", out, initial=initial, where=where)
    return apply(SUM, _cast(x, dtype), axis=_axis_param(axis), keepdims=bool(keepdims))


@FAMILY.export
def mean(x: Any, axis: Any = None, keepdims: bool = False, *, dtype: Any = None,
         out: Any = None, where: Any = None) -> Any:
    """Arithmetic mean over ``axis``; the gradient is ``1/n`` broadcast back."""
    _no_extras("mean", out, where=where)
    return apply(MEAN, _cast(x, dtype), axis=_axis_param(axis), keepdims=bool(keepdims))


@FAMILY.export
def prod(x: Any, axis: Any = None, keepdims: bool = False, *, dtype: Any = None,
         out: Any = None, initial: Any = None, where: Any = None) -> Any:
    """Product over ``axis``; the gradient is the product of the other elements.

    It is computed with exclusive cumulative products, never by dividing by
    ``x``, so it is exact (to any order) where ``x`` holds zeros.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: wg.numpy.prod(x))(np.array([2.0, 0.0, 3.0]))
    array([0., 6., 0.])
    """
    _no_extras("prod", out, initial=initial, where=where)
    return apply(PROD, _cast(x, dtype), axis=_axis_param(axis), keepdims=bool(keepdims))


def _extremum(op: Op, name: str, doc: str) -> Any:
    """The public function of ``max`` or ``min`` (NumPy's signature; ``initial=`` and
    ``where=`` refused)."""

    def extremum(x: Any, axis: Any = None, keepdims: bool = False, *, out: Any = None,
                 initial: Any = None, where: Any = None) -> Any:
        _no_extras(name, out, initial=initial, where=where)
        return apply(op, x, axis=_axis_param(axis), keepdims=bool(keepdims))

    extremum.__name__ = extremum.__qualname__ = name
    extremum.__doc__ = doc
    return FAMILY.export(extremum, "a" + name)


max = amax = _extremum(MAX, "max", """Maximum over ``axis``; ties split the gradient evenly
    among the maxima.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(np.max)(np.array([1.0, 3.0, 3.0]))   # np.max of a tensor is wengert's
    array([0. , 0.5, 0.5])
    """)  # noqa: A001
min = amin = _extremum(MIN, "min", """Minimum over ``axis``; ties split the gradient evenly
    among the minima.""")  # noqa: A001


@FAMILY.export
def ptp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Peak to peak, ``max - min`` over ``axis``."""
    return max(x, axis, keepdims) - min(x, axis, keepdims)


def _ddof(ddof: Any, correction: Any) -> int:
    if correction is not None:
        if ddof not in (0, None) and ddof != correction:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return int(correction)
    return int(ddof or 0)


def _spread(op: Op, name: str, doc: str) -> Any:
    """The public function of ``var`` or ``std`` (NumPy's signature; ``where=`` and
    ``mean=`` refused)."""

    def spread(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, *,
               dtype: Any = None, out: Any = None, where: Any = None, mean: Any = None,
               correction: Any = None) -> Any:
        _no_extras(name, out, where=where, mean=mean)
        return apply(op, _cast(x, dtype), axis=_axis_param(axis),
                     ddof=_ddof(ddof, correction), keepdims=bool(keepdims))

    spread.__name__ = spread.__qualname__ = name
    spread.__doc__ = doc
    return FAMILY.export(spread)


var = _spread(VAR, "var", "Variance over ``axis`` with ``ddof`` delta degrees of freedom.")
std = _spread(STD, "std", "Standard deviation over ``axis`` with ``ddof`` delta degrees of "
              "freedom.")


def _cumulative(op: Op, name: str, doc: str) -> Any:
    """The public function of ``cumsum`` or ``cumprod``."""

    def cumulative(x: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        _no_extras(name, out)
        return apply(op, _cast(x, dtype), axis=_axis_param(axis))

    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = doc
    return FAMILY.export(cumulative)


cumsum = _cumulative(CUMSUM, "cumsum", "Cumulative sum along ``axis`` (of the flattened input "
                     "by default).")
cumprod = _cumulative(CUMPROD, "cumprod", "Cumulative product along ``axis``; the gradient is "
                      "exact with zeros.")


def _cumulative(scan: Any, fill: float, x: Any, axis: Any, dtype: Any, out: Any,
                include_initial: bool) -> Any:
    nd = len(_shape_of(x))
    if axis is None:
        if nd > 1:
            raise ValueError("axis must be specified for multi-dimensional arrays.")
        axis = 0
    y = scan(x, axis=axis, dtype=dtype, out=out)
    if include_initial:
        width = [(0, 0)] * builtins.max(nd, 1)
        width[axis % builtins.max(nd, 1)] = (1, 0)
        y = _sh.pad(y, tuple(width), constant_values=fill)
    return y


@FAMILY.export
def cumulative_sum(x: Any, *, axis: Any = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """Cumulative sum (the array-API ``cumulative_sum``, optionally with a leading 0)."""
    return _cumulative(cumsum, 0.0, x, axis, dtype, out, include_initial)


@FAMILY.export
def cumulative_prod(x: Any, *, axis: Any = None, dtype: Any = None, out: Any = None,
                    include_initial: bool = False) -> Any:
    """Cumulative product (the array-API ``cumulative_prod``, optionally with a leading 1)."""
    return _cumulative(cumprod, 1.0, x, axis, dtype, out, include_initial)


@FAMILY.export
def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x)))`` over ``axis``, computed stably; the gradient is the softmax."""
    return apply(LOGSUMEXP, x, axis=_axis_param(axis), keepdims=bool(keepdims))


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector or matrix norm, as ``numpy.linalg.norm``.

    Differentiable for vector norms of any order ``p`` (``inf``, ``-inf``,
    ``0``, ``1``, ``2``, ...), and for the matrix norms ``'fro'``, ``1``,
    ``-1``, ``inf`` and ``-inf``; the spectral and nuclear norms compute but raise
    when differentiated here (``wengert.numpy.linalg.norm``, in
    :mod:`wengert.ops.decompositions.composite`, differentiates them through the SVD). The 2-norm's
    gradient at zero is zero; ties in the ``inf``-norms split the gradient evenly.
    """
    if isinstance(axis, (list, tuple)):
        axis = tuple(int(a) for a in axis)
        if len(axis) == 1:
            axis = axis[0]
    elif axis is not None:
        axis = int(axis)
    if ord is not None and not isinstance(ord, str):
        f = float(ord)
        ord = int(f) if f.is_integer() else f
    return apply(NORM, x, ord=ord, axis=axis, keepdims=bool(keepdims))


@FAMILY.export
def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """Sum along a diagonal (``offset``) of the ``axis1``/``axis2`` planes."""
    _no_extras("trace", out)
    return apply(TRACE, _cast(x, dtype), offset=int(offset), axis1=int(axis1),
                    axis2=int(axis2))


@FAMILY.export
def average(x: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted average over ``axis``; differentiable in ``x`` and in ``weights``.

    NumPy's dtypes: integer or boolean values with float32 weights average in float64,
    and the sum of weights ``returned`` has the average's dtype."""
    axis = _axis_param(axis)
    if weights is None:
        avg = mean(x, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        n = _count(_shape_of(x), axis)
        scl = np.result_type(_raw(avg)).type(n)
        if np.shape(_raw(avg)) != ():
            scl = np.broadcast_to(scl, np.shape(_raw(avg))).copy()
        return avg, scl
    xd, wd = _array_dtype(x), _array_dtype(weights)
    rd = np.result_type(xd, wd, np.float64) if xd.kind in "biu" else np.result_type(xd, wd)
    if xd != rd:
        x = _ew.astype(x, rd)
    xs, ws = _shape_of(x), _shape_of(weights)
    w = weights if wd == rd else _ew.astype(weights, rd)
    if xs != ws:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if isinstance(axis, tuple):
            raise TypeError("wengert.average: a tuple axis needs weights of x's shape.")
        if len(ws) != 1 or ws[0] != xs[axis]:
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = _sh.reshape(w, tuple(ws[0] if i == axis % len(xs) else 1 for i in range(len(xs))))
    scl = sum(broadcast_to(w, xs) if xs != ws else w, axis=axis, keepdims=keepdims)
    if np.any(_raw(scl) == 0.0):  # (in a graph: a guard, checked on every run)
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = _ew.divide(sum(_ew.multiply(x, w), axis=axis, keepdims=keepdims), scl)
    if returned and _shape_of(scl) != _shape_of(avg):
        scl = broadcast_to(scl, _shape_of(avg))
    return (avg, scl) if returned else avg


def _array_dtype(v: Any) -> np.dtype:
    """The dtype of ``np.asanyarray(v)`` (a Python float is float64 there)."""
    v = _raw(v)
    dt = getattr(v, "dtype", None)
    return dt if isinstance(dt, np.dtype) else np.asarray(v).dtype


def _ufunc_reduce(fn: Any) -> Any:
    def reduce(x: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
               keepdims: bool = False, **kwargs: Any) -> Any:
        if dtype is not None:
            x = _ew.astype(x, dtype)
        _no_extras(fn.__name__, out, **{k: v for k, v in kwargs.items()})
        return fn(x, axis=axis, keepdims=keepdims)

    reduce.__name__ = reduce.__qualname__ = f"{fn.__name__}_reduce"
    reduce.__doc__ = f"``ufunc.reduce`` as :func:`{fn.__name__}` (axis 0 by default)."
    return reduce


def _ufunc_accumulate(fn: Any) -> Any:
    def accumulate(x: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        return fn(x, axis=axis, dtype=dtype, out=out)

    accumulate.__name__ = accumulate.__qualname__ = f"{fn.__name__}_accumulate"
    accumulate.__doc__ = f"``ufunc.accumulate`` as :func:`{fn.__name__}` (axis 0 by default)."
    return accumulate


# ``np.add.reduce`` and the others on traced values: the reductions above (axis 0 by default)
FAMILY.route(_ufunc_reduce(sum), np.add.reduce)
FAMILY.route(_ufunc_reduce(prod), np.multiply.reduce)
FAMILY.route(_ufunc_reduce(max), np.maximum.reduce)
FAMILY.route(_ufunc_reduce(min), np.minimum.reduce)
FAMILY.route(_ufunc_reduce(logsumexp), np.logaddexp.reduce)
FAMILY.route(_ufunc_accumulate(cumsum), np.add.accumulate)
FAMILY.route(_ufunc_accumulate(cumprod), np.multiply.accumulate)
