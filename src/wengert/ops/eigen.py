"""The symmetric eigendecomposition: ``np.linalg.eigh`` and ``eigvalsh`` as two primitives.

``eigh_values`` gives the eigenvalues (ascending) and ``eigh_vectors`` the
eigenvectors (columns) of the symmetric part ``(a + aᵀ)/2``, as wengert's
``cholesky`` does (and JAX): for a symmetric input that is NumPy's answer, and the
gradient is the symmetric one. Their rules, with ``A = V Λ Vᵀ``:

* ``dλ = diag(Vᵀ dA V)``, so ``Ā = V diag(λ̄) Vᵀ``;
* ``dV = V (F ∘ (Vᵀ dA V))`` with ``F_ij = 1 / (λ_j − λ_i)`` off the diagonal and 0 on
  it, so ``Ā = sym(V (F ∘ (Vᵀ V̄)) Vᵀ)``.

Both are written with wengert's own ops (the rules call the two primitives again), so
they differentiate to any order. Where two eigenvalues are equal the eigenvectors are
not differentiable (F is infinite): the gradient is then inf or NaN, as in JAX and
PyTorch; the eigenvalues' gradient stays finite.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
>>> g = wg.grad(lambda a: np.linalg.eigvalsh(a)[-1])(a)  # the largest eigenvalue
>>> w, v = np.linalg.eigh(a)
>>> np.allclose(g, np.outer(v[:, -1], v[:, -1]))
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.op import Op
from . import elementwise as _ew
from .base import apply
from .base import shape_of as _shape
from .linalg import matmul
from .matrix import column as _column
from .matrix import mT as _mT
from .matrix import row as _row
from .matrix import zero_tangent as _zeros_like
from .memo import DecompositionMemo
from .reduce import sum as _sum

__all__ = ["EIGH_VALUES", "EIGH_VECTORS", "eigh", "eigvalsh", "EighResult"]




def _sym(x: Any) -> Any:
    return (x + _mT(x)) * 0.5


def _symmetric_part(a: Any) -> np.ndarray:
    a = np.asarray(a)
    return 0.5 * (a + np.swapaxes(a, -1, -2))


#: One decomposition shared by both primitives and their rules (see wengert.ops.memo).
_EIGH = DecompositionMemo(lambda a: np.linalg.eigh(_symmetric_part(a)))


def _values_impl(a: Any) -> Any:
    return _EIGH(a)[0].copy()


def _vectors_impl(a: Any) -> Any:
    return _EIGH(a)[1].copy()








def _gap_inverse(w: Any) -> Any:
    """``F_ij = 1 / (w_j − w_i)`` off the diagonal, 0 on it (no 1/0 is ever computed)."""
    n = _shape(w)[-1]
    eye = np.eye(n, dtype=bool)
    gaps = _row(w) - _column(w)
    return _ew.where(eye, 0.0, 1.0 / _ew.where(eye, 1.0, gaps))


def _values_vjp(g: Any, ans: Any, a: Any) -> Any:
    v = apply(EIGH_VECTORS, a)
    return matmul(v * _row(g), _mT(v))


def _values_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    v = apply(EIGH_VECTORS, a)
    return _sum(v * matmul(_sym(t), v), axis=-2)


def _vectors_vjp(g: Any, ans: Any, a: Any) -> Any:
    f = _gap_inverse(apply(EIGH_VALUES, a))
    return _sym(matmul(matmul(ans, f * matmul(_mT(ans), g)), _mT(ans)))


def _vectors_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    f = _gap_inverse(apply(EIGH_VALUES, a))
    return matmul(ans, f * matmul(_mT(ans), matmul(_sym(t), ans)))


def _rng_symmetric(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A symmetric matrix (or stack) whose eigenvalues are at least 0.5 apart."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.normal(size=shape))
    w = np.arange(n) * 1.5 - n * 0.5 + rng.uniform(-0.4, 0.4, shape[:-1])
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_symmetric(rng, s),), {}) for s in [(1, 1), (2, 2), (3, 3), (2, 3, 3)]]


EIGH_VALUES = Op("eigh_values", _values_impl, (_values_vjp,), jvp=_values_jvp, reads=(0,),
                 formula="dλ = diag(Vᵀ dA V); Ā = V diag(λ̄) Vᵀ", symbol="λ",
                 adjoint=("V diag(ḡ) Vᵀ",), samples=_samples)
EIGH_VECTORS = Op("eigh_vectors", _vectors_impl, (_vectors_vjp,), jvp=_vectors_jvp,
                  reads=(0,), reads_out=True,
                  formula="dV = V (F ∘ (Vᵀ dA V)), F_ij = 1/(λ_j − λ_i); "
                          "Ā = sym(V (F ∘ (Vᵀ V̄)) Vᵀ)", symbol="V",
                  adjoint=("sym({out} (F ∘ ({out}ᵀ ḡ)) {out}ᵀ)",), samples=_samples)

OPS = (EIGH_VALUES, EIGH_VECTORS)


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)``, as ``np.linalg.eigh`` returns them."""

    eigenvalues: Any
    eigenvectors: Any


def _check_uplo(uplo: str) -> None:
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")


def eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803 - NumPy's name
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (or stack).

    The symmetric part ``(a + aᵀ)/2`` is decomposed (NumPy's answer for a symmetric
    input, whichever ``UPLO``), so the gradient is the symmetric one.
    """
    _check_uplo(UPLO)
    return EighResult(apply(EIGH_VALUES, a), apply(EIGH_VECTORS, a))


def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803 - NumPy's name
    """Eigenvalues (ascending) of a symmetric matrix (or stack); see :func:`eigh`."""
    _check_uplo(UPLO)
    return apply(EIGH_VALUES, a)


PUBLIC: tuple[str, ...] = ()
#: Names for ``wengert.numpy.linalg``.
LINALG_PUBLIC = ("eigh", "eigvalsh")
#: NumPy function -> function, for ``Tensor.__array_function__``.
NUMPY = {np.linalg.eigh: eigh, np.linalg.eigvalsh: eigvalsh}
