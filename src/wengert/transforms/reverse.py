"""Functional reverse-mode transforms: ``grad``, ``value_and_grad``, ``vjp``.

They take and return plain NumPy values (and tuples, lists, dicts and
namedtuples of them); tensors appear only inside the function being
differentiated. Each call works at a level of its own (see
:mod:`wengert.core.levels`): its inputs become tensors of that level, whose
values are the arguments as given. Everything of an outer level (a tensor the
user made with ``requires_grad=True``, a dual number of an enclosing ``wg.jvp``,
the tensors of an enclosing ``wg.grad``) is a constant at this level and is
differentiated at its own, so transforms nest in any order and a result stays
on an outer tensor's graph.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import dtype_of, is_traced, kind_of, primal, shape_of
from wengert.core.modes import GRAD_ENABLED, transform_scope
from wengert.core.subclasses import refuse_subclass
from wengert.core.sweep_fast import backprop
from wengert.core.tree import flatten, leaves_like, unflatten
from wengert.ops.elementwise import astype as _astype
from wengert.reverse.tensor import Tensor, constant, seed_dtype_error

__all__ = [
    "grad", "value_and_grad", "vjp", "leaf_for", "unbox_level", "of_level", "pullback",
    "argnums_at", "check_holomorphic_input", "pullback_of", "transpose", "unalias",
    "check_function",
]


def check_function(fun: Any, where: str) -> None:
    """Refuse a ``fun`` that cannot be called, when a transform is made (as JAX does): the
    usual slip is passing a value, ``wg.grad(f(x))``, instead of the function.

    Examples
    --------
    >>> check_function(abs, "grad")
    >>> check_function(2.0, "grad")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: grad: expected a function, got float. Pass the function itself ...
    """
    if not callable(fun):
        raise TypeError(
            f"{where}: expected a function, got {type(fun).__name__}. Pass the function "
            "itself (f, not its value f(x))."
        )


def _check_input(x: Any, where: str, holomorphic: bool = False) -> None:
    refuse_subclass(x, where)
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(
            f"{where}: can only differentiate with respect to floating point numbers and "
            f"arrays, got {type(x).__name__}."
        )
    if type(x) is float and not holomorphic:
        return
    dt = dtype_of(x) if type(x) is float or is_traced(x) else np.asarray(x).dtype
    if holomorphic:
        check_holomorphic_input(dt, where)
    if dt.kind != "f" and dt.kind != "c":
        raise TypeError(
            f"{where}: can only differentiate with respect to floating point (real or "
            f"complex) inputs, got "
            f"{dt} ({type(x).__name__}). Pass floats, e.g. np.asarray(x, dtype=float) or 1.0 "
            "instead of 1."
        )


def check_holomorphic_input(dt: np.dtype, where: str) -> None:
    """Refuse a real (or integer) input of a transform called with ``holomorphic=True``
    (as JAX does): ``f′(z)`` needs ``z`` complex."""
    if dt.kind != "c":
        raise TypeError(
            f"{where} with holomorphic=True requires inputs with complex dtype, but got {dt}. "
            "Pass complex values (np.asarray(x, dtype=complex), or 1.0 + 0j for 1.0), or drop "
            "holomorphic=True to differentiate with respect to a real input."
        )


def leaf_for(x: Any, level: float) -> Tensor:
    """A fresh differentiable tensor of ``level`` whose value is ``x``.

    A plain number or array becomes an array (a Python float stays a float); a
    traced value (a dual number, a tensor of an outer level that carries a
    derivative) is kept as it is, so the outer level sees the dependence.
    """
    if isinstance(x, Tensor) and not (x._rg or x._node is not None or is_traced(x._value)):
        x = x._value  # a constant tensor: its value
    if type(x) is not float and not is_traced(x):
        x = np.asarray(x)
    t = constant(x, level)
    t._rg = True
    return t


def unbox_level(x: Any, level: float) -> Any:
    """A value of ``level`` as the level below sees it: a tensor of that level gives
    its value, and so does a constant tensor of any level (on no graph: a user's
    ``wg.tensor(c)``, a ``Variable``'s value, a ``stop_gradient``); anything else
    (plain values, outer levels' values) is kept."""
    while isinstance(x, Tensor) and (x._level == level or not (x._rg or x._node is not None)):
        x = x._value
    return x


def of_level(x: Any, level: float) -> bool:
    """Whether ``x`` is a tensor of the transform at ``level``."""
    return isinstance(x, Tensor) and x._level == level


def _unbox_tree(tree: Any, level: float) -> Any:
    leaves, spec = flatten(tree)
    return unflatten(spec, [unbox_level(x, level) for x in leaves])


def _zero_like(v: Any) -> Any:
    b = primal(v)
    if type(b) is float:
        return 0.0
    if type(b) is complex:
        return 0j
    if isinstance(b, np.generic):
        return b.dtype.type(0)
    return np.zeros(np.shape(b), dtype=np.result_type(b))


def _as_dtype(g: Any, target: np.dtype) -> Any:
    """A plain gradient in the input's float ``target`` dtype (of the same kind of value)."""
    if target.kind not in "fc" or np.result_type(g) == target or type(g) in (float, complex):
        return g
    if isinstance(g, np.generic):
        return target.type(g)
    return np.asarray(g).astype(target)


def _with_form(g: Any, v: Any, given: Any) -> Any:
    """A graph tracer's cotangent whose example has the type eager mode gives the
    gradient (:func:`_plain_ct`: a Python float for a Python float ...), so the graph
    returns that type."""
    kind = kind_of(g)
    with_example = getattr(kind, "with_example", None)
    if with_example is None:
        return g
    example = kind.primal(g)
    want = _plain_ct(example, _example(v), _example(given))
    return g if type(want) is type(example) else with_example(g, want)


def _opaque(x: Any) -> bool:
    kind = kind_of(x)
    return kind is not None and kind.opaque


def _plain_ct(g: Any, v: Any, given: Any) -> Any:
    """A plain cotangent ``g`` in the form of the input: ``v`` is the input's value as
    the transform held it, ``given`` the argument as the caller passed it (a Python
    float, a NumPy scalar such as ``np.float32(2.0)``, or an array): same type, same
    dtype."""
    if type(v) is float:
        return float(g)
    target = np.result_type(v)
    if type(g) is not np.ndarray or g.shape != np.shape(v):
        g = np.asarray(g)
        if g.shape != np.shape(v):
            g = np.broadcast_to(g, np.shape(v))
    if g.dtype != target and (target.kind == "f" or target.kind == "c"):
        g = g.astype(target)
    if isinstance(given, np.generic):
        return target.type(g[()])
    if type(given) is complex:  # a Python complex number in, one out (as a float gives a float)
        return complex(g[()])
    # The sweep may end in a read-only view (the broadcast cotangent of a sum):
    # the caller gets an array of its own, as from NumPy.
    return g if g.flags.writeable and g.base is None else g.copy()


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    """``argnums`` as a tuple (checked for type when the transform is made), and whether a
    single int was given; :func:`argnums_at` checks it against the arguments."""
    single = not isinstance(argnums, (tuple, list))
    items = (argnums,) if single else tuple(argnums)
    try:
        return tuple(operator.index(i) for i in items), single
    except TypeError:
        raise TypeError(
            f"argnums must be an int or a tuple of ints (the positions of the arguments to "
            f"differentiate), got {argnums!r}."
        ) from None


def argnums_at(argnums: int | Sequence[int], nargs: int, where: str
               ) -> tuple[tuple[int, ...], bool]:
    """Validated, non-negative ``argnums`` for a call with ``nargs`` positional arguments
    (each in range, none twice), and whether a single int was given.

    Examples
    --------
    >>> argnums_at((0, -1), 3, "grad")
    ((0, 2), False)
    """
    try:
        nums, single = _argnums_tuple(argnums)
    except TypeError as e:
        raise TypeError(f"{where}: {e}") from None
    for i in nums:
        if i >= nargs or i < -nargs:
            raise ValueError(
                f"{where}: argnums={i} but the function got {nargs} positional argument(s); "
                "argnums must index fun's positional arguments."
            )
    nums = tuple(i % nargs for i in nums)
    if len(set(nums)) != len(nums):
        raise ValueError(
            f"{where}: argnums={argnums} names argument "
            f"{next(n for n in nums if nums.count(n) > 1)} twice; give each argument once."
        )
    return nums, single


def _snapshot(x: Any) -> Any:
    """A copy of an array the caller could change in place later (plain arrays, a constant
    tensor's array); anything else (numbers, traced values) as it is."""
    if isinstance(x, Tensor) and not (x._rg or x._node is not None or is_traced(x._value)):
        x = x._value
    return x.copy() if type(x) is np.ndarray else x


def _prepare(args: tuple[Any, ...], argnums: tuple[int, ...], where: str, level: float,
             holomorphic: bool = False, snapshot: bool = False):
    """The arguments with the differentiated ones replaced by tensors of ``level``;
    per differentiated argument, its leaves (tensors) and pytree spec. With
    ``holomorphic`` every leaf must be complex; with ``snapshot`` the tensors hold
    copies of the caller's arrays (a pullback called later must not see the caller's
    in-place changes)."""
    args = list(args)
    leaves_per_arg = []
    argnums = argnums_at(argnums, len(args), where)[0]
    for i in argnums:
        leaves, spec = flatten(args[i])
        for leaf in leaves:
            _check_input(leaf, where, holomorphic)
        boxed = [leaf_for(_snapshot(v) if snapshot else v, level) for v in leaves]
        args[i] = unflatten(spec, boxed)
        leaves_per_arg.append((boxed, spec, leaves))
    return args, leaves_per_arg


def _edge(t: Tensor) -> Any:
    return t._node if t._node is not None else t


def _own_output(out: Any, level: float) -> bool:
    """Whether ``out`` is a tensor of ``level`` that carries a derivative."""
    return isinstance(out, Tensor) and out._level == level and (
        out._rg or out._node is not None)


def _gradients(leaves_per_arg: list, cts: dict[int, Any], seeds: Any = ()) -> list[Any]:
    """The swept cotangents of the inputs' leaves, rebuilt into the inputs' pytrees.

    Unreached leaves get zeros; a plain cotangent takes its input's form and dtype;
    a traced one (a dual number, an outer level's tensor) is kept. No two results
    are the same array, and none is one of the caller's ``seeds``.
    """
    grads = []
    given: set[int] = {id(s) for s in seeds}
    for boxed, spec, originals in leaves_per_arg:
        gs = []
        for leaf, original in zip(boxed, originals):
            g = cts.get(id(leaf))
            if isinstance(g, Tensor) and not (g._rg or g._node is not None):
                g = unbox_level(g, leaf._level)  # a rule multiplied by a constant tensor
            v = leaf._value
            if g is None:
                given_scalar = isinstance(original, np.generic) or type(original) is complex
                g = _zero_like(original if given_scalar else _example(v))
            elif not is_traced(g) and not is_traced(v):
                g = _plain_ct(g, v, original)
            elif not is_traced(g) and _opaque(v):  # a constant gradient of a traced input
                g = _plain_ct(g, _example(v), _example(original))
            elif not is_traced(g):  # a constant gradient of a dual number: its dtype too
                g = _as_dtype(g, np.dtype(dtype_of(v)))
            elif is_traced(g):  # a traced cotangent (a dual number under jvp or hessian, a
                # graph tracer): the input's float dtype too, as a plain one and as JAX's
                target = np.dtype(dtype_of(v))
                if target.kind in "fc" and dtype_of(g) != target:
                    g = _astype(g, target)
                if _opaque(g):
                    g = _with_form(g, v, original)
            if type(g) is np.ndarray:
                if id(g) in given:
                    g = g.copy()
                given.add(id(g))
            gs.append(g)
        grads.append(unflatten(spec, gs))
    return grads


def _sweep(roots: list[tuple[Any, Any]], leaves_per_arg: list, *, retain: bool,
           grad_mode: bool) -> dict[int, Any]:
    """Backpropagate ``roots`` at a transform's level; ``id(leaf) -> cotangent``."""
    if not roots:
        return {}
    _, reached = backprop(roots, retain_graph=retain, grad_mode=grad_mode)
    return {id(leaf): g for leaf, g in reached}


def pullback(out: Tensor, leaves: Sequence[Tensor], seed: Any, *,
             retain_graph: bool = True) -> list[Any]:
    """The cotangents that ``seed``, given to ``out``, sends to each of ``leaves``.

    A reverse sweep from an output computed earlier at some level (``out`` and
    ``leaves`` are tensors of it, ``leaves`` made with :func:`leaf_for`), without
    touching any ``.grad``: what ``wg.vjp``'s pullback does, for a caller that
    runs the forward computation itself (the ``%%autodiff`` magic). Leaves the
    sweep does not reach get zeros. Observers of :func:`wengert.observe_sweep`
    see every step. With ``retain_graph`` the graph can be swept again.

    Examples
    --------
    >>> from wengert.core.modes import transform_scope
    >>> with transform_scope() as level:
    ...     x = leaf_for(3.0, level)
    ...     y = x * x
    ...     pullback(y, [x], 1.0)
    [6.0]
    """
    leaves = list(leaves)
    values = [leaf._value for leaf in leaves]
    boxed = [(leaves, flatten(values)[1], values)]
    if isinstance(out, Tensor) and (out._rg or out._node is not None):
        cts = _sweep([(_edge(out), seed)], boxed, retain=retain_graph, grad_mode=False)
    else:
        cts = {}  # the output does not depend on the leaves
    return list(_gradients(boxed, cts)[0])


def is_numeric_output(v: Any) -> bool:
    """Whether ``v`` can be a transform's output leaf: a number, a numeric array or a
    traced value (not a string, ``None`` or a generator).

    Examples
    --------
    >>> is_numeric_output(1.0), is_numeric_output(np.ones(2)), is_numeric_output("a")
    (True, True, False)
    """
    if type(v) in (float, int, complex) or is_traced(v):
        return True
    return isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biufc"


def _scalar_seed(out: Any, level: float, where: str, holomorphic: bool = False) -> Any:
    """Check that ``out`` is one floating point number (a complex one with
    ``holomorphic``, a real one without); the seed of its sweep.

    ``None`` for an output that does not depend on the inputs at this level
    (zero gradients); otherwise ``1.0``, or ones of the output's shape and dtype.
    """
    if not is_numeric_output(out):
        raise TypeError(
            f"{where}: the function must return a scalar array or number computed from its "
            f"inputs, got {type(out).__name__}"
            + (" (did it forget a return statement?)" if out is None else "")
            + ". Use has_aux=True to return other values alongside it."
        )
    shape = shape_of(out)
    if math.prod(shape) != 1:
        raise TypeError(
            f"{where}: grad requires a scalar output (one element), got shape {shape}. Reduce "
            "it (lambda x: f(x).sum()) or use wg.jacobian / wg.vjp for non-scalar outputs."
        )
    dt = dtype_of(out)
    if holomorphic and dt.kind != "c":
        raise TypeError(
            f"{where} with holomorphic=True requires outputs with complex dtype, but got "
            f"{dt}. A holomorphic function of complex inputs has complex values; for a real "
            "function of complex inputs drop holomorphic=True (its gradient is ∂f/∂x − i∂f/∂y)."
        )
    if dt.kind == "c" and not holomorphic:
        raise TypeError(
            f"{where} requires real-valued outputs, and this one is complex ({dt}). If the "
            "function is holomorphic, pass holomorphic=True for its complex derivative f′(z); "
            "otherwise use wg.vjp with a cotangent of your choice, or take np.real / np.abs of "
            "the output (as HIPS autograd and JAX's grad do)."
        )
    if dt.kind not in "fc":
        raise TypeError(
            f"{where}: the output must be floating point, got {dt}. An integer or boolean "
            "output is piecewise constant: its gradient is zero wherever it exists."
        )
    if not _own_output(out, level):
        return None
    if shape == () and type(_example(primal(out))) is float:
        return 1.0
    return np.ones(shape, dtype=dt)


def _example(x: Any) -> Any:
    """``x``, or for a graph tracer the value it was traced with: a program traced on
    Python floats is seeded with ``1.0`` as eager mode is, so its backward program runs
    on Python floats too."""
    while _opaque(x):
        x = kind_of(x).primal(x)
    return x


def value_and_grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """Like :func:`grad`, but the new function returns ``(value, gradient)``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    >>> wg.value_and_grad(lambda z: np.sum(z ** 2), holomorphic=True)(np.array([1j, 2 + 0j]))
    (np.complex128(3+0j), array([0.+2.j, 4.+0.j]))
    """
    check_function(fun, "value_and_grad")
    nums, single = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return _value_and_grad(fun, nums, single, has_aux, args, kwargs, holomorphic)

    return wrapped


def split_aux(result: Any, has_aux: bool, where: str) -> tuple[Any, Any]:
    """``(output, aux)`` of a function called with ``has_aux`` (``aux`` ``None`` without)."""
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"{where}: has_aux=True needs the function to return a pair (output, aux), got "
            f"{type(result).__name__}."
        )
    return result[0], result[1]


def _value_and_grad(fun: Callable[..., Any], nums: tuple[int, ...], single: bool,
                    has_aux: bool, args: tuple[Any, ...], kwargs: dict[str, Any],
                    holomorphic: bool = False, where: str = "grad") -> Any:
    """One call of ``value_and_grad(fun, nums, has_aux, holomorphic)``:
    ``(value, gradient)``; errors name ``where``."""
    outer_mode = GRAD_ENABLED.get()
    with transform_scope() as level:
        token = GRAD_ENABLED.set(True)
        try:
            bargs, leaves = _prepare(args, nums, where, level, holomorphic)
            result = fun(*bargs, **kwargs)
        finally:
            GRAD_ENABLED.reset(token)
        out, aux = split_aux(result, has_aux, where)
        seed = _scalar_seed(out, level, where, holomorphic)
        roots = [] if seed is None else [(_edge(out), seed)]
        cts = _sweep(roots, leaves, retain=False, grad_mode=outer_mode)
    grads = _gradients(leaves, cts)
    value = unbox_level(out, level)
    g = grads[0] if single else tuple(grads)
    if has_aux:
        return (value, _unbox_tree(aux, level)), g
    return value, g


def grad_of(fun: Callable[..., Any], where: str = "grad") -> Callable[[Any], Any]:
    """``grad(fun)`` for internal use (one argument, no aux): no wrapper metadata to copy;
    errors name ``where``."""

    def g(x: Any) -> Any:
        return _value_and_grad(fun, (0,), True, False, (x,), {}, where=where)[1]

    return g


def grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The gradient of a scalar function, as a new function.

    Parameters
    ----------
    fun : callable
        Returns a scalar (or ``(scalar, aux)`` with ``has_aux``). It receives
        tensors in place of the differentiated arguments and can use plain
        ``np.*`` on them (but not ``math.*``, ``float()`` or Python lists of
        them, which would drop the derivative: those raise).
    argnums : int or tuple of int
        Which positional arguments to differentiate; a tuple gives a tuple.
    has_aux : bool
        ``fun`` returns ``(output, aux)``; the new function returns
        ``(gradient, aux)``.
    holomorphic : bool
        Promise that ``fun`` is holomorphic (complex differentiable) in the
        differentiated arguments, which must then be complex, as must the
        output: the gradient is the complex derivative ``f′(z)``, as in JAX.
        The promise is not checked: for a function that is not holomorphic
        the result is ``∂f/∂z + conj(∂f/∂z̄)`` (Wirtinger derivatives), which
        means nothing in particular. Without it, a complex output is refused
        and the gradient of a real function of complex ``z = x + iy`` is
        ``∂f/∂x − i ∂f/∂y``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda x: np.sin(x) * x)(0.0)
    0.0
    >>> wg.grad(wg.grad(lambda x: x ** 3))(2.0)
    12.0
    >>> wg.grad(lambda z: z ** 3, holomorphic=True)(1j)  # 3z²
    (-3+0j)
    >>> wg.grad(np.exp, holomorphic=True)(np.complex64(1j))
    np.complex64(0.5403023+0.84147096j)
    """
    check_function(fun, "grad")
    vg = value_and_grad(fun, argnums, has_aux, holomorphic)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return wrapped


def _seed_like(c: Any, o: Any) -> Any:
    """The cotangent ``c`` given for output ``o``, as the sweep's seed."""
    if is_traced(c):
        return c
    if type(c) is float and type(_example(primal(o))) is float:
        return c
    dt = dtype_of(o)
    if dt.kind != "c" and np.iscomplexobj(c):
        c = np.real(c)  # a real output pairs with c through Re(c)·dy
    return np.asarray(c, dtype=np.result_type(dt, 0.0))


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """Evaluate ``fun(*primals)`` and return its vector-Jacobian product function.

    Returns ``(out, vjp_fn)`` (plus ``aux`` with ``has_aux``); ``vjp_fn(g)``
    returns a tuple with one cotangent per primal, as in JAX. ``vjp_fn`` can
    be called many times, and its result is differentiable in ``g`` too. It
    pulls back at the point ``fun`` was evaluated: the arrays given as
    ``primals`` are copied, so changing them in place afterwards changes nothing.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> out, f_vjp = wg.vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
    >>> f_vjp(np.array([1.0, 10.0]))
    (array([ 2., 20.]),)
    """
    check_function(fun, "vjp")
    out, vjp_fn, aux = pullback_of(fun, primals, has_aux, "vjp")
    if has_aux:
        return out, vjp_fn, aux
    return out, vjp_fn


