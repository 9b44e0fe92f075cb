"""Routing of plain ``np.*`` calls on traced values to wengert functions.

Tensors, dual numbers (and any other kind of traced value) implement
``__array_ufunc__`` and ``__array_function__`` (NEP 13 and NEP 18) with
:func:`array_ufunc` and :func:`array_function`, which look the NumPy callable up
in the tables ``wengert.numpy`` builds from what each op family declares
(:class:`wengert.ops.base.Family`). NumPy itself is
never patched. A NumPy function without a rule runs on the plain values when
nothing it gets carries a derivative, and raises otherwise.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np
from wengert import numpy as wnp
from wengert.core.bind import dtype_of, example, kind_of, primal
from wengert.core.errors import LostDerivativeError, NoVJPError, TraceError
from wengert.core.modes import GRAD_ENABLED
from wengert.core.source import converting_call

__all__ = ["array_ufunc", "array_function", "UFUNCS", "FUNCTIONS", "tables", "specialise",
           "lost_in_store"]

#: Ufuncs whose results carry no gradient (booleans, integers, tests).
_NONDIFF_UFUNCS = {
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.logical_and,
    np.logical_or,
    np.logical_xor,
    np.logical_not,
    np.isnan,
    np.isinf,
    np.isfinite,
    np.signbit,
    np.bitwise_and,
    np.bitwise_or,
    np.bitwise_xor,
    np.invert,
    np.left_shift,
    np.right_shift,
    np.gcd,
    np.lcm,
    np.bitwise_count,
    np.isnat,
}

#: NumPy functions whose results carry no gradient (indices, shapes, tests).
_NONDIFF_FUNCTIONS = {
    np.shape,
    np.ndim,
    np.size,
    np.argmax,
    np.argmin,
    np.nanargmax,
    np.nanargmin,
    np.argsort,
    np.argpartition,
    np.linalg.matrix_rank,
    np.nonzero,
    np.flatnonzero,
    np.argwhere,
    np.count_nonzero,
    np.isclose,
    np.allclose,
    np.array_equal,
    np.any,
    np.all,
    np.searchsorted,
    np.isnan,
    np.isinf,
    np.isfinite,
    np.result_type,
    np.iscomplexobj,
    np.isrealobj,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.array_equiv,
    np.digitize,
    np.may_share_memory,
    np.shares_memory,
    np.can_cast,
    np.min_scalar_type,
    np.iscomplex,
    np.isreal,
    np.array2string,
    np.array_repr,
    np.array_str,
    np.common_type,
    np.diag_indices_from,
    np.tril_indices_from,
    np.triu_indices_from,
    np.einsum_path,
    np.isneginf,
    np.isposinf,
    np.lexsort,
    np.packbits,
    np.unpackbits,
    np.isin,
}
if hasattr(np, "in1d"):  # (NumPy < 2.4: isin's deprecated 1-d form)
    _NONDIFF_FUNCTIONS.add(np.in1d)
_LIKE = {np.zeros_like, np.ones_like, np.empty_like}


def _write_into(target: Any, what: str, run: Any) -> Any:
    """Run a NumPy function that writes into ``target`` (a traced value): allowed for a
    constant, whose version is bumped so the tape sees the change; refused where a
    gradient would flow through ``target``."""
    kind = kind_of(target)
    if kind.opaque:  # a graph tracer: only what is recorded is a step of the graph
        raise TypeError(
            f"{what} writes in place into a traced value (inside wg.compile / wg.trace), "
            "and wengert has no rule that records it: compute the new array out of place "
            "(np.where, np.concatenate, y = y + v) or with y[i] = v and y[i] += v, which "
            "are recorded."
        )
    if kind.connected(target) and GRAD_ENABLED.get():
        raise LostDerivativeError(
            f"{what} writes in place into a value that carries a gradient, which would be "
            "lost; compute the new array out of place (np.where, x[i] = v on the tensor, "
            "np.concatenate) instead, or write under wg.no_grad() (an optimizer step)."
        )
    result = run()
    kind.modified(target)
    return result

def lost_in_store(what: str) -> LostDerivativeError:
    """The error for a value that carries a derivative written into a plain NumPy array
    (``buf[i] = x``, ``np.copyto(buf, x)``, ``out=buf``)."""
    return LostDerivativeError(
        f"{what}: this stores a value that carries a derivative into a plain NumPy array, "
        "which keeps only the numbers, so the gradient would be lost. Make the array a "
        "wengert value, and the writes are recorded: buf = np.zeros_like(x) (or "
        "np.zeros_like(x, shape=(n,)) for another shape), then buf[i] = ...; or build the "
        "result without writing into an array: np.stack([...]), np.concatenate, "
        "wnp.array([...]) (import wengert.numpy as wnp), np.where. If no gradient should "
        "flow, store wg.stop_gradient(x) instead."
    )


#: What to write instead of a NumPy function that converts its arguments to numbers.
_CONVERSION_FIXES = {
    "full": "np.full(shape, v) converts its fill value v to numbers. Write "
            "np.broadcast_to(v, shape) (read-only) or v * np.ones(shape) instead: they keep "
            "the derivative.",
    "full_like": "np.full_like(a, v) converts its fill value v to numbers. Write "
                 "v * np.ones_like(a) (or np.broadcast_to(v, np.shape(a)), read-only) "
                 "instead: they keep the derivative.",
    "arange": "np.arange converts its bounds to numbers (the number of values it gives is "
              "an integer, so the bounds have no derivative through it). Write "
              "np.arange(wg.stop_gradient(x)) for a range of constants, or "
              "start + step * np.arange(n) for values that depend on start and step.",
}


def lost_in_conversion(what: str, default: str, depth: int = 1) -> LostDerivativeError | None:
    """The error for ``what`` (a value that carries a derivative) converted with
    ``np.asarray`` by a NumPy function that wengert does not run on it (``np.full(n, x)``,
    ``np.arange(x)``), found ``depth`` frames above the caller (``__array__``); ``default``
    says what to do in general."""
    name = converting_call(depth + 1)
    if name is None or name in _CONVERTERS or not callable(getattr(np, name, None)):
        return None
    fix = _CONVERSION_FIXES.get(name)
    head = f"np.{name}() converted {what} to a plain NumPy array, which would drop its derivative"
    if fix is not None:
        return LostDerivativeError(f"{head}: {fix}")
    if not default:
        return None
    return LostDerivativeError(f"{head}. {default}")


#: The conversions the user asks for by name (their own message says what to do).
_CONVERTERS = frozenset(("asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray",
                         "asarray_chkfinite", "asmatrix", "require", "copyto"))


def frozen_in_store(what: str) -> TraceError:
    """The error for a graph tracer written into a plain NumPy array (``np.copyto(buf, x)``,
    ``out=buf``): the graph would hold the example's numbers there as a constant."""
    return TraceError(
        f"{what}: this stores a traced value into a plain NumPy array, which keeps only the "
        "numbers, so the graph would freeze them as a constant (and a gradient would be "
        "lost). Make the array a traced value: buf = np.zeros_like(x) (or "
        "np.zeros_like(x, shape=(n,)) for another shape), then buf[i] = ... is recorded; or "
        "assign the result (y = np.f(x)), or build it with np.stack, np.concatenate or "
        "np.where."
    )


