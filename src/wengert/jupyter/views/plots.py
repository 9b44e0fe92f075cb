"""Plots where a picture beats a table: derivatives, gradient fields, Jacobians, and
what forward and reverse mode cost, and the memory a program holds while it runs.

Every function returns a matplotlib ``Figure`` (built with the object-oriented
API: no pyplot, no global state, no window pops up) that a notebook shows as a
PNG. matplotlib is imported only when a plot is drawn, never by
``import wengert``. The numbers drawn are attached to the figure and to the
axes as ``wengert_data`` (a dict; see each function), so they can be read and
tested without looking at pixels.

The derivatives come from wengert itself, vectorised over the whole grid:
:func:`derivative_plot` pushes the grid through ``f`` once in forward mode
(``wg.jvp``), :func:`gradient_field` takes one ``wg.grad`` of the sum of ``f``
over the grid (each point's value depends on its own coordinates only, so the
gradient of the sum holds every point's gradient), :func:`jacobian_heatmap`
calls ``wg.jacobian`` and :func:`mode_cost_plot` times ``wg.jacfwd`` against
``wg.jacrev``. :func:`memory_plot` takes byte timelines, or subjects (a graph, a tape, a
tensor: see :func:`~wengert.jupyter.views.subject.as_subject`) whose timelines it computes.

Examples
--------
>>> import numpy as np
>>> fig = derivative_plot(np.sin, (-3.0, 3.0), at=0.0, n=50)
>>> fig
<Figure size 700x640 with 2 Axes>
>>> float(fig.wengert_data["df"][0].round(4))  # cos(-3)
-0.99
"""

from __future__ import annotations

import functools
import inspect
import io
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from wengert.core.equations import Tape
from wengert.core.formatting import format_number
from wengert.core.sweep import SweepObserver, observe_sweep
from wengert.forward.dual import Dual
from wengert.graph.program import Graph
from wengert.jupyter.views.subject import as_subject
from wengert.transforms.forward import derivative, jacfwd, jacobian, jacrev, jvp
from wengert.transforms.reverse import grad

__all__ = [
    "derivative_plot",
    "gradient_field",
    "jacobian_heatmap",
    "mode_cost_plot",
    "measure_mode_cost",
    "linear_tanh_family",
    "ModeCost",
    "memory_plot",
    "tape_timeline",
    "byte_unit",
    "bytes_text",
    "MAX_POINTS",
]

#: Okabe-Ito colours: distinguishable with every common colour-vision deficiency.
BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
)
#: Colour, marker and line style of the k-th marked point (shape and dash as well as hue).
POINT_STYLES = (
    (GREEN, "o", (0, (1, 1.5))),
    (PURPLE, "s", (0, (5, 2))),
    (ORANGE, "^", (0, (5, 2, 1, 2))),
    (SKY, "D", (0, (2, 2))),
    (BLACK, "v", (0, (8, 2))),
)
#: Points of the grid on which gradient_field draws its contours (per axis).
CONTOUR_POINTS = 120
#: gradient_field's arrows show direction only when more than half of them would be shorter
#: than this fraction of the longest if drawn to scale (most would be invisible).
SHORT_ARROW = 0.2
#: jacobian_heatmap writes the numbers in the cells when the matrix has at most this many
#: rows and columns.
ANNOTATE_UP_TO = 12
#: Pixels per inch of the figures and of the PNG a notebook shows (as matplotlib's inline
#: backend: sharper PNGs of the contour plots would weigh several hundred kB in a notebook).
SCREEN_DPI = 100


# --------------------------------------------------------------------------- figures


@functools.cache
def _figure_class() -> type:
    """A ``Figure`` that a notebook shows as a PNG by itself.

    A plain ``Figure`` made without pyplot has only its ``repr`` in a notebook
    (IPython's matplotlib formatter is installed when pyplot is imported); this
    subclass renders itself.
    """
    from matplotlib.figure import Figure

    class PlotFigure(Figure):
        """A matplotlib figure with a PNG representation for notebooks."""

        def __repr__(self) -> str:
            w, h = self.get_size_inches() * self.dpi
            return f"<Figure size {w:g}x{h:g} with {len(self.axes)} Axes>"

        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            # "tight" as matplotlib's inline backend: a long label is never cut off
            self.savefig(buf, format="png", dpi=SCREEN_DPI, facecolor="white",
                         bbox_inches="tight", pad_inches=0.1, metadata={"Software": None})
            return buf.getvalue()

    return PlotFigure


def _new_figure(size: tuple[float, float]) -> Any:
    return _figure_class()(figsize=size, dpi=SCREEN_DPI, layout="constrained",
                           facecolor="white")


def _attach(ax: Any, data: dict[str, Any]) -> Any:
    """Hang ``data`` on ``ax`` and its figure; return the figure."""
    fig = ax.get_figure()
    ax.wengert_data = data
    fig.wengert_data = data
    return fig


def _function_name(f: Callable[..., Any], label: str | None) -> str:
    if label is not None:
        return label
    name = getattr(f, "__name__", "")
    return name if name.isidentifier() and name != "<lambda>" else "f"


# --------------------------------------------------------------------------- checks


def _check_range(r: Any, what: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in r)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a pair (lo, hi) of numbers, got {r!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{what} must be a pair (lo, hi) of finite numbers with lo < hi, "
                         f"got {r!r}")
    return lo, hi


def _not_scalar(where: str, shape: tuple[int, ...], domain: str) -> TypeError:
    return TypeError(
        f"{where} plots a function {domain} → R (one number out), but f returned an array of "
        f"shape {shape}. For a vector-valued function, look at its Jacobian with "
        "jacobian_heatmap(f, x), or plot one output at a time (lambda x: f(x)[0])."
    )


def _scalar_output(value: Any, where: str, domain: str) -> float:
    shape = np.shape(value)
    if shape != ():
        raise _not_scalar(where, shape, domain)
    try:
        return float(value)
    except TypeError:
        raise TypeError(f"{where}: f must return a number, got {type(value).__name__}") from None


def _agrees(a: Any, b: Any) -> bool:
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-9, atol=1e-12,
                            equal_nan=True))


