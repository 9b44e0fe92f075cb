"""Write ``notebooks/07_gradient_tapes.ipynb``: the TensorFlow dialect (``wg.GradientTape``,
``wg.Variable``): watching, where variables are declared, persistent and nested tapes,
``stop_recording``, Jacobians."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS = [
    ("md", r"""
# 07 · Gradient tapes: what gets recorded, and when

PyTorch records every operation on a tensor that requires grad, wherever it runs.
TensorFlow records only inside a `with tf.GradientTape() as tape:` block, and only
operations on values the tape **watches**. wengert speaks both dialects; this notebook is
about the second one, `wg.GradientTape` with `wg.Variable`, which follows TensorFlow's
rules:

- the two rules of a tape, *inside the block* and *watched*: `wg.Variable`s are watched
  automatically, plain tensors with `tape.watch` (section 1);
- does it matter whether a variable is declared inside or outside the tape? A document
  of this course says it does; we run its three examples (section 2);
- operations run before the tape opened (3);
- persistent tapes (4), nested tapes for second derivatives (5), `stop_recording` (6),
  several sources and Jacobians (7);
- a small training loop in this style (8).

TensorFlow itself is not used here: where its behaviour is quoted, it is from its
documentation of `tf.GradientTape`, and wengert's results are shown live.
"""),
    ("code", r"""
import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert
"""),
    ("md", r"""
## 1. The two rules

TensorFlow's documentation of `tf.GradientTape` states them in one sentence:
*"Operations are recorded if they are executed within this context manager and at least
one of their inputs is being watched."* And: *"Trainable variables (created by
`tf.Variable` [...]) are automatically watched. Tensors can be manually watched by
invoking the `watch` method."*

A `wg.Variable` is watched as soon as the tape sees it used. A plain tensor is a
constant to the tape until you `watch` it; an unwatched source gets `None`, not zero: the
tape has no path to it.
"""),
    ("code", r"""
w = wg.Variable(1.0, name="w")
with wg.GradientTape() as tape:
    loss = (w * 3.0 - 1.0) ** 2
print("d loss / dw =", tape.gradient(loss, w), "  (= 2 (3w - 1) 3 = 12)")
print("watched:", tape.watched_variables())

c = wg.tensor(3.0)
with wg.GradientTape() as tape:
    y = c * c
print("not watched:", tape.gradient(y, c))

with wg.GradientTape() as tape:
    tape.watch(c)
    y = c * c
print("watched:    ", tape.gradient(y, c), "  (2c)")
"""),
    ("md", r"""
## 2. Declaring a variable inside or outside the tape

One of the documents this course grew from asks *"How does declaring variables inside
TensorFlow's GradientTape affect gradients?"* and answers: variables created inside the
tape are automatically tracked, those created outside are not, and failing to `watch`
them "will result in their operations not being considered during gradient computation
[...] This often manifests as zero gradients". Its three examples, run as written (with
`wg` for `tf`):
"""),
    ("code", r"""
x = wg.Variable(1.0)
with wg.GradientTape() as tape:
  y = x * x
  z = wg.Variable(2.0) #Tracked
  y = y + z
grad = tape.gradient(y, x)
print(grad) # Output: 2.0, correctly computed.
print(z) # z remains
"""),
    ("md", r"""
$2x = 2$, as the document says; and `z`, used inside the tape, is watched too, so the
tape can also give $\partial y/\partial z = 1$ (a second `gradient` call needs a
persistent tape, section 4, so here both at once):
"""),
    ("code", r"""
x = wg.Variable(1.0)
with wg.GradientTape() as tape:
  y = x * x
  z = wg.Variable(2.0)
  y = y + z
print(tape.gradient(y, [x, z]))
"""),
    ("md", r"""
The second example creates `x` **inside** the tape. The document's comment calls this
"declared outside" (it contradicts its own code) and says the result is `None`:
"""),
    ("code", r"""
with wg.GradientTape() as tape:
  x = wg.Variable(1.0) # Incorrect placement.
  y = x * x
