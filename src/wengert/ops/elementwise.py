"""Elementwise primitives: the NumPy forward, the JVP and the VJP of each, side by side.

Every rule is written with this package's own functions (``multiply``,
``cos``...), so it runs on NumPy values in a plain backward pass and records
itself on tensors when ``create_graph=True``. Rules avoid Python's ``/`` and
``**`` on inputs, which raise or go complex on Python floats, and call
:func:`divide` and :func:`power` instead.

One rule serves both modes. The derivative of an elementwise op is a
diagonal linear map, ``t -> t * f'(x)``, and a diagonal map is its own
transpose: the same function ``d(g, ans, x)`` gives the VJP (applied to a
cotangent) and the JVP (applied to a tangent). Binary ops have one such map
per input; the VJP applies one and the backward sweep sums it back to the
input's shape, the JVP applies both to the tangents and adds (see
:func:`_binary_jvp`). Piecewise-constant ops (``sign``, the rounding ops,
``floor_divide``) have zero JVPs; ``clip``, ``where`` and ``astype`` have their
own, built from the same masks and casts as their VJPs.

Conventions at kinks: ``abs'(0) = 0``, ``sign'`` and the rounding ops are
zero, ``sqrt'(0) = inf``, ties in ``maximum``/``minimum``/``fmax``/``fmin``
and at the bounds of ``clip`` split or keep the gradient as documented on
each function.
Complex values (HIPS autograd's convention, and JAX's): for a real ``f(z)``,
``z = x + iy``, the gradient is ``∂f/∂x − i ∂f/∂y`` (``|z|²`` has gradient
``2·conj(z)``); the VJP of any op at cotangent ``g`` is the gradient of
``Re(g·f(z))``, and tangents pair with cotangents as ``Re(sum(t·g))``, without
conjugation. A holomorphic op's rules are therefore its real ones (``g·f′(z)``,
``f′(z)·t``), which is why one rule still serves both modes for them. ``real``,
``imag``, ``conjugate``, ``angle`` and ``abs`` have rules of their own, separate for
the two modes. An op opts in with ``complex_rules=True`` (declared on its
record); the others refuse complex values. A real input always gets a real
gradient: the backward sweep takes the real part of what a rule sends to a real
input of an op with a complex output (``core.sweep``), once for every op.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from wengert.core.errors import NoRuleError
from wengert.core.forms import EquationView, JaxStep, Kernel
from wengert.core.op import Op, Words
from wengert.ops.base import (
    Family,
    apply,
    dtype_of,
    float_dtype,
    is_traced,
    kind_of,
)
from wengert.ops.base import primal as _raw
from wengert.ops.broadcast import broadcast_to, unbroadcast

#: This module's ops, their public functions and the NumPy functions they implement.
FAMILY = Family("elementwise", fusable=True)


def _zeros(g: Any, ans: Any, *args: Any, **params: Any) -> Any:
    return np.zeros(np.shape(_raw(g)), dtype=np.result_type(_raw(g)))


def _zeros_jvp(tangents: Any, ans: Any, *args: Any, **params: Any) -> Any:
    """The JVP of a piecewise-constant op: zeros like ``ans`` (a NumPy scalar for 0-d),
    with the leading axis of a batch of tangents when there is one."""
    a = _raw(ans)
    shape = np.shape(a)
    for t, x in zip(tangents, args):
        if t is not None and np.ndim(_raw(t)) > np.ndim(_raw(x)):
            shape = np.shape(_raw(t))[:1] + shape
            break
    return np.zeros(shape, dtype=np.result_type(a))[()]


_float_dtype = float_dtype


def _fit(t: Any, ans: Any) -> Any:
    """Broadcast a tangent to the output's shape (a tangent of a broadcast input).

    A bare Python float (the tangent of a Python-float input) takes the
    output's dtype, as that input does in the forward.
    """
    if type(t) is np.ndarray and type(ans) is np.ndarray and t.shape == ans.shape:
        return t  # the common case, answered before the general checks
    a = _raw(ans)
    shape = np.shape(a)
    tshape = np.shape(_raw(t))
    if len(tshape) > len(shape):  # a batch of tangents (forward mode, leading axis)
        shape = tshape[:1] + shape
    if type(t) is float and type(a) is not float:
        return np.full(shape, t, dtype=_float_dtype(a))[()]
    if tshape == shape:
        return t
    return broadcast_to(t, shape)


def _unary_jvp(d: Any) -> Any:
    """The JVP of an elementwise unary op from its (self-adjoint) VJP rule ``d(g, ans, x)``."""

    def jvp(tangents: Any, ans: Any, x: Any) -> Any:
        return d(tangents[0], ans, x)

    jvp.__name__ = f"jvp_{getattr(d, '__name__', 'rule')}"
    return jvp


def _binary_jvp(dx: Any, dy: Any) -> Any:
    """The JVP ``dx(tx) + dy(ty)`` of a broadcasting op from its two VJP rules.

    ``dx(g, ans, x, y)`` multiplies ``g`` elementwise by ∂f/∂x, so applied to a
    tangent of ``x``'s shape it broadcasts like the forward; the sum is then
    broadcast to the output's shape (a lone tangent of a smaller input).
    """

    def jvp(tangents: Any, ans: Any, x: Any, y: Any) -> Any:
        tx, ty = tangents
        if tx is None:
            out = dy(ty, ans, x, y)
        elif ty is None:
            out = dx(tx, ans, x, y)
        else:
            out = dx(tx, ans, x, y) + dy(ty, ans, x, y)
        if type(out) is np.ndarray and type(ans) is np.ndarray and out.shape == ans.shape:
            return out  # _fit's common case, without the call
        return _fit(out, ans)

    return jvp


#: Sample domains for the registry sweep: a draw of the right shape inside the
#: op's domain, away from kinks and poles.
_DOMAINS = {
    "real": lambda rng, shape: rng.uniform(-2.0, 2.0, shape),
    "positive": lambda rng, shape: rng.uniform(0.3, 2.5, shape),
    "unit": lambda rng, shape: rng.uniform(-0.8, 0.8, shape),
    "gt1": lambda rng, shape: rng.uniform(1.2, 3.0, shape),
    "nonzero": lambda rng, shape: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.4, 2.0, shape),
    "offgrid": lambda rng, shape: rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape),
}
#: (shape of x, shape of y) pairs, including broadcasting.
_BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3, 1), (1, 4)), ((), (2, 2))]


def _unary_samples(domain: str) -> Any:
    draw = _DOMAINS[domain]

    def samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [((draw(rng, shape),), {}) for shape in [(), (3,), (2, 3)]]

    return samples


def _binary_samples(dom_x: str, dom_y: str) -> Any:
    dx, dy = _DOMAINS[dom_x], _DOMAINS[dom_y]

    def samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [((dx(rng, sx), dy(rng, sy)), {}) for sx, sy in _BINARY_SHAPES]

    return samples


def _unary(
    name: str,
    impl: Any,
    rule: Any,
    *,
    jvp: Any = None,
    scalar: Any = None,
    reads_out: bool = False,
    reads_x: bool = True,
    formula: str = "",
    symbol: str | None = None,
    domain: str = "real",
    dscalar: Any = None,
    adjoint: str | None = None,
    **facts: Any,
) -> Op:
    """An elementwise one-input op; ``rule(g, ans, x)`` is ``g * f'(x)``, its VJP and JVP.

    ``dscalar(ans, x)`` is ``f'(x)`` on Python floats (the dual-number fast path);
    ``adjoint`` is the template of ``x̄``'s term (``"ḡ·cos({0})"``, see ``Op``);
    ``facts`` are the op's other declarations (``jax=``, ``spelling=``, ``words=``).
    """
    return Op(
        name,
        impl,
        (rule,),
        jvp=jvp if jvp is not None else _unary_jvp(rule),
        scalar_impl=scalar,
        reads=(0,) if reads_x else (),
        reads_out=reads_out,
        formula=formula,
        symbol=symbol,
        samples=_unary_samples(domain),
        scalar_deriv=None if dscalar is None else (dscalar,),
        batch_jvp=True,
        adjoint=None if adjoint is None else (adjoint,),
        **facts,
    )


def _binary(
    name: str,
    impl: Any,
    dx: Any,
    dy: Any,
    *,
    scalar: Any = None,
    reads: tuple[int, ...] = (0, 1),
    reads_out: bool = False,
    crossed: bool = False,
    formula: str = "",
    symbol: str | None = None,
    domain: tuple[str, str] = ("real", "real"),
    jvp: Any = None,
    dscalar: Any = None,
    adjoint: tuple[str, str] | None = None,
    **facts: Any,
) -> Op:
    """A broadcasting two-input op; ``dx``/``dy`` give its VJPs and, together, its JVP;
    ``adjoint`` holds the templates of ``x̄``'s and ``ȳ``'s terms (see ``Op``); ``facts``
    the op's other declarations (``jax=``, ``spelling=``, ``words=``)."""
    return Op(
        name,
        impl,
        (dx, dy),
        jvp=jvp if jvp is not None else _binary_jvp(dx, dy),
        scalar_impl=scalar,
        reads=reads,
        reads_out=reads_out,
        crossed=crossed,
        broadcasting=True,
        unbroadcast=unbroadcast,
        formula=formula,
        symbol=symbol,
        samples=_binary_samples(*domain),
        scalar_deriv=dscalar,
        batch_jvp=True,
        adjoint=adjoint,
        **facts,
    )


def _scalar_sign(x: float) -> float:
    if x != x:
        return x
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


