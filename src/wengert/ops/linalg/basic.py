"""Linear algebra primitives: the NumPy forward, the JVP and the VJP of each, side by side.

Products (``matmul``, ``dot``, ``inner``, ``outer``, ``tensordot``, ``kron``,
``einsum``) and matrix functions (``inv``, ``det``, ``slogdet``, ``solve``,
``cholesky``). Every rule is written with wengert's own functions, so it runs
on NumPy values in a plain backward pass and records itself on tensors when
``create_graph=True``. The products' rules are products again (a contraction's
adjoint is a contraction with the cotangent; its tangent is ``f(ȧ, b) + f(a, ḃ)``),
so derivatives of any order work. The matrix functions' JVPs use solves, not
inverses, where they can.

Complex values: in wengert's convention (see :mod:`wengert.ops.elementwise`) the VJP
of a holomorphic map is its plain transpose, so the rules of the products, ``inv``,
``det`` and ``solve`` hold for complex matrices as written (transposes, never
conjugates). ``vdot`` and ``vecdot`` conjugate their first argument, as NumPy's.
``cholesky`` has rules of its own for a Hermitian matrix (see :func:`cholesky`);
``slogdet`` (a complex sign) refuses complex values.
"""

from __future__ import annotations

import functools
import string
from typing import Any, NamedTuple

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op, Words
from wengert.ops.base import Family, apply, dtype_of, is_traced
from wengert.ops.base import primal as _raw
from wengert.ops.base import shape_of as _shape
from wengert.ops.broadcast import broadcast_to, reshape_to, sum_to
from wengert.ops.elementwise import conjugate, zero_jvp
from wengert.ops.indexing import getitem
from wengert.ops.linalg.matrix import as_matrices, hermitian_from_triangle, zero_tangent
from wengert.ops.reduce import sum as _sum
from wengert.ops.shape import reshape, swapaxes, transpose

#: This module's ops, its public functions and the NumPy functions they implement.
FAMILY = Family("linalg")
# The ops whose rules hold for complex values say so (complex_rules=True; see
# ops/elementwise.py): the products and the holomorphic matrix functions, whose rules use
# transposes, never conjugates. slogdet (a complex sign) refuses complex values; cholesky
# has complex rules of its own.


def _mT(x: Any) -> Any:
    return swapaxes(x, -1, -2)


