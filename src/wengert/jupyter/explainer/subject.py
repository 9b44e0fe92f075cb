"""What one explanation is about: a target, one input, their names, and what is known.

Examples
--------
>>> import wengert as wg
>>> x = wg.tensor(2.0, requires_grad=True)
>>> tape = wg.tape_of(x * x + 1.0)
>>> equation_text(tape[0]), equation_text(tape[1])
('t0 = multiply(x0, x0)', 't1 = add(t0, 1)')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wengert.core.equations import Equation, Tape
from wengert.core.formatting import format_number
from wengert.core.source import SourceLine
from wengert.jupyter.explainer.source import Site

__all__ = ["Subject", "equation_text", "site_line", "input_text"]


@dataclass
class Subject:
    """The facts one explanation starts from.

    Attributes
    ----------
    target, wrt : Any
        The result and the input (one leaf of a pytree).
    target_name, wrt_name : str
        How the message calls them.
    tape : Tape or None
        ``wg.tape_of(target)`` (``None`` when the target is not a tensor).
    gradient_tape : GradientTape or None
        The tape the user asks for the gradient (TensorFlow dialect), when given.
    sites : list of Site
        Lines that cut a value computed from ``wrt`` (from the run of a function or the
        ``source=`` code), in order; the watcher's first.
    function : bool
        Whether the target came from ``wg.explain(f, *args)`` (the fixes then speak of
        ``f``'s code, and ``.grad`` is not involved).
    held : dict
        The caller's variables that hold tensors (name -> tensor), for a value turned
        into a Python number in another cell than the call's.
    """

    target: Any
    wrt: Any
    target_name: str
    wrt_name: str
    tape: Tape | None = None
    gradient_tape: Any = None
    sites: list[Site] = field(default_factory=list)
    function: bool = False
    held: dict[str, Any] = field(default_factory=dict)


def input_text(eq: Equation, i: int) -> str:
    """Input ``i`` of ``eq`` as the tape names it (a scalar constant shows its value).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> eq = wg.tape_of(x * 0.5 + np.ones(2))[1]
    >>> input_text(eq, 0), input_text(eq, 1)
    ('t0', 'const')
    """
    inp = eq.inputs[i]
    if inp.source == "constant" and inp.value is not None and np.ndim(inp.value) == 0:
        try:
            return format_number(np.asarray(inp.value).item())
        except (TypeError, ValueError):
            return "const"
    return inp.name


def equation_text(eq: Equation) -> str:
    """``t1 = sqrt(x0)``, ``t2, t3 = eigh(t1)``: the equation as the tape writes it,
    without its params."""
    args = ", ".join(input_text(eq, i) for i in range(len(eq.inputs)))
    return f"{', '.join(v.name for v in eq.outs)} = {eq.primitive}({args})"


def site_line(site: Site) -> SourceLine:
    """A site as a :class:`SourceLine` (the ``source`` field of an explanation).

    Examples
    --------
    >>> site_line(Site(3, "z = h.detach()", "detach", "h"))
    SourceLine(filename='', lineno=3, function='', text='z = h.detach()')
    """
    return SourceLine(site.filename, site.lineno, "", site.text)
