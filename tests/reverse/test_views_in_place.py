"""NumPy view semantics of in-place updates, in every mode and nesting.

Code that updates a view in place (``v = y[1:]; v *= 10``), or a base that a
view was taken from (``v = y[:2]; y[0] = ...``), must give what it gives on
NumPy arrays: under dual numbers (jvp, jacfwd, derivative), at second order
(hessian: forward over reverse; jacrev(grad): reverse over reverse;
grad(jvp): reverse over forward; jacfwd(jacfwd): forward over forward) and
with tensors. Values are compared with NumPy, derivatives with finite
differences of the NumPy code and with the other modes.
"""

from __future__ import annotations

import operator

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.ops import REGISTRY
from wengert.reverse.inplace import write_back

X6 = np.array([0.7, -1.2, 0.4, 1.5, -0.3, 0.9])


# -- references ---------------------------------------------------------------------------
def _numpy(f, x):
    """``f`` on a copy of ``x`` (the NumPy code may write into its argument)."""
    return np.asarray(f(np.array(x, dtype=float)), dtype=float)


def _fd_jacobian(f, x, h=1e-6):
    """Central differences of the NumPy code: d f / d x, shape ``f.shape + x.shape``."""
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((_numpy(f, x + h * e) - _numpy(f, x - h * e)) / (2 * h))
    return np.stack(cols, axis=-1).reshape(np.shape(_numpy(f, x)) + x.shape)


def _fd_hessian(s, x, h=1e-3):
    """Second central differences of a scalar NumPy function (exact up to rounding for
    polynomials of degree three, close for the quartics used here)."""
    n = x.size
    eye = np.eye(n).reshape((n,) + x.shape)
    hess = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a, b = h * eye[i], h * eye[j]
            hess[i, j] = (_numpy(s, x + a + b) - _numpy(s, x + a - b) - _numpy(s, x - a + b)
                          + _numpy(s, x - a - b)) / (4 * h * h)
    return hess


def _close(got, want, tol=1e-6):
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _direction(x):
    return np.linspace(0.3, 1.1, x.size).reshape(x.shape)


#: What first-order reverse mode says (as PyTorch does) when a value a recorded op saved was
#: written in place later; wengert's ``multiply`` saves both its inputs, so ``y += y * 0.5``
#: is refused there (nested transforms replace the values beneath instead, and go on).
REFUSED = "modified by an inplace operation"


def _reverse(run, refusal_ok):
    """``run()``, or ``None`` when reverse mode refuses (and that is allowed here)."""
    try:
        return run()
    except RuntimeError as e:
        if refusal_ok and REFUSED in str(e):
            return None
        raise


def check_first_order(f, x, refusal_ok=False):
    """Values (NumPy) and first derivatives (finite differences) in every first-order mode,
    and the caller's arrays left as they were."""
    x = np.asarray(x, dtype=float)
    t = _direction(x)
    x0, t0 = x.copy(), t.copy()
    want = _numpy(f, x)
    jac = _fd_jacobian(f, x)
    out, tangent = wg.jvp(f, (x,), (t,))
    _close(out, want, 1e-12)
    _close(tangent, np.tensordot(jac, t, axes=x.ndim), 1e-6)
    _close(wg.jacfwd(f)(x), jac, 1e-6)
    jac_rev = _reverse(lambda: wg.jacrev(f)(x), refusal_ok)
    if jac_rev is not None:
        _close(jac_rev, jac, 1e-6)
    _, vjp_fn = wg.vjp(f, x)
    w = np.linspace(-1.0, 1.0, want.size).reshape(want.shape)
    ct = _reverse(lambda: vjp_fn(w)[0], refusal_ok)
    if ct is not None:
        _close(ct, np.tensordot(w, jac, axes=want.ndim), 1e-6)
    # derivative along t of entry 0: the scalar forward mode
    d = wg.derivative(lambda s: np.ravel(f(x + s * t))[0])(0.0)
    _close(d, np.tensordot(jac, t, axes=x.ndim).ravel()[0], 1e-6)
    np.testing.assert_array_equal(x, x0)  # jvp never writes into the caller's arrays
    np.testing.assert_array_equal(t, t0)


def _sum_squares(f):
    return lambda z: 0.5 * np.sum(f(z) ** 2)


