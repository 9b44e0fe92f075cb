"""Tensors: the leaf table, .grad semantics, hooks, in-place safety."""

import gc
import warnings
import weakref

import pytest

import numpy as np
import wengert as wg


def test_leaf_table():
    user_no_grad = wg.tensor([1.0, 2.0])
    op_no_grad = user_no_grad * 2
    user_grad = wg.tensor([1.0, 2.0], requires_grad=True)
    op_grad = user_grad * 2
    assert (user_no_grad.is_leaf, user_no_grad.requires_grad) == (True, False)
    assert (op_no_grad.is_leaf, op_no_grad.requires_grad) == (True, False)
    assert (user_grad.is_leaf, user_grad.requires_grad) == (True, True)
    assert (op_grad.is_leaf, op_grad.requires_grad) == (False, True)
    op_grad.sum().backward()
    assert user_no_grad.grad is None
    np.testing.assert_array_equal(user_grad.grad, [2.0, 2.0])
    with pytest.warns(UserWarning, match="retain_grad"):
        assert op_grad.grad is None


def test_grad_is_ndarray_with_leaf_shape_and_dtype():
    x = wg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    (x * 3.0).sum().backward()
    assert isinstance(x.grad, np.ndarray)
    assert x.grad.shape == (2, 3) and x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 3.0, np.float32))


def test_gradients_accumulate_and_reset():
    x = wg.tensor([1.0, -1.0], requires_grad=True)
    for _ in range(3):
        (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [6.0, -6.0])
    x.grad = None
    assert x.grad is None
    (x * 5.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 5.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_the_grad_of_a_0d_array_stays_a_writable_array_as_it_accumulates(dtype):
    x = wg.tensor(np.array(2.0, dtype), requires_grad=True)
    for n in (1, 2, 3):
        np.real(x * x).backward()
        assert type(x.grad) is np.ndarray and x.grad.shape == () and x.grad.dtype == dtype
        assert x.grad == 4.0 * n
    x.grad[...] = 0.0  # zeroing in place, as after the first backward()
    np.real(x * x).backward()
    assert type(x.grad) is np.ndarray and x.grad == 4.0


def test_retain_grad_on_non_leaf():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    (y * 3.0).sum().backward()
    np.testing.assert_array_equal(y.grad, [3.0, 3.0])
    np.testing.assert_array_equal(x.grad, [6.0, 12.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _ = y.grad  # no warning once retained


def test_retain_grad_follows_an_in_place_update():
    # As in PyTorch: .grad is the gradient of the value the tensor holds last.
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    y += 1.0
    (y * y).sum().backward()
    np.testing.assert_array_equal(y.grad, [6.0, 10.0])
    np.testing.assert_array_equal(x.grad, [12.0, 20.0])
    y = x * 2.0
    y.retain_grad()
    y[0] = 5.0
    (y * y).sum().backward()
    np.testing.assert_array_equal(y.grad, [10.0, 8.0])


def test_retain_grad_of_a_view_follows_an_in_place_update_of_its_base():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    v = y[1:]
    v.retain_grad()
    y += 1.0
    (v * v).sum().backward()
    np.testing.assert_array_equal(v.grad, [10.0, 14.0])
    np.testing.assert_array_equal(x.grad, [0.0, 20.0, 28.0])


def test_a_graph_with_retained_gradients_is_freed_by_reference_counting():
    # retain_grad() must not make a cycle through the node (README: recording with the
    # collector disabled is safe)
    gc.disable()
    try:
        x = wg.tensor(np.ones(3), requires_grad=True)
        y = np.sin(x)
        y.retain_grad()
        y += 1.0
        z = (y * y).sum()
        saved = weakref.ref(y.detach().numpy())  # a value the graph's nodes keep
        del y
        assert saved() is not None
        del z
        assert saved() is None
    finally:
        gc.enable()


def test_requires_grad_only_for_floats():
    with pytest.raises(RuntimeError, match="floating point"):
        wg.tensor([1, 2], requires_grad=True)
    t = wg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad_()
    assert wg.tensor([1, 2], dtype=float, requires_grad=True).requires_grad


def test_requires_grad_on_non_leaf_cannot_be_switched_off():
    x = wg.tensor(1.0, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = False


def test_accessors():
    x = wg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float64
    assert x.T.shape == (3, 2)
    assert len(x) == 2
    assert x.astype(np.float32).dtype == np.float32
    assert wg.tensor(3.5).item() == 3.5
    assert x.sum().item() == 21.0
    np.testing.assert_array_equal(x.detach().numpy(), x.numpy())
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    with pytest.raises(ValueError, match="cannot be converted"):
        x.item()


def test_data_is_copied():
    a = np.array([1.0, 2.0])
    t = wg.tensor(a, requires_grad=True)
    a[0] = 100.0
    assert t.numpy()[0] == 1.0


def test_operators_and_reflected():
    x = wg.tensor(3.0, requires_grad=True)
    y = 2.0 + x - 1.0 * x / 2.0 + 2.0 ** x + x**2 - (1.0 - x) + 6.0 / x + (-x) + abs(x)
    y.backward()
    expected = 1 - 0.5 + np.log(2) * 8 + 6 + 1 - 6 / 9 - 1 + 1
    np.testing.assert_allclose(x.grad, expected)


def test_matmul_operators():
    a = wg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = wg.tensor(np.ones((3, 2)), requires_grad=True)
    (a @ b).sum().backward()
    np.testing.assert_array_equal(a.grad, np.full((2, 3), 2.0))
    np.testing.assert_array_equal(b.grad, np.array([[3.0, 3.0], [5.0, 5.0], [7.0, 7.0]]))
    c = np.ones((2, 2)) @ wg.tensor(np.eye(2), requires_grad=True)
    assert isinstance(c, wg.Tensor) and c.requires_grad


def test_comparisons_give_bool_without_grad():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for r in (x > 2, x >= 2, x < 2, x <= 2, x == 2, x != 2):
        assert r.dtype == bool and not r.requires_grad
    np.testing.assert_array_equal((x > 1.5).numpy(), [False, True, True])


def test_hooks_modify_gradient_and_can_be_removed():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(np.array(g)) or g * 10)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [20.0, 40.0])
    h.remove()
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])
    assert len(seen) == 1
    y = x * 3
    y.register_hook(lambda g: g * 0.5)
    x.grad = None
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad, 0.5 * 2 * 9 * x.numpy())


