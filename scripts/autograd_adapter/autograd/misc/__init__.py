"""autograd.misc: ``flatten`` keeps autograd's definition (the unflatten function is the VJP
of flattening, a linear map), run by wengert's vjp and wengert.numpy; ``const_graph``
(autograd's tape caching) skips."""
import pytest

import wengert.numpy as np

from .. import make_vjp


def flatten(value):
    unflatten, flat_value = make_vjp(_flatten)(value)
    return flat_value, unflatten


def _flatten(value):
    t = type(value)
    if t in (list, tuple):
        return _concatenate(map(_flatten, value))
    elif t is dict:
        return _concatenate(_flatten(value[k]) for k in sorted(value))
    return np.ravel(value)


def _concatenate(lst):
    lst = list(lst)
    return np.concatenate(lst) if lst else np.array([])


def const_graph(fun, *args, **kwargs):
    pytest.skip("autograd.misc.const_graph (autograd's tape caching) has no wengert "
                "equivalent in the adapter")
