"""The QR decomposition: ``np.linalg.qr`` as two primitives (``Q`` and ``R`` of the reduced
decomposition of an ``m × n`` matrix with ``m ≥ n``).

With ``C = Qᵀ dA R⁻¹`` and ``Ω = L − Lᵀ`` for ``L`` the strictly lower triangle of ``C``
(as JAX's rule):

* ``dQ = Q (Ω − C) + dA R⁻¹``, ``dR = (C − Ω) R``;
* ``Ā = (Q̄ + Q copyltu(M)) R⁻ᵀ`` with ``M = R R̄ᵀ − Q̄ᵀ Q`` and ``copyltu(M)`` the lower
  triangle of ``M`` mirrored to the upper one (Walter and Lehmann, 2018).

Both are written with wengert's ops, so they differentiate to any order. A wide
matrix ``A = [X Y]`` (``m < n``, ``X`` its first ``m`` columns) is decomposed as LAPACK
does it: the Householder reflections come from ``X`` alone, so ``Q`` and the first
``m`` columns of ``R`` are those of ``X = Q R₁`` (the primitives), and the rest of ``R``
is ``Qᵀ Y`` (written with ``matmul``: NumPy's value to rounding), whose derivative
``dQᵀ Y + Qᵀ dY`` follows (as JAX's and PyTorch's rules). The decomposition is NumPy's,
with LAPACK's signs: where ``R`` has a zero on its diagonal (a rank-deficient input, or
a wide one whose first ``m`` columns are) the derivative does not exist, and the rules
refuse it, in both modes and at every order (``np.linalg.LinAlgError``; a zero to working
precision, ``|r_ii| ≤ 100 ε ‖a_i‖``; JAX and PyTorch return numbers of the order ``1/ε``
there); neither does it exist at an input whose Householder reflections are trivial
(an upper-triangular one), where any perturbation flips the signs of ``R``'s rows.

``mode='complete'`` of a tall matrix adds the primitive ``qr_completion``: the last
``m − n`` columns ``Q₂`` of LAPACK's complete ``Q``, ``H₁ ⋯ H_n`` applied to the last
columns of the identity. They are NumPy's choice of a completion, but a smooth function
of the input all the same (the reflections are), and their derivative is the one of
arXiv 2409.13374 (eq. 32-33), as in JAX 0.10: with ``Z = Q₁[n:]
(Q₁[:n] − I)⁻¹``, ``dQ₂ = dQ₁ Zᵀ − (Q₁ + Q₂ Z)(dQ₁[n:] − Z dQ₁[:n])ᵀ``; finite
differences of NumPy's own ``qr`` agree (PyTorch refuses this case). It needs
``Q₁[:n] − I`` invertible, which holds away from the measure-zero set where a
reflection is trivial.

Complex matrices (HIPS autograd's convention, see :mod:`wengert.ops.elementwise`: the VJP
at ``ḡ`` is the gradient of ``Re Σ ḡ·f``, no conjugation in the pairing). ``Q`` and ``R``
are determined up to a phase per column of ``Q`` (row of ``R``); NumPy's LAPACK
(``zgeqrf``) fixes it by making each reflection's ``β`` real, so ``R``'s diagonal is real
(of either sign; ``tests/test_complex_qr_cholesky.py`` pins it). With ``C = Qᴴ dA R⁻¹``,
``Qᴴ dQ`` is skew-Hermitian and ``dR R⁻¹`` upper triangular with a real diagonal, so
``Ω = L − Lᴴ + i·Im diag(C)`` (JAX's rule has the same correction), and ``dQ``, ``dR``
are as above; their transpose is ``Ā = (Q̄ + conj(Q) K) R⁻ᵀ``, with ``N`` the strict lower
triangle of ``M`` and ``K = Nᵀ + conj(N) + Re diag(M)`` (for a real ``M``,
``copyltu(M)``). A wide matrix's ``R₂`` is
``Qᴴ Y``, and the completion's rule reads ``dQ₂ = dQ₁ Zᴴ − W eᴴ`` (``Q₂ = (Q₁ − E₁)
Zᴴ + E₂`` holds for complex reflections too). These are the derivatives of NumPy's own
outputs: finite differences of ``np.linalg.qr`` agree with them on any function of ``Q``
and ``R``, phase-dependent or not, and so does PyTorch (HIPS autograd has no complex
``qr``). One more measure-zero set: the last reflection of a square or wide matrix has
nothing below the diagonal, and LAPACK leaves it out when that entry is real (a real
matrix stored as complex), where any imaginary perturbation flips the sign of
``R[-1, -1]``: NumPy's ``qr`` jumps there, and the rules differentiate the branch its
value is on.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = np.array([[2.0, 1.0], [1.0, 3.0], [0.5, 1.0]])
>>> wg.grad(lambda a: np.sum(np.linalg.qr(a)[1]))(a).round(4)
array([[-0.8962, -0.3943],
       [-0.3948, -1.2895],
       [-0.2081, -0.4263]])
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, apply
from wengert.ops.base import dtype_of as _dtype
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape
from wengert.ops.linalg.basic import SOLVE, matmul
from wengert.ops.linalg.checks import checked, register
from wengert.ops.linalg.matrix import as_matrices
from wengert.ops.linalg.matrix import eye_like as _eye_like
from wengert.ops.linalg.matrix import mT as _mT
from wengert.ops.linalg.matrix import zero_tangent as _zeros_like
from wengert.ops.linalg.memo import DecompositionMemo
from wengert.ops.shape import concatenate

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("qr")

__all__ = ["QR_Q", "QR_R", "QR_COMPLETION", "qr", "QRResult"]


def _mask(n: int, k: int, like: Any) -> np.ndarray:
    """``np.tril(ones, k)`` in the dtype of ``like`` (exact for float32 too)."""
    return np.tril(np.ones((n, n)), k).astype(np.result_type(_raw(like)))


def _is_complex(v: Any) -> bool:
    return _dtype(v).kind == "c"


def _adjoint(x: Any) -> Any:
    """``xᴴ`` of the last two axes (``xᵀ`` of a real ``x``)."""
    return _ew.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _real_eye(n: int, like: Any) -> np.ndarray:
    """The ``n × n`` identity in the real dtype of ``like``'s precision."""
    return np.eye(n, dtype=np.finfo(_dtype(like)).dtype)


