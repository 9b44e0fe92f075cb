"""The TensorFlow dialect: :class:`GradientTape` and :class:`Variable`.

A gradient tape records the operations run inside its ``with`` block that
involve a tensor it *watches*: a tensor passed to :meth:`GradientTape.watch`,
a trainable :class:`Variable` read inside the block, or a tensor computed from
those by an operation the tape recorded. :meth:`GradientTape.gradient` then
runs the reverse sweep over the tape's own nodes only, so anything computed
before the tape opened (or inside :meth:`GradientTape.stop_recording`) is a
constant to it.

The tapes open in a thread live in the context variable
:data:`wengert.core.modes.RECORDERS` (innermost last), so every thread and
asyncio task has its own. Nested tapes give higher derivatives: while an outer
tape is recording, an inner tape's backward pass is itself recorded.

Inside ``wg.jvp`` a tape's targets may be dual numbers over tensors (``w * d``
for a variable ``w`` and a dual ``d``): the gradient of ``primal + ε·tangent`` is
the dual number of the two gradients (forward over reverse).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from wengert import numpy as wnp
from wengert.core.bind import apply, is_traced, primal
from wengert.core.bind import shape_of as _shape
from wengert.core.display import html_of
from wengert.core.equations import Tape, read_tape
from wengert.core.kept import KEEPER
from wengert.core.levels import TRACE_LEVEL, is_transform_level, transform_name
from wengert.core.modes import GRAD_ENABLED, RECORDERS, TRANSFORM_DEPTH, Recorder
from wengert.core.node import Node
from wengert.core.subclasses import refuse_subclass
from wengert.core.sweep import observe_sweep, run_hooks
from wengert.core.sweep_fast import backprop
from wengert.core.tree import flatten, unflatten
from wengert.forward.dual import Dual
from wengert.ops.broadcast import broadcast_to
from wengert.ops.elementwise import POSITIVE
from wengert.ops.shape import reshape
from wengert.reverse.tensor import (
    Tensor,
    constant,
    finishing,
    in_dtype_of,
    is_float_value,
    lifter,
    value_of,
)

__all__ = ["GradientTape", "Variable"]

_NON_PERSISTENT = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or "
    "jacobians). Create the tape with wg.GradientTape(persistent=True) to call gradient() or "
    "jacobian() several times, or open a new tape for each computation."
)
_IN_CONTEXT = (
    "Calling GradientTape.gradient on a persistent tape inside its context is significantly "
    "less efficient than calling it outside the context (it causes the gradient ops to be "
    "recorded on the tape, leading to increased CPU and memory usage). Only call "
    "GradientTape.gradient inside the context if you actually want to trace the gradient in "
    "order to compute higher order derivatives."
)


# -- Variable -----------------------------------------------------------------
class Variable(Tensor):
    """A mutable tensor that gradient tapes watch automatically (as ``tf.Variable``).

    Reading a trainable variable inside an open :class:`GradientTape` (one
    created with ``watch_accessed_variables=True``, the default) makes the
    tape watch it, wherever the variable was created. A variable does not
    require grad in the PyTorch sense: outside a tape its operations record
    nothing. Change its value with :meth:`assign`, :meth:`assign_add` and
    :meth:`assign_sub`; those updates are not recorded.

    Parameters
    ----------
    initial_value : array_like or callable
        The value (copied), or a function of no arguments returning it.
    trainable : bool
        Whether tapes watch the variable automatically when it is read.
    name : str, optional
        A label shown in the repr (``"Variable"`` by default).
    dtype : numpy dtype, optional
        Convert the value to this dtype.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.Variable(3.0, name="w")
    >>> w
    <wg.Variable 'w' shape=() dtype=float64, numpy=3.0>
    >>> with wg.GradientTape() as tape:
    ...     loss = (w * 2.0 - 1.0) ** 2
    >>> tape.gradient(loss, w)
    tensor(20.)
    >>> w.assign_sub(0.5)
    <wg.Variable 'w' shape=() dtype=float64, numpy=2.5>
    """

    __slots__ = ("trainable", "name")

    trainable: bool
    name: str

    def __init__(self, initial_value: Any, trainable: bool = True, name: str | None = None,
                 dtype: Any = None) -> None:
        if callable(initial_value) and not isinstance(initial_value, Tensor):
            initial_value = initial_value()
        Tensor.__init__(self, initial_value, dtype=dtype)
        self.trainable = bool(trainable)
        self.name = "Variable" if name is None else str(name)

    # -- reading --------------------------------------------------------
    def value(self) -> Tensor:
        """The current value as a new tensor (a read that open tapes record)."""
        return apply(POSITIVE, self)

    read_value = value

    def numpy(self) -> np.ndarray:
        """A copy of the value as a NumPy array (later assignments do not change it)."""
        if is_traced(self._value):  # a Variable made inside a traced function
            return np.copy(super().numpy())
        return np.array(self._value)

    # -- writing (never recorded) -----------------------------------------
    def assign(self, value: Any) -> Variable:
        """Set the value in place; returns the variable.

        The new value must have the variable's shape; it is cast to the
        variable's dtype. The update is not recorded by any tape, and it bumps
        the version counter, so a backward pass that needs the old value
        raises instead of returning a wrong gradient.
        """
        new = value_of(value)
        old = self._value
        if is_traced(new) or is_traced(old):
            return self._assign_traced(new)
        if type(old) is float:
            if np.shape(new) != ():
                raise ValueError(self._shape_error(np.shape(new)))
            self._value = float(new)
        else:
            new = np.asarray(new)
            if new.shape != old.shape:
                raise ValueError(self._shape_error(np.shape(new)))
            try:
                np.copyto(old, new, casting="same_kind")
            except TypeError as e:
                raise TypeError(
                    f"Cannot assign a value of dtype {new.dtype} to variable "
                    f"'{self.name}' of dtype {old.dtype}; convert it first (value.astype(...))."
                ) from e
        self._version.version += 1
        return self

    def assign_add(self, delta: Any) -> Variable:
        """Add ``delta`` to the value in place (not recorded); returns the variable."""
        return self.assign(np.add(self._value, value_of(delta)))

    def assign_sub(self, delta: Any) -> Variable:
        """Subtract ``delta`` from the value in place (not recorded); returns the variable."""
        return self.assign(np.subtract(self._value, value_of(delta)))

    def _assign_traced(self, new: Any) -> Variable:
        """``assign`` inside a traced function: a Variable made there holds the new traced
        value; one made outside cannot be written by the graph."""
        level = TRACE_LEVEL.get()
        if not level or self._level != level:
            raise TypeError(
                f"Variable '{self.name}' was made outside the traced function (wg.compile, "
                "wg.trace) and is assigned a value computed inside it: a graph cannot write "
                "into its caller's Variables. Return the new value and assign it outside, or "
                "make the Variable inside the function."
            )
        if _shape(new) != _shape(self._value):
            raise ValueError(self._shape_error(_shape(new)))
        dtype = np.result_type(primal(self._value)) if not is_traced(self._value) \
            else self._value.dtype
        if np.dtype(getattr(new, "dtype", np.result_type(new))) != dtype:
            new = wnp.asarray(new).astype(dtype)
        self._value = new
        self._version.version += 1
        return self

    def _shape_error(self, shape: tuple[int, ...]) -> str:
        return (
            f"Cannot assign value to variable '{self.name}': Shape mismatch. The variable shape "
            f"{self.shape}, and the assigned value shape {shape} are incompatible."
        )

    def _no_inplace(self, *_: Any) -> Any:
        raise RuntimeError(
            "`variable += value` with wg.Variable is not supported. Use "
            "`variable.assign_add(value)` to modify the variable, or `out = variable + value` if "
            "you need to get a new output tensor."
        )

    __iadd__ = __isub__ = __imul__ = __itruediv__ = __ipow__ = __imatmul__ = _no_inplace
    __ifloordiv__ = __imod__ = __iand__ = __ior__ = __ixor__ = _no_inplace
    __ilshift__ = __irshift__ = _no_inplace

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            "wg.Variable does not support item assignment; compute the new value and call "
            "variable.assign(new_value)."
        )

    def __repr__(self) -> str:
        v = np.asarray(self._value)
        shown = repr(v.item()) if v.ndim == 0 else repr(v)
        return (
            f"<wg.Variable '{self.name}' shape={self.shape} dtype={self.dtype}, numpy={shown}>"
        )


# -- helpers ------------------------------------------------------------------
def _edge(t: Tensor) -> Any:
    return t._node if t._node is not None else t


def _zero_value(t: Tensor) -> Any:
    v = primal(t._value)
    return 0.0 if type(v) is float else np.zeros(np.shape(v), dtype=np.result_type(v))


def _flat(tree: Any) -> list[Any]:
    """Leaves of nested lists/tuples/dicts; ``None`` counts as a leaf."""
    out: list[Any] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, tuple)):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
        else:
            out.append(node)
    return out


def _paired(target: Any, given: Any) -> list[Any]:
    """``output_gradients`` as one cotangent per leaf of ``target`` (in :func:`_flat`'s
    order), matched by structure: a dict's entries by key (in any order), lists and
    tuples of the target's length item by item, anything else by position (``[g]`` for
    one target too)."""
    out: list[Any] = []
    stack = [(target, given)]
    while stack:
        t, g = stack.pop()
        if isinstance(t, dict) and isinstance(g, dict):
            if set(t) != set(g):
                raise ValueError(
                    f"GradientTape.gradient: output_gradients has the keys {sorted(map(repr, g))} "
                    f"where the target has {sorted(map(repr, t))}; give one gradient per entry "
                    "of the target, under the same key."
                )
            stack.extend(reversed([(t[k], g[k]) for k in t]))
        elif isinstance(t, (list, tuple)) and isinstance(g, (list, tuple)) and len(t) == len(g):
            stack.extend(reversed(list(zip(t, g))))
        elif isinstance(t, (list, tuple, dict)) or isinstance(g, (list, tuple, dict)):
            flat_t, flat_g = _flat(t), _flat(g)
            if len(flat_g) != len(flat_t):
                raise ValueError(
                    f"GradientTape.gradient: got {len(flat_g)} output_gradients for "
                    f"{len(flat_t)} targets; pass one per target, in the same structure."
                )
            out.extend(flat_g)
        else:
            out.append(g)
    return out


def _unconnected_mode(value: Any) -> str:
    mode = getattr(value, "value", value)
    if isinstance(mode, str) and mode.lower() in ("none", "zero"):
        return mode.lower()
    raise ValueError(f"Unknown value for unconnected_gradients: {value!r}; use 'none' or 'zero'.")


def _zeros_like(t: Tensor) -> Tensor:
    v = primal(t._value)
    return constant(0.0 if type(v) is float else np.zeros(np.shape(v), dtype=np.result_type(v)))


def _fit(g: Any, source: Tensor, create: bool) -> Tensor:
    """Return cotangent ``g`` as a tensor with the source's shape."""
    v = source._value
    if create and isinstance(g, Tensor) and (g._rg or g._node is not None):
        if g.shape != _shape(v):
            g = g + np.zeros(_shape(v), dtype=np.result_type(v))
        return in_dtype_of(source, g)
    g = value_of(g)
    if is_traced(g) or is_traced(v):
        # Forward over the tape (inside wg.jvp): the gradient carries a tangent.
        if is_traced(g) and _shape(g) != _shape(v):
            g = broadcast_to(g, _shape(v))
        return constant(g)
    if type(v) is float:
        return constant(float(np.asarray(g).reshape(())))
    g = np.asarray(g)
    dt = np.result_type(v)
    if g.dtype != dt and dt.kind in "fc" and (g.dtype.kind == dt.kind or g.dtype.kind in "biu"):
        g = g.astype(dt)  # the source's dtype (float32 stays float32), as backward() gives
    if g.shape != np.shape(v):
        g = np.broadcast_to(g, np.shape(v)).copy()
    elif not g.flags.writeable:  # a broadcast view from the sweep: an array of its own
        g = g.copy()
    return constant(g)


