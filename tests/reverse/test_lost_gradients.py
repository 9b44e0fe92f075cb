"""Gradients that must be neither lost nor shared: optimizer steps, aliasing ``.grad``, transforms
of outer tensors and closures, ``backward(inputs=)`` on non-leaves, concurrent backward
passes, in-place updates after views and ``detach()``."""

from __future__ import annotations

import threading

import pytest

import numpy as np
import wengert as wg
from wengert.core.errors import LostDerivativeError
from wengert.interop.dispatch import tables


# -- the optimizer step ----------------------------------------------------------------
def _step_then_train(step):
    w = wg.tensor([1.0, 2.0], requires_grad=True)
    b = wg.tensor(0.5, requires_grad=True)
    (w * w).sum().backward()
    step(w)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    w.grad = None
    (w * b).sum().backward()  # both leaves get their gradient afterwards
    return w, b


@pytest.mark.parametrize("name, step", [
    ("-=", lambda w: w.__isub__(0.25 * w.grad)),
    ("np.multiply(out=)", lambda w: np.multiply(w, 0.5, out=w)),
    ("np.subtract(out=)", lambda w: np.subtract(w, 0.25 * w.grad, out=w)),
    ("w.data -=", None),
    ("w.data =", None),
])
def test_optimizer_step_keeps_a_leaf_that_requires_grad(name, step):
    def data_sub(w):
        w.data -= 0.25 * w.grad

    def data_set(w):
        w.data = w.data - 0.25 * w.grad

    fn = {"w.data -=": data_sub, "w.data =": data_set}.get(name, step)

    def run(w):
        with wg.no_grad():
            fn(w)

    w, b = _step_then_train(run if name not in ("w.data -=", "w.data =") else fn)
    expected = [0.5, 1.0] if name != "np.multiply(out=)" else [0.5, 1.0]
    np.testing.assert_allclose(w.detach().numpy(), expected)
    np.testing.assert_allclose(w.grad, [0.5, 0.5])
    assert b.grad == pytest.approx(w.detach().numpy().sum())