def _right_solve(b: Any, r: Any) -> Any:
    """``b R⁻¹`` (solving ``Rᵀ Xᵀ = bᵀ``)."""
    return _mT(apply(SOLVE, _mT(r), _mT(b)))


#: One decomposition shared by both primitives and their rules (wengert.ops.linalg.memo).
_QR = DecompositionMemo(np.linalg.qr)


def _q_impl(a: Any) -> Any:
    return _QR(a)[0].copy()


def _r_impl(a: Any) -> Any:
    return _QR(a)[1].copy()


def _full_rank(r: Any) -> Any:
    """``r`` (the ``R`` factor), after refusing a rank-deficient input (see
    :func:`_refuse_rank_deficient`)."""
    return checked(r, "qr_full_rank")


def _refuse_rank_deficient(r: np.ndarray, arg: Any = None) -> None:
    """Refuse the ``R`` factor of a rank-deficient input: one with a zero on ``R``'s
    diagonal to working precision, ``|r_ii| ≤ 100 ε ‖a_i‖`` (column ``i`` of the input
    within rounding of the span of the columns before it; ``‖a_i‖`` is the norm of column
    ``i`` of ``R``). There the decomposition has no derivative: ``Q``'s columns past the
    rank are LAPACK's arbitrary choice, and ``R⁻¹`` of the rules would give finite but
    meaningless numbers (JAX and PyTorch return noise of the order ``1/ε``, and second
    derivatives that disagree with each other)."""
    eps = np.finfo(r.dtype).eps
    diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    cols = np.linalg.norm(r, axis=-2)[..., : diag.shape[-1]]
    bad = ~(diag > 100 * eps * cols)  # (a NaN refuses too)
    if np.any(bad):
        i = int(np.argwhere(bad)[0][-1])
        raise np.linalg.LinAlgError(
            f"qr: the matrix is rank-deficient (R[{i}, {i}] is zero to working "
            f"precision: column {i} lies in the span of the columns before it), where "
            "the QR decomposition has no derivative (Q's columns past the rank are an "
            "arbitrary choice). Perturb the matrix to full column rank, or differentiate "
            "something that does not need Q and R (np.linalg.lstsq, pinv, svd values).")


register("qr_full_rank", _refuse_rank_deficient)


def _tangents(t: Any, a: Any) -> tuple[Any, Any]:
    """``(dQ, dR)`` for the tangent ``t`` of ``a``."""
    q, r = apply(QR_Q, a), _full_rank(apply(QR_R, a))
    n = _shape(r)[-1]
    dx_rinv = _right_solve(t, r)
    c = matmul(_adjoint(q), dx_rinv)
    lower = c * _mask(n, -1, c)
    omega = lower - _adjoint(lower)
    if _is_complex(c):  # R's diagonal stays real: Qᴴ dQ has i·Im diag(C) on its diagonal
        omega = omega + _ew.imag(c) * _real_eye(n, c) * 1j
    return matmul(q, omega - c) + dx_rinv, matmul(c - omega, r)


