"""Running a cell of ordinary NumPy code with some of its names as differentiable inputs.

:func:`run_autodiff` is what the ``%%autodiff`` magic does, without IPython:
it rewrites the cell (:mod:`wengert.jupyter.cell`) so that each input name
becomes a leaf the moment it is bound, runs it in a namespace inside a
transform level of its own, and differentiates the output with respect to
every input:

* ``mode="reverse"``: the inputs are tensors; one reverse sweep (for a
  scalar output; one per output entry for a Jacobian) gives the gradients.
* ``mode="forward"``: every input gets a forward-mode perturbation of its own
  (ε₁, ε₂, … in the order of ``inputs``, each carrying one tangent per entry
  of its input), so one run of the cell pushes all tangents; the tensors over
  those dual numbers record the tape that the views show.
* ``mode="both"``: the forward run, plus a reverse sweep over the same tape,
  and a check that the two agree.

Because the cell runs inside a transform, converting an input's value to a
Python number (``float(x)``, ``math.exp(x)``) raises instead of silently
dropping its gradient, as in ``wg.grad``. Whatever happens, the namespace is
left with plain values (NumPy arrays and numbers) for everything the cell
computed from the inputs, inputs that were tensors before are restored, and
wengert's state (grad mode, levels, recorders) is as before: the cell runs in
a copy of the current context.

Examples
--------
>>> ns = {"np": __import__("numpy")}
>>> result = run_autodiff("y = (x * w - 1.0) ** 2", ns, ["x", "w"],
...                       preset={"x": 2.0, "w": 3.0})
>>> result.value, result.grads["x"], result.grads["w"]
(25.0, 30.0, 20.0)
>>> type(ns["y"]).__name__, ns["x"]
('float', 2.0)
"""

from __future__ import annotations

import contextlib
import contextvars
import linecache
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.modes import enable_grad, transform_scope
from ..core.sweep import SweepObserver, observe_sweep
from ..core.tape import Tape
from ..core.tree import flatten, unflatten
from ..dual import Dual
from ..forward import perturbation
from ..tapes import keep_values, source_lines, tape_of
from ..tensor import Tensor
from ..transforms import leaf_for, of_level, pullback, unbox_level
from .card import card_html, modes_agree
from .cell import BIND, OUT, rewrite_cell
from .drawing import draw
from .explain import explain
from .frames import explorer_frames
from .render import names_from_namespace
from .widget import explore

__all__ = ["MODES", "VIEWS", "AutodiffResult", "run_autodiff", "AutodiffUsageError"]

MODES = ("reverse", "forward", "both")
#: What the result card can show (``--show``).
VIEWS = ("value", "grads", "tape", "graph", "adjoint", "vjp")
#: The most tangent entries forward mode pushes at once (the product over the inputs of
#: one plus their size, minus one): beyond it, reverse mode is the tool.
MAX_TANGENTS = 4096
#: The most output entries whose Jacobian rows reverse mode sweeps one by one.
MAX_JACOBIAN_ROWS = 1024
#: In ``both`` mode the explorer's frames are computed with the cell (its dual numbers'
#: tags close when it ends), for tapes of at most this many equations.
MAX_FRAMED = 20_000


class AutodiffUsageError(ValueError):
    """A misuse of ``%%autodiff`` (an unknown input, a non-numeric output, ...); the
    magic shows it as a usage error."""


