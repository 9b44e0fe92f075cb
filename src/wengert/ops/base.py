"""What every op family shares: applying ops, reading values under traced layers, linear JVPs.

The families import only :mod:`wengert.core` and each other, in one order
(``broadcast`` → ``elementwise`` → ``indexing`` → ``shape`` → ``reduce`` →
``linalg``), never a front end: a rule applies ops with :func:`apply` (which
finds the tensor, dual number or tracer among its arguments) and looks at
values only through :func:`primal` (masks, signs, shapes), never with
``np.asarray`` on a traced value.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.core.bind import (
    apply,
    binary_function,
    dtype_of,
    forward,
    is_traced,
    kind_of,
    primal,
    shape_of,
    unary_function,
)
from wengert.core.op import Op

__all__ = [
    "apply",
    "forward",
    "primal",
    "shape_of",
    "dtype_of",
    "is_traced",
    "unary_function",
    "binary_function",
    "linear",
    "linear_variadic",
    "float_dtype",
    "no_out",
    "concrete",
    "Family",
    "Joint",
    "SPACES",
    "dispatches",
]


def concrete(v: Any) -> Any:
    """A graph tracer's 0-d number where an op needs its value (a ``kth``, a quantile, an
    index that sets a shape): the traced example's value as a Python number (the trace
    records a guard, so a compiled function traces again for another value); anything
    else as it is."""
    if is_traced(v):
        kind = kind_of(v)
        if kind is not None and kind.opaque and shape_of(v) == ():
            k = dtype_of(v).kind
            return operator.index(v) if k in "iub" else complex(v) if k == "c" else float(v)
    return v


def linear(op: Op, **fixed: Any) -> Op:
    """Give an op linear in input 0 its JVP: the op itself applied to the tangent.

    The other inputs (index arrays) and the params are passed along;
    ``fixed`` overrides params (``pad`` pads the tangent with zeros, not with
    ``constant_values``). Returns ``op``.
    """

    def jvp(ts: tuple[Any, ...], ans: Any, x: Any, *rest: Any, **params: Any) -> Any:
        if fixed:
            params = {**params, **fixed}
        t = ts[0]
        if type(t) is np.ndarray:  # what apply does with a plain array
            return forward(op, (t, *rest), params)
        return apply(op, t, *rest, **params)

    jvp.__name__ = f"{op.name}_jvp"
    op.jvp = jvp
    return op


def linear_variadic(op: Op) -> Op:
    """Give a variadic op linear in every input its JVP: the op on the tangents
    (zeros for a missing one). Returns ``op``."""

    def jvp(ts: tuple[Any, ...], ans: Any, *xs: Any, **params: Any) -> Any:
        dtype = dtype_of(ans)
        parts = [np.zeros(shape_of(x), dtype) if t is None else t for t, x in zip(ts, xs)]
        return apply(op, *parts, **params)

    jvp.__name__ = f"{op.name}_jvp"
    op.jvp = jvp
    return op


def float_dtype(*vals: Any) -> np.dtype:
    """The dtype an elementwise op on ``vals`` gives (Python floats are weak; a lone
    one is float64), float64 for non-float data; for masks and zeros."""
    dt = np.result_type(*[primal(v) for v in vals])
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def no_out(name: str, out: Any) -> None:
    """Refuse ``out=`` (the gradient would be lost)."""
    if out is not None:
        raise TypeError(
            f"wengert.{name}: out= is not supported on tensors (the gradient would be lost); "
            "assign the result instead (y = np.f(x))."
        )


#: The NumPy namespaces a family's functions are exported to (``wengert.numpy``,
#: ``wengert.numpy.linalg``...), each with the NumPy module whose names it mirrors.
SPACES = {"numpy": np, "linalg": np.linalg, "fft": np.fft, "emath": np.emath}
#: The ufunc methods a family may implement (``np.add.reduce`` -> a function).
UFUNC_METHODS = ("reduce", "accumulate", "at")


def dispatches(f: Any) -> bool:
    """Whether NumPy hands a call of ``f`` on a traced value to wengert: a ufunc, or a
    function with ``__array_function__`` dispatch (NEP 13, NEP 18)."""
    return isinstance(f, np.ufunc) or (callable(f) and hasattr(f, "_implementation"))


def _ufunc_method(f: Any) -> str | None:
    """``"reduce"`` for ``np.add.reduce`` (a ufunc's bound method), else ``None``."""
    owner = getattr(f, "__self__", None)
    name = getattr(f, "__name__", None)
    return name if isinstance(owner, np.ufunc) and name in UFUNC_METHODS else None


class Joint:
    """One call that computes several parts of a decomposition (``Op.part``) at once, as
    their primitives compute them, declared beside them (``FAMILY.joint(...)``).

    ``numpy`` is the NumPy source generated code writes for an equation holding these
    parts in this order (``{0}`` its input, ``{h}`` the input's Hermitian part, ``{uplo}``
    its ``uplo`` param); ``jax`` the ``jax.numpy`` source the JAX export writes (``{0}``).
    Either may be ``None``: the parts are then written each by its own form.
    """

    __slots__ = ("parts", "numpy", "jax")

    def __init__(self, parts: tuple[Op, ...], *, numpy: str | None = None,
                 jax: str | None = None) -> None:
        self.parts = parts
        self.numpy = numpy
        self.jax = jax

    def __repr__(self) -> str:
        return f"Joint({', '.join(op.name for op in self.parts)})"


class Family:
    """What one op family declares, in one place per op: its primitives, the public
    functions made of them, and the NumPy callables each function implements.

    A family module makes one (``FAMILY = Family("elementwise")``) and declares each op
    and function where it is written: :meth:`unary` / :meth:`binary` register an
    elementwise op and make its public function at once; :meth:`op` registers any other
    op; :meth:`export` names a function in ``wengert.numpy`` (or its ``linalg``, ``fft``
    namespaces) and routes NumPy's callables of the same names (or those given) to it;
    :meth:`route` routes NumPy callables only. :mod:`wengert.ops` builds the registry
    from :attr:`ops`; ``wengert.numpy`` and ``np.*`` dispatch read :attr:`exports`,
    :attr:`routes`, :attr:`methods` and :attr:`in_place`. A family of elementwise ops made
    with ``fusable=True`` gives them to the fusion pass (``graph/passes/fuse.py``): each
    op's forward is then a NumPy ufunc, or it declares its kernel lines (``Op(kernel=)``)
    or why it is not fused (``Op(kernel_refused=)``).

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.core.op import Op
    >>> family = Family("toy")
    >>> twice = family.unary(Op("twice", lambda x: 2 * x, (lambda g, ans, x: 2 * g,)),
    ...                      numpy=())
    >>> [op.name for op in family.ops], list(family.exports["numpy"])
    (['twice'], ['twice'])
    >>> def hypot3(x, y, z):
    ...     return np.sqrt(x * x + y * y + z * z)
    >>> _ = family.route(hypot3, np.hypot)
    >>> family.routes[np.hypot] is hypot3
    True
    """

    __slots__ = ("name", "fusable", "ops", "joints", "exports", "routes", "methods",
                 "in_place")

    def __init__(self, name: str, *, fusable: bool = False) -> None:
        self.name = name
        #: Its ops are elementwise, candidates of the fusion pass.
        self.fusable = fusable
        #: The primitives, in declaration order.
        self.ops: list[Op] = []
        #: The calls that give several parts of a decomposition at once (:class:`Joint`).
        self.joints: list[Joint] = []
        #: namespace (a key of :data:`SPACES`) -> public name -> function.
        self.exports: dict[str, dict[str, Any]] = {space: {} for space in SPACES}
        #: NumPy function or ufunc -> the function ``np.*`` on a traced value runs.
        self.routes: dict[Any, Any] = {}
        #: ufunc method (``"reduce"``, ``"accumulate"``, ``"at"``) -> ufunc -> function.
        self.methods: dict[str, dict[Any, Any]] = {m: {} for m in UFUNC_METHODS}
        #: NumPy function that writes into its first argument -> the function writing
        #: into a traced value.
        self.in_place: dict[Any, Any] = {}

    def op(self, op: Op) -> Op:
        """Register the primitive ``op``; returns it."""
        if any(o.name == op.name for o in self.ops):
            raise ValueError(f"family {self.name!r}: two primitives are named {op.name!r}")
        self.ops.append(op)
        return op

    def joint(self, *parts: Op, numpy: str | None = None, jax: str | None = None) -> Joint:
        """Declare the call that gives the decomposition parts ``parts`` (registered ops
        of this family with ``Op.part``, in their order) at once: see :class:`Joint`."""
        if any(op not in self.ops or op.part is None for op in parts) or \
                len({op.part[0] for op in parts}) != 1:
            raise ValueError(f"family {self.name!r}: a joint call takes parts of one "
                             f"decomposition declared here, got {[op.name for op in parts]}")
        joint = Joint(tuple(parts), numpy=numpy, jax=jax)
        self.joints.append(joint)
        return joint

    def unary(self, op: Op, *aliases: str, numpy: Any = None) -> Any:
        """Register the one-input elementwise ``op`` and export its public function (made
        by :func:`unary_function`) as ``op.name`` and ``aliases``; see :meth:`export`."""
        return self.export(unary_function(self.op(op)), *aliases, name=op.name, numpy=numpy)

    def binary(self, op: Op, *aliases: str, numpy: Any = None) -> Any:
        """As :meth:`unary`, for a two-input broadcasting op (:func:`binary_function`)."""
        return self.export(binary_function(self.op(op)), *aliases, name=op.name, numpy=numpy)

    def export(self, fn: Any = None, *aliases: str, name: str | None = None,
               space: str | tuple[str, ...] = "numpy", numpy: Any = None) -> Any:
        """Export ``fn`` as ``name`` (its ``__name__`` by default) and ``aliases`` in each
        namespace of ``space``; returns ``fn``. As a decorator: ``@FAMILY.export`` or,
        with arguments, ``@FAMILY.export("amax")``, ``@FAMILY.export(space="linalg")``.

        ``numpy`` names the NumPy callables ``fn`` implements (functions, ufuncs, ufunc
        methods such as ``np.add.reduce``; ``None`` items, absent from this NumPy, are
        skipped). By default they are the NumPy callables of the exported names in those
        namespaces (``np.sin``, ``np.linalg.det``) that NumPy hands to wengert (ufuncs and
        functions with ``__array_function__`` dispatch).
        """
        if fn is None or isinstance(fn, str):  # a decorator with arguments
            more = aliases if fn is None else (fn, *aliases)
            return lambda f: self.export(f, *more, name=name, space=space, numpy=numpy)
        names = (name or fn.__name__, *aliases)
        spaces = (space,) if isinstance(space, str) else space
        for s in spaces:
            for n in names:
                self.exports[s][n] = fn
        if numpy is None:
            numpy = [getattr(SPACES[s], n, None) for s in spaces for n in names]
            numpy = [f for f in numpy if dispatches(f)]
        return self.route(fn, *numpy)

    def route(self, fn: Any, *numpy: Any) -> Any:
        """Route the NumPy callables ``numpy`` (``None`` items skipped) to ``fn`` without
        exporting a name; returns ``fn``. A NumPy callable routed to two functions is an
        error (NumPy's aliases are one object: ``np.permute_dims is np.transpose``)."""
        for f in numpy:
            if f is None:
                continue
            method = _ufunc_method(f)
            table = self.routes if method is None else self.methods[method]
            key = f if method is None else f.__self__
            if table.get(key, fn) is not fn:
                raise ValueError(f"family {self.name!r}: {f!r} is routed to both "
                                 f"{table[key].__name__} and {fn.__name__}")
            table[key] = fn
        return fn

    def implements(self, *numpy: Any) -> Any:
        """A decorator: :meth:`route` the NumPy callables ``numpy`` to the function."""
        return lambda fn: self.route(fn, *numpy)

    def writes(self, *numpy: Any) -> Any:
        """A decorator: the function writes, into a traced first argument, what the NumPy
        functions ``numpy`` write into theirs (``np.copyto``, ``np.put``)."""

        def declare(fn: Any) -> Any:
            for f in numpy:
                self.in_place[f] = fn
            return fn

        return declare

    def __repr__(self) -> str:
        return f"Family({self.name!r}: {len(self.ops)} ops)"
