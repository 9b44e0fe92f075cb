"""Define-and-run, as in TensorFlow 1.x: placeholders build a graph, a Session runs it.

:func:`placeholder` makes a value that has a shape and a dtype but no value
yet. Operators, ``np.*`` and wengert functions applied to it do not compute:
each becomes an equation of the current *default graph* (a
:class:`GraphDefinition`), and the result is another such value
(a :class:`~wengert.graph.tracer.Traced`). :meth:`Session.run` takes the
values to compute (*fetches*) and the values of the placeholders they need
(*feed_dict*), cuts the equations those fetches depend on out of the default
graph as a :class:`~wengert.graph.program.Graph`, compiles it to Python source
once, and runs it. :func:`gradients` adds the backward program of a value to
the same graph, so gradients are fetched like anything else.

The default graph lives in a :class:`contextvars.ContextVar`: it is made on
first use; ``with define():`` (TensorFlow 1.x's ``with tf.Graph().as_default():``)
starts a fresh one for the block, and :func:`reset_default_graph` replaces it.
A notebook cell with a top-level ``await`` runs in a copy of the context:
a default graph first made there does not outlive the cell.

Examples
--------
TensorFlow 1.x's example:

>>> with define():
...     x = placeholder((), name="x")
...     y = x * x
...     z = 2.0 * y * x
...     with Session() as sess:
...         print(sess.run([y, z], {x: 3.0}))
...         print(sess.graph_of([y, z]))
[9.0, 54.0]
graph graph(x: f64[]):
    t0: f64[] = multiply(x, x)
    t1: f64[] = multiply(2.0, t0)
    t2: f64[] = multiply(t1, x)
    return t0, t2
"""

from __future__ import annotations

import keyword
import operator
import re
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy as np
from wengert.core.bind import is_traced, kind_of
from wengert.core.tree import flatten, unflatten
from wengert.graph.backends.codegen import Namespace
from wengert.graph.ir import Equation, Literal, Var, aval_text
from wengert.graph.program import Graph
from wengert.graph.tracer import Builder, Traced, run_equation
from wengert.transforms.reverse import vjp

__all__ = ["placeholder", "Session", "gradients", "define", "default_graph",
           "reset_default_graph", "GraphDefinition", "SessionCacheInfo"]

#: The graph that placeholders and the operations on them are added to.
_DEFAULT_GRAPH: ContextVar[GraphDefinition | None] = ContextVar("wengert_default_graph",
                                                                default=None)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Names the graph or its generated code use for other things: intermediate values
#: (``t3``), constants (``c0``), guards (``guard0``).
_GENERATED = re.compile(r"(t|c|guard)\d+")
_FEEDABLE_KINDS = "biufc"  # bool, integers, floats, complex


