"""A thin adapter: HIPS autograd's API mapped onto wengert's (no differentiation here).

Each of autograd's differential operators is its unary form (``grad(fun, x)``) made
n-ary with ``argnum`` by autograd's own ``unary_to_nary`` (``wrap_util``), its unary form
being the wengert transform (``wg.grad``, ``wg.vjp``, ``wg.jvp``, ``wg.hessian``,
``wg.hvp``); the operators autograd defines from others (``tensor_jacobian_product``,
``hessian_tensor_product``, ``make_ggnvp``) keep autograd's definitions. Functions
without a faithful wengert equivalent skip the test that calls them.
"""
import warnings

import pytest

import numpy as _onp
import wengert as wg
import wengert.numpy as _wnp

from .wrap_util import unary_to_nary


@unary_to_nary
def grad(fun, x):
    """
    Returns a function which computes the gradient of `fun` with respect to
    positional argument number `argnum` (wengert: ``wg.grad``)."""
    return wg.grad(fun)(x)


@unary_to_nary
def value_and_grad(fun, x):
    return wg.value_and_grad(fun)(x)


@unary_to_nary
def grad_and_aux(fun, x):
    return wg.grad(lambda x: tuple(fun(x)), has_aux=True)(x)


@unary_to_nary
def elementwise_grad(fun, x):
    ans, pull = wg.vjp(fun, x)
    if _onp.iscomplexobj(ans):
        raise TypeError("Elementwise_grad only applies to real-output functions.")
    return pull(_onp.ones(_onp.shape(ans)))[0]


@unary_to_nary
def deriv(fun, x):
    return wg.jvp(fun, (x,), (_onp.ones(_onp.shape(x), _onp.result_type(x, 0.0)),))[1]


@unary_to_nary
def jacobian(fun, x):
    return wg.jacobian(fun)(x)


@unary_to_nary
def holomorphic_grad(fun, x):
    if not _onp.iscomplexobj(x):
        warnings.warn("Input to holomorphic_grad is not complex", stacklevel=2)
    return wg.grad(fun, holomorphic=True)(x)


@unary_to_nary
def hessian(fun, x):
    return wg.hessian(fun)(x)


@unary_to_nary
def make_vjp(fun, x):
    ans, pull = wg.vjp(fun, x)
    return (lambda v: pull(v)[0]), ans


@unary_to_nary
def make_jvp(fun, x):
    return lambda v: wg.jvp(fun, (x,), (v,))


@unary_to_nary
def make_hvp(fun, x):
    return (lambda v: wg.hvp(fun, x, v)), wg.grad(fun)(x)


def hessian_tensor_product(fun, argnum=0):
    """autograd's definition: the gradient of <grad(fun), tensor>."""
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return _wnp.tensordot(fun_grad(*args, **kwargs), vector, _onp.ndim(vector))

    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """autograd's definition: the Jacobian of <tensor, fun>."""
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return _wnp.tensordot(vector, fun(*args, **kwargs), axes=_onp.ndim(vector))

    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f, g=lambda x: 1.0 / 2 * _wnp.sum(x**2, axis=-1), f_argnum=0):
    """autograd's definition, with wengert's vjp and jvp."""
    @unary_to_nary
    def _make_ggnvp(f, x):
        f_x, f_vjp = wg.vjp(f, x)
        grad_g = wg.grad(g)

        def ggnvp(v):
            jv = wg.jvp(f, (x,), (v,))[1]
            return f_vjp(wg.jvp(grad_g, (f_x,), (jv,))[1])[0]

        return ggnvp

    return _make_ggnvp(f, f_argnum)


def checkpoint(fun):
    return wg.checkpoint(fun)


def _skip(name):
    def missing(*args, **kwargs):
        pytest.skip(f"autograd.{name} has no faithful wengert equivalent in the adapter")
    return missing


multigrad_dict = _skip("multigrad_dict")
primitive = _skip("primitive")
from .builtins import dict, isinstance, list, tuple, type  # noqa: E402, F401, A004