def check_second_order(f, x, fd=True, refusal_ok=False):
    """The Hessian of ``0.5 * sum(f(x)**2)`` in every nesting of the modes (only first-order
    tensors may refuse, when ``refusal_ok``)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    s = _sum_squares(f)
    v = _direction(x)
    hess = wg.hessian(s)(x).reshape(n, n)  # forward over reverse
    if fd:
        _close(hess, _fd_hessian(s, x), 1e-5)
    _close(wg.jacrev(wg.grad(s))(x).reshape(n, n), hess)  # reverse over reverse
    _close(wg.jacfwd(wg.jacfwd(s))(x).reshape(n, n), hess)  # forward over forward
    hv = wg.grad(lambda z: wg.jvp(s, (z,), (v,))[1])(x)  # reverse over forward
    _close(np.ravel(hv), hess @ v.ravel())
    _close(np.ravel(wg.hvp(s, x, v)), hess @ v.ravel())
    # tensors, double backward
    t = wg.tensor(x, requires_grad=True)
    if _reverse(lambda: s(t).backward(create_graph=True) or True, refusal_ok):
        g = t.grad
        t.grad = None
        (g * wg.tensor(v)).sum().backward()
        _close(np.ravel(t.grad), hess @ v.ravel())


# -- the tester's three examples -------------------------------------------------------------
def _g(x):
    y = x * 1.0
    v = y[1:]
    v *= 10.0  # NumPy: writes through to y
    return y


def _f(x):
    y = x * 1.0
    v = y[:2]
    y[0] = 100.0 * x[2]  # NumPy: v sees this
    return v


def _h(x):
    y = x * 1.0
    v = y[1:]
    v *= 10.0
    return np.sum(y ** 2)


def test_the_testers_examples():
    x = np.array([1.0, 2.0, 3.0])
    out, tangent = wg.jvp(_g, (x,), (np.ones(3),))
    np.testing.assert_array_equal(out, [1.0, 20.0, 30.0])
    np.testing.assert_array_equal(tangent, [1.0, 10.0, 10.0])
    np.testing.assert_array_equal(wg.jacfwd(_g)(x), np.diag([1.0, 10.0, 10.0]))
    out, tangent = wg.jvp(_f, (x,), (np.array([0.0, 0.0, 1.0]),))
    np.testing.assert_array_equal(out, [300.0, 2.0])
    np.testing.assert_array_equal(tangent, [100.0, 0.0])
    assert wg.derivative(lambda s: _f(x * s)[0])(1.0) == 300.0
    np.testing.assert_array_equal(wg.grad(_h)(x), [2.0, 400.0, 600.0])
    np.testing.assert_array_equal(wg.hessian(_h)(x), np.diag([2.0, 200.0, 200.0]))
    np.testing.assert_array_equal(wg.jacrev(wg.grad(_h))(x), np.diag([2.0, 200.0, 200.0]))
    np.testing.assert_array_equal(wg.jacfwd(wg.jacfwd(_h))(x), np.diag([2.0, 200.0, 200.0]))
    t = wg.tensor(x, requires_grad=True)
    yy = t * 1.0
    vv = yy[1:]
    vv *= 10.0
    np.sum(yy ** 2).backward(create_graph=True)
    gg = t.grad
    t.grad = None
    gg.sum().backward()
    np.testing.assert_array_equal(t.grad, [2.0, 200.0, 200.0])
    for fn in (_g, _f, _h):
        check_first_order(fn, x)
        check_second_order(lambda z, fn=fn: np.atleast_1d(fn(z)), x)


# -- one scenario per view op and per kind of in-place update --------------------------------
def _slice_step(x):
    y = x * 1.0
    v = y[::2]
    v += x[1::2] * x[::-2]
    return y


def _negative_step(x):
    y = x * 1.0
    v = y[::-1]
    v[1:3] = x[:2] * 4.0
    return y


def _int_index_row(x):
    y = (x * 1.0).reshape(2, 3)
    r = y[1]
    r -= x[:3] ** 2
    return y


def _ellipsis_and_none(x):
    y = (x * 1.0).reshape(2, 3)
    e = y[..., 1]
    e *= x[4]
    n = y[None, :, 2]
    n /= 2.0 + x[0] ** 2
    return y


def _zero_d_view(x):
    y = x * 1.0
    z = y[2, ...]  # a 0-d view (an int index alone gives a copy)
    z *= x[3]
    s = y[4]  # a scalar: a copy, as in NumPy
    s += 100.0
    return y


def _reshape_view(x):
    y = x * 1.0
    m = y.reshape(2, 3)
    m[:, 0] = x[4:] * x[:2].sum()
    return y


def _ravel_view(x):
    y = (x * 1.0).reshape(3, 2)
    r = y.ravel()
    r **= 2.0
    return y


def _flatten_and_reshape_copies(x):
    y = (x * 1.0).reshape(2, 3)
    f = y.flatten()  # always a copy
    f *= 100.0
    c = y.T.reshape(-1)  # a copy: y.T is not contiguous
    c *= 1000.0
    return np.concatenate([y.ravel(), f, c])


def _transpose_views(x):
    y = (x * 1.0).reshape(2, 3)
    t = y.T
    t[0] *= x[5]
    p = np.transpose(y[None], (2, 0, 1))
    p[2] += x[0] * 3.0
    return y


def _swap_and_move(x):
    y = (x * 1.0).reshape(1, 2, 3)
    s = np.swapaxes(y, 1, 2)
    s[0, 0] = x[:2] ** 2
    m = np.moveaxis(y, 0, -1)
    m -= x.reshape(2, 3, 1) * 0.5
    mt = y.mT
    mt[0, 2, 1] = 7.0 * x[0]
    return y


def _squeeze_expand(x):
    y = (x * 1.0).reshape(2, 1, 3)
    s = np.squeeze(y, 1)
    s /= 2.0
    e = np.expand_dims(s, 0)
    e[0, 1, 0] = x[0] * x[1]
    q = y.squeeze()
    q[0, 2] = -x[5]
    return y


def _view_of_a_view(x):
    y = (x * 1.0).reshape(2, 3)
    a = y[:, 1:]
    b = a.T
    c = b[1]
    c **= 2.0
    return np.concatenate([y.ravel(), a.ravel()])


def _base_update_reaches_views(x):
    y = x * 1.0
    a = y[1:4]
    b = a[::2]
    y *= x[0]
    y[3] = x[4] * x[5]
    return np.concatenate([a, b])


def _matmul_in_place(x):
    y = (x * 1.0).reshape(3, 2)[:2]
    y @= np.array([[1.0, 2.0], [3.0, -1.0]])
    return y


def _out_into_views(x):
    y = x * 1.0
    v = y[1:4]
    np.multiply(v, x[:3], out=v)
    np.add(y[4:], x[4:] ** 2, out=y[4:])
    np.negative(y[:1], out=y[:1])
    return y


def _fancy_and_mask_copy(x):
    y = x * 1.0
    c = y[[0, 2, 2]]  # a copy: must not write through
    c *= 10.0
    m = y[np.array([True, False, True, False, True, False])]
    m += 1.0
    return np.concatenate([y, c, m])


def _flip_view(x):
    y = (x * 1.0).reshape(2, 3)
    f = np.flip(y, 1)
    f[0, 0] = x[1] * 5.0
    u = np.flipud(y)
    u[1] += x[3:]
    return y


def _aliases_scalars_and_positive(x):
    y = x * 1.0
    a = y  # the same array: sees the update
    a += x ** 2
    p = +y  # a copy
    p *= 3.0
    return np.concatenate([y, p])


def _flat_write(x):
    y = (x * 1.0).reshape(2, 3)
    y.T.flat[1] = x[0] * x[1]  # y.T is not contiguous: NumPy's flat writes into y
    y.flat[4:] = x[:2] * 2.0
    return y


def _sibling_views(x):
    y = x * 1.0
    a = y[:4]
    b = y[2:]
    a *= x[5]
    b[:2] += a[2:] + x[0]
    return np.concatenate([y, a, b])


def _strided_ravel_copies_reshape_views(x):
    y = x * 1.0
    c = y[::2]
    r = c.ravel()  # NumPy's ravel of a strided array: a copy
    r *= 10.0
    s = c.reshape(-1)  # a reshape of it: a view
    s += x[1::2] ** 2
    return np.concatenate([y, r])


def _layout_kept_after_write_back(x):
    y = x.reshape(2, 3) * 1.0  # owns its memory (not a view of a 1-d base)
    t = y.T
    np.add(x.reshape(3, 2), 1.0, out=t)  # a C-ordered result written back through y.T
    r = y.ravel()  # y keeps its memory (C order) in NumPy: a view still
    r *= x[0]
    return y


def _update_reads_an_overlapping_view(x):
    # NumPy reads the operands before writing (a temporary where they overlap the output):
    # the rules must read those values too, not the memory written since
    y = x * 1.0
    y *= y[::-1]
    y[1:] *= y[:-1]
    np.sin(y[::-1], out=y)
    y[:3] *= y[2:5]
    np.divide(y, y[::-1] + 3.0, out=y)  # (last: its rule reads its output)
    return y


def _update_reads_a_sibling_view_written_later(x):
    # the rule of y[:3] *= y[3:] reads y[3:] as it was then, not as written after
    y = x * 1.0
    y[:3] *= y[3:]
    y[3:] += 1.0
    np.multiply(y[::2], y[1::2], out=y[::2])
    np.tanh(y[1::2], out=y[1::2])
    return y


SCENARIOS = [
    _g, _f, _slice_step, _negative_step, _int_index_row, _ellipsis_and_none, _zero_d_view,
    _reshape_view, _ravel_view, _flatten_and_reshape_copies, _transpose_views, _swap_and_move,
    _squeeze_expand, _view_of_a_view, _base_update_reaches_views, _matmul_in_place,
    _out_into_views, _fancy_and_mask_copy, _flip_view, _aliases_scalars_and_positive,
    _flat_write, _sibling_views, _strided_ravel_copies_reshape_views,
    _layout_kept_after_write_back, _update_reads_an_overlapping_view,
    _update_reads_a_sibling_view_written_later,
]


@pytest.mark.parametrize("f", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_first_order_matches_numpy(f):
    check_first_order(f, X6)


@pytest.mark.parametrize("f", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_second_order_matches_finite_differences(f):
    check_second_order(f, X6)


@pytest.mark.parametrize("f", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_tensors_match_numpy(f):
    x = wg.tensor(X6, requires_grad=True)
    out = f(x)
    np.testing.assert_allclose(out.detach().numpy(), _numpy(f, X6), rtol=1e-12)
    w = np.linspace(-1.0, 1.0, out.size).reshape(out.shape)
    (out * w).sum().backward()
    _close(x.grad, np.tensordot(w, _fd_jacobian(f, X6), axes=out.ndim))


@pytest.mark.parametrize("op, update", [
    ("+=", lambda v, c: v.__iadd__(c)), ("-=", lambda v, c: v.__isub__(c)),
    ("*=", lambda v, c: v.__imul__(c)), ("/=", lambda v, c: v.__itruediv__(c)),
    ("**=", lambda v, c: v.__ipow__(c)), ("//=", lambda v, c: v.__ifloordiv__(c)),
    ("%=", lambda v, c: v.__imod__(c)),
])
def test_every_in_place_operator_writes_through(op, update):
    def f(x):
        y = x * 1.0
        v = y[1:5]
        assert update(v, 1.75) is v  # an array is updated in place, as in NumPy
        return y

    x = np.array([2.5, 3.25, 4.5, 5.0, 6.75, 8.0])
    want = _numpy(f, x)
    out, _ = wg.jvp(f, (x,), (np.ones(6),))
    np.testing.assert_array_equal(out, want)
    tensor_out = f(wg.tensor(x, requires_grad=True))
    np.testing.assert_array_equal(tensor_out.detach().numpy(), want)
    check_first_order(f, x)


def _reads_then_writes(x):
    y = x * 1.0
    y += y * 0.5  # multiply saved y; += then writes it
    v = y[1:]
    v -= v * x[0]
    return y


def test_a_saved_value_written_later_is_refused_at_first_order_only():
    with pytest.raises(RuntimeError, match=REFUSED):
        wg.jacrev(_reads_then_writes)(X6)
    check_first_order(_reads_then_writes, X6, refusal_ok=True)
    check_second_order(_reads_then_writes, X6, refusal_ok=True)


# -- NumPy's semantics of names, scalars and dtypes -----------------------------------------
def test_a_dual_array_is_updated_in_place_and_a_scalar_is_rebound():
    d = wg.Dual(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    alias = d
    d += 1.0
    assert d is alias and d.primal.tolist() == [2.0, 3.0]
    s = wg.Dual(2.0, 1.0)
    s0 = s
    s *= 3.0  # Python and NumPy scalars are immutable: the name is rebound
    assert (s.primal, s.tangent) == (6.0, 3.0) and (s0.primal, s0.tangent) == (2.0, 1.0)
    row = d[0]  # a scalar read: a copy
    row += 10.0
    np.testing.assert_array_equal(d.primal, [2.0, 3.0])


def test_float32_stays_float32_as_in_numpy():
    def f(x):
        y = x * np.float32(1.0)
        v = y[1:]
        v += np.arange(2.0)  # float64 operand: NumPy keeps y float32
        return y

    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    out, tangent = wg.jvp(f, (x,), (np.ones(3, dtype=np.float32),))
    assert out.dtype == f(x.copy()).dtype == np.float32 and tangent.dtype == np.float32
    np.testing.assert_array_equal(out, f(x.copy()))


def test_the_callers_arrays_are_never_written():
    def f(x):
        x[0] = 5.0  # the function writes into its argument
        v = x[1:]
        v *= 2.0
        return x * 1.0

    x = np.array([1.0, 2.0, 3.0])
    t = np.array([1.0, 1.0, 1.0])
    out, tangent = wg.jvp(f, (x,), (t,))
    np.testing.assert_array_equal(out, [5.0, 4.0, 6.0])
    np.testing.assert_array_equal(tangent, [0.0, 2.0, 2.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(t, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(wg.jacfwd(f)(x), np.diag([0.0, 2.0, 2.0]))
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def test_nested_forward_modes_write_through_outer_views():
    # An inner derivative writes into a view of a value of the outer one.
    def outer(s):
        y = np.array([1.0, 2.0, 3.0]) * s

        def inner(u):
            v = y[1:]
            v *= u  # y = [s, 2 s u, 3 s u]
            return np.sum(y)

        return wg.derivative(inner)(2.0)  # 5 s

    assert wg.derivative(outer)(1.0) == 5.0

    def g(s):
        def inner(u):
            y = np.array([1.0, 2.0, 3.0]) * (s * u)
            v = y[1:]
            v *= u  # y = [s u, 2 s u², 3 s u²]: d/du = 11 s at u = 1
            return np.sum(y)

        return wg.derivative(inner)(1.0)

    assert wg.derivative(g)(3.0) == 11.0


def test_batched_tangents_follow_views():
    # jacfwd pushes the whole basis at once (a batch axis on each tangent).
    def f(x):
        y = np.outer(x, x)
        d = y[:, ::2]
        d *= x[:, None]
        y.T[0] = np.sin(x)
        return y

    x = np.array([0.3, -0.8, 1.1])
    _close(wg.jacfwd(f)(x), _fd_jacobian(f, x))
    _close(wg.jacrev(f)(x), _fd_jacobian(f, x))


def test_views_a_base_forgot_are_pruned():
    d = wg.Dual(np.ones(10), np.ones(10))
    for i in range(2000):
        d[i % 5:]  # each view dies at once
    assert len(d._views) < 40
    t = wg.tensor(np.ones(10), requires_grad=True) * 1.0
    for i in range(2000):
        t[i % 5:]
    assert len(t._extra["views"]) < 40


# -- what NumPy refuses, and what wengert cannot write back ----------------------------------
def _diagonal_update(x):
    y = (x * 1.0).reshape(2, 3)
    d = np.diagonal(y)
    d += 1.0
    return y


def _broadcast_update(x):
    y = x * 1.0
    b = np.broadcast_to(y, (2, 6))
    b *= 2.0
    return y


def _shape_mismatch(x):
    y = x * 1.0
    v = y[:1]
    v += x
    return y


@pytest.mark.parametrize("f, match", [
    (_diagonal_update, r"diagonal returned: NumPy makes that view read-only.*\.copy\(\)"),
    (_broadcast_update, r"broadcast_to returned: NumPy makes that view read-only.*\.copy\(\)"),
    (_shape_mismatch, r"has shape \(6,\) but .* has shape \(1,\); NumPy does not broadcast"),
])
def test_what_numpy_refuses_raises_valueerror_in_every_mode(f, match):
    with pytest.raises(ValueError):
        f(X6.copy())
    for run in (lambda: wg.jvp(f, (X6,), (X6,)), lambda: wg.jacfwd(f)(X6),
                lambda: wg.jacrev(f)(X6), lambda: wg.hessian(_sum_squares(f))(X6),
                lambda: wg.jacrev(wg.grad(_sum_squares(f)))(X6),
                lambda: f(wg.tensor(X6, requires_grad=True))):
        with pytest.raises(ValueError, match=match):
            run()


def test_a_view_op_without_a_write_back_raises_typeerror_naming_it():
    with pytest.raises(TypeError, match=r"view made by 'roll'.*out of place"):
        write_back(REGISTRY["roll"], {"shift": 1}, np.zeros(3), np.ones(3), "+=")


def test_write_back_inverts_each_view_op():
    base = np.arange(24.0).reshape(2, 3, 4)
    cases = [
        ("getitem", {"index": (1, slice(None), slice(1, 3))}),
        ("reshape", {"shape": (6, 4)}),
        ("transpose", {"axes": (2, 0, 1)}),
        ("transpose", {}),
        ("swapaxes", {"axis1": 0, "axis2": 2}),
        ("moveaxis", {"source": 0, "destination": -1}),
        ("expand_dims", {"axis": 1}),
        ("flip", {"axis": (0, 2)}),
    ]
    for name, params in cases:
        view_op = REGISTRY[name]
        expected = base.copy()
        view = view_op.impl(expected, **params)
        assert np.shares_memory(view, expected)
        new = -view_op.impl(base, **params) * 10.0
        view[...] = new  # NumPy writes through its view
        np.testing.assert_array_equal(write_back(view_op, params, base, new, "="), expected)
    squeezed = np.arange(3.0).reshape(3, 1)
    np.testing.assert_array_equal(
        write_back(REGISTRY["squeeze"], {"axis": None}, squeezed, np.ones(3), "="),
        np.ones((3, 1)))


def test_updates_that_change_the_kind_of_a_dual_raise_typeerror():
    def f(z):
        def g(w):
            y = z * 1.0
            y += w  # w: a tensor of an inner reverse transform
            return np.sum(y)

        return wg.grad(g)(np.ones(3))

    with pytest.raises(TypeError, match="would turn it into a Tensor.*out of place"):
        wg.jvp(f, (np.ones(3),), (np.ones(3),))
    with pytest.raises(TypeError, match="out= must be an array"):
        np.add(wg.Dual(1.0, 1.0), 1.0, out=wg.Dual(2.0, 0.0))


def test_out_into_a_dual_from_plain_inputs_gives_a_zero_tangent():
    d = wg.Dual(np.ones(3), np.ones(3))
    v = d[1:]
    np.add(np.ones(2), 2.0, out=v)
    np.testing.assert_array_equal(d.primal, [1.0, 3.0, 3.0])
    np.testing.assert_array_equal(d.tangent, [1.0, 0.0, 0.0])


def test_no_grad_update_of_a_view_reaches_the_base_under_a_transform():
    # Under wg.hessian the tensors hold dual numbers: an unrecorded in-place update of a
    # view must still reach the base's value (and its other views).
    def s(x):
        y = x * 1.0
        a = y[:2]
        b = y[1:]
        with wg.no_grad():
            a += 1.0
        return np.sum(b * b) + np.sum(y)

    x = np.array([0.5, 1.5, -2.0])
    numpy_value = s(x.copy())
    value, grad = wg.value_and_grad(s)(x)
    assert value == numpy_value
    out, _ = wg.jvp(wg.grad(s), (x,), (np.ones(3),))
    np.testing.assert_array_equal(out, grad)
    np.testing.assert_array_equal(grad, [1.0, 2 * (x[1] + 1.0) + 1.0, 2 * x[2] + 1.0])


# -- random programs of views and in-place updates, against NumPy and every mode -------------
_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}
_M2 = np.array([[0.5, -1.0], [1.5, 0.25]])
_M3 = np.array([[0.5, -1.0, 0.0], [1.5, 0.25, 1.0], [-0.5, 0.0, 1.0]])


def _make_view(a, spec):
    kind = spec[0]
    if kind == "slice":
        _, axis, start, stop, step = spec
        return a[(slice(None),) * axis + (slice(start, stop, step),)]
    if kind == "int":
        return a[(slice(None),) * spec[1] + (spec[2],)]
    if kind == "ellipsis":
        return a[..., spec[1]]
    if kind == "newaxis":
        return a[None]
    if kind == "T":
        return a.T
    if kind == "transpose":
        return np.transpose(a, spec[1])
    if kind == "swapaxes":
        return np.swapaxes(a, spec[1], spec[2])
    if kind == "moveaxis":
        return np.moveaxis(a, spec[1], spec[2])
    if kind == "reshape":
        return a.reshape(spec[1])
    if kind == "ravel":
        return a.ravel()
    if kind == "flatten":
        return a.flatten()
    if kind == "expand_dims":
        return np.expand_dims(a, spec[1])
    if kind == "squeeze":
        return np.squeeze(a)
    if kind == "flip":
        return np.flip(a, spec[1])
    if kind == "fancy":
        return a[np.array(spec[1])]
    raise AssertionError(kind)


def _operand(env, x, spec):
    kind = spec[0]
    if kind == "const":
        return spec[1]
    if kind == "x":
        return x[spec[1]]
    return env[spec[1]] * spec[2]  # ("env", index, coefficient)


_IN_PLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
             "/=": operator.itruediv, "**=": operator.ipow, "@=": operator.imatmul}


#: The 3×4 array a program starts from: a view of a 1-d array, an array in C order, one in
#: Fortran order (NumPy decides by the layout whether a reshape or ravel is a view).
_BASES = {
    "view": lambda x: (x * 1.0).reshape(3, 4),
    "C": lambda x: x.reshape(3, 4) * 1.0,
    "F": lambda x: x.reshape(4, 3).T * 1.0,
}


def _environment(program, x):
    """Run ``program`` (``("base", kind)`` then a list of steps) on ``x`` (a NumPy array,
    dual number or tensor): every array it made (the base, views, copies), in order."""
    env = [_BASES[program[0][1]](x)]
    for step in program[1:]:
        kind = step[0]
        if kind == "view":
            env.append(_make_view(env[step[1]], step[2]))
        elif kind == "iop":
            _, i, op, operand = step
            # (as the statement ``a += v``: an array is the object it was, now updated)
            assert _IN_PLACE[op](env[i], _operand(env, x, operand)) is env[i]
        elif kind == "setitem":
            _, i, index, operand = step
            env[i][index] = _operand(env, x, operand)
        else:  # ("out", target, ufunc, operand)
            _, i, name, operand = step
            _UFUNCS[name](env[i], _operand(env, x, operand), out=env[i])
    return env


def run_program(program, x):
    """Every array ``program`` made from ``x``, flattened and joined."""
    return np.concatenate([np.ravel(a) for a in _environment(program, x)])


@st.composite
def _view_spec(draw, shape):
    nd = len(shape)
    kinds = ["slice", "T", "reshape", "ravel", "flatten", "flip", "fancy", "expand_dims"]
    if nd >= 2:
        kinds += ["int", "ellipsis", "transpose", "swapaxes", "moveaxis"]
    if nd <= 2:
        kinds.append("newaxis")
    if 1 in shape and any(n != 1 for n in shape):
        kinds.append("squeeze")
    kind = draw(st.sampled_from(kinds))
    if kind == "slice":
        axis = draw(st.integers(0, nd - 1))
        n = shape[axis]
        step = draw(st.sampled_from([1, 1, 2, -1, -2]))
        start = draw(st.integers(0, n - 1))
        stop = draw(st.one_of(st.none(), st.integers(-n, n)))
        return ("slice", axis, start, stop, step)
    if kind == "int":
        axis = draw(st.integers(0, nd - 1))
        return ("int", axis, draw(st.integers(-shape[axis], shape[axis] - 1)))
    if kind == "ellipsis":
        return ("ellipsis", draw(st.integers(-shape[-1], shape[-1] - 1)))
    if kind == "transpose":
        return ("transpose", tuple(draw(st.permutations(range(nd)))))
    if kind in ("swapaxes", "moveaxis"):
        return (kind, draw(st.integers(0, nd - 1)), draw(st.integers(-nd, nd - 1)))
    if kind == "reshape":
        size = int(np.prod(shape))
        first = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
        return ("reshape", (first, -1))
    if kind == "expand_dims":
        return ("expand_dims", draw(st.integers(0, nd)))
    if kind == "flip":
        return ("flip", draw(st.integers(0, nd - 1)))
    if kind == "fancy":
        return ("fancy", draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=4)))
    return (kind,)


@st.composite
def _operand_spec(draw, env_shapes, target_shape):
    choices = [("const", draw(st.sampled_from([0.5, -1.5, 2.0])))]
    choices.append(("x", draw(st.integers(0, 11))))
    fits = [j for j, s in enumerate(env_shapes)
            if len(s) <= len(target_shape) and _broadcasts(s, target_shape)]
    if fits:
        choices.append(("env", draw(st.sampled_from(fits)), draw(st.sampled_from([0.5, -0.25]))))
        choices.append(choices[-1])
    return draw(st.sampled_from(choices))


def _broadcasts(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


@st.composite
def programs(draw):
    """A random list of view-making and in-place steps, valid on NumPy arrays."""
    program = [("base", draw(st.sampled_from(sorted(_BASES))))]
    dummy = _environment(program, np.linspace(0.1, 1.2, 12))
    for _ in range(draw(st.integers(1, 7))):
        i = draw(st.integers(0, len(dummy) - 1))
        shape = dummy[i].shape
        kind = draw(st.sampled_from(["view", "view", "view", "iop", "iop", "setitem", "out"]))
        shapes = [a.shape for a in dummy]
        if kind == "view":
            step = ("view", i, draw(_view_spec(shape)))
        elif kind == "iop":
            op = draw(st.sampled_from(["+=", "-=", "*=", "/=", "**=", "@="]))
            if op == "/=":
                operand = ("const", draw(st.sampled_from([2.0, -4.0])))
            elif op == "**=":
                operand = ("const", 2.0)
            elif op == "@=":
                assume(len(shape) == 2 and shape[0] == shape[1] and shape[0] in (2, 3))
                operand = ("const", _M2 if shape[0] == 2 else _M3)
            else:
                operand = draw(_operand_spec(shapes, shape))
            step = ("iop", i, op, operand)
        elif kind == "setitem":
            n = shape[0]
            index = draw(st.one_of(st.integers(-n, n - 1),
                                   st.builds(slice, st.integers(0, n - 1), st.integers(1, n))))
            assume(dummy[i][index].size > 0)
            operand = draw(_operand_spec(shapes, dummy[i][index].shape))
            step = ("setitem", i, index, operand)
        else:
            step = ("out", i, draw(st.sampled_from(sorted(_UFUNCS))),
                    draw(_operand_spec(shapes, shape)))
        try:
            new_dummy = _environment(program + [step], np.linspace(0.1, 1.2, 12))
        except (ValueError, IndexError):
            continue  # NumPy refuses it (a shape that does not broadcast): draw another
        program.append(step)
        dummy = new_dummy
        assume(all(a.size > 0 and a.ndim > 0 for a in dummy))
    return program


X12 = np.linspace(-0.9, 1.0, 12) + 0.05 * np.sin(np.arange(12.0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(programs())
def test_random_programs_first_order(program):
    def f(x):
        return run_program(program, x)

    check_first_order(f, X12, refusal_ok=True)
    x = wg.tensor(X12, requires_grad=True)
    out = f(x)
    np.testing.assert_allclose(out.detach().numpy(), _numpy(f, X12), rtol=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(programs())
def test_random_programs_second_order(program):
    def f(x):
        return run_program(program, x) * 0.5

    check_second_order(f, X12, fd=False, refusal_ok=True)


def test_broadcast_to_the_same_shape_is_a_read_only_view_as_in_numpy():
    for value in (wg.Dual(np.ones(3), np.ones(3)), wg.tensor(np.ones(3), requires_grad=True) * 1.0):
        view = np.broadcast_to(value, (3,))
        with pytest.raises(ValueError):
            view *= 2.0


def test_ravel_of_a_strided_array_is_a_copy_as_in_numpy():
    x = np.arange(6.0).reshape(2, 3)

    def f(x):
        y = x * 1.0
        r = np.ravel(y.T)  # strided: a copy, which no update writes through
        r *= 10.0
        return y
    np.testing.assert_array_equal(wg.jvp(f, (x,), (np.ones_like(x),))[0], x)
    np.testing.assert_array_equal(wg.jacrev(f)(x), wg.jacfwd(f)(x))


def test_gradient_tape_ignores_in_place_change_of_a_value_only_a_constant_rule_reads():
    # y * c with c a constant: only c's rule reads y, and c gets no gradient, so y's later
    # change must not be refused (as PyTorch and the fast path of x * y do)
    x = wg.Variable(np.array([1.0, 2.0]))
    c = wg.tensor(np.array([3.0, 4.0]))
    with wg.GradientTape() as tape:
        y = x * 1.0
        z = (y * c).sum()
        y += 1.0
    np.testing.assert_array_equal(tape.gradient(z, x), [3.0, 4.0])


def test_writes_into_real_and_imag_of_a_complex_tensor_reach_it_as_numpy_views_do():
    """``z.real[i] = v``, ``z.imag += v`` and ``z.imag = v`` write into ``z`` (they went into
    a copy: ``z`` silently kept its value, and a function built that way had a wrong value
    and gradient); the parts follow ``z`` when it changes, as NumPy's views do."""
    z0 = np.array([1 + 1j, 2 - 1j])
    z, ref = wg.tensor(z0.copy()), z0.copy()
    for step in (lambda a: a.real.__setitem__(0, 5.0), lambda a: a.imag.__iadd__(1.0),
                 lambda a: setattr(a, "imag", np.array([3.0, 4.0])),
                 lambda a: a.real[1:].__setitem__(0, 9.0),  # (a view of a part)
                 lambda a: a.__imul__(2.0)):
        part, ref_part = z.imag, ref.imag
        step(z)
        step(ref)
        np.testing.assert_array_equal(z.numpy(), ref)
        np.testing.assert_array_equal(part.numpy(), ref_part)  # the live part follows
    with wg.no_grad():
        leaf = wg.tensor(z0.copy(), requires_grad=True)
        leaf.real[1] = 7.0
    np.testing.assert_array_equal(leaf.numpy(), [1 + 1j, 7 - 1j])

    def f(x):
        c = x.astype(complex)
        c.imag[:] = x * 2.0  # |x + 2ix| = √5 |x|
        return wnp.sum(np.abs(c))

    x0 = np.array([1.0, 2.0])
    x = wg.tensor(x0, requires_grad=True)
    y = f(x)
    y.backward()
    np.testing.assert_allclose(y.item(), np.sqrt(5.0) * 3.0)
    np.testing.assert_allclose(x.grad, np.sqrt(5.0) * np.ones(2))
    for d in (wg.grad(f)(x0), wg.jacrev(f)(x0), wg.jacfwd(f)(x0)):
        np.testing.assert_allclose(d, np.sqrt(5.0) * np.ones(2))


