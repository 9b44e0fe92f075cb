"""Writes notebooks/10_static_vs_dynamic_graphs.ipynb (without outputs).

Run it, then ``scripts/execute_notebooks.py notebooks/10_static_vs_dynamic_graphs.ipynb``.
The notebook teaches the two ways a graph is built (define-by-run tapes and
define-and-run graphs), tracing and its guards, wengert's compiler passes, memory
planning, compiled gradients, generated adjoint source and export to JAX.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS: list[tuple[str, str]] = [
    ("md", """# 10 · Static and dynamic graphs: define-by-run, define-and-run, tracing, compiling

**What you will learn.** Every automatic-differentiation system records a computation
as a graph; they differ in *when* the graph is built.

* A **dynamic** graph (define-by-run: PyTorch, TensorFlow 2 eager, wengert's tensors
  and tapes) is recorded while the code runs, anew on every run, so any Python works.
* A **static** graph (define-and-run: TensorFlow 1.x, Theano, `jax.jit`,
  `torch.compile`) is built once, then inspected, rewritten and run many times.

This notebook builds the same small computation both ways, then follows a static graph
through a small compiler:

1. define-by-run: the graph as the side effect of running code;
2. define-and-run with placeholders and a `Session` (TensorFlow 1.x);
3. tracing Python into a graph; loops, branches and guards;
4. the gradient as a graph of its own, and the Python code generated for it;
5. optimisation passes, each shown before and after;
6. memory: when each buffer dies, and reusing buffers (`plan_memory`);
7. fusion of elementwise chains, and what a compiler may not change;
8. `wg.compile` and how fast the compiled gradient runs;
9. export to JAX.

It assumes the tapes of `04_reverse_mode.ipynb` and the transforms of
`05_vjps_without_jacobians.ipynb`."""),
    ("code", """import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)"""),
    ("md", """## 1. Define-by-run: the graph is recorded as the code runs

The running example is $y = (a + b)\\,c$. In PyTorch's style (the same code in
wengert's PyTorch dialect), each operator computes its value *and* appends a node to
the graph; `backward()` then walks that graph in reverse. With $a=1, b=2, c=3$:
$\\partial y/\\partial a = \\partial y/\\partial b = c = 3$ and
$\\partial y/\\partial c = a + b = 3$.

Because the graph is a by-product of running Python, ordinary loops and `if`
statements shape it, and a different input can give a different graph. Here is the
define-by-run loop of the usual textbook example: a stack of layers with a
data-dependent normalisation. The tape (`wg.tape_of`) lists the operations that actually
ran: the small input never crosses the threshold, the large one does."""),
    ("code", """a = wg.tensor(1.0, requires_grad=True)
b = wg.tensor(2.0, requires_grad=True)
c = wg.tensor(3.0, requires_grad=True)

sum_ab = a + b            # computed now, and recorded
result = sum_ab * c
result.backward()

print(result)
print(a.grad, b.grad, c.grad)

def relu(h):
    return np.maximum(h, 0.0)

rng = np.random.default_rng(0)
layers = [np.eye(3) + 0.3 * rng.normal(size=(3, 3)) for _ in range(3)]

def forward(x, layers, threshold=2.0):
    h = x
    for layer in layers:                    # ordinary Python loop
        h = relu(h @ layer)                 # each op appends a node
        if np.linalg.norm(h) > threshold:   # data-dependent branch
            h = h / np.linalg.norm(h)
    return np.sum((h - 1.0) ** 2)

for x in (np.array([0.1, 0.2, 0.3]), np.array([3.0, 1.0, 2.0])):
    weights = [wg.tensor(w, requires_grad=True) for w in layers]
    loss = forward(x, weights)
    print(f"{loss.item():.4f}", [eq.op.name for eq in wg.tape_of(loss)])"""),
    ("md", """The price of this freedom: the graph is rebuilt on every call, each operation pays
Python's overhead, and nothing sees the whole computation before it runs, so nothing can
optimise it. The rest of the notebook is about the other choice.

## 2. Define-and-run: placeholders and a Session

TensorFlow 1.x separated *defining* a computation from *running* it: placeholders
stand for values that arrive later, operators build a graph, and a session evaluates
the parts asked for, as often as you like, with different values. This is the
TensorFlow 1.x example, written with wengert's `placeholder` and `Session` (TensorFlow
spells them `tf.compat.v1.placeholder` and `tf.compat.v1.Session`):"""),
    ("code", """wg.graph.reset_default_graph()     # tf1.reset_default_graph()

a = wg.placeholder((), name="a")
b = wg.placeholder((), name="b")
c = wg.placeholder((), name="c")
sum_ab = a + b
result = sum_ab * c
print(result)               # no number yet: a node of a graph

with wg.Session() as sess:
    print(sess.run(result, {a: 1.0, b: 2.0, c: 3.0}))  # 9.0
    print(sess.run(result, {a: 4.0, b: 5.0, c: 6.0}))  # 54.0
    print(sess.run(wg.gradients(result, [a, b, c]), {a: 1.0, b: 2.0, c: 3.0}))"""),
    ("md", """The printed values are the ones the TensorFlow example gives in its comments
($(1+2)\\cdot3 = 9$, $(4+5)\\cdot6 = 54$), and `wg.gradients` (TensorFlow 1.x's
`tf.gradients`) builds the derivative as more graph.

Ordinary Python control flow runs only once, while the graph is *defined*, when no
value is known yet. TensorFlow 1.x needed graph operators (`tf.cond`,
`tf.while_loop`) for data-dependent control; wengert refuses the Python `if` and says
what to write instead.

It is often said that in a static graph a runtime error surfaces "inside the
opaque execution engine rather than at the Python line that caused it". That is true
of errors that depend on values (a NaN, an index out of range fed at run time), but
not of shape errors when the shapes are declared: TensorFlow 1.x inferred static shapes
while the graph was built and raised at the offending line, and so does wengert. A
value of the wrong shape fed at run time is named too:"""),
    ("code", """try:
    if a > 0:
        print("positive")
except wg.graph.TraceError as error:
    print(type(error).__name__, error)

p = wg.placeholder((3,), name="p")
q = wg.placeholder((2,), name="q")
try:
    p * q                              # raised here, at definition
except ValueError as error:
    print(error)

try:
    wg.Session().run(result, {a: np.ones(3), b: 2.0, c: 3.0})
except ValueError as error:
    print(error)"""),
    ("md", """A second, smaller example: `z = 2x³`, its derivative as a graph, and running both in
one session. Again nothing is computed while the graph is defined.

The session runs exactly the sub-graph the fetches need. `graph_of` shows it; a
placeholder that is needed but not fed is an error that names it:"""),
    ("code", """x = wg.placeholder((), name="x")
y = x * x
z = 2.0 * y * x
print(y, z)
with wg.Session() as sess:
    print(sess.run([y, z], feed_dict={x: 3.0}))
    dz_dx = wg.gradients(z, x)          # a graph too: 6 x²
    print(sess.run(dz_dx, {x: 3.0}))

from IPython.display import display

sess = wg.Session()
display(sess.graph_of([y, z]))
try:
    sess.run(z)
except Exception as error:
    print(type(error).__name__, error)"""),
    ("md", """## 3. Tracing Python into a graph

`wg.trace(f, *example_args)` runs `f` once on *tracers*: every NumPy call on them
becomes an equation. A Python loop over a fixed range is unrolled, so the graph is a
straight line:"""),
    ("code", """def smooth(x, steps=3):
    for _ in range(steps):
        x = 0.5 * x + 0.25 * np.roll(x, 1) + 0.25 * np.roll(x, -1)
    return np.sum(x ** 2)

graph = wg.trace(smooth, np.linspace(0.0, 1.0, 5))
print(graph)
print(graph(np.ones(5)), smooth(np.ones(5)))"""),
    ("md", """A branch on a traced value is different: the trace only sees the side the example
took. wengert records what the branch tested as a **guard**; running the graph where
the guard fails raises instead of silently computing the wrong branch.

`wg.compile` keeps one trace per branch (and per input shape and dtype), and checks
the guards in the generated code. Where the branch should follow the data element by
element, write it with `np.where`: the comparison becomes an equation and one graph
holds for every input:"""),
    ("code", """def leaky(x):
    if np.sum(x) > 0:
        return np.tanh(x)
    return 0.1 * x

branchy = wg.trace(leaky, np.ones(3))
print(branchy)
try:
    branchy(-np.ones(3))
except wg.graph.GuardError as error:
    print(error)

fast_leaky = wg.compile(leaky)
print(fast_leaky(np.ones(3)), fast_leaky(-np.ones(3)), fast_leaky(np.full(3, 2.0)))
print(fast_leaky)

def leaky_everywhere(x):
    return np.sum(np.where(x > 0, np.tanh(x), 0.1 * x))