# -- unary ----------------------------------------------------------------
# An op whose rules hold for complex values says so (complex_rules=True; see "complex
# parts" below): the holomorphic ones, whose real rules are already right, those with
# complex rules of their own, and the selections (maximum, minimum, fmax, fmin, clip),
# which pick entries in NumPy's lexicographic order of complex numbers. The others (sign,
# which is z/|z| for complex z, the rounding ops, relu, ...) refuse complex values.
NEGATIVE = _unary(
    "negative", np.negative, lambda g, ans, x: negative(g), scalar=operator.neg, reads_x=False,
    formula="d(-x) = -dx", symbol="-", dscalar=lambda ans, x: -1.0, adjoint="−ḡ",
    jax="jnp.negative({0})", spelling="unary -",
    complex_rules=True,
    kernel=Kernel(piece="neg"),
)
negative = FAMILY.unary(NEGATIVE)
POSITIVE = _unary(
    "positive", np.positive, lambda g, ans, x: g, scalar=operator.pos, reads_x=False,
    formula="d(+x) = dx", symbol="+", adjoint="ḡ", jax="jnp.positive({0})", spelling="unary +",
    complex_rules=True,
    words=Words(copies=True),
)
positive = FAMILY.unary(POSITIVE)


def _abs_vjp(g: Any, ans: Any, x: Any) -> Any:
    if _is_complex(x):  # d|z| = Re(conj(z) dz)/|z|: the gradient conj(z)/|z| (0 at 0)
        return divide(g * conj(x), zeros_to_one(abs(x)))
    return g * sign(x)


def _abs_jvp(tangents: Any, ans: Any, x: Any) -> Any:
    t = tangents[0]
    if _is_complex(x):
        return divide(real(conj(x) * t), zeros_to_one(abs(x)))
    return t * sign(x)


def _abs_jax(s: JaxStep) -> str:
    """``_abs(x)`` (abs'(0) = 0) for real floats, ``jnp.abs`` otherwise."""
    if s.dtype(0).kind == "f":
        return f"{s.helper('_abs')}({s.args[0]})"
    return f"jnp.abs({s.args[0]})"


ABS = _unary(
    "abs", np.abs, _abs_vjp, jvp=_abs_jvp, scalar=abs,
    formula="d|x| = sign(x) dx  (0 at x = 0); d|z| = Re(conj(z) dz)/|z|", domain="nonzero",
    adjoint="ḡ·sign({0})", complex_rules=True, jax=_abs_jax,
    complex_adjoint="ḡ·conj({0}) / {out}  (0 where {out} = 0)",
)
abs = absolute = FAMILY.unary(ABS, "absolute")  # noqa: A001
SIGN = _unary(
    "sign", np.sign, _zeros, jvp=_zeros_jvp, scalar=_scalar_sign, reads_x=False,
    formula="d sign(x) = 0", domain="nonzero", adjoint="0", jax="jnp.sign({0})",
)
sign = FAMILY.unary(SIGN)
EXP = _unary(
    "exp", np.exp, lambda g, ans, x: g * ans, scalar=math.exp, reads_out=True, reads_x=False,
    formula="d exp(x) = exp(x) dx", dscalar=lambda ans, x: ans, adjoint="ḡ·{out}",
    jax="jnp.exp({0})",
    words=Words(
        nonfinite="exp overflows to inf above about 709", derivative="exp(x)",
        infinite_at="x above about 709 (it overflows)",
        fix="subtract the maximum first (`np.exp(x - x.max())`), or work with logs "
            "(`wg.numpy.logsumexp`)", safe="0.0",
    ),
    complex_rules=True,
)
exp = FAMILY.unary(EXP)
EXP2 = _unary(
    "exp2", np.exp2, lambda g, ans, x: g * ans * math.log(2.0), scalar=lambda x: 2.0**x,
    reads_out=True, reads_x=False, formula="d 2^x = ln 2 · 2^x dx", adjoint="ḡ·{out}·ln 2",
    jax="jnp.exp2({0})",
    complex_rules=True,
    scalar_code="2.0 ** {0}",
)
exp2 = FAMILY.unary(EXP2)
EXPM1 = _unary(
    "expm1", np.expm1, lambda g, ans, x: g * (ans + 1.0), scalar=math.expm1, reads_out=True,
    reads_x=False, formula="d expm1(x) = exp(x) dx", dscalar=lambda ans, x: ans + 1.0,
    adjoint="ḡ·({out} + 1)", jax="jnp.expm1({0})",
    words=Words(nonfinite="expm1 overflows to inf above about 709", safe="0.0"),
    complex_rules=True,
)
expm1 = FAMILY.unary(EXPM1)
LOG = _unary(
    "log", np.log, lambda g, ans, x: divide(g, x), scalar=math.log, formula="d log(x) = dx / x",
    domain="positive", dscalar=lambda ans, x: 1.0 / x, adjoint="ḡ / {0}", jax="jnp.log({0})",
    words=Words(
        nonfinite="the log of 0 is -inf and of a negative number NaN", derivative="1/x",
        infinite_at="x = 0",
        fix="keep the argument positive: `np.log(x + 1e-12)` or `np.log(np.clip(x, 1e-12, "
            "None))`; for the log of a softmax or of a sum of exponentials use a log-sum-exp "
            "form (`wg.numpy.logsumexp`)",
    ),
    complex_rules=True,
)
log = FAMILY.unary(LOG)


def _log_base(name: str, impl: Any, scalar: Any, base: int) -> Op:
    """``log2`` and ``log10``: ``d log_b(x) = dx / (x ln b)``."""
    ln = math.log(base)
    return _unary(
        name, impl, lambda g, ans, x: divide(g, x * ln), scalar=scalar,
        formula=f"d {name}(x) = dx / (x ln {base})", domain="positive",
        adjoint=f"ḡ / ({{0}}·ln {base})", jax=f"jnp.{name}({{0}})",
        words=Words(
            nonfinite="the log of 0 is -inf and of a negative number NaN",
            derivative=f"1/(x·ln {base})", infinite_at="x = 0",
            fix=f"keep the argument positive: `np.{name}(x + 1e-12)`",
        ),
        complex_rules=True,
    )


LOG2 = _log_base("log2", np.log2, math.log2, 2)
log2 = FAMILY.unary(LOG2)
LOG10 = _log_base("log10", np.log10, math.log10, 10)
log10 = FAMILY.unary(LOG10)
LOG1P = _unary(
    "log1p", np.log1p, lambda g, ans, x: divide(g, x + 1.0), scalar=math.log1p,
    formula="d log1p(x) = dx / (1 + x)", domain="positive", dscalar=lambda ans, x: 1.0 / (1.0 + x),
    adjoint="ḡ / (1 + {0})", jax="jnp.log1p({0})",
    words=Words(
        nonfinite="log1p(-1) is -inf and below -1 NaN", derivative="1/(1 + x)",
        infinite_at="x = -1", fix="keep the argument above -1", safe="0.0",
    ),
    complex_rules=True,
)
log1p = FAMILY.unary(LOG1P)


def _cbrt_rule(g: Any, ans: Any, x: Any) -> Any:
    if not is_traced(ans):
        return divide(g, square(ans) * 3.0)
    # differentiated again: ∛x^-2 / 3, not 1 / (3 ∛x²), whose derivative has 2∛x · ∛x' =
    # 0 · inf at 0; -2∛x^-5 / 9 is -inf at +0, +inf at -0, -0 at +inf and +0 at -inf
    return g * power(ans, -2.0) * (1.0 / 3.0)


SQRT = _unary(
    "sqrt", np.sqrt, lambda g, ans, x: divide(g, ans * 2.0), scalar=math.sqrt, reads_out=True,
    reads_x=False, formula="d √x = dx / (2√x)  (inf at 0)", domain="positive",
    dscalar=lambda ans, x: 0.5 / ans, adjoint="ḡ / (2·{out})", jax="jnp.sqrt({0})",
    words=Words(
        nonfinite="the square root of a negative number is NaN", derivative="1/(2·√x)",
        infinite_at="x = 0",
        fix="keep its argument away from 0: `np.sqrt(x + 1e-12)`, or `np.sqrt(np.maximum(x, "
            "1e-12))`",
    ),
    complex_rules=True,
)
sqrt = FAMILY.unary(SQRT)
CBRT = _unary(
    "cbrt", np.cbrt, _cbrt_rule, scalar=math.cbrt,
    reads_out=True, reads_x=False, formula="d ∛x = dx / (3 ∛x²)", domain="nonzero",
    adjoint="ḡ / (3·{out}²)", jax="jnp.cbrt({0})",
    words=Words(derivative="1/(3·∛x²)", infinite_at="x = 0", fix="keep its argument away from 0"),
)
cbrt = FAMILY.unary(CBRT)
SQUARE = _unary(
    "square", np.square, lambda g, ans, x: g * x * 2.0, scalar=lambda x: x * x,
    formula="d x² = 2x dx", dscalar=lambda ans, x: 2.0 * x, adjoint="ḡ·2·{0}",
    jax="jnp.square({0})",
    complex_rules=True,
    scalar_code="{0} * {0}",
)
square = FAMILY.unary(SQUARE)
RECIPROCAL = _unary(
    "reciprocal", np.reciprocal, lambda g, ans, x: -g * square(ans), scalar=lambda x: 1.0 / x,
    reads_out=True, reads_x=False, formula="d (1/x) = -dx / x²", domain="nonzero",
    dscalar=lambda ans, x: -ans * ans, adjoint="−ḡ·{out}²", jax="jnp.reciprocal({0})",
    words=Words(
        nonfinite="1/0 is inf", derivative="-1/x²", infinite_at="x = 0",
        fix="keep the argument away from 0",
    ),
    complex_rules=True,
    kernel=Kernel(piece="recip"),
    scalar_code="1.0 / {0}",
)
reciprocal = FAMILY.unary(RECIPROCAL)
SIN = _unary(
    "sin", np.sin, lambda g, ans, x: g * cos(x), scalar=math.sin, formula="d sin(x) = cos(x) dx",
    dscalar=lambda ans, x: math.cos(x), adjoint="ḡ·cos({0})", jax="jnp.sin({0})",
    complex_rules=True,
)
sin = FAMILY.unary(SIN)
COS = _unary(
    "cos", np.cos, lambda g, ans, x: -g * sin(x), scalar=math.cos, formula="d cos(x) = -sin(x) dx",
    dscalar=lambda ans, x: -math.sin(x), adjoint="−ḡ·sin({0})", jax="jnp.cos({0})",
    complex_rules=True,
)
cos = FAMILY.unary(COS)
TAN = _unary(
    "tan", np.tan, lambda g, ans, x: g * (square(ans) + 1.0), scalar=math.tan, reads_out=True,
    reads_x=False, formula="d tan(x) = (1 + tan²x) dx", domain="unit",
    dscalar=lambda ans, x: 1.0 + ans * ans, adjoint="ḡ·(1 + {out}²)", jax="jnp.tan({0})",
    words=Words(nonfinite="tan is infinite at odd multiples of π/2", safe="0.0"),
    complex_rules=True,
)
tan = FAMILY.unary(TAN)


