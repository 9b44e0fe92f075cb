"""Custom differentiation rules (JAX conventions): :class:`custom_vjp`, :class:`custom_jvp`.

A decorated function runs as itself on plain values. On tensors it is
recorded as *one* node on the tape, named after the function
(``y.grad_fn.name == "SafeLogBackward"`` for ``safe_log``), whose rule is
yours:

* :class:`custom_vjp` -- ``f.defvjp(fwd, bwd)``: ``fwd(*args)`` returns
  ``(out, residuals)`` and runs on the raw NumPy values in the forward pass;
  ``bwd(residuals, g)`` returns one cotangent per positional argument
  (``None``: no gradient). The residuals are stored in the node (as a hidden
  last input), so they are freed with the node's other saved values by
  ``backward()`` and every call keeps its own. Reverse mode only: dual
  numbers raise. When the backward pass is itself recorded
  (``create_graph=True``, ``grad(grad(f))``) ``fwd`` is re-run on the
  recorded inputs so that the residuals, and hence ``bwd``, depend on them:
  higher derivatives are the derivatives of your ``bwd``. Forward over
  reverse (``wg.hessian``, ``wg.hvp``) works the same way: ``fwd`` and
  ``bwd`` run on dual numbers (a call of ``f`` inside ``fwd`` runs its body).
* :class:`custom_jvp` -- ``f.defjvp(rule)``: ``rule(primals, tangents)``
  returns ``(primal_out, tangent_out)`` and is used for dual numbers
  (forward mode). Reverse mode uses the same rule, transposed: the node's
  VJP evaluates ``rule`` at the stored inputs with tangents that are fresh
  tensors, and pulls the cotangent back through ``tangent_out`` (linear in
  the tangents) with the ordinary tape. So ``wg.grad`` sees your rule, not
  the body of ``f`` (as in JAX, where the JVP rule is linearised and
  transposed); the rule must be written with differentiable operations.

Complex values follow wengert's convention (HIPS autograd's and JAX's): ``bwd``
gets the cotangent ``g`` and returns the gradient of ``Re(g·f)`` (``g·f′(z)`` for a
holomorphic ``f``, no conjugation); a real input's cotangent must be real.

A function with several outputs (a tuple, list or dict) is recorded as its
node plus one small ``<name>_output`` node per output that selects it.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> @wg.custom_vjp
... def clip_gradient(x):
...     return x
>>> def clip_fwd(x):
...     return x, None
>>> def clip_bwd(res, g):
...     return (np.clip(g, -1.0, 1.0),)
>>> clip_gradient.defvjp(clip_fwd, clip_bwd)
>>> wg.grad(lambda x: (clip_gradient(x) * 5.0).sum())(np.array([1.0, 2.0]))
array([1., 1.])
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
from wengert.core import tree as _tree
from wengert.core.bind import apply, dtype_of, example, is_complex, is_traced, owner, primal
from wengert.core.bind import shape_of as _shape
from wengert.core.errors import EscapedLevelError, NoForwardRule, NoRuleError, NoVJPError
from wengert.core.modes import GRAD_ENABLED, RECORDERS
from wengert.core.node import Node
from wengert.core.op import ALL_INPUTS, Op, PerInput
from wengert.core.subclasses import refuse_subclass
from wengert.core.sweep_fast import backprop
from wengert.forward.dual import DUAL, Dual
from wengert.ops.elementwise import POSITIVE
from wengert.ops.shape import stack
from wengert.reverse.recording import record, recorders_tracking
from wengert.reverse.tensor import Tensor, constant, is_float_value, lifter, value_of
from wengert.transforms.reverse import check_function, leaf_for, vjp

__all__ = ["custom_vjp", "custom_jvp"]

_LEAF = _tree._LEAF

#: The custom_vjp functions whose ``fwd`` is running on dual numbers (forward
#: over reverse); a call of the function itself inside its ``fwd`` runs its body.
_IN_FWD: ContextVar[tuple[Any, ...]] = ContextVar("wengert_custom_vjp_fwd", default=())


# -- arguments ------------------------------------------------------------------
def _op_name(fun: Any) -> str:
    name = re.sub(r"\W", "", getattr(fun, "__name__", "") or "")
    return name or "custom"


def _is_numeric(v: Any) -> bool:
    return is_float_value(v) or is_traced(v) or isinstance(v, (int, np.integer)) or (
        isinstance(v, np.ndarray) and v.dtype.kind in "biu"
    )


def _refuse_subclasses(leaves: Sequence[Any], name: str) -> None:
    """A masked array or an ``np.matrix`` beside traced values: the rules would see the
    data beneath (the masked entries counted, ``*`` elementwise)."""
    for k, a in enumerate(leaves):
        refuse_subclass(a, f"{name}: argument leaf {k}")


def _refuse_differentiable(x: Any, what: str) -> None:
    """A value that carries a derivative must not be treated as a constant silently."""
    leaves, _ = _tree.flatten(x)
    for leaf in leaves:
        if (isinstance(leaf, Tensor) and (leaf._rg or leaf._node is not None)) or hasattr(
            leaf, "tangent"
        ):
            raise TypeError(
                f"{what}, but it carries a derivative (a tensor that requires grad or a dual "
                "number), which would be silently dropped. Pass it as a positional, "
                "differentiable argument, or wrap it in wg.stop_gradient(...) if no gradient "
                "should flow through it."
            )


class _Args:
    """Positional arguments split into static ones and the leaves of the others."""

    __slots__ = ("n", "static", "diff", "specs", "counts", "leaves")

    def __init__(self, args: tuple[Any, ...], nondiff: tuple[int, ...], where: str) -> None:
        n = len(args)
        static = {}
        for i in nondiff:
            if not -n <= i < n:
                raise ValueError(f"{where}: nondiff_argnums contains {i}, but it got {n} arguments")
            _refuse_differentiable(args[i], f"{where}: argument {i % n} is in nondiff_argnums")
            static[i % n] = value_of(args[i])
        self.n = n
        self.static = static
        self.diff = [i for i in range(n) if i not in static]
        self.specs = []
        self.counts = []
        leaves: list[Any] = []
        for i in self.diff:
            lv, spec = _tree.flatten(args[i])
            leaves.extend(lv)
            self.specs.append(spec)
            self.counts.append(len(lv))
        self.leaves = leaves

    def rebuild(self, leaves: Sequence[Any]) -> list[Any]:
        """All positional arguments, with ``leaves`` in place of the differentiable ones."""
        args: list[Any] = [None] * self.n
        for i, v in self.static.items():
            args[i] = v
        k = 0
        for i, spec, c in zip(self.diff, self.specs, self.counts):
            args[i] = _tree.unflatten(spec, list(leaves[k : k + c]))
            k += c
        return args

    def diff_args(self, leaves: Sequence[Any]) -> tuple[Any, ...]:
        """The differentiable arguments only, as a tuple, rebuilt from ``leaves``."""
        out = []
        k = 0
        for spec, c in zip(self.specs, self.counts):
            out.append(_tree.unflatten(spec, list(leaves[k : k + c])))
            k += c
        return tuple(out)

    def nondiff_values(self) -> list[Any]:
        return [self.static[i] for i in sorted(self.static)]


def _count(spec: Any) -> int:
    if spec == _LEAF:
        return 1
    return sum(_count(c) for c in spec[2])


def _leaves_like(spec: Any, tree: Any, what: str) -> list[Any]:
    """The leaves of ``tree`` laid out as ``spec``; ``None`` stands for a zero subtree."""
    if tree is None:
        return [None] * _count(spec)
    if spec == _LEAF:
        return [tree]
    kind, keys, children = spec
    if kind is type(None):
        return []
    if kind is dict:
        if not isinstance(tree, dict) or set(tree) != set(keys):
            raise TypeError(f"{what}: expected a dict with keys {keys}, got {tree!r:.80}")
        items = [tree[k] for k in keys]
    else:
        if not isinstance(tree, (tuple, list)) or len(tree) != len(children):
            raise TypeError(
                f"{what}: expected a {kind.__name__} of length {len(children)}, got {tree!r:.80}"
            )
        items = list(tree)
    out: list[Any] = []
    for c, item in zip(children, items):
        out.extend(_leaves_like(c, item, what))
    return out


def _zeros(raw: Any) -> Any:
    """A zero cotangent or tangent for a raw value (a float stays a float)."""
    raw = primal(raw)
    if type(raw) is float:
        return 0.0
    if is_traced(raw):  # a graph tracer's value is only an example: its shape and dtype
        shape, dtype = _shape(raw), dtype_of(raw)
    else:
        a = np.asarray(raw)
        shape, dtype = a.shape, a.dtype
    return np.zeros(shape, dtype=dtype if dtype.kind in "fc" else np.float64)


def _probe(zero: Any) -> Any:
    """A tangent of ``zero``'s shape and dtype whose entries differ (no cancellation in
    the dot-product test)."""
    if type(zero) is float:
        return 0.6180339887498949
    a = np.asarray(zero)
    entries = 0.6180339887498949 + 0.25 * np.sin(1.0 + np.arange(a.size))
    return entries.reshape(a.shape).astype(a.dtype)


def _plain(v: Any) -> np.ndarray | None:
    """``v``'s plain value as a NumPy array of numbers; ``None`` when it is not one."""
    if v is None:
        return None
    a = np.asarray(example(v))
    return a if a.dtype.kind in "fciub" else None


