"""autograd.builtins -> Python's containers (wengert takes tuples, lists and dicts as
pytrees); ``isinstance`` asks about the value beneath a traced one, as autograd's asks
about the value in a box (``isinstance(x, np.ndarray)`` for a tensor of an array)."""
import builtins as _b

from wengert.core.bind import example as _example
from wengert.core.bind import is_traced as _is_traced

type = _b.type  # noqa: A001
tuple = _b.tuple  # noqa: A001
list = _b.list  # noqa: A001
dict = _b.dict  # noqa: A001


def isinstance(x, classinfo):  # noqa: A001
    return _b.isinstance(_example(x) if _is_traced(x) else x, classinfo)
