"""Explaining one input: the order of the questions, from "is it even a tensor?" to the sweep.

:func:`explain_one` asks, in order: is the input a tensor; is the result one; does the
result's tape reach the input (else: is the input tracked at all, and where was the path
cut); is the input a non-leaf whose ``.grad`` stays ``None``; was the graph freed; and
then runs one watched sweep to tell a NaN, a zero and a fine gradient apart.
:func:`combine` folds the explanations of several inputs (a pytree) into one.

Examples
--------
>>> import wengert as wg
>>> x = wg.tensor(2.0, requires_grad=True)
>>> e = explain_one(Subject(x * x, x, "y", "x"))
>>> e.status, e.gradient
('ok', '4')
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
from wengert.core.errors import GraphFreedError, InplaceModifiedError
from wengert.core.formatting import summarize
from wengert.jupyter.explainer.broken import not_finite, zero
from wengert.jupyter.explainer.cut import (
    cut,
    freed,
    non_leaf,
    not_in_inputs,
    partly_cut,
    untracked,
)
from wengert.jupyter.explainer.result import Explanation
from wengert.jupyter.explainer.subject import Subject
from wengert.jupyter.explainer.sweep import (
    SweepFacts,
    edge_of,
    foreign_record,
    is_finite,
    is_zero,
    kept_record,
    path_of,
    value_of,
    watched_record,
    watched_sweep,
)
from wengert.jupyter.explainer.words import op_code
from wengert.reverse.tape_reading import hooks_of, tape_of
from wengert.reverse.tensor import Tensor

__all__ = ["explain_one", "combine", "leaves", "Subject"]

_SEVERITY = {"none": 4, "nan": 3, "zero": 2, "cut": 1, "ok": 0}


def explain_one(s: Subject) -> Explanation:
    """The explanation for one input (see the module docstring for the order of the
    questions, and :func:`_asked` for what is answered); fills ``s.tape``.

    When the answer comes from a replayed sweep and hooks sit on the way, a note says
    that they did not run (what ``.grad`` gets may differ).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> y = x * 3.0
    >>> handle = y.register_hook(lambda g: 0 * g)
    >>> e = explain_one(Subject(y * y, x, "z", "x"))
    >>> e.gradient, "did not run in this replay" in e.notes[-1]
    ('36', True)
    """
    e = _asked(s)
    shaped = _shape_note(s, e)
    if shaped:
        e = dataclasses.replace(e, notes=shaped + e.notes)
    if s.tape is None or e.status == "none" or not isinstance(s.wrt, Tensor):
        return e
    out = s.tape.outputs[0] if s.tape.outputs else None
    if kept_record(s.tape, out)[0] is not None:
        return e
    hooked = [eq.name for eq in s.tape if any(hooks_of(node) for node in eq.nodes)]
    if hooks_of(s.wrt):
        hooked.append(f"`{s.wrt_name}`")
    if not hooked:
        return e
    note = (f"Hooks registered with register_hook (on {', '.join(hooked[:3])}"
            f"{' …' if len(hooked) > 3 else ''}) did not run in this replay; what backward() "
            "gives .grad may differ. Call backward() in the view-keeping mode (%load_ext "
            "wengert, or inside wg.keep_values()) and explain after it to see their effect.")
    return dataclasses.replace(e, notes=e.notes + (note,))


def _shape_note(s: Subject, e: Explanation) -> tuple[str, ...]:
    """What the gradient of a target that is not a scalar is: the gradient of the sum of
    its entries (a replay seeds ones), or the vector-Jacobian product with the cotangent
    ``backward(gradient=...)`` was given (its kept sweep); nothing for a scalar target,
    or when no gradient was computed here.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> e = explain_one(Subject(x - x.mean(), x, "z", "x"))
    >>> e.status, "sum of its entries" in e.notes[0], "wg.explain(z[0], x)" in e.notes[0]
    ('zero', True, True)
    """
    target = s.target
    if (e.status == "none" or e.gradient is None or e.cause == "graph_freed"
            or not isinstance(target, Tensor) or target.shape == ()):
        return ()
    y, x, shape = s.target_name, s.wrt_name, target.shape
    out = s.tape.outputs[0] if s.tape is not None and s.tape.outputs else None
    record = kept_record(s.tape, out)[0] if s.tape is not None else None
    seed = record.roots[0][1] if record is not None and record.roots else None
    if seed is not None and not np.all(np.asarray(seed) == 1):
        return (f"`{y}` has shape {shape}, not a scalar: this is the vector-Jacobian product "
                f"with the cotangent backward() was given, {summarize(seed)} (what `.grad` "
                f"got), not the gradient of `{y}` itself.",)
    text = (f"`{y}` has shape {shape}, not a scalar: this is the gradient of the sum of its "
            f"entries (as `{y}.sum().backward()`), the sum of the rows of its Jacobian.")
    if e.status == "zero":
        first = ", ".join("0" * len(shape))
        text += (f" A zero sum does not mean that no entry of `{y}` changes with `{x}`: "
                 f"their gradients can cancel in the sum. Explain one entry "
                 f"(`wg.explain({y}[{first}], {x})`) to see its own.")
    return (text,)


def _asked(s: Subject) -> Explanation:
    """The explanation for one input, the questions in order.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> explain_one(Subject(x.detach() * 3.0, x, "y", "x")).cause
    'disconnected'
    """
    if not isinstance(s.wrt, Tensor):
        return untracked(s)  # not a tensor
    if not isinstance(s.target, Tensor):
        return _plain_target(s)
    if np.issubdtype(s.target.dtype, np.complexfloating):
        return _complex_target(s)
    s.tape = tape_of(s.target)
    leaf, eq_index = edge_of(s.tape, s.wrt)
    if leaf is None and eq_index is None:
        return untracked(s) or cut(s)
    record, why = kept_record(s.tape, s.tape.outputs[0] if s.tape.outputs else None)
    freed_now = record is None and any(eq.freed for eq in s.tape)
    pytorch = s.gradient_tape is None and not s.function
    if pytorch and s.wrt.requires_grad and not s.wrt.is_leaf and _grad(s.wrt) is None:
        reached = None if freed_now else _sweep(s, eq_index)
        gradient = None
        if isinstance(reached, tuple) and reached[0].gradient is not None:
            gradient = summarize(reached[0].gradient)
        return non_leaf(s, eq_index, gradient)
    if freed_now:
        out = s.tape.outputs[0] if s.tape.outputs else None
        own = s.tape[out].sweep if out is not None else None
        return _freed(s, why, foreign_record(s.tape, out) is not None,
                      stopped=own is not None and own.error is not None)
    if record is not None and record.restricted and leaf is not None:
        kept = record.leaf(s.wrt)
        if kept is None or not kept.stored:  # backward(inputs=...) named other tensors
            g = _grad(s.wrt)
            return not_in_inputs(s, summarize(kept.ct) if kept is not None else None,
                                 summarize(g) if g is not None else None)
    result = _sweep(s, eq_index)
    if isinstance(result, Explanation):
        return result
    facts, path = result
    g = facts.gradient
    if g is None:  # connected, but every rule on the way sent nothing (a custom rule's None)
        g = facts.gradient = np.zeros(s.wrt.shape)
    text = summarize(g)
    if np.size(g) == 0:  # neither zero nor not: there is no entry
        return Explanation("ok", "ok", f"`{s.wrt_name}` is empty: its gradient is an empty "
                           f"array of the same shape, {np.shape(g)}.", "",
                           target=s.target_name, wrt=s.wrt_name, gradient=text)
    if not is_finite(g):
        return not_finite(s, facts, path, text)
    if is_zero(g):
        return zero(s, facts, path, leaf, eq_index, text)
    found = partly_cut(s, text)
    if found is not None:
        return found
    notes: tuple[str, ...] = ()
    if not is_finite(value_of(s.target)):
        notes = (f"The value of `{s.target_name}` itself is not finite, though its gradient "
                 f"with respect to `{s.wrt_name}` is.",)
    return Explanation("ok", "ok", f"The gradient reaches `{s.wrt_name}` and is finite and "
                       "not all zero.", "", target=s.target_name, wrt=s.wrt_name, gradient=text,
                       notes=notes)


def _sweep(s: Subject, eq_index: int | None) -> tuple[SweepFacts, list[bool]] | Explanation:
    """The watched sweep and the path it watched, or the explanation of why it cannot run
    (a freed graph, a value modified in place)."""
    path = path_of(s.tape, s.wrt)
    out = s.tape.outputs[0] if s.tape.outputs else None
    record, _ = kept_record(s.tape, out)
    if record is not None:  # the sweep backward() ran, kept: nothing runs again
        return watched_record(s.tape, record, s.target, s.wrt, path), path
    try:
        return watched_sweep(s.tape, out, s.target, s.wrt, path), path
    except GraphFreedError:
        return _freed(s, kept_record(s.tape, out)[1])
    except InplaceModifiedError as err:
        op = f"`{op_code(err.node.op.name)}`" if err.node is not None else "an op"
        return Explanation(
            "none", "inplace",
            f"The backward pass cannot run: a value that {op} saved for it was modified in "
            "place afterwards (PyTorch: 'one of the variables needed for gradient computation "
            "has been modified by an inplace operation').",
            "Compute the value out of place (`x = x + 1`, not `x += 1`), or `.copy()` it "
            "before modifying it, so the value the gradient needs stays as it was.",
            target=s.target_name, wrt=s.wrt_name)


def _grad(t: Tensor) -> Any:
    """``t.grad`` without the warning a non-leaf's ``.grad`` gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def _freed(s: Subject, why: str | None = None, foreign: bool = False,
           stopped: bool = False) -> Explanation:
    """The graph is freed: say so, with what ``.grad`` still knows (``foreign``: the sweep
    that freed it came from another output, so ``.grad`` holds that one's gradient;
    ``stopped``: the target's own ``backward()`` stopped before writing any ``.grad``, so
    what ``.grad`` holds came from another backward pass)."""
    g = _grad(s.wrt) if isinstance(s.wrt, Tensor) else None
    if foreign:
        return freed(s, "none", None, why, held=summarize(g) if g is not None else None)
    if stopped:
        return freed(s, "none", None, why, held=summarize(g) if g is not None else None,
                     held_from=f"an earlier backward pass (that of `{s.target_name}` stopped "
                     "before writing any `.grad`)")
    status = "none" if g is None else "nan" if not is_finite(g) else \
        "zero" if is_zero(g) else "ok"
    return freed(s, status, summarize(g) if g is not None else None, why)


