"""Forward-mode and Jacobian transforms: ``jvp``, ``linearize``, ``derivative``,
``jacfwd``, ``jacrev``, ``jacobian``, ``hessian``, ``hvp``.

Like the reverse transforms they take and return plain NumPy values and
pytrees; inside, the function sees :class:`~wengert.Dual` numbers whose tag
belongs to this call, so nested calls never confuse their perturbations.

The Jacobian transforms follow JAX's conventions: ``argnums`` is an int (the
result is that argument's pytree of Jacobians) or a tuple of ints (a tuple of
them); for every output leaf and input leaf the Jacobian block has shape
``output_leaf.shape + input_leaf.shape``; a pytree output gives the same
pytree of results.
"""

from __future__ import annotations

import functools
import math
import reprlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from wengert import numpy as wnp
from wengert.core.bind import dtype_of, is_traced, kind_of, primal, shape_of
from wengert.core.errors import PerformanceWarning
from wengert.core.levels import DUAL_TAG, Tag
from wengert.core.op import NoForwardRule
from wengert.core.subclasses import refuse_subclass
from wengert.core.tree import flatten, same_structure, unflatten
from wengert.forward.dual import Dual
from wengert.reverse.tensor import Tensor, connected
from wengert.transforms.reverse import (
    argnums_at,
    check_function,
    check_holomorphic_input,
    grad,
    grad_of,
    is_numeric_output,
    pullback_of,
    split_aux,
    transpose,
    unalias,
)

__all__ = [
    "jvp", "linearize", "derivative", "jacfwd", "jacrev", "jacobian", "hessian", "hvp",
    "perturbation",
]


class perturbation:  # noqa: N801 (used as a context manager, like a function)
    """``with perturbation(name) as tag``: a new forward-mode tag, the innermost one while
    the block runs; closed (``tag.active`` False) when it ends, so a dual number of it that
    escapes is caught. ``batch`` gives every dual of the tag that many tangents at once.

    Examples
    --------
    >>> import wengert as wg
    >>> with perturbation("demo") as tag:
    ...     y = wg.Dual(3.0, 1.0, tag) ** 2
    ...     (y.primal, y.tangent)
    (9.0, 6.0)
    >>> tag.active
    False
    """

    __slots__ = ("tag", "token")

    def __init__(self, name: str, batch: int | None = None) -> None:
        self.tag = Tag(name, batch)

    def __enter__(self) -> Tag:
        self.token = DUAL_TAG.set(self.tag)
        return self.tag

    def __exit__(self, *exc: object) -> None:
        self.tag.active = False
        DUAL_TAG.reset(self.token)


def _shape_dtype(x: Any) -> tuple[tuple[int, ...], Any]:
    if type(x) is float:
        return (), np.dtype(float)
    if is_traced(x):
        return shape_of(x), dtype_of(x)
    a = np.asarray(x)
    return a.shape, a.dtype


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _check_float(p: Any, where: str, what: str) -> tuple[tuple[int, ...], Any]:
    refuse_subclass(p, f"{where} ({what})")
    if isinstance(p, (str, bytes)):
        raise TypeError(
            f"{where}: {what} is a {type(p).__name__}; only floating point inputs can be "
            "differentiated. Pass floats or float arrays."
        )
    shape, dtype = _shape_dtype(p)
    if dtype.kind not in "fc":
        raise TypeError(
            f"{where}: {what} has dtype {dtype}; only floating point inputs can be "
            "differentiated. Pass floats (1.0 instead of 1, or np.asarray(x, dtype=float))."
        )
    return shape, dtype


def _check_pair(p: Any, t: Any, i: int, where: str) -> None:
    ps, _ = _check_float(p, where, f"primal {i}")
    refuse_subclass(t, f"{where} (tangent {i})")
    ts, tdt = _shape_dtype(t)
    if tdt.kind not in "biufc":
        raise TypeError(
            f"{where}: tangent {i} has dtype {tdt}; tangents must be numbers with the primal's "
            "shape."
        )
    if ps != ts:
        raise ValueError(
            f"{where}: primal {i} has shape {ps} but its tangent has shape {ts}; each tangent "
            "must have exactly its primal's shape."
        )


