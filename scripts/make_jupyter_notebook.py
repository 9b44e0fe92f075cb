"""Writes notebooks/02_jupyter.ipynb (without outputs); ``scripts/execute_notebooks.py`` runs it.

The notebook is the documentation of the Jupyter layer, so its text lives here
next to its code, cell by cell; edit this file, then run it and re-execute the
notebook.
"""

from __future__ import annotations

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "02_jupyter.ipynb"

CELLS: list[tuple[str, str]] = [
    ("md", """# wengert in Jupyter: watch automatic differentiation happen

This notebook shows the Jupyter side of wengert on real examples:

1. `%%autodiff`: differentiate a cell of ordinary NumPy code;
2. the tape and the graph behind a result;
3. the reverse (adjoint) sweep step by step, in a card and in the **explorer** widget;
4. vector-Jacobian products that never build a Jacobian;
5. forward mode, with a perturbation ε per input;
6. "why is my gradient None / zero / NaN?" (`wg.explain`);
7. plots where a picture beats a table.

Everything shown comes from wengert's public tape API, so what you see is what the engine did."""),
    ("code", """import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert"""),
    ("md", """## 1. `%%autodiff`: the derivative of a cell

The seed example, a one-parameter linear model and its squared error:
$L = (x\\,w + b - y)^2$. The magic's arguments name the **inputs** (here all four);
each becomes a leaf that requires grad the moment it is bound, whether it was defined
in an earlier cell (as here) or in the cell itself. The card shows the output and its
derivative with respect to each input; `--show all` adds the tape, the graph, the
reverse sweep step by step and the vector-Jacobian products."""),
    ("code", """x, w, b, y = 1.5, 0.8, 0.1, 1.0"""),
    ("code", """%%autodiff x w b y --show all
t1 = x * w
t2 = t1 + b
L = (t2 - y) ** 2"""),
    ("md", """Read the sweep table from the top: the seed $\\bar L = 1$ enters the last equation,
each step applies that op's VJP rule (written with the step's names, then its numbers)
and adds the result to the adjoints of its inputs. The adjoints of the inputs at the
end are the gradient: $\\partial L/\\partial w = 2(xw + b - y)\\,x = 0.9$.

The result is bound to `_autodiff`; the variables are plain numbers again:"""),
    ("code", """_autodiff.grads, type(L).__name__, L"""),
    ("md", """### Inputs assigned in the cell, and both modes at once

For $y = (a + b)\\,c$ the inputs are assigned inside the cell. `--mode both` runs the
cell once with every input carrying a forward-mode perturbation (ε₁, ε₂, ε₃) and also
sweeps backwards over the same tape, then checks that the two modes agree."""),
    ("code", """%%autodiff a b c --mode both
a = 2.0
b = 3.0
c = 4.0
(a + b) * c"""),
    ("md", """### Fan-out: a value used more than once

When a value feeds several equations, its adjoint is the **sum** of what each of them
sends back ($\\bar x \\mathrel{+}= \\dots$). The table writes the running sum out."""),
    ("code", """%%autodiff x --show adjoint
x = 3.0
z = x * x + np.sin(x)"""),
    ("md", """## 2. The explorer: step through the forward trace, then the reverse sweep

`_autodiff.explore()` (or `wg.explore(y)` for any tensor) opens a widget: the buttons,
the slider and the arrow keys move through the forward (primal) trace and then the
reverse (adjoint) trace. The current equation is highlighted in the graph and in the
table; the panel on the right shows where every number comes from. All frames are
computed here in Python, so the widget also steps in a saved notebook or an exported
HTML page, without a kernel."""),
    ("code", """%%autodiff x w b y --as fit
L = (x * w + b - y) ** 2;"""),
    ("code", """view = fit.explore()
view"""),
    ("md", """The current step is a synced trait: Python can read and set it."""),
    ("code", """view.step = 6
view.label"""),
    ("md", """## 3. A bigger tape: an MLP loss

A two-layer network on a small batch, with the PyTorch-style API. `wg.tape_of` lists
the equations behind the loss (inside `wg.source_lines()` they remember their line of
code), and `wg.draw` draws them with Graphviz."""),
    ("code", """rng = np.random.default_rng(0)
X = rng.normal(size=(8, 3))
target = rng.normal(size=(8, 1))
W1 = wg.tensor(rng.normal(size=(3, 4)) * 0.5, requires_grad=True)
W2 = wg.tensor(rng.normal(size=(4, 1)) * 0.5, requires_grad=True)
with wg.source_lines(), wg.keep_values():
    hidden = np.tanh(X @ W1)
    prediction = hidden @ W2
    loss = np.mean((prediction - target) ** 2)
wg.tape_of(loss)"""),
    ("code", """wg.draw(loss)"""),
    ("code", """wg.explore(loss)"""),
    ("md", """## 4. Vector-Jacobian products: reverse mode never builds a Jacobian

For $y = W x$ with $W$ of size 512×512, the Jacobian $\\partial y/\\partial W$ has
512 × 262,144 entries (over a gigabyte). Reverse mode never forms it: the VJP
$\\bar W = \\bar y\\, x^\\top$ uses the 512 numbers of $\\bar y$ and the 512 of $x$."""),
    ("code", """W = np.random.default_rng(1).normal(size=(512, 512)) / np.sqrt(512)
v = np.linspace(0.0, 1.0, 512)"""),
    ("code", """%%autodiff W v --show vjp
h = W @ v
loss = np.sum(h * h)"""),
    ("md", """## 5. Forward mode: one perturbation per input

In forward mode every value carries a tangent next to its primal. Under nesting
(`--mode forward` gives each input its own perturbation), a value reads
$p + t_1\\varepsilon_1 + t_2\\varepsilon_2 + t_{12}\\varepsilon_1\\varepsilon_2$.
The explorer shows each node's primal and tangents."""),
    ("code", """%%autodiff s t --mode forward --as fwd
s = 2.0
t = 0.5
u = s * np.sin(t)"""),
    ("code", """fwd.explore()"""),
    ("code", """wg.Dual(2.0, 1.0) ** 3"""),
    ("md", """## 6. Why is my gradient None, zero or NaN?

`wg.explain(y, x)` (or `%%autodiff ... --explain x`) says what happened, where, and how
to fix it. The classic NaN: `np.where` selects a safe branch, but the other branch's
derivative is still computed, and `0 · inf` is NaN."""),
    ("code", """%%autodiff r --explain r
r = np.array([0.0, 4.0])
root = np.sum(np.where(r > 0, np.sqrt(r), 0.0))"""),
    ("md", """A gradient that is **None**: the path from the input was cut."""),
    ("code", """p = wg.tensor(2.0, requires_grad=True)
with wg.no_grad():
    q = p * 3.0
out = q + 1.0
wg.explain(out, p, source="with wg.no_grad():\\n    q = p * 3.0\\nout = q + 1.0")"""),
    ("md", """And a gradient that is **zero**: a ReLU that is off everywhere."""),
    ("code", """z = wg.tensor([-1.0, -2.0], requires_grad=True)
with wg.source_lines():
    act = np.sum(np.maximum(z, 0.0))
wg.explain(act, z)"""),
    ("md", """## 7. Pictures

`wengert.jupyter.views.plots` draws with matplotlib. A function and its derivative (from
forward mode) with tangent lines:"""),
    ("code", """from wengert.jupyter import plots

plots.derivative_plot(lambda s: np.sin(s) * s, (-4.0, 4.0), at=[-2.0, 1.0])"""),
    ("md", """The gradient field of the Rosenbrock function (reverse mode over the whole grid),
with a few steps of gradient descent on top:"""),
    ("code", """def rosen(v):
    return (1.0 - v[0]) ** 2 + 10.0 * (v[1] - v[0] ** 2) ** 2

point, path = np.array([-1.5, 2.0]), []
for _ in range(40):
    path.append(point.copy())
    point = point - 0.01 * wg.grad(rosen)(point)
plots.gradient_field(rosen, (-2.0, 2.0), (-1.0, 3.0), path=path)"""),
    ("code", """def layer(v):
    return np.tanh(np.outer(v, v).sum(axis=0) - v)

plots.jacobian_heatmap(layer, np.linspace(-1, 1, 6))"""),
    ("md", """Forward mode needs one pass per input, reverse mode one per output: measured on
$\\tanh(Wx)$ for growing input and output sizes (timings depend on the machine, so
this cell's output is not compared by the notebook tests)."""),
    ("code", """# NBVAL_IGNORE_OUTPUT
plots.mode_cost_plot(sizes=(1, 4, 16, 64), fixed=16, repeat=2)"""),
    ("md", """## 8. Rich display everywhere

Tensors, dual numbers, gradient tapes and tapes show as cards in JupyterLab (and as
plain text elsewhere)."""),
    ("code", """w_leaf = wg.tensor([0.5, -1.0], requires_grad=True)
w_leaf"""),
    ("code", """with wg.GradientTape() as tape:
    weight = wg.Variable(2.0, name="weight")
    cost = (weight * 3.0 - 1.0) ** 2
tape"""),
]


def main() -> None:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    for k, (kind, text) in enumerate(CELLS):
        cell = new_markdown_cell(text) if kind == "md" else new_code_cell(text)
        cell["id"] = f"cell-{k:02d}"
        nb.cells.append(cell)
    nbformat.write(nb, HERE)
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
