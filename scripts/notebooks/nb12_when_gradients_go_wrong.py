"""Writes notebooks/12_when_gradients_go_wrong.ipynb (without outputs).

Run it, then ``scripts/execute_notebooks.py notebooks/12_when_gradients_go_wrong.ipynb``.
The notebook reproduces the gradient failures users report most (no gradient, None
gradients, accumulating gradients, a second backward, in-place updates, non-scalar
outputs, shapes, values converted to numbers, NaN), shows wengert's message for each,
and fixes it.
"""

# ruff: noqa: E501  (the summary table's rows are one line each)
from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS: list[tuple[str, str]] = [
    ("md", """# 12 · When gradients go wrong

**What you will learn.** The questions people ask most about automatic differentiation
are not about the chain rule: they are about a gradient that is `None`, an error on
the second `backward()`, an in-place update that breaks the graph, a loss that is not a
scalar, a gradient that is silently the wrong size, and NaN. This notebook reproduces
each one on a few lines, reads what wengert says about it, and fixes it:

1. no gradient at all: nothing required grad, or an integer input;
2. `None` gradients: non-leaves, an optimizer step that rebinds the parameter, inputs
   the output does not depend on, `detach`;
3. gradients that accumulate across steps;
4. a second backward through a freed graph, and a tape used twice;
5. in-place updates: on a leaf, and on a value the backward pass needs;
6. `backward()` on a non-scalar;
7. shapes: a wrong `gradient=`, and broadcasting that silently changes the loss;
8. a value turned into a plain number or array, which loses its derivative;
9. NaN and inf: `sqrt` at 0, the `where` trap, overflow, and `detect_anomaly`.

The messages below are wengert's own; where PyTorch, TensorFlow or JAX behave the
same or differently, the text says so. It assumes the leaf tensors of
`06_leaf_tensors.ipynb` and the tapes of `07_gradient_tapes.ipynb`."""),
    ("code", """import numpy as np

import wengert as wg
import wengert.numpy as wnp

np.set_printoptions(precision=4, suppress=True)


def show_error(action):
    # run action() and print the error it raises, or say that none was raised
    try:
        result = action()
    except Exception as error:
        print(f"{type(error).__name__}: {error}")
    else:
        print("no error:", result)"""),
    ("md", """## 1. No gradient at all

`backward()` needs a graph, and a graph is recorded only from tensors created with
`requires_grad=True`. A loss computed from plain data has none.

Only floating-point (real or complex) values have derivatives. An integer array,
often made by `np.arange(3)` or a list of ints, is refused up front, in every dialect,
with the fix in the message (PyTorch raises the same; JAX's `grad` raises too):"""),
    ("code", """x = wg.tensor([1.0, 2.0])               # requires_grad defaults to False
loss = (x ** 2).sum()
show_error(loss.backward)

x = wg.tensor([1.0, 2.0], requires_grad=True)   # the fix
(x ** 2).sum().backward()
print(x.grad)

show_error(lambda: wg.tensor([1, 2, 3], requires_grad=True))
show_error(lambda: wg.grad(lambda x: x ** 2)(3))
wg.grad(lambda x: x ** 2)(3.0)"""),
    ("md", """## 2. `None` gradients

**A non-leaf.** `backward()` fills `.grad` only on *leaves*, the tensors you created.
An intermediate's `.grad` stays `None`, with PyTorch's warning; `retain_grad()` keeps it
(notebook 06 tells the whole story):"""),
    ("code", """import warnings

x = wg.tensor([1.0, 2.0], requires_grad=True)
h = x * 2.0
h.retain_grad()                       # comment this line out to see None
(h ** 2).sum().backward()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(h.grad, x.grad)
print([str(w.message)[:60] for w in caught])"""),
    ("md", """**An optimizer step that rebinds the parameter.** The most common form of the
non-leaf problem: `w = w - lr * w.grad` is an ordinary operation, so it makes a *new*
tensor, computed from the old `w`, which is not a leaf. The next `backward()` leaves its
`.grad` at `None` (the gradient went to the old leaf), and the next update,
`w - 0.1 * None`, fails.

The fix is to update the leaf *in place* under `wg.no_grad()`, as every optimizer
does: the values change, `w` stays the same leaf, and the update is not recorded."""),
    ("code", """w = wg.tensor([1.0, -1.0], requires_grad=True)
((w - 3.0) ** 2).sum().backward()
w = w - 0.1 * w.grad                  # rebinds w to a non-leaf
print(w.is_leaf)
((w - 3.0) ** 2).sum().backward()
with warnings.catch_warnings(record=True):
    warnings.simplefilter("ignore")
    print(w.grad)

w = wg.tensor([1.0, -1.0], requires_grad=True)
for step in range(3):
    w.grad = None
    ((w - 3.0) ** 2).sum().backward()
    with wg.no_grad():
        w -= 0.1 * w.grad
    print(step, w.is_leaf, w.data)"""),
    ("md", """**An input the output does not depend on.** There is no path from `b` to `y`, so
its gradient is `None`, not `0`: PyTorch and TensorFlow say `None` too (TensorFlow's
`unconnected_gradients="zero"` asks for zeros), and JAX returns zeros. A `.detach()`
(or `wg.stop_gradient`) cuts a path just as surely, and `wg.explain` says where.

A claim that circulates about TensorFlow says that a `tf.Variable` *created inside*
a `GradientTape` block is not watched, so its gradient is `None`. That is not what
TensorFlow documents: a tape watches every trainable variable that is *read* while it
records, wherever the variable was created. wengert's `GradientTape` follows the same
rule and gives the gradient, $2x = 2$:"""),
    ("code", """from IPython.display import display

a = wg.tensor(1.0, requires_grad=True)
b = wg.tensor(2.0, requires_grad=True)
y = a * 3.0 + b.detach() * 2.0
y.backward(retain_graph=True)
print(a.grad, b.grad)
display(wg.explain(y, b))

w1, w2 = wg.Variable(1.0), wg.Variable(2.0)
with wg.GradientTape(persistent=True) as tape:
    y = w1 * 3.0
print(tape.gradient(y, [w1, w2]))
print(tape.gradient(y, [w1, w2], unconnected_gradients="zero"))

with wg.GradientTape() as tape:
    x = wg.Variable(1.0)              # created inside the tape
    y = x * x
tape.gradient(y, x)"""),
    ("md", """## 3. Gradients that accumulate

`.grad` *accumulates*: each `backward()` adds to it, so that a gradient can be summed
over several losses or mini-batches. Forgetting to clear it between training steps
silently doubles, triples... the step:"""),
    ("code", """w = wg.tensor([1.0, -1.0], requires_grad=True)
for step in range(3):
    ((w - 3.0) ** 2).sum().backward()   # no reset: the gradients pile up
    print(step, w.grad)"""),
    ("md", """The fix is the `w.grad = None` at the top of the loop of section 2 (PyTorch's
`optimizer.zero_grad()`). The functional dialects cannot have this bug: `wg.grad` and
`tape.gradient` return a fresh gradient each time.

## 4. A second backward

The reverse sweep reads values the forward pass saved (here $x^2$'s rule reads $x$).
To keep memory bounded, eager frameworks free them as soon as the sweep has used them,
so the graph can be walked backward **once**. A second `backward()` raises; ask to keep
the graph with `retain_graph=True` (or recompute the forward pass).

A `GradientTape` is the same: it answers one `gradient()` call and then frees its
records, unless it was made `persistent=True` (section 2 used one). This is the
"persistent versus non-persistent" choice: persistence costs the memory of everything
the tape recorded until you drop it."""),
    ("code", """x = wg.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward()
show_error(y.backward)

x = wg.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward(retain_graph=True)
y.backward()
print(x.grad)                          # 12 + 12: accumulated, as in section 3

w = wg.Variable(1.0)
with wg.GradientTape() as tape:
    y = w * w
    z = y * y
print(tape.gradient(y, w))
show_error(lambda: tape.gradient(z, w))"""),
    ("md", """## 5. In-place updates

An in-place update of a leaf that requires grad would change the very value the
gradient is about, so it is refused outside `wg.no_grad()`.

The subtler case: an intermediate value that a rule needs is overwritten before
the backward pass reads it. `exp`'s rule reads its own output ($\\frac{d}{dx}e^x = e^x$);
`y += 1` changes it. Every tensor has a *version counter*; the rule notices the version
changed and refuses, naming the operation, instead of using the wrong number. The fix
is to compute out of place (or `.copy()` first):"""),
    ("code", """x = wg.tensor([1.0, 2.0], requires_grad=True)

def add_one_in_place():
    global x
    x += 1.0

show_error(add_one_in_place)

x = wg.tensor([1.0, 2.0], requires_grad=True)
y = np.exp(x)
loss = y.sum()
y += 1.0                                # overwrites what exp's rule needs
show_error(loss.backward)

x = wg.tensor([1.0, 2.0], requires_grad=True)
y = np.exp(x)
loss = y.sum()
y = y + 1.0                             # out of place: a new tensor
loss.backward()
x.grad"""),
    ("md", """## 6. `backward()` on a non-scalar

A gradient is the derivative of *one number*. For a vector output, `backward()` does
not know how to weigh its entries, so it asks: reduce to a scalar first, or pass the
weights (`gradient=`, a vector–Jacobian product), or ask for the whole Jacobian:"""),
    ("code", """x = wg.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
show_error(y.backward)
show_error(lambda: wg.grad(lambda x: x ** 2)(np.array([1.0, 2.0])))

y.backward(gradient=np.array([1.0, 10.0]))     # the VJP [1, 10]·J
print(x.grad)
print(wg.jacobian(lambda x: x ** 2)(np.array([1.0, 2.0])))"""),
    ("md", """## 7. Shapes

A `gradient=` must have exactly the output's shape (no broadcasting: a silently
broadcast seed would be a wrong VJP).

The worst shape bug raises nothing. A model's prediction of shape `(4, 1)` minus
targets of shape `(4,)` broadcasts to a `(4, 4)` matrix: the "mean squared error" is
then the mean over 16 pairs, every prediction against every target. Differentiation is
right (it differentiates what you wrote), and the model trains toward the mean of the
targets. Check the shapes; reshape so they match:"""),
    ("code", """x = wg.tensor([1.0, 2.0], requires_grad=True)
y = x * 2.0
show_error(lambda: y.backward(gradient=np.ones(3)))

pred = wg.tensor([[0.1], [1.2], [1.9], [3.0]], requires_grad=True)
target = np.arange(4.0)
wrong = np.mean((pred - target) ** 2)
print((pred - target).shape, wrong.item())
wrong.backward()
print(pred.grad.ravel())                      # pulls every row toward 1.5

pred.grad = None
right = np.mean((pred.reshape(-1) - target) ** 2)
print(right.item())
right.backward()
print(pred.grad.ravel())"""),
    ("md", """## 8. A value turned into a number loses its derivative

A derivative lives on the tensor (or the tracer inside `wg.grad`). Converting it to a
plain NumPy array or a Python float keeps the numbers and drops the history. wengert
refuses where a conversion would silently lose a gradient, and says what to write
instead.

In the PyTorch dialect, `.item()` and `float()` of a tensor are allowed, as in
PyTorch: they are how you *print* or *log* a loss. Used inside the computation they make
a constant, and the gradient leaves out that path (here it misses $2x_0 \\cdot x_0$ and
$2x_1 \\cdot x_0$: PyTorch gives the same `[5, 0]`). Keep values that should be
differentiated as tensors:"""),
    ("code", """x = wg.tensor([1.0, 2.0], requires_grad=True)
show_error(lambda: np.asarray(x))


def scaled(x):
    s = np.sum(x ** 2)
    return float(s) * x[0]                    # float() of a traced value

show_error(lambda: wg.grad(scaled)(np.array([1.0, 2.0])))

x = wg.tensor([1.0, 2.0], requires_grad=True)
scaled(x).backward()
print("with float():", x.grad)
print("as arrays:   ", wg.grad(lambda x: np.sum(x ** 2) * x[0])(np.array([1.0, 2.0])))"""),
    ("md", """## 9. NaN and inf

**A derivative that is infinite.** $\\sqrt{x}$ is fine at 0, its derivative
$1/(2\\sqrt{x})$ is not. The gradient is `inf`, with NumPy's warning:"""),
    ("code", """with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(wg.grad(np.sqrt)(0.0))
print([str(w.message) for w in caught])"""),
    ("md", """**The `where` trap.** Guarding `log` with `np.where` keeps the *value* finite, but the
backward pass still runs `log`'s rule on every entry, including the ones `where` did not
select: there the incoming gradient is 0 and the local derivative is $1/0 = \\infty$,
and $0 \\cdot \\infty$ is NaN. PyTorch and JAX give the same NaN. `wg.explain` runs the
function again and says exactly this, with the fix, the "double where":"""),
    ("code", """def safe_log_sum(x):
    return np.sum(np.where(x > 0, np.log(x), 0.0))

x0 = np.array([1.0, 0.0])
with np.errstate(divide="ignore", invalid="ignore"):
    print(safe_log_sum(x0), wg.grad(safe_log_sum)(x0))
    display(wg.explain(safe_log_sum, x0))

def safer_log_sum(x):
    positive = x > 0
    return np.sum(np.where(positive, np.log(np.where(positive, x, 1.0)), 0.0))

print(safer_log_sum(x0), wg.grad(safer_log_sum)(x0))"""),
    ("md", """**Finding the first NaN.** In a long computation the NaN appears far from its
cause. `wg.detect_anomaly()` (PyTorch's `torch.autograd.detect_anomaly`) checks each
backward rule's output and stops at the first that is not finite, naming the operation
and the line that created it (printed here without the file path):"""),
    ("code", """x = wg.tensor([1.0, 0.0], requires_grad=True)
try:
    with np.errstate(divide="ignore", invalid="ignore"), wg.detect_anomaly():
        loss = np.sum(np.where(x > 0, np.log(x), 0.0))
        loss.backward()
except wg.errors.AnomalyError as error:
    first, *rest = str(error).splitlines()
    print(first)
    print(rest[-1].strip())"""),
    ("md", """**Overflow.** $\\log \\sum_i e^{z_i}$ written as it reads overflows for large $z$: the
value is `inf` and the gradient $e^{z}/\\sum e^{z}$ is $\\infty/\\infty$ = NaN. The
mathematics is fine, the floating-point evaluation is not; subtract the maximum first,
or use `wnp.logsumexp`, whose gradient is the softmax:"""),
    ("code", """z = np.array([1000.0, 1000.0])
naive = lambda z: np.log(np.sum(np.exp(z)))
with np.errstate(over="ignore", invalid="ignore"):
    print(naive(z), wg.grad(naive)(z))

stable = lambda z: np.max(z) + np.log(np.sum(np.exp(z - np.max(z))))
print(stable(z), wg.grad(stable)(z))
print(wnp.logsumexp(z), wg.grad(wnp.logsumexp)(z))"""),
    ("md", """## Summary

| symptom | cause | fix |
|---|---|---|
| `NoGradientError` on `backward()` | nothing required grad | `requires_grad=True` on the inputs |
| `.grad` is `None` | a non-leaf; a rebinding `w = w - ...`; no path; `detach` | `retain_grad()`; update in place under `no_grad()`; `wg.explain(y, x)` |
| steps grow | `.grad` accumulates | `w.grad = None` each step |
| `GraphFreedError` | second backward | `retain_graph=True`, or `persistent=True` for a tape |
| `LeafInplaceError`, `InplaceModifiedError` | in-place update | out of place, or `.copy()`; leaf updates under `no_grad()` |
| "implicitly created only for scalar outputs" | non-scalar `backward()` | `.sum()`, `gradient=`, `wg.jacobian` |
| no error, wrong loss | broadcasting `(n, 1)` with `(n,)` | make the shapes match |
| `LostDerivativeError` | `np.asarray`, `float()` inside `wg.grad` | keep arrays; `np.stack`, `np.where` |
| NaN | `0 · inf` in a rule; overflow | double `where`; stable formulas; `wg.detect_anomaly()` |

## Exercises

1. This loop should fit `w` to 3, but the loss does not go down after the first step.
   Find the two bugs and fix them.

   ```python
   w = wg.tensor(0.0, requires_grad=True)
   for step in range(20):
       loss = (w - 3.0) ** 2
       loss.backward()
       w = w - 0.1 * w.grad
   ```"""),
    ("solution", """w = wg.tensor(0.0, requires_grad=True)
for step in range(20):
    w.grad = None                      # bug 1: gradients accumulated
    loss = (w - 3.0) ** 2
    loss.backward()
    with wg.no_grad():                 # bug 2: w = w - ... made w a non-leaf
        w -= 0.1 * w.grad
print(round(w.item(), 4))"""),
    ("md", """2. `norm = lambda x: np.sqrt(np.sum(x ** 2))` has a NaN gradient at `x = 0` (check
   it). Write a version whose gradient at 0 is `[0, 0]` (the choice PyTorch's and
   wengert's `np.linalg.norm` make) and equal to `x / norm(x)` elsewhere."""),
    ("solution", """norm = lambda x: np.sqrt(np.sum(x ** 2))
with np.errstate(divide="ignore", invalid="ignore"):
    print(wg.grad(norm)(np.zeros(2)))

def safe_norm(x):
    s = np.sum(x ** 2)
    nonzero = s > 0
    return np.where(nonzero, np.sqrt(np.where(nonzero, s, 1.0)), 0.0)

print(wg.grad(safe_norm)(np.zeros(2)), wg.grad(safe_norm)(np.array([3.0, 4.0])))
print(wg.grad(np.linalg.norm)(np.zeros(2)))"""),
    ("md", """3. `y = x * 2.0` is a vector. Compute $\\partial y_1/\\partial x$ (the second row
   of the Jacobian) with one `backward()` call, without `wg.jacobian`."""),
    ("solution", """x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2.0
y.backward(gradient=np.array([0.0, 1.0, 0.0]))
x.grad"""),
    ("md", """## What to read next

* `08_controlling_gradient_flow.ipynb`: `no_grad`, `detach`, `stop_gradient`, custom
  rules, and the explainer in depth;
* `11_training_a_small_model.ipynb`: a training loop that avoids every bug above;
* `13_complex_and_decompositions.ipynb`: gradients through complex numbers and
  `np.linalg`."""),
]


if __name__ == "__main__":
    write("12_when_gradients_go_wrong", CELLS)
