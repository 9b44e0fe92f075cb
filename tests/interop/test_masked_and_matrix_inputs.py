"""Masked arrays and ``np.matrix`` are refused wherever they would enter a computation.

NumPy's masked arithmetic leaves masked entries out, and ``np.matrix`` multiplies with
``*``; wengert computes with plain arrays, so converting either silently would
differentiate another function (``grad`` of ``sum(x**2)`` at a masked array gave the
gradient of the unmasked sum, ``x * m`` with a closure masked array counted the masked
entry, ``m * t`` multiplied elementwise). Each entry point refuses with the conversion
to write, as HIPS autograd refuses both types and JAX masked arrays.
"""

import warnings

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

MASKED = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASK_FIX = r"x\.filled\(value\)"
MATRIX_FIX = r"np\.asarray\(m\).*@"


def _sq(x):
    return np.sum(x * x)


@pytest.mark.parametrize("value, fix", [(MASKED, MASK_FIX), (MATRIX, MATRIX_FIX)],
                         ids=["masked", "matrix"])
@pytest.mark.parametrize("transform", [
    lambda x: wg.grad(_sq)(x),
    lambda x: wg.value_and_grad(_sq)(x),
    lambda x: wg.vjp(_sq, x),
    lambda x: wg.jvp(_sq, (x,), (np.ones(np.shape(x)),)),
    lambda x: wg.jvp(_sq, (np.ones(np.shape(x)),), (x,)),  # as the tangent
    lambda x: wg.linearize(_sq, x),
    lambda x: wg.jacfwd(lambda v: v * 2.0)(x),
    lambda x: wg.jacrev(lambda v: v * 2.0)(x),
    lambda x: wg.jacobian(lambda v: v * 2.0)(x),
    lambda x: wg.hessian(_sq)(x),
    lambda x: wg.hvp(_sq, x, np.ones(np.shape(x))),
    lambda x: wg.tensor(x),
    lambda x: wg.tensor(x, requires_grad=True),
    lambda x: wg.Variable(x),
    lambda x: wg.Dual(x, np.ones(np.shape(x))),
    lambda x: wg.Dual(np.ones(np.shape(x)), x),
    lambda x: wg.compile(_sq)(x),
    lambda x: wg.trace(_sq, x),
], ids=["grad", "value_and_grad", "vjp", "jvp", "jvp-tangent", "linearize", "jacfwd",
        "jacrev", "jacobian", "hessian", "hvp", "tensor", "tensor-rg", "Variable", "Dual",
        "Dual-tangent", "compile", "trace"])
def test_refused_as_inputs(transform, value, fix):
    with pytest.raises(TypeError, match=fix):
        transform(value)


def test_masked_array_as_an_operand_of_a_traced_value():
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    for op in (lambda: t + MASKED, lambda: np.add(t, MASKED), lambda: MASKED + t,
               lambda: np.ma.sum(t), lambda: np.multiply(MASKED, t)):
        with pytest.raises(TypeError, match=MASK_FIX):
            op()
    d = wg.Dual(np.ones(2), np.ones(2))
    for op in (lambda: d * MASKED, lambda: MASKED * d):
        with pytest.raises(TypeError, match=MASK_FIX):
            op()
    # a closure masked array inside a transform: NumPy's sum leaves entry 1 out, so the
    # gradient would be [1, 0], not the [1, 1] of the plain array: refused
    with pytest.raises(TypeError, match=MASK_FIX):
        wg.grad(lambda x: np.sum(x * MASKED))(np.ones(2))
    with pytest.raises(TypeError, match=MASK_FIX):
        wg.jvp(lambda x: np.sum(x * MASKED), (np.ones(2),), (np.ones(2),))
    with pytest.raises(TypeError, match=MASK_FIX):
        wg.compile(lambda x: np.sum(x * MASKED))(np.ones(2))


def test_matrix_as_an_operand_of_a_traced_value():
    t = wg.tensor(np.eye(2), requires_grad=True)
    for op in (lambda: MATRIX * t, lambda: t * MATRIX, lambda: t @ MATRIX,
               lambda: np.multiply(t, MATRIX), lambda: t ** 2 + MATRIX):
        with pytest.raises(TypeError, match=MATRIX_FIX):
            op()
    with pytest.raises(TypeError, match=MATRIX_FIX):
        wg.grad(lambda x: np.sum(MATRIX * x))(np.ones((2, 2)))
    with pytest.raises(TypeError, match=MATRIX_FIX):
        wg.derivative(lambda s: np.sum(s * MATRIX))(1.0)


