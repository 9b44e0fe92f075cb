"""The symmetric eigendecomposition: ``np.linalg.eigh`` and ``eigvalsh``.

``np.linalg.eigh(a, UPLO)`` reads one triangle of ``a`` (the lower one for
``UPLO='L'``, NumPy's default, or the upper one) and ignores the other: its answer is
the decomposition of the symmetric matrix that triangle defines. wengert's ``eigh``
and ``eigvalsh`` are that function, in value and in derivative: they build the
symmetric matrix from the triangle NumPy reads (``where(tri, a, aᵀ)``, written with
wengert's ops) and decompose it with two primitives. So on any input, symmetric
or not, the values are NumPy's, the gradient with respect to the unread triangle is
zero and the read triangle gets the whole gradient (an off-diagonal entry stands for
two entries of the symmetric matrix), as HIPS autograd's and as finite differences of
``np.linalg.eigh`` itself give. The peers differ: JAX symmetrises the input, ``(a +
aᵀ)/2``, so its values are not NumPy's on a non-symmetric input (and ``UPLO`` changes
nothing); PyTorch reads the triangle as NumPy but returns the symmetric gradient.
Through a symmetric parametrisation (``eigh(b + bᵀ)``) all of them agree.

The primitives, ``eigh_values`` (the eigenvalues, ascending) and ``eigh_vectors``
(the eigenvectors, as columns), decompose the symmetric part ``(a + aᵀ)/2`` of their
input (which the triangle fill has made symmetric, so it is the same matrix, bit for
bit) with LAPACK told to read the same triangle (``uplo``), so the eigenvectors' signs
are NumPy's too. Their rules, with ``A = V Λ Vᵀ``:

* ``dλ = diag(Vᵀ dA V)``, so ``Ā = V diag(λ̄) Vᵀ``;
* ``dV = V (F ∘ (Vᵀ dA V))`` with ``F_ij = 1 / (λ_j − λ_i)`` off the diagonal and 0 on
  it, so ``Ā = sym(V (F ∘ (Vᵀ V̄)) Vᵀ)``.

Complex Hermitian matrices (HIPS autograd's convention, see :mod:`wengert.ops.elementwise`:
the VJP at ``ḡ`` is the gradient of ``Re Σ ḡ·f``, no conjugation in the pairing). The
triangle is read as NumPy reads it (the unread one is ``conj`` of the read one's
transpose, and the imaginary part of the diagonal is ignored), the primitives
decompose the Hermitian part ``(a + aᴴ)/2``, and with ``A = V Λ Vᴴ``:

* ``dλ = Re diag(Vᴴ dA V)``, so ``Ā = conj(V) diag(λ̄) Vᵀ``; the eigenvalues are real;
* ``dV = V (F ∘ (Vᴴ dA V))`` plus a phase term: each eigenvector is determined up to
  a phase ``e^{iθ}``, and NumPy's LAPACK (``zheevd``) fixes it by keeping one row of
  ``V`` real, the first for ``UPLO='L'`` and the last for ``'U'``
  (``tests/test_eigh.py`` pins this). The rule differentiates those very vectors:
  ``dv ← dv − i·v·Im(dv_k)/v_k`` with ``k`` that row, as :mod:`wengert.ops.linalg.eig` does
  for LAPACK's other convention. So finite differences of ``np.linalg.eigh`` agree
  with it on every function of ``V`` (the registry sweep checks this on complex
  samples), and functions invariant to each column's phase (``|V|²``,
  ``V diag(c) Vᴴ``, the eigenvalues), which are the only ones meaningful beyond
  NumPy's convention, get their gradient whatever the convention: for them the
  phase term is zero. Where ``v_k`` is exactly zero (NumPy's phase is then fixed by
  the deflation, not by that row) the rule leaves the phase term out, which is still
  right for the phase-invariant functions. Where ``v_k`` is tiny, NumPy's own phase
  moves fast and the derivative of ``V`` is large: differentiate a phase-invariant
  function there. JAX and HIPS autograd leave the phase term out altogether (their
  eigenvectors' derivatives have ``Im diag(Vᴴ dV) = 0``), and so differ from finite
  differences of their own ``eigh`` on phase-dependent functions; PyTorch raises on
  a phase-dependent loss ("The eigenvectors in the complex case are specified up to
  multiplication by e^{i phi}").

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
>>> p = np.outer(v[:, -1], v[:, -1])
>>> np.allclose(g, np.tril(2 * p, -1) + np.diag(np.diag(p)))  # the lower triangle only
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops.base import Family, apply
from wengert.ops.base import dtype_of as _dtype
from wengert.ops.base import shape_of as _shape
from wengert.ops.linalg.basic import matmul
from wengert.ops.linalg.matrix import column as _column
from wengert.ops.linalg.matrix import hermitian_from_triangle
from wengert.ops.linalg.matrix import mT as _mT
from wengert.ops.linalg.matrix import row as _row
from wengert.ops.linalg.matrix import zero_tangent as _zeros_like
from wengert.ops.linalg.memo import DecompositionMemo
from wengert.ops.reduce import sum as _sum

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("eigen")

__all__ = ["EIGH_VALUES", "EIGH_VECTORS", "eigh", "eigvalsh", "EighResult"]


def _sym(x: Any) -> Any:
    return (x + _mT(x)) * 0.5


def _symmetric_part(a: Any) -> np.ndarray:
    """The Hermitian part ``(a + aᴴ)/2`` (the symmetric part of a real ``a``)."""
    a = np.asarray(a)
    at = np.swapaxes(a, -1, -2)
    return 0.5 * (a + (at.conj() if a.dtype.kind == "c" else at))


def _is_complex(v: Any) -> bool:
    return _dtype(v).kind == "c"


def _herm(x: Any) -> Any:
    """``(x + xᴴ)/2``: the Hermitian part, and the adjoint of taking it."""
    return (x + _ew.conj(_mT(x))) * 0.5


def _phase_mask(v: Any, uplo: str) -> np.ndarray:
    """The row of ``v`` LAPACK keeps real, as a mask.

    ``zheevd`` reduces the matrix to a real tridiagonal one with Householder reflections
    that leave the first (``uplo='L'``) or the last (``'U'``) coordinate alone, and the
    tridiagonal's eigenvectors are real, so that row of NumPy's eigenvectors is real
    (``tests/test_eigh.py`` pins it)."""
    n = _shape(v)[-2]
    mask = np.zeros((n, 1), dtype=bool)
    mask[0 if uplo == "L" else n - 1] = True
    return mask


def _over_phase_row(x: Any, v: Any, uplo: str) -> Any:
    """``x / v_k`` (``v_k`` the real row of ``v``, differentiable), 0 where ``v_k`` is 0:
    there NumPy's phase is fixed by some other entry and the rule keeps the gauge-free
    derivative (right for the phase-invariant functions)."""
    vk = _ew.real(_sum(_ew.where(_phase_mask(v, uplo), v, 0.0), axis=-2))
    zero = vk == 0  # (a comparison: recorded when traced, no derivative)
    return _ew.where(zero, 0.0, _ew.divide(x, _ew.where(zero, 1.0, vk)))


#: The matrix the primitives decompose (for code that calls NumPy's ``eigh`` as they do).
hermitian_part = _symmetric_part

#: One decomposition shared by both primitives and their rules (see wengert.ops.linalg.memo),
#: for each triangle LAPACK is told to read (its answers differ in the eigenvectors' signs
#: and in rounding, so each ``UPLO`` gives NumPy's own answer bit for bit).
_EIGH = {uplo: DecompositionMemo(lambda a, uplo=uplo: np.linalg.eigh(_symmetric_part(a),
                                                                     UPLO=uplo))
         for uplo in ("L", "U")}


def _values_impl(a: Any, uplo: str = "L") -> Any:
    return _EIGH[uplo](a)[0].copy()


def _vectors_impl(a: Any, uplo: str = "L") -> Any:
    return _EIGH[uplo](a)[1].copy()


def _gap_inverse(w: Any) -> Any:
    """``F_ij = 1 / (w_j − w_i)`` off the diagonal, 0 on it (no 1/0 is ever computed)."""
    n = _shape(w)[-1]
    eye = np.eye(n, dtype=bool)
    gaps = _row(w) - _column(w)
    return _ew.where(eye, 0.0, 1.0 / _ew.where(eye, 1.0, gaps))


def _values_vjp(g: Any, ans: Any, a: Any, uplo: str = "L") -> Any:
    v = apply(EIGH_VECTORS, a, uplo=uplo)
    if _is_complex(v):  # Ā = conj(V) diag(λ̄) Vᵀ (Hermitian already)
        return matmul(_ew.conj(v) * _row(g), _mT(v))
    return matmul(v * _row(g), _mT(v))


def _values_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, uplo: str = "L") -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    v = apply(EIGH_VECTORS, a, uplo=uplo)
    if _is_complex(v):  # dλ = diag(Vᴴ herm(dA) V) = Re diag(Vᴴ dA V) if dA is Hermitian
        return _ew.real(_sum(_ew.conj(v) * matmul(_herm(t), v), axis=-2))
    return _sum(v * matmul(_sym(t), v), axis=-2)


def _vectors_vjp(g: Any, ans: Any, a: Any, uplo: str = "L") -> Any:
    f = _gap_inverse(apply(EIGH_VALUES, a, uplo=uplo))
    if _is_complex(ans):
        v = ans
        # the transpose of the phase step (see _vectors_jvp)
        s = _ew.imag(_sum(v * g, axis=-2))
        g = g - _ew.where(_phase_mask(v, uplo), _row(_over_phase_row(s, v, uplo)) * 1j, 0.0)
        return _herm(matmul(matmul(_ew.conj(v), f * matmul(_mT(v), g)), _mT(v)))
    return _sym(matmul(matmul(ans, f * matmul(_mT(ans), g)), _mT(ans)))


def _vectors_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, uplo: str = "L") -> Any:
    (t,) = tangents
    if t is None:
        return _zeros_like(ans)
    f = _gap_inverse(apply(EIGH_VALUES, a, uplo=uplo))
    if _is_complex(ans):
        v = ans
        dv = matmul(v, f * matmul(_mT(_ew.conj(v)), matmul(_herm(t), v)))
        # NumPy's phase: one row (the first for 'L', the last for 'U') stays real
        dvk = _ew.imag(_sum(_ew.where(_phase_mask(v, uplo), dv, 0.0), axis=-2))
        return dv - v * _row(_over_phase_row(dvk, v, uplo)) * 1j
    return matmul(ans, f * matmul(_mT(ans), matmul(_sym(t), ans)))


def _rng_symmetric(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A symmetric matrix (or stack) whose eigenvalues are at least 0.5 apart."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.normal(size=shape))
    w = np.arange(n) * 1.5 - n * 0.5 + rng.uniform(-0.4, 0.4, shape[:-1])
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_symmetric(rng, s),), {}) for s in [(1, 1), (2, 2), (3, 3), (2, 3, 3)]] + [
        ((_rng_symmetric(rng, s),), {"uplo": "U"}) for s in [(3, 3), (2, 2, 2)]]


EIGH_VALUES = FAMILY.op(Op(
    "eigh_values", _values_impl, (_values_vjp,), jvp=_values_jvp, reads=(0,), symbol="λ",
    part=("eigh", 0), spelling="np.linalg.eigh",
    formula="dλ = diag(Vᵀ dA V); Ā = V diag(λ̄) Vᵀ (complex: dλ = Re diag(Vᴴ dA V), "
            "Ā = conj(V) diag(λ̄) Vᵀ)",
    adjoint=("V diag(ḡ) Vᵀ",), complex_adjoint=("conj(V) diag(ḡ) Vᵀ",), samples=_samples,
    complex_rules=True, jax="jnp.linalg.eigh({0}, UPLO={uplo})[0]", raises=True))
#: Why complex eigenvectors and singular vectors have no faithful JAX form.
JAX_PHASE = ("JAX's derivatives of complex eigenvectors (singular vectors) leave out the "
             "phase term that makes wengert's those of NumPy's own vectors, so they differ "
             "on phase-dependent functions")
EIGH_VECTORS = Op("eigh_vectors", _vectors_impl, (_vectors_vjp,), jvp=_vectors_jvp,
                  part=("eigh", 1), spelling="np.linalg.eigh",
                  reads=(0,), reads_out=True,
                  formula="dV = V (F ∘ (Vᵀ dA V)), F_ij = 1/(λ_j − λ_i); "
                          "Ā = sym(V (F ∘ (Vᵀ V̄)) Vᵀ)", symbol="V",
                  adjoint=("sym({out} (F ∘ ({out}ᵀ ḡ)) {out}ᵀ)",),
                  complex_adjoint=("herm(conj({out}) (F ∘ ({out}ᵀ ḡ′)) {out}ᵀ), ḡ′: ḡ less "
                                   "the term of NumPy's phase (one row of {out} real)",),
                  samples=_samples, complex_rules=True, jax="jnp.linalg.eigh({0}, UPLO={uplo})[1]",
                  jax_complex_refused=JAX_PHASE, raises=True)
FAMILY.op(EIGH_VECTORS)
#: (what the primitives decompose is the Hermitian part: generated code does too)
FAMILY.joint(EIGH_VALUES, EIGH_VECTORS, numpy="np.linalg.eigh({h}, UPLO={uplo!r})")


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)``, as ``np.linalg.eigh`` returns them."""

    eigenvalues: Any
    eigenvectors: Any


