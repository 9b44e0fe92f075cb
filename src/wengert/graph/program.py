"""The :class:`Graph`: a traced program that lists, runs, compiles and differentiates.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def f(x, w):
...     return np.sum(np.sin(x) * w)
>>> g = wg.trace(f, np.ones(3), 2.0)
>>> g.signature(), len(g)
('f(x: f64[3], w: f64[])', 3)
>>> bool(g(np.zeros(3), 1.0) == f(np.zeros(3), 1.0))
True
>>> [eq.op.name for eq in g.equations]
['sin', 'multiply', 'sum']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import is_traced, kind_of, primal
from wengert.core.display import html_of
from wengert.core.errors import GuardError
from wengert.core.tree import flatten, unflatten
from wengert.graph.backends.codegen import compile_graph, namespace, to_source
from wengert.graph.backends.export import to_jax_source
from wengert.graph.ir import Equation, Guard, GuardFailed, Literal, Var, aval_text, literal_text
from wengert.graph.passes.memory import memory_timeline, peak_bytes
from wengert.graph.passes.pipeline import optimize
from wengert.graph.tracer import Traced, raised_error, run_equation
from wengert.ops.elementwise import copy

__all__ = ["Graph", "GuardError", "evaluate", "check_arguments"]


def _plain(x: Any) -> Any:
    while is_traced(x):
        x = kind_of(x).primal(x)
    return x


class _Name(str):
    """A name that prints without quotes (in the expected structure of arguments)."""

    def __repr__(self) -> str:
        return str(self)


def guard_message(graph: Any, guard: Guard, got: Any) -> str:
    raised = next((raised_error(eq) for eq in graph.equations if guard.var in eq.outs), None) \
        if guard.how == "bool" else None
    if raised is not None:
        return (
            f"graph {graph.name} was traced where {raised} at {guard.where()} (and the "
            "function went on: its code caught the error); for these arguments it does "
            "not, so the function would take another path. Use wg.compile(f), which traces "
            "again for each path."
        )
    return (
        f"graph {graph.name} was traced where {guard.how}({guard.var.name}) at "
        f"{guard.where()} gave {guard.expected!r}; for these arguments it gives {got!r}, so "
        "this graph would compute the wrong branch or use a stale number. Use wg.compile(f), "
        "which traces again for each branch, or write the choice with np.where."
    )


def _aval_of(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    x = _plain(x)
    if type(x) is float:
        return (), np.dtype(np.float64)
    a = np.asarray(x)
    return a.shape, a.dtype


def check_arguments(graph: Any, args: tuple[Any, ...]) -> list[Any]:
    """The flat leaves of ``args``, checked against the graph's inputs (structure, shapes,
    dtypes); a mismatch raises a ``TypeError`` or ``ValueError`` naming the input."""
    leaves, tree = flatten(tuple(args))
    if tree != graph.in_tree:
        grouped = unflatten(graph.in_tree, [_Name(v.name) for v in graph.inputs])
        raise TypeError(
            f"graph {graph.name} takes {graph.signature()} grouped as its arguments were "
            f"when it was traced: {graph.name}{grouped!r}; got {len(args)} argument(s) with "
            f"{len(leaves)} value(s) in another structure."
        )
    for v, x in zip(graph.inputs, leaves):
        shape, dtype = _aval_of(x)
        if shape != v.shape or dtype != v.dtype:
            raise ValueError(
                f"graph {graph.name}: input {v.name} was traced as {v.aval}, got "
                f"{aval_text(shape, dtype)}. A graph runs on the shapes and dtypes it was "
                "traced with: trace again (wg.trace), or use wg.compile(f), which traces once "
                "per signature."
            )
    return leaves


def refuse_lost_derivatives(graph: Any, leaves: Sequence[Any]) -> None:
    """Running ``graph`` on values that carry a derivative (tensors that require grad, dual
    numbers) where its trace turned a traced value into a Python number (``float(x)``):
    the number is a constant of the graph, so the derivative through it would be lost;
    eager mode refuses the same conversion. Raise as it does."""
    lossy = [g for g in graph.guards if g.how in ("float", "int", "complex")
             and np.dtype(g.var.dtype).kind not in "biu"]  # (integers carry no derivative)
    if not lossy:
        return
    for x in leaves:
        kind = kind_of(x)
        if kind is not None and not kind.opaque and kind.connected(x):
            g = lossy[0]
            raise TypeError(
                f"graph {graph.name} was traced where {g.how}() at {g.where()} turned a "
                "traced value into a Python number; differentiating it would lose the "
                "derivative through that number (eager mode refuses the same call). Compute "
                "with the array itself (np.sin instead of math.sin, no float())."
            )


def evaluate(graph: Any, leaves: Sequence[Any]) -> list[Any]:
    """Run the graph equation by equation with :func:`wengert.core.bind.apply`, so inputs
    may be tensors, dual numbers or tracers (then the run is differentiated or traced
    again); returns the flat outputs. Guards are checked on the way."""
    env: dict[int, Any] = {id(v): x for v, x in zip(graph.inputs, leaves)}
    guards: dict[int, list[Guard]] = {}
    for g in graph.guards:
        guards.setdefault(id(g.var), []).append(g)

    def check(var: Var, value: Any) -> None:
        for g in guards.get(id(var), ()):
            # Beneath tensors and duals; a tracer of an outer trace converts itself, so
            # the outer graph records the same guard.
            plain = primal(value)
            if g.how == "shape":  # (an outer trace knows the shape: its own guard checks)
                got = tuple(np.shape(plain.value if type(plain) is Traced else plain))
                if got != g.expected:
                    raise GuardError(guard_message(graph, g, got))
            elif type(plain) is Traced:  # recorded again, at the line that made the guard
                got = plain.builder.guard(plain, g.how, g.source)
                if not g.holds(got):
                    raise GuardError(guard_message(graph, g, got))
            elif not g.holds(plain):
                raise GuardError(guard_message(graph, g, g.convert(plain)))

    for v in graph.inputs:
        check(v, env[id(v)])
    for eq in graph.equations:
        values = [env[id(v)] if type(v) is Var else v.value for v in eq.ins]
        out = run_equation(eq, values)
        if len(eq.outs) == 1:
            env[id(eq.out)] = out
            if guards:
                check(eq.out, out)
            continue
        for v, o in zip(eq.outs, out):
            env[id(v)] = o
            if guards:
                check(v, o)
    # As the generated code: a caller never gets an array it does not own (an input, a
    # constant, a value returned twice), so nested compiled functions do not alias.
    inputs = {id(v) for v in graph.inputs}
    seen: set[int] = set()
    outs = []
    for v in graph.outputs:
        if type(v) is Var:
            value = env[id(v)]
            shared = id(v) in inputs or id(v) in seen
            seen.add(id(v))
            if shared and v.shape != ():
                value = copy(value)
        else:
            value = v.value
            if isinstance(value, np.ndarray) and value.ndim > 0:
                value = value.copy()
        outs.append(value)
    return outs


class Graph:
    """A traced program: inputs, equations in execution order, outputs, guards.

    ``len(graph)`` is the number of equations; ``str(graph)`` a listing;
    ``graph(*args)`` runs it on new arguments of the traced shapes and dtypes
    (compiled to Python source, see :meth:`to_source`).

    Parameters
    ----------
    inputs : sequence of Var
        The flat inputs (the leaves of ``in_tree``).
    equations : sequence of Equation
    outputs : sequence of Var or Literal
        The flat outputs (the leaves of ``out_tree``).
    in_tree, out_tree
        Pytree specs (:func:`wengert.core.tree.flatten`) of the arguments (a tuple,
        one entry per positional argument) and of the result.
    guards : sequence of Guard
    name : str
        The function's name (``f`` for a lambda).
    plan : MemoryPlan, optional
        Where each equation may write its result and which buffers die after it
        (:func:`wengert.graph.passes.memory.plan_memory`); the generated code follows it.
    examples : tuple, optional
        The input values it was traced with (to trace it again: :func:`grad_graph`).
    out_types : tuple, optional
        For each output, the type of the value the traced function returned (``float``,
        ``np.float64``, ``np.ndarray`` ...): a 0-d output is returned as that type, so a
        compiled function gives a Python float, a NumPy scalar or a 0-d array where the
        function did (``None``: as computed).
    """

    __slots__ = ("inputs", "equations", "outputs", "in_tree", "out_tree", "guards", "name",
                 "plan", "examples", "out_types", "_runner", "__weakref__")

    def __init__(self, inputs: Sequence[Var], equations: Sequence[Equation],
                 outputs: Sequence[Var | Literal], in_tree: Any, out_tree: Any,
                 guards: Sequence[Guard] = (), name: str = "f", plan: Any = None,
                 examples: Sequence[Any] | None = None,
                 out_types: Sequence[type | None] | None = None) -> None:
        self.inputs = tuple(inputs)
        self.equations = tuple(equations)
        self.outputs = tuple(outputs)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.guards = tuple(guards)
        self.name = name
        self.plan = plan
        self.examples = tuple(examples) if examples is not None else None
        self.out_types = tuple(out_types) if out_types is not None else None
        if self.out_types is not None and len(self.out_types) != len(self.outputs):
            raise ValueError("Graph: one entry of out_types per output")
        self._runner: Any = None

    def replace(self, **changes: Any) -> Graph:
        """A new graph with some fields changed (what passes return). A pass that changes
        the equations drops the memory plan unless it gives a new one."""
        fields = {k: getattr(self, k) for k in ("inputs", "equations", "outputs", "in_tree",
                                                "out_tree", "guards", "name", "plan",
                                                "examples", "out_types")}
        if "equations" in changes and "plan" not in changes:
            fields["plan"] = None
        if "outputs" in changes and "out_types" not in changes and self.out_types is not None \
                and len(changes["outputs"]) != len(self.out_types):
            fields["out_types"] = None  # (other outputs: their types are not known)
        fields.update(changes)
        return Graph(**fields)

    # -- reading --------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.equations)

    def __iter__(self) -> Iterator[Equation]:
        return iter(self.equations)

    def variables(self) -> list[Var]:
        """Inputs, then every equation's output."""
        return list(self.inputs) + [v for eq in self.equations for v in eq.outs]

    def signature(self) -> str:
        """``f(x: f64[3], w: f64[])``."""
        return f"{self.name}({', '.join(f'{v.name}: {v.aval}' for v in self.inputs)})"

    def __str__(self) -> str:
        lines = [f"graph {self.signature()}:"]
        guarded = {}
        for g in self.guards:
            guarded.setdefault(id(g.var), []).append(g)
        for v in self.inputs:
            lines += [f"    guard {g}    # {g.where()}" for g in guarded.get(id(v), ())]
        for eq in self.equations:
            lines.append(f"    {eq}")
            lines += [f"    guard {g}    # {g.where()}" for v in eq.outs
                      for g in guarded.get(id(v), ())]
        outs = [v.name if type(v) is Var else literal_text(v.value) for v in self.outputs]
        lines.append(f"    return {', '.join(outs) if outs else 'None'}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        n, k = len(self.equations), len(self.inputs)
        return (f"<Graph {self.name}: {n} equation{'s' * (n != 1)}, {k} input{'s' * (k != 1)}, "
                f"{len(self.outputs)} output{'s' * (len(self.outputs) != 1)}>")

    def _repr_html_(self) -> str | None:
        return html_of(self)

    # -- running --------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        """Run the graph on new arguments (of the traced structure, shapes and dtypes).

        Plain NumPy arguments run the compiled code (:meth:`to_source`); tensors, dual
        numbers or tracers run it op by op, so the call is differentiated (or traced)
        like the function it came from.
        """
        leaves = check_arguments(self, args)
        if any(is_traced(x) for x in leaves):
            refuse_lost_derivatives(self, leaves)
            outs = evaluate(self, leaves)
        else:
            runner = self._runner
            if runner is None:
                runner = self._runner = compile_graph(self)
            try:
                out = runner(*leaves)
            except GuardFailed as e:
                raise GuardError(guard_message(self, e.guard, e.guard.convert(e.got))) from None
            outs = [out] if len(self.outputs) == 1 else list(out)
        return unflatten(self.out_tree, outs)

    def to_source(self, target: str = "numpy") -> str:
        """Python source of the program: imports, then one line per equation, each with a
        comment naming its op (and the user's line); what ``graph(*args)`` runs (see
        :mod:`wengert.graph.backends.codegen`). ``exec(source, graph.namespace())`` defines it.
        ``target="jax"`` writes the same program with ``jax.numpy``
        (:func:`wengert.graph.backends.export.to_jax_source`: it needs no wengert to run).

        Examples
        --------
        >>> import wengert as wg
        >>> print(wg.trace(lambda x: x * x + 1.0, 3.0, source_lines=False).to_source())
        import numpy as np
        <BLANKLINE>
        <BLANKLINE>
        def f(x):
            t0 = x * x  # multiply
            t1 = t0 + 1.0  # add
            return t1
        <BLANKLINE>
        """
        if target == "jax":
            return to_jax_source(self)
        if target != "numpy":
            raise ValueError(f"to_source: unknown target {target!r}; use 'numpy' or 'jax'")
        return to_source(self)

    def optimize(self, passes: Sequence[Any] | None = None, report: bool = False) -> Any:
        """The graph after the optimisation passes (:mod:`wengert.graph.passes.pipeline`):
        by default ``fold_constants, simplify, cse, dce``; ``passes`` names or functions
        to run instead. ``report=True`` returns an ``Optimized`` with the graph before and
        after and what each pass changed (shown as a before/after view in Jupyter).

        Examples
        --------
        >>> import numpy as np
        >>> import wengert as wg
        >>> g = wg.trace(lambda x: np.sin(x) * 1.0 - 0.0, 0.5)
        >>> len(g), len(g.optimize())
        (3, 1)
        """
        return optimize(self, passes, report)

    def peak_bytes(self) -> int:
        """The most bytes its arrays hold at once while it runs (inputs and outputs
        included; with a memory plan, values are freed after their last use and reused
        buffers count once; without one, nothing is freed before it returns)."""
        return peak_bytes(self)

    def memory_timeline(self) -> list[int]:
        """The bytes held after each equation (see :meth:`peak_bytes`)."""
        return memory_timeline(self)

    def namespace(self) -> dict[str, Any]:
        """The values :meth:`to_source`'s code refers to (for ``exec``)."""
        return namespace(self)
