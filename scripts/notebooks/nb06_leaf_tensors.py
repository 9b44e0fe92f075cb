"""Write ``notebooks/06_leaf_tensors.ipynb``: leaves, ``.grad``, ``retain_grad``, copies,
in-place updates, and the "leaf moved into the interior" question, live."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS = [
    ("md", r"""
# 06 · Leaf tensors: who gets a `.grad`, and why

A reverse-mode tape is a graph. Its **leaves** are the values nothing on the tape computed:
the ones you created. Its interior nodes are the results of operations. After
`backward()`, only leaves that *require grad* have their gradient stored in `.grad`; the
interior gradients are computed, used and thrown away.

This notebook makes that rule concrete with wengert's PyTorch-style tensors:

1. the four kinds of tensor (requires grad or not, created by you or by an operation), as
   a live table;
2. the warning you get for the `.grad` of a non-leaf, and `retain_grad()`;
3. an operation that copies makes a non-leaf: the "my parameter has no gradient" trap;
4. in-place updates of a leaf, and why an optimizer step is allowed;
5. the question "why is my leaf moved into the graph's interior?", answered on the drawn
   graph: leaves never move; *names* do.

It needs nothing but NumPy and wengert. PyTorch's behaviour is quoted where it is compared
(PyTorch 2.13, run separately: this notebook does not import it).
"""),
    ("code", r"""
import warnings

import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)


def grad_of(t):
    # Read t.grad and print any warning it raises (instead of letting Jupyter show it on
    # stderr with a file path that changes from run to run).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = t.grad
    for w in caught:
        print(f"{w.category.__name__}: {w.message}")
    return g
"""),
    ("md", r"""
## 1. Four kinds of tensor

Two questions classify every tensor:

- **requires grad**: is it a variable we differentiate with respect to, or a constant?
- **created by you** or **the result of an operation**?

A blog post on PyTorch's leaf tensors (one of the documents this course grew from) sums
the answers up in a table:

| Requires Grad | User Created | Is Leaf | Grad Populated |
|---|---|---|---|
| true | true | true | true |
| true | false | false | false |
| false | true | true | false |
| false | false | true | false |

Here is one tensor of each kind, then a backward pass through all of them, and the table
read off the tensors themselves:
"""),
    ("code", r"""
a = wg.tensor([1.0, 2.0], requires_grad=True)   # requires grad, created by you
b = a * 2.0                                      # requires grad, made by an operation
c = wg.tensor([3.0, 4.0])                        # a constant, created by you
d = c * 2.0                                      # a constant, made by an operation

loss = np.sum(b * c) + np.sum(d)
loss.backward()

print(f"{'':4}{'requires_grad':>14}{'made by an op':>15}{'is_leaf':>9}  grad")
for name, t in [("a", a), ("b", b), ("c", c), ("d", d)]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # b.grad warns: section 2
        g = t.grad
    print(f"{name:4}{t.requires_grad!s:>14}{(t.grad_fn is not None)!s:>15}"
          f"{t.is_leaf!s:>9}  {g}")
print("\nb.grad_fn:", b.grad_fn, "  loss.grad_fn:", loss.grad_fn, "  a.grad_fn:", a.grad_fn)
"""),
    ("md", r"""
The table holds, row by row. The same cell with `torch` for `wg` (PyTorch 2.13, run
outside this notebook) prints the same four rows:

```
     requires_grad  made by an op  is_leaf  grad
a             True          False     True  tensor([6., 8.])
b             True           True    False  None
c            False          False     True  None
d            False          False     True  None
```

Two things the table hides:

- **`d` is a leaf although an operation made it.** An operation only records a node when
  one of its inputs requires grad; `c * 2.0` involves no such input, so `d` has no
  `grad_fn`: to the tape it is as much a constant as `c`. The post defines "User Created"
  as "`grad_fn` is `None`", and by that definition `d` *is* user created, so its fourth
  row ("requires grad false, user created false") could never happen: every tensor that
  does not require grad has `grad_fn = None`. Read "User Created" as "not the result of an
  operation" and row four is `d`.
- **"is leaf" is about the graph, "grad populated" about the rule.** `c` and `d` are
  leaves but get no `.grad`: only a leaf that *also* requires grad does. So the one row
  with a gradient is the first: `requires_grad and is_leaf`.

