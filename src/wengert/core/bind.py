"""Applying a primitive: find which kind of traced value owns the inputs, and let it act.

A *kind* is one sort of traced value: a tensor on a tape (reverse mode), a dual
number (forward mode), a graph tracer (static graphs). Each front end
registers its types here when it is imported (:func:`register`); ``ops/``
never imports a front end. As JAX's ``bind`` finds the current trace,
:func:`apply` looks at the arguments, finds the kind at the innermost *level*
among them (every transform, perturbation and tape gets its level from one
counter, see :mod:`wengert.core.levels`) and calls that kind's
:meth:`Kind.process`, which handles its own values and applies the op again to
what lies beneath them (plain values, or values of outer levels). Plain
NumPy values run the op's NumPy forward directly.

The public function of each one- and two-input op (``wnp.sin``, ``wnp.add``)
is built by :func:`unary_function` / :func:`binary_function`: arrays and
Python floats take an inline path (the rules of a backward pass run on them),
and each kind may hand in a specialised function for its own type
(:meth:`Kind.unary` / :meth:`Kind.binary`), built once per op and type: the
recording path of tensors and the dual-number arithmetic live in their front
ends and are called without the general lookup.

Examples
--------
>>> import numpy as np
>>> from wengert.ops import REGISTRY
>>> apply(REGISTRY["multiply"], np.array([1.0, 2.0]), 3.0)
array([3., 6.])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.errors import UnsupportedDtypeError

__all__ = [
    "Kind",
    "register",
    "kind_of",
    "owner",
    "apply",
    "forward",
    "primal",
    "example",
    "is_traced",
    "shape_of",
    "dtype_of",
    "unary_function",
    "binary_function",
    "ufunc_method",
    "SCALAR_FALLBACK",
    "number_kind",
    "complex_error",
    "is_complex",
]

_ndarray = np.ndarray
_float64 = np.float64

#: Errors of a float fast path (``math.log(-1.0)``, overflow, ``1.0 / 0.0``) after
#: which the NumPy forward decides (NaN, inf and a warning, as NumPy gives them).
SCALAR_FALLBACK = (ValueError, OverflowError, ZeroDivisionError)
_OP_ERRORS = (ValueError, TypeError, IndexError, np.linalg.LinAlgError)


class Kind:
    """How one kind of traced value takes part in applying primitives.

    Subclass it in a front end and :func:`register` its types.

    Attributes
    ----------
    name : str
        For messages (``"tensor"``, ``"dual"``).
    priority : int
        Breaks ties between kinds at the same level (higher acts first).
    """

    name = "kind"
    priority = 0
    #: The attribute that holds the value one level down, when the kind keeps it in
    #: one (``"primal"``, ``"_value"``): :func:`primal` and :func:`shape_of` read it
    #: directly instead of calling :meth:`primal`.
    value_attribute: str | None = None
    #: Whether calls without a gradient rule on this kind's values (``np.greater``,
    #: ``np.argmax``) go to :meth:`record_call` instead of running on the values
    #: beneath (the graph tracer records them as steps of its graph).
    records_calls = False
    #: Whether :func:`primal` stops at this kind's values instead of reading beneath them:
    #: a graph tracer's value is only an example, so the masks and tests rules compute
    #: from values (``x > 0`` in relu's rule) must be computed on the tracer, recorded.
    opaque = False

    def level(self, x: Any) -> float:
        """The level of value ``x`` (larger: a more inner transform)."""
        raise NotImplementedError  # pragma: no cover - every kind defines it

    def primal(self, x: Any) -> Any:
        """The value of ``x`` one level down (a tensor's value, a dual's primal)."""
        raise NotImplementedError  # pragma: no cover - every kind defines it

    def process(self, op: Any, args: tuple[Any, ...], params: dict[str, Any] | None,
                level: float) -> Any:
        """Apply ``op`` to ``args``, at ``level``, where this kind is the innermost."""
        raise NotImplementedError  # pragma: no cover - every kind defines it

    def record_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    name: str, derivative_free: bool = True, replay: bool = False) -> Any:
        """``func(*args, **kwargs)``, a function without a gradient rule, as a step of
        this kind's record (only for kinds with :attr:`records_calls`); unless
        ``derivative_free`` (a comparison, an index), differentiating through it later
        must be refused. With ``replay``, ``func`` brings its own rules (a ``custom_vjp``
        function): the step runs ``func`` on traced values as they are."""
        raise NotImplementedError  # pragma: no cover - only recording kinds define it

    def shape(self, x: Any) -> tuple[int, ...]:
        """The shape of ``x`` (that of the value beneath)."""
        return shape_of(self.primal(x))

    def connected(self, x: Any) -> bool:
        """Whether ``x`` carries a derivative (else it is a constant in a traced box)."""
        return True

    def constant(self, value: Any, level: float | None = None, example: Any = None) -> Any:
        """A plain result of a function without gradient, boxed as this kind boxes
        constants (a tensor that requires no grad), of ``level`` when given (that of the
        inputs, so it meets them at their transform; ``example``: the input of that
        level); the value itself by default."""
        return value

    def modified(self, x: Any) -> None:
        """``x``'s memory was written in place by NumPy (``np.copyto(x, ...)``): note it
        (tensors bump their version); nothing by default."""

    def write(self, target: Any, result: Any, what: str) -> Any:
        """Write ``result`` into ``target`` in place (``np.f(..., out=target)``)."""
        raise TypeError(
            f"{what}: a {self.name} cannot be written in place; assign the result instead "
            "(y = np.f(x))."
        )

    def unary(self, op: Any, cls: type, fn: Any) -> Any:
        """A function ``f(x)`` for one-input ``op`` when ``type(x) is cls``, or ``None``
        (then :func:`apply` runs). ``fn`` is the op's public function, to apply the
        op to the values beneath."""
        return None

    def binary(self, op: Any, cls: type, fn: Any) -> Any:
        """A function ``f(x, y)`` for two-input ``op`` when ``x`` or ``y`` is a ``cls``
        (the other may be anything), or ``None``. ``fn`` as for :meth:`unary`."""
        return None

    def __repr__(self) -> str:
        return f"<kind {self.name}>"


#: Registered type -> kind (filled by the front ends when imported).
_KINDS: dict[type, Kind] = {}
#: Every type seen -> its kind or ``None`` (subclasses and plain types resolved once).
_KIND_OF: dict[type, Kind | None] = {}
_MISSING = object()


def register(cls: type, kind: Kind) -> None:
    """Make values of type ``cls`` (and its subclasses) belong to ``kind``."""
    _KINDS[cls] = kind
    _KIND_OF.clear()


def _resolve(t: type) -> Kind | None:
    kind = None
    for base in t.__mro__:
        kind = _KINDS.get(base)
        if kind is not None:
            break
    _KIND_OF[t] = kind
    return kind


def kind_of(x: Any) -> Kind | None:
    """The kind of a traced value, or ``None`` for plain values."""
    k = _KIND_OF.get(type(x), _MISSING)
    return _resolve(type(x)) if k is _MISSING else k


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a traced value of any kind (a tensor, a dual number...)."""
    k = _KIND_OF.get(type(x), _MISSING)
    return (_resolve(type(x)) if k is _MISSING else k) is not None