@dataclass
class AutodiffResult:
    """What ``%%autodiff`` computed (bound to ``_autodiff`` in the notebook).

    Attributes
    ----------
    output_name : str
        The name of the output (``"output"`` for the cell's last expression).
    value : float or ndarray
        The output's value.
    grads : dict
        Input name -> derivative of the output with respect to it: the gradient
        (same shape as the input) for a scalar output, the Jacobian
        (output shape + input shape) otherwise. In forward mode these are the
        tangents; in ``both`` the reverse-mode results.
    mode : str
        ``"reverse"``, ``"forward"`` or ``"both"``.
    inputs : tuple of str
        The input names, in order.
    input_values : dict
        Input name -> its value at the time it became a leaf.
    tangents : dict or None
        Forward mode's derivatives (``forward`` and ``both``).
    agreement : dict or None
        In ``both``: input name -> largest absolute difference between the two modes.
    tape : Tape
        The recorded equations (values kept, source lines recorded).
    output : Tensor or None
        The output tensor (``None`` when it does not depend on the inputs).
    leaf_names : dict
        ``id`` of each leaf tensor -> the input's name, for the views.
    adjoints : dict
        Equation index -> the cotangent it received in the reverse sweep (scalar
        outputs in ``reverse`` and ``both`` mode).
    views : tuple of str
        What the card shows (``--show``).
    source : str
        The cell's code.
    silenced : bool
        The cell ended with ``;``: the magic shows no card.
    names : dict
        The user's names of the tape's values (leaves, results, constants), for the views.
    """

    output_name: str
    value: Any
    grads: dict[str, Any]
    mode: str
    inputs: tuple[str, ...]
    input_values: dict[str, Any]
    tangents: dict[str, Any] | None
    agreement: dict[str, float] | None
    tape: Tape
    output: Tensor | None = field(repr=False)
    leaf_names: dict[int, str] = field(repr=False)
    adjoints: dict[int, Any] = field(repr=False)
    views: tuple[str, ...] = ("value", "grads")
    source: str = field(default="", repr=False)
    silenced: bool = field(default=False, repr=False)
    names: dict[Any, str] = field(default_factory=dict, repr=False)
    extras: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def explanation(self) -> Any:
        """``wg.explain``'s answer for ``--explain NAME`` (``None`` without it)."""
        return self.extras.get("explanation")

    def explore(self, **options: Any) -> Any:
        """The explorer widget (``wg.explore``) stepping through this cell's computation."""
        frames = self.extras.get("frames")
        if frames is not None and not options:
            return explore(self, frames=frames)
        if self.mode == "forward":
            options.setdefault("mode", "forward")
        return explore(self, **options)

    @property
    def graph(self) -> Any:
        """The tape drawn with Graphviz (``wg.draw``): a ``graphviz.Digraph``."""
        return draw(self)

    def _repr_html_(self) -> str:
        return card_html(self)

    @property
    def agree(self) -> bool | None:
        """In ``both`` mode, whether forward and reverse mode agree (to rounding)."""
        if self.agreement is None:
            return None
        return all(modes_agree(d, self.grads[k]) for k, d in self.agreement.items())

    def __repr__(self) -> str:
        lines = [f"%%autodiff ({self.mode} mode): {self.output_name} = {_text(self.value)}"]
        for name in self.inputs:
            lines.append(f"  ∂{self.output_name}/∂{name} = {_text(self.grads[name])}")
        if self.agreement is not None:
            verdict = "agree" if self.agree else "DISAGREE"
            worst = max(self.agreement.values(), default=0.0)
            lines.append(f"  forward and reverse mode {verdict} (largest difference {worst:.1e})")
        return "\n".join(lines)


def _text(v: Any) -> str:
    a = np.asarray(v)
    if a.ndim == 0:
        return f"{a.item():.6g}"
    with np.printoptions(precision=6, threshold=20, edgeitems=3):
        return np.array2string(a, separator=", ").replace("\n", " ")


# -- values -------------------------------------------------------------------------------
def _primal_all(v: Any) -> Any:
    """``v`` with every forward-mode perturbation dropped."""
    while type(v) is Dual:
        v = v.primal
    return v


def _component(v: Any, tag: Any) -> Any:
    """The derivative part of ``v`` along ``tag``, every other perturbation dropped
    (``None``: ``v`` does not depend on it)."""
    while type(v) is Dual:
        if v.tag is tag:
            return _primal_all(v.tangent)
        v = v.primal
    return None


def _plain(v: Any) -> Any:
    """A plain NumPy value or Python number (a 0-d float64 array gives a float)."""
    v = _primal_all(v)
    if isinstance(v, Tensor):  # a tensor of an outer level: its value
        v = v.numpy()
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype == np.float64:
        return float(v)
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype == np.complex128:
        return complex(v)
    return v


