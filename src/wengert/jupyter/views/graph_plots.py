"""Plots of static graphs: the memory a program holds while it runs, before and after
``plan_memory``.

:func:`memory_plot` takes the timelines as data (lists of byte counts, one per
equation: what ``wengert.graph.passes.memory.memory_timeline`` returns), so it draws any
program's and needs nothing from the passes. Like every plot of this layer it returns a
matplotlib ``Figure`` built without pyplot (a notebook shows it as a PNG), imports
matplotlib only when called, and attaches the numbers drawn as ``wengert_data``.

Examples
--------
>>> fig = memory_plot({"before": [16000, 24000, 24008], "after plan_memory": [16000] * 3})
>>> fig
<Figure size 800x420 with 1 Axes>
>>> fig.wengert_data["peaks"]
{'before': (2, 24008), 'after plan_memory': (0, 16000)}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from wengert.core.formatting import format_number
from wengert.jupyter.views.plots import (
    BLACK,
    BLUE,
    GREEN,
    ORANGE,
    PURPLE,
    VERMILLION,
    _attach,
    _new_figure,
)

__all__ = ["memory_plot", "byte_unit", "bytes_text", "MAX_POINTS"]

#: Longer timelines are drawn as the maximum over bins of equal length (the peak is
#: kept exactly): a line of 10⁶ points draws slowly and shows no more.
MAX_POINTS = 4000
#: How each timeline is drawn, in order: colour, line style, marker (shape and dash as well
#: as hue, for colour-blind readers).
LINE_STYLES = (
    (BLUE, "-", "o"),
    (VERMILLION, "--", "s"),
    (GREEN, "-.", "^"),
    (PURPLE, ":", "D"),
    (ORANGE, (0, (5, 2, 1, 2)), "v"),
    (BLACK, (0, (1, 1)), "P"),
)
_UNITS = (("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


def byte_unit(n: float) -> tuple[str, float]:
    """The unit a byte count reads best in (powers of 1000, as ``nbytes_text``).

    Examples
    --------
    >>> byte_unit(512), byte_unit(24_008), byte_unit(3.2e6)
    (('B', 1.0), ('kB', 1000.0), ('MB', 1000000.0))
    """
    for unit, scale in _UNITS:
        if n >= scale:
            return unit, scale
    return "B", 1.0


def bytes_text(n: float) -> str:
    """``24.0 kB``, ``3.2 MB``, ``512 B``.

    Examples
    --------
    >>> bytes_text(24_008), bytes_text(512), bytes_text(16e6)
    ('24.0 kB', '512 B', '16.0 MB')
    """
    unit, scale = byte_unit(n)
    return f"{int(n)} B" if unit == "B" else f"{n / scale:.1f} {unit}"


def _envelope(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most :data:`MAX_POINTS` points: each bin's first index and its maximum."""
    n = len(values)
    if n <= MAX_POINTS:
        return np.arange(n), values
    size = math.ceil(n / MAX_POINTS)
    pad = (-n) % size
    padded = np.concatenate([values, np.full(pad, values[-1])]) if pad else values
    return np.arange(0, n, size), padded.reshape(-1, size).max(axis=1)


def _check(timelines: Mapping[str, Sequence[int]]) -> dict[str, np.ndarray]:
    if not timelines:
        raise ValueError("memory_plot: give at least one timeline, e.g. "
                         "{'before': memory_timeline(g), 'after': memory_timeline(planned)}")
    if len(timelines) > len(LINE_STYLES):
        raise ValueError(f"memory_plot: at most {len(LINE_STYLES)} timelines, got "
                         f"{len(timelines)}")
    out = {}
    for label, values in timelines.items():
        a = np.asarray(values, dtype=np.float64)
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"memory_plot: timeline {label!r} must be a non-empty list of "
                             f"byte counts (one per equation), got shape {a.shape}")
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError(f"memory_plot: timeline {label!r} holds negative or non-finite "
                             "byte counts")
        out[str(label)] = a
    return out


