"""Why a connected gradient is exactly zero, or NaN / infinite: the op, the line, the fix.

Built on :func:`~wengert.jupyter.explainer.sweep.watched_sweep`: a zero gradient is
blamed on the first *blocker* of the sweep (the step nearest the target that
received a non-zero cotangent and sent zero to the path), a NaN on the forward
pass when the target's value is already not finite, else on the first step
that turned a finite cotangent into a non-finite one, with the ``0 · inf``
through ``np.where`` (or a mask) recognised and answered with the "double
where" written from the user's own line.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> from wengert.jupyter.explainer.explain import explain
>>> x = wg.tensor([0.0, 4.0], requires_grad=True)
>>> y = np.where(x > 0, np.sqrt(x), 0.0).sum()
>>> e = explain(y, x)
>>> e.status, e.cause, e.op
('nan', 'where_nan', 'sqrt')
"""

from __future__ import annotations

from typing import Any

import numpy as np
from wengert.core.equations import Equation, Tape, stale_input
from wengert.core.formatting import format_number, summarize
from wengert.jupyter.explainer.result import Explanation, where_text
from wengert.jupyter.explainer.subject import Subject, equation_text, input_text
from wengert.jupyter.explainer.sweep import SweepFacts, as_array, is_finite, is_zero, value_of
from wengert.jupyter.explainer.words import (
    FLAT_OPS,
    SINGULAR_OPS,
    ZERO_KIND,
    double_where,
    forward_words,
    infinite_derivative_words,
    op_code,
    safe_value,
    where_wrapper,
)
from wengert.ops import REGISTRY

__all__ = ["zero", "not_finite", "at_equation"]

_MAX_OPS = {name for name, kind in ZERO_KIND.items() if kind == "larger"}
_MIN_OPS = {name for name, kind in ZERO_KIND.items() if kind == "smaller"}
_PRODUCTS = {name for name, kind in ZERO_KIND.items() if kind == "factor"}
_DEGENERATE = {name for name, kind in ZERO_KIND.items() if kind == "degenerate"}


def at_equation(eq: Equation, code: bool = False) -> str:
    """``line 4`` (with ``code``: ``line 4 (`y = np.sqrt(x)`)``), or ``equation t3 = ...``
    when no line was recorded.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(4.0, requires_grad=True)
    >>> at_equation(wg.tape_of(np.sqrt(x))[0])
    'equation `t0 = sqrt(x0)`'
    """
    if eq.source is not None:
        return f"{where_text(eq.source)} (`{eq.source.text}`)" if code else \
            where_text(eq.source)
    return f"equation `{equation_text(eq)}`"


def _value_of_input(tape: Tape, eq: Equation, i: int) -> Any:
    """The value input ``i`` of ``eq`` had when the op ran (``None`` when not known: not
    kept, or written in place since)."""
    inp = eq.inputs[i]
    if inp.source == "constant":
        return inp.value
    if inp.source == "equation":
        return tape[inp.index].value
    if any(stale_input(node, i) for node in eq.nodes):
        return None  # the leaf was changed in place since (an optimizer's step)
    saved = eq.saved_inputs[i]
    if saved is not None:
        return saved
    try:
        return inp.leaf.detach().numpy()
    except (AttributeError, TypeError):
        return None


def _path_inputs(tape: Tape, eq: Equation, path: list[bool], wrt_leaf: int | None,
                 wrt_eq: int | None) -> list[int]:
    out = []
    for i, inp in enumerate(eq.inputs):
        if (inp.source == "leaf" and inp.index == wrt_leaf and wrt_leaf is not None) or (
                inp.source == "equation" and (path[inp.index] or inp.index == wrt_eq)):
            out.append(i)
    return out


def _lines_note(s: Subject) -> tuple[str, ...]:
    if s.tape is not None and any(eq.source is not None for eq in s.tape):
        return ()
    return ("Record the computation inside `with wg.source_lines():` (or explain the function: "
            "`wg.explain(f, *args)`) to see the line of code of each equation.",)


def _input_phrase(s: Subject, eq: Equation, i: int) -> str:
    """Input ``i`` of ``eq`` for a message: `x` for the input being explained, else where it
    was computed."""
    inp = eq.inputs[i]
    if inp.source == "leaf":
        return f"`{s.wrt_name}`" if inp.leaf is s.wrt else f"its input `{inp.name}`"
    if inp.source == "equation":
        line = s.tape[inp.index].source
        if line is not None and line != eq.source:
            return f"its input (computed at {where_text(line)})"
    return f"its input `{input_text(eq, i)}`"


