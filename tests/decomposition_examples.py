"""Inputs and scalar losses of decompositions (eigh, svd, qr, eig), shared by the tests of
traced graphs and of the JAX export: each loss reads every output of its decomposition."""

from __future__ import annotations

import numpy as np


def matrix(shape, dtype, seed=7):
    """A random (stack of) matrix, complex for a complex ``dtype``."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape)
    return a.astype(dtype)


def hermitian(shape, dtype, seed=7):
    """A random Hermitian (symmetric when real) (stack of) matrix."""
    a = matrix(shape, dtype, seed)
    return a + np.conj(np.swapaxes(a, -1, -2))


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, w.shape[-1] + 1)) + np.sum(np.abs(v) ** 4)


def svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2) + np.sum(np.abs(u) ** 4) + np.sum(np.abs(vh[..., 0, :]) ** 3)


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.abs(q) ** 3) + np.sum(np.abs(r) ** 2)


def qr_complete_loss(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(np.abs(q[..., :, -1]) ** 3) + np.sum(r ** 2)


def eig_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v[..., 0, :]) ** 2)