def _q_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    return _zeros_like(ans) if t is None else _tangents(t, a)[0]


def _r_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    return _zeros_like(ans) if t is None else _tangents(t, a)[1]


def _cotangent(q_bar: Any, r_bar: Any, a: Any) -> Any:
    """``Ā`` for the cotangents of ``Q`` and ``R`` (either may be zero)."""
    q, r = apply(QR_Q, a), _full_rank(apply(QR_R, a))
    n = _shape(r)[-1]
    m = matmul(r, _mT(r_bar)) - matmul(_mT(q_bar), q)
    if _is_complex(m) or _is_complex(q):  # K = copyltu's Hermitian form, Re on the diagonal
        lower = m * _mask(n, -1, m)
        k = _mT(lower) + _ew.conj(lower) + _ew.real(m) * _real_eye(n, m)
        return _right_solve(q_bar + matmul(_ew.conj(q), k), _mT(r))
    copyltu = m * _mask(n, 0, m) + _mT(m * _mask(n, -1, m))
    return _right_solve(q_bar + matmul(q, copyltu), _mT(r))


def _q_vjp(g: Any, ans: Any, a: Any) -> Any:
    r = apply(QR_R, a)
    return _cotangent(g, r * 0.0, a)


def _r_vjp(g: Any, ans: Any, a: Any) -> Any:
    q = apply(QR_Q, a)
    return _cotangent(q * 0.0, g, a)


def _rng_tall(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    a = rng.normal(size=shape)
    n = shape[-1]
    a[..., :n, :n] += np.eye(n) * 2.5  # R well away from a zero diagonal
    return a


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_tall(rng, s),), {}) for s in [(1, 1), (3, 3), (4, 2), (2, 3, 2)]]


QR_Q = Op("qr_q", _q_impl, (_q_vjp,), jvp=_q_jvp, reads=(0,),
          part=("qr", 0), spelling="np.linalg.qr",
          formula="dQ = Q (Ω − C) + dA R⁻¹, C = Qᵀ dA R⁻¹, Ω = L − Lᵀ (L: C's strict "
                  "lower triangle)", symbol="Q",
          adjoint=("(ḡ + Q copyltu(−ḡᵀ Q)) R⁻ᵀ",),
          complex_adjoint=("(ḡ + conj(Q) K) R⁻ᵀ, K from Qᵀ ḡ with Im diag kept (JAX's rule)",),
          samples=_samples, complex_rules=True, jax="jnp.linalg.qr({0})[0]")
FAMILY.op(QR_Q)
QR_R = Op("qr_r", _r_impl, (_r_vjp,), jvp=_r_jvp, reads=(0,),
          part=("qr", 1), spelling="np.linalg.qr",
          formula="dR = (C − Ω) R, C = Qᵀ dA R⁻¹, Ω = L − Lᵀ", symbol="R",
          adjoint=("Q copyltu(R ḡᵀ) R⁻ᵀ",),
          complex_adjoint=("conj(Q) K R⁻ᵀ, K from R ḡᵀ with Im diag kept (JAX's rule)",),
          samples=_samples, complex_rules=True, jax="jnp.linalg.qr({0})[1]")
FAMILY.op(QR_R)
FAMILY.joint(QR_Q, QR_R, numpy="np.linalg.qr({0})")


# -- the completion: the last m − n columns of a tall matrix's complete Q ------------------
#: The complete decomposition, for the completion primitive and its rules.
_QR_COMPLETE = DecompositionMemo(lambda a: np.linalg.qr(a, mode="complete"))


def _completion_impl(a: Any) -> Any:
    return _QR_COMPLETE(a)[0][..., :, np.shape(a)[-1]:].copy()


def _completion_parts(a: Any, q_mp: Any) -> tuple[Any, Any, int]:
    """``Z = Q_pn (Q_nn − I)⁻¹`` and ``W = Q_mn + Q_mp Z`` (arXiv 2409.13374, eq. 32-33),
    and ``n``."""
    q = apply(QR_Q, a)
    n = _shape(q)[-1]
    q_nn, q_pn = q[..., :n, :], q[..., n:, :]
    try:
        z = _right_solve(q_pn, q_nn - _eye_like(n, q_nn))
    except np.linalg.LinAlgError as exc:
        raise np.linalg.LinAlgError(
            "qr(mode='complete'): the completion's derivative does not exist at this input: "
            "one of LAPACK's Householder reflections is trivial (a column already zero below "
            "the diagonal, as in an upper-triangular input), so Q₁[:n] − I is singular; "
            "perturb the input, or use mode='reduced'") from exc
    return z, q + matmul(q_mp, z), n