def _dual_under(v: Any) -> Any:
    """The value under any tensors (a dual number, if there is one)."""
    while isinstance(v, Tensor):
        v = v._value
    return v


def _connected(x: Any) -> bool:
    return isinstance(x, Tensor) and (x._rg or x._node is not None)


def _at_level(x: Any, level: float) -> bool:
    """Whether ``x`` is a tensor of ``level`` or an inner one that carries a derivative
    (a value the custom function would close over, at the level it is recorded at)."""
    return _connected(x) and x._level >= level


def _split_level(leaves: list[Any]) -> tuple[float, list[bool]]:
    """The level a call on ``leaves`` is recorded at (the innermost tensor level) and,
    per leaf, whether it is a tensor of that level (the others are constants there)."""
    level = max((a._level for a in leaves if isinstance(a, Tensor)), default=0)
    return level, [isinstance(a, Tensor) and a._level == level for a in leaves]


def _keep(v: Any) -> Any:
    """A constant tensor as its value; values of outer levels (on their graphs) as they are."""
    return v._value if isinstance(v, Tensor) and not _connected(v) else v


def _closure_error(kind: str, name: str) -> TypeError:
    return TypeError(
        f"Detected differentiation of a {kind} function ({name!r}) with respect to a "
        f"closed-over value. That isn't supported because the custom {kind[-3:].upper()} rule "
        f"only specifies how to differentiate the {kind} function with respect to explicit "
        f"input parameters. Pass the tensor to {name!r} as an argument instead."
    )