def test_in_place_step_on_a_non_leaf_under_no_grad_keeps_its_history():
    # PyTorch: the data changes, requires_grad and grad_fn stay.
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    with wg.no_grad():
        y += 1.0
    assert y.requires_grad and y.grad_fn is not None
    np.testing.assert_array_equal(y.detach().numpy(), [4.0, 7.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


def test_in_place_on_a_leaf_under_grad_still_raises():
    w = wg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"leaf Variable that requires grad.*no_grad"):
        w -= 1.0


# -- every .grad is its own array -------------------------------------------------------
def test_sum_of_leaves_gives_each_its_own_gradient_array():
    a = wg.tensor([1.0], requires_grad=True)
    b = wg.tensor([2.0], requires_grad=True)
    ((a + b) ** 2).sum().backward()
    assert a.grad is not b.grad and not np.shares_memory(a.grad, b.grad)
    a.grad[0] = 100.0
    assert b.grad[0] == 6.0


def test_backward_gradient_is_not_stored_as_grad():
    a = wg.tensor([1.0, 2.0], requires_grad=True)
    g = np.array([3.0, 4.0])
    a.backward(gradient=g)
    assert a.grad is not g and not np.shares_memory(a.grad, g)
    g[0] = 0.0
    assert a.grad[0] == 3.0
    b = wg.tensor([1.0, 2.0], requires_grad=True)
    (b + 0.0).backward(gradient=g)
    assert not np.shares_memory(b.grad, g)


def test_retained_and_leaf_gradients_do_not_alias():
    a = wg.tensor([1.0, 2.0], requires_grad=True)
    y = a * 1.0
    y.retain_grad()
    z = y + 0.0
    z.backward(gradient=np.ones(2))
    assert not np.shares_memory(y.grad, a.grad)


def test_grad_of_several_arguments_returns_separate_arrays():
    gx, gy = wg.grad(lambda x, y: np.sum(x + y), argnums=(0, 1))(np.ones(2), np.ones(2))
    assert gx is not gy and not np.shares_memory(gx, gy)
    out, pull = wg.vjp(lambda x, y: x + y, np.ones(2), np.ones(2))
    c = np.ones(2)
    cx, cy = pull(c)
    assert not np.shares_memory(cx, cy) and not np.shares_memory(cx, c)


# -- transforms keep an outer tensor's graph (as torch.func does) ---------------------
def cube_sum(z):
    return np.sum(z ** 3)


def test_hvp_of_an_outer_tensor_stays_on_its_graph():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x.sum() + wg.hvp(cube_sum, x, np.array([1.0, 0.0])).sum()  # sum + 6 x0
    assert y.requires_grad
    y.backward()
    np.testing.assert_array_equal(x.grad, [7.0, 1.0])


def test_hessian_jvp_of_grad_and_jacobians_of_an_outer_tensor():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    wg.hessian(cube_sum)(x).sum().backward()  # sum of diag(6 x)
    np.testing.assert_array_equal(x.grad, [6.0, 6.0])
    s = wg.tensor(2.0, requires_grad=True)
    _, t = wg.jvp(wg.grad(lambda z: z ** 3), (s,), (1.0,))  # 6 s
    t.backward()
    assert s.grad == 6.0
    x.grad = None
    wg.jacrev(lambda z: z ** 2)(x).sum().backward()  # sum of diag(2 x)
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    x.grad = None
    wg.jacfwd(lambda z: z ** 2)(x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_grad_of_a_closure_over_an_outer_tensor():
    x = wg.tensor(2.0, requires_grad=True)
    g = wg.grad(lambda z: z * x ** 2)(1.0)  # x², on x's graph
    assert g.requires_grad
    g.backward()
    assert x.grad == 4.0
    x.grad = None
    v, g = wg.value_and_grad(lambda z: z * x ** 2)(3.0)  # the value stays on it too
    (v + g).backward()  # 3 x² + x² -> 8 x
    assert x.grad == 16.0


def test_transform_of_an_outer_tensor_under_no_grad_is_plain():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.no_grad():
        h = wg.hvp(cube_sum, x, np.ones(2))
    assert not getattr(h, "requires_grad", False)


# -- backward(inputs=...) and threads -------------------------------------------------
def test_backward_inputs_fills_a_non_leaf():
    x = wg.tensor(2.0, requires_grad=True)
    y = x * 3.0
    z = y * y
    z.backward(inputs=[y])
    assert y.grad == 12.0 and x.grad is None
    with pytest.raises(RuntimeError, match="requires grad"):
        (x * 2).backward(inputs=[wg.tensor(1.0)])


def test_backward_inputs_mixes_leaves_and_non_leaves():
    x = wg.tensor(2.0, requires_grad=True)
    w = wg.tensor(5.0, requires_grad=True)
    y = x * w
    (y * y).backward(inputs=[y, w], retain_graph=True)
    assert y.grad == 20.0 and w.grad == 40.0 and x.grad is None


def test_concurrent_backward_passes_accumulate_every_gradient():
    # Large arrays: NumPy releases the GIL while adding, so unsynchronised
    # read-add-store updates of .grad would be lost.
    w = wg.tensor(np.ones(200_000), requires_grad=True)
    barrier = threading.Barrier(4)

    def work():
        barrier.wait()
        for _ in range(25):
            (w * 1.0).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(w.grad, 100.0)


# -- in-place after a view or a detach() was taken -----------------------------------------
def test_in_place_on_a_tensor_after_a_view_was_taken():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    v = y[0:1]  # a view taken before the in-place op
    y *= 3.0  # allowed, as in PyTorch
    np.testing.assert_array_equal(v.detach().numpy(), [6.0])
    (v * v).sum().backward()  # v = 6 x0 now: d/dx0 (6 x0)² = 72 x0
    np.testing.assert_array_equal(x.grad, [72.0, 0.0])


def test_writing_into_a_value_a_product_read_checks_it_only_where_a_rule_reads_it():
    # x * c and x @ C with constant c, C: the rule for x reads c only, so x may be written
    # afterwards (NumPy's shift idioms, as in PyTorch); where the other factor gets a
    # gradient, its rule reads x, and the write is refused
    x0 = np.array([0.5, 1.5, 2.5, 3.5])
    m = np.array([[0.9, 0.1], [0.0, 0.8]])

    def shift(x):
        y = x * 1.0
        y[1:] = y[:-1] * 2.0
        return np.sum(y * np.array([1.0, 10.0, 100.0, 1000.0]))

    def rows(x):
        h = np.zeros_like(x, shape=(3, 2))
        h[0] = x[:2]
        for t in range(2):
            h[t + 1] = h[t] @ m + x[2 + t]
        return np.sum(h ** 2)

    def numeric(f, x):
        return np.array([(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(4) * 1e-6])

    for f in (shift, rows):
        np.testing.assert_allclose(wg.grad(f)(x0), numeric(f, x0), rtol=1e-6)
        t = wg.tensor(x0, requires_grad=True)
        f(t).backward()
        np.testing.assert_allclose(t.grad, numeric(f, x0), rtol=1e-6)
    w = wg.tensor(2.0, requires_grad=True)
    y = wg.tensor(x0, requires_grad=True) * 1.0
    y[1:] = y[:-1] * w
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_on_a_tensor_after_detach_is_version_checked():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    d = y.detach()
    z = y * y  # saves y
    y += 1.0  # allowed; the detached alias sees it (shared memory, as in PyTorch)
    np.testing.assert_array_equal(d.numpy(), [3.0, 5.0])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    d += 1.0  # in place on the alias: bumps the shared version too
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y * 1.0 + z).sum().backward()


def test_chained_views_follow_their_base():
    x = wg.tensor(np.arange(4.0), requires_grad=True)
    y = x * 1.0
    v = y[1:3]
    w = v[0:1]
    y *= 2.0
    (w * 5.0).sum().backward()  # w = 2 x1
    np.testing.assert_array_equal(x.grad, [0.0, 10.0, 0.0, 0.0])


def test_x_data_in_place_keeps_requires_grad():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    x.data -= 1.0
    assert x.requires_grad and x.is_leaf
    np.testing.assert_array_equal(x.detach().numpy(), [0.0, 1.0])


# -- hooks, names -----------------------------------------------------------------------
def test_a_hook_returning_a_wrong_shape_is_named():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0

    def widen(g):
        return np.ones(5)

    y.register_hook(widen)
    with pytest.raises(RuntimeError, match=r"hook '.*widen' .* shape \(5,\).*shape \(2,\)"):
        y.sum().backward()
    z = wg.tensor([1.0, 2.0], requires_grad=True)
    z.register_hook(widen)
    with pytest.raises(RuntimeError, match=r"hook '.*widen' registered on a leaf"):
        (z * 2.0).sum().backward()


def test_missing_rules_name_the_numpy_function_as_written(monkeypatch):
    # (every numeric NumPy function has a rule now: two are taken out of the table)
    for fn in (np.emath.log, np.lib.stride_tricks.sliding_window_view):
        monkeypatch.delitem(tables()[1], fn)
    a = wg.tensor(np.eye(2), requires_grad=True)
    with pytest.raises(TypeError, match=r"np\.lib\.scimath\.log has no wengert gradient rule"):
        np.emath.log(a)
    with pytest.raises(TypeError, match=r"np\.lib\.stride_tricks\.sliding_window_view has no "
                                        "wengert gradient rule"):
        np.lib.stride_tricks.sliding_window_view(a, 2)


# -- NumPy functions that write into their argument -------------------------------------
@pytest.mark.parametrize("write, adds", [
    (lambda t: np.copyto(t, np.zeros(2)), False),
    (lambda t: np.put(t, [0], 5.0), False),
    (lambda t: np.putmask(t, np.array([True, False]), 5.0), False),
    (lambda t: np.add.at(t, [0], 1.0), True),  # the old value stays in the sum
    (lambda t: np.fill_diagonal(t.reshape(1, 2), 7.0), False),
])
def test_numpy_writes_into_a_tensor_that_carries_a_gradient_are_recorded(write, adds):
    # a leaf that requires grad refuses in-place writes (PyTorch's rule); a computed tensor
    # is written as y[index] = value would write it, and differentiated through the write
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad.*no_grad"):
        write(x)
    y = x * 2.0
    write(y)
    plain = np.array([2.0, 4.0])
    write(plain)
    np.testing.assert_array_equal(y.numpy(), plain)
    (y * np.array([1.0, 10.0])).sum().backward()
    overwritten = (plain != np.array([2.0, 4.0])) & (not adds)
    np.testing.assert_array_equal(x.grad, np.where(overwritten, 0.0, [2.0, 20.0]))


@pytest.mark.parametrize("write", [
    lambda x, o: np.equal(x, x, out=o),
    lambda x, o: np.equal(x, x, o),
    lambda x, o: np.isnan(x, out=o),
    lambda x, o: np.signbit(x, o),
    lambda x, o: np.greater(x, 1.5, out=o),
])
def test_a_result_without_derivative_written_into_a_tensor_with_one_cuts_its_history(write):
    # out= holds the new numbers, whose derivative is zero: the history the target had
    # before must not flow back (forward mode and NumPy agree)
    x0 = np.array([1.0, 2.0, 3.0])
    weights = np.array([1.0, 10.0, 100.0])

    def f(x):
        o = x * 1.0
        write(x, o)
        return np.sum(o * weights)

    np.testing.assert_array_equal(wg.grad(f)(x0), np.zeros(3))
    assert wg.jvp(f, (x0,), (np.ones(3),))[1] == 0.0
    np.testing.assert_array_equal(wg.compile(wg.grad(f))(x0), np.zeros(3))
    x = wg.tensor(x0, requires_grad=True)
    y = f(x)
    assert y == f(x0)
    y.backward()
    np.testing.assert_array_equal(x.grad, np.zeros(3))
    v = wg.Variable(x0)
    with wg.GradientTape() as tape:
        y = f(v)
    np.testing.assert_array_equal(tape.gradient(y, v, unconnected_gradients="zero").numpy(),
                                  np.zeros(3))


def test_numpy_writes_under_no_grad_keep_the_leaf_and_bump_the_version():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # saves x for its VJP
    with wg.no_grad():
        np.copyto(x, np.array([3.0, 4.0]))
    assert x.requires_grad and x.is_leaf
    np.testing.assert_array_equal(x.numpy(), [3.0, 4.0])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    c = wg.tensor([1.0, 2.0])  # a constant may be written at any time
    np.add.at(c, [0, 0], 1.0)
    np.testing.assert_array_equal(c.numpy(), [3.0, 2.0])


def test_backward_inside_a_functional_transform_raises():
    def f(x):
        y = x * 2.0
        y.backward()
        return y
    with pytest.raises(RuntimeError, match="functional transform.*wg.grad"):
        wg.grad(f)(1.0)

    def g(x):  # a tape inside wg.grad that does not watch the transform's input
        v = wg.Variable(2.0)
        with wg.GradientTape() as tape:
            y = x * v
        return tape.gradient(y, v)
    with pytest.raises(RuntimeError, match="does not watch.*tape.watch"):
        wg.grad(g)(3.0)

    def h(x):  # watched, it is an ordinary nested derivative
        with wg.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.gradient(y, x)
    assert wg.grad(h)(3.0) == 2.0


_FULL = r"np\.full\(\) converted .* np\.broadcast_to\(v, shape\)"
_FULL_LIKE = r"np\.full_like\(\) converted .* v \* np\.ones_like\(a\)"
_ARANGE = r"np\.arange\(\) converted .* start \+ step \* np\.arange\(n\)"


@pytest.mark.parametrize("build, words", [
    (lambda x: np.full(3, x), _FULL),
    (lambda x: np.full((2,), x, dtype=float), _FULL),
    (lambda x: np.full_like(np.ones(3), x), _FULL_LIKE),
    (lambda x: np.arange(x), _ARANGE),
    (lambda x: np.arange(0.0, x, 0.5), _ARANGE),
    (lambda x: np.cumsum([x, x]), r"np\.cumsum\(\) converted .*np\.stack"),
])
def test_numpy_functions_that_convert_a_traced_value_are_named_with_the_fix(build, words):
    with pytest.raises(LostDerivativeError, match=words):
        wg.jvp(build, (2.0,), (1.0,))
    with pytest.raises(LostDerivativeError, match=words):
        wg.grad(lambda x: np.sum(build(x)))(2.0)
    x = wg.tensor(2.0, requires_grad=True)
    with pytest.raises(LostDerivativeError, match=words):
        build(x)


def test_an_asked_for_conversion_keeps_its_own_message():
    with pytest.raises(LostDerivativeError, match=r"np\.asarray\(\) of a dual number"):
        wg.jvp(np.asarray, (2.0,), (1.0,))
    with pytest.raises(LostDerivativeError, match="Can't convert a tensor that requires grad"):
        np.asarray(wg.tensor(2.0, requires_grad=True))
    with pytest.raises(LostDerivativeError, match=r"np\.copyto\(ndarray, \.\.\.\): this stores"):
        np.copyto(np.ones(2), wg.tensor([1.0, 2.0], requires_grad=True))
    # what the fixes say works
    _, dy = wg.jvp(lambda x: np.broadcast_to(x, (3,)) + x * np.ones_like(np.ones(3)),
                   (2.0,), (1.0,))
    np.testing.assert_array_equal(dy, [2.0, 2.0, 2.0])
    assert wg.grad(lambda x: np.sum(np.arange(wg.stop_gradient(x)) * x))(3.0) == 3.0