def test_a_hook_handle_removes_its_hook_at_the_end_of_a_with_block():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with x.register_hook(lambda g: g * 10) as handle:
        (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [20.0, 40.0])
    assert repr(handle).endswith("removed>")
    x.grad = None
    with pytest.raises(ZeroDivisionError), x.register_hook(lambda g: g * 10):
        raise ZeroDivisionError
    (x * x).sum().backward()  # (removed also when an exception left the block)
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_seeds_and_cotangents_are_numbers_integers_cast_booleans_refused():
    # as torch's backward(int tensor); a boolean mask is refused (JAX refuses both)
    x = wg.tensor(np.ones(2, dtype=np.float32), requires_grad=True)
    y = x * 2.0
    for seed in (np.array([1, 2]), wg.tensor(np.array([1, 2]))):
        x.grad = None
        y.backward(seed, retain_graph=True)
        assert x.grad.tolist() == [2.0, 4.0] and x.grad.dtype == np.float32
    for seed in (np.array([True, False]), wg.tensor(np.array([True, False]))):
        with pytest.raises(TypeError, match="boolean mask is not a cotangent"):
            y.backward(seed, retain_graph=True)
    _, pull = wg.vjp(lambda v: v * 2.0, np.ones(2))
    assert pull(np.array([1, 2]))[0].tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="boolean mask is not a cotangent"):
        pull(np.array([True, False]))


def test_backward_with_gradient_and_inputs():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    w = wg.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    y.backward(gradient=np.array([1.0, 10.0]), inputs=[x])
    np.testing.assert_array_equal(x.grad, [3.0, 40.0])
    assert w.grad is None


