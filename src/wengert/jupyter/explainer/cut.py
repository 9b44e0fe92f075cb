"""Why no gradient reaches the input: it is not tracked, the path is cut, it is not a
leaf, or the graph was freed.

The tape says *that* a path is missing; where the cut is comes from evidence:

- a constant on the target's tape that *is* the input's data (``.detach()``,
  ``wg.stop_gradient``, ``.data``, ``.numpy()`` share the memory), that equals it
  (``float(x)``, ``x.tolist()``, a copy), or that equals it cast to an integer;
  the equation where it re-entered is named;
- the lines that cut a value computed from the input: seen while running the
  user's function, or read from the code given as ``source=``.

Examples
--------
>>> import wengert as wg
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> w = wg.tensor([3.0, 4.0], requires_grad=True)
>>> y = (x.detach() * w).sum()
>>> [(c.equation, c.kind) for c in copies_of(wg.tape_of(y), x)]
[(0, 'shared')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from wengert.core.equations import Tape
from wengert.core.formatting import summarize
from wengert.jupyter.explainer.result import Explanation, where_text
from wengert.jupyter.explainer.source import Site
from wengert.jupyter.explainer.subject import Subject, equation_text, site_line
from wengert.jupyter.explainer.sweep import edge_of
from wengert.jupyter.explainer.words import COPY_OPS, op_code
from wengert.reverse.gradient_tape import Variable
from wengert.reverse.tape_reading import tape_of
from wengert.reverse.tensor import Tensor

__all__ = ["Copy", "copies_of", "untracked", "cut", "partly_cut", "non_leaf", "not_in_inputs",
           "freed", "site_phrase"]

#: What a site kind tells about the cause (the cause code).
CAUSE_OF_SITE = {
    "no_grad": "no_grad", "stop_recording": "stop_recording", "detach": "detached",
    "stop_gradient": "detached", "data": "detached", "to_python": "to_python",
    "to_numpy": "to_numpy", "integer": "integer_dtype", "comparison": "comparison",
    "before_tape": "before_tape",
}
#: Site kinds that fit each kind of copy found on the tape.
_FITS = {
    "shared": ("detach", "stop_gradient", "data", "to_numpy"),
    "equal": ("to_python", "to_numpy", "detach", "stop_gradient", "data"),
    "integer": ("integer",),
}


@dataclass(frozen=True)
class Copy:
    """A constant input of the target's tape that is a copy of the input's value:
    ``kind`` is ``"shared"`` (the same memory), ``"equal"`` (the same numbers) or
    ``"integer"`` (the numbers cast to an integer or boolean dtype)."""

    equation: int
    position: int
    kind: str


def _plain(t: Tensor) -> tuple[Any, Any]:
    """The input's data (shared, not copied) and, for a Python float, the float itself."""
    data = t.detach()
    try:
        array = data.numpy()
    except TypeError:  # a tensor over a traced value
        return None, None
    number = data.item() if data.shape == () else None
    return array, number


def copies_of(tape: Tape, wrt: Any) -> list[Copy]:
    """The constants of ``tape`` that are copies of ``wrt``'s value, in tape order."""
    if not isinstance(wrt, Tensor):
        return []
    ref, number = _plain(wrt)
    if ref is None:
        return []
    trivial = ref.size == 1 and float(np.asarray(ref).reshape(())) in (0.0, 1.0, -1.0)
    found = []
    for e, pos, v in _constants(tape):
        kind = _copy_kind(v, ref, number, trivial)
        if kind is not None:
            found.append(Copy(e, pos, kind))
    return found


def _constants(tape: Tape) -> Iterator[tuple[int, int, Any]]:
    """``(equation, input position, value)`` of each constant input of ``tape`` whose value
    is known."""
    for eq in tape:
        for pos, inp in enumerate(eq.inputs):
            if inp.source == "constant" and inp.value is not None:
                yield eq.index, pos, inp.value


