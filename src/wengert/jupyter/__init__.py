"""wengert in Jupyter: ``%load_ext wengert``, ``%%autodiff``, rich reprs, drawings of the
tape, the explorer widget, the explainer and plots.

Everything here reads tapes through their public API (``wg.tape_of``,
``GradientTape.recorded``, ``wg.observe_sweep``). The renderers are pure
functions of a tape (text, HTML, DOT, layout data) and need nothing beyond
NumPy; IPython, ipywidgets, anywidget, matplotlib and graphviz (the
``jupyter`` extra) are imported only when a feature that needs them is used,
so ``import wengert`` imports none of them.

Importing this package registers the rich HTML reprs of tensors, dual numbers,
gradient tapes and tapes (:mod:`wengert.jupyter.render`), and of traced graphs and
compiled functions (:mod:`wengert.jupyter.graph_html`).
"""

from . import (
    graph_html,  # noqa: F401 - registers the HTML of graphs and compiled functions
    render,
)
from .drawing import draw, draw_pass
from .explain import explain
from .explain_result import Explanation
from .graph_plots import memory_plot
from .magics import load_ipython_extension, unload_ipython_extension
from .targets import as_tape
from .widget import explore

__all__ = [
    "load_ipython_extension", "unload_ipython_extension", "as_tape", "draw", "render",
    "explain", "Explanation", "explore", "draw_pass", "memory_plot",
]