def _rng_matrix(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A well-conditioned square matrix (or stack): ``n·I`` plus a small perturbation."""
    n = shape[-1]
    return np.eye(n) * (n + 1.0) + rng.uniform(-1.0, 1.0, shape)


def _rng_spd(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    m = rng.normal(size=shape)
    return m @ np.swapaxes(m, -1, -2) + np.eye(shape[-1]) * shape[-1]


# -- forward mode ---------------------------------------------------------------
def _zeros_like(ans: Any) -> Any:
    """A zero tangent for ``ans`` (every input tangent was ``None``)."""
    raw = _raw(ans)
    return np.zeros(np.shape(raw), dtype=np.result_type(raw))


def _bilinear_jvp(product: Any) -> Any:
    """The JVP of a product ``f(a, b)`` linear in each input: ``f(ȧ, b) + f(a, ḃ)``.

    ``product(a, b, **params)`` applies the op itself, so the tangent is a
    product again and differentiates to any order; a ``None`` tangent drops
    its term.
    """

    def jvp(tangents: tuple[Any, ...], ans: Any, a: Any, b: Any, **params: Any) -> Any:
        ta, tb = tangents
        out = None if ta is None else product(ta, b, **params)
        if tb is not None:
            term = product(a, tb, **params)
            out = term if out is None else out + term
        return _zeros_like(ans) if out is None else out

    jvp.__name__ = f"{getattr(product, '__name__', 'product')}_jvp"
    return jvp


def _trace2(x: Any) -> Any:
    """Trace over the last two axes (a stack of matrices to a stack of numbers)."""
    return einsum("...ii->...", x)


# -- matmul -------------------------------------------------------------------
def _mm_shapes(xs: tuple[int, ...], ys: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """``x`` and ``y`` promoted to matrices as ``np.matmul`` does, and the
    matching shape of the output cotangent."""
    x2 = (1,) + xs if len(xs) == 1 else xs
    y2 = ys + (1,) if len(ys) == 1 else ys
    batch = np.broadcast_shapes(x2[:-2], y2[:-2])
    return x2, y2, batch + (x2[-2], y2[-1])


def _matmul_dx(g: Any, ans: Any, x: Any, y: Any) -> Any:
    xs, ys = _shape(x), _shape(y)
    x2, y2, g2 = _mm_shapes(xs, ys)
    dx = matmul(reshape_to(g, g2), _mT(reshape_to(y, y2)))
    return reshape_to(sum_to(dx, x2), xs)


def _matmul_dy(g: Any, ans: Any, x: Any, y: Any) -> Any:
    xs, ys = _shape(x), _shape(y)
    x2, y2, g2 = _mm_shapes(xs, ys)
    dy = matmul(_mT(reshape_to(x, x2)), reshape_to(g, g2))
    return reshape_to(sum_to(dy, y2), ys)


def _matmul_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    pairs = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
             ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 1, 2, 3), (5, 3, 2)),
             ((2, 2, 3), (3,))]
    return [((rng.normal(size=a), rng.normal(size=b)), {}) for a, b in pairs]


_matmul_jvp_one = _bilinear_jvp(lambda a, b: apply(MATMUL, a, b))


def _matmul_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, b: Any) -> Any:
    """``dA @ B + A @ dB``, also for a batch of tangents (a leading axis).

    A batched tangent of a matrix operand is given the output's rank so the
    batch axis broadcasts in front; a batched tangent of a vector operand is
    multiplied as a stack of columns.
    """
    ta, tb = tangents
    na, nb = np.ndim(_raw(a)), np.ndim(_raw(b))
    batched = any(t is not None and np.ndim(_raw(t)) > n for t, n in ((ta, na), (tb, nb)))
    if not batched:
        return _matmul_jvp_one(tangents, ans, a, b)
    rank = np.ndim(_raw(ans))
    out = None
    if ta is not None:
        if na == 1 and nb > 2:
            return None  # unusual layout: let the caller push tangents one by one
        if na >= 2:
            ta = _lead(ta, rank + 1)
        if na == 1 and nb == 2 and type(b) is np.ndarray and _is_identity(ta):
            out = b.copy()  # I @ B: jacfwd's seed meets a vector-matrix product
        else:
            out = matmul(ta, b)
    if tb is not None:
        if nb == 1 and na == 2 and type(a) is np.ndarray and _is_identity(tb):
            term = a.T.copy()  # I @ Aᵀ: jacfwd's seed meets a matrix-vector product
        elif nb == 1 and na == 2:
            # One matrix product for the whole batch (a plain matrix is swapped as apply would).
            at = a.swapaxes(-1, -2) if type(a) is np.ndarray else swapaxes(a, -1, -2)
            term = matmul(tb, at)
        elif nb == 1:  # a stack of matrices times a vector: the batch axis goes in front
            term = matmul(a, _lead(tb[..., None], na + 1))[..., 0]
        else:
            term = matmul(a, _lead(tb, rank + 1) if na >= 2 or nb > 2 else tb)
        out = term if out is None else out + term
    return out


def _is_identity(t: Any) -> bool:
    """Whether ``t`` is a plain square identity matrix (``jacfwd``'s batch of
    tangents for a vector input), so that a product with it can be skipped.

    The test reads ``t`` twice (O(n²)); the product it saves is O(n² m).
    """
    if type(t) is not np.ndarray or t.ndim != 2 or t.shape[0] != t.shape[1]:
        return False
    n = t.shape[0]
    return bool(np.count_nonzero(t) == n and (t.diagonal() == 1).all())


def _lead(t: Any, rank: int) -> Any:
    """Unit axes after the batch axis of a batched tangent, up to ``rank`` axes."""
    shape = np.shape(_raw(t))
    if len(shape) >= rank:
        return t
    return reshape(t, shape[:1] + (1,) * (rank - len(shape)) + shape[1:])


MATMUL = Op("matmul", np.matmul, (_matmul_dx, _matmul_dy), reads=(0, 1), crossed=True,
            jvp=_matmul_jvp,
            formula="d(X@Y) = dX@Y + X@dY; x̄ = ḡ@Yᵀ, ȳ = Xᵀ@ḡ", symbol="@",
            adjoint=("ḡ @ {1}ᵀ", "{0}ᵀ @ ḡ"),
            samples=_matmul_samples, batch_jvp=True, jax="jnp.matmul({0}, {1})",
            spelling="@", complex_rules=True, words=Words(zero="factor"))
FAMILY.op(MATMUL)


# -- tensordot and the products built on it -------------------------------
def _norm_axes(axes: Any, na: int, nb: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``tensordot``'s ``axes`` as two tuples of non-negative axis numbers."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(na, nb):
            raise ValueError(f"tensordot: axes={n} is out of range for {na}-d and {nb}-d inputs")
        return tuple(range(na - n, na)), tuple(range(n))
    ax_a, ax_b = axes
    ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
    ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("tensordot: the two axes sequences must have the same length")
    return tuple(int(a) % na for a in ax_a), tuple(int(b) % nb for b in ax_b)


def _permute(x: Any, order: list[int]) -> Any:
    """Transpose so that axis ``order[k]`` of the result is axis ``k``."""
    perm = tuple(int(i) for i in np.argsort(order))
    if perm == tuple(range(len(perm))):
        return x
    return transpose(x, perm)


def _contract_da(g: Any, b: Any, na: int, ax_a: tuple[int, ...], ax_b: tuple[int, ...]) -> Any:
    nb = np.ndim(_raw(b))
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]
    k = len(free_a)
    da = tensordot(g, b, (tuple(range(k, k + len(free_b))), tuple(free_b)))
    return _permute(da, free_a + [ax_a[j] for j in np.argsort(ax_b)])


def _contract_db(g: Any, a: Any, nb: int, ax_a: tuple[int, ...], ax_b: tuple[int, ...]) -> Any:
    na = np.ndim(_raw(a))
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]
    db = tensordot(a, g, (tuple(free_a), tuple(range(len(free_a)))))
    return _permute(db, [ax_b[j] for j in np.argsort(ax_a)] + free_b)


def _tensordot_impl(a: Any, b: Any, axes: Any = 2) -> Any:
    ax_a, ax_b = _norm_axes(axes, np.ndim(a), np.ndim(b))
    return np.tensordot(a, b, (ax_a, ax_b))


def _tensordot_da(g: Any, ans: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    na = np.ndim(_raw(a))
    return _contract_da(g, b, na, *_norm_axes(axes, na, np.ndim(_raw(b))))


def _tensordot_db(g: Any, ans: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    nb = np.ndim(_raw(b))
    return _contract_db(g, a, nb, *_norm_axes(axes, np.ndim(_raw(a)), nb))


def _tensordot_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    n = rng.normal
    return [
        ((n(size=(2, 3, 4)), n(size=(3, 4, 5))), {"axes": ((1, 2), (0, 1))}),
        ((n(size=(2, 3, 4)), n(size=(4, 2, 3))), {"axes": ((0, 2), (1, 0))}),
        ((n(size=(2, 3)), n(size=(4,))), {"axes": ((), ())}),
        ((n(size=(3, 4)), n(size=(4, 2))), {"axes": ((1,), (0,))}),
        ((n(size=(2, 3)), n(size=(2, 3))), {"axes": ((0, 1), (0, 1))}),
    ]


TENSORDOT = Op("tensordot", _tensordot_impl, (_tensordot_da, _tensordot_db), reads=(0, 1),
               crossed=True,
               jvp=_bilinear_jvp(lambda a, b, axes=2: apply(TENSORDOT, a, b, axes=axes)),
               formula="contraction; each adjoint contracts ḡ with the other input",
               adjoint=("ḡ contracted with {1}", "{0} contracted with ḡ"),
               samples=_tensordot_samples, jax="jnp.tensordot({0}, {1}, axes={axes})",
               complex_rules=True, words=Words(zero="factor"))
FAMILY.op(TENSORDOT)


def _dot_axes(na: int, nb: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if na == 0 or nb == 0:
        return (), ()
    return (na - 1,), (max(nb - 2, 0),)


def _inner_axes(na: int, nb: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if na == 0 or nb == 0:
        return (), ()
    return (na - 1,), (nb - 1,)


def _contraction(name: str, impl: Any, axes_of: Any, formula: str, samples: Any,
                 adjoint: tuple[str, str], jax: str) -> Op:
    def da(g: Any, ans: Any, a: Any, b: Any) -> Any:
        na, nb = np.ndim(_raw(a)), np.ndim(_raw(b))
        return _contract_da(g, b, na, *axes_of(na, nb))

    def db(g: Any, ans: Any, a: Any, b: Any) -> Any:
        na, nb = np.ndim(_raw(a)), np.ndim(_raw(b))
        return _contract_db(g, a, nb, *axes_of(na, nb))

    op = Op(name, impl, (da, db), reads=(0, 1), crossed=True, formula=formula,
            samples=samples, adjoint=adjoint, jax=jax, complex_rules=True,
            words=Words(zero="factor"))
    op.jvp = _bilinear_jvp(lambda a, b: apply(op, a, b))
    return op


def _pair_samples(pairs: list[tuple[Any, Any]]) -> Any:
    def samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [((rng.normal(size=a), rng.normal(size=b)), {}) for a, b in pairs]

    return samples


DOT = _contraction(
    "dot", np.dot, _dot_axes, "sum over the last axis of a and the second-to-last of b",
    _pair_samples([((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                   ((2, 3, 4), (5, 4, 2)), ((), (2, 3)), ((2, 3), ()), ((4,), (2, 4, 3))]),
    ("ḡ contracted with {1}", "{0} contracted with ḡ"), jax="jnp.dot({0}, {1})")
FAMILY.op(DOT)
INNER = _contraction(
    "inner", np.inner, _inner_axes, "sum over the last axes of a and b",
    _pair_samples([((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (3,)),
                   ((2, 3), ())]),
    ("ḡ contracted with {1}", "{0} contracted with ḡ"), jax="jnp.inner({0}, {1})")
FAMILY.op(INNER)


def _outer_impl(a: Any, b: Any) -> Any:
    return np.outer(a, b)


def _outer_da(g: Any, ans: Any, a: Any, b: Any) -> Any:
    bv = reshape_to(b, (int(np.size(_raw(b))),))
    return reshape_to(matmul(g, bv), _shape(a))


def _outer_db(g: Any, ans: Any, a: Any, b: Any) -> Any:
    av = reshape_to(a, (int(np.size(_raw(a))),))
    return reshape_to(matmul(av, g), _shape(b))


OUTER = Op("outer", _outer_impl, (_outer_da, _outer_db), reads=(0, 1), crossed=True,
           jvp=_bilinear_jvp(lambda a, b: apply(OUTER, a, b)),
           formula="ā = ḡ b, b̄ = ḡᵀ a (inputs flattened)", symbol="⊗",
           adjoint=("ḡ @ {1}  (flattened)", "ḡᵀ @ {0}  (flattened)"),
           samples=_pair_samples([((3,), (4,)), ((2, 2), (3,)), ((), (3,))]),
           jax="jnp.outer({0}, {1})", complex_rules=True, words=Words(zero="factor"))
FAMILY.op(OUTER)


# -- kron -----------------------------------------------------------------------
def _kron_shapes(xs: tuple[int, ...], ys: tuple[int, ...]) -> Any:
    nd = max(len(xs), len(ys))
    a = (1,) * (nd - len(xs)) + tuple(xs)
    b = (1,) * (nd - len(ys)) + tuple(ys)
    inter = tuple(n for pair in zip(a, b) for n in pair)
    return a, b, inter, nd


def _kron_da(g: Any, ans: Any, a: Any, b: Any) -> Any:
    a_s, b_s, inter, nd = _kron_shapes(_shape(a), _shape(b))
    bx = reshape_to(b, tuple(n for m in b_s for n in (1, m)))
    prod = reshape_to(g, inter) * bx
    if nd:
        prod = _sum(prod, axis=tuple(range(1, 2 * nd, 2)))
    return reshape_to(prod, _shape(a))


def _kron_db(g: Any, ans: Any, a: Any, b: Any) -> Any:
    a_s, b_s, inter, nd = _kron_shapes(_shape(a), _shape(b))
    ax = reshape_to(a, tuple(n for m in a_s for n in (m, 1)))
    prod = reshape_to(g, inter) * ax
    if nd:
        prod = _sum(prod, axis=tuple(range(0, 2 * nd, 2)))
    return reshape_to(prod, _shape(b))


KRON = Op("kron", np.kron, (_kron_da, _kron_db), reads=(0, 1), crossed=True, symbol="⊗",
          jvp=_bilinear_jvp(lambda a, b: apply(KRON, a, b)),
          formula="blocks a[i]·b; each adjoint sums ḡ's blocks against the other input",
          adjoint=("Σ (ḡ's block i)·{1}, for each i", "Σᵢ {0}ᵢ·(ḡ's block i)"),
          samples=_pair_samples([((2, 3), (2, 2)), ((3,), (2,)), ((2, 2), (3,)),
                                 ((2, 1, 2), (2, 3)), ((), (2, 2))]), jax="jnp.kron({0}, {1})",
                                 complex_rules=True, words=Words(zero="factor"))
FAMILY.op(KRON)


# -- einsum -------------------------------------------------------------------
_LETTERS = string.ascii_letters


def _einsum_impl(a: Any, b: Any, subscripts: str) -> Any:
    # A Python float operand (the 1.0 of a one-operand einsum) must not upcast.
    if type(b) is float:
        b = np.asarray(b, dtype=np.result_type(a, b))
    if type(a) is float:
        a = np.asarray(a, dtype=np.result_type(a, b))
    big = np.size(a) * np.size(b) > 4096
    return np.einsum(subscripts, a, b, optimize="greedy" if big else False)


@functools.lru_cache(maxsize=512)
def _split(subscripts: str) -> tuple[tuple[str, ...], str]:
    lhs, out = subscripts.split("->")
    return tuple(lhs.split(",")), out


@functools.lru_cache(maxsize=256)
def _diag_mask(term: str, shape: tuple[int, ...]) -> np.ndarray:
    """True where every repeated label of ``term`` has equal indices."""
    mask = np.ones(shape, dtype=bool)
    first: dict[str, int] = {}
    nd = len(shape)
    for p, c in enumerate(term):
        if c not in first:
            first[c] = p
            continue
        q = first[c]
        iq = np.arange(shape[q]).reshape([-1 if k == q else 1 for k in range(nd)])
        ip = np.arange(shape[p]).reshape([-1 if k == p else 1 for k in range(nd)])
        mask = mask & (iq == ip)
    mask.flags.writeable = False  # cached and shared
    return mask


def _einsum_vjp(i: int, g: Any, a: Any, b: Any, subscripts: str) -> Any:
    """The cotangent of operand ``i`` of a two-operand einsum.

    It is the einsum of ``g`` with the other operand onto the operand's unique
    labels; labels summed within this operand alone are broadcast back,
    labels broadcast from size 1 are summed, and repeated labels (a trace or
    a diagonal) put the result on the diagonal and zeros elsewhere.
    """
    terms, out = _split(subscripts)
    term, other_term = terms[i], terms[1 - i]
    other = b if i == 0 else a
    xshape = _shape(a if i == 0 else b)
    sizes: dict[str, int] = {}
    for c, n in zip(term, xshape):
        sizes.setdefault(c, n)
    uniq = "".join(dict.fromkeys(term))
    avail = set(out) | set(other_term)
    keep = "".join(c for c in uniq if c in avail)
    spec = f"{out},{other_term}->{keep}"
    if other_term == "" and out == keep and type(_raw(other)) is float and _raw(other) == 1.0:
        d = g
    else:
        d = apply(EINSUM, g, other, subscripts=spec)
    dshape = _shape(d)
    summed = tuple(k for k, c in enumerate(keep) if sizes[c] == 1 and dshape[k] != 1)
    if summed:
        d = _sum(d, axis=summed, keepdims=True)
        dshape = _shape(d)
    if keep != uniq:
        pos = {c: k for k, c in enumerate(keep)}
        d = reshape_to(d, tuple(dshape[pos[c]] if c in pos else 1 for c in uniq))
    d = broadcast_to(d, tuple(sizes[c] for c in uniq))
    if len(uniq) != len(term):
        seen: set[str] = set()
        expand = []
        for c in term:
            expand.append(1 if c in seen else sizes[c])
            seen.add(c)
        d = reshape_to(d, tuple(expand)) * _diag_mask(term, tuple(xshape))
    return d


def _einsum_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    n = rng.normal
    cases = [
        ("ij,jk->ik", (2, 3), (3, 4)),
        ("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
        ("i,j->ij", (3,), (2,)),
        ("ij,ij->", (2, 3), (2, 3)),
        ("ij,k->ik", (2, 3), (4,)),
        ("ij,ij->ij", (1, 3), (2, 3)),
        ("ii,->", (3, 3), ()),
        ("ii,->i", (3, 3), ()),
        ("ij,->ji", (2, 3), ()),
        ("iij,j->i", (2, 2, 3), (3,)),
        ("ii,ij->j", (3, 3), (3, 2)),
        ("abc,cb->a", (2, 3, 4), (4, 3)),
    ]
    return [((n(size=sa), n(size=sb)), {"subscripts": s}) for s, sa, sb in cases]


def _einsum_jax(s: JaxStep) -> str:
    """``jnp.einsum(subscripts, a, b)``; a one-operand einsum's ``1.0`` is left out."""
    subscripts = s.params["subscripts"]
    lhs, out = subscripts.split("->")
    terms = lhs.split(",")
    if terms[1] == "" and s.is_literal(1) and type(s.literal(1)) is float \
            and s.literal(1) == 1.0:
        return f"jnp.einsum({terms[0] + '->' + out!r}, {s.args[0]})"
    return f"jnp.einsum({subscripts!r}, {s.args[0]}, {s.args[1]})"


EINSUM = Op("einsum", _einsum_impl,
            (lambda g, ans, a, b, subscripts: _einsum_vjp(0, g, a, b, subscripts),
             lambda g, ans, a, b, subscripts: _einsum_vjp(1, g, a, b, subscripts)),
            jvp=_bilinear_jvp(lambda a, b, subscripts: apply(EINSUM, a, b,
                                                                 subscripts=subscripts)),
            reads=(0, 1), symbol="einsum",
            formula="two-operand contraction; each adjoint is an einsum of ḡ with the other",
            adjoint=("einsum of ḡ with {1} onto the labels of {0}",
                     "einsum of ḡ with {0} onto the labels of {1}"),
            samples=_einsum_samples, complex_rules=True, jax=_einsum_jax,
            words=Words(zero="factor"))
FAMILY.op(EINSUM)


# -- matrix functions -----------------------------------------------------------
def _expand2(v: Any) -> Any:
    """Append two unit axes so a per-matrix value broadcasts against a stack."""
    return reshape_to(v, _shape(v) + (1, 1))


def _square_samples(draw: Any, shapes: list[tuple[int, ...]]) -> Any:
    def samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [((draw(rng, s),), {}) for s in shapes]

    return samples


def _det_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    flip = _rng_matrix(rng, (3, 3))[[1, 0, 2]]  # a negative determinant
    return [((_rng_matrix(rng, s),), {}) for s in [(1, 1), (2, 2), (3, 3), (2, 3, 3)]] + [
        ((flip,), {})
    ]


def _inv_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (ta,) = tangents
    if ta is None:
        return _zeros_like(ans)
    return -matmul(ans, matmul(ta, ans))


def _logdet_tangent(ta: Any, a: Any) -> Any:
    """``tr(A⁻¹ dA)``, with a solve rather than an inverse."""
    return _trace2(apply(SOLVE, a, ta))


def _invertible(a: Any) -> bool:
    """Whether every matrix of the (plain) stack ``a`` can be inverted numerically."""
    try:
        np.linalg.inv(_raw(a))
    except np.linalg.LinAlgError:
        return False
    return True


def _cofactors(a: Any) -> Any:
    """The cofactor matrices of a stack of square matrices: ``adj(A)ᵀ``, the gradient of
    ``det A``, also where ``A`` is singular (then ``det A · A⁻ᵀ`` cannot be formed).

    Entry ``(i, j)`` is ``(-1)^(i+j)`` times the determinant of ``A`` without row ``i``
    and column ``j``: all n² minors are gathered by one indexing op and their
    determinants taken by one ``det``, so the result differentiates again. It costs
    n² determinants of size n - 1, which is why it serves singular matrices only.
    """
    n = _shape(a)[-1]
    if n == 1:
        return np.ones(_shape(a), dtype=np.result_type(_raw(a)))
    keep = np.array([[k for k in range(n) if k != i] for i in range(n)])  # (n, n - 1)
    minors = getitem(a, (Ellipsis, keep[:, None, :, None], keep[None, :, None, :]))
    signs = (-1.0) ** np.add.outer(np.arange(n), np.arange(n))
    return det(minors) * signs.astype(np.result_type(_raw(a)), copy=False)


def _det_vjp(g: Any, ans: Any, a: Any) -> Any:
    if _invertible(a):
        return _expand2(g * ans) * _mT(inv(a))
    return _expand2(g) * _cofactors(a)


def _det_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (ta,) = tangents
    if ta is None:
        return _zeros_like(ans)
    if _invertible(a):
        return ans * _logdet_tangent(ta, a)
    return _sum(_cofactors(a) * ta, axis=(-2, -1))


def _singular_logdet(exc: Exception) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(
        "slogdet: the derivative of log|det A| is A⁻ᵀ, which does not exist at a singular "
        "matrix (det A = 0, logabsdet = -inf). Differentiate det(A) instead (its derivative, "
        "the adjugate, exists everywhere), or keep A away from singular (A + eps·I)."
    ).with_traceback(exc.__traceback__)


def _slogdet_vjp(g: Any, ans: Any, a: Any) -> Any:
    try:
        return _expand2(g) * _mT(inv(a))
    except np.linalg.LinAlgError as exc:
        raise _singular_logdet(exc) from None


def _slogdet_jvp(tangents: tuple[Any, ...], ans: Any, a: Any) -> Any:
    (ta,) = tangents
    if ta is None:
        return _zeros_like(ans)
    try:
        return _logdet_tangent(ta, a)
    except np.linalg.LinAlgError as exc:
        raise _singular_logdet(exc) from None


INV = Op("inv", np.linalg.inv, (lambda g, ans, a: -matmul(_mT(ans), matmul(g, _mT(ans))),),
         jvp=_inv_jvp, reads_out=True, formula="d(A⁻¹) = -A⁻¹ dA A⁻¹; Ā = -A⁻ᵀ ḡ A⁻ᵀ",
         symbol="⁻¹", adjoint=("−{out}ᵀ @ ḡ @ {out}ᵀ",),
         samples=_square_samples(_rng_matrix, [(1, 1), (3, 3), (2, 3, 3)]),
         jax="jnp.linalg.inv({0})", complex_rules=True, raises=True)
FAMILY.op(INV)
def _det_singular_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return _det_samples(rng) + [
        ((np.array([[1.0, 2.0], [2.0, 4.0]]),), {}),  # singular: the cofactors
        ((np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]]),), {}),
        ((np.zeros((2, 2, 2)),), {}),
    ]