print(wg.trace(leaky_everywhere, np.ones(3)))"""),
    ("md", """Ordinary NumPy habits trace as they run. An in-place update (`y -= ...`,
`y[:, 0] = ...`) becomes an equation, and views see it as NumPy's shared memory
would; a `with wg.no_grad():` block is marked (`# no_grad`), and when the graph is
differentiated no gradient flows through it, as in eager mode.

A compiled function cannot write into its caller's arrays, so updating an
*argument* in place is refused, with the fix:"""),
    ("code", """def centred_energy(x):
    y = x * 1.0
    y -= np.mean(y, axis=1, keepdims=True)   # in place, as in NumPy
    y[:, 0] = 0.0                            # so is item assignment
    with wg.no_grad():
        scale = np.max(np.abs(y))            # a constant for the gradient
    return np.sum(y ** 2) / scale

x_rows = np.arange(6.0).reshape(2, 3) ** 2
print(wg.trace(centred_energy, x_rows))
compiled_gradient = wg.grad(wg.compile(centred_energy))
print(np.allclose(compiled_gradient(x_rows), wg.grad(centred_energy)(x_rows)))

def shift_in_place(x):
    x += 1.0
    return x

try:
    wg.compile(shift_in_place)(np.zeros(3))
except TypeError as error:
    print(type(error).__name__, error)"""),
    ("md", """The define-by-run loop of section 1 traces the same way: its loop is unrolled, and
each `if` on a traced value becomes a guard naming the line it came from. The graph is
valid for every input that takes the same branches, and refuses the others.

PyTorch's JIT is often introduced with `@torch.jit.script` as "tracing Python into a
static graph". Two corrections, checked with PyTorch 2.13: `torch.jit.script` does not
trace, it *compiles the function's source*, so both sides of an `if` survive
(`torch.jit.trace` is the tracer: it runs one branch and, with only a `TracerWarning`,
computes the traced branch for every later input: on `leaky` above it returns
`tanh(-1) = -0.7616` where the function gives `-0.1`); and both are deprecated in
PyTorch 2.x in favour of `torch.compile` and `torch.export`. wengert's `wg.compile`
is the tracing kind, made safe by its guards. The example function (`@wg.compile`
works as a decorator too; the plain function is kept here for section 9):"""),
    ("code", """loop_graph = wg.trace(lambda x: forward(x, layers), np.array([0.1, 0.2, 0.3]))
print(loop_graph)
try:
    loop_graph(np.array([3.0, 1.0, 2.0]))
except wg.graph.GuardError as error:
    print(error)

def compute(a, b, c):
    sum_ab = a + b
    result = sum_ab * c
    return result

fast_compute = wg.compile(compute)
print(fast_compute(1.0, 2.0, 3.0), fast_compute(4.0, 5.0, 6.0))
print(wg.grad(fast_compute, argnums=(0, 1, 2))(1.0, 2.0, 3.0))
fast_compute"""),
    ("md", """## 4. The gradient is a graph too

`wg.grad_graph` traces the reverse sweep: the op records' VJP rules are written with
wengert's own ops, so running them on tracers records the backward program as
equations. Each adjoint is named after its value (`t3_bar`), and the result is
ordinary Python you can read, copy and run:"""),
    ("code", """def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)

rng = np.random.default_rng(0)
w0, x0, y0 = rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
grad_program = wg.grad_graph(wg.trace(loss, w0, x0, y0))
display(grad_program)
print(grad_program.to_source())
value, w_bar = grad_program(w0, x0, y0)
np.allclose(w_bar, wg.grad(loss)(w0, x0, y0))"""),
    ("md", """## 5. Optimisation passes

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
through where an equation went.

The same, one pass at a time, drawn: what `simplify` rewrites (amber: an equation
that now reads another value; struck through: one whose value is read as another), what
`cse` merges, and what `dce` then removes. (`fold_constants` has nothing to do here: a
trace computes constant expressions while tracing, so folding acts on graphs built by
hand, by placeholders, or after other rewrites.)"""),
    ("code", """def wasteful(x):
    a = np.sin(x) * 1.0 + 0.0
    b = np.sin(x)                       # the same as a
    unused = np.exp(x) ** 3             # never used
    return np.sum(a * b + np.transpose(np.transpose(x)))

before = wg.trace(wasteful, np.ones((2, 3)))
report = before.optimize(report=True)
display(report)

from wengert.graph.passes import cse, dce, simplify

