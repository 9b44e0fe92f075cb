"""Tensors made inside a transform (``wg.tensor(...)`` in the function given to ``grad``)
and written in place (``a *= x``, ``a[i] = v``, ``np.f(..., out=a)``): they join the
transform's level, keep the gradient that flows through the write, and refuse to hold
values of other kinds (a dual number, an outer graph's value)."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg

X = np.array([1.5, -2.25, 0.7])


# -- in-place writes into a tensor made inside grad ----------------------------------------
def test_tensor_made_inside_grad_multiplied_in_place_saves_its_old_value():
    """``a = wg.tensor(ones); a *= x``: the multiply saves the value ``a`` had, not the
    tensor that the write then changes to ``x``, so the rule ``g·a`` reads ones: the
    gradient is ``c`` (an ndarray), not ``c·x``."""
    c = np.array([1.0, 2.0, 3.0])

    def f(x):
        a = wg.tensor(np.ones(3))
        a *= x
        return a

    _, pullback = wg.vjp(f, X)
    (g,) = pullback(c)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, c)

    def h(x):
        a = wg.tensor(np.full(3, 2.0))
        np.multiply(a, x, out=a)
        np.divide(1.0, a, out=a)
        a[[0, 2]] *= x[[1, 2]]
        return np.sum(a)

    def ref(x):
        a = 1.0 / (2.0 * x)
        a = a * np.stack([x[1], 1.0 + 0.0 * x[0], x[2]])
        return np.sum(a)

    np.testing.assert_allclose(wg.grad(h)(X), wg.grad(ref)(X))
    np.testing.assert_allclose(wg.hessian(h)(X), wg.hessian(ref)(X))


def test_tensor_made_inside_a_nested_grad_written_in_place_passes_the_version_check():
    """The outer level's node also saves the fresh tensor; the write is the op's own, so
    its version check does not report "modified by an inplace operation"."""

    def f(x):
        def inner(y):
            a = wg.tensor(np.full(3, 2.0))
            a *= y
            a *= x
            return np.sum(a * a)

        return np.sum(wg.grad(inner)(x) * x)

    def ref(x):
        return np.sum(wg.grad(lambda y: np.sum((2.0 * y * x) ** 2))(x) * x)

    np.testing.assert_allclose(wg.grad(f)(X), wg.grad(ref)(X))


def test_view_of_a_tensor_made_inside_grad_follows_its_base_into_grad():
    """``v = a[1]`` then ``a[1] = sin(x)``: the view joins grad's level with its base, so
    ``v`` depends on ``x`` (left at the outer level it would look constant and its gradient
    would be silently zero)."""

    def f(x):
        a = wg.tensor(np.zeros((2, 3)))
        v = a[1]
        a[1] = np.sin(x)
        return np.sum(v * v)

    np.testing.assert_allclose(wg.grad(f)(X), 2 * np.sin(X) * np.cos(X))
    assert wg.check_grads(f, (X,), order=2, modes=("rev",))


def test_out_into_a_tensor_made_inside_grad_keeps_the_gradient():
    x = np.array([1.5, -2.25, 0.7])

    def f(x):
        a = wg.tensor(np.zeros(3))
        np.sin(x, out=a)
        return np.sum(a)

    np.testing.assert_allclose(wg.grad(f)(x), np.cos(x))


def test_tensor_made_inside_grad_and_written_keeps_the_gradient():
    """``a = wg.tensor(zeros); a[:] = sin(x)`` inside ``grad`` brings ``a`` to grad's
    level: the sum depends on ``x`` (a tensor left at the outer level would make it look
    constant and the gradient silently zero)."""
    x = np.array([1.5, -2.25, 0.7])

    def f(x):
        a = wg.tensor(np.zeros(3))
        a[1:] = np.sin(x[:2])
        a += x
        return np.sum(a * a)

    def ref(x):
        a = np.concatenate([[0.0], np.sin(x[:2])]) + x
        return np.sum(a * a)

    np.testing.assert_allclose(wg.grad(f)(x), wg.grad(ref)(x))
    np.testing.assert_allclose(wg.hessian(f)(x), wg.hessian(ref)(x))


def test_tensor_refuses_to_hold_a_dual_or_an_outer_graph_value():
    x = np.array([1.5, -2.25, 0.7])

    def f(x):
        a = wg.tensor(np.zeros(3))
        a[:] = np.sin(x)
        return np.sum(a)

    with pytest.raises(TypeError, match=r"np\.zeros_like\(x\)"):
        wg.jvp(f, (x,), (np.ones(3),))
    # made inside a traced function, the tensor holds the traced values
    assert wg.compile(f)(x) == f(x)
    outside = wg.tensor(np.zeros(3))

    def g(x):
        outside[:] = np.sin(x)
        return np.sum(outside)

    with pytest.raises(TypeError, match=r"np\.zeros_like\(x\)"):
        wg.compile(g)(x)