def owner(args: Any) -> tuple[Kind | None, float]:
    """The kind that acts first on ``args`` (the innermost level), and that level."""
    best: Kind | None = None
    top = 0.0
    get = _KIND_OF.get
    for a in args:
        k = get(type(a), _MISSING)
        if k is _MISSING:
            k = _resolve(type(a))
        if k is not None:
            lv = k.level(a)
            if best is None or lv > top or (lv == top and k.priority > best.priority):
                best = k
                top = lv
    return best, top


def _op_error(op: Any, raws: tuple[Any, ...], e: Exception) -> Exception:
    """The NumPy error, prefixed with the op's name and the input shapes."""
    shapes = ", ".join(str(np.shape(r)) for r in raws)
    message = f"{op.name}: {e} (input shapes: {shapes})"
    try:
        return type(e)(message)
    except TypeError:  # NumPy's UFuncTypeError and kin need more arguments
        base = next(c for c in type(e).__mro__ if c in _OP_ERRORS)
        return base(message)


def forward(op: Any, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    """Run the op's NumPy forward on plain values (errors name the op).

    Python floats (and no params) take the op's float path, as the public
    functions do, so the result is a float too.
    """
    if not params and op.scalar_impl is not None and args:
        for a in args:
            if type(a) is not float:
                break
        else:
            try:
                return op.scalar_impl(*args)
            except SCALAR_FALLBACK:
                return float(op.impl(*args))
    try:
        return op.impl(*args, **params) if params else op.impl(*args)
    except _OP_ERRORS as e:
        raise _op_error(op, args, e) from e


def apply(op: Any, *args: Any, **params: Any) -> Any:
    """Apply primitive ``op`` to ``args`` (traced values of any kind, or plain values).

    With no traced value among ``args`` the NumPy forward runs alone and its
    raw result is returned, so rules written with wengert functions run at
    NumPy speed in a plain backward pass.
    """
    if len(args) == 1:  # (most ops with params: reductions, reshapes, indexing)
        x = args[0]
        k = _KIND_OF.get(type(x), _MISSING)
        if k is _MISSING:
            k = _resolve(type(x))
        if k is None:
            return forward(op, args, params)
        return k.process(op, args, params or None, k.level(x))
    best, top = owner(args)
    if best is None:
        return forward(op, args, params)
    return best.process(op, args, params or None, top)


def primal(x: Any) -> Any:
    """The plain value under every traced layer of ``x`` (for masks, shapes, tests).

    Rules use it where they look at values without differentiating them (the
    mask of ``max``, the sign in ``abs``): never ``np.asarray`` on a traced value.
    It stops at an *opaque* kind's value (a graph tracer), whose NumPy functions
    are recorded rather than computed.
    """
    while True:
        t = type(x)
        if t is _ndarray or t is float:
            return x
        k = _KIND_OF.get(t, _MISSING)
        if k is _MISSING:
            k = _resolve(t)
        if k is None or k.opaque:
            return x
        a = k.value_attribute
        x = k.primal(x) if a is None else getattr(x, a)


def example(x: Any) -> Any:
    """The plain value under every traced layer of ``x``, through opaque kinds too (a
    graph tracer's example value): for questions about the run being traced, such as
    whether NumPy made a view, never for values a graph must compute."""
    while True:
        x = primal(x)
        k = kind_of(x)
        if k is None:
            return x
        x = k.primal(x)


def shape_of(v: Any) -> tuple[int, ...]:
    """The shape of a value, through every traced layer, without NumPy's dispatch."""
    t = type(v)
    if t is _ndarray:
        return v.shape
    if t is float or t is int or t is _float64:
        return ()
    k = _KIND_OF.get(t, _MISSING)
    if k is _MISSING:
        k = _resolve(t)
    if k is None:
        return np.shape(v)
    a = k.value_attribute
    if a is None:
        return k.shape(v)
    v = getattr(v, a)
    return v.shape if type(v) is _ndarray else shape_of(v)


def dtype_of(v: Any) -> np.dtype:
    """The dtype of a value, through every traced layer (a Python float is float64)."""
    v = primal(v)
    if type(v) is float:
        return _FLOAT64
    dt = getattr(v, "dtype", None)
    return dt if isinstance(dt, np.dtype) else np.result_type(v)


_FLOAT64 = np.dtype(np.float64)


def number_kind(v: Any) -> str:
    """``"f"`` for a floating point value (through every traced layer), ``"c"`` for a
    complex one, ``"o"`` for anything else (integers, booleans: not differentiable)."""
    while True:
        t = type(v)
        if t is float:
            return "f"
        if t is _ndarray:
            k = v.dtype.kind
            return k if k == "f" or k == "c" else "o"
        k = _KIND_OF.get(t, _MISSING)
        if k is _MISSING:
            k = _resolve(t)
        if k is None:
            dt = getattr(v, "dtype", None)
            if dt is None:
                return "c" if t is complex else "o"
            return dt.kind if dt.kind == "f" or dt.kind == "c" else "o"
        v = k.primal(v)


def complex_error(op: Any) -> UnsupportedDtypeError:
    """The error for a complex value that would be differentiated through an op whose
    rules are real-only (``Op.complex_rules`` is false)."""
    return UnsupportedDtypeError(
        f"{op.name}: wengert does not differentiate this op on complex values (its rules "
        "hold for real numbers only: it orders or compares values, or reads a magnitude "
        "NumPy defines differently for complex numbers). Take np.real(z), np.imag(z) or "
        "np.abs(z) first, or wrap the input in wg.stop_gradient(...) if no gradient should "
        "flow."
    )


def object_error(op: Any) -> UnsupportedDtypeError:
    """The error for an op on a value that carries a derivative whose result is a NumPy
    object array (an operand of dtype object): it holds plain Python numbers, so the
    derivative would silently be zero."""
    return UnsupportedDtypeError(
        f"{op.name} of a value that carries a derivative gives an object array (an operand "
        "has dtype object), which holds plain Python numbers without the derivative: the "
        "gradient would silently be zero. Convert the object array to numbers first: "
        "np.asarray(a, dtype=float)."
    )


def is_complex(v: Any) -> bool:
    """Whether a value (through every traced layer) is complex.

    Examples
    --------
    >>> import numpy as np
    >>> is_complex(np.array([1j])), is_complex(1.0)
    (True, False)
    """
    t = type(v)
    if t is float:
        return False
    if t is _ndarray:
        return v.dtype.kind == "c"
    return number_kind(v) == "c"


def unary_function(op: Any) -> Any:
    """The public function of a one-input op without parameters (``wnp.sin``).

    NumPy arrays run the forward, Python floats the op's float path
    (``op.scalar_impl``); traced values go to their kind's specialised
    function, built on first use for each type, or to :func:`apply`.
    """
    impl = op.impl
    scalar = op.scalar_impl
    fast: dict[type, Any] = {}

    def fn(x: Any) -> Any:
        tx = type(x)
        if tx is _ndarray:
            return impl(x)
        if tx is float and scalar is not None:
            try:
                return scalar(x)
            except SCALAR_FALLBACK:
                return float(impl(x))
        h = fast.get(tx)
        if h is not None:
            return h(x)
        kind = kind_of(x)
        if kind is None:
            return impl(x)
        h = fast[tx] = kind.unary(op, tx, fn) or (lambda x: apply(op, x))
        return h(x)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}``, differentiable ({op.formula})."
    fn.op = op  # type: ignore[attr-defined]
    fn.handlers = fast  # type: ignore[attr-defined]  (the kinds' functions, by type)
    return fn