grad = tape.gradient(y, x)
print(grad) # Output: None, because x was not automatically watched by the tape.
"""),
    ("md", r"""
**The document is wrong here: TensorFlow prints `tf.Tensor(2.0, shape=(), dtype=float32)`,
not `None`, and wengert prints 2.** A trainable variable is watched when it is *read*
inside an active tape, wherever it was created (in TensorFlow's source every read of a
trainable variable, `_read_variable_op`, calls `tape.variable_accessed(self)`, which
watches it on every active tape); creating it inside the block changes nothing, because
`y = x * x` still runs inside the block with a watched input.

The third example calls `watch` on a variable. It is correct, and the `watch` is
redundant: the variable would have been watched anyway.
"""),
    ("code", r"""
x = wg.Variable(1.0)
with wg.GradientTape() as tape:
    tape.watch(x) # Manually adding x to the tape's watch list.
    y = x * x
grad = tape.gradient(y, x)
print(grad) # Output: 2.0; gradient correctly computed due to manual watching.
"""),
    ("md", r"""
So what *does* leave a variable unwatched? Only asking for it: a tape opened with
`watch_accessed_variables=False` watches nothing by itself, and a variable created with
`trainable=False` is never watched automatically. And what you get is `None`, not the
"zero gradients" the document describes; zeros are something you ask for, with
`unconnected_gradients="zero"`:
"""),
    ("code", r"""
v = wg.Variable(1.0, name="v")
u = wg.Variable(2.0, name="u")
with wg.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(v)
    y = v * u
print("watch_accessed_variables=False:", tape.gradient(y, [v, u]))

frozen = wg.Variable(1.0, trainable=False)
with wg.GradientTape() as tape:
    y = frozen * frozen
print("trainable=False:               ", tape.gradient(y, frozen))

with wg.GradientTape() as tape:
    y = v * 2.0
print("unconnected, asked for zeros:  ",
      tape.gradient(y, [v, u], unconnected_gradients="zero"))
"""),
    ("md", r"""
The document's last claim: *"A variable declared inside the `GradientTape`'s `with`
block ceases to exist after exiting the block."* It does not: a Python `with` block is
not a scope, and the first example's own `print(z)` printed the variable after the block.
What *does* matter is what a variable is created **from**. A `wg.Variable` (like a
`tf.Variable`) copies its initial value; it is a new source, not a continuation of the
computation that produced that value:
"""),
    ("code", r"""
x = wg.Variable(2.0, name="x")
with wg.GradientTape() as tape:
    h = x * 2.0
    state = wg.Variable(h, name="state")   # a new variable holding h's value
    loss = state * state
print("after the block, state =", state)
print("d loss/dx, d loss/dstate:", tape.gradient(loss, [x, state]))
"""),
    ("md", r"""
`loss` depends on `x` numerically, but the path runs through a variable's creation, which
is not an operation the tape differentiates, so $\partial\,loss/\partial x$ is `None`
(TensorFlow gives `None` too) and the gradient stops at `state` ($2\cdot state = 8$). To
differentiate through it, keep `h` a tensor.

PyTorch has none of these questions: there is no tape to open, and every operation on a
tensor created with `requires_grad=True` is recorded, wherever it runs. In wengert that
dialect is `wg.tensor(..., requires_grad=True)` and `backward()`
(`06_leaf_tensors.ipynb`); a `wg.Variable` does not require grad in that sense, only a
tape watches it.

## 3. Operations before the tape

The other way to lose a gradient is real: an operation that ran **before** the tape
opened is not on the tape, even if it used a watched variable. To the tape its result is
a constant (`06_leaf_tensors.ipynb` shows the document that claims otherwise):
"""),
    ("code", r"""
x = wg.Variable(2.0, name="x")
y = x * x                      # before the tape: not recorded
with wg.GradientTape() as tape:
    z = y * 3.0
print("dz/dx:", tape.gradient(z, x))
print(wg.explain(z, x))
"""),
    ("md", r"""
## 4. Persistent tapes

