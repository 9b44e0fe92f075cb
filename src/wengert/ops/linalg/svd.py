"""The singular value decomposition: ``np.linalg.svd`` as three primitives (``s``, ``U``,
``Vᵀ`` of the thin decomposition), and the matrix norms made from it.

With ``A = U S Vᵀ`` (``k = min(m, n)`` columns), ``dP = Uᵀ dA V`` and
``F_ij = 1 / (s_j² − s_i²)`` off the diagonal (0 on it), as in Townsend (2016),
"Differentiating the singular value decomposition":

* ``ds = diag(dP)``; ``Ā = U diag(s̄) Vᵀ``;
* ``dU = U (F ∘ (dP S + S dPᵀ)) + (I − U Uᵀ) dA V S⁻¹``;
* ``dV = V (F ∘ (S dP + dPᵀ S)) + (I − V Vᵀ) dAᵀ U S⁻¹``,

and the transposes of these maps for the VJPs. The rules call the primitives again,
so they differentiate to any order.

Complex matrices (HIPS autograd's convention, see :mod:`wengert.ops.elementwise`: the VJP
at ``ḡ`` is the gradient of ``Re Σ ḡ·f``, no conjugation in the pairing), ``A = U S
Vᴴ``, ``dP = Uᴴ dA V``: ``ds = Re diag(dP)`` (the singular values are real, ``Ā =
conj(U) diag(s̄) Vᵀ``), and the vectors' rules are the ones above with ``ᵀ`` read
``ᴴ``, plus ``i·Im(dP_jj)/s_j`` on the diagonal of ``Uᴴ dU`` and a phase term. Each
pair ``(u_j, v_j)`` is determined up to a common phase ``e^{iθ}``; NumPy's LAPACK
(``zgesdd``) keeps the first row of ``V`` real for a tall or square matrix, and the
first row of ``U`` (to rounding) for a wide one, and the rules differentiate those
very vectors (``θ_j = −Im(dr_0j)/r_0j`` for that row ``r``; left out where ``r_0j``
is exactly zero, as in :mod:`wengert.ops.linalg.eigh`). So finite differences of
``np.linalg.svd`` agree with them on any function of ``U`` and ``Vh``, and the
functions invariant to the phases (``|U|²``, ``U S Vh``, the singular values and the
norms made of them, ``np.linalg.norm(a, 2 | -2 | 'nuc')``, ``cond``) get their
gradient whatever the convention. JAX and HIPS autograd leave the phase term out (so
they differ from finite differences of their own SVD on phase-dependent functions),
and PyTorch raises on a phase-dependent loss; the JAX export refuses complex singular
vectors for that reason.

Conventions where the derivative does not exist, as JAX's and PyTorch's: the singular
values' gradient is always finite (at a repeated or zero singular value it is the one
of the vectors NumPy returned); the vectors' gradient is inf or NaN at a repeated
singular value, and for a rank-deficient input.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> a = np.array([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
>>> wg.grad(lambda a: np.linalg.svd(a, compute_uv=False)[0])(a)
array([[1., 0.],
       [0., 0.],
       [0., 0.]])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, apply
from wengert.ops.base import dtype_of as _dtype
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape
from wengert.ops.linalg.basic import matmul
from wengert.ops.linalg.eigh import JAX_PHASE, eigh, eigvalsh
from wengert.ops.linalg.matrix import as_matrices
from wengert.ops.linalg.matrix import column as _column
from wengert.ops.linalg.matrix import eye_like as _eye_like
from wengert.ops.linalg.matrix import mT as _mT
from wengert.ops.linalg.matrix import row as _row
from wengert.ops.linalg.matrix import zero_tangent as _zeros_like
from wengert.ops.linalg.memo import DecompositionMemo
from wengert.ops.reduce import sum as _sum
from wengert.ops.shape import diagonal
from wengert.ops.shape import flip as _flip
from wengert.ops.shape import sort as _sort
from wengert.ops.shape import take_along_axis as _take_along_axis

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("svd")

__all__ = ["SVD_VALUES", "SVD_U", "SVD_VT", "svd", "SVDResult"]


#: One decomposition shared by the three primitives and their rules (wengert.ops.linalg.memo).
_SVD = DecompositionMemo(lambda a: np.linalg.svd(a, full_matrices=False))


def _values_impl(a: Any) -> Any:
    return _SVD(a)[1].copy()


def _u_impl(a: Any) -> Any:
    return _SVD(a)[0].copy()


def _vt_impl(a: Any) -> Any:
    return _SVD(a)[2].copy()


def _is_complex(v: Any) -> bool:
    return _dtype(v).kind == "c"


def _adjoint(x: Any) -> Any:
    """``xᴴ`` of the last two axes (``xᵀ`` of a real ``x``)."""
    return _ew.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _parts(a: Any) -> tuple[Any, Any, Any]:
    """``U``, ``s``, ``V`` of ``a`` as differentiable values (the primitives again)."""
    return apply(SVD_U, a), apply(SVD_VALUES, a), _adjoint(apply(SVD_VT, a))


def _gap_inverse(s: Any) -> Any:
    """``F_ij = 1 / (s_j² − s_i²)`` off the diagonal, 0 on it (no 1/0 is ever computed)."""
    k = _shape(s)[-1]
    eye = np.eye(k, dtype=bool)
    s2 = s * s
    return _ew.where(eye, 0.0, 1.0 / _ew.where(eye, 1.0, _row(s2) - _column(s2)))


# -- singular values ---------------------------------------------------------------------
def _values_vjp(g: Any, ans: Any, a: Any) -> Any:
    u, _, v = _parts(a)
    if _is_complex(u):  # Ā = conj(U) diag(s̄) Vᵀ
        return matmul(_ew.conj(u) * _row(g), _mT(v))
    return matmul(u * _row(g), _mT(v))


def _values_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    u, _, v = _parts(a)
    if _is_complex(u):  # ds = Re diag(Uᴴ dA V)
        return _ew.real(_sum(_ew.conj(u) * matmul(t, v), axis=-2))
    return _sum(u * matmul(t, v), axis=-2)


# -- complex singular vectors --------------------------------------------------------------
def _phase_on_v(a: Any) -> bool:
    """Which factor NumPy's LAPACK (``zgesdd``) keeps a real first row in: ``V`` for a
    tall or square matrix, ``U`` (to rounding: it decomposes ``Aᴴ``) for a wide one."""
    m, n = _shape(a)[-2:]
    return m >= n


def _over_first_row(x: Any, r: Any) -> Any:
    """``x / r_0`` (``r_0`` the real part of ``r``'s first row, differentiable), 0 where
    ``r_0`` is 0 (NumPy's phase is then fixed otherwise; the phase term is left out)."""
    r0 = _ew.real(_take_first_row(r))
    zero = r0 == 0  # (a comparison: recorded when traced, no derivative)
    return _ew.where(zero, 0.0, _ew.divide(x, _ew.where(zero, 1.0, r0)))


def _take_first_row(r: Any) -> Any:
    first = np.zeros((_shape(r)[-2], 1), dtype=bool)
    first[0] = True
    return _sum(_ew.where(first, r, 0.0), axis=-2)


def _first_row_mask(r: Any) -> np.ndarray:
    first = np.zeros((_shape(r)[-2], 1), dtype=bool)
    first[0] = True
    return first


def _complex_vectors_jvp(t: Any, a: Any) -> tuple[Any, Any]:
    """``(dU, dV)`` of a complex ``A = U S Vᴴ`` along ``t`` (see the module docstring)."""
    u, s, v = _parts(a)
    f = _gap_inverse(s)
    dp = matmul(matmul(_adjoint(u), t), v)
    dph = _adjoint(dp)
    k = _shape(s)[-1]
    eye = np.eye(k, dtype=bool)
    omega_u = f * (dp * _row(s) + _column(s) * dph)
    omega_u = omega_u + _ew.where(eye, _row(_ew.imag(_diag(dp)) / s) * 1j, 0.0)
    omega_v = f * (_column(s) * dp + dph * _row(s))
    du = matmul(u, omega_u)
    dv = matmul(v, omega_v)
    m, n = _shape(a)[-2:]
    if m > k:
        du = du + matmul(_eye_like(m, u) - matmul(u, _adjoint(u)), matmul(t, v)) / _row(s)
    if n > k:
        dv = dv + matmul(_eye_like(n, v) - matmul(v, _adjoint(v)),
                         matmul(_adjoint(t), u)) / _row(s)
    # NumPy's phase: the first row of V (or U) stays real
    r, dr = (v, dv) if _phase_on_v(a) else (u, du)
    theta = -_over_first_row(_ew.imag(_take_first_row(dr)), r)
    return du + u * _row(theta) * 1j, dv + v * _row(theta) * 1j


def _diag(x: Any) -> Any:
    return diagonal(x, 0, -2, -1)


def _complex_vectors_vjp(gu: Any, gv: Any, a: Any) -> Any:
    """The transpose of :func:`_complex_vectors_jvp`: ``Ā`` from ``Ū`` and ``V̄`` (either
    may be ``None``)."""
    u, s, v = _parts(a)
    gu = _ew.conj(u) * 0.0 if gu is None else gu
    gv = _ew.conj(v) * 0.0 if gv is None else gv
    # the phase step: θ's cotangent c = −Im Σ (U∘Ū + V∘V̄), sent to the first row of R
    c = -_ew.imag(_sum(u * gu, axis=-2) + _sum(v * gv, axis=-2))
    extra = _ew.where(_first_row_mask(u if not _phase_on_v(a) else v),
                      _row(_over_first_row(c, v if _phase_on_v(a) else u)) * 1j, 0.0)
    if _phase_on_v(a):
        gv = gv + extra
    else:
        gu = gu + extra
    f = _gap_inverse(s)
    hu = f * matmul(_mT(u), gu)
    hv = f * matmul(_mT(v), gv)
    k = _shape(s)[-1]
    eye = np.eye(k, dtype=bool)
    pbar = ((hu + _ew.conj(_mT(hu))) * _row(s) + _column(s) * (hv + _ew.conj(_mT(hv)))
            + _ew.where(eye, _row(_ew.imag(_diag(matmul(_mT(u), gu))) / s) * 1j, 0.0))
    out = matmul(matmul(_ew.conj(u), pbar), _mT(v))
    m, n = _shape(a)[-2:]
    if m > k:
        out = out + matmul(matmul(_eye_like(m, u) - matmul(_ew.conj(u), _mT(u)), gu / _row(s)),
                           _mT(v))
    if n > k:
        out = out + _ew.conj(matmul(matmul(u, _mT(gv / _row(s))),
                                    _eye_like(n, v) - matmul(v, _adjoint(v))))
    return out


# -- U -------------------------------------------------------------------------------------
def _u_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    if _is_complex(ans):
        return _complex_vectors_jvp(t, a)[0]
    u, s, v = ans, apply(SVD_VALUES, a), _mT(apply(SVD_VT, a))
    dp = matmul(matmul(_mT(u), t), v)
    inner = matmul(u, _gap_inverse(s) * (dp * _row(s) + _column(s) * _mT(dp)))
    m, k = _shape(u)[-2:]
    if m == k:  # U is square: I − U Uᵀ = 0
        return inner
    outside = matmul(_eye_like(m, u) - matmul(u, _mT(u)), matmul(t, v)) / _row(s)
    return inner + outside


def _u_vjp(g: Any, ans: Any, a: Any) -> Any:
    if _is_complex(ans):
        return _complex_vectors_vjp(g, None, a)
    u, s, v = ans, apply(SVD_VALUES, a), _mT(apply(SVD_VT, a))
    gm = _gap_inverse(s) * matmul(_mT(u), g)
    inner = matmul(matmul(u, (gm + _mT(gm)) * _row(s)), _mT(v))
    m, k = _shape(u)[-2:]
    if m == k:  # U is square: I − U Uᵀ = 0
        return inner
    outside = matmul(matmul(_eye_like(m, u) - matmul(u, _mT(u)), g / _row(s)), _mT(v))
    return inner + outside


# -- Vᵀ ------------------------------------------------------------------------------------
def _vt_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    if _is_complex(ans):  # dVh = dVᴴ
        return _adjoint(_complex_vectors_jvp(t, a)[1])
    u, s, v = apply(SVD_U, a), apply(SVD_VALUES, a), _mT(ans)
    dp = matmul(matmul(_mT(u), t), v)
    inner = matmul(v, _gap_inverse(s) * (_column(s) * dp + _mT(dp) * _row(s)))
    n, k = _shape(v)[-2:]
    if n == k:  # V is square: I − V Vᵀ = 0
        return _mT(inner)
    outside = matmul(_eye_like(n, v) - matmul(v, _mT(v)), matmul(_mT(t), u)) / _row(s)
    return _mT(inner + outside)


def _vt_vjp(g: Any, ans: Any, a: Any) -> Any:
    if _is_complex(ans):  # V̄ = conj(ḡᵀ)
        return _complex_vectors_vjp(None, _adjoint(g), a)
    u, s, v = apply(SVD_U, a), apply(SVD_VALUES, a), _mT(ans)
    gv = _mT(g)  # V̄
    h = _gap_inverse(s) * matmul(_mT(v), gv)
    inner = matmul(matmul(u, _column(s) * (h + _mT(h))), _mT(v))
    n, k = _shape(v)[-2:]
    if n == k:  # V is square: I − V Vᵀ = 0
        return inner
    outside = matmul(u, matmul(_mT(gv) / _column(s), _eye_like(n, v) - matmul(v, _mT(v))))
    return inner + outside


def _rng_matrix(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A matrix (or stack) whose singular values are distinct, at least 0.5 apart and 0.5
    from 0."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.normal(size=shape[:-2] + (m, k)))
    v, _ = np.linalg.qr(rng.normal(size=shape[:-2] + (n, k)))
    s = 0.5 + np.arange(k)[::-1] * 0.8 + rng.uniform(0.0, 0.2, shape[:-2] + (k,))
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_matrix(rng, s),), {}) for s in [(1, 1), (3, 3), (4, 2), (2, 4), (2, 3, 2)]]


