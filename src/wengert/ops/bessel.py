"""``np.i0``, the modified Bessel function of the first kind of order 0, and its derivative.

``I₀′ = I₁`` and ``I₁′ = I₀ − I₁/x`` (``½`` at 0), so two primitives, each with the other
in its rule, give every order in both modes. NumPy has no ``i1``: ``bessel_i1`` computes
it in float64 from its power series ``Σ (x/2)^(2k+1) / (k! (k+1)!)`` for ``|x| ≤ 20``
(positive terms, no cancellation) and from its asymptotic expansion
``eˣ/√(2πx) · Σ (−1)ᵏ aₖ/xᵏ`` beyond, each to a few units in the last place
(``tests/test_bessel.py`` checks it against SciPy). Like NumPy's ``i0``, it overflows to
inf past ``x ≈ 709.78``.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> float(wg.grad(np.i0)(1.0))  # I₁(1)
0.565159103992485
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, unary_function
from wengert.ops.base import primal as _raw

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("bessel")


#: The power series to this |x|, the asymptotic expansion past it.
_SERIES_LIMIT = 20.0
_SERIES_TERMS = 64


def _asymptotic_coefficients(terms: int) -> tuple[float, ...]:
    """``(−1)ᵏ aₖ(1)`` of ``I₁(x) ~ eˣ/√(2πx) Σ (−1)ᵏ aₖ/xᵏ``, ``aₖ = Π (4 − (2j−1)²)/(k! 8ᵏ)``."""
    out, a = [1.0], 1.0
    for k in range(1, terms):
        a *= (4.0 - (2 * k - 1) ** 2) / (k * 8.0)
        out.append((-1) ** k * a)
    return tuple(out)


_ASYMPTOTIC = _asymptotic_coefficients(30)


def _i1_impl(x: Any) -> Any:
    """I₁(x) in float64 (in ``x``'s float dtype when it has one)."""
    a = np.asarray(x)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    if a.dtype.kind == "c":
        raise TypeError("i1 not supported for complex values")
    v = np.abs(a.astype(np.float64))
    out = np.zeros(v.shape)
    small = v <= _SERIES_LIMIT
    if np.any(small):
        h = v[small] / 2.0
        term = h.copy()
        total = h.copy()
        q = h * h
        for k in range(1, _SERIES_TERMS):
            term = term * q / (k * (k + 1))
            total += term
        out[small] = total
    large = ~small & np.isfinite(v)
    if np.any(large):
        t = v[large]
        series = np.full(t.shape, _ASYMPTOTIC[-1])
        inverse = 1.0 / t
        for c in reversed(_ASYMPTOTIC[:-1]):
            series = series * inverse + c
        with np.errstate(over="ignore"):
            half = np.exp(t / 2.0)  # (eˣ as a square: finite until the product overflows)
            out[large] = half * (half / np.sqrt(2.0 * math.pi * t)) * series
    out[np.isnan(v)] = np.nan
    out[np.isinf(v)] = np.inf
    out = np.copysign(out, a)  # I₁ is odd
    return out.astype(dtype) if np.ndim(x) else dtype.type(out)


def _i0_rule(g: Any, ans: Any, x: Any) -> Any:
    return g * i1(x)


#: I₁′(x) = Σ (2k+1)/(2·k!(k+1)!) (x/2)^2k, in powers of x²: I₁′ for |x| < 2, where
#: I₀ − I₁/x cancels in its derivatives (those of I₁/x grow as n!/xⁿ⁺¹: the fourth
#: derivative of i0 at 1e-8 was 6.5, not 3/8, and 0 at 0).
_DI1_SERIES_LIMIT = 2.0
_OVERFLOW, _OVERFLOW_32 = 713.0, 92.0
_DI1_SERIES = tuple((2 * k + 1) / (2.0 * math.factorial(k) * math.factorial(k + 1) * 4.0 ** k)
                    for k in range(20))


def _di1_series(x: Any) -> Any:
    q = _ew.multiply(x, x)
    total: Any = _DI1_SERIES[-1]
    for c in reversed(_DI1_SERIES[:-1]):
        total = _ew.add(_ew.multiply(total, q), c)
    return total


def _i1_rule(g: Any, ans: Any, x: Any) -> Any:
    v = np.abs(_raw(x))
    small = v < _DI1_SERIES_LIMIT
    # Where I₀ and I₁ overflow (x ≈ 713 in float64, 92 in float32), so does I₁′
    # (inf − inf/x was NaN).
    huge = v > (_OVERFLOW if np.result_type(_raw(x)) != np.float32 else _OVERFLOW_32)
    safe = _ew.where(small | huge, _DI1_SERIES_LIMIT, x)
    rest = _ew.where(huge, np.inf, i0(safe) - _ew.divide(i1(safe), safe))
    return g * _ew.where(small, _di1_series(x), rest)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((rng.uniform(-3.0, 3.0, s),), {}) for s in [(), (3,), (2, 3)]] + [
        ((np.array([0.0, -0.5, 19.5, 21.0, -30.0, 45.0]),), {})]


I0 = _ew.unary_op("i0", np.i0, _i0_rule, formula="d I₀(x) = I₁(x) dx", symbol="I₀",
                  adjoint="ḡ·I₁({0})", jax="jnp.i0({0})")
I0.samples = _samples
FAMILY.op(I0)
I1 = _ew.unary_op("bessel_i1", _i1_impl, _i1_rule,
                  formula="d I₁(x) = (I₀(x) − I₁(x)/x) dx (its series for |x| < 2)",
                  symbol="I₁",
                  adjoint="ḡ·(I₀({0}) − {out}/{0})", jax="jax.scipy.special.i1({0})")
I1.samples = _samples
FAMILY.op(I1)


i0 = unary_function(I0)
FAMILY.export(i0)
i1 = unary_function(I1)

