"""The helper functions a module exported to JAX defines when it uses them.

:func:`wengert.graph.backends.export.to_jax_source` copies the source of each helper
an exported function calls into the module it writes (which then stands alone), so
each helper here is written exactly as it appears there. Most follow wengert's
derivative convention where JAX's differs at a non-differentiable point; a helper
decorated with ``jax.custom_jvp`` is copied with its rule. Importing this module needs
JAX; wengert itself never imports it (the export reads its text).
"""

import base64
import io
import math

import jax
import jax.numpy as jnp

import numpy as np


def _check_x64():
    if jax.dtypes.canonicalize_dtype(np.float64) != np.float64:
        raise RuntimeError(
            "This function was exported from a wengert graph that computes in 64 bits, and "
            "JAX is in 32-bit mode: it would compute in float32. Turn 64-bit mode on first: "
            'jax.config.update("jax_enable_x64", True).')


def _npy(text):
    # A constant array, from the base64 text of its .npy file.
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


def _abs(x):
    # np.abs with abs'(0) = 0 (as wengert's; JAX's is 1): x * sign(x) is |x| exactly.
    return x * jnp.sign(x)


def _power(x, y):
    # np.power; the gradient at 0 ** 0 is 0 (as wengert's; JAX's is NaN).
    return jnp.power(jnp.where((x == 0) & (y == 0), 1, x), y)


def _share(x, y, ans, exp):
    # The weight exp(x - ans) of x in ans = log(exp(x) + exp(y)), also where x is
    # infinite and so is ans: 1, or 1/2 when y is the same infinity (as wengert's).
    same = jnp.isinf(x) & (x == ans)
    split = jnp.where(y == x, 0.5, 1.0)
    return jnp.where(same, split, exp(jnp.where(same, 0.0, x) - jnp.where(same, 0.0, ans)))


@jax.custom_jvp
def _logaddexp(x, y):
    # np.logaddexp; at equal infinities the gradient splits evenly (as wengert's).
    return jnp.logaddexp(x, y)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    ans = _logaddexp(x, y)
    return ans, tx * _share(x, y, ans, jnp.exp) + ty * _share(y, x, ans, jnp.exp)


def _logaddexp2(x, y):
    # np.logaddexp2: logaddexp in base 2, so equal infinities split the gradient too.
    return _logaddexp(x * math.log(2.0), y * math.log(2.0)) / math.log(2.0)


def _int_floor_divide(x, y):
    # np.floor_divide of integers: 0 where y is 0 (XLA's integer division gives -1 there).
    return jnp.where(y == 0, 0, jnp.floor_divide(x, y))


def _fmax(x, y):
    # np.fmax (a NaN loses); ties split the gradient evenly (as wengert's).
    return jnp.where(jnp.isnan(y), x, jnp.where(jnp.isnan(x), y, jnp.maximum(x, y)))


def _fmin(x, y):
    # np.fmin (a NaN loses); ties split the gradient evenly (as wengert's).
    return jnp.where(jnp.isnan(y), x, jnp.where(jnp.isnan(x), y, jnp.minimum(x, y)))


def _clip(x, lo, hi):
    # np.clip; the gradient goes to x inside [lo, hi], bounds included (as wengert's).
    x, lo, hi = jnp.asarray(x), jnp.asarray(lo), jnp.asarray(hi)
    inside = (x >= lo) & (x <= hi)
    below = (x < lo) & (lo <= hi)
    above = (x > hi) | (lo > hi)
    rest = jax.lax.stop_gradient(jnp.minimum(jnp.maximum(x, lo), hi))  # NaN: no gradient
    return jnp.where(inside, x, jnp.where(below, lo, jnp.where(above, hi, rest)))


def _spacing(x):
    # np.spacing: a step function, no gradient (as wengert's).
    x = jax.lax.stop_gradient(x)
    return jnp.nextafter(x, jnp.copysign(jnp.inf, x)) - x


@jax.custom_jvp
def _nextafter(x, y):
    # np.nextafter; its derivative is 1 in x and 0 in y (as wengert's; JAX has none).
    return jnp.nextafter(x, y)


@_nextafter.defjvp
def _nextafter_jvp(primals, tangents):
    (x, y), (tx, _) = primals, tangents
    return _nextafter(x, y), jnp.broadcast_to(tx, jnp.broadcast_shapes(jnp.shape(x),
                                                                       jnp.shape(y)))


@jax.custom_jvp
def _copysign(x, y):
    # np.copysign; the derivative in x is -1 where the sign flips, 1 elsewhere (-0.0
    # included), 0 in y (as wengert's).
    return jnp.copysign(x, y)


@_copysign.defjvp
def _copysign_jvp(primals, tangents):
    (x, y), (tx, _) = primals, tangents
    same = jnp.signbit(x) == jnp.signbit(y)
    return _copysign(x, y), jnp.where(same, tx, -tx)


def _hypot(x, y):
    # np.hypot; the gradient at (0, 0) is 0 (as wengert's).
    zero = (x == 0) & (y == 0)
    return jnp.where(zero, 0.0, jnp.hypot(jnp.where(zero, 1.0, x), y))


def _std(x, axis, ddof, keepdims):
    # np.std; the gradient where the input is constant is 0 (as wengert's).
    v = jnp.var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    zero = v == 0
    return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, v)))


def _norm2(x, axis, keepdims):
    # The 2-norm (Frobenius for matrices) as np.linalg.norm; gradient 0 at 0 (as wengert's).
    s = jnp.sum(x * x, axis=axis, keepdims=keepdims)
    zero = s == 0
    return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, s)))


def _diagonal_embed(d, shape, offset, axis1, axis2):
    # Zeros of `shape` with d on a diagonal of the axis1/axis2 planes.
    a1, a2 = axis1 % len(shape), axis2 % len(shape)
    rest = tuple(n for i, n in enumerate(shape) if i not in (a1, a2))
    k = d.shape[-1]
    rows = np.arange(k) + max(-offset, 0)
    cols = np.arange(k) + max(offset, 0)
    out = jnp.zeros(rest + (shape[a1], shape[a2]), d.dtype).at[..., rows, cols].set(d)
    return jnp.moveaxis(out, (-2, -1), (a1, a2))


def _take_add(g, indices, shape, axis):
    # Zeros of `shape` with g added at `indices` along `axis` (repeats add up).
    if axis is None:
        return jnp.zeros(math.prod(shape), g.dtype).at[indices].add(g).reshape(shape)
    return jnp.zeros(shape, g.dtype).at[(slice(None),) * axis + (indices,)].add(g)


def _take_along_axis_add(g, indices, shape, axis):
    # Zeros of `shape` with g added where take_along_axis(., indices, axis) reads.
    if axis is None:
        return jnp.zeros(math.prod(shape), g.dtype).at[indices].add(g).reshape(shape)
    index = []
    for d in range(len(shape)):
        if d == axis:
            index.append(jnp.broadcast_to(indices, g.shape))
        else:
            r = np.arange(g.shape[d]) if shape[d] != 1 else np.zeros(g.shape[d], np.intp)
            index.append(r.reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1)))
    return jnp.zeros(shape, g.dtype).at[tuple(index)].add(g)


def _setitem_last(x, v, written, slots, shape):
    # x[index] = v for an index that repeats places: as in NumPy the last write wins
    # (`written` marks the places written, `slots` which element of v lands there).
    v = jnp.asarray(v, x.dtype)
    if v.ndim > len(shape):
        v = v.reshape(v.shape[v.ndim - len(shape):])
    values = jnp.take(jnp.ravel(jnp.broadcast_to(v, shape)), slots)
    return jnp.where(written, values, x)