def test_a_complex_tensor_seed_of_a_real_output_counts_by_its_real_part():
    # as an array seed does: backward(g) gives the gradient of Re(g·y); a real leaf, and
    # every tensor between, gets a real gradient, also when the backward pass is recorded
    g = np.array([1.0 + 1.0j, 2.0j])
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    seen = []
    y.register_hook(lambda c: seen.append(np.asarray(c)))
    y.backward(wg.tensor(g))
    np.testing.assert_array_equal(seen[0], [1.0, 0.0])
    np.testing.assert_array_equal(x.grad, [3.0, 0.0])
    x.grad = None
    s = wg.tensor(g, requires_grad=True)
    (x * 3.0).backward(s, create_graph=True)
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.detach().numpy(), [3.0, 0.0])
    with pytest.raises(TypeError, match="got bool: a boolean mask"):
        (x * 3.0).backward(wg.tensor([True, False]))


def test_backward_with_empty_inputs_is_refused():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="cannot be empty"):
        y.backward(inputs=[])
    assert x.grad is None
    y.backward()  # the graph is still whole
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("returned, words", [
    (lambda g: g * 1j, "complex gradient"),
    (lambda g: "0", "returned a str"),
    (lambda g: [1.0, 1.0], "returned a list"),
])
def test_a_hook_returning_what_is_not_a_real_gradient_is_refused(leaf, returned, words):
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x if leaf else x * 2.0
    y.register_hook(returned)
    with pytest.raises(wg.errors.HookError, match=words):
        (y * y).sum().backward()


def test_a_hook_may_return_another_float_dtype_or_a_tensor():
    for returned in (lambda g: g.astype(np.float32), lambda g: wg.tensor(g)):
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        y.register_hook(returned)
        y.sum().backward()
        assert x.grad.dtype == np.float64
        np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_a_complex_hook_gradient_of_a_complex_tensor_is_kept():
    x = wg.tensor([1.0 + 1j], requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: g * 1j)
    y.backward(gradient=np.array([1.0 + 0j]))
    np.testing.assert_array_equal(x.grad, [2j])


@pytest.mark.parametrize("graph", ["same parent twice", "chain joins a branch", "diamond"])
def test_sweep_sums_every_path(graph):
    # The sweep hands a lone pending node straight on (a chain); these graphs
    # make that node receive a second edge or share the heap with another.
    # Small integers keep every product exact.
    x = wg.tensor([1.0, 2.0, -3.0], requires_grad=True)
    a = x * 3.0
    if graph == "same parent twice":
        y = a * a  # both edges of one node reach a, the pending node
        expected = 18.0 * x.numpy()
    elif graph == "chain joins a branch":
        b = a * 2.0  # a chain a -> b, and x reaches y by a second path
        y = b * x
        expected = 12.0 * x.numpy()
    else:
        b, c = a * 2.0, a * 5.0  # two pending parents: the heap orders them
        y = b * c
        expected = 2.0 * 10.0 * 9.0 * x.numpy()
    y.backward(gradient=np.ones(3))
    np.testing.assert_array_equal(x.grad, expected)


def test_create_graph_gives_second_derivative():
    x = wg.tensor(2.0, requires_grad=True)
    y = x**3
    y.backward(create_graph=True)
    g = x.grad
    assert isinstance(g, wg.Tensor) and g.requires_grad
    np.testing.assert_allclose(g.item(), 12.0)
    x.grad = None
    g.backward()
    np.testing.assert_allclose(x.grad, 12.0)


@pytest.mark.parametrize("value", [np.ones(2, np.float32), np.float32(1.5)], ids=["1-d", "0-d"])
def test_create_graph_keeps_a_float32_leafs_dtype_where_float64_values_promote(value):
    x = wg.tensor(value, requires_grad=True)
    (x * x * np.full(np.shape(value), 2.0)).sum().backward(create_graph=True)  # float64 values
    g = x.grad
    assert isinstance(g, wg.Tensor) and g.dtype == np.float32  # as without create_graph
    x.grad = None
    g.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, np.full(np.shape(value), 4.0, np.float32))
    x.grad = None
    y = (x * x * np.full(np.shape(value), 2.0)).sum()
    with wg.no_grad():  # (as in PyTorch, create_graph records the backward pass even here)
        y.backward(create_graph=True)
    assert x.grad.dtype == np.float32 and x.grad.requires_grad


