"""wg.custom_vjp and wg.custom_jvp: JAX conventions, one node on the tape, every front end."""

import gc

import pytest

import numpy as np
import wengert as wg
from wengert.core.ir import Literal
from wengert.testing import GradcheckError, gradcheck


# -- fixtures: a numerically stable softplus with a custom VJP ----------------------
@wg.custom_vjp
def softplus(x):
    return np.log1p(np.exp(x))


def softplus_fwd(x):
    return softplus(x), x


def softplus_bwd(x, g):
    return (g * wg.numpy.sigmoid(x),)


softplus.defvjp(softplus_fwd, softplus_bwd)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# A function of two arguments whose bwd counts its calls.
CALLS = {"fwd": 0, "bwd": 0}


@wg.custom_vjp
def scaled_product(x, y):
    return x * y * 2.0


def scaled_product_fwd(x, y):
    CALLS["fwd"] += 1
    return scaled_product(x, y), (x, y)


def scaled_product_bwd(res, g):
    CALLS["bwd"] += 1
    x, y = res
    return 2.0 * g * y, 2.0 * g * x


scaled_product.defvjp(scaled_product_fwd, scaled_product_bwd)


# -- custom_vjp ----------------------------------------------------------------------------
def test_plain_values_just_run_the_function():
    x = np.array([0.0, 1.0])
    np.testing.assert_allclose(softplus(x), np.log1p(np.exp(x)))
    assert isinstance(softplus(x), np.ndarray)


def test_one_node_under_its_own_name():
    x = wg.tensor([0.5, -1.0], requires_grad=True)
    y = softplus(x)
    assert y.grad_fn.name == "SoftplusBackward"
    assert y.grad_fn.op.name == "softplus"
    # the node's only differentiable parent is x itself: fwd's body was not recorded
    assert y.grad_fn.next_functions[0] is x
    assert softplus.__name__ == "softplus"


def test_tensor_backward_uses_bwd():
    x = wg.tensor([0.5, -1.0, 30.0], requires_grad=True)
    y = softplus(x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad, sigmoid(np.array([0.5, -1.0, 30.0])))


def test_grad_vjp_and_gradient_tape():
    x0 = np.array([0.3, -2.0])
    expected = sigmoid(x0)
    np.testing.assert_allclose(wg.grad(lambda x: softplus(x).sum())(x0), expected)
    out, f_vjp = wg.vjp(softplus, x0)
    np.testing.assert_allclose(out, np.log1p(np.exp(x0)))
    (ct,) = f_vjp(np.array([1.0, 10.0]))
    np.testing.assert_allclose(ct, expected * [1.0, 10.0])
    v = wg.Variable(x0)
    with wg.GradientTape() as tape:
        y = softplus(v).sum()
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), expected)
    c = wg.tensor(x0)
    with wg.GradientTape() as tape:
        tape.watch(c)
        y = softplus(c).sum()
    np.testing.assert_allclose(tape.gradient(y, c).numpy(), expected)


def test_bwd_is_called_once_per_node_for_several_inputs():
    CALLS.update(fwd=0, bwd=0)
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = wg.tensor([3.0, 4.0], requires_grad=True)
    scaled_product(x, y).sum().backward()
    assert CALLS == {"fwd": 1, "bwd": 1}
    np.testing.assert_allclose(x.grad, [6.0, 8.0])
    np.testing.assert_allclose(y.grad, [2.0, 4.0])


def test_residuals_live_in_each_node_and_are_freed():
    a = wg.tensor([1.0, 2.0], requires_grad=True)
    b = wg.tensor([5.0, 7.0], requires_grad=True)
    one = wg.tensor([1.0, 1.0], requires_grad=True)
    ya = scaled_product(a, one)  # two calls: two nodes with their own residuals
    yb = scaled_product(b, one)
    yb.sum().backward()
    ya.sum().backward()
    np.testing.assert_allclose(one.grad, 2.0 * (np.array([1.0, 2.0]) + [5.0, 7.0]))
    assert ya.grad_fn.freed
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ya.sum().backward()