def _store_refused(what: str, values: Any) -> None:
    """Refuse writing ``values`` into a plain NumPy array when one carries a derivative
    or is a graph tracer."""
    if _needs_grad(values):
        raise lost_in_conversion("a value that carries a derivative", "") or lost_in_store(what)
    if _find(values, lambda kind, a: kind.records_calls):
        raise frozen_in_store(what)


#: NumPy ufunc -> wengert function; filled from ``wengert.numpy`` on first use
#: (this module is imported while the op families are still loading).
UFUNCS: dict[Any, Any] = {}
#: NumPy function -> wengert function, filled likewise.
FUNCTIONS: dict[Any, Any] = {}


def tables() -> tuple[dict[Any, Any], dict[Any, Any]]:
    """The routing tables, built on first use."""
    if not UFUNCS:
        FUNCTIONS.update(wnp.FUNCTION_TABLE)
        UFUNCS.update(wnp.UFUNC_TABLE)
    return UFUNCS, FUNCTIONS


def _unbox(x: Any) -> Any:
    """The plain values under the traced ones, through (nested) lists and tuples."""
    if isinstance(x, (list, tuple)):
        return type(x)(_unbox(i) for i in x)
    return primal(x)


def _traced_in(args: Any) -> Iterator[tuple[Any, Any]]:
    """``(kind, value)`` for each traced value among ``args`` (searched through lists,
    tuples and dicts, without recursion)."""
    stack = [args]
    while stack:
        a = stack.pop()
        kind = kind_of(a)
        if kind is not None:
            yield kind, a
        elif isinstance(a, (list, tuple)):
            stack.extend(a)
        elif isinstance(a, dict):
            stack.extend(a.values())


