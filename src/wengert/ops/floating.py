"""NumPy's floating-point routines and the remaining arithmetic ufuncs.

Primitives (elementwise, broadcasting, with NumPy's values): ``spacing`` (piecewise
constant: zero derivative), ``nextafter`` (``x`` moved by one unit in the last place:
derivative 1 in ``x``, 0 in the direction ``y``), ``copysign`` (``±1`` in the magnitude,
0 in the sign source), ``heaviside`` (0 in ``x``; in ``h0`` where ``x == 0``, the only
place its value is used), ``fmod`` (C's remainder: ``dx − trunc(x/y)·dy``), ``ldexp``
(``x·2ⁿ``: its derivative is ``ldexp`` of the tangent, exact, with no overflow of
``2ⁿ`` on its own) and the fractional part of ``modf`` (derivative 1).

Written with them and other ops: ``modf`` (its integral part is ``trunc``), ``frexp``
(the mantissa is ``ldexp(x, −e)``; the exponent is an integer, no gradient), ``divmod``
(``floor_divide`` and ``mod``), ``float_power`` (``power`` in float64, or complex128),
and NumPy 2.2's ``matvec`` and ``vecmat`` (``vecmat`` conjugates its vector, as
``vdot``). The integer ufuncs ``gcd``, ``lcm`` and ``bitwise_count`` carry no gradient
(see :mod:`wengert.interop.dispatch`).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> wg.grad(lambda x: np.sum(np.copysign(x, [1.0, -1.0])))(np.array([2.0, 3.0]))
array([ 1., -1.])
>>> wg.grad(lambda x: np.sum(np.frexp(x)[0]))(np.array([3.0, 0.3]))  # 1/2ᵉ
array([0.25, 2.  ])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, dtype_of, is_traced, shape_of, unary_function
from wengert.ops.base import primal as _raw
from wengert.ops.broadcast import unbroadcast
from wengert.ops.linalg.basic import matmul

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("floating")

__all__ = ["spacing", "nextafter", "copysign", "heaviside", "fmod", "ldexp", "modf",
           "frexp", "float_power", "matvec", "vecmat"]


def _same_sign(x: Any, y: Any) -> Any:
    """Where ``copysign(x, y)`` keeps ``x``'s sign (elsewhere it flips it)."""
    return np.signbit(_raw(x)) == np.signbit(_raw(y))


def _ints(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-4, 5, shape)


def _ldexp_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((rng.uniform(-2.0, 2.0, sx), _ints(rng, sn)), {})
            for sx, sn in [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3, 1), (1, 4))]]


SPACING = _ew.unary_op("spacing", np.spacing, _ew.zero_rule, jvp=_ew.zero_jvp,
                       reads_x=False, formula="d spacing(x) = 0", adjoint="0", jax="_spacing({0})")
spacing = FAMILY.unary(SPACING)
#: frexp's exponent: an integer, never differentiated (an input of a graph step, so a
#: compiled ``frexp`` follows new inputs).
EXPONENT = Op("frexp_exponent", lambda x: np.frexp(x)[1], (None,), jvp=_ew.zero_jvp,
              formula="an integer: no derivative", adjoint=(None,),
              samples=lambda rng: [((rng.uniform(-4.0, 4.0, s),), {}) for s in [(), (3,)]],
              jax="jnp.frexp({0})[1]", jax_uncast=(0,))
_exponent = unary_function(FAMILY.op(EXPONENT))
FRACTION = _ew.unary_op("fraction", lambda x: np.modf(x)[0], lambda g, ans, x: g,
                        reads_x=False, formula="d (x − trunc x) = dx", domain="offgrid",
                        adjoint="ḡ", jax="jnp.modf({0})[0]")
_fraction = unary_function(FAMILY.op(FRACTION))
NEXTAFTER = _ew.binary_op(
    "nextafter", np.nextafter, lambda g, ans, x, y: g, _ew.zero_rule, reads=(),
    formula="d nextafter(x, y) = dx", adjoint=("ḡ", "0"), jax="_nextafter({0}, {1})")
nextafter = FAMILY.binary(NEXTAFTER)
COPYSIGN = _ew.binary_op(
    "copysign", np.copysign, lambda g, ans, x, y: _ew.where(_same_sign(x, y), g, -g),
    _ew.zero_rule,
    formula="d copysign(x, y) = ±dx (− where the sign flips)", domain=("nonzero", "nonzero"),
    adjoint=("±ḡ", "0"), jax="_copysign({0}, {1})")
copysign = FAMILY.binary(COPYSIGN)
HEAVISIDE = _ew.binary_op(
    "heaviside", np.heaviside, _ew.zero_rule,
    lambda g, ans, x, y: _ew.where(_raw(x) == 0, g, 0.0),
    formula="d H(x, h₀) = [x = 0]·dh₀", domain=("nonzero", "real"),
    adjoint=("0", "ḡ·[{0} = 0]"), jax="jnp.heaviside({0}, {1})")