SVD_VALUES = Op("svd_values", _values_impl, (_values_vjp,), jvp=_values_jvp, reads=(0,),
                part=("svd", 1), spelling="np.linalg.svd",
                formula="ds = diag(Uᵀ dA V); Ā = U diag(s̄) Vᵀ (complex: ds = Re diag(Uᴴ dA V), "
                        "Ā = conj(U) diag(s̄) Vᵀ)", symbol="σ",
                adjoint=("U diag(ḡ) Vᵀ",), complex_adjoint=("conj(U) diag(ḡ) Vᵀ",),
                samples=_samples, complex_rules=True, jax="jnp.linalg.svd({0}, compute_uv=False)",
                raises=True)
FAMILY.op(SVD_VALUES)
SVD_U = Op("svd_u", _u_impl, (_u_vjp,), jvp=_u_jvp, reads=(0,), reads_out=True,
           part=("svd", 0), spelling="np.linalg.svd",
           formula="dU = U (F ∘ (dP S + S dPᵀ)) + (I − U Uᵀ) dA V S⁻¹, dP = Uᵀ dA V",
           symbol="U", adjoint=("U ((G + Gᵀ) S) Vᵀ + (I − U Uᵀ) ḡ S⁻¹ Vᵀ, G = F ∘ (Uᵀ ḡ)",),
           complex_adjoint=("conj(U) ((G + Gᴴ) S + i·Im diag(Uᵀ ḡ′) S⁻¹) Vᵀ + (I − conj(U) Uᵀ) "
                            "ḡ′ S⁻¹ Vᵀ, G = F ∘ (Uᵀ ḡ′); ḡ′: ḡ with the term of NumPy's "
                            "phase",),
           samples=_samples, complex_rules=True, jax="jnp.linalg.svd({0}, full_matrices=False)[0]",
           jax_complex_refused=JAX_PHASE, raises=True)
