"""Writes notebooks/04_reverse_mode.ipynb (without outputs).

scripts/execute_notebooks.py runs it.
"""

from __future__ import annotations

from build import write

CELLS: list[tuple[str, str]] = [
    ("md", r"""# 04 · Reverse mode: the Wengert list and the adjoint sweep

Every gradient so far (`backward()`, `tape.gradient`, `wg.grad`) came from the same
algorithm, **reverse-mode automatic differentiation**. This notebook takes it apart:

1. the **Wengert list**: the program as a straight line of primitive operations;
2. the **adjoint sweep** written by hand in a dozen lines of Python, then the same sweep
   in wengert, in a table and in the explorer;
3. **fan-out**: why adjoints are *summed* (and the wrong answer you get if they are not);
4. what the tape keeps, and why it is freed after one backward pass;
5. the **cost** of a gradient against the cost of the function itself, measured.

It builds on `02_computational_graphs.ipynb` (nodes, edges, topological order) and
`03_forward_mode.ipynb` (the other mode); it is self-contained."""),
    ("code", r"""import math
import time

import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert"""),
    ("md", r"""## 1. The Wengert list

The running example is the one of Baydin et al.'s survey of automatic differentiation
in machine learning:

$$f(x_1, x_2) = \ln x_1 + x_1 x_2 - \sin x_2 \quad \text{at } (x_1, x_2) = (2, 5).$$

Run by a computer, it is a sequence of primitive operations, each writing a fresh
intermediate variable: $v_1 = \ln x_1$, $v_2 = x_1 x_2$, $v_3 = v_1 + v_2$,
$v_4 = \sin x_2$, $v_5 = v_3 - v_4$. That straight-line list is the **Wengert list**
(after R. E. Wengert, 1964), also called the *tape* or the *evaluation trace*.
wengert records exactly this list while ordinary NumPy code runs; `wg.tape_of(y)`
reads it back:"""),
    ("code", r"""x1 = wg.tensor(2.0, requires_grad=True)
x2 = wg.tensor(5.0, requires_grad=True)
y = np.log(x1) + x1 * x2 - np.sin(x2)

tape = wg.tape_of(y)
for eq in tape.equations:
    print(f"{str(eq):36} value {eq.value:8.4f}    rule: {eq.op.formula}")"""),
    ("md", r"""The leaves `x0`, `x1` are the inputs $x_1$, $x_2$; `t0` … `t4` are $v_1$ … $v_5$.
Each line also carries its op's derivative rule (the *formula* column), which is all the
sweep needs.

## 2. The adjoint sweep, by hand

Reverse mode attaches to every variable $v$ an **adjoint** $\bar v = \partial y/\partial v$.
The output's adjoint is $\bar y = 1$. Every other adjoint collects, from each equation
$c$ that consumes $v$, that equation's adjoint times its local derivative:

$$\bar v \;=\; \sum_{c \text{ consumes } v} \bar c\,\frac{\partial c}{\partial v}.$$

Walking the list **backwards** guarantees that every consumer's $\bar c$ is final before
$\bar v$ is needed. Here is the whole algorithm on a hand-made tape: each primitive
computes its value and records its node, with its local derivatives, in the order it
ran (a Python list, appended to as the code runs):"""),
    ("code", r"""class Node:
    def __init__(self, name, value, inputs=(), partials=()):
        self.name, self.value = name, value
        self.inputs, self.partials = inputs, partials   # ∂(this node)/∂(each input)
        self.adjoint = 0.0

WENGERT_LIST = []

def record(name, value, inputs=(), partials=()):
    node = Node(name, value, inputs, partials)
    WENGERT_LIST.append(node)
    return node

def leaf(name, value):
    return record(name, value)

def log(a):
    return record(f"log({a.name})", math.log(a.value), (a,), (1.0 / a.value,))

def sin(a):
    return record(f"sin({a.name})", math.sin(a.value), (a,), (math.cos(a.value),))

def mul(a, b):
    return record(f"{a.name}*{b.name}", a.value * b.value, (a, b), (b.value, a.value))

def add(a, b):
    return record(f"{a.name}+{b.name}", a.value + b.value, (a, b), (1.0, 1.0))

def sub(a, b):
    return record(f"{a.name}-{b.name}", a.value - b.value, (a, b), (1.0, -1.0))"""),
    ("md", r"""The sweep is the seed document's conceptual `backward_pass`, made runnable: seed the
output with 1, then visit the nodes in reverse order and push each node's adjoint to its
inputs, **adding** it to what they already have:"""),
    ("code", r"""def backward_pass(order, output):
    for node in order:
        node.adjoint = 0.0
    output.adjoint = 1.0
    for node in reversed(order):
        for input_node, local_derivative in zip(node.inputs, node.partials):
            input_node.adjoint += node.adjoint * local_derivative

WENGERT_LIST.clear()
a, b = leaf("x1", 2.0), leaf("x2", 5.0)
out = sub(add(log(a), mul(a, b)), sin(b))
backward_pass(WENGERT_LIST, out)

for node in WENGERT_LIST:
    print(f"{node.name:>14}  value {node.value:8.4f}   adjoint {node.adjoint:8.4f}")
print("by hand: ∂f/∂x1 = 1/x1 + x2 =", 1 / 2 + 5, "  ∂f/∂x2 = x1 - cos x2 =", 2 - math.cos(5))"""),
    ("md", r"""wengert's sweep does the same thing on the recorded tape. `%%autodiff --show adjoint`
prints it as a table, read from the top: the seed $\bar y = 1$ enters the last equation,
and each step applies that op's vector-Jacobian product (VJP) rule and adds the result to
its inputs' adjoints."""),
    ("code", r"""%%autodiff x1 x2 --show adjoint
x1, x2 = 2.0, 5.0
y = np.log(x1) + x1 * x2 - np.sin(x2)"""),
    ("md", r"""The same sweep can be watched from code: `wg.observe_sweep` reports every step of a
reverse sweep (the node, the adjoint it received, what each input got). The numbers are
the ones of our hand-written `backward_pass`:"""),
    ("code", r"""class PrintSteps(wg.SweepObserver):
    def step(self, node, g, sent):
        pushed = ", ".join(f"input {i} += {ct:.4f}" for i, _, ct in sent)
        print(f"{node.op.name:>9} received {g:7.4f}: {pushed}")

x1 = wg.tensor(2.0, requires_grad=True)
x2 = wg.tensor(5.0, requires_grad=True)
y = np.log(x1) + x1 * x2 - np.sin(x2)
with wg.observe_sweep(PrintSteps()):
    y.backward()
print("x1.grad =", x1.grad, "  x2.grad =", x2.grad)"""),
    ("md", r"""## 3. The sweep in the explorer

The explorer steps through the same computation: first the forward trace (one step per
equation, values appearing), then the reverse sweep (one step per equation, adjoints
appearing). Use the buttons, the slider or the arrow keys; the panel on the right shows
the VJP rule with the step's names and numbers, and the running adjoint sums."""),
    ("code", r"""%%autodiff x1 x2 --as baydin
x1, x2 = 2.0, 5.0
y = np.log(x1) + x1 * x2 - np.sin(x2);"""),
    ("code", r"""view = baydin.explore()
view.step = 8   # jump into the reverse sweep
view"""),
    ("code", r"""view.label"""),
    ("md", r"""## 4. Fan-out: adjoints add up

$x_1$ is used twice (by `log` and by `*`), so it receives two contributions,
$\bar v_1 \cdot \frac{1}{x_1} = 0.5$ and $\bar v_2 \cdot x_2 = 5$, and its adjoint is their
**sum**, 5.5. This is the multivariable chain rule, and it is why the sweep writes
`+=`. Replace it with `=` and the last contribution silently wins:"""),
    ("code", r"""def wrong_backward_pass(order, output):
    for node in order:
        node.adjoint = 0.0
    output.adjoint = 1.0
    for node in reversed(order):
        for input_node, local_derivative in zip(node.inputs, node.partials):
            input_node.adjoint = node.adjoint * local_derivative   # = instead of +=

wrong_backward_pass(WENGERT_LIST, out)
print("with = : ∂f/∂x1 =", a.adjoint, " ∂f/∂x2 =", round(b.adjoint, 4))
backward_pass(WENGERT_LIST, out)
print("with +=: ∂f/∂x1 =", a.adjoint, " ∂f/∂x2 =", round(b.adjoint, 4))"""),
    ("md", r"""The smallest fan-out is a variable used twice in one expression. For
$z = x \cdot x + \sin x$ the table shows the running sum of the three contributions to
$\bar x$: $x$ from each side of the product and $\cos x$ from the sine,
$\bar x = 2x + \cos x$."""),
    ("code", r"""%%autodiff x --show adjoint
x = 3.0
z = x * x + np.sin(x)"""),
    ("md", r"""## 5. What the tape keeps, and why it is used once

A rule needs numbers from the forward pass: the rule of $v_2 = x_1 x_2$ needs $x_1$ and
$x_2$, the rule of $\sin$ needs its input. So reverse mode must **keep** those values from
the forward pass until the sweep has used them; that is why training memory grows with
the depth of the network, and why *checkpointing* (`wg.checkpoint`, notebook
`08_controlling_gradient_flow.ipynb`) trades recomputation for memory.

One of the source documents says that reverse mode first runs a complete forward pass
"storing values at each node". Only what some rule reads has to be kept, though, and
wengert (like PyTorch's saved tensors) keeps no more. Each equation on wengert's tape lists the
input values it saved; on a layer with 100,000 rows:"""),
    ("code", r"""X = np.random.default_rng(0).normal(size=(100_000, 4))
W = wg.tensor(np.ones((4, 2)), requires_grad=True)
b = wg.tensor(np.zeros(2), requires_grad=True)
out = np.sum(np.tanh(X @ W + b))
for eq in wg.tape_of(out).equations:
    kept = ["not kept" if v is None else f"kept {np.shape(v)}" for v in eq.saved_inputs]
    print(f"{str(eq):54} {', '.join(kept)}")"""),
    ("md", r"""`matmul` keeps $X$, because $\bar W = X^\top \bar t_0$ reads it (and the
small $W$). `add` does not keep the big `t0`: its rule only passes the adjoint through (the
small `b` is kept, since keeping a small value costs less than tracking it). `tanh`
reads its *output* ($1 - \tanh^2$), not its input, and `sum` needs only a shape. So the
100,000 × 2 intermediates `t0` and `t1` are freed as soon as the forward pass is done
with them."""),
    ("md", r"""As in PyTorch, `backward()` frees those saved values as soon as the sweep has used
them, so a second sweep over the same graph has nothing to read, and refuses. Ask for
`retain_graph=True` when you need to sweep twice (and note that the gradients
accumulate):"""),
    ("code", r"""x1 = wg.tensor(2.0, requires_grad=True)
x2 = wg.tensor(5.0, requires_grad=True)
y = np.log(x1) + x1 * x2 - np.sin(x2)
y.backward()
try:
    y.backward()
except RuntimeError as err:
    print(type(err).__name__ + ":", str(err)[:120], "...")

x1.grad = None
y = np.log(x1) + x1 * x2 - np.sin(x2)
y.backward(retain_graph=True)
y.backward()
print("after two sweeps: x1.grad =", x1.grad)"""),
    ("md", r"""## 6. The cost of a gradient

The sweep visits each equation once, and each visit does work comparable to the
equation's own forward computation (a VJP of a multiply is two multiplies, of a `sin` one
`cos` and one multiply). So the whole gradient, **however many inputs there are**, costs
a small constant multiple of one evaluation of the function. That is the claim that makes
deep learning possible: a model with $n$ parameters and one scalar loss gets all
$n$ partial derivatives for the price of a few forward passes.

First what can be counted exactly: the number of equations recorded, and the number of
steps of the sweep, for a function of $n$ inputs. The sweep does one step per equation,
whatever $n$:"""),
    ("code", r"""def loss(theta):
    h = np.tanh(theta)
    return np.sum(h * h) + 0.5 * np.sum(theta ** 2)

class CountSteps(wg.SweepObserver):
    def __init__(self):
        self.steps = 0
    def step(self, node, g, sent):
        self.steps += 1

print(f"{'n':>8} {'equations':>10} {'sweep steps':>12} {'gradient entries':>17}")
for n in [1, 10, 1_000, 100_000]:
    theta = wg.tensor(np.linspace(-1.0, 1.0, n), requires_grad=True)
    value = loss(theta)
    counter = CountSteps()
    with wg.observe_sweep(counter):
        value.backward()
    print(f"{n:>8} {len(wg.tape_of(value).equations):>10} {counter.steps:>12} "
          f"{theta.grad.size:>17}")"""),
    ("md", r"""Forward mode (notebook `03_forward_mode.ipynb`) pushes one *direction* through the
function per pass, so a full gradient takes $n$ passes (or one pass carrying $n$
tangents, which is the same arithmetic). For $f:\mathbb{R}^n \to \mathbb{R}^m$, reverse
mode wins when $m \ll n$ (training: $m = 1$), forward mode when $n \ll m$; notebook
`05_vjps_without_jacobians.ipynb` measures both on Jacobians of every shape.

Now the time (measured on this machine when the notebook ran, so this cell's output is
not compared by the notebook tests). For each $n$: one plain NumPy evaluation of `loss`,
one reverse-mode gradient (`wg.value_and_grad`, which also evaluates the function), and a
forward-mode gradient (`wg.jacfwd`)."""),
    ("varies", r"""def best_time(fn, repeat=5):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best

rows = []
print(f"{'n':>8} {'function':>10} {'reverse':>10} {'forward':>10} {'reverse/function':>17}")
for n in [10, 100, 1_000, 10_000, 100_000, 1_000_000]:
    theta = np.random.default_rng(0).normal(size=n)
    t_f = best_time(lambda: loss(theta))
    t_r = best_time(lambda: wg.value_and_grad(loss)(theta))
    t_fw = best_time(lambda: wg.jacfwd(loss)(theta), repeat=1) if n <= 1_000 else math.nan
    rows.append((n, t_f, t_r, t_fw))
    forward = f"{t_fw * 1e3:8.3f}ms" if n <= 1_000 else f"{'—':>10}"
    print(f"{n:>8} {t_f * 1e3:>8.3f}ms {t_r * 1e3:>8.3f}ms {forward} {t_r / t_f:>17.1f}")"""),
    ("md", r"""Read the last column from the bottom: for large $n$, where the arithmetic dominates,
the gradient costs a small multiple of the function (the function here makes a few
elementwise passes and two sums over $n$ numbers;
its gradient adds about as many again, plus the bookkeeping). For small $n$ the ratio is
larger because recording each operation costs a
few microseconds whatever the size of its arrays, a fixed overhead that plain NumPy does
not pay. The forward-mode gradient grows like $n$ times the function: it was stopped at
$n = 10^3$ (at $n$ inputs it carries an $n \times n$ block of tangents)."""),
    ("varies", r"""import matplotlib.pyplot as plt

ns = np.array([r[0] for r in rows])
fig, ax = plt.subplots(figsize=(9, 3.5), layout="constrained")
ax.loglog(ns, [r[1] for r in rows], "o-", label="function (NumPy)")
ax.loglog(ns, [r[2] for r in rows], "s-", label="value and gradient, reverse mode")
ax.loglog(ns, [r[3] for r in rows], "^-", label="gradient, forward mode (jacfwd)")
ax.set_xlabel("number of inputs n")
ax.set_ylabel("seconds")
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
plt.close(fig)
fig"""),
    ("md", r"""## Exercises

1. Add a `div(a, b)` primitive to the hand-made tape (its local derivatives are $1/b$
   and $-a/b^2$) and check your `backward_pass` against `wg.grad` on
   $g(x_1, x_2) = x_1 / x_2 + x_1 x_2$ at $(3, 2)$.
2. Without running anything: in $f(x_1, x_2)$ above, how many contributions does
   $\bar x_2$ collect, and from which equations? Check with the `%%autodiff` table."""),
    ("solution", r"""def div(a, b):
    return record(f"{a.name}/{b.name}", a.value / b.value, (a, b),
                  (1.0 / b.value, -a.value / b.value ** 2))

WENGERT_LIST.clear()
p, q = leaf("x1", 3.0), leaf("x2", 2.0)
g_out = add(div(p, q), mul(p, q))
backward_pass(WENGERT_LIST, g_out)
print("hand-made:", p.adjoint, q.adjoint)
print("wg.grad:  ", wg.grad(lambda u, v: u / v + u * v, argnums=(0, 1))(3.0, 2.0))"""),
    ("solution", r"""# Two: x2 feeds the product x1*x2 (which sends x1 = 2) and the sine
# (which sends -cos(x2) = -0.2837); its adjoint is their sum, 1.7163.
print(2.0 - np.cos(5.0))"""),
    ("md", r"""## What next

- `05_vjps_without_jacobians.ipynb`: each step of the sweep is a vector-Jacobian
  product; the Jacobian itself is never built.
- `03_forward_mode.ipynb`: the other mode, which pushes derivatives forward with the
  values.
- `02_computational_graphs.ipynb`: the graph this sweep walks backwards."""),
]

if __name__ == "__main__":
    write("04_reverse_mode", CELLS)
