"""``wg.compile(f)``: trace once per input signature, optimise, and replay generated code.

As ``jax.jit`` or ``tf.function``: the first call with arguments of a new
*signature* (the pytree structure, each leaf's shape and dtype, Python
floats apart from arrays, and the values of static arguments) traces ``f``
into a graph, optimises it and compiles it to Python source
(:mod:`wengert.graph.codegen`); later calls with that signature run the
compiled code.

Python control flow on traced values is never replayed blindly: each
conversion the trace made (``if x > 0``, ``float(y)``) is a guard checked by
the compiled code, and a call whose guard fails traces again and keeps both
traces (one per branch). A function that keeps retracing (its Python code
branches on values that change every call) triggers a warning naming the
line.

Arguments that are tensors, dual numbers or tracers run the cached graph op
by op, so ``grad(compile(f))``, ``jvp(compile(f))`` and ``compile`` inside
another trace work; ``compile(grad(f))`` traces the gradient itself.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> @wg.compile
... def f(x):
...     return np.sum(np.tanh(x) ** 2)
>>> float(f(np.zeros(3))), float(f(np.ones(3))) > 0
(0.0, True)
>>> f.cache_info()
[<trace f(x: f64[3]): 3 equations, 2 calls>]
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.bind import is_traced, kind_of
from ..core.collector import collector_paused
from ..core.display import html_of
from ..core.tree import flatten, unflatten
from .codegen import compile_graph
from .ir import GuardFailed
from .passes.pipeline import COMPILE_PASSES
from .program import Graph, GuardError, evaluate, guard_message, refuse_lost_derivatives
from .trace import function_name, static_positions, trace_into
from .tracer import Builder, Traced

__all__ = ["compile", "Compiled", "TraceInfo", "RETRACE_WARNING"]

#: Traces of one signature after which a warning says the function keeps retracing.
RETRACE_WARNING = 8


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

    __slots__ = ("graph", "traced", "calls", "runner")

    def __init__(self, graph: Graph, traced: Graph, runner: Callable[..., Any]) -> None:
        self.graph = graph  # the optimised graph that runs
        self.traced = traced  # the graph as traced
        self.runner = runner
        self.calls = 0

    @property
    def signature(self) -> str:
        return self.graph.signature()

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
                 optimize: bool | Sequence[Any] = True) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums = static_argnums
        self.optimize = optimize
        self._cache: dict[Any, list[TraceInfo]] = {}
        self._lock = threading.Lock()
        self._warned = False
        try:
            self._signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None

    # -- arguments ------------------------------------------------------------
    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if not kwargs and not self._needs_defaults(len(args)):
            return args
        if self._signature is None:
            raise TypeError(f"compile: {function_name(self.fun)}() takes positional arguments "
                            "only (its signature is unknown)")
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(f"compile: keyword-only arguments {sorted(bound.kwargs)} of "
                            f"{function_name(self.fun)}() are not supported; make them "
                            "positional")
        return tuple(bound.args)

    def _needs_defaults(self, nargs: int) -> bool:
        """Whether a static argument names a parameter left at its default."""
        nums = (self.static_argnums,) if isinstance(self.static_argnums, int) \
            else tuple(self.static_argnums)
        return self._signature is not None and any(k >= nargs for k in nums if k >= 0)

    def _key(self, args: tuple[Any, ...], static: tuple[int, ...]) -> tuple[Any, list[Any]]:
        statics = []
        for i in static:
            try:
                hash(args[i])
            except TypeError:
                raise TypeError(
                    f"compile: static argument {i} of {function_name(self.fun)}() is a "
                    f"{type(args[i]).__name__}, which is not hashable; static arguments are "
                    "cache keys (use a tuple instead of a list)") from None
            statics.append((i, args[i]))
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, tree = flatten(dynamic)
        key = (_hashable(tree), tuple(_leaf_signature(x) for x in leaves), tuple(statics))
        return key, leaves

    # -- tracing --------------------------------------------------------------
    def _trace(self, args: tuple[Any, ...], static: tuple[int, ...]) -> TraceInfo:
        plain = tuple(a if i in static else unflatten(flatten(a)[1],
                                                       [_plain(x) for x in flatten(a)[0]])
                      for i, a in enumerate(args))
        # The equations' source lines are for reading; guards keep theirs regardless.
        builder = Builder(function_name(self.fun), lines=False)
        with collector_paused():  # tracing and compiling build no cycles worth collecting
            # The example values are not kept: a cached trace must not hold a batch alive.
            traced = trace_into(builder, self.fun, plain, static).replace(examples=None)
            graph = traced
            if self.optimize:
                graph = _optimized(traced, self.optimize)
            runner = compile_graph(graph)
        return TraceInfo(graph, traced, runner)

    def _retrace_warning(self, infos: list[TraceInfo]) -> None:
        if self._warned or len(infos) < RETRACE_WARNING:
            return
        self._warned = True
        lines = sorted({g.where() for info in infos for g in info.graph.guards})
        warnings.warn(
            f"compile: {function_name(self.fun)}() was traced {len(infos)} times for the same "
            f"argument shapes, because its Python code turns traced values into Python "
            f"values at {', '.join(lines) or 'some line'} and they change between calls. Each "
            "new value traces again. Use np.where for data-dependent choices, or pass such "
            "values as static arguments (static_argnums).",
            RuntimeWarning, stacklevel=3)

    # -- calling --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._positional(args, kwargs)
        static = static_positions(self.static_argnums, len(args), "compile") \
            if self.static_argnums != () else ()
        key, leaves = self._key(args, static)
        infos = self._cache.get(key)
        tried = len(infos) if infos is not None else 0  # the list may grow meanwhile
        if any(is_traced(x) for x in leaves):
            return self._call_traced(args, static, key, leaves, infos)
        if infos is not None:
            for info in infos[:tried]:
                try:
                    out = info.runner(*leaves)
                except GuardFailed:
                    continue
                info.calls += 1
                return _outputs(info.graph, out)
        with self._lock:
            for info in self._cache.get(key, [])[tried:]:  # traced by another thread meanwhile
                try:
                    out = info.runner(*leaves)
                except GuardFailed:
                    continue
                info.calls += 1
                return _outputs(info.graph, out)
            info = self._trace(args, static)
            infos = self._cache.setdefault(key, [])
            infos.append(info)
            self._retrace_warning(infos)
        try:
            out = info.runner(*leaves)
        except GuardFailed as e:  # the trace itself did not pass its guards: a bug
            raise GuardError(guard_message(info.graph, e.guard, e.got)) from None
        info.calls += 1
        return _outputs(info.graph, out)

    def _call_traced(self, args: tuple[Any, ...], static: tuple[int, ...], key: Any,
                     leaves: list[Any], infos: list[TraceInfo] | None) -> Any:
        """Tensors, dual numbers or tracers among the arguments: the graph runs op by op
        (differentiated or traced again)."""
        for info in infos or ():
            refuse_lost_derivatives(info.traced, leaves)
            try:
                outs = evaluate(info.traced, leaves)
            except GuardError:
                continue
            info.calls += 1
            return unflatten(info.traced.out_tree, outs)
        with self._lock:
            info = self._trace(args, static)
            infos = self._cache.setdefault(key, [])
            infos.append(info)
            self._retrace_warning(infos)
        refuse_lost_derivatives(info.traced, leaves)
        outs = evaluate(info.traced, leaves)
        info.calls += 1
        return unflatten(info.traced.out_tree, outs)

    # -- looking ----------------------------------------------------------------
    def cache_info(self) -> list[TraceInfo]:
        """The traces kept, oldest first (signature, guards, equations, calls)."""
        return [info for infos in self._cache.values() for info in infos]

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The optimised graph that runs for these arguments (tracing it if needed)."""
        args = self._positional(args, kwargs)
        static = static_positions(self.static_argnums, len(args), "compile") \
            if self.static_argnums != () else ()
        key, leaves = self._key(args, static)
        for info in self._cache.get(key, ()):
            try:
                info.runner(*[_plain(x) for x in leaves])
            except GuardFailed:
                continue
            return info.graph
        with self._lock:
            info = self._trace(args, static)
            self._cache.setdefault(key, []).append(info)
        return info.graph

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """``@wg.compile`` on a method: the instance is the first argument (make it static
        with ``static_argnums=0``: it is not an array)."""
        return self if obj is None else functools.partial(self, obj)

    def clear_cache(self) -> None:
        """Forget every trace."""
        with self._lock:
            self._cache.clear()

    def __repr__(self) -> str:
        return f"<compiled {function_name(self.fun)}: {len(self.cache_info())} trace(s)>"

    def _repr_html_(self) -> str | None:
        return html_of(self)


