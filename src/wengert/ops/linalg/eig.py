"""The general eigendecomposition: ``np.linalg.eig`` and ``eigvals`` as two primitives.

``eig_values`` gives the eigenvalues ``λ`` and ``eig_vectors`` the eigenvectors (the
columns of ``V``) of a square matrix (or stack), as ``np.linalg.eig`` computes them:
complex in general, real where NumPy returns real ones (a real matrix whose
eigenvalues are all real). With ``A = V Λ V⁻¹``, ``X = V⁻¹ dA V`` and
``F_ij = 1 / (λ_j − λ_i)`` off the diagonal (0 on it):

* ``dλ = diag(X)``, so (in wengert's complex convention: transposes, no conjugates)
  ``Ā = V⁻ᵀ diag(λ̄) Vᵀ``;
* ``dV = V (F ∘ X)``, then corrected to NumPy's normalisation of each column: unit
  2-norm (``dv ← dv − v·Re(vᴴ dv)``) and, for complex vectors, LAPACK's phase, which
  makes the largest entry ``v_k`` of each column real (``dv ← dv − i·v·Im(dv_k)/v_k``).
  The VJP is the transpose of these three steps (HIPS autograd's ``grad_eig`` has the
  first two; JAX's JVP likewise).

Eigenvectors are defined up to a scale; NumPy fixes the norm and the phase, and so
do these rules, so the derivatives are those of NumPy's own eigenvectors, as long as
the largest entry of a column stays the largest (where two entries tie in magnitude,
NumPy's phase jumps, and so would any derivative). Functions that do not depend on
the normalisation (``|v_i|²``-weighted sums, ``v vᴴ``, ratios ``v_i / v_j``,
eigenvalues) are safe everywhere else. A real input gets a real gradient.

Repeated eigenvalues: ``F`` is infinite there and the eigenvectors are not
differentiable (the gradient is inf or NaN, as for ``eigh``, and in JAX and
PyTorch). The eigenvalues' rule stays finite when the matrix is diagonalisable
(``diag(V⁻¹ dA V)`` in the basis NumPy returns): a symmetric function of a cluster
of equal eigenvalues (their sum, their product) gets its true gradient, a single
one of them an arbitrary split. A defective matrix (a Jordan block) has no
derivative at all (``V`` is singular): the eigenvalues' rules refuse one whose ``V`` is
singular to working precision (condition number above ``10⁻²/ε``), where JAX and PyTorch
return a finite wrong number.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = np.array([[0.0, -2.0], [1.0, 0.0]])     # λ = ±i√2, so Σ|λ|² = 2·det(a)
>>> wg.grad(lambda a: np.sum(np.abs(np.linalg.eigvals(a)) ** 2))(a)  # 2·cofactors
array([[ 0., -2.],
       [ 4.,  0.]])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, apply, dtype_of
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape
from wengert.ops.linalg.basic import SOLVE, matmul
from wengert.ops.linalg.checks import checked, register
from wengert.ops.linalg.matrix import column as _column
from wengert.ops.linalg.matrix import mT as _mT
from wengert.ops.linalg.matrix import row as _row
from wengert.ops.linalg.matrix import zero_tangent as _zeros_like
from wengert.ops.linalg.memo import DecompositionMemo
from wengert.ops.reduce import sum as _sum
from wengert.ops.shape import diagonal

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("eig")

__all__ = ["EIG_VALUES", "EIG_VECTORS", "eig", "eigvals", "EigResult"]

#: One decomposition shared by both primitives and their rules (see wengert.ops.linalg.memo).
_EIG = DecompositionMemo(np.linalg.eig)


def _values_impl(a: Any) -> Any:
    return _EIG(a)[0].copy()


def _vectors_impl(a: Any) -> Any:
    return _EIG(a)[1].copy()


def _solve(a: Any, b: Any) -> Any:
    """``a⁻¹ b`` for stacks of matrices (``b`` a matrix)."""
    return apply(SOLVE, a, b)


def _gap_inverse(w: Any) -> Any:
    """``F_ij = 1 / (w_j − w_i)`` off the diagonal, 0 on it (no 1/0 off a tie)."""
    n = _shape(w)[-1]
    eye = np.eye(n, dtype=bool)
    gaps = _row(w) - _column(w)
    return _ew.where(eye, 0.0, _ew.divide(1.0, _ew.where(eye, 1.0, gaps)))


def _is_complex(v: Any) -> bool:
    return dtype_of(v).kind == "c"


def _largest(v: Any) -> Any:
    """The mask of the largest entry (in magnitude) of each column of ``v`` (raw: it is
    where NumPy's phase convention puts a real entry; constant under differentiation)."""
    mag = np.abs(_raw(v))
    k = np.argmax(mag, axis=-2)
    return np.arange(_shape(v)[-2])[:, None] == k[..., None, :]


def _diagonalisable(v: Any) -> Any:
    """``v`` (the eigenvectors), after refusing a defective matrix (see
    :func:`_refuse_defective`)."""
    return checked(v, "eig_diagonalisable")


def _refuse_defective(v: np.ndarray, arg: Any = None) -> None:
    """Refuse eigenvectors ``v`` of a defective matrix: one whose eigenvector matrix is
    singular to working precision (a Jordan block), where the eigenvalues have no
    derivative (they move as √ε) and ``V⁻¹`` would give a finite but meaningless number
    (``tr(A²) = Σλ²`` would get a gradient other than ``2Aᵀ``)."""
    eps = np.finfo(v.real.dtype).eps
    with np.errstate(all="ignore"):
        cond = np.linalg.cond(v)
    if np.any(~(cond * eps < 1e-2)):  # (fewer than two correct digits in V⁻¹)
        raise np.linalg.LinAlgError(
            "eigvals: the matrix is defective (its eigenvector matrix is singular to "
            f"working precision, condition number {np.max(cond):.3g}): repeated "
            "eigenvalues without a full set of eigenvectors (a Jordan block) have no "
            "derivative. Differentiate a function of the matrix itself instead (trace, "
            "det, np.trace(A @ A) for Σλ²), or perturb the matrix off the Jordan form."
        )


register("eig_diagonalisable", _refuse_defective)


def _values_vjp(g: Any, ans: Any, a: Any) -> Any:
    vt = _mT(_diagonalisable(apply(EIG_VECTORS, a)))
    return _solve(vt, _column(g) * vt)  # V⁻ᵀ diag(λ̄) Vᵀ


def _values_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    v = _diagonalisable(apply(EIG_VECTORS, a))
    return diagonal(_solve(v, matmul(t, v)), 0, -2, -1)  # diag(V⁻¹ dA V)


def _vectors_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    v = ans
    f = _gap_inverse(apply(EIG_VALUES, a))
    dv = matmul(v, f * _solve(v, matmul(t, v)))  # V (F ∘ V⁻¹ dA V)
    # unit norm: remove the component Re(vᴴ dv) along each column
    dv = dv - v * _row(_ew.real(_sum(_ew.conj(v) * dv, axis=-2)))
    if _is_complex(v):  # LAPACK's phase: the largest entry v_k stays real
        big = _largest(v)
        vk = _ew.real(_sum(_ew.where(big, v, 0.0), axis=-2))
        dvk = _ew.imag(_sum(_ew.where(big, dv, 0.0), axis=-2))
        dv = dv - v * _row(_ew.divide(dvk, vk)) * 1j
    return dv


def _vectors_vjp(g: Any, ans: Any, a: Any) -> Any:
    v = ans
    if _is_complex(v):  # the transpose of the phase step
        big = _largest(v)
        vk = _ew.real(_sum(_ew.where(big, v, 0.0), axis=-2))
        s = _ew.imag(_sum(v * g, axis=-2))
        g = g - _ew.where(big, _row(_ew.divide(s, vk)) * 1j, 0.0)
    # the transpose of the norm step
    g = g - _ew.conj(v) * _row(_ew.real(_sum(v * g, axis=-2)))
    f = _gap_inverse(apply(EIG_VALUES, a))
    vt = _mT(v)
    return _solve(vt, matmul(f * matmul(vt, g), vt))  # V⁻ᵀ (F ∘ Vᵀ ḡ) Vᵀ


def _rng_general(rng: Any, shape: tuple[int, ...], complex_pairs: bool) -> np.ndarray:
    """A matrix (or stack) whose eigenvalues are well apart: real ones, or with complex
    pairs; the largest entry of each eigenvector well ahead of the next."""
    n = shape[-1]
    q = rng.normal(size=shape) + 2.5 * np.eye(n)
    w = np.arange(n) * 1.3 - n * 0.4 + rng.uniform(-0.3, 0.3, shape[:-1])
    d = np.zeros(shape)
    idx = np.arange(n)
    d[..., idx, idx] = w
    if complex_pairs and n >= 2:
        d[..., 0, 1] = 0.9  # a 2×2 rotation block: λ = w0 ± 0.9i·(…)
        d[..., 1, 0] = -0.9
        d[..., 1, 1] = w[..., 0]
    return q @ d @ np.linalg.inv(q)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_general(rng, s, c),), {})
            for s, c in [((1, 1), False), ((2, 2), False), ((3, 3), False), ((2, 2), True),
                         ((3, 3), True), ((2, 3, 3), True)]]


