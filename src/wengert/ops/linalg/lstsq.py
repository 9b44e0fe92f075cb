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

``pinv(a, hermitian=True)`` is NumPy's: the pseudo-inverse of the Hermitian (real:
symmetric) matrix the lower triangle of ``a`` defines (NumPy computes it from
``eigh``, which reads that triangle and the real part of the diagonal), with the cutoff
on the eigenvalues' magnitudes. wengert builds that matrix with its ops (the upper
triangle gets no gradient, as in :mod:`wengert.ops.linalg.eigh`) and hands it to the same
primitive, which calls ``np.linalg.pinv(…, hermitian=True)`` (NumPy's values, bit for
bit) and keeps the Golub–Pereyra rules, composed with the Hermitian part ``(dA +
dAᴴ)/2``: unlike a derivative through ``eigh``'s eigenvectors, they stay finite at
repeated eigenvalues (the identity, a projection, the zero eigenvalues of a
rank-deficient matrix).

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
from wengert.core.forms import JaxStep
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, apply
from wengert.ops.base import dtype_of as _dtype
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape
from wengert.ops.broadcast import reshape_to
from wengert.ops.linalg.basic import matmul
from wengert.ops.linalg.checks import checked, register
from wengert.ops.linalg.matrix import as_matrices, hermitian_from_triangle, zero_tangent
from wengert.ops.linalg.matrix import eye_like as _eye
from wengert.ops.linalg.matrix import mT as _mT
from wengert.ops.linalg.svd import svd
from wengert.ops.reduce import sum as _sum

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("lstsq")

__all__ = ["PINV", "pinv", "lstsq"]


def _pinv_impl(a: Any, rcond: Any = None, hermitian: bool = False) -> Any:
    a = np.asarray(a)
    if hermitian:  # (a is Hermitian already when pinv made it: the same matrix, bit for bit)
        at = np.swapaxes(a, -1, -2)
        a = 0.5 * (a + (at.conj() if a.dtype.kind == "c" else at))
    if rcond is None:
        return np.linalg.pinv(a, hermitian=hermitian)
    return np.linalg.pinv(a, rcond, hermitian=hermitian)


def _is_complex(v: Any) -> bool:
    return _dtype(v).kind == "c"


def _adjoint(x: Any) -> Any:
    """``xᴴ`` of the last two axes (``xᵀ`` of a real ``x``)."""
    return _ew.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _herm(x: Any) -> Any:
    """``(x + xᴴ)/2``: the Hermitian part, and the adjoint of taking it."""
    return (x + _adjoint(x)) * 0.5


def _kept_rank(a: Any, rcond: Any) -> Any:
    """``a``, after refusing a cutoff that drops singular values that are not zero (see
    :func:`_refuse_truncation`)."""
    return a if rcond is None else checked(a, "pinv_truncation", rcond)


def _refuse_truncation(a: np.ndarray, rcond: Any) -> None:
    """Refuse the derivative where the cutoff drops singular values that are not zero.

    ``pinv(a, rcond)`` is then the pseudo-inverse of ``a``'s best rank-``r``
    approximation, whose derivative couples the kept singular vectors with the dropped
    ones (through ``1/(sᵢ ∓ sⱼ)``); the Golub-Pereyra rules are that derivative only where
    the dropped values are 0 (off by about ``sⱼ/sᵢ``, so they are kept below ``eps^(1/3)``
    of the smallest kept value, 6e-6 in float64: a perturbation of a rank-deficient
    matrix, as finite differences make). Dropped values at round-off level (NumPy's
    default cutoffs) are a zero computed inexactly."""
    if 0 in a.shape[-2:]:
        return
    s = np.linalg.svd(a, compute_uv=False)
    eps = np.finfo(s.dtype).eps
    top = np.max(s, axis=-1, keepdims=True)
    kept = s > np.asarray(rcond)[..., None] * top
    dropped = np.max(np.where(kept, 0.0, s), axis=-1)
    smallest_kept = np.min(np.where(kept, s, np.inf), axis=-1)
    roundoff = 10.0 * max(a.shape[-2:]) * eps * top[..., 0]
    bad = (dropped > roundoff) & (dropped > eps ** (1.0 / 3.0) * smallest_kept)
    if np.any(bad):
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        raise ValueError(
            f"np.linalg.pinv's cutoff (rcond={rcond}) drops singular values that are not "
            f"zero (the largest dropped is {dropped[i]:.3g}, the smallest kept "
            f"{smallest_kept[i]:.3g}): the pseudo-inverse is then that of the best "
            "lower-rank approximation, whose derivative the Golub-Pereyra rules wengert "
            "uses (as JAX and PyTorch) do not give; they hold only where the dropped "
            "singular values are 0. For the truncated inverse, write it with the SVD: u, s, "
            "vh = np.linalg.svd(a, full_matrices=False); k = number kept; x = (vh[:k].T / "
            "s[:k]) @ u[:, :k].T (differentiated through the singular vectors); or lower "
            "rcond so it drops only zeros.")


register("pinv_truncation", _refuse_truncation)


def _pinv_vjp(g: Any, ans: Any, a: Any, rcond: Any = None, hermitian: bool = False) -> Any:
    a = _kept_rank(a, rcond)
    if hermitian:  # the pseudo-inverse of herm(a)
        return _herm(_golub_pereyra_vjp(g, ans, _herm(a)))
    return _golub_pereyra_vjp(g, ans, a)