def _one_minus_square(x: Any) -> Any:
    """``1 − x²``; of a complex ``x`` computed as ``−(x² − 1)``, which keeps the sign of a
    zero imaginary part as C99's ``1 − z²`` does. (NumPy computes ``1 − w`` as
    ``(1 + 0j) − w``, whose imaginary part ``0 − (−0)`` is ``+0``: on a branch cut of
    ``√(1 − z²)`` that picks the other side than NumPy's ``arcsin`` and ``arccos`` take at
    ``x ± 0j``, and the derivative there would be that of the other side. Subtracting a
    real constant, ``w − 1``, keeps ``Im w`` exactly.)"""
    return negative(square(x) - 1.0) if _is_complex(x) else 1.0 - square(x)


def _square_plus_one(x: Any) -> Any:
    """``x² + 1``; of a complex ``x`` as ``x² − (−1)`` (see :func:`_one_minus_square`: the
    sign of a zero imaginary part is kept on ``arcsinh``'s cuts)."""
    return square(x) - (-1.0) if _is_complex(x) else square(x) + 1.0


def _arccosh_denominator(x: Any) -> Any:
    """``√(x² − 1)`` for a real ``x``; ``√(z − 1)·√(z + 1)`` for a complex one (the
    principal branch of ``arccosh``, whose cut is the real axis left of 1, as NumPy's:
    ``√(z² − 1)`` has the opposite sign where ``Re z < 0``), ``z + 1`` written ``z − (−1)``
    to keep the sign of a zero imaginary part."""
    if _is_complex(x):
        return sqrt(x - 1.0) * sqrt(x - (-1.0))
    return sqrt(square(x) - 1.0)


def _inverse_sine_or_cosine(name: str, impl: Any, scalar: Any, short: str, sign: float) -> Op:
    """``arcsin`` (``sign`` 1) and ``arccos`` (−1): ``d = ±dx / √(1 − x²)``."""
    minus, neg = ("", "") if sign > 0 else ("-", "−")
    if sign > 0:
        def rule(g: Any, ans: Any, x: Any) -> Any:
            return divide(g, sqrt(_one_minus_square(x)))
    else:
        def rule(g: Any, ans: Any, x: Any) -> Any:
            return -divide(g, sqrt(_one_minus_square(x)))
    return _unary(
        name, impl, rule, scalar=scalar, formula=f"d {short}(x) = {minus}dx / √(1 - x²)",
        domain="unit", dscalar=lambda ans, x: sign / math.sqrt(1.0 - x * x),
        adjoint=f"{neg}ḡ / √(1 − {{0}}²)", jax=f"jnp.{name}({{0}})",
        words=Words(
            nonfinite=f"{name} outside [-1, 1] is NaN", derivative=f"{minus}1/√(1 - x²)",
            infinite_at="x = ±1",
            fix=f"clip the argument into the open interval: `np.{name}(np.clip(x, -1 + 1e-7, "
                "1 - 1e-7))`", safe="0.0",
        ),
        complex_rules=True,
    )


ARCSIN = _inverse_sine_or_cosine("arcsin", np.arcsin, math.asin, "asin", 1.0)
arcsin = FAMILY.unary(ARCSIN)
ARCCOS = _inverse_sine_or_cosine("arccos", np.arccos, math.acos, "acos", -1.0)
arccos = FAMILY.unary(ARCCOS)
ARCTAN = _unary(
    "arctan", np.arctan, lambda g, ans, x: divide(g, square(x) + 1.0), scalar=math.atan,
    formula="d atan(x) = dx / (1 + x²)", dscalar=lambda ans, x: 1.0 / (1.0 + x * x),
    adjoint="ḡ / (1 + {0}²)", jax="jnp.arctan({0})",
    complex_rules=True,
)
arctan = FAMILY.unary(ARCTAN)
def _sinh_or_cosh(name: str, impl: Any, scalar: Any, rule: Any, other: str,
                  other_scalar: Any) -> Op:
    """``sinh`` and ``cosh``, each the other's derivative: ``rule(g, ans, x)`` is
    ``g·other(x)``."""
    return _unary(
        name, impl, rule, scalar=scalar, formula=f"d {name}(x) = {other}(x) dx",
        dscalar=lambda ans, x: other_scalar(x), adjoint=f"ḡ·{other}({{0}})",
        jax=f"jnp.{name}({{0}})",
        words=Words(nonfinite=f"{name} overflows to inf beyond about ±710", safe="0.0"),
        complex_rules=True,
    )


SINH = _sinh_or_cosh("sinh", np.sinh, math.sinh, lambda g, ans, x: g * cosh(x), "cosh", math.cosh)
sinh = FAMILY.unary(SINH)
COSH = _sinh_or_cosh("cosh", np.cosh, math.cosh, lambda g, ans, x: g * sinh(x), "sinh", math.sinh)
cosh = FAMILY.unary(COSH)
TANH = _unary(
    "tanh", np.tanh, lambda g, ans, x: g * (1.0 - square(ans)), scalar=math.tanh, reads_out=True,
    reads_x=False, formula="d tanh(x) = (1 - tanh²x) dx", dscalar=lambda ans, x: 1.0 - ans * ans,
    adjoint="ḡ·(1 − {out}²)", jax="jnp.tanh({0})",
    complex_rules=True,
)
tanh = FAMILY.unary(TANH)
ARCSINH = _unary(
    "arcsinh", np.arcsinh, lambda g, ans, x: divide(g, sqrt(_square_plus_one(x))),
    scalar=math.asinh, formula="d asinh(x) = dx / √(x² + 1)", adjoint="ḡ / √({0}² + 1)",
    jax="jnp.arcsinh({0})",
    complex_rules=True,
)
arcsinh = FAMILY.unary(ARCSINH)
ARCCOSH = _unary(
    "arccosh", np.arccosh, lambda g, ans, x: divide(g, _arccosh_denominator(x)), scalar=math.acosh,
    formula="d acosh(x) = dx / √(x² - 1)", domain="gt1", adjoint="ḡ / √({0}² − 1)",
    jax="jnp.arccosh({0})",
    words=Words(
        nonfinite="arccosh below 1 is NaN", derivative="1/√(x² - 1)", infinite_at="x = 1",
        fix="keep the argument above 1", safe="2.0",
    ),
    complex_rules=True,
)
arccosh = FAMILY.unary(ARCCOSH)
ARCTANH = _unary(
    "arctanh", np.arctanh, lambda g, ans, x: divide(g, 1.0 - square(x)), scalar=math.atanh,
    formula="d atanh(x) = dx / (1 - x²)", domain="unit", adjoint="ḡ / (1 − {0}²)",
    jax="jnp.arctanh({0})",
    words=Words(
        nonfinite="arctanh(±1) is ±inf and beyond it NaN", derivative="1/(1 - x²)",
        infinite_at="x = ±1", fix="clip the argument into (-1, 1)", safe="0.0",
    ),
    complex_rules=True,
)
arctanh = FAMILY.unary(ARCTANH)
DEG2RAD = _unary(
    "deg2rad", np.deg2rad, lambda g, ans, x: g * (math.pi / 180.0), scalar=math.radians,
    reads_x=False, formula="d rad(x) = π/180 dx", adjoint="ḡ·π/180", jax="jnp.deg2rad({0})",
)
deg2rad = radians = FAMILY.unary(DEG2RAD, "radians")
RAD2DEG = _unary(
    "rad2deg", np.rad2deg, lambda g, ans, x: g * (180.0 / math.pi), scalar=math.degrees,
    reads_x=False, formula="d deg(x) = 180/π dx", adjoint="ḡ·180/π", jax="jnp.rad2deg({0})",
)
rad2deg = degrees = FAMILY.unary(RAD2DEG, "degrees")


#: Taylor coefficients of sinc'(x) = Σ_k c_k x^(2k+1):
#: c_k = (-1)^(k+1) π^(2k+2) (2k+2) / (2k+3)!
_SINC_SERIES = tuple((-1) ** (k + 1) * math.pi ** (2 * k + 2) * (2 * k + 2)
                     / math.factorial(2 * k + 3) for k in range(6))