def _entries(n: int) -> str:
    """``its input was`` for one entry (or an unknown number), ``all 4 entries of its input
    were`` for several."""
    return f"all {n} entries of its input were" if n > 1 else "its input was"


def _not_blocked(facts: SweepFacts, w: str, y: str, common: dict[str, Any]) -> Explanation:
    """A zero gradient no single op blocked: paths that cancel, or a flat function."""
    terms = [t for t in facts.terms if not is_zero(t)]
    if len(terms) >= 2:
        return Explanation(
            "zero", "cancelled",
            f"`{w}` reaches `{y}` along {len(terms)} paths whose gradients cancel exactly "
            "(they add up to 0), as in `x - x` or `f(x) - f(x)`.",
            f"Nothing to fix if `{y}` really does not change with `{w}`; otherwise check "
            "the signs of the terms.", **common)
    return Explanation(
        "zero", "zero_derivative",
        f"The gradient of `{y}` with respect to `{w}` is exactly 0 at these values, though "
        "no single op blocked it (a product of small factors that underflowed, or a "
        "function that is flat here).",
        "Check the values along the way (`wg.tape_of(y)` inside `wg.keep_values()`).",
        **common)


def _compared(op: str, at: str, n: int, x_name: str,
              other_values: list[Any]) -> tuple[str, str, str]:
    """``(cause, message, fix)`` for a maximum or minimum that passed no gradient: a dead
    ReLU, or an operand never chosen."""
    relu = op == "relu" or (op in _MAX_OPS and other_values and other_values[0] is not None
                            and is_zero(other_values[0]))
    if relu:
        return ("relu_dead",
                f"The ReLU `{op_code(op)}(·, 0)` at {at} received a non-zero gradient "
                f"but passed none back: {_entries(n)} ≤ 0, where a ReLU is flat (a 'dead "
                "ReLU').",
                "Make some of its inputs positive: check the initialisation (weights, a "
                "small positive bias) and the learning rate if it died during training; or "
                "use a leaky ReLU, `np.where(h > 0, h, 0.01 * h)`, which is never flat.")
    which = "larger" if op in _MAX_OPS else "smaller"
    return ("lost_comparison",
            f"`{op_code(op)}` at {at} took the other operand at every entry (it was "
            f"{which}), so {x_name} gets gradient 0.",
            "Check the values compared; the operand never chosen does not influence the "
            "result.")