By default a tape lets go of what it recorded after one `gradient` (or `jacobian`) call,
so that the memory of the forward pass is freed as early as possible. A second call is
refused, and the message says what to do:
"""),
    ("code", r"""
x = wg.tensor(3.0)
with wg.GradientTape() as g:
    g.watch(x)
    y = x * x
    z = y * y
print("dz/dx =", g.gradient(z, x))
try:
    g.gradient(y, x)
except RuntimeError as err:
    print(type(err).__name__ + ":", err)
"""),
    ("md", r"""
`persistent=True` keeps the recording until the tape object is dropped (`del g`, or
binding `g` to something else), so
every gradient of the same computation comes from one forward pass. This is TensorFlow's
documentation example: $z = y^2 = x^4$, so $dz/dx = 4x^3 = 108$ and $dy/dx = 2x = 6$ at
$x = 3$:
"""),
    ("code", r"""
x = wg.tensor(3.0)
with wg.GradientTape(persistent=True) as g:
    g.watch(x)
    y = x * x
    z = y * y
print("dz/dx =", g.gradient(z, x))
print("dy/dx =", g.gradient(y, x))
print(g.recorded)
"""),
    ("md", r"""
A persistent tape keeps what it recorded, so it can be drawn: the watched tensor is the
source, each equation one box.
"""),
    ("code", r"""
wg.draw(g, names={"x0": "x"})
"""),
    ("md", r"""
## 5. Nested tapes: second derivatives