def _own(leaf: Any, tag: Tag) -> Any:
    """``leaf`` as a dual of ``tag`` when it is one, possibly inside tensors of inner levels.

    A tensor of a level inside this transform's (one made over a dual of
    ``tag``, or a ``GradientTape``'s inside the function) belongs to a reverse
    level that ends with this transform: its value is what this level
    differentiates.
    """
    while isinstance(leaf, Tensor) and leaf._level > tag.order:
        leaf = leaf._value
    return leaf


def _zero_tangent(leaf: Any) -> Any:
    shape, dtype = _shape_dtype(leaf)
    if shape == () and not isinstance(leaf, np.ndarray):
        if dtype == np.complex128:
            return 0j
        return 0.0 if dtype.kind not in "fc" or dtype == np.float64 else np.zeros((), dtype)
    return np.zeros(shape, dtype=dtype if dtype.kind in "fc" else float)


def _unwrap(out: Any, tag: Tag, where: str) -> tuple[Any, Any]:
    leaves, spec = flatten(out)
    primals, tangents = [], []
    for k, leaf in enumerate(leaves):
        own = _own(leaf, tag)
        if type(own) is Dual and own.tag is tag:
            primals.append(own.primal)
            tangents.append(own.tangent)
        else:
            if not is_numeric_output(leaf):  # a str, a generator...: no tangent to give
                raise TypeError(
                    f"{where}: output leaf {k} of the function is a {type(leaf).__name__}; it "
                    "must return arrays or numbers (or tuples/lists/dicts of them); return "
                    "other values as the aux of has_aux=True."
                )
            primals.append(leaf)
            tangents.append(_zero_tangent(leaf))
    return unflatten(spec, primals), unflatten(spec, tangents)


def _strip(tree: Any, tag: Tag) -> Any:
    """The auxiliary output: duals of ``tag`` replaced by their primals."""
    leaves, spec = flatten(tree)
    out = []
    for leaf in leaves:
        own = _own(leaf, tag)
        out.append(_plain(own.primal if type(own) is Dual and own.tag is tag else leaf))
    return unflatten(spec, out)


def _plain(x: Any) -> Any:
    """Unbox a tensor that no outer level differentiates."""
    if isinstance(x, Tensor) and not connected(x):
        return x._value
    return x


_NEW = object.__new__
_BOXES = (Dual, Tensor)


def _plain_tree(tree: Any) -> Any:
    leaves, spec = flatten(tree)
    return unflatten(spec, [_plain(x) for x in leaves])


def _jvp(fun: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool, where: str) -> Any:
    if (not has_aux and type(primals) is tuple and type(tangents) is tuple
            and len(primals) == 1 and len(tangents) == 1):
        p, t = primals[0], tangents[0]
        if (type(p) is np.ndarray and type(t) is np.ndarray and p.ndim and p.dtype.kind == "f"
                and t.dtype == p.dtype and t.shape == p.shape):
            # One float array and its tangent (hvp, jvp of an array function): the
            # checks and pytree handling below reduce to this, for a dual output.
            with perturbation(where) as tag:
                d = _NEW(Dual)
                d.primal, d.tangent, d.tag = p, t, tag
                out = fun(d)
                if type(out) is Dual and out.tag is tag:
                    po, to = out.primal, out.tangent
                    if not isinstance(po, _BOXES) and not isinstance(to, _BOXES):
                        return unalias(po, primals + tangents), unalias(to, primals + tangents)
                primals_out, tangents_out = _unwrap(out, tag, where)
            return (unalias(_plain_tree(primals_out), primals + tangents),
                    unalias(_plain_tree(tangents_out), primals + tangents))
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            f"{where}: primals and tangents must be tuples (one entry per argument of fun), "
            "e.g. wg.jvp(f, (x,), (v,))."
        )
    p_leaves, p_spec = flatten(tuple(primals))
    t_leaves, t_spec = flatten(tuple(tangents))
    if not same_structure(p_spec, t_spec):
        raise ValueError(
            f"{where}: primals and tangents have different structures ({len(p_leaves)} primal "
            f"leaves in {_describe(tuple(primals))}, {len(t_leaves)} tangent leaves in "
            f"{_describe(tuple(tangents))}); give one tangent per primal, nested the same way."
        )
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        _check_pair(p, t, i, where)
    with perturbation(where) as tag:
        duals = [Dual(p, t, tag) for p, t in zip(p_leaves, t_leaves)]
        result = fun(*unflatten(p_spec, duals))
        if has_aux:
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(
                    f"{where}: has_aux=True needs the function to return a pair (output, aux), "
                    f"got {type(result).__name__}."
                )
            out, aux = result
            aux = _strip(aux, tag)
        else:
            out, aux = result, None
        primals_out, tangents_out = _unwrap(out, tag, where)
    # (results that are the caller's arrays, or views of them, are copied: the caller
    # may change those in place later)
    primals_out = unalias(_plain_tree(primals_out), p_leaves + t_leaves)
    tangents_out = unalias(_plain_tree(tangents_out), p_leaves + t_leaves)
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def _describe(tree: Any) -> str:
    """A short picture of a pytree's structure, leaves shown as ``*``."""
    leaves, spec = flatten(tree)
    # (reprlib stops at a few levels: a deep structure is shown without recursing into it)
    return _SHORT.repr(unflatten(spec, [_Star()] * len(leaves)))


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 12, 12, 12, 12


