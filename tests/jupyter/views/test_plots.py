"""wengert.jupyter.views.plots: the numbers drawn are wengert's derivatives, the figures have the
artists a reader needs, misuse is explained, and matplotlib loads only when a plot is drawn."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.jupyter.views.plots import bytes_text, memory_plot

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.contour import ContourSet  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.quiver import Quiver  # noqa: E402

from wengert.jupyter.views import plots  # noqa: E402
from wengert.jupyter.views.plots import (  # noqa: E402
    ModeCost,
    derivative_plot,
    gradient_field,
    jacobian_heatmap,
    linear_tanh_family,
    measure_mode_cost,
    mode_cost_plot,
)

ROSENBROCK = lambda v: (1 - v[0]) ** 2 + 100 * (v[1] - v[0] ** 2) ** 2


class CallLog:
    """Wraps a function and records the shape of the first argument of every call."""

    def __init__(self, f):
        self.f = f
        self.shapes = []

    def __call__(self, *args):
        self.shapes.append(np.shape(getattr(args[0], "primal", args[0])))
        return self.f(*args)


def quiver_of(ax) -> Quiver:
    (q,) = [c for c in ax.collections if isinstance(c, Quiver)]
    return q


# --------------------------------------------------------------------------- import


def test_importing_plots_loads_no_matplotlib():
    code = (
        "import sys, wengert, wengert.jupyter.views.plots\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib')\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_docstring_examples():
    with np.printoptions(legacy=False):
        result = doctest.testmod(plots, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10
    assert result.failed == 0


# --------------------------------------------------------------------------- figures


def test_figures_show_as_png_with_a_stable_repr():
    fig = derivative_plot(np.sin, (-1.0, 1.0), at=0.5, n=20)
    assert isinstance(fig, Figure)
    assert repr(fig) == "<Figure size 700x640 with 2 Axes>"
    data = fig._repr_png_()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert 600 <= width <= 720 and 560 <= height <= 660  # 7 x 6.4 inches, trimmed to the ink
    assert fig._repr_png_() == data  # deterministic pixels
    assert b"Software" not in data  # no library version in the image


def test_repr_has_no_addresses():
    fig = jacobian_heatmap(np.sin, np.ones(2))
    assert not re.search(r"\b0x[0-9a-f]{4,}", repr(fig))
    assert repr(fig) == "<Figure size 640x520 with 2 Axes>"


# --------------------------------------------------------------------------- derivative_plot


def test_derivative_plot_draws_f_and_wengerts_derivative():
    xs_check = [-2.5, -0.3, 0.0, 1.7, 3.0]
    f = lambda x: np.sin(x) * x ** 2
    fig = derivative_plot(f, (-3.0, 3.0), n=301)
    top, bottom = fig.axes
    (f_line,) = [ln for ln in top.get_lines() if ln.get_label() == "f(x)"]
    (df_line,) = [ln for ln in bottom.get_lines() if ln.get_label().startswith("f′(x)")]
    xs = df_line.get_xdata()
    assert len(xs) == 301
    np.testing.assert_allclose(f_line.get_ydata(), np.sin(xs) * xs ** 2, rtol=1e-12)
    d = wg.derivative(f)
    for x in xs_check:
        i = int(np.argmin(np.abs(xs - x)))
        assert df_line.get_ydata()[i] == pytest.approx(d(float(xs[i])), rel=1e-12, abs=1e-14)
    assert fig.wengert_data["vectorised"] is True
    assert bottom.get_xlabel() == "x"
    assert top.get_title(loc="left") == "f(x)"
    assert "the height here is the slope above" in bottom.get_title(loc="left")


def test_tangent_lines_have_wengerts_slope_and_say_it():
    f = lambda x: x ** 3 - 2 * x
    at = [-1.5, 0.25, 1.0]
    fig = derivative_plot(f, (-2.0, 2.0), at=at, n=50)
    top, bottom = fig.axes
    d = wg.derivative(f)
    assert "tangent" in top.get_title(loc="left")
    for k, a in enumerate(at):
        colour = plots.POINT_STYLES[k][0]
        (tangent,) = [ln for ln in top.get_lines()
                      if ln.get_color() == colour and len(ln.get_xdata()) == 2
                      and ln.get_xdata()[0] < ln.get_xdata()[1]]
        (x0, x1), (y0, y1) = tangent.get_xdata(), tangent.get_ydata()
        assert (y1 - y0) / (x1 - x0) == pytest.approx(d(a), rel=1e-9)
        assert y0 + (a - x0) * (y1 - y0) / (x1 - x0) == pytest.approx(f(a), abs=1e-9)
        dots = [ln for ln in bottom.get_lines() if list(ln.get_xdata()) == [a]]
        assert dots and dots[0].get_ydata()[0] == pytest.approx(d(a))
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("slope = f′(1) = 1" in t for t in legend), legend
    assert [a for a, _, _ in fig.wengert_data["at"]] == at


def test_derivative_plot_is_one_forward_pass_over_the_grid():
    log = CallLog(np.tanh)
    derivative_plot(log, (-2.0, 2.0), at=[0.0, 1.0], n=400)
    grid_calls = [s for s in log.shapes if s == (400,)]
    assert len(grid_calls) == 1
    assert len(log.shapes) < 20  # the scalar check, three samples, the tangent points


def test_derivative_plot_goes_point_by_point_for_python_control_flow():
    f = lambda x: x * x if x > 0 else -x
    fig = derivative_plot(f, (-1.0, 1.0), n=41)
    data = fig.wengert_data
    assert data["vectorised"] is False
    np.testing.assert_allclose(data["df"], [2 * x if x > 0 else -1.0 for x in data["x"]])
    assert "wg.derivative at each" in fig.axes[1].get_lines()[0].get_label()


def test_derivative_plot_is_not_fooled_by_a_function_that_mixes_grid_points():
    # on an array, x * mean(x) is not x * x pointwise: the sample check must notice
    f = lambda x: x * np.mean(x)
    fig = derivative_plot(f, (0.5, 2.0), n=16)
    data = fig.wengert_data
    assert data["vectorised"] is False
    np.testing.assert_allclose(data["f"], data["x"] ** 2)
    np.testing.assert_allclose(data["df"], 2 * data["x"])


def test_derivative_plot_on_a_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    out = derivative_plot(np.exp, (0.0, 1.0), at=0.5, ax=ax, n=11)
    assert out is fig
    assert len(fig.axes) == 1
    assert ax.wengert_data is fig.wengert_data
    assert {ln.get_label() for ln in ax.get_lines()} >= {"exp(x)"}
    assert ax.get_legend() is not None


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"f": lambda x: np.stack([x, x]), "x_range": (0, 1)}, TypeError, "jacobian_heatmap"),
        ({"f": np.sin, "x_range": (1, 1)}, ValueError, "lo < hi"),
        ({"f": np.sin, "x_range": (0, np.inf)}, ValueError, "finite"),
        ({"f": np.sin, "x_range": 3.0}, TypeError, "pair"),
        ({"f": np.sin, "x_range": (0, 1), "at": 2.0}, ValueError, "outside"),
        ({"f": np.sin, "x_range": (0, 1), "n": 1}, ValueError, "at least 2"),
        ({"f": np.sin, "x_range": (0, 1), "at": np.linspace(0, 1, 6)}, ValueError, "at most 5"),
    ],
)
def test_derivative_plot_misuse(kwargs, error, words):
    with pytest.raises(error, match=words):
        derivative_plot(**kwargs)


def test_vector_valued_f_names_the_problem_and_the_fix():
    with pytest.raises(TypeError) as info:
        derivative_plot(lambda x: np.stack([x, 2 * x]), (0.0, 1.0))
    message = str(info.value)
    assert "one number out" in message and "shape (2,)" in message
    assert "jacobian_heatmap(f, x)" in message


# --------------------------------------------------------------------------- gradient_field


def test_gradient_arrows_are_wengerts_gradient():
    f = lambda x, y: np.sin(x) * np.cos(y) + 0.1 * x * y
    fig = gradient_field(f, (-3.0, 3.0), (-2.0, 2.0), n=9, arrows="scaled")
    ax = fig.axes[0]
    q = quiver_of(ax)
    g = wg.grad(f, argnums=(0, 1))
    X, Y = fig.wengert_data["x"].ravel(), fig.wengert_data["y"].ravel()
    U, V = np.asarray(q.U).ravel(), np.asarray(q.V).ravel()
    np.testing.assert_allclose(q.X, X)
    np.testing.assert_allclose(q.Y, Y)
    for i in (0, 5, 17, len(X) - 1):
        gx, gy = g(float(X[i]), float(Y[i]))
        assert (U[i], V[i]) == pytest.approx((gx, gy), rel=1e-12, abs=1e-14)
    assert fig.wengert_data["vectorised"] is True
    assert fig.wengert_data["arrows"] == "scaled"


def test_direction_arrows_are_unit_vectors_along_the_gradient():
    fig = gradient_field(ROSENBROCK, (-2.0, 2.0), (-1.0, 3.0), n=11)
    data = fig.wengert_data
    assert data["arrows"] == "direction"  # the valley's steep walls dwarf the rest
    q = quiver_of(fig.axes[0])
    U, V = np.asarray(q.U).ravel(), np.asarray(q.V).ravel()
    g = wg.grad(ROSENBROCK)
    for i in (0, 30, 60, 120):
        x, y = data["x"].ravel()[i], data["y"].ravel()[i]
        gv = g(np.array([x, y]))
        np.testing.assert_allclose([U[i], V[i]], gv / np.linalg.norm(gv), rtol=1e-12)
        np.testing.assert_allclose([data["dfdx"].ravel()[i], data["dfdy"].ravel()[i]], gv)
    assert "direction only" in "".join(t.get_text() for t in fig.axes[0].texts)


def test_gradient_field_is_one_reverse_pass_over_the_grid():
    log = CallLog(lambda x, y: x ** 2 + np.exp(y))
    log_xy = lambda x, y: log(x, y)
    gradient_field(log_xy, (-1.0, 1.0), (-1.0, 1.0), n=25)
    assert log.shapes.count((625,)) == 1  # the gradient: one sweep for all 625 points
    assert len([s for s in log.shapes if s == ()]) < 20  # checks at a few points only


def test_f_of_v_and_f_of_x_y_and_a_ufunc_give_the_same_field():
    by_v = gradient_field(lambda v: np.hypot(v[0], v[1]), (-1.0, 2.0), (-1.5, 1.5), n=6)
    by_xy = gradient_field(lambda x, y: np.hypot(x, y), (-1.0, 2.0), (-1.5, 1.5), n=6)
    by_ufunc = gradient_field(np.hypot, (-1.0, 2.0), (-1.5, 1.5), n=6)
    for other in (by_xy, by_ufunc):
        for key in ("dfdx", "dfdy", "levels"):
            np.testing.assert_allclose(by_v.wengert_data[key], other.wengert_data[key])


def test_unpacking_v_works_too():
    def f(v):
        x, y = v
        return x * y

    data = gradient_field(f, (0.0, 1.0), (0.0, 2.0), n=4).wengert_data
    np.testing.assert_allclose(data["dfdx"], data["y"])
    np.testing.assert_allclose(data["dfdy"], data["x"])


def test_gradient_field_goes_point_by_point_when_f_is_not_elementwise():
    f = lambda v: np.linalg.norm(v) ** 2 + v[0]  # norm of a (2, N) array is one number
    data = gradient_field(f, (-1.0, 1.0), (-1.0, 1.0), n=5).wengert_data
    assert data["vectorised"] is False
    np.testing.assert_allclose(data["dfdx"], 2 * data["x"] + 1)
    np.testing.assert_allclose(data["dfdy"], 2 * data["y"])


@settings(max_examples=15, deadline=None)
@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(-3, 3))
def test_gradient_of_any_quadratic_form(a, b, c):
    f = lambda x, y: a * x ** 2 + b * x * y + c * y ** 2
    data = gradient_field(f, (-1.0, 1.0), (-2.0, 2.0), n=4).wengert_data
    X, Y = data["x"], data["y"]
    np.testing.assert_allclose(data["dfdx"], 2 * a * X + b * Y, atol=1e-12)
    np.testing.assert_allclose(data["dfdy"], b * X + 2 * c * Y, atol=1e-12)


def test_gradient_field_artists():
    path = [(-1.5, 2.5), (-1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]
    fig = gradient_field(ROSENBROCK, (-2.0, 2.0), (-1.0, 3.0), path=path, levels=12)
    ax, bar = fig.axes
    contours = [c for c in ax.collections if isinstance(c, ContourSet)]
    assert len(contours) == 1 and contours[0].filled
    assert contours[0].cmap.name == "viridis"
    assert len(contours[0].levels) == 13  # 12 bands
    assert ax.get_aspect() == 1.0  # arrows perpendicular to the contours
    drawn = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == len(path)]
    np.testing.assert_allclose(np.column_stack([drawn[0].get_xdata(), drawn[0].get_ydata()]),
                               path)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["path (4 points)", "start", "end"]
    assert ax.get_xlabel() == "x" and ax.get_ylabel() == "y"
    assert "gradient" in ax.get_title(loc="left")
    np.testing.assert_allclose(fig.wengert_data["path"], path)


def test_arrows_along_the_longer_side_and_square_cells():
    data = gradient_field(lambda x, y: x + y, (0.0, 4.0), (0.0, 2.0), n=9).wengert_data
    assert data["x"].shape == (5, 9)  # 9 along x (the longer side), 5 along y


def test_gradient_field_on_a_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert gradient_field(lambda x, y: x * y, (-1, 1), (-1, 1), n=5, ax=ax) is fig
    assert len(fig.axes) == 2  # the axes and its colourbar


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"f": lambda x, y: np.stack([x, y])}, TypeError, "jacobian_heatmap"),
        ({"f": lambda v: v * 2.0}, TypeError, "jacobian_heatmap"),
        ({"f": np.hypot, "xlim": (1, 0)}, ValueError, "lo < hi"),
        ({"f": np.hypot, "n": 1}, ValueError, "at least 2"),
        ({"f": np.hypot, "arrows": "long"}, ValueError, "'auto', 'scaled' or 'direction'"),
        ({"f": np.hypot, "levels": 1}, ValueError, "levels"),
    ],
)
def test_gradient_field_misuse(kwargs, error, words):
    args = {"xlim": (-1, 1), "ylim": (-1, 1), **kwargs}
    with pytest.raises(error, match=words):
        gradient_field(args.pop("f"), args.pop("xlim"), args.pop("ylim"), **args)


def test_a_constant_function_draws_without_arrows():
    data = gradient_field(lambda x, y: 3.0 + 0.0 * x, (0, 1), (0, 1), n=3).wengert_data
    assert not data["dfdx"].any() and not data["dfdy"].any()


# --------------------------------------------------------------------------- jacobian_heatmap


def test_heatmap_is_wengerts_jacobian():
    W = np.random.default_rng(3).standard_normal((5, 3))
    f = lambda x: np.tanh(W @ x)
    x = np.array([0.5, -1.0, 2.0])
    fig = jacobian_heatmap(f, x)
    ax, bar = fig.axes
    (image,) = [im for im in ax.get_images() if isinstance(im, AxesImage)]
    J = wg.jacobian(f)(x)
    np.testing.assert_array_equal(image.get_array(), J)
    np.testing.assert_array_equal(fig.wengert_data["matrix"], J)
    assert image.get_cmap().name == "RdBu_r"
    vmin, vmax = image.get_clim()
    assert vmin == -vmax == -np.abs(J).max()  # centred at 0
    assert "output index" in ax.get_ylabel() and "input index" in ax.get_xlabel()
    assert "∂fᵢ/∂xⱼ" in bar.get_ylabel()
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 15
    assert texts[0] == plots.format_number(J[0, 0], 3)
    assert "5 outputs × 3 inputs" in ax.get_title(loc="left")
    assert "3 passes" in ax.get_title(loc="left")


def test_heatmap_annotates_small_matrices_only():
    big = jacobian_heatmap(np.cumsum, np.ones(13))
    assert len(big.axes[0].texts) == 0
    forced = jacobian_heatmap(np.cumsum, np.ones(13), annotate=True)
    assert len(forced.axes[0].texts) == 169


def test_heatmap_flattens_arrays_and_handles_scalar_outputs():
    x = np.arange(6.0).reshape(2, 3)
    fig = jacobian_heatmap(lambda a: a.T * 2.0, x)
    M = fig.wengert_data["matrix"]
    assert M.shape == (6, 6)
    np.testing.assert_array_equal(M, wg.jacobian(lambda a: a.T * 2.0)(x).reshape(6, 6))
    assert "shape (2, 3)" in fig.axes[0].get_xlabel()
    assert "shape (3, 2)" in fig.axes[0].get_ylabel()
    grad_row = jacobian_heatmap(lambda a: np.sum(a ** 2), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(grad_row.wengert_data["matrix"], [[2.0, 4.0]])


def test_heatmap_of_a_zero_jacobian_keeps_a_valid_scale():
    fig = jacobian_heatmap(lambda x: 0.0 * x, np.ones(3))
    assert fig.axes[0].get_images()[0].get_clim() == (-1.0, 1.0)


def test_heatmap_misuse():
    with pytest.raises(TypeError, match="several arrays"):
        jacobian_heatmap(lambda x: (x, 2 * x), np.ones(2))
    with pytest.raises(ValueError, match="no entries"):
        jacobian_heatmap(np.sin, np.ones(0))


def test_heatmap_on_a_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert jacobian_heatmap(np.sin, np.ones(2), ax=ax) is fig
    assert ax.wengert_data["inputs"] == 2


# --------------------------------------------------------------------------- mode_cost_plot


class FakeClock:
    """Each reading is ``step`` seconds after the previous one."""

    def __init__(self, step: float = 0.25):
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return self.readings * self.step


def test_pass_counts_are_counted_not_assumed():
    clock = FakeClock()
    sizes = (1, 3, 8)
    cost = measure_mode_cost(sizes=sizes, fixed=5, repeat=2, timer=clock)
    assert [(r.n, r.m) for r in cost["vary_n"]] == [(1, 5), (3, 5), (8, 5)]
    assert [(r.n, r.m) for r in cost["vary_m"]] == [(5, 1), (5, 3), (5, 8)]
    for row in cost["vary_n"] + cost["vary_m"]:
        assert isinstance(row, ModeCost)
        assert row.forward_passes == row.n  # one tangent direction per input
        assert row.reverse_passes == row.m  # one reverse sweep per output
        assert row.jacfwd_seconds == row.jvp_per_input_seconds == row.jacrev_seconds == 0.25
    # two readings per timed run: 3 methods x 2 repeats x 3 sizes x 2 columns
    assert clock.readings == 2 * 3 * 2 * 3 * 2


def test_fastest_repeat_counts():
    readings = iter([0.0, 5.0, 10.0, 11.0] * 100)  # runs of 5 s then 1 s: 1 s counts
    cost = measure_mode_cost(sizes=(2,), fixed=2, repeat=2, timer=lambda: next(readings))
    assert cost["vary_n"][0].jacfwd_seconds == 1.0


def test_mode_cost_counts_a_custom_family():
    family = lambda n, m: (lambda x: np.sin(np.arange(1.0, m + 1.0) * np.sum(x ** 2)))
    cost = measure_mode_cost(f=family, sizes=(2, 4), fixed=3, repeat=1, timer=FakeClock())
    assert [(r.forward_passes, r.reverse_passes) for r in cost["vary_n"]] == [(2, 3), (4, 3)]
    assert [(r.forward_passes, r.reverse_passes) for r in cost["vary_m"]] == [(3, 2), (3, 4)]


def test_mode_cost_plot_draws_what_it_measured():
    fig = mode_cost_plot(sizes=(1, 2, 4, 8), fixed=4, repeat=1, timer=FakeClock(0.001))
    assert repr(fig) == "<Figure size 1000x760 with 4 Axes>"
    (passes_n, passes_m), (time_n, time_m) = np.array(fig.axes).reshape(2, 2)
    data = fig.wengert_data
    forward, reverse = passes_n.get_lines()
    np.testing.assert_array_equal(forward.get_xdata(), [1, 2, 4, 8])
    np.testing.assert_array_equal(forward.get_ydata(), [r.forward_passes for r in data["vary_n"]])
    np.testing.assert_array_equal(reverse.get_ydata(), [4, 4, 4, 4])
    np.testing.assert_array_equal(passes_m.get_lines()[1].get_ydata(), [1, 2, 4, 8])
    assert len(time_n.get_lines()) == 3
    for line in time_m.get_lines():
        np.testing.assert_allclose(line.get_ydata(), 1.0)  # 0.001 s, drawn in ms
    lines = time_n.get_lines()
    # told apart by markers and dashes as well as colour
    assert len({line.get_marker() for line in lines}) == 3
    assert len({line.get_color() for line in lines}) == 3
    assert len({line.get_linestyle() for line in lines}) == 3
    assert time_n.get_xlabel().startswith("n") and time_m.get_xlabel().startswith("m")
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("wg.jacrev" in t for t in legend) and any("wg.jacfwd" in t for t in legend)


def test_default_family_is_seeded():
    x = np.linspace(-1, 1, 4)
    np.testing.assert_array_equal(linear_tanh_family(4, 3)(x), linear_tanh_family(4, 3)(x))
    assert not np.array_equal(linear_tanh_family(4, 3)(x),
                              linear_tanh_family(4, 3, seed=1)(x))
    assert linear_tanh_family(4, 3)(x).shape == (3,)


def test_mode_cost_misuse():
    with pytest.raises(ValueError, match=r"R\^n to R\^m"):
        measure_mode_cost(lambda n, m: (lambda x: x), sizes=(2,), fixed=3, timer=FakeClock())
    with pytest.raises(ValueError, match="positive"):
        measure_mode_cost(sizes=(0, 2), timer=FakeClock())
    with pytest.raises(ValueError, match="repeat"):
        measure_mode_cost(sizes=(2,), repeat=0, timer=FakeClock())


def test_drawing_twice_gives_the_same_png():
    a = gradient_field(ROSENBROCK, (-2, 2), (-1, 3), n=6, path=[(0, 0), (1, 1)])._repr_png_()
    b = gradient_field(ROSENBROCK, (-2, 2), (-1, 3), n=6, path=[(0, 0), (1, 1)])._repr_png_()
    assert a == b


# -- memory plot --------------------------------------------------------------------------------


def test_memory_plot_draws_two_timelines_with_their_peaks():
    before = [16_000, 24_000, 1_200_000, 1_200_008]
    after = [16_000, 16_000, 616_000, 16_008]
    fig = memory_plot({"before": before, "after plan_memory": after},
                      names=["t0", "t1", "t2", "t3"])
    ax = fig.axes[0]
    labelled = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in labelled] == ["before (peak 1.2 MB)",
                                                       "after plan_memory (peak 616.0 kB)"]
    np.testing.assert_allclose(labelled[0].get_ydata()[:4], np.array(before) / 1e6)
    assert [t.get_text() for t in ax.texts] == ["peak 1.2 MB at t3", "peak 616.0 kB at t2"]
    assert fig.wengert_data["peaks"] == {"before": (3, 1_200_008),
                                         "after plan_memory": (2, 616_000)}
    assert fig.wengert_data["unit"] == "MB" and ax.get_ylabel() == "memory held (MB)"
    assert ax.get_title(loc="left") == "peak memory 1.2 MB → 616.0 kB (−49%)"
    assert fig._repr_png_().startswith(b"\x89PNG")


def test_memory_plot_keeps_the_peak_of_a_long_timeline():
    rng = np.random.default_rng(0)
    timeline = rng.integers(0, 1000, 200_000)
    timeline[123_457] = 5_000
    fig = memory_plot({"one": timeline})
    (line,) = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("_")]
    assert len(line.get_xdata()) <= 4_002 and line.get_ydata().max() == 5.0
    assert fig.wengert_data["peaks"]["one"] == (123_457, 5_000)


def test_memory_plot_refuses_bad_timelines():
    with pytest.raises(ValueError, match="at least one timeline"):
        memory_plot({})
    with pytest.raises(ValueError, match="non-empty"):
        memory_plot({"a": []})
    with pytest.raises(ValueError, match="negative"):
        memory_plot({"a": [1, -2]})
    with pytest.raises(ValueError, match="'tape' has no equations"):
        memory_plot(wg.tensor([1.0, 2.0], requires_grad=True))
    assert bytes_text(999) == "999 B" and bytes_text(1_500_000) == "1.5 MB"


def test_memory_plot_takes_graphs_and_tapes():
    g = wg.trace(lambda x: np.sum(np.exp(np.sin(x))), np.ones(1000))
    x = wg.tensor(np.ones(1000), requires_grad=True)
    y = np.sum(np.exp(np.sin(x)))
    fig = memory_plot({"graph": g, "tape": y, "numbers": g.memory_timeline()})
    peaks = fig.wengert_data["peaks"]
    assert peaks["graph"] == peaks["tape"] == peaks["numbers"] == (2, 24008)
    assert fig.axes[0].texts[0].get_text() == "peak 24.0 kB at t2"
    assert memory_plot(g).wengert_data["peaks"] == {"graph f": (2, 24008)}
    y.backward()  # frees the values: their sizes are no longer known
    with pytest.raises(ValueError, match="keep_values"):
        memory_plot(y)


def test_an_infinite_slope_draws_no_tangent_of_nans_and_the_plot_warns_nothing_itself():
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fig = derivative_plot(np.sqrt, (0.0, 1.0), at=[0.0, 0.25])
    assert not [w for w in seen if w.filename.endswith("plots.py")]
    (a0, f0, d0), (a1, f1, d1) = fig.wengert_data["at"]
    assert d0 == np.inf and d1 == pytest.approx(1.0)
    top = fig.axes[0]
    for line in top.get_lines():
        y = np.asarray(line.get_ydata(), float)
        assert np.isfinite(y).all()  # no line made of inf and NaN
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("= inf" in t for t in labels)