`grad_fn` (the last line above) names the node that made a tensor: reading backwards
from `loss`, these are the "backward function call" nodes of the post's picture of the
graph.
"""),
    ("md", r"""
## 2. The `.grad` of a non-leaf: a warning, then `retain_grad()`

Reading `b.grad` is almost always a mistake (you meant the leaf `a`), so it warns, in the
words PyTorch uses:
"""),
    ("code", r"""
print(grad_of(b))
"""),
    ("md", r"""
Why not keep every gradient? $\partial L/\partial b$ *was* computed: the sweep needed it
to reach $a$ ($\bar a = 2\,\bar b$). But interior values are activations, recomputed on
every forward pass; storing their gradients would cost memory for numbers nobody updates.
When you do want one (to inspect it, or to debug), ask for it **before** `backward()`:
"""),
    ("code", r"""
a = wg.tensor([1.0, 2.0], requires_grad=True)
b = a * 2.0
b.retain_grad()
c = wg.tensor([3.0, 4.0])
loss = np.sum(b * c)
loss.backward()
print("dL/db =", grad_of(b), "   (= c)")
print("dL/da =", grad_of(a), "   (= 2 c)")
"""),
    ("md", r"""
## 3. An operation that copies makes a non-leaf

The post's example (its code did not survive in our copy; this is what its text
describes) creates a parameter on the CPU, moves it to the GPU with `.cuda()` and computes
the loss from the GPU copy. The copy is the result of an operation, so it is **not** a
leaf: the gradient lands on the CPU tensor, and the GPU tensor's `.grad` is `None`.

wengert has no devices, but it has the same trap with any operation that copies. A
change of dtype is the closest analogue of a change of device:
"""),
    ("code", r"""
rng = np.random.default_rng(0)
variable_tensor_f64 = wg.tensor(rng.random((2, 2)), requires_grad=True)
variable_tensor_f32 = variable_tensor_f64.astype(np.float32)   # a copy: ".cuda()"
constant_tensor_f32 = wg.tensor(rng.random((2, 2)).astype(np.float32))

loss = np.sum(variable_tensor_f32 * constant_tensor_f32)
loss.backward()

print("variable_tensor_f64.grad:\n", grad_of(variable_tensor_f64))
print("variable_tensor_f32.grad:\n", grad_of(variable_tensor_f32))
wg.draw(loss, names={"x0": "variable_tensor_f64"})
"""),
    ("md", r"""
The gradient of `np.sum(v * c)` with respect to `v` is `c` (cast back to the leaf's
dtype, float64, by `astype`'s rule): it is on `variable_tensor_f64`, the leaf. PyTorch
2.13 does the same with `variable_tensor_f64.to(torch.float32)`: the copy's `grad_fn` is
a `ToCopyBackward0`, its `.grad` is `None` with the same warning, and the float64 leaf
holds the gradient. The drawing
shows why. The blue double ring is the one leaf that requires grad, `astype` is an
ordinary interior node, and the constant is the grey dashed node (the post notes that
`torchviz` leaves constants out; `wg.draw` shows them, dashed).

The post's second claim: after an optimizer step updates the leaf, the copy is stale
until the next forward pass makes a new one. The step runs under `wg.no_grad()` (section
4 says why):
"""),
    ("code", r"""
with wg.no_grad():
    variable_tensor_f64 -= 0.5 * variable_tensor_f64.grad

print("leaf after the step:\n", variable_tensor_f64.detach().numpy())
print("old copy (stale):\n", variable_tensor_f32.detach().numpy())
print("a new forward pass copies again:\n",
      variable_tensor_f64.astype(np.float32).detach().numpy())
"""),
    ("md", r"""
Two fixes, depending on what you meant: create the parameter in its final form
(`wg.tensor(x.astype(np.float32), requires_grad=True)`: now *it* is the leaf), or keep the
leaf and compute from it, reading gradients off the leaf. Note one difference from
PyTorch: there `t.to(t.dtype)` returns `t` itself (still the leaf), while NumPy's
`astype` always copies unless told `copy=False`, and wengert follows NumPy:
"""),
    ("code", r"""
v = wg.tensor([1.0, 2.0], requires_grad=True)
print("astype(float64)             is v:", v.astype(np.float64) is v)
print("astype(float64, copy=False) is v:", v.astype(np.float64, copy=False) is v)
"""),
    ("md", r"""
## 4. In-place updates of a leaf

An in-place update of a leaf that requires grad would overwrite the very value the
gradient is taken at, with no node to record it. So it is refused, with the two ways out:
"""),
    ("code", r"""
w = wg.tensor([1.0, 2.0], requires_grad=True)
try:
    w += 1.0
except RuntimeError as err:
    print(type(err).__name__ + ":", err)
"""),
    ("md", r"""
The second way out is the optimizer step: under `wg.no_grad()` nothing is recorded, the
data changes, and `w` stays a leaf that requires grad, ready for the next forward pass
(PyTorch behaves the same way). Gradients *accumulate* across `backward()` calls, so a
training loop resets `.grad` after each step:
"""),
    ("code", r"""
w = wg.tensor([1.0, 2.0], requires_grad=True)
for step in range(3):
    loss = np.sum((w - 3.0) ** 2)
    loss.backward()
    with wg.no_grad():
        w -= 0.25 * w.grad
    w.grad = None
    print(f"step {step}: loss {loss.item():.4f}  w {w.detach().numpy()}  "
          f"leaf {w.is_leaf}  requires_grad {w.requires_grad}")
"""),
    ("md", r"""
## 5. "Why is a leaf variable in my graph moved into the graph interior?"

A second document of this course asks that question and answers it: an "optimizer"
inside the framework, it says, analyses dependencies and "implicitly incorporates the
variable into the graph's internal structure", so that inside a `GradientTape` the
variable becomes "effectively an internal node". Its three TensorFlow examples run here
with wengert's TensorFlow dialect (`wg.Variable`, `wg.GradientTape`), which records what
TensorFlow records. First, a variable used inside the tape:
"""),
    ("code", r"""
x = wg.Variable(2.0)  # Leaf variable

with wg.GradientTape() as tape:
    y = x * x  # Operation within gradient tape context

grad = tape.gradient(y, x)  # Gradient calculation

print(f"x: {x}, y: {y}, grad: {grad}")
"""),
    ("md", r"""
$d(x^2)/dx = 2x = 4$, as TensorFlow gives. Did `x` move into the interior? The tape says
what it recorded: one equation, whose input `x0` is `x`. The drawing shows `x` where
section 3 showed its leaf: a source (the blue double ring, marked "watched by the tape")
with two edges *out* of it, into the one multiplication, and none in:
"""),
    ("code", r"""
print(wg.tape_of(y))
wg.draw(y, names={"x0": "x"})
"""),
    ("md", r"""
A leaf is a node with no inputs, and nothing can give it one after the fact: the reverse
sweep *reads* `x`'s value (the rule of `x * x` needs it) and *ends* at `x`, but adds no
edge into it. There is no optimizer moving nodes in an eager tape; the tape is the list
of operations in the order they ran.

The document's second example is where it goes wrong. `y` is computed **before** the
tape opens, and only `z = y * 3` runs inside it:
"""),
    ("code", r"""
x = wg.Variable(2.0)

def my_function(a):
    return a * a

y = my_function(x)  # Function call uses x.

with wg.GradientTape() as tape:
    z = y * 3  # z depends on x indirectly through y.

grad = tape.gradient(z, x)
print(f"x: {x}, y: {y}, z: {z}, grad: {grad}")
"""),
    ("md", r"""
**The document is wrong here.** It says the system "implicitly integrates `x` into the
gradient graph because it's necessary for calculating the gradient". TensorFlow does not:
its documentation says operations are recorded *if they are executed within this context
manager* and one of their inputs is watched. `y = x * x` ran outside, so to the tape `y`
is a constant, and `tape.gradient(z, x)` is `None` in TensorFlow, as it is here.
`wg.explain` says so, and how to fix it:
"""),
    ("code", r"""
print(wg.explain(z, x))
"""),
    ("code", r"""
with wg.GradientTape() as tape:
    y = my_function(x)   # now recorded
    z = y * 3
print("dz/dx =", tape.gradient(z, x), "  (6x = 12)")
"""),
    ("md", r"""
The third example, a variable used with no tape at all, is right: nothing is recorded,
and `x` stays what it was.
"""),
    ("code", r"""
x = wg.Variable(2.0)

y = x * x # Operation outside gradient tape

print(f"x: {x}, y: {y}") # x is used but no gradient is calculated.
print("anything recorded behind y?", y.grad_fn is not None)
"""),
    ("md", r"""
### What actually "moves": the name

Leaves never move. What does happen, and what looks exactly like a leaf sliding into the
interior, is a Python **name** being rebound to an interior node:
"""),
    ("code", r"""
w = wg.tensor([1.0, 2.0], requires_grad=True)
print("before: w.is_leaf =", w.is_leaf)
w = w / np.sqrt(np.sum(w ** 2))      # "normalise the parameter": w now names a result
print("after:  w.is_leaf =", w.is_leaf, "  grad_fn =", w.grad_fn)
loss = np.sum(w * np.array([3.0, 4.0]))
loss.backward()
print("w.grad:", grad_of(w))
wg.draw(loss)
"""),
    ("md", r"""
The leaf is still there, first in the drawing (`x0`, the blue double ring); only the
name `w` now points at the last interior node. The backward pass did fill the leaf's
`.grad` (the drawing shows it), but no name of yours refers to the leaf any more, so you
cannot read it, and an optimizer holding `w` would update the wrong thing. The fix is to
keep two names: the parameter, and what you compute from it.
"""),
    ("code", r"""
w_param = wg.tensor([1.0, 2.0], requires_grad=True)
w_unit = w_param / np.sqrt(np.sum(w_param ** 2))
loss = np.sum(w_unit * np.array([3.0, 4.0]))
loss.backward()
print("w_param.grad:", grad_of(w_param))
"""),
    ("md", r"""
The seed-001 copy of section 3 is the same story: `variable_tensor_cuda` is a new name
for a new interior node, and the leaf stayed where it was created.

## Exercises

1. Predict `requires_grad`, `is_leaf` and whether `.grad` is filled after `backward()`
   for `p = wg.tensor(3.0, requires_grad=True)`, `q = p.detach()`, `r = q * p`, then
   check with `r.backward()`.
2. `d = wg.tensor([1.0, 2.0]) * 2.0` is a leaf that does not require grad. Make it one
   that does (`d.requires_grad_()`), use it in a loss and read its gradient. Then try
   `(p * 2.0).requires_grad_(False)`: why is it refused?
3. A loop keeps a running parameter `theta = theta - 0.1 * g` *outside* `no_grad()`.
   After two steps, is `theta` a leaf? Where does `backward()` put the gradient? Fix it.
"""),
    ("solution", r"""
p = wg.tensor(3.0, requires_grad=True)
q = p.detach()          # a new leaf sharing p's value, requires_grad False
r = q * p
r.backward()
for name, t in [("p", p), ("q", q), ("r", r)]:
    print(name, "requires_grad", t.requires_grad, " is_leaf", t.is_leaf,
          " grad", grad_of(t) if t.is_leaf else "(non-leaf)")
# p.grad = q = 3: the detached copy is a constant, so r = 3 * p
"""),
    ("solution", r"""
d = wg.tensor([1.0, 2.0]) * 2.0
d.requires_grad_()
np.sum(d ** 2).backward()
print("d.grad:", d.grad)          # 2 d
try:
    (p * 2.0).requires_grad_(False)
except RuntimeError as err:
    print(err)                     # a computed value's flag follows its inputs
"""),
    ("solution", r"""
theta0 = wg.tensor([1.0, -1.0], requires_grad=True)
theta = theta0
for _ in range(2):
    g = 2.0 * theta.detach().numpy()           # a made-up gradient
    theta = theta - 0.1 * g                    # recorded: theta is now interior
print("theta.is_leaf:", theta.is_leaf)
np.sum(theta ** 2).backward()
print("gradient on the original leaf theta0:", theta0.grad)

# the fix: update the leaf in place under no_grad
theta = wg.tensor([1.0, -1.0], requires_grad=True)
for _ in range(2):
    with wg.no_grad():
        theta -= 0.1 * (2.0 * theta.detach().numpy())
print("theta.is_leaf:", theta.is_leaf, " value:", theta.detach().numpy())
"""),
    ("md", r"""
## Read next

- `05_vjps_without_jacobians.ipynb`: what the backward sweep sends along each edge.
- `07_gradient_tapes.ipynb`: the TensorFlow dialect in full: `watch`, Variables,
  persistent and nested tapes, `stop_recording`, and the document that claims variables
  must be declared inside the tape.
- `08_controlling_gradient_flow.ipynb`: `no_grad`, `detach`, `stop_gradient` and custom
  rules: cutting and reshaping the graph on purpose.
"""),
]

if __name__ == "__main__":
    write("06_leaf_tensors", CELLS)
