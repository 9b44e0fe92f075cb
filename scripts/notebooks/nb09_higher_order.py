"""Writes notebooks/09_higher_order.ipynb (without outputs).

Run it, then ``scripts/execute_notebooks.py notebooks/09_higher_order.ipynb``.
The notebook teaches higher-order derivatives: nesting transforms, second derivatives
in the PyTorch and TensorFlow dialects, Hessians by the four compositions of forward
and reverse mode, Hessian-vector products without the Hessian, and Newton's method on
Rosenbrock's function with a convergence plot.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS: list[tuple[str, str]] = [
    ("md", """# 09 · Higher-order derivatives: nesting, Hessians, HVPs and Newton's method

**What you will learn.** A derivative computed by automatic differentiation is itself
a program made of differentiable operations, so it can be differentiated again. This
*nested AD* gives second and higher derivatives:

1. derivatives of derivatives: `wg.grad(wg.grad(f))`, and the elementwise trick;
2. the same in the PyTorch dialect (`create_graph=True`) and with nested tapes;
3. the Hessian, and the four ways to compose forward and reverse mode into it;
4. Hessian-vector products (forward-over-reverse) that never form the Hessian;
5. Newton's method on Rosenbrock's function, against gradient descent, with a
   convergence plot.

It assumes forward mode (`03_forward_mode.ipynb`), reverse mode
(`04_reverse_mode.ipynb`) and Jacobians (`05_vjps_without_jacobians.ipynb`)."""),
    ("code", """import matplotlib.pyplot as plt
import numpy as np

import wengert as wg
from wengert.jupyter import plots

np.set_printoptions(precision=4, suppress=True)"""),
    ("md", """## 1. Derivatives of derivatives