def _sample_indices(size: int) -> list[int]:
    """Three spread indices: where a vectorised result is compared with point-by-point calls."""
    return sorted({0, size // 3, size - 1})


# --------------------------------------------------------------------------- derivative_plot


def _derivative_on_grid(
    f: Callable[[Any], Any], xs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """``f`` and ``f′`` on the grid ``xs``: one forward-mode pass over the whole grid when
    ``f`` works elementwise on arrays, else one ``wg.derivative`` per point.

    Returns ``(values, derivatives, vectorised)``.
    """
    try:
        values, slopes = jvp(f, (xs,), (np.ones_like(xs),))
        values = np.broadcast_to(np.asarray(values, float), xs.shape)
        slopes = np.broadcast_to(np.asarray(slopes, float), xs.shape)
    except Exception:  # not elementwise on arrays: point by point
        values = slopes = None
    if values is not None and all(
        _agrees(values[i], f(float(xs[i]))) and _agrees(slopes[i], derivative(f)(float(xs[i])))
        for i in _sample_indices(len(xs))
    ):
        return np.array(values), np.array(slopes), True
    d = derivative(f)
    values = np.array([float(f(float(x))) for x in xs])
    slopes = np.array([float(d(float(x))) for x in xs])
    return values, slopes, False


def derivative_plot(
    f: Callable[[Any], Any],
    x_range: tuple[float, float],
    at: float | Sequence[float] | None = None,
    *,
    n: int = 400,
    ax: Any = None,
    label: str | None = None,
) -> Any:
    """``f`` and its derivative ``f′`` on an interval, with tangent lines at chosen points.

    ``f′`` comes from forward mode: the grid of ``n`` points is one array
    pushed through ``f`` once with ``wg.jvp`` (tangent 1 at every point).
    A function that does not work elementwise on arrays (a Python ``if`` on
    its argument, ``math.*``) is differentiated point by point with
    ``wg.derivative`` instead; three grid points are always checked against
    ``wg.derivative`` to tell the two apart.

    Without ``ax`` the figure has two panels sharing the x axis: ``f`` with the
    tangent line at each point ``a`` of ``at`` above, ``f′`` below, where the
    same marker sits at height ``f′(a)``: the slope above is the height below.
    The legend under the panels gives each slope. With ``ax``, both curves go
    on that axes (``f′`` dashed).

    Parameters
    ----------
    f : callable
        A function of one real number returning one real number.
    x_range : (float, float)
        The interval ``(lo, hi)`` shown.
    at : float or sequence of float, optional
        Where to draw tangent lines (inside ``x_range``; at most 5 points).
    n : int
        Number of grid points.
    ax : matplotlib Axes, optional
        Draw on this axes instead of a new figure.
    label : str, optional
        The function's name in titles and legends (default ``f.__name__``, or
        ``f`` for a lambda).

    Returns
    -------
    matplotlib.figure.Figure
        Its ``wengert_data`` is ``{"x", "f", "df": arrays on the grid, "at": [(a, f(a),
        f′(a)), ...], "vectorised": bool}`` (``vectorised``: one pass for the grid).

    Raises
    ------
    TypeError
        ``f`` returns an array rather than one number (use :func:`jacobian_heatmap`).
    ValueError
        An empty interval, ``n < 2``, or a point of ``at`` outside the interval.

    Examples
    --------
    >>> import numpy as np
    >>> fig = derivative_plot(lambda x: x ** 3, (-1.0, 2.0), at=[0.5, 1.5], n=31)
    >>> [(a, fa, round(da, 2)) for a, fa, da in fig.wengert_data["at"]]
    [(0.5, 0.125, 0.75), (1.5, 3.375, 6.75)]
    >>> fig.wengert_data["vectorised"]
    True
    """
    lo, hi = _check_range(x_range, "derivative_plot: x_range")
    points = _tangent_points(at, lo, hi, n)
    _scalar_output(f((lo + hi) / 2), "derivative_plot", "R")
    xs = np.linspace(lo, hi, n)
    values, slopes, vectorised = _derivative_on_grid(f, xs)
    d = derivative(f)
    marked = [(a, float(f(a)), float(d(a))) for a in points]
    name = _function_name(f, label)

    how = (f"forward mode: 1 pass for {n} points" if vectorised
           else f"forward mode: wg.derivative at each of {n} points")
    top, bottom = _derivative_panels(ax, xs, values, slopes, marked, name, how)
    data = {"x": xs, "f": values, "df": slopes, "at": marked, "vectorised": vectorised}
    if bottom is not top:
        bottom.wengert_data = data
    return _attach(top, data)


def _tangent_points(at: Any, lo: float, hi: float, n: int) -> list[float]:
    """The points of ``at`` of :func:`derivative_plot`, checked against the interval."""
    if n < 2:
        raise ValueError(f"derivative_plot: n must be at least 2 grid points, got {n}")
    points = [] if at is None else [float(a) for a in np.atleast_1d(np.asarray(at, float))]
    if len(points) > len(POINT_STYLES):
        raise ValueError(f"derivative_plot: at most {len(POINT_STYLES)} tangent points, "
                         f"got {len(points)}")
    for a in points:
        if not lo <= a <= hi:
            raise ValueError(f"derivative_plot: the point at={format_number(a)} is outside "
                             f"x_range ({format_number(lo)}, {format_number(hi)})")
    return points


def _derivative_panels(ax: Any, xs: np.ndarray, values: np.ndarray, slopes: np.ndarray,
                       marked: list[tuple[float, float, float]], name: str, how: str
                       ) -> tuple[Any, Any]:
    """The curves of :func:`derivative_plot`: on ``ax``, or on two new panels."""
    lo, hi = float(xs[0]), float(xs[-1])
    if ax is None:
        fig = _new_figure((7.0, 6.4))
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    else:
        top = bottom = ax
    top.plot(xs, values, color=BLUE, linewidth=2.2, label=f"{name}(x)")
    bottom.plot(xs, slopes, color=VERMILLION, linewidth=2, linestyle="--",
                label=f"{name}′(x)   ({how})")
    top.set_ylim(_padded(values if top is not bottom else np.concatenate([values, slopes])))
    _draw_tangents(top, bottom, marked, name, (hi - lo) / 8, (lo, hi))
    for panel in {id(top): top, id(bottom): bottom}.values():
        panel.axhline(0, color="0.7", linewidth=0.8, zorder=0)
        panel.grid(True, color="0.92")
    bottom.set_xlabel("x")
    bottom.set_xlim(lo, hi)
    if bottom is top:
        top.legend(loc="best", fontsize=9, framealpha=0.92)
        top.set_title(f"{name}(x) and its derivative {name}′(x)", fontsize=11, loc="left")
    else:
        # one legend below the panels, where it covers nothing: f, f′, then the points
        upper, lower = top.get_legend_handles_labels(), bottom.get_legend_handles_labels()
        fig.legend(upper[0][:1] + lower[0] + upper[0][1:], upper[1][:1] + lower[1] + upper[1][1:],
                   loc="outside lower center", ncols=1 if len(marked) <= 3 else 2, fontsize=9,
                   frameon=False)
        top.set_ylabel(f"{name}(x)")
        bottom.set_ylabel(f"{name}′(x)")
        top.set_title(f"{name}(x) and its tangent lines" if marked else f"{name}(x)",
                      fontsize=12, loc="left")
        bottom.set_title(f"its derivative {name}′(x): the height here is the slope above",
                         fontsize=11, loc="left")
    return top, bottom


def _draw_tangents(top: Any, bottom: Any, marked: list[tuple[float, float, float]], name: str,
                   half: float, x_range: tuple[float, float]) -> None:
    """At each ``(a, f(a), f′(a))``: the tangent line (``half`` wide either side) and a marker
    on ``f`` in ``top``, the same marker at height ``f′(a)`` in ``bottom``, a dotted line
    joining them, and one legend entry saying the slope."""
    lo, hi = x_range
    for k, (a, fa, da) in enumerate(marked):
        colour, marker, dashes = POINT_STYLES[k]
        tx = np.array([max(lo, a - half), min(hi, a + half)])
        if np.isfinite(da) and np.isfinite(fa):  # (an infinite slope: the legend says it)
            top.plot(tx, fa + da * (tx - a), color=colour, linestyle=dashes, linewidth=2.2,
                     zorder=4)
        top.plot([a], [fa], marker=marker, color=colour, markersize=9, markeredgecolor=BLACK,
                 linestyle="none", zorder=5)
        top.plot([], [], color=colour, linestyle=dashes, linewidth=2.2, marker=marker,
                 markersize=8, markeredgecolor=BLACK,
                 label=f"at x = {format_number(a, 3)}: tangent slope = {name}′"
                       f"({format_number(a, 3)}) = {format_number(da, 3)}")
        if bottom is not top:
            bottom.plot([a], [da], marker=marker, color=colour, markersize=9,
                        markeredgecolor=BLACK, linestyle="none", zorder=5)
            for panel in (top, bottom):
                panel.axvline(a, color=colour, linewidth=1.2, linestyle=":", zorder=1)


def _padded(v: np.ndarray) -> tuple[float, float]:
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return -1.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    pad = 0.08 * (hi - lo) if hi > lo else max(1.0, abs(lo)) * 0.1
    return lo - pad, hi + pad


# --------------------------------------------------------------------------- gradient_field


def _takes_two(f: Callable[..., Any]) -> bool:
    """Whether ``f`` is called as ``f(x, y)`` (two positional parameters) or as ``f(v)``."""
    if isinstance(f, np.ufunc):
        return f.nin == 2
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    return len(required) >= 2 or (not required and len(positional) >= 2)


def _as_xy(f: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    """``f`` as a function of ``(x, y)`` whichever way it takes its arguments."""
    if _takes_two(f):
        return f
    return lambda x, y: f(_stack_xy(x, y))


def _stack_xy(x: Any, y: Any) -> Any:
    if isinstance(x, float) and isinstance(y, float):
        return np.array([x, y])
    return np.stack([x, y])  # a traced x, y: np.stack dispatches to wengert


def _gradient_on_grid(
    fxy: Callable[[Any, Any], Any], X: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """``∇f`` at every grid point: one reverse pass of the summed grid function when ``f`` is
    elementwise on arrays, else ``wg.grad`` point by point.

    Returns ``(df/dx, df/dy, vectorised)``.
    """
    pointwise = grad(fxy, argnums=(0, 1))
    xs, ys = X.ravel(), Y.ravel()
    try:
        gx, gy = grad(lambda x, y: np.sum(_grid_values(fxy, x, y)), argnums=(0, 1))(xs, ys)
        gx, gy = np.asarray(gx, float), np.asarray(gy, float)
    except Exception:  # not elementwise on arrays: point by point
        gx = gy = None
    if gx is not None and gx.shape == xs.shape and all(
        _agrees((gx[i], gy[i]), pointwise(float(xs[i]), float(ys[i])))
        for i in _sample_indices(xs.size)
    ):
        return gx.reshape(X.shape), gy.reshape(X.shape), True
    pairs = [pointwise(float(x), float(y)) for x, y in zip(xs, ys)]
    gx = np.array([float(p[0]) for p in pairs]).reshape(X.shape)
    gy = np.array([float(p[1]) for p in pairs]).reshape(X.shape)
    return gx, gy, False


def _grid_values(fxy: Callable[[Any, Any], Any], x: Any, y: Any) -> Any:
    out = fxy(x, y)
    if np.shape(out) != np.shape(x):
        raise ValueError("f is not elementwise on arrays")
    return out


def _values_on_grid(fxy: Callable[[Any, Any], Any], X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``f`` at every grid point (plain NumPy; no derivative)."""
    try:
        Z = np.asarray(_grid_values(fxy, X, Y), float)
        ok = all(_agrees(Z.flat[i], fxy(float(X.flat[i]), float(Y.flat[i])))
                 for i in _sample_indices(X.size))
    except Exception:  # not elementwise on arrays: point by point
        ok = False
    if ok:
        return Z
    return np.array([float(fxy(float(x), float(y))) for x, y in zip(X.flat, Y.flat)]).reshape(
        X.shape)


def _contour_levels(Z: np.ndarray, levels: int | Sequence[float]) -> np.ndarray:
    """Levels at evenly spaced quantiles of ``Z`` (each band covers about the same area, so
    steep valleys such as Rosenbrock's show), or the levels given."""
    if not isinstance(levels, (int, np.integer)):
        return np.unique(np.asarray(levels, float))
    if levels < 2:
        raise ValueError(f"gradient_field: levels must be at least 2, got {levels}")
    finite = Z[np.isfinite(Z)]
    if finite.size == 0:
        raise ValueError("gradient_field: f is not finite anywhere on the grid")
    qs = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, int(levels) + 1)))
    if qs.size < 2:  # a constant function
        z = float(finite[0])
        return np.array([z - 0.5, z + 0.5])
    return qs


def gradient_field(
    f: Callable[..., Any],
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    *,
    n: int = 25,
    levels: int | Sequence[float] = 20,
    path: Sequence[Sequence[float]] | None = None,
    arrows: str = "auto",
    ax: Any = None,
    label: str | None = None,
) -> Any:
    """Contours of ``f: R² → R`` and the arrows of its gradient ``∇f``.

    ``f`` is called as ``f(x, y)`` when it takes two positional parameters
    (or is a two-input ufunc such as ``np.hypot``), and as ``f(v)`` with
    ``v = [x, y]`` otherwise (index it: ``v[0]``, ``v[1]``).

    The gradients come from reverse mode, vectorised: the grid's x and y
    coordinates are two arrays, and one ``wg.grad`` of ``sum(f)``
    over the grid gives every point's gradient at once (each point's value
    depends on its own coordinates only). A function that does not work
    elementwise on arrays is differentiated point by point instead; three
    grid points are always checked against ``wg.grad`` to tell the two apart.

    Arrows point uphill, perpendicular to the contour lines; gradient descent
    walks against them. With ``arrows="scaled"`` their length is
    proportional to ``|∇f|``; with ``"direction"`` they all have the same
    length and show the direction only; ``"auto"`` picks ``"direction"``
    when more than half of the arrows would be shorter than a fifth of the
    longest (a steep valley such as Rosenbrock's dwarfs the rest), and the
    title says which.

    Parameters
    ----------
    f : callable
        ``f(x, y)`` or ``f(v)``, returning one number.
    xlim, ylim : (float, float)
        The rectangle shown.
    n : int
        Arrows along the longer side of the rectangle (fewer along the
        shorter one, so that the arrows sit on a square grid).
    levels : int or sequence of float
        Number of filled contour bands (at evenly spaced quantiles of ``f``
        on the rectangle, so each band covers a similar area), or the levels.
    path : sequence of (x, y), optional
        Points drawn on top, joined in order (a gradient-descent trajectory).
    arrows : {"auto", "scaled", "direction"}
        Arrow lengths, see above.
    ax : matplotlib Axes, optional
        Draw on this axes instead of a new figure.
    label : str, optional
        The function's name in the title (default ``f.__name__``).

    Returns
    -------
    matplotlib.figure.Figure
        Its ``wengert_data`` is ``{"x", "y": the arrows' grid (rows along y, columns along
        x), "dfdx", "dfdy": ∇f there, "levels", "arrows": "scaled" or "direction",
        "vectorised": bool, "path": (k, 2) array or None}``.

    Raises
    ------
    TypeError
        ``f`` returns an array rather than one number (use :func:`jacobian_heatmap`).
    ValueError
        An empty rectangle, ``n < 2``, ``levels < 2``, or an unknown ``arrows``.

    Examples
    --------
    >>> import numpy as np
    >>> fig = gradient_field(lambda x, y: x ** 2 + 3 * y ** 2, (-1, 1), (-1, 1), n=5)
    >>> fig.wengert_data["dfdx"][0], fig.wengert_data["dfdy"][:, 0]
    (array([-2., -1.,  0.,  1.,  2.]), array([-6., -3.,  0.,  3.,  6.]))
    >>> rosenbrock = lambda v: (1 - v[0]) ** 2 + 100 * (v[1] - v[0] ** 2) ** 2
    >>> gradient_field(rosenbrock, (-2, 2), (-1, 3), path=[(-1.5, 2.5), (1, 1)])
    <Figure size 700x630 with 2 Axes>
    """
    fxy, (x0, x1), (y0, y1) = _field_ranges(f, xlim, ylim, n, arrows)
    trail = None if path is None else np.asarray(path, float).reshape(-1, 2)
    ratio = (y1 - y0) / (x1 - x0)
    square = 0.25 <= ratio <= 4  # then equal scales: arrows look perpendicular to contours
    nx, ny = _arrow_counts(n, ratio if square else 1.0)
    X, Y = np.meshgrid(np.linspace(x0, x1, nx), np.linspace(y0, y1, ny))
    gx, gy, vectorised = _gradient_on_grid(fxy, X, Y)
    contours = _contour_grid(fxy, (x0, x1, y0, y1))
    bands = _contour_levels(contours[2], levels)
    cell = min((x1 - x0) / (nx - 1), (y1 - y0) / (ny - 1))
    arrows, (u, v, scale) = _arrow_lengths(gx, gy, arrows, cell)
    ax, colourbar_axes = _field_axes(ratio if square else 1.0) if ax is None else (ax, None)
    name = _function_name(f, label)
    _draw_contours(ax, colourbar_axes, contours, bands, name)
    ax.quiver(X, Y, u, v, angles="xy", scale_units="xy", scale=scale, color="black",
              edgecolor="white", linewidth=0.5, units="inches", width=0.02, headwidth=3.5,
              headlength=4, headaxislength=3.5, pivot="tail", zorder=3)
    if trail is not None:
        _draw_path(ax, trail)
    _label_field(ax, name, arrows, (X.size, vectorised), (x0, x1, y0, y1), square)
    return _attach(ax, {"x": X, "y": Y, "dfdx": gx, "dfdy": gy, "levels": bands,
                        "arrows": arrows, "vectorised": vectorised, "path": trail})


def _field_ranges(f: Callable[..., Any], xlim: Any, ylim: Any, n: int, arrows: str
                  ) -> tuple[Callable[[Any, Any], Any], tuple[float, float], tuple[float, float]]:
    """``f`` as ``f(x, y)`` and the rectangle of :func:`gradient_field`, its other
    arguments checked."""
    xs = _check_range(xlim, "gradient_field: xlim")
    ys = _check_range(ylim, "gradient_field: ylim")
    if n < 2:
        raise ValueError(f"gradient_field: n must be at least 2 arrows per axis, got {n}")
    if arrows not in ("auto", "scaled", "direction"):
        raise ValueError(f"gradient_field: arrows must be 'auto', 'scaled' or 'direction', "
                         f"got {arrows!r}")
    fxy = _as_xy(f)
    _scalar_output(fxy((xs[0] + xs[1]) / 2, (ys[0] + ys[1]) / 2), "gradient_field", "R²")
    return fxy, xs, ys


def _contour_grid(fxy: Callable[[Any, Any], Any], box: tuple[float, float, float, float]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fine grid of :func:`gradient_field`'s contours and ``f`` on it."""
    CX, CY = np.meshgrid(np.linspace(box[0], box[1], CONTOUR_POINTS),
                         np.linspace(box[2], box[3], CONTOUR_POINTS))
    return CX, CY, _values_on_grid(fxy, CX, CY)


def _draw_contours(ax: Any, colourbar_axes: Any, grid: tuple[np.ndarray, ...],
                   bands: np.ndarray, name: str) -> None:
    """The filled contours of :func:`gradient_field` and their colour bar."""
    from matplotlib.colors import BoundaryNorm

    fig = ax.get_figure()
    CX, CY, Z = grid
    # one colour per band, evenly spread over viridis whatever the spacing of the levels
    norm = BoundaryNorm(bands, ncolors=256)
    filled = ax.contourf(CX, CY, Z, levels=bands, cmap="viridis", norm=norm)
    bar = (fig.colorbar(filled, ax=ax) if colourbar_axes is None
           else fig.colorbar(filled, cax=colourbar_axes))
    bar.set_label(f"{name}(x, y)")
    step = max(1, len(bands) // 6)
    bar.set_ticks(bands[::step])
    bar.set_ticklabels([format_number(b, 3) for b in bands[::step]])


def _label_field(ax: Any, name: str, arrows: str, count: tuple[int, bool],
                 box: tuple[float, float, float, float], square: bool) -> None:
    """The axes' limits, labels, title and note of :func:`gradient_field` (``count``: how
    many gradients, and whether one reverse pass gave them)."""
    how = (f"{count[0]} gradients from one reverse pass" if count[1]
           else f"wg.grad at each of {count[0]} points")
    ax.set_xlim(box[0], box[1])
    ax.set_ylim(box[2], box[3])
    if square:
        ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    length = "length ∝ |∇f|" if arrows == "scaled" else "direction only, all one length"
    ax.set_title(f"{name}(x, y): contours and gradient ∇f", fontsize=12, loc="left", pad=32)
    ax.annotate(f"arrows: ∇f, pointing uphill (descent goes against them)\n{length};  {how}",
                (0, 1), xycoords="axes fraction", xytext=(0, 5), textcoords="offset points",
                va="bottom", fontsize=9, color="0.25")


def _arrow_lengths(
    gx: np.ndarray, gy: np.ndarray, arrows: str, cell: float
) -> tuple[str, tuple[np.ndarray, np.ndarray, float]]:
    """The arrows' mode (``"auto"`` resolved), their components and the quiver scale (data
    units per arrow unit) that makes the longest arrow a little shorter than a grid cell."""
    size = np.hypot(gx, gy)
    if arrows == "auto":
        short = float(np.mean(size < SHORT_ARROW * size.max()))
        arrows = "direction" if short > 0.5 else "scaled"
    if arrows == "direction":
        safe = np.where(size > 0, size, 1.0)
        return arrows, (gx / safe, gy / safe, 1 / (0.75 * cell))
    biggest = float(size.max())
    return arrows, (gx, gy, biggest / (0.85 * cell) if biggest > 0 else 1.0)


def _arrow_counts(n: int, ratio: float) -> tuple[int, int]:
    """Arrows along x and y: ``n`` along the longer side, fewer along the shorter, so the
    cells are square (``ratio``: height / width)."""
    if ratio <= 1:
        return n, max(2, round((n - 1) * ratio) + 1)
    return max(2, round((n - 1) / ratio) + 1), n


def _field_axes(ratio: float) -> tuple[Any, Any]:
    """A new figure holding a plot box of height / width ``ratio`` and, beside it, a colourbar
    exactly as tall (placed in inches: a layout engine would size the colourbar to the
    box's cell, not to the box that equal scales shrink)."""
    width, height = (4.8, 4.8 * ratio) if ratio <= 1 else (4.6 / ratio, 4.6)
    height = max(height, 1.6)
    left, bottom, top, gap, bar, right = 0.8, 0.6, 0.9, 0.15, 0.22, 1.03
    w = max(left + width + gap + bar + right, 5.0)
    h = bottom + height + top
    fig = _figure_class()(figsize=(w, h), dpi=SCREEN_DPI, facecolor="white")
    ax = fig.add_axes((left / w, bottom / h, width / w, height / h))
    cax = fig.add_axes(((left + width + gap) / w, bottom / h, bar / w, height / h))
    return ax, cax


def _draw_path(ax: Any, trail: np.ndarray) -> None:
    from matplotlib import patheffects

    outline = [patheffects.withStroke(linewidth=4.5, foreground="white")]
    ax.plot(trail[:, 0], trail[:, 1], color=VERMILLION, linewidth=2.2, path_effects=outline,
            zorder=4, label=f"path ({len(trail)} points)")
    if len(trail) <= 60:
        ax.plot(trail[:, 0], trail[:, 1], color=VERMILLION, marker="o", markersize=4,
                markeredgecolor="white", markeredgewidth=0.8, linestyle="none", zorder=4)
    ax.plot(trail[:1, 0], trail[:1, 1], marker="o", markersize=10, color="white",
            markeredgecolor=BLACK, markeredgewidth=1.8, linestyle="none", zorder=5,
            label="start")
    ax.plot(trail[-1:, 0], trail[-1:, 1], marker="*", markersize=16, color=ORANGE,
            markeredgecolor=BLACK, markeredgewidth=1.2, linestyle="none", zorder=5,
            label="end")
    ax.legend(loc="upper right", fontsize=9, framealpha=0.9)


# --------------------------------------------------------------------------- jacobian_heatmap


def jacobian_heatmap(
    f: Callable[[Any], Any],
    x: Any,
    *,
    ax: Any = None,
    annotate: bool | None = None,
) -> Any:
    """The Jacobian of ``f`` at ``x`` (``wg.jacobian``) as a heatmap.

    Row ``i``, column ``j`` is ``∂fᵢ/∂xⱼ``: red for positive, blue for
    negative, white for zero, on a colour scale symmetric about 0 (a
    diverging map that colour-blind readers can read; the numbers are written
    in the cells of small matrices, with their signs). Arrays of more than
    one dimension are flattened (row-major), as ``x.ravel()`` would.

    Parameters
    ----------
    f : callable
        A function of one array returning one array (or number).
    x : array_like
        The point.
    ax : matplotlib Axes, optional
        Draw on this axes instead of a new figure.
    annotate : bool, optional
        Write the values in the cells; by default when the matrix has at most
        12 rows and 12 columns.

    Returns
    -------
    matplotlib.figure.Figure
        Its ``wengert_data`` is ``{"jacobian": what wg.jacobian returned, "matrix": it as
        outputs × inputs, "inputs": n, "outputs": m}``.

    Raises
    ------
    TypeError
        ``f`` returns a tuple, list or dict (pass one array).
    ValueError
        ``x`` has no entries.

    Examples
    --------
    >>> import numpy as np
    >>> fig = jacobian_heatmap(lambda x: np.array([1.0, 2.0, 3.0]) * x[0] * x[1],
    ...                        np.array([2.0, -1.0]))
    >>> fig.wengert_data["matrix"]
    array([[-1.,  2.],
           [-2.,  4.],
           [-3.,  6.]])
    """
    point = np.asarray(x, dtype=float)
    if point.size == 0:
        raise ValueError(f"jacobian_heatmap: x has no entries (shape {point.shape}); there is "
                         "no Jacobian to show")
    J = jacobian(f)(point)
    if isinstance(J, (tuple, list, dict)):
        raise TypeError(
            "jacobian_heatmap: f returned several arrays (a tuple, list or dict); the heatmap "
            "shows one Jacobian. Return one array, e.g. np.concatenate([a.ravel(), b.ravel()])."
        )
    J = np.asarray(J, float)
    n_in = point.size
    n_out = J.size // n_in if n_in else 0
    M = J.reshape(n_out, n_in)
    out_shape = J.shape[: J.ndim - point.ndim]
    if annotate is None:
        annotate = n_out <= ANNOTATE_UP_TO and n_in <= ANNOTATE_UP_TO

    if ax is None:
        ax = _new_figure((6.4, 5.2)).add_subplot()
    _draw_matrix(ax, M, annotate)
    flat_in = "xⱼ" if point.ndim <= 1 else f"x of shape {point.shape}, flattened"
    flat_out = "fᵢ" if len(out_shape) <= 1 else f"f(x) of shape {out_shape}, flattened"
    ax.set_xlabel(f"input index j   ({flat_in})")
    ax.set_ylabel(f"output index i   ({flat_out})")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    passes = (f"forward mode needs {n_in} pass{'es' * (n_in != 1)} (one per input), "
              f"reverse mode {n_out} (one per output)")
    ax.set_title(f"Jacobian  J[i, j] = ∂fᵢ/∂xⱼ   ({n_out} outputs × {n_in} inputs)\n{passes}",
                 fontsize=10, loc="left", pad=12)
    return _attach(ax, {"jacobian": J, "matrix": M, "inputs": n_in, "outputs": n_out})


def _draw_matrix(ax: Any, M: np.ndarray, annotate: bool) -> None:
    """The heatmap of :func:`jacobian_heatmap` (with ``annotate``, a number in each cell)."""
    from matplotlib.ticker import MaxNLocator

    n_out, n_in = M.shape
    fig = ax.get_figure()
    finite = np.abs(M[np.isfinite(M)])
    top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    image = ax.imshow(M, cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto",
                      interpolation="nearest")
    bar = fig.colorbar(image, ax=ax, shrink=0.9)
    bar.set_label("∂fᵢ/∂xⱼ   (red +, blue −, white 0)")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(nbins=12, integer=True))
    if annotate:
        ax.set_xticks(np.arange(n_in) - 0.5, minor=True)
        ax.set_yticks(np.arange(n_out) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        for (i, j), value in np.ndenumerate(M):
            ax.text(j, i, format_number(value, 3), ha="center", va="center", fontsize=9,
                    color="white" if abs(value) > 0.6 * top else "black")


# --------------------------------------------------------------------------- mode_cost_plot


def linear_tanh_family(n: int, m: int, *, seed: int = 0) -> Callable[[Any], Any]:
    """``x ↦ tanh(W x)`` from ``R^n`` to ``R^m``, with ``W`` drawn from a seeded normal
    distribution (scaled by ``1/√n``): the default family of :func:`mode_cost_plot`.

    Examples
    --------
    >>> import numpy as np
    >>> f = linear_tanh_family(3, 2)
    >>> f(np.zeros(3))
    array([0., 0.])
    >>> np.array_equal(f(np.ones(3)), linear_tanh_family(3, 2)(np.ones(3)))
    True
    """
    W = np.random.default_rng(seed).standard_normal((m, n)) / math.sqrt(n)
    return lambda x: np.tanh(W @ x)


@dataclass(frozen=True)
class ModeCost:
    """What one Jacobian of an ``R^n → R^m`` function cost, in forward and reverse mode.

    ``forward_passes`` counts the tangent directions ``wg.jacfwd`` pushed
    through ``f`` and ``reverse_passes`` the reverse sweeps ``wg.jacrev``
    ran; both are counted while the Jacobians are computed, not assumed.
    The times, in seconds (the fastest of the timed repeats), are those of
    ``wg.jacfwd`` (all ``n`` tangents in one batched pass), of ``n`` calls
    of ``wg.jvp`` (one tangent each: the textbook forward mode), and of
    ``wg.jacrev`` (one sweep per output).
    """

    n: int
    m: int
    forward_passes: int
    reverse_passes: int
    jacfwd_seconds: float
    jvp_per_input_seconds: float
    jacrev_seconds: float


class _SweepCounter(SweepObserver):
    """Counts the reverse sweeps run while it observes."""

    def __init__(self) -> None:
        self.sweeps = 0

    def begin(self, roots: list[tuple[Any, Any]]) -> None:
        self.sweeps += 1


def _tangent_directions(x: Any) -> int:
    """How many tangent directions ride on ``x``: a dual of ``jacfwd`` carries a batch of
    them on a leading axis of its tangent."""
    if not isinstance(x, Dual):
        return 0
    return max(1, int(np.size(x.tangent)) // max(1, int(np.size(x.primal))))


def _fastest(run: Callable[[], Any], timer: Callable[[], float], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        start = timer()
        run()
        best = min(best, timer() - start)
    return best


def _jvp_per_input(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    """The Jacobian by forward mode one column at a time: ``wg.jvp`` along each basis vector."""
    columns = [np.asarray(jvp(f, (x,), (e,))[1], float) for e in np.eye(x.size)]
    return np.stack(columns, axis=-1)


def _cost(f: Callable[[Any], Any], n: int, m: int, timer: Callable[[], float],
          repeat: int, seed: int) -> ModeCost:
    x = np.random.default_rng(seed + 1).standard_normal(n)
    directions = 0

    def counted(v: Any) -> Any:
        nonlocal directions
        directions += _tangent_directions(v)
        return f(v)

    forward = np.asarray(jacfwd(counted)(x), float)
    counter = _SweepCounter()
    with observe_sweep(counter):
        reverse = np.asarray(jacrev(f)(x), float)
    if forward.shape != (m, n):
        raise ValueError(
            f"mode_cost_plot: f({n}, {m}) returned a function whose Jacobian has shape "
            f"{forward.shape}, expected ({m}, {n}): f(n, m) must return a function from "
            f"R^n to R^m (a vector of n numbers in, m out)."
        )
    by_columns = _jvp_per_input(f, x)
    if not (np.allclose(forward, reverse, rtol=1e-8, atol=1e-10)
            and np.allclose(forward, by_columns, rtol=1e-8, atol=1e-10)):
        raise ValueError(f"mode_cost_plot: jacfwd, jvp and jacrev disagree on f({n}, {m})")
    return ModeCost(
        n=n, m=m, forward_passes=directions, reverse_passes=counter.sweeps,
        jacfwd_seconds=_fastest(lambda: jacfwd(f)(x), timer, repeat),
        jvp_per_input_seconds=_fastest(lambda: _jvp_per_input(f, x), timer, repeat),
        jacrev_seconds=_fastest(lambda: jacrev(f)(x), timer, repeat),
    )


def measure_mode_cost(
    f: Callable[[int, int], Callable[[Any], Any]] | None = None,
    sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    *,
    fixed: int = 16,
    repeat: int = 3,
    timer: Callable[[], float] = time.perf_counter,
    seed: int = 0,
) -> dict[str, tuple[ModeCost, ...]]:
    """Passes and time of a whole Jacobian in forward and reverse mode, over a family of
    functions ``R^n → R^m``: ``n`` grows with ``m`` fixed, then ``m`` grows with ``n``
    fixed.

    Parameters
    ----------
    f : callable, optional
        The family of functions: ``f(n, m)`` returns a function from ``R^n``
        to ``R^m`` (a vector in, a vector out); default
        :func:`linear_tanh_family` seeded with ``seed``. Each Jacobian is
        taken at a seeded random point.
    sizes : sequence of int
        The sizes that grow.
    fixed : int
        The size held fixed: ``m`` while ``n`` grows, ``n`` while ``m`` grows.
    repeat : int
        Timed runs per Jacobian and method; the fastest counts.
    timer : callable
        A clock returning seconds, read before and after each timed run
        (inject a fake one for deterministic tests).
    seed : int
        Seeds the default family and the points.

    Returns
    -------
    dict
        ``{"vary_n": rows with m = fixed, "vary_m": rows with n = fixed}``,
        each a tuple of :class:`ModeCost`, one per size.

    Raises
    ------
    ValueError
        A family whose functions do not map ``R^n`` to ``R^m``, or bad sizes.

    Examples
    --------
    >>> clock = iter(range(1000))
    >>> cost = measure_mode_cost(sizes=(2, 5), fixed=3, repeat=1, timer=lambda: next(clock))
    >>> [(r.n, r.m, r.forward_passes, r.reverse_passes) for r in cost["vary_n"]]
    [(2, 3, 2, 3), (5, 3, 5, 3)]
    >>> [(r.n, r.m, r.forward_passes, r.reverse_passes) for r in cost["vary_m"]]
    [(3, 2, 3, 2), (3, 5, 3, 5)]
    >>> cost["vary_m"][0].jacrev_seconds  # this fake clock ticks once per reading
    1
    """
    if repeat < 1:
        raise ValueError(f"mode_cost_plot: repeat must be at least 1, got {repeat}")
    sizes = [int(s) for s in sizes]
    if not sizes or min(sizes) < 1 or fixed < 1:
        raise ValueError(f"mode_cost_plot: sizes and fixed must be positive, got sizes={sizes}, "
                         f"fixed={fixed}")
    family = functools.partial(linear_tanh_family, seed=seed) if f is None else f
    return {
        "vary_n": tuple(_cost(family(s, fixed), s, fixed, timer, repeat, seed) for s in sizes),
        "vary_m": tuple(_cost(family(fixed, s), fixed, s, timer, repeat, seed) for s in sizes),
    }


#: How mode_cost_plot draws each method: attribute, label, colour, line style, marker.
_TIMED = (
    ("jvp_per_input_seconds", "forward mode, one wg.jvp per input (n passes)", SKY, "-.", "^"),
    ("jacfwd_seconds", "forward mode, wg.jacfwd (all n tangents in one batched pass)", BLUE,
     "-", "o"),
    ("jacrev_seconds", "reverse mode, wg.jacrev (one sweep per output: m passes)", VERMILLION,
     "--", "s"),
)


def mode_cost_plot(f: Callable[[int, int], Callable[[Any], Any]] | None = None,
                   sizes: Sequence[int] | None = None, **options: Any) -> Any:
    """Forward against reverse mode: what a whole Jacobian of ``f: R^n → R^m`` costs.

    Left column: ``n`` grows, ``m = fixed``; right column: ``m`` grows,
    ``n = fixed``. Top row: passes, counted while ``wg.jacfwd`` and
    ``wg.jacrev`` run (forward mode needs one per input, reverse mode one
    per output). Bottom row: measured time of one Jacobian (the fastest of
    ``repeat`` runs) by ``wg.jacfwd``, by ``n`` separate ``wg.jvp`` calls and
    by ``wg.jacrev``. Times vary from run to run; the numbers measured are
    the figure's ``wengert_data`` (what :func:`measure_mode_cost` returns).

    Parameters
    ----------
    f, sizes, **options
        As in :func:`measure_mode_cost` (``f(n, m)`` makes the function ``R^n → R^m``;
        ``fixed``, ``repeat``, ``timer``, ``seed``).

    Returns
    -------
    matplotlib.figure.Figure
        Four axes; ``wengert_data`` is ``{"vary_n": ..., "vary_m": ...}``, tuples of
        :class:`ModeCost`.

    Examples
    --------
    >>> clock = iter(range(10_000))
    >>> fig = mode_cost_plot(sizes=(1, 4, 16), fixed=4, repeat=1, timer=lambda: next(clock))
    >>> fig
    <Figure size 1000x760 with 4 Axes>
    >>> [r.reverse_passes for r in fig.wengert_data["vary_m"]]
    [1, 4, 16]
    """
    cost = measure_mode_cost(f, **({} if sizes is None else {"sizes": sizes}), **options)
    fig = _new_figure((10.0, 7.6))
    axes = fig.subplots(2, 2, sharex="col")
    _draw_cost_column(axes[0, 0], axes[1, 0], cost["vary_n"], ("n", "inputs"), ("m", "outputs"))
    _draw_cost_column(axes[0, 1], axes[1, 1], cost["vary_m"], ("m", "outputs"), ("n", "inputs"))
    handles, labels = axes[1, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=1, fontsize=9, frameon=False,
               title="time (bottom row), measured on this machine", title_fontsize=9)
    fig.suptitle("Jacobian of f: Rⁿ → Rᵐ. Forward mode costs one pass per input, reverse mode "
                 "one per output", fontsize=12)
    fig.wengert_data = cost
    return fig


def _draw_cost_column(passes: Any, timing: Any, rows: tuple[ModeCost, ...],
                      growing: tuple[str, str], held: tuple[str, str]) -> None:
    """Passes (``passes`` axes) and times (``timing`` axes) against the size that grows:
    ``growing`` and ``held`` are ``(name, what it counts)``, e.g. ``("n", "inputs")``."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    size, things = growing
    other, others = held
    s = np.array([getattr(r, size) for r in rows])
    for counts, colour, style, marker, text in (
        ([r.forward_passes for r in rows], BLUE, "-", "o", "forward mode: n passes"),
        ([r.reverse_passes for r in rows], VERMILLION, "--", "s", "reverse mode: m passes"),
    ):
        passes.plot(s, counts, color=colour, linestyle=style, marker=marker, linewidth=2)
        # the label sits above the end where the line is flat or rising, away from the other
        at, ha, dx = (-1, "right", -6) if counts[-1] > counts[0] else (0, "left", 6)
        passes.annotate(text, (s[at], counts[at]), xytext=(dx, 6), textcoords="offset points",
                        ha=ha, va="bottom", color=colour, fontsize=10, fontweight="bold")
    for attr, label, colour, style, marker in _TIMED:
        timing.plot(s, [getattr(r, attr) * 1e3 for r in rows], color=colour, linestyle=style,
                    marker=marker, linewidth=2, label=label)
    plain = FuncFormatter(lambda v, _: format_number(v, 3))
    for panel in (passes, timing):
        panel.set_xscale("log", base=2)
        if min(min(line.get_ydata()) for line in panel.get_lines()) > 0:
            panel.set_yscale("log")
            panel.yaxis.set_major_locator(LogLocator(base=10))
            panel.yaxis.set_minor_formatter(NullFormatter())
        panel.yaxis.set_major_formatter(plain)
        panel.xaxis.set_major_formatter(plain)
        panel.grid(True, which="major", color="0.9")
    passes.margins(y=0.15)
    passes.set_ylabel("passes")
    timing.set_ylabel("time of one Jacobian (ms)")
    passes.set_title(f"{size} {things} grow, {other} = {getattr(rows[0], other)} {others}",
                     fontsize=11, loc="left")
    timing.set_xlabel(f"{size} (number of {things})")
    timing.set_xticks(s)


# -- memory ----------------------------------------------------------------------------------

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


def tape_timeline(tape: Tape) -> list[int]:
    """Bytes a tape's values take while each equation runs: its leaves, plus every output
    made so far (nothing is freed before the end, as in a graph without a memory plan).

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(np.ones(1000), requires_grad=True)
    >>> tape_timeline(wg.tape_of(np.sum(np.exp(np.sin(x)))))
    [16000, 24000, 24008]
    """
    held = 0
    for v in tape.inputs:
        if v.shape is None or v.dtype is None:
            raise ValueError(f"memory_plot: the size of leaf {v.name} is not known")
        held += v.nbytes
    timeline = []
    for eq in tape:
        for v in eq.outs:
            if v.shape is None or v.dtype is None:
                raise ValueError(
                    f"memory_plot: backward() freed {v.name}, so its size is not known: "
                    "record inside wg.keep_values() (or with %load_ext wengert), or pass "
                    "retain_graph=True")
            held += v.nbytes
        timeline.append(held)
    return timeline


def _is_subject(value: Any) -> bool:
    return isinstance(value, (Graph, Tape)) or hasattr(value, "tape") or \
        hasattr(value, "grad_fn") or hasattr(value, "recorded")


def _timelines(timelines: Any, names: Sequence[str] | None
               ) -> tuple[dict[str, Any], Sequence[str] | None]:
    """Byte counts by label, the subjects among them read into their timelines (and the
    names of the first subject's equations, unless ``names`` is given)."""
    if _is_subject(timelines):
        ir = as_subject(timelines).ir
        label = f"graph {ir.name}" if isinstance(ir, Graph) else "tape"
        timelines = {label: timelines}
    out: dict[str, Any] = {}
    for label, value in dict(timelines).items():
        if not _is_subject(value):
            out[label] = value
            continue
        ir = as_subject(value).ir
        if not len(ir):
            raise ValueError(
                f"memory_plot: {label!r} has no equations, so there is no memory over time to "
                "plot (a leaf tensor, or a value no op made). Plot the result of a "
                "computation: memory_plot(loss), or a graph.")
        out[label] = ir.memory_timeline() if isinstance(ir, Graph) else tape_timeline(ir)
        if names is None:
            names = [eq.out.name for eq in ir]
    return out, names


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


def memory_plot(timelines: Any, *,
                names: Sequence[str] | None = None, ax: Any = None,
                title: str | None = None) -> Any:
    """The bytes a program holds while each equation runs, one line per timeline (before
    and after ``plan_memory``), with each peak marked and labelled in kB/MB.

    Parameters
    ----------
    timelines : mapping of str to timeline or subject, or one subject
        Label -> bytes held at each equation, in execution order (what
        ``memory_timeline(graph)`` and ``memory_timeline(plan_memory(graph))`` return),
        or a subject whose timeline is computed: a graph (``graph.memory_timeline()``) or
        a tape, a tensor, a ``GradientTape``, an ``%%autodiff`` result
        (:func:`tape_timeline`). At most six.
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
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sum(np.exp(np.sin(x))), np.ones(1000))
    >>> memory_plot(g).wengert_data["peaks"]
    {'graph f': (2, 24008)}
    """
    timelines, names = _timelines(timelines, names)
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