# -- several outputs ----------------------------------------------------------------
class _Pack:
    """The cotangents of a function's several outputs (``None``: zero); adds itemwise."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def __add__(self, other: Any) -> _Pack:
        other = value_of(other)
        pairs = zip(self.parts, other.parts)
        return _Pack([a if b is None else (b if a is None else a + b) for a, b in pairs])

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"_Pack({self.parts!r})"


def _select_rule(g: Any, ans: Any, packed: Any, index: int) -> _Pack:
    parts: list[Any] = [None] * len(value_of(packed))
    parts[index] = g
    return _Pack(parts)


def _select_jvp(tangents: Any, ans: Any, packed: Any, index: int) -> Any:
    t = tangents[0]
    return None if t is None else t[index]


def _output_op(name: str) -> Op:
    return Op(
        f"{name}_output",
        lambda packed, index: packed[index],
        (_select_rule,),
        jvp=_select_jvp,
        reads=(0,),
        formula=f"selects one output of {name}",
        complex_rules=True,
    )


# -- the node --------------------------------------------------------------------------
class _Saved:
    """What a custom node keeps, stored as its last input (so ``backward()`` frees it).

    ``last`` is the last input position whose rule runs; the cotangents of all
    inputs are computed once per visit of the node and cached until then.
    """

    __slots__ = ("fun", "args", "kwargs", "mask", "edges", "residuals", "cache", "last",
                 "single", "out_spec", "rng", "n_free", "level", "fingerprint")

    def __init__(self, fun: Any, args: _Args, kwargs: dict[str, Any], mask: list[bool]) -> None:
        self.fun = fun
        self.args = args
        self.kwargs = kwargs
        self.mask = mask  # which leaves were tensors
        self.edges: tuple[Any, ...] = ()
        self.residuals: Any = None
        self.cache: Any = None
        self.last = -1
        self.single = True
        self.out_spec: Any = _LEAF
        self.rng: Any = None
        self.n_free = 0
        self.level = 0.0
        self.fingerprint: Any = None

    def __repr__(self) -> str:
        return f"<saved by {getattr(self.fun, '__name__', 'a custom rule')}>"


def _pullback_rule(pullback: Callable[..., list[Any]]) -> PerInput:
    """Per-input VJP rules from ``pullback(saved, g, ans, inputs, create)`` (all at once)."""

    def rule(i: int, g: Any, ans: Any, *inputs: Any) -> Any:
        saved = value_of(inputs[-1])
        cache = saved.cache
        if cache is None or cache[0] is not g:
            create = isinstance(inputs[-1], Tensor)  # the sweep wrapped the inputs
            cache = saved.cache = (g, pullback(saved, g, ans, inputs[:-1], create))
        ct = cache[1][i]
        if i >= saved.last:
            saved.cache = None
        return ct

    rule.__name__ = getattr(pullback, "__name__", "pullback")
    return PerInput(rule)


def _recording(tensors: Sequence[Any]) -> tuple[bool, Any] | None:
    """``(requires_grad, recorders)`` when a call on ``tensors`` must be recorded, else
    ``None``."""
    if not GRAD_ENABLED.get():
        return None
    recs = RECORDERS.get()
    args = tuple(tensors)
    active = recorders_tracking(args, recs) if recs else ()
    rg = any(isinstance(a, Tensor) and a._rg for a in args)
    return (rg, active) if (rg or active) else None


def _record_call(
    op: Op, out_op: Op, inputs: list[Any], raws: list[Any], out: Any, saved: _Saved,
    rg: bool, active: Any,
) -> Any:
    """Record ``out = op(inputs)`` as one node (plus output selectors) at ``saved.level``;
    return the outputs. ``inputs`` holds the tensors of that level (``None`` elsewhere)."""
    level = saved.level
    out_leaves, out_spec = _tree.flatten(out)
    saved.out_spec = out_spec
    saved.single = out_spec == _LEAF
    for k, leaf in enumerate(out_leaves):
        if not _is_numeric(leaf) or (isinstance(leaf, Tensor) and leaf._level >= level):
            raise TypeError(
                f"{op.name}: the function must return NumPy values (arrays or floats, or "
                f"tuples/lists/dicts of them); output {k} is {type(leaf).__name__}"
            )
    args = tuple(inputs) + (None,)
    packed = out if saved.single else tuple(out_leaves)
    t = record(op, args, tuple(raws) + (saved,), packed, None, rg, active, level)
    node = t._node  # reads=ALL_INPUTS: every input is saved and version-checked
    edges = node.parents()
    saved.edges = edges
    saved.args.leaves = []  # the node holds the raw values; drop the tensors
    saved.last = max((i for i, p in enumerate(edges) if p is not None), default=-1)
    if saved.single:
        return t if is_float_value(primal(out)) else constant(out, level)
    results = []
    for k, leaf in enumerate(out_leaves):
        if is_float_value(primal(leaf)):
            results.append(record(out_op, (t,), (packed,), leaf, {"index": k}, rg, active,
                                  level))
        else:
            results.append(constant(leaf, level))
    return _tree.unflatten(out_spec, results)


def _out_cotangents(saved: _Saved, g: Any) -> list[Any]:
    """Per output leaf, the cotangent (``None``: zero)."""
    if saved.single:
        return [g]
    return list(value_of(g).parts)


def _out_values(saved: _Saved, ans: Any) -> list[Any]:
    v = value_of(ans)
    return [v] if saved.single else list(v)


def _fit_cotangents(name: str, kind: str, cts: list[Any], xs: Sequence[Any],
                    saved: _Saved) -> list[Any]:
    """Check shapes; zeros for ``None``; one entry per node input."""
    out = []
    for j, (ct, x, edge) in enumerate(zip(cts, xs, saved.edges)):
        if edge is None:
            out.append(None)
            continue
        if ct is None:
            out.append(_zeros(x))
            continue
        if _shape(ct) != _shape(x):
            raise ValueError(
                f"{kind} {name!r}: the cotangent for input leaf {j} has shape {_shape(ct)}, but "
                f"the input has shape {_shape(x)}; each cotangent must have its primal's shape."
            )
        if dtype_of(ct).kind == "c" and dtype_of(x).kind != "c":
            raise TypeError(
                f"{kind} {name!r}: the cotangent for input leaf {j} is complex "
                f"({dtype_of(ct)}) but the input is real, and a real input gets a real "
                "gradient: return its real part (the imaginary part is the derivative along "
                "a direction the input cannot move in)."
            )
        out.append(ct)
    return out


def _region(roots: list[tuple[Any, Any]], start: int) -> set[int]:
    """Ids of the nodes recorded after ``start`` that lead to ``roots``."""
    ids: set[int] = set()
    todo = []
    for edge, _ in roots:
        if type(edge) is Node and edge.seq < start and id(edge) not in ids:
            ids.add(id(edge))
            todo.append(edge)
    while todo:
        node = todo.pop()
        for p in node.parents():
            if type(p) is Node and p.seq < start and id(p) not in ids:
                ids.add(id(p))
                todo.append(p)
    return ids


def sweep_region(outs: list[Any], gs: list[Any], start: int, wanted: list[Any],
                 create: bool, grad_mode: bool) -> dict[int, Any]:
    """Backpropagate ``gs`` from ``outs`` through the nodes recorded after ``start`` only.

    Used by the rules that recompute something inside the backward pass: the
    sweep never leaves the recomputed region (nodes of the outer graph are
    neither run nor freed), runs no hooks of leaves, accumulates nothing, and
    returns ``id(edge) -> cotangent`` for ``wanted`` (nodes and leaves).
    """
    roots = []
    level = 0.0
    for o, g in zip(outs, gs):
        if g is not None and _connected(o):
            roots.append((o._node if o._node is not None else o, g))
            level = o._level
    if not roots:
        return {}
    node_cts, reached = backprop(
        roots, wanted=[w for w in wanted if type(w) is Node], retain_graph=create,
        grad_mode=grad_mode or create, lift=lifter(level) if create else None,
        restrict=_region(roots, start),
    )
    leaf_cts = {id(leaf): g for leaf, g in reached}
    return {id(w): (node_cts if type(w) is Node else leaf_cts)[id(w)] for w in wanted
            if id(w) in (node_cts if type(w) is Node else leaf_cts)}


def entry_leaf(x: Any, level: float) -> Tensor:
    """A fresh differentiable stand-in for ``x`` at ``level``, for a recomputation.

    A raw value (or a value of an outer level) gives a new leaf. A tensor of
    ``level`` on a recorded backward pass (``create_graph``), or watched by a
    tape, gives an identity node on it, so the stand-in stays connected to it.
    """
    if isinstance(x, Tensor) and x._level == level:
        if _connected(x):
            return apply(POSITIVE, x)
        recs = RECORDERS.get()
        if recs and recorders_tracking((x,), recs):  # watched by a tape only
            return apply(POSITIVE, x)
        x = x._value
    return leaf_for(x, level)


def _forward_mode_error(name: str) -> TypeError:
    return NoForwardRule(
        f"{name!r} got dual numbers (forward mode: wg.jvp, wg.jacfwd, wg.derivative), but "
        "custom_vjp functions support reverse mode only. Differentiate it in reverse mode: "
        "wg.jacrev instead of wg.jacfwd (wg.jacobian picks reverse mode for it by itself), "
        "wg.grad, wg.vjp or wg.linearize; or give it a forward-mode rule with custom_jvp."
    )


# -- what custom_vjp and custom_jvp share ----------------------------------------------
class _CustomFunction:
    """A user function recorded as one op, with a rule the user sets afterwards."""

    decorator = ""  # "custom_vjp" or "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int]) -> None:
        check_function(fun, self.decorator)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._out_op = _output_op(_op_name(fun))

    def __repr__(self) -> str:
        return f"<{self.decorator} {self.op.name}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    # -- the op record's slots -------------------------------------------------------
    def _impl(self, *inputs: Any) -> Any:
        saved = inputs[-1]
        return self.fun(*saved.args.rebuild(inputs[:-1]), **saved.kwargs)

    # -- calling -----------------------------------------------------------------------
    def _owner(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[_Args, Any]:
        """The arguments' structure and the kind of value that owns them (``None`` for
        plain values); keyword arguments must be static."""
        for key, value in kwargs.items():
            _refuse_differentiable(value, f"{self.op.name}: keyword argument {key!r} is static")
        spec = _Args(args, self.nondiff_argnums, self.op.name)
        kind, _ = owner(spec.leaves)
        if kind is not None:
            _refuse_subclasses(spec.leaves, self.op.name)
        return spec, kind

    def _traced_call(self, kind: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A graph being traced records one step that calls this function."""
        return kind.record_call(self, args, kwargs, self.op.name, derivative_free=False,
                                replay=True)