def zero(s: Subject, facts: SweepFacts, path: list[bool], wrt_leaf: int | None,
         wrt_eq: int | None, gradient: str) -> Explanation:
    """The gradient is exactly zero everywhere: name the op that blocked it (see the
    module docstring).

    Examples
    --------
    >>> import wengert as wg
    >>> from wengert.jupyter.explainer.sweep import path_of, watched_sweep
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = np.floor(x).sum()
    >>> s = Subject(y, x, "y", "x", tape=wg.tape_of(y))
    >>> path = path_of(s.tape, x)
    >>> facts = watched_sweep(s.tape, s.tape.outputs[0], y, x, path)
    >>> zero(s, facts, path, 0, None, "[0, 0]").cause
    'piecewise_constant'
    """
    w, y = s.wrt_name, s.target_name
    tape = s.tape
    common: dict[str, Any] = dict(target=y, wrt=w, gradient=gradient, notes=_lines_note(s))
    if facts.hook is not None:
        return _hook(s, facts.hook, common)
    if not facts.blockers:
        return _not_blocked(facts, w, y, common)
    k = facts.blockers[0]
    eq = tape[k]
    ins = _path_inputs(tape, eq, path, wrt_leaf, wrt_eq) or [0]
    i = ins[0]
    x_name = _input_phrase(s, eq, i)
    at = at_equation(eq)
    op = eq.primitive
    x_value = as_array(_value_of_input(tape, eq, i))
    n = int(x_value.size) if x_value is not None else 0
    others = [j for j in range(len(eq.inputs)) if j != i]
    other_values = [as_array(_value_of_input(tape, eq, j)) for j in others]
    cause, message, fix = "zero_derivative", "", ""
    if op in _MAX_OPS or op in _MIN_OPS:
        cause, message, fix = _compared(op, at, n, x_name, other_values)
    elif op in FLAT_OPS:
        cause = "piecewise_constant"
        message = (f"`{op_code(op)}` at {at} is flat between its jumps: its derivative is 0 "
                   "almost everywhere, so it passes no gradient back (PyTorch and JAX give 0 too).")
        fix = ("To train through it, use a straight-through estimator: "
               f"`x + wg.stop_gradient({op_code(op)}(x) - x)` computes `{op_code(op)}(x)` in the "
               "forward pass and passes the gradient unchanged; or use a smooth surrogate "
               "(`np.tanh(k * x)` for `np.sign(x)`, a sigmoid for a step).")
    elif op == "clip":
        cause = "clipped"
        bounds = ", ".join(input_text(eq, j) for j in (1, 2) if j < len(eq.inputs))
        message = (f"`np.clip` at {at}: {_entries(n)} outside [{bounds}], where clip is "
                   "flat, so no gradient passes.")
        fix = ("Widen the bounds or clip later; a soft clip keeps a gradient: "
               "`lo + (hi - lo) * (np.tanh(x) + 1) / 2`.")
    elif op == "where":
        cause = "where_branch"
        chosen = "False" if i == 1 else "True"
        message = (f"`np.where` at {at} selected the other branch everywhere (its condition "
                   f"was {chosen} for every entry), so {x_name}, its "
                   f"{'second' if i == 1 else 'third'} argument, gets gradient 0.")
        fix = ("Check the condition (its threshold, sign or broadcasting); a branch that is "
               "never selected does not influence the result.")
    elif op in _PRODUCTS and any(v is not None and is_zero(v) for v in other_values):
        cause = "zero_factor"
        message = (f"`{op_code(op)}` at {at} multiplies {x_name} by zero (its other operand "
                   "is all zeros), so it gets gradient 0.")
        fix = ("Check the other operand: an all-zero weight or mask (weights initialised to "
               "zero make every gradient through them zero).")
    elif op == "abs":
        cause = "kink"
        message = (f"`np.abs` at {at}: {_entries(n)} exactly 0, where wengert uses "
                   "abs'(0) = 0 (as PyTorch does; JAX uses 1).")
        fix = "Start away from 0, or use a smooth version: `np.sqrt(x ** 2 + 1e-12)`."
    elif op in _DEGENERATE:
        cause = "kink"
        message = (f"`{op_code(op)}` at {at} was evaluated where its rule would divide 0 by 0 "
                   "(a zero vector, a constant input): wengert uses the gradient 0 there "
                   "(libraries differ at this point: some give NaN).")
        fix = ("Start away from that point, or use a smooth form (the squared norm "
               "`np.sum(x ** 2)`).")
    elif op == "setitem":
        cause = "overwritten"
        message = (f"The item assignment at {at} overwrites every entry of {x_name} that "
                   f"reaches `{y}`, so its old values have no influence.")
        fix = ("Check the index of `y[...] = v`; build the result with `np.where` or "
               "`np.concatenate` if the old values should stay.")
    elif op not in REGISTRY:
        message = (f"The custom rule of `{op}` at {at} received a non-zero gradient but "
                   f"returned 0 (or None) for {x_name}.")
        fix = (f"Check `{op}`'s backward rule (`{op}.defvjp(fwd, bwd)`): `bwd` must return "
               "the cotangent of every input that should get a gradient.")
    else:
        message = (f"`{op_code(op)}` at {at} received a non-zero gradient but passed exactly 0 "
                   f"back to {x_name}: its derivative is 0 at these values.")
        fix = f"Check the values that reach `{op_code(op)}` there."
    notes = list(common.pop("notes"))
    for later in facts.blockers[1:3]:
        notes.append(f"Also blocking: `{op_code(tape[later].primitive)}` at "
                     f"{at_equation(tape[later], code=True)}.")
    return Explanation("zero", cause, message, fix, equation=k, equation_text=equation_text(eq),
                       op=op, source=eq.source, notes=tuple(notes), **common)


def _word(value: Any) -> str:
    a = as_array(value)
    return "NaN" if a is None or np.any(np.isnan(a)) else "inf"


def _first_forward(tape: Tape) -> tuple[Equation | None, int | None]:
    """The first equation whose value is not finite although its inputs are, or the first
    that received a non-finite leaf or constant (with that input's position)."""
    for eq in tape:
        if eq.value is None or is_finite(eq.value):
            continue
        for i, inp in enumerate(eq.inputs):
            v = _value_of_input(tape, eq, i)
            if v is not None and not is_finite(v):
                if inp.source in ("leaf", "constant"):
                    return eq, i
                break
        else:
            return eq, None
    return None, None