heaviside = FAMILY.binary(HEAVISIDE)
FMOD = _ew.binary_op(
    "fmod", np.fmod, lambda g, ans, x, y: g,
    lambda g, ans, x, y: -g * _ew.trunc(_ew.divide(x, y)),
    formula="d fmod(x, y) = dx − trunc(x/y) dy", domain=("positive", "positive"),
    adjoint=("ḡ", "−ḡ·trunc({0} / {1})"), jax="jnp.fmod({0}, {1})")
fmod = FAMILY.binary(FMOD)


def _ldexp_jvp(tangents: tuple[Any, ...], ans: Any, x: Any, n: Any) -> Any:
    tx = tangents[0]
    return _ew.zero_jvp(tangents, ans, x, n) if tx is None else ldexp(tx, n)


#: n is an integer array, never differentiated (NumPy's ldexp takes no float exponents).
LDEXP = Op("ldexp", np.ldexp, (lambda g, ans, x, n: ldexp(g, n), None), jvp=_ldexp_jvp,
           reads=(1,), broadcasting=True, unbroadcast=unbroadcast,
           formula="d (x·2ⁿ) = 2ⁿ·dx", adjoint=("ldexp(ḡ, {1})", None),
           samples=_ldexp_samples, jax="jnp.ldexp({0}, {1})", jax_uncast=(1,))
ldexp = FAMILY.binary(LDEXP)


def _no_out(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise NotImplementedError(f"{name}: the arguments {sorted(kwargs)} are not supported "
                                  "by wengert")


@FAMILY.export
def modf(x: Any, **kwargs: Any) -> tuple[Any, Any]:
    """The fractional and integral parts of ``x``, as ``np.modf``: the fractional part has
    derivative 1, the integral part 0."""
    _no_out("modf", kwargs)
    return _fraction(x), _ew.trunc(x)


@FAMILY.export
def frexp(x: Any, **kwargs: Any) -> tuple[Any, Any]:
    """The mantissa and the (integer) exponent of ``x``, as ``np.frexp``: the mantissa is
    ``ldexp(x, −e)``, so its derivative is ``2⁻ᵉ``; the exponent has none."""
    _no_out("frexp", kwargs)
    exponent = _exponent(x)
    return ldexp(x, -exponent), exponent


@FAMILY.export
def divmod(x: Any, y: Any, **kwargs: Any) -> tuple[Any, Any]:  # noqa: A001 - NumPy's name
    """``(x // y, x % y)``, as ``np.divmod``."""
    _no_out("divmod", kwargs)
    return _ew.floor_divide(x, y), _ew.mod(x, y)


@FAMILY.export
def float_power(x: Any, y: Any, **kwargs: Any) -> Any:
    """``x ** y`` computed in float64 (complex128 for complex input), as
    ``np.float_power``."""
    _no_out("float_power", kwargs)
    dtype = np.result_type(dtype_of(x), dtype_of(y), np.float64)
    return _ew.power(_ew.astype(x, dtype), _ew.astype(y, dtype))


def _as_array(x: Any) -> Any:
    return x if is_traced(x) else np.asarray(x)


def _core_dims(name: str, signature: str, *operands: tuple[Any, int]) -> None:
    """NumPy's gufunc check: each operand has at least its core dimensions."""
    for k, (x, need) in enumerate(operands):
        have = len(shape_of(x))
        if have < need:
            raise ValueError(f"{name}: Input operand {k} does not have enough dimensions (has "
                             f"{have}, gufunc core with signature {signature} requires {need})")


@FAMILY.export
def matvec(a: Any, v: Any, **kwargs: Any) -> Any:
    """The matrix-vector product over the last axes, broadcast over the others, as
    ``np.matvec`` (NumPy 2.2)."""
    _no_out("matvec", kwargs)
    a, v = _as_array(a), _as_array(v)
    _core_dims("matvec", "(m,n),(n)->(m)", (a, 2), (v, 1))
    return matmul(a, v[..., None])[..., 0]


@FAMILY.export
def vecmat(v: Any, a: Any, **kwargs: Any) -> Any:
    """The vector-matrix product ``conj(v) @ a`` over the last axes, as ``np.vecmat``
    (NumPy 2.2)."""
    _no_out("vecmat", kwargs)
    v, a = _as_array(v), _as_array(a)
    _core_dims("vecmat", "(n),(n,m)->(m)", (v, 1), (a, 2))
    if dtype_of(v).kind == "c":
        v = _ew.conjugate(v)
    return matmul(v[..., None, :], a)[..., 0, :]


