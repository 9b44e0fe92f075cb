"""Write ``notebooks/05_vjps_without_jacobians.ipynb``: reverse mode as a chain of
vector-Jacobian products; ``y = Wx`` and ``Wᵀȳ``; what a Jacobian would cost; jacfwd against
jacrev by shape."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS = [
    ("md", r"""
# 05 · Vector-Jacobian products: reverse mode never builds a Jacobian

The chain rule is a product of Jacobians. For $f = f_3 \circ f_2 \circ f_1$,

$$J_f = J_3\, J_2\, J_1 .$$

Reverse mode does not form any of these matrices. It starts from a row vector $\bar y$ (the
"cotangent": for a scalar loss, $\bar y = 1$) and multiplies from the left, one factor at a
time: $\bar x = ((\bar y^\top J_3)\, J_2)\, J_1$. Each product $\bar y^\top J$ is a
**vector-Jacobian product** (VJP), and every primitive knows how to compute its own VJP
directly, without its Jacobian. This notebook shows:

1. $y = Wx$: its VJPs are $W^\top \bar y$ and $\bar y\, x^\top$;
2. how big the Jacobians would have been;
3. the VJPs flowing through a backward sweep, step by step;
4. whole Jacobians: forward mode builds them column by column (`wg.jacfwd`), reverse mode
   row by row (`wg.jacrev`), and which wins depends on the shape.
"""),
    ("code", r"""
import numpy as np

import wengert as wg
from wengert.jupyter import plots

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert
"""),
    ("md", r"""
## 1. $y = Wx$

One of the documents this course grew from puts it this way: *"AD frameworks never
materialize a full Jacobian matrix. [...] each backward rule returns $\bar a_c^\top J$
[...] without ever forming $J$ explicitly. For a linear node $y = Wx$, the VJP with
respect to $x$ is simply $W^\top \bar a_y$, a matrix vector product."*

Take $W$ of size $3\times 4$. The Jacobian $\partial y/\partial x$ is $W$ itself, so here
forming it is cheap and we can compare: `wg.vjp` gives the VJP function, and
`wg.jacobian` the whole matrix.
"""),
    ("code", r"""
rng = np.random.default_rng(0)
W = rng.normal(size=(3, 4))
x = rng.normal(size=4)
y_bar = np.array([1.0, -2.0, 0.5])          # a cotangent: one number per output

y, pullback = wg.vjp(lambda x: W @ x, x)
(x_bar,) = pullback(y_bar)

print("VJP from wengert:", x_bar)
print("W.T @ y_bar:     ", W.T @ y_bar)
print("Jacobian dy/dx is W:", np.allclose(wg.jacobian(lambda x: W @ x)(x), W))
"""),
    ("md", r"""
The claim holds. Now with respect to $W$: $y_i = \sum_j W_{ij} x_j$, so
$\partial y_i / \partial W_{kj} = \delta_{ik}\, x_j$. The Jacobian is a $3 \times (3 \times 4)$
array, and most of it is zeros; its VJP is the outer product $\bar y\, x^\top$, an array
the shape of $W$:
"""),
    ("code", r"""
J_W = wg.jacobian(lambda W: W @ x)(W)
print("Jacobian dy/dW: shape", J_W.shape, "  entries", J_W.size,
      "  nonzero", np.count_nonzero(J_W))

_, pullback_W = wg.vjp(lambda W: W @ x, W)
(W_bar,) = pullback_W(y_bar)
print("VJP (shape of W):\n", W_bar)
print("equals outer(y_bar, x):", np.allclose(W_bar, np.outer(y_bar, x)))
print("equals y_bar . J_W:    ", np.allclose(W_bar, np.einsum("i,ikj->kj", y_bar, J_W)))
"""),
    ("md", r"""
## 2. How big the Jacobians would be

For a layer $y = Wx$ with $n$ inputs and $m$ outputs, count the numbers involved:

| object | shape | entries |
|---|---|---|
| cotangent $\bar y$ | $m$ | $m$ |
| $\partial y/\partial x$ | $m\times n$ | $mn$ |
| $\partial y/\partial W$ | $m \times m \times n$ | $m^2 n$ |
| VJP for $W$, $\bar y x^\top$ | $m \times n$ | $mn$ |

The VJP is never larger than the thing it is the gradient of. The Jacobian with respect
to the weights is $m$ times larger, in float64:
"""),
    ("code", r"""
def human(nbytes):
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if nbytes < 1000:
            return f"{nbytes:.0f} {unit}"
        nbytes /= 1000
    return f"{nbytes:.0f} PB"