def _find(args: Any, test: Any) -> bool:
    """Whether ``test(kind, value)`` holds for a traced value among ``args``."""
    return any(test(kind, a) for kind, a in _traced_in(args))


def _needs_grad(args: Any) -> bool:
    """Whether a traced value that carries a derivative is among ``args``. (A graph tracer
    records the call instead; differentiating the graph later refuses it there if a
    derivative would flow through: graph.tracer.)"""
    return _find(args, lambda kind, a: kind.connected(a) and not kind.records_calls)


def _carries(args: Any) -> bool:
    """Whether a traced value that carries a derivative, or a graph tracer (which records
    what happens to it), is among ``args``."""
    return _find(args, lambda kind, a: kind.records_calls or kind.connected(a))


def _box(result: Any, inputs: Any) -> Any:
    """A gradient-free result: a constant of the innermost traced input's kind and level
    (a tensor that requires no grad, of the transform its inputs belong to, so that
    ``y = np.zeros_like(x); y[0] = x[0]`` records on ``x``'s tape; a dual number with a
    zero tangent, so that it carries ``x``'s tangent then), else the result as NumPy
    gave it."""
    best: Any = None
    level = -1.0
    example = None
    for kind, a in _traced_in(inputs):
        at = kind.level(a)
        if best is None or at > level:
            best, level, example = kind, at, a
    return result if best is None else best.constant(result, level, example)


def _recording_kind(args: Any) -> Any:
    """A kind among ``args`` that records calls without a gradient rule (the graph
    tracer: ``x > 0`` must stay a step of the graph, not become a constant)."""
    return next((kind for kind, _ in _traced_in(args) if kind.records_calls), None)


def _plain_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], name: str,
                box: bool, derivative_free: bool = True) -> Any:
    """``func`` (no gradient) on the values beneath ``args``: recorded by a kind that
    records calls (``derivative_free``: its result has no derivative by nature, as a
    comparison's; else it is a function without a rule), else run, and its result boxed
    as the inputs' kind boxes constants when ``box``."""
    recorder = _recording_kind((args, kwargs))
    if recorder is not None:
        return recorder.record_call(func, args, kwargs, name, derivative_free)
    result = func(*_unbox(args), **{k: _unbox(v) for k, v in kwargs.items()})
    return _box(result, (args, kwargs)) if box else result


def numpy_name(func: Any) -> str:
    """``np.linalg.eigh`` for ``numpy.linalg.eigh`` (the name a user wrote)."""
    module = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    if module == "numpy" or module.startswith("numpy._core") or module.startswith("numpy.core"):
        return f"np.{name}"
    if module.startswith("numpy."):
        return "np." + module[len("numpy."):] + "." + name
    return f"{module}.{name}"