def _copy_kind(v: Any, ref: np.ndarray, number: Any, trivial: bool) -> str | None:
    if v is ref or (number is not None and v is number):
        return "shared"
    if isinstance(v, np.ndarray) and v.size and np.may_share_memory(v, ref):
        return "shared"
    a = np.asarray(v) if isinstance(v, (np.ndarray, np.generic, float, int, bool)) else None
    if a is None or a.shape != ref.shape or trivial:
        return None
    if a.dtype.kind == "f" and np.array_equal(a, ref):
        return "equal"
    if a.dtype.kind in "biu" and ref.dtype.kind == "f" and np.all(np.isfinite(ref)) \
            and np.array_equal(a, ref.astype(a.dtype)):
        return "integer"
    return None


def site_phrase(site: Site) -> str:
    """``line 3``, or ``model.py:3`` for a line of a file.

    Examples
    --------
    >>> site_phrase(Site(3, "n = float(x)", "to_python", "x", "/home/me/model.py"))
    'model.py:3'
    """
    return where_text(site_line(site)) or f"line {site.lineno}"


def untracked(s: Subject) -> Explanation | None:
    """``wrt`` is not a tensor, or no tape records it (``requires_grad`` is False and the
    gradient tape, if any, does not watch it); ``None`` when it is tracked.

    Examples
    --------
    >>> import wengert as wg
    >>> t = wg.tensor(1.0)
    >>> untracked(Subject(t * 2.0, t, "y", "t")).cause
    'requires_grad_false'
    >>> untracked(Subject(t * 2.0, wg.tensor(1.0, requires_grad=True), "y", "x")) is None
    True
    """
    w, y = s.wrt_name, s.target_name
    if not isinstance(s.wrt, Tensor):
        what = "Python number" if isinstance(s.wrt, (int, float)) else \
            f"{type(s.wrt).__module__.split('.')[0]} {type(s.wrt).__name__}"
        return Explanation(
            "none", "not_a_tensor",
            f"`{w}` is a plain {what}, not a wengert tensor: nothing records what is computed "
            "from it, so it has no gradient.",
            f"Make it a tensor that requires grad before computing with it: "
            f"`{w} = wg.tensor({w}, requires_grad=True)`; or differentiate a function of it: "
            f"`wg.grad(f)({w})`.", target=y, wrt=w)
    if s.wrt.requires_grad:
        return None
    tape = s.gradient_tape
    if isinstance(s.wrt, Variable):
        if s.wrt.trainable or (tape is not None and tape.owns(s.wrt)):
            return None
        return Explanation(
            "none", "not_watched",
            f"`{w}` is a `wg.Variable` created with `trainable=False`: gradient tapes do not "
            "watch it by themselves, so nothing computed from it is recorded.",
            f"Call `tape.watch({w})` at the top of the `with wg.GradientTape() as tape:` block, "
            "or create it with `trainable=True` (the default).", target=y, wrt=w)
    if tape is not None:
        if tape.owns(s.wrt):
            return None
        return Explanation(
            "none", "not_watched",
            f"The `GradientTape` does not watch `{w}`: a tensor is recorded only after "
            f"`tape.watch({w})` (a trainable `wg.Variable` is watched by itself when read "
            "inside the tape), so to the tape it is a constant and the gradient is None.",
            f"Call `tape.watch({w})` first thing inside `with wg.GradientTape() as tape:`, "
            f"before computing with `{w}`; or make it a `wg.Variable`.", target=y, wrt=w)
    return Explanation(
        "none", "requires_grad_false",
        f"`{w}` does not require grad (`{w}.requires_grad` is False), so the operations on it "
        f"were not recorded and no gradient can flow back to it (PyTorch: 'element 0 of "
        "tensors does not require grad and does not have a grad_fn').",
        f"Create it with `wg.tensor(..., requires_grad=True)` (or call `{w}.requires_grad_()`) "
        f"before computing `{y}`; with a `GradientTape`, call `tape.watch({w})` inside the "
        "`with` block instead.", target=y, wrt=w)


def _tf_dialect(s: Subject) -> bool:
    return s.gradient_tape is not None or isinstance(s.wrt, Variable)


def _usable(s: Subject) -> list[Site]:
    """The sites that can explain this cut (a line before a gradient tape only matters in
    the TensorFlow dialect)."""
    return [x for x in s.sites if x.kind != "before_tape" or _tf_dialect(s)]


def _pick_site(s: Subject, copies: list[Copy]) -> Site | None:
    sites = _usable(s)
    for copy in copies:
        for site in sites:
            if site.kind in _FITS[copy.kind]:
                return site
    strong = [x for x in sites if x.kind != "comparison"]
    if strong:
        return strong[0]
    return sites[0] if sites and not copies else None


_BY = {"detach": " by `.detach()`", "stop_gradient": " by `wg.stop_gradient`",
       "data": " by `.data`"}


def _cut_words(cause: str, name: str, at: str, w: str, y: str,
               kind: str = "") -> tuple[str, str]:
    """Message and fix for a cut of kind ``cause`` of the value ``name`` at ``at`` (``kind``:
    the site's kind, for the verb)."""
    what = f"`{name}`" if name else f"a value computed from `{w}`"
    cap = what[0].upper() + what[1:]
    itself = f"`{name}` itself" if name else "the tensor itself, not a copy,"
    words = {
        "no_grad": (
            f"The path from `{w}` to `{y}` goes through a `wg.no_grad()` block at {at}: "
            "operations inside it are not recorded, so their results are constants and no "
            f"gradient flows back to `{w}`.",
            "Compute what must be differentiated outside the `with wg.no_grad():` block; keep "
            "`no_grad` for work that needs no gradient (an optimizer step "
            "`w -= lr * w.grad`, an evaluation)."),
        "stop_recording": (
            f"The path from `{w}` to `{y}` goes through `tape.stop_recording()` at {at}: the "
            "tape records nothing there, so what is computed inside is a constant to it.",
            "Move the computation that must be differentiated out of the "
            "`with tape.stop_recording():` block."),
        "detached": (
            f"{cap} is cut from the graph{_BY.get(kind, '')} at {at}: the copy holds the same "
            f"numbers but no history, so `{y}` sees it as a constant.",
            f"Use {itself} where the gradient should flow; `.detach()`, "
            "`wg.stop_gradient` and `.data` are for values that must not be differentiated."),
        "to_python": (
            f"{cap} becomes a Python number at {at} (`float()`, `int()`, `.item()`, "
            "`.tolist()` or a `math.*` function): a Python number has no gradient. PyTorch "
            "cuts the graph the same way; JAX refuses with a ConcretizationTypeError.",
            "Keep it an array: use `np.*` functions on tensors (`np.exp(x)`, not "
            "`math.exp(x)`) and index (`x[0]`) instead of `float(x)`; call `.item()` only "
            "to print or log."),
        "to_numpy": (
            f"{cap} becomes a plain NumPy array at {at} (`.numpy()`, `np.asarray`, "
            "`np.array`): a NumPy array has no gradient.",
            "Compute with the tensor itself: `np.*` functions take tensors directly "
            "(`np.sin(x)`, `x @ W`), so no conversion is needed."),
        "integer_dtype": (
            f"{cap} is cast to an integer or boolean dtype at {at}: integers have no "
            "derivative, so the result is a constant (as in PyTorch and JAX).",
            "Keep a float dtype (`np.round(x)` stays float); for a rounding that passes the "
            "gradient use a straight-through estimator: "
            "`x + wg.stop_gradient(np.round(x) - x)`."),
        "comparison": (
            f"{cap} reaches `{y}` only through a comparison at {at}: its result is "
            "boolean, a step with no gradient.",
            "Use the comparison to select values (`np.where(x > 0, a, b)` differentiates "
            "through `a` and `b`), or replace the step by a smooth surrogate such as "
            "`1 / (1 + np.exp(-k * x))`."),
        "before_tape": (
            f"{cap} is computed from `{w}` at {at}, before the `GradientTape` opened: a tape "
            "records only the operations run inside its `with` block, so to the tape that "
            "value is a constant (TensorFlow returns None the same way).",
            "Move that line into the `with wg.GradientTape() as tape:` block (after "
            f"`tape.watch({w})` for a tensor that is not a `wg.Variable`)."),
    }
    return words[cause]


