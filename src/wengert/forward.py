"""Forward-mode and Jacobian transforms: ``jvp``, ``linearize``, ``derivative``,
``jacfwd``, ``jacrev``, ``jacobian``, ``hessian``, ``hvp``.

Like the reverse transforms they take and return plain NumPy values and
pytrees; inside, the function sees :class:`~wengert.Dual` numbers whose tag
belongs to this call, so nested calls never confuse their perturbations.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .core.levels import Tag
from .core.tree import flatten, unflatten
from .dual import Dual
from .tensor import Tensor
from .transforms import grad, vjp

__all__ = ["jvp", "linearize", "derivative", "jacfwd", "jacrev", "jacobian", "hessian", "hvp"]


@contextlib.contextmanager
def _perturbation(name: str) -> Iterator[Tag]:
    tag = Tag(name)
    try:
        yield tag
    finally:
        tag.active = False


def _shape_dtype(x: Any) -> tuple[tuple[int, ...], Any]:
    if type(x) is float:
        return (), np.dtype(float)
    if isinstance(x, (Dual, Tensor)):
        return x.shape, x.dtype
    a = np.asarray(x)
    return a.shape, a.dtype


def _check_pair(p: Any, t: Any, i: int) -> None:
    ps, pd = _shape_dtype(p)
    ts, _ = _shape_dtype(t)
    if pd.kind not in "fc":
        raise TypeError(
            f"jvp: primal {i} has dtype {pd}; forward mode differentiates floating point inputs "
            "only. Pass floats (np.asarray(x, dtype=float))."
        )
    if ps != ts:
        raise ValueError(
            f"jvp: primal {i} has shape {ps} but its tangent has shape {ts}; each tangent must "
            "have exactly its primal's shape."
        )


def _unwrap(out: Any, tag: Tag) -> tuple[Any, Any]:
    leaves, spec = flatten(out)
    primals, tangents = [], []
    for leaf in leaves:
        if type(leaf) is Dual and leaf.tag is tag:
            primals.append(leaf.primal)
            tangents.append(leaf.tangent)
        else:
            primals.append(leaf)
            shape, dtype = _shape_dtype(leaf)
            zero = np.zeros(shape, dtype=dtype if dtype.kind in "fc" else float)
            tangents.append(float(zero) if shape == () and type(leaf) is float else zero)
    return unflatten(spec, primals), unflatten(spec, tangents)


def _plain(x: Any) -> Any:
    """Unbox a tensor that no outer level differentiates."""
    if isinstance(x, Tensor) and not (x._rg or x._node is not None):
        return x._value
    return x


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> Any:
    """Evaluate ``fun`` and its directional derivative (Jacobian-vector product).

    Parameters
    ----------
    fun : callable
        A function of ``len(primals)`` arguments (arrays, floats, pytrees).
    primals, tangents : tuple or list
        The point and the direction, with the same structure and shapes.

    Returns
    -------
    (primals_out, tangents_out)
        ``fun(*primals)`` and ``J · tangents``, with the output's structure.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jvp(lambda x: np.sin(x) * x, (0.5,), (1.0,))
    (0.2397127693021015, 0.9182168195493894)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "jvp: primals and tangents must be tuples (one entry per argument of fun), e.g. "
            "wg.jvp(f, (x,), (v,))."
        )
    p_leaves, p_spec = flatten(tuple(primals))
    t_leaves, t_spec = flatten(tuple(tangents))
    if p_spec != t_spec:
        raise ValueError(
            "jvp: primals and tangents have different structures; give one tangent per primal, "
            "nested the same way."
        )
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        _check_pair(p, t, i)
    with _perturbation("jvp") as tag:
        duals = [Dual(p, t, tag) for p, t in zip(p_leaves, t_leaves)]
        result = fun(*unflatten(p_spec, duals))
        if has_aux:
            out, aux = result
        else:
            out, aux = result, None
        primals_out, tangents_out = _unwrap(out, tag)
    leaves, spec = flatten(primals_out)
    primals_out = unflatten(spec, [_plain(x) for x in leaves])
    leaves, spec = flatten(tangents_out)
    tangents_out = unflatten(spec, [_plain(x) for x in leaves])
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``fun(*primals)`` and a function computing its JVP at that point.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> y, f_jvp = wg.linearize(np.exp, 0.0)
    >>> float(y), f_jvp(2.0)
    (1.0, 2.0)
    """
    out = fun(*primals)

    def f_jvp(*tangents: Any) -> Any:
        return jvp(fun, primals, tangents)[1]

    return out, f_jvp


def derivative(fun: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The derivative of a function of one scalar, by forward mode.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.derivative(lambda x: x * wg.derivative(lambda y: x + y)(1.0))(1.0)
    1.0
    """

    @functools.wraps(fun)
    def d(x: Any) -> Any:
        shape, _ = _shape_dtype(x)
        if shape != ():
            raise TypeError(
                f"derivative: the input must be a scalar, got shape {shape}; use wg.jacfwd or "
                "wg.jvp for array inputs."
            )
        return jvp(fun, (x,), (1.0,))[1]

    return d


