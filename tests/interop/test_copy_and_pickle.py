"""``copy.copy``, ``copy.deepcopy`` and ``pickle`` of tensors and dual numbers: a copy of a
value being differentiated is a recorded copy (its derivative flows through it, as JAX's
tracers), a user's leaf copies into a new leaf (as PyTorch), a dual number keeps the
identity of its perturbation, and pickling a value that carries a graph or a transform's
tangent refuses instead of dropping it."""

from __future__ import annotations

import copy
import pickle

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp

COPIES = {"copy.copy": copy.copy, "copy.deepcopy": copy.deepcopy}


@pytest.mark.parametrize("name", COPIES)
def test_a_copy_inside_a_transform_keeps_the_derivative(name):
    copier = COPIES[name]

    def f(x):
        return wnp.sum(copier(x) ** 2)

    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(wg.grad(f)(x), [2.0, 4.0])
    primal, tangent = wg.jvp(f, (x,), (np.ones(2),))
    assert float(primal) == 5.0 and float(tangent) == 6.0
    np.testing.assert_array_equal(wg.hessian(f)(x), 2.0 * np.eye(2))
    np.testing.assert_array_equal(wg.jacfwd(lambda x: copier(x) * 3.0)(x), 3.0 * np.eye(2))


def test_a_deep_copy_of_a_pytree_inside_grad_keeps_every_derivative():
    def f(params):
        state = copy.deepcopy(params)
        state["w"] = state["w"] * 2.0
        return wnp.sum(state["w"] * state["b"][0])

    g = wg.grad(f)({"w": np.array([1.0, 2.0]), "b": [np.array(3.0)]})
    np.testing.assert_array_equal(g["w"], [6.0, 6.0])
    assert float(g["b"][0]) == 6.0


def test_a_deep_copy_of_a_non_leaf_stays_on_the_graph():
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    u = copy.deepcopy(t * 2.0)
    wnp.sum(u ** 2).backward()
    np.testing.assert_array_equal(t.grad, [8.0, 16.0])


def test_a_deep_copy_of_a_leaf_is_a_new_leaf_as_in_pytorch():
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    wnp.sum(t * t).backward()
    u = copy.deepcopy(t)
    assert u is not t and u.is_leaf and u.requires_grad
    np.testing.assert_array_equal(u.grad, [2.0, 4.0])
    assert u.grad is not t.grad
    wnp.sum(u * 3.0).backward()
    np.testing.assert_array_equal(t.grad, [2.0, 4.0])  # the copy's graph is its own
    v = wg.Variable([1.0, 2.0], name="w", trainable=False)
    w = copy.deepcopy(v)
    assert type(w) is wg.Variable and w.name == "w" and not w.trainable
    w.assign_add(1.0)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_a_copied_or_pickled_dual_number_keeps_its_perturbation():
    for copier in (copy.copy, copy.deepcopy, lambda d: pickle.loads(pickle.dumps(d))):
        d = copier(wg.Dual(1.0, 1.0))
        y = d * wg.Dual(2.0, 1.0)
        assert (y.primal, y.tangent) == (2.0, 3.0)
        e = copier(wg.Dual(np.ones(2), np.ones(2)))
        z = e * wg.Dual(np.full(2, 2.0), np.ones(2))
        np.testing.assert_array_equal(z.tangent, [3.0, 3.0])


def test_pickling_a_value_being_differentiated_raises():
    with pytest.raises(TypeError, match="pickle.*detach"):
        wg.grad(lambda x: wnp.sum(pickle.loads(pickle.dumps(x)) ** 2))(np.ones(2))
    with pytest.raises(TypeError, match="pickle.*primal"):
        wg.jvp(lambda x: wnp.sum(pickle.loads(pickle.dumps(x)) ** 2), (np.ones(2),),
               (np.ones(2),))
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="pickle.*detach"):
        pickle.dumps(t * 2.0)
    u = pickle.loads(pickle.dumps(t))  # a leaf pickles, as in PyTorch
    assert u.requires_grad and u.is_leaf
    np.testing.assert_array_equal(u.detach().numpy(), [1.0, 2.0])


def test_a_copy_inside_a_compiled_function_is_a_step_of_its_graph():
    def f(x):
        return wnp.sum(copy.deepcopy(x) ** 2) + wnp.sum(copy.copy(x))

    x = np.array([1.0, 2.0])
    assert wg.compile(f)(x) == 8.0
    np.testing.assert_array_equal(wg.compile(wg.grad(f))(x), [3.0, 5.0])
    np.testing.assert_array_equal(wg.grad(wg.compile(f))(x), [3.0, 5.0])
    with pytest.raises(TypeError, match="cannot pickle a traced value"):
        wg.compile(lambda x: pickle.dumps(x))(x)