# -- custom_vjp -------------------------------------------------------------------------
class custom_vjp(_CustomFunction):
    """A function with a custom vector-Jacobian product (reverse-mode rule), as in JAX.

    Decorate the function, then call ``f.defvjp(fwd, bwd)``:

    * ``fwd(*args)`` returns ``(out, residuals)``; it runs on raw NumPy values,
      and the residuals (any values) are kept in the tape node;
    * ``bwd(residuals, g)`` returns a tuple with one cotangent per positional
      argument (each shaped like its argument; ``None`` for no gradient).

    On plain values ``f`` just runs. On tensors it is recorded as one node
    named after ``f`` and differentiated with ``bwd`` by ``Tensor.backward``,
    :func:`wengert.grad`, :func:`wengert.vjp` and :class:`wengert.GradientTape`.
    Forward mode (dual numbers) raises: use :class:`custom_jvp` for that.
    Higher derivatives differentiate ``bwd`` (``fwd`` is re-run on the
    recorded inputs so the residuals depend on them); so does forward over
    reverse (``wg.hessian``), where ``fwd`` and ``bwd`` see dual numbers.

    Parameters
    ----------
    fun : callable
        The function; positional arguments may be arrays, floats or
        tuples/lists/dicts of them. Keyword arguments are passed through to
        ``fun`` and ``fwd`` as constants.
    nondiff_argnums : tuple of int
        Arguments that are not differentiated (functions, flags, sizes).
        ``bwd`` receives them first, ``bwd(*nondiff, residuals, g)``, and
        returns cotangents for the other arguments only.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> @wg.custom_vjp
    ... def log1pexp(x):
    ...     return np.log1p(np.exp(x))
    >>> def log1pexp_fwd(x):
    ...     return log1pexp(x), x
    >>> def log1pexp_bwd(x, g):
    ...     return (g * (1.0 - 1.0 / (1.0 + np.exp(x))),)
    >>> log1pexp.defvjp(log1pexp_fwd, log1pexp_bwd)
    >>> x = wg.tensor([0.0, 1000.0], requires_grad=True)
    >>> y = log1pexp(x).sum()
    >>> y.backward()
    >>> x.grad
    array([0.5, 1. ])
    >>> log1pexp(x).grad_fn
    <Log1pexpBackward>
    """

    decorator = "custom_vjp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        name = _op_name(fun)
        self.op = Op(
            name,
            self._impl,
            _pullback_rule(self._pullback),
            jvp=self._no_jvp,
            reads=ALL_INPUTS,
            state_input=True,  # the last input is the _Saved record
            formula=f"custom VJP of {name} (defvjp)",
            complex_rules=True,  # the user's rules, in the documented convention
        )

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, g) -> tuple``."""
        check_function(fwd, "defvjp (fwd)")
        check_function(bwd, "defvjp (bwd)")
        self.fwd = fwd
        self.bwd = bwd

    def _no_jvp(self, *args: Any, **kwargs: Any) -> Any:
        raise _forward_mode_error(self.op.name)

    # -- calling -------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec, kind = self._owner(args, kwargs)
        if kind is None:
            return self.fun(*args, **kwargs)
        leaves = spec.leaves
        if kind.records_calls:  # a graph being traced: one step that calls this function
            return self._traced_call(kind, args, kwargs)
        if kind is DUAL:
            if self in _IN_FWD.get():  # ``fwd`` calling ``f`` (forward over reverse)
                return self.fun(*args, **kwargs)
            raise _forward_mode_error(self.op.name)
        level, mine = _split_level(leaves)
        raws = [a._value if m else a for a, m in zip(leaves, mine)]
        inputs = [a if m else None for a, m in zip(leaves, mine)]
        plain = spec.rebuild(raws)
        rec = _recording([a for a in inputs if a is not None])
        if rec is None:
            out = self.fun(*plain, **kwargs)
            return _tree.tree_map(lambda v: v if isinstance(v, Tensor) else constant(v, level),
                                  out)
        if self.fwd is None or self.bwd is None:
            raise NoVJPError(
                f"No VJP defined for custom_vjp function {self.op.name} using defvjp: call "
                f"{self.op.name}.defvjp(fwd, bwd) before differentiating it."
            )
        result = self._run_fwd(plain, kwargs, raws)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(
                f"Custom VJP fwd rule of {self.op.name!r} must produce a pair (list or tuple of "
                f"length two) representing primal outputs and residuals, got "
                f"{type(result).__name__}."
            )
        out, residuals = result
        res_leaves = _tree.flatten(residuals)[0]
        if any(_at_level(v, level) for v in _tree.flatten(out)[0] + res_leaves):
            raise _closure_error("custom_vjp", self.op.name)
        out = _tree.tree_map(_keep, out)
        saved = _Saved(self, spec, kwargs, mine)
        saved.level = level
        saved.residuals = residuals
        return _record_call(self.op, self._out_op, inputs, raws, out, saved, *rec)

    def _run_fwd(self, args: list[Any], kwargs: dict[str, Any], values: list[Any]) -> Any:
        """``fwd(*args)``; on dual numbers (a forward level outside this reverse one),
        with ``f`` allowed to run its body inside ``fwd``: the tangent of the
        output then comes from ``f``'s body and higher derivatives from ``bwd``."""
        if not any(type(_dual_under(v)) is Dual for v in values):
            return self.fwd(*args, **kwargs)
        token = _IN_FWD.set(_IN_FWD.get() + (self,))
        try:
            return self.fwd(*args, **kwargs)
        finally:
            _IN_FWD.reset(token)

    # -- the VJP ---------------------------------------------------------------------------
    def _pullback(self, saved: _Saved, g: Any, ans: Any, xs: tuple[Any, ...],
                  create: bool) -> list[Any]:
        spec = saved.args
        gs = _out_cotangents(saved, g)
        outs = _out_values(saved, ans)
        g_tree = _tree.unflatten(
            saved.out_spec, [_zeros(o) if gk is None else gk for gk, o in zip(gs, outs)]
        )
        residuals = saved.residuals
        if create:
            # Recorded backward pass: recompute the residuals from the recorded
            # inputs so that bwd's result depends on them (higher derivatives).
            leaves = [x if m else value_of(x) for x, m in zip(xs, saved.mask)]
            residuals = self._run_fwd(spec.rebuild(leaves), saved.kwargs, leaves)[1]
        result = self.bwd(*spec.nondiff_values(), residuals, g_tree)
        n_diff = len(spec.diff)
        if not isinstance(result, (tuple, list)) or len(result) != n_diff:
            got = (
                f"a {type(result).__name__} of length {len(result)}"
                if isinstance(result, (tuple, list)) else type(result).__name__
            )
            raise TypeError(
                f"Custom VJP bwd rule of {self.op.name!r} must produce a tuple with one "
                f"cotangent per (differentiable) positional argument of the primal function, "
                f"i.e. of length {n_diff}, but got {got}. Use None for no gradient."
                + (f" (Keyword arguments, here {', '.join(map(repr, saved.kwargs))}, are "
                   "static and get no cotangent: pass them positionally, or return none for "
                   "them.)" if saved.kwargs else "")
            )
        cts: list[Any] = []
        for arg_spec, item in zip(spec.specs, result):
            cts.extend(_leaves_like(arg_spec, item, f"custom_vjp bwd of {self.op.name!r}"))
        return _fit_cotangents(self.op.name, "custom_vjp bwd of", cts, xs, saved)


