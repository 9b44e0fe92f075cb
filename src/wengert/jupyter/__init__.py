"""wengert in Jupyter: ``%load_ext wengert``, ``%%autodiff``, rich reprs, drawings of the
tape, the explorer widget, the explainer and plots.

Everything here reads tapes through their public API (``wg.tape_of``,
``GradientTape.recorded``, ``wg.observe_sweep``). The renderers are pure
functions of a tape (text, HTML, DOT, layout data) and need nothing beyond
NumPy; IPython, ipywidgets, anywidget, matplotlib and graphviz (the
``jupyter`` extra) are imported only when a feature that needs them is used,
so ``import wengert`` imports none of them.

Importing this package registers the rich HTML reprs of tensors, dual numbers,
gradient tapes, tapes, traced graphs and compiled functions
(:mod:`wengert.jupyter.views.html`).
"""

from wengert.jupyter.explainer.explain import explain
from wengert.jupyter.explainer.result import Explanation
from wengert.jupyter.explorer.widget import explore
from wengert.jupyter.magic.extension import load_ipython_extension, unload_ipython_extension
from wengert.jupyter.views import html, plots
from wengert.jupyter.views.drawing import draw, draw_pass
from wengert.jupyter.views.plots import memory_plot
from wengert.jupyter.views.subject import as_subject, as_tape

__all__ = [
    "load_ipython_extension", "unload_ipython_extension", "as_tape", "as_subject", "draw",
    "html",
    "explain", "Explanation", "explore", "draw_pass", "memory_plot", "plots",
]