def cut(s: Subject) -> Explanation:
    """``wrt`` is tracked but the target's tape does not reach it: the cut, as precisely as
    the evidence allows (a site of the code first, then a copy on the tape).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> site = Site(4, "h = x.detach()", "detach", "x")
    >>> e = cut(Subject(wg.tensor(3.0) * 2.0, x, "y", "x", sites=[site]))
    >>> e.cause, e.source.lineno
    ('detached', 4)
    """
    w, y = s.wrt_name, s.target_name
    tape = s.tape
    copies = copies_of(tape, s.wrt) if tape is not None else []
    site = _pick_site(s, copies)
    copy = copies[0] if copies else None
    if site is not None:
        cause = CAUSE_OF_SITE[site.kind]
        message, fix = _cut_words(cause, site.name, site_phrase(site), w, y, site.kind)
    elif copy is not None:
        cause = {"shared": "detached", "equal": "to_python", "integer": "integer_dtype"}[
            copy.kind]
        line = tape[copy.equation].source if tape is not None else None
        at = where_text(line) if line is not None else f"equation t{copy.equation}"
        message, fix = _cut_words(cause, w, at, w, y)
        if copy.kind == "shared":
            message = (f"A copy of `{w}` cut from the graph (`.detach()`, `wg.stop_gradient`, "
                       f"`.data` or `.numpy()`: it shares `{w}`'s memory) enters `{y}` at "
                       f"{at} as a constant, and no recorded path leads from `{w}` to `{y}`.")
        elif copy.kind == "equal":
            message = (f"A constant equal to `{w}` enters `{y}` at {at}: probably `{w}` turned "
                       "into a plain value (`float()`, `.item()`, `.tolist()`, "
                       "`np.array(x.detach())`), which has no gradient; no recorded path "
                       f"leads from `{w}` to `{y}`.")
    elif isinstance(s.wrt, Variable) or s.gradient_tape is not None:
        cause = "before_tape"
        message = (f"`{y}` was not recorded from `{w}` by a gradient tape: a tape records only "
                   "what runs inside its `with` block while it watches the value, so a value "
                   f"computed from `{w}` before the tape opened (or inside "
                   "`tape.stop_recording()`) is a constant to it.")
        fix = (f"Compute `{y}` from `{w}` inside `with wg.GradientTape() as tape:` (calling "
               f"`tape.watch({w})` first for a tensor that is not a `wg.Variable`).")
    else:
        cause = "disconnected"
        message = (f"`{y}` does not depend on `{w}` through any recorded operation: either it "
                   f"is computed without `{w}`, or the path was cut by something that leaves "
                   "no trace on the tape (`wg.no_grad()`, `.detach()`, `float()`, `.item()`, "
                   "`.numpy()`, an integer cast). PyTorch's `autograd.grad` says the input "
                   "'appears to not have been used in the graph'.")
        fix = (f"Check that `{y}` is computed from `{w}`. To find the line, pass the code "
               f"(`wg.explain({y}, {w}, source=code)`) or explain the function: "
               "`wg.explain(f, *args)`.")
    equation = eq_text = None
    notes: list[str] = []
    if copy is not None and tape is not None:
        equation, eq_text = copy.equation, equation_text(tape[copy.equation])
        line = tape[copy.equation].source
        if line is not None and (site is None or (site.lineno, site.filename) != (
                line.lineno, line.filename)):
            notes.append(f"The cut value re-enters the tape at {where_text(line)} "
                         f"(`{line.text}`) as a constant.")
    others = tuple(x for x in _usable(s) if x is not site and x.kind != "comparison")[:5]
    return Explanation(
        "none", cause, message, fix, target=y, wrt=w, equation=equation, equation_text=eq_text,
        source=site_line(site) if site is not None else None, lines=others, notes=tuple(notes))


