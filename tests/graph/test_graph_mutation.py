"""In-place updates inside traced and compiled functions behave as NumPy's.

``y += v`` and ``y[i] = v`` on a traced value become equations; names bound to the
same value, its views and its base all see the update (as with NumPy's shared
memory); an update of an argument of the traced function is refused with a clear
error, since a compiled function cannot write into its caller's arrays.
"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.errors import LostDerivativeError
from wengert.graph.mutation import TraceMutationError

X = np.arange(6.0)


def set_one(x):
    y = x * 1.0
    y[0] = 5.0
    return y * 2.0


def through_a_slice(x):
    y = x * 1.0
    v = y[1:3]
    v += 100.0
    return y


def alias_sees_it(x):
    y = x * 1.0
    z = y
    y += 1.0
    return z


def through_a_transpose(x):
    y = (x * 1.0).reshape(2, 3)
    t = y.T
    t[0] = -1.0
    return y


def view_follows_its_base(x):
    y = x * 1.0
    v = y[::2]
    y[:] = 7.0
    return v * x[::2]


def fill_a_zeros_like(x):
    y = np.zeros_like(x)
    for i in range(3):
        y[i] = x[i] ** 2
    return y


def through_a_ravel(x):
    y = (x * 1.0).reshape(2, 3)
    r = y.ravel()
    r[0] = 99.0
    return y * x.reshape(2, 3)


def traced_mask(x):
    y = x * 1.0
    y[y > 2.0] = 0.0
    return y


def traced_scalar_index(x):
    y = x * 1.0
    y[np.argmax(x)] = 0.0
    return y


def every_operator(x):
    # (the rules of ** and / read their outputs, which a later update would overwrite)
    y = x * 1.0 + 1.0
    y -= 0.5
    y *= x
    y //= 0.25
    y += x
    y %= 7.0
    z = y.copy()
    z **= 2
    y /= 2.0
    return y + z


def int_setitem_truncates(x):
    y = x.astype(np.int64)
    y[0] = 2.7
    return y


def chain_of_views(x):
    y = (x * 1.0).reshape(2, 3)
    row = y[1]
    part = row[1:]
    part *= 10.0
    return y


def scalar_rebinds(x):
    s = np.sum(x) * 1.0
    t = s
    s += 1.0
    return s, t


FUNCTIONS = [set_one, through_a_slice, alias_sees_it, through_a_transpose,
             view_follows_its_base, fill_a_zeros_like, through_a_ravel, traced_mask,
             traced_scalar_index, every_operator, int_setitem_truncates, chain_of_views,
             scalar_rebinds]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_and_traced_values_equal_eager(f):
    want = f(X.copy())
    got = wg.compile(f)(X.copy())
    traced = wg.trace(f, X.copy())(X.copy())
    for w, g, t in zip(np.atleast_1d(want) if not isinstance(want, tuple) else want,
                       np.atleast_1d(got) if not isinstance(got, tuple) else got,
                       np.atleast_1d(traced) if not isinstance(traced, tuple) else traced):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(t, w)
    # other inputs: the graph holds beyond the example it was traced with
    other = np.array([3.0, -1.0, 0.5, 4.0, 2.5, -2.0])
    if f is not traced_scalar_index:  # (argmax moves: a guard retraces)
        np.testing.assert_array_equal(np.asarray(wg.compile(f)(other.copy()), dtype=float)
                                      if not isinstance(want, tuple) else
                                      wg.compile(f)(other.copy())[0],
                                      np.asarray(f(other.copy()), dtype=float)
                                      if not isinstance(want, tuple) else f(other.copy())[0])


DIFFERENTIABLE = [set_one, through_a_slice, alias_sees_it, through_a_transpose,
                  view_follows_its_base, fill_a_zeros_like, through_a_ravel, traced_mask,
                  every_operator, chain_of_views]


@pytest.mark.parametrize("f", DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_gradients_through_in_place_updates_equal_eager(f):
    def loss(x):
        return np.sum(np.sin(f(x) * 0.7) ** 2)

    x = np.array([0.3, 1.7, -0.4, 2.2, 0.9, -1.3])
    want = wg.grad(loss)(x)
    np.testing.assert_allclose(wg.grad(wg.compile(loss))(x), want, rtol=1e-12)
    np.testing.assert_allclose(wg.compile(wg.grad(loss))(x), want, rtol=1e-12)
    np.testing.assert_allclose(wg.grad_graph(wg.trace(loss, x))(x)[1], want, rtol=1e-12)


def overwrite_what_a_rule_reads(x):
    y = np.exp(x)  # exp's rule reads its output, sin's its input
    z = np.sin(y)
    y[0] = 5.0
    return np.sum(y * x) + np.sum(z)


def test_a_graph_differentiates_through_an_overwritten_saved_value_that_eager_refuses():
    """A graph keeps every value (an update is a new equation), so the rules read the
    values from before the write and the derivative is the function's; eagerly the
    tape saw the array change and refuses (as PyTorch does), never a wrong number."""
    x = np.array([1.0, 2.0, 3.0])
    e = np.exp(x)
    want = np.where(np.arange(3) == 0, 5.0, e + x * e) + np.cos(e) * e
    with pytest.raises(wg.errors.InplaceModifiedError, match="modified by an inplace operation"):
        wg.grad(overwrite_what_a_rule_reads)(x)
    for got in (wg.grad(wg.compile(overwrite_what_a_rule_reads))(x),
                wg.compile(wg.grad(overwrite_what_a_rule_reads))(x),
                wg.grad_graph(wg.trace(overwrite_what_a_rule_reads, x))(x)[1]):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    wg.testing.check_grads(wg.compile(overwrite_what_a_rule_reads), (x,), modes=("rev",),
                           order=1)


def test_eager_zeros_like_then_setitem_keeps_the_gradient():
    """Found while testing the above: eagerly, ``np.zeros_like(x)`` of a tensor inside
    ``wg.grad`` was a constant of the outermost level, and ``y[i] = x[i] ** 2`` into it
    gave a silently zero gradient."""
    np.testing.assert_allclose(wg.grad(lambda x: np.sum(fill_a_zeros_like(x) ** 2))(X),
                               [0.0, 4.0, 32.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(
        wg.hessian(lambda x: np.sum(fill_a_zeros_like(x) ** 2))(X)[2], [0, 0, 48.0, 0, 0, 0])


def test_updating_an_argument_in_place_is_refused_with_the_fix():
    def g(x):
        x += 1.0
        return x * 2.0

    x = np.arange(3.0)
    with pytest.raises(TraceMutationError, match=r"changes its argument x in place \(\+=\)"):
        wg.compile(g)(x)
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])
    with pytest.raises(TraceMutationError, match="x = x.copy\\(\\) first"):
        wg.trace(g, x)


def test_updating_a_view_of_an_argument_is_refused():
    def g(x):
        head = x[:2]
        head[0] = 0.0
        return x

    with pytest.raises(TraceMutationError, match="through its view"):
        wg.compile(g)(np.arange(3.0))


def test_a_copy_of_an_argument_may_be_updated():
    def g(x):
        x = x.copy()
        x[0] = -1.0
        x += 1.0
        return x

    x = np.arange(3.0)
    np.testing.assert_array_equal(wg.compile(g)(x), [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])


def test_a_placeholder_cannot_be_updated_in_place():
    with wg.graph.define():
        p = wg.placeholder((3,), name="p")
        with pytest.raises(TraceMutationError, match="placeholder p"):
            p += 1.0


def test_same_kind_casting_is_refused_as_numpy_does():
    def g(x):
        y = x.astype(np.int64)
        y += 1.5
        return y

    with pytest.raises(TypeError):
        g(X.copy())
    with pytest.raises(TypeError, match="same_kind"):
        wg.compile(g)(X.copy())


def test_shape_change_in_place_is_refused():
    def g(x):
        y = x * 1.0
        y += np.ones((2, 6))
        return y

    with pytest.raises(ValueError):
        g(X.copy())
    with pytest.raises(ValueError, match="does not broadcast"):
        wg.compile(g)(X.copy())


def test_a_mask_assignment_of_many_values_says_what_to_write():
    def g(x):
        y = x * 1.0
        y[y > 2.0] = np.array([1.0, 2.0, 3.0])
        return y

    with pytest.raises(TypeError, match="np.where"):
        wg.compile(g)(X.copy())


def test_read_only_views_are_refused_as_numpy_refuses_them():
    def g(x):
        y = (x * 1.0).reshape(2, 3)
        d = np.diagonal(y)
        d += 1.0
        return y

    with pytest.raises(ValueError):
        g(X.copy())
    with pytest.raises(ValueError, match="read-only"):
        wg.compile(g)(X.copy())


def test_to_source_shows_the_updates_as_setitem_steps():
    source = wg.trace(set_one, X).to_source()
    assert "op.setitem(" in source


# -- views NumPy returns as the input itself ----------------------------------------------


def test_a_squeeze_with_nothing_to_squeeze_is_the_same_array_eagerly_and_compiled():
    """``np.squeeze`` returns its input itself when no axis has length 1; an update
    through it reaches the original, eagerly and compiled (a tensor sharing the array
    without knowing would make the gradient silently wrong: [100, 4, 6])."""
    def f(x):
        y = x * 1.0
        s = y.squeeze()
        s[0] = 99.0
        return y

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(wg.compile(f)(x), f(x.copy()))

    def loss(x):
        return np.sum(f(x) * x)

    want = np.array([99.0, 4.0, 6.0])
    np.testing.assert_allclose(wg.grad(loss)(x), want)
    np.testing.assert_allclose(wg.grad(wg.compile(loss))(x), want)
    np.testing.assert_allclose(wg.compile(wg.grad(loss))(x), want)


def test_astype_without_a_copy_is_the_value_itself_as_in_numpy():
    def f(x):
        y = x * 1.0
        s = y.astype(np.float64, copy=False)
        s[0] = 99.0
        return y

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(x.copy()), [99.0, 2.0, 3.0])
    np.testing.assert_array_equal(wg.compile(f)(x), [99.0, 2.0, 3.0])
    np.testing.assert_allclose(wg.grad(lambda x: np.sum(f(x) * x))(x), [99.0, 4.0, 6.0])


def test_an_update_inside_no_grad_runs_and_refuses_differentiation():
    """Eagerly the array keeps its history with the new data (as PyTorch); a graph step
    cannot say that, so the compiled function computes the value and refuses a gradient
    instead of giving a wrong one."""
    def f(x):
        y = x * 1.0
        with wg.no_grad():
            y += x
        return np.sum(y * x)

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(wg.compile(f)(x), f(x))
    np.testing.assert_allclose(wg.compile(wg.grad(f))(x), wg.grad(f)(x))
    with pytest.raises(TypeError, match="inside wg.no_grad"):
        wg.grad(wg.compile(f))(x)
    with pytest.raises(TypeError, match="inside wg.no_grad"):
        wg.grad_graph(wg.trace(f, x))


def test_an_update_of_a_numpy_scalar_result_rebinds_the_name_everywhere():
    """``s = np.dot(x, x); t = s; s *= 2``: NumPy's ``s`` is an immutable ``np.float64``,
    so ``t`` keeps 14. Eager tensors wrote in place (28, gradient 4x), so the two compile
    orders disagreed. A leaf tensor (a scalar parameter) is still updated in place."""
    def f(x):
        s = np.dot(x, x)
        t = s
        s *= 2.0
        return t + 0.0

    x = np.array([1.0, 2.0, 3.0])
    assert f(x) == 14.0
    assert wg.compile(f)(x) == 14.0
    for how in (wg.value_and_grad(f), wg.value_and_grad(wg.compile(f))):
        value, grad = how(x)
        assert value == 14.0
        np.testing.assert_allclose(grad, 2.0 * x)
    np.testing.assert_allclose(wg.compile(wg.grad(f))(x), 2.0 * x)
    w = wg.tensor(3.0, requires_grad=True)
    same = w
    with wg.no_grad():
        w -= 0.5
    assert same is w and float(same) == 2.5


def test_view_method_shares_the_data():
    def f(x):
        y = x * 1.0
        v = y.view()
        v[0] = 5.0
        return np.sum(y * x)

    x = np.array([1.0, 2.0, 3.0])
    assert wg.compile(f)(x) == f(x) == 18.0
    for grad in (wg.grad(f), wg.grad(wg.compile(f)), wg.compile(wg.grad(f))):
        np.testing.assert_allclose(grad(x), [5.0, 4.0, 6.0])
    with pytest.raises(TypeError, match="astype"):
        wg.compile(lambda x: x.view(np.int64))(x)


def test_a_nested_compiled_function_returning_its_argument_does_not_alias():
    """Called directly, a compiled function returns a copy of an argument it returns; a
    nested call (run op by op inside the outer trace) must too."""
    ident = wg.compile(lambda y: y)

    def alias(x):
        y = x * 1.0
        z = ident(y)
        z[0] = 100.0
        return y

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(alias(x.copy()), x)
    np.testing.assert_array_equal(wg.compile(alias)(x), x)


def test_in_place_writes_to_the_outputs_of_a_decomposition_trace_as_eagerly():
    a = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])

    def f(a):
        w, v = np.linalg.eigh(a)
        w += 1.0  # (the eigenvalues' rule does not read them: eagerly allowed)
        v = v * w
        v[0] = 0.0
        return np.sum(v ** 2) + np.sum(w ** 3)

    g = wg.trace(f, a)
    (eigh,) = [eq for eq in g if len(eq.outs) > 1]
    assert eigh.primitive == "eigh"
    assert g(a) == pytest.approx(f(a.copy()))
    np.testing.assert_allclose(wg.grad(g)(a), wg.grad(f)(a))
    np.testing.assert_allclose(wg.compile(wg.grad(f))(a), wg.grad(f)(a))


def test_writing_a_traced_value_into_a_plain_array_is_refused_with_the_fix():
    """``np.copyto(buf, x)`` and ``np.add(x, 1, out=buf)`` into a NumPy array ``buf`` would
    freeze the traced value as a constant: refused as ``buf[...] = x`` is (eagerly, for a
    value that carries a derivative, the same writes are refused)."""
    def copy_into(x):
        buf = np.zeros(3)
        np.copyto(buf, x * 2.0)
        return buf

    def ufunc_out(x):
        buf = np.zeros(3)
        np.add(x, 1.0, out=buf)
        return buf

    def function_out(x):
        buf = np.zeros(())
        np.sum(x, out=buf)
        return buf

    def index_out(x):
        buf = np.zeros((), dtype=np.intp)
        np.argmax(x, out=buf)
        return buf

    for f in (copy_into, ufunc_out, function_out, index_out):
        with pytest.raises(wg.graph.TraceError, match="plain NumPy array.*np.zeros_like"):
            wg.trace(f, np.ones(3))
        with pytest.raises(wg.graph.TraceError, match="plain NumPy array"):
            wg.compile(f)(np.ones(3))
        if f is not index_out:  # (an index carries no derivative: eagerly it is stored)
            with pytest.raises(LostDerivativeError):
                wg.grad(lambda x, f=f: np.sum(f(x)))(np.ones(3))


def test_out_equal_to_a_traced_array_writes_in_place_as_eagerly():
    """``np.add(y, 1.0, out=y)`` is ``y += 1.0``: traced as an in-place update (views follow
    their base), as eager tensors run it."""
    def f(x):
        y = x * 2.0
        v = y[1:]
        np.add(y, 1.0, out=y)
        np.multiply(v, 3.0, out=v)
        np.sum(y, axis=0, keepdims=True, out=y[:1])
        return y, v

    x = np.array([1.0, -2.0, 3.0])
    compiled = wg.compile(f)
    compiled(x)
    for got in (wg.trace(f, x)(x), compiled(x)):
        for a, b in zip(got, f(x)):
            np.testing.assert_array_equal(a, b)
    want = wg.grad(lambda x: np.sum(f(x)[0] ** 2))(x)
    np.testing.assert_array_equal(wg.compile(wg.grad(lambda x: np.sum(f(x)[0] ** 2)))(x), want)
    def to_int(x):
        i = (x > 0) * 1
        return np.add(i, x, out=i)

    for run in (to_int, lambda x: wg.trace(to_int, x)):
        with pytest.raises(TypeError, match="same_kind"):  # NumPy's refusal
            run(x)


def test_writes_into_real_and_imag_parts_reach_the_traced_array():
    """``c.imag[:] = v`` in a traced function writes into ``c`` (NumPy's part is a view),
    in the graph as in eager code: a compiled function gave |x| where NumPy gives √5 |x|."""

    def f(x):
        c = x.astype(complex)
        c.imag[:] = x * 2.0
        return np.sum(np.abs(c))

    def g(z):
        z = z.copy()
        z.real[0] = 5.0
        part = z.imag
        z *= 2.0  # (the part follows its base)
        return part * 1.0, z

    def h(z):
        z = z.copy()
        z.imag = np.array([7.0, 8.0])  # (the setters write through too)
        z.real += 1.0
        return z

    x0, z0 = np.array([1.0, 2.0]), np.array([1 + 1j, 2 - 1j])
    for run in (wg.compile(h), wg.trace(h, z0)):
        np.testing.assert_array_equal(run(z0), h(z0))
        np.testing.assert_array_equal(run(z0), [2 + 7j, 3 + 8j])
    for run in (wg.compile(f), wg.trace(f, x0)):
        assert run(x0) == f(x0) == np.sqrt(5.0) * 3.0
    for grad in (wg.compile(wg.grad(f)), wg.grad(wg.compile(f))):
        np.testing.assert_allclose(grad(x0), np.sqrt(5.0) * np.ones(2))
    for run in (wg.compile(g), wg.trace(g, z0)):
        for got, want in zip(run(z0), g(z0)):
            np.testing.assert_array_equal(got, want)