class GraphDefinition(Builder):
    """A define-and-run graph: its placeholders and the equations computed from them.

    Made by :func:`define` (or on first use of :func:`default_graph`); placeholders
    made while it is the default graph, and every operation on them, are added to it.
    It is never closed: its values can be fetched as long as they are kept.

    Parameters
    ----------
    name : str
        Its name, in messages and as the name of the graphs a :class:`Session` runs.
    source_lines : bool
        Keep the user's line of each equation (listings, generated code, messages).

    Examples
    --------
    >>> with define("layer") as g:
    ...     w = placeholder((2,), name="w")
    ...     y = np.tanh(w)
    >>> g
    <GraphDefinition layer: 1 placeholder, 1 equation>
    >>> g.placeholders
    (Traced(w: f64[2]),)
    >>> print(g.as_graph())
    graph layer(w: f64[2]):
        t0: f64[2] = tanh(w)
        return t0
    """

    def __init__(self, name: str = "graph", source_lines: bool = True) -> None:
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) \
                or keyword.iskeyword(name):
            raise ValueError(f"define: the graph's name must be a Python identifier; got "
                             f"{name!r}")
        super().__init__(name, abstract=True, lines=source_lines)
        self._placeholders: list[Traced] = []
        self._by_name: dict[str, Traced] = {}
        self._placeholder_ids: set[int] = set()
        self._defining: dict[int, int] = {}  # id(var) -> index of the equation defining it
        self._indexed = 0

    # -- placeholders ---------------------------------------------------------
    @property
    def placeholders(self) -> tuple[Traced, ...]:
        """The placeholders, in order of creation."""
        return tuple(self._placeholders)

    def placeholder(self, shape: int | Sequence[int], dtype: Any = float,
                    name: str | None = None) -> Traced:
        """A new placeholder of this graph (see :func:`placeholder`)."""
        shape = _shape(shape, name)
        dtype = _dtype(dtype, name)
        if name is None:
            k = len(self._placeholders)
            while f"x{k}" in self._by_name:
                k += 1
            name = f"x{k}"
        else:
            self._check_name(name)
        # The stand-in value gives shapes and dtypes to the operations applied to it; a
        # float64 scalar is a Python float (programs of floats compile to float code).
        example: Any = 1.0 if shape == () and dtype == np.float64 else np.ones(shape, dtype)
        p = self.input(example, name)
        self._placeholders.append(p)
        self._by_name[name] = p
        self._placeholder_ids.add(id(p._var))
        return p

    def _check_name(self, name: Any) -> None:
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) \
                or keyword.iskeyword(name):
            raise ValueError(f"placeholder: name={name!r} is not a Python identifier (it names "
                             "a variable of the graph and of its generated code)")
        if name in self._by_name:
            raise ValueError(
                f"placeholder: graph {self.name!r} already has a placeholder named {name!r}. "
                "Choose another name, or start a new graph (`with wg.graph.define():`, or "
                "wg.graph.reset_default_graph() when a notebook cell is run again)."
            )
        if _GENERATED.fullmatch(name) or name in Namespace().values:
            raise ValueError(f"placeholder: the name {name!r} is reserved for the graph's "
                             "intermediate values or generated code; choose another")

    def is_placeholder(self, value: Any) -> bool:
        """Whether ``value`` is a placeholder of this graph."""
        return type(value) is Traced and value.builder is self \
            and id(value._var) in self._placeholder_ids

    def lookup(self, name: str) -> Traced:
        """The placeholder named ``name`` (a ``KeyError`` naming the others if none)."""
        p = self._by_name.get(name)
        if p is None:
            known = ", ".join(self._by_name) or "none yet"
            raise KeyError(f"graph {self.name!r} has no placeholder named {name!r} (its "
                           f"placeholders: {known})")
        return p

    # -- structure ------------------------------------------------------------
    def defining(self) -> dict[int, int]:
        """``id(var) -> index`` of the equation that computes each variable (kept up to date
        as equations are added)."""
        index = self._defining
        equations = self.equations
        for i in range(self._indexed, len(equations)):
            for v in equations[i].outs:
                index[id(v)] = i
        self._indexed = len(equations)
        return index

    def joined(self, k: int, var: Var) -> None:
        """``var`` joined equation ``k`` (a part of a decomposition, see
        :meth:`Builder.record`)."""
        if k < self._indexed:
            self._defining[id(var)] = k

    def ancestors(self, targets: Sequence[Var]) -> tuple[list[int], set[int]]:
        """The equations ``targets`` depend on (their indices, in execution order) and the
        ids of the variables reached, placeholders included. Iterative: any depth."""
        defining = self.defining()
        equations = self.equations
        seen: set[int] = set()
        needed: list[int] = []
        stack = list(targets)
        while stack:
            v = stack.pop()
            key = id(v)
            if key in seen:
                continue
            seen.add(key)
            i = defining.get(key)
            if i is None:
                continue  # a placeholder
            needed.append(i)
            for a in equations[i].ins:
                if type(a) is Var and id(a) not in seen:
                    stack.append(a)
        needed.sort()
        return needed, seen

    def subgraph(self, fetches: Sequence[Var], name: str | None = None) -> Graph:
        """The :class:`~wengert.graph.program.Graph` that computes ``fetches`` (a flat
        tuple of them) from the placeholders they depend on, in order of creation."""
        needed, seen = self.ancestors(fetches)
        inputs = [p for p in self._placeholders if id(p._var) in seen]
        equations = [self.equations[i] for i in needed]
        return _graph([p._var for p in inputs], [p.value for p in inputs], equations,
                      list(fetches), name or self.name)

    def as_graph(self) -> Graph:
        """Everything defined so far as one graph: every placeholder, every equation, and
        as outputs the values no equation reads."""
        equations = list(self.equations)
        read = {id(a) for eq in equations for a in eq.ins if type(a) is Var}
        outputs = [v for eq in equations for v in eq.outs if id(v) not in read]
        return _graph([p._var for p in self._placeholders],
                      [p.value for p in self._placeholders], equations, outputs, self.name)

    def describe(self, var: Var) -> str:
        """``t2 (f64[], line 4: `z = 2.0 * y * x`)``: a value, for messages."""
        if id(var) in self._placeholder_ids:
            return f"placeholder {var.name} ({var.aval})"
        i = self.defining().get(id(var))
        src = self.equations[i].source if i is not None else None
        where = f", line {src.lineno}: `{src.text}`" if src is not None and src.text else ""
        return f"{var.name} ({var.aval}{where})"

    # -- as the default graph -------------------------------------------------
    @contextmanager
    def as_default(self) -> Iterator[GraphDefinition]:
        """Make this the default graph inside a ``with`` block."""
        token = _DEFAULT_GRAPH.set(self)
        try:
            yield self
        finally:
            _DEFAULT_GRAPH.reset(token)

    def __repr__(self) -> str:
        n, k = len(self.equations), len(self._placeholders)
        return (f"<GraphDefinition {self.name}: {k} placeholder{'s' * (k != 1)}, "
                f"{n} equation{'s' * (n != 1)}>")


