"""Running a cell of ordinary NumPy code with some of its names as differentiable inputs.

:func:`run_autodiff` is what the ``%%autodiff`` magic does, without IPython:
it rewrites the cell (:mod:`wengert.jupyter.magic.cell`) so that every binding it
makes is reported when it runs, runs it in a namespace inside a transform
level of its own, where each input becomes a leaf the moment it is bound
(:mod:`wengert.jupyter.magic.bindings` says which value is the input when it is
bound again), and differentiates the output with respect to every input:

* ``mode="reverse"``: the inputs are tensors; one reverse sweep (for a
  scalar output; one per output entry for a Jacobian) gives the gradients.
* ``mode="forward"``: every input gets a forward-mode perturbation of its own
  (ε₁, ε₂, … in the order of ``inputs``, each carrying one tangent per entry
  of its input), so one run of the cell pushes all tangents; the tensors over
  those dual numbers record the tape that the views show.
* ``mode="both"``: the forward run, plus a reverse sweep over the same tape,
  and a check that the two agree.

The output is ``of``, else the cell's last expression (when it is a number
or an array), else the name of the last binding *executed* (wherever it
stands: in a loop, a branch, a function defined in the cell) whose value
depends on the inputs, else the last one holding a number. When that choice
is not plain from the code, the result's notes say which name was taken and
how to pick another; they also say what the derivative of a rebound input
means, and why a derivative is not shown where wengert cannot know it (an
input rebound by code the rewrite does not see).

Because the cell runs inside a transform, converting an input's value to a
Python number (``float(x)``, ``math.exp(x)``) raises instead of silently
dropping its gradient, as in ``wg.grad``. Whatever happens, nothing the
namespace reaches holds a value of the cell's transform afterwards
(:mod:`wengert.jupyter.magic.plain`): variables, items of lists and dicts,
attributes of the user's objects and closures of functions defined in the
notebook hold plain values (NumPy arrays and numbers); a tensor the notebook
held as an input stays that tensor; and wengert's state (grad mode, levels,
recorders) is as before: the cell runs in a copy of the current context.

Examples
--------
>>> ns = {"np": __import__("numpy")}
>>> result = run_autodiff("y = (x * w - 1.0) ** 2", ns, ["x", "w"],
...                       preset={"x": 2.0, "w": 3.0})
>>> result.value, result.grads["x"], result.grads["w"]
(25.0, 30.0, 20.0)
>>> type(ns["y"]).__name__, ns["x"]
('float', 2.0)
>>> r = run_autodiff("x = 2.0\\nfor i in range(3):\\n    x = x - 0.1 * 2 * x\\n"
...                  "    loss = x ** 2", ns, ["x"])
>>> r.output_name, round(r.grads["x"], 6)
('loss', 1.048576)
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import keyword
import linecache
import math
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from wengert.core.equations import Input, Tape
from wengert.core.formatting import summarize
from wengert.core.kept import KEEPER, Keeper
from wengert.core.levels import LEVEL_NAMES
from wengert.core.modes import enable_grad, transform_scope
from wengert.core.sweep import SweepObserver, observe_sweep, run_hooks
from wengert.core.sweep_fast import backprop
from wengert.forward.dual import Dual
from wengert.jupyter.explainer.explain import explain
from wengert.jupyter.explorer.frames import explorer_frames
from wengert.jupyter.explorer.widget import explore
from wengert.jupyter.magic.bindings import (
    MAX_TANGENTS,
    AutodiffUsageError,
    CellRun,
    numeric,
    plain,
    primal_all,
)
from wengert.jupyter.magic.card import card_html, modes_agree, modes_difference
from wengert.jupyter.magic.cell import AT, BIND, OUT, TICK, rewrite_cell
from wengert.jupyter.magic.plain import caches, clear_caches, make_plain
from wengert.jupyter.views.drawing import draw
from wengert.jupyter.views.subject import names_from_namespace
from wengert.reverse.tape_reading import keep_values, source_lines, tape_of
from wengert.reverse.tensor import Tensor
from wengert.transforms.forward import perturbation
from wengert.transforms.reverse import pullback, unbox_level

__all__ = ["MODES", "VIEWS", "AutodiffResult", "run_autodiff", "AutodiffUsageError",
           "MAX_TANGENTS"]

MODES = ("reverse", "forward", "both")
#: What the result card can show (``--show``).
VIEWS = ("value", "grads", "tape", "graph", "adjoint", "vjp")
#: The most output entries whose Jacobian rows reverse mode sweeps one by one.
MAX_JACOBIAN_ROWS = 1024
#: In ``both`` mode the explorer's frames are computed with the cell (its dual numbers'
#: tags close when it ends), for tapes of at most this many equations.
MAX_FRAMED = 20_000
#: The file name cells are compiled under when the caller gives none.
DEFAULT_FILENAME = "<autodiff>"


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
        tangents; in ``both`` the reverse-mode results. ``None`` where wengert
        cannot know it (the notes say why).
    mode : str
        ``"reverse"``, ``"forward"`` or ``"both"``.
    inputs : tuple of str
        The input names, in order.
    input_values : dict
        Input name -> the value of its leaf (the value the derivative is taken at).
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
        Variable name (``"t3"``, ``"x0"``) -> the cotangent it received in the reverse
        sweep (scalar outputs in ``reverse`` and ``both`` mode); each output of a
        decomposition has its own.
    views : tuple of str
        What the card shows (``--show``).
    source : str
        The cell's code.
    silenced : bool
        The cell ended with ``;``: the magic shows no card.
    names : dict
        The user's names of the tape's values (leaves, results, constants), for the views.
    notes : tuple of str
        What the numbers mean where the cell leaves a doubt: which name was taken as the
        output, what the derivative of a rebound input is, why one is not shown.
    level : int
        The transform level the cell ran at (views that replay its sweep reopen it).
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
    adjoints: dict[str, Any] = field(repr=False)
    views: tuple[str, ...] = ("value", "grads")
    source: str = field(default="", repr=False)
    silenced: bool = field(default=False, repr=False)
    names: dict[Any, str] = field(default_factory=dict, repr=False)
    extras: dict[str, Any] = field(default_factory=dict, repr=False)
    notes: tuple[str, ...] = ()
    level: int = field(default=0, repr=False)

    @property
    def explanation(self) -> Any:
        """``wg.explain``'s answer for ``--explain NAME`` (``None`` without it)."""
        return self.extras.get("explanation")

    def replay(self) -> Any:
        """A context in which the cell's sweep can run again (a checkpoint's rule
        recomputes its function at the cell's level, which closed with the cell)."""
        if self.mode != "forward" and self.changed_constants():  # (forward mode: no sweep)
            raise RuntimeError(_changed_constants_text(self.changed_constants()))
        return transform_scope(self.level) if self.level else contextlib.nullcontext()

    def sweep_kept(self) -> bool:
        """Whether the views show the cell's own reverse sweep, as it ran (hooks
        included), not a replay: a scalar output in reverse mode, while the view-keeping
        mode holds it (a notebook's budget may release it)."""
        record = self.extras.get("record")
        return record is not None and record.released is None and record.complete

    def changed_constants(self) -> list[str]:
        """The constants of the cell (arrays the notebook holds, such as its data) that were
        changed in place since the cell ran. The views show no value for them, and the
        cell's sweep is not replayed with their new values (it would show numbers the
        cell never computed)."""
        stamps = self.extras.get("constants")
        if stamps:
            changed = [(e, p) for e, p, array, crc in stamps if _fingerprint(array) != crc]
            if changed:
                gone = set(changed)
                self.extras["constants"] = [s for s in stamps if (s[0], s[1]) not in gone]
                names = [self.names.get((e, p)) or f"input {p} of t{e}" for e, p in changed]
                self.extras.setdefault("changed", []).extend(names)
                self.tape = _without_values(self.tape, gone)
        return self.extras.get("changed", [])

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
        lines += [f"  note: {n}" for n in self.notes]
        if self.explanation is not None:  # --explain NAME
            lines += [f"  {line}" for line in str(self.explanation).splitlines()]
        return "\n".join(lines)


def _text(v: Any) -> str:
    if v is None:
        return "— (see the notes)"
    a = np.asarray(v)
    if a.ndim == 0:
        return f"{a.item():.6g}"
    with np.printoptions(precision=6, threshold=20, edgeitems=3):
        return re.sub(r"\n\s*", " ", np.array2string(a, separator=", "))


# -- constants the notebook holds -----------------------------------------------------------
def _fingerprint(a: np.ndarray) -> int:
    """A checksum of an array's bytes (and shape and dtype): whether it changed."""
    c = np.ascontiguousarray(a)
    return zlib.crc32(c.view(np.uint8) if c.size else b"",
                      zlib.crc32(repr((a.shape, a.dtype.str)).encode()))


def _stamps(tape: Tape) -> list[tuple[int, int, np.ndarray, int]]:
    """``(equation, input position, array, checksum)`` of each array constant of ``tape``
    that could be changed in place afterwards (writeable, not of objects)."""
    out = []
    for eq in tape:
        for position, inp in enumerate(eq.inputs):
            v = inp.value
            if inp.source == "constant" and type(v) is np.ndarray and v.flags.writeable \
                    and v.dtype != object:
                out.append((eq.index, position, v, _fingerprint(v)))
    return out


def _without_values(tape: Tape, gone: set[tuple[int, int]]) -> Tape:
    """``tape`` with no value for the constants at ``gone`` (equation, input position)."""
    blank = Input("constant")
    eqs = [eq.replace(ins=tuple(
        blank if (eq.index, p) in gone else inp for p, inp in enumerate(eq.inputs)))
        if any(e == eq.index for e, _ in gone) else eq for eq in tape]
    return Tape(eqs, tape.leaves, tape.outputs, whole=tape.whole, inputs=tape.inputs)


def _changed_constants_text(names: Sequence[str]) -> str:
    which = ", ".join(names[:3]) + (" …" if len(names) > 3 else "")
    return (f"{which}, used by this %%autodiff cell as a constant, was changed in place "
            "since the cell ran (the notebook wrote into its array): a replay of the cell's "
            "sweep would use the new values, and show numbers the cell never computed. Run "
            "the cell again to step through it.")


# -- values -------------------------------------------------------------------------------
def _component(v: Any, tag: Any) -> Any:
    """The derivative part of ``v`` along ``tag``, every other perturbation dropped
    (``None``: ``v`` does not depend on it)."""
    while type(v) is Dual:
        if v.tag is tag:
            return primal_all(v.tangent)
        v = v.primal
    return None


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


def _check_output(name: str, out: Any, level: float) -> Any:
    value = primal_all(unbox_level(out, level))
    if isinstance(value, Tensor):
        value = value.numpy()
    ok = isinstance(value, (float, int, np.ndarray, np.generic)) and not isinstance(value, bool)
    if ok and np.asarray(value).dtype.kind == "c":
        raise AutodiffUsageError(
            f"%%autodiff: the output {name!r} is complex ({np.asarray(value).dtype}); a "
            "gradient needs a real output (as wg.grad and JAX's grad). Make the output real, "
            "e.g. np.abs(w) ** 2 or np.real(w), or name a real variable with --of NAME."
        )
    if ok and np.asarray(value).dtype.kind in "iu":
        raise AutodiffUsageError(
            f"%%autodiff: the output {name!r} is an integer ({np.asarray(value).dtype}), "
            "computed without the inputs' derivatives (a comparison, a count, argmax, an "
            "integer cast) or not from them at all: it is piecewise constant, its derivative "
            "zero wherever it exists, so there is no gradient to show (wg.grad and JAX's grad "
            "refuse it too). Compute a floating point output from the inputs, or name one "
            "with --of NAME."
        )
    if not ok or np.asarray(value).dtype.kind != "f":
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


# -- the reverse sweeps -------------------------------------------------------------------
def _leaf_hooks(leaf: Tensor, g: Any, name: str, record: Any = None) -> Any:
    """``g`` after the hooks registered on an input's leaf (``x.register_hook``), as
    ``backward()`` runs them (``record``: the kept sweep, told what they did)."""
    extra = leaf._extra
    hooks = extra.get("hooks") if extra else None
    if not hooks:
        return g
    after = run_hooks(hooks, g, f"the input {name}")
    if record is not None:
        record.leaf_hooked(leaf, g, after, hooks)
    return after


def _reverse(out: Any, leaves: list[Tensor], names: list[str], out_shape: tuple[int, ...],
             in_values: list[Any], record: Any = None) -> tuple[list[Any], dict[int, Any]]:
    """Gradients (a scalar output) or Jacobians by reverse sweeps; the cotangents the
    nodes received (scalar outputs only). NumPy's floating point warnings are silenced:
    an inf or NaN shows in the card (and ``--explain`` says where it came from).
    ``record``: a :class:`~wengert.core.kept.SweepRecord` that keeps the sweep of a scalar
    output for the views (hooks included: a replay would run none)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _sweeps(out, leaves, names, out_shape, in_values, record)


def _sweeps(out: Any, leaves: list[Tensor], names: list[str], out_shape: tuple[int, ...],
            in_values: list[Any], record: Any = None) -> tuple[list[Any], dict[int, Any]]:
    size = math.prod(out_shape)
    if size == 1:
        seed = 1.0 if out_shape == () else np.ones(out_shape)
        recorder = _AdjointRecorder()
        with observe_sweep(recorder), (observe_sweep(record) if record is not None
                                       else contextlib.nullcontext()):
            cts = pullback(out, leaves, seed)
        got = [plain(_leaf_hooks(leaf, g, n, record)) for leaf, g, n in zip(leaves, cts, names)]
        if record is not None:
            record.finish()
        return got, recorder.received
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
        cts = pullback(out, leaves, seed.reshape(out_shape))
        for i, (leaf, g, n) in enumerate(zip(leaves, cts, names)):
            rows[i].append(np.asarray(plain(_leaf_hooks(leaf, g, n))))
    jacobians = [np.stack(r).reshape(out_shape + np.shape(v)) if r else  # (no entry: no row)
                 np.zeros(out_shape + np.shape(v), np.result_type(v, np.float64))
                 for r, v in zip(rows, in_values)]
    return jacobians, {}


def _cut_for_reverse_only(tape: Tape, tags: Any) -> list[int]:
    """The lines of equations with a constant input that carries a tangent of ``tags``:
    cut from the reverse graph (``no_grad``, ``detach``) but not from forward mode."""
    ids = {id(t) for t in tags}
    lines: set[int] = set()
    for eq in tape:
        for inp in eq.inputs:
            if inp.source != "constant":
                continue
            v = inp.value
            while isinstance(v, Tensor):
                v = v._value
            while type(v) is Dual:
                if id(v.tag) in ids and np.any(np.asarray(primal_all(v.tangent)) != 0):
                    lines.add(eq.source.lineno if eq.source is not None else 0)
                    break
                v = v.primal
    return sorted(lines)


def _hooked(tape: Tape) -> list[Any]:
    """The equations and leaves of ``tape`` with gradient hooks (``register_hook``)."""
    found: list[Any] = []
    for eq in tape:
        if any(node.extra and node.extra.get("hooks") for node in eq.nodes):
            found.append(eq)
    for leaf in tape.leaves:
        extra = getattr(leaf, "_extra", None)
        if extra and extra.get("hooks"):
            found.append(leaf)
    return found


def _replay_differs(out: Tensor, received: Mapping[int, Any], grads: Mapping[str, Any],
                    run: CellRun) -> bool:
    """Whether a sweep without hooks (what the step-by-step views replay) gives other
    cotangents than the cell's sweep, whose hooks changed them."""
    recorder = _AdjointRecorder()
    seed = 1.0 if np.shape(out) == () else np.ones(np.shape(out))
    with observe_sweep(recorder), np.errstate(all="ignore"):
        _, reached = backprop([(out._node if out._node is not None else out, seed)],
                              retain_graph=True, replay=True)
    def same(a: Any, b: Any) -> bool:
        return bool(np.array_equal(np.asarray(plain(a)), np.asarray(plain(b))))

    for key, g in recorder.received.items():
        if key in received and not same(g, received[key]):
            return True
    replayed = {id(leaf): g for leaf, g in reached}
    for name, leaf in run.leaves.items():
        g = replayed.get(id(leaf))
        if g is not None and grads.get(name) is not None and not same(g, grads[name]):
            return True
    return False


# -- the output -----------------------------------------------------------------------------
def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _output_of(cell: Any, run: CellRun, ns: Mapping[str, Any], of: str | None
               ) -> tuple[str, Any, list[str]]:
    """The output's name, its value, and a note when the choice is not plain from the
    code (see the module docstring)."""
    if of is not None:
        if of not in ns:
            raise AutodiffUsageError(f"%%autodiff --of {of}: the cell did not define {of!r}.")
        return of, ns[of], []
    expression = None
    order = [n for n in run.last_bound() if n in ns]
    if cell.last_expression:
        value = ns.get(OUT)
        if run.traced(value) or (numeric(value) and not any(run.traced(ns[n]) for n in order)):
            return "output", value, []
        expression = value
    chosen = next((n for n in order if run.traced(ns[n])), None)
    if chosen is None:
        chosen = next((n for n in order if numeric(ns[n])), order[0] if order else None)
    if chosen is None:
        said = "" if expression is None else (
            f"its last expression is {_article(type(expression).__name__)}, not a number, and ")
        raise AutodiffUsageError(
            f"%%autodiff: the cell has no output: {said}it binds no number. End it with an "
            "expression, assign a name, or say which name is the output with --of NAME."
        )
    site = run.last_site(chosen)
    later = order[:order.index(chosen)]
    unseen = [] if run.traced(ns[chosen]) else [  # bound by code the rewrite cannot see
        k for k, v in ns.items()
        if k not in order and k not in run.names and k[:1] != "_" and run.traced(v)]
    textual = max((i for i, s in enumerate(cell.sites) if s.cell_scope and s.tracked),
                  default=None)
    plain_choice = (expression is None and not later and chosen not in run.names and not unseen
                    and site == textual and not cell.sites[site].blocks
                    and not cell.sites[site].scope)
    if plain_choice:
        return chosen, ns[chosen], []
    words = []
    if expression is not None:
        words.append(f"The cell's last expression is {_article(type(expression).__name__)}, "
                     + ("which does not depend on the inputs." if numeric(expression)
                        else "not a number."))
    words.append(f"The output is {chosen}, the last name bound when the cell ran "
                 f"({run.where(site)}).")
    if later:
        words.append(f"Bound after it, {', '.join(later)} "
                     f"{'does' if len(later) == 1 else 'do'} not depend on the inputs.")
    if chosen in run.names:
        words.append(f"{chosen} is an input: ∂{chosen}/∂{chosen} is the derivative of its "
                     "final value with respect to its leaf"
                     + (" (see below)." if chosen in run.updates else "."))
    if unseen:
        words.append(f"It does not depend on the inputs, but {', '.join(unseen)} "
                     f"{'does' if len(unseen) == 1 else 'do'}, bound where %%autodiff cannot "
                     "see (a line magic such as %time, exec).")
    others = [n for n in order if n != chosen and run.traced(ns[n])] + unseen
    words.append("Choose another with --of NAME"
                 + (f" (e.g. --of {others[0]})." if others else "."))
    return chosen, ns[chosen], [" ".join(words)]