DET = Op("det", np.linalg.det, (_det_vjp,), jvp=_det_jvp,
         reads=(0,), reads_out=True,
         formula="d det A = tr(adj(A) dA) = det A · tr(A⁻¹ dA); Ā = ḡ adj(A)ᵀ",
         adjoint=("ḡ·{out}·{0}⁻ᵀ  (cofactors if singular)",),
         samples=_det_singular_samples, jax="jnp.linalg.det({0})", complex_rules=True)
FAMILY.op(DET)


def _slogdet_impl(a: Any) -> Any:
    return np.linalg.slogdet(a)[1]


#: slogdet's sign, as a step of a graph (piecewise constant: no derivative). Eagerly the
#: sign is NumPy's plain array.
SLOGDET_SIGN = Op("slogdet_sign", lambda a: np.linalg.slogdet(a)[0],
                  (lambda g, ans, a: zero_tangent(a),),
                  jvp=zero_jvp, formula="d sign(det A) = 0", adjoint=("0",),
                  samples=lambda rng: _det_samples(rng), jax="jnp.linalg.slogdet({0})[0]")
FAMILY.op(SLOGDET_SIGN)
SLOGDET = Op("slogdet", _slogdet_impl, (_slogdet_vjp,),
             jvp=_slogdet_jvp, reads=(0,), formula="d log|det A| = tr(A⁻¹ dA); Ā = ḡ A⁻ᵀ",
             adjoint=("ḡ·{0}⁻ᵀ",),
             samples=_det_samples, jax="jnp.linalg.slogdet({0})[1]")