def _graph(inputs: list[Var], examples: list[Any], equations: list[Equation],
           outputs: list[Var | Literal], name: str) -> Graph:
    in_tree = flatten(tuple(inputs))[1]
    out_tree = flatten(tuple(outputs))[1]
    return Graph(inputs, equations, outputs, in_tree, out_tree, (), name, examples=examples)


def _shape(shape: Any, name: str | None) -> tuple[int, ...]:
    what = f"placeholder {name}" if name else "placeholder"
    dims = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    if any(d is None for d in dims):
        raise ValueError(
            f"{what}: shape={shape!r} has an unknown dimension (None). Graphs here have "
            "fixed shapes: give every dimension, and make one graph per shape (or use "
            "wg.compile(f), which traces once per shape)."
        )
    try:
        out = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"{what}: shape must be an int or a tuple of ints; got "
                        f"{shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{what}: shape={shape!r} has a negative dimension")
    return out


def _dtype(dtype: Any, name: str | None) -> np.dtype:
    what = f"placeholder {name}" if name else "placeholder"
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}: dtype={dtype!r} is not a NumPy dtype") from None
    if dt.kind not in _FEEDABLE_KINDS:
        raise TypeError(f"{what}: dtype {dt} is not numeric; placeholders hold booleans, "
                        "integers, floats or complex numbers")
    return dt


def default_graph() -> GraphDefinition:
    """The graph that :func:`placeholder` adds to (made on first use).

    Examples
    --------
    >>> with define("mine") as g:
    ...     default_graph() is g
    True
    """
    graph = _DEFAULT_GRAPH.get()
    if graph is None:
        graph = GraphDefinition()
        _DEFAULT_GRAPH.set(graph)
    return graph


