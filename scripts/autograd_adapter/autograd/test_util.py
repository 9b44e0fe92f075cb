"""check_grads / combo_check on wengert.testing.check_grads."""
from itertools import product

import numpy as np
import wengert as wg


def _complex(values):
    return any(np.iscomplexobj(v) for v in values)


def check_grads(fun, argnum=0, modes=None, order=2):
    modes = ["fwd", "rev"] if modes is None else modes

    def check(*args, **kwargs):
        nums = (argnum,) if isinstance(argnum, int) else tuple(argnum)

        def g(*diff):
            full = list(args)
            for k, d in zip(nums, diff):
                full[k] = d
            return fun(*full, **kwargs)

        diff_args = tuple(args[k] for k in nums)
        assert wg.check_grads(g, diff_args, order=order, modes=tuple(modes))

    return check


def check_equivalent(x, y):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-6)


def combo_check(fun, *args, **kwargs):
    checker = lambda f: check_grads(f, *args, **kwargs)  # noqa: E731

    def _combo_check(*args, **kwargs):
        kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kwargs.items()]
        for _args in product(*args):
            for _kwargs in product(*kwarg_key_vals):
                checker(fun)(*_args, **dict(_kwargs))

    return _combo_check


TOL = 1e-6
RTOL = 1e-6


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL
