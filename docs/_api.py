"""The API reference page's list of names, written from ``wengert.__all__`` at each build.

Every public name belongs to one section below; a name added to ``__all__`` and not placed
here stops the build (``ApiListError``), so the reference never silently misses one.

Examples
--------
>>> import wengert
>>> sorted(set(wengert.__all__) - placed_names()) == sorted(MODULES)
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODULES", "SECTIONS", "ApiListError", "api_page", "placed_names", "write_api_list"]

#: (section title, one line about it, names of ``wengert`` documented by autodoc)
SECTIONS: list[tuple[str, str, list[str]]] = [
    ("Tensors", "Reverse mode in PyTorch's dialect: leaves, ``backward()``, ``.grad``.",
     ["Tensor", "tensor", "stop_gradient", "no_grad", "enable_grad", "set_grad_enabled",
      "is_grad_enabled"]),
    ("GradientTape", "Reverse mode in TensorFlow's dialect.", ["GradientTape", "Variable"]),
    ("Transforms", "Functions in, functions out, in JAX's dialect (reverse and forward mode).",
     ["grad", "value_and_grad", "vjp", "jvp", "linearize", "derivative", "jacfwd",
      "jacrev", "jacobian", "hessian", "hvp"]),
    ("Forward mode", "Dual numbers: a value and its tangent.", ["Dual"]),
    ("Custom rules and checkpointing", "Your own derivative rules; recomputing instead of "
     "storing.", ["custom_vjp", "custom_jvp", "checkpoint"]),
    ("Checking gradients", "Against central finite differences.",
     ["gradcheck", "check_grads", "GradcheckError"]),
    ("Reading the tape and debugging", "What was recorded, what the sweep did, where a NaN "
     "came from.", ["tape_of", "source_lines", "keep_values", "keep_budget", "SweepObserver",
                   "observe_sweep", "detect_anomaly", "is_anomaly_enabled"]),
    ("Static graphs", "Trace once, then transform, optimise, compile, generate code, export.",
     ["trace", "Graph", "compile", "grad_graph", "jvp_graph", "gradients", "placeholder",
      "Session"]),
    ("In Jupyter", "The ``%%autodiff`` cell magic, drawings, the explorer, the explainer.",
     ["load_ipython_extension", "unload_ipython_extension", "draw", "draw_pass", "explore",
      "explain", "memory_plot"]),
    ("Errors", "The base class of every error wengert raises (the classes: :doc:`errors`).",
     ["WengertError"]),
]

#: Public names that are modules: described in words, not by autodoc.
MODULES: dict[str, str] = {
    "numpy": "``wengert.numpy`` (``import wengert.numpy as wnp``): a drop-in for NumPy whose "
             "differentiable functions are wengert's ops; every other name is NumPy's own. "
             "Plain ``np.*`` calls on wengert's values reach the same ops.",
    "graph": "``wengert.graph``: the static-graph layer; its main names are in *Static "
             "graphs* above.",
    "errors": "``wengert.errors``: the typed errors, each with what to do, on :doc:`errors`.",
}


class ApiListError(RuntimeError):
    """A public name is missing from the API page's sections, or placed twice."""


def placed_names() -> set[str]:
    """Every name the sections document."""
    return {name for _, _, names in SECTIONS for name in names}


def _check(public: list[str]) -> None:
    listed = [name for _, _, names in SECTIONS for name in names]
    twice = sorted({n for n in listed if listed.count(n) > 1})
    missing = sorted(set(public) - set(listed) - set(MODULES))
    unknown = sorted((set(listed) | set(MODULES)) - set(public))
    if twice or missing or unknown:
        raise ApiListError(
            f"docs/_api.py's sections and wengert.__all__ disagree: missing {missing}, "
            f"not public {unknown}, placed twice {twice}; place each public name once")


def _heading(text: str, mark: str) -> list[str]:
    return [text, mark * len(text), ""]


def api_page(public: list[str]) -> str:
    """The reStructuredText of the reference page (autosummary tables, one stub page per
    name under ``generated/``)."""
    _check(public)
    out = [".. This page is written by docs/_api.py at each build: edit that file.", ""]
    out += _heading("API reference", "=")
    out += ["The public names of ``wengert`` (``import wengert as wg``), from their "
            "docstrings: each page gives the signature, the parameters and runnable "
            "examples.", "", ".. currentmodule:: wengert", ""]
    for title, about, names in SECTIONS:
        out += _heading(title, "-")
        out += [about, "", ".. autosummary::", "   :toctree: generated", ""]
        out += [f"   {name}" for name in names]
        out += [""]
    out += _heading("Modules", "-")
    out += [f"- {text}" for text in MODULES.values()]
    return "\n".join(out) + "\n"


def write_api_list(public: list[str], target: Path) -> None:
    """Write :func:`api_page` to ``target`` unless it already holds that text."""
    text = api_page(public)
    if not target.is_file() or target.read_text() != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