class _Star:
    def __repr__(self) -> str:
        return "*"


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    """Evaluate ``fun`` and its directional derivative (Jacobian-vector product).

    Parameters
    ----------
    fun : callable
        A function of ``len(primals)`` arguments (arrays, floats, pytrees).
    primals, tangents : tuple or list
        The point and the direction, with the same structure and shapes.
    has_aux : bool
        ``fun`` returns ``(output, aux)``; ``aux`` is returned as a third
        value, with its dual numbers replaced by their primals.

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
    check_function(fun, "jvp")
    return _jvp(fun, primals, tangents, has_aux, "jvp")


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``fun(*primals)`` and the linear function computing its JVP at that point.

    As JAX's ``linearize``: ``fun`` is evaluated once, here, and
    ``f_jvp(*tangents)`` (one tangent per primal, the same pytrees and shapes)
    returns ``J · tangents`` in the output's pytree without ever calling ``fun``
    again. It evaluates the linearized program: the reverse pass of ``fun`` is
    recorded once as a program linear in the output's cotangent, and each call
    sweeps that program back from the tangents (the transpose of the VJP is the
    JVP). The arrays given as ``primals`` are copied, so changing them in place
    later changes nothing. With ``has_aux`` (``fun`` returns ``(output, aux)``) the
    result is ``(output, f_jvp, aux)``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> y, f_jvp = wg.linearize(np.exp, 0.0)
    >>> float(y), f_jvp(2.0)
    (1.0, 2.0)
    >>> y, f_jvp = wg.linearize(lambda x: np.sin(x) * x[0], np.array([0.0, 1.0]))
    >>> f_jvp(np.array([1.0, 0.0]))
    array([0.        , 0.84147098])
    """
    check_function(fun, "linearize")
    for i, p in enumerate(flatten(list(primals))[0]):
        _check_float(p, "linearize", f"primal {i}")
    out, f_vjp, aux = pullback_of(fun, primals, has_aux, "linearize")
    f_jvp = transpose(f_vjp, out, primals, "linearize")
    if has_aux:
        return out, f_jvp, aux
    return out, f_jvp