def reset_default_graph(name: str = "graph") -> GraphDefinition:
    """Replace the default graph by a new, empty one (TensorFlow 1.x's
    ``tf.reset_default_graph()``): for a notebook cell run again, whose placeholders'
    names are taken in the old graph. Values of the old graph stay usable with a
    ``Session(graph=...)`` of it. Returns the new graph.

    Inside a ``with define():`` block, the new graph replaces the block's until it ends.

    Examples
    --------
    >>> with define():
    ...     old = default_graph()
    ...     new = reset_default_graph()
    ...     new is default_graph() and new is not old
    True
    """
    graph = GraphDefinition(name)
    _DEFAULT_GRAPH.set(graph)
    return graph


@contextmanager
def define(name: str = "graph", source_lines: bool = True) -> Iterator[GraphDefinition]:
    """A fresh default graph for a ``with`` block (TensorFlow 1.x's
    ``with tf.Graph().as_default():``): placeholders made inside belong to it.

    Parameters
    ----------
    name : str
        The graph's name (a Python identifier).
    source_lines : bool
        Keep the user's line of each equation.

    Yields
    ------
    GraphDefinition
        Pass it to ``Session(graph=...)`` to run its values after the block.

    Examples
    --------
    >>> with define("g") as g:
    ...     a = placeholder((), name="a")
    ...     b = np.sin(a) + 1.0
    >>> with Session(graph=g) as sess:
    ...     print(round(sess.run(b, {a: 0.0}), 3))
    1.0
    """
    with GraphDefinition(name, source_lines).as_default() as graph:
        yield graph


def placeholder(shape: int | Sequence[int], dtype: Any = float,
                name: str | None = None) -> Traced:
    """A value to be fed when the graph runs: a shape, a dtype, no value yet.

    Operators, ``np.*`` and wengert functions on it build the default graph (see
    :func:`define`); :meth:`Session.run` computes what it is asked for. Python cannot
    branch on such a value or convert it to a number (``if x > 0:``, ``float(x)``
    raise :class:`~wengert.graph.tracer.TraceError`): use ``np.where``.

    Parameters
    ----------
    shape : int or tuple of int
        Every dimension is fixed (``None`` is refused: one graph per shape).
    dtype : dtype, default float
        Anything NumPy accepts (``np.float32``, ``int``, ``"complex128"``).
    name : str, optional
        A Python identifier, unique in its graph; by default ``x0``, ``x1`` ...

    Returns
    -------
    Traced
        Shows as ``Traced(x: f64[])``; a key of ``feed_dict`` (or its name is).

    Examples
    --------
    >>> with define():
    ...     W = placeholder((3, 4), name="W")
    ...     v = placeholder(4, np.float32)
    ...     y = W @ v
    >>> W, v, y
    (Traced(W: f64[3,4]), Traced(x1: f32[4]), Traced(t0: f64[3]))
    """
    return default_graph().placeholder(shape, dtype, name)


class SessionCacheInfo(NamedTuple):
    """What a :class:`Session` compiled: ``hits`` (runs and ``graph_of`` calls that
    reused a graph), ``misses`` (graphs built, each compiled on its first run), ``size``
    (graphs kept)."""

    hits: int
    misses: int
    size: int


class _Entry:
    """A compiled graph for one tuple of fetched variables."""

    __slots__ = ("graph", "needs")

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.needs: dict[int, Var] | None = None  # placeholder id -> a fetch that needs it


