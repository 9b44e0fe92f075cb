"""Central differences of plain NumPy functions, real and in wengert's complex convention,
shared by the decomposition tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def complex_gradient(f: Callable[[np.ndarray], float], a: np.ndarray,
                     eps: float = 1e-6) -> np.ndarray:
    """``∂u/∂x − i·∂u/∂y`` of a real ``f`` at ``a`` by central differences (HIPS
    autograd's convention, wengert's)."""
    g = np.zeros(a.shape, dtype=complex)
    for idx in np.ndindex(a.shape):
        for step, unit in ((eps, 1.0), (eps * 1j, -1j)):
            e = np.zeros(a.shape, dtype=complex)
            e[idx] = step
            g[idx] += unit * (f(a + e) - f(a - e)) / (2 * eps)
    return g


def real_gradient(f: Callable[[np.ndarray], float], a: np.ndarray,
                  eps: float = 1e-6) -> np.ndarray:
    """The gradient of a real ``f`` at a real ``a`` by central differences, entry by
    entry."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = eps
        g[idx] = (f(a + e) - f(a - e)) / (2 * eps)
    return g
