"""The graph tracer: a third kind of traced value, beside tensors and dual numbers.

A :class:`Traced` value stands for a variable of the graph being built. It
carries the value the traced function computes for the example arguments
(so shapes, dtypes and Python control flow are those of a real run), and
every primitive applied to it becomes an equation of its :class:`Builder`
(through :mod:`wengert.core.bind`, as tensors record on a tape). Functions
without a gradient rule (``x > 0``, ``np.argmax``) become equations too, so
nothing computed from an input is frozen into a constant.

Turning a traced value into a Python value (``if x > 0:``, ``float(y)``,
``range(n)``) gives the example's answer and records a *guard*: the graph
holds only for inputs that give the same answer (:class:`~wengert.graph.ir.Guard`);
compiled functions check guards and retrace, a plain graph raises. Placeholders
(define-and-run) have no value yet: converting them raises.

Values of an outer level (a tensor that requires grad, a dual number) met
inside a trace are refused with a message that says to pass them as
arguments: their derivative would otherwise be lost.
"""

from __future__ import annotations

import linecache
import sys
import warnings
from contextvars import ContextVar
from typing import Any

import numpy as np
from wengert.core.bind import Kind, apply, forward, is_traced, kind_of, primal, register
from wengert.core.errors import EscapedTracerError, TraceError, UnhashableTracerError
from wengert.core.ir import PartGroups
from wengert.core.levels import next_order
from wengert.core.modes import GRAD_ENABLED, RECORDERS
from wengert.core.op import Op
from wengert.core.source import SourceLine, is_library, storing_item
from wengert.core.subclasses import refuse_subclass
from wengert.core.tree import flatten, unflatten
from wengert.graph.ir import Context, Equation, Guard, Literal, Var
from wengert.graph.keys import value_key
from wengert.graph.mutation import InPlaceTraced, write_out
from wengert.interop import dispatch as _dispatch
from wengert.interop.arraylike import ArrayMethods, refuse_dtype_set, refuse_shape_set
from wengert.reverse.inplace import PART_VIEWS, is_view, link_view
from wengert.reverse.recording import recorders_tracking

__all__ = ["Traced", "Builder", "GraphKind", "TraceError", "STATIC_FUNCTIONS",
           "is_recorded_call", "run_equation", "snapshot", "raised_error"]

#: The line of code of the equation :func:`run_equation` runs, while it runs: an outer
#: trace records the equation again at that line, not at the caller's.
_REPLAYED_SOURCE: ContextVar[SourceLine | None] = ContextVar("wengert_replayed_source",
                                                               default=None)

#: NumPy functions that read only shapes and dtypes: answered at trace time. (Not
#: ``np.zeros_like``: its result may be written into with traced values, so it is a step.)
STATIC_FUNCTIONS = {np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj,
                    np.may_share_memory, np.shares_memory, np.can_cast, np.min_scalar_type,
                    np.common_type, np.einsum_path, np.diag_indices_from,
                    np.tril_indices_from, np.triu_indices_from}


#: NumPy functions without a gradient rule whose result's shape depends on the values
#: of their inputs (not only on their shapes): a trace records a guard on that shape.
VALUE_SHAPED = {np.flatnonzero, np.argwhere, np.nonzero, np.extract, np.compress,
                np.unique, np.trim_zeros, np.setdiff1d, np.intersect1d, np.union1d,
                np.setxor1d, np.histogram_bin_edges, np.histogram, np.histogram2d,
                np.histogramdd, np.arange, np.linspace, np.logspace, np.geomspace,
                np.repeat, np.delete, np.insert, np.roots, np.eye, np.identity, np.tri,
                np.zeros, np.ones, np.empty, np.full, np.indices, np.tril_indices,
                np.triu_indices, np.diag_indices, np.mask_indices, np.split,
                np.array_split, np.resize, np.bincount, np.pad, np.tile, np.polydiv}