def _sinc_rule(g: Any, ans: Any, x: Any) -> Any:
    # d/dx sin(πx)/(πx) = (cos(πx) - sinc(x)) / x away from 0; near 0 (|x| < 0.1) its
    # Taylor series, which is exact to rounding there (the formula cancels) and whose own
    # derivatives are sinc's higher ones (sinc''(0) = -π²/3).
    small = np.abs(_raw(x)) < 0.1
    # Each branch runs on an argument safe for it (the other branch's entries replaced), so
    # that the derivative of the branch not taken is 0, not 0·inf = NaN (x² overflows).
    safe_x = where(small, 1.0, x)
    small_x = where(small, x, 0.0)
    x2 = square(small_x)
    series = _SINC_SERIES[-1]
    for c in reversed(_SINC_SERIES[:-1]):
        series = series * x2 + c
    return g * where(small, series * small_x,
                     divide(cos(safe_x * math.pi) - sinc(safe_x), safe_x))


SINC = _unary(
    "sinc", np.sinc, _sinc_rule, formula="d sinc(x) = (cos πx - sinc x)/x dx",
    adjoint="ḡ·(cos(π·{0}) − {out}) / {0}  (0 at 0)", jax="jnp.sinc({0})",
    complex_rules=True,
    kernel_refused="np.sinc is not a ufunc: it has no out=",
)
sinc = FAMILY.unary(SINC)
SINC.samples = lambda rng: [
    ((rng.uniform(-2.0, 2.0, shape),), {}) for shape in [(), (3,), (2, 3)]
] + [((np.array([0.0, 0.05, -0.09, 0.11]),), {})]  # the series near 0, and past it
FLOOR = _unary(
    "floor", np.floor, _zeros, jvp=_zeros_jvp, scalar=lambda x: math.copysign(math.floor(x), x),
    reads_x=False,
    formula="d floor(x) = 0", domain="offgrid", adjoint="0", jax="jnp.floor({0})",
)
floor = FAMILY.unary(FLOOR)
CEIL = _unary(
    "ceil", np.ceil, _zeros, jvp=_zeros_jvp, scalar=lambda x: math.copysign(math.ceil(x), x),
    reads_x=False,
    formula="d ceil(x) = 0", domain="offgrid", adjoint="0", jax="jnp.ceil({0})",
)
ceil = FAMILY.unary(CEIL)
RINT = _unary(
    "rint", np.rint, _zeros, jvp=_zeros_jvp, reads_x=False, formula="d rint(x) = 0",
    domain="offgrid", adjoint="0", jax="jnp.rint({0})",
)
rint = FAMILY.unary(RINT)
def _round_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    return [f"np.round({args[0]}, {int(eq.params.get('decimals', 0))!r}, out={out})"]


ROUND = Op(
    "round", lambda x, decimals=0: np.round(x, decimals), (_zeros,), jvp=_zeros_jvp,
    formula="d round(x) = 0", adjoint=("0",),
    samples=lambda rng: [
        ((_DOMAINS["offgrid"](rng, (3,)),), {}),
        ((rng.uniform(-2, 2, (2, 2)).round(1) + 0.025,), {"decimals": 1}),
    ], jax="jnp.round({0}, decimals={decimals})",
    kernel=Kernel(_round_lines, params=frozenset({"decimals"})),
)
FAMILY.op(ROUND)
TRUNC = _unary(
    "trunc", np.trunc, _zeros, jvp=_zeros_jvp, reads_x=False, formula="d trunc(x) = 0",
    domain="offgrid", adjoint="0", jax="jnp.trunc({0})",
)
trunc = fix = FAMILY.unary(TRUNC, "fix")
def _relu_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    return [f"np.maximum({args[0]}, 0.0, out={out})"]


RELU = _unary(
    "relu", lambda x: np.maximum(x, 0.0), lambda g, ans, x: g * (_raw(x) > 0),
    scalar=lambda x: x if x > 0.0 or x != x else 0.0, formula="d relu(x) = [x > 0] dx  (0 at 0)",
    domain="nonzero", adjoint="ḡ·[{0} > 0]", jax="jax.nn.relu({0})",
    kernel=Kernel(_relu_lines),
    words=Words(zero="larger"),
)
relu = FAMILY.unary(RELU)


def _sigmoid_impl(x: Any) -> Any:
    """``1 / (1 + exp(-x))`` without cancellation or overflow: with ``e = exp(-|x|)``,
    ``1 / (1 + e)`` where ``x ≥ 0`` and ``e / (1 + e)`` elsewhere, so a very negative
    ``x`` keeps its relative precision (``σ(-40) = 4.25e-18``, not 0) as SciPy's
    ``expit`` does. Complex values take ``(tanh(x / 2) + 1) / 2``."""
    a = np.asarray(x)
    kind = a.dtype.kind
    if kind == "c":
        return 0.5 * (np.tanh(0.5 * a) + 1.0)
    if kind in "biu":  # (an unsigned -|x| would wrap around)
        a = a.astype(np.float64)
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0, e) / (1.0 + e)


def _sigmoid_scalar(x: float) -> float:
    """:func:`_sigmoid_impl` of a Python float."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _sigmoid_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    # as the op's forward computes it (the input never shares the output's buffer)
    x = args[0]
    if eq.dtype(0).kind == "c":
        return [f"np.multiply({x}, 0.5, out={out})", f"np.tanh({out}, out={out})",
                f"np.add({out}, 1.0, out={out})", f"np.multiply({out}, 0.5, out={out})"]
    return [f"np.absolute({x}, out={out})", f"np.negative({out}, out={out})",
            f"np.exp({out}, out={out})",
            f"np.divide(np.where({x} >= 0, 1.0, {out}), np.add({out}, 1.0), out={out})"]


SIGMOID = _unary(
    "sigmoid", _sigmoid_impl, lambda g, ans, x: g * ans * (1.0 - ans),
    scalar=_sigmoid_scalar, reads_out=True, reads_x=False,
    formula="d σ(x) = σ(x)(1 - σ(x)) dx", dscalar=lambda ans, x: ans * (1.0 - ans),
    adjoint="ḡ·{out}·(1 − {out})", jax="0.5 * (jnp.tanh(0.5 * jnp.asarray({0})) + 1.0)",
    complex_rules=True,
    kernel=Kernel(_sigmoid_lines, inplace=()),
)
sigmoid = FAMILY.unary(SIGMOID)
def _copy_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    return [] if args[0] == out else [f"np.copyto({out}, {args[0]})"]


COPY = _unary(
    "copy", np.copy, lambda g, ans, x: g, scalar=lambda x: x, reads_x=False,
    formula="d copy(x) = dx", adjoint="ḡ", jax="jnp.copy({0})",
    complex_rules=True,
    kernel=Kernel(_copy_lines),
    scalar_code="{0}",
    words=Words(copies=True),
)
copy = FAMILY.unary(COPY)


def _cast(v: Any, dtype: np.dtype) -> Any:
    """``v`` cast to ``dtype``, through its real part when a complex ``v`` goes real (what
    NumPy's cast does, without its ComplexWarning)."""
    if dtype.kind != "c" and _is_complex(v):
        v = real(v)
    return astype(v, dtype)


def _astype_impl(x: Any, dtype: Any) -> Any:
    if not isinstance(x, (np.ndarray, np.generic)):  # (a NumPy scalar stays one, as NumPy's)
        x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(dtype).kind not in "cOb":
        return x.real.astype(dtype)  # NumPy's cast drops the imaginary part (and warns;
        # to bool it tests the whole number: 1j is True)
    return x.astype(dtype)


def _astype_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    return [] if args[0] == out else [f'np.copyto({out}, {args[0]}, casting="unsafe")']


ASTYPE = Op(
    "astype", _astype_impl, (lambda g, ans, x, dtype: _cast(g, np.result_type(_raw(x))),),
    jvp=lambda ts, ans, x, dtype: _cast(ts[0], np.dtype(dtype)),
    formula="d x.astype(t) = dx cast back (complex to real: the real part)",
    adjoint=("ḡ cast back to the dtype of {0}",),
    samples=lambda rng: [((rng.normal(size=(3,)),), {"dtype": np.dtype(np.float64)})],
    jax="jnp.asarray({0}).astype({dtype})", jax_uncast=(0,), spelling=".astype",
    complex_rules=True,
    kernel=Kernel(_astype_lines, params=frozenset({"dtype"})),
    words=Words(copies=True),
)
FAMILY.op(ASTYPE)


# -- complex parts ----------------------------------------------------------
# The convention (HIPS autograd's): the gradient of a real f(z), z = x + iy, is
# ∂f/∂x − i ∂f/∂y; the VJP of any f at cotangent g is the gradient of Re(g·f(z)), and
# tangents pair with cotangents as <t, g> = Re(sum(t·g)) (no conjugation). So a
# holomorphic op's rules are its real ones (g·f′(z), f′(z)·t), and the others below
# have rules of their own, separately for the two modes.


def _is_complex(v: Any) -> bool:
    return dtype_of(v).kind == "c"


def _complex_dtype(v: Any) -> np.dtype:
    """The complex dtype of ``v``'s precision (complex64 for float32)."""
    return np.result_type(dtype_of(v), np.complex64)


def _real_vjp(g: Any, ans: Any, x: Any) -> Any:
    # Re(g·Re z) = g·x: the gradient g, as a complex value for a complex z.
    return astype(g, _complex_dtype(x)) if _is_complex(x) else g


def _imag_vjp(g: Any, ans: Any, x: Any) -> Any:
    # Re(g·Im z) = g·y: the gradient −i·g; a real x has Im x = 0 and no gradient.
    if _is_complex(x):
        return astype(g, _complex_dtype(x)) * (-1j)
    return g * 0.0


def _imag_jvp(tangents: Any, ans: Any, x: Any) -> Any:
    t = tangents[0]
    return imag(t) if _is_complex(x) else t * 0.0


def _angle_impl(x: Any, deg: bool = False) -> Any:
    return np.angle(x, deg=deg)


def _angle_scale(deg: bool) -> float:
    return 180.0 / math.pi if deg else 1.0


def _angle_vjp(g: Any, ans: Any, x: Any, deg: bool = False) -> Any:
    # θ = atan2(y, x): ∂θ/∂x = −y/|z|², ∂θ/∂y = x/|z|², so the gradient is −i·conj(z)/|z|²
    # (= −i/z). A real x has angle 0 or π (constant): no gradient. 0 at z = 0.
    if not _is_complex(x):
        return g * 0.0
    r2 = real(x * conj(x))
    return divide(g * conj(x) * (-1j * _angle_scale(deg)), zeros_to_one(r2))


def _angle_jvp(tangents: Any, ans: Any, x: Any, deg: bool = False) -> Any:
    t = tangents[0]
    if not _is_complex(x):
        return t * 0.0
    # dθ = Im(conj(z)·dz)/|z|² (= Im(dz/z))
    r2 = real(x * conj(x))
    return divide(imag(conj(x) * t) * _angle_scale(deg), zeros_to_one(r2))


def _complex_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((rng.uniform(-2.0, 2.0, shape),), {}) for shape in [(), (3,), (2, 3)]]


