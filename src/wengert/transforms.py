"""Functional reverse-mode transforms: ``grad``, ``value_and_grad``, ``vjp``.

They take and return plain NumPy values (and tuples, lists and dicts of them);
tensors appear only inside the function being differentiated. Nested calls
compose: an inner transform records its backward pass for the outer one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .backward import backprop
from .core.levels import DUAL_TAG
from .core.modes import GRAD_ENABLED, TAPES, TRANSFORM_DEPTH, transform_scope
from .core.tree import flatten, unflatten
from .dual import Dual
from .tensor import _FLOAT64, Tensor, _const, value_of

__all__ = ["grad", "value_and_grad", "vjp"]


def _dtype(v: Any) -> np.dtype:
    """The dtype of a raw value (a dual number's is its primal's)."""
    if type(v) is float:
        return np.dtype(float)
    dt = getattr(v, "dtype", None)
    return dt if isinstance(dt, np.dtype) else np.result_type(v)


def _check_input(x: Any, where: str) -> None:
    v = value_of(x)
    if type(v) is float:
        return
    dt = getattr(v, "dtype", None) if isinstance(v, Dual) else None
    if dt is None:
        dt = np.asarray(v).dtype if not isinstance(v, str) else np.dtype(str)
    if dt.kind not in "fc":
        raise TypeError(
            f"{where}: can only differentiate with respect to floating point inputs, got "
            f"{dt} ({type(v).__name__}). Pass floats, e.g. np.asarray(x, dtype=float) or 1.0 "
            "instead of 1."
        )


def _leaf_for(x: Any) -> Tensor:
    """A fresh differentiable stand-in for input ``x``.

    A tensor that outer transforms differentiate is connected through an
    identity op, so the outer level still sees the dependence. Inside a
    forward-mode transform (``jvp``, ``derivative``...) an input that is not
    already a dual number of it is first lifted into it with a zero tangent,
    so every tensor of this transform holds a dual of that level and a tensor
    of a reverse level outside the forward one stays recognisable (see
    ``tensor._lift_outer``).
    """
    lift = DUAL_TAG.get()
    if lift is not None and lift.active:
        v = x._value if isinstance(x, Tensor) else x
        if not (type(v) is Dual and v.tag.order >= lift.order):
            base = x if _connected(x) else v
            if type(base) is not float and not isinstance(base, (Dual, Tensor)):
                base = np.asarray(base)
            t = _const(Dual(base, _zero_like(base), lift))
            t._rg = True
            return t
    if isinstance(x, Tensor):
        from .ops.elementwise import POSITIVE
        from .tensor import _record

        if x._rg or x._node is not None:
            tapes = TAPES.get()
            active = [t for t in tapes if t._recording and t._tracks(x)]
            return _record(POSITIVE, (x,), (x._value,), x._value, None, True, active)
        value = x._value
    else:
        value = x
    if type(value) is not float and not isinstance(value, Dual):
        value = np.asarray(value)
    t = _const(value)
    t._rg = True
    return t


def _base(v: Any) -> Any:
    """The plain value under any dual numbers and tensors."""
    while True:
        if type(v) is Dual:
            v = v.primal
        elif isinstance(v, Tensor):
            v = v._value
        else:
            return v


def _zero_like(v: Any) -> Any:
    b = _base(v)
    if type(b) is float:
        return 0.0
    return np.zeros(np.shape(b), dtype=np.result_type(b))


def _plain_ct(g: Any, v: Any) -> Any:
    """A plain cotangent ``g`` in the form of the plain input ``v`` (float or array)."""
    g = value_of(g)
    if type(v) is float:
        return float(g)
    if type(g) is not np.ndarray or type(v) is not np.ndarray or g.shape != v.shape:
        g = np.asarray(g)
        if g.shape != np.shape(v):
            return np.broadcast_to(g, np.shape(v)).copy()
    # The sweep may end in a read-only view (the broadcast cotangent of a sum):
    # the caller gets an array of its own, as from NumPy.
    return g if g.flags.writeable else g.copy()


def _connected(x: Any) -> bool:
    return isinstance(x, Tensor) and (x._rg or x._node is not None)


def _outer_levels(args: tuple[Any, ...]) -> bool:
    """Whether something outside this transform differentiates through it.

    True inside another transform or an open tape, or when an argument is a
    tensor that requires grad: the backward pass must then be recorded.
    """
    if TRANSFORM_DEPTH.get() > 1:
        return True
    tapes = TAPES.get()
    if tapes and any(t._recording for t in tapes):
        return True
    for a in args:
        if type(a) in _PLAIN_LEAVES:
            continue
        leaves, _ = flatten(a)
        if any(_connected(leaf) for leaf in leaves):
            return True
    return False


#: Argument types that are leaves and never tensors (no pytree to search).
_PLAIN_LEAVES = frozenset((np.ndarray, float, int, Dual))


def _unbox_out(x: Any, keep: bool = False) -> Any:
    """A plain NumPy value, or the tensor itself when an outer level needs it."""
    if isinstance(x, Tensor) and not (keep and _connected(x)):
        return x._value
    return x


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, int):
        return (argnums,), True
    return tuple(argnums), False


def _prepare(args: tuple[Any, ...], argnums: tuple[int, ...], where: str):
    args = list(args)
    leaves_per_arg = []
    for i in argnums:
        if i >= len(args) or i < -len(args):
            raise ValueError(f"{where}: argnums={i} but the function got {len(args)} arguments")
        leaves, spec = flatten(args[i])
        for leaf in leaves:
            _check_input(leaf, where)
        boxed = [_leaf_for(v) for v in leaves]
        args[i] = unflatten(spec, boxed)
        leaves_per_arg.append((boxed, spec))
    return args, leaves_per_arg


def _sweep(out: Tensor, seed: Any, leaves_per_arg: list, create: bool) -> list[Any]:
    wanted = [
        leaf._node if leaf._node is not None else leaf
        for boxed, _ in leaves_per_arg
        for leaf in boxed
    ]
    if not isinstance(out, Tensor) or not (out._rg or out._node is not None):
        cts = {}
    else:
        edge = out._node if out._node is not None else out
        cts = backprop(
            [(edge, seed)],
            wanted=wanted,
            accumulate=False,
            retain_graph=create,
            create_graph=create,
        )
    return _gradients(leaves_per_arg, wanted, cts, create)


def _gradients(leaves_per_arg: list, wanted: list[Any], cts: dict[int, Any],
               create: bool) -> list[Any]:
    """The swept cotangents of the inputs' leaves, rebuilt into the inputs' pytrees.

    Unreached leaves get zeros; a cotangent stays a tensor only when an outer
    level differentiates it (``create``), and is a plain value otherwise.
    """
    grads = []
    k = 0
    for boxed, spec in leaves_per_arg:
        gs = []
        for leaf in boxed:
            g = cts.get(id(wanted[k]))
            k += 1
            if type(g) is Dual:  # forward over reverse: the dual is the gradient
                gs.append(g)
                continue
            if g is None:
                g = _zero_like(leaf._value)
            elif isinstance(value_of(g), Dual):
                g = value_of(g) if not create else g
            elif not isinstance(g, Tensor) or not (g._rg or g._node is not None):
                g = _plain_ct(g, _base(leaf._value))
            gs.append(_unbox_out(g, create))
        grads.append(unflatten(spec, gs))
    return grads


def _scalar_seed(out: Any, where: str) -> Any:
    """Check that ``out`` is one floating point element; the seed of its sweep.

    ``None`` for a constant output (nothing to sweep); otherwise ``1.0``, or
    ones of the output's shape and dtype.
    """
    if not isinstance(out, Tensor):
        v = out
        if np.size(v) != 1:
            raise TypeError(
                f"{where}: the function must return a scalar, got shape {np.shape(v)}. Sum it "
                "(lambda x: f(x).sum()) or use wg.jacobian for a vector output."
            )
        return None
    shape = out.shape  # a dual's is its primal's
    if math.prod(shape) != 1:
        raise TypeError(
            f"{where}: grad requires a scalar output (one element), got shape {shape}. Reduce "
            "it (lambda x: f(x).sum()) or use wg.jacobian / wg.vjp for non-scalar outputs."
        )
    vt = out.dtype
    if vt.kind not in "fc":
        raise TypeError(f"{where}: the output must be floating point, got {vt}")
    return 1.0 if shape == () and vt == _FLOAT64 else np.ones(shape, dtype=vt)


def value_and_grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Like :func:`grad`, but the new function returns ``(value, gradient)``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    """
    nums, single = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return _value_and_grad(fun, nums, single, has_aux, args, kwargs)

    return wrapped


