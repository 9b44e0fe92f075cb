"""Writes notebooks/11_training_a_small_model.ipynb (without outputs).

Run it, then ``scripts/execute_notebooks.py notebooks/11_training_a_small_model.ipynb``.
The notebook trains a two-layer MLP on a two-moons set made with NumPy: the model as
a function of a parameter dict, its gradient checked, full-batch gradient descent with
``wg.value_and_grad`` (compiled), the same step in the PyTorch dialect, the loss curve
and the decision boundary.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS: list[tuple[str, str]] = [
    ("md", """# 11 · Training a small model

**What you will learn.** Everything the previous notebooks built, used for what it is
for: fitting a model. On a two-dimensional data set that no straight line separates
("two moons", made here with NumPy), we

1. write a two-layer neural network as a plain NumPy function of a dictionary of
   parameters;
2. check its gradient against finite differences;
3. train it with full-batch gradient descent, `wg.value_and_grad` over the dictionary
   (a *pytree*), compiled with `wg.compile`;
4. write the same training step in the PyTorch dialect, with tensors and `backward()`;
5. plot the loss curve and the decision boundary the network learned.

No deep-learning library is involved: the model is NumPy, the gradient is wengert's."""),
    ("code", """import matplotlib.pyplot as plt
import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
rng = np.random.default_rng(0)"""),
    ("md", """## 1. The data: two interleaved half-moons

Each point is on one of two half circles, the upper one centred at $(0, 0)$, the lower
one at $(1, 0.5)$, with Gaussian noise. The label says which moon it came from."""),
    ("code", """def two_moons(n, noise, rng):
    t = rng.uniform(0.0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label == 0, np.cos(t), 1.0 - np.cos(t))
    y = np.where(label == 0, np.sin(t), 0.5 - np.sin(t))
    points = np.stack([x, y], axis=1) + noise * rng.normal(size=(n, 2))
    return points, label.astype(float)

X, y = two_moons(200, 0.15, rng)
print(X.shape, y.shape, y[:10])

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=12, edgecolors="k", linewidths=0.3)
ax.set_title("two moons: 200 points, two classes")
ax.set_aspect("equal")
plt.show()"""),
    ("md", """## 2. The model

A hidden layer of 16 $\\tanh$ units, then one output, the *logit* $z$; the
probability of class 1 is $\\sigma(z) = 1/(1 + e^{-z})$:

$$h = \\tanh(X W_1 + b_1), \\qquad z = h W_2 + b_2 .$$

The loss is the mean binary cross-entropy,
$-\\frac1n\\sum_i \\big[y_i \\log \\sigma(z_i) + (1 - y_i)\\log(1 - \\sigma(z_i))\\big]$, which
simplifies to $\\frac1n \\sum_i \\big[\\log(1 + e^{z_i}) - y_i z_i\\big]$. Written with
`np.logaddexp(0, z)` $= \\log(1 + e^z)$ it never overflows (notebook 12, section 9).

The parameters live in a dictionary; `wg.grad` returns a dictionary of the same shape.
The output weights are scaled by $1/\\sqrt{16}$ so that the first logits are small and the
first predictions close to $0.5$."""),
    ("code", """def init(rng, hidden=16):
    return {"W1": rng.normal(size=(2, hidden)), "b1": np.zeros(hidden),
            "W2": rng.normal(size=(hidden, 1)) / np.sqrt(hidden), "b2": np.zeros(1)}


def logits(params, X):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return (h @ params["W2"] + params["b2"])[:, 0]


def loss(params, X, y):
    z = logits(params, X)
    return np.mean(np.logaddexp(0.0, z) - y * z)


def accuracy(params, X, y):
    return np.mean((logits(params, X) > 0) == (y == 1))


params = init(rng)
print(f"loss {loss(params, X, y):.4f}, accuracy {accuracy(params, X, y):.3f}")
{name: value.shape for name, value in params.items()}"""),
    ("md", """## 3. Check the gradient first

Before trusting a gradient with a training run, compare it with finite differences.
`wg.check_grads` perturbs every parameter and raises if reverse mode disagrees (it
returns `True` when all agree). Here it runs on a small slice of the data to be quick:"""),
    ("code", """wg.check_grads(loss, (params, X[:20], y[:20]), order=1, modes=("rev",))"""),
    ("code", """value, grads = wg.value_and_grad(loss)(params, X, y)
print(f"loss {value:.4f}")
for name, g in grads.items():
    print(name, g.shape, f"|g| = {np.linalg.norm(g):.4f}")"""),
    ("md", """## 4. Training: gradient descent

Each step moves every parameter a little against its gradient,
$\\theta \\leftarrow \\theta - \\eta\\,\\nabla_\\theta L$, with the learning rate
$\\eta = 0.5$. `wg.compile` traces `value_and_grad(loss)` once for these shapes and then
runs generated code, so each of the 2000 steps skips recording a tape. The loop
itself is four lines:"""),
    ("code", """step_fn = wg.compile(wg.value_and_grad(loss))
learning_rate = 0.5
params = init(np.random.default_rng(1))
history = []
for step in range(2000):
    value, grads = step_fn(params, X, y)
    params = {name: params[name] - learning_rate * grads[name] for name in params}
    history.append(value)

print(f"loss {history[0]:.4f} -> {history[-1]:.4f}, "
      f"accuracy {accuracy(params, X, y):.3f}")"""),
    ("md", """The compiled step and the eager one compute the same numbers; the compiled one is
faster because it does not record a tape on every step. (Timings depend on the machine,
so this cell's output is not compared by the notebook tests.)"""),
    ("varies", """import timeit

eager_fn = wg.value_and_grad(loss)
v1, g1 = eager_fn(params, X, y)
v2, g2 = step_fn(params, X, y)
print("same values:", np.isclose(v1, v2), all(np.allclose(g1[k], g2[k]) for k in g1))
t_eager = min(timeit.repeat(lambda: eager_fn(params, X, y), number=20, repeat=3)) / 20
t_compiled = min(timeit.repeat(lambda: step_fn(params, X, y), number=20, repeat=3)) / 20
print(f"eager {t_eager * 1e3:.2f} ms per step, compiled {t_compiled * 1e3:.2f} ms per step")"""),
    ("md", """## 5. The loss curve

On a log scale: a fast drop while the network finds the rough shape, then a slow
refinement of the boundary near the points that are hardest to classify."""),
    ("code", """fig, ax = plt.subplots(figsize=(5.5, 3))
ax.semilogy(history)
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy loss")
ax.set_title("full-batch gradient descent, learning rate 0.5")
ax.grid(True, which="both", alpha=0.3)
plt.show()"""),
    ("md", """## 6. The decision boundary

The network's probability $\\sigma(z)$ evaluated on a grid over the plane: the boundary
is the curve where it crosses $0.5$ ($z = 0$). A linear model could only draw a straight
line; the hidden layer bends it between the moons."""),
    ("code", """def plot_boundary(params, X, y, title):
    gx, gy = np.meshgrid(np.linspace(-1.6, 2.6, 200), np.linspace(-1.1, 1.6, 150))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    prob = 1.0 / (1.0 + np.exp(-logits(params, grid))).reshape(gx.shape)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.contourf(gx, gy, prob, levels=np.linspace(0, 1, 11), cmap="coolwarm", alpha=0.6)
    ax.contour(gx, gy, prob, levels=[0.5], colors="k", linewidths=1.5)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=12, edgecolors="k",
               linewidths=0.3)
    ax.set_title(title)
    ax.set_aspect("equal")
    plt.show()

plot_boundary(params, X, y, f"after 2000 steps: accuracy {accuracy(params, X, y):.3f}")"""),
    ("md", """How well does it do on points it has not seen? A fresh sample from the same
distribution (a *test set*) answers:"""),
    ("code", """X_test, y_test = two_moons(500, 0.15, np.random.default_rng(2))
print(f"test accuracy {accuracy(params, X_test, y_test):.3f}")"""),
    ("md", """## 7. The same step in the PyTorch dialect

The functional style above never mutates anything. The object style of PyTorch and
Keras keeps the parameters as leaf tensors and updates them in place; notebook 12's
rules apply: clear `.grad` each step, and update under `wg.no_grad()` so the leaves stay
leaves. Both styles compute the same gradient:"""),
    ("code", """start = init(np.random.default_rng(1))
leaves = {name: wg.tensor(value, requires_grad=True) for name, value in start.items()}

for step in range(3):
    for leaf in leaves.values():
        leaf.grad = None
    batch_loss = loss(leaves, X, y)           # the same function, on tensors
    batch_loss.backward()
    with wg.no_grad():
        for leaf in leaves.values():
            leaf -= learning_rate * leaf.grad
    print(step, f"{batch_loss.item():.6f}")

functional = init(np.random.default_rng(1))
for step in range(3):
    value, grads = step_fn(functional, X, y)
    functional = {k: functional[k] - learning_rate * grads[k] for k in functional}
    print(step, f"{value:.6f}")
print(all(np.allclose(leaves[k].data, functional[k]) for k in functional))"""),
    ("md", """## 8. Which inputs matter: the gradient with respect to the data

The same machinery differentiates with respect to anything, the *inputs* included.
$\\partial z/\\partial x$ at a point says which way to move the point to change the
network's mind fastest: the arrows point across the boundary, toward class 1. One
reverse sweep over `sum(z)` gives every point's gradient at once, since each logit
depends on its own point only."""),
    ("code", """some = X[::10]
towards_class_1 = wg.grad(lambda points: np.sum(logits(params, points)))(some)

fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=8, alpha=0.4)
ax.quiver(some[:, 0], some[:, 1], towards_class_1[:, 0], towards_class_1[:, 1],
          angles="xy", scale_units="xy", scale=80, width=0.004)
ax.set_title("∂z/∂x: the direction that raises the class-1 logit")
ax.set_aspect("equal")
plt.show()"""),
    ("md", """## Exercises

1. Train a network with only **2** hidden units (`init(rng, hidden=2)`) for 2000
   steps. What accuracy does it reach, and what does its boundary look like?"""),
    ("solution", """small = init(np.random.default_rng(1), hidden=2)
small_step = wg.compile(wg.value_and_grad(loss))
for step in range(2000):
    value, grads = small_step(small, X, y)
    small = {k: small[k] - learning_rate * grads[k] for k in small}
print(f"loss {value:.4f}, accuracy {accuracy(small, X, y):.3f}")
plot_boundary(small, X, y, "2 hidden units")"""),
    ("md", """2. Add *weight decay*: the loss plus
   $\\lambda\\,(\\lVert W_1\\rVert^2 + \\lVert W_2\\rVert^2)$ with $\\lambda = 10^{-3}$.
   Only the loss changes; the training loop does not.
   Compare the size of the weights after training with and without it."""),
    ("solution", """def decayed_loss(params, X, y, lam=1e-3):
    return loss(params, X, y) + lam * (np.sum(params["W1"] ** 2) + np.sum(params["W2"] ** 2))

decayed = init(np.random.default_rng(1))
decayed_step = wg.compile(wg.value_and_grad(decayed_loss))
for step in range(2000):
    value, grads = decayed_step(decayed, X, y)
    decayed = {k: decayed[k] - learning_rate * grads[k] for k in decayed}
for name, trained in (("plain", params), ("decayed", decayed)):
    size = np.sqrt(np.sum(trained["W1"] ** 2) + np.sum(trained["W2"] ** 2))
    print(f"{name:8s} |W| = {size:.2f}, accuracy {accuracy(trained, X, y):.3f}")"""),
    ("md", """3. Replace gradient descent by *momentum*: keep a velocity
   $v \\leftarrow 0.9\\,v + \\nabla L$ per parameter and step $\\theta \\leftarrow \\theta -
   \\eta\\,v$ with $\\eta = 0.1$. After how many steps does the loss first drop below
   0.1, against plain gradient descent with $\\eta = 0.5$?"""),
    ("solution", """def steps_to(target, momentum, eta, limit=3000):
    p = init(np.random.default_rng(1))
    velocity = {k: np.zeros_like(v) for k, v in p.items()}
    for step in range(limit):
        value, grads = step_fn(p, X, y)
        if value < target:
            return step
        velocity = {k: momentum * velocity[k] + grads[k] for k in p}
        p = {k: p[k] - eta * velocity[k] for k in p}
    return None

print("gradient descent:", steps_to(0.1, 0.0, 0.5))
print("momentum:        ", steps_to(0.1, 0.9, 0.1))"""),
    ("md", """## What to read next

* `12_when_gradients_go_wrong.ipynb`: the bugs a training loop meets, reproduced and
  fixed;
* `10_static_vs_dynamic_graphs.ipynb`: what `wg.compile` did to the step above;
* `09_higher_order.ipynb`: second derivatives, and Newton's method, which takes far
  fewer steps than gradient descent on small problems."""),
]


if __name__ == "__main__":
    write("11_training_a_small_model", CELLS)