def _real_impl(x: Any) -> Any:
    return np.array(np.real(x))  # a new array (NumPy's is a view of a complex x, or x)


def _imag_impl(x: Any) -> Any:
    return np.array(np.imag(x))  # a new, writable array


REAL = Op(
    "real", _real_impl, (_real_vjp,), jvp=lambda ts, ans, x: real(ts[0]),
    formula="d Re(z) = Re(dz); gradient 1 (complex for complex z)",
    adjoint=("ḡ (as a complex value for complex {0})",), samples=_complex_samples, batch_jvp=True,
    complex_rules=True, jax="jnp.real({0})",
    kernel_refused="a view of a complex array's real parts, not a ufunc",
)
FAMILY.op(REAL)
IMAG = Op(
    "imag", _imag_impl, (_imag_vjp,), jvp=_imag_jvp, formula="d Im(z) = Im(dz); gradient −i",
    adjoint=("ḡ times −i (0 for a real {0})",), samples=_complex_samples, batch_jvp=True,
    complex_rules=True, jax="jnp.imag({0})",
    kernel_refused="a view of a complex array's imaginary parts, not a ufunc",
)
FAMILY.op(IMAG)
CONJ = Op(
    "conjugate", np.conjugate, (lambda g, ans, x: conjugate(g),),
    jvp=lambda ts, ans, x: conjugate(ts[0]), symbol="conj",
    formula="d conj(z) = conj(dz); VJP conj(ḡ)", adjoint=("conj(ḡ)",), samples=_complex_samples,
    batch_jvp=True, complex_rules=True, jax="jnp.conjugate({0})",
)
conjugate = conj = FAMILY.unary(CONJ, "conj")
ANGLE = Op(
    "angle", _angle_impl, (_angle_vjp,), jvp=_angle_jvp, reads=(0,),
    formula="d arg(z) = Im(dz / z); gradient −i/z (0 for real z)",
    adjoint=("ḡ times −i / {0} (0 for a real {0})",),
    samples=lambda rng: [((rng.uniform(0.3, 2.0, (3,)),), {}),
                         ((rng.uniform(0.3, 2.0, (2, 2)),), {"deg": True})], complex_rules=True,
    jax="jnp.angle({0}, deg={deg})",
    kernel_refused="np.angle is not a ufunc: it has no out=",
)
FAMILY.op(ANGLE)


# -- binary (broadcasting) ------------------------------------------------


def _split_mask(wins: Any, xv: Any, yv: Any) -> Any:
    """1 where x wins, 0.5 on ties, 0 where y wins (raw, so constant under create_graph).

    In the output's dtype, so ``g * mask`` and ``t * mask`` keep it (a Python
    float ``g`` or ``t`` is weak and takes the mask's dtype).
    """
    mask = np.where(wins, 1.0, np.where(np.equal(xv, yv), 0.5, 0.0))
    return mask.astype(_float_dtype(xv, yv), copy=False)


def _tie_mask(x: Any, y: Any) -> Any:
    """The share of ``maximum(x, y)``'s gradient that goes to ``x``."""
    xv, yv = _raw(x), _raw(y)
    return _split_mask(np.greater(xv, yv), xv, yv)


def _fmax_mask(x: Any, y: Any) -> Any:
    """The share of ``fmax(x, y)``'s gradient that goes to ``x`` (a NaN ``y`` loses)."""
    xv, yv = _raw(x), _raw(y)
    return _split_mask(np.greater(xv, yv) | np.isnan(yv), xv, yv)


def _fmin_mask(x: Any, y: Any) -> Any:
    """The share of ``fmin(x, y)``'s gradient that goes to ``x`` (a NaN ``y`` loses)."""
    xv, yv = _raw(x), _raw(y)
    return _split_mask(np.less(xv, yv) | np.isnan(yv), xv, yv)


def _may_hold(mask: Any) -> bool:
    """Whether a rule must take its masked path: ``mask`` holds somewhere, or it is a graph
    tracer's (the graph must hold for every input, so the branch is not taken on the
    example's values)."""
    return is_traced(mask) or bool(np.any(mask))


def _pow_dx(g: Any, ans: Any, x: Any, y: Any) -> Any:
    ty = type(y)
    if ty is float or ty is int:
        if y == 0:
            return g * 0.0
        if y == 2:
            return g * y * x  # x ** 1.0 is x exactly (NaN, inf and -0.0 included)
        return g * y * power(x, y - 1.0)
    yv = _raw(y)
    if np.ndim(yv) == 0 and yv == 0 and not is_traced(y):
        return g * 0.0
    zero = _raw(x) == 0
    if not _may_hold(zero):
        return g * y * power(x, y - 1.0)
    if (is_traced(x) or is_traced(y)) and not _is_complex(yv):
        # differentiated again: the limits at x = 0 (_pow_at_zero)
        away = y * power(where(zero, 1.0, x), y - 1.0)
        return g * where(zero, _pow_at_zero(x, y, zero, ans, False), away)
    # y x^(y-1) is 0 at y = 0, also at x = 0 (where 0 · x^-1 would be NaN); kept as a
    # product with y where y is traced, so that its derivative in y survives.
    return g * y * power(where(zero & (yv == 0), 1.0, x), y - 1.0)


def _pow_dy(g: Any, ans: Any, x: Any, y: Any) -> Any:
    # ln(x) x^y, with its limit at x = 0 (0 for y ≥ 0, -inf for y < 0); none at x < 0 (NaN)
    xv = _raw(x)
    if type(xv) is int:
        xv = x = float(xv)  # a Python int stays weak: 2 ** x32 is float32, so is its rule
    if type(xv) is float and xv > 0.0:
        return g * ans * log(x)
    zero = xv == 0
    if not _may_hold(zero):
        return g * ans * log(x)
    away = ans * log(where(zero, 1.0, x))
    if not _is_complex(ans) and not _is_complex(y):
        away = where(zero, _pow_at_zero(x, y, zero, ans, True), away)
    return g * away


def _attached(v: Any, slope: Any) -> Any:
    """0 whose derivative in ``v`` is ``slope`` (a plain array, ±inf allowed): ``slope·(v −
    v₀)`` where finite, ``±∛(v − v₀)`` where infinite (``∛`` has value 0 and derivative
    +inf at 0, and no NaN from ``0 · ∞``). Only a first derivative is meant: the rules that
    use it refuse to be differentiated twice (:func:`_pow_at_zero`)."""
    if not is_traced(v):
        return 0.0
    rv = _raw(v)
    d = v - rv
    at_inf = np.isinf(rv)  # (inf − inf is NaN: 0 there, whose derivative is 0)
    if _may_hold(at_inf):
        d = where(at_inf, 0.0, d)
    infinite = (slope == np.inf) | (slope == -np.inf)
    finite = where(infinite, 0.0, slope) * d
    if not _may_hold(infinite):
        return finite
    # (∛ at 1 where the slope is finite: a graph takes this branch for every input, and
    # the where's unselected lanes would send 0 · ∞ = NaN back through ∛ at 0)
    root = cbrt(where(infinite, d, 1.0))
    return where(infinite, where(slope > 0, 1.0, -1.0) * root, finite)


def _layers(v: Any) -> int:
    """How many differentiating layers wrap ``v`` (a graph tracer's value counts none)."""
    n = 0
    while True:
        k = kind_of(v)
        if k is None or k.opaque:
            return n
        n += 1
        a = k.value_attribute
        v = k.primal(v) if a is None else getattr(v, a)


