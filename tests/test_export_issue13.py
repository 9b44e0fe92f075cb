"""The JAX export of the functions issue 13 added (eigh's ``UPLO``, wide ``qr``,
``svd(hermitian=True)``, ``cond``, ``wnp.r_`` / ``c_``, lists of tensors): the exported
function gives wengert's values and, under ``jax.grad``, wengert's gradients; what has no
faithful JAX form (``argpartition``, ``matrix_rank``) is refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
import wengert.numpy as wnp
from wengert.graph.export import NotExportable, to_jax, to_jax_source

RNG = np.random.default_rng(23)
A = RNG.normal(size=(3, 3))
WIDE = RNG.normal(size=(2, 4)) + np.eye(2, 4) * 2.0
COUNT = np.arange(9.0).reshape(3, 3)

CASES = {
    "eigh UPLO": (lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 2)
                  + np.sum(np.linalg.eigh(a)[1][0] ** 2), A),
    "qr wide": (lambda a: np.sum(np.linalg.qr(a)[1] ** 2) + np.sum(np.linalg.qr(a)[0] ** 3),
                WIDE),
    "svd hermitian": (lambda a: np.sum(np.linalg.svd(a, hermitian=True)[2] * COUNT)
                      + np.sum(np.linalg.svd(a, hermitian=True, compute_uv=False)), A + A.T),
    "cond": (lambda a: np.linalg.cond(a) + np.linalg.cond(a, "fro"), A),
    "r_ c_": (lambda a: np.sum(wnp.r_[a[0], 1.0, a[1]] ** 2) + np.sum(wnp.c_[a[0], a[1]] ** 3),
              A),
    "mean of a list": (lambda a: wnp.mean([a[0], a[1] * 2.0]), A),
}


@pytest.mark.parametrize("name", list(CASES))
def test_exported_values_and_gradients(name):
    jax = pytest.importorskip("jax", reason="the JAX export is checked against JAX")
    jax.config.update("jax_enable_x64", True)
    f, x = CASES[name]
    fj = to_jax(wg.trace(f, x))
    np.testing.assert_allclose(fj(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(jax.grad(fj)(x), wg.grad(f)(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f, what", [
    (lambda a: np.sum(np.partition(a, 1)), "argpartition"),
    (lambda a: np.linalg.matrix_rank(a) * np.sum(a), "matrix_rank"),
])
def test_refused_with_the_reason(f, what):
    with pytest.raises(NotExportable, match=what):
        to_jax_source(wg.trace(f, A))