def binary_function(op: Any) -> Any:
    """The public function of a two-input op without parameters (``wnp.add``).

    As :func:`unary_function`; two Python floats take the float path; a
    traced value on either side goes to its kind.
    """
    impl = op.impl
    scalar = op.scalar_impl
    fast: dict[type, Any] = {}

    def fn(x: Any, y: Any) -> Any:
        tx = type(x)
        ty = type(y)
        if tx is _ndarray and (ty is _ndarray or ty is float):
            return impl(x, y)  # raw values (the rules of a backward pass)
        if tx is float and ty is float and scalar is not None:
            try:
                return scalar(x, y)
            except SCALAR_FALLBACK:
                return float(impl(x, y))
        h = fast.get(tx)
        if h is None:
            h = fast.get(ty)
            if h is None:
                return slow(x, y)
        return h(x, y)

    def slow(x: Any, y: Any) -> Any:
        kx = kind_of(x)
        if kx is not None:
            tx = type(x)
            h = fast[tx] = kx.binary(op, tx, fn) or (lambda x, y: apply(op, x, y))
            return h(x, y)
        ky = kind_of(y)
        if ky is not None:
            ty = type(y)
            h = fast[ty] = ky.binary(op, ty, fn) or (lambda x, y: apply(op, x, y))
            return h(x, y)
        return impl(x, y)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}`` with broadcasting, differentiable ({op.formula})."
    fn.op = op  # type: ignore[attr-defined]
    fn.handlers = fast  # type: ignore[attr-defined]  (the kinds' functions, by type)
    return fn


def ufunc_method(fast: dict[Any, Any], general: Any) -> Any:
    """A traced type's ``__array_ufunc__``: a plain call of a ufunc found in ``fast``
    (ufunc -> the kind's function for its op, filled when the front end is imported)
    goes straight to that function (``np.sin(t)`` costs one call more than
    ``wnp.sin(t)``); anything else to ``general(ufunc, method, inputs, kwargs)``."""

    def __array_ufunc__(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs:
            fn = fast.get(ufunc)
            if fn is not None:
                return fn(*inputs)
        return general(ufunc, method, inputs, kwargs)

    return __array_ufunc__