def _golub_pereyra_vjp(g: Any, x: Any, a: Any) -> Any:
    """``Ā`` for the cotangent ``g`` of ``x = a⁺``."""
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


def _pinv_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, rcond: Any = None,
              hermitian: bool = False) -> Any:
    (t,) = tangents
    if t is None:
        return zero_tangent(ans)
    a = _kept_rank(a, rcond)
    if hermitian:  # the pseudo-inverse of herm(a), along herm(t)
        a, t = _herm(a), _herm(t)
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


def _rng_symmetric(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A symmetric matrix (or stack) with eigenvalues of both signs, away from 0."""
    q, _ = np.linalg.qr(rng.normal(size=shape))
    n = shape[-1]
    w = (np.arange(n) + 1.0) * np.where(np.arange(n) % 2, -1.0, 1.0)
    return (q * w) @ np.swapaxes(q, -1, -2)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    general = [((_rng_full_rank(rng, s),), {}) for s in [(1, 1), (3, 2), (2, 3), (3, 3), (2, 3, 2)]]
    hermitian = [((_rng_symmetric(rng, s),), {"hermitian": True})
                 for s in [(1, 1), (3, 3), (2, 2, 2)]]
    return general + hermitian + [((_rng_symmetric(rng, (3, 3)),), {"hermitian": True,
                                                                      "rcond": 1e-3})]


def _pinv_jax(s: JaxStep) -> str:
    """``jnp.linalg.pinv(a)`` (``rtol=`` for an explicit cutoff; JAX's own default cutoff
    is NumPy's)."""
    hermitian = ", hermitian=True" if s.params.get("hermitian") else ""
    if s.params.get("rcond") is None:
        return f"jnp.linalg.pinv({s.args[0]}{hermitian})"
    return f"jnp.linalg.pinv({s.args[0]}, rtol={s.param('rcond')}{hermitian})"


PINV = Op("pinv", _pinv_impl, (_pinv_vjp,), jvp=_pinv_jvp, reads=(0,), reads_out=True,
          formula="dX = −X dA X + X Xᵀ dAᵀ (I − A X) + (I − X A) dAᵀ Xᵀ X, X = A⁺",
          symbol="⁺", adjoint=("−Xᵀ ḡ Xᵀ + (I − A X) ḡᵀ X Xᵀ + Xᵀ X ḡᵀ (I − X A)",),
          complex_adjoint=("−Xᵀ ḡ Xᵀ + conj((I − A X) ḡᵀ X Xᴴ + Xᴴ X ḡᵀ (I − X A))",),
          samples=_samples, complex_rules=True, jax=_pinv_jax, raises=True)
FAMILY.op(PINV)


#: NumPy's ``_NoValue`` for ``rtol``: not given (``rtol=None`` means something else).
_UNSET: Any = object()


@FAMILY.export(space="linalg")
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _UNSET) -> Any:
    """The Moore-Penrose pseudo-inverse of a matrix (or stack), as ``np.linalg.pinv``.

    Parameters
    ----------
    a : array_like, (..., m, n)
    rcond, rtol : float or array_like, optional
        Singular values (eigenvalue magnitudes, for ``hermitian=True``) at most this
        times the largest count as zero (an array: one cutoff per matrix of the stack);
        NumPy's defaults: ``1e-15``, or for ``rtol=None`` ``max(m, n)·eps``. At most one
        of them may be given.
    hermitian : bool
        As NumPy: ``a`` is taken to be Hermitian (real: symmetric), and only its lower
        triangle and the real part of its diagonal are read; the rest gets no gradient.

    Returns
    -------
    array, (..., n, m)
        Differentiable (Golub–Pereyra) wherever the rank does not change.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = np.array([[2.0, 9.0], [1.0, 2.0]])  # hermitian=True: the 9.0 is not read
    >>> np.linalg.pinv(wg.tensor(a), hermitian=True).numpy().round(4)
    array([[ 0.6667, -0.3333],
           [-0.3333,  0.6667]])
    >>> wg.grad(lambda a: np.trace(np.linalg.pinv(a, hermitian=True)))(a).round(4)
    array([[-0.5556,  0.    ],
           [ 0.8889, -0.5556]])
    """
    a = as_matrices(a)
    m, n = _shape(a)[-2:]
    if rcond is not None and rtol is not _UNSET:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if rcond is None and rtol is not _UNSET:
        rcond = max(m, n) * np.finfo(_dtype(a)).eps if rtol is None else rtol
    if rcond is not None:  # (an array: one cutoff per matrix of a stack, as NumPy)
        rcond = float(rcond) if np.ndim(rcond) == 0 else np.asarray(rcond, dtype=float)
    params = {} if rcond is None else {"rcond": rcond}
    if not hermitian:
        return apply(PINV, a, **params)
    if m != n:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return apply(PINV, hermitian_from_triangle(a), hermitian=True, **params)


@FAMILY.export(space="linalg")
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any, Any, Any]:
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
    rank = np.int32(np.sum(raw_s > cutoff * np.max(raw_s)))  # (LAPACK's integer, as NumPy's)
    if rank == n and m > n:
        r = matmul(a, x) - b2
        residuals = _sum(_ew.abs(r) ** 2 if _is_complex(r) else r ** 2, axis=0)
    else:  # (real, of the result's precision, as NumPy's, also for complex a)
        residuals = np.zeros((0,), dtype=np.finfo(np.result_type(
            _dtype(a), _dtype(b), np.float32)).dtype)
    if vector:
        x = reshape_to(x, _shape(x)[:-1])
    return x, residuals, rank, s