The gradient computed by an inner tape is itself a computation, and an outer tape that
watches the same value records it. Differentiating it again gives the second derivative
(TensorFlow's documentation example, $y = x^2$ at $x = 5$):
"""),
    ("code", r"""
x = wg.tensor(5.0)
with wg.GradientTape() as g:
    g.watch(x)
    with wg.GradientTape() as gg:
        gg.watch(x)
        y = x * x
    dy_dx = gg.gradient(y, x)      # dy_dx = 2 * x
d2y_dx2 = g.gradient(dy_dx, x)     # d2y_dx2 = 2
print(dy_dx)
print(d2y_dx2)
"""),
    ("md", r"""
Note where `gg.gradient` is called: *inside* the outer block (so `g` records the
backward pass) and *outside* the inner one. Called outside both, the outer tape would
see nothing and `g.gradient` would be `None`. The same pattern to third order, for
$\sin x$:
"""),
    ("code", r"""
x = wg.Variable(0.5, name="x")
with wg.GradientTape() as t3:
    with wg.GradientTape() as t2:
        with wg.GradientTape() as t1:
            y = np.sin(x)
        d1 = t1.gradient(y, x)
    d2 = t2.gradient(d1, x)
d3 = t3.gradient(d2, x)
print("cos  :", d1, np.cos(0.5))
print("-sin :", d2, -np.sin(0.5))
print("-cos :", d3, -np.cos(0.5))
"""),
    ("md", r"""
## 6. `stop_recording`: work inside the block that the tape should not see

Inside `with tape.stop_recording():` nothing is recorded, as if the code ran before the
tape. Here `s` uses `x` but reaches `z` as a constant, so only `y = x^2` contributes:
$dz/dx = 2x = 6$, not $4x = 12$:
"""),
    ("code", r"""
x = wg.Variable(3.0, name="x")
with wg.GradientTape() as tape:
    y = x * x
    with tape.stop_recording():
        s = x * x           # a logged metric, or a value used as a constant
    z = y + s
print("dz/dx:", tape.gradient(z, x))
"""),
    ("md", r"""
## 7. Several sources, Jacobians, output gradients

`gradient` takes a single source, a list or a dict (it answers in the same shape). A
non-scalar target is summed, as in TensorFlow: `output_gradients` weights its entries
instead (a vector-Jacobian product, `05_vjps_without_jacobians.ipynb`), and `jacobian`
gives every row:
"""),
    ("code", r"""
a = wg.Variable(1.0, name="a")
b = wg.Variable(2.0, name="b")
with wg.GradientTape() as tape:
    f = a * b + b ** 2
print(tape.gradient(f, {"a": a, "b": b}))

xs = wg.Variable(np.array([1.0, 2.0, 3.0]), name="xs")
with wg.GradientTape(persistent=True) as tape:
    y = xs ** 2
print("sum of rows:     ", tape.gradient(y, xs))
print("weighted rows:   ", tape.gradient(y, xs, output_gradients=np.array([1.0, 0.0, 0.0])))
print("jacobian:\n", tape.jacobian(y, xs))
del tape
"""),
    ("md", r"""
## 8. A training loop in this style

A straight line fitted by gradient descent: the forward pass inside a fresh tape each
step, the update with `assign_sub` outside it (an update is not part of the function
being differentiated).
"""),
    ("code", r"""
rng = np.random.default_rng(0)
xs = np.linspace(-1.0, 1.0, 20)
ys = 3.0 * xs - 0.5 + 0.1 * rng.normal(size=20)

slope = wg.Variable(0.0, name="slope")
intercept = wg.Variable(0.0, name="intercept")
for step in range(61):
    with wg.GradientTape() as tape:
        loss = np.mean((slope * xs + intercept - ys) ** 2)
    d_slope, d_intercept = tape.gradient(loss, [slope, intercept])
    slope.assign_sub(0.5 * d_slope)
    intercept.assign_sub(0.5 * d_intercept)
    if step % 20 == 0:
        print(f"step {step:2d}  loss {float(loss):.4f}")
print(f"slope {float(slope.numpy()):.4f}  intercept {float(intercept.numpy()):.4f}"
      "   (the data: 3x - 0.5 + noise)")
"""),
    ("md", r"""
## Exercises

1. Compute $\partial^2 f/\partial a\,\partial b$ for $f = a^2 b^3$ at $a = 1, b = 2$ with
   two nested tapes (expected $6ab^2 = 24$).
2. A tape computes `loss` and, inside it, the running average `avg = 0.9 * avg + 0.1 *
   loss` for a log. Make sure the gradient of `loss` does not change, and that `avg` is
   not on the tape.
3. Without running it, say what each `print` shows, then check:
   ```python
   p = wg.Variable(2.0)
   q = p * 3.0
   with wg.GradientTape(persistent=True) as t:
       r = q * p
   print(t.gradient(r, p), t.gradient(r, q))
   ```
"""),
    ("solution", r"""
a = wg.Variable(1.0, name="a")
b = wg.Variable(2.0, name="b")
with wg.GradientTape() as outer:
    with wg.GradientTape() as inner:
        f = a ** 2 * b ** 3
    df_da = inner.gradient(f, a)          # 2 a b^3, recorded by `outer`
print("d2f/da db =", outer.gradient(df_da, b))
"""),
    ("solution", r"""
w = wg.Variable(1.5, name="w")
avg = 0.0
with wg.GradientTape() as tape:
    loss = (w - 0.5) ** 2
    with tape.stop_recording():
        avg = 0.9 * avg + 0.1 * loss
print("dloss/dw:", tape.gradient(loss, w), " avg recorded?", avg.grad_fn is not None)
"""),
    ("solution", r"""
p = wg.Variable(2.0)
q = p * 3.0                   # before the tape: a constant 6 to it
with wg.GradientTape(persistent=True) as t:
    r = q * p
# r = 6 p on the tape, so dr/dp = 6 (not 12); q is a plain tensor nobody watched: None
print(t.gradient(r, p), t.gradient(r, q))
del t
"""),
    ("md", r"""
## Read next

- `06_leaf_tensors.ipynb`: the PyTorch dialect: leaves, `.grad`, `retain_grad`, and why
  a leaf never "moves into the interior".
- `08_controlling_gradient_flow.ipynb`: `no_grad`, `detach`, `stop_gradient`, custom
  rules, checkpointing, and NaN gradients.
- `09_higher_order.ipynb`: Hessians and Hessian-vector products without nesting tapes by
  hand.
"""),
]

if __name__ == "__main__":
    write("07_gradient_tapes", CELLS)