step = before
for one_pass in (simplify, cse, dce):
    after = one_pass(step)
    display(wg.draw_pass(step, after))
    step = after"""),
    ("md", """What depends only on shapes and dtypes is known before any value is: a zeros array
to fill, ones to scale by. `fold_constants` turns them into constants (one value
broadcast to the shape, whatever its size), and what reads them folds or simplifies in
turn.

Programs written by the computer have more to remove than programs written by
hand. The Hessian of a small energy is traced through reverse mode twice (the rules'
masks, their dtype casts and the seeds' multiplications by one are recomputed at each
level): the passes remove more than two thirds of it."""),
    ("code", """def shifted(x):
    out = np.zeros_like(x)              # x's shape and dtype, not its values
    out[1:] = x[:-1] * np.ones_like(x[:-1])
    return out + np.full_like(x, 0.5)

shift_report = wg.trace(shifted, np.arange(4.0)).optimize(report=True)
print(shift_report)
print(shift_report.after.to_source())

def energy(x):
    return np.sum(np.maximum(x, 0.0) * x) + np.sum(np.tanh(x) ** 2)

hessian_graph = wg.trace(wg.hessian(energy), np.array([0.5, -1.0, 2.0]))
print(hessian_graph.optimize(report=True))"""),
    ("md", """## 6. Memory: liveness and buffer reuse

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
print(f"peak {peak_bytes(mlp_grad) / 1e6:.2f} MB -> {peak_bytes(planned) / 1e6:.2f} MB")
wg.memory_plot({"as traced": memory_timeline(mlp_grad),
                "after plan_memory": memory_timeline(planned)})"""),
    ("md", """## 7. Fusion

An elementwise chain such as `tanh(a * x + b) ** 2` makes NumPy write a full array for
every step. `fuse` turns a chain into one generated kernel that computes it in
cache-sized chunks, writing no intermediate arrays:"""),
    ("code", """from wengert.graph.passes.fuse import fuse

def chain(x):
    return np.sum(np.tanh(np.sin(x) * 0.5 + 0.25) ** 2 * np.exp(-x))

fused = fuse(wg.trace(chain, np.ones(1_000_000)))
print(fused)
print(fused.to_source())"""),
    ("md", """### What a rewrite must preserve

Floating-point addition is not associative, so a compiler that reorders a sum can
change its last bits; and an operation with a side effect (random numbers, reading
outside state) has an order that pure data flow does not capture. Both are easy to
see.

