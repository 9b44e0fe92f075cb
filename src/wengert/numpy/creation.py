"""Making and converting arrays with ``wengert.numpy``: NumPy's functions, for values that
carry gradients too.

``np.array([x, 1.0])`` and ``np.asarray(x)`` cannot be intercepted on a tensor (NumPy
converts the items itself, which would drop their gradients, so it raises);
``np.full(3, x)`` neither (NumPy copies ``x`` into an empty array). Their
``wengert.numpy`` versions build the array with wengert's ops instead (``np.stack`` level
by level, ``broadcast_to``), so the gradient reaches every item, in both modes, under
``wg.compile`` and for values of different transforms (nested derivatives). Without a
traced value they are NumPy's own functions: the same values and dtypes.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> wg.jvp(lambda x: wnp.array([[x[0], 1.0], [2.0, x[1]]]), (np.array([3.0, 4.0]),),
...        (np.array([1.0, 0.0]),))[1]
array([[1., 0.],
       [0., 0.]])
>>> x = wg.tensor(2.0, requires_grad=True)
>>> y = wnp.full((2, 2), x) * wnp.asarray([x, 1.0])
>>> np.sum(y).backward()
>>> x.grad
10.0
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, example, is_traced, kind_of, shape_of
from wengert.numpy.lists import holds_traced
from wengert.ops import elementwise as _ew
from wengert.ops import shape as _shape
from wengert.ops.broadcast import broadcast_to
from wengert.ops.decompositions.composite import array as _build

__all__ = ["array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
           "asarray_chkfinite", "require", "full", "full_like", "isscalar"]

_NO_COPY = ("Unable to avoid copy while creating an array as requested (copy=False): a "
            "list holding values that carry gradients, or a cast, is always a new array. "
            "Use wengert.numpy.asarray(obj) to allow a copy when needed.")


def _like(like: Any) -> dict[str, Any]:
    return {} if like is None else {"like": like}


def _at_least(out: Any, ndmin: int) -> Any:
    shape = tuple(shape_of(out))
    if len(shape) >= ndmin:
        return out
    return _shape.reshape(out, (1,) * (ndmin - len(shape)) + shape)


def array(object: Any, dtype: Any = None, *, copy: Any = True,  # noqa: A002 - NumPy's name
          order: str = "K", subok: bool = False, ndmin: int = 0, like: Any = None) -> Any:
    """``np.array``, for (nested lists and tuples of) values that carry gradients too.

    A list is built with ``np.stack`` level by level, so the gradient reaches every item
    (tensors, dual numbers, graph values, mixed with plain numbers, at any depth); a
    traced value alone is copied (``copy=True``) or given back (``copy=None`` or
    ``False``), cast to ``dtype``. Without a traced value it is ``np.array`` itself.
    ``order`` and ``subok`` concern NumPy's memory layout and subclasses: they apply to
    plain values only.

    Examples
    --------
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> wg.derivative(lambda s: wnp.array([[s, 1.0], [2.0, s * s]]))(3.0)
    array([[1., 0.],
           [0., 6.]])
    >>> wnp.array([[1, 2]], ndmin=3).shape
    (1, 1, 2)
    """
    if like is not None or not holds_traced(object):
        return np.array(object, dtype=dtype, copy=copy, order=order, subok=subok,
                        ndmin=ndmin, **_like(like))
    if is_traced(object):
        out = object
        if dtype is not None and np.dtype(dtype) != dtype_of(object):
            if copy is False:
                raise ValueError(_NO_COPY)
            out = _ew.astype(out, dtype)
        elif copy:
            out = _ew.copy(out)
    else:
        if copy is False:
            raise ValueError(_NO_COPY)
        out = _build(object, dtype)
    return _at_least(out, operator.index(ndmin))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
            copy: Any = None, like: Any = None) -> Any:
    """``np.asarray``: a traced value as it is (cast to ``dtype``), a list holding traced
    values built as :func:`array` builds it, anything else NumPy's ``asarray``.

    Examples
    --------
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> wnp.asarray(x) is x
    True
    >>> wnp.asarray([x[1], 3.0])
    tensor([2., 3.], grad_fn=<StackBackward>)
    """
    if like is not None or not holds_traced(a):
        kwargs = _like(like)
        if device is not None:
            kwargs["device"] = device
        return np.asarray(a, dtype=dtype, order=order, copy=copy, **kwargs)
    if device not in (None, "cpu"):
        raise ValueError(f"Device not understood. Only \"cpu\" is allowed, but received: "
                         f"{device}")
    return array(a, dtype, copy=copy)


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: Any = None, like: Any = None) -> Any:
    """``np.asanyarray``: as :func:`asarray` (a traced value is given back as it is)."""
    if like is not None or not holds_traced(a):
        kwargs = _like(like)
        if device is not None:
            kwargs["device"] = device
        return np.asanyarray(a, dtype=dtype, order=order, copy=copy, **kwargs)
    return asarray(a, dtype, device=device, copy=copy)


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """``np.ascontiguousarray``: :func:`asarray` with at least one dimension (a wengert
    value's layout is NumPy's business)."""
    if like is not None or not holds_traced(a):
        return np.ascontiguousarray(a, dtype=dtype, **_like(like))
    return _at_least(asarray(a, dtype), 1)


def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """``np.asfortranarray``: :func:`asarray` with at least one dimension."""
    if like is not None or not holds_traced(a):
        return np.asfortranarray(a, dtype=dtype, **_like(like))
    return _at_least(asarray(a, dtype), 1)


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Any:
    """``np.asarray_chkfinite``: :func:`asarray`, raising ``ValueError`` if an entry is
    infinite or NaN.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> wnp.asarray_chkfinite([wg.tensor(1.0), np.inf])
    Traceback (most recent call last):
    ...
    ValueError: array must not contain infs or NaNs
    """
    if not holds_traced(a):
        return np.asarray_chkfinite(a, dtype=dtype, order=order)
    out = asarray(a, dtype)
    if dtype_of(out).kind in "fc" and not np.all(np.isfinite(out)):
        raise ValueError("array must not contain infs or NaNs")
    return out


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F",
                 "F_CONTIGUOUS": "F", "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W",
                 "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Any:
    """``np.require``: :func:`asarray`, copied when ``requirements`` holds ``'O'``
    (``OWNDATA``) or ``'W'`` (``WRITEABLE``); the layout flags concern NumPy's memory
    only."""
    if like is not None or not holds_traced(a):
        return np.require(a, dtype=dtype, requirements=requirements, **_like(like))
    reqs = {_REQUIREMENTS[r.upper()] for r in (requirements or ())}
    if "C" in reqs and "F" in reqs:
        raise ValueError("Cannot specify both C and Fortran contiguous.")
    out = asarray(a, dtype)
    return _ew.copy(out) if reqs & {"O", "W"} else out


def _filled(fill_value: Any, dtype: Any, shape: Any) -> Any:
    """``fill_value`` (traced) cast to ``dtype`` and broadcast to ``shape``, as a new array."""
    value = asarray(fill_value)
    if dtype is not None and np.dtype(dtype) != dtype_of(value):
        value = _ew.astype(value, dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (operator.index(shape),)
    return _ew.copy(broadcast_to(value, shape))


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *,
         device: Any = None, like: Any = None) -> Any:
    """``np.full``; a traced ``fill_value`` is broadcast to ``shape``, its gradient the sum
    of the result's.

    Examples
    --------
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> wg.grad(lambda s: wnp.full((2, 3), s).sum())(1.5)
    6.0
    """
    if like is not None or not holds_traced(fill_value):
        kwargs = _like(like)
        if device is not None:
            kwargs["device"] = device
        return np.full(shape, fill_value, dtype=dtype, order=order, **kwargs)
    return _filled(fill_value, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K",
              subok: bool = True, shape: Any = None, *, device: Any = None) -> Any:
    """``np.full_like``: ``a``'s shape and dtype (or ``shape``, ``dtype``) filled with
    ``fill_value``. A traced ``fill_value`` is broadcast (its gradient the sum of the
    result's); a plain one gives a constant, as ``np.zeros_like`` does on a traced ``a``
    (a value of ``a``'s transform that requires no grad).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> wnp.full_like(wg.tensor([1.0, 2.0], requires_grad=True), 7.0)
    tensor([7., 7.])
    >>> wg.grad(lambda s: np.sum(wnp.full_like(np.zeros(3), s) * [1.0, 2.0, 3.0]))(2.0)
    6.0
    """
    kwargs = {} if device is None else {"device": device}
    if holds_traced(fill_value):
        if dtype is None:
            dtype = dtype_of(a) if is_traced(a) else np.asarray(a).dtype
        return _filled(fill_value, dtype, shape_of(a) if shape is None else shape)
    if not is_traced(a):
        return np.full_like(a, fill_value, dtype=dtype, order=order, subok=subok,
                            shape=shape, **kwargs)
    if kind_of(a).opaque:  # a static graph's step that depends on a's shape and dtype
        given = {"dtype": dtype, "order": order, "subok": subok, "shape": shape}  # only:
        defaults = {"dtype": None, "order": "K", "subok": True, "shape": None}  # folded
        return kind_of(a).record_call(
            np.full_like, (a, fill_value),
            {k: v for k, v in given.items() if v is not defaults[k] and v != defaults[k]},
            "np.full_like")
    # np.zeros_like boxes its result as a constant of a's kind (a dual number's zero
    # tangent takes dual numbers written into it later)
    zeros = np.zeros_like(a, dtype=dtype, order=order, subok=subok, shape=shape, **kwargs)
    fill = np.empty(shape_of(zeros), dtype=dtype_of(zeros))
    np.copyto(fill, fill_value, casting="unsafe")  # (NumPy's: an array fill broadcast)
    zeros[...] = fill  # (written in: a 0-d result stays a 0-d array, as NumPy's)
    return zeros



def isscalar(element: Any) -> bool:
    """``np.isscalar`` of the value beneath a traced one: a tensor or dual number of a
    Python float is a scalar, as the float is; one of a 0-d array is not.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> import wengert.numpy as wnp
    >>> wnp.isscalar(wg.tensor(1.0)), wnp.isscalar(wg.tensor(np.array(1.0)))
    (True, False)
    """
    return np.isscalar(example(element))