def _pow_at_zero(x: Any, y: Any, zero: Any, ans: Any, in_y: bool) -> Any:
    """``∂f/∂x`` (``in_y`` false) or ``∂f/∂y`` of ``f = x ** y`` at ``x = 0`` (``zero``), as
    expressions whose first derivatives are the limits of the second derivatives as
    ``x → 0⁺``, the same in either order: ``∂²f/∂x∂y = x^(y−1)(1 + y ln x)`` → 0 for
    ``y > 1``, −inf for ``0 < y ≤ 1``, +inf for ``y ≤ 0``; ``∂²f/∂y² = x^y ln²x`` → 0 for
    ``y > 0``, +inf for ``y ≤ 0``; ``∂²f/∂x²`` from ``y x^(y−1)`` itself (``power``'s own
    rule, exact to any order). ``∂f/∂y`` is 0 for ``y ≥ 0`` (JAX's and PyTorch's value at
    ``0 ** 0`` too) and −inf (its limit) for ``y < 0``. The limits in ``y`` are first
    derivatives only: differentiated twice more, the rules refuse."""
    yc = _raw(y)
    if (is_traced(y) or in_y) and max(_layers(x), _layers(y)) > 1:
        raise NoRuleError(
            "power: third and higher derivatives of x ** y involving the exponent y at x = 0 "
            "are not computed (the second derivatives there are limits, most of them "
            "infinite); keep the base away from 0 (`(x + 1e-12) ** y`), or differentiate "
            "the exponent fewer times")
    dt = dtype_of(ans)
    nan = yc != yc

    def table(t: Any) -> Any:
        return astype(where(nan, np.nan, t), dt)

    fxy = table(where(yc > 1, 0.0, where(yc > 0, -np.inf, np.inf)))
    if not in_y:
        keep = zero & (yc != 0)  # y x^(y-1) at y = 0 is 0 (no 0 · inf): the base 1 there
        return yc * power(where(keep, x, 1.0), yc - 1.0) + _attached(y, fxy)
    fy = table(where(yc < 0, -np.inf, 0.0))
    return fy + _attached(x, fxy) + _attached(y, table(where(yc > 0, 0.0, np.inf)))


def _power_impl(x: Any, y: Any) -> Any:
    """``np.power``; a float32/float64 array to a Python number as NumPy's ``**``.

    ``ndarray ** 2`` runs ``np.square`` and ``** 0.5`` ``np.sqrt``: for these
    dtypes the same values as ``np.power`` (special values included) at a
    fraction of the cost (``np.power(x, 2.0)`` calls ``pow`` per element).
    Other dtypes keep ``np.power`` (``bool ** 2`` would change dtype, a complex
    or long double ``** 0.5`` its last bit).
    """
    if type(x) is np.ndarray and (type(y) is float or type(y) is int):
        dt = x.dtype
        if dt is _FLOAT64 or dt is _FLOAT32:  # (native byte order: NumPy's own instances)
            if y != 2 and y != -1 and float(y).is_integer() and -64 <= y <= 64:
                return _integer_power(x, int(y))
            return x ** y
    return np.power(x, y)


def _integer_power(x: np.ndarray, n: int) -> np.ndarray:
    """``x ** n`` for a whole ``n`` as ``|x| ** n``, with ``x``'s sign for odd ``n``.

    The same number mathematically (and for ±0, ±inf and NaN), but NumPy's vectorised
    ``pow`` (AVX-512) handles only non-negative bases and falls back to the C library's
    ``pow``, 15× slower, for a whole array that holds one negative entry: ``v ** 3`` of a
    100×100 matrix of eigenvectors took 0.6 ms, ``|v| ** 3`` 0.04 ms. Where NumPy's two
    paths disagree in the last bit, this one gives the vectorised path's answer.
    """
    r = np.abs(x) ** n
    if n & 1:
        if type(r) is np.ndarray:
            np.copysign(r, x, out=r)
        else:  # (a 0-d x gives a NumPy scalar, as x ** n does)
            r = np.copysign(r, x)
    return r


_FLOAT64, _FLOAT32 = np.dtype(np.float64), np.dtype(np.float32)


def _scalar_pow(x: float, y: float) -> float:
    return math.pow(x, y)


def _scalar_pow_dx(ans: float, x: float, y: float) -> float:
    return 0.0 if y == 0 else y * math.pow(x, y - 1.0)  # x**0 is 1 even where x is not finite


# The JVPs of +, - and * are written out (the two VJP rules applied to the tangents and
# added, as _binary_jvp does in general) because they are the most frequent ops of
# forward mode: one call instead of four (each also answers _fit's common case, a
# tangent of the output's shape, itself). The registry sweep checks them against the
# VJPs like every other rule.


def _add_jvp(ts: Any, ans: Any, x: Any, y: Any) -> Any:
    tx, ty = ts
    t = ty if tx is None else tx if ty is None else tx + ty
    if type(t) is np.ndarray and type(ans) is np.ndarray and t.shape == ans.shape:
        return t
    return _fit(t, ans)


def _subtract_jvp(ts: Any, ans: Any, x: Any, y: Any) -> Any:
    tx, ty = ts
    t = -ty if tx is None else tx if ty is None else tx - ty
    if type(t) is np.ndarray and type(ans) is np.ndarray and t.shape == ans.shape:
        return t
    return _fit(t, ans)


def _multiply_jvp(ts: Any, ans: Any, x: Any, y: Any) -> Any:
    tx, ty = ts
    t = ty * x if tx is None else tx * y if ty is None else tx * y + ty * x
    if type(t) is np.ndarray and type(ans) is np.ndarray and t.shape == ans.shape:
        return t
    return _fit(t, ans)


ADD = _binary(
    "add", np.add, lambda g, ans, x, y: g, lambda g, ans, x, y: g, jvp=_add_jvp,
    scalar=operator.add, reads=(), formula="d(x + y) = dx + dy", symbol="+",
    dscalar=(lambda ans, x, y: 1.0, lambda ans, x, y: 1.0), adjoint=("ḡ", "ḡ"),
    jax="jnp.add({0}, {1})", spelling="+",
    words=Words(nonfinite="inf + (-inf) is NaN", copies=True),
    complex_rules=True,
    commutative=True,
)
add = FAMILY.binary(ADD)
SUBTRACT = _binary(
    "subtract", np.subtract, lambda g, ans, x, y: g, lambda g, ans, x, y: negative(g),
    jvp=_subtract_jvp, scalar=operator.sub, reads=(), formula="d(x - y) = dx - dy", symbol="-",
    dscalar=(lambda ans, x, y: 1.0, lambda ans, x, y: -1.0), adjoint=("ḡ", "−ḡ"),
    jax="jnp.subtract({0}, {1})", spelling="-",
    words=Words(nonfinite="inf - inf is NaN", copies=True),
    complex_rules=True,
    kernel=Kernel(piece="sub"),
)
subtract = FAMILY.binary(SUBTRACT)
MULTIPLY = _binary(
    "multiply", np.multiply, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x,
    jvp=_multiply_jvp, scalar=operator.mul, crossed=True, formula="d(x·y) = y dx + x dy",
    symbol="*", dscalar=(lambda ans, x, y: float(y), lambda ans, x, y: float(x)),
    adjoint=("ḡ·{1}", "ḡ·{0}"), jax="jnp.multiply({0}, {1})", spelling="*",
    words=Words(nonfinite="0 · inf is NaN, and a product can overflow to inf", zero="factor",
                copies=True),
    complex_rules=True,
    kernel=Kernel(piece="mul"),
    commutative=True,
)
multiply = FAMILY.binary(MULTIPLY)
DIVIDE = _binary(
    "divide", np.divide, lambda g, ans, x, y: divide(g, y),
    lambda g, ans, x, y: -divide(g * ans, y), scalar=operator.truediv, reads=(1,), reads_out=True,
    formula="d(x/y) = dx/y - x dy/y²", symbol="/", domain=("real", "nonzero"),
    dscalar=(lambda ans, x, y: 1.0 / y, lambda ans, x, y: -ans / y),
    adjoint=("ḡ / {1}", "−ḡ·{0} / {1}²"), jax="jnp.divide({0}, {1})", spelling="/",
    words=Words(
        nonfinite="a division by 0 gives inf (and 0/0 NaN)", derivative="1/b in a and -a/b² in b",
        infinite_at="b = 0",
        fix="keep the denominator away from 0 (`a / (b + 1e-12)`), or mask it with a double "
            "where: `np.where(b != 0, a / np.where(b != 0, b, 1.0), 0.0)`",
        zero="factor", copies=True,
    ),
    complex_rules=True,
    kernel=Kernel(piece="div"),
)
divide = true_divide = FAMILY.binary(DIVIDE, "true_divide")
def _power_jax(s: JaxStep) -> str:
    """``jnp.power`` for a nonzero number as exponent, else ``_power`` (0 ** 0 has
    gradient 0, as wengert's)."""
    if s.is_literal(1) and type(s.literal(1)) in (int, float) and s.literal(1) != 0:
        return f"jnp.power({s.args[0]}, {s.args[1]})"
    return f"{s.helper('_power')}({s.args[0]}, {s.args[1]})"


def _power_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    """The ufunc :func:`_power_impl` runs: for a float32/float64 array to a Python number,
    NumPy's ``**`` runs ``np.square`` for 2, ``np.sqrt`` for 0.5 and ``np.reciprocal`` for
    the int -1 (np.power's bits, but their own names in warnings)."""
    if eq.is_literal(1) and eq.dtype(0) in (np.dtype(np.float64), np.dtype(np.float32)):
        y = eq.literal(1)
        if type(y) in (int, float):
            ufunc = "square" if y == 2 else "sqrt" if y == 0.5 else \
                "reciprocal" if type(y) is int and y == -1 else None
            if ufunc is not None:
                return [f"np.{ufunc}({args[0]}, out={out})"]
    return [f"np.power({args[0]}, {args[1]}, out={out})"]


