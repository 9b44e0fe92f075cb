"""Tracing: run a function once on tracers and keep the equations it applied, as a Graph.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def f(x, params):
...     return np.tanh(x @ params["w"] + params["b"])
>>> g = wg.trace(f, np.ones((2, 3)), {"w": np.ones((3, 4)), "b": np.zeros(4)})
>>> g.signature()
'f(x: f64[2,3], params_w: f64[3,4], params_b: f64[4])'
>>> [eq.op.name for eq in g]
['matmul', 'add', 'tanh']
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import is_traced, kind_of
from wengert.core.collector import collector_paused
from wengert.core.levels import OPEN_TRACE_LEVELS, TRACE_LEVEL
from wengert.core.modes import GRAD_ENABLED
from wengert.core.subclasses import refuse_subclass
from wengert.core.tree import flatten, unflatten
from wengert.graph.ir import Literal, Var
from wengert.graph.program import Graph
from wengert.graph.tracer import Builder, Traced, TraceError, escaped, snapshot

__all__ = ["trace", "trace_into", "function_name", "argument_names", "static_positions"]

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


def function_name(f: Any) -> str:
    """A function's name as a Python identifier (``f`` for a lambda)."""
    name = getattr(f, "__name__", None) or "f"
    name = _NOT_IDENT.sub("_", name)
    if not name or name[0].isdigit() or keyword.iskeyword(name) or name == "_lambda_":
        return "f"
    return name


def _identifier(text: str, taken: set[str]) -> str:
    name = _NOT_IDENT.sub("_", text) or "x"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "x_" + name
    base, k = name, 1
    while name in taken or re.fullmatch(r"t\d+", name):
        name = f"{base}_{k}"
        k += 1
    taken.add(name)
    return name


def _paths(arg: Any, base: str) -> list[str]:
    """A name per leaf of ``arg``, in :func:`flatten`'s order: ``params_w``, ``xs_0``."""
    out: list[str] = []
    stack: list[tuple[Any, str]] = [(arg, base)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key in reversed(list(node)):
                stack.append((node[key], f"{path}_{key}"))
        elif isinstance(node, (list, tuple)):
            fields = getattr(node, "_fields", None)
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], f"{path}_{fields[i] if fields else i}"))
        elif node is not None:
            out.append(path)
    return out


def argument_names(f: Any, args: Sequence[Any]) -> list[str]:
    """Names for the leaves of ``args``: the parameters' names, with paths into pytrees."""
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params]
        star = next((p.name for p in inspect.signature(f).parameters.values()
                     if p.kind == p.VAR_POSITIONAL), None)
    except (TypeError, ValueError):
        names, star = [], None
    taken: set[str] = set()
    out = []
    for i, arg in enumerate(args):
        base = names[i] if i < len(names) else f"{star or 'x'}{i - len(names)}" if star \
            else f"x{i}"
        paths = _paths(arg, base)
        out += [_identifier(p, taken) for p in paths]
    return out