def _never_bound(name: str, cell: Any, run: CellRun | None = None) -> str:
    """Why input ``name`` has no leaf: its bindings did not run, or there are none the
    rewrite follows, or (``run``: what the cell's run saw) those that ran gave it values
    computed from the other inputs."""
    if run is not None and name in run.derived:
        where = run.where(run.derived[name])
        return (f"%%autodiff: input {name!r} has no value of its own: the cell bound it "
                f"({where}) to a value computed from the other inputs before giving it one, "
                f"so there is no value of {name} to take a derivative with respect to (in "
                f"a function, {name} would be an intermediate, not an argument). Give it a "
                f"value first ({name} = 1.0 in the cell, or before it), or remove {name} "
                "from the inputs.")
    sites = [s for s in cell.sites if s.name == name]
    ran = [s.where() for s in sites if s.tracked]
    other = [s for s in sites if not s.tracked]
    text = (f"%%autodiff: input {name!r} was never bound: its bindings ({'; '.join(ran)}) "
            "did not run (a branch not taken, a loop that ran zero times, a function "
            "never called?)." if ran else
            f"%%autodiff: input {name!r} is neither defined before the cell nor assigned in "
            "it.")
    if other and not ran:
        text += (f" It is bound only at {other[0].where()}, a variable of its own that "
                 "%%autodiff does not follow: name a variable of the cell (for a "
                 "comprehension, the values it iterates over).")
    return text