def test_residuals_are_released_with_the_node():
    class Residual:
        pass

    @wg.custom_vjp
    def f(x):
        return x * 1.0

    def f_fwd(x):
        return x * 1.0, Residual()

    f.defvjp(f_fwd, lambda r, g: (g,))
    x = wg.tensor([1.0], requires_grad=True)
    y = f(x).sum()
    gc.collect()
    assert any(type(o) is Residual for o in gc.get_objects())
    y.backward()
    gc.collect()
    assert not any(type(o) is Residual for o in gc.get_objects())


def test_none_cotangent_means_no_gradient_and_shapes_are_checked():
    @wg.custom_vjp
    def first(x, y):
        return x + 0.0 * y

    first.defvjp(lambda x, y: (first(x, y), None), lambda r, g: (g, None))
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = wg.tensor([3.0, 4.0], requires_grad=True)
    first(x, y).sum().backward()
    np.testing.assert_allclose(x.grad, [1.0, 1.0])
    np.testing.assert_allclose(y.grad, [0.0, 0.0])

    @wg.custom_vjp
    def bad(x):
        return x

    bad.defvjp(lambda x: (x, None), lambda r, g: (np.sum(g),))
    with pytest.raises(ValueError, match=r"custom_vjp bwd of 'bad': the cotangent for input "
                                         r"leaf 0 has shape \(\), but the input has shape \(2,\)"):
        bad(wg.tensor([1.0, 2.0], requires_grad=True)).sum().backward()


def test_bwd_must_return_one_cotangent_per_argument():
    @wg.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: g * r[1])
    x = wg.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match=r"Custom VJP bwd rule of 'f' must produce a tuple with "
                                        r"one cotangent per \(differentiable\) positional "
                                        r"argument of the primal function, i.e. of length 2"):
        f(x, 3.0).backward()


def test_bwd_of_a_call_with_keyword_arguments_is_told_they_get_no_cotangent():
    @wg.custom_vjp
    def power(x, n):
        return x ** n

    power.defvjp(lambda x, n: (x ** n, (x, n)),
                 lambda r, g: (g * r[1] * r[0] ** (r[1] - 1), None))
    assert wg.grad(power)(2.0, 3) == 12.0
    with pytest.raises(TypeError, match=r"length 1, but got a tuple of length 2.*Keyword "
                                        r"arguments, here 'n', are static"):
        wg.grad(lambda x: power(x, n=3))(2.0)


def test_fwd_must_return_a_pair_and_defvjp_is_required():
    @wg.custom_vjp
    def f(x):
        return x

    x = wg.tensor(1.0, requires_grad=True)
    assert f(1.0) == 1.0  # plain values need no rule
    with pytest.raises(TypeError, match="No VJP defined for custom_vjp function f using defvjp"):
        f(x)
    f.defvjp(lambda x: x, lambda r, g: (g,))
    with pytest.raises(TypeError, match=r"Custom VJP fwd rule of 'f' must produce a pair"):
        f(x)


def test_forward_mode_raises():
    with pytest.raises(TypeError, match="custom_vjp functions support reverse mode only.*"
                                        "wg.jacrev instead of wg.jacfwd.*custom_jvp"):
        wg.jvp(softplus, (np.array([1.0]),), (np.array([1.0]),))
    with pytest.raises(TypeError, match="wg.jacrev instead of wg.jacfwd"):
        wg.jacfwd(softplus)(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="custom_vjp functions support reverse mode only"):
        softplus(wg.Dual(1.0, 1.0))


def test_gradcheck_catches_a_wrong_custom_vjp():
    @wg.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (g * 3.0 * x ** 2,))
    assert gradcheck(cube, (np.array([0.5, -1.2, 2.0]),))

    @wg.custom_vjp
    def wrong_cube(x):
        return x ** 3

    wrong_cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (g * 2.0 * x ** 2,))  # 2 for 3
    with pytest.raises(GradcheckError, match=r"gradcheck failed for wrong_cube:\ninput 0 "
                                             r"\(shape \(3,\)\): the reverse-mode \(vjp\) "
                                             r"Jacobian differs"):
        gradcheck(wrong_cube, (np.array([0.5, -1.2, 2.0]),))