def test_retain_graph_allows_second_backward():
    x = wg.tensor(1.5, requires_grad=True)
    y = wg.numpy.sin(x) * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * (np.sin(1.5) + 1.5 * np.cos(1.5)))


def test_no_grad_and_enable_grad():
    x = wg.tensor(1.0, requires_grad=True)
    with wg.no_grad():
        y = x * 2
        with wg.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad
    assert wg.is_grad_enabled()

    @wg.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad


def test_stop_gradient():
    x = wg.tensor(3.0, requires_grad=True)
    y = x * wg.stop_gradient(x * x)
    y.backward()
    np.testing.assert_allclose(x.grad, 9.0)
    assert wg.stop_gradient(2.0) == 2.0


def test_inplace_ops_on_unsaved_values_are_recorded():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    y += x  # add does not read its inputs' values
    y -= 0.5
    y *= 3.0
    y /= 2.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, 3.0])


def test_inplace_keeps_storage():
    x = wg.tensor(np.zeros(3))
    before = x.numpy()
    x += 1.0
    assert x.numpy() is before
    np.testing.assert_array_equal(before, [1.0, 1.0, 1.0])


def test_inplace_on_leaf_requiring_grad_raises():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    for op in ("x += 1", "x -= 1", "x *= 2", "x /= 2", "x @= np.eye(2)", "x[0] = 5.0"):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            exec(op, {"x": x, "np": np})
    with wg.no_grad():
        x -= 0.5  # an optimizer step is allowed
    np.testing.assert_array_equal(x.numpy(), [0.5, 1.5])


def test_modifying_a_saved_value_makes_backward_raise():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    b = a * a  # multiply saves a
    a += 1.0
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*version 1.*0"):
        b.sum().backward()
    y = wg.numpy.exp(x * 1.0)  # exp saves its output
    z = y.sum()
    y *= 2.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*output"):
        z.backward()


@pytest.mark.parametrize("which", [0, 1])
def test_the_error_names_the_modified_input_of_a_two_input_op(which):
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a, b = x * 1.0, x * 2.0
    c = a * b  # multiply saves both inputs
    (a if which == 0 else b).__iadd__(1.0)
    with pytest.raises(RuntimeError, match=rf"input {which} of .*is at version 1; expected "
                                           r"version 0"):
        c.sum().backward()


def test_modifying_a_saved_leaf_under_no_grad_raises():
    w = wg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    with wg.no_grad():
        w -= 0.1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_setitem_gradients():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = wg.tensor(10.0, requires_grad=True)
    y = x * 1.0
    y[1] = v * 2.0
    (y * wg.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(v.grad, 4.0)
    buf = wg.tensor(np.zeros(3))
    for i in range(3):
        buf[i] = x[i] * x[i]
    x.grad = None
    buf.sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0, 6.0])


def test_inplace_on_a_slice_writes_through_its_base():
    # As in PyTorch: y's history becomes "y with the slice replaced", and v's is
    # re-derived from the new y.
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    v = y[0:2]
    v *= 3.0
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, 6.0, 3.0])
    ((y * y).sum() + v.sum()).backward()  # 9x0² + 9x1² + x2² + 3x0 + 3x1
    np.testing.assert_array_equal(x.grad, [21.0, 39.0, 6.0])
    x.grad = None
    y = x * 1.0
    y[0] = x[1]
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 8.0, 6.0])


def test_view_modified_under_no_grad_is_detected():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    v = y.reshape(3)
    z = (v * v).sum()
    with wg.no_grad():
        y += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_a_tensor_of_one_number_formats_as_that_number():
    x = wg.tensor(1.5, requires_grad=True)
    assert f"{x:.2f}" == "1.50" and f"{x * 2:>6.1f}" == "   3.0" and f"{x}" == repr(x)
    assert wg.grad(lambda t: len(f"{t:.3f}") * t)(2.0) == 5.0  # allowed inside a transform
    with pytest.raises(TypeError, match="is not one number"):
        f"{wg.tensor([1.0, 2.0]):.2f}"