def _read_triangle(a: Any, uplo: Any) -> Any:
    """The symmetric matrix (or stack) ``np.linalg.eigh(a, UPLO=uplo)`` decomposes: the
    triangle it reads, mirrored (written with wengert's ops, so the unread triangle gets
    no gradient)."""
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError(
            f"eigh needs a square matrix (or a stack of them) in its last two axes, got "
            f"shape {tuple(shape)}")
    return hermitian_from_triangle(a, lower=uplo == "L")


@FAMILY.export(space="linalg")
def eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803 - NumPy's name
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrix (or stack) that
    one triangle of ``a`` defines, as ``np.linalg.eigh``.

    Parameters
    ----------
    a : array_like, (..., n, n)
        Only its lower (``UPLO='L'``) or upper (``'U'``) triangle is read; the gradient
        with respect to the other triangle is zero.
    UPLO : {'L', 'U'}

    Returns
    -------
    EighResult
        ``(eigenvalues, eigenvectors)``, the eigenvectors as columns.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = np.array([[2.0, 5.0], [1.0, 3.0]])  # the 5.0 is not read (UPLO='L')
    >>> wg.grad(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2))(a)
    array([[4., 0.],
           [4., 6.]])
    """
    UPLO = UPLO.upper()  # noqa: N806 - as NumPy: 'l' and 'u' are accepted
    s = _read_triangle(a, UPLO)
    return EighResult(apply(EIGH_VALUES, s, uplo=UPLO), apply(EIGH_VECTORS, s, uplo=UPLO))


@FAMILY.export(space="linalg")
def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803 - NumPy's name
    """Eigenvalues (ascending) of the symmetric matrix (or stack) that one triangle of
    ``a`` defines, as ``np.linalg.eigvalsh``; see :func:`eigh`.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> w = np.linalg.eigvalsh(wg.tensor([[2.0, 5.0], [1.0, 3.0]]), UPLO="U")
    >>> w.numpy().round(4)
    array([-2.5249,  7.5249])
    """
    UPLO = UPLO.upper()  # noqa: N806 - as NumPy: 'l' and 'u' are accepted
    return apply(EIGH_VALUES, _read_triangle(a, UPLO), uplo=UPLO)


