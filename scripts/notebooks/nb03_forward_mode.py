"""Writes notebooks/03_forward_mode.ipynb (without outputs).

scripts/execute_notebooks.py runs it.
"""

from __future__ import annotations

from build import write

CELLS: list[tuple[str, str]] = [
    ("md", r"""# 03 · Forward mode: dual numbers

Forward-mode automatic differentiation carries a derivative *along with* every value, in
the order the program runs. In this notebook you will

1. build **dual numbers** by hand in twenty lines of Python, and differentiate with them;
2. use wengert's `wg.Dual`, `wg.derivative` and `wg.jvp`, on numbers and arrays;
3. plot functions with their derivatives and tangent lines;
4. watch the tangents travel through a graph, in the `%%autodiff` card and the explorer;
5. reproduce **perturbation confusion**, the classic bug of nested forward mode, and fix it.

It follows `02_computational_graphs.ipynb` (graphs and topological order); the other mode
is `04_reverse_mode.ipynb`."""),
    ("code", r"""import math

import numpy as np

import wengert as wg
from wengert.jupyter import plots

np.set_printoptions(precision=4, suppress=True)
%load_ext wengert"""),
    ("md", r"""## 1. Dual numbers by hand

A **dual number** is $a + b\,\varepsilon$, where $\varepsilon$ is a new symbol with
$\varepsilon^2 = 0$ (and $\varepsilon \ne 0$). Multiply two of them and the $\varepsilon^2$
term vanishes:

$$(a + b\varepsilon)(c + d\varepsilon) = ac + (ad + bc)\,\varepsilon,$$

which is the product rule. In general, Taylor's theorem gives
$f(a + b\varepsilon) = f(a) + f'(a)\,b\,\varepsilon$ exactly, because every higher power of
$\varepsilon$ is zero. So evaluating $f$ on $x + 1\varepsilon$ returns $f(x)$ as the
**primal** part and $f'(x)$ as the **tangent** part. A class does it:"""),
    ("code", r"""class Dual:
    def __init__(self, primal, tangent=0.0):
        self.primal, self.tangent = primal, tangent

    def __repr__(self):
        return f"{self.primal:.6g} + {self.tangent:.6g}ε"

    @staticmethod
    def lift(v):
        return v if isinstance(v, Dual) else Dual(v)

    def __add__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal + other.primal, self.tangent + other.tangent)

    def __mul__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal * other.primal,
                    self.primal * other.tangent + self.tangent * other.primal)

    __radd__, __rmul__ = __add__, __mul__

def sin(d):
    d = Dual.lift(d)
    return Dual(math.sin(d.primal), math.cos(d.primal) * d.tangent)

def f(x):
    return x * sin(x) + x

x = Dual(2.0, 1.0)
print("f(2 + ε) =", f(x))
print("by hand:  f(2) =", 2 * math.sin(2) + 2, "  f'(2) =", math.sin(2) + 2 * math.cos(2) + 1)"""),
    ("md", r"""The same rule, stated for a node of a graph with any number of inputs, is the
conceptual `forward_ad_node` of one of the source documents: the output's primal is the
operation on the input primals, and its tangent is the sum, over the inputs, of the
local partial derivative times that input's tangent,

$$\dot v = \sum_i \frac{\partial v}{\partial u_i}\,\dot u_i .$$

Made runnable (each operation given with its partial derivatives):"""),
    ("code", r"""def forward_ad_node(operation, op_gradient, inputs):
    primals = [u.primal for u in inputs]
    primal = operation(*primals)
    tangent = sum(op_gradient(i, primals) * inputs[i].tangent for i in range(len(inputs)))
    return Dual(primal, tangent)

multiply = (lambda u, v: u * v, lambda i, p: p[1] if i == 0 else p[0])
add = (lambda u, v: u + v, lambda i, p: 1.0)

# y = (a + b) * c with the tangent seeded on a: dy/da = c
a, b, c = Dual(1.0, 1.0), Dual(2.0, 0.0), Dual(3.0, 0.0)
s = forward_ad_node(*add, [a, b])
y = forward_ad_node(*multiply, [s, c])
y"""),
    ("md", r"""One pass gives the derivative with respect to **one** direction: here the seed was
on $a$. For $\partial y/\partial b$ and $\partial y/\partial c$ we would run twice more,
with the seed moved. That is the defining trade-off of forward mode: one pass per input
direction, against reverse mode's one pass per output.

## 2. `wg.Dual`, `wg.derivative` and `wg.jvp`

wengert's `wg.Dual(primal, tangent)` is the same idea, for every NumPy operation: each
primitive applies its NumPy function to the primal and its derivative rule (a
*Jacobian-vector product*, JVP) to the tangent:"""),
    ("code", r"""d = wg.Dual(2.0, 1.0)
out = d * np.sin(d) + d
print(out)
print("primal", out.primal, "  tangent", out.tangent)"""),
    ("md", r"""On arrays the tangent is a *direction*, and the output's tangent is the Jacobian
times that direction, $J\,v$, without the Jacobian ever being formed:"""),
    ("code", r"""x = wg.Dual(np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0, 0.0]))
np.exp(x) * x.sum()"""),
    ("md", r"""You rarely build duals yourself. `wg.derivative(f)` is the derivative of a function
of one number, and `wg.jvp(f, primals, tangents)` returns $f(x)$ and $J\,v$ for any
function of arrays (build an array from several values with `np.stack`; `np.array` of a
list of duals would drop their tangents, and refuses):"""),
    ("code", r"""g = lambda x: x * np.sin(x) + x
print("wg.derivative:", wg.derivative(g)(2.0))

def h(v):
    return np.stack([v[0] * v[1], np.sin(v[0]) + v[1] ** 2, np.exp(v[1])])

value, tangent = wg.jvp(h, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
print("h(v) =", value, "  J e₀ =", tangent)
print("jacfwd, one column per pass:\n", wg.jacfwd(h)(np.array([1.0, 2.0])))"""),
    ("md", r"""## 3. Derivatives you can see

`plots.derivative_plot` draws $f$ with its tangent lines above and $f'$ (computed by forward
mode, on the whole grid at once) below: the slope of each tangent line above is the height
of the marker below."""),
    ("code", r"""plots.derivative_plot(lambda x: x * np.sin(x) + x, (-6.0, 6.0),
                      at=[-4.0, 0.0, 2.0])"""),
    ("md", r"""Forward mode differentiates any code that runs on numbers, including control flow:
the branch taken at each point is the one differentiated. A function written with a Python
`if`, with a kink at 1 (the plot differentiates it point by point with `wg.derivative`):"""),
    ("code", r"""def soft_clip(x):
    if x > 1.0:
        return 1.0 + 0.5 * np.log(x)
    return x

plots.derivative_plot(soft_clip, (-2.0, 4.0), at=[0.5, 2.5])"""),
    ("md", r"""## 4. Tangents travelling through a graph

`%%autodiff --mode forward` gives **each input its own perturbation** $\varepsilon_1,
\varepsilon_2, \dots$ and runs the cell once. For $y = (a + b)\,c$ every value is
$p + t_1\varepsilon_1 + t_2\varepsilon_2 + t_3\varepsilon_3 + \dots$, so the output's tangents
are the three partial derivatives (the cross terms such as $\varepsilon_1\varepsilon_3$ are
second derivatives)."""),
    ("code", r"""%%autodiff a b c --mode forward --as fwd
a, b, c = 1.0, 2.0, 3.0
y = (a + b) * c"""),
    ("md", r"""The explorer shows, node by node in topological order, each primal with its
tangents:"""),
    ("code", r"""fwd.explore()"""),
    ("md", r"""`--mode both` runs the cell once with the perturbations *and* sweeps backwards over
the same tape, and checks that the two modes agree (the card says so):"""),
    ("code", r"""%%autodiff a b c --mode both
a, b, c = 1.0, 2.0, 3.0
y = (a + b) * c"""),
    ("md", r"""## 5. Perturbation confusion

Nesting derivatives is where naive forward mode goes wrong. Take

$$\frac{d}{dx}\Big[\, x \cdot \frac{d}{dy}(x + y)\Big|_{y=1} \Big]_{x=1}.$$

The inner derivative is $1$ whatever $x$ is, so the answer is $\frac{d}{dx}[x] = 1$. With
the hand-made duals, where every derivative uses the same $\varepsilon$:"""),
    ("code", r"""def naive_derivative(f):
    return lambda x: f(Dual(x, 1.0)).tangent

naive_derivative(lambda x: x * naive_derivative(lambda y: x + y)(1.0))(1.0)"""),
    ("md", r"""**2**, and wrong. Inside, `x` is already $1 + \varepsilon$ (the outer perturbation)
and `y` is $1 + \varepsilon$ (the inner one); `x + y` $= 2 + 2\varepsilon$, and the inner
derivative reads the tangent 2, counting the outer perturbation as if it were its own.
This is **perturbation confusion** (Siskind and Pearlmutter, 2005).

The fix is to give each derivative its own $\varepsilon$, a **tag**, so that
$\varepsilon_1$ and $\varepsilon_2$ are different symbols
($\varepsilon_1^2 = \varepsilon_2^2 = 0$ but $\varepsilon_1\varepsilon_2 \ne 0$). A tagged
dual's primal and tangent may themselves be duals of an outer tag; an operation splits
its arguments along the innermost tag it sees:"""),
    ("code", r"""class Tagged:
    def __init__(self, tag, primal, tangent):
        self.tag, self.primal, self.tangent = tag, primal, tangent

def split(v, tag):
    # v = primal + tangent·ε_tag (an untagged value, or one of an outer tag, has tangent 0)
    if isinstance(v, Tagged) and v.tag == tag:
        return v.primal, v.tangent
    return v, 0.0

def innermost(u, v):
    return max(w.tag for w in (u, v) if isinstance(w, Tagged))

def t_add(u, v):
    tag = innermost(u, v)
    (up, ut), (vp, vt) = split(u, tag), split(v, tag)
    return Tagged(tag, t_add(up, vp) if tagged(up, vp) else up + vp,
                  t_add(ut, vt) if tagged(ut, vt) else ut + vt)

def t_mul(u, v):
    tag = innermost(u, v)
    (up, ut), (vp, vt) = split(u, tag), split(v, tag)
    def mul(p, q):
        return t_mul(p, q) if tagged(p, q) else p * q
    def add(p, q):
        return t_add(p, q) if tagged(p, q) else p + q
    return Tagged(tag, mul(up, vp), add(mul(up, vt), mul(ut, vp)))

def tagged(*values):
    return any(isinstance(w, Tagged) for w in values)

Tagged.__add__ = Tagged.__radd__ = t_add
Tagged.__mul__ = Tagged.__rmul__ = t_mul

TAGS = iter(range(1, 1_000_000))

def tagged_derivative(f):
    def df(x):
        tag = next(TAGS)                       # a fresh ε for this derivative
        return split(f(Tagged(tag, x, 1.0)), tag)[1]
    return df

tagged_derivative(lambda x: x * tagged_derivative(lambda y: x + y)(1.0))(1.0)"""),
    ("md", r"""**1**, as it should be. wengert does the same: each `wg.derivative` (and each `jvp`,
`grad`, ...) works at a level of its own, kept in a context variable, so perturbations
never mix, however the transforms are nested, forward and reverse alike (JAX's `jvp`,
`torch.func.jvp` and HIPS autograd's `grad` also answer 1 here):"""),
    ("code", r"""print(wg.derivative(lambda x: x * wg.derivative(lambda y: x + y)(1.0))(1.0))
print(wg.grad(lambda x: x * wg.derivative(lambda y: x + y)(1.0))(1.0))
# d/dx [x · d/dy (x·y)] = d/dx [x · x] = 2x, which is 6 at x = 3
print(wg.derivative(lambda x: x * wg.grad(lambda y: x * y)(1.0))(3.0))"""),
    ("md", r"""So forward and reverse mode compose in any order. The third derivative of
$t \sin t$, three ways and by hand:"""),
    ("code", r"""f3 = lambda t: np.sin(t) * t
t = 0.7
print(wg.derivative(wg.derivative(wg.derivative(f3)))(t), " forward over forward over forward")
print(wg.grad(wg.grad(wg.grad(f3)))(t), " reverse over reverse over reverse")
print(wg.grad(wg.derivative(wg.grad(f3)))(t), " mixed")
print(-3 * np.sin(t) - t * np.cos(t), " by hand: -3 sin t - t cos t")"""),
    ("md", r"""A dual number also refuses to be turned into a plain float, which would silently drop
its tangent:"""),
    ("code", r"""try:
    float(wg.Dual(1.0, 1.0))
except TypeError as err:
    print(err)"""),
    ("md", r"""## Exercises

1. Add division to the hand-made `Dual` (a `__truediv__`: the tangent of $u/v$ is
   $(\dot u\,v - u\,\dot v)/v^2$) and check $\frac{d}{dx}\frac{x}{1 + x^2}$ at $x = 1$
   (it is 0) against `wg.derivative`.
2. With one `wg.jvp` call, compute the directional derivative of
   $r(v) = \sum_i \big(100(v_{i+1} - v_i^2)^2 + (1 - v_i)^2\big)$ at $v = (-1.2, 1, 0.5)$
   in the direction $(1, 1, 1)$, and check it against `wg.grad(r)(v) @ (1, 1, 1)`."""),
    ("solution", r"""def truediv(u, v):
    u, v = Dual.lift(u), Dual.lift(v)
    return Dual(u.primal / v.primal,
                (u.tangent * v.primal - u.primal * v.tangent) / v.primal ** 2)

Dual.__truediv__ = truediv
print("hand-made:    ", (lambda x: x / (1.0 + x * x))(Dual(1.0, 1.0)).tangent)
print("wg.derivative:", wg.derivative(lambda x: x / (1.0 + x * x))(1.0))"""),
    ("solution", r"""def r(v):
    return np.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2)

v0, direction = np.array([-1.2, 1.0, 0.5]), np.ones(3)
print("jvp:      ", wg.jvp(r, (v0,), (direction,))[1])
print("grad @ d: ", wg.grad(r)(v0) @ direction)"""),
    ("md", r"""## What next

- `04_reverse_mode.ipynb`: the other mode, which gets a whole gradient in one backward
  sweep.
- `05_vjps_without_jacobians.ipynb`: forward against reverse mode by the shape of the
  Jacobian.
- `09_higher_order.ipynb`: forward over reverse for Hessians and Newton's method."""),
]

if __name__ == "__main__":
    write("03_forward_mode", CELLS)