def test_repr_is_stable():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MultiplyBackward>)"
    assert repr(wg.tensor(1.5)) == "tensor(1.5)"


def test_grad_fn_and_next_functions():
    x = wg.tensor(1.0, requires_grad=True)
    y = wg.numpy.sin(x * 2.0)
    assert y.grad_fn.name == "SinBackward"
    (mul,) = y.grad_fn.next_functions
    assert mul.name == "MultiplyBackward"
    assert mul.next_functions == (x, None)
    assert x.grad_fn is None


def test_numpy_conversion_of_grad_tensor_raises():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="detach"):
        np.asarray(x)
    np.testing.assert_array_equal(np.asarray(wg.tensor([1.0])), [1.0])


def test_sibling_views_share_one_version():
    x = wg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = wg.numpy.exp(x * 1.0)  # exp reads its output
    a = y[0:2]
    b = y[1:3]
    z = (b * b).sum()  # multiply saves b
    w = y.sum()
    with wg.no_grad():
        a += 1.0  # writes y's memory, seen through b
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*output"):
        w.backward()


@pytest.mark.parametrize("code", [
    "x.argmax()", "x.argmin(axis=0)", "x.argsort()", "x.any()", "x.all(axis=1)",
    "x.round(1)", "round(x[0, 0], 1)", "x.swapaxes(0, 1)", "x.repeat(2)", "x.diagonal()",
    "x.trace()", "x.real", "x.imag", "x.conj()", "x.flatten(order='F')", "x.ravel()",
    "x.flat[1]", "x.cumprod()", "x.take([0, 3])", "x.nonzero()[0]",
])
def test_ndarray_methods_work_on_tensors_and_duals(code):
    x = np.array([[1.0, 3.0], [2.0, 0.5]])
    expected = eval(code)
    for traced in (wg.tensor(x, requires_grad=True), wg.Dual(x, np.ones_like(x))):
        got = eval(code, {"x": traced, "np": np})
        np.testing.assert_allclose(np.asarray(wg.stop_gradient(got)), expected)
    f = eval("lambda x: " + code)
    g = wg.grad(lambda x: np.sum(f(x) * 1.0))(x)
    gf = wg.jacfwd(lambda x: np.sum(f(x) * 1.0))(x)
    np.testing.assert_allclose(g, gf)


def test_resize_in_place_names_the_spelling_to_use():
    x = wg.tensor(np.ones(4), requires_grad=True)
    with pytest.raises(TypeError, match="np.resize"):
        x.resize(4)