class Session:
    """Runs the values of a define-and-run graph (TensorFlow 1.x's ``tf.Session``).

    Parameters
    ----------
    graph : GraphDefinition, optional
        The graph whose values it runs; by default the default graph when the session
        is made (:func:`default_graph`).
    cache_size : int
        How many compiled graphs (one per distinct list of fetched values) to keep.

    Examples
    --------
    >>> with define():
    ...     x = placeholder((), name="x")
    ...     y = x * x
    ...     with Session() as sess:
    ...         print(sess.run({"y": y, "dy": gradients(y, x)}, {"x": 3.0}))
    {'y': 9.0, 'dy': 6.0}
    >>> sess.closed
    True
    """

    def __init__(self, graph: GraphDefinition | None = None, cache_size: int = 128) -> None:
        if graph is None:
            graph = default_graph()
        elif not isinstance(graph, GraphDefinition):
            raise TypeError(f"Session(graph=...) takes a GraphDefinition (from "
                            f"wg.graph.define()); got {type(graph).__name__}")
        self._graph = graph
        self._cache: OrderedDict[tuple[int, ...], _Entry] = OrderedDict()
        self._cache_size = int(cache_size)
        self._hits = 0
        self._misses = 0
        self._closed = False

    @property
    def graph(self) -> GraphDefinition:
        """The graph whose values this session runs."""
        return self._graph

    @property
    def closed(self) -> bool:
        return self._closed

    # -- running --------------------------------------------------------------
    def run(self, fetches: Any, feed_dict: dict[Any, Any] | None = None) -> Any:
        """Compute ``fetches`` for the placeholders' values in ``feed_dict``.

        Parameters
        ----------
        fetches : value or pytree of values
            Values of this session's graph (a list, tuple or dict of them, nested as
            you like); anything else in it (a number, an array) is returned as it is.
        feed_dict : dict, optional
            Placeholder (or its name) -> value: a number, a nested list or an array of
            the placeholder's shape, of a dtype that casts to its dtype within the same
            kind (a Python float into a float32 placeholder; not a float into an integer
            placeholder). Every placeholder the fetches depend on must be fed.

        Returns
        -------
        The fetches' values, in the fetches' structure (NumPy arrays and scalars; Python
        floats for a program of float64 scalars).

        Examples
        --------
        >>> with define() as g:
        ...     W = placeholder((3, 4), name="W")
        ...     x = placeholder(4, name="x")
        ...     b = placeholder(3, name="b")
        ...     y = np.maximum(W @ x + b, 0.0)
        >>> with Session(g) as sess:
        ...     sess.run(y, {W: np.eye(3, 4), x: [1.0, -2.0, 3.0, 4.0], b: np.ones(3)})
        array([2., 0., 4.])
        """
        entry, leaves, spec, positions = self._prepare(fetches)
        fed = self._feeds(feed_dict)
        if entry is None:
            return unflatten(spec, leaves)
        graph = entry.graph
        values = []
        for v in graph.inputs:
            value = fed.get(id(v))
            if value is None:
                raise self._unfed(entry, v)
            values.append(value)
        outs = graph(*values)
        merged = list(leaves)
        for k, out in zip(positions, outs):
            merged[k] = out
        return unflatten(spec, merged)

    def graph_of(self, fetches: Any) -> Graph:
        """The graph :meth:`run` runs for ``fetches``: its inputs are the placeholders
        the fetches depend on (in order of creation), its outputs the fetches (in their
        structure, constants as literals). Print it, draw it, optimise it, or read
        ``to_source()``; calling it with the placeholders' values runs it.

        Examples
        --------
        >>> with define() as g:
        ...     a = placeholder((), name="a")
        ...     b = placeholder((), name="b")
        ...     c = a * 2.0
        >>> sess = Session(g)
        >>> print(sess.graph_of({"c": c, "one": 1.0}))
        graph graph(a: f64[]):
            t0: f64[] = multiply(a, 2.0)
            return t0, 1.0
        >>> sess.graph_of({"c": c, "one": 1.0})(5.0)
        {'c': 10.0, 'one': 1.0}
        """
        entry, leaves, spec, positions = self._prepare(fetches)
        outputs: list[Var | Literal] = [Literal(x) for x in leaves]
        if entry is None:
            return _graph([], [], [], outputs, self._graph.name).replace(out_tree=spec)
        for k, v in zip(positions, entry.graph.outputs):
            outputs[k] = v
        return entry.graph.replace(outputs=outputs, out_tree=spec)

    def _prepare(self, fetches: Any) -> tuple[_Entry | None, list[Any], Any, list[int]]:
        """The compiled entry for ``fetches`` (None when nothing is to be computed), their
        leaves, structure and the positions of the values to compute."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session: make a new Session, or "
                               "run inside its `with` block.")
        leaves, spec = flatten(fetches)
        graph = self._graph
        positions = []
        fetched = []
        for k, leaf in enumerate(leaves):
            if type(leaf) is Traced:
                if leaf.builder is not graph:
                    raise self._foreign(leaf, "fetch")
                positions.append(k)
                fetched.append(leaf._var)
            elif is_traced(leaf):
                raise TypeError(f"Session.run: fetch {k} is a {kind_of(leaf).name}, not a value "
                                f"of graph {graph.name!r}")
        if not fetched:
            return None, leaves, spec, positions
        key = tuple(id(v) for v in fetched)
        entry = self._cache.get(key)
        if entry is None:
            self._misses += 1
            entry = _Entry(graph.subgraph(fetched))
            self._cache[key] = entry  # the graph holds the vars: their ids stay theirs
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._hits += 1
            self._cache.move_to_end(key)
        return entry, leaves, spec, positions

    # -- feeds ----------------------------------------------------------------
    def _feeds(self, feed_dict: dict[Any, Any] | None) -> dict[int, Any]:
        """``id(placeholder var) -> value`` cast to the placeholder's dtype, checked."""
        if feed_dict is None:
            return {}
        if not isinstance(feed_dict, dict):
            raise TypeError(f"Session.run: feed_dict must be a dict of placeholder -> value; "
                            f"got {type(feed_dict).__name__}")
        graph = self._graph
        out: dict[int, Any] = {}
        for key, value in feed_dict.items():
            if isinstance(key, str):
                try:
                    p = graph.lookup(key)
                except KeyError as e:
                    raise ValueError(f"Session.run: feed_dict: {e.args[0]}") from None
            elif type(key) is Traced:
                if key.builder is not graph:
                    raise self._foreign(key, "feed_dict key")
                if not graph.is_placeholder(key):
                    raise TypeError(
                        f"Session.run: feed_dict key {graph.describe(key._var)} is not a "
                        "placeholder: only placeholders can be fed (make the value a "
                        "placeholder, or feed the placeholders it is computed from)"
                    )
                p = key
            else:
                raise TypeError(f"Session.run: feed_dict keys are placeholders or their names; "
                                f"got a {type(key).__name__}")
            if id(p._var) in out:
                raise ValueError(f"Session.run: placeholder {p._var.name} is fed twice (by the "
                                 "placeholder and by its name)")
            out[id(p._var)] = _fed_value(p._var, value)
        return out

    def _unfed(self, entry: _Entry, v: Var) -> Exception:
        graph = self._graph
        needs = entry.needs
        if needs is None:  # which fetch needs each input: only when one is missing
            needs = entry.needs = {}
            for out in entry.graph.outputs:
                _, seen = graph.ancestors([out])
                for p in entry.graph.inputs:
                    if id(p) in seen:
                        needs.setdefault(id(p), out)
        fetch = needs[id(v)]
        by = "is fetched" if fetch is v else f"is needed by {graph.describe(fetch)}"
        return ValueError(f"placeholder {v.name} ({v.aval}) {by} but not fed: add it to "
                          f"feed_dict ({{{v.name}: value}} or {{{v.name!r}: value}})")

    def _foreign(self, t: Traced, what: str) -> Exception:
        other = t.builder
        if isinstance(other, GraphDefinition):
            where = f"belongs to graph {other.name!r}"
            if other.name == self._graph.name:
                where += " (another graph of the same name)"
        else:
            where = f"was made while tracing {other.name}()"
        return ValueError(
            f"Session.run: {what} {t._var.name} ({t._var.aval}) {where}, not to this session's "
            f"graph {self._graph.name!r}. Run it with Session(graph=...) of its graph (a "
            "session made inside `with define():` runs that block's graph)."
        )

    # -- cache and lifetime ---------------------------------------------------
    def cache_info(self) -> SessionCacheInfo:
        """How many runs reused a compiled graph, how many graphs were built (one per
        distinct tuple of fetched values, whatever their structure).

        Examples
        --------
        >>> with define():
        ...     x = placeholder((), name="x")
        ...     with Session() as sess:
        ...         _ = [sess.run(x * 2.0, {x: 1.0}) for _ in range(3)]  # three new values
        ...         y = x * 2.0
        ...         _ = [sess.run(y, {x: float(k)}) for k in range(3)]
        ...         print(sess.cache_info())
        SessionCacheInfo(hits=2, misses=4, size=4)
        """
        return SessionCacheInfo(self._hits, self._misses, len(self._cache))

    def close(self) -> None:
        """Free the compiled graphs; the session cannot run any more."""
        self._closed = True
        self._cache.clear()

    def __enter__(self) -> Session:
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._cache)} compiled"
        return f"<Session of graph {self._graph.name!r}: {state}>"