def test_higher_order_differentiates_bwd():
    # bwd uses cos from the residuals; the second derivative must see them depend on x
    @wg.custom_vjp
    def my_sin(x):
        return np.sin(x)

    my_sin.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (g * c,))
    assert wg.grad(my_sin)(0.3) == pytest.approx(np.cos(0.3))
    assert wg.grad(wg.grad(my_sin))(0.3) == pytest.approx(-np.sin(0.3))
    assert wg.grad(wg.grad(wg.grad(my_sin)))(0.3) == pytest.approx(-np.cos(0.3))
    x = wg.tensor(0.3, requires_grad=True)
    (g,) = [None]
    y = my_sin(x)
    y.backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.backward()
    assert x.grad == pytest.approx(-np.sin(0.3))
    # forward over reverse: bwd is differentiated in forward mode
    np.testing.assert_allclose(
        wg.hessian(lambda x: my_sin(x).sum())(np.array([0.3, 1.1])), np.diag(-np.sin([0.3, 1.1]))
    )


def test_forward_over_reverse_when_fwd_calls_f():
    # softplus_fwd calls softplus itself (the usual JAX pattern); on dual numbers
    # (wg.hessian, wg.hvp) that call runs the body instead of raising
    x0 = np.array([0.3, -1.0])
    s = sigmoid(x0)
    np.testing.assert_allclose(wg.hessian(lambda x: softplus(x).sum())(x0), np.diag(s * (1 - s)))
    np.testing.assert_allclose(wg.hvp(lambda x: softplus(x).sum(), x0, np.array([1.0, 2.0])),
                               s * (1 - s) * [1.0, 2.0])
    with pytest.raises(TypeError, match="custom_vjp functions support reverse mode only"):
        wg.jvp(softplus, (x0,), (x0,))  # directly: still an error


def test_nested_gradient_tapes():
    @wg.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (3.0 * g * x ** 2,))
    x = wg.tensor(2.0)
    with wg.GradientTape() as outer:
        outer.watch(x)
        with wg.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert dy.item() == 12.0
    assert outer.gradient(dy, x).item() == 12.0


def test_pytree_arguments_and_nondiff_argnums():
    @wg.custom_vjp
    def affine(params, x):
        return params["w"] * x + params["b"]

    def affine_fwd(params, x):
        return affine(params, x), (params["w"], x)

    def affine_bwd(res, g):
        w, x = res
        return {"w": np.sum(g * x), "b": None}, g * w

    affine.defvjp(affine_fwd, affine_bwd)
    params = {"w": 2.0, "b": 0.5}
    x = np.array([1.0, 3.0])
    g_params, g_x = wg.grad(lambda p, x: affine(p, x).sum(), argnums=(0, 1))(params, x)
    assert g_params == {"w": 4.0, "b": 0.0}
    np.testing.assert_allclose(g_x, [2.0, 2.0])

    from functools import partial

    @partial(wg.custom_vjp, nondiff_argnums=(0,))
    def apply_fn(fn, x):
        return fn(x)

    apply_fn.defvjp(lambda fn, x: (fn(x), x), lambda fn, x, g: (g * 100.0,))
    assert wg.grad(lambda x: apply_fn(np.sin, x))(0.0) == 100.0


def test_several_outputs():
    @wg.custom_vjp
    def polar(x, y):
        return np.hypot(x, y), np.arctan2(y, x)

    def polar_fwd(x, y):
        return polar(x, y), (x, y)

    def polar_bwd(res, gs):
        x, y = res
        g_r, g_t = gs
        r2 = x * x + y * y
        r = np.sqrt(r2)
        return g_r * x / r - g_t * y / r2, g_r * y / r + g_t * x / r2

    polar.defvjp(polar_fwd, polar_bwd)
    assert gradcheck(lambda x, y: polar(x, y), (np.array([1.0, -2.0]), np.array([0.5, 3.0])))
    x = wg.tensor(3.0, requires_grad=True)
    y = wg.tensor(4.0, requires_grad=True)
    r, t = polar(x, y)
    assert r.grad_fn.name == "PolarOutputBackward"
    assert r.grad_fn.next_functions[0].name == "PolarBackward"
    r.backward()  # only one output used: the other's cotangent is zero
    assert (x.grad, y.grad) == (pytest.approx(0.6), pytest.approx(0.8))