Here the fused kernel gives exactly eager NumPy's number. Side effects are the
harder case. A trace records *operations on traced values*; a NumPy random draw does not
read a traced value, so it runs once, while tracing, and its numbers are frozen into the
graph as a constant. Every later call adds the *same* noise (`jax.jit` does exactly the
same with `np.random`; JAX's answer is to pass the random key in as an argument). Pass
the randomness in as an input:"""),
    ("code", """left, right = (0.1 + 0.2) + 0.3, 0.1 + (0.2 + 0.3)
print(left == right, left - right)

x_big = np.linspace(0.0, 3.0, 1_000_000)
print("fused minus eager:", fused(x_big) - chain(x_big))

noise_source = np.random.default_rng(1)

def noisy(x):
    return x + noise_source.normal(size=x.shape)

print(noisy(np.zeros(2)), noisy(np.zeros(2)))          # eager: new noise each call
frozen = wg.trace(noisy, np.zeros(2))
print(frozen)
print(frozen(np.zeros(2)), frozen(np.zeros(2)))        # traced: the same noise twice

def noisy_input(x, noise):
    return x + noise

fresh = wg.trace(noisy_input, np.zeros(2), np.zeros(2))
print(fresh(np.zeros(2), noise_source.normal(size=2)),
      fresh(np.zeros(2), noise_source.normal(size=2)))"""),
    ("md", """## 8. `wg.compile`: the compiled gradient

`wg.compile(wg.grad(f))` traces the gradient once per input signature, optimises it
and runs the generated code; a scalar program becomes straight-line `math` code on
Python floats. The timings below depend on the machine, so the notebook tests do not
compare this cell's output.

`math.log(-1.0)` and `1.0 / 0.0` raise where NumPy gives NaN or inf with a warning.
The float code keeps eager mode's answers: its steps stand in `try`, and where one
raises, `except FLOAT_ERRORS` computes them again as eager mode does (the float path,
NumPy's answer where that raises). The source alone behaves the same:"""),
    ("varies", """import timeit

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
      f"{t_eager / t_compiled:.0f}x faster")
print(compiled.graph_for(0.3).to_source()[:400])"""),
    ("code", """import warnings

ratio = wg.trace(lambda x: np.log(x) / x, 2.0)
print(ratio.to_source())
namespace = {}
exec(ratio.to_source(), namespace)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(namespace["f"](0.0), namespace["f"](-1.0), ratio(-1.0))
print(sorted({str(w.message) for w in caught}))"""),
    ("md", """## 9. Past one machine: export to JAX

A graph can be written as a `jax.numpy` function, so a model prototyped here moves to
XLA (GPU, TPU, sharding) without rewriting. The source needs no wengert. JAX's own
pipeline is Python function → jaxpr → XLA HLO → machine code; the exported `compute` of
section 3 enters it at the first step: `jax.make_jaxpr` shows the
jaxpr JAX traces from it, the same two equations as wengert's graph, and `jax.grad`
differentiates it (the exported code computes in 64 bits, so JAX's 64-bit mode comes
first, as its header says):"""),
    ("code", """import jax

jax.config.update("jax_enable_x64", True)
source = wg.trace(compute, 1.0, 2.0, 3.0).to_source(target="jax")
print(source)
namespace = {}
exec(source, namespace)
print(jax.make_jaxpr(namespace["compute"])(1.0, 2.0, 3.0).pretty_print(use_color=False))
print([float(g) for g in jax.grad(namespace["compute"], argnums=(0, 1, 2))(1.0, 2.0, 3.0)])"""),
    ("md", """## What a compiler here does not do

Among the optimisations a static graph allows, wengert implements fusion, constant
folding, common subexpression elimination, algebraic simplification and memory
planning (sections 5–7). It does **not** choose tensor layouts (row-major against
channels-last) or plan parallel execution across devices: it runs on NumPy, on one
CPU, in NumPy's layouts. Export to JAX (section 9) is the way to those.

## Exercises

1. Build $f(u, v) = u^2 v + \\sin(u)$ with two placeholders, and run its value and
   both partial derivatives (`wg.gradients`) in one `Session` at $(u, v) = (1, 2)$.
   Check against the hand derivatives $2uv + \\cos u$ and $u^2$."""),
    ("solution", """u = wg.placeholder((), name="u")
v = wg.placeholder((), name="v")
f = u ** 2 * v + np.sin(u)
with wg.Session() as sess:
    value, (du, dv) = sess.run([f, wg.gradients(f, [u, v])], {u: 1.0, v: 2.0})
print(value, du, dv)
print(np.isclose(du, 2 * 1.0 * 2.0 + np.cos(1.0)), np.isclose(dv, 1.0))"""),
    ("md", """2. `clipped(x) = np.sum(x) if np.max(x) < 1 else np.sum(np.minimum(x, 1))` has a
   Python branch. Trace it at `np.zeros(3)` and show that the graph refuses
   `np.full(3, 2.0)`; then make one graph that is right for both, with `np.where` (or
   `np.minimum` alone), and check it against the function on both inputs."""),
    ("solution", """def clipped(x):
    if np.max(x) < 1:
        return np.sum(x)
    return np.sum(np.minimum(x, 1.0))

g = wg.trace(clipped, np.zeros(3))
try:
    g(np.full(3, 2.0))
except wg.graph.GuardError:
    print("refused: the guard on np.max(x) < 1 fails")

one_graph = wg.trace(lambda x: np.sum(np.minimum(x, 1.0)), np.zeros(3))
for x in (np.zeros(3), np.full(3, 2.0)):
    print(one_graph(x), clipped(x))"""),
    ("md", """3. Trace the gradient of `lambda x: np.sum(np.exp(x) * np.exp(x))` with
   `wg.grad_graph(wg.trace(...))` and optimise it with `report=True`. Which pass merges
   the two `exp` calls?"""),
    ("solution", """g = wg.grad_graph(wg.trace(lambda x: np.sum(np.exp(x) * np.exp(x)), np.ones(2)))
print(g.optimize(report=True))"""),
    ("md", """## What to read next

* `09_higher_order.ipynb`: Hessians, forward-over-reverse (whose traced graphs
  section 5 shrank);
* `11_training_a_small_model.ipynb`: a training loop, where a compiled gradient pays
  off on every step;
* `08_controlling_gradient_flow.ipynb`: `no_grad`, `stop_gradient` and checkpointing,
  which the graphs above keep."""),
]


if __name__ == "__main__":
    write("10_static_vs_dynamic_graphs", CELLS)