def _fed_value(var: Var, value: Any) -> Any:
    """``value`` as placeholder ``var`` holds it (cast to its dtype), or a clear error."""
    t = type(value)
    if var.scalar:
        if t is float:
            return value
    elif t is np.ndarray and value.dtype == var.dtype and value.shape == var.shape:
        return value
    declared = f"shape {var.shape} and dtype {var.dtype} ({var.aval})"
    if is_traced(value):
        raise TypeError(f"placeholder {var.name}: feed_dict gives a traced value ({value!r}); "
                        "feed NumPy arrays or numbers")
    try:
        given = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"placeholder {var.name} ({var.aval}): feed_dict gives a value NumPy "
                        f"cannot read as an array ({e})") from None
    gdt = given.dtype
    if gdt.kind not in _FEEDABLE_KINDS or not np.can_cast(gdt, var.dtype, "same_kind"):
        raise TypeError(
            f"placeholder {var.name} was declared with {declared}; feed_dict gives dtype "
            f"{gdt} ({aval_text(given.shape, gdt)}), which does not cast to {var.dtype} "
            "without changing its kind. Convert it first (np.asarray(value, dtype)) if that "
            "is what you mean."
        )
    if given.shape != var.shape:
        raise ValueError(f"placeholder {var.name} was declared with {declared}; feed_dict "
                         f"gives shape {given.shape} ({aval_text(given.shape, gdt)})")
    if gdt.kind in "iu" and var.dtype.kind in "iu" and given.size \
            and not np.can_cast(gdt, var.dtype, "safe"):
        info = np.iinfo(var.dtype)
        if given.min() < info.min or given.max() > info.max:
            raise ValueError(f"placeholder {var.name} ({var.aval}): a fed value is outside "
                             f"the range of {var.dtype} [{info.min}, {info.max}]")
    cast = given.astype(var.dtype, copy=False)
    if var.scalar:
        return float(cast)
    return cast