FAMILY.op(SVD_U)
SVD_VT = Op("svd_vt", _vt_impl, (_vt_vjp,), jvp=_vt_jvp, reads=(0,), reads_out=True,
            part=("svd", 2), spelling="np.linalg.svd",
            formula="dV = V (F ∘ (S dP + dPᵀ S)) + (I − V Vᵀ) dAᵀ U S⁻¹, dP = Uᵀ dA V",
            symbol="Vᵀ",
            adjoint=("U (S (H + Hᵀ)) Vᵀ + U S⁻¹ ḡ (I − V Vᵀ), H = F ∘ (Vᵀ ḡᵀ)",),
            complex_adjoint=("conj(U) (S (H + Hᴴ)) Vᵀ + conj(U S⁻¹ V̄ᵀ (I − V Vᴴ)), H = F ∘ "
                             "(Vᵀ V̄), V̄ = conj(ḡᵀ) with the term of NumPy's phase",),
            samples=_samples, complex_rules=True,
            jax="jnp.linalg.svd({0}, full_matrices=False)[2]", jax_complex_refused=JAX_PHASE,
            raises=True)
FAMILY.op(SVD_VT)
FAMILY.joint(SVD_U, SVD_VALUES, SVD_VT, numpy="np.linalg.svd({0}, full_matrices=False)",
             jax="jnp.linalg.svd({0}, full_matrices=False)")


