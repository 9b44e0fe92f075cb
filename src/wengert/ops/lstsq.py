"""The pseudo-inverse as a primitive, and least squares made from it.

``pinv``'s rules are those of Golub and Pereyra (1973), valid where the rank does not
change (NumPy's cutoff ``rcond`` keeps it locally constant): with ``X = A⁺``,

* ``dX = −X dA X + X Xᵀ dAᵀ (I − A X) + (I − X A) dAᵀ Xᵀ X``;
* ``Ā = −Xᵀ X̄ Xᵀ + (I − A X) X̄ᵀ X Xᵀ + Xᵀ X X̄ᵀ (I − X A)``,

written with wengert's ops (``X`` is the output, differentiable again), so they
differentiate to any order and need no SVD: repeated singular values are fine.
``lstsq(a, b)`` is ``pinv(a) @ b`` with NumPy's other outputs (residuals, rank,
singular values); for a rank-deficient ``a`` it is the minimum-norm solution, and
its derivative is that of the pseudo-inverse at constant rank (as JAX's).

Complex matrices: the same rules with ``ᵀ`` read ``ᴴ`` for the JVP (``X Xᴴ dAᴴ (I − A X)``,
...); in wengert's convention (the VJP at ``X̄`` is the gradient of ``Re Σ X̄·X``, no
conjugation in the pairing) the VJP of the ``dAᴴ`` terms is the conjugate of the real
formula's (``conj((I − A X) X̄ᵀ X Xᴴ + Xᴴ X X̄ᵀ (I − X A))``), the ``−X dA X`` term's is
``−Xᵀ X̄ Xᵀ`` as for any holomorphic map. ``lstsq``'s residuals are NumPy's,
``Σ|A x − b|²``, real.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
>>> wg.grad(lambda a: np.sum(np.linalg.pinv(a)))(a)
array([[-1.  , -0.5 ],
       [-0.5 , -0.25],
       [ 1.  ,  0.25]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.op import Op
from . import elementwise as _ew
from .base import apply
from .base import dtype_of as _dtype
from .base import primal as _raw
from .base import shape_of as _shape
from .broadcast import reshape_to
from .linalg import matmul
from .matrix import eye_like as _eye
from .matrix import mT as _mT
from .matrix import zero_tangent
from .reduce import sum as _sum
from .svd import svd

__all__ = ["PINV", "pinv", "lstsq"]






def _pinv_impl(a: Any, rcond: Any = None) -> Any:
    a = np.asarray(a)
    if rcond is None:
        return np.linalg.pinv(a)
    return np.linalg.pinv(a, rcond)


def _is_complex(v: Any) -> bool:
    return _dtype(v).kind == "c"


def _adjoint(x: Any) -> Any:
    """``xᴴ`` of the last two axes (``xᵀ`` of a real ``x``)."""
    return _ew.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _pinv_vjp(g: Any, ans: Any, a: Any, rcond: Any = None) -> Any:
    x = ans
    m, n = _shape(a)[-2:]
    xt = _mT(x)
    gt = _mT(g)
    if _is_complex(x) or _is_complex(g):  # the dAᴴ terms transpose with a conjugate
        xh = _adjoint(x)
        return (-matmul(matmul(xt, g), xt)
                + _ew.conj(matmul(matmul(_eye(m, x) - matmul(a, x), gt), matmul(x, xh))
                           + matmul(matmul(xh, x), matmul(gt, _eye(n, x) - matmul(x, a)))))
    return (-matmul(matmul(xt, g), xt)
            + matmul(matmul(_eye(m, a) - matmul(a, x), gt), matmul(x, xt))
            + matmul(matmul(xt, x), matmul(gt, _eye(n, a) - matmul(x, a))))


def _pinv_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, rcond: Any = None) -> Any:
    (t,) = tangents
    if t is None:
        return zero_tangent(ans)
    x = ans
    m, n = _shape(a)[-2:]
    tt = _adjoint(t)  # dAᴴ (dAᵀ for a real tangent)
    xh = _adjoint(x)
    eye_m, eye_n = (_eye(m, x), _eye(n, x)) if _is_complex(x) else (_eye(m, a), _eye(n, a))
    return (-matmul(matmul(x, t), x)
            + matmul(matmul(x, xh), matmul(tt, eye_m - matmul(a, x)))
            + matmul(eye_n - matmul(x, a), matmul(tt, matmul(xh, x))))


def _rng_full_rank(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    m, n = shape[-2:]
    a = rng.normal(size=shape)
    k = min(m, n)
    a[..., :k, :k] += np.eye(k) * 2.0  # well away from rank deficiency
    return a


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_full_rank(rng, s),), {}) for s in [(1, 1), (3, 2), (2, 3), (3, 3), (2, 3, 2)]]


PINV = Op("pinv", _pinv_impl, (_pinv_vjp,), jvp=_pinv_jvp, reads=(0,), reads_out=True,
          formula="dX = −X dA X + X Xᵀ dAᵀ (I − A X) + (I − X A) dAᵀ Xᵀ X, X = A⁺",
          symbol="⁺", adjoint=("−Xᵀ ḡ Xᵀ + (I − A X) ḡᵀ X Xᵀ + Xᵀ X ḡᵀ (I − X A)",),
          samples=_samples, complex_rules=True)

OPS = (PINV,)


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse (singular values below ``rcond`` times the largest
    count as zero, NumPy's default cutoff otherwise)."""
    if hermitian:
        raise NotImplementedError("pinv: hermitian=True is not supported by wengert")
    if rtol is not None:
        rcond = rtol
    if rcond is None:
        return apply(PINV, a)
    return apply(PINV, a, rcond=float(rcond))


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any, int, Any]:
    """``(x, residuals, rank, s)`` as ``np.linalg.lstsq``: ``x = pinv(a) @ b`` (the
    minimum-norm least-squares solution), differentiable in ``a`` and ``b``."""
    m, n = _shape(a)[-2:]
    eps = np.finfo(np.result_type(_raw(a), np.float64)).eps
    cutoff = max(m, n) * eps if rcond is None else rcond
    if len(_shape(a)) != 2:
        raise ValueError("lstsq: a must be a single 2-d matrix, as in NumPy")
    vector = len(_shape(b)) == 1
    b2 = reshape_to(b, _shape(b) + (1,)) if vector else b
    x = matmul(pinv(a, cutoff), b2)
    s = svd(a, compute_uv=False)
    raw_s = _raw(s)  # (the rank is a number: under a trace, a guard)
    rank = int(np.sum(raw_s > cutoff * np.max(raw_s)))
    if rank == n and m > n:
        r = matmul(a, x) - b2
        residuals = _sum(_ew.abs(r) ** 2 if _is_complex(r) else r ** 2, axis=0)
    else:  # (real, as NumPy's, also for complex a)
        residuals = np.zeros((0,), dtype=np.finfo(np.result_type(_raw(a), np.float64)).dtype)
    if vector:
        x = reshape_to(x, _shape(x)[:-1])
    return x, residuals, rank, s


PUBLIC: tuple[str, ...] = ()
#: Names for ``wengert.numpy.linalg``.
LINALG_PUBLIC = ("pinv", "lstsq")
#: NumPy function -> function, for ``Tensor.__array_function__``.
NUMPY = {np.linalg.pinv: pinv, np.linalg.lstsq: lstsq}