def test_closed_over_tensor_is_an_error():
    w = wg.tensor(2.0, requires_grad=True)

    @wg.custom_vjp
    def f(x):
        return x * w

    f.defvjp(lambda x: (x * w, None), lambda r, g: (g * 2.0,))
    with pytest.raises(TypeError, match="Detected differentiation of a custom_vjp function"):
        f(wg.tensor(1.0, requires_grad=True))


def test_no_grad_and_constants_record_nothing():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.no_grad():
        y = softplus(x)
    assert y.grad_fn is None and not y.requires_grad
    z = softplus(wg.tensor([1.0]))
    assert z.grad_fn is None and isinstance(z, wg.Tensor)


def test_in_place_modification_of_an_input_is_detected():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = scaled_product(h, h).sum()
    h[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# -- custom_jvp -------------------------------------------------------------------------------
@wg.custom_jvp
def safe_log(x):
    return np.log(x)


@safe_log.defjvp
def safe_log_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return safe_log(x), t / x


@wg.custom_jvp
def clipped_sqrt(x):
    return np.sqrt(x)


@clipped_sqrt.defjvp
def clipped_sqrt_jvp(primals, tangents):
    # d sqrt at 0 is clipped to 0 instead of inf
    (x,), (t,) = primals, tangents
    y = clipped_sqrt(x)
    safe = np.where(x > 0.0, x, 1.0)
    return y, np.where(x > 0.0, t * 0.5 / np.sqrt(safe), 0.0)


def test_custom_jvp_forward_mode_uses_the_rule():
    calls = []

    @wg.custom_jvp
    def f(x):
        return np.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return np.sin(x), 10.0 * t  # deliberately not cos: shows the rule is used

    y, t = wg.jvp(f, (0.5,), (1.0,))
    assert (y, t) == (pytest.approx(np.sin(0.5)), 10.0)
    assert calls == [1]
    assert wg.derivative(f)(0.5) == 10.0
    np.testing.assert_allclose(wg.jacfwd(f)(np.array([0.1, 0.2])), 10.0 * np.eye(2))
    assert f(0.5) == np.sin(0.5)  # plain values


def test_custom_jvp_reverse_mode_transposes_the_rule():
    x0 = np.array([0.0, 4.0])
    np.testing.assert_allclose(wg.grad(lambda x: clipped_sqrt(x).sum())(x0), [0.0, 0.25])
    x = wg.tensor(x0, requires_grad=True)
    y = clipped_sqrt(x)
    assert y.grad_fn.name == "ClippedSqrtBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [0.0, 0.25])
    out, f_vjp = wg.vjp(safe_log, np.array([2.0, 4.0]))
    np.testing.assert_allclose(f_vjp(np.array([1.0, 1.0]))[0], [0.5, 0.25])


def test_custom_jvp_reverse_and_forward_agree_and_compose():
    f = lambda x: safe_log(x) * x
    assert gradcheck(f, (np.array([0.5, 2.0]),), modes=("rev", "fwd"))
    # grad of grad: the transposed rule is recorded
    assert wg.grad(wg.grad(safe_log))(2.0) == pytest.approx(-0.25)
    # forward over reverse
    np.testing.assert_allclose(wg.hessian(lambda x: safe_log(x).sum())(np.array([2.0, 4.0])),
                               np.diag([-0.25, -1.0 / 16.0]))
    # reverse over forward
    assert wg.grad(lambda x: wg.jvp(safe_log, (x,), (1.0,))[1])(2.0) == pytest.approx(-0.25)
    # nested forward
    assert wg.derivative(wg.derivative(safe_log))(2.0) == pytest.approx(-0.25)


def test_gradcheck_catches_a_wrong_custom_jvp():
    @wg.custom_jvp
    def wrong_exp(x):
        return np.exp(x)

    @wrong_exp.defjvp
    def wrong_exp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return np.exp(x), t * np.exp(x) * 1.5

    for mode in ("fwd", "rev"):
        with pytest.raises(GradcheckError, match="wrong_exp"):
            gradcheck(wrong_exp, (np.array([0.1, 0.4]),), modes=(mode,))


def test_custom_jvp_errors():
    @wg.custom_jvp
    def f(x):
        return x * 2.0

    assert f(1.0) == 2.0
    with pytest.raises(TypeError, match="No JVP defined for custom_jvp function f using defjvp"):
        wg.jvp(f, (1.0,), (1.0,))
    with pytest.raises(TypeError, match="No JVP defined for custom_jvp function f using defjvp"):
        f(wg.tensor(1.0, requires_grad=True))
    f.defjvp(lambda p, t: (p[0] * 2.0, np.ones(3)))
    with pytest.raises(ValueError, match=r"Custom JVP rule of 'f' returned a tangent of shape "
                                         r"\(3,\) for primal output 0 of shape \(\)"):
        wg.jvp(f, (1.0,), (1.0,))
    f.defjvp(lambda p, t: p[0] * 2.0)
    with pytest.raises(TypeError, match=r"Custom JVP rule of 'f' must produce a pair"):
        wg.jvp(f, (1.0,), (1.0,))


@pytest.mark.parametrize("x", [1.0, np.array(1.0), np.ones(2)], ids=["float", "0-d", "array"])
@pytest.mark.parametrize("transform", ["jvp", "jacfwd", "grad", "jacrev", "hessian"])
def test_custom_jvp_tangent_of_another_shape_is_refused_by_every_transform(transform, x):
    @wg.custom_jvp
    def f(x):
        return x * 2.0

    f.defjvp(lambda p, t: (f(p[0]), 2.0 * np.ones(3)))
    run = {
        "jvp": lambda: wg.jvp(f, (x,), (np.ones_like(x),)),
        "jacfwd": lambda: wg.jacfwd(f)(x),
        "grad": lambda: wg.grad(lambda x: np.sum(f(x)))(x),
        "jacrev": lambda: wg.jacrev(f)(x),
        "hessian": lambda: wg.hessian(lambda x: np.sum(f(x) ** 2))(x),
    }[transform]
    with pytest.raises(ValueError, match=r"Custom JVP rule of 'f' returned a tangent of shape "
                                         r"\(3,\) for primal output 0 of shape \((2,)?\)"):
        run()


def test_custom_jvp_two_arguments_and_constants():
    @wg.custom_jvp
    def mul(x, y):
        return x * y

    @mul.defjvp
    def mul_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return x * y, tx * y + x * ty

    assert wg.grad(mul, argnums=(0, 1))(3.0, 4.0) == (4.0, 3.0)
    assert wg.jvp(lambda x: mul(x, 5.0), (2.0,), (1.0,)) == (10.0, 5.0)
    x = wg.tensor(3.0, requires_grad=True)
    mul(x, wg.tensor(4.0)).backward()  # the second input is a constant
    assert x.grad == 4.0


def test_custom_jvp_with_gradient_tape():
    x = wg.Variable(4.0)
    with wg.GradientTape() as tape:
        y = clipped_sqrt(x)
    assert tape.gradient(y, x).item() == 0.25


def test_derivative_through_static_arguments_is_refused():
    @wg.custom_vjp
    def shift(x, *, by):
        return x + by

    shift.defvjp(lambda x, *, by: (x + by, None), lambda r, g: (g,))
    w = wg.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match="silently dropped"):
        shift(np.ones(2), by=w)
    assert shift(np.ones(2), by=3.0)[0] == 4.0

    static_scale = wg.custom_vjp(lambda x, factor: x * factor, nondiff_argnums=(1,))
    static_scale.defvjp(lambda x, f: (x * f, None), lambda f, r, g: (g * f,))
    with pytest.raises(TypeError, match="nondiff_argnums"):
        static_scale(np.ones(2), w)


