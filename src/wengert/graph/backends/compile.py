"""``wg.compile(f)``: trace once per input signature, optimise, and replay generated code.

As ``jax.jit`` or ``tf.function``: the first call with arguments of a new
*signature* (the pytree structure, each leaf's shape and dtype, Python
floats apart from arrays, and the values of static arguments) traces ``f``
into a graph, optimises it and compiles it to Python source
(:mod:`wengert.graph.backends.codegen`); later calls with that signature run the
compiled code.

Arrays, NumPy scalars, Python floats and complex numbers are the graph's
inputs. Every other argument (at any place in a pytree) is *static*, as
``torch.compile`` treats them: a Python ``int`` or ``bool``, a string,
``None``, an enum, a function, a frozen dataclass is passed to ``f`` as it is
and is part of the cache key, so Python code computes with it exactly as it
would eagerly (an ``int`` never wraps around, ``range(n)``, ``x[:n]`` and
``axis=n`` just work) and each new value traces again. ``1``, ``1.0`` and
``True`` are three keys. Pass ``np.int64(n)`` (or a 0-d array) to have an
integer traced as data instead, with NumPy's integer arithmetic as eagerly.

Python control flow on traced values is never replayed blindly: each
conversion the trace made (``if x > 0``, ``float(y)``) is a guard checked by
the compiled code, and a call whose guard fails traces again and keeps both
traces (one per branch). A function that keeps retracing (its Python code
branches on values that change every call) triggers a warning naming the
line.

A compiled function keeps at most ``cache_limit`` traces (64 by default): past
that it warns once and calls ``f`` itself for new signatures, as
``torch.compile`` falls back to eager code at its recompile limit.

Arguments that are tensors, dual numbers or tracers run the cached graph op
by op, so ``grad(compile(f))``, ``jvp(compile(f))`` and ``compile`` inside
another trace work; ``compile(grad(f))`` traces the gradient itself.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def f(x):
...     return np.sum(np.tanh(x) ** 2)
>>> f = wg.compile(f)        # or @wg.compile above the def
>>> float(f(np.zeros(3))), float(f(np.ones(3))) > 0
(0.0, True)
>>> f.cache_info()
[<trace f(x: f64[3]): 3 equations, 2 calls>]
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import is_traced, kind_of
from wengert.core.collector import collector_paused
from wengert.core.display import html_of
from wengert.core.tree import flatten, unflatten
from wengert.graph.backends.codegen import compile_graph
from wengert.graph.backends.runtime import as_returned
from wengert.graph.ir import GuardFailed, Var
from wengert.graph.keys import changed_attributes, static_key
from wengert.graph.passes.pipeline import COMPILE_PASSES
from wengert.graph.program import Graph, evaluate, refuse_lost_derivatives
from wengert.graph.trace import argument_names, function_name, static_positions, trace_into
from wengert.graph.tracer import Builder, Traced

__all__ = ["compile", "Compiled", "TraceInfo", "RETRACE_WARNING", "CACHE_LIMIT",
           "is_static_leaf"]

#: Traces of one set of argument shapes (differing in guards or static values) after
#: which a warning says the function keeps retracing.
RETRACE_WARNING = 8
#: Traces a compiled function keeps by default; new signatures past it run eagerly.
CACHE_LIMIT = 64

_STATIC = object()  # marks a static leaf in a cache key's per-leaf entries


def _plain(x: Any) -> Any:
    while is_traced(x):
        x = x.value if type(x) is Traced else kind_of(x).primal(x)
    return x


def _hashable(spec: Any) -> Any:
    """A pytree spec as a key: its lists as tuples, its container types as themselves (a
    class redefined in a notebook is a new key, though it prints the same)."""
    if isinstance(spec, (list, tuple)):
        return tuple(_hashable(s) for s in spec)  # a spec is as deep as the pytree
    return spec


def is_static_leaf(x: Any) -> bool:
    """Whether a leaf of a compiled function's arguments is passed to it as it is (part
    of the cache key) rather than traced: anything but arrays, NumPy scalars, Python
    floats and complex numbers, array-likes and traced values.

    Examples
    --------
    >>> [is_static_leaf(v) for v in (3, True, "relu", None, 3.0, np.int64(3), np.ones(2))]
    [True, True, True, True, False, False, False]
    """
    if isinstance(x, (np.ndarray, np.generic)):
        return False
    if isinstance(x, int):  # (bool, IntEnum)
        return True
    if isinstance(x, (float, complex)) or is_traced(x):
        return False
    t = type(x)
    return not (hasattr(t, "__array__") or hasattr(t, "__array_interface__")
                or hasattr(t, "__array_struct__"))


def _leaf_signature(x: Any) -> tuple[Any, ...]:
    x = _plain(x)
    t = type(x)
    if t is float or t is int or t is bool or t is complex:
        return (t,)
    if t is np.ndarray:
        return (x.shape, x.dtype)
    a = np.asarray(x)
    return (t, a.shape, a.dtype)


class TraceInfo:
    """One cached trace: its signature, guards, size and use."""

    __slots__ = ("graph", "traced", "calls", "runner", "statics", "shapes", "floats")

    def __init__(self, graph: Graph, traced: Graph, runner: Callable[..., Any],
                 statics: Sequence[tuple[str, Any]] = (), shapes: Any = None) -> None:
        self.graph = graph  # the optimised graph that runs
        self.traced = traced  # the graph as traced
        self.runner = runner
        self.calls = 0
        # (name, value, key when traced) of each static argument or leaf
        self.statics = tuple(statics)
        self.shapes = shapes  # the cache key without the static values
        # outputs that the trace computed as Python floats (eagerly, floats too)
        self.floats = tuple(i for i, v in enumerate(graph.outputs)
                            if type(v) is Var and v.scalar and v.dtype == np.float64)

    @property
    def signature(self) -> str:
        """``f(x: f64[3])``, and the static values: ``f(x: f64[3]) with n=2``."""
        sig = self.graph.signature()
        if self.statics:
            sig += " with " + ", ".join(f"{n}={_short_repr(v)}" for n, v, _ in self.statics)
        return sig

    @property
    def guards(self) -> list[str]:
        return [f"{g}  # {g.where()}" for g in self.graph.guards]

    def __repr__(self) -> str:
        n = len(self.graph)
        guards = f", {len(self.graph.guards)} guard{'s' * (len(self.graph.guards) != 1)}" \
            if self.graph.guards else ""
        return (f"<trace {self.signature}: {n} equation{'s' * (n != 1)}{guards}, "
                f"{self.calls} call{'s' * (self.calls != 1)}>")


class Compiled:
    """A compiled function (see :func:`compile`)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
                 optimize: bool | Sequence[Any] = True, cache_limit: int = CACHE_LIMIT
                 ) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums = static_argnums
        self.optimize = optimize
        if not isinstance(cache_limit, int) or isinstance(cache_limit, bool) \
                or cache_limit < 1:
            raise ValueError(f"compile: cache_limit={cache_limit!r} must be a positive int")
        self.cache_limit = cache_limit
        self._cache: dict[Any, list[TraceInfo]] = {}
        self._count = 0  # traces kept
        self._per_shapes: dict[Any, int] = {}  # traces kept per key without static values
        self._lock = threading.RLock()  # (f may call itself while traced)
        self._keyword_functions: dict[Any, Callable[..., Any]] = {}
        self._warned = False
        self._full_warned = False
        try:
            self._signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None

    # -- arguments ------------------------------------------------------------
    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                    ) -> tuple[tuple[Any, ...], tuple[str, ...]]:
        """The arguments as positions: those ``fun`` takes by position, then the values of
        its keyword-only arguments (and ``**kwargs``) passed, whose names are returned."""
        if not kwargs and not self._needs_defaults(len(args)):
            return args, ()
        if self._signature is None:  # (passed on by name)
            return args + tuple(kwargs.values()), tuple(kwargs)
        bound = self._signature.bind(*args, **kwargs)
        if self._needs_defaults(len(bound.args)):
            bound.apply_defaults()
        keywords = bound.kwargs
        return tuple(bound.args) + tuple(keywords.values()), tuple(keywords)

    def _function(self, keywords: tuple[str, ...], nargs: int = 0) -> Callable[..., Any]:
        """``fun``, or for keyword arguments ``keywords`` (``nargs`` arguments in all) a
        function taking them last by position (named after them, so a trace names its
        inputs ``z``, ``opts_lr``)."""
        if not keywords:
            return self.fun
        npos = nargs - len(keywords)
        fun = self._keyword_functions.get((npos, keywords))
        if fun is None:
            fun = self._keyword_functions[npos, keywords] = _by_position(self.fun, npos,
                                                                         keywords)
        return fun

    def _needs_defaults(self, nargs: int) -> bool:
        """Whether a static argument names a parameter left at its default."""
        nums = (self.static_argnums,) if isinstance(self.static_argnums, int) \
            else tuple(self.static_argnums)
        return self._signature is not None and any(k >= nargs for k in nums if k >= 0)

    def _key(self, args: tuple[Any, ...], static: tuple[int, ...],
             keywords: tuple[str, ...] = ()) -> tuple[Any, Any, list[Any]]:
        """The cache key, the key without static values, and the traced leaves."""
        statics = []
        for i in static:
            try:
                statics.append((i, static_key(args[i])))
            except TypeError:
                raise TypeError(
                    f"compile: static argument {i} of {function_name(self.fun)}() is a "
                    f"{type(args[i]).__name__}, which is not hashable; static arguments are "
                    "cache keys (use a tuple instead of a list)") from None
        leaves, tree = flatten(tuple(a for i, a in enumerate(args) if i not in static)
                               if static else args)
        per_leaf: list[Any] = []
        dynamic = []
        for k, x in enumerate(leaves):
            if is_static_leaf(x):
                try:
                    per_leaf.append((_STATIC, static_key(x)))
                except TypeError:
                    raise TypeError(self._unhashable(args, static, k, x, keywords)) from None
            else:
                per_leaf.append(_leaf_signature(x))
                dynamic.append(x)
        tree = _hashable(tree)
        if keywords:  # f(x, {"z": 1.0}) and f(x, z=1.0) are two calls
            tree = (tree, keywords)
        key = (tree, tuple(per_leaf), tuple(statics))
        if len(dynamic) == len(leaves) and not statics:
            return key, key, dynamic
        shapes = (tree, tuple(_STATIC if type(e) is tuple and e and e[0] is _STATIC else e
                              for e in per_leaf))
        return key, shapes, dynamic

    def _unhashable(self, args: tuple[Any, ...], static: tuple[int, ...], k: int, x: Any,
                    keywords: tuple[str, ...]) -> str:
        name = self._static_names(args, static, self._function(keywords, len(args)))[1][k]
        return (
            f"compile: argument {name} of {function_name(self.fun)}() is a "
            f"{type(x).__name__}, not an array or a number, so it is passed to "
            f"{function_name(self.fun)}() as it is and is part of the cache key (each new "
            "value traces again, as with static_argnums); but it is not hashable. Make it "
            "hashable (a tuple instead of a set or list, a frozen dataclass), or pass the "
            "arrays it holds as arguments."
        )

    def _static_names(self, args: tuple[Any, ...], static: tuple[int, ...],
                      fun: Callable[..., Any]) -> tuple[dict[int, str], list[str]]:
        """Names of the static positions, and of every leaf of the other arguments."""
        names = argument_names(fun, args)
        try:
            params = [p.name for p in inspect.signature(fun).parameters.values()]
        except (TypeError, ValueError):
            params = []
        by_position: dict[int, str] = {}
        leaf_names: list[str] = []
        for i, a in enumerate(args):
            n = len(flatten(a)[0])
            if i in static:
                by_position[i] = params[i] if i < len(params) else f"argument {i}"
            else:
                leaf_names += names[:n]
            names = names[n:]
        return by_position, leaf_names

    # -- tracing --------------------------------------------------------------
    def _trace(self, args: tuple[Any, ...], static: tuple[int, ...], shapes: Any = None,
               keywords: tuple[str, ...] = ()) -> tuple[TraceInfo, list[Any]]:
        """A new trace, and the values its run returned (the outputs eager mode gives)."""
        plain = tuple(a if i in static else unflatten(flatten(a)[1],
                                                       [_plain(x) for x in flatten(a)[0]])
                      for i, a in enumerate(args))
        # The equations' source lines are for reading; guards keep theirs regardless.
        builder = Builder(function_name(self.fun), lines=False)
        with collector_paused():  # tracing and compiling build no cycles worth collecting
            # The example values are not kept: a cached trace must not hold a batch alive.
            fun = self._function(keywords, len(args))
            traced = trace_into(builder, fun, plain, static,
                                is_static_leaf).replace(examples=None)
            graph = traced
            if self.optimize:
                graph = _optimized(traced, self.optimize)
            runner = compile_graph(graph)
        return (TraceInfo(graph, traced, runner, self._statics(args, static, fun), shapes),
                builder.results)

    def _statics(self, args: tuple[Any, ...], static: tuple[int, ...],
                 fun: Callable[..., Any]) -> list[tuple[str, Any, Any]]:
        """(name, value, key) of each static argument and static leaf, in argument
        order."""
        if not static and not any(is_static_leaf(x) for x in flatten(args)[0]):
            return []
        by_position, leaf_names = self._static_names(args, static, fun)
        out = []
        names = iter(leaf_names)
        for i, a in enumerate(args):
            if i in static:
                out.append((by_position[i], a, static_key(a)))
                continue
            for x in flatten(a)[0]:
                name = next(names)
                if is_static_leaf(x):
                    out.append((name, x, static_key(x)))
        return out

    def _keep(self, key: Any, info: TraceInfo) -> None:
        """Cache a new trace (under the lock) and warn when the function keeps retracing."""
        infos = self._cache.setdefault(key, [])
        infos.append(info)
        self._count += 1
        n = self._per_shapes[info.shapes] = self._per_shapes.get(info.shapes, 0) + 1
        if self._warned or n < RETRACE_WARNING:
            return
        self._warned = True
        same = [i for i in self.cache_info() if i.shapes == info.shapes]
        causes = []
        lines = sorted({g.where() for i in same for g in i.graph.guards})
        if lines:
            causes.append("its Python code turns traced values into Python values at "
                          f"{', '.join(lines)} and they change between calls")
        values: dict[str, list[tuple[Any, Any]]] = {}
        for i in same:
            for name, v, k in i.statics:
                seen = values.setdefault(name, [])
                if not any(k == w for _, w in seen):
                    seen.append((v, k))
        changing = []
        for name, vks in values.items():
            if len(vks) < 2:
                continue
            attributes = sorted({a for _, k in vks[1:] for a in
                                 changed_attributes(vks[0][1], k)})
            if attributes:
                changing.append(f"{name}'s attributes {', '.join(attributes)}")
            else:
                changing.append(f"{name} ({', '.join(_short_repr(v) for v, _ in vks[:4])}"
                                f"{', ...' if len(vks) > 4 else ''})")
        if changing:
            causes.append("its static arguments change between calls: "
                          + "; ".join(changing))
        warnings.warn(
            f"compile: {function_name(self.fun)}() was traced {n} times for the same "
            f"argument shapes, because {' and '.join(causes) or 'of its guards'}. Each new "
            "value traces again. Use np.where for data-dependent choices; pass an integer "
            "that is data as np.int64(n) or a 0-d array (traced, not static); or pass such "
            "values as static arguments (static_argnums) on purpose. After "
            f"{self.cache_limit} traces (cache_limit) new ones run eagerly.",
            RuntimeWarning, stacklevel=3)

    def _full(self) -> bool:
        """Whether the cache holds ``cache_limit`` traces (warns the first time)."""
        if self._count < self.cache_limit:
            return False
        if not self._full_warned:
            self._full_warned = True
            warnings.warn(
                f"compile: {function_name(self.fun)}() has {self._count} traces, its "
                f"cache_limit: calls with new argument shapes, static values or branches "
                "now run the Python function itself (eagerly, not compiled). See "
                "cache_info() for what changes between traces; raise the limit with "
                "wg.compile(f, cache_limit=...) or clear_cache().",
                RuntimeWarning, stacklevel=3)
        return True

    # -- calling --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args, keywords = self._positional(args, kwargs)
        static = self._static(args, keywords)
        key, shapes, leaves = self._key(args, static, keywords)
        infos = self._cache.get(key)
        tried = len(infos) if infos is not None else 0  # the list may grow meanwhile
        if any(is_traced(x) for x in leaves):
            return self._call_traced(args, static, key, shapes, leaves, infos, keywords)
        # A trace whose guard fails, or whose code raises (where the function may catch
        # the error: eagerly it decides), gives way to the next, and then to a new trace.
        if infos is not None:
            for info in infos[:tried]:
                try:
                    out = info.runner(*leaves)
                except Exception:  # noqa: BLE001 - GuardFailed, or an error: see above
                    continue
                info.calls += 1
                return _outputs(info, out)
        with self._lock:
            for info in self._cache.get(key, [])[tried:]:  # traced by another thread meanwhile
                try:
                    out = info.runner(*leaves)
                except Exception:  # noqa: BLE001 - as above
                    continue
                info.calls += 1
                return _outputs(info, out)
            if self._full():
                eager = True
            else:
                eager = False
                info, results = self._trace(args, static, shapes, keywords)
                self._keep(key, info)
        if eager:
            return self._function(keywords, len(args))(*args)
        # The trace ran the function: what it returned is this call's result (its warnings
        # were given once, as eagerly; the compiled code runs from the next call on).
        info.calls += 1
        return _traced_outputs(info, results, leaves)

    def _drop(self, key: Any, info: TraceInfo) -> None:
        """Forget a trace just kept."""
        with self._lock:
            infos = self._cache.get(key, [])
            if info in infos:
                infos.remove(info)
                self._count -= 1
                self._per_shapes[info.shapes] -= 1

    def _call_traced(self, args: tuple[Any, ...], static: tuple[int, ...], key: Any,
                     shapes: Any, leaves: list[Any], infos: list[TraceInfo] | None,
                     keywords: tuple[str, ...]) -> Any:
        """Tensors, dual numbers or tracers among the arguments: the graph runs op by op
        (differentiated or traced again)."""
        for info in infos or ():
            refuse_lost_derivatives(info.traced, leaves)
            try:
                outs = evaluate(info.traced, leaves)
            except Exception:  # noqa: BLE001 - GuardError, or an error (see __call__)
                continue
            info.calls += 1
            return unflatten(info.traced.out_tree, outs)
        with self._lock:
            if self._full():
                eager = True
            else:
                eager = False
                info = self._trace(args, static, shapes, keywords)[0]
                self._keep(key, info)
        if eager:
            return self._function(keywords, len(args))(*args)
        refuse_lost_derivatives(info.traced, leaves)
        # The trace warned as eagerly: this run of the same steps is quiet (but for the
        # function's own np.errstate blocks, whose settings its steps keep), unless it
        # records into another trace (which would keep the quiet state).
        quietly = contextlib.nullcontext() if any(_graph_traced(x) for x in leaves) \
            else np.errstate(all="ignore")
        try:
            with quietly:
                outs = evaluate(info.traced, leaves)
        except Exception:
            self._drop(key, info)
            raise
        info.calls += 1
        return unflatten(info.traced.out_tree, outs)

    # -- looking ----------------------------------------------------------------
    def cache_info(self) -> list[TraceInfo]:
        """The traces kept, oldest first (signature, guards, equations, calls)."""
        return [info for infos in self._cache.values() for info in infos]

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The optimised graph that runs for these arguments (tracing it if needed)."""
        args, keywords = self._positional(args, kwargs)
        static = self._static(args, keywords)
        key, shapes, leaves = self._key(args, static, keywords)
        for info in self._cache.get(key, ()):
            try:
                info.runner(*[_plain(x) for x in leaves])
            except GuardFailed:
                continue
            return info.graph
        with self._lock:
            info = self._trace(args, static, shapes, keywords)[0]
            self._keep(key, info)
        return info.graph

    def _static(self, args: tuple[Any, ...], keywords: tuple[str, ...]) -> tuple[int, ...]:
        """The static positions among ``args`` (static_argnums count positional ones)."""
        if self.static_argnums == ():
            return ()
        return static_positions(self.static_argnums, len(args) - len(keywords), "compile")

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """``@wg.compile`` on a method: the instance is the first argument (make it static
        with ``static_argnums=0``: it is not an array)."""
        return self if obj is None else functools.partial(self, obj)

    def clear_cache(self) -> None:
        """Forget every trace."""
        with self._lock:
            self._cache.clear()
            self._per_shapes.clear()
            self._count = 0
            self._warned = self._full_warned = False

    def __repr__(self) -> str:
        return f"<compiled {function_name(self.fun)}: {len(self.cache_info())} trace(s)>"

    def _repr_html_(self) -> str | None:
        return html_of(self)


def _by_position(fun: Callable[..., Any], npos: int, keywords: tuple[str, ...]
                 ) -> Callable[..., Any]:
    """``fun`` taking the values of keyword arguments ``keywords`` after its ``npos``
    positional arguments (its signature names them all, for the names of a trace's
    inputs: ``x``, ``args0``, ``z``)."""
    n = len(keywords)

    def call(*args: Any) -> Any:
        return fun(*args[:-n], **dict(zip(keywords, args[-n:])))

    call.__name__ = call.__qualname__ = getattr(fun, "__name__", "f")
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in inspect.signature(fun).parameters.values()
                     if p.kind == p.VAR_POSITIONAL), "x")
    except (TypeError, ValueError):
        params, star = [], "x"
    names = [params[i] if i < len(params) else f"{star}{i - len(params)}"
             for i in range(npos)] + list(keywords)
    with contextlib.suppress(ValueError):  # (a name twice, or not an identifier)
        call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(k, inspect.Parameter.POSITIONAL_ONLY) for k in names])
    return call


def _graph_traced(x: Any) -> bool:
    """Whether a graph tracer lies beneath ``x`` (a tensor or dual number of one)."""
    while is_traced(x):
        if type(x) is Traced:
            return True
        x = kind_of(x).primal(x)
    return False


def _short_repr(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _outputs(info: TraceInfo, out: Any) -> Any:
    graph = info.graph
    outs = [out] if len(graph.outputs) == 1 else list(out)
    for i in info.floats:
        if type(outs[i]) is not float:
            outs[i] = float(outs[i])
    return unflatten(graph.out_tree, outs)


def _traced_outputs(info: TraceInfo, results: list[Any], leaves: list[Any]) -> Any:
    """What the run while tracing returned, as the compiled code returns it: arrays the
    caller owns (an argument, a constant or a value returned twice is copied), 0-d values
    of the types the function returned."""
    graph = info.traced
    seen: set[int] = set()
    inputs = {id(x) for x in leaves}
    outs = []
    for v, value in zip(graph.outputs, results):
        if type(value) is np.ndarray and value.ndim > 0 and (
                type(v) is not Var or id(value) in inputs or id(value) in seen):
            value = value.copy()
        elif type(v) is not Var and type(value) is np.ndarray:
            value = value[()]
        seen.add(id(value))
        outs.append(value)
    if graph.out_types is not None:
        outs = [as_returned(o, t) if t is not None and np.ndim(o) == 0 else o
                for o, t in zip(outs, graph.out_types)]
    return unflatten(graph.out_tree, outs)


def _optimized(graph: Graph, how: bool | Sequence[Any]) -> Graph:
    if how is True:
        return graph.optimize(passes=COMPILE_PASSES)
    return graph.optimize(passes=[how] if isinstance(how, str) else list(how))


def compile(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
            optimize: bool | Sequence[Any] = True, cache_limit: int = CACHE_LIMIT) -> Any:
    """Compile ``fun``: trace it per input signature, optimise the graph, run generated code.

    Parameters
    ----------
    fun : callable
        NumPy code (and wengert transforms: ``wg.compile(wg.grad(loss))``).
    static_argnums : int or sequence of int
        Arguments passed to ``fun`` as they are, as part of the cache key (any hashable
        value, a float too). Leaves that are not arrays or numbers (Python ints and
        bools, strings, None, enums, functions) are static without it; arrays, NumPy
        scalars, Python floats and complex numbers are traced.
    optimize : bool or sequence of passes
        ``True``: the rewrites of ``graph.optimize()``, then ``fuse`` and ``plan_memory``
        (:data:`~wengert.graph.passes.pipeline.COMPILE_PASSES`); ``False``: run the graph
        as traced; or the passes to run, in order (names or functions).
    cache_limit : int
        Traces kept at most; past it, calls that would trace again run ``fun`` eagerly
        (with one warning).

    Returns
    -------
    Compiled
        Callable like ``fun``; ``.cache_info()`` lists the traces (``len`` of it is the
        cache size), ``.graph_for(*args)`` gives the graph that runs.

    Examples
    --------
    >>> import wengert as wg
    >>> df = wg.compile(wg.grad(lambda x: x ** 3))
    >>> df(2.0)
    12.0
    >>> head = wg.compile(lambda x, n: x[:n].sum())   # n: a Python int, static
    >>> head(np.arange(5.0), 2), head(np.arange(5.0), 3)
    (np.float64(1.0), np.float64(3.0))
    >>> [info.signature for info in head.cache_info()]
    ['f(x: f64[5]) with n=2', 'f(x: f64[5]) with n=3']
    """
    if fun is None:
        return lambda f: Compiled(f, static_argnums, optimize, cache_limit)
    return Compiled(fun, static_argnums, optimize, cache_limit)
