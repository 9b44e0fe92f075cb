"""Write ``notebooks/08_controlling_gradient_flow.ipynb``: cutting the graph (no_grad,
detach, stop_gradient), replacing a rule (custom_jvp, custom_vjp), checkpointing, and the
NaN that ``where`` lets through (detect_anomaly, the explainer, the double where)."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS = [
    ("md", r"""
# 08 · Controlling gradient flow

Most of the time the gradient should flow through every operation you wrote. Sometimes it
should not: a value used as a fixed target, a logged metric, a quantity you want to treat
as a constant, a function whose automatic derivative is numerically poor, or a model too
big to keep every activation for the backward pass. This notebook covers the tools:

1. **cutting** the graph: `wg.no_grad()`, `.detach()`, `wg.stop_gradient`;
2. **replacing** a derivative rule: `wg.custom_jvp`, `wg.custom_vjp`;
3. **recomputing** instead of storing: `wg.checkpoint`;
4. a gradient that flows where you did not want it: the NaN that comes through
   `np.where`, found with `wg.detect_anomaly()` and `wg.explain`, and the double-`where`
   fix.
"""),
    ("code", r"""
import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert
"""),
    ("md", r"""
## 1. Cutting the graph

### `no_grad`: nothing inside is recorded

One of the documents this course grew from shows PyTorch's version:

```python
# PyTorch gradient flow control
x = torch.tensor(2.0, requires_grad=True)
with torch.no_grad():
    y = x * 3  # No gradient tracked
z = y + x      # Gradient tracked only for x in this operation
```

The same code with wengert, and the gradient it implies:
"""),
    ("code", r"""
x = wg.tensor(2.0, requires_grad=True)
with wg.no_grad():
    y = x * 3  # No gradient tracked
z = y + x      # Gradient tracked only for x in this operation
z.backward()
print("y.requires_grad:", y.requires_grad)
print("dz/dx:", x.grad, "  (1, not 4: the path through y was never recorded)")
"""),
    ("md", r"""
The comments are right (PyTorch 2.13 gives `x.grad = 1.` too): `z = y + x` is recorded,
but `y` is a constant to it. The drawing shows `y` as a grey dashed constant feeding the
addition, and only one edge from the leaf:
"""),
    ("code", r"""
wg.draw(z, names={"x0": "x"})
"""),
    ("md", r"""
### `detach`: one value, cut

`x.detach()` is a new leaf with `x`'s value that does not require grad, while the rest of
the computation keeps recording. In $z = \mathrm{sg}(x)\cdot x$ (sg for "stop gradient")
the first factor is a constant, so $dz/dx = x$, not $2x$:
"""),
    ("code", r"""
x = wg.tensor(2.0, requires_grad=True)
z = x.detach() * x
z.backward()
print("d(sg(x) x)/dx:", x.grad, "   d(x x)/dx would be", 2 * 2.0)
"""),
    ("md", r"""
### `stop_gradient`: the same inside transforms