def test_custom_jvp_rule_returning_a_complex_tangent_for_a_real_output_is_refused():
    @wg.custom_jvp
    def f(x):
        return np.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return np.sin(primals[0]), 1j * tangents[0]

    for run in (lambda: wg.jvp(f, (np.ones(2),), (np.ones(2),)),
                lambda: wg.jacfwd(f)(np.ones(2)), lambda: wg.derivative(f)(1.0)):
        with pytest.raises(TypeError, match="complex tangent .* real primal output 0"):
            run()


def test_custom_jvp_rule_returning_none_for_an_output_is_a_zero_tangent_in_every_mode():
    # forward mode read None as a zero tangent; reverse mode (which transposes the rule)
    # failed with a vjp cotangent-structure error the user never called vjp for
    @wg.custom_jvp
    def two(x):
        return x * 2.0, np.sum(x)

    @two.defjvp
    def two_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return (x * 2.0, np.sum(x)), (t * 2.0, None)

    x = np.array([1.0, 2.0])
    _, (t0, t1) = wg.jvp(two, (x,), (np.ones(2),))
    np.testing.assert_array_equal(t0, [2.0, 2.0])
    assert t1 == 0.0
    np.testing.assert_array_equal(wg.grad(lambda a: np.sum(two(a)[0]) + two(a)[1])(x),
                                  [2.0, 2.0])
    np.testing.assert_array_equal(wg.jacrev(lambda a: two(a)[1])(x), [0.0, 0.0])
    np.testing.assert_array_equal(wg.hessian(lambda a: np.sum(two(a)[0] ** 2))(x),
                                  8.0 * np.eye(2))
    xt = wg.tensor(x, requires_grad=True)
    y = two(xt)
    (y[0].sum() + y[1]).backward()
    np.testing.assert_array_equal(xt.grad, [2.0, 2.0])