FAMILY.op(SLOGDET)


def _solve_impl(a: Any, b: Any) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]),
                           np.broadcast_to(b, batch + b.shape[-2:]))


def _solve_da(g: Any, ans: Any, a: Any, b: Any) -> Any:
    bbar = apply(SOLVE, _mT(a), g)
    return sum_to(-matmul(bbar, _mT(ans)), _shape(a))


def _solve_db(g: Any, ans: Any, a: Any, b: Any) -> Any:
    return sum_to(apply(SOLVE, _mT(a), g), _shape(b))


def _solve_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, b: Any) -> Any:
    # X = A⁻¹B  =>  dX = A⁻¹(dB - dA X).
    ta, tb = tangents
    rhs = tb
    if ta is not None:
        da_x = matmul(ta, ans)
        rhs = -da_x if rhs is None else rhs - da_x
    if rhs is None:
        return _zeros_like(ans)
    return apply(SOLVE, a, rhs)


def _solve_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    n = rng.normal
    return [((_rng_matrix(rng, a), n(size=b)), {})
            for a, b in [((3, 3), (3, 2)), ((3, 3), (3, 1)), ((2, 3, 3), (3, 2)),
                         ((3, 3), (2, 3, 1)), ((2, 1, 2, 2), (3, 2, 2))]]