def _outputs(graph: Graph, out: Any) -> Any:
    outs = [out] if len(graph.outputs) == 1 else list(out)
    return unflatten(graph.out_tree, outs)


def _optimized(graph: Graph, how: bool | Sequence[Any]) -> Graph:
    if how is True:
        return graph.optimize(passes=COMPILE_PASSES)
    return graph.optimize(passes=[how] if isinstance(how, str) else list(how))


def compile(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
            optimize: bool | Sequence[Any] = True) -> Any:
    """Compile ``fun``: trace it per input signature, optimise the graph, run generated code.

    Parameters
    ----------
    fun : callable
        NumPy code (and wengert transforms: ``wg.compile(wg.grad(loss))``).
    static_argnums : int or sequence of int
        Arguments that are Python values (layer counts, flags): part of the cache key,
        passed to ``fun`` as they are.
    optimize : bool or sequence of passes
        ``True``: the rewrites of ``graph.optimize()``, then ``fuse`` and ``plan_memory``
        (:data:`~wengert.graph.passes.pipeline.COMPILE_PASSES`); ``False``: run the graph
        as traced; or the passes to run, in order (names or functions).

    Returns
    -------
    Compiled
        Callable like ``fun``; ``.cache_info()`` lists the traces, ``.graph_for(*args)``
        gives the graph that runs.

    Examples
    --------
    >>> import wengert as wg
    >>> df = wg.compile(wg.grad(lambda x: x ** 3))
    >>> df(2.0)
    12.0
    """
    if fun is None:
        return lambda f: Compiled(f, static_argnums, optimize)
    return Compiled(fun, static_argnums, optimize)