def test_setting_parts_of_a_scalar_or_imag_of_a_real_tensor_is_refused():
    with pytest.raises(AttributeError, match="scalar"):
        wg.tensor(1.0 + 1j).real = 3.0
    with pytest.raises(TypeError, match="imaginary part"):
        wg.tensor(np.array([1.0])).imag = 3.0


WRITES_INTO_A_PART = {
    "x.imag[0] = 1": lambda p: p.__setitem__(0, 1.0),
    "x.imag += 1": lambda p: p.__iadd__(1.0),
    "x.imag[1:] = 1": lambda p: p[1:].__setitem__(Ellipsis, 1.0),
    "np.add(x.imag, 1, out=x.imag)": lambda p: np.add(p, 1.0, out=p),
}


@pytest.mark.parametrize("name", list(WRITES_INTO_A_PART))
def test_a_write_into_the_imaginary_part_of_a_real_array_is_refused_as_numpy_refuses_it(name):
    """NumPy's ``x.imag`` of a real array is a new read-only array of zeros, and a write
    into it raises ValueError; a tensor, dual number or traced value took the write into
    a writable copy, silently lost (``x`` has no imaginary part to hold it)."""
    write = WRITES_INTO_A_PART[name]
    x0 = np.array([1.0, -2.0, 3.0])
    with pytest.raises(ValueError, match="read-only"):
        write(x0.copy().imag)
    for x in (wg.tensor(x0.copy()), wg.tensor(x0.copy(), requires_grad=True) * 1.0,
              wg.Dual(x0.copy(), np.ones(3))):
        for part in (x.imag, np.imag(x), wnp.imag(x)):
            with pytest.raises(ValueError, match="assignment destination is read-only"):
                write(part)
            value = part.numpy() if isinstance(part, wg.Tensor) else part.primal
            np.testing.assert_array_equal(value, np.zeros(3))

    def f(v):
        write(v.imag)
        return v

    with pytest.raises(ValueError, match="assignment destination is read-only"):
        wg.compile(f)(x0)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        wg.trace(f, x0)