class Builder:
    """The graph under construction: its level, equations, guards and variable names.

    Parameters
    ----------
    name : str
        The traced function's name (for messages).
    abstract : bool
        Values are stand-ins (placeholders): converting one to a Python value raises.
    lines : bool
        Record the user's source line of each equation (guards always record theirs).
    """

    def __init__(self, name: str = "f", abstract: bool = False, lines: bool = True) -> None:
        self.level = next_order()
        self.name = name
        self.abstract = abstract
        self.lines = lines
        self.equations: list[Equation] = []
        self.guards: list[Guard] = []
        self.closed = False
        self._count = 0
        self._sources: dict[tuple[str, int], SourceLine] = {}
        self._library: dict[Any, bool] = {}  # code object -> inside wengert or NumPy
        self.call_ops: dict[Any, Op] = {}  # one op per identical recorded NumPy call
        self.input_ids: set[int] = set()  # (in-place updates of these are refused)
        self.results: list[Any] = []  # the outputs' values when the trace ended
        self._parts = PartGroups()  # the decompositions' equations, for their other parts
        self.start()

    def start(self) -> None:
        """Take NumPy's error state and the warning filters now as the caller's: an
        equation recorded under others (the traced code's ``with np.errstate(...)``) keeps
        what differs (:class:`~wengert.graph.ir.Context`)."""
        self._errors = np.geterr()
        self._filters = tuple(warnings.filters)
        self._contexts: dict[Any, Any] = {}

    def context(self) -> Context | None:
        """The context of an equation recorded now (``None``: the caller's)."""
        state = _numpy_state()
        key = (id(state[0]), id(state[1]))
        known = self._contexts.get(key)
        if known is not None and known[0] is state[0] and known[1] is state[1] \
                and state[0] is not None:
            return known[2]
        errors = np.geterr()
        filters = tuple(warnings.filters)
        changed = {k: v for k, v in errors.items() if v != self._errors.get(k)}
        context = None
        if changed or filters != self._filters:  # (the settings the function changed:
            context = Context(changed or None,  # the others stay the caller's at each run)
                              filters if filters != self._filters else None)
        self._contexts[key] = (state[0], state[1], context)  # (keeps them alive: ids stay)
        return context

    # -- variables ------------------------------------------------------------
    def fresh(self) -> str:
        name = f"t{self._count}"
        self._count += 1
        return name

    def input(self, value: Any, name: str) -> Traced:
        """A new input variable holding ``value``."""
        t = Traced(self._var(value, name), value, self)
        self.input_ids.add(id(t._var))
        return t

    def _var(self, value: Any, name: str | None = None) -> Var:
        t = type(value)
        if t is float:
            return Var(name or self.fresh(), (), np.float64, scalar=True)
        if t is np.ndarray:
            return Var(name or self.fresh(), value.shape, value.dtype)
        a = np.asarray(value)
        return Var(name or self.fresh(), a.shape, a.dtype, scalar=t in (int, bool))

    def source(self, always: bool = False) -> SourceLine | None:
        """The first frame of user code on the stack (cached per line); ``None`` when
        lines are not kept, unless ``always`` (guards always say where they were made)."""
        if not self.lines and not always:
            return None
        replayed = _REPLAYED_SOURCE.get()
        if replayed is not None:  # an equation of another graph, run again: its own line
            return replayed
        frame: Any = sys._getframe(2)
        library = self._library
        while frame is not None:
            code = frame.f_code
            inside = library.get(code)
            if inside is None:
                inside = library[code] = is_library(code.co_filename)
            if not inside:
                break
            frame = frame.f_back
        if frame is None:
            return None
        key = (frame.f_code.co_filename, frame.f_lineno)
        line = self._sources.get(key)
        if line is None:
            text = linecache.getline(key[0], key[1]).strip()
            line = self._sources[key] = SourceLine(key[0], key[1], frame.f_code.co_name, text)
        return line

    def record(self, op: Any, ins: list[Var | Literal], params: dict[str, Any] | None,
               value: Any) -> Traced:
        """Append ``out = op(*ins)`` whose traced value is ``value``. A part of a
        decomposition (``Op.part``) joins the equation of its other parts applied to the
        same inputs (:class:`~wengert.core.ir.PartGroups`, the rule a tape is read with):
        one equation ``w, v = eigh(a)`` with several outputs, in the parts' order."""
        out = self._var(value)
        grad_off = not GRAD_ENABLED.get()
        context = self.context()
        equations = self.equations
        if op.part is not None:
            n = len(equations)
            k = self._parts.join(op, tuple(id(v) for v in ins), params, n, (grad_off, context))
            if k != n:
                eq = equations[k]
                pairs = sorted([*zip(eq.ops, eq.outs), (op, out)], key=lambda p: p[0].part[1])
                ops = [p[0] for p in pairs]
                equations[k] = eq.replace(op=ops[0], outs=[p[1] for p in pairs], parts=ops)
                self.joined(k, out)
                return Traced(out, value, self)
        equations.append(Equation(op, ins, params, out, self.source(), grad_off, context))
        return Traced(out, value, self)

    def joined(self, k: int, var: Var) -> None:
        """``var`` joined equation ``k`` (a part of a decomposition): for a subclass that
        indexes the equations' outputs."""

    # -- conversions to Python values -----------------------------------------
    def guard(self, t: Traced, how: str, source: SourceLine | None = None) -> Any:
        """``bool(t)``, ``int(t)`` ...: the example's answer, recorded as a guard."""
        if self.closed:
            raise escaped(t)
        if self.abstract:
            raise TraceError(
                f"{how}() of a value computed from placeholders ({t._var.name}: {t._var.aval}): "
                "its value is not known while the graph is built, so Python cannot branch on it or "
                "turn it into a number. Use np.where(cond, a, b) for a data-dependent choice, or "
                "run the graph first (Session.run) and branch on the result."
            )
        value = t.value
        if how != "bool" and np.ndim(value) != 0 and np.size(value) != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python scalars "
                            f"({t._var.name} has shape {t._var.shape})")
        guard = Guard(t._var, how, None, source or self.source(always=True))
        try:
            result = guard.convert(value)
        except Exception as e:  # int(nan): the traced code may catch it
            self.raised(guard.convert, f"{how}", [t._var], e)
            raise
        guard.expected = result
        self.guards.append(guard)
        return result

    def raised(self, fn: Any, name: str, ins: list[Var | Literal], error: Exception) -> None:
        """``fn(*ins)`` raised ``error`` while traced: the traced code may catch it and go on
        (``try: ... except np.linalg.LinAlgError:``), so the graph holds only where it
        raises again. An equation that tells whether it does, and a guard on it."""
        if self.abstract or self.closed:
            return
        check = _Raises(fn, type(error), name)
        positions = list(range(len(ins)))
        spec = flatten((tuple(positions), {}))[1]
        op = _call_op(check, f"raises_{name}", spec, [None] * len(ins), positions, None,
                      True, False, ())
        out = self.record(op, list(ins), None, np.True_)
        self.guards.append(Guard(out._var, "bool", True, self.source(always=True)))


    def shape_guard(self, t: Traced) -> None:
        """The result of a NumPy call whose shape depends on its inputs' values
        (``np.flatnonzero``): a guard that the graph holds for this shape only."""
        self.guards.append(Guard(t._var, "shape", t._var.shape, self.source(always=True)))