def not_finite(s: Subject, facts: SweepFacts, path: list[bool], gradient: str) -> Explanation:
    """The gradient holds a NaN or an infinity: blame the forward pass if the value is not
    finite, else the first op that made a finite gradient non-finite.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([0.0, 1.0], requires_grad=True)
    >>> wg.explain(np.sqrt(x).sum(), x).cause  # what wg.explain finds through it
    'infinite_derivative'
    """
    w, y = s.wrt_name, s.target_name
    tape = s.tape
    word = _word(facts.gradient)
    common: dict[str, Any] = dict(target=y, wrt=w, gradient=gradient, notes=_lines_note(s))
    target_value = value_of(s.target)
    if target_value is not None and not is_finite(target_value):
        return _forward(s, common)
    k = facts.first_bad
    if k is None:
        return Explanation(
            "nan", "nan_backward",
            f"The gradient of `{y}` with respect to `{w}` contains {word}, though no op on the "
            "path turned a finite gradient into a non-finite one (a hook or a custom rule "
            "may have).",
            "Run the backward pass under `wg.detect_anomaly()` to stop at the first non-finite "
            "gradient.", **common)
    eq = tape[k]
    op = eq.primitive
    at = at_equation(eq)
    derivative, _, op_fix = infinite_derivative_words(op)
    if op in ("divide", "power"):
        derivative = derivative.split(" and ")[facts.bad_input].rsplit(" in ", 1)[0]
    point = _point(tape, eq, facts)
    base = dict(equation=k, equation_text=equation_text(eq), op=op, source=eq.source)
    if facts.bad_where_zero:
        consumer = _consumer(tape, k)
        if consumer is not None:
            return _masked(eq, consumer, derivative, point, {**common, **base})
    if op not in SINGULAR_OPS:
        return Explanation(
            "nan", "nan_backward",
            f"At {at}, `{op_code(op)}` received a finite gradient and sent {word} back "
            f"(evaluated at {point}): its derivative is not finite there.",
            f"Check the values that reach `{op_code(op)}` there; run the backward pass under "
            "`wg.detect_anomaly()` to stop at the first non-finite gradient.", **common, **base)
    return Explanation(
        "nan", "infinite_derivative",
        f"At {at}, `{op_code(op)}` is evaluated at {point}, where its derivative {derivative} "
        f"is infinite, so the gradient it sends back is {word}.",
        f"{op_fix[0].upper() + op_fix[1:]}.", **common, **base)


def _hook(s: Subject, hook: tuple[int | None, tuple[str, ...], Any],
          common: dict[str, Any]) -> Explanation:
    """A gradient hook returned 0 for a cotangent that was not: the sweep that ran (kept by
    the view-keeping mode) shows it."""
    k, names, before = hook
    which = ", ".join(f"`{n}`" for n in names)
    if k is None:
        on, fields = f"`{s.wrt_name}` itself", {}
    else:
        eq = s.tape[k]
        on = f"the value computed at {at_equation(eq)}"
        fields = dict(equation=k, equation_text=equation_text(eq), source=eq.source)
    return Explanation(
        "zero", "hook",
        f"A gradient hook registered with register_hook on {on} ({which}) received "
        f"{summarize(before)} and returned 0, which replaced the gradient in the sweep "
        "that ran.",
        "Check what the hook returns: its result replaces the gradient (return None, or "
        "nothing, to leave it unchanged).", **common, **fields)


def _point(tape: Tape, eq: Equation, facts: SweepFacts) -> str:
    """``x = 0 (entry 3)``: the input value of ``eq`` where the first bad gradient was sent."""
    entries = facts.bad_entries
    shaped = eq.shape not in ((), None) and entries
    where = (f" ({'entries' if len(entries) > 1 else 'entry'} "
             f"{', '.join(str(j) for j in entries)})") if shaped else ""
    i = facts.bad_input
    raw = _value_of_input(tape, eq, i)
    value = as_array(raw)
    name = "b" if eq.primitive == "divide" and i == 1 else "x"
    if raw is None:  # not the op's bad point by default: a number it may never have seen
        return f"an input the tape no longer holds{where}: not kept, or changed in place since"
    if value is None or not entries:
        return f"an input that is no number here{where}: a traced value"
    flat = value.reshape(-1)
    j = entries[0] if flat.size > entries[0] else 0
    return f"{name} = {format_number(flat[j])}{where}"


def _consumer(tape: Tape, k: int) -> Equation | None:
    """The equation that used equation ``k``'s value and sent it a zero cotangent (a where
    or a mask), preferring ``where``."""
    users = [eq for eq in tape if any(inp.source == "equation" and inp.index == k
                                      for inp in eq.inputs)]
    for eq in users:
        if eq.primitive == "where":
            return eq
    for eq in users:
        if eq.primitive in ("multiply", "divide"):
            return eq
    return users[0] if users else None