#: The cuts that are slips when a path remains (``x * x.detach()`` is a deliberate idiom).
_SLIPS = ("to_python", "to_numpy")


def _computed_from(t: Tensor, wrt: Any) -> bool:
    """Whether ``t`` is ``wrt`` or a value recorded from it."""
    if t is wrt:
        return True
    if not (t.requires_grad or t.grad_fn is not None):
        return False
    leaf, eq = edge_of(tape_of(t), wrt)
    return leaf is not None or eq is not None


def _results_on(tape: Tape, results: tuple[Any, ...]) -> list[Copy]:
    """The constants of ``tape`` that are one of ``results`` (or share an array's memory).
    A bool or a small int is one object wherever it comes from (``int(h)`` and the
    literal ``3`` alike): the same object is no evidence there."""
    ids = {id(r) for r in results
           if type(r) is not bool and not (type(r) is int and -5 <= r <= 256)}
    arrays = [r for r in results if isinstance(r, np.ndarray) and r.size]
    found = []
    for e, pos, v in _constants(tape):
        if id(v) in ids or (isinstance(v, np.ndarray) and v.size and any(
                np.may_share_memory(v, a) for a in arrays)):
            found.append(Copy(e, pos, "shared"))
    return found


def _distinctive(value: Any) -> bool:
    """Whether finding ``value`` itself on a tape says it came from there: a float other than
    0 and ±1, or a non-empty array (a small int or a literal may be one shared object)."""
    if type(value) is float:
        return value not in (0.0, 1.0, -1.0) and value == value
    return type(value) is np.ndarray and value.size > 0


def partly_cut(s: Subject, gradient: str) -> Explanation | None:
    """A gradient reaches ``wrt``, but one of its paths was cut: a line turned a value
    computed from ``wrt`` into a Python number or a NumPy array (``.item()``,
    ``float()``, ``.numpy()``), and that very value re-enters the target's tape as a
    constant. ``None`` without both pieces of evidence (a number only printed or logged
    cuts nothing). ``gradient``: the text of what ``backward()`` gives.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> h = (x ** 2).sum()
    >>> y = (x * h.item()).sum()
    >>> site = Site(3, "y = (x * h.item()).sum()", "to_python", "h", tensor=h)
    >>> e = partly_cut(Subject(y, x, "y", "x", tape=wg.tape_of(y), sites=[site]), "[5, 5]")
    >>> e.status, e.cause, e.equation
    ('cut', 'to_python', 0)
    """
    tape = s.tape
    if tape is None or not isinstance(s.wrt, Tensor):
        return None
    w, y = s.wrt_name, s.target_name
    # (read from the code, a name's last cut is the likeliest to give the value it holds)
    for site in s.sites if s.function else s.sites[::-1]:
        t = site.tensor
        if site.kind not in _SLIPS or not isinstance(t, Tensor) or not _computed_from(t, s.wrt):
            continue
        via = ""
        if site.results:  # seen running: the very number or array it returned
            copies = _results_on(tape, site.results)
        else:  # read from the code: a constant equal to the value the variable holds
            copies = [c for c in copies_of(tape, t) if c.kind in ("shared", "equal")]
        # or a value the line bound, or one computed from it (k = float(h) * 2)
        for name, held in site.bound:
            if not copies and _distinctive(held):
                copies = _results_on(tape, (held,))
                via = f" (through `{name}`)" if copies else ""
        if not copies:
            continue
        copy = copies[0]
        eq = tape[copy.equation]
        cause = CAUSE_OF_SITE[site.kind]
        words, fix = _cut_words(cause, site.name, site_phrase(site), w, y, site.kind)
        value = f"`{site.name}`" if site.name else f"a value computed from `{w}`"
        message = (
            f"A gradient reaches `{w}`, but not along every path: {words[0].lower()}"
            f"{words[1:]} It re-enters `{y}`{via} as a constant at {eq.out.name} "
            f"(`{equation_text(eq)}`), so the gradient, {gradient}, is only that of the "
            f"paths that remain: what {value} contributes is missing.")
        return Explanation(
            "cut", cause, message, fix, target=y, wrt=w, equation=copy.equation,
            equation_text=equation_text(eq), source=site_line(site), gradient=gradient)
    return _number_of_a_held_value(s, gradient)