def _assemble(rows: list[Any], shape: tuple[int, ...]) -> Any:
    """Stack ``rows`` (tensors, some recorded) into one tensor of ``shape``."""
    return reshape(wnp.stack(rows), shape)


# -- GradientTape -------------------------------------------------------------
class GradientTape(Recorder):
    """Record operations for automatic differentiation (as ``tf.GradientTape``).

    Operations run inside the ``with`` block are recorded when one of their
    inputs is watched: tensors must be :meth:`watch`\\ ed, trainable
    :class:`Variable`\\ s are watched automatically when read (unless
    ``watch_accessed_variables=False``). Operations run before the tape
    opened are not recorded: their results are constants to the tape.

    Parameters
    ----------
    persistent : bool
        Allow several :meth:`gradient` / :meth:`jacobian` calls. A
        non-persistent tape (the default) computes one set of gradients and
        then releases what it recorded.
    watch_accessed_variables : bool
        Watch every trainable variable read while the tape is recording.

    Examples
    --------
    >>> import wengert as wg
    >>> x, w = wg.tensor(3.0), wg.Variable(2.0)
    >>> with wg.GradientTape() as tape:
    ...     tape.watch(x)  # (trainable variables are watched without asking)
    ...     y = w * x * x
    >>> tape.gradient(y, [x, w])
    [tensor(12.), tensor(9.)]

    Nested tapes give second derivatives:

    >>> with wg.GradientTape() as outer:
    ...     outer.watch(x)
    ...     with wg.GradientTape() as inner:
    ...         inner.watch(x)
    ...         y = x ** 3
    ...     dy_dx = inner.gradient(y, x)
    >>> dy_dx.item(), outer.gradient(dy_dx, x).item()
    (27.0, 18.0)

    Variables are watched when read; a dict of sources gives a dict:

    >>> w, b = wg.Variable(2.0, name="w"), wg.Variable(1.0, name="b")
    >>> with wg.GradientTape() as tape:
    ...     loss = (w * 3.0 + b - 4.0) ** 2
    >>> grads = tape.gradient(loss, {"w": w, "b": b})
    >>> float(grads["w"]), float(grads["b"])
    (18.0, 6.0)
    >>> [v.name for v in tape.watched_variables()]
    ['w', 'b']
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = bool(persistent)
        self.watch_accessed_variables = bool(watch_accessed_variables)
        self._watched: dict[int, Tensor] = {}
        self._nodes: list[Any] = []
        self._node_ids: set[int] = set()
        self.recording = False
        self._active = False  # inside the ``with`` block
        self._paused = 0  # depth of stop_recording()
        self._done = False  # a non-persistent tape has been used
        self._entered = False
        self._token: Any = None
        self._kept: list[Any] = []  # the kept sweeps of the running computation
        self._shown: Any = None  # the kept sweep of the last gradient() (see last_sweep)

    @property
    def state(self) -> str:
        """``"new"`` (never entered), ``"recording"``, ``"paused"`` (inside
        ``stop_recording()``), ``"closed"`` (the block ended) or ``"used"`` (a
        non-persistent tape that computed its gradients)."""
        if self._active:
            return "recording" if self.recording else "paused"
        return "used" if self._done else "closed" if self._entered else "new"

    def __repr__(self) -> str:
        kind = "persistent " if self.persistent else ""
        n = len(self.recorded)  # a decomposition's parts are one equation
        return (f"<wg.GradientTape {kind}{self.state}: {n} equation{'' if n == 1 else 's'}, "
                f"{len(self._watched)} watched>")

    def _repr_html_(self) -> str | None:
        return html_of(self)

    # -- the recorder protocol (called by the recording path, wengert.reverse.recording) ----
    def tracks(self, t: Tensor) -> bool:
        """Whether ops on ``t`` are recorded by this tape (auto-watching variables)."""
        if id(t) in self._watched:
            return True
        node = t._node
        if node is not None and id(node) in self._node_ids:
            return True
        if (self.watch_accessed_variables and isinstance(t, Variable) and t.trainable
                and is_float_value(t._value)):
            self._watched[id(t)] = t
            return True
        return False

    def add(self, node: Any) -> None:
        self._nodes.append(node)
        self._node_ids.add(id(node))

    def owns(self, t: Tensor) -> bool:
        """Whether ``t`` is watched by or computed on this tape (no side effects)."""
        node = t._node
        return id(t) in self._watched or (node is not None and id(node) in self._node_ids)

    def created(self, node: Any) -> None:
        pass

    def _update(self) -> None:
        self.recording = self._active and not self._paused and not self._done

    # -- context manager ------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._active:
            raise ValueError(
                "Tape is still recording, This can happen if you try to re-enter an "
                "already-active tape."
            )
        if self._done:
            raise RuntimeError(_NON_PERSISTENT)
        self._active = True
        self._entered = True
        self._update()
        self._token = RECORDERS.set(RECORDERS.get() + (self,))
        return self

    def __exit__(self, *exc: object) -> None:
        self._active = False
        self._update()
        token, self._token = self._token, None
        if token is not None:
            RECORDERS.reset(token)

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Context manager in which this tape records nothing.

        Examples
        --------
        >>> import wengert as wg
        >>> v = wg.Variable(2.0)  # (watched: trainable variables are)
        >>> with wg.GradientTape() as tape:
        ...     with tape.stop_recording():
        ...         y = v * v
        ...     z = v * y
        >>> tape.gradient(z, v)  # y is a constant: dz/dv = y
        tensor(4.)
        """
        if not self.recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._paused += 1
        self._update()
        try:
            yield
        finally:
            self._paused -= 1
            self._update()

    def reset(self) -> None:
        """Forget everything recorded and watched, as if the tape were re-entered."""
        self._watched = {}
        self._nodes = []
        self._node_ids = set()
        self._done = False
        self._update()

    def watch(self, tensor: Any) -> None:
        """Watch a tensor (or a nested list/tuple/dict of them) for differentiation.

        Only the operations run on it after this call, while the tape is
        recording, are differentiated; its value so far is a constant.
        """
        for t in _flat(tensor):
            if type(t) is Dual:
                raise TypeError(
                    "GradientTape.watch got a dual number (forward mode): operations on a dual "
                    "number compute its tangent as they run and are not recorded by any tape, "
                    "so tape.gradient would have nothing to differentiate. Wrap it in a tensor "
                    "and compute with that: x = wg.tensor(d); tape.watch(x); y = f(x). The "
                    "tape then records the operations on x, and tape.gradient(y, x) holds dual "
                    "numbers: the gradient and its derivative along d's tangent (forward over "
                    "reverse)."
                )
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"GradientTape.watch: can only watch wengert tensors and Variables, got "
                    f"{type(t).__name__}. Wrap the value first: x = wg.tensor(value) (or "
                    "wg.Variable(value)), call tape.watch(x), and compute with x."
                )
            if not is_float_value(primal(t._value)):
                raise TypeError(
                    f"The dtype of the watched tensor must be floating (e.g. float64), got "
                    f"{t.dtype}. Create it with a float dtype: wg.tensor(value, dtype=float)."
                )
            self._watched.setdefault(id(t), t)

    @property
    def recorded(self) -> Tape:
        """The equations this tape recorded, in order (see :func:`wengert.tape_of`).

        Examples
        --------
        >>> import wengert as wg
        >>> with wg.GradientTape() as tape:
        ...     x = wg.tensor(2.0)
        ...     tape.watch(x)
        ...     y = x * x + 1.0
        >>> [eq.op.name for eq in tape.recorded]
        ['multiply', 'add']
        """
        return read_tape([], nodes=self._nodes)

    @property
    def last_sweep(self) -> Any:
        """The reverse sweep of the last :meth:`gradient` call as the view-keeping mode
        (``wg.keep_values()``, ``%load_ext wengert``) kept it: a
        :class:`~wengert.core.kept.SweepRecord`, or ``None`` (no such call, called outside
        that mode, or the last computation was a Jacobian: one sweep per row). The
        drawings of the tape show its adjoints.

        Examples
        --------
        >>> import wengert as wg
        >>> with wg.keep_values():
        ...     x = wg.tensor(3.0)
        ...     with wg.GradientTape() as tape:
        ...         tape.watch(x)
        ...         y = x * x
        ...     dy = tape.gradient(y, x)
        >>> [(step.op, step.g) for step in tape.last_sweep.steps], tape.last_sweep.leaves[0].ct
        ([('multiply', 1.0)], 6.0)
        """
        return self._shown

    def watched_variables(self) -> tuple[Variable, ...]:
        """The variables this tape watches, in the order they were first watched."""
        return tuple(t for t in self._watched.values() if isinstance(t, Variable))

    # -- gradients -----------------------------------------------------------
    def _start(self, what: str, level: float) -> bool:
        """Checks before a gradient computation; returns ``create_graph``."""
        if self._done:
            raise RuntimeError(_NON_PERSISTENT)
        if not self._entered:
            raise RuntimeError(
                f"GradientTape.{what} was called on a tape that never recorded anything: open "
                "it first (with wg.GradientTape() as tape: ...) and compute the target inside."
            )
        if self.recording:
            if self.persistent:
                warnings.warn(_IN_CONTEXT, UserWarning, stacklevel=3)
            else:
                self._done = True  # a spent tape stops recording (as TensorFlow pops it)
                self._update()
        if not GRAD_ENABLED.get():
            return False
        # The backward pass is recorded when something differentiates it: another
        # tape, or (for tensors of a transform's level) the transform itself.
        return (level > 0 and TRANSFORM_DEPTH.get() > 0) or any(
            r.recording for r in RECORDERS.get())

    def _finish(self) -> None:
        if not self.persistent:
            self._done = True
            self._update()
            if KEEPER.get() is None:  # the view-keeping mode keeps them for the views
                self._nodes = []
            self._node_ids = set()

    def _check_sources(self, sources: Any, what: str) -> tuple[list[Any], Any]:
        leaves, spec = flatten(sources)
        for s in leaves:
            if not isinstance(s, Tensor):
                raise TypeError(
                    f"GradientTape.{what}: sources must be wengert tensors or Variables watched "
                    f"by the tape, got {type(s).__name__}. Wrap the value with wg.tensor(...) "
                    "and tape.watch() it before computing, or use a wg.Variable."
                )
            if not is_float_value(primal(s._value)):
                raise TypeError(
                    f"The dtype of the source tensor must be floating (e.g. float64) when "
                    f"calling GradientTape.{what}, got {s.dtype}."
                )
        return leaves, spec

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = "none") -> Any:
        """The gradient of ``target`` with respect to ``sources``.

        Parameters
        ----------
        target : Tensor or nested list of Tensors
            What to differentiate. Several targets (or a non-scalar one) give
            the gradient of the sum of all their elements.
        sources : Tensor, or list, tuple or dict of Tensors
            Watched tensors or variables; the result has the same structure.
        output_gradients : array_like, or list, tuple or dict of them, optional
            One cotangent per target, with the target's shape (default ones), in the
            target's structure (a dict's entries matched by key).
        unconnected_gradients : {"none", "zero"}
            What to return for a source the target does not depend on.

        Returns
        -------
        Tensor, list, tuple or dict
            One tensor (or ``None``) per source. While an outer tape is
            recording, the result is itself recorded (higher derivatives).

        Raises
        ------
        RuntimeError
            On a second call on a non-persistent tape.
        """
        mode = _unconnected_mode(unconnected_gradients)
        src, spec = self._check_sources(sources, "gradient")
        targets = _flat(target)
        if output_gradients is None:
            seeds: list[Any] = [None] * len(targets)
        else:
            seeds = _paired(target, output_gradients)
            if len(seeds) != len(targets):
                raise ValueError(
                    f"GradientTape.gradient: got {len(seeds)} output_gradients for "
                    f"{len(targets)} targets; pass one per target, in the same structure."
                )
        for t in targets:
            if not isinstance(t, (Tensor, Dual, np.ndarray, np.generic, int, float, complex)):
                raise TypeError(
                    f"GradientTape.gradient: the target must be a tensor (or a nested list, "
                    f"tuple or dict of them), but it is {'None' if t is None else type(t).__name__}"
                    + (" (a function that returns nothing?)" if t is None else "")
                    + ". Pass the value computed under the tape."
                )
            if isinstance(t, (Tensor, Dual)) and not is_float_value(primal(t)):
                raise TypeError(
                    f"The dtype of the target tensor must be floating (e.g. float64) when "
                    f"calling GradientTape.gradient, got {t.dtype}."
                )
        self._check_levels(targets, src)
        level = max((t._level for t in targets if isinstance(t, Tensor)), default=0)
        create = self._start("gradient", level)
        self._kept = []
        try:
            grads = self._gradients(targets, seeds, src, create)
        finally:  # one sweep is what the views can show (a dual target takes two)
            self._shown = self._kept[0] if len(self._kept) == 1 else None
            self._kept = []
        self._finish()
        out = []
        for s, g in zip(src, grads):
            if g is None:
                out.append(_zeros_like(s) if mode == "zero" else None)
            else:
                out.append(_fit(g, s, create))
        return unflatten(spec, out)

    def _check_levels(self, targets: list[Any], sources: list[Tensor]) -> None:
        """Refuse a target traced by a functional transform that this tape did not record
        (its gradient could not depend on the transform's input), or that also depends on
        a source of an outer level (a Variable: the sweep of this level does not reach it,
        and the gradient would be None)."""
        for t in targets:
            if not (isinstance(t, Tensor) and is_transform_level(t._level)):
                continue
            name = transform_name(t._level)
            where = f"in {name}" if name else "inside a function given to wg.grad / wg.vjp"
            inputs = "its inputs" if name else "the transform's input"
            if not self.owns(t):
                raise RuntimeError(
                    f"GradientTape.gradient: the target was computed {where} from {inputs}, "
                    "which the tape does not watch, so the gradient could not depend on "
                    f"{'them' if name else 'that input'}. Watch "
                    f"{'them' if name else 'the transform' + chr(39) + 's input'} too "
                    "(tape.watch(x)), or use wg.grad for the inner gradient."
                )
            beneath = t._value
            while type(beneath) is Dual:  # (forward over this level: wg.hessian, wg.hvp)
                beneath = beneath.primal
            outer = [s for s in sources if s._level != t._level]
            if outer and isinstance(beneath, Tensor) and (beneath._rg or beneath._node):
                what = ("a Variable, which belongs to no transform (even made inside one)"
                        if isinstance(outer[0], Variable) else
                        "a tensor of no transform (made outside it, or by wg.tensor inside it)")
                raise RuntimeError(
                    f"GradientTape.gradient: the target was computed {where} from {inputs} "
                    f"and from the source, {what}; the tape cannot give the gradient with "
                    f"respect to that source as a function of {inputs} (it would return "
                    "None). Compute the inner gradient with wg.grad instead, e.g. "
                    "wg.grad(lambda v: v * x ** 2)(2.0) for a Variable v = wg.Variable(2.0)."
                )

    def _gradients(self, targets: list[Any], seeds: list[Any], src: list[Tensor],
                   create: bool) -> list[Any]:
        """Per source, the cotangent from ``targets`` (``None``: not connected).

        A dual-number target (``primal + ε·tangent`` over tensors, inside
        ``wg.jvp``) gives dual cotangents: one sweep from the primals, one from
        the tangents.
        """
        duals = [t for t in targets if isinstance(t, Dual)]
        if not duals:
            roots = []
            for i, (t, seed) in enumerate(zip(targets, seeds)):
                if isinstance(t, Tensor):
                    roots.append((_edge(t), self._seed(t, seed, i, create)))
            return self._sweep(roots, src, create)
        tag = max((d.tag for d in duals), key=lambda tg: tg.order)
        of_tag = [isinstance(t, Dual) and t.tag is tag for t in targets]
        primals = [t.primal if own else t for t, own in zip(targets, of_tag)]
        tangents = [t.tangent if own else None for t, own in zip(targets, of_tag)]
        parts = [self._gradients(primals, seeds, src, create),
                 self._gradients(tangents, seeds, src, create)]
        out = []
        for gp, gt in zip(*parts):
            if gp is None and gt is None:
                out.append(None)
                continue
            d = object.__new__(Dual)
            d.primal = gp if gp is not None else _zero_value(src[len(out)])
            d.tangent = gt if gt is not None else _zero_value(src[len(out)])
            d.tag = tag
            out.append(d)
        return out

    @staticmethod
    def _seed(t: Tensor, seed: Any, i: int, create: bool) -> Any:
        shape = t.shape
        v = t._value
        if seed is None:
            if type(primal(v)) is float:
                return 1.0
            return np.ones(shape, dtype=np.result_type(primal(v)))
        refuse_subclass(seed, f"GradientTape.gradient (output_gradients[{i}])")
        sv = value_of(seed)
        if _shape(sv) != shape:
            raise ValueError(
                f"GradientTape.gradient: output_gradients[{i}] has shape {_shape(sv)} but the "
                f"target has shape {shape}; pass a gradient with exactly the target's shape."
            )
        if not is_traced(sv) and type(sv) is not float:
            kind = np.result_type(sv).kind
            if kind not in "iufc":
                raise TypeError(
                    f"GradientTape.gradient: output_gradients[{i}] has dtype "
                    f"{np.result_type(sv)}; a gradient is a floating point array."
                )
            if kind == "c" and t.dtype.kind != "c":
                # a real target pairs with g through Re(g)·dy (as backward() does): the
                # imaginary part is the derivative along a direction the target cannot move
                sv = np.real(sv)
                seed = wnp.real(seed) if isinstance(seed, Tensor) else sv
        if isinstance(seed, Tensor):
            return seed if create else sv  # kept as a tensor if the backward pass is recorded
        if type(sv) is float:
            return sv
        return np.asarray(sv, dtype=np.result_type(sv, primal(v), np.float16))

    def _sweep(self, roots: list[tuple[Any, Any]], src: list[Tensor],
               create: bool) -> list[Any]:
        """One reverse sweep over this tape; the cotangent of each source (or ``None``)."""
        wanted = [_edge(s) for s in src]
        if not roots or not wanted:
            return [None] * len(src)
        hooked: set[int] = set()
        level = max(s._level for s in src)
        keeper = KEEPER.get()
        record = None if keeper is None else keeper.record(
            retain_graph=True, create_graph=create, plain=value_of,
            kind="GradientTape.gradient()")
        if record is not None:
            self._kept.append(record)
        with finishing(record):
            with observe_sweep(record) if record is not None else contextlib.nullcontext():
                node_cts, reached = backprop(
                    roots, wanted=[w for w in wanted if type(w) is Node],
                    retain_graph=True, grad_mode=create, lift=lifter(level) if create else None,
                    restrict=self._node_ids,
                )
            leaf_cts = {id(leaf): g for leaf, g in reached}
            for s in src:  # a source's own hooks (register_hook), as backward() runs them
                extra = s._extra
                g = leaf_cts.get(id(s))
                if g is not None and s._node is None and extra is not None \
                        and extra.get("hooks") and id(s) not in hooked:
                    hooked.add(id(s))
                    leaf_cts[id(s)] = run_hooks(extra["hooks"], g, "a leaf tensor")
                    if record is not None:
                        record.leaf_hooked(s, g, leaf_cts[id(s)], extra["hooks"])
        out = []
        for s, w in zip(src, wanted):
            if not self.owns(s):
                out.append(None)
            elif isinstance(w, Tensor):
                out.append(leaf_cts.get(id(w)))
            else:
                out.append(node_cts.get(id(w)))
        return out

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = "none",
                 parallel_iterations: Any = None, experimental_use_pfor: bool = True) -> Any:
        """The Jacobian of ``target`` with respect to each source.

        One reverse sweep per element of ``target``. Each result has shape
        ``target.shape + source.shape``; the structure of ``sources`` is kept.
        ``parallel_iterations`` and ``experimental_use_pfor`` are accepted for
        TensorFlow compatibility and ignored.

        Examples
        --------
        >>> import wengert as wg
        >>> x = wg.tensor([1.0, 2.0])
        >>> with wg.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.jacobian(y, x)
        tensor([[2., 0.],
                [0., 4.]])
        """
        mode = _unconnected_mode(unconnected_gradients)
        src, spec = self._check_sources(sources, "jacobian")
        if not isinstance(target, Tensor):
            raise TypeError(
                f"GradientTape.jacobian: the target must be a wengert tensor, got "
                f"{type(target).__name__}."
            )
        if not is_float_value(primal(target._value)):
            raise TypeError(
                f"The dtype of the target tensor must be floating (e.g. float64) when calling "
                f"GradientTape.jacobian, got {target.dtype}."
            )
        self._check_levels([target], src)
        create = self._start("jacobian", target._level)
        self._shown = None  # (one sweep per row: no one sweep to show)
        tshape = target.shape
        n = target.size
        v = primal(target._value)
        dtype = np.result_type(v)
        rows: list[list[Any]] = [[] for _ in src]
        edge = _edge(target)
        for i in range(n):
            if type(v) is float:
                seed: Any = 1.0
            else:
                seed = np.zeros(n, dtype=dtype)
                seed[i] = 1
                seed = seed.reshape(tshape)
            grads = self._sweep([(edge, seed)], src, create)
            for k, g in enumerate(grads):
                rows[k].append(g)
        self._finish()
        out = []
        for s, rs in zip(src, rows):
            sshape = _shape(s._value)
            full = tshape + sshape
            if n and all(g is None for g in rs) and mode == "none":
                out.append(None)
                continue
            fitted = [_zeros_like(s) if g is None else _fit(g, s, create) for g in rs]
            if create and any(g._rg or g._node is not None for g in fitted):
                out.append(_assemble(fitted, full))
                continue
            if any(is_traced(g._value) for g in fitted):
                out.append(constant(wnp.reshape(wnp.stack([g._value for g in fitted]), full)))
                continue
            # Each row is a gradient, in the source's dtype as gradient() gives it (a
            # complex target's rows for a real source are real: the gradients of Re(y[i])).
            jac = np.zeros((n,) + sshape, dtype=np.result_type(primal(s._value)))
            for i, g in enumerate(fitted):
                jac[i] = g._value
            out.append(constant(jac.reshape(full)))
        return unflatten(spec, out)

    def batch_jacobian(self, target: Any, source: Any, unconnected_gradients: Any = "none",
                       parallel_iterations: Any = None,
                       experimental_use_pfor: bool = True) -> Any:
        """The Jacobian of each example of a batch: ``result[i]`` is the Jacobian of
        ``target[i]`` with respect to ``source[i]`` (as ``tf.GradientTape.batch_jacobian``).

        The result has shape ``(batch,) + target.shape[1:] + source.shape[1:]``: the
        diagonal blocks of :meth:`jacobian` over the batch axis (computed from it, so
        they are exact even when examples depend on each other, which TensorFlow
        assumes they do not). ``parallel_iterations`` and ``experimental_use_pfor`` are
        accepted for TensorFlow compatibility and ignored.

        Examples
        --------
        >>> import wengert as wg
        >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> with wg.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.batch_jacobian(y, x)
        tensor([[[2., 0.],
                 [0., 4.]],
        <BLANKLINE>
                [[6., 0.],
                 [0., 8.]]])
        """
        for what, t in (("target", target), ("source", source)):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"GradientTape.batch_jacobian: the {what} must be one wengert tensor, got "
                    f"{type(t).__name__} (use jacobian for several sources)."
                )
            if not t.shape:
                raise ValueError(
                    f"GradientTape.batch_jacobian: the {what} must have a batch axis (at least "
                    "1 dimension), but it is 0-d; use jacobian or gradient."
                )
        if target.shape[0] != source.shape[0]:
            raise ValueError(
                f"GradientTape.batch_jacobian: the target's batch size {target.shape[0]} and "
                f"the source's {source.shape[0]} differ: row i of each must be the same example."
            )
        jac = self.jacobian(target, source, unconnected_gradients)
        if jac is None:
            return None
        # (b, *t, b', *s) -> (b, b', *t, *s) -> the diagonal b = b', moved to the front
        paired = wnp.moveaxis(jac, target.ndim, 1)
        return wnp.moveaxis(wnp.diagonal(paired, 0, 0, 1), -1, 0)