def _value_and_grad(fun: Callable[..., Any], nums: tuple[int, ...], single: bool,
                    has_aux: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """One call of ``value_and_grad(fun, nums, has_aux)``: ``(value, gradient)``."""
    with transform_scope():
        token = GRAD_ENABLED.set(True)
        try:
            bargs, leaves = _prepare(args, nums, "grad")
            result = fun(*bargs, **kwargs)
        finally:
            GRAD_ENABLED.reset(token)
        if has_aux:
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError("has_aux=True needs the function to return (output, aux)")
            out, aux = result
        else:
            out, aux = result, None
        seed = _scalar_seed(out, "grad")
        create = _outer_levels(args)
        if create and seed is not None:
            seed = _const(seed)
        grads = _sweep(out, seed, leaves, create)
    value = _unbox_out(out, create)
    g = grads[0] if single else tuple(grads)
    if has_aux:
        aux = _unbox_tree(aux, create)
        return (value, aux), g
    return value, g


def _grad_of(fun: Callable[..., Any]) -> Callable[[Any], Any]:
    """``grad(fun)`` for internal use (one argument, no aux): no wrapper metadata to copy."""

    def g(x: Any) -> Any:
        return _value_and_grad(fun, (0,), True, False, (x,), {})[1]

    return g


def _unbox_tree(tree: Any, keep: bool) -> Any:
    leaves, spec = flatten(tree)
    return unflatten(spec, [_unbox_out(x, keep) for x in leaves])


def grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar function, as a new function.

    Parameters
    ----------
    fun : callable
        Returns a scalar (or ``(scalar, aux)`` with ``has_aux``). It receives
        tensors in place of the differentiated arguments and can use plain
        ``np.*`` on them.
    argnums : int or tuple of int
        Which positional arguments to differentiate; a tuple gives a tuple.
    has_aux : bool
        ``fun`` returns ``(output, aux)``; the new function returns
        ``(gradient, aux)``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: np.sin(x) * x)(0.0)
    0.0
    >>> wg.grad(wg.grad(lambda x: x ** 3))(2.0)
    12.0
    """
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return wrapped


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """Evaluate ``fun(*primals)`` and return its vector-Jacobian product function.

    Returns ``(out, vjp_fn)`` (plus ``aux`` with ``has_aux``); ``vjp_fn(g)``
    returns a tuple with one cotangent per primal, as in JAX. ``vjp_fn`` can
    be called many times.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> out, f_vjp = wg.vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
    >>> f_vjp(np.array([1.0, 10.0]))
    (array([ 2., 20.]),)
    """
    nums = tuple(range(len(primals)))
    with transform_scope():
        token = GRAD_ENABLED.set(True)
        try:
            bargs, leaves = _prepare(primals, nums, "vjp")
            outer = _outer_levels(primals)
            result = fun(*bargs)
        finally:
            GRAD_ENABLED.reset(token)
    if has_aux:
        out, aux = result
    else:
        out, aux = result, None
    out_leaves, out_spec = flatten(out)
    depth = TRANSFORM_DEPTH.get()

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        ct_leaves, ct_spec = flatten(cotangent)
        if len(ct_leaves) != len(out_leaves):
            raise ValueError(
                f"vjp: the cotangent has {len(ct_leaves)} leaves but the output has "
                f"{len(out_leaves)}; pass one array per output, in the same structure."
            )
        token2 = TRANSFORM_DEPTH.set(depth + 1)
        try:
            create = outer or any(
                isinstance(c, Tensor) and (c._rg or c._node is not None) for c in ct_leaves
            )
            roots = []
            for o, c in zip(out_leaves, ct_leaves):
                if np.shape(value_of(c)) != np.shape(value_of(o)):
                    raise ValueError(
                        f"vjp: cotangent shape {np.shape(value_of(c))} does not match the output "
                        f"shape {np.shape(value_of(o))}."
                    )
                if isinstance(o, Tensor) and (o._rg or o._node is not None):
                    seed = c if create else value_of(c)
                    if not create and type(seed) is not float:
                        seed = np.asarray(seed, dtype=np.result_type(_dtype(value_of(o)), 0.0))
                    roots.append((o._node if o._node is not None else o, seed))
            wanted = [
                leaf._node if leaf._node is not None else leaf
                for boxed, _ in leaves
                for leaf in boxed
            ]
            cts = (
                backprop(
                    roots, wanted=wanted, accumulate=False, retain_graph=True, create_graph=create
                )
                if roots
                else {}
            )
            grads = _gradients(leaves, wanted, cts, create)
        finally:
            TRANSFORM_DEPTH.reset(token2)
        return tuple(grads)

    out_plain = unflatten(out_spec, [_unbox_out(o, outer) for o in out_leaves])
    if has_aux:
        return out_plain, vjp_fn, _unbox_tree(aux, outer)
    return out_plain, vjp_fn