def _plain_target(s: Subject) -> Explanation:
    """The target is a plain number or array: its computation was cut from every input."""
    found = untracked(s) if not s.wrt.requires_grad and s.gradient_tape is None else None
    if found is not None:
        return found
    if s.sites:
        return cut(s)
    kind = type(s.target).__name__
    return Explanation(
        "none", "target_not_tensor",
        f"`{s.target_name}` is a plain {kind}, not a tensor: it was computed without recording "
        f"(a conversion such as `float()`, `.item()` or `.numpy()`, or under `wg.no_grad()`), "
        f"so nothing connects it to `{s.wrt_name}`.",
        "Keep the result a tensor: compute it with `np.*` functions on tensors, and convert "
        "to a number only for printing.", target=s.target_name, wrt=s.wrt_name)


def _complex_target(s: Subject) -> Explanation:
    """The target is complex: backward() and wg.grad refuse it, so there is no gradient."""
    y = s.target_name
    return Explanation(
        "none", "complex_target",
        f"`{y}` is complex ({s.target.dtype}): a gradient needs a real output, so backward() "
        "and wg.grad refuse it (as PyTorch and JAX's grad do) and there is no gradient of it "
        f"with respect to `{s.wrt_name}`.",
        f"Explain a real value computed from it, such as `np.abs({y}) ** 2` or "
        f"`np.real({y})`; for the complex derivative of a holomorphic function, use "
        "`wg.grad(f, holomorphic=True)`.", target=y, wrt=s.wrt_name)


