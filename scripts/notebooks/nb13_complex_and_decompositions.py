"""Writes notebooks/13_complex_and_decompositions.ipynb (without outputs).

Run it, then
``scripts/execute_notebooks.py notebooks/13_complex_and_decompositions.ipynb``.
The notebook teaches wengert's convention for complex numbers (HIPS autograd's),
gradients through ``np.fft`` and through ``np.linalg`` decompositions.
"""

# ruff: noqa: E501  (the cells' text keeps its own line width)
from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build import write  # noqa: E402

CELLS: list[tuple[str, str]] = [
    ("md", """# 13 · Complex numbers, FFTs and decompositions

**What you will learn.** wengert differentiates the NumPy code people write for signal processing and linear algebra too:
complex arithmetic, `np.fft`, and the decompositions of `np.linalg`. This notebook shows the one
convention wengert uses for complex numbers (HIPS autograd's), checks it against finite differences,
and differentiates through an FFT, a general eigen-decomposition and NumPy's one-triangle `eigh`.

1. the convention for complex inputs, checked by finite differences; complex outputs
   and `holomorphic=True`;
2. a gradient through `np.fft`;
3. gradients through `np.linalg` decompositions (`eig`, `eigh`);
4. NumPy conveniences that keep their gradients.

It assumes reverse mode (`04_reverse_mode.ipynb`) and the Jacobians of
`05_vjps_without_jacobians.ipynb`."""),
    ("code", """import numpy as np
import wengert as wg
import wengert.numpy as wnp

np.set_printoptions(precision=4, suppress=True)"""),
    ("md", """## 1. The convention: the gradient of a real function of $z = x + iy$

For a real-valued $f(z)$ wengert's gradient is $\\partial f/\\partial x - i\\,\\partial f/\\partial y$.
For $f(z) = |z|^2 = x^2 + y^2$ that is $2x - 2iy = 2\\bar z$:"""),
    ("code", """z = 1 + 2j
wg.grad(lambda z: np.abs(z) ** 2)(z)"""),
    ("md", """Why this convention? For a *holomorphic* function it is the ordinary complex derivative (so every
holomorphic rule — `exp`, `sin`, `@`, `inv` — is the same as for real numbers), and for a real loss
it points the way to step: moving $z$ by $-\\eta\\,\\overline{\\nabla f}$ decreases $f$ fastest.
Check both claims against finite differences along the real and the imaginary axis:"""),
    ("code", """f = lambda z: np.abs(np.exp(z) - 2.0) ** 2
z, h = 0.3 + 0.4j, 1e-6
g = wg.grad(f)(z)
by_x = (f(z + h) - f(z - h)) / (2 * h)            # ∂f/∂x
by_y = (f(z + 1j * h) - f(z - 1j * h)) / (2 * h)  # ∂f/∂y
print(g, by_x - 1j * by_y)
print(wg.derivative(np.sin)(z), np.cos(z))         # holomorphic: the complex derivative"""),
    ("md", """A real input always gets a real gradient, even when the function uses complex numbers inside
(here $\\mathrm{Re}\\, e^{ix} = \\cos x$):"""),
    ("code", """wg.grad(lambda x: np.real(np.exp(1j * x)))(0.3), -np.sin(0.3)"""),
    ("md", """`wg.check_grads` perturbs complex inputs along both axes, to second order, in forward and reverse mode:"""),
    ("code", """wg.check_grads(lambda z: np.sum(np.abs(np.tanh(z)) ** 2), (np.array([0.5 + 0.2j, -1.0 + 0.7j]),),
               order=2, modes=("rev", "fwd"))"""),
    ("md", """A complex *output* has no gradient (there is no single direction of steepest ascent); `wg.grad`
says so and what to do, as JAX does:"""),
    ("code", """try:
    wg.grad(lambda z: np.exp(z))(1j)
except TypeError as e:
    print(e)"""),
    ("md", """For a *holomorphic* function the complex derivative $f'(z)$ does exist, and `holomorphic=True`
(JAX's flag) asks for it. `jacfwd` and `jacrev` take it too: the Jacobian of `np.fft.fft` is the DFT
matrix itself. The flag is a promise wengert does not check: on a function that is not holomorphic
(`abs`, `conj`) the two modes give different, meaningless answers."""),
    ("code", """print(wg.grad(lambda z: z ** 3, holomorphic=True)(1 + 1j), 3 * (1 + 1j) ** 2)
dft = wg.jacrev(np.fft.fft, holomorphic=True)(np.zeros(4, dtype=complex))
np.allclose(dft, np.fft.fft(np.eye(4)))"""),
    ("md", """## 2. Through an FFT

A low-pass filter written with `np.fft.rfft` / `irfft`: how does the filtered signal's energy at one
sample depend on every input sample? One reverse sweep gives all 64 derivatives; the VJP of an FFT is
another FFT, so no 64×33 Jacobian is ever built."""),
    ("code", """n = 64
t = np.arange(n) / n
signal = np.sin(2 * np.pi * 3 * t) + 0.5 * np.sin(2 * np.pi * 20 * t)
keep = (np.arange(n // 2 + 1) < 8).astype(float)   # frequencies 0..7 pass


def smoothed(x):
    return np.fft.irfft(np.fft.rfft(x) * keep, n)


loss = lambda x: smoothed(x)[10] ** 2
g = wg.grad(loss)(signal)
print(g[:6])
wg.check_grads(loss, (signal,), order=2, modes=("rev", "fwd"))"""),
    ("md", """## 3. Decompositions

`np.linalg.eig` of a general (non-symmetric) matrix has complex eigenvalues. The gradient of a real
function of them, here the spectral radius, is a real matrix: """),
    ("code", """a = np.array([[0.0, -2.0, 0.5], [1.0, 0.0, 0.3], [0.2, 0.1, -0.5]])
print(np.linalg.eigvals(a))
radius = lambda a: np.max(np.abs(np.linalg.eigvals(a)))
print(wg.grad(radius)(a))
wg.check_grads(radius, (a,), order=1, modes=("rev", "fwd"))"""),
    ("md", """`np.linalg.eigh` reads only one triangle of its input (the lower one unless `UPLO='U'`), so the
other triangle does not change the result and gets no gradient — the derivative of the function NumPy
computes. (JAX symmetrises instead, PyTorch returns a symmetric gradient; through a symmetric
parametrisation such as `eigh(b + b.T)` all of them agree.)"""),
    ("code", """m = np.array([[2.0, 5.0], [1.0, 3.0]])   # the 5.0 above the diagonal is never read
print(wg.grad(lambda m: np.sum(np.linalg.eigh(m)[0] ** 2))(m))
print(wg.grad(lambda m: np.sum(np.linalg.eigh(m, UPLO="U")[0] ** 2))(m))"""),
    ("md", """## 4. NumPy's conveniences

Lists of tensors, `np.r_`-style index tricks and `np.partition` keep their gradients through
`wengert.numpy` (`np.r_[x, y]` itself cannot be intercepted: NumPy turns the list into an array first):"""),
    ("code", """x = wg.tensor([3.0, 1.0, 2.0], requires_grad=True)
y = wnp.r_[x, 0.0, x ** 2]
second_smallest = np.partition(y, 1)[1]
(wnp.mean([x, x * 3.0]).sum() + second_smallest).backward()
print(y)
x.grad"""),
    ("md", """## Exercises

1. The gradient of $\\log\\lvert\\det A\\rvert$ is $A^{-\\top}$. Check it with
   `np.linalg.slogdet` on a random 3×3 matrix."""),
    ("solution", """a = np.random.default_rng(0).normal(size=(3, 3))
g = wg.grad(lambda a: np.linalg.slogdet(a)[1])(a)
np.allclose(g, np.linalg.inv(a).T)"""),
    ("md", """2. The spectral norm $\\lVert A\\rVert_2$ is the largest singular value $\\sigma_1$, and
   its gradient is $u_1 v_1^\\top$ (the first singular vectors). Check
   `wg.grad(lambda a: np.linalg.norm(a, 2))` against `np.linalg.svd`."""),
    ("solution", """u, s, vt = np.linalg.svd(a)
g = wg.grad(lambda a: np.linalg.norm(a, 2))(a)
np.allclose(g, np.outer(u[:, 0], vt[0]))"""),
    ("md", """3. Find a root of $z^2 = 1$ by minimising $f(z) = \\lvert z^2 - 1\\rvert^2$ from
   $z = 0.3 + 0.5i$, with 100 steps of size 0.05. Section 1 says the steepest descent
   direction is $-\\overline{\\nabla f}$: compare with stepping along $-\\nabla f$."""),
    ("solution", """f = lambda z: np.abs(z ** 2 - 1.0) ** 2
z = 0.3 + 0.5j
for _ in range(100):
    z = z - 0.05 * np.conj(wg.grad(f)(z))
print("along -conj(grad):", np.round(z, 6), f"f = {f(z):.1e}")

z = 0.3 + 0.5j
with np.errstate(all="ignore"):
    for _ in range(100):
        z = z - 0.05 * wg.grad(f)(z)
print("along -grad:      ", z)"""),
    ("md", """## What to read next

* `12_when_gradients_go_wrong.ipynb`: NaN and the other failures, reproduced and fixed;
* `09_higher_order.ipynb`: Hessians and Newton's method;
* `05_vjps_without_jacobians.ipynb`: why one reverse sweep through the FFT above never
  built a Jacobian."""),
]


if __name__ == "__main__":
    write("13_complex_and_decompositions", CELLS)