# -- the run ---------------------------------------------------------------------------------
def run_autodiff(
    source: str,
    namespace: dict[str, Any],
    inputs: Sequence[str],
    *,
    of: str | None = None,
    mode: str = "reverse",
    views: Sequence[str] = ("value", "grads"),
    filename: str = DEFAULT_FILENAME,
    preset: Mapping[str, Any] | None = None,
    explain: str | None = None,
    keep: Mapping[str, Any] | None = None,
    result_name: str | None = None,
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
        cell or bound in it (in its own scope, or, for a name that is no variable of
        the cell, as a parameter or local variable of a function defined in it).
    of : str, optional
        The output's name; by default the last expression, else the last name bound.
    mode : {"reverse", "forward", "both"}
    views : sequence of str
        What the result card shows (see :data:`VIEWS`; ``"all"``: every view).
    filename : str
        The name the cell's code is compiled under (tracebacks, source lines).
    preset : mapping, optional
        Values to bind in ``namespace`` before the cell runs (tests, examples).
    explain : str, optional
        An input whose derivative to explain (``wg.explain``: why it is None, zero or
        NaN, where, and the fix); the card shows it, ``result.explanation`` holds it.
    keep : mapping, optional
        Names of ``namespace`` not to search for the cell's values afterwards while they
        hold the given objects (IPython's own, such as ``Out``).
    result_name : str, optional
        The variable the caller binds the result to (``--as``): refused when it is no
        variable name, an input, or a name the cell binds (``def``, ``import`` included)
        or reads (the result would replace it).

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
    if "all" in views:
        views = VIEWS
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
    defined = [n for n in names if n in namespace]
    cell = rewrite_cell(source, names, filename, defined=defined)
    if result_name is not None:
        _check_result_name(result_name, names, cell)
    followed = {s.name for s in cell.sites if s.tracked}
    missing = [n for n in names if n not in namespace and n not in followed]
    if missing:  # (every binding recorded, for the message)
        raise AutodiffUsageError(_never_bound(
            missing[0], rewrite_cell(source, names, filename, defined=defined, deep=True)))
    code = compile(cell.tree, filename, "exec")
    lines = source.splitlines(True)
    if filename == DEFAULT_FILENAME or filename not in linecache.cache:
        # so that tracebacks and the tape show the lines (IPython registers its own)
        linecache.cache[filename] = (len(source), None, lines, filename)
    return contextvars.copy_context().run(
        _run, cell, code, namespace, names, of, mode, tuple(views), source, explain, keep)


def _run(cell: Any, code: Any, ns: dict[str, Any], names: tuple[str, ...],
         of: str | None, mode: str, views: tuple[str, ...], source: str,
         explain_name: str | None, keep: Mapping[str, Any] | None) -> AutodiffResult:
    __tracebackhide__ = True  # noqa: F841 (IPython hides this frame in tracebacks)
    hook_names = (BIND, AT, TICK, OUT)
    saved = {k: ns[k] for k in hook_names if k in ns}  # a cell run by a cell
    with contextlib.ExitStack() as stack:
        tags = None
        if mode != "reverse":
            tags = {n: stack.enter_context(perturbation(f"∂{n}")) for n in names}
        level = stack.enter_context(transform_scope())
        LEVEL_NAMES[level] = "the %%autodiff cell"
        stack.enter_context(enable_grad())
        stack.enter_context(source_lines())
        stack.enter_context(keep_values())
        run = CellRun(cell, names, level, tags, ns)
        cleaned: list[str] | None = None
        cached = caches(ns)  # lru_cache functions, whose caches the walk cannot read
        # numbers the notebook held before the cell: a constant on the tape that is one of
        # them (the same object) is shown under its name (x, y of the data)
        floats_before = {k: v for k, v in ns.items() if type(v) is float and k[:1] != "_"}
        try:
            for n in names:
                if n not in ns or n in cell.inner_inputs:
                    continue
                bound_here = n in cell.bound_inputs
                if bound_here and not numeric(ns[n]):
                    continue  # a list, None, ...: the leaf starts where the cell binds it
                try:
                    ns[n] = run.start(n, ns[n])
                except AutodiffUsageError:
                    if not bound_here:
                        raise
            ns.update(run.hooks())
            exec(code, ns)  # noqa: S102 (running the user's cell is the point)
            changed = run.changed_inputs()
            if changed:
                raise AutodiffUsageError(_changed_in_place(*changed[0]))
            result = _result(cell, run, ns, names, of, mode, views, source, explain_name,
                             floats_before)
            clear_caches(ns, cached)
            cleaned = make_plain(ns, run.plain, keep)
            if cleaned:
                result.notes += (_unreached(cleaned),)
            return result
        finally:
            for k in hook_names:
                ns.pop(k, None)
            ns.update(saved)
            if cleaned is None:
                clear_caches(ns, cached)
                make_plain(ns, run.plain, keep)


def _check_result_name(name: str, inputs: Sequence[str], cell: Any) -> None:
    """Refuse an ``--as`` name the result could not be bound to without breaking the
    notebook (see :func:`run_autodiff`)."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise AutodiffUsageError(f"%%autodiff --as {name}: not a variable name.")
    if name in inputs:
        raise AutodiffUsageError(
            f"%%autodiff --as {name}: {name} is an input; the result would replace its value. "
            "Name another variable (the default is _autodiff).")
    if any(site.name == name and site.cell_scope for site in cell.sites) or \
            name in _defined(cell.tree):
        raise AutodiffUsageError(
            f"%%autodiff --as {name}: the cell binds {name}; the result would replace its "
            "value. Name another variable (the default is _autodiff).")
    if any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(cell.tree)):
        raise AutodiffUsageError(
            f"%%autodiff --as {name}: the cell reads {name}; the result would replace its "
            "value, and the cell would not run again. Name another variable (the default is "
            "_autodiff).")


def _defined(tree: ast.AST) -> set[str]:
    """The names ``def``, ``class`` and ``import`` statements of ``tree`` bind."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _changed_in_place(name: str, other: str | None) -> str:
    through = f"through {other!r}, which holds the same array" if other else \
        "through another reference to its array"
    return (f"%%autodiff: the input {name!r} was changed in place while the cell ran "
            f"({through}). An input is never changed in place: its value is the point the "
            f"derivative is taken at, and NumPy would have changed it halfway through the "
            "cell. " + (f"Work on a copy ({other} = {other}.copy(), or {name} = "
                        f"{name}.copy() before the cell)" if other else
                        "Work on a copy of the array") + ", or make the change out of place.")


def _unreached(places: list[str]) -> str:
    return ("Some places the notebook reaches still hold a value of this cell, which a "
            f"later cell cannot use: {'; '.join(places)}. Store plain values there "
            "(v.numpy(), or wg.stop_gradient(v)).")


def _result(cell: Any, run: CellRun, ns: dict[str, Any], names: tuple[str, ...],
            of: str | None, mode: str, views: tuple[str, ...], source: str,
            explain_name: str | None, floats_before: Mapping[str, float]) -> AutodiffResult:
    """Everything the card shows, computed while the cell's values are still traced."""
    __tracebackhide__ = True  # noqa: F841
    level, tags = run.level, run.tags
    output_name, out, notes = _output_of(cell, run, ns, of)
    value = _check_output(output_name, out, level)
    out_shape = np.shape(value)
    for n in names:
        if n not in run.leaves:
            raise AutodiffUsageError(_never_bound(n, cell, run))
    tensor_out = out if run.traced(out) else None
    tape = tape_of(tensor_out) if tensor_out is not None else Tape([], [], [])
    on_tape = {id(leaf) for leaf in tape.leaves}
    # inputs bound to several values the output depends on: what it owes the earlier ones
    earlier = {n: [h for h in run.history[n][:-1] if id(h.tensor) in on_tape] for n in names}
    # inputs rebound by code the rewrite does not see (exec, globals(), another cell's code)
    unseen = {n: ns[n] for n in names
              if n not in cell.inner_inputs and n in ns and not run.traced(ns[n])}
    leaves = [run.leaves[n] for n in names]
    in_values = [run.values[n] for n in names]
    adjoints: dict[str, Any] = {}
    grads: dict[str, Any] = {}
    owed: dict[int, Any] = {}
    tangents = agreement = None
    received: dict[int, Any] = {}
    record = None
    if mode != "forward":
        extra = [h for n in names for h in earlier[n]]
        if mode == "reverse" and tensor_out is not None and math.prod(out_shape) == 1:
            # the sweep the views show, hooks included (a replay would run none)
            record = (KEEPER.get() or Keeper()).record(kind="the %%autodiff cell")
        got, received = _reverse(
            out, leaves + [h.tensor for h in extra],
            list(names) + [run.leaf_names[id(h.tensor)] for h in extra], out_shape,
            in_values + [h.value for h in extra], record)
        grads = dict(zip(names, got[:len(names)]))
        owed = {id(h.tensor): g for h, g in zip(extra, got[len(names):])}
        # by variable: each output of a decomposition received its own cotangent
        adjoints = {v.name: plain(received[id(node)]) for eq in tape
                    for node, v in zip(eq.nodes, eq.outs) if id(node) in received}
    if tags is not None:
        raw = unbox_level(out, level)
        tangents = {n: None if earlier[n] else _as_derivative(
            _component(raw, tags[n]), tags[n], out_shape, run.values[n]) for n in names}
        if mode == "forward":
            grads = dict(tangents)
    for n in unseen:
        grads[n] = None
        if tangents is not None:
            tangents[n] = None
    if mode == "both":
        agreement = {n: modes_difference(grads[n], tangents[n])
                     for n in names if grads[n] is not None and tangents[n] is not None}
    notes += _input_notes(run, names, output_name, mode, earlier, owed, unseen, on_tape)
    if tags is not None:
        notes += _reverse_only_cut_notes(tape, tags.values())
    extras: dict[str, Any] = {"record": record} if mode == "reverse" else {}
    notes += _hook_notes(tape, run, mode, tensor_out, out_shape, received, grads, extras)
    value_names = names_from_namespace(tape, ns)
    value_names.update(_float_names(tape, ns, floats_before, value_names))
    for i, leaf in enumerate(tape.leaves):
        if id(leaf) in run.leaf_names:
            value_names[f"x{i}"] = run.leaf_names[id(leaf)]
    if mode != "forward" and math.prod(out_shape) == 1:
        for i, leaf in enumerate(tape.leaves):  # (an earlier value of an input shows none)
            n = run.leaf_names.get(id(leaf))
            if n is not None and run.leaves.get(n) is leaf and grads.get(n) is not None:
                adjoints[f"x{i}"] = grads[n]
    if mode == "both" and tensor_out is not None and len(tape) <= MAX_FRAMED:
        # the sweep over dual numbers needs their tags, which close with the cell
        extras["frames"] = explorer_frames(
            tape, value_names=value_names,
            leaf_names=[run.leaf_names.get(id(leaf), f"x{i}")
                        for i, leaf in enumerate(tape.leaves)])
        if "replay_differs" in extras:
            extras["frames"]["seed_note"] = " ".join(filter(None, (
                extras["frames"].get("seed_note"), extras["replay_differs"],
                "The reverse steps here are that replay, not the numbers of the card.")))
    if explain_name is not None:
        said = explain(out, run.leaves[explain_name], source=source, namespace=ns)
        shown = grads.get(explain_name)
        if mode == "forward" and shown is not None and said.gradient is not None \
                and said.gradient != summarize(shown):
            said = replace(said, notes=said.notes + (
                f"This is the gradient a reverse sweep gives, {said.gradient}; the card shows "
                f"forward mode's derivative, {summarize(shown)}, which differs (forward mode "
                "does not propagate what the reverse sweep does here).",))
        extras["explanation"] = said
    extras["constants"] = _stamps(tape)
    return AutodiffResult(
        output_name=output_name, value=plain(value), grads=grads, mode=mode,
        inputs=names, input_values={n: run.values[n] for n in names},
        tangents=tangents, agreement=agreement, tape=tape, output=tensor_out,
        leaf_names=run.leaf_names, adjoints=adjoints, views=views, source=source,
        silenced=cell.silenced, names=value_names, extras=extras, notes=tuple(notes),
        level=level,
    )


def _reverse_only_cut_notes(tape: Tape, tags: Any) -> list[str]:
    """The note on values computed from the inputs that enter reverse mode as constants
    (``no_grad``, ``detach``) while forward mode differentiates through them."""
    cut = _cut_for_reverse_only(tape, tags)
    if not cut:
        return []
    return [f"At line {', '.join(map(str, cut))} a value computed from the inputs enters "
            "as a constant (computed under wg.no_grad(), or .detach()ed): reverse mode "
            "does not differentiate through it, forward mode does (as PyTorch's forward "
            "AD), so the two modes give different derivatives there; wg.stop_gradient "
            "cuts both."]


def _hook_notes(tape: Tape, run: CellRun, mode: str, tensor_out: Any, out_shape: Any,
                received: Mapping[int, Any], grads: Mapping[str, Any],
                extras: dict[str, Any]) -> list[str]:
    """The notes on gradient hooks the cell registers (forward mode runs none; a replay
    of the sweep runs none); sets ``extras["replay_differs"]`` where a replay would show
    other numbers than the card."""
    notes: list[str] = []
    hooked = _hooked(tape)
    if hooked:
        lines = sorted({h.source.lineno for h in hooked
                        if not isinstance(h, Tensor) and h.source is not None})
        on = [f"the input {run.leaf_names[id(h)]}" for h in hooked
              if isinstance(h, Tensor) and id(h) in run.leaf_names]
        if lines:
            on.append(f"values computed at line {', '.join(map(str, lines))}")
        at = f" (on {' and '.join(on)})" if on else ""
        if mode != "reverse":
            notes.append(f"The cell registers gradient hooks{at}; forward mode runs none: its "
                         "tangents are the derivatives of the code alone"
                         + (", and they differ from reverse mode's where a hook changed a "
                            "gradient." if mode == "both" else "."))
        if mode != "forward" and tensor_out is not None:
            if math.prod(out_shape) != 1:
                extras["replay_differs"] = (
                    f"The cell registers gradient hooks{at}; a replay of the sweep runs "
                    "without hooks (they may have effects), so it may show other numbers.")
            elif _replay_differs(tensor_out, received, grads, run):
                extras["replay_differs"] = (
                    f"The gradient hooks{at} changed the cotangents of the cell's sweep; a "
                    "replay of the sweep runs without hooks (they may have effects), so it "
                    "shows other numbers.")
    return notes


def _input_notes(run: CellRun, names: Sequence[str], output: str, mode: str,
                 earlier: Mapping[str, list[Any]], owed: Mapping[int, Any],
                 unseen: Mapping[str, Any], on_tape: set[int]) -> list[str]:
    """What each input's derivative means when the cell bound it more than once, bound it
    only in an inner scope, or rebound it where the rewrite does not see."""
    notes = []
    for n in names:
        history = run.history[n]
        leaf = history[-1]
        d = f"∂{output}/∂{n}"
        if n in unseen:
            notes.append(
                f"{n} was rebound where %%autodiff cannot see it (exec, globals()[...], or "
                f"a function defined outside this cell): after the cell it holds "
                f"{_short(unseen[n])}, which is no leaf, so {d} is not shown (the output may "
                f"depend on that value). Bind {n} in the cell, or in a function defined in "
                "it.")
            continue
        if n in run.cell.inner_inputs:
            notes.append(
                f"{n} is no variable of the cell; it is followed where it is bound, in an "
                f"inner scope: {d} is with respect to the value bound last, "
                f"{_short(leaf.value)} ({run.where(leaf.site)}).")
        if earlier[n]:
            past = "; ".join(f"{_short(h.value)} ({run.where(h.site)})" for h in earlier[n])
            if mode == "forward" or (mode == "both"):
                owes = ("Forward mode pushes one tangent for it through all of them, so it "
                        "cannot tell the last value's part: use --mode reverse."
                        if mode == "forward" else
                        "Forward mode pushes one tangent for it through all of them, so it "
                        "cannot tell the last value's part: the reverse-mode number is shown "
                        "unchecked.")
            else:
                owes = "Through " + ("it" if len(earlier[n]) == 1 else "them") + ", " + \
                    ", ".join(f"∂{output} = {_short(owed.get(id(h.tensor)))}"
                              for h in earlier[n]) + ", not included."
            notes.append(
                f"{n} was bound to a new value ({run.where(leaf.site)}): {d} is with respect "
                f"to that value, {_short(leaf.value)}. The output also depends on the earlier "
                f"{'value' if len(earlier[n]) == 1 else 'values'} of {n}: {past}. {owes}")
        update = run.updates.get(n)
        if update and id(leaf.tensor) in on_tape:
            count, site = update
            times = "once" if count == 1 else f"{count} times"
            notes.append(
                f"{n} was rebound {times} ({run.where(site)}) to values computed from the "
                f"inputs: {d} is the derivative with respect to the value {n} held first, "
                f"{_short(leaf.value)} ({run.where(leaf.site)}), through every update.")
    return notes


def _short(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, Tensor):
        return f"a tensor {_short(v.numpy()) if not v.requires_grad else ''}".strip()
    try:
        a = np.asarray(v)
    except Exception:  # noqa: BLE001 (anything else: its type)
        return type(v).__name__
    if a.dtype == object:
        return _article(type(v).__name__)
    if a.ndim == 0:
        return f"{a.item():.6g}" if a.dtype.kind in "fc" else str(a.item())
    with np.printoptions(precision=4, threshold=6, edgeitems=2):
        return np.array2string(a, separator=", ").replace("\n", " ")