try:  # NumPy's error state lives in a ContextVar: its value's identity is cheap to compare
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
except ImportError:  # pragma: no cover - another NumPy: compared by np.geterr()
    _ERRSTATE = None


def _numpy_state() -> tuple[Any, Any]:
    """Identities of NumPy's error state (``None`` when unknown) and the warning filters."""
    return (_ERRSTATE.get() if _ERRSTATE is not None else None, warnings.filters)


def escaped(t: Traced) -> EscapedTracerError:
    return EscapedTracerError(
        f"A traced value ({t._var.name}: {t._var.aval}) was used after its trace of "
        f"{t.builder.name}() ended: it escaped (stored in a global, a list or an attribute "
        "while tracing). Return it from the function instead."
    )


class Traced(InPlaceTraced, ArrayMethods):
    """A value being traced into a graph: its variable, its example value, its builder.

    In-place updates (``y += 1``, ``y[0] = v``) make it stand for a new variable (see
    :mod:`wengert.graph.mutation`); ``_base`` and ``_views`` link NumPy views to their
    base for that."""

    __slots__ = ("_var", "value", "builder", "_base", "_views", "__weakref__")

    def __init__(self, var: Var, value: Any, builder: Builder) -> None:
        self._var = var
        self.value = value
        self.builder = builder
        self._base: Any = None
        self._views: Any = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self._var.shape

    @property
    def dtype(self) -> np.dtype:
        return self._var.dtype

    shape = shape.setter(refuse_shape_set)  # (x.shape = ... says what to write instead)
    dtype = dtype.setter(refuse_dtype_set)

    def __len__(self) -> int:
        if not self._var.shape:
            raise TypeError("len() of a 0-d traced value")
        return self._var.shape[0]

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if int(np.prod(self._var.shape)) != 1:
            raise ValueError(
                f"The truth value of a traced array with more than one element "
                f"({self._var.name}: {self._var.aval}) is ambiguous. Use .any() or .all()"
            )
        return self.builder.guard(self, "bool")

    def __float__(self) -> float:
        return self.builder.guard(self, "float")

    def __int__(self) -> int:
        return self.builder.guard(self, "int")

    def __complex__(self) -> complex:
        return self.builder.guard(self, "complex")

    def __index__(self) -> int:
        if self._var.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return self.builder.guard(self, "index")

    def item(self, *args: Any) -> Any:
        if args:
            return self[args if len(args) > 1 else args[0]].item()
        kind = self._var.dtype.kind
        return self.builder.guard(self, "bool" if kind == "b" else "int" if kind in "iu"
                                  else "complex" if kind == "c" else "float")

    def __round__(self, ndigits: int | None = None) -> Any:
        if type(self.value) is np.ndarray:  # (a 0-d array too; NumPy scalars round)
            raise TypeError("type numpy.ndarray doesn't define __round__ method (round() "
                            f"of a traced array {self._var.name}: {self._var.aval}; use "
                            "np.round)")
        if ndigits is not None:
            out = np.round(self, ndigits)
            if self._var.scalar and type(out) is Traced and type(out.value) is np.float64:
                out.value = float(out.value)  # round(x, n) of a Python float is one
                out._var.scalar = True
            return out
        # round(x) of a number is a Python int, as for Python and NumPy scalars: the
        # rounded example's value, guarded
        rounded = np.round(self)
        return rounded.builder.guard(rounded, "int") if type(rounded) is Traced \
            else int(rounded)

    def tolist(self) -> Any:
        if not self._var.shape:
            return self.item()
        return [v.tolist() for v in self]

    def __copy__(self) -> Any:
        return self.copy()  # a recorded copy (the builder is the trace's, never copied)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        new = memo[id(self)] = self.copy()
        return new

    def __reduce__(self) -> Any:
        raise TraceError(
            f"cannot pickle a traced value ({self._var.name}: {self._var.aval}) inside "
            f"{self.builder.name}(): it stands for a value the graph computes on each call. "
            "Pickle the function's results, after the call."
        )

    def __hash__(self) -> int:
        if self.builder.abstract:  # a placeholder or a define-and-run value: a feed's key
            return id(self)
        raise UnhashableTracerError(
            f"unhashable type: a traced value ({self._var.name}: {self._var.aval}) inside "
            f"{self.builder.name}() cannot be a dict key or a set member (as NumPy arrays "
            "and jax.jit's tracers cannot): keyed by identity, the graph would look it up "
            "wrongly on the next call. Key by a Python value instead (int(x) or float(x) of "
            "a 0-d value: traced again for each value), or pass the key as a static "
            "argument (a Python int or string is static in wg.compile)."
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if storing_item():  # buf[...] = x with a NumPy array buf
            raise TraceError(
                f"buf[...] = x stores a traced value ({self._var.name}: {self._var.aval}) into a "
                f"plain NumPy array inside {self.builder.name}(): the graph would freeze it as "
                "a constant (and a gradient would be lost). Make the array a traced value: "
                "buf = np.zeros_like(x) (np.zeros_like(x, shape=(n,)) for another shape), "
                "then buf[i] = ... is recorded; or build the result with np.stack, "
                "np.concatenate or np.where."
            )
        if self._var.shape == () and self._var.dtype.kind in "iub" and not self.builder.abstract:
            # an integer where NumPy needs one (a size, a count, an index list): the
            # example's value, guarded (the graph holds while it is the same)
            value = np.asarray(self.builder.guard(self, "bool" if self._var.dtype.kind == "b"
                                                  else "index"), dtype=self._var.dtype)
            return value if dtype is None else value.astype(dtype)
        raise TraceError(
            f"np.asarray() of a traced value ({self._var.name}: {self._var.aval}) inside "
            f"{self.builder.name}(): the graph would freeze its traced value as a constant. "
            "Use NumPy functions on it (they are recorded), np.stack to build an array from "
            "traced values, or compute it outside the traced function."
        )

    def __repr__(self) -> str:
        return f"Traced({self._var.name}: {self._var.aval})"

    # NumPy dispatch: every np.* call is routed to wengert (and recorded).
    # A Python number taken by a NumPy function is a NumPy scalar (np.tanh(x) of a Python
    # float is NumPy's float64, not the float path's Python float).
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs, kwargs = _as_numpy((inputs, kwargs))
        return _dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        args, kwargs = _as_numpy((args, kwargs))
        return _dispatch.array_function(func, args, kwargs)

    # comparisons and bitwise operators: no gradient, recorded
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _python_result(np.equal(self, other), self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _python_result(np.not_equal(self, other), self, other)

    def __lt__(self, other: Any) -> Any:
        return _python_result(np.less(self, other), self, other)

    def __le__(self, other: Any) -> Any:
        return _python_result(np.less_equal(self, other), self, other)

    def __gt__(self, other: Any) -> Any:
        return _python_result(np.greater(self, other), self, other)

    def __ge__(self, other: Any) -> Any:
        return _python_result(np.greater_equal(self, other), self, other)

    @property
    def real(self) -> Any:
        out = super().real
        return _python_result(out, self) if out is not self else out

    @real.setter
    def real(self, value: Any) -> None:
        self._set_part("real", value)

    @property
    def imag(self) -> Any:
        return _python_result(super().imag, self)

    @imag.setter
    def imag(self, value: Any) -> None:
        self._set_part("imag", value)

    def conjugate(self) -> Any:
        return _python_result(self.conj(), self)

    def __invert__(self) -> Any:
        return np.invert(self)

    # (&, |, ^, << and >>: ArrayMethods' NumPy ufuncs, recorded)


#: The types of Python numbers: their operators give Python numbers, NumPy's functions
#: NumPy scalars.
_PYTHON_NUMBERS = (float, int, bool, complex)


def _as_numpy(tree: Any) -> Any:
    """``tree`` with each traced Python number as the NumPy scalar NumPy's functions make
    of it (the same variable: ``np.sinh(x)`` of a Python float computes and gives a
    ``np.float64``, as eagerly, though ``x * 2.0`` is a Python float), where every
    operand is a Python number; beside a NumPy value a Python number stays one, weak in
    NumPy's promotion (``np.hypot(x, np.float32(0.5))`` is a float32), and NumPy
    computes anyway."""
    leaves, spec = flatten(tree)
    found = False
    for t in leaves:
        v = t.value if type(t) is Traced else t
        if type(v) in _PYTHON_NUMBERS:
            found = found or type(t) is Traced
        elif isinstance(v, (np.ndarray, np.generic)) or is_traced(v):
            return tree
    if not found:
        return tree
    for k, t in enumerate(leaves):
        if type(t) is Traced and type(t.value) in _PYTHON_NUMBERS:
            leaves[k] = Traced(t._var, np.asarray(t.value)[()], t.builder)
    return unflatten(spec, leaves)


def _python_result(out: Any, *operands: Any) -> Any:
    """What an operator or attribute of Python numbers gives: a Python number (``x > 0``
    of a Python float is a ``bool``, ``z.real`` of a complex a ``float``)."""
    if type(out) is Traced and isinstance(out.value, (np.generic, np.ndarray)) \
            and out.value.ndim == 0 \
            and all(type(a.value if type(a) is Traced else a) in _PYTHON_NUMBERS
                    for a in operands):
        out.value = out.value.item()
        out._var.scalar = True  # (a fresh variable: operators and attributes record one)
    return out


def _what(a: Any) -> str:
    if type(a).__name__ == "Variable":
        return "Variable"
    kind = kind_of(a)
    return kind.name if kind is not None else type(a).__name__


def _outer_error(a: Any, builder: Builder) -> TraceError:
    what = _what(a)
    return TraceError(
        f"{builder.name}() reads a {what} from outside its arguments (a closure or a "
        f"global) while being traced: its derivative would be lost in the graph. Pass it as "
        "an argument of the traced function instead."
    )


def snapshot(value: Any) -> Literal:
    """A literal holding ``value`` as it is while tracing: an array is copied (read-only),
    so a graph (and a compiled function) reads a closure's array as it was when traced,
    whatever later happens to it (as ``jax.jit``); pass an array as an argument to have
    its new values read. The copy keeps the array's memory order and the repeated axes of
    a broadcast view (``matmul`` and ``einsum`` run other loops, with other bits, on other
    layouts); a strided view (``a[::2]``, a column) becomes contiguous."""
    if type(value) is np.ndarray:
        repeated = [s == 0 and n > 1 for s, n in zip(value.strides, value.shape)]
        if any(repeated):
            one = value[tuple(slice(0, 1) if r else slice(None) for r in repeated)]
            value = np.broadcast_to(one.copy(order="K"), value.shape)  # (read-only)
        else:
            value = value.copy(order="K")
            value.flags.writeable = False
    return Literal(value)


def _constant(a: Any, builder: Builder) -> Literal:
    """An input that is not traced here: a literal (an outer traced value that carries no
    derivative, such as a tensor without requires_grad, by its plain value)."""
    while is_traced(a):
        kind = kind_of(a)
        if type(a) is Traced:
            if a.builder.closed:
                raise escaped(a)
            if a.builder.abstract:
                raise TraceError(
                    f"{a._var.name} ({a._var.aval}) belongs to graph {a.builder.name!r} and was "
                    f"used with values of {builder.name!r}: values of two define-and-run "
                    "graphs (or of a graph and a trace) cannot be mixed. Build them in one "
                    "graph (one `with wg.graph.define():` block, or the default graph)."
                )
            raise TraceError(
                f"A value traced by {a.builder.name}() ({a._var.name}) was used inside the "
                f"trace of {builder.name}(): traced values of one graph cannot flow into "
                "another. Pass it as an argument."
            )
        if kind.connected(a):
            raise _outer_error(a, builder)
        recorders = RECORDERS.get()
        if recorders and recorders_tracking((a,), recorders):
            raise TraceError(
                f"{builder.name}() reads a {_what(a)} from outside its arguments (a closure "
                "or a global) that an open GradientTape watches: the graph would hold its "
                "value as a constant, so the tape would see no gradient. Pass its value as "
                "an argument (and watch a tensor made from it inside), or create the "
                "Variable inside the function."
            )
        a = kind.primal(a)
    refuse_subclass(a, f"trace of {builder.name}(): an operand of a traced value")
    return snapshot(a)


class GraphKind(Kind):
    """How graph tracers take part in :func:`wengert.core.bind.apply`."""

    name = "graph tracer"
    records_calls = True
    opaque = True

    def write(self, target: Traced, result: Any, what: str) -> Traced:
        """``np.f(..., out=target)``: ``target`` takes the result in place, as ``target
        op= ...`` does (:func:`~wengert.graph.mutation.write_out`)."""
        return write_out(target, result, what)

    def level(self, x: Traced) -> float:
        return x.builder.level

    def primal(self, x: Traced) -> Any:
        return x.value

    def shape(self, x: Traced) -> tuple[int, ...]:
        return x._var.shape

    def connected(self, x: Traced) -> bool:
        """A graph tracer carries no derivative itself (differentiating the graph later
        runs it on tensors or dual numbers, which are checked then): a tensor or a dual
        number over one carries a derivative only when it does at its own level."""
        return False

    def with_example(self, x: Traced, value: Any) -> Traced:
        """``x`` holding ``value`` as its example: the same variable of the graph, with the
        type eager mode gives (a transform's gradient of a Python float is a Python
        float); a graph returns its 0-d outputs as the type of their examples."""
        return Traced(x._var, value, x.builder)

    def process(self, op: Any, args: tuple[Any, ...], params: dict[str, Any] | None,
                level: float) -> Any:
        builder = None
        for a in args:
            if type(a) is Traced and a.builder.level == level:
                builder = a.builder
                break
        assert builder is not None
        if builder.closed:
            raise escaped(next(a for a in args if type(a) is Traced))
        if params:
            for v in params.values():
                t = type(v)
                if t is Traced or t is slice or (t is tuple and any(
                        type(e) is Traced or type(e) is slice for e in v)):
                    params = _static_params(params, op)
                    break
        ins: list[Var | Literal] = []
        values = []
        for a in args:
            if type(a) is Traced and a.builder is builder:
                ins.append(a._var)
                values.append(a.value)
            else:
                lit = _constant(a, builder)
                ins.append(lit)
                values.append(lit.value)
        try:
            with np.errstate(all="ignore") if builder.abstract else _NO_CONTEXT:
                value = forward(op, tuple(values), params)
        except Exception as e:  # the traced code may catch it
            builder.raised(_Forward(op, params), op.name, ins, e)
            raise
        if not params and type(value) in (np.float64, np.complex128) \
                and _python_numbers(values):
            value = value.item()  # a Python float with an int is a Python float, eagerly
        out = builder.record(op, ins, params, value)
        if (op.view or op in PART_VIEWS) and type(args[0]) is Traced \
                and args[0].builder is builder and is_view(op, value, values[0]):
            link_view(args[0], out, op, params)  # a NumPy view: in-place updates write through
        return out

    def record_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    name: str, derivative_free: bool = True, replay: bool = False) -> Any:
        """A NumPy function without a gradient rule, on traced values: an equation of an
        op made for this call (its forward runs ``func`` with the same static arguments).
        With ``replay`` (a ``custom_vjp`` or ``custom_jvp`` function), the equation runs
        ``func`` itself on tensors or dual numbers when the graph is differentiated, so
        its own rule gives the derivative."""
        leaves, spec = flatten((args, kwargs))
        builder = max((a.builder for a in leaves if type(a) is Traced),
                      key=lambda b: b.level)
        if func in STATIC_FUNCTIONS:
            plain = [a.value if type(a) is Traced else primal(a) for a in leaves]
            args2, kwargs2 = unflatten(spec, plain)
            return func(*args2, **kwargs2)
        if builder.closed:
            raise escaped(next(a for a in leaves if type(a) is Traced))
        # Traced values and numbers are the equation's inputs (shown in listings); the
        # rest (None, strings, dtypes, slices) stays fixed in the op made for the call.
        positions: list[int] = []
        ins: list[Var | Literal] = []
        values: list[Any] = []
        fixed = list(leaves)
        for k, a in enumerate(leaves):
            if derivative_free and not replay:
                # a comparison of a value that a transform inside the trace differentiates
                # (``if a > b:`` in ``grad(f, argnums=1)``): no derivative flows through
                # it, so it reads the traced value beneath
                while is_traced(a) and type(a) is not Traced \
                        and kind_of(a).level(a) > builder.level:
                    a = kind_of(a).primal(a)
            if type(a) is Traced and a.builder is builder:
                ins.append(a._var)
            elif is_traced(a):
                ins.append(_constant(a, builder))
            elif isinstance(a, (int, float, complex, np.ndarray, np.generic)):
                ins.append(snapshot(a))
            else:
                continue
            positions.append(k)
            values.append(a.value if type(a) is Traced else ins[-1].value)
            fixed[k] = None
        call = _Call(func, spec, fixed, positions, None, derivative_free, replay)
        try:
            with np.errstate(all="ignore") if builder.abstract else _NO_CONTEXT:
                value = call(*values)
        except Exception as e:  # the traced code may catch it
            builder.raised(call, name.removeprefix("np."), ins, e)
            raise
        if isinstance(value, (tuple, list, dict)):  # np.nonzero, a custom function's
            out_leaves, out_spec = flatten(value)   # tree: one equation per leaf
            parts = []
            for i, leaf in enumerate(out_leaves):
                part = _call_op(func, f"{name}[{i}]", spec, fixed, positions, i,
                                derivative_free, replay, np.shape(leaf))
                parts.append(builder.record(part, list(ins), None, leaf))
                if func in VALUE_SHAPED:
                    builder.shape_guard(parts[-1])
            return unflatten(out_spec, parts)
        # The same call again (a mask recomputed by each rule) reuses its op, for cse; its
        # result's shape is part of the key (the op checks it when it runs again).
        try:
            key: Any = (func, name, repr(spec), value_key(fixed), tuple(positions),
                        derivative_free, replay, np.shape(value))
            op = builder.call_ops.get(key)
        except TypeError:
            key, op = None, None
        if op is None:
            op = _call_op(func, name, spec, fixed, positions, None, derivative_free, replay,
                          np.shape(value))
            if key is not None:
                builder.call_ops[key] = op
        out = builder.record(op, ins, None, value)
        if func in VALUE_SHAPED:
            builder.shape_guard(out)
        return out


def static_value(t: Traced, what: str) -> Any:
    """A traced number where NumPy needs a Python value (an ``axis=``, a slice bound, a
    ``decimals=``, a size): the example's value, recorded as a guard, so the graph holds
    for inputs that give it and a compiled function traces again for others."""
    if t._var.shape != ():
        raise TraceError(
            f"{what} is a traced array ({t._var.name}: {t._var.aval}), but it is a fixed "
            "parameter of the step, not an input of the graph: it cannot follow the traced "
            "values. Pass it as a plain NumPy array (a constant), or compute it outside the "
            "traced function."
        )
    kind = t._var.dtype.kind
    how = "index" if kind in "iu" else "bool" if kind == "b" else \
        "complex" if kind == "c" else "float"
    return t.builder.guard(t, how)


def _python_numbers(values: list[Any]) -> bool:
    """Python numbers (a float or complex among them): Python's arithmetic gives a float
    or a complex."""
    floats = False
    for v in values:
        t = type(v)
        if t is float or t is complex:
            floats = True
        elif t is not int and t is not bool:
            return False
    return floats


def _static_params(params: dict[str, Any], op: Any) -> dict[str, Any]:
    """``params`` with traced numbers (in tuples and slices too) replaced by guarded Python
    values (see :func:`static_value`)."""
    def one(v: Any, what: str) -> Any:
        t = type(v)
        if t is Traced:
            return static_value(v, what)
        if t is slice:
            return slice(one(v.start, what), one(v.stop, what), one(v.step, what))
        if t is tuple:
            return tuple(one(e, what) for e in v)
        return v

    return {k: one(v, f"{op.name}'s parameter {k}=") for k, v in params.items()}


class _NoContext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_NO_CONTEXT = _NoContext()


class _Call:
    """The forward of a recorded call: ``func`` with the traced leaves filled in (``shape``:
    its result's shape when traced)."""

    __slots__ = ("func", "spec", "fixed", "positions", "part", "derivative_free", "replay",
                 "shape", "__name__")

    def __init__(self, func: Any, spec: Any, fixed: list[Any], positions: list[int],
                 part: int | None, derivative_free: bool = True, replay: bool = False,
                 shape: tuple[int, ...] | None = None) -> None:
        self.derivative_free = derivative_free
        self.replay = replay
        self.func = func
        self.spec = spec
        self.fixed = fixed
        self.positions = positions
        self.part = part
        self.shape = shape
        self.__name__ = getattr(func, "__name__", "call")

    def __call__(self, *values: Any) -> Any:
        leaves = list(self.fixed)
        for k, v in zip(self.positions, values):
            leaves[k] = v
        args, kwargs = unflatten(self.spec, leaves)
        out = self.func(*args, **kwargs)
        if self.part is not None:
            out = flatten(out)[0][self.part]
        return out


class _Forward:
    """An op's forward with fixed parameters, as eager mode runs it."""

    __slots__ = ("op", "params", "__name__")

    def __init__(self, op: Any, params: dict[str, Any] | None) -> None:
        self.op = op
        self.params = params
        self.__name__ = op.name

    def __call__(self, *values: Any) -> Any:
        return forward(self.op, values, self.params)


class _Raises:
    """Whether ``fn`` raises ``error`` (or a subclass) on these values: ``np.True_`` or
    ``np.False_`` (a graph step whose guard holds where the traced run raised)."""

    __slots__ = ("fn", "error", "__name__")

    def __init__(self, fn: Any, error: type[BaseException], name: str) -> None:
        self.fn = fn
        self.error = error
        self.__name__ = f"raises_{name}"

    def __call__(self, *values: Any) -> Any:
        try:
            self.fn(*values)
        except self.error:
            return np.True_
        except Exception:  # noqa: BLE001 - another error: not the traced run's path
            return np.False_
        return np.False_


def raised_error(eq: Equation) -> str | None:
    """For the equation that tells whether a step raises again (see
    :meth:`Builder.raised`): ``inv raised LinAlgError``; else ``None``."""
    impl = eq.op.impl
    if type(impl) is not _Call or type(impl.func) is not _Raises:
        return None
    check = impl.func
    return f"{check.__name__.removeprefix('raises_')} raised {check.error.__name__}"


def _call_op(func: Any, name: str, spec: Any, fixed: list[Any], positions: list[int],
             part: int | None = None, derivative_free: bool = True, replay: bool = False,
             shape: tuple[int, ...] | None = None) -> Op:
    impl = _Call(func, spec, fixed, positions, part, derivative_free, replay, shape)
    return Op(name.removeprefix("np."), impl, (None,) * len(positions),
              symbol=name.removeprefix("np."),
              formula="its own rule (custom)" if replay else "no derivative")


register(Traced, GraphKind())


def is_recorded_call(op: Any) -> bool:
    """Whether ``op`` was made for a NumPy call without a gradient rule (``np.greater``)."""
    return type(op.impl) is _Call


def run_equation(eq: Equation, values: list[Any]) -> Any:
    """Apply an equation's op to ``values`` that may be traced (tensors, duals, tracers):
    its output, or a tuple of them for an equation with several (a decomposition).

    A recorded NumPy call carries no derivative: it runs on the values beneath tensors
    and dual numbers (an outer trace's tracers record it again, at the equation's own
    line of code). An equation traced inside ``no_grad`` runs inside it again."""
    if eq.source is not None:
        token = _REPLAYED_SOURCE.set(eq.source)
        try:
            return _run_in_context(eq, values)
        finally:
            _REPLAYED_SOURCE.reset(token)
    return _run_in_context(eq, values)


def _run_in_context(eq: Equation, values: list[Any]) -> Any:
    if eq.context is not None:
        with eq.context():
            return _run_grad(eq, values)
    return _run_grad(eq, values)


def _run_grad(eq: Equation, values: list[Any]) -> Any:
    if eq.grad_off:
        token = GRAD_ENABLED.set(False)
        try:
            return _run_parts(eq, values)
        finally:
            GRAD_ENABLED.reset(token)
    return _run_parts(eq, values)


def _run_parts(eq: Equation, values: list[Any]) -> Any:
    if eq.parts is None:
        return _run(eq.op, values, eq.params)
    # each part's op, as eagerly (they share one decomposition: wengert.ops.linalg.memo)
    return tuple([_run(op, values, eq.params) for op in eq.parts])


def _run(op: Any, values: list[Any], params: dict[str, Any]) -> Any:
    if type(op.impl) is _Call:
        if op.impl.replay:  # a custom_vjp function: it differentiates itself
            return op.impl(*values)
        if not op.impl.derivative_free:
            for v in values:
                kind = kind_of(v)
                if kind is not None and not kind.opaque and kind.connected(v):
                    refusal = getattr(op.impl.func, "refusal", None)
                    if refusal is not None:
                        raise TypeError(refusal)
                    raise TypeError(
                        f"np.{op.name} has no wengert gradient rule, and one of its inputs "
                        "requires grad: the gradient would be lost. Use a supported function "
                        "(see wengert.numpy), wrap the input in wg.stop_gradient(...) if no "
                        "gradient should flow, or define a rule with wg.custom_vjp."
                    )
        return op.impl(*[primal(v) for v in values])
    return apply(op, *values, **params)
