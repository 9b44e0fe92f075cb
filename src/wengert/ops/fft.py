"""Discrete Fourier transforms: ``np.fft.fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn``,
``ifftn``, ``rfft``, ``irfft`` (primitives), and ``rfft2``, ``irfft2``, ``rfftn``,
``irfftn``, ``fftshift``, ``ifftshift`` written with them.

The transforms are linear, so each JVP is the transform of the tangent. In
wengert's complex convention (tangents and cotangents pair as ``Re(sum(t·g))``,
no conjugation; see :mod:`wengert.ops.elementwise`) the VJP of a complex-linear
map is its plain *transpose*. The DFT matrix is symmetric, so the VJP of
``fftn`` is ``fftn`` of the cotangent with the same ``norm`` (and of ``ifftn``,
``ifftn``), cropped or zero-padded back to the input's lengths where ``s``/``n``
padded or cropped it.

``rfft`` of a real ``x`` keeps the first ``n//2 + 1`` entries of ``fft(x, n)``:
its VJP is the real part of ``fft`` of the zero-padded cotangent. ``irfft`` is
real-linear but not complex-linear (it reads ``conj(X_j)`` for the missing
half): its VJP at a real ``g`` is ``c_j · ifft(g)_j`` for the kept entries
``j``, with the Hermitian weights ``c_j = 2``, except 1 for ``j = 0`` and, for
an even ``n``, ``j = n/2`` (the entries whose imaginary parts ``irfft``
ignores). Both are pinned by finite differences in ``tests/test_fft.py``.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = np.array([1.0, 2.0, 0.5, -1.0])
>>> wg.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(x)  # Parseval: 2·n·x
array([ 8., 16.,  4., -8.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from wengert.core.op import Op
from wengert.ops import elementwise as _ew
from wengert.ops import shape as _sh
from wengert.ops.base import Family, apply, dtype_of, linear
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape
from wengert.ops.indexing import getitem

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("fft")

__all__ = ["FFTN", "IFFTN", "RFFT", "IRFFT"]


def _fit_lengths(g: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """``g`` cropped or zero-padded (at the end) along ``axes`` to ``shape``'s lengths."""
    gs = _shape(g)
    crop = [slice(None)] * len(gs)
    widths = [(0, 0)] * len(gs)
    for a in axes:
        if gs[a] > shape[a]:
            crop[a] = slice(0, shape[a])
        elif gs[a] < shape[a]:
            widths[a] = (0, shape[a] - gs[a])
    if any(c != slice(None) for c in crop):
        g = getitem(g, tuple(crop))
    if any(w != (0, 0) for w in widths):
        g = _sh.pad(g, tuple(widths))
    return g


# -- fftn, ifftn: every complex transform ------------------------------------------------
def _fftn_impl(x: Any, s: tuple[int, ...], axes: tuple[int, ...], norm: str | None) -> Any:
    return np.fft.fftn(x, s, axes, norm)


def _ifftn_impl(x: Any, s: tuple[int, ...], axes: tuple[int, ...], norm: str | None) -> Any:
    return np.fft.ifftn(x, s, axes, norm)


def _fftn_vjp(g: Any, ans: Any, x: Any, s: Any, axes: Any, norm: Any) -> Any:
    # the DFT matrix is symmetric: the transpose of fftn is fftn (same norm)
    return _fit_lengths(apply(FFTN, g, s=s, axes=axes, norm=norm), _shape(x), axes)


def _ifftn_vjp(g: Any, ans: Any, x: Any, s: Any, axes: Any, norm: Any) -> Any:
    return _fit_lengths(apply(IFFTN, g, s=s, axes=axes, norm=norm), _shape(x), axes)


def _fft_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    n = rng.normal
    return [((n(size=(5,)),), {"s": (5,), "axes": (0,), "norm": None}),
            ((n(size=(4,)),), {"s": (6,), "axes": (0,), "norm": "ortho"}),
            ((n(size=(2, 5)),), {"s": (3,), "axes": (1,), "norm": "forward"}),
            ((n(size=(3, 4)),), {"s": (3, 4), "axes": (0, 1), "norm": None}),
            ((n(size=(2, 3, 2)),), {"s": (4, 2), "axes": (2, 0), "norm": "ortho"})]