def array_ufunc(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``Tensor.__array_ufunc__``: run the wengert op for ``ufunc``."""
    out = kwargs.pop("out", None)
    if method == "__call__":
        fn = tables()[0].get(ufunc)
        if fn is not None and not kwargs:
            result = fn(*inputs)
        elif fn is not None and ufunc.nout == 1 and kwargs.get("dtype") is not None \
                and kwargs.keys() <= {"dtype", "casting"}:
            result = fn(*_cast_to_loop(ufunc, inputs, kwargs))
        elif ufunc in _NONDIFF_UFUNCS or not _needs_grad(inputs):
            if out is not None and _masked(kwargs) and ufunc.nout == 1:
                # where= leaves the other entries of out= as they were: the call starts
                # from a copy of the target's values (without out=, NumPy's would be
                # uninitialised memory, written into the target whole)
                target = out[0] if isinstance(out, tuple) else out
                return _write_out(ufunc, target, _plain_call(
                    _ufunc_into, (ufunc, target) + tuple(inputs), kwargs,
                    f"np.{ufunc.__name__}", True, ufunc in _NONDIFF_UFUNCS))
            result = _plain_call(ufunc, inputs, kwargs, f"np.{ufunc.__name__}", True,
                                 ufunc in _NONDIFF_UFUNCS)
        else:
            extra = f" with arguments {sorted(kwargs)}" if fn is not None else ""
            raise TypeError(
                f"np.{ufunc.__name__}{extra} has no wengert gradient rule, and one of its inputs "
                "requires grad. Use a supported function (see wengert.numpy), wrap the call in "
                "wg.stop_gradient(...) if no gradient should flow, or define one with "
                "wg.custom_vjp."
            )
    elif method == "at" and inputs and kind_of(inputs[0]) is not None:
        at = wnp.AT_TABLE.get(ufunc)
        opaque = kind_of(inputs[0]).opaque  # a graph tracer: records the write, or refuses
        if at is not None and not kwargs and len(inputs) == 3 and opaque:
            return at(*inputs)
        if not opaque and GRAD_ENABLED.get() and _carries((inputs, kwargs)):
            if at is None or kwargs or len(inputs) != 3:
                raise TypeError(
                    f"np.{ufunc.__name__}.at on a value that carries a derivative has no "
                    "wengert gradient rule (np.add.at and np.subtract.at have one); compute "
                    "the result out of place (x[i] = f(x[i]) for unique indices, np.where), "
                    "or write under wg.no_grad() if no gradient should flow."
                )
            return at(*inputs)
        return _write_into(inputs[0], f"np.{ufunc.__name__}.at",
                           lambda: ufunc.at(*_unbox(inputs), **kwargs))
    elif method == "at" and inputs and _needs_grad((inputs[1:], kwargs)):
        raise lost_in_store(f"np.{ufunc.__name__}.at(ndarray, ...)")
    elif method == "reduce" and ufunc in wnp.REDUCE_TABLE:
        result = wnp.REDUCE_TABLE[ufunc](*inputs, **kwargs)
    elif method == "accumulate" and ufunc in wnp.ACCUMULATE_TABLE:
        result = wnp.ACCUMULATE_TABLE[ufunc](*inputs, **kwargs)
    elif not _needs_grad(inputs):
        result = _plain_call(getattr(ufunc, method), inputs, kwargs,
                             f"np.{ufunc.__name__}.{method}", True, False)
    else:
        raise TypeError(
            f"np.{ufunc.__name__}.{method} has no wengert gradient rule, and one of its inputs "
            "requires grad; use a supported function from wengert.numpy."
        )
    if out is not None:
        if isinstance(result, tuple):  # modf, frexp, divmod: one target per output
            outs = out if isinstance(out, tuple) else (out,)
            if len(outs) != len(result):
                raise ValueError(f"np.{ufunc.__name__}: out must be a tuple of "
                                 f"{len(result)} arrays (or None)")
            return tuple(r if o is None else _write_out(ufunc, o, r)
                         for o, r in zip(outs, result))
        return _write_out(ufunc, out[0] if isinstance(out, tuple) else out, result)
    return result


def _cast_to_loop(ufunc: Any, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The inputs of ``ufunc(*inputs, dtype=..., casting=...)`` cast to the dtypes of the
    loop NumPy picks for them (``np.sin(x32, dtype=np.float64)`` computes in float64;
    Python numbers stay weak); NumPy's error where no loop fits the casting rule."""
    given = tuple(type(v) if type(v) in (int, float, complex) else dtype_of(v)
                  for v in map(example, inputs))
    loop = ufunc.resolve_dtypes(given + (None,), signature=(None,) * ufunc.nin
                                + (np.dtype(kwargs["dtype"]),),
                                casting=kwargs.get("casting", "same_kind"))
    return [v if isinstance(g, type) or g == want else v.astype(want) if kind_of(v)
            else np.asarray(v).astype(want) for v, g, want in zip(inputs, given, loop)]


def _masked(kwargs: dict[str, Any]) -> bool:
    """Whether a ufunc call's ``where=`` leaves entries out."""
    where = kwargs.get("where", True)
    return where is not True and where is not None


def _ufunc_into(ufunc: Any, initial: Any, *inputs: Any, **kwargs: Any) -> np.ndarray:
    """``ufunc(*inputs, **kwargs)`` written into a copy of ``initial``: where ``where=``
    is false, the result keeps ``initial``'s entries, as NumPy's ``out=`` target does."""
    out = np.array(initial, copy=True)
    ufunc(*inputs, out=out, **kwargs)
    return out


def _write_out(ufunc: Any, target: Any, result: Any) -> Any:
    """``result`` written into ``out=target`` (a traced value records the write; an
    ndarray is refused where the gradient would be dropped)."""
    return _write_result(f"np.{ufunc.__name__}", target, result)


def _write_result(name: str, target: Any, result: Any) -> Any:
    """``result`` of ``name`` written into ``out=target``, as :func:`_write_out`."""
    if isinstance(target, tuple) and len(target) == 1:
        target = target[0]
    kind = kind_of(target)
    if kind is not None:
        return kind.write(target, result, f"{name}(..., out=)")
    _store_refused(f"{name}(..., out=ndarray) (assign the result instead: y = np.f(x))",
                   (result,))
    np.copyto(target, primal(result), casting="same_kind")
    return target


#: NumPy function -> the position of its ``out`` parameter (``None``: it has none).
_OUT_POSITION: dict[Any, int | None] = {}


def _out_position(func: Any) -> int | None:
    if func not in _OUT_POSITION:
        try:
            params = list(inspect.signature(func).parameters.values())
        except (TypeError, ValueError):  # no signature: out= by keyword only
            params = []
        names = []
        for p in params:  # the positional ones (np.einsum's out= follows *operands)
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
        _OUT_POSITION[func] = names.index("out") if "out" in names else None
    return _OUT_POSITION[func]


def _split_out(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The traced ``out=`` target of a call (or ``None``), and the arguments without it:
    NumPy would write into the value beneath the traced one behind its back (no version
    bump, no refusal for a value that carries a gradient), so the result is written by
    its kind instead, as for a ufunc's ``out=``. A NumPy array target is split off too
    where a graph records the call (the write is then refused: the graph would freeze the
    traced value there)."""
    target = kwargs.get("out")
    recorded = _recording_kind((args, kwargs)) is not None
    if target is not None:
        if kind_of(target) is None and not recorded:
            return None, args, kwargs
        return target, args, {k: v for k, v in kwargs.items() if k != "out"}
    at = _out_position(func)
    if at is None or at >= len(args) or args[at] is None or (kind_of(args[at]) is None
                                                            and not recorded):
        return None, args, kwargs
    return args[at], args[:at] + (None,) + args[at + 1:], kwargs


def array_function(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``Tensor.__array_function__``: run the wengert function for ``func``."""
    if func is np.shape and len(args) == 1 and not kwargs:
        return args[0].shape  # asked often, by rules too: answer without dispatching
    fn = tables()[1].get(func)
    if fn is not None:
        at = _out_position(func) if "out" not in kwargs else None
        if kwargs.get("out") is None and (at is None or at >= len(args) or args[at] is None):
            return fn(*args, **kwargs)
        # out=: wengert's function computes the result, written into the target as a
        # ufunc's out= is (recorded into a traced value; refused where it would drop a
        # derivative): np.clip(w, -1.0, 1.0, out=w) under no_grad, as NumPy code does
        if "out" in kwargs:
            target = kwargs["out"]
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        else:
            target = args[at]
            args = args[:at] + args[at + 1:]
        return _write_result(numpy_name(func), target, fn(*args, **kwargs))
    if func in wnp.IN_PLACE_TABLE and args:
        if kind_of(args[0]) is not None:
            if kind_of(args[0]).opaque or GRAD_ENABLED.get() and _carries((args, kwargs)):
                # a derivative flows through the write, or a graph records it:
                # x[index] = values, recorded
                return wnp.IN_PLACE_TABLE[func](*args, **kwargs)
            return _write_into(args[0], numpy_name(func), lambda: func(
                *_unbox(args), **{k: _unbox(v) for k, v in kwargs.items()}))
        _store_refused(f"{numpy_name(func)}(ndarray, ...)", (args[1:], kwargs))
    if func in _NONDIFF_FUNCTIONS or not _needs_grad((args, kwargs)):
        target, args, kwargs = _split_out(func, args, kwargs)
        result = _plain_call(func, args, kwargs, numpy_name(func), func in _LIKE,
                             func in _NONDIFF_FUNCTIONS)
        if target is None:
            return result
        kind = kind_of(target)
        if kind is not None:
            return kind.write(target, result, f"{numpy_name(func)}(..., out=)")
        _store_refused(f"{numpy_name(func)}(..., out=ndarray) (assign the result instead: "
                       "y = np.f(x))", (result,))
        np.copyto(target, primal(result))
        return target
    raise NoVJPError(
        f"{numpy_name(func)} has no wengert gradient rule, and one of its inputs requires grad: "
        "the gradient would be lost. Use a supported function (see wengert.numpy), wrap the "
        "input in wg.stop_gradient(...) if no gradient should flow, or define a rule with "
        "wg.custom_vjp."
    )


#: ufunc name -> the operator a kind's class gets bound straight to the kind's function.
_OPERATORS = {"add": "__add__", "subtract": "__sub__", "multiply": "__mul__",
              "divide": "__truediv__", "power": "__pow__"}


def specialise(cls: type, kind: Any, fast_ufuncs: dict[Any, Any]) -> None:
    """Bind ``cls``'s arithmetic operators, and fill ``fast_ufuncs`` (ufunc -> function,
    for ``cls.__array_ufunc__``), with ``kind``'s specialised functions: one Python
    call per op on the hot path instead of the public function's dispatch followed
    by the kind's function. What ``kind`` does not specialise keeps the public
    functions."""
    for ufunc, public in tables()[0].items():
        op = getattr(public, "op", None)
        if op is None:
            continue
        fast = kind.unary(op, cls, public) if ufunc.nin == 1 else kind.binary(op, cls, public)
        if fast is None:
            continue
        fast_ufuncs[ufunc] = fast
        operator = _OPERATORS.get(ufunc.__name__)
        if operator is not None:
            setattr(cls, operator, fast)