def gradients(ys: Any, xs: Any, grad_ys: Any = None,
              unconnected_gradients: str = "none") -> Any:
    """The gradient of ``ys`` with respect to ``xs``, as values of the same graph
    (TensorFlow 1.x's ``tf.gradients``): fetch them with :meth:`Session.run`.

    The backward program is traced into the graph of ``ys``: wengert's reverse mode
    runs on its values, so every step of the adjoint sweep becomes an equation.

    Parameters
    ----------
    ys : value or list of values
        Of one define-and-run graph; the gradient is that of their sum (weighted by
        ``grad_ys``).
    xs : value or list/tuple of values
        Placeholders or intermediate values of the same graph. As TensorFlow's, the
        gradient with respect to an intermediate value counts the paths from it to ``ys``
        (what it is computed from stays fixed); with respect to a placeholder, every path.
    grad_ys : array or list of arrays, optional
        The cotangent of each of ``ys`` (ones by default); values of the graph work too.
    unconnected_gradients : {"none", "zero"}
        What an ``x`` that ``ys`` do not depend on gets: ``None`` (TensorFlow's default)
        or zeros of its shape and dtype.

    Returns
    -------
    A value (or ``None``) for a single ``x``; a list of them for a list or tuple.

    Examples
    --------
    >>> with define():
    ...     x = placeholder((), name="x")
    ...     z = 2.0 * x ** 3
    ...     dz_dx = gradients(z, x)
    ...     with Session() as sess:
    ...         print(sess.run(dz_dx, {x: 3.0}))
    54.0
    """
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError(f"gradients: unconnected_gradients={unconnected_gradients!r}; use "
                         "'none' or 'zero'")
    y_list = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    single = not isinstance(xs, (list, tuple))
    x_list = [xs] if single else list(xs)
    if not y_list:
        raise ValueError("gradients: ys is empty")
    graph = _graph_of_values(y_list + x_list)
    y_vars = [y._var for y in y_list]
    needed, reached = graph.ancestors(y_vars)  # every path, through the xs too
    equations = [graph.equations[i] for i in needed]
    inputs = [p for p in graph.placeholders if id(p._var) in reached]
    # An intermediate x gets a zero added where it is computed: the gradient with respect
    # to that zero is x's adjoint (the paths from x to ys).
    bump_ids = list(dict.fromkeys(id(x._var) for x in x_list if id(x._var) in reached
                                  and not graph.is_placeholder(x)))
    bump_vars = {id(x._var): x._var for x in x_list}
    n = len(inputs)

    def program(*args: Any) -> list[Any]:
        env: dict[int, Any] = {id(p._var): a for p, a in zip(inputs, args[:n])}
        bumps = dict(zip(bump_ids, args[n:]))
        for eq in equations:
            values = [env[id(v)] if type(v) is Var else v.value for v in eq.ins]
            out = run_equation(eq, values)
            for v, o in zip(eq.outs, out if len(eq.outs) > 1 else (out,)):
                bump = bumps.get(id(v))
                env[id(v)] = o if bump is None else o + bump
        return [env[id(v)] for v in y_vars]

    primals = list(inputs) + [_zeros(bump_vars[i]) for i in bump_ids]
    _, pullback = vjp(program, *primals)
    seeds = _seeds(y_list, grad_ys)
    cotangents = pullback(seeds)
    by_id = {id(p._var): c for p, c in zip(inputs, cotangents[:n])}
    by_id.update(zip(bump_ids, cotangents[n:]))
    out = []
    for x in x_list:
        g = by_id.get(id(x._var))
        if g is None and unconnected_gradients == "zero":
            g = _zeros(x._var)
        out.append(g)
    return out[0] if single else out


def _graph_of_values(values: list[Any]) -> GraphDefinition:
    graph = None
    for v in values:
        if type(v) is not Traced or not isinstance(v.builder, GraphDefinition):
            raise TypeError(f"gradients: ys and xs are values of a define-and-run graph "
                            f"(placeholders and what is computed from them); got {v!r}")
        if graph is None:
            graph = v.builder
        elif v.builder is not graph:
            raise ValueError(f"gradients: {v._var.name} belongs to graph {v.builder.name!r}, "
                             f"the others to graph {graph.name!r}: one graph at a time")
    assert graph is not None
    return graph


def _zeros(var: Var) -> Any:
    return 0.0 if var.scalar else np.zeros(var.shape, var.dtype)


def _seeds(ys: list[Traced], grad_ys: Any) -> list[Any]:
    if grad_ys is None:
        return [1.0 if y._var.scalar else np.ones(y._var.shape, y._var.dtype) for y in ys]
    seeds = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
    if len(seeds) != len(ys):
        raise ValueError(f"gradients: {len(ys)} ys but {len(seeds)} grad_ys")
    return seeds