def test_sort_and_fill_in_place_write_through_as_ndarrays_do():
    # as torch: y = x * w; y = y.sort()[0] / y.fill_(v): the permutation's gradient, and
    # none to the values fill overwrote (all of it to v)
    x = wg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    y = x * np.array([1.0, 10.0, 100.0])
    alias = y[:]
    y.sort()
    np.testing.assert_array_equal(y.numpy(), [3.0, 10.0, 200.0])
    np.testing.assert_array_equal(alias.numpy(), [3.0, 10.0, 200.0])  # a view sees it
    (y * np.array([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 20.0, 300.0])
    w = wg.tensor(np.ones(3), requires_grad=True)
    v = wg.tensor(2.0, requires_grad=True)
    z = w * 1.0
    z.fill(v)
    (z * np.arange(3.0)).sum().backward()
    assert z.numpy().tolist() == [2.0, 2.0, 2.0] and w.grad.tolist() == [0.0, 0.0, 0.0]
    assert v.grad == 3.0
    m = wg.tensor(np.array([[3.0, 1.0], [0.0, 5.0]]))
    m.sort(axis=0)
    np.testing.assert_array_equal(m.numpy(), np.sort([[3.0, 1.0], [0.0, 5.0]], axis=0))
    a = wg.tensor(np.array([1, 2, 3]))
    a.fill(2.7)  # cast to the dtype, as NumPy's fill
    assert a.numpy().tolist() == [2, 2, 2] and a.dtype == np.int64
    with pytest.raises(TypeError, match="axis=None"):
        m.sort(axis=None)
    leaf = wg.tensor(np.ones(2), requires_grad=True)
    for write in (leaf.sort, lambda: leaf.fill(0.0)):
        with pytest.raises(RuntimeError, match="leaf"):
            write()
    # dual numbers, transforms and traced graphs alike
    d = wg.Dual(np.array([3.0, 1.0]), np.array([1.0, 2.0]))
    d.sort()
    assert d.primal.tolist() == [1.0, 3.0] and d.tangent.tolist() == [2.0, 1.0]

    def sorted_copy(q):
        r = q * 1.0
        r.sort()
        return r

    q = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(wg.jacfwd(sorted_copy)(q), wg.jacrev(sorted_copy)(q))
    np.testing.assert_array_equal(wg.jacfwd(sorted_copy)(q)[0], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(wg.compile(sorted_copy)(q), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(wg.trace(sorted_copy, q)(q * 2), [2.0, 4.0, 6.0])


def test_reshape_in_fortran_order_and_its_gradient():
    x = np.arange(24.0).reshape(2, 3, 4)
    for order in "CF":
        for shape in [(4, 6), (-1,), (3, 2, 4)]:
            got = wg.numpy.reshape(wg.tensor(x), shape, order=order).numpy()
            np.testing.assert_array_equal(got, np.reshape(x, shape, order=order))
    w = np.random.default_rng(0).normal(size=(4, 6))
    g = wg.grad(lambda x: np.sum(np.reshape(x, (4, 6), order="F") * w))(x)
    np.testing.assert_array_equal(g, np.reshape(w, x.shape, order="F"))


def test_reshape_takes_order_and_copy_as_ndarray_reshape():
    a = np.arange(6.0)
    w = np.arange(6.0).reshape(2, 3) + 1.0
    fortran = np.asfortranarray(a.reshape(3, 2))
    # "A": Fortran order for an array laid out in Fortran order only, as NumPy
    for value, order, back in ((a, "C", "C"), (a, "F", "F"), (a, "A", "C"),
                               (fortran, "A", "F"), (fortran, "C", "C")):
        t = wg.tensor(value, requires_grad=True)
        r = t.reshape(2, 3, order=order)
        np.testing.assert_array_equal(r.numpy(), value.reshape(2, 3, order=order))
        (r * w).sum().backward()
        np.testing.assert_array_equal(t.grad, np.reshape(w, value.shape, order=back))
    d = wg.Dual(a, np.arange(6.0) * 10.0)
    r = d.reshape((3, 2), order="F")
    np.testing.assert_array_equal(r.primal, a.reshape(3, 2, order="F"))
    np.testing.assert_array_equal(r.tangent, (a * 10.0).reshape(3, 2, order="F"))
    f = wg.compile(lambda x: x.reshape(2, 3, order="F") * w)
    np.testing.assert_array_equal(f(a), a.reshape(2, 3, order="F") * w)
    t = wg.tensor(a, requires_grad=True)
    c = t.reshape(6, copy=True)
    c[0] = 100.0  # a copy: the tensor keeps its value
    assert t.numpy()[0] == 0.0
    with pytest.raises(ValueError, match="order must be"):
        t.reshape(2, 3, order="X")
    with pytest.raises(ValueError, match="order 'K' is not permitted"):  # as NumPy
        t.reshape(2, 3, order="K")


def test_divmod_of_traced_values():
    x = np.array([3.5, -4.25, 7.0])
    t = wg.tensor(x, requires_grad=True)
    q, r = divmod(t, 2.0)
    np.testing.assert_array_equal(q.numpy(), x // 2.0)
    np.testing.assert_array_equal(r.numpy(), x % 2.0)
    (r * 3.0 + q).sum().backward()
    np.testing.assert_array_equal(t.grad, [3.0, 3.0, 3.0])  # d(x mod c)/dx = 1, floor: 0
    q, r = divmod(10.0, t)
    np.testing.assert_array_equal(r.numpy(), 10.0 % x)
    g = wg.grad(lambda y: np.sum(divmod(10.0, y)[1]))(x)
    np.testing.assert_array_equal(g, -(10.0 // x))
    d = divmod(wg.Dual(5.5, 1.0), 2.0)
    assert (d[0].primal, d[0].tangent, d[1].primal, d[1].tangent) == (2.0, 0.0, 1.5, 1.0)
    assert wg.compile(lambda y: divmod(y, 2.0)[1])(x).tolist() == (x % 2.0).tolist()


def test_numpy_of_a_tensor_on_a_graph_is_read_only_so_saved_values_cannot_change_unseen():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(ValueError, match="read-only"):
        x.numpy()[0] = 5.0
    h = x * 2.0
    with pytest.raises(ValueError, match="read-only"):
        h.numpy()[0] = 0.0
    y.backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])  # the saved x is untouched
    assert np.shares_memory(x.numpy(), x.detach().numpy())
    assert x.detach().numpy().flags.writeable  # detached: writable, as in PyTorch
    free = wg.tensor([1.0, 2.0])
    free.numpy()[0] = 3.0  # a tensor on no graph: its own array
    assert free.tolist() == [3.0, 2.0]


@pytest.mark.parametrize("make", [lambda: wg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True),
                                  lambda: wg.Variable([1.0, 2.0, 3.0, 4.0])])
def test_setting_shape_or_dtype_is_refused_with_the_spelling_to_use(make):
    x = make()
    with pytest.raises(AttributeError, match=r"shape of a tensor in place.*x\.reshape\(\(2, 2\)\)"):
        x.shape = (2, 2)
    with pytest.raises(AttributeError, match=r"dtype of a tensor in place.*x\.astype\('float32'\)"):
        x.dtype = np.float32
    assert x.shape == (4,) and x.dtype == np.float64


def test_detach_in_place_makes_a_leaf_and_refuses_a_view():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    v = y[1:]
    with pytest.raises(RuntimeError, match=r"Can't detach views in-place.*y\.detach\(\)"):
        v.detach_()
    saved = y * y  # (reads y's value in its rule)
    assert y.detach_() is y
    assert (y.requires_grad, y.is_leaf, y.grad_fn) == (False, True, None)
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 4.0, 9.0])  # y is a constant now
    y += 1.0  # the value another op saved: still version checked
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.sum().backward()


def test_assigning_grad_checks_kind_and_gives_the_tensors_dtype():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"got list; convert it first: x\.grad = np\.asarray"):
        x.grad = [1.0, 2.0]
    with pytest.raises(RuntimeError, match=r"complex128.*real for a real tensor.*np\.real"):
        x.grad = np.array([1j, 1.0])
    with pytest.raises(RuntimeError, match="has dtype bool"):
        x.grad = np.array([True, False])
    x.grad = np.array([1, 1])  # whole numbers: the tensor's dtype
    assert x.grad.dtype == np.float64
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    y = wg.tensor(np.float32([1.0, 2.0]), requires_grad=True)
    y.grad = np.array([1.0, 2.0])
    assert y.grad.dtype == np.float32
    s = wg.tensor(2.0, requires_grad=True)
    s.grad = np.array(3.0)
    assert type(s.grad) is float and s.grad == 3.0


def test_a_tensor_of_a_float64_scalar_takes_the_scalar_path_and_stays_weak():
    # for speed a float64 scalar or 0-d array is held as a Python float (the scalar path);
    # like a PyTorch 0-d tensor it does not promote the float32 array it meets
    t = wg.tensor(np.float64(2.0), requires_grad=True)
    assert type(t._value) is float
    assert (t * np.ones(2, dtype=np.float32)).dtype == np.float32
    for value in (np.float64(2.0), np.array(2.0)):
        d = wg.Dual(value, 1.0)
        assert type(d.primal) is float
        assert (d * np.ones(2, dtype=np.float32)).primal.dtype == np.float32
    y = wg.tensor(np.float64(0.5), requires_grad=True)
    (np.sin(y) * y).backward()
    assert type(y.grad) is float and y.grad == np.cos(0.5) * 0.5 + np.sin(0.5)