def _input_value(name: str, value: Any, forward: bool = False) -> Any:
    """The value an input's leaf starts from: numbers and float or complex arrays as given
    (integers and booleans become float64); anything else is refused, and complex values
    in forward mode (``forward``), which pushes one real tangent per entry."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise AutodiffUsageError(
            f"%%autodiff: input {name!r} is {type(value).__name__} {value!r}; inputs must be "
            "numbers or arrays of floats (e.g. x = 2.0 or x = np.array([1.0, 2.0]))."
        )
    if type(value) is float:
        return value
    if isinstance(value, int):
        return float(value)
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise AutodiffUsageError(f"%%autodiff: input {name!r} is not an array ({e}).") from e
    if a.dtype.kind == "c":
        if forward:
            raise AutodiffUsageError(
                f"%%autodiff: input {name!r} is complex ({a.dtype}), and forward mode "
                "(--mode forward or both) pushes one real tangent per entry, which gives "
                "only the derivative "
                "along the real axis; use --mode reverse, whose gradient follows wengert's "
                "complex convention (df/dx − i·df/dy), or make the real and imaginary parts "
                "two real inputs."
            )
        return a if a.ndim else complex(a)
    if a.dtype.kind in "biu":
        return a.astype(np.float64)
    if a.dtype.kind != "f":
        raise AutodiffUsageError(
            f"%%autodiff: input {name!r} has dtype {a.dtype}; inputs must be numbers or "
            "arrays of floats."
        )
    return a


# -- the run -----------------------------------------------------------------------------
class _Inputs:
    """The binding hook of one run: makes each input a leaf of ``level`` when it is bound
    (in forward mode a tensor over a dual number of the input's own tag)."""

    def __init__(self, names: Sequence[str], level: float, tags: Mapping[str, Any] | None):
        self.names = tuple(names)
        self.level = level
        self.tags = tags
        self.leaves: dict[str, Tensor] = {}
        self.leaf_names: dict[int, str] = {}  # id of every leaf ever made -> its input's name
        self.values: dict[str, Any] = {}

    def __call__(self, name: str, value: Any) -> Any:
        if of_level(value, self.level):
            return value  # computed in this cell from the inputs: not a new leaf
        start = _input_value(name, value, forward=self.tags is not None)
        self.values[name] = _plain(start) if not isinstance(start, Tensor) else start
        if self.tags is not None:
            start = self._dual(name, start)
        leaf = leaf_for(start, self.level)
        self.leaves[name] = leaf
        self.leaf_names[id(leaf)] = name
        return leaf

    def _dual(self, name: str, value: Any) -> Any:
        tag = self.tags[name]
        if type(value) is float:
            return Dual(value, 1.0, tag)
        shape = np.shape(_primal_all(value.numpy() if isinstance(value, Tensor) else value))
        n = math.prod(shape)
        if n == 0:
            return value  # nothing to perturb
        tag.batch = n
        dtype = np.result_type(value.numpy() if isinstance(value, Tensor) else value)
        total = math.prod(1 + math.prod(np.shape(v)) for v in self.values.values()) - 1
        if total > MAX_TANGENTS:
            raise AutodiffUsageError(
                f"%%autodiff --mode forward: the inputs {', '.join(self.values)} need {total:,} "
                f"tangents pushed at once (forward mode gives every input its own perturbation, "
                f"one tangent per entry, nested), more than {MAX_TANGENTS:,}. Use "
                "--mode reverse: one reverse sweep gives the gradient for every input."
            )
        return Dual(value, np.eye(n, dtype=dtype).reshape((n,) + shape), tag)


class _AdjointRecorder(SweepObserver):
    """Keeps the cotangent each node received in a sweep."""

    def __init__(self) -> None:
        self.received: dict[int, Any] = {}

    def step(self, node: Any, g: Any, sent: Any) -> None:
        self.received[id(node)] = g


def _float_names(tape: Tape, ns: Mapping[str, Any], before: Mapping[str, float],
                 known: Mapping[Any, str]) -> dict[Any, str]:
    """Names of the tape's float constants that are variables the notebook held before the
    cell and still holds (literals in the cell are other objects, or share no name)."""
    where: dict[int, list[tuple[int, int]]] = {}
    for eq in tape:
        for position, inp in enumerate(eq.inputs):
            if inp.source == "constant" and type(inp.value) is float:
                where.setdefault(id(inp.value), []).append((eq.index, position))
    found: dict[Any, str] = {}
    for name, value in before.items():
        if ns.get(name) is value:
            for key in where.get(id(value), ()):
                if key not in known:
                    found.setdefault(key, name)
    return found


def _output_of(cell: Any, ns: Mapping[str, Any], of: str | None) -> tuple[str, Any]:
    if of is not None:
        if of not in ns:
            raise AutodiffUsageError(f"%%autodiff --of {of}: the cell did not define {of!r}.")
        return of, ns[of]
    if cell.last_expression and ns[OUT] is not None:
        return "output", ns[OUT]
    if cell.last_assigned is not None:
        return cell.last_assigned, ns[cell.last_assigned]
    raise AutodiffUsageError(
        "%%autodiff: the cell has no output: end it with an expression, assign a name, or "
        "say which name is the output with --of NAME."
    )


def _check_output(name: str, out: Any, level: float) -> Any:
    value = _primal_all(unbox_level(out, level))
    if isinstance(value, Tensor):
        value = value.numpy()
    ok = isinstance(value, (float, int, np.ndarray, np.generic)) and not isinstance(value, bool)
    if ok and np.asarray(value).dtype.kind == "c":
        raise AutodiffUsageError(
            f"%%autodiff: the output {name!r} is complex ({np.asarray(value).dtype}); a "
            "gradient needs a real output (as wg.grad and JAX's grad). Make the output real, "
            "e.g. np.abs(w) ** 2 or np.real(w), or name a real variable with --of NAME."
        )
    if not ok or np.asarray(value).dtype.kind not in "fiu":
        what = type(value).__name__
        raise AutodiffUsageError(
            f"%%autodiff: the output {name!r} is {what}"
            + (f" of dtype {np.asarray(value).dtype}" if ok else "")
            + "; it must be a floating point number or array computed from the inputs. "
            "Say which variable is the output with --of NAME."
        )
    return value


def _as_derivative(t: Any, tag: Any, out_shape: tuple[int, ...], in_value: Any) -> np.ndarray:
    """Forward mode's tangent of the output along ``tag`` as ``out_shape + in_shape``."""
    in_shape = np.shape(in_value)
    if t is None:
        return _zeros(out_shape + in_shape)
    t = np.asarray(t)
    if tag.batch is None:  # a scalar input: one tangent
        return _maybe_float(t.reshape(out_shape))
    n = tag.batch
    return _maybe_float(np.moveaxis(t.reshape((n,) + out_shape), 0, -1).reshape(
        out_shape + in_shape))


def _zeros(shape: tuple[int, ...]) -> Any:
    return 0.0 if shape == () else np.zeros(shape)


def _maybe_float(a: np.ndarray) -> Any:
    return float(a) if a.ndim == 0 and a.dtype == np.float64 else a


def _reverse(out: Any, leaves: list[Tensor], out_shape: tuple[int, ...],
             in_values: list[Any]) -> tuple[list[Any], dict[int, Any]]:
    """Gradients (a scalar output) or Jacobians by reverse sweeps; the cotangents the
    nodes received (scalar outputs only). NumPy's floating point warnings are silenced:
    an inf or NaN shows in the card (and ``--explain`` says where it came from)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _sweeps(out, leaves, out_shape, in_values)


def _sweeps(out: Any, leaves: list[Tensor], out_shape: tuple[int, ...],
            in_values: list[Any]) -> tuple[list[Any], dict[int, Any]]:
    size = math.prod(out_shape)
    if size == 1:
        seed = 1.0 if out_shape == () else np.ones(out_shape)
        recorder = _AdjointRecorder()
        with observe_sweep(recorder):
            cts = pullback(out, leaves, seed)
        return [_plain(g) for g in cts], recorder.received
    if size > MAX_JACOBIAN_ROWS:
        raise AutodiffUsageError(
            f"%%autodiff: the output has {size:,} entries; reverse mode would sweep once per "
            f"entry to build its Jacobian (at most {MAX_JACOBIAN_ROWS:,}). Reduce it to a "
            "scalar (a loss), or pick a scalar with --of NAME."
        )
    rows: list[list[Any]] = [[] for _ in leaves]
    for k in range(size):
        seed = np.zeros(size)
        seed[k] = 1.0
        for i, g in enumerate(pullback(out, leaves, seed.reshape(out_shape))):
            rows[i].append(np.asarray(_plain(g)))
    jacobians = [np.stack(r).reshape(out_shape + np.shape(v)) for r, v in zip(rows, in_values)]
    return jacobians, {}


def _clean(value: Any, level: float) -> tuple[Any, bool]:
    """``value`` with the run's tensors (and dual numbers) replaced by plain values, and
    whether anything changed; containers are rebuilt (lists and dicts in place)."""
    leaves, spec = flatten(value)
    changed = False
    plain = []
    for leaf in leaves:
        if of_level(leaf, level) or (type(leaf) is Dual and leaf.tag.active):
            leaf = _plain(unbox_level(leaf, level))
            changed = True
        plain.append(leaf)
    if not changed:
        return value, False
    rebuilt = unflatten(spec, plain)
    if type(value) is list:
        value[:] = rebuilt
        return value, True
    if type(value) is dict:
        value.update(rebuilt)
        return value, True
    return rebuilt, True


def _restore(ns: dict[str, Any], before: Mapping[str, Any], inputs: Sequence[str],
             level: float) -> None:
    """Leave the namespace with plain values: the run's tensors become NumPy values, and
    inputs that were tensors before the cell are restored."""
    for key in list(ns):
        value = ns[key]
        if isinstance(value, (Tensor, Dual, list, tuple, dict)):
            new, changed = _clean(value, level)
            if changed:
                ns[key] = new
    for name in inputs:
        original = before.get(name)
        if isinstance(original, Tensor) and name in ns and not isinstance(ns[name], Tensor):
            ns[name] = original
    ns.pop(BIND, None)
    ns.pop(OUT, None)


def run_autodiff(
    source: str,
    namespace: dict[str, Any],
    inputs: Sequence[str],
    *,
    of: str | None = None,
    mode: str = "reverse",
    views: Sequence[str] = ("value", "grads"),
    filename: str = "<autodiff>",
    preset: Mapping[str, Any] | None = None,
    explain: str | None = None,
) -> AutodiffResult:
    """Run ``source`` in ``namespace`` with ``inputs`` as differentiable leaves.

    Parameters
    ----------
    source : str
        The cell's code.
    namespace : dict
        Where it runs (the notebook's user namespace); updated as by any cell.
    inputs : sequence of str
        The names to differentiate with respect to; each must be defined before the
        cell or assigned in it.
    of : str, optional
        The output's name; by default the last expression, else the last assigned name.
    mode : {"reverse", "forward", "both"}
    views : sequence of str
        What the result card shows (see :data:`VIEWS`).
    filename : str
        The name the cell's code is compiled under (tracebacks, source lines).
    preset : mapping, optional
        Values to bind in ``namespace`` before the cell runs (tests, examples).
    explain : str, optional
        An input whose derivative to explain (``wg.explain``: why it is None, zero or
        NaN, where, and the fix); the card shows it, ``result.explanation`` holds it.

    Returns
    -------
    AutodiffResult

    Raises
    ------
    AutodiffUsageError
        For a misuse (no inputs, an input the cell never defines, a non-numeric
        output); an exception raised by the cell itself propagates unchanged.
    """
    __tracebackhide__ = True  # noqa: F841 (IPython hides this frame in tracebacks)
    if mode not in MODES:
        raise AutodiffUsageError(f"%%autodiff --mode {mode}: choose one of {', '.join(MODES)}.")
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        raise AutodiffUsageError(
            f"%%autodiff --show {','.join(unknown)}: choose among {', '.join(VIEWS)} or all.")
    names = tuple(dict.fromkeys(inputs))
    if explain is not None and explain not in names:
        raise AutodiffUsageError(
            f"%%autodiff --explain {explain}: name one of the inputs ({', '.join(names)}).")
    if not names:
        raise AutodiffUsageError("%%autodiff: name at least one input, e.g. %%autodiff x w")
    bad = [n for n in names if not n.isidentifier()]
    if bad:
        raise AutodiffUsageError(f"%%autodiff: {', '.join(bad)} is not a variable name.")
    if preset:
        namespace.update(preset)
    cell = rewrite_cell(source, names, filename)
    missing = [n for n in names if n not in namespace and n not in cell.bound_inputs]
    if missing:
        raise AutodiffUsageError(
            f"%%autodiff: input {', '.join(map(repr, missing))} is neither defined before "
            "the cell nor assigned in it."
        )
    code = compile(cell.tree, filename, "exec")
    if filename not in linecache.cache:  # so that tracebacks and the tape show the lines
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    before = {n: namespace.get(n) for n in names}
    return contextvars.copy_context().run(
        _run, cell, code, namespace, names, before, of, mode, tuple(views), source, explain)


def _run(cell: Any, code: Any, ns: dict[str, Any], names: tuple[str, ...],
         before: Mapping[str, Any], of: str | None, mode: str, views: tuple[str, ...],
         source: str, explain_name: str | None) -> AutodiffResult:
    __tracebackhide__ = True  # noqa: F841 (IPython hides this frame in tracebacks)
    with contextlib.ExitStack() as stack:
        tags = None
        if mode != "reverse":
            tags = {n: stack.enter_context(perturbation(f"∂{n}")) for n in names}
        level = stack.enter_context(transform_scope())
        stack.enter_context(enable_grad())
        stack.enter_context(source_lines())
        stack.enter_context(keep_values())
        binder = _Inputs(names, level, tags)
        # numbers the notebook held before the cell: a constant on the tape that is one of
        # them (the same object) is shown under its name (x, y of the data)
        floats_before = {k: v for k, v in ns.items() if type(v) is float and k[:1] != "_"}
        try:
            for n in names:
                if n in ns and n not in cell.bound_inputs:
                    ns[n] = binder(n, ns[n])
            ns[BIND] = binder
            exec(code, ns)  # noqa: S102 (running the user's cell is the point)
            output_name, out = _output_of(cell, ns, of)
            value = _check_output(output_name, out, level)
            out_shape = np.shape(value)
            leaves = [binder.leaves[n] for n in names if n in binder.leaves]
            unbound = [n for n in names if n not in binder.leaves]
            if unbound:
                raise AutodiffUsageError(
                    f"%%autodiff: input {', '.join(map(repr, unbound))} was never bound "
                    "(an assignment in a branch that did not run?)."
                )
            in_values = [binder.values[n] for n in names]
            tensor_out = out if isinstance(out, Tensor) and out.requires_grad else None
            tape = tape_of(tensor_out) if tensor_out is not None else Tape([], [], [])
            adjoints: dict[int, Any] = {}
            grads: dict[str, Any] = {}
            tangents = agreement = None
            if mode != "forward":
                got, received = _reverse(out, leaves, out_shape, in_values)
                grads = dict(zip(names, got))
                adjoints = {eq.index: _plain(received[id(eq.node)]) for eq in tape
                            if id(eq.node) in received}
            if tags is not None:
                raw = unbox_level(out, level)
                tangents = {n: _as_derivative(_component(raw, tags[n]), tags[n], out_shape,
                                              binder.values[n]) for n in names}
                if mode == "forward":
                    grads = tangents
                else:
                    agreement = {n: float(np.max(np.abs(np.asarray(grads[n], float)
                                                        - np.asarray(tangents[n], float)),
                                                 initial=0.0)) for n in names}
            value_names = names_from_namespace(tape, ns)
            value_names.update(_float_names(tape, ns, floats_before, value_names))
            for i, leaf in enumerate(tape.leaves):
                if id(leaf) in binder.leaf_names:
                    value_names[f"x{i}"] = binder.leaf_names[id(leaf)]
            if mode != "forward" and math.prod(out_shape) == 1:
                adjoints.update({n: g for n, g in grads.items()})
            extras: dict[str, Any] = {}
            if mode == "both" and tensor_out is not None and len(tape) <= MAX_FRAMED:
                # the sweep over dual numbers needs their tags, which close with the cell
                extras["frames"] = explorer_frames(
                    tape, value_names=value_names,
                    leaf_names=[binder.leaf_names.get(id(leaf), f"x{i}")
                                for i, leaf in enumerate(tape.leaves)])
            if explain_name is not None:
                extras["explanation"] = explain(out, binder.leaves[explain_name],
                                                source=source, namespace=ns)
            return AutodiffResult(
                output_name=output_name, value=_plain(value), grads=grads, mode=mode,
                inputs=names, input_values={n: binder.values[n] for n in names},
                tangents=tangents, agreement=agreement, tape=tape, output=tensor_out,
                leaf_names=binder.leaf_names, adjoints=adjoints, views=views, source=source,
                silenced=cell.silenced, names=value_names, extras=extras,
            )
        finally:
            _restore(ns, before, names, level)