def test_custom_jvp_tangent_takes_the_primal_output_dtype():
    @wg.custom_jvp
    def f(x):
        return np.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return np.sin(primals[0]), np.cos(primals[0]).astype(np.float32) * 2.0

    # the rule's float32 tangent for a float64 output became the jvp's tangent as it was
    assert wg.jvp(f, (np.ones(2),), (np.ones(2),))[1].dtype == np.float64
    assert wg.jacfwd(f)(np.ones(2)).dtype == np.float64


def test_a_jvp_rule_with_a_term_free_of_tangents_is_refused_in_reverse_mode():
    @wg.custom_jvp
    def f(x):
        return np.sin(x)

    f.defjvp(lambda p, t: (np.sin(p[0]), np.cos(p[0]) * t[0] + 1.0))
    x = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="nonzero tangent for output 0 when every input "
                                         "tangent is zero"):
        wg.grad(lambda a: f(a).sum())(x)
    t = wg.tensor(x, requires_grad=True)
    with pytest.raises(ValueError, match="must be linear in the tangents"):
        f(t).sum().backward()

    @wg.custom_jvp
    def root(x):
        return np.sqrt(x)

    # an infinite derivative at 0 gives 0 * inf = nan at zero tangents: not a term of its own
    root.defjvp(lambda p, t: (np.sqrt(p[0]), t[0] / (2 * np.sqrt(p[0]))))
    with np.errstate(divide="ignore", invalid="ignore"):
        g = wg.grad(lambda a: root(a).sum())(np.array([0.0, 4.0]))
    assert np.isinf(g[0]) and g[1] == 0.25