In the functional style (`wg.grad`, JAX's dialect) there is no tensor to detach, so the
cut is a function: `wg.stop_gradient(v)` is `v` in value and a constant to every
derivative. The classic use is the **straight-through estimator**: round in the forward
pass, but let the gradient through as if the rounding were the identity:

$$\mathrm{ste}(x) = x + \mathrm{sg}(\mathrm{round}(x) - x)$$
"""),
    ("code", r"""
def ste_round(x):
    return x + wg.stop_gradient(np.round(x) - x)

xs = np.array([0.2, 0.7, 1.4])
print("value:            ", ste_round(xs))
print("grad of round:    ", wg.grad(lambda x: np.sum(np.round(x) * x))(xs))
print("grad of ste_round:", wg.grad(lambda x: np.sum(ste_round(x) * x))(xs))
"""),
    ("md", r"""
`round` has zero derivative almost everywhere, so $\frac{d}{dx}\sum \mathrm{round}(x)\,x$
is just $\mathrm{round}(x)$; through the estimator it is $\mathrm{round}(x) + x$, as if
the first factor were $x$.

### When a cut was not meant

A cut you did not intend shows up as a gradient of `None` (or zero). `wg.explain` finds
where the path was cut and says how to restore it:
"""),
    ("code", r"""
p = wg.tensor(2.0, requires_grad=True)
with wg.no_grad():
    q = p * 3.0
out = q + 1.0
print(wg.explain(out, p))
"""),
    ("md", r"""
## 2. Replacing a rule

### `custom_jvp`: a better derivative for a numerically poor function

$\mathrm{softplus}(x) = \log(1 + e^x)$ overflows for large $x$: $e^{1000}$ is `inf`,
and so the derivative computed by the chain rule, $\frac{1}{1 + e^x}\cdot e^x$, is
$0 \cdot \infty$ = `nan`, although the true
derivative, $\sigma(x) = 1/(1 + e^{-x})$, is 1. A custom forward-mode rule states the
derivative directly (wengert derives the reverse rule from it). It fixes the derivative
only: the value at 1000 still overflows to `inf` (`np.logaddexp(0.0, x)` computes it
stably).
"""),
    ("code", r"""
def softplus(x):
    return np.log1p(np.exp(x))

@wg.custom_jvp
def softplus_stable(x):
    return np.log1p(np.exp(x))

@softplus_stable.defjvp
def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus_stable(x), t / (1.0 + np.exp(-x))

with np.errstate(over="ignore", invalid="ignore"):
    print("chain rule:  ", wg.grad(softplus)(1000.0))
    print("custom rule: ", wg.grad(softplus_stable)(1000.0))
print("small x agree:", wg.grad(softplus)(0.3), wg.grad(softplus_stable)(0.3))
"""),
    ("md", r"""
### `custom_vjp`: change what flows backwards

A reverse rule takes the residuals saved by the forward function and the incoming
cotangent, and returns one cotangent per input. Here: the identity in the forward pass,
but the gradient **clipped** to $[-1, 1]$ on its way back (a common trick against
exploding gradients in one part of a model):
"""),
    ("code", r"""
@wg.custom_vjp
def clip_gradient(x):
    return x

def clip_fwd(x):
    return x, None                      # value, residuals (none needed)

def clip_bwd(residuals, g):
    return (np.clip(g, -1.0, 1.0),)     # one cotangent per input

clip_gradient.defvjp(clip_fwd, clip_bwd)

f = lambda x: np.sum(10.0 * clip_gradient(x) ** 2)
print("value:", f(np.array([0.01, 0.5])))
print("grad: ", wg.grad(f)(np.array([0.01, 0.5])), "  (unclipped: 20 x = [0.2, 10])")
"""),
    ("md", r"""
The custom function appears on the tape under its own name, one node whose rule is
yours:
"""),
    ("code", r"""
xt = wg.tensor([0.01, 0.5], requires_grad=True)
print(wg.tape_of(np.sum(10.0 * clip_gradient(xt) ** 2)))
"""),
    ("md", r"""
## 3. Checkpointing: recompute instead of store

The backward rules need forward values (the rule of `tanh` reads its output, the rule of
`x @ W` reads `x`), so a tape keeps them alive until the backward pass. As one of the
course's documents puts it, gradient checkpointing "discard[s] some activations and
recompute[s] them during the backward pass, trading compute for memory".

`wg.checkpoint(f)` stores only `f`'s inputs and runs `f` again when the backward pass
reaches it. A counter shows the trade: each checkpointed block runs twice, and the tape
holds one node per block instead of every operation inside it. The gradient is the same.
"""),
    ("code", r"""
calls = {"block": 0}

def block(h, W):
    calls["block"] += 1
    return np.tanh(h @ W)

rng = np.random.default_rng(0)
Ws = [rng.normal(size=(4, 4)) / 2.0 for _ in range(3)]
x0 = rng.normal(size=(2, 4))

def network(x, step):
    h = x
    for W in Ws:
        h = step(h, W)
    return np.sum(h ** 2)

for name, step in [("plain", block), ("checkpointed", wg.checkpoint(block))]:
    calls["block"] = 0
    x = wg.tensor(x0, requires_grad=True)
    loss = network(x, step)
    recorded = len(list(wg.tape_of(loss)))
    loss.backward()
    print(f"{name:13}  equations on the tape: {recorded:2d}   block calls: {calls['block']}"
          f"   grad[0]: {x.grad[0]}")
"""),
    ("md", r"""
## 4. A NaN that flows through `where`

`np.where(r > 0, np.sqrt(r), 0.0)` looks safe: the square root of 0 is never *used*. Its
value is fine; its gradient is not:
"""),
    ("code", r"""
def root_sum(r):
    return np.sum(np.where(r > 0, np.sqrt(r), 0.0))

r0 = np.array([0.0, 4.0])
print("value:", root_sum(r0))
with np.errstate(divide="ignore", invalid="ignore"):
    print("grad: ", wg.grad(root_sum)(r0))
"""),
    ("md", r"""
Why: `np.sqrt(r)` is computed for **every** entry, zeros included, and it is on the
tape. In the backward pass `where` sends the cotangent 1 to the branch it chose and 0 to
the other, so `sqrt` receives $\bar s = [0, 1]$ and applies its rule
$\bar r = \bar s / (2\sqrt r)$. At $r = 0$ that is $0 / 0$, or $0 \cdot \infty$:
`nan`, which IEEE arithmetic does not turn back into 0. PyTorch 2.13 and JAX 0.10 give the
same `[nan, 0.25]`: it is the arithmetic, not a bug of one library.

### Finding it: `wg.detect_anomaly()`

Under `wg.detect_anomaly()` the first backward rule that produces a NaN raises, naming
the operation and the line of code that created it:
"""),
    ("code", r"""
r = wg.tensor([0.0, 4.0], requires_grad=True)
try:
    with wg.detect_anomaly(), np.errstate(divide="ignore", invalid="ignore"):
        out = root_sum(r)
        out.backward()
except Exception as err:
    first, where, code = str(err).splitlines()
    print(type(err).__name__ + ":", first)
    print("  (cell)", where.split(", ", 1)[1])   # the file is the kernel's temporary one
    print(code)
"""),
    ("md", r"""
### Explaining it: `wg.explain`

`wg.explain` follows the NaN back to the operation where it started, and says why and
what to change:
"""),
    ("code", r"""
r = wg.tensor([0.0, 4.0], requires_grad=True)
with wg.source_lines():
    out = np.sum(np.where(r > 0, np.sqrt(r), 0.0))
with np.errstate(divide="ignore", invalid="ignore"):
    print(wg.explain(out, r))
"""),
    ("md", r"""
### The fix: a second `where`, inside

Make the unused branch harmless *before* `sqrt` sees it: replace the entries that the
outer `where` will discard by a safe value (1.0), so `sqrt`'s rule is finite everywhere,
and the zero cotangent times a finite number is 0.
"""),
    ("code", r"""
def root_sum_safe(r):
    positive = r > 0
    safe_r = np.where(positive, r, 1.0)        # the inner where: no sqrt(0) on the tape
    return np.sum(np.where(positive, np.sqrt(safe_r), 0.0))

print("value:", root_sum_safe(r0))
print("grad: ", wg.grad(root_sum_safe)(r0))
"""),
    ("md", r"""
The same holds for every function whose derivative blows up where you mask it out:
`log` at 0, `1/x` at 0, `arcsin` at ±1. The rule of thumb: **mask the input, not (only)
the output.**

## Exercises

1. $f(x) = x \cdot \mathrm{sg}(x^2)$. What is $f'(3)$? Check with `wg.grad` and
   `wg.stop_gradient`, then with a tensor and `.detach()`.
2. `np.sum(np.where(x > 0, np.log(x), 0.0))` at `x = [0.0, 2.0]`: predict the gradient,
   check it, and fix it with a double `where`.
3. Write a `custom_vjp` function `scale_gradient(x, c)` that is the identity forward and
   multiplies the gradient by `c` backward (a constant: return `None` for it). Check
   `wg.grad(lambda x: scale_gradient(x, 0.5) ** 2)(3.0) == 3.0`.
"""),
    ("solution", r"""
f = lambda x: x * wg.stop_gradient(x ** 2)
print("grad:", wg.grad(f)(3.0), "  (x^2 = 9: only the first factor is differentiated)")
x = wg.tensor(3.0, requires_grad=True)
(x * (x ** 2).detach()).backward()
print("detach:", x.grad)
"""),
    ("solution", r"""
g = lambda x: np.sum(np.where(x > 0, np.log(x), 0.0))
with np.errstate(divide="ignore", invalid="ignore"):
    print("naive:", wg.grad(g)(np.array([0.0, 2.0])))   # 0 * (1/0) = nan
g_safe = lambda x: np.sum(np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), 0.0))
print("safe: ", wg.grad(g_safe)(np.array([0.0, 2.0])))
"""),
    ("solution", r"""
@wg.custom_vjp
def scale_gradient(x, c):
    return x

scale_gradient.defvjp(lambda x, c: (x, c), lambda c, g: (g * c, None))
print(wg.grad(lambda x: scale_gradient(x, 0.5) ** 2)(3.0))
"""),
    ("md", r"""
## Read next

- `07_gradient_tapes.ipynb`: `stop_recording`, the tape's own way to leave code out.
- `09_higher_order.ipynb`: derivatives of derivatives, where custom rules must be
  differentiable too.
- `12_when_gradients_go_wrong.ipynb`: more ways a gradient is `None`, zero or NaN, each
  reproduced and fixed.
"""),
]

if __name__ == "__main__":
    write("08_controlling_gradient_flow", CELLS)