def _fft_op(name: str, symbol: str, impl: Any, vjp: Any, formula: str, adjoint: str,
            samples: Any, *keys: str, jax_uncast: tuple[int, ...] = ()) -> Op:
    """A linear transform of one input, registered; its JAX form is ``jnp.fft.<name>`` with
    ``keys`` (``jax_uncast``: see ``Op``)."""
    jax = f"jnp.fft.{name}({{0}}{''.join(f', {k}={{{k}}}' for k in keys)})"
    return FAMILY.op(linear(Op(name, impl, (vjp,), symbol=symbol, formula=formula,
                               adjoint=(adjoint,), samples=samples, complex_rules=True,
                               jax=jax, jax_uncast=jax_uncast)))


FFTN = _fft_op("fftn", "fft", _fftn_impl, _fftn_vjp,
               "linear; adjoint: fftn of ḡ (the DFT matrix is symmetric)",
               "fftn(ḡ) cropped or padded to the shape of {0}", _fft_samples, "s", "axes", "norm")
IFFTN = _fft_op("ifftn", "ifft", _ifftn_impl, _ifftn_vjp,
                "linear; adjoint: ifftn of ḡ (its matrix is symmetric)",
                "ifftn(ḡ) cropped or padded to the shape of {0}", _fft_samples, "s", "axes",
                "norm")

# -- rfft, irfft: real signals -----------------------------------------------------------
def _rfft_impl(x: Any, n: int, axis: int, norm: str | None) -> Any:
    return np.fft.rfft(x, n, axis, norm)


def _rfft_vjp(g: Any, ans: Any, x: Any, n: int, axis: int, norm: Any) -> Any:
    # rfft = (keep the first n//2 + 1 rows) · F · (crop/pad to n): the transpose, applied
    # to g, is fft of g zero-padded to n, cropped or padded back; x is real: its real part.
    full = _fit_lengths(g, _shape(g)[:axis] + (n,) + _shape(g)[axis + 1:], (axis,))
    back = apply(FFTN, full, s=(n,), axes=(axis,), norm=norm)
    return _ew.real(_fit_lengths(back, _shape(x), (axis,)))


def _hermitian_weights(n: int, m: int, axis: int, ndim: int, dtype: Any) -> np.ndarray:
    """``c_j`` along ``axis`` (length ``m``, for an ``irfft`` of length ``n``)."""
    c = np.full(m, 2.0)
    c[0] = 1.0
    if n % 2 == 0 and m > n // 2:
        c[n // 2] = 1.0
    return c.reshape((m,) + (1,) * (ndim - 1 - axis)).astype(np.result_type(dtype, np.float32))


def _irfft_impl(x: Any, n: int, axis: int, norm: str | None) -> Any:
    return np.fft.irfft(x, n, axis, norm)


def _irfft_vjp(g: Any, ans: Any, x: Any, n: int, axis: int, norm: Any) -> Any:
    # Σ_k g_k x_k = Σ_j c_j Re(X_j H_j) with H = ifft(g) (same norm), for the n//2 + 1
    # entries X_j irfft reads: the gradient of each term is c_j H_j.
    m = n // 2 + 1
    shape = _shape(g)
    h = apply(IFFTN, g, s=(n,), axes=(axis,), norm=norm)
    index = (slice(None),) * axis + (slice(0, m),)
    h = getitem(h, index) * _hermitian_weights(n, m, axis, len(shape), _raw(ans).dtype)
    h = _fit_lengths(h, _shape(x), (axis,))
    return h if dtype_of(x).kind == "c" else _ew.real(h)  # (a real half spectrum)


def _rfft_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    r = rng.normal
    return [((r(size=(6,)),), {"n": 6, "axis": 0, "norm": None}),
            ((r(size=(5,)),), {"n": 5, "axis": 0, "norm": "ortho"}),
            ((r(size=(2, 4)),), {"n": 7, "axis": 1, "norm": "forward"}),
            ((r(size=(5, 3)),), {"n": 4, "axis": 0, "norm": None})]


def _irfft_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    r = rng.normal
    return [((r(size=(4,)),), {"n": 6, "axis": 0, "norm": None}),
            ((r(size=(3,)),), {"n": 5, "axis": 0, "norm": "ortho"}),
            ((r(size=(2, 4)),), {"n": 4, "axis": 1, "norm": "forward"}),
            ((r(size=(3, 2)),), {"n": 8, "axis": 0, "norm": None}),
            ((r(size=(6,)),), {"n": 3, "axis": 0, "norm": None})]


RFFT = _fft_op("rfft", "rfft", _rfft_impl, _rfft_vjp,
               "linear; adjoint: Re fft of ḡ zero-padded to n",
               "Re fft(ḡ padded to n), cropped or padded to the shape of {0}", _rfft_samples,
               "n", "axis", "norm", jax_uncast=(0,))  # (a real signal, complex out)
IRFFT = _fft_op("irfft", "irfft", _irfft_impl, _irfft_vjp,
                "real-linear; adjoint: c·ifft(ḡ), c = 2 but 1 at 0 and n/2",
                "c·ifft(ḡ)[: n//2 + 1], c = 2 but 1 at 0 and n/2", _irfft_samples, "n", "axis",
                "norm")


# -- public functions --------------------------------------------------------------------------
def _norm(norm: Any) -> Any:
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    return None if norm == "backward" else norm


def _axis(axis: Any, nd: int) -> int:
    """``axis`` of an ``nd``-dimensional array counted from 0; out of bounds raises
    NumPy's ``IndexError`` (instead of wrapping round)."""
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise IndexError(f"axis {axis} is out of bounds for array of dimension {nd}")
    return axis % nd


def _axes_and_lengths(x: Any, s: Any, axes: Any, default_axes: Any) -> tuple[tuple, tuple]:
    nd = len(_shape(x))
    if axes is None:
        axes = default_axes if default_axes is not None else (
            tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd)))
    axes = tuple(_axis(a, nd) for a in axes)
    if s is None:
        s = tuple(_shape(x)[a] for a in axes)
    s = tuple(operator.index(n) for n in s)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return s, axes