# -- several inputs ----------------------------------------------------------------------


def leaves(tree: Any, base: str) -> list[tuple[Any, str]]:
    """The leaves of a pytree of inputs with their names, in ``wg``'s pytree order.

    Examples
    --------
    >>> [name for _, name in leaves({"w": 1.0, "b": (2.0, None, 3.0)}, "params")]
    ["params['w']", "params['b'][0]", "params['b'][2]"]
    """
    if not isinstance(tree, (tuple, list, dict)):
        return [(tree, base)]
    out = []
    todo: list[tuple[Any, str]] = [(tree, base)]
    while todo:
        node, name = todo.pop()
        if isinstance(node, dict):
            todo.extend((node[k], f"{name}[{k!r}]") for k in reversed(list(node)))
        elif isinstance(node, (tuple, list)):
            todo.extend((v, f"{name}[{i}]") for i, v in reversed(list(enumerate(node))))
        elif node is not None:
            out.append((node, name))
    return out


def combine(parts: list[Explanation], target: str, wrt: str) -> Explanation:
    """One explanation for several inputs: the worst part's fields (None, then NaN, then
    zero), and every part in ``parts``.

    Examples
    --------
    >>> ok = Explanation("ok", "ok", "fine")
    >>> bad = Explanation("zero", "kink", "flat")
    >>> e = combine([ok, bad], "y", "params")
    >>> e.status, e.cause, len(e.parts)
    ('zero', 'kink', 2)
    """
    if len(parts) == 1:
        return parts[0]
    worst = max(parts, key=lambda p: _SEVERITY.get(p.status, 0))
    if worst.status == "ok":
        return Explanation("ok", "ok", "Every gradient is fine.", "", target=target, wrt=wrt,
                           parts=tuple(parts))
    return Explanation(
        worst.status, worst.cause, worst.message, worst.fix, target=target, wrt=wrt,
        equation=worst.equation, equation_text=worst.equation_text, op=worst.op,
        source=worst.source, lines=worst.lines, gradient=worst.gradient, notes=worst.notes,
        parts=tuple(parts))