def _completion_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    dq = _tangents(t, a)[0]
    z, w, n = _completion_parts(a, ans)
    e = dq[..., n:, :] - matmul(z, dq[..., :n, :])
    return matmul(dq, _adjoint(z)) - matmul(w, _adjoint(e))


def _completion_vjp(g: Any, ans: Any, a: Any) -> Any:
    z, w, n = _completion_parts(a, ans)
    h = matmul(_mT(g), w)
    if _is_complex(z):  # the transposes of Zᴴ and eᴴ
        z_c, h = _ew.conj(z), _ew.conj(h)
    else:
        z_c = z
    dq_bar = matmul(g, z_c) + concatenate([matmul(_mT(z), h), -h], axis=-2)
    return _q_vjp(dq_bar, None, a)


def _tall_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_tall(rng, s),), {}) for s in [(2, 1), (4, 2), (5, 3), (2, 3, 2)]]


def _qr_completion_jax(s: JaxStep) -> str:
    """``jnp.linalg.qr(a, mode="complete")[0][..., :, n:]`` (JAX 0.10 differentiates the
    completion as wengert does)."""
    n = s.shape(0)[-1]
    return f'jnp.linalg.qr({s.args[0]}, mode="complete")[0][..., :, {n}:]'


QR_COMPLETION = Op(
    "qr_completion", _completion_impl, (_completion_vjp,), jvp=_completion_jvp, reads=(0,),
    reads_out=True, part=("qr", 2), spelling="np.linalg.qr",
    formula="dQ₂ = dQ₁ Zᵀ − (Q₁ + Q₂ Z)(dQ₁[n:] − Z dQ₁[:n])ᵀ, Z = Q₁[n:] (Q₁[:n] − I)⁻¹",
    symbol="Q₂", adjoint=("Q₁'s adjoint of ḡ Z + [Zᵀ H; −H], H = ḡᵀ (Q₁ + Q₂ Z)",),
    samples=_tall_samples, complex_rules=True, jax=_qr_completion_jax)
FAMILY.op(QR_COMPLETION)


class QRResult(NamedTuple):
    """``(Q, R)``, as ``np.linalg.qr`` returns them."""

    Q: Any
    R: Any


@FAMILY.export(space="linalg")
def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition of a matrix (or stack), as ``np.linalg.qr``.

    Parameters
    ----------
    a : array_like, (..., m, n)
    mode : {'reduced', 'complete', 'r'}
        ``'complete'`` is ``'reduced'`` unless ``m > n``, where ``Q`` gets the ``m − n``
        columns LAPACK's reflections complete it with (differentiated as such); ``'raw'``
        is refused.

    Returns
    -------
    QRResult or the R factor
        ``(Q, R)`` with ``Q`` of shape ``(..., m, k)`` and ``R`` of shape ``(..., k, n)``,
        ``k = min(m, n)``; ``R`` alone for ``mode='r'``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 1.0]])  # wide: R is 2 × 3
    >>> g = wg.grad(lambda a: np.sum(np.linalg.qr(a, mode="r")[:, 2]))(a)
    >>> g.shape
    (2, 3)
    """
    if mode in ("full", "f"):
        warnings.warn("The 'full' option is deprecated in favor of 'reduced'.\n"
                      "For backward compatibility let mode default.", DeprecationWarning,
                      stacklevel=2)
        mode = "reduced"
    if mode not in ("reduced", "complete", "r"):
        if mode in ("raw", "economic", "e"):
            raise NotImplementedError(
                f"qr(mode={mode!r}) gives LAPACK's Householder reflections, which wengert does "
                "not differentiate; use mode='reduced' (Q and R) or 'r'")
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = as_matrices(a)
    shape = _shape(a)
    m, n = shape[-2:]
    if mode == "complete" and m > n:
        q1, r1 = apply(QR_Q, a), apply(QR_R, a)
        zeros = np.zeros(tuple(shape[:-2]) + (m - n, n), dtype=_dtype(r1))
        return QRResult(concatenate([q1, apply(QR_COMPLETION, a)], axis=-1),
                        concatenate([r1, zeros], axis=-2))
    if m >= n:
        return apply(QR_R, a) if mode == "r" else QRResult(apply(QR_Q, a), apply(QR_R, a))
    x, y = a[..., :, :m], a[..., :, m:]  # the reflections come from X alone
    q = apply(QR_Q, x)
    r = concatenate([apply(QR_R, x), matmul(_adjoint(q), y)], axis=-1)
    return r if mode == "r" else QRResult(q, r)


