"""Cutting a tape's or a graph's equations into groups, for the drawings of big ones:
by the user's line of code, by function, or into consecutive runs (one pass, no
recursion).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wengert.core.ir import Equation
from wengert.core.source import is_notebook_cell

__all__ = ["Grouping", "group_equations", "auto_grouping", "GROUPINGS", "CHUNKS"]

#: How ``group=`` may split a tape or a graph.
GROUPINGS = ("line", "function", "chunk")
#: Consecutive runs a tape is cut into when nothing better is known (``group="chunk"``).
CHUNKS = 20


@dataclass(frozen=True)
class Grouping:
    """A tape cut into groups: ``of[k]`` is the group of equation ``k``; group ``j`` has
    label ``labels[j]`` (what ``expand=`` names), a line of code ``code[j]`` (or ``""``)
    and ``sizes[j]`` equations. ``by`` says how it was cut."""

    by: str
    of: list[int]
    labels: list[str]
    code: list[str]
    sizes: list[int]


def _line_label(filename: str, lineno: int, single_file: bool) -> str:
    if single_file or is_notebook_cell(filename):
        return f"line {lineno}"
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{lineno}"


def _common_line(equations: Sequence[Equation], start: int, stop: int) -> str:
    """The code of the line that made all of ``equations[start:stop]``, or ``""``."""
    first = equations[start].source
    if first is None:
        return ""
    for k in range(start + 1, stop):
        line = equations[k].source
        if line is None or line.lineno != first.lineno or line.filename != first.filename:
            return ""
    return first.text


def group_equations(equations: Sequence[Equation], by: str, chunks: int = CHUNKS
                    ) -> Grouping:
    """Cut a tape's or a graph's equations into groups, in one pass: ``by="line"`` (the
    user's line of code), ``"function"`` (the function that line is in) or ``"chunk"`` (``chunks``
    consecutive runs of equal length). Equations without a recorded line form the group
    ``"no line recorded"``. Groups are numbered in order of first appearance.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(1.0, requires_grad=True)
    >>> for _ in range(10):
    ...     x = x * 2.0
    >>> g = group_equations(wg.tape_of(x), "chunk", chunks=3)
    >>> g.labels, g.sizes
    (['t0–t3', 't4–t7', 't8–t9'], [4, 4, 2])
    """
    if by not in GROUPINGS:
        raise ValueError(f"group={by!r}: use one of {', '.join(map(repr, GROUPINGS))}, "
                         "'auto' or None")
    tape = equations
    n = len(tape)
    of: list[int] = []
    labels: list[str] = []
    code: list[str] = []
    sizes: list[int] = []
    if by == "chunk":
        size = max(1, math.ceil(n / max(1, chunks)))
        for start in range(0, n, size):
            stop = min(n, start + size)
            first, last = tape[start].out.name, tape[stop - 1].out.name
            labels.append(f"{first}–{last}" if stop - start > 1 else first)
            code.append(_common_line(tape, start, stop))
            sizes.append(stop - start)
            of.extend([len(labels) - 1] * (stop - start))
        return Grouping(by, of, labels, code, sizes)
    files = {eq.source.filename for eq in tape if eq.source is not None}
    single_file = len(files) <= 1
    functions: dict[str, set[str]] = {}
    if by == "function":
        for eq in tape:
            if eq.source is not None:
                functions.setdefault(eq.source.function, set()).add(eq.source.filename)
    number: dict[Any, int] = {}
    for eq in tape:
        line = eq.source
        if line is None:
            key: Any = None
        elif by == "line":
            key = (line.filename, line.lineno)
        else:
            key = (line.filename, line.function)
        j = number.get(key)
        if j is None:
            j = number[key] = len(labels)
            if line is None:
                labels.append("no line recorded")
                code.append("")
            elif by == "line":
                labels.append(_line_label(line.filename, line.lineno, single_file))
                code.append(line.text)
            else:
                name = "top level" if line.function == "<module>" else f"{line.function}()"
                if len(functions[line.function]) > 1 and not is_notebook_cell(line.filename):
                    name += " in " + line.filename.replace("\\", "/").rsplit("/", 1)[-1]
                labels.append(name)
                code.append("")
            sizes.append(0)
        of.append(j)
        sizes[j] += 1
    return Grouping(by, of, labels, code, sizes)


def auto_grouping(tape: Sequence[Equation], max_nodes: int) -> Grouping:
    """Source lines when they give a few groups, else functions, else chunks."""
    limit = max(2, max_nodes // 4)
    if any(eq.source is not None for eq in tape):
        for by in ("line", "function"):
            grouping = group_equations(tape, by)
            if 1 < len(grouping.labels) <= limit:
                return grouping
    # One group says nothing about the structure: consecutive runs (with their line).
    return group_equations(tape, "chunk")