#: Held tensors looked at for a number that came back (a namespace may hold many).
MAX_HELD = 1000


def _number_of_a_held_value(s: Subject, gradient: str) -> Explanation | None:
    """No line cited: a scalar tensor the caller holds, computed from ``wrt`` but not on the
    target's tape, whose value (not 0 or ±1, too common to tell) is a number constant of
    that tape: most likely it was turned into a Python number (in another cell, say) and
    came back."""
    tape = s.tape
    numbers: dict[float, tuple[int, int]] = {}
    for e, pos, v in _constants(tape):
        if type(v) is float and _distinctive(v):
            numbers.setdefault(v, (e, pos))
    if not numbers:
        return None
    w, y = s.wrt_name, s.target_name
    for name, t in list(s.held.items())[:MAX_HELD]:
        if t is s.target or t.shape != () or not (t.requires_grad or t.grad_fn is not None):
            continue
        try:
            value = t.item()
        except TypeError:  # a tensor over a traced value
            continue
        found = numbers.get(value)
        # (a value that reaches the target through the tape was not cut: an equal
        # constant beside it is a coincidence)
        if found is None or edge_of(tape, t) != (None, None) or not _computed_from(t, s.wrt):
            continue
        eq = tape[found[0]]
        at = where_text(eq.source) if eq.source is not None else eq.out.name
        message = (
            f"A gradient reaches `{w}`, but probably not along every path: `{name}`, "
            f"computed from `{w}`, holds {summarize(value)}, and a constant equal to it "
            f"enters `{y}` at {at} (`{equation_text(eq)}`): most likely `{name}` was turned "
            "into a Python number (`float()`, `.item()`, `.tolist()`), which has no "
            f"gradient. Then the gradient, {gradient}, is only that of the paths that "
            f"remain: what `{name}` contributes is missing.")
        fix = (f"Use the tensor `{name}` itself where `{y}` is computed; call `.item()` only "
               "to print or log. To see the line, explain in the cell that computes "
               f"`{y}`, or pass its code: `wg.explain({y}, {w}, source=code)`.")
        return Explanation("cut", "to_python", message, fix, target=y, wrt=w,
                           equation=eq.index, equation_text=equation_text(eq),
                           source=eq.source, gradient=gradient)
    return None


def non_leaf(s: Subject, eq_index: int | None, gradient: str | None) -> Explanation:
    """``wrt`` requires grad but was computed by an op: ``backward()`` leaves its ``.grad``
    ``None`` unless ``retain_grad()`` was called.

    Examples
    --------
    >>> import wengert as wg
    >>> w = wg.tensor(2.0, requires_grad=True) * 1.0
    >>> s = Subject(w * w, w, "y", "w", tape=wg.tape_of(w * w))
    >>> e = non_leaf(s, 0, "4")
    >>> e.cause, e.op, "retain_grad" in e.fix
    ('non_leaf', 'multiply', True)
    """
    w, y = s.wrt_name, s.target_name
    eq = s.tape[eq_index] if s.tape is not None and eq_index is not None else None
    if eq is not None:
        by = f"`{op_code(eq.primitive)}`"
        if eq.source is not None:
            by += f" at {where_text(eq.source)} (`{eq.source.text}`)"
        copy = " (a copy that made a non-leaf)" if eq.primitive in COPY_OPS else ""
    else:
        by, copy = "an operation", ""
    reach = f" Its gradient does exist: {gradient}." if gradient is not None else ""
    return Explanation(
        "none", "non_leaf",
        f"`{w}` is not a leaf: it was computed by {by}{copy} from a tensor that requires grad, "
        f"and `backward()` fills `.grad` only for leaves, so `{w}.grad` stays None (PyTorch "
        "warns: 'The .grad attribute of a Tensor that is not a leaf Tensor is being "
        f"accessed').{reach}",
        f"Make `{w}` the leaf: convert first, then ask for gradients, e.g. "
        f"`{w} = wg.tensor(value, dtype=float, requires_grad=True)`; or keep this non-leaf's "
        f"gradient too with `{w}.retain_grad()` before `backward()`.",
        target=y, wrt=w, equation=eq_index, equation_text=equation_text(eq) if eq else None,
        op=eq.primitive if eq else None, source=eq.source if eq else None, gradient=gradient)