POWER = _binary(
    "power", _power_impl, _pow_dx, _pow_dy, scalar=_scalar_pow, reads_out=True,
    formula="d(x^y) = y x^(y-1) dx + ln(x) x^y dy", symbol="**", domain=("positive", "real"),
    dscalar=(_scalar_pow_dx, lambda ans, x, y: ans * math.log(x)),
    adjoint=("ḡ·{1}·{0}^({1} − 1)", "ḡ·{out}·ln {0}  (0 where {0} = 0)"), spelling="**",
    jax=_power_jax,
    words=Words(
        nonfinite="0 to a negative power is inf, a negative base to a fractional power NaN",
        derivative="p·x^(p-1) in x and log(x)·x^p in p",
        infinite_at="x = 0 when p < 1 (and log(x) needs x > 0)",
        fix="keep the base positive (`(x + 1e-12) ** p`), or write `np.sqrt` / `np.abs` if that "
            "is what is meant",
    ),
    complex_rules=True,
    kernel=Kernel(_power_lines, piece="pow"),
    scalar_code=math.pow,
)
power = FAMILY.binary(POWER)
MAXIMUM = _binary(
    "maximum", np.maximum, lambda g, ans, x, y: g * _tie_mask(x, y),
    lambda g, ans, x, y: g * _tie_mask(y, x), scalar=None, formula="ties split the gradient evenly",
    domain=("real", "real"), adjoint=("ḡ·[{0} > {1}], ½ on ties", "ḡ·[{1} > {0}], ½ on ties"),
    jax="jnp.maximum({0}, {1})",
    complex_rules=True,
    kernel=Kernel(piece="max"),
    words=Words(zero="larger"),
)
maximum = FAMILY.binary(MAXIMUM)
MINIMUM = _binary(
    "minimum", np.minimum, lambda g, ans, x, y: g * _tie_mask(y, x),
    lambda g, ans, x, y: g * _tie_mask(x, y), formula="ties split the gradient evenly",
    adjoint=("ḡ·[{0} < {1}], ½ on ties", "ḡ·[{1} < {0}], ½ on ties"), jax="jnp.minimum({0}, {1})",
    complex_rules=True,
    kernel=Kernel(piece="min"),
    words=Words(zero="smaller"),
)
minimum = FAMILY.binary(MINIMUM)


def _nan_ignoring(name: str, impl: Any, mask: Any, what: str, than: str) -> Op:
    """``fmax`` and ``fmin``: ``mask(x, y)`` is where ``x`` is chosen (½ on ties)."""
    return _binary(
        name, impl, lambda g, ans, x, y: g * mask(x, y), lambda g, ans, x, y: g * mask(y, x),
        formula=f"NaN-ignoring {what}", jax=f"_{name}({{0}}, {{1}})",
        adjoint=(f"ḡ·[{{0}} {than} {{1}} or {{1}} is NaN], ½ on ties",
                 f"ḡ·[{{1}} {than} {{0}} or {{0}} is NaN], ½ on ties"),
        complex_rules=True,
        words=Words(zero="larger" if what == "maximum" else "smaller"),
    )


FMAX = _nan_ignoring("fmax", np.fmax, _fmax_mask, "maximum", ">")
fmax = FAMILY.binary(FMAX)
FMIN = _nan_ignoring("fmin", np.fmin, _fmin_mask, "minimum", "<")
fmin = FAMILY.binary(FMIN)
def _weak(v: Any) -> Any:
    """A Python int as a Python float: NumPy keeps both weak beside a float32 array, but
    ``square(2)`` is an ``int64``, which is not (it would turn a float32 rule float64)."""
    return float(v) if type(v) is int else v


def _arctan2_partial(g: Any, y: Any, x: Any, in_y: bool) -> Any:
    """``g·x / (x² + y²)`` (``in_y``) or ``−g·y / (x² + y²)``: 0 where ``x`` or ``y`` is
    infinite (and the other is a number), the limit of both partials and of their
    derivatives there (``atan2`` itself is a number: 0, ±π/4, ±π/2, ±3π/4 or ±π), where
    ``inf / inf`` would be NaN."""
    x, y = _weak(x), _weak(y)
    d = square(x) + square(y)
    dv = _raw(d)
    infinite = None
    # (overflow of finite ones is harmless; not dv.max(): a NaN anywhere hides an inf)
    suspect = bool(np.isinf(dv).any()) if type(dv) is np.ndarray else (
        is_traced(dv) or dv == np.inf)
    if suspect:
        xv, yv = _raw(x), _raw(y)
        infinite = (np.isinf(xv) & ~np.isnan(yv)) | (np.isinf(yv) & ~np.isnan(xv))
        if _may_hold(infinite):
            x, y = where(infinite, 1.0, x), where(infinite, 1.0, y)
            d = square(x) + square(y)
        else:
            infinite = None
    out = divide(g * x, d) if in_y else -divide(g * y, d)
    return out if infinite is None else where(infinite, 0.0, out)


def _arctan2_dy(g: Any, ans: Any, y: Any, x: Any) -> Any:
    return _arctan2_partial(g, y, x, True)


def _arctan2_dx(g: Any, ans: Any, y: Any, x: Any) -> Any:
    return _arctan2_partial(g, y, x, False)


ARCTAN2 = _binary(
    "arctan2", np.arctan2, _arctan2_dy, _arctan2_dx, scalar=math.atan2,
    formula="d atan2(y, x) = (x dy - y dx)/(x² + y²)", domain=("nonzero", "nonzero"),
    adjoint=("ḡ·{1} / ({0}² + {1}²)", "−ḡ·{0} / ({0}² + {1}²)"), jax="jnp.arctan2({0}, {1})",
)
arctan2 = FAMILY.binary(ARCTAN2)


def zeros_to_one(ans: Any) -> Any:
    """``ans`` with its zeros replaced by ones, for a rule ``g * u / ans`` whose ``u`` is 0
    wherever ``ans`` is (hypot at (0, 0), a standard deviation of a constant, a 2-norm
    at 0): the gradient there is taken as 0 instead of NaN."""
    a = _raw(ans)
    if type(a) is float:
        return ans if a != 0.0 else 1.0
    if not _may_hold(a == 0):
        return ans
    return where(a == 0, 1.0, ans)


HYPOT = _binary(
    "hypot", np.hypot, lambda g, ans, x, y: divide(g * x, zeros_to_one(ans)),
    lambda g, ans, x, y: divide(g * y, zeros_to_one(ans)), scalar=math.hypot, reads_out=True,
    formula="d hypot(x, y) = (x dx + y dy)/hypot  (0 at (0, 0))", domain=("nonzero", "nonzero"),
    adjoint=("ḡ·{0} / {out}  (0 where {out} = 0)", "ḡ·{1} / {out}  (0 where {out} = 0)"),
    jax="_hypot({0}, {1})",
    commutative=True,
    words=Words(zero="degenerate"),
)
hypot = FAMILY.binary(HYPOT)


def _softmax_weight(x: Any, y: Any, ans: Any, exp_fn: Any) -> Any:
    """The weight of ``x`` in ``ans = log(e^x + e^y)``: ``exp(x - ans)``, also where ``x`` is
    infinite and so is ``ans`` (``inf - inf``): 1, or ½ when ``y`` is the same infinity
    (ties split evenly, as for ``maximum``)."""
    xv = _raw(x)
    same = np.isinf(xv) & (xv == _raw(ans))
    if not _may_hold(same):
        return exp_fn(x - ans)
    split = np.where(_raw(y) == xv, 0.5, 1.0).astype(dtype_of(ans))  # (float32 stays)
    return where(same, split, exp_fn(where(same, 0.0, x) - where(same, 0.0, ans)))


def _log_add_exp(name: str, impl: Any, exp_fn: Any, log: str, base: str, power: str) -> Op:
    """``logaddexp`` (``exp_fn`` is ``exp``) and ``logaddexp2`` (``exp2``): each input's
    weight is ``exp_fn(input − ans)``."""
    return _binary(
        name, impl, lambda g, ans, x, y: g * _softmax_weight(x, y, ans, exp_fn),
        lambda g, ans, x, y: g * _softmax_weight(y, x, ans, exp_fn), reads_out=True,
        formula=f"d {log}({base}ˣ + {base}ʸ) = {base}ˣ⁻ᵃ dx + {base}ʸ⁻ᵃ dy",
        adjoint=(f"ḡ·{power}({{0}} − {{out}})", f"ḡ·{power}({{1}} − {{out}})"),
        jax=f"_{name}({{0}}, {{1}})",
        commutative=True,
    )


LOGADDEXP = _log_add_exp("logaddexp", np.logaddexp, exp, "log", "e", "exp")
logaddexp = FAMILY.binary(LOGADDEXP)
LOGADDEXP2 = _log_add_exp("logaddexp2", np.logaddexp2, exp2, "log2", "2", "2^")
logaddexp2 = FAMILY.binary(LOGADDEXP2)
MOD = _binary(
    "mod", np.mod, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * floor(divide(x, y)),
    formula="d(x mod y) = dx - floor(x/y) dy", symbol="%", domain=("positive", "positive"),
    adjoint=("ḡ", "−ḡ·floor({0} / {1})"), jax="jnp.mod({0}, {1})", spelling="%",
)
mod = remainder = FAMILY.binary(MOD, "remainder")
def _floor_divide_jax(s: JaxStep) -> str:
    """``_int_floor_divide`` (0 where the divisor is 0, as NumPy) for integers,
    ``jnp.floor_divide`` otherwise."""
    if s.equation.out.dtype.kind in "iu":
        return f"{s.helper('_int_floor_divide')}({s.args[0]}, {s.args[1]})"
    return f"jnp.floor_divide({s.args[0]}, {s.args[1]})"