def unalias(tree: Any, inputs: Sequence[Any]) -> Any:
    """``tree`` with each array that may share memory with one of ``inputs`` copied: a
    result the caller changes in place must not change what a transform holds (or
    what the caller passed in).

    Examples
    --------
    >>> a = np.ones(2)
    >>> unalias((a, a * 2), [a])[0] is a
    False
    """
    if type(tree) is np.ndarray:  # the common case: one array out
        return _unaliased(tree, inputs)
    if type(tree) is float:
        return tree
    leaves, spec = flatten(tree)
    return unflatten(spec, [_unaliased(v, inputs) for v in leaves])


def _unaliased(v: Any, inputs: Sequence[Any]) -> Any:
    if type(v) is np.ndarray:
        for a in inputs:
            if type(a) is np.ndarray and np.may_share_memory(v, a):
                return v.copy()
    return v


def pullback_of(fun: Callable[..., Any], primals: Sequence[Any], has_aux: bool, where: str
                ) -> tuple[Any, Callable[[Any], tuple[Any, ...]], Any]:
    """``(out, vjp_fn, aux)`` of ``fun`` at ``primals`` (``aux`` is ``None`` without
    ``has_aux``): :func:`vjp` for the transforms built on it, errors naming ``where``."""
    nums = tuple(range(len(primals)))
    with transform_scope() as level:
        token = GRAD_ENABLED.set(True)
        try:
            bargs, leaves = _prepare(primals, nums, where, level, snapshot=True)
            result = fun(*bargs)
        finally:
            GRAD_ENABLED.reset(token)
    out, aux = split_aux(result, has_aux, where)
    out_leaves, out_spec = flatten(out)
    for k, o in enumerate(out_leaves):
        if not is_numeric_output(o):
            raise TypeError(
                f"{where}: output leaf {k} of the function is a {type(o).__name__}; it must "
                "return arrays or numbers (or tuples/lists/dicts of them)."
            )

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        try:
            ct_leaves = leaves_like(cotangent, out_spec, "cotangent")
        except ValueError as e:
            raise ValueError(
                f"{where}: {e}. Pass one array per output of the function, in the same "
                "structure (the same dict keys, a tuple for a tuple, a list for a list)."
            ) from None
        roots = []
        seeds = []
        for o, c in zip(out_leaves, ct_leaves):
            refuse_subclass(c, f"{where} (cotangent)")
            if shape_of(c) != shape_of(o):
                raise ValueError(
                    f"{where}: cotangent shape {shape_of(c)} does not match the output shape "
                    f"{shape_of(o)}."
                )
            if dtype_of(c).kind not in "iufc":
                raise seed_dtype_error(dtype_of(c), f"{where}: the cotangent")
            if _own_output(o, level):
                seed = _seed_like(c, o)
                roots.append((_edge(o), seed))
                seeds.append(seed)
        with transform_scope(level):  # rules may record at the level (checkpoint)
            cts = _sweep(roots, leaves, retain=True, grad_mode=GRAD_ENABLED.get())
        return tuple(_gradients(leaves, cts, seeds))

    out_plain = unflatten(out_spec, _returned(out_leaves, level, leaves))
    if has_aux:
        aux_leaves, aux_spec = flatten(aux)
        aux = unflatten(aux_spec, _returned(aux_leaves, level, leaves))
    return out_plain, vjp_fn, (aux if has_aux else None)


