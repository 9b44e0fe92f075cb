"""autograd.util: the deprecated quick_grad_check, as autograd defines it (check_grads of
the first argument)."""
from .test_util import check_grads


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=1e-4,
                     rtol=1e-4, atol=1e-6, rs=None):
    check_grads(lambda x: fun(x, *extra_args, **(kwargs or {})), modes=["rev"])(arg0)