def _transform(op: Op, x: Any, s: Any, axes: Any, norm: Any, default_axes: Any = None) -> Any:
    s, axes = _axes_and_lengths(x, s, axes, default_axes)
    for a in set(axes):
        if len([b for b in axes if b == a]) > 1:  # NumPy transforms twice: not a primitive
            raise NotImplementedError("wengert.fft: repeated axes are not supported")
    return apply(op, x, s=s, axes=axes, norm=_norm(norm))


@FAMILY.export(space="fft")
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """One-dimensional DFT (``np.fft.fft``); the VJP is ``fft`` of the cotangent.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = np.array([1.0, 0.0, 0.0, 0.0])
    >>> wg.vjp(fft, np.ones(4) + 0j)[1](g)[0]   # fft(g): the first row of the DFT matrix
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _transform(FFTN, a, None if n is None else (n,), (axis,), norm)


@FAMILY.export(space="fft")
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """One-dimensional inverse DFT (``np.fft.ifft``)."""
    return _transform(IFFTN, a, None if n is None else (n,), (axis,), norm)


@FAMILY.export(space="fft")
def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    """Two-dimensional DFT (``np.fft.fft2``)."""
    return _transform(FFTN, a, s, axes, norm)


@FAMILY.export(space="fft")
def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    """Two-dimensional inverse DFT (``np.fft.ifft2``)."""
    return _transform(IFFTN, a, s, axes, norm)


@FAMILY.export(space="fft")
def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """N-dimensional DFT (``np.fft.fftn``).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> np.allclose(fftn(x), np.fft.fftn(x))
    True
    """
    return _transform(FFTN, a, s, axes, norm)


@FAMILY.export(space="fft")
def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """N-dimensional inverse DFT (``np.fft.ifftn``)."""
    return _transform(IFFTN, a, s, axes, norm)


@FAMILY.export(space="fft")
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """DFT of a real signal, the ``n//2 + 1`` non-negative frequencies (``np.fft.rfft``);
    its VJP is the real part of ``fft`` of the cotangent zero-padded to ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> wg.grad(lambda x: np.real(np.fft.rfft(x)[1]))(x)   # Re e^(-2πik/3)
    array([ 1. , -0.5, -0.5])
    """
    if dtype_of(a).kind == "c":
        raise TypeError("rfft: the input is complex; rfft transforms real signals (use fft, "
                        "or np.real(x) first)")
    nd = len(_shape(a))
    axis = _axis(axis, nd)
    n = _shape(a)[axis] if n is None else operator.index(n)
    return apply(RFFT, a, n=n, axis=axis, norm=_norm(norm))


@FAMILY.export(space="fft")
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real signal of length ``n`` (default ``2(m - 1)``) whose ``rfft`` is ``a``
    (``np.fft.irfft``); the imaginary parts of ``a[0]`` and (even ``n``) ``a[n/2]`` are
    ignored, and get no gradient."""
    nd = len(_shape(a))
    axis = _axis(axis, nd)
    n = 2 * (_shape(a)[axis] - 1) if n is None else operator.index(n)
    return apply(IRFFT, a, n=n, axis=axis, norm=_norm(norm))