def not_in_inputs(s: Subject, computed: str | None, held: str | None) -> Explanation:
    """``backward(inputs=...)`` named other tensors, so ``wrt``'s ``.grad`` was left as it
    was: ``computed`` is what the sweep computed for it (``None``: it stopped before
    reaching it), ``held`` what ``.grad`` holds (``None``: nothing).

    Examples
    --------
    >>> e = not_in_inputs(Subject(None, None, "y", "x"), "[2, 4]", None)
    >>> e.status, e.cause, e.gradient
    ('none', 'not_in_inputs', '[2, 4]')
    """
    w, y = s.wrt_name, s.target_name
    left = f"`{w}.grad` was left unchanged ({held if held is not None else 'None'})"
    if computed is not None:
        what = (f"the sweep computed `{w}`'s gradient, {computed}, on its way, but "
                f"{left}: it was not stored")
    else:
        what = f"the sweep stopped before reaching `{w}`, and {left}"
    return Explanation(
        "none", "not_in_inputs",
        f"`{y}.backward(inputs=...)` named other tensors than `{w}`: {what} (PyTorch does "
        "the same).",
        f"Name `{w}` among them (`{y}.backward(inputs=[..., {w}])`), or call "
        f"`{y}.backward()` without `inputs=` to fill the `.grad` of every leaf.",
        target=y, wrt=w, gradient=computed)


def freed(s: Subject, status: str, gradient: str | None, why: str | None = None,
          held: str | None = None,
          held_from: str = "the backward pass of that other output") -> Explanation:
    """The target's graph was freed by a ``backward()`` without ``retain_graph=True``, and
    the sweep it ran was not kept (``why``: the reason, when one was kept but does not fit
    or was released). ``held``: what ``.grad`` holds when it came from another backward
    pass, ``held_from`` (not the target's gradient: ``gradient`` is then ``None``).

    Examples
    --------
    >>> e = freed(Subject(None, None, "y", "x"), "ok", "[2, 4]")
    >>> e.cause, e.gradient, "retain_graph=True" in e.fix
    ('graph_freed', '[2, 4]', True)
    """
    w, y = s.wrt_name, s.target_name
    known = (f" `{w}.grad` still holds what the earlier backward pass computed: {gradient}; "
             "which op made it so cannot be looked up any more." if gradient is not None else "")
    if held is not None:
        known = f" `{w}.grad` holds {held}, from {held_from}: not the gradient of `{y}`."
    kept = f" What the view-keeping mode kept cannot answer: {why}." if why else (
        " Its sweep was not kept: the view-keeping mode was not on where it ran (a thread "
        "starts outside it), or the sweep was a transform's own (`wg.grad`, `wg.vjp`).")
    return Explanation(
        status, "graph_freed",
        f"The graph behind `{y}` was freed by a `backward()` without `retain_graph=True`: its "
        "saved values are gone, so it cannot be swept again (PyTorch: 'Trying to backward "
        f"through the graph a second time').{kept}{known}",
        (f"Compute `{y}` again and call `wg.explain` before `backward()` (or pass "
         "`retain_graph=True` to it)." if why else
         "Turn the view-keeping mode on before `backward()` (`%load_ext wengert` in a "
         "notebook, or record and call `backward()` inside `with wg.keep_values():`), so "
         f"`wg.explain` can come after it; or pass `retain_graph=True` to `backward()` (or "
         f"compute `{y}` again) and call `wg.explain` before that `backward()`."),
        target=y, wrt=w, gradient=gradient)