def memory_plot(timelines: Mapping[str, Sequence[int]], *,
                names: Sequence[str] | None = None, ax: Any = None,
                title: str | None = None) -> Any:
    """The bytes a program holds while each equation runs, one line per timeline (before
    and after ``plan_memory``), with each peak marked and labelled in kB/MB.

    Parameters
    ----------
    timelines : mapping of str to sequence of int
        Label -> bytes held at each equation, in execution order (what
        ``memory_timeline(graph)`` and ``memory_timeline(plan_memory(graph))`` return).
        At most six.
    names : sequence of str, optional
        The equations' names (``[eq.out.name for eq in graph]``), to say where each peak
        is (``peak 24.0 kB at t1``); used for a timeline of the same length.
    ax : matplotlib Axes, optional
        Draw on this axes instead of a new figure.
    title : str, optional
        The title; default: the peaks from the first timeline to the last
        (``peak 24.0 kB → 16.0 kB (−33%)``).

    Returns
    -------
    matplotlib.figure.Figure
        Its ``wengert_data`` is ``{"timelines": {label: array}, "peaks": {label: (index,
        bytes)}, "unit": "kB"}`` (the peak is the first equation where it is reached).

    Raises
    ------
    ValueError
        No timeline, more than six, or one that is empty or holds negative counts.

    Examples
    --------
    >>> fig = memory_plot({"before": [8, 16, 24], "after": [8, 8, 16]}, names=["a", "b", "c"])
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['peak 24 B at c', 'peak 16 B at c']
    """
    data = _check(timelines)
    top = max(float(a.max()) for a in data.values())
    unit, scale = byte_unit(top)
    if ax is None:
        ax = _new_figure((8.0, 4.2)).subplots()
    peaks: dict[str, tuple[int, int]] = {}
    longest = max(len(a) for a in data.values())
    placed: list[tuple[int, float]] = []
    for k, (label, values) in enumerate(data.items()):
        colour, style, marker = LINE_STYLES[k]
        i = int(np.argmax(values))
        peak = float(values[i])
        peaks[label] = (i, int(peak))
        xs, ys = _envelope(values)
        # equation i holds its bytes over [i, i + 1): a step per equation, closed at the end
        ax.plot(np.append(xs, len(values)), np.append(ys, ys[-1]) / scale, color=colour,
                linestyle=style, linewidth=2, drawstyle="steps-post",
                label=f"{label} (peak {bytes_text(peak)})")
        ax.axhline(peak / scale, color=colour, linestyle=":", linewidth=0.8, alpha=0.6)
        ax.plot([i + 0.5], [peak / scale], marker=marker, color=colour, markersize=8,
                markeredgecolor="white", linestyle="none", zorder=5)
        where = f" at {names[i]}" if names is not None and len(names) == len(values) else ""
        right = i > 0.7 * longest
        # above its peak, unless a label already placed there is close: then below
        below = any(abs(i - x) < 0.35 * longest and abs(peak - y) < 0.12 * top
                    for x, y in placed)
        placed.append((i, peak))
        ax.annotate(f"peak {bytes_text(peak)}{where}", (i + 0.5, peak / scale),
                    xytext=(-8 if right else 8, -10 if below else 6),
                    textcoords="offset points", ha="right" if right else "left",
                    va="top" if below else "bottom", color=colour, fontsize=10,
                    fontweight="bold", bbox={"boxstyle": "round,pad=0.15", "fc": "white",
                                             "ec": "none", "alpha": 0.85})
    ax.set_xlim(0, longest)
    ax.xaxis.set_major_locator(_integer_locator())
    ax.xaxis.set_major_formatter(_formatter(integer=True))
    ax.set_ylim(0, top / scale * 1.18)
    ax.set_xlabel("equation (execution order)")
    ax.set_ylabel(f"memory held ({unit})")
    ax.yaxis.set_major_formatter(_formatter())
    ax.grid(True, color="0.9")
    ax.legend(loc="lower right", fontsize=9, frameon=False)
    if title is None:
        title = _default_title(peaks)
    ax.set_title(title, fontsize=11, loc="left")
    return _attach(ax, {"timelines": {k: v.astype(np.int64) for k, v in data.items()},
                        "peaks": peaks, "unit": unit})


def _integer_locator() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _formatter(integer: bool = False) -> Any:
    from matplotlib.ticker import FuncFormatter

    if integer:
        return FuncFormatter(lambda v, _: f"{int(round(v)):,}")
    return FuncFormatter(lambda v, _: format_number(v, 3))


def _default_title(peaks: Mapping[str, tuple[int, int]]) -> str:
    values = [p for _, p in peaks.values()]
    if len(values) < 2:
        return f"memory held while the program runs: peak {bytes_text(values[0])}"
    first, last = values[0], values[-1]
    change = "" if first == 0 else f" ({(last - first) / first:+.0%})".replace("-", "−")
    return f"peak memory {bytes_text(first)} → {bytes_text(last)}{change}"