def _argnums(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, int):
        return (argnums,), True
    return tuple(argnums), False


def _basis(shape: tuple[int, ...], dtype: Any) -> Iterator[Any]:
    n = int(np.prod(shape, dtype=np.int64))
    for k in range(n):
        e = np.zeros(n, dtype=dtype)
        e[k] = 1.0
        yield float(e[0]) if shape == () else e.reshape(shape)


def _stack_jac(cols: list[Any], out_shape: tuple[int, ...], in_shape: tuple[int, ...],
               axis_in_last: bool) -> Any:
    from . import numpy as wnp

    if any(isinstance(c, (Tensor, Dual)) for c in cols):
        stacked = wnp.stack(cols, axis=-1 if axis_in_last else 0)
        return wnp.reshape(stacked, out_shape + in_shape)
    # Columns (forward mode) are stacked last, rows (reverse mode) first: both
    # then read as output.shape + input.shape.
    arr = np.stack([np.asarray(c, dtype=float) for c in cols], axis=-1 if axis_in_last else 0)
    return arr.reshape(out_shape + in_shape)


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian by forward mode: one JVP per input entry.

    The result has shape ``output.shape + input.shape``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    nums, single = _argnums(argnums)

    @functools.wraps(fun)
    def jac(*args: Any) -> Any:
        results = []
        for i in nums:
            x = args[i]
            in_shape, dtype = _shape_dtype(x)
            cols = []
            out_shape: tuple[int, ...] = ()
            for e in _basis(in_shape, dtype if dtype.kind == "f" else float):
                def f_i(xi: Any, i: int = i) -> Any:
                    return fun(*args[:i], xi, *args[i + 1:])

                out, t = jvp(f_i, (x,), (e,))
                out_shape = _shape_dtype(out)[0]
                cols.append(t)
            results.append(_stack_jac(cols, out_shape, in_shape, axis_in_last=True))
        return results[0] if single else tuple(results)

    return jac


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one VJP per output entry.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jacrev(lambda x: np.cumsum(x))(np.array([1.0, 2.0]))
    array([[1., 0.],
           [1., 1.]])
    """
    nums, single = _argnums(argnums)

    @functools.wraps(fun)
    def jac(*args: Any) -> Any:
        def f_sel(*sel: Any) -> Any:
            full = list(args)
            for k, i in enumerate(nums):
                full[i] = sel[k]
            return fun(*full)

        out, f_vjp = vjp(f_sel, *[args[i] for i in nums])
        out_shape, dtype = _shape_dtype(out)
        rows: list[list[Any]] = [[] for _ in nums]
        for e in _basis(out_shape, dtype if dtype.kind == "f" else float):
            cts = f_vjp(e)
            for k in range(len(nums)):
                rows[k].append(cts[k])
        results = []
        for k, i in enumerate(nums):
            in_shape = _shape_dtype(args[i])[0]
            results.append(_stack_jac(rows[k], out_shape, in_shape, axis_in_last=False))
        return results[0] if single else tuple(results)

    return jac


def jacobian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian, by whichever mode is cheaper.

    Forward mode costs one pass per input entry and reverse mode one per
    output entry: ``jacobian`` uses :func:`jacfwd` when the inputs have no
    more entries than the output, and :func:`jacrev` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jacobian(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0, 3.0]))
    array([2., 4., 6.])
    """
    nums, _ = _argnums(argnums)

    @functools.wraps(fun)
    def jac(*args: Any) -> Any:
        n_in = sum(int(np.prod(_shape_dtype(args[i])[0], dtype=np.int64)) for i in nums)
        n_out = int(np.prod(_shape_dtype(fun(*args))[0], dtype=np.int64))
        mode = jacfwd if n_in <= n_out else jacrev
        return mode(fun, argnums)(*args)

    return jac


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Hessian of a scalar function: forward over reverse (``jacfwd(grad(f))``).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    return jacfwd(grad(fun, argnums), argnums)


def hvp(fun: Callable[..., Any], x: Any, v: Any) -> Any:
    """The Hessian-vector product ``H(x) · v`` without forming ``H``.

    Forward over reverse: the JVP of the gradient along ``v``, so it costs a
    few function evaluations whatever the size of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    """
    return jvp(grad(fun), (x,), (v,))[1]