`wg.grad(f)` is an ordinary Python function; its body runs wengert's operations, so
`wg.grad` can be applied to it again. For $f(x) = x^3$: $f' = 3x^2$, $f'' = 6x$,
$f''' = 6$."""),
    ("code", """f = lambda x: x ** 3
df = wg.grad(f)
d2f = wg.grad(df)
d3f = wg.grad(d2f)
print(df(2.0), d2f(2.0), d3f(2.0))"""),
    ("md", """For a function applied elementwise, each output depends on its own input only, so
the gradient of the *sum* is the vector of elementwise derivatives: one reverse sweep
gives the derivative at every point of a grid. Nesting that trick gives the classic
picture of $\\tanh$ and its first six derivatives (HIPS autograd's README example):"""),
    ("code", """def elementwise_derivative(f):
    return wg.grad(lambda x: np.sum(f(x)))

xs = np.linspace(-7, 7, 400)
fig, ax = plt.subplots(figsize=(6.5, 3.5))
g = np.tanh
for order in range(7):
    ax.plot(xs, g(xs), label=f"order {order}")
    g = elementwise_derivative(g)
ax.set_ylim(-5, 5)
ax.legend(ncols=4, fontsize=8, loc="lower left")
ax.set_title("tanh and its first six derivatives, by nested reverse mode")
plt.show()"""),
    ("md", """Check a value: $\\tanh''(x) = -2\\tanh x\\,(1 - \\tanh^2 x)$."""),
    ("code", """x0 = 0.5
second = wg.grad(wg.grad(np.tanh))(x0)
print(second, -2 * np.tanh(x0) * (1 - np.tanh(x0) ** 2))"""),
    ("md", """## 2. The same in the PyTorch and TensorFlow dialects

With tensors, `backward(create_graph=True)` records the backward pass itself, so the
gradient in `x.grad` is a tensor *with a history*; differentiating it again gives the
second derivative (PyTorch's recipe). Clear `x.grad` first, since `.grad` accumulates:"""),
    ("code", """x = wg.tensor(0.5, requires_grad=True)
y = np.tanh(x)
y.backward(create_graph=True)
first = x.grad                      # tanh'(x), and a graph
print(first)
x.grad = None
first.backward()
print(x.grad)                       # tanh''(x)"""),
    ("md", """In the TensorFlow dialect, the outer tape records what the inner tape's
`gradient()` computes:"""),
    ("code", """v = wg.Variable(0.5)
with wg.GradientTape() as outer:
    with wg.GradientTape() as inner:
        y = np.tanh(v)
    dy = inner.gradient(y, v)
d2y = outer.gradient(dy, v)
print(dy, d2y)"""),
    ("md", """## 3. The Hessian

For $f: \\mathbb{R}^n \\to \\mathbb{R}$ the Hessian $H_{ij} = \\partial^2 f / \\partial x_i
\\partial x_j$ is the Jacobian of the gradient. The running example is Rosenbrock's
function, a narrow curved valley with its minimum at $(1, 1)$:

$$f(x, y) = (1 - x)^2 + 100\\,(y - x^2)^2 .$$

By hand, $H = \\begin{pmatrix} 2 - 400(y - x^2) + 800x^2 & -400x \\\\ -400x & 200
\\end{pmatrix}$; at the classic start $(-1.2, 1)$ that is
$\\begin{pmatrix} 1330 & 480 \\\\ 480 & 200 \\end{pmatrix}$."""),
    ("code", """def rosen(v):
    x, y = v[0], v[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2

start = np.array([-1.2, 1.0])
print(wg.grad(rosen)(start))
wg.hessian(rosen)(start)"""),
    ("md", """The Jacobian of the gradient can be built four ways: the outer Jacobian by forward
or reverse mode (`jacfwd`, `jacrev`), around a gradient computed either way. All four
give the same matrix. `wg.hessian` is **forward-over-reverse**, `jacfwd(jacrev(f))`:
the inner reverse sweep gives the whole gradient for the price of a few evaluations of
$f$, and the outer forward mode pushes $n$ tangents through it, one per column. That is
the usual best choice, since the gradient has as many outputs as inputs."""),
    ("code", """compositions = {
    "forward over reverse": wg.jacfwd(wg.jacrev(rosen)),
    "reverse over reverse": wg.jacrev(wg.jacrev(rosen)),
    "forward over forward": wg.jacfwd(wg.jacfwd(rosen)),
    "reverse over forward": wg.jacrev(wg.jacfwd(rosen)),
}
for name, hess in compositions.items():
    print(f"{name:22s}", hess(start).ravel())"""),
    ("md", """## 4. Hessian-vector products without the Hessian

Newton-type optimisers, curvature estimates and influence functions need $H v$, not
$H$. A Hessian has $n^2$ entries (for a million parameters, $10^{12}$), but $Hv$ is the
directional derivative of the gradient along $v$:

$$H v = \\frac{d}{d\\varepsilon} \\nabla f(x + \\varepsilon v)\\Big|_{\\varepsilon=0},$$

one forward-mode pass (a JVP) through the reverse-mode gradient. `wg.hvp(f, x, v)` is
exactly `wg.jvp(wg.grad(f), (x,), (v,))`, and costs a small multiple of one evaluation
of $f$, whatever $n$:"""),
    ("code", """direction = np.array([1.0, 0.0])
print(wg.hvp(rosen, start, direction))
gradient, hv = wg.jvp(wg.grad(rosen), (start,), (direction,))
print(hv, wg.hessian(rosen)(start) @ direction)"""),
    ("md", """On an $n$-dimensional Rosenbrock function the difference is plain: the Hessian costs
about $n$ HVPs. (Timings depend on the machine; this cell's output is not compared.)"""),
    ("varies", """import timeit

def rosen_nd(x):
    return np.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)

for n in (10, 100, 400):
    x = np.linspace(-1, 1, n)
    v = np.ones(n)
    t_hvp = min(timeit.repeat(lambda: wg.hvp(rosen_nd, x, v), number=3, repeat=3)) / 3
    t_hess = min(timeit.repeat(lambda: wg.hessian(rosen_nd)(x), number=1, repeat=3))
    print(f"n = {n:4d}: hvp {t_hvp * 1e3:7.2f} ms, full Hessian {t_hess * 1e3:8.2f} ms")"""),
    ("code", """x = np.linspace(-1, 1, 50)
v = np.random.default_rng(0).normal(size=50)
np.allclose(wg.hvp(rosen_nd, x, v), wg.hessian(rosen_nd)(x) @ v)"""),
    ("md", """## 5. Newton's method on Rosenbrock

Gradient descent steps along $-\\nabla f$ with a fixed length; in Rosenbrock's valley
the gradient points almost straight at the steep walls, so a step small enough to be
stable makes almost no progress along the floor. Newton's method uses the curvature:
it jumps to the minimum of the local quadratic model,

$$x_{k+1} = x_k - H(x_k)^{-1} \\nabla f(x_k),$$

and near the minimum the number of correct digits doubles at each step (quadratic
convergence). Both, from $(-1.2, 1)$:"""),
    ("code", """def newton(f, x, steps):
    path = [x]
    for _ in range(steps):
        x = x - np.linalg.solve(wg.hessian(f)(x), wg.grad(f)(x))
        path.append(x)
    return np.array(path)


def gradient_descent(f, x, steps, learning_rate):
    grad_f = wg.grad(f)
    path = [x]
    for _ in range(steps):
        x = x - learning_rate * grad_f(x)
        path.append(x)
    return np.array(path)


newton_path = newton(rosen, start, 8)
descent_path = gradient_descent(rosen, start, 5000, 1e-3)
minimum = np.array([1.0, 1.0])
for k, point in enumerate(newton_path):
    print(k, point, f"distance {np.linalg.norm(point - minimum):.2e}")"""),
    ("md", """Newton's second step overshoots far down the valley (pure Newton trusts its
quadratic model everywhere), but once close, its error goes from $6\\cdot10^{-2}$ to
$10^{-5}$ to $2\\cdot10^{-11}$ to exactly 0: the doubling of digits, and the minimum to
machine precision in seven steps. After 5000 steps, gradient descent is still on its way
along the valley floor:"""),
    ("code", """print("gradient descent after 5000 steps:", descent_path[-1],
      f"distance {np.linalg.norm(descent_path[-1] - minimum):.2e}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(np.linalg.norm(newton_path - minimum, axis=1) + 1e-17, "o-", label="Newton")
ax.semilogy(np.linalg.norm(descent_path - minimum, axis=1), label="gradient descent (lr 1e-3)")
ax.set_xscale("symlog", linthresh=10)
ax.set_xlabel("iteration")
ax.set_ylabel("distance to the minimum (1, 1)")
ax.set_title("Rosenbrock from (-1.2, 1)")
ax.legend()
ax.grid(True, which="both", alpha=0.3)
plt.show()"""),
    ("md", """Their paths on the contours of $f$ (`plots.gradient_field`, whose arrows are the
gradient: gradient descent walks against them, here down the steep wall and then slowly
along the floor; Newton cuts across):"""),
    ("code", """fig = plots.gradient_field(rosen, (-1.5, 1.5), (-0.5, 1.5), n=15,
                           path=newton_path, levels=np.logspace(-1, 3, 15))
fig.axes[0].plot(descent_path[:, 0], descent_path[:, 1], "-", color="tab:orange",
                 label="gradient descent")
fig.axes[0].legend(loc="lower right", fontsize=8)
fig"""),
    ("md", """Pure Newton has two weaknesses: solving with $H$ costs $O(n^3)$, and away from a
minimum $H$ need not be positive definite, so the step can go uphill. Large-scale
methods (Newton-CG, trust regions) solve $H p = -\\nabla f$ approximately with
conjugate gradients, which only ever need products $H v$, the HVPs of section 4.
Exercise 2 builds one.

## Exercises

1. Compute $\\tanh'''(0)$ three ways: nested `wg.grad`, nested `wg.derivative`
   (forward mode), and the formula $-2(1 - \\tanh^2 x)(1 - 3\\tanh^2 x)$, which gives
   $-2$ at 0."""),
    ("solution", """print(wg.grad(wg.grad(wg.grad(np.tanh)))(0.0))