@pytest.mark.parametrize("tangent_out", [
    lambda x, t: np.cos(x) * t * t,  # a product of tangents: its derivative at 0 is 0
    lambda x, t: np.cos(x) * np.sin(t),  # a function of a tangent
    lambda x, t: np.cos(x) * np.abs(t),  # a branch on a tangent's sign
    lambda x, t: np.cos(x) * t + 0.1 * t ** 3,  # linear plus a small nonlinear term
], ids=["t*t", "sin(t)", "abs(t)", "t+t**3"])
def test_a_jvp_rule_not_linear_in_its_tangents_is_refused_in_reverse_mode(tangent_out):
    @wg.custom_jvp
    def f(x):
        return np.sin(x)

    f.defjvp(lambda p, t: (np.sin(p[0]), tangent_out(p[0], t[0])))
    x = np.array([1.0, 2.0])
    refused = pytest.raises(ValueError, match="is not linear in the tangents")
    with refused:
        wg.grad(lambda a: f(a).sum())(x)
    with refused:
        wg.grad(f)(1.0)
    with refused:
        wg.jacrev(f)(x)
    with refused:
        wg.vjp(f, x)[1](np.ones(2))
    with refused:
        wg.hessian(lambda a: f(a).sum())(x)
    t = wg.tensor(x)
    with wg.GradientTape() as tape:
        tape.watch(t)
        y = f(t)
    with refused:
        tape.gradient(y, t)
    with refused:  # a traced graph is checked at its example values
        wg.compile(wg.grad(lambda a: f(a).sum()))(x)
    with refused:
        wg.trace(wg.grad(f), 1.0)
    # forward mode uses the rule as written (nothing is transposed)
    np.testing.assert_allclose(wg.jvp(f, (x,), (np.ones(2),))[1], tangent_out(x, np.ones(2)))


def test_jvp_rules_linear_in_their_tangents_pass_the_dot_product_test():
    @wg.custom_jvp
    def f(x, y):
        return {"p": x * y, "s": np.sin(x)}

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return f(x, y), {"p": tx * y + x * ty, "s": np.cos(x) * tx}

    for dtype in (np.float64, np.float32, np.complex128):
        x = np.array([0.5, -1.5, 3.0], dtype=dtype)
        y = np.array([2.0, 0.25, -1.0], dtype=dtype)

        def loss(a, b):
            out = f(a, b)
            return np.sum(np.abs(out["p"]) ** 2 + np.real(out["s"]) * 1e6)

        gx, gy = wg.grad(loss, argnums=(0, 1))(x, y)
        assert gx.dtype == dtype and gy.dtype == dtype
        px, py = wg.grad(lambda a, b: np.sum(np.abs(a * b) ** 2 + np.real(np.sin(a)) * 1e6),
                         argnums=(0, 1))(x, y)
        tol = 1e-3 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(gx, px, rtol=tol)
        np.testing.assert_allclose(gy, py, rtol=tol)
    # the check evaluates the rule on plain values: nothing of it enters a traced graph
    graph = wg.trace(wg.grad(lambda a: f(a, 2.0)["s"].sum()), np.ones(3))
    literals = [np.asarray(v.value) for eq in graph.equations for v in eq.ins
                if type(v) is Literal]
    assert not any(np.any(np.abs(v - 0.6180339887498949) < 0.26) for v in literals
                   if v.dtype.kind == "f" and v.size == 3)
    np.testing.assert_allclose(graph(np.ones(3)), np.cos(np.ones(3)))
    # a cotangent of zero, an empty input, a scalar
    assert wg.grad(lambda a: 0.0 * f(a, a)["p"].sum())(np.ones(2)).tolist() == [0.0, 0.0]
    assert wg.grad(lambda a: f(a, a)["p"].sum())(np.zeros(0)).shape == (0,)
    assert wg.grad(lambda a: f(a, 3.0)["p"])(2.0) == 3.0


def test_a_custom_function_with_several_outputs_takes_complex_inputs_in_reverse_mode():
    @wg.custom_vjp
    def both(x):
        return x * x, np.sin(x)

    both.defvjp(lambda x: (both(x), x), lambda x, g: (g[0] * 2 * x + g[1] * np.cos(x),))

    @wg.custom_jvp
    def pair(x):
        return [x * x, np.sin(x)]

    pair.defjvp(lambda p, t: (pair(p[0]), [2 * p[0] * t[0], np.cos(p[0]) * t[0]]))
    z = np.array([0.5 + 1.0j, -1.5 + 0.25j])
    # Re(z² + sin z): the holomorphic derivative 2z + cos z times the cotangent 1, as
    # jax.grad(lambda z: jnp.sum(jnp.real(z * z + jnp.sin(z))))(z) gives it
    want = 2 * z + np.cos(z)
    for f in (both, pair):
        got = wg.grad(lambda a, f=f: np.sum(np.real(f(a)[0] + f(a)[1])))(z)
        np.testing.assert_allclose(got, want, rtol=1e-12)