FLOOR_DIVIDE = _binary(
    "floor_divide", np.floor_divide, _zeros, _zeros, jvp=_zeros_jvp, reads=(),
    formula="d(x // y) = 0", symbol="//", domain=("positive", "positive"), adjoint=("0", "0"),
    jax=_floor_divide_jax, spelling="//",
    kernel=Kernel(piece="floordiv"),
)
floor_divide = FAMILY.binary(FLOOR_DIVIDE)


#: NumPy's clip ufunc, which ``np.clip`` calls after its checks of integer bounds (done
#: by :func:`clip` here): three times faster on small arrays than ``np.clip``.
_CLIP_UFUNC = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", np.clip)


def _clip_impl(x: Any, lo: Any, hi: Any) -> Any:
    # NumPy's own clip: x is kept where it ties a bound (clip(-0.0, 0.0, 1.0) is -0.0,
    # which minimum(maximum(x, lo), hi) turns into +0.0).
    return _CLIP_UFUNC(x, lo, hi)


def as_dtype(v: Any, dtype: Any) -> Any:
    """A mask or count computed from raw values, as ``dtype``: ``np.asarray`` for plain
    values, the recorded ``astype`` op for a graph tracer's (which must not be frozen)."""
    if is_traced(v):
        return v if v.dtype == dtype else astype(v, dtype)
    return np.asarray(v, dtype=dtype)


def _clip_mask(which: int, x: Any, lo: Any, hi: Any) -> Any:
    """Where input ``which`` (0: x, 1: lo, 2: hi) is the output, in the output's dtype:
    x inside [lo, hi] (bounds included), lo below it, hi above it (and when lo > hi)."""
    xv, lov, hiv = _raw(x), _raw(lo), _raw(hi)
    if which == 0:
        mask = (xv >= lov) & (xv <= hiv)
    elif which == 1:
        mask = (xv < lov) & (lov <= hiv)
    else:
        mask = (xv > hiv) | (lov > hiv)
    return as_dtype(mask, _float_dtype(xv, lov, hiv))


def _clip_dx(g: Any, ans: Any, x: Any, lo: Any, hi: Any) -> Any:
    return g * _clip_mask(0, x, lo, hi)


def _clip_dlo(g: Any, ans: Any, x: Any, lo: Any, hi: Any) -> Any:
    return g * _clip_mask(1, x, lo, hi)


def _clip_dhi(g: Any, ans: Any, x: Any, lo: Any, hi: Any) -> Any:
    return g * _clip_mask(2, x, lo, hi)


def _clip_jvp(tangents: Any, ans: Any, x: Any, lo: Any, hi: Any) -> Any:
    # The VJP's masks applied to the tangents and added.
    out = None
    for t, rule in zip(tangents, (_clip_dx, _clip_dlo, _clip_dhi)):
        if t is not None:
            term = rule(t, ans, x, lo, hi)
            out = term if out is None else out + term
    return _fit(out, ans)


def _clip_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    x = np.array([-1.7, -0.9, -0.1, 0.4, 1.3, 2.2])
    return [((x, -0.5, 1.0), {}), ((x.reshape(2, 3), np.array([-1.2, 0.0, -0.3]), 1.9), {})]


def _clip_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    x, lo, hi = args
    return [f"np.clip({x}, {lo}, {hi}, out={out})"]


CLIP = Op(
    "clip", _clip_impl, (_clip_dx, _clip_dlo, _clip_dhi), jvp=_clip_jvp, reads=(0, 1, 2),
    broadcasting=True, unbroadcast=unbroadcast,
    formula="gradient flows to x inside [lo, hi] (bounds included)",
    adjoint=("ḡ·[{1} ≤ {0} ≤ {2}]", "ḡ·[{0} < {1} ≤ {2}]", "ḡ·[{0} > {2} or {1} > {2}]"),
    samples=_clip_samples, jax="_clip({0}, {1}, {2})",
    complex_rules=True,
    kernel=Kernel(_clip_lines, inplace=(0, 1)),
)
FAMILY.op(CLIP)


def _where_impl(c: Any, x: Any, y: Any) -> Any:
    return np.where(c, x, y)


def _where_jvp(tangents: Any, ans: Any, c: Any, x: Any, y: Any) -> Any:
    _, tx, ty = tangents
    zero = _float_dtype(ans).type(0)  # a typed zero: a Python 0.0 would be float64 next to a float
    return _fit(where(c, zero if tx is None else tx, zero if ty is None else ty), ans)


def _where_lines(args: list[str], out: str, eq: EquationView) -> list[str]:
    c, x, y = args
    first = [] if y == out else [f"np.copyto({out}, {y})"]
    return first + [f"np.copyto({out}, {x}, where={c})"]


WHERE = Op(
    "where", _where_impl,
    (None, lambda g, ans, c, x, y: where(c, g, 0.0), lambda g, ans, c, x, y: where(c, 0.0, g)),
    jvp=_where_jvp, reads=(0,), broadcasting=True, unbroadcast=unbroadcast,
    formula="gradient goes to the chosen branch", adjoint=(None, "ḡ where {0}", "ḡ where not {0}"),
    samples=lambda rng: [
        ((np.array([True, False, True]), rng.normal(size=3), rng.normal(size=(2, 3))), {}),
        ((np.array([[True], [False]]), rng.normal(size=(2, 2)), 0.5), {}),
    ], jax="jnp.where({0}, {1}, {2})", jax_uncast=(0,),
    complex_rules=True,
    kernel=Kernel(_where_lines, inplace=(2,)),
)
FAMILY.op(WHERE)



# -- public functions of the ops with params -----------------------------------
#: The builders, for the families of elementwise ops in other modules
#: (:mod:`wengert.ops.floating`, :mod:`wengert.ops.bessel`).
unary_op, binary_op, zero_rule, zero_jvp = _unary, _binary, _zeros, _zeros_jvp


@FAMILY.export
def real(x: Any) -> Any:
    """The real part (a real ``x`` itself, as ``np.real``); the gradient is 1, as a
    complex value for a complex ``x``.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.grad(lambda z: real(z))(1j)
    (1+0j)
    """
    if dtype_of(x).kind != "c":
        return x
    return apply(REAL, x) if is_traced(x) else _real_impl(x)


@FAMILY.export
def imag(x: Any) -> Any:
    """The imaginary part (zeros for a real ``x``); the gradient is −i.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.grad(lambda z: imag(z) ** 2)(1 + 3j)
    -6j
    """
    return apply(IMAG, x) if is_traced(x) else _imag_impl(x)


@FAMILY.export
def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z`` (radians, or degrees with ``deg=True``); the gradient is
    −i/z (0 at 0, and for a real ``z``, whose angle is 0 or π).

    Examples
    --------
    >>> import wengert as wg
    >>> wg.grad(lambda z: angle(z))(2j)    # −i / 2i
    (-0.5+0j)
    """
    return apply(ANGLE, z, deg=True) if deg else apply(ANGLE, z)


def round(x: Any, decimals: int = 0) -> Any:  # noqa: A001
    """Round to ``decimals`` places; the gradient is zero."""
    return apply(ROUND, x, decimals=decimals) if decimals else apply(ROUND, x)


around = FAMILY.export(round, "around")


def astype(x: Any, dtype: Any) -> Any:
    """Cast to ``dtype``; gradients are cast back to the input's dtype."""
    if not is_traced(x):
        return _astype_impl(x, dtype)
    dtype = np.dtype(dtype)
    if dtype.kind == "O" and kind_of(x).connected(x):
        raise TypeError(
            f"astype(object) of a {type(x).__name__} that carries a derivative: an object "
            "array holds plain Python numbers, which arithmetic keeps using without the "
            "derivative (it would be silently zero). Keep a float dtype; cast "
            "wg.stop_gradient(x) if no derivative should flow."
        )
    return apply(ASTYPE, x, dtype=dtype)


@FAMILY.export
def clip(x: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None,
         max: Any = None) -> Any:
    """Clip to ``[a_min, a_max]`` (``min=`` and ``max=`` are their NumPy 2 keyword
    spellings); the gradient flows to ``x`` inside the bounds (bounds included) and
    to a tensor bound where it is active."""
    if min is not None:
        if a_min is not None:
            raise ValueError("clip: pass a_min or min, not both")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise ValueError("clip: pass a_max or max, not both")
        a_max = max
    if a_min is None and a_max is None:
        raise ValueError("clip: one of a_min or a_max must be given")
    dtype = dtype_of(x)
    if dtype.kind in "iu":
        # As NumPy's clip: a Python integer bound beyond an integer dtype's range clips
        # nothing (np.clip(int8_array, -1000, 1000) stays int8), where NumPy's minimum
        # and maximum would raise OverflowError.
        info = np.iinfo(dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    lo = _unbounded(x, -1) if a_min is None else a_min
    hi = _unbounded(x, 1) if a_max is None else a_max
    return apply(CLIP, x, lo, hi)


def _unbounded(x: Any, side: int) -> Any:
    """A bound that clips nothing and keeps ``x``'s dtype, as NumPy's ``None`` bound does:
    ``±inf`` for floats, the dtype's range for integers (Python numbers: weak in NumPy's
    promotion, so an integer array stays one)."""
    dtype = dtype_of(x)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if side < 0 else info.max)
    if dtype.kind == "b":
        return side > 0
    return side * math.inf


@FAMILY.export
def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` holds, else ``y``; gradients follow the choice."""
    if x is None and y is None:
        return np.nonzero(_raw(condition))
    c = _raw(condition)
    if isinstance(c, bool):
        pass
    elif is_traced(c):  # a graph tracer's condition: recorded, cast only when needed
        if c.dtype != np.bool_:
            c = astype(c, bool)
    else:
        c = np.asarray(c, dtype=bool)
    return apply(WHERE, c, x, y)