print(wg.derivative(wg.derivative(wg.derivative(np.tanh)))(0.0))
t = np.tanh(0.0)
print(-2 * (1 - t ** 2) * (1 - 3 * t ** 2))"""),
    ("md", """2. Newton-CG: minimise `rosen_nd` in 50 dimensions from `np.zeros(50)`. At each
   step solve $H p = -\\nabla f$ by conjugate gradients using only `wg.hvp` (about 20 CG
   iterations; stop early where $d^\\top H d \\le 0$, since far from the minimum $H$ is
   not positive definite), then take $x \\leftarrow x + t p$, halving $t$ from 1 until
   $f$ decreases. How many steps until $\\lVert \\nabla f \\rVert < 10^{-8}$?"""),
    ("solution", """def conjugate_gradient(hvp, b, iterations=20):
    p, r = np.zeros_like(b), b.copy()
    d = r.copy()
    for _ in range(iterations):
        hd = hvp(d)
        curvature = d @ hd
        if curvature <= 0:                  # H is not positive definite along d: stop
            return p if p.any() else b
        alpha = (r @ r) / curvature
        p = p + alpha * d
        r_new = r - alpha * hd
        if np.linalg.norm(r_new) < 1e-10:
            break
        d = r_new + (r_new @ r_new) / (r @ r) * d
        r = r_new
    return p

x = np.zeros(50)
for step in range(200):
    g = wg.grad(rosen_nd)(x)
    if np.linalg.norm(g) < 1e-8:
        break
    p = conjugate_gradient(lambda d: wg.hvp(rosen_nd, x, d), -g)
    t = 1.0
    while rosen_nd(x + t * p) > rosen_nd(x):   # halve the step until f decreases
        t /= 2
    x = x + t * p
print(step, np.allclose(x, 1.0), f"{rosen_nd(x):.2e}")"""),
    ("md", """3. At the minimum $(1, 1)$ the Hessian of `rosen` is positive definite. Check it
   with `np.linalg.eigvalsh`, and compute the ratio of its eigenvalues (the condition
   number, which is why gradient descent is slow here)."""),
    ("solution", """eig = np.linalg.eigvalsh(wg.hessian(rosen)(np.array([1.0, 1.0])))
print(eig, eig[-1] / eig[0])"""),
    ("md", """## What to read next

* `10_static_vs_dynamic_graphs.ipynb`: the Hessian as a traced graph, and how much of
  it the optimisation passes remove;
* `11_training_a_small_model.ipynb`: first-order training of a small network;
* `08_controlling_gradient_flow.ipynb`: custom rules, which nested transforms respect."""),
]


if __name__ == "__main__":
    write("09_higher_order", CELLS)