print(f"{'n = m':>6} {'x_bar, y_bar':>13} {'W_bar':>9} {'dy/dW':>9}")
for n in (10, 100, 512, 4096):
    print(f"{n:>6} {human(8 * n):>13} {human(8 * n * n):>9} {human(8 * n ** 3):>9}")
"""),
    ("md", r"""
At $n = m = 512$ the Jacobian $\partial y/\partial W$ would take a gigabyte; the gradient
takes 2 MB. Reverse mode computes that gradient with two matrix-vector sized products.
Here is the whole gradient of $L = \lVert W v\rVert^2$ for a $512\times 512$ $W$, checked
against the formula $\bar W = 2\,(Wv)\,v^\top$:
"""),
    ("code", r"""
W_big = wg.tensor(np.random.default_rng(1).normal(size=(512, 512)) / np.sqrt(512),
                  requires_grad=True)
v = np.linspace(0.0, 1.0, 512)
h = W_big @ v
loss = np.sum(h * h)
loss.backward()
h_value = W_big.detach().numpy() @ v
print("W_big.grad shape:", W_big.grad.shape)
print("equals 2 (W v) v^T:", np.allclose(W_big.grad, 2.0 * np.outer(h_value, v)))
"""),
    ("md", r"""
The same computation as a cell under `%%autodiff`, which differentiates the cell's last
value with respect to the names it is given; `--show vjp` lists the rule each step of the
sweep applied, written with the step's own names: every one is a product of arrays the
size of values, never a Jacobian.
"""),
    ("code", r"""
W = np.random.default_rng(1).normal(size=(512, 512)) / np.sqrt(512)
v = np.linspace(0.0, 1.0, 512)
"""),
    ("code", r"""
%%autodiff W v --show vjp
h = W @ v
loss = np.sum(h * h)
"""),
    ("md", r"""
## 3. Watching the VJPs flow

A backward sweep visits the recorded operations in reverse order. Each receives a
cotangent the shape of its output and sends one the shape of each input: a VJP per edge.
`wg.observe_sweep` reports every step; a small two-layer network shows that no step ever
handles anything shaped like a Jacobian:
"""),
    ("code", r"""
class ShapePrinter(wg.SweepObserver):
    def step(self, node, g, sent):
        shapes = ", ".join(f"input {i}: {np.shape(ct)}" for i, _, ct in sent)
        print(f"{node.op.name:>9} received {str(np.shape(g)):>8}  sent {shapes}")

rng = np.random.default_rng(0)
W1 = wg.tensor(rng.normal(size=(5, 4)), requires_grad=True)
W2 = wg.tensor(rng.normal(size=(3, 5)), requires_grad=True)
x_in = rng.normal(size=4)

out = np.sum(np.tanh(W2 @ np.tanh(W1 @ x_in)))
with wg.observe_sweep(ShapePrinter()):
    out.backward()
"""),
    ("md", r"""
Read it from the top: the seed, a 0-d `1.0`, enters `sum`, which sends a vector of ones
of shape (3,); `tanh` multiplies by $1 - \tanh^2$ elementwise (its Jacobian is diagonal,
and its VJP never forms the diagonal matrix); `matmul` sends $W_2^\top \bar h$ to its
vector input and $\bar h\, a^\top$ to its matrix input, and so on. The largest array on
the way is a weight-shaped gradient.

A picture of the same sweep: after `%load_ext wengert`, `wg.draw` can show each node's
gradient next to its value.
"""),
    ("code", r"""
wg.draw(out, names={"x0": "W1", "x1": "W2"})
"""),
    ("md", r"""
Or step through it: `wg.explore(out)` replays the forward trace, then the reverse sweep
one VJP at a time (use the slider or the arrow keys; the panel shows the rule applied
and the cotangents it sent).
"""),
    ("code", r"""
wg.explore(out)
"""),
    ("md", r"""
## 4. Whole Jacobians: columns or rows?

Sometimes you do want the whole Jacobian $J$ of $f:\mathbb R^n \to \mathbb R^m$. There are
two ways to assemble it from cheap products:

- **forward mode** (`wg.jacfwd`) pushes a tangent $e_j$ through $f$ and gets a column
  $J e_j$: $n$ passes;
- **reverse mode** (`wg.jacrev`) pulls a cotangent $e_i$ back through $f$ and gets a row
  $e_i^\top J$: $m$ passes.

Same matrix either way:
"""),
    ("code", r"""
A = np.random.default_rng(2).normal(size=(5, 3))
f = lambda x: np.tanh(A @ x) * np.sum(x ** 2)       # R^3 -> R^5
x0 = np.array([0.3, -0.2, 0.5])