# -- custom_jvp --------------------------------------------------------------------------
class custom_jvp(_CustomFunction):
    """A function with a custom Jacobian-vector product (forward-mode rule), as in JAX.

    Decorate the function, then set the rule with ``f.defjvp(rule)`` (also
    usable as a decorator): ``rule(primals, tangents)`` gets two tuples, one
    entry per positional argument, and returns ``(primal_out, tangent_out)``.

    * Dual numbers (``wg.jvp``, ``wg.derivative``, ``wg.jacfwd``) use the rule.
      Arguments that carry no tangent get zero tangents.
    * Tensors (``backward``, ``wg.grad``, tapes): ``f`` is recorded as one node
      named after it; its VJP evaluates the rule at the saved inputs with fresh
      tensors as tangents and pulls the cotangent back through
      ``tangent_out``, which is linear in them. So reverse mode uses your rule
      too (it must be written with differentiable operations), at the cost of
      two evaluations of the rule per backward pass: the second checks that
      ``tangent_out`` is linear in the tangents (the dot-product test at one
      probe tangent), and a rule that is not (``t * t``, ``sin(t)``) raises
      ``ValueError`` rather than give a wrong gradient (in a traced graph, at the
      example values it is traced with).

    Parameters
    ----------
    fun : callable
        The function (arrays, floats, or tuples/lists/dicts of them).
    nondiff_argnums : tuple of int
        Arguments that are not differentiated; the rule receives them first,
        ``rule(*nondiff, primals, tangents)``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> @wg.custom_jvp
    ... def safe_norm(x):
    ...     return np.sqrt(np.sum(x * x))
    >>> @safe_norm.defjvp
    ... def safe_norm_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     n = safe_norm(x)
    ...     scale = np.where(n == 0.0, 0.0, 1.0 / np.where(n == 0.0, 1.0, n))
    ...     return n, np.sum(x * t) * scale
    >>> wg.grad(safe_norm)(np.zeros(2))        # the plain body would give nan
    array([0., 0.])
    >>> wg.jvp(safe_norm, (np.array([3.0, 4.0]),), (np.array([0.0, 5.0]),))
    (np.float64(5.0), np.float64(4.0))
    """

    decorator = "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        name = _op_name(fun)
        self.op = Op(
            name,
            self._impl,
            _pullback_rule(self._pullback),
            reads=ALL_INPUTS,
            state_input=True,  # the last input is the _Saved record
            formula=f"custom JVP of {name} (defjvp), transposed for reverse mode",
            complex_rules=True,  # the user's rule, in the documented convention
        )

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Set the rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``; returns it."""
        check_function(jvp, "defjvp")
        self.jvp = jvp
        return jvp

    def _no_rule(self) -> NoRuleError:
        return NoRuleError(
            f"No JVP defined for custom_jvp function {self.op.name} using defjvp: call "
            f"{self.op.name}.defjvp(rule) before differentiating it."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec, kind = self._owner(args, kwargs)
        if kind is None:
            return self.fun(*args, **kwargs)
        leaves = spec.leaves
        if kind is DUAL:
            return self._forward(spec, kwargs)
        if kind.records_calls:  # a graph being traced: one step that calls this function
            return self._traced_call(kind, args, kwargs)
        level, mine = _split_level(leaves)
        raws = [a._value if m else a for a, m in zip(leaves, mine)]
        inputs = [a if m else None for a, m in zip(leaves, mine)]
        plain = spec.rebuild(raws)
        rec = _recording([a for a in inputs if a is not None])
        out = self(*plain, **kwargs)  # the values beneath: the rule, at their level
        if any(_at_level(v, level) for v in _tree.flatten(out)[0]):
            raise _closure_error("custom_jvp", self.op.name)
        out = _tree.tree_map(_keep, out)
        if rec is None:
            return _tree.tree_map(lambda v: constant(v, level), out)
        if self.jvp is None:
            raise self._no_rule()
        saved = _Saved(self, spec, kwargs, mine)
        saved.level = level
        return _record_call(self.op, self._out_op, inputs, raws, out, saved, *rec)

    # -- forward mode --------------------------------------------------------------------
    def _forward(self, spec: _Args, kwargs: dict[str, Any]) -> Any:
        if self.jvp is None:
            raise self._no_rule()
        tag = None
        for a in spec.leaves:
            if type(a) is Dual and (tag is None or a.tag.order > tag.order):
                tag = a.tag
        if not tag.active:
            raise EscapedLevelError(
                f"{self.op.name!r} got a dual number of a finished forward-mode transform "
                f"({tag!r}); return what you need from inside the function passed to wg.jvp."
            )
        primals, tangents = [], []
        for a in spec.leaves:
            if type(a) is Dual and a.tag is tag:
                primals.append(a.primal)
                tangents.append(a.tangent)
            else:
                primals.append(a)
                tangents.append(_zeros(a) if _is_numeric(value_of(a)) else None)
        if tag.batch is None:
            p_leaves, p_spec, t_leaves = self._rule(spec, primals, tangents, kwargs)
        else:
            # A batch of tangents (jacfwd): the user's rule sees one tangent at a time.
            per_batch = []
            for b in range(tag.batch):
                tb = [t[b] if type(a) is Dual and a.tag is tag else t
                      for a, t in zip(spec.leaves, tangents)]
                p_leaves, p_spec, t_leaves = self._rule(spec, primals, tb, kwargs)
                per_batch.append(t_leaves)
            t_leaves = [
                None if all(row[k] is None for row in per_batch)
                else stack([_zeros(p_leaves[k]) if row[k] is None else row[k] for row in per_batch])
                for k in range(len(p_leaves))
            ]
        duals = []
        for p, t in zip(p_leaves, t_leaves):
            if t is None:
                t = _zeros(p) if tag.batch is None else np.zeros((tag.batch,) + _shape(p))
            if type(value_of(p)) is float and type(t) is not float and not isinstance(
                t, (Tensor, Dual)
            ):
                t = float(t)
            elif type(t) is np.ndarray and t.dtype != dtype_of(p) and dtype_of(p).kind in "fc":
                t = t.astype(dtype_of(p))  # the primal's dtype, as Dual(p, t) gives it
            d = object.__new__(Dual)
            d.primal, d.tangent, d.tag = p, t, tag
            duals.append(d)
        return _tree.unflatten(p_spec, duals)

    def _rule(self, spec: _Args, primals: list[Any], tangents: list[Any],
              kwargs: dict[str, Any]) -> tuple[list[Any], Any, list[Any]]:
        result = self.jvp(
            *spec.nondiff_values(), spec.diff_args(primals), spec.diff_args(tangents), **kwargs
        )
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(
                f"Custom JVP rule of {self.op.name!r} must produce a pair (list or tuple of "
                f"length two) representing primal and tangent outputs, got "
                f"{type(result).__name__}."
            )
        p_out, t_out = result
        p_leaves, p_spec = _tree.flatten(p_out)
        t_leaves = _leaves_like(p_spec, t_out, f"custom_jvp rule of {self.op.name!r}")
        self._check_tangents(p_leaves, t_leaves)
        return p_leaves, p_spec, t_leaves

    def _check_tangents(self, p_leaves: Sequence[Any], t_leaves: Sequence[Any]) -> None:
        """Refuse a tangent output of another shape than its primal output, or a complex
        tangent for a real primal output (a real value moves in real directions only)."""
        for k, (p, t) in enumerate(zip(p_leaves, t_leaves)):
            if t is not None and _shape(t) != _shape(p):
                raise ValueError(
                    f"Custom JVP rule of {self.op.name!r} returned a tangent of shape "
                    f"{_shape(t)} for primal output {k} of shape {_shape(p)}; they must match."
                )
            if t is not None and is_complex(t) and not is_complex(p):
                raise TypeError(
                    f"Custom JVP rule of {self.op.name!r} returned a complex tangent "
                    f"({dtype_of(t)}) for the real primal output {k} ({dtype_of(p)}): a real "
                    "value can only move in real directions. Return the tangent's real part, "
                    "or a complex primal output."
                )

    # -- reverse mode: the rule, transposed ------------------------------------------------
    def _check_linear(self, at_zero: list[Any]) -> None:
        """The rule's tangent output at zero tangents must be zero (it is linear in them);
        a finite nonzero one (``cos(x) * t + 1``) would make the transposed rule, and so
        every reverse-mode derivative, silently wrong."""
        for k, t in enumerate(at_zero):
            v = primal(value_of(t))  # (every layer: a tensor, dual numbers)
            if v is None or is_traced(v):  # a graph tracer's value: not known while traced
                continue
            v = np.asarray(v)
            if v.dtype.kind in "fc" and np.any((v != 0) & np.isfinite(v)):
                raise ValueError(
                    f"Custom JVP rule of {self.op.name!r} returned a nonzero tangent for "
                    f"output {k} when every input tangent is zero: a tangent output must be "
                    "linear in the tangents (tangent_out = J(x) @ t, no term without t), or "
                    "reverse mode, which transposes the rule, would give a wrong gradient. "
                    "Remove the terms that do not multiply a tangent."
                )

    def _check_transposed(self, saved: _Saved, primals: list[Any], diff: list[int],
                          fixed: list[Any], gs: list[Any], cts: Sequence[Any]) -> None:
        """A rule linear in its tangents passes the dot-product test ``<g, T(u)> =
        <Tᵀg, u>`` for every tangent ``u``; checked at one probe ``u``, with the rule
        evaluated on the plain values under every layer (a graph tracer's example values
        included: nothing is recorded). The transpose is the rule's derivative at zero
        tangents, so a rule that is not linear in them (``cos(x) * t * t``, ``sin(t)``)
        would otherwise give a silently wrong gradient (0 for ``t * t``)."""
        spec = saved.args
        static = spec.nondiff_values()
        if any(is_traced(v) for v in [*static, *saved.kwargs.values()]):
            return  # (the rule's other arguments are traced: left as they are)
        tangents = list(fixed)
        probes = []
        for i in diff:
            tangents[i] = _probe(fixed[i])
            probes.append(tangents[i])
        _, t_out = self.jvp(*static, spec.diff_args([example(p) for p in primals]),
                            spec.diff_args(tangents), **saved.kwargs)
        outs = _leaves_like(saved.out_spec, t_out, f"custom_jvp rule of {self.op.name!r}")
        pairs = [(g, t) for g, t in zip(gs, outs) if t is not None] + list(zip(cts, probes))
        raw = [(_plain(a), _plain(b)) for a, b in pairs]
        if any(a is None or b is None for a, b in raw):
            return
        if not all(np.all(np.isfinite(a)) and np.all(np.isfinite(b)) for a, b in raw):
            return  # (an inf or a NaN anywhere: no comparison is meaningful)
        n = len(raw) - len(probes)
        lhs = sum(np.sum(a * b).real for a, b in raw[:n])
        rhs = sum(np.sum(a * b).real for a, b in raw[n:])
        scale = sum(np.sum(np.abs(a) * np.abs(b)) for a, b in raw)
        eps = max((np.finfo(a.dtype).eps for a, _ in raw if a.dtype.kind in "fc"),
                  default=np.finfo(np.float64).eps)
        if abs(lhs - rhs) > np.sqrt(eps) * scale + np.finfo(np.float64).tiny:
            raise ValueError(
                f"Custom JVP rule of {self.op.name!r} is not linear in the tangents: "
                f"reverse mode transposes it, and the dot-product test <g, T(u)> = <Tᵀg, u> "
                f"fails ({lhs:.6g} against {rhs:.6g}), so the gradient would be wrong. A "
                "tangent output must be J(x) @ t: no product of tangents, no function of a "
                "tangent (t * t, sin(t)), no branch on a tangent's value."
            )

    def _pullback(self, saved: _Saved, g: Any, ans: Any, xs: tuple[Any, ...],
                  create: bool) -> list[Any]:
        """The rule's tangent output is linear in the tangents: its VJP (with the
        primals fixed at the saved inputs) is this node's."""
        spec = saved.args
        primals = [x if m else value_of(x) for x, m in zip(xs, saved.mask)] if create else list(xs)
        diff = [i for i, edge in enumerate(saved.edges) if edge is not None]
        fixed = [_zeros(x) if _is_numeric(value_of(x)) else None for x in xs]

        def tangent_out(*ts: Any) -> list[Any]:
            tangents = list(fixed)
            for i, t in zip(diff, ts):
                tangents[i] = t
            _, t_out = self.jvp(
                *spec.nondiff_values(), spec.diff_args(primals), spec.diff_args(tangents),
                **saved.kwargs,
            )
            leaves = _leaves_like(saved.out_spec, t_out, f"custom_jvp rule of {self.op.name!r}")
            self._check_tangents(outs, leaves)
            # None: no tangent for that output, a zero one (as forward mode reads it)
            return [_zeros(o) if t is None else t for t, o in zip(leaves, outs)]

        outs = _out_values(saved, ans)
        at_zero, pull = vjp(tangent_out, *[fixed[i] for i in diff])
        self._check_linear(at_zero)
        gs = [_zeros(o) if gk is None else gk for gk, o in zip(_out_cotangents(saved, g), outs)]
        cts = pull(gs)
        self._check_transposed(saved, primals, diff, fixed, gs, cts)
        result: list[Any] = [None] * len(xs)
        for i, ct in zip(diff, cts):
            result[i] = ct
        return result