def static_positions(argnums: int | Sequence[int], nargs: int, where: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    for k in nums:
        if not isinstance(k, int) or isinstance(k, bool) or not -nargs <= k < nargs:
            raise ValueError(f"{where}: static_argnums={argnums!r} names no argument of the "
                             f"{nargs} given")
        out.append(k % nargs)
    return tuple(sorted(set(out)))


def _example(x: Any, name: str) -> Any:
    """The value a tracer of input ``name`` starts from (plain NumPy or a Python number)."""
    while is_traced(x):
        if type(x) is Traced:
            if x.builder.closed:
                raise escaped(x)
            raise TraceError(f"trace: argument {name} is a value being traced by another "
                             "trace; graphs do not nest this way")
        x = kind_of(x).primal(x)
    refuse_subclass(x, f"trace: argument {name}")
    if type(x) in (float, int, bool, complex) or isinstance(x, (np.ndarray, np.generic)):
        return x
    try:
        a = np.asarray(x)
    except Exception as e:  # noqa: BLE001 - any failure: say which argument
        raise TypeError(f"trace: argument {name} is not an array or a number "
                        f"({type(x).__name__})") from e
    if a.dtype == object:
        raise TypeError(
            f"trace: argument {name} is a {type(x).__name__}, not an array or a number, so "
            "it cannot be an input of the graph. Pass it as a static argument "
            "(static_argnums=...): the graph is traced again for each value."
        )
    return a


def trace_into(builder: Builder, f: Callable[..., Any], args: Sequence[Any],
               static: tuple[int, ...] = (),
               static_leaf: Callable[[Any], bool] | None = None) -> Graph:
    """Trace ``f(*args)`` with ``builder`` (the positions in ``static``, and the leaves of
    the other arguments for which ``static_leaf`` is true, are passed as they are and are
    not inputs of the graph: the graph's input tree has ``None`` in their place)."""
    dynamic = [a for i, a in enumerate(args) if i not in static]
    leaves, in_tree = flatten(tuple(dynamic))
    names = argument_names(f, args)
    names_dyn: list[str] = []
    for i, a in enumerate(args):
        n_leaves = len(flatten(a)[0])
        if i not in static:
            names_dyn += names[:n_leaves]
        names = names[n_leaves:]
    fixed = [static_leaf is not None and static_leaf(x) for x in leaves]
    tracers = [builder.input(_example(x, n), n)
               for x, n, s in zip(leaves, names_dyn, fixed) if not s]
    if any(fixed):
        it = iter(tracers)
        rebuilt = list(unflatten(in_tree, [x if s else next(it) for x, s in zip(leaves, fixed)]))
        in_tree = flatten(unflatten(in_tree, [None if s else 0 for s in fixed]))[1]
    else:
        rebuilt = list(unflatten(in_tree, tracers))
    call_args = []
    for i, a in enumerate(args):
        call_args.append(a if i in static else rebuilt.pop(0))
    # The graph is the function's own: a no_grad around the call that traces it is not
    # part of it (only a no_grad inside the function marks its equations).
    token = GRAD_ENABLED.set(True)
    builder.start()  # (the caller's np.errstate and warning filters)
    level = builder.level + 0.25  # tensors made inside are inner to the trace
    OPEN_TRACE_LEVELS.add(level)
    inside = TRACE_LEVEL.set(level)
    random_state = _random_state()
    try:
        result = f(*call_args)
    finally:
        TRACE_LEVEL.reset(inside)
        OPEN_TRACE_LEVELS.discard(level)
        GRAD_ENABLED.reset(token)
        builder.closed = True
    if _random_state() != random_state:
        raise TraceError(
            f"trace: {builder.name}() draws random numbers from np.random (or seeds it): a "
            "graph would hold this draw as a constant and give the same numbers at every "
            "run, where each eager call draws new ones. Draw them outside and pass them in "
            "as an argument (noise = np.random.normal(size=n); f(x, noise)). (NumPy's "
            "global random state is shared by threads: if another thread drew from it "
            "during this trace, trace again.)")
    out_leaves, out_tree = flatten(result)
    outputs: list[Var | Literal] = []
    out_types: list[type | None] = []  # the returned values' types (float, np.float64 ...)
    builder.results = []  # what the run while tracing returned (a compiled first call's)
    for o in out_leaves:
        if is_traced(o) and type(o) is not Traced and not kind_of(o).connected(o):
            while is_traced(o) and type(o) is not Traced:  # a tensor without grad over a
                o = kind_of(o).primal(o)                   # traced value: that value
        if type(o) is Traced:
            if o.builder is not builder:
                raise TraceError(f"trace: {builder.name}() returned a value traced by another "
                                 "trace")
            outputs.append(o._var)
            out_types.append(type(o.value))
            builder.results.append(o.value)
            continue
        if is_traced(o):
            kind = kind_of(o)
            if kind.connected(o):
                if kind.level(o) > builder.level:
                    raise TraceError(
                        f"trace: {builder.name}() returned a {kind.name} that carries a "
                        f"derivative, made inside it (requires_grad=True, a Variable on a "
                        "tape): a graph returns arrays, so the record of how to "
                        "differentiate it would be lost. Return its value (y.detach()), or "
                        "the gradients (call y.backward() or tape.gradient inside and "
                        "return x.grad), or differentiate the compiled function from outside "
                        "(wg.grad(wg.compile(f)))."
                    )
                raise TraceError(
                    f"trace: {builder.name}() returned a {kind.name} from outside its arguments "
                    "(a closure or a global): its derivative would be lost. Pass it as an "
                    "argument."
                )
            while is_traced(o):
                o = kind_of(o).primal(o)
        _refuse_shared_output(o, builder.name)
        outputs.append(snapshot(o))
        out_types.append(type(o))
        builder.results.append(outputs[-1].value)
    return Graph([t._var for t in tracers], builder.equations, outputs, in_tree, out_tree,
                 builder.guards, builder.name, examples=[t.value for t in tracers],
                 out_types=out_types)


def _random_state() -> tuple[Any, ...]:
    """NumPy's global random state (``np.random.seed``, ``np.random.normal`` ...), as a
    value to compare."""
    state = np.random.get_state(legacy=False)
    inner = state["state"]
    return (state["bit_generator"], inner["key"].tobytes(), inner["pos"], state["has_gauss"],
            state["gauss"])


def _refuse_shared_output(o: Any, name: str) -> None:
    """A returned value that is not computed from the arguments is a constant of the
    graph, the same object on every run: refuse one that can change (or be used up), as
    eagerly each call returns a new one (arrays are copied; numbers, strings, ``None``,
    dtypes, slices and other hashable values are fine)."""
    if isinstance(o, (np.ndarray, np.generic)):
        return
    if isinstance(o, Iterator):
        what = "an iterator (a generator)"
    else:
        try:
            hash(o)
            return
        except TypeError:
            what = f"a {type(o).__name__}, which can change"
    raise TraceError(
        f"trace: {name}() returned {what}: a graph would return that same object on "
        "every run (eagerly each call makes a new one), and it may hold traced values. "
        "Return arrays, numbers and tuples, lists or dicts of them (a list instead of a "
        "generator)."
    )


def trace(f: Callable[..., Any], *example_args: Any, static_argnums: int | Sequence[int] = (),
          source_lines: bool = True) -> Graph:
    """Run ``f`` once on tracers made from ``example_args`` and return its graph.

    Parameters
    ----------
    f : callable
        Plain NumPy code (``np.*``, operators, wengert functions and transforms).
    *example_args
        Arrays, numbers or pytrees of them: the graph runs on arguments of the same
        structure, shapes and dtypes.
    static_argnums : int or sequence of int
        Arguments passed to ``f`` as they are (Python values such as a layer count),
        not inputs of the graph.
    source_lines : bool
        Keep each equation's line of user code (listings, generated code comments).

    Returns
    -------
    Graph
        ``len(graph)`` equations; ``graph(*args)`` runs it. Python control flow on
        traced values is recorded as guards (``graph.guards``): running the graph where
        a guard does not hold raises :class:`~wengert.graph.program.GuardError`.

    Examples
    --------
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: x * x + 1.0, 3.0)
    >>> print(g)
    graph f(x: f64[]):
        t0: f64[] = multiply(x, x)
        t1: f64[] = add(t0, 1.0)
        return t1
    >>> g(2.0)
    5.0
    """
    static = static_positions(static_argnums, len(example_args), "trace") \
        if static_argnums != () else ()
    builder = Builder(function_name(f), lines=source_lines)
    with collector_paused():  # a trace allocates many objects and no cycles worth collecting
        return trace_into(builder, f, example_args, static)
