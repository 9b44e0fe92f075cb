"""Edge cases that work rather than crash or raise an internal error: forward mode
through every primitive, item assignment under ``jvp``, pytrees with namedtuples,
size-0 inputs, leaves made inside ``jvp``, ``check_grads`` on pytrees."""

from __future__ import annotations

import collections

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp

X3 = np.array([0.3, -1.2, 2.0])
A = np.array([[2.0, 0.5], [0.3, 1.5]])


def softmax_expectation(x):
    """A max-shifted softmax (the numerically stable form) against x."""
    e = np.exp(x - np.max(x))
    return np.sum(e / np.sum(e) * x)


def _fd_hessian(f, x, eps=1e-5):
    n = x.size
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            h[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (
                4 * eps * eps)
    return h


@pytest.mark.parametrize("fun", [
    softmax_expectation,
    lambda x: np.max(x) * np.min(x) + np.sum(np.sort(x) ** 2 * np.arange(3.0)),
    lambda x: np.linalg.norm(x) ** 3,
    lambda x: np.sum(x.astype(np.float64) ** 3 * x.astype(np.float32).astype(float) * 0.0),
    lambda x: np.sum(x, dtype=np.float64) ** 2,
    lambda x: np.linalg.norm(x, ord=np.inf) * np.sum(x ** 2),
], ids=["softmax", "max-min-sort", "norm", "astype", "sum-dtype", "inf-norm"])
def test_hessians_through_every_kind_of_reduction(fun):
    want = _fd_hessian(fun, X3)
    for how in (wg.hessian(fun), wg.jacfwd(wg.jacfwd(fun)), wg.jacrev(wg.jacrev(fun)),
                wg.jacfwd(wg.jacrev(fun)), wg.jacrev(wg.jacfwd(fun))):
        np.testing.assert_allclose(how(X3), want, rtol=1e-4, atol=1e-6)


def test_einsum_slogdet_det_in_forward_mode():
    out, t = wg.jvp(lambda a: np.einsum("ij,jk->ik", a, a), (A,), (A,))
    np.testing.assert_allclose(t, 2 * A @ A)
    sign_logdet = wg.jvp(lambda a: np.linalg.slogdet(a)[1], (A,), (A,))
    assert sign_logdet[1] == pytest.approx(2.0)  # d log det (A + tA) / dt = tr(A⁻¹ A)
    second = wg.jacfwd(wg.jacfwd(np.linalg.det))(A)
    # det is bilinear in rows for 2x2: d²det/da_ij da_kl is ±1 on the cross terms
    expected = np.zeros((2, 2, 2, 2))
    expected[0, 0, 1, 1] = expected[1, 1, 0, 0] = 1.0
    expected[0, 1, 1, 0] = expected[1, 0, 0, 1] = -1.0
    np.testing.assert_allclose(second, expected, atol=1e-12)
    np.testing.assert_allclose(wg.hessian(lambda a: np.einsum("ii->", a @ a))(A).reshape(4, 4),
                               _fd_hessian(lambda v: np.trace(v.reshape(2, 2) @ v.reshape(2, 2)),
                                           A.ravel()), atol=1e-5)


def test_item_assignment_in_forward_mode_and_tall_jacobians():
    def scatter(x):
        y = x * 0.0
        y[1] = x[0] * 2.0
        y[2] += x[2] ** 2
        return y

    out, t = wg.jvp(scatter, (X3,), (np.ones(3),))
    np.testing.assert_allclose(out, [0.0, 0.6, 4.0])
    np.testing.assert_allclose(t, [0.0, 2.0, 4.0])

    def tall(x):  # 2 inputs, 4 outputs: wg.jacobian takes forward mode
        y = wnp.concatenate([x, x]) * 1.0
        y[0] = x[1] * x[0]
        return y

    x = np.array([1.0, 2.0])
    want = np.array([[2.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(wg.jacobian(tall)(x), want)
    np.testing.assert_allclose(wg.jacfwd(tall)(x), want)
    np.testing.assert_allclose(wg.jacrev(tall)(x), want)


Params = collections.namedtuple("Params", "w b")


def model(p, x):
    return np.sum((p.w * x + p.b) ** 2)


def test_namedtuples_are_containers_in_every_transform():
    p = Params(np.array([1.0, 2.0]), 0.5)
    x = np.array([3.0, -1.0])
    g = wg.grad(model)(p, x)
    assert type(g) is Params
    r = p.w * x + p.b
    np.testing.assert_allclose(g.w, 2 * r * x)
    assert g.b == pytest.approx(np.sum(2 * r))
    out, pull = wg.vjp(lambda p: Params(p.w * 2.0, p.b), p)
    (ct,) = pull(Params(np.ones(2), 1.0))
    assert type(ct) is Params and ct.b == 1.0
    po, to = wg.jvp(lambda p: Params(p.w * p.b, p.b), (p,), (Params(np.ones(2), 1.0),))
    assert type(po) is Params and type(to) is Params
    np.testing.assert_allclose(to.w, 0.5 + p.w)


def test_no_internal_tensor_leaks_into_returned_pytrees():
    def with_aux(x):
        return x * 2.0, {"seen": Params(x, x * x), "list": [x]}

    g, aux = wg.grad(with_aux, has_aux=True)(3.0)
    assert g == 2.0 and type(aux["seen"]) is Params
    for leaf in (aux["seen"].w, aux["seen"].b, aux["list"][0]):
        assert not isinstance(leaf, wg.Tensor)
    (out, aux), _ = wg.value_and_grad(with_aux, has_aux=True)(3.0)
    assert aux["seen"].b == 9.0 and not isinstance(aux["seen"].b, wg.Tensor)
    _, _, aux = wg.vjp(with_aux, 3.0, has_aux=True)
    assert not isinstance(aux["list"][0], wg.Tensor)
    _, _, aux = wg.jvp(with_aux, (3.0,), (1.0,), has_aux=True)
    assert not isinstance(aux["seen"].w, (wg.Tensor, wg.Dual))


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0)])
def test_size_zero_inputs(shape):
    x = np.zeros(shape)
    n = x.size
    assert wg.jacfwd(lambda v: v * 2.0)(x).shape == shape + shape
    assert wg.jacrev(lambda v: v * 2.0)(x).shape == shape + shape
    assert wg.jacobian(lambda v: np.sum(v))(x).shape == shape
    assert wg.hessian(lambda v: np.sum(v ** 2))(x).shape == shape + shape
    assert wg.grad(lambda v: np.sum(v ** 2))(x).shape == shape
    assert wg.hvp(lambda v: np.sum(v ** 2), x, x).shape == shape
    assert n == 0


def test_a_leaf_made_inside_jvp():
    def leaf_inside(x):
        w = wg.tensor(3.0, requires_grad=True)
        return x * w

    assert wg.jvp(leaf_inside, (2.0,), (1.0,)) == (6.0, 3.0)

    def backward_inside(x):  # forward over the user's reverse mode
        w = wg.tensor(3.0, requires_grad=True)
        (x * w * w).backward()
        return w.grad  # 2 x w

    assert wg.jvp(backward_inside, (2.0,), (1.0,)) == (12.0, 6.0)


def test_check_grads_and_gradcheck_take_pytrees():
    assert wg.check_grads(lambda d: d["a"] * np.sin(d["b"]), ({"a": 1.5, "b": 0.3},),
                          order=2, modes=("rev", "fwd"))
    p = Params(np.array([1.0, 2.0]), 0.5)
    assert wg.gradcheck(model, (p, np.array([3.0, -1.0])))
    with pytest.raises(wg.GradcheckError):
        bad = wg.custom_vjp(lambda p: p.w * p.b)
        bad.defvjp(lambda p: (p.w * p.b, p), lambda p, g: (Params(g * p.b, 2 * np.sum(g * p.w)),))
        wg.gradcheck(lambda p: np.sum(bad(p)), (p,))


def test_jacfwd_of_jacfwd_through_a_stack_of_matrices_times_a_vector():
    # The inner jacfwd's batch of tangents for W meets the outer one's for x in W @ x.
    x0, w0 = np.array([1.0, 2.0, 3.0]), np.arange(6.0).reshape(2, 3) / 10

    def inner(x):
        return wg.jacfwd(lambda w: np.sum(np.tanh(w @ x) ** 2))(w0)
    np.testing.assert_allclose(wg.jacfwd(inner)(x0), wg.jacrev(inner)(x0), atol=1e-12)