def test_the_conversions_the_messages_name_work():
    g = wg.grad(lambda x: np.sum(x ** 2))(MASKED.filled(0.0))
    np.testing.assert_array_equal(g, [2.0, 0.0])
    g = wg.grad(lambda x: np.sum(x ** 2))(MASKED.compressed())
    np.testing.assert_array_equal(g, [2.0])
    m = np.asarray(MATRIX)
    g = wg.grad(lambda x: np.sum(x @ x))(m)  # what np.matrix's x * x computes
    np.testing.assert_allclose(g, wg.jacrev(lambda x: np.sum(x @ x))(m))
    # plain tensors (no gradient) still meet masked arrays as NumPy does
    assert isinstance(MASKED + wg.tensor([1.0, 1.0]), np.ma.MaskedArray)


def test_vectorize_and_apply_along_axis_refuse_them_beside_traced_values():
    # NumPy's loops keep the masked (matrix) arithmetic; wengert's, which run where a
    # derivative flows, would read the data beneath
    ma = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    mat = np.matrix([[1.0, 2.0, 3.0]])
    x = np.array([0.5, 1.0, 2.0])
    for other in (ma, mat):
        with pytest.raises(TypeError, match="masked|np.matrix"):
            wg.grad(lambda x, o=other: np.sum(wnp.vectorize(lambda a, b: a * b)(x, o)))(x)
    with pytest.raises(TypeError, match="masked"):
        wg.grad(lambda x: np.sum(wnp.apply_along_axis(lambda r, m: r * 2.0, 0, x, ma)))(x)
    with pytest.raises(TypeError, match="masked"):
        wg.grad(lambda x: np.sum(wnp.vectorize(
            lambda a: a * 2.0 if a > 1.0 else np.ma.masked)(x)))(x)
    # without a traced value, NumPy's own (which NumPy < 2.4 cannot do either)
    try:
        expected = np.vectorize(lambda a, b: a * b)(x, ma)
    except AttributeError:
        return
    got = wnp.vectorize(lambda a, b: a * b)(x, ma)
    assert np.ma.is_masked(got) and np.ma.allequal(got, expected)


def test_cotangents_seeds_and_checks_refuse_them():
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="vjp \\(cotangent\\).*masked"):
        wg.vjp(lambda x: x * 2.0, x)[1](MASKED)
    with pytest.raises(TypeError, match="backward.*masked"):
        (wg.tensor(x, requires_grad=True) * 2.0).backward(MASKED)
    t = wg.tensor(x, requires_grad=True)
    with pytest.raises(TypeError, match="grad = .*masked"):
        t.grad = MASKED
    v = wg.Variable(x)
    with wg.GradientTape() as tape:
        y = v * 2.0
    with pytest.raises(TypeError, match="output_gradients.*masked"):
        tape.gradient(y, v, output_gradients=MASKED)
    with pytest.raises(TypeError, match="gradcheck.*masked"):
        wg.check_grads(lambda a: np.sum(a * 2.0), (MASKED,))


def test_custom_rules_refuse_them_beside_traced_values():
    @wg.custom_vjp
    def times(a, b):
        return a * b

    times.defvjp(lambda a, b: (times(a, b), (a, b)), lambda r, g: (g * r[1], g * r[0]))

    @wg.custom_jvp
    def plus(a, b):
        return a + b

    plus.defjvp(lambda p, t: (p[0] + p[1], t[0] + t[1]))
    x = np.array([1.0, 2.0])
    for other in (MASKED, MATRIX[:1]):
        with pytest.raises(TypeError, match="masked|np.matrix"):
            wg.grad(lambda a, o=other: np.sum(times(a, o)))(x)
        with pytest.raises(TypeError, match="masked|np.matrix"):
            wg.grad(lambda a, o=other: np.sum(plus(a, o)))(x)
        with pytest.raises(TypeError, match="masked|np.matrix"):
            wg.jvp(lambda a, o=other: np.sum(plus(a, o)), (x,), (x,))
    assert np.ma.is_masked(times(x, MASKED))  # on plain values, the function itself