def derivative(fun: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The derivative of a function of one scalar, by forward mode.

    Examples
    --------
    >>> import wengert as wg
    >>> wg.derivative(lambda x: x * wg.derivative(lambda y: x + y)(1.0))(1.0)
    1.0
    """
    check_function(fun, "derivative")

    @functools.wraps(fun)
    def d(x: Any) -> Any:
        shape, _ = _check_float(x, "derivative", "the input")
        if shape != ():
            raise TypeError(
                f"derivative: the input must be a scalar, got shape {shape}; use wg.jacfwd or "
                "wg.jvp for array inputs."
            )
        return _jvp(fun, (x,), (1.0,), False, "derivative")[1]

    return d


def _basis(shape: tuple[int, ...], dtype: Any) -> Iterator[Any]:
    n = _size(shape)
    dtype = dtype if np.dtype(dtype).kind in "fc" else np.dtype(float)
    for k in range(n):
        e = np.zeros(n, dtype=dtype)
        e[k] = 1.0
        yield float(e[0]) if shape == () and e.dtype == np.float64 else e.reshape(shape)


def _stack_jac(
    cols: list[Any],
    out_shape: tuple[int, ...],
    in_shape: tuple[int, ...],
    axis_in_last: bool,
    dtype: Any,
    scalar_form: bool = True,
) -> Any:
    """Columns (forward mode, stacked last) or rows (reverse mode, stacked first)
    of one Jacobian block, as an array of shape ``out_shape + in_shape`` (a 0-d float64
    or complex128 block as a Python number, unless not ``scalar_form``)."""
    full = out_shape + in_shape
    if not cols:
        return np.zeros(full, dtype=dtype)
    if any(is_traced(c) for c in cols):
        stacked = wnp.stack(cols, axis=-1 if axis_in_last else 0)
        block = wnp.reshape(stacked, full)
        return _scalar_form(block) if scalar_form else block
    arrs = [np.asarray(c) for c in cols]
    arr = np.stack(arrs, axis=-1 if axis_in_last else 0).reshape(full)
    if arr.dtype.kind not in "fc":
        arr = arr.astype(dtype)
    if arr.shape == () and arr.dtype == np.float64 and scalar_form:
        return float(arr)
    if arr.shape == () and arr.dtype == np.complex128 and scalar_form:
        return complex(arr)
    return arr


def _example(x: Any) -> Any:
    """``x``, or a graph tracer's example value (what it stands for when traced)."""
    kind = kind_of(x)
    while kind is not None and kind.opaque:
        x = kind.primal(x)
        kind = kind_of(x)
    return x


def _scalar_form(x: Any) -> Any:
    """A traced 0-d float64 (complex128) block as eager mode gives it: a Python float
    (complex). A graph tracer takes that value as its example, so the compiled function
    returns that type; other traced values are as they are."""
    kind = kind_of(x)
    with_example = getattr(kind, "with_example", None)
    if with_example is None:
        return x
    example = kind.primal(x)
    if np.shape(example) != ():
        return x
    dtype = np.result_type(example)
    if dtype == np.float64 and type(example) is not float:
        return with_example(x, float(example))
    if dtype == np.complex128 and type(example) is not complex:
        return with_example(x, complex(example))
    return x


def _with_keywords(fun: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[..., Any]:
    """``fun`` with the keyword arguments of a call bound (passed through, not
    differentiated, as ``wg.grad`` and JAX's Jacobians pass them)."""
    return functools.partial(fun, **kwargs) if kwargs else fun


def _select(
    fun: Callable[..., Any], args: tuple[Any, ...], nums: tuple[int, ...]
) -> Callable[..., Any]:
    """``fun`` as a function of the arguments in ``nums`` only."""

    def f_sel(*sel: Any) -> Any:
        full = list(args)
        for k, i in enumerate(nums):
            full[i] = sel[k]
        return fun(*full)

    return f_sel


def _inputs(args: tuple[Any, ...], nums: tuple[int, ...], where: str, holomorphic: bool):
    """The differentiated arguments, their leaves, spec and ``(shape, dtype)`` each,
    checked: all complex with ``holomorphic``, otherwise real (but for ``jacrev``,
    whose real outputs can have complex inputs)."""
    sel = tuple(args[i] for i in nums)
    leaves, spec = flatten(sel)
    infos = []
    for k, leaf in enumerate(leaves):
        if holomorphic and not isinstance(leaf, (str, bytes)):
            check_holomorphic_input(_shape_dtype(leaf)[1], where)
        infos.append(_check_float(leaf, where, f"input {k}"))
    if not holomorphic and where != "jacrev" and any(dt.kind == "c" for _, dt in infos):
        raise TypeError(_complex_jacobian(where, "inputs", "input"))
    return sel, leaves, spec, infos


def _complex_jacobian(where: str, what: str, which: str) -> str:
    """The refusal of a Jacobian with complex inputs or outputs (JAX's wording)."""
    return (
        f"{where} requires real-valued {what}, but got a complex {which}. If the function "
        "is holomorphic, pass holomorphic=True for its complex Jacobian ∂f/∂z. Otherwise its "
        "derivative is a real-linear map, not a complex matrix: push complex tangents with "
        "wg.jvp (along z and i·z), pull cotangents back with wg.vjp, or use wg.hvp, or write "
        "the function on (np.real(z), np.imag(z))."
    )


def _check_outputs(out: Any, where: str, holomorphic: bool, real: bool) -> None:
    """All of ``out``'s leaves complex with ``holomorphic`` (as JAX); otherwise, when
    ``real`` (the reverse-mode Jacobians), none complex."""
    for leaf in flatten(out)[0]:
        dtype = _shape_dtype(leaf)[1]
        if holomorphic and dtype.kind != "c":
            raise TypeError(
                f"{where} with holomorphic=True requires outputs with complex dtype, but got "
                f"{dtype}. A holomorphic function has complex values: return them as complex "
                "(np.asarray(y, dtype=complex)), or drop holomorphic=True."
            )
        if real and not holomorphic and dtype.kind == "c":
            raise TypeError(_complex_jacobian(where, "outputs", "output"))


def _assemble(blocks: list[list[Any]], out_spec: Any, in_spec: Any, single: bool) -> Any:
    """``blocks[o][j]`` (output leaf o, input leaf j) as the output's pytree of the
    inputs' pytrees."""
    per_out = []
    for row in blocks:
        tree = unflatten(in_spec, row)
        per_out.append(tree[0] if single else tree)
    return unflatten(out_spec, per_out)


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian by forward mode.

    For one array input, the identity is pushed through once as a batch of
    tangents (a leading tangent axis); otherwise one JVP per input entry.

    For an array input and output the result has shape
    ``output.shape + input.shape``; pytrees give pytrees (see the module).

    With ``has_aux`` (as in JAX) ``fun`` returns ``(output, aux)`` and the new
    function returns ``(jacobian, aux)``, ``aux`` holding values (no dual
    numbers). With ``holomorphic=True`` the inputs and outputs must be complex
    and the result is the complex Jacobian ``∂f/∂z`` of a holomorphic ``fun``,
    pushing the tangents ``1 + 0j``. Holomorphy is assumed, not checked: for
    another function the result is the derivative along the real axes,
    ``∂f/∂z + ∂f/∂z̄``. A ``custom_vjp`` function inside ``fun`` has no
    forward-mode rule: use :func:`jacrev` (or :func:`jacobian`) for it.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> wg.jacfwd(lambda z: z ** 2, holomorphic=True)(np.array([1j, 2.0 + 0j]))
    array([[0.+2.j, 0.+0.j],
           [0.+0.j, 4.+0.j]])
    >>> wg.jacfwd(lambda x: (x ** 2, x.sum()), has_aux=True)(np.array([1.0, 2.0]))
    (array([[2., 0.],
           [0., 4.]]), np.float64(3.0))
    """
    return _jacfwd(fun, argnums, has_aux, holomorphic, "jacfwd")


def _jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
            holomorphic: bool, where: str) -> Callable[..., Any]:
    """:func:`jacfwd`, its errors naming ``where``."""
    check_function(fun, where)

    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        nums, single = argnums_at(argnums, len(args), where)
        sel, leaves, spec, infos = _inputs(args, nums, where, holomorphic)
        f_sel = _select(_with_keywords(fun, kwargs), args, nums)
        if (len(leaves) == 1 and type(leaves[0]) is np.ndarray and infos[0][1].kind in "fc"
                and leaves[0].size):
            found = _jacfwd_batched(f_sel, spec, leaves[0], infos[0], holomorphic, has_aux,
                                    where)
            if found is not None:
                blocks, out_spec, aux = found
                n = leaves[0].size
                _warn_if_reverse_is_cheaper(n, sum(b[0].size for b in blocks) // n,
                                            leaves[0].itemsize, where)
                result = _assemble(blocks, out_spec, spec, single)
                return (result, aux) if has_aux else result
        # A traced array input would have taken the batched path eagerly, which gives
        # arrays (also 0-d): so does its graph.
        batched = (len(leaves) == 1 and type(_example(leaves[0])) is np.ndarray
                   and infos[0][1].kind in "fc" and _size(infos[0][0]) > 0)
        cols: list[list[list[Any]]] = []
        out: Any = None
        aux: Any = None
        have_out = False
        # One call of the function per input entry, all at the same point: np.random's
        # state replayed for each (as one call would draw), and their values compared.
        state = np.random.get_state()
        after = None
        try:
            for j, (shape, dtype) in enumerate(infos):

                def f_leaf(x: Any, j: int = j) -> Any:
                    ls = list(leaves)
                    ls[j] = x
                    return f_sel(*unflatten(spec, ls))

                cj = []
                for e in _basis(shape, dtype):
                    if have_out:
                        np.random.set_state(state)
                    pushed = _jvp(f_leaf, (leaves[j],), (e,), has_aux, where)
                    if not have_out:
                        out = pushed[0]
                        aux = pushed[2] if has_aux else None
                        have_out = True
                        after = np.random.get_state()
                    else:
                        _same_call(out, pushed[0], where)
                    cj.append(flatten(pushed[1])[0])
                cols.append(cj)
        finally:
            if after is not None:
                np.random.set_state(after)
        if not have_out:  # no input entries: the function's value only
            out, aux = split_aux(f_sel(*sel), has_aux, where)
        _check_outputs(out, where, holomorphic, real=False)
        out_leaves, out_spec = flatten(out)
        _warn_if_reverse_is_cheaper(sum(_size(shape) for shape, _ in infos),
                                    sum(_size(_shape_dtype(ol)[0]) for ol in out_leaves),
                                    0, where)
        blocks = []
        for o, ol in enumerate(out_leaves):
            oshape, odtype = _shape_dtype(ol)
            row = []
            for j, (shape, dtype) in enumerate(infos):
                rdtype = np.result_type(dtype, odtype if odtype.kind in "fc" else dtype)
                row.append(_stack_jac([c[o] for c in cols[j]], oshape, shape, True, rdtype,
                                      not batched))
            blocks.append(row)
        result = _assemble(blocks, out_spec, spec, single)
        return (result, aux) if has_aux else result

    return jac


#: Forward mode's Jacobian pushes one tangent per input entry: past this many tangent
#: entries (input entries squared; 2²³ is 64 MiB in float64, n ≈ 2,900) it is worth a word
#: when the output is much smaller than the input and reverse mode would be cheaper.
LARGE_TANGENTS = 2 ** 23


def _warn_if_reverse_is_cheaper(n_in: int, n_out: int, itemsize: int, where: str) -> None:
    """Warn (a :class:`PerformanceWarning`) when forward mode pushed ``n_in`` tangents (as
    one block of ``itemsize``-byte entries when ``itemsize``) for at most an eighth as many
    output entries (a reverse pass costs a few forward passes: an eighth is a safe margin)."""
    if n_in * n_in <= LARGE_TANGENTS or 8 * n_out > n_in or where != "jacfwd":
        return
    block = (f", carried as one {n_in:,}×{n_in:,} block of tangents "
             f"({n_in * n_in * itemsize / 2 ** 20:,.0f} MiB)") if itemsize else ""
    warnings.warn(PerformanceWarning(
        f"jacfwd: forward mode costs one pass per input entry: {n_in:,} here{block}, for "
        f"{n_out:,} output entr{'y' if n_out == 1 else 'ies'}. Reverse mode costs one pass "
        "per output entry: wg.jacrev (or wg.grad for a scalar output) gives the same "
        "Jacobian for much less here."), stacklevel=3)


def _same_call(first: Any, again: Any, where: str) -> None:
    """Refuse calls of the function at the same point that gave other values."""
    a_leaves, b_leaves = flatten(first)[0], flatten(again)[0]
    same = len(a_leaves) == len(b_leaves)
    for a, b in zip(a_leaves, b_leaves) if same else ():
        a, b = primal(a), primal(b)
        if is_traced(a) or is_traced(b):  # a graph's values: not known while traced
            continue
        a, b = np.asarray(a), np.asarray(b)
        nan = a.dtype.kind in "fc" and b.dtype.kind in "fc"
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=nan):
            same = False
            break
    if not same:
        raise RuntimeError(
            f"{where}: the function is called once per input entry here (several inputs, "
            "or a pytree), all at the same point, and the calls gave other values: the "
            "Jacobian would mix several functions. It depends on something besides its "
            "arguments that changed between calls: random numbers from a "
            "np.random.Generator (draw them outside and pass them in; np.random's own state "
            "is replayed for each call), or state it changes itself. Make it a function of "
            "its arguments, or differentiate with wg.jacrev (one call).")


def _jacfwd_batched(
    f_sel: Callable[..., Any], spec: Any, x: np.ndarray, info: tuple[Any, Any],
    holomorphic: bool, has_aux: bool, where: str,
) -> tuple[list[list[Any]], Any, Any] | None:
    """All columns of the Jacobian in one pass: the identity as a batch of tangents.

    Returns ``(blocks, output spec, aux)``, or ``None`` when the function's output is
    not plain arrays (then the caller pushes the basis one vector at a time).
    """
    shape, dtype = info
    n = _size(shape)
    eye = np.eye(n, dtype=dtype).reshape((n,) + shape)
    with perturbation(where) as tag:
        tag.batch = n
        out, aux = split_aux(f_sel(*unflatten(spec, [Dual(x, eye, tag)])), has_aux, where)
        _check_outputs(out, where, holomorphic, real=False)
        out_leaves, out_spec = flatten(out)
        blocks = []
        for leaf in out_leaves:
            if type(leaf) is Dual and leaf.tag is tag:
                t = leaf.tangent
                plain = isinstance(leaf.primal, (np.ndarray, float))
                if not isinstance(t, np.ndarray) or not plain:
                    return None
                oshape = np.shape(leaf.primal)
                cols = t.reshape(n, -1).T  # (outputs, inputs)
                blocks.append([cols.reshape(oshape + shape)])
            elif isinstance(leaf, (np.ndarray, float, int, np.generic)):
                oshape = np.shape(leaf)
                # a float output's dtype, as its tangent has when it depends on x (and as
                # one JVP per entry gives it)
                odtype = getattr(leaf, "dtype", None)
                zdtype = odtype if odtype is not None and odtype.kind in "fc" else \
                    np.result_type(dtype, leaf)
                blocks.append([np.zeros(oshape + shape, dtype=zdtype)])
            else:
                return None
        if has_aux:
            aux = unalias(_strip(aux, tag), (x,))
    return blocks, out_spec, aux


def _reverse_pass(fun: Callable[..., Any], args: tuple[Any, ...],
                  argnums: int | Sequence[int], has_aux: bool, holomorphic: bool,
                  where: str) -> tuple[Any, ...]:
    """One reverse-mode pass of ``fun`` at ``args`` for a Jacobian: whether ``argnums``
    is one number, the differentiated inputs' shapes and dtypes and their pytree, whether
    the blocks are arrays (one array input, as :func:`jacfwd` gives them, 0-d too), the
    output, its pullback and the aux value."""
    nums, single = argnums_at(argnums, len(args), where)
    sel, leaves, spec, infos = _inputs(args, nums, where, holomorphic)
    arrays = len(leaves) == 1 and type(_example(leaves[0])) is np.ndarray
    out, f_vjp, aux = pullback_of(_select(fun, args, nums), sel, has_aux, where)
    _check_outputs(out, where, holomorphic, real=True)
    return (single, arrays), infos, spec, out, f_vjp, aux


def _jacrev_from(
    out: Any, f_vjp: Callable[..., Any], infos: list[Any], spec: Any, form: tuple[bool, bool]
) -> Any:
    single, arrays = form
    out_leaves, out_spec = flatten(out)
    zeros = [_zero_tangent(ol) for ol in out_leaves]
    blocks = []
    for o, ol in enumerate(out_leaves):
        oshape, odtype = _shape_dtype(ol)
        rows: list[list[Any]] = [[] for _ in infos]
        for e in _basis(oshape, odtype):
            cts = list(zeros)
            cts[o] = e
            grads = f_vjp(unflatten(out_spec, cts))
            for j, g in enumerate(flatten(grads)[0]):
                rows[j].append(g)
        row = []
        for j, (shape, dtype) in enumerate(infos):
            rdtype = np.result_type(dtype, odtype if odtype.kind in "fc" else dtype)
            row.append(_stack_jac(rows[j], oshape, shape, False, rdtype, not arrays))
        blocks.append(row)
    return _assemble(blocks, out_spec, spec, single)


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one VJP per output entry.

    Same result layout as :func:`jacfwd`, and ``has_aux`` as there (the new
    function returns ``(jacobian, aux)``). The outputs must be real, unless
    ``holomorphic=True`` (as in JAX): then inputs and outputs must be complex
    and the result is the complex Jacobian ``∂f/∂z`` of a holomorphic
    ``fun``, pulling back the cotangents ``1 + 0j`` (wengert's cotangents
    pair without conjugation, so a row is ``∂f_k/∂z``, not its conjugate).
    Holomorphy is assumed, not checked: for another function the result is
    ``∂f/∂z + conj(∂f/∂z̄)``, not :func:`jacfwd`'s.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jacrev(lambda x: np.cumsum(x))(np.array([1.0, 2.0]))
    array([[1., 0.],
           [1., 1.]])
    >>> wg.jacrev(np.fft.fft, holomorphic=True)(np.zeros(2, complex))  # the DFT matrix
    array([[ 1.+0.j,  1.+0.j],
           [ 1.+0.j, -1.+0.j]])
    >>> wg.jacrev(lambda x: (x * 3.0, {"x": x}), has_aux=True)(np.array([1.0]))
    (array([[3.]]), {'x': array([1.])})
    """
    check_function(fun, "jacrev")

    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        form, infos, spec, out, f_vjp, aux = _reverse_pass(
            _with_keywords(fun, kwargs), args, argnums, has_aux, holomorphic, "jacrev")
        result = _jacrev_from(out, f_vjp, infos, spec, form)
        return (result, aux) if has_aux else result

    return jac


def jacobian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
             holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian, by whichever mode is cheaper.

    Forward mode costs one pass per input entry and reverse mode one per
    output entry. ``jacobian`` first runs ``fun`` once under reverse mode (to
    learn the output's size); it then uses :func:`jacfwd` when the
    differentiated inputs have fewer entries than the output (a tall
    Jacobian), and otherwise finishes in reverse mode (:func:`jacrev`),
    reusing that pass. A function without a forward-mode rule (a
    ``custom_vjp`` function inside it) is finished in reverse mode whatever
    its shape. Both give the same result layout, and ``has_aux`` and
    ``holomorphic`` mean what they do for them. (JAX's ``jacobian`` is its
    ``jacrev``.)

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.jacobian(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0, 3.0]))
    array([2., 4., 6.])
    """
    check_function(fun, "jacobian")

    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        form, infos, spec, out, f_vjp, aux = _reverse_pass(
            _with_keywords(fun, kwargs), args, argnums, has_aux, holomorphic, "jacobian")
        n_in = sum(_size(shape) for shape, _ in infos)
        n_out = sum(_size(_shape_dtype(leaf)[0]) for leaf in flatten(out)[0])
        if n_in < n_out:
            try:
                return _jacfwd(fun, argnums, has_aux, holomorphic, "jacobian")(*args, **kwargs)
            except NoForwardRule:
                pass  # a custom_vjp function (or an op) without a JVP: reverse mode after all
        result = _jacrev_from(out, f_vjp, infos, spec, form)
        return (result, aux) if has_aux else result

    return jac


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian of a scalar function: forward over reverse (``jacfwd(grad(f))``).

    With a tuple ``argnums`` the result is nested: ``H[i][j]`` is the block of
    second derivatives in arguments ``argnums[i]`` and ``argnums[j]``. With
    ``has_aux`` (as in JAX) ``fun`` returns ``(output, aux)`` and the new function
    ``(hessian, aux)``. With ``holomorphic=True`` (see :func:`grad`) the inputs and
    the output are complex and ``H`` holds the complex second derivatives
    ``∂²f/∂z_i∂z_j``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    >>> wg.hessian(lambda z: z ** 3, holomorphic=True)(2j)  # 6z
    12j
    >>> wg.hessian(lambda x: (x ** 3, x * 2.0), has_aux=True)(1.0)
    (6.0, 2.0)
    """
    check_function(fun, "hessian")
    return _jacfwd(grad(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                   has_aux, holomorphic, "hessian")


def hvp(fun: Callable[..., Any], x: Any, v: Any) -> Any:
    """The Hessian-vector product ``H(x) · v`` without forming ``H``.

    Forward over reverse: the JVP of the gradient along ``v``, so it costs a
    few function evaluations whatever the size of ``x``. ``x`` and ``v``
    may be arrays or matching pytrees.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    """
    check_function(fun, "hvp")
    return _jvp(grad_of(fun, "hvp"), (x,), (v,), False, "hvp")[1]