#: ``hfft``/``ihfft`` are ``irfft``/``rfft`` with the normalisation's direction swapped.
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


@FAMILY.export(space="fft")
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real spectrum of a signal with Hermitian symmetry, given by its first half
    ``a`` (``np.fft.hfft``): ``irfft(conj(a))`` with the normalisation's direction
    swapped, as NumPy computes it, so its rules are those of ``conj`` and ``irfft``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> wg.grad(lambda a: np.fft.hfft(a)[1])(np.array([1.0, 2.0, 3.0]))
    array([ 1.,  0., -1.])
    """
    nd = len(_shape(a))
    axis = _axis(axis, nd)
    n = 2 * (_shape(a)[axis] - 1) if n is None else operator.index(n)
    return irfft(_ew.conjugate(a), n, axis, _SWAPPED[_norm(norm)])


@FAMILY.export(space="fft")
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`hfft` for a real signal (``np.fft.ihfft``):
    ``conj(rfft(a))`` with the normalisation's direction swapped, as NumPy computes it."""
    if dtype_of(a).kind == "c":
        raise TypeError("ihfft: the input is complex; ihfft transforms real signals (use "
                        "ifft, or np.real(x) first)")
    return _ew.conjugate(rfft(a, n, axis, _SWAPPED[_norm(norm)]))


def _real_axes(a: Any, s: Any, axes: Any, inverse: bool) -> tuple[tuple, tuple]:
    """``s`` and ``axes`` of an ``rfftn`` / ``irfftn`` call, as NumPy completes them."""
    nd = len(_shape(a))
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    axes = tuple(_axis(ax, nd) for ax in axes)
    if s is None:
        s = [_shape(a)[ax] for ax in axes]
        if inverse:
            s[-1] = 2 * (s[-1] - 1)
    s = tuple(operator.index(n) for n in s)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return s, axes


@FAMILY.export(space="fft")
def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """N-dimensional DFT of a real array (``np.fft.rfftn``): ``rfft`` along the last
    axis, then ``fft`` along the others, as NumPy computes it (and differentiates)."""
    s, axes = _real_axes(a, s, axes, False)
    out = rfft(a, s[-1], axes[-1], norm)
    return fftn(out, s[:-1], axes[:-1], norm) if len(axes) > 1 else out


@FAMILY.export(space="fft")
def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The inverse of :func:`rfftn` (``np.fft.irfftn``): ``ifft`` along all axes but the
    last, then ``irfft`` along it."""
    s, axes = _real_axes(a, s, axes, True)
    if len(axes) > 1:
        a = ifftn(a, s[:-1], axes[:-1], norm)
    return irfft(a, s[-1], axes[-1], norm)


@FAMILY.export(space="fft")
def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    """Two-dimensional DFT of a real array (``np.fft.rfft2``)."""
    return rfftn(a, s, axes, norm)


@FAMILY.export(space="fft")
def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    """The inverse of :func:`rfft2` (``np.fft.irfft2``)."""
    return irfftn(a, s, axes, norm)


def _shifts(x: Any, axes: Any, sign: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = _shape(x)
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    return tuple(sign * (shape[a] // 2) for a in axes), tuple(axes)


@FAMILY.export(space="fft")
def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the centre (``np.fft.fftshift``): a roll.

    Examples
    --------
    >>> import numpy as np
    >>> fftshift(np.arange(5.0))
    array([3., 4., 0., 1., 2.])
    """
    shift, axes = _shifts(x, axes, 1)
    return _sh.roll(x, shift, axes)


@FAMILY.export(space="fft")
def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of :func:`fftshift` (``np.fft.ifftshift``)."""
    shift, axes = _shifts(x, axes, -1)
    return _sh.roll(x, shift, axes)