def _returned(values: list[Any], level: float, leaves: list) -> list[Any]:
    """The values a pullback's function gave, as the caller gets them: arrays computed at
    ``level`` copied (the tape may hold them: np.exp's rules read its output), and none
    aliasing the copies of the inputs the tape holds; the caller's own arrays as they
    are."""
    out = []
    held = None
    for o in values:
        v = unbox_level(o, level)
        if type(v) is np.ndarray:
            if of_level(o, level):
                v = v.copy()
            else:
                if held is None:
                    held = [leaf._value for boxed, _, _ in leaves for leaf in boxed]
                v = _unaliased(v, held)
        out.append(v)
    return out


def transpose(vjp_fn: Callable[[Any], tuple[Any, ...]], out: Any, primals: Sequence[Any],
              where: str) -> Callable[..., Any]:
    """The linear map whose transpose is ``vjp_fn``: the JVP of the function that ``vjp_fn``
    pulls back, without evaluating that function again.

    ``vjp_fn`` (from :func:`pullback_of`, for a function with output ``out`` at
    ``primals``) is run once here on cotangents that are tensors of a new level,
    which records the backward pass as a program linear in them; each call of the
    returned map sweeps that program backward from the tangents, which gives
    ``J · tangents`` (the transpose of a transpose). Its arguments are one tangent per
    primal (their pytrees, shapes and dtypes checked); it returns the output's pytree.

    Examples
    --------
    >>> out, pull = pullback_of(lambda x: x * x, (3.0,), False, "demo")[:2]
    >>> transpose(pull, out, (3.0,), "demo")(1.0)
    6.0
    """
    out_leaves, out_spec = flatten(out)
    p_leaves, p_spec = flatten(tuple(primals))
    with transform_scope() as level:
        token = GRAD_ENABLED.set(True)
        try:
            cts = [leaf_for(_zero_like(o), level) for o in out_leaves]
            grads = flatten(vjp_fn(unflatten(out_spec, cts)))[0]
        finally:
            GRAD_ENABLED.reset(token)
    boxed = [(cts, out_spec, out_leaves)]
    differentiable = [dtype_of(o).kind in "fc" for o in out_leaves]

    def linear(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(
                f"{where}: the function was linearized at {len(primals)} primal(s), so it takes "
                f"{len(primals)} tangent(s); got {len(tangents)}."
            )
        try:
            t_leaves = leaves_like(tuple(tangents), p_spec, "tangent")
        except ValueError as e:
            raise ValueError(f"{where}: {e}; give one tangent per primal, nested the same "
                             "way.") from None
        roots = []
        seeds = []
        for i, (p, t, g) in enumerate(zip(p_leaves, t_leaves, grads)):
            _check_tangent(p, t, i, where)
            if _own_output(g, level):
                seed = _seed_like(t, g)
                roots.append((_edge(g), seed))
                seeds.append(seed)
        with transform_scope(level):
            swept = _sweep(roots, boxed, retain=True, grad_mode=GRAD_ENABLED.get())
        result = _gradients(boxed, swept, seeds)[0]
        if all(differentiable):
            return result
        leaves = flatten(result)[0]  # integer and boolean outputs: float zeros
        return unflatten(out_spec, [v if d else _zero_float(o) for v, d, o
                                    in zip(leaves, differentiable, out_leaves)])

    return linear


def _zero_float(v: Any) -> Any:
    """The zero tangent of an integer or boolean output (float: JAX's float0 has no
    NumPy counterpart)."""
    shape = shape_of(v)
    return 0.0 if shape == () and not isinstance(primal(v), np.ndarray) else np.zeros(shape)


def _check_tangent(p: Any, t: Any, i: int, where: str) -> None:
    """A tangent for primal ``p``: numeric, of its shape, real for a real primal."""
    refuse_subclass(t, f"{where} (tangent {i})")
    if isinstance(t, (str, bytes)) or t is None:
        raise TypeError(f"{where}: tangent {i} is a {type(t).__name__}; tangents are numbers "
                        "or arrays with the primal's shape.")
    tdt = dtype_of(t) if is_traced(t) or type(t) is float else np.asarray(t).dtype
    if tdt.kind not in "biufc":
        raise TypeError(f"{where}: tangent {i} has dtype {tdt}; tangents must be numbers with "
                        "the primal's shape.")
    if tdt.kind == "c" and dtype_of(p).kind != "c":
        raise TypeError(
            f"{where}: tangent {i} is complex ({tdt}) but its primal is real: a real value "
            "can only move in real directions. Make the primal complex (primal + 0j) to push "
            "a complex tangent."
        )
    if shape_of(t) != shape_of(p):
        raise ValueError(
            f"{where}: primal {i} has shape {shape_of(p)} but its tangent has shape "
            f"{shape_of(t)}; each tangent must have exactly its primal's shape."
        )
