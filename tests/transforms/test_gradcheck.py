"""wengert.testing: gradcheck and check_grads pass on right rules and fail on wrong ones."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.bind import apply
from wengert.core.op import Op
from wengert.ops.broadcast import sum_to
from wengert.testing import GradcheckError, check_grads, gradcheck

# -- deliberately wrong primitives (custom Op records, applied with `apply`) ----------
#: sin whose VJP uses sin instead of cos.
WRONG_SIN = Op("wrong_sin", np.sin, (lambda g, ans, x: g * np.sin(x),))
#: x * y whose VJP for y is off by a factor of 2.
WRONG_MUL = Op(
    "wrong_mul",
    np.multiply,
    (lambda g, ans, x, y: g * y, lambda g, ans, x, y: 2.0 * g * x),
    broadcasting=True,
    unbroadcast=sum_to,
)
#: x ** 3 with the right first derivative, written with raw NumPy so its VJP does not
#: differentiate again: correct to first order, wrong (zero) to second order.
RAW_CUBE = Op(
    "raw_cube",
    lambda x: x**3,
    (lambda g, ans, x: np.asarray(g) * 3.0 * np.asarray(getattr(x, "_value", x)) ** 2,),
)
#: a rule that returns NaN.
NAN_RULE = Op("nan_rule", np.exp, (lambda g, ans, x: g * np.nan,))


def wrong_sin(x):
    return apply(WRONG_SIN, x)


def wrong_mul(x, y):
    return apply(WRONG_MUL, x, y)


def raw_cube(x):
    return apply(RAW_CUBE, x)


X = np.array([0.3, -0.7, 1.1])
M = np.array([[0.2, -0.5, 0.9], [1.3, 0.4, -1.0]])


# -- passes on correct functions -------------------------------------------------------
@pytest.mark.parametrize(
    "f, inputs",
    [
        (lambda x: np.sum(np.sin(x) * x), X),  # scalar output
        (lambda x: np.sin(x) * x, X),  # array output
        (lambda x: np.tanh(x), M),  # 2-d
        (lambda x, y: np.exp(x) * y, (M, np.array([0.5, -1.5, 2.0]))),  # broadcasting
        (lambda x, y, z: np.sum(x * y + np.cos(z)), (X, X[::-1].copy(), M)),  # three inputs
        (lambda x: x * x, 0.7),  # Python float
        (lambda x: x * x, np.float64(0.7)),  # NumPy scalar
        (lambda x: np.exp(x), np.array(0.3)),  # 0-d array
        (lambda x: (np.sin(x), np.cos(x).sum()), X),  # tuple output
        (lambda x: {"a": x * 2.0, "b": np.square(x)}, M),  # dict output
    ],
)
def test_passes_on_correct_functions(f, inputs):
    assert gradcheck(f, inputs) is True


def test_single_array_and_tuple_of_one_are_the_same():
    assert gradcheck(np.sin, X)
    assert gradcheck(np.sin, (X,))


def test_integer_inputs_are_cast_to_float64():
    assert gradcheck(lambda x: x * x, np.array([1, 2, 3]))


def test_float32_inputs_are_checked_in_float64():
    x = np.array([0.1, 0.2], dtype=np.float32)
    assert gradcheck(lambda x: np.exp(x), x)
    assert x.dtype == np.float32  # the caller's array is not modified


def test_large_input_uses_projections():
    x = np.linspace(-1.0, 1.0, 5000)
    assert gradcheck(lambda x: np.tanh(x) * x, x)  # 5000 x 5000 Jacobian
    assert gradcheck(lambda x: np.sum(np.sin(x) ** 2), x)  # 1 x 5000


def test_large_output_small_input_uses_projections():
    t = np.linspace(0.0, 1.0, 5000)
    assert gradcheck(lambda a: np.sin(a * t), 0.8)


def test_zero_gradient_function_passes():
    x = np.array([0.25, 1.5, -2.7])
    assert gradcheck(np.floor, x)


def test_output_not_depending_on_input_passes():
    assert gradcheck(lambda x, y: x * 2.0, (X, M))


# -- fails on wrong rules ----------------------------------------------------------------
def test_wrong_rule_raises_with_worst_entries():
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_sin, X)
    msg = str(info.value)
    assert "input 0" in msg
    for word in ("analytic", "numeric", "abs error"):
        assert word in msg
    # the worst entry is named with its analytic and numeric values
    errs = np.abs(np.sin(X) - np.cos(X))
    k = int(np.argmax(errs))
    assert f"({k},)" in msg
    assert f"{np.sin(X)[k]:.6e}" in msg
    assert f"{np.cos(X)[k]:.6e}" in msg


def test_gradcheck_error_is_an_assertion_error():
    assert issubclass(GradcheckError, AssertionError)
    with pytest.raises(AssertionError):
        gradcheck(wrong_sin, X)


def test_wrong_rule_returns_false_without_raising():
    assert gradcheck(wrong_sin, X, raise_exception=False) is False


def test_message_names_the_wrong_input_only():
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_mul, (X, X[::-1].copy()))
    msg = str(info.value)
    assert "input 1" in msg
    assert "input 0" not in msg


def test_table_has_at_most_five_rows():
    x = np.linspace(0.1, 1.0, 20)
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_sin, x)
    msg = str(info.value)
    assert "20 of 400 entries" in msg
    rows = [line for line in msg.splitlines() if line.strip().startswith("(")]
    assert len(rows) == 5


def test_wrong_rule_caught_by_projections():
    x = np.linspace(0.1, 1.0, 5000)
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_sin, x)
    msg = str(info.value)
    assert "input 0" in msg and "projection" in msg
    assert gradcheck(wrong_sin, x, raise_exception=False) is False


def test_wrong_rule_under_broadcasting():
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda x, y: np.sum(wrong_mul(x, y)), (M, np.array([1.0, 2.0, 3.0])))


def test_tolerances_are_used():
    # A rule that is 1e-4 off in relative terms passes rtol=1e-3 and fails rtol=1e-6.
    slightly = Op("slightly_off", lambda x: 2.0 * x, (lambda g, ans, x: g * (2.0 * (1 + 1e-4)),))
    f = lambda x: apply(slightly, x)
    assert gradcheck(f, X, rtol=1e-3)
    assert not gradcheck(f, X, rtol=1e-6, atol=1e-9, raise_exception=False)


# -- NaN and inf are failures ----------------------------------------------------------
def test_nan_in_the_rule_fails():
    with pytest.raises(GradcheckError, match="nan"):
        gradcheck(lambda x: apply(NAN_RULE, x), X)


def test_nan_in_the_function_fails():
    # log of a negative number: NaN value, NaN finite differences, NaN gradient
    assert gradcheck(np.log, np.array([-1.0, 2.0]), raise_exception=False) is False


def test_nan_only_in_the_finite_differences_fails():
    # sqrt'(0) = inf analytically; finite differences step into the negative domain
    with pytest.raises(GradcheckError) as info:
        gradcheck(np.sqrt, np.array([0.0, 1.0]))
    assert "nan" in str(info.value) or "inf" in str(info.value)


def test_nan_in_projection_mode_fails():
    x = np.linspace(0.1, 1.0, 5000)
    f = lambda x: apply(NAN_RULE, x)
    assert gradcheck(f, x, raise_exception=False) is False


# -- misuse -------------------------------------------------------------------------------
def test_non_real_inputs_are_rejected():
    with pytest.raises(TypeError, match="bool"):
        gradcheck(lambda x: x, True)
    with pytest.raises(TypeError, match="dtype <U1"):
        gradcheck(lambda x: x, np.array(["a"]))


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="mode"):
        gradcheck(np.sin, X, modes=("sideways",))


# -- check_grads ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "f, args",
    [
        (lambda x: np.sum(np.sin(x) * x), (X,)),
        (lambda x, y: np.exp(0.3 * x) * y, (M, np.array([0.5, -1.5, 2.0]))),
        (lambda x: np.tanh(x) ** 2, X),
        (lambda x: x * x * x, 0.4),
    ],
)
def test_check_grads_second_order(f, args):
    assert check_grads(f, args, order=2) is True


def test_check_grads_third_order():
    assert check_grads(lambda x: np.sin(x) * np.exp(0.5 * x), X, order=3)


def test_check_grads_first_order_catches_wrong_rule():
    with pytest.raises(GradcheckError, match="first"):
        check_grads(wrong_sin, (X,), order=2)


def test_check_grads_second_order_catches_rule_that_does_not_differentiate():
    x = np.array([0.5, -1.2])
    assert gradcheck(raw_cube, x)  # the first derivative is right
    with pytest.raises(GradcheckError, match="order-2"):
        check_grads(raw_cube, (x,), order=2)  # but its rule is not differentiable


def test_check_grads_rejects_order_zero():
    with pytest.raises(ValueError):
        check_grads(np.sin, X, order=0)


def test_forward_mode():
    assert gradcheck(lambda x: np.sin(x) * x, X, modes=("fwd",))
    assert check_grads(lambda x: np.sin(x) * x, X, order=2, modes=("fwd", "rev"))


@wg.custom_vjp
def _sin_cut_cotangent(x):
    return np.sin(x)


# Right values, but the pullback does not depend on the cotangent as a function: its
# derivative with respect to v is zero (forward mode through it loses the tangent).
_sin_cut_cotangent.defvjp(lambda x: (np.sin(x), x),
                          lambda x, g: (wg.stop_gradient(g) * np.cos(x),))


def test_check_grads_second_order_differentiates_with_respect_to_the_cotangent():
    """HIPS autograd's check_grads perturbs the cotangent too; holding it fixed missed
    a pullback that is wrong as a function of v."""
    x = np.array([0.5, -1.2])
    assert gradcheck(_sin_cut_cotangent, x)
    with pytest.raises(GradcheckError, match="order-2"):
        check_grads(_sin_cut_cotangent, (x,), order=2)
    assert check_grads(np.sin, (x,), order=2, modes=("rev", "fwd"))