def _values_jax(s: JaxStep) -> str:
    """``jax.lax.linalg.eig(a)[0]`` with eigenvector derivatives on (JAX's opt-in; its
    eigenvectors' derivatives fix the norm but not NumPy's phase, so they agree with
    wengert's for phase-invariant functions), its real part where NumPy's result is
    real (a real matrix with real eigenvalues; JAX's is always complex)."""
    text = (f"jax.lax.linalg.eig({s.args[0]}, compute_left_eigenvectors=False, "
            "enable_eigvec_derivs=True)[0]")
    return f"jnp.real({text})" if s.out_dtype.kind == "f" else text


EIG_VALUES = Op("eig_values", _values_impl, (_values_vjp,), jvp=_values_jvp, reads=(0,),
                part=("eig", 0), spelling="np.linalg.eig",
                formula="dλ = diag(V⁻¹ dA V); Ā = V⁻ᵀ diag(λ̄) Vᵀ", symbol="λ",
                adjoint=("V⁻ᵀ diag(ḡ) Vᵀ",), samples=_samples, complex_rules=True, jax=_values_jax,
                raises=True)
FAMILY.op(EIG_VALUES)
EIG_VECTORS = Op("eig_vectors", _vectors_impl, (_vectors_vjp,), jvp=_vectors_jvp,
                 part=("eig", 1), spelling="np.linalg.eig",
                 reads=(0,), reads_out=True,
                 formula="dV = V (F ∘ (V⁻¹ dA V)), F_ij = 1/(λ_j − λ_i), then normalised "
                         "as NumPy's (unit norm, largest entry real)", symbol="V",
                 adjoint=("{out}⁻ᵀ (F ∘ ({out}ᵀ ḡ′)) {out}ᵀ; ḡ′: ḡ less norm, phase",),
                 samples=_samples, complex_rules=True,
                 jax_refused="JAX's eigenvectors of a non-symmetric matrix differ from "
                             "NumPy's by a phase per column (NumPy's LAPACK makes the largest "
                             "entry real with either sign), and so do their derivatives",
                             raises=True)
FAMILY.op(EIG_VECTORS)
FAMILY.joint(EIG_VALUES, EIG_VECTORS, numpy="np.linalg.eig({0})")


class EigResult(NamedTuple):
    """``(eigenvalues, eigenvectors)``, as ``np.linalg.eig`` returns them."""

    eigenvalues: Any
    eigenvectors: Any


@FAMILY.export(space="linalg")
def eig(a: Any) -> EigResult:
    """Eigenvalues and (unit-norm, largest entry real) eigenvectors of a square matrix
    or stack (``np.linalg.eig``); see the module for the rules and where they hold.

    Examples
    --------
    >>> import numpy as np
    >>> w, v = eig(np.array([[2.0, 1.0], [0.0, 3.0]]))
    >>> w
    array([2., 3.])
    """
    return EigResult(apply(EIG_VALUES, a), apply(EIG_VECTORS, a))


@FAMILY.export(space="linalg")
def eigvals(a: Any) -> Any:
    """Eigenvalues of a square matrix or stack (``np.linalg.eigvals``)."""
    return apply(EIG_VALUES, a)


