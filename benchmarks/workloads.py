"""The workloads' definitions, shared by every benchmark script.

The functions that every implementation runs (W1's scalar chain, W2's MLP, W3's
vector chain, W4's Rosenbrock function, W5/W6's ``tanh(A @ x) * sin(x)``), their
inputs, and the references computed without any AD library that every
implementation's result is checked against. What is timed (the implementations, the
floors) lives in the scripts; how it is timed lives in :mod:`benchmarks.harness`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

# --------------------------------------------------------------------------- W1
W1_X0 = 0.5
W1_MUL = 0.9
W1_POW = 1.5


def w1_chain(x: Any, n: int, sin: Any, cos: Any, tanh: Any) -> Any:
    """``n`` ops cycling sin, cos, tanh, *0.9, +x, **1.5 (values stay in (0, 2))."""
    y = x
    for _ in range(n // 6):
        y = sin(y)
        y = cos(y)
        y = tanh(y)
        y = y * W1_MUL
        y = y + x
        y = y**W1_POW
    steps = (
        sin,
        cos,
        tanh,
        lambda v: v * W1_MUL,
        lambda v: v + x,
        lambda v: v**W1_POW,
    )
    for k in range(n % 6):
        y = steps[k](y)
    return y


def w1_reference(n: int) -> tuple[float, float]:
    """Value and derivative of the W1 chain by forward mode on floats (no AD library)."""
    x, dx = W1_X0, 1.0
    y, dy = x, dx
    for i in range(n):
        k = i % 6
        if k == 0:
            y, dy = math.sin(y), math.cos(y) * dy
        elif k == 1:
            y, dy = math.cos(y), -math.sin(y) * dy
        elif k == 2:
            t = math.tanh(y)
            y, dy = t, (1.0 - t * t) * dy
        elif k == 3:
            y, dy = y * W1_MUL, W1_MUL * dy
        elif k == 4:
            y, dy = y + x, dy + dx
        else:
            y, dy = y**W1_POW, W1_POW * y ** (W1_POW - 1.0) * dy
    return y, dy



# --------------------------------------------------------------------------- W2
def mlp_params(sizes: tuple[int, ...], dtype: Any, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype))
        params.append((0.1 * rng.standard_normal(b)).astype(dtype))
    return params


def mlp_data(sizes: tuple[int, ...], batch: int, dtype: Any, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], batch)
    onehot = np.zeros((batch, sizes[-1]), dtype=dtype)
    onehot[np.arange(batch), labels] = 1
    return X, onehot


def mlp_loss(params: Any, X: Any, onehot: Any, xp: Any = np,
             stop: Callable[[Any], Any] = lambda a: a) -> Any:
    """Mean softmax cross-entropy of a tanh MLP, written in plain NumPy.

    The same code runs on ndarrays (the baseline), on wengert tensors (through
    ``np.*`` dispatch) and with ``xp=autograd.numpy``.
    """
    W1, b1, W2, b2, W3, b3 = params
    h1 = xp.tanh(X @ W1 + b1)
    h2 = xp.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    m = xp.max(stop(z), axis=1, keepdims=True)
    lse = xp.log(xp.sum(xp.exp(z - m), axis=1, keepdims=True)) + m
    return (xp.sum(lse) - xp.sum(z * onehot)) / X.shape[0]


def mlp_numpy_grads(params: list[np.ndarray], X: np.ndarray, onehot: np.ndarray):
    """Loss and the six gradients, by hand in NumPy (the reference)."""
    W1, b1, W2, b2, W3, b3 = params
    B = X.shape[0]
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    loss = ((np.log(s) + m).sum() - (z * onehot).sum()) / B
    dz = (e / s - onehot) / B
    dW3 = h2.T @ dz
    db3 = dz.sum(axis=0)
    da2 = (dz @ W3.T) * (1 - h2 * h2)
    dW2 = h1.T @ da2
    db2 = da2.sum(axis=0)
    da1 = (da2 @ W2.T) * (1 - h1 * h1)
    dW1 = X.T @ da1
    db1 = da1.sum(axis=0)
    return loss, [dW1, db1, dW2, db2, dW3, db3]


def torch_mlp_loss(torch: Any, params: Any, X: Any, onehot: Any) -> Any:
    W1, b1, W2, b2, W3, b3 = params
    h1 = torch.tanh(X @ W1 + b1)
    h2 = torch.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    m = z.detach().amax(dim=1, keepdim=True)
    lse = torch.log(torch.exp(z - m).sum(dim=1, keepdim=True)) + m
    return (lse.sum() - (z * onehot).sum()) / X.shape[0]



# --------------------------------------------------------------------------- W3
W3_LEN = 16
W3_MUL = 0.9


def w3_chain(x: Any, n: int, sin: Any, cos: Any) -> Any:
    """``n`` ops cycling sin, cos, *0.9, +x on a vector (values stay in [-2, 2])."""
    y = x
    for _ in range(n // 4):
        y = sin(y)
        y = cos(y)
        y = y * W3_MUL
        y = y + x
    steps = (sin, cos, lambda v: v * W3_MUL, lambda v: v + x)
    for k in range(n % 4):
        y = steps[k](y)
    return y


def w3_x0() -> np.ndarray:
    return np.linspace(-1.0, 1.0, W3_LEN)


# --------------------------------------------------------------------------- W4
def rosen(x: Any, xp: Any = np) -> Any:
    """The Rosenbrock function, in array form (works on any array library)."""
    a, b = x[:-1], x[1:]
    return xp.sum(100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2)


def rosen_hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The analytic Hessian-vector product of :func:`rosen` (the Hessian is tridiagonal)."""
    a, b = x[:-1], x[1:]
    diag = np.zeros_like(x)
    diag[:-1] += 1200.0 * a * a - 400.0 * b + 2.0
    diag[1:] += 200.0
    off = -400.0 * a  # H[i, i+1] = H[i+1, i]
    hv = diag * v
    hv[:-1] += off * v[1:]
    hv[1:] += off * v[:-1]
    return hv


def w4_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    return rng.uniform(-2.0, 2.0, n), rng.standard_normal(n)


# --------------------------------------------------------------------------- W5 / W6
def w56_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    return A, rng.standard_normal(n), rng.standard_normal(n)


def w56_fun(A: Any, xp: Any = np) -> Callable[[Any], Any]:
    """``x -> tanh(A @ x) * sin(x)`` with the array library ``xp``."""
    return lambda x: xp.tanh(A @ x) * xp.sin(x)


def w56_jvp(A: np.ndarray, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The analytic JVP: two matrix-vector products, the floor for any JVP."""
    t = np.tanh(A @ x)
    s = np.sin(x)
    return (1.0 - t * t) * (A @ v) * s + t * np.cos(x) * v


def w56_jacobian(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The analytic Jacobian ``diag((1 - t²) sin x) A + diag(t cos x)``, ``t = tanh(A x)``."""
    t = np.tanh(A @ x)
    J = ((1.0 - t * t) * np.sin(x))[:, None] * A
    J[np.diag_indices_from(J)] += t * np.cos(x)
    return J