J_fwd = wg.jacfwd(f)(x0)
J_rev = wg.jacrev(f)(x0)
print("shape (m, n):", J_fwd.shape, "  same:", np.allclose(J_fwd, J_rev))
"""),
    ("md", r"""
How many passes each needs is counted, not assumed, by `plots.measure_mode_cost`, on a
family of functions $x \mapsto \tanh(Wx)$ from $\mathbb R^n$ to $\mathbb R^m$ (the pass
counts are exact; the times it also measures are in the plot below):
"""),
    ("code", r"""
cost = plots.measure_mode_cost(sizes=(1, 4, 16, 64), fixed=16, repeat=1)
print(f"{'n':>4} {'m':>4} {'forward passes':>15} {'reverse passes':>15}")
for row in cost["vary_n"] + cost["vary_m"]:
    print(f"{row.n:>4} {row.m:>4} {row.forward_passes:>15} {row.reverse_passes:>15}")
"""),
    ("md", r"""
Forward mode costs one pass per **input**, reverse mode one per **output**. The plot
shows the pass counts (top) and the measured times (bottom; they vary from machine to
machine and run to run, so this cell's output is not compared by the tests):
"""),
    ("varies", r"""
plots.mode_cost_plot(sizes=(1, 4, 16, 64), fixed=16, repeat=2)
"""),
    ("md", r"""
This is the document's rule: *"for a function $f:\mathbb R^n\to\mathbb R^m$, reverse mode
is preferred when $m \ll n$ and forward mode when $n \ll m$."* Training sits at $m = 1$:
one reverse sweep gives the whole gradient, whatever $n$ is. Two refinements the pass
counts hide:

- a reverse pass costs more than a forward pass (it runs the function *and* the sweep, and
  stores the values the rules read), so near $m \approx n$ forward mode often wins;
- wengert's `jacfwd` pushes all $n$ tangents through the function in one batched pass (the
  solid line of the time plot), which is why it beats $n$ separate `wg.jvp` calls by far,
  and on functions as small as these it can be the fastest even where it needs more
  passes: the pass count is the story for large sizes, the fixed cost of each pass the
  story for small ones. Measure before you choose.

`wg.jacobian` picks for you: forward mode when the input has fewer entries than the output,
reverse mode otherwise.

## Exercises

1. For $y = Ax + b$, what are the VJPs with respect to $b$ and to $A$? Check them with
   `wg.vjp` (both at once: `wg.vjp(lambda A, b: A @ x + b, A, b)`).
2. The Jacobian of an elementwise function such as `np.sin` is diagonal. Get the diagonal
   with **one** VJP (which cotangent?), without forming the Jacobian, and compare with
   `np.diag(wg.jacobian(np.sin)(x))`.
3. For $Y = X W^\top$ (a batch of rows $X$ of shape $(B, n)$), write down the VJP with
   respect to $W$ and check it.
"""),
    ("solution", r"""
A = np.random.default_rng(3).normal(size=(2, 3))
b = np.array([0.1, -0.1])
x = np.array([1.0, 2.0, 3.0])
y_bar = np.array([1.0, 0.5])
_, pb = wg.vjp(lambda A, b: A @ x + b, A, b)
A_bar, b_bar = pb(y_bar)
print("b_bar == y_bar:", np.allclose(b_bar, y_bar))
print("A_bar == outer(y_bar, x):", np.allclose(A_bar, np.outer(y_bar, x)))
"""),
    ("solution", r"""
x = np.array([0.0, 0.5, 1.0, 2.0])
_, pb = wg.vjp(np.sin, x)
(diag,) = pb(np.ones_like(x))            # ones^T diag(d) = d
print(diag, np.allclose(diag, np.diag(wg.jacobian(np.sin)(x))))
"""),
    ("solution", r"""
rng = np.random.default_rng(4)
X = rng.normal(size=(6, 3))
W = rng.normal(size=(2, 3))
Y_bar = rng.normal(size=(6, 2))
_, pb = wg.vjp(lambda W: X @ W.T, W)
(W_bar,) = pb(Y_bar)
print("W_bar == Y_bar^T X:", np.allclose(W_bar, Y_bar.T @ X))
"""),
    ("md", r"""
## Read next

- `04_reverse_mode.ipynb`: the Wengert list and the adjoint sweep, step by step in the
  explorer.
- `06_leaf_tensors.ipynb`: where the VJPs of a sweep end up (`.grad` of the leaves).
- `09_higher_order.ipynb`: Hessian-vector products, the second-order cousin of the VJP.
"""),
]

if __name__ == "__main__":
    write("05_vjps_without_jacobians", CELLS)
