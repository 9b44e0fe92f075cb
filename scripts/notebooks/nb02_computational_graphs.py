"""Writes notebooks/02_computational_graphs.ipynb (without outputs).

scripts/execute_notebooks.py runs it.
"""

from __future__ import annotations

from build import write

CELLS: list[tuple[str, str]] = [
    ("md", r"""# 02 · Computational graphs: nodes, edges and the order of evaluation

Every automatic-differentiation system, wengert included, rests on one data structure:
the **computational graph** of the program. In this notebook you will

1. build a graph by hand for $y = (a + b)\,c$, find a topological order and evaluate it
   node by node;
2. see the same graph recorded by wengert as ordinary code runs, and drawn;
3. take apart a squared error $L = (x\,w + b - y)^2$ into primitives, and step through
   its evaluation in the explorer;
4. count how many valid evaluation orders a graph has, and see why values are stored
   once and shared;
5. compare **coarse** and **fine** graphs of the same computation (a layer
   normalisation as one node, or as a dozen).

Notebook `04_reverse_mode.ipynb` then walks these graphs backwards to get gradients."""),
    ("code", r"""import itertools

import numpy as np

import wengert as wg

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert"""),
    ("md", r"""## 1. A graph by hand

A computational graph is a **directed acyclic graph** (DAG). Each node is an input, a
constant, or a primitive operation applied to other nodes; each **edge** $u \to v$ says
that the value of $u$ is an argument of $v$. For $y = (a + b)\,c$:

```
a ──┐
    ├─(+)── s ──┐
b ──┘           ├─(×)── y
c ──────────────┘
```

A note on terminology: one of the source documents of this course says that nodes
represent variables and *edges represent operations*. Its own diagram (and every
framework) draws it the other way: the operations `+` and `×` are nodes, and an edge
only carries a value from the node that produced it to a node that consumes it. That is
the convention used here and in wengert.

In Python, a graph can be a dictionary from each node's name to its operation and the
names of its inputs:"""),
    ("code", r"""graph = {
    "a": ("input", []),
    "b": ("input", []),
    "c": ("input", []),
    "s": ("+", ["a", "b"]),
    "y": ("×", ["s", "c"]),
}
edges = [(u, v) for v, (_, inputs) in graph.items() for u in inputs]
edges"""),
    ("md", r"""## 2. Topological order

To evaluate the graph, each node must come after all of its inputs. An ordering of the
nodes in which every edge points from an earlier node to a later one is a **topological
order**; it exists exactly because the graph has no cycle. Kahn's algorithm finds one:
repeatedly take a node none of whose inputs is still waiting. (It is a loop, not a
recursion: wengert's own graphs may have millions of nodes.)"""),
    ("code", r"""def topological_order(graph):
    waiting = {name: len(inputs) for name, (_, inputs) in graph.items()}
    consumers = {name: [] for name in graph}
    for name, (_, inputs) in graph.items():
        for u in inputs:
            consumers[u].append(name)
    ready = [name for name, k in waiting.items() if k == 0]
    order = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for v in consumers[name]:
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
    if len(order) != len(graph):
        raise ValueError("the graph has a cycle")
    return order

topological_order(graph)"""),
    ("md", r"""**Forward evaluation** visits the nodes in that order, computes each value from the
values of its inputs, stores it at the node, and finally reads the output node. Each
node therefore holds (1) its operation, (2) references to its inputs and, once
evaluated, (3) its value:"""),
    ("code", r"""OPS = {"+": lambda u, v: u + v, "-": lambda u, v: u - v, "×": lambda u, v: u * v}

def evaluate(graph, inputs, output, show=True):
    values = {}
    for name in topological_order(graph):
        op, args = graph[name]
        if op == "input":
            values[name] = inputs[name]
        else:
            values[name] = OPS[op](*(values[u] for u in args))
        if show:
            if op == "input":
                how = "given"
            elif len(args) == 1:
                how = f"{op}({args[0]})"
            else:
                how = f" {op} ".join(args)
            print(f"  {name:>3} = {how:<10} = {values[name]}")
    return values[output]

print("y =", evaluate(graph, {"a": 1.0, "b": 2.0, "c": 3.0}, "y"))
print("y =", evaluate(graph, {"a": 4.0, "b": 5.0, "c": 6.0}, "y", show=False))"""),
    ("md", r"""The graph is built once and evaluated with different inputs: $(1+2)\cdot 3 = 9$ and
$(4+5)\cdot 6 = 54$, the two numbers of the TensorFlow 1 example in the source documents
(its define-and-run `Session` is in notebook `10_static_vs_dynamic_graphs.ipynb`).

## 3. The same graph, recorded by wengert

wengert builds the graph *while the code runs* (define-by-run): each operation on a
tensor computes its value and records a node. This is the PyTorch example of the source
documents, with `wg.tensor` for `torch.tensor`:"""),
    ("code", r"""a = wg.tensor(1.0, requires_grad=True)
b = wg.tensor(2.0, requires_grad=True)
c = wg.tensor(3.0, requires_grad=True)

sum_ab = a + b
result = sum_ab * c
tape = wg.tape_of(result)   # the recorded graph, read in the next cell

result.backward()

print(result)
print(a.grad, b.grad, c.grad)"""),
    ("md", r"""All three gradients are 3, as the document says (and PyTorch prints
`tensor(3.)` three times): $\partial y/\partial a = \partial y/\partial b = c = 3$ and
$\partial y/\partial c = a + b = 3$.

`wg.tape_of(y)` reads back the recorded nodes, in the order they ran (a topological
order, by construction); each equation holds its operation, its inputs and its value:"""),
    ("code", r"""for eq in tape.equations:
    inputs = [v.name for v in eq.ins]
    print(f"{str(eq):28}  op={eq.op.name:9} inputs={inputs}  value={eq.value}")"""),
    ("md", r"""`wg.draw` draws it with Graphviz: blue double rings are leaves that require a
gradient, boxes are equations, with their values (and, after `backward()`, their
adjoints, the subject of notebook `04_reverse_mode.ipynb`). The tape calls its
leaves `x0`, `x1`, … and its equations `t0`, `t1`, …; `names=` shows yours instead:"""),
    ("code", r"""names = {"x0": "a", "x1": "b", "x2": "c", "t0": "sum_ab", "t1": "result"}
wg.draw(result, names=names)"""),
    ("md", r"""## 4. A squared error, primitive by primitive

The single squared-error term of a linear model, $L = (x\,w + b - y)^2$, decomposes into
four primitives:

```
t1 = x * w      # multiply
t2 = t1 + b     # add
t3 = t2 - y     # subtract
L  = t3 * t3    # square
```

The nodes are $\{x, w, b, y, t_1, t_2, t_3, L\}$, and the edges encode the dependencies,
$x \to t_1$, $w \to t_1$, $t_1 \to t_2$, $b \to t_2$, and so on. By hand first:"""),
    ("code", r"""loss_graph = {
    "x": ("input", []), "w": ("input", []), "b": ("input", []), "y": ("input", []),
    "t1": ("×", ["x", "w"]),
    "t2": ("+", ["t1", "b"]),
    "t3": ("-", ["t2", "y"]),
    "L": ("×", ["t3", "t3"]),
}
data = {"x": 1.5, "w": 0.8, "b": 0.1, "y": 1.0}
print("L =", evaluate(loss_graph, data, "L"))"""),
    ("md", r"""Now the same cell under `%%autodiff`, with the parameters $w, b$ as inputs and the
data $x, y$ as constants. `--show tape,graph` adds the recorded equations and their drawing
to the card (constants are grey and dashed). The card names each value as the cell
does (`t1`, `L`) and also shows the tape's own numbering (`t0` … `t3`) beside it:"""),
    ("code", r"""x, y = 1.5, 1.0"""),
    ("code", r"""%%autodiff w b --show tape,graph --as squared_error
w, b = 0.8, 0.1
t1 = x * w
t2 = t1 + b
t3 = t2 - y
L = t3 * t3"""),
    ("md", r"""### Evaluated step by step

The explorer replays the forward evaluation one equation at a time, in topological order
(and then the reverse sweep, which `04_reverse_mode.ipynb` explains). Step with the
buttons, the slider or the arrow keys; the current node is highlighted in the graph and in
the table."""),
    ("code", r"""squared_error.explore()"""),
    ("md", r"""## 5. How many topological orders?

A topological order is rarely unique: any node whose inputs are ready may go next. For
the squared error, the four inputs can come in any order, and `y` may even wait until
just before `t3`. Counting the orderings of the 8 nodes that respect every edge (there are
$8! = 40320$ orderings to check):"""),
    ("code", r"""def respects_edges(order, graph):
    position = {name: k for k, name in enumerate(order)}
    return all(position[u] < position[v] for v, (_, inputs) in graph.items() for u in inputs)

valid = [order for order in itertools.permutations(loss_graph)
         if respects_edges(order, loss_graph)]
print(len(valid), "valid orders, for example:")
for order in valid[:2] + valid[-2:]:
    print("  ", " → ".join(order))"""),
    ("md", r"""Forward evaluation may use any of them; wengert's tape simply uses the order the
code ran in. **Reverse** topological order (any of these, read backwards) is what
gradient computation uses, because the gradient at a node needs the gradients at all of
its consumers first.

### A value is stored once, and shared

In `L = t3 * t3`, the node `t3` feeds the multiply **twice**: two edges leave it, but
its value was computed once and is stored once. The same holds when an intermediate feeds
several different nodes: here `u = sin(x)` is used three times, and the tape has a single
`sin`:"""),
    ("code", r"""z = wg.tensor(0.5, requires_grad=True)
u = np.sin(z)
v = u * u + u
for eq in wg.tape_of(v).equations:
    print(eq)"""),
    ("md", r"""`t0` (the `sin`) appears as an input three times: one node, three outgoing edges.
(Finding nodes that compute the *same* thing twice and merging them, *common
subexpression elimination*, is a graph optimisation; see
`10_static_vs_dynamic_graphs.ipynb`.)

## 6. Granularity: coarse and fine nodes

What counts as *one* node is a design choice. A graph can be **coarse**, with a whole
layer such as a layer normalisation as one node, or **fine**, with every elementwise
multiply and every reduction a node of its own. Coarse graphs are easier to read and map
onto optimised library kernels; fine graphs expose more structure (a compiler can fuse
elementwise operations). Frameworks usually show a coarse graph to the user and lower it
to a finer one internally.

Layer normalisation, $\mathrm{LN}(x) = \dfrac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}$ with
$\mu$ and $\sigma^2$ the mean and variance of $x$, at three granularities. **Fine**: only
sums and elementwise arithmetic."""),
    ("code", r"""EPS = 1e-5

def layer_norm_fine(x):
    n = x.size
    mean = np.sum(x) / n
    centred = x - mean
    variance = np.sum(centred * centred) / n
    return centred / np.sqrt(variance + EPS)

def layer_norm_medium(x):
    return (x - np.mean(x)) / np.sqrt(np.var(x) + EPS)"""),
    ("md", r"""**Coarse**: the whole layer is one node, with its own hand-written derivative rule
(a vector-Jacobian product, notebook `05_vjps_without_jacobians.ipynb`). With
$z = \mathrm{LN}(x)$ and $s = \sqrt{\sigma^2+\epsilon}$, the rule is
$\bar x = \big(\bar z - \operatorname{mean}(\bar z) - z\,\operatorname{mean}(\bar z\, z)\big)/s$.
`wg.custom_vjp` records the function as one node named after it:"""),
    ("code", r"""@wg.custom_vjp
def layer_norm(x):
    return layer_norm_medium(x)

def layer_norm_fwd(x):
    s = np.sqrt(np.var(x) + EPS)
    z = (x - np.mean(x)) / s
    return z, (z, s)

def layer_norm_bwd(saved, z_bar):
    z, s = saved
    return ((z_bar - np.mean(z_bar) - z * np.mean(z_bar * z)) / s,)

layer_norm.defvjp(layer_norm_fwd, layer_norm_bwd)"""),
    ("md", r"""The three graphs of the same loss, $\sum_i \mathrm{LN}(x)_i\, c_i$, and their
gradients:"""),
    ("code", r"""x0 = np.array([0.5, -1.0, 2.0, 0.0])
weights = np.array([1.0, 2.0, 3.0, 4.0])

for ln in [layer_norm, layer_norm_medium, layer_norm_fine]:
    xt = wg.tensor(x0, requires_grad=True)
    loss = np.sum(ln(xt) * weights)
    loss.backward()
    ops = [eq.op.name for eq in wg.tape_of(loss).equations]
    print(f"{ln.__name__:18} {len(ops):2} equations  grad {xt.grad}")
    print(f"{'':18} {' '.join(ops)}")"""),
    ("md", r"""Same numbers, three different graphs. The fine graph, drawn:"""),
    ("code", r"""xt = wg.tensor(x0, requires_grad=True)
wg.draw(np.sum(layer_norm_fine(xt) * weights), names={"x0": "x"})"""),
    ("md", r"""## Exercises

1. How many topological orders does the graph of $y = (a + b)\,c$ have? Count them
   with `respects_edges`, then explain the number.
2. Write $f(x) = x \sin x + x$ in the dictionary format (add a `"sin"` entry to `OPS`
   that takes one argument), evaluate it at $x = 2$, and compare the order and the
   value with `wg.tape_of`."""),
    ("solution", r"""orders = [o for o in itertools.permutations(graph) if respects_edges(o, graph)]
print(len(orders))
# y depends on every other node, so it comes last. Of the 4! = 24 orders of
# a, b, c, s, those with s after both a and b are one in three: 24 / 3 = 8."""),
    ("solution", r"""OPS["sin"] = np.sin
f_graph = {
    "x": ("input", []),
    "s": ("sin", ["x"]),
    "p": ("×", ["x", "s"]),
    "f": ("+", ["p", "x"]),
}
print("by hand:", evaluate(f_graph, {"x": 2.0}, "f"))
xt = wg.tensor(2.0, requires_grad=True)
ft = xt * np.sin(xt) + xt
for eq in wg.tape_of(ft).equations:
    print(eq, "=", eq.value)"""),
    ("md", r"""## What next

- `03_forward_mode.ipynb`: carry a derivative along with each value, in topological
  order.
- `04_reverse_mode.ipynb`: walk the graph in reverse topological order and get every
  partial derivative in one sweep.
- `10_static_vs_dynamic_graphs.ipynb`: graphs built before they run (define-and-run),
  tracing, and the optimisations a whole graph allows."""),
]

if __name__ == "__main__":
    write("02_computational_graphs", CELLS)
