"""Writes notebooks/01_quickstart.ipynb (without outputs); scripts/execute_notebooks.py runs it."""

from __future__ import annotations

from build import write

CELLS: list[tuple[str, str]] = [
    ("md", r"""# 01 · Quick start: three ways to get a gradient

wengert differentiates ordinary NumPy code. In this notebook you will

1. get the same gradient three ways, in the three dialects you will meet in the wild:
   **leaf tensors** (PyTorch), a **gradient tape** (TensorFlow) and **function transforms** (JAX);
2. see why automatic differentiation is *exact*, unlike finite differences;
3. differentiate a whole notebook cell with the `%%autodiff` magic;
4. step through the computation, forwards and then backwards, in the **explorer**.

All three dialects run on the same machinery: a *tape* (a Wengert list) of primitive
operations, swept backwards once. The next notebooks open that machinery up."""),
    ("code", r"""import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert"""),
    ("md", r"""Throughout, the running example is $f(x) = \sum_i x_i \sin x_i$, whose gradient we
know by hand: $\partial f/\partial x_i = \sin x_i + x_i \cos x_i$."""),
    ("code", r"""x_value = np.array([0.5, 1.0, 2.0])
expected = np.sin(x_value) + x_value * np.cos(x_value)
expected"""),
    ("md", r"""## 1. Leaf tensors and `.backward()` (the PyTorch dialect)

`wg.tensor(..., requires_grad=True)` makes a *leaf*: a value you created and want a
gradient for. Plain `np.*` functions work on tensors and are recorded as they run."""),
    ("code", r"""x = wg.tensor(x_value, requires_grad=True)
y = (np.sin(x) * x).sum()
y"""),
    ("md", r"""`y` was produced by an operation, so it has a `grad_fn` (the last recorded node)
and is not a leaf. `backward()` sweeps the record in reverse and *accumulates*
$\partial y/\partial x$ into `x.grad`, a plain NumPy array:"""),
    ("code", r"""print("y.is_leaf:", y.is_leaf, " y.grad_fn:", y.grad_fn, " x.is_leaf:", x.is_leaf)
y.backward()
x.grad"""),
    ("md", r"""Gradients **accumulate** across `backward()` calls, as in PyTorch (set
`x.grad = None` to start again), and an intermediate result keeps its gradient only if you ask with
`retain_grad()` (notebook `06_leaf_tensors.ipynb` is about exactly this):"""),
    ("code", r"""x.grad = None
h = x * x
h.retain_grad()
z = (3.0 * h).sum()
z.backward()
print("dz/dh =", h.grad)
print("dz/dx =", x.grad)"""),
    ("md", r"""## 2. A gradient tape (the TensorFlow dialect)

With `wg.GradientTape`, operations are recorded only inside the `with` block;
`wg.Variable`s are watched automatically. A tape is the natural shape of a training loop:
here it fits a line $y = w x + b$ to noisy data by gradient descent."""),
    ("code", r"""rng = np.random.default_rng(0)
xs = np.linspace(-1.0, 1.0, 20)
ys = 3.0 * xs - 0.5 + 0.1 * rng.normal(size=xs.shape)

w = wg.Variable(0.0, name="w")
b = wg.Variable(0.0, name="b")
for step in range(200):
    with wg.GradientTape() as tape:
        loss = np.mean((w * xs + b - ys) ** 2)
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.1 * dw.numpy())
    b.assign_sub(0.1 * db.numpy())
print(f"w = {w.numpy():.3f}, b = {b.numpy():.3f}, loss = {loss.item():.5f}")"""),
    ("md", r"""The same gradient as in section 1, this time from a tape:"""),
    ("code", r"""xv = wg.Variable(x_value, name="x")
with wg.GradientTape() as tape:
    y = np.sum(np.sin(xv) * xv)
tape.gradient(y, xv)"""),
    ("md", r"""## 3. Function transforms (the JAX dialect)

`wg.grad(f)` is a *new function* that returns the gradient of `f`. It takes and returns
plain NumPy values, so your code never sees a tensor:"""),
    ("code", r"""def f(x):
    return np.sum(np.sin(x) * x)

wg.grad(f)(x_value)"""),
    ("md", r"""Transforms compose, so higher derivatives are just more `grad`s, and they work on
nested containers of arrays (*pytrees*), which is how model parameters are usually kept:"""),
    ("code", r"""g = lambda t: np.sin(t) * t
t = 0.7
print("d³/dt³ by AD:  ", wg.grad(wg.grad(wg.grad(g)))(t))
print("d³/dt³ by hand:", -3 * np.sin(t) - t * np.cos(t))

def mse(params, inputs, targets):
    pred = np.tanh(inputs @ params["w"] + params["b"])
    return np.mean((pred - targets) ** 2)

rng = np.random.default_rng(1)
params = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
inputs, targets = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
{name: grad.shape for name, grad in wg.grad(mse)(params, inputs, targets).items()}"""),
    ("md", r"""## 4. Exact, not approximate

Automatic differentiation is neither *numerical* differentiation (finite differences,
which approximate) nor *symbolic* differentiation (which manipulates formulas, and whose
expressions can swell). It applies the chain rule to the numbers of each primitive
operation, so its gradient is exact up to floating-point rounding. Compare with the
central difference $\frac{f(x + h e_i) - f(x - h e_i)}{2h}$: a large step $h$ suffers
truncation error, a small one rounding error, and no step gets close to AD."""),
    ("code", r"""def central_difference(f, x, h):
    grad = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        grad[i] = (f(x + e) - f(x - e)) / (2 * h)
    return grad

print(f"{'method':>22}  max error against the formula")
for h in [1e-1, 1e-3, 1e-5, 1e-8, 1e-11]:
    err = np.max(np.abs(central_difference(f, x_value, h) - expected))
    print(f"{'finite diff. h=%.0e' % h:>22}  {err:.1e}")
err = np.max(np.abs(wg.grad(f)(x_value) - expected))
print(f"{'reverse-mode AD':>22}  {err:.1e}")"""),
    ("md", r"""`wg.gradcheck` uses finite differences the right way round: to *test* a gradient,
with a tolerance. It returns `True` or raises with the worst entries:"""),
    ("code", r"""wg.gradcheck(f, (x_value,))"""),
    ("md", r"""## 5. `%%autodiff`: the derivative of a cell

After `%load_ext wengert` (in the first code cell), the `%%autodiff` cell magic
differentiates a cell of ordinary NumPy code. Its arguments name the **inputs**; each
becomes a leaf the moment it is bound. The card shows the output and its derivative with
respect to each input. Here is the squared error of a one-parameter linear model,
$L = (x\,w + b - y)^2$, which notebook `02_computational_graphs.ipynb` takes apart
node by node:"""),
    ("code", r"""%%autodiff x w b y
x, w, b, y = 1.5, 0.8, 0.1, 1.0
L = (x * w + b - y) ** 2"""),
    ("md", r"""By hand: $\partial L/\partial w = 2(xw + b - y)\,x = 2 \cdot 0.3 \cdot 1.5 = 0.9$ and
$\partial L/\partial x = 2(xw + b - y)\,w = 0.48$. The result is kept in `_autodiff`; the
variables themselves are plain numbers again, so the next cell runs as usual:"""),
    ("code", r"""print(_autodiff.grads)
print(type(L).__name__, L)"""),
    ("md", r"""## 6. The explorer: watch it happen

`.explore()` on an `%%autodiff` result (or `wg.explore(y)` on any tensor) opens a widget.
The buttons, the slider and the arrow keys step first through the **forward trace**
(each equation computing its value) and then through the **reverse sweep** (each
equation sending its adjoint back to its inputs). The current equation is highlighted
in the graph and in the table; the panel says where every number comes from. The frames
are computed in Python up front, so the widget also steps in the notebook's HTML export
(`jupyter nbconvert --to html`), without a kernel."""),
    ("code", r"""%%autodiff x w b y --as fit
x, w, b, y = 1.5, 0.8, 0.1, 1.0
L = (x * w + b - y) ** 2;"""),
    ("code", r"""view = fit.explore()
view"""),
    ("md", r"""The current step is a synced attribute, so Python can drive the widget too:"""),
    ("code", r"""view.step = 5
view.label"""),
    ("md", r"""## 7. When something is wrong, you are told

Misuse raises an error that says what happened and how to fix it, never a silently wrong
gradient. Turning a tensor that requires grad into a plain NumPy array would lose its
gradient, so it refuses (notebook `12_when_gradients_go_wrong.ipynb` has many more):"""),
    ("code", r"""a = wg.tensor(2.0, requires_grad=True)
try:
    np.asarray(a * 3.0)
except TypeError as err:
    print(err)"""),
    ("md", r"""## Exercises

1. Compute the gradient of $g(v) = \lVert v \rVert_2^2 = \sum_i v_i^2$ at
   $v = (1, -2, 3)$ in all three dialects and check that it is $2v$.
2. Use `%%autodiff` to find $\partial z/\partial p$ and $\partial z/\partial q$ for
   $z = p\,e^{q}$ at $p = 2$, $q = 0$."""),
    ("solution", r"""v0 = np.array([1.0, -2.0, 3.0])

v = wg.tensor(v0, requires_grad=True)
np.sum(v ** 2).backward()
print("leaf tensor:", v.grad)

vv = wg.Variable(v0)
with wg.GradientTape() as tape:
    s = np.sum(vv ** 2)
print("tape:       ", tape.gradient(s, vv).numpy())

print("transform:  ", wg.grad(lambda v: np.sum(v ** 2))(v0))
print("2v:         ", 2 * v0)"""),
    ("solution", r"""%%autodiff p q
p, q = 2.0, 0.0
z = p * np.exp(q)"""),
    ("md", r"""## What next

- `02_computational_graphs.ipynb`: what the tape records: nodes, edges and the
  order they are evaluated in.
- `03_forward_mode.ipynb`: the other way to differentiate, with dual numbers.
- `04_reverse_mode.ipynb`: the reverse sweep behind `backward()`, `tape.gradient` and
  `wg.grad`, step by step, and what it costs."""),
]

if __name__ == "__main__":
    write("01_quickstart", CELLS)
