"""Writes notebooks/03_static_graphs.ipynb (without outputs); ``scripts/execute_notebooks.py``
runs it.

The notebook is the documentation of static graphs (``wengert.graph``), so its text
lives here next to its code; edit this file, run it, then re-execute the notebook.
"""

from __future__ import annotations

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "03_static_graphs.ipynb"

CELLS: list[tuple[str, str]] = [
    ("md", """# Static graphs: define-and-run, tracing, compiler passes, compiled gradients

The tape of notebooks 00–02 is *dynamic*: it is recorded anew on every run, so any
Python works, and the price is paid per op. A *static* graph is captured once, then
looked at, rewritten and run many times, as TensorFlow 1.x, `jax.jit` and
`torch.compile` do. This notebook builds one in each way wengert offers and follows it
through a small compiler:

1. define-and-run with placeholders and a `Session` (TensorFlow 1.x);
2. tracing Python into a graph, loops and branches (`wg.trace`, guards);
3. the gradient as a graph of its own, and the Python code generated for it;
4. optimisation passes, each shown before and after;
5. memory: when each buffer dies, and reusing buffers (`plan_memory`);
6. fusion of elementwise chains;
7. `wg.compile` and how fast the compiled gradient runs;
8. export to JAX."""),
    ("code", """import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)"""),
    ("md", """## 1. Define and run

TensorFlow 1.x separated *defining* a computation from *running* it: placeholders
stand for values that arrive later, ordinary operators build a graph, and a session
evaluates the parts asked for. Nothing is computed while the graph is defined:"""),
    ("code", """x = wg.placeholder((), name="x")
y = x * x
z = 2.0 * y * x
y, z"""),
    ("code", """with wg.Session() as sess:
    print(sess.run([y, z], feed_dict={x: 3.0}))
    dz_dx = wg.gradients(z, x)          # a graph too: 6 x²
    print(sess.run(dz_dx, {x: 3.0}))"""),
    ("md", """The session runs exactly the sub-graph the fetches need. `graph_of` shows it; a
placeholder that is needed but not fed is an error that names it:"""),
    ("code", """sess = wg.Session()
sess.graph_of([y, z])"""),
    ("code", """try:
    sess.run(z)
except Exception as error:
    print(type(error).__name__, error)"""),
    ("md", """## 2. Tracing Python into a graph

`wg.trace(f, *example_args)` runs `f` once on *tracers*: every NumPy call on them
becomes an equation. A Python loop over a fixed range is unrolled, so the graph is a
straight line:"""),
    ("code", """def smooth(x, steps=3):
    for _ in range(steps):
        x = 0.5 * x + 0.25 * np.roll(x, 1) + 0.25 * np.roll(x, -1)
    return np.sum(x ** 2)

graph = wg.trace(smooth, np.linspace(0.0, 1.0, 5))
print(graph)"""),
    ("code", """graph(np.ones(5)), smooth(np.ones(5))"""),
    ("md", """A branch on a traced value is different: the trace only sees the side the example
took. wengert records what the branch tested as a **guard**; running the graph where
the guard fails raises instead of silently computing the wrong branch:"""),
    ("code", """def leaky(x):
    if np.sum(x) > 0:
        return np.tanh(x)
    return 0.1 * x

branchy = wg.trace(leaky, np.ones(3))
print(branchy)"""),
    ("code", """try:
    branchy(-np.ones(3))
except wg.graph.GuardError as error:
    print(error)"""),
    ("md", """`wg.compile` keeps one trace per branch (and per input shape and dtype), and checks
the guards in the generated code:"""),
    ("code", """fast_leaky = wg.compile(leaky)
fast_leaky(np.ones(3)), fast_leaky(-np.ones(3)), fast_leaky(np.full(3, 2.0))"""),
    ("code", """fast_leaky"""),
    ("md", """Where the branch should follow the data element by element, write it with
`np.where`: the comparison becomes an equation and the graph holds for every input."""),
    ("code", """def leaky_everywhere(x):
    return np.sum(np.where(x > 0, np.tanh(x), 0.1 * x))

print(wg.trace(leaky_everywhere, np.ones(3)))"""),
    ("md", """Ordinary NumPy habits trace as they run. An in-place update (`y -= ...`,
`y[:, 0] = ...`) becomes an equation, and views see it as NumPy's shared memory
would; a `with wg.no_grad():` block is marked (`# no_grad`), and when the graph is
differentiated no gradient flows through it, as in eager mode:"""),
    ("code", """def centred_energy(x):
    y = x * 1.0
    y -= np.mean(y, axis=1, keepdims=True)   # in place, as in NumPy
    y[:, 0] = 0.0                            # so is item assignment
    with wg.no_grad():
        scale = np.max(np.abs(y))            # a constant for the gradient
    return np.sum(y ** 2) / scale

x_rows = np.arange(6.0).reshape(2, 3) ** 2
print(wg.trace(centred_energy, x_rows))"""),
    ("code", """compiled_gradient = wg.grad(wg.compile(centred_energy))
np.allclose(compiled_gradient(x_rows), wg.grad(centred_energy)(x_rows))"""),
    ("md", """A compiled function cannot write into its caller's arrays, so updating an
*argument* in place is refused, with the fix:"""),
    ("code", """def shift_in_place(x):
    x += 1.0
    return x

try:
    wg.compile(shift_in_place)(np.zeros(3))
except TypeError as error:
    print(type(error).__name__, error)"""),
    ("md", """## 3. The gradient is a graph too

`wg.grad_graph` traces the reverse sweep: the op records' VJP rules are written with
wengert's own ops, so running them on tracers records the backward program as
equations. Each adjoint is named after its value (`t3_bar`), and the result is
ordinary Python you can read, copy and run:"""),
    ("code", """def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)

rng = np.random.default_rng(0)
w0, x0, y0 = rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
grad_program = wg.grad_graph(wg.trace(loss, w0, x0, y0))
grad_program"""),
    ("code", """print(grad_program.to_source())"""),
    ("code", """value, w_bar = grad_program(w0, x0, y0)
np.allclose(w_bar, wg.grad(loss)(w0, x0, y0))"""),
    ("md", """## 4. Optimisation passes

A pass is a pure function from a graph to a graph that computes the same values:

* `dce` removes equations nothing needs;
* `fold_constants` computes equations whose inputs are all constants, and what depends
  only on shapes and dtypes (`np.ones_like(x)`, `zeros_like`, `full_like`, and
  `empty_like`, whose values are unspecified, as zeros), as TensorFlow's Grappler does;
* `cse` computes a repeated expression once;
* `simplify` applies identities (`x * 1`, `x + 0`, `-(-x)`, a transpose of a transpose,
  reshape chains); `x * 0` only for integers, since for floats it is NaN when `x` is
  infinite.

`graph.optimize(report=True)` runs them in order and shows what each changed, struck
through where an equation went:"""),
    ("code", """def wasteful(x):
    a = np.sin(x) * 1.0 + 0.0
    b = np.sin(x)                       # the same as a
    unused = np.exp(x) ** 3             # never used
    return np.sum(a * b + np.transpose(np.transpose(x)))

before = wg.trace(wasteful, np.ones((2, 3)))
report = before.optimize(report=True)
report"""),
    ("code", """print(report)"""),
    ("md", """The same, one pass at a time, drawn: what `simplify` rewrites (amber: an equation
that now reads another value; struck through: one whose value is read as another), what
`cse` merges, and what `dce` then removes. (`fold_constants` has nothing to do here: a
trace computes constant expressions while tracing, so folding acts on graphs built by
hand, by placeholders, or after other rewrites.)"""),
    ("code", """from IPython.display import display

from wengert.graph.passes import cse, dce, simplify

step = before
for one_pass in (simplify, cse, dce):
    after = one_pass(step)
    display(wg.draw_pass(step, after))
    step = after"""),
    ("md", """What depends only on shapes and dtypes is known before any value is: a zeros array
to fill, ones to scale by. `fold_constants` turns them into constants (one value
broadcast to the shape, whatever its size), and what reads them folds or simplifies in
turn:"""),
    ("code", """def shifted(x):
    out = np.zeros_like(x)              # x's shape and dtype, not its values
    out[1:] = x[:-1] * np.ones_like(x[:-1])
    return out + np.full_like(x, 0.5)

shift_report = wg.trace(shifted, np.arange(4.0)).optimize(report=True)
print(shift_report)
print(shift_report.after.to_source())"""),
    ("md", """Programs written by the computer have more to remove than programs written by
hand. The Hessian of a small energy is traced through reverse mode twice (the rules'
masks, their dtype casts and the seeds' multiplications by one are recomputed at each
level): the passes remove more than two thirds of it."""),
    ("code", """def energy(x):
    return np.sum(np.maximum(x, 0.0) * x) + np.sum(np.tanh(x) ** 2)

hessian_graph = wg.trace(wg.hessian(energy), np.array([0.5, -1.0, 2.0]))
print(hessian_graph.optimize(report=True))"""),
    ("md", """## 5. Memory: liveness and buffer reuse

Every intermediate array lives from the equation that makes it to its last reader.
`plan_memory` frees each one right after that reader and lets an elementwise
equation write its result into a buffer that just died (NumPy's `out=`), never into
the caller's arrays. Here is the gradient of a three-layer MLP, before and after:"""),
    ("code", """from wengert.graph.passes.memory import memory_timeline, peak_bytes, plan_memory

def mlp_loss(params, x, onehot):
    w1, b1, w2, b2, w3, b3 = params
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    z = h2 @ w3 + b3
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return (np.sum(lse) - np.sum(z * onehot)) / x.shape[0]

sizes = (64, 128, 128, 10)
params = [a for m, n in zip(sizes[:-1], sizes[1:])
          for a in (rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))]
xb = rng.normal(size=(256, 64))
onehot = np.eye(10)[rng.integers(0, 10, 256)]
mlp_grad = wg.grad_graph(wg.trace(mlp_loss, params, xb, onehot)).optimize()
planned = plan_memory(mlp_grad)
print(f"peak {peak_bytes(mlp_grad) / 1e6:.2f} MB -> {peak_bytes(planned) / 1e6:.2f} MB")"""),
    ("code", """wg.memory_plot({"as traced": memory_timeline(mlp_grad),
                "after plan_memory": memory_timeline(planned)})"""),
    ("md", """## 6. Fusion

An elementwise chain such as `tanh(a * x + b) ** 2` makes NumPy write a full array for
every step. `fuse` turns a chain into one generated kernel that computes it in
cache-sized chunks, writing no intermediate arrays:"""),
    ("code", """from wengert.graph.passes.fuse import fuse

def chain(x):
    return np.sum(np.tanh(np.sin(x) * 0.5 + 0.25) ** 2 * np.exp(-x))

fused = fuse(wg.trace(chain, np.ones(1_000_000)))
print(fused)"""),
    ("code", """print(fused.to_source())"""),
    ("md", """## 7. `wg.compile`: the compiled gradient

`wg.compile(wg.grad(f))` traces the gradient once per input signature, optimises it
and runs the generated code; a scalar program becomes straight-line `math` code on
Python floats. The timings below depend on the machine, so the notebook tests do not
compare this cell's output."""),
    ("code", """# NBVAL_IGNORE_OUTPUT
import timeit

def scalar_chain(x):
    y = x
    for _ in range(500):
        y = np.tanh(np.sin(y) * 0.9 + x) ** 1.5
    return y

eager = wg.grad(scalar_chain)
compiled = wg.compile(wg.grad(scalar_chain))
assert abs(compiled(0.3) - eager(0.3)) < 1e-12
t_eager = min(timeit.repeat(lambda: eager(0.3), number=5, repeat=3)) / 5
t_compiled = min(timeit.repeat(lambda: compiled(0.3), number=50, repeat=3)) / 50
print(f"eager tape {t_eager * 1e3:.2f} ms, compiled {t_compiled * 1e3:.3f} ms: "
      f"{t_eager / t_compiled:.0f}x faster")"""),
    ("code", """print(compiled.graph_for(0.3).to_source()[:600])"""),
    ("md", """`math.log(-1.0)` and `1.0 / 0.0` raise where NumPy gives NaN or inf with a warning.
The float code keeps eager mode's answers: its steps stand in `try`, and where one
raises, `except FLOAT_ERRORS` computes them again as eager mode does (the float path,
NumPy's answer where that raises). The source alone behaves the same:"""),
    ("code", """import warnings

ratio = wg.trace(lambda x: np.log(x) / x, 2.0)
print(ratio.to_source())
namespace = {}
exec(ratio.to_source(), namespace)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(namespace["f"](0.0), namespace["f"](-1.0), ratio(-1.0))
print(sorted({str(w.message) for w in caught}))"""),
    ("md", """## 8. Past one machine: export to JAX

A graph can be written as a `jax.numpy` function, so a model prototyped here moves to
XLA (GPU, TPU, sharding) without rewriting. The source needs no wengert:"""),
    ("code", """print(wg.trace(loss, w0, x0, y0).to_source(target="jax"))"""),
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