#: The primitive behind :func:`solve`: ``b`` is always a stack of matrices.
SOLVE = Op("solve", _solve_impl, (_solve_da, _solve_db), jvp=_solve_jvp, reads=(0,),
           reads_out=True,
           formula="X = A⁻¹B; B̄ = A⁻ᵀḡ, Ā = -B̄ Xᵀ", samples=_solve_samples,
           adjoint=("−{0}⁻ᵀ @ ḡ @ {out}ᵀ", "{0}⁻ᵀ @ ḡ"), jax="jnp.linalg.solve({0}, {1})",
           complex_rules=True, raises=True)
FAMILY.op(SOLVE)


@functools.lru_cache(maxsize=64)
def _phi(n: int) -> np.ndarray:
    """Lower triangle with the diagonal halved, as a mask (float32: exact, never upcasts)."""
    mask = (np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(np.float32)
    mask.flags.writeable = False  # cached and shared
    return mask


def _hermitian_part(a: Any) -> np.ndarray:
    """``(a + aᴴ)/2`` (``(a + aᵀ)/2`` of a real ``a``), in NumPy."""
    a = np.asarray(a)
    at = np.swapaxes(a, -1, -2)
    return 0.5 * (a + (at.conj() if a.dtype.kind == "c" else at))


def _adjoint(x: Any) -> Any:
    """``xᴴ`` of the last two axes (``xᵀ`` of a real ``x``)."""
    return conjugate(_mT(x)) if dtype_of(x).kind == "c" else _mT(x)


def _cholesky_impl(a: Any, upper: bool = False) -> Any:
    return np.linalg.cholesky(_hermitian_part(a), upper=upper)


def _cholesky_vjp(g: Any, ans: Any, a: Any, upper: bool = False) -> Any:
    # Murray (2016), arXiv:1602.07527: Ā = herm(L⁻ᵀ Φ(Lᵀ L̄) conj(L)⁻¹) (for a real L,
    # sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹)); U = Lᴴ has the cotangent L̄ = Ūᴴ.
    lo, g = (_adjoint(ans), _adjoint(g)) if upper else (ans, g)
    lt = _mT(lo)
    p = matmul(lt, g) * _phi(_shape(lo)[-1])
    s = apply(SOLVE, lt, _mT(apply(SOLVE, _adjoint(lo), _mT(p))))
    return (s + _adjoint(s)) * 0.5


def _cholesky_jvp(tangents: tuple[Any, ...], ans: Any, a: Any, upper: bool = False) -> Any:
    # dL = L Φ(L⁻¹ dS L⁻ᴴ) with dS = herm(dA), the tangent of the input's Hermitian part
    # (L's diagonal stays real); dU = dLᴴ.
    (ta,) = tangents
    if ta is None:
        return _zeros_like(ans)
    lo = _adjoint(ans) if upper else ans
    ds = (ta + _adjoint(ta)) * 0.5
    y = apply(SOLVE, lo, ds)  # L⁻¹ dS
    m = apply(SOLVE, lo, _adjoint(y))  # L⁻¹ (L⁻¹ dS)ᴴ = L⁻¹ dS L⁻ᴴ (dS is Hermitian)
    dl = matmul(lo, m * _phi(_shape(lo)[-1]))
    return _adjoint(dl) if upper else dl


def _cholesky_samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return [((_rng_spd(rng, s),), {}) for s in [(1, 1), (3, 3), (2, 3, 3)]] + [
        ((_rng_spd(rng, s),), {"upper": True}) for s in [(3, 3), (2, 2, 2)]]


CHOLESKY = Op("cholesky", _cholesky_impl, (_cholesky_vjp,), jvp=_cholesky_jvp, reads_out=True,
              formula="dL = L Φ(L⁻¹ dA L⁻ᵀ); Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹), "
                      "Φ = lower triangle with the diagonal halved (complex: L⁻ᴴ, "
                      "herm, conj(L)⁻¹; upper=True: U = Lᴴ)",
              adjoint=("sym({out}⁻ᵀ @ Φ({out}ᵀ @ ḡ) @ {out}⁻¹)",),
              complex_adjoint=("herm({out}⁻ᵀ @ Φ({out}ᵀ @ ḡ) @ conj({out})⁻¹)",),
              samples=_cholesky_samples, complex_rules=True,
              jax="jnp.linalg.cholesky({0}, upper={upper})", raises=True)
FAMILY.op(CHOLESKY)


# -- public functions -----------------------------------------------------------
@FAMILY.export(space=("numpy", "linalg"))
def matmul(x: Any, y: Any) -> Any:
    """Matrix product with NumPy's batching, broadcasting and 1-d rules.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = wg.tensor(np.eye(2), requires_grad=True)
    >>> (a @ np.array([1.0, 2.0])).sum().backward()
    >>> a.grad
    array([[1., 2.],
           [1., 2.]])
    """
    return apply(MATMUL, x, y)


@FAMILY.export
def dot(a: Any, b: Any) -> Any:
    """Dot product with ``np.dot``'s rules (scalars, 1-d, N-d with 1-d or M-d)."""
    return apply(DOT, a, b)


@FAMILY.export
def inner(a: Any, b: Any) -> Any:
    """Inner product over the last axes (``np.inner``)."""
    return apply(INNER, a, b)


@FAMILY.export
def outer(a: Any, b: Any) -> Any:
    """Outer product of the flattened inputs (``np.outer``)."""
    return apply(OUTER, a, b)


@FAMILY.export(space=("numpy", "linalg"))
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum products over the given axes (``np.tensordot``).

    ``axes`` is an int ``n`` (the last ``n`` axes of ``a`` with the first
    ``n`` of ``b``) or a pair of axis sequences.
    """
    na, nb = np.ndim(_raw(a)), np.ndim(_raw(b))
    return apply(TENSORDOT, a, b, axes=_norm_axes(axes, na, nb))


@FAMILY.export
def kron(a: Any, b: Any) -> Any:
    """Kronecker product (``np.kron``)."""
    return apply(KRON, a, b)


def _conj(a: Any) -> Any:
    """The complex conjugate of a complex ``a``; a real ``a`` itself."""
    return conjugate(a) if dtype_of(a).kind == "c" else a


@FAMILY.export
def vdot(a: Any, b: Any) -> Any:
    """Dot product of the flattened inputs, ``a`` conjugated first (``np.vdot``).

    Examples
    --------
    >>> import numpy as np
    >>> vdot(np.array([1j, 2.0]), np.array([1j, 1.0]))
    np.complex128(3+0j)
    """
    return dot(reshape_to(_conj(a), (-1,)), reshape_to(b, (-1,)))


@FAMILY.export(space=("numpy", "linalg"))
def vecdot(x1: Any, x2: Any, axis: int = -1) -> Any:
    """Vector dot product over ``axis`` with broadcasting, ``x1`` conjugated first
    (``np.vecdot``)."""
    return _sum(_conj(x1) * x2, axis=axis)


def _einsum_parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """Explicit subscripts with ``...`` replaced by fresh labels, and the output."""
    s = subscripts.replace(" ", "")
    if s.count("->") > 1:
        raise ValueError(f"einsum: more than one '->' in {subscripts!r}")
    lhs, out = s.split("->") if "->" in s else (s, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: {len(terms)} operand subscripts in {subscripts!r} but {len(shapes)} operands"
        )
    for ch in s.replace("...", "").replace(",", "").replace("->", ""):
        if ch not in _LETTERS:
            raise ValueError(f"einsum: invalid subscript {ch!r} in {subscripts!r}")
    if out is not None:
        plain = out.replace("...", "")
        if "." in plain or len(set(plain)) != len(plain) or out.count("...") > 1:
            raise ValueError(f"einsum: invalid output subscripts in {subscripts!r}")
    n_ell = 0
    for t, shape in zip(terms, shapes):
        if "." in t.replace("...", ""):
            raise ValueError(f"einsum: invalid subscripts {t!r}")
        if "..." in t:
            n_ell = max(n_ell, len(shape) - (len(t) - 3))
        elif len(t) != len(shape):
            raise ValueError(
                f"einsum: operand with subscripts {t!r} has {len(shape)} dimensions"
            )
    fresh = [c for c in _LETTERS if c not in s]
    if n_ell > len(fresh):
        raise ValueError("einsum: too many dimensions for the available subscript letters")
    ell = "".join(fresh[:n_ell])
    canon = []
    for t, shape in zip(terms, shapes):
        if "..." in t:
            k = len(shape) - (len(t) - 3)
            if k < 0:
                raise ValueError(f"einsum: operand with subscripts {t!r} has too few dimensions")
            t = t.replace("...", ell[n_ell - k:])
        canon.append(t)
    if out is None:
        counts: dict[str, int] = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    elif "..." in out:
        out = out.replace("...", ell)
    elif n_ell:
        raise ValueError(
            "einsum: output has more dimensions than subscripts given in einstein sum, but no "
            "'...' ellipsis provided to broadcast the extra dimensions."
        )
    labels = set("".join(canon))
    for c in out:
        if c not in labels:
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
    return canon, out


def _einsum_sublists(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """Convert ``einsum(op0, sublist0, op1, sublist1, ..., [out])`` to a string form."""

    def term(sub: Any) -> str:
        return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sub)

    ops = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(args) % 2 == 1:
        out = ops.pop()
    spec = ",".join(term(s) for s in subs)
    if out is not None:
        spec += "->" + term(out)
    return spec, ops


def _einsum_pair(a: Any, b: Any, ta: str, tb: str, out: str) -> Any:
    return apply(EINSUM, a, b, subscripts=f"{ta},{tb}->{out}")


@FAMILY.export
def einsum(*operands: Any, optimize: Any = False, **kwargs: Any) -> Any:
    """Einstein summation (``np.einsum``), differentiable in every operand.

    Supports explicit (``'ij,jk->ik'``) and implicit (``'ij,jk'``) outputs,
    ``...``, repeated labels (traces, diagonals), size-1 broadcasting and any
    number of operands; the sublist form ``einsum(a, [0, 1], b, [1, 2])``
    too. With three or more operands the contraction runs pairwise in the
    order ``np.einsum_path(..., optimize)`` picks (``"greedy"`` by default), each step
    one recorded ``einsum`` op. Without a traced operand it is NumPy's ``einsum``, with
    NumPy's default ``optimize=False``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = wg.tensor(np.eye(3) * 2.0, requires_grad=True)
    >>> wg.numpy.einsum("ii", a).backward()
    >>> a.grad
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    """
    bad = {k: v for k, v in kwargs.items() if v is not None and k not in ("casting", "dtype")}
    if bad:
        raise TypeError(f"wengert einsum does not support the arguments {sorted(bad)}")
    if not operands:
        raise ValueError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], list(operands[1:])
    else:
        subscripts, ops = _einsum_sublists(operands)
    if not ops:
        raise ValueError("einsum: at least one operand is needed")
    if not any(is_traced(o) for o in ops):
        return np.einsum(subscripts, *ops, optimize=optimize,
                         **{k: v for k, v in kwargs.items() if v is not None})
    ops = [o if is_traced(o) else np.asarray(o) for o in ops]
    if kwargs.get("dtype") is not None:  # NumPy's: the operands cast to it ("safe" rule)
        dtype, casting = np.dtype(kwargs["dtype"]), kwargs.get("casting") or "safe"
        for o in ops:
            if not np.can_cast(dtype_of(o), dtype, casting):
                raise TypeError(f"Cannot cast array data from dtype('{dtype_of(o)}') to "
                                f"dtype('{dtype}') according to the rule '{casting}'")
        ops = [o if dtype_of(o) == dtype else o.astype(dtype) for o in ops]
    shapes = [_shape(o) for o in ops]
    terms, out = _einsum_parse(subscripts, shapes)
    if len(ops) == 1:  # (a one of the operand's dtype: a boolean or integer einsum keeps it)
        return _einsum_pair(ops[0], np.ones((), dtype_of(ops[0])), terms[0], "", out)
    if len(ops) == 2:
        return _einsum_pair(ops[0], ops[1], terms[0], terms[1], out)
    path = np.einsum_path(",".join(terms) + "->" + out, *[np.broadcast_to(0.0, s) for s in shapes],
                          optimize=optimize if optimize else "greedy")[0][1:]
    ops = list(ops)
    terms = list(terms)
    for step in path:
        idx = sorted(step, reverse=True)
        picked = [(ops.pop(k), terms.pop(k)) for k in idx][::-1]
        rest = set("".join(terms)) | set(out)
        x, tx = picked[0]
        for j, (y, ty) in enumerate(picked[1:], start=1):
            later = rest | set("".join(t for _, t in picked[j + 1:]))
            last = not terms and j == len(picked) - 1
            tr = out if last else "".join(sorted(set(tx + ty) & later))
            x, tx = _einsum_pair(x, y, tx, ty, tr), tr
        if len(picked) == 1:
            tr = out if not terms else "".join(sorted(set(tx) & rest))
            x, tx = _einsum_pair(x, 1.0, tx, "", tr), tr
        ops.append(x)
        terms.append(tx)
    (result,), (tres,) = ops, terms
    if tres != out:
        result = _einsum_pair(result, 1.0, tres, "", out)
    return result


@FAMILY.export(space="linalg")
def inv(a: Any) -> Any:
    """Inverse of a square matrix (or a stack of them)."""
    return apply(INV, a)


@FAMILY.export(space="linalg")
def det(a: Any) -> Any:
    """Determinant of a square matrix (or a stack of them)."""
    return apply(DET, a)


class SlogdetResult(NamedTuple):
    """``(sign, logabsdet)``, as NumPy's ``SlogdetResult``."""

    sign: Any
    logabsdet: Any


@FAMILY.export(space="linalg")
def slogdet(a: Any) -> SlogdetResult:
    """Sign and log of the absolute determinant, ``(sign, logabsdet)``.

    The sign is a constant (it has no gradient); ``logabsdet`` is
    differentiable with gradient ``A⁻ᵀ``.
    """
    raw = _raw(a)
    # (a graph tracer's sign is a step of the graph: np.linalg.slogdet of it would come
    # back here)
    sign = apply(SLOGDET_SIGN, raw) if is_traced(raw) else np.linalg.slogdet(raw)[0]
    return SlogdetResult(sign, apply(SLOGDET, a))


def _vector_rhs(a: Any, b: Any) -> bool:
    """Whether ``np.linalg.solve`` treats ``b`` as a (stack of) vector(s)."""
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        return np.ndim(_raw(b)) == 1
    return np.ndim(_raw(b)) == np.ndim(_raw(a)) - 1


@FAMILY.export(space="linalg")
def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b`` for ``x``; ``b`` is a vector or a (stack of) matrices.

    Follows ``np.linalg.solve`` of the installed NumPy on which ``b`` counts
    as a vector.
    """
    if _vector_rhs(a, b):
        bs = _shape(b)
        x = apply(SOLVE, a, reshape_to(b, bs + (1,)))
        return reshape_to(x, _shape(x)[:-1])
    return apply(SOLVE, a, b)


@FAMILY.export(space="linalg")
def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """The Cholesky factor of a Hermitian (real: symmetric) positive-definite matrix, or
    stack, as ``np.linalg.cholesky``: ``L`` with ``a = L Lᴴ``, or with ``upper=True``
    ``U = Lᴴ`` with ``a = Uᴴ U``.

    Like NumPy (LAPACK's ``potrf``), it reads one triangle of ``a``, the lower one (the
    upper one for ``upper=True``), and the real part of the diagonal; the rest is never
    looked at. wengert's ``cholesky`` is that function, in value and in derivative: it
    builds the Hermitian matrix that triangle defines (with wengert's ops) and
    factors it, so on any input the values are NumPy's, bit for bit, the unread
    triangle and the imaginary part of the diagonal get zero gradient, and the read
    triangle gets the whole gradient (an off-diagonal entry stands for two entries of
    the Hermitian matrix), as finite differences of ``np.linalg.cholesky`` itself give;
    ``np.linalg.eigh`` does the same. The peers differ: HIPS autograd and PyTorch read
    the triangle as NumPy but return the symmetric (Hermitian) gradient, and JAX
    symmetrises the input, ``(a + aᴴ)/2``, so its values are not NumPy's on a
    non-Hermitian input. Through a Hermitian parametrisation (``cholesky(b @ bᴴ)``)
    all of them agree.

    Complex matrices follow HIPS autograd's convention (:mod:`wengert.ops.elementwise`);
    with ``L``'s diagonal real and positive, ``dL = L Φ(L⁻¹ dA L⁻ᴴ)`` and ``Ā =
    herm(L⁻ᵀ Φ(Lᵀ L̄) conj(L)⁻¹)``, ``Φ`` the lower triangle with the diagonal halved.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> a = np.array([[4.0, 7.0], [2.0, 5.0]])  # the 7.0 is not read
    >>> np.linalg.cholesky(wg.tensor(a)).numpy()
    array([[2., 0.],
           [1., 2.]])
    >>> wg.grad(lambda a: np.sum(np.linalg.cholesky(a)))(a)
    array([[0.1875, 0.    ],
           [0.25  , 0.25  ]])
    >>> c = np.array([[4.0, 2.0j], [9.0, 5.0]])  # upper=True: the 9.0 is not read
    >>> np.linalg.cholesky(wg.tensor(c), upper=True).numpy()
    array([[2.+0.j, 0.+1.j],
           [0.+0.j, 2.+0.j]])
    """
    a = as_matrices(a)
    shape = _shape(a)
    if shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    upper = bool(upper)
    return apply(CHOLESKY, hermitian_from_triangle(a, lower=not upper), upper=upper)
