"""GradientTape and Variable: the TensorFlow dialect."""

import doctest
import threading
import warnings

import pytest

import numpy as np
import wengert as wg
import wengert.reverse.gradient_tape as gradtape
from wengert.reverse.gradient_tape import GradientTape, Variable


def val(t):
    """The value of a returned gradient (a tensor) as a NumPy array."""
    assert isinstance(t, wg.Tensor), f"expected a tensor, got {type(t).__name__}"
    return np.asarray(t.detach().numpy())


# -- basics -------------------------------------------------------------------
def test_watched_tensor_gradient_matches_analytic():
    x = wg.tensor([0.5, 1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = (np.sin(x) * x * x).sum()
    g = tape.gradient(y, x)
    xv = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(val(g), 2 * xv * np.sin(xv) + xv**2 * np.cos(xv), rtol=1e-14)


def test_gradient_returns_tensor_with_source_shape_and_dtype():
    x = wg.tensor(np.ones((2, 3), dtype=np.float32))
    with GradientTape() as tape:
        tape.watch(x)
        y = (x * 3.0).sum()
    g = tape.gradient(y, x)
    assert isinstance(g, wg.Tensor) and not g.requires_grad
    assert g.shape == (2, 3) and g.dtype == np.float32
    np.testing.assert_array_equal(val(g), np.full((2, 3), 3.0))


@pytest.mark.parametrize("source", [np.ones(2, np.float32), np.float32(2.0),
                                    np.ones(2, np.float16)], ids=["array", "0-d", "float16"])
def test_gradient_keeps_the_source_dtype_when_float64_values_promote_the_target(source):
    x = wg.tensor(source)
    w = Variable(source)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.sum(x * np.ones(np.shape(source)))  # float64: NumPy promotes
        z = np.sum(w * np.float64(3.0))
    assert y.dtype == np.float64
    for g in (tape.gradient(y, x), tape.gradient(z, w)):
        assert g.dtype == source.dtype and g.shape == np.shape(source)
    x2 = wg.tensor(source, requires_grad=True)
    np.sum(x2 * np.ones(np.shape(source))).backward()
    assert x2.grad.dtype == source.dtype  # as backward() gives


def test_scalar_python_float_source():
    x = wg.tensor(3.0)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    g = tape.gradient(y, x)
    assert g.shape == () and g.item() == 27.0


def test_unwatched_constant_gets_none_or_zero():
    x = wg.tensor([1.0, 2.0])
    c = wg.tensor([3.0, 4.0, 5.0])
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x.sum() * c.sum()
    assert tape.gradient(y, c) is None
    assert tape.gradient(y, c, unconnected_gradients="none") is None
    z = tape.gradient(y, c, unconnected_gradients="zero")
    assert z.shape == (3,)
    np.testing.assert_array_equal(val(z), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(val(tape.gradient(y, x)), [12.0, 12.0])


def test_watched_but_unconnected_source():
    x = wg.tensor(1.0)
    u = wg.tensor([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * 2.0
    assert tape.gradient(y, u) is None
    np.testing.assert_array_equal(val(tape.gradient(y, u, unconnected_gradients="zero")), [0, 0])
    assert tape.gradient(y, [x, u], unconnected_gradients="zero")[0].item() == 2.0


def test_unknown_unconnected_gradients_value():
    x = wg.tensor(1.0)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="zeros")


def test_gradient_of_source_itself_is_ones():
    x = wg.tensor([1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(val(tape.gradient(x, x)), [1.0, 1.0])


def test_unwatched_tensor_requiring_grad_gets_none():
    # recorded (because w is watched) but not watched itself: None, as in TensorFlow
    x = wg.tensor(2.0, requires_grad=True)
    w = wg.tensor(3.0)
    with GradientTape() as tape:
        tape.watch(w)
        y = x * w
    assert tape.gradient(y, [x, w])[0] is None


def test_tape_does_not_touch_grad_or_free_a_pytorch_graph():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with GradientTape() as tape:
        tape.watch(x)
        y = (x * x).sum()
    np.testing.assert_array_equal(val(tape.gradient(y, x)), [2.0, 4.0])
    assert x.grad is None
    y.backward()  # the graph is still there for PyTorch-style backward
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_no_grad_inside_tape_records_nothing():
    x = wg.tensor(2.0)
    with GradientTape() as tape:
        tape.watch(x)
        with wg.no_grad():
            y = x * x
    assert tape.gradient(y, x) is None


# -- watch --------------------------------------------------------------------
def test_watch_nested_structures():
    a, b, c = wg.tensor(1.0), wg.tensor(2.0), wg.tensor(3.0)
    with GradientTape() as tape:
        tape.watch([a, (b, {"c": c})])
        y = a * b * c
    ga, gb, gc = tape.gradient(y, [a, b, c])
    assert (ga.item(), gb.item(), gc.item()) == (6.0, 3.0, 2.0)


def test_watch_rejects_python_numbers_and_arrays():
    with GradientTape() as tape:
        with pytest.raises(TypeError, match=r"can only watch wengert tensors.*wg\.tensor"):
            tape.watch(1.0)
        with pytest.raises(TypeError, match=r"got ndarray.*wg\.Variable"):
            tape.watch(np.ones(2))
        with pytest.raises(TypeError, match="can only watch"):
            tape.watch([wg.tensor(1.0), 2.0])


def test_watch_rejects_integer_tensors():
    tape = GradientTape()
    with pytest.raises(TypeError, match="dtype of the watched tensor must be floating"):
        tape.watch(wg.tensor([1, 2]))


# -- sources and targets structures ---------------------------------------------
def test_list_tuple_and_dict_sources_keep_structure():
    x, y = wg.tensor(2.0), wg.tensor([1.0, 3.0])
    with GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        f = x * x * (y * y).sum()
    gl = tape.gradient(f, [x, y])
    gt = tape.gradient(f, (x, y))
    gd = tape.gradient(f, {"x": x, "nested": {"y": y}})
    assert isinstance(gl, list) and isinstance(gt, tuple) and isinstance(gd, dict)
    for gx, gy in (gl, gt, (gd["x"], gd["nested"]["y"])):
        assert gx.item() == 2 * 2.0 * 10.0
        np.testing.assert_array_equal(val(gy), [2 * 4.0 * 1.0, 2 * 4.0 * 3.0])


def test_list_of_targets_sums_their_gradients():
    x = wg.tensor(3.0)
    with GradientTape() as tape:
        tape.watch(x)
        y1 = x * x
        y2 = x * 5.0
    assert tape.gradient([y1, y2], x).item() == 2 * 3.0 + 5.0


def test_non_scalar_target_gives_gradient_of_the_sum():
    x = wg.tensor([1.0, 2.0, 3.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = x**3
    np.testing.assert_array_equal(val(tape.gradient(y, x)), [3.0, 12.0, 27.0])


def test_output_gradients_weight_the_target():
    x = wg.tensor([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = x * 10.0
    g = tape.gradient(y, x, output_gradients=np.array([1.0, -2.0]))
    np.testing.assert_array_equal(val(g), [2.0, -8.0])
    g = tape.gradient([y, z], x, output_gradients=[np.array([1.0, 0.0]), None])
    np.testing.assert_array_equal(val(g), [2.0 + 10.0, 10.0])
    g = tape.gradient(y, x, output_gradients=wg.tensor([0.5, 0.5]))
    np.testing.assert_array_equal(val(g), [1.0, 2.0])


def test_output_gradients_of_a_dict_target_are_matched_by_key():
    a = Variable(2.0)
    with GradientTape(persistent=True) as tape:
        target = {"u": a * a, "v": a * 3.0}  # du/da = 4, dv/da = 3
    g = tape.gradient(target, a, output_gradients={"v": 10.0, "u": 1.0})
    assert val(g) == 4.0 * 1.0 + 3.0 * 10.0
    g = tape.gradient([target, a * 1.0], a, output_gradients=[{"v": 10.0, "u": 1.0}, 0.0])
    assert val(g) == 34.0
    with pytest.raises(ValueError, match="keys"):
        tape.gradient(target, a, output_gradients={"u": 1.0, "w": 10.0})


def test_a_complex_output_gradient_of_a_real_target_gives_a_real_gradient_as_backward():
    # the gradient of Re(g·y): for a real y only Re(g) counts (a real source's gradient is
    # real); a boolean cotangent is refused
    x = wg.tensor([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 3.0
    g = np.array([1.0 + 1.0j, 2.0j])
    for given in (g, wg.tensor(g)):
        got = tape.gradient(y, x, output_gradients=given)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(val(got), [3.0, 0.0])
    xt = wg.tensor([1.0, 2.0], requires_grad=True)
    (xt * 3.0).backward(g)
    np.testing.assert_array_equal(xt.grad, [3.0, 0.0])
    with pytest.raises(TypeError, match="dtype bool"):
        tape.gradient(y, x, output_gradients=np.array([True, False]))


def test_output_gradients_shape_and_count_are_checked():
    x = wg.tensor([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"output_gradients\[0\] has shape \(3,\).*\(2,\)"):
        tape.gradient(y, x, output_gradients=np.ones(3))
    with pytest.raises(ValueError, match="got 2 output_gradients for 1 targets"):
        tape.gradient(y, x, output_gradients=[np.ones(2), np.ones(2)])


def test_bad_sources_and_targets_are_type_errors():
    x = wg.tensor(1.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
        k = (x * 2.0).astype(np.int64)
    with pytest.raises(TypeError, match=r"sources must be wengert tensors.*got float"):
        tape.gradient(y, 1.0)
    with pytest.raises(TypeError, match="dtype of the source tensor must be floating"):
        tape.gradient(y, wg.tensor(1))
    with pytest.raises(TypeError, match="dtype of the target tensor must be floating"):
        tape.gradient(k, x)
    assert tape.gradient(y, x).item() == 2.0  # still usable after the errors


def test_constant_target_gives_none():
    x = wg.tensor(1.0)
    with GradientTape() as tape:
        tape.watch(x)
    assert tape.gradient(3.0, x) is None


def test_a_none_or_non_array_target_is_refused_not_given_a_none_gradient():
    x = wg.tensor(1.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(TypeError, match="target must be a tensor.*None"):
        tape.gradient(None, x)
    with pytest.raises(TypeError, match="target must be a tensor.*None"):
        tape.gradient([y, None], x)
    with pytest.raises(TypeError, match="target must be a tensor.*str"):
        tape.gradient("y", x)
    assert tape.gradient([y, 1.0], x).item() == 2.0


def test_a_watched_leafs_hooks_run_as_its_gradient_is_computed():
    # as backward() runs them (and PyTorch's autograd.grad): the hooks of the source itself
    # too, not only those of the tensors between
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append("x") or g * 10.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 3.0
        y.register_hook(lambda g: seen.append("y") or g * 100.0)
        z = (y * y).sum()
    np.testing.assert_array_equal(val(tape.gradient(z, x)), [18000.0, 36000.0])
    assert seen == ["y", "x"] and x.grad is None
    np.testing.assert_array_equal(val(tape.gradient(z, [x, x])[1]), [18000.0, 36000.0])
    assert seen == ["y", "x", "y", "x"]  # once per call, however often the source is named
    z.backward()
    np.testing.assert_array_equal(x.grad, [18000.0, 36000.0])


# -- persistence ------------------------------------------------------------------
def test_non_persistent_tape_raises_on_second_use():
    x = wg.tensor(2.0)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).item() == 4.0
    msg = "A non-persistent GradientTape can only be used to compute one set of gradients"
    with pytest.raises(RuntimeError, match=msg):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match=msg):
        tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match=msg), tape:
        pass


def test_non_persistent_jacobian_then_gradient_raises():
    x = wg.tensor([1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_persistent_tape_computes_several_gradients():
    x = wg.tensor(3.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, x).item() == 4 * 3.0**3
    assert tape.gradient(y, x).item() == 6.0
    assert tape.gradient(z, y).item() == 2 * 9.0
    assert tape.gradient(z, x).item() == 108.0


def test_gradient_inside_non_persistent_context_stops_recording():
    x = wg.tensor(2.0)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert tape.gradient(y, x).item() == 4.0
        z = x * 3.0  # the spent tape records nothing more
        assert z._node is None
        with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
            tape.gradient(y, x)


def test_gradient_inside_persistent_context_warns_and_records():
    x = wg.tensor(2.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x**3
        with pytest.warns(UserWarning, match="persistent tape inside its context"):
            dy = tape.gradient(y, x)
    assert dy.item() == 12.0
    assert tape.gradient(dy, x).item() == 6 * 2.0  # the gradient was recorded


def test_tape_never_entered():
    x = wg.tensor(1.0)
    tape = GradientTape()
    with pytest.raises(RuntimeError, match="never recorded anything"):
        tape.gradient(x * 2.0, x)


def test_reentering_an_active_tape():
    tape = GradientTape()
    with tape, pytest.raises(ValueError, match="re-enter an already-active tape"):
        tape.__enter__()


def test_persistent_tape_can_be_reentered_and_keeps_recording():
    x = wg.tensor(2.0)
    tape = GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = x * x
    z = y * 10.0  # outside: not recorded
    with tape:
        w = y * 10.0
    assert tape.gradient(z, x) is None
    assert tape.gradient(w, x).item() == 40.0


# -- recording scope ---------------------------------------------------------------
def test_stop_recording():
    x = wg.tensor(2.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = x * x * x
    assert tape.gradient(y, x) is None
    assert tape.gradient(y, x, unconnected_gradients="zero").item() == 0.0
    assert tape.gradient(z, x).item() == 12.0


def test_stop_recording_only_stops_this_tape():
    x = wg.tensor(2.0)
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
    assert inner.gradient(y, x) is None
    assert outer.gradient(y, x).item() == 4.0


def test_stop_recording_outside_the_context():
    tape = GradientTape()
    msg = "stop recording a tape which is not recording"
    with pytest.raises(RuntimeError, match=msg), tape.stop_recording():
        pass


def test_operations_before_the_tape_are_constants():
    x = wg.tensor(3.0)
    y0 = x * x  # before the tape: a constant to it
    with GradientTape() as tape:
        tape.watch(x)
        y = y0 * x
    assert tape.gradient(y, x).item() == 9.0  # d(c*x)/dx with c = x*x held constant


def test_watched_tensor_computed_before_the_tape_is_where_the_gradient_stops():
    x = wg.tensor(3.0, requires_grad=True)
    z = x * 2.0  # recorded PyTorch-style, before the tape
    with GradientTape() as tape:
        tape.watch([z, x])
        y = z * z + x
    gz, gx = tape.gradient(y, [z, x])
    assert gz.item() == 2 * 6.0
    assert gx.item() == 1.0  # not through z: its op ran before the tape opened


def test_operations_after_exit_are_not_recorded():
    x = wg.tensor(2.0)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
    z = y * x
    assert tape.gradient(z, x) is None


def test_reset_forgets_what_was_recorded():
    x = wg.tensor(2.0)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        assert tape.watched_variables() == ()
        tape.watch(x)
        z = x * 5.0
    assert tape.gradient([y, z], x).item() == 5.0


# -- Variables ----------------------------------------------------------------------
def test_variables_are_watched_automatically():
    w = Variable(2.0, name="w")
    b = Variable(0.5, name="b")
    x = np.array([1.0, 2.0, 3.0])
    t = np.array([2.0, 3.0, 7.0])
    with GradientTape() as tape:
        loss = ((w * x + b - t) ** 2).sum()
    gw, gb = tape.gradient(loss, [w, b])
    r = 2.0 * x + 0.5 - t
    assert gw.item() == pytest.approx(np.sum(2 * r * x), rel=1e-15)
    assert gb.item() == pytest.approx(np.sum(2 * r), rel=1e-15)
    assert tape.watched_variables() == (w, b)


def test_variable_created_inside_the_tape_and_array_variable():
    with GradientTape() as tape:
        v = Variable([1.0, -2.0])
        y = (np.exp(v) * v).sum()
    vv = np.array([1.0, -2.0])
    np.testing.assert_allclose(val(tape.gradient(y, v)), np.exp(vv) * (1 + vv), rtol=1e-15)


@pytest.mark.parametrize("op", ["add", "multiply"])
def test_nested_tapes_each_watch_every_variable_an_op_reads(op):
    x, y = Variable(2.0, name="x"), Variable(3.0, name="y")
    with GradientTape() as outer:
        with GradientTape(persistent=True) as inner:
            z = x + y if op == "add" else x * y
        dz_dy = inner.gradient(z, y)
        dz_dx = inner.gradient(z, x)
        w = x * dz_dy  # d/dx [x * d/dy z]: 1 for x + y, 2x for x * y
    assert [v.name for v in inner.watched_variables()] == ["x", "y"]
    assert [v.name for v in outer.watched_variables()] == ["x", "y"]
    assert (dz_dy.item(), dz_dx.item()) == ((1.0, 1.0) if op == "add" else (2.0, 3.0))
    assert outer.gradient(w, x).item() == (1.0 if op == "add" else 4.0)


def test_watched_variables_order_and_explicit_watch():
    a, b, c = Variable(1.0, name="a"), Variable(2.0, name="b"), Variable(3.0, name="c")
    with GradientTape() as tape:
        tape.watch(c)
        y = b * a
    assert [v.name for v in tape.watched_variables()] == ["c", "b", "a"]
    assert tape.gradient(y, c) is None


def test_watch_accessed_variables_false():
    v = Variable(3.0)
    u = Variable(4.0)
    with GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(u)
        y = v * v * u
    assert tape.watched_variables() == (u,)
    assert tape.gradient(y, v) is None
    assert tape.gradient(y, v, unconnected_gradients="zero").item() == 0.0
    assert tape.gradient(y, u).item() == 9.0


def test_non_trainable_variable_is_not_watched_unless_asked():
    v = Variable(3.0, trainable=False)
    w = Variable(2.0)
    with GradientTape(persistent=True) as tape:
        y = v * w
    assert tape.watched_variables() == (w,)
    assert tape.gradient(y, v) is None
    assert tape.gradient(y, w).item() == 3.0
    with GradientTape() as tape:
        tape.watch(v)
        y = v * v
    assert tape.gradient(y, v).item() == 6.0


def test_variable_read_outside_any_tape_records_nothing():
    v = Variable(3.0)
    y = v * v
    assert y._node is None and not y.requires_grad
    with GradientTape() as tape:
        z = y * v  # y is a constant here
    assert tape.gradient(z, v).item() == 9.0


def test_variable_is_a_leaf_tensor_without_requires_grad():
    v = Variable(np.arange(3.0), name="v")
    assert isinstance(v, wg.Tensor)
    assert v.is_leaf and not v.requires_grad and v.grad is None
    assert v.trainable and v.name == "v"
    assert Variable(1.0).name == "Variable"
    np.testing.assert_array_equal(np.asarray(v), [0.0, 1.0, 2.0])
    assert float(Variable(2.5)) == 2.5


def test_variable_constructor_options():
    v = Variable(lambda: np.ones(2), dtype=np.float32)
    assert v.dtype == np.float32 and v.shape == (2,)
    data = np.array([1.0, 2.0])
    v = Variable(data)
    data[0] = 100.0
    assert v.numpy()[0] == 1.0  # copied


def test_variable_repr():
    assert repr(Variable(1.0, name="w")) == "<wg.Variable 'w' shape=() dtype=float64, numpy=1.0>"
    assert repr(Variable([1.0, 2.0])) == (
        "<wg.Variable 'Variable' shape=(2,) dtype=float64, numpy=array([1., 2.])>"
    )
    assert repr(Variable(np.int64(3))) == "<wg.Variable 'Variable' shape=() dtype=int64, numpy=3>"


def test_variable_assign_updates_in_place_and_bumps_version():
    v = Variable([1.0, 2.0])
    storage = v._value
    version = v._version.version
    assert v.assign([3.0, 4.0]) is v
    assert v._value is storage and v._version.version == version + 1
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    v.assign_add(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(v.numpy(), [4.0, 5.0])
    v.assign_sub(wg.tensor([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    assert v._version.version == version + 3
    s = Variable(1.0)
    s.assign(2).assign_add(0.5).assign_sub(1.0)
    assert s.item() == 1.5 and s._version.version == 3


def test_variable_numpy_is_a_copy():
    v = Variable([1.0, 2.0])
    a = v.numpy()
    v.assign([5.0, 6.0])
    np.testing.assert_array_equal(a, [1.0, 2.0])


def test_variable_assign_errors():
    v = Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match=r"Cannot assign value to variable 'v': Shape mismatch"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Shape mismatch"):
        Variable(1.0).assign([1.0, 2.0])
    with pytest.raises(TypeError, match="Cannot assign a value of dtype float64"):
        Variable([1, 2]).assign([0.5, 1.5])


def test_variable_inplace_operators_and_item_assignment_are_refused():
    v = Variable([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"variable \+= value.*assign_add"):
        v += 1.0
    with pytest.raises(RuntimeError, match="assign_add"):
        v *= 2.0
    with pytest.raises(TypeError, match="does not support item assignment"):
        v[0] = 5.0


def test_variable_assign_is_not_recorded():
    v = Variable(2.0)
    with GradientTape() as tape:
        y = v + 3.0
        v.assign(5.0)  # not recorded; add's rule does not need v's old value
        z = v * 1.0
    assert tape.gradient(y, v).item() == 1.0
    assert z.item() == 5.0


def test_assign_after_a_recorded_read_is_an_error_not_a_wrong_gradient():
    v = Variable([2.0, 3.0])
    with GradientTape() as tape:
        y = (v * v).sum()
    v.assign([10.0, 10.0])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tape.gradient(y, v)


def test_variable_value_is_a_recorded_read():
    v = Variable([1.0, 2.0])
    with GradientTape() as tape:
        r = v.value()
        y = (r * r).sum()
    assert type(r) is wg.Tensor
    np.testing.assert_array_equal(val(tape.gradient(y, v)), [2.0, 4.0])
    snapshot = v.read_value()
    v.assign([7.0, 7.0])
    np.testing.assert_array_equal(snapshot.numpy(), [1.0, 2.0])


def test_training_loop_with_variables():
    rng = np.random.default_rng(0)
    x = rng.normal(size=20)
    t = 3.0 * x - 1.0
    w, b = Variable(0.0), Variable(0.0)
    for _ in range(200):
        with GradientTape() as tape:
            loss = ((w * x + b - t) ** 2).mean()
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
    assert w.item() == pytest.approx(3.0, abs=1e-6)
    assert b.item() == pytest.approx(-1.0, abs=1e-6)


# -- higher order -----------------------------------------------------------------------
def test_nested_tapes_second_derivative():
    x = wg.tensor(1.5)
    with GradientTape() as t2:
        with GradientTape() as t1:
            t1.watch(x)
            t2.watch(x)
            y = x**3
        dy = t1.gradient(y, x)
    d2y = t2.gradient(dy, x)
    assert dy.item() == pytest.approx(3 * 1.5**2, rel=1e-15)
    assert d2y.item() == pytest.approx(6 * 1.5, rel=1e-15)


def test_nested_tapes_gradient_inside_both_contexts():
    x = wg.tensor(2.0)
    with GradientTape() as t2:
        t2.watch(x)
        with GradientTape() as t1:
            t1.watch(x)
            y = np.sin(x) * x
            dy = t1.gradient(y, x)
        d2y = t2.gradient(dy, x)
    assert dy.item() == pytest.approx(np.cos(2.0) * 2.0 + np.sin(2.0), rel=1e-15)
    assert d2y.item() == pytest.approx(2 * np.cos(2.0) - 2.0 * np.sin(2.0), rel=1e-15)


def test_third_derivative_with_three_tapes_and_variables():
    v = Variable(0.7)
    with GradientTape() as t3:
        with GradientTape() as t2:
            with GradientTape() as t1:
                y = np.exp(v * 2.0)
            d1 = t1.gradient(y, v)
        d2 = t2.gradient(d1, v)
    d3 = t3.gradient(d2, v)
    e = np.exp(1.4)
    assert (d1.item(), d2.item(), d3.item()) == pytest.approx((2 * e, 4 * e, 8 * e), rel=1e-14)


def test_inner_gradient_is_unconnected_for_outer_tape_without_watch():
    x = wg.tensor(2.0)
    with GradientTape() as t2:
        with GradientTape() as t1:
            t1.watch(x)
            y = x**3
        dy = t1.gradient(y, x)
    assert dy.item() == 12.0
    assert t2.gradient(dy, x) is None


def test_tape_inside_wg_grad():
    def f(x):
        with GradientTape() as tape:
            tape.watch(x)
            y = x**3
        return tape.gradient(y, x)

    assert wg.grad(f)(2.0) == pytest.approx(12.0, rel=1e-15)


# -- jacobian ----------------------------------------------------------------------------
def test_jacobian_of_linear_map():
    A = np.arange(6.0).reshape(2, 3)
    x = wg.tensor([1.0, -1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = A @ x
    J = tape.jacobian(y, x)
    assert isinstance(J, wg.Tensor) and J.shape == (2, 3)
    np.testing.assert_array_equal(val(J), A)


def test_jacobian_shapes_and_values():
    x = wg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    s = wg.tensor(0.5)
    with GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y = x * x * s  # shape (2, 2)
        q = (x * x).sum()  # scalar
    Jx, Js = tape.jacobian(y, [x, s])
    assert Jx.shape == (2, 2, 2, 2) and Js.shape == (2, 2)
    expected = np.zeros((2, 2, 2, 2))
    xv = x.numpy()
    for i in range(2):
        for j in range(2):
            expected[i, j, i, j] = 2 * xv[i, j] * 0.5
    np.testing.assert_array_equal(val(Jx), expected)
    np.testing.assert_array_equal(val(Js), xv * xv)
    Jq = tape.jacobian(q, x)
    assert Jq.shape == (2, 2)
    np.testing.assert_array_equal(val(Jq), 2 * xv)
    Jsx = tape.jacobian(y, {"s": s})
    assert set(Jsx) == {"s"} and Jsx["s"].shape == (2, 2)


def test_jacobian_unconnected():
    x = wg.tensor([1.0, 2.0])
    c = wg.tensor([1.0, 2.0, 3.0])
    with GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = x * 2.0
    assert tape.jacobian(y, c) is None
    Jc = tape.jacobian(y, c, unconnected_gradients="zero")
    assert Jc.shape == (2, 3)
    np.testing.assert_array_equal(val(Jc), np.zeros((2, 3)))
    np.testing.assert_array_equal(val(tape.jacobian(y, x)), 2 * np.eye(2))


def test_jacobian_rows_are_gradients_in_the_sources_dtype():
    # float64 values promote a float32 source's target; a complex target's rows for a real
    # source are the gradients of Re(y[i]), real as gradient() gives them
    x = wg.tensor(np.ones(2, np.float32))
    r = wg.tensor([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        tape.watch([x, r])
        y = x * np.array([2.0, 3.0])
        z = r * (1.0 + 1.0j)
    assert y.dtype == np.float64 and tape.gradient(y, x).dtype == np.float32
    J = tape.jacobian(y, x)
    assert J.dtype == np.float32
    np.testing.assert_array_equal(val(J), np.diag([2.0, 3.0]))
    assert tape.gradient(z, r).dtype == np.float64
    Jz = tape.jacobian(z, r)
    assert Jz.dtype == np.float64
    np.testing.assert_array_equal(val(Jz), np.eye(2))


def test_recorded_gradients_and_jacobians_keep_a_float32_sources_dtype():
    x = wg.tensor(np.ones(2, np.float32))
    with GradientTape(persistent=True) as outer:
        outer.watch(x)
        with GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = x * x * np.array([2.0, 3.0])
        g = inner.gradient(y, x)
        J = inner.jacobian(y, x)
    assert g.dtype == np.float32 and J.dtype == np.float32
    np.testing.assert_array_equal(val(outer.gradient(g, x)), [4.0, 6.0])
    assert outer.gradient(J, x).dtype == np.float32


def test_jacobian_with_a_zero_row():
    x = wg.tensor([1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = x * np.array([3.0, 0.0])
    np.testing.assert_array_equal(val(tape.jacobian(y, x)), [[3.0, 0.0], [0.0, 0.0]])


def test_jacobian_errors():
    x = wg.tensor([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="the target must be a wengert tensor"):
        tape.jacobian([y], x)
    with pytest.raises(TypeError, match="sources must be wengert tensors"):
        tape.jacobian(y, 2.0)


def test_nested_jacobian_is_the_hessian_of_elementwise_cube():
    x = wg.tensor([1.0, 2.0, 3.0])
    with GradientTape() as t2:
        t2.watch(x)
        with GradientTape() as t1:
            t1.watch(x)
            y = x**3
        J = t1.jacobian(y, x)
    np.testing.assert_array_equal(val(J), np.diag([3.0, 12.0, 27.0]))
    H = t2.jacobian(J, x)
    assert H.shape == (3, 3, 3)
    expected = np.zeros((3, 3, 3))
    for i, xi in enumerate([1.0, 2.0, 3.0]):
        expected[i, i, i] = 6 * xi
    np.testing.assert_array_equal(val(H), expected)


def test_hessian_of_scalar_via_gradient_then_jacobian():
    x = wg.tensor([1.0, 2.0])
    with GradientTape() as t2:
        t2.watch(x)
        with GradientTape() as t1:
            t1.watch(x)
            f = x[0] ** 2 * x[1] + x[1] ** 3
        g = t1.gradient(f, x)
    H = t2.jacobian(g, x)
    x0, x1 = 1.0, 2.0
    np.testing.assert_allclose(val(g), [2 * x0 * x1, x0**2 + 3 * x1**2], rtol=1e-15)
    np.testing.assert_allclose(val(H), [[2 * x1, 2 * x0], [2 * x0, 6 * x1]], rtol=1e-15)


# -- threads ------------------------------------------------------------------------------
def test_each_thread_has_its_own_tapes():
    barrier = threading.Barrier(2)
    results = {}
    errors = []

    def work(k):
        try:
            x = wg.tensor(float(k + 1))
            with GradientTape() as tape:
                tape.watch(x)
                barrier.wait()
                y = x ** (k + 2)
                barrier.wait()
                z = y * 1.0
            results[k] = (tape.gradient(z, x).item(), tape.watched_variables())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results[0] == (2 * 1.0, ())  # d x^2 at 1
    assert results[1] == (3 * 2.0**2, ())  # d x^3 at 2


def test_tape_in_one_thread_does_not_record_another_threads_ops():
    v = Variable(2.0)
    out = {}
    with GradientTape() as tape:
        worker = threading.Thread(target=lambda: out.setdefault("y", v * v))
        worker.start()
        worker.join()
    assert out["y"]._node is None
    assert tape.watched_variables() == ()
    assert tape.gradient(out["y"], v) is None


# -- docs ---------------------------------------------------------------------------------
def test_docstring_examples(monkeypatch):
    monkeypatch.setattr(wg, "GradientTape", GradientTape, raising=False)
    monkeypatch.setattr(wg, "Variable", Variable, raising=False)
    result = doctest.testmod(gradtape, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10 and result.failed == 0


def test_recorded_jacobian_assembly():
    x = wg.tensor([0.5, 2.0])
    with GradientTape() as t2:
        t2.watch(x)
        with GradientTape() as t1:
            t1.watch(x)
            y = x * x * x[0]
        J = t1.jacobian(y, x)
    H = t2.jacobian(J, x)
    a, b = 0.5, 2.0
    np.testing.assert_allclose(val(J), [[3 * a * a, 0.0], [b * b, 2 * a * b]], rtol=1e-15)
    expected = np.array([[[6 * a, 0.0], [0.0, 0.0]], [[0.0, 2 * b], [2 * b, 2 * a]]])
    np.testing.assert_allclose(val(H), expected, rtol=1e-15)


def test_same_target_twice_counts_twice():
    # A target listed twice contributes twice (the sweep takes both seeds).
    x = wg.tensor(2.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * 3.0
    assert float(val(tape.gradient([y, y], x))) == 8.0
    assert float(val(tape.gradient([z, y, z], x))) == 28.0


def test_gradient_values_are_writable_arrays():
    # The sweep ends in a read-only broadcast view for a sum; .numpy() of the
    # gradient is an ordinary array the caller may modify.
    x = wg.Variable(np.ones(3))
    with wg.GradientTape() as tape:
        y = np.sum(x)
    a = tape.gradient(y, x).numpy()
    assert a.flags.writeable and 0 not in a.strides
    a[0] = 5.0
    np.testing.assert_array_equal(a, [5.0, 1.0, 1.0])


@pytest.mark.parametrize("method", ["gradient", "jacobian"])
def test_tape_inside_wg_grad_refuses_a_variable_it_cannot_differentiate(method):
    # u depends on x (the transform's input) and on v (a Variable, of no transform): the
    # tape's sweep at x's level does not reach v, and returned None
    def f(x):
        v = Variable(np.array([2.0]))
        with GradientTape() as tape:
            tape.watch(x)
            u = v * x ** 2
        return getattr(tape, method)(u, v)

    with pytest.raises(RuntimeError, match="a Variable, which belongs to no transform"):
        wg.grad(lambda x: np.sum(f(x)))(np.array([0.7]))


@pytest.mark.parametrize("transform", ["grad", "hessian", "hvp"])
@pytest.mark.parametrize("unconnected", ["none", "zero"])
def test_tape_inside_a_transform_refuses_a_source_of_no_transform(transform, unconnected):
    # dz/dy = x depends on the transform's input, which the tape's sweep cannot give for
    # y, a tensor of no transform; under forward over reverse (hessian, hvp) the target
    # holds a dual number, and the gradient was None (or zero) without a word
    def f(x):
        y = wg.tensor(1.0)
        with GradientTape() as tape:
            tape.watch(y)
            tape.watch(x)
            z = x * y + x
        return tape.gradient(z, y, unconnected_gradients=unconnected) * x

    run = {"grad": lambda: wg.grad(f)(2.0), "hessian": lambda: wg.hessian(f)(2.0),
           "hvp": lambda: wg.hvp(f, 2.0, 1.0)}[transform]
    with pytest.raises(RuntimeError, match=r"a tensor of no transform \(made outside it, or "
                                           r"by wg.tensor inside it\)"):
        run()


def test_tape_jacobian_inside_wg_grad_refuses_an_unwatched_input():
    def f(x):
        with GradientTape() as tape:
            u = x ** 2
        return tape.jacobian(u, x)

    with pytest.raises(RuntimeError, match="which the tape does not watch"):
        wg.grad(lambda x: np.sum(f(x)))(np.array([0.7]))


def test_backward_on_a_value_recorded_by_a_tape_points_to_tape_gradient():
    x = Variable(2.0)
    with GradientTape() as tape:
        z = x * x
    with pytest.raises(wg.errors.NoGradientError, match=r"recorded by a wg\.GradientTape") as info:
        z.backward()
    assert "tape.gradient(target, sources)" in str(info.value)
    assert "requires_grad=True" in str(info.value)
    assert val(tape.gradient(z, x)) == 4.0  # the tape still gives the gradient
    w = wg.tensor(3.0)
    with GradientTape() as tape:
        tape.watch(w)
        y = w * w
    with pytest.raises(wg.errors.NoGradientError, match="tape.gradient"):
        y.backward()
    with pytest.raises(wg.errors.NoGradientError, match=r"a wg\.Variable.*tape\.gradient"):
        x.backward()
    with pytest.raises(wg.errors.NoGradientError, match="not computed from any tensor"):
        (wg.tensor(1.0) * 2).backward()  # no tape: the PyTorch message


def test_backward_on_a_tape_value_that_requires_grad_still_works():
    x = wg.tensor(2.0, requires_grad=True)
    with GradientTape() as tape:
        tape.watch(x)
        z = x * x
    z.backward()
    assert float(x.grad) == 4.0


def test_watching_a_dual_number_is_refused_and_the_wrapped_dual_gives_forward_over_reverse():
    d = wg.Dual(3.0, 1.0)
    with GradientTape() as tape:
        with pytest.raises(TypeError, match=r"got a dual number .* x = wg\.tensor\(d\)"):
            tape.watch(d)
        with pytest.raises(TypeError, match=r"got a dual number"):
            tape.watch([wg.tensor(1.0), {"d": d}])
    x = wg.tensor(d)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    g = tape.gradient(y, x)
    assert (g._value.primal, g._value.tangent) == (27.0, 18.0)  # 3x^2 and 6x

    def f(v):
        with GradientTape() as tape:
            tape.watch(v)
            return v * v

    with pytest.raises(TypeError, match=r"got a dual number"):
        wg.jvp(f, (3.0,), (1.0,))


def test_batch_jacobian_gives_each_examples_jacobian_to_any_order():
    x = wg.tensor(np.arange(6.0).reshape(3, 2))
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.stack([x[:, 0] * x[:, 1], np.sin(x[:, 0]), x[:, 1] ** 2], axis=1)
    bj = tape.batch_jacobian(y, x)
    full = tape.jacobian(y, x).numpy()
    assert bj.shape == (3, 3, 2)
    np.testing.assert_allclose(bj.numpy(), np.stack([full[i, :, i, :] for i in range(3)]))
    unwatched = wg.tensor(np.ones((3, 2)))
    assert tape.batch_jacobian(y, unwatched) is None
    assert not tape.batch_jacobian(y, unwatched, unconnected_gradients="zero").numpy().any()
    with pytest.raises(ValueError, match="batch size 3 and the source's 2 differ"):
        tape.batch_jacobian(y, wg.tensor(np.ones(2)))
    with pytest.raises(ValueError, match="must have a batch axis"):
        tape.batch_jacobian(y, wg.tensor(1.0))

    x = wg.tensor(np.arange(4.0).reshape(2, 2))
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = x**3
        bj = inner.batch_jacobian(y, x)  # 3 x_ia^2 on the diagonal
    np.testing.assert_allclose(outer.gradient(bj, x).numpy(), 6 * x.numpy())