@pytest.mark.parametrize("name, write", [
    ("np.copyto", lambda p: np.copyto(p, 1.0)), ("np.put", lambda p: np.put(p, [0], [1.0])),
])
def test_numpy_functions_writing_into_the_imaginary_part_of_a_real_array_are_refused(name, write):
    # np.copyto into a constant tensor's part wrote into its own array, silently lost
    with pytest.raises(ValueError, match="read-only"):
        write(np.ones(3).imag)
    for x in (wg.tensor(np.ones(3)), wg.Dual(np.ones(3), np.ones(3))):
        part = x.imag
        with pytest.raises(ValueError, match="read-only"):
            write(part)
        x += 1.0  # (the part made again from the new x: still read-only)
        with pytest.raises(ValueError, match="read-only"):
            write(part)
        value = part.numpy() if isinstance(part, wg.Tensor) else part.primal
        np.testing.assert_array_equal(value, np.zeros(3))


def test_the_imaginary_part_of_a_real_tensor_is_numpys_zeros():
    # x.imag was x * 0.0: NaN at an infinite entry, -0.0 at a negative one
    x0 = np.array([-1.0, np.inf, -np.inf, np.nan, 2.0], np.float32)
    want = x0.imag
    for got in (wg.tensor(x0).imag.numpy(),
                wg.tensor(x0, requires_grad=True).imag.detach().numpy(),
                wg.Dual(x0, np.ones(5, np.float32)).imag.primal,
                wg.compile(lambda v: v.imag)(x0)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert not np.signbit(got).any()
    # its derivative is zero; a later in-place change of x does not make it stale
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    w = wg.tensor([3.0, 4.0], requires_grad=True)
    y = x * 1.0
    z = (y.imag * w + y).sum()
    y += 1.0
    z.backward()
    np.testing.assert_array_equal(w.grad, [0.0, 0.0])
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])


@pytest.mark.parametrize("name, write", [
    ("np.copyto(z.imag)", lambda z: np.copyto(z.imag, 5.0)),
    ("np.put(z.real)", lambda z: np.put(z.real, [0], [9.0])),
    ("np.copyto(z.real[1:])", lambda z: np.copyto(z.real[1:], 7.0)),
])
def test_numpy_functions_writing_into_a_part_of_a_complex_tensor_reach_it(name, write):
    # they wrote into the array wengert holds for the part: z silently kept its value
    z0 = np.array([1 + 1j, 2 - 2j])
    want = z0.copy()
    write(want)
    for make in (lambda: wg.tensor(z0.copy()),
                 lambda: wg.tensor(z0.copy(), requires_grad=True) * 1.0):
        z = make()
        write(z)
        np.testing.assert_array_equal(z.detach().numpy(), want)
    with wg.no_grad():
        leaf = wg.tensor(z0.copy(), requires_grad=True)
        write(leaf)
    np.testing.assert_array_equal(leaf.detach().numpy(), want)
    assert leaf.requires_grad and leaf.is_leaf