def _masked(eq: Equation, consumer: Equation, derivative: str, point: str,
            fields: dict[str, Any]) -> Explanation:
    op = eq.primitive
    at_op, at_use = at_equation(eq), at_equation(consumer, code=True)
    same = eq.source is not None and consumer.source == eq.source
    use = "on the same line" if same else f"at {at_use}"
    first = (f"At {at_op}, `{op_code(op)}` is evaluated at {point}, where its derivative "
             f"{derivative} is infinite.")
    guard = (f"Guard the argument, not the result: `{op_code(op)}(np.where(mask, x, "
             f"{safe_value(op)}))`, so the op is never evaluated at the bad point.")
    wrapper = where_wrapper(consumer.source.text, op) \
        if consumer.primitive == "where" and consumer.source else None
    if wrapper is not None:  # a NumPy function written with where, e.g. np.nan_to_num
        return Explanation(
            "nan", "where_nan",
            f"{first} `{wrapper}` {use} (written with `where`) replaces that result there, "
            "so the gradient flowing back into it is 0 there, but 0 · inf = NaN: the NaN "
            "reaches the gradient anyway.", guard, **fields)
    if consumer.primitive == "where":
        rewritten = double_where(consumer.source.text, op) if consumer.source else None
        fix = ("The \"double where\": make the argument safe where the branch is not "
               "selected, so its derivative is finite there too: " +
               (f"`{rewritten}`" if rewritten else
                f"`np.where(c, {op_code(op)}(np.where(c, x, {safe_value(op)})), other)`") + ".")
        return Explanation(
            "nan", "where_nan",
            f"{first} `np.where` {use} does not select that branch there, so the gradient "
            "flowing back into the branch is 0 there, but 0 · inf = NaN: the NaN reaches the "
            "gradient anyway. (PyTorch and JAX do the same; JAX's FAQ calls it 'gradients "
            "contain NaN where using where'.)", fix, **fields)
    return Explanation(
        "nan", "masked_nan",
        f"{first} `{op_code(consumer.primitive)}` {use} multiplies its result by 0 there, so "
        "the gradient flowing back into it is 0, but 0 · inf = NaN.", guard, **fields)


def _forward(s: Subject, common: dict[str, Any]) -> Explanation:
    """The target's value is already not finite: blame the forward pass."""
    y = s.target_name
    tape = s.tape
    eq, origin = _first_forward(tape) if tape is not None else (None, None)
    check = ("Run the computation under `wg.detect_anomaly(check_forward=True)` to stop at "
             "the first non-finite value.")
    word = _word(value_of(s.target))
    if eq is None:
        return Explanation(
            "nan", "nan_forward",
            f"The value of `{y}` is already {word}: the forward pass produced it, and a "
            "gradient computed through a non-finite value is not finite either.",
            check + " Or record inside `wg.keep_values()` and call `wg.explain` again to "
            "name the op.", **common)
    base = dict(equation=eq.index, equation_text=equation_text(eq), op=eq.primitive,
                source=eq.source)
    if origin is not None:
        inp = eq.inputs[origin]
        what = f"`{s.wrt_name}`" if inp.source == "leaf" and inp.leaf is s.wrt else \
            f"The input `{inp.name}`" if inp.source == "leaf" else "A constant"
        return Explanation(
            "nan", "nan_input",
            f"{what} already contains NaN or inf where it enters `{op_code(eq.primitive)}` at "
            f"{at_equation(eq)}: the data itself is not finite, so `{y}` and its gradient are "
            "not either.",
            "Clean the data first (`np.nan_to_num`, or drop the bad rows) or check how it was "
            "made.", **common, **base)
    op_fix = infinite_derivative_words(eq.primitive)[2]
    if eq.primitive not in SINGULAR_OPS:
        op_fix = f"keep the arguments of `{op_code(eq.primitive)}` where its value is finite"
    return Explanation(
        "nan", "nan_forward",
        f"The forward pass already produced {_word(eq.value)} at `{op_code(eq.primitive)}`, "
        f"{at_equation(eq)}, from finite inputs ({forward_words(eq.primitive)}); `{y}` is "
        f"{word}, and a gradient computed through a non-finite value is not finite either.",
        f"{op_fix[0].upper() + op_fix[1:]}. {check}", **common, **base)
