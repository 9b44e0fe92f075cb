"""Misuse raises an error that names the problem and the fix."""

import numpy as np
import pytest

import wengert as wg


def test_backward_twice_without_retain_graph():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (wg.numpy.sin(x) * x).sum()
    y.backward()
    msg = r"backward through the graph a second time.*retain_graph=True"
    with pytest.raises(RuntimeError, match=msg):
        y.backward()


def test_backward_of_non_scalar_needs_gradient():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    msg = "grad can be implicitly created only for scalar outputs"
    with pytest.raises(RuntimeError, match=msg):
        (x * 2).backward()


def test_backward_of_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (wg.tensor(1.0) * 2).backward()
    x = wg.tensor(1.0, requires_grad=True)
    with wg.no_grad():
        y = x * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_gradient_seed_of_wrong_shape():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape.*\(3,\).*\(2,\)"):
        (x * 2).backward(gradient=np.ones(3))


@pytest.mark.parametrize("bad", [1, np.array([1, 2]), np.array([True]), "x"])
def test_grad_of_non_float_inputs(bad):
    with pytest.raises(TypeError, match="floating point"):
        wg.grad(lambda x: (x * 1.0).sum())(bad)


def test_grad_of_object_array():
    with pytest.raises(TypeError, match="floating point"):
        wg.grad(lambda x: x)(np.array([object()]))


def test_tensor_from_strings_or_objects():
    with pytest.raises(TypeError, match="numeric"):
        wg.tensor(["a", "b"])
    with pytest.raises(TypeError, match="numeric"):
        wg.tensor([object()])


def test_grad_of_non_scalar_output_suggests_sum_or_jacobian():
    with pytest.raises(TypeError, match=r"scalar output.*sum\(\).*jacobian"):
        wg.grad(lambda x: x * 2)(np.ones(3))


def test_shape_mismatch_names_the_op():
    x = wg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(ValueError, match=r"^add: .*shapes"):
        x + np.ones(4)
    with pytest.raises(ValueError, match="matmul"):
        x @ np.ones((4, 2))


def test_numpy_function_without_rule_raises_type_error():
    x = wg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(TypeError, match=r"np\.fft"):
        np.fft.fft(x)
    with pytest.raises(TypeError, match="np.spacing"):
        np.spacing(x)
    # without gradients the plain NumPy result is returned
    assert np.fft.fft(wg.tensor(np.ones(3)))[0] == 3


def test_vjp_cotangent_mismatch():
    _, f_vjp = wg.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match="cotangent shape"):
        f_vjp(np.ones(4))


def test_inplace_broadcast_target():
    t = wg.tensor(np.ones(3))
    with pytest.raises(ValueError):
        t += np.ones((2, 3))