class SVDResult(NamedTuple):
    """``(U, S, Vh)``, as ``np.linalg.svd`` returns them."""

    U: Any
    S: Any
    Vh: Any


def _hermitian_svd(a: Any, compute_uv: bool) -> Any:
    """``np.linalg.svd(a, hermitian=True)`` as NumPy computes it, with wengert's ops: the
    eigendecomposition of the symmetric matrix ``a``'s lower triangle defines (``eigh``
    reads that triangle, as NumPy's), the eigenvalues' magnitudes in descending order as
    singular values, their signs moved into ``Vh``."""
    if not compute_uv:
        return _flip(_sort(_ew.abs(eigvalsh(a)), axis=-1), axis=-1)
    w, u = eigh(a)
    # copysign(1, w), in w's dtype: no zero sign
    sign = _ew.astype(_ew.where(np.signbit(_raw(w)), -1.0, 1.0), _dtype(w))
    s = _ew.abs(w)
    order = np.argsort(_raw(s), axis=-1)[..., ::-1]
    sign = _take_along_axis(sign, order, axis=-1)
    s = _take_along_axis(s, order, axis=-1)
    u = _take_along_axis(u, order[..., None, :], axis=-1)
    return SVDResult(u, s, _adjoint(u * _row(sign)))


@FAMILY.export(space="linalg")
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """The singular value decomposition (``compute_uv=False``: the singular values), as
    ``np.linalg.svd``.

    With ``full_matrices=True`` (NumPy's default) and a non-square input, the extra
    columns of ``U`` (or rows of ``Vh``) are not determined by the input and have no
    derivative: ask for ``full_matrices=False`` to differentiate the vectors (JAX 0.10
    refuses them too; PyTorch 2.13 ignores their cotangents, which would drop part of a
    gradient silently). With ``hermitian=True`` the SVD is NumPy's: made from
    ``eigh`` of the matrix's lower triangle (its upper one is not read, and gets no
    gradient), ``s = |λ|`` in descending order and the signs of ``λ`` in ``Vh``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = np.array([[2.0, 1.0], [1.0, -3.0]])
    >>> wg.grad(lambda a: np.linalg.svd(a, hermitian=True)[1][0])(a).round(4)
    array([[-0.0358,  0.    ],
           [ 0.3714, -0.9642]])
    """
    a = as_matrices(a)
    shape = _shape(a)
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    if not compute_uv:
        return apply(SVD_VALUES, a)
    m, n = shape[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            f"svd of a {m}×{n} matrix with full_matrices=True: the extra "
            f"{'columns of U' if m > n else 'rows of Vh'} are not determined by the input "
            "and have no derivative; pass full_matrices=False (or compute_uv=False)."
        )
    return SVDResult(apply(SVD_U, a), apply(SVD_VALUES, a), apply(SVD_VT, a))


