"""Check derivatives against central finite differences: :func:`gradcheck`, :func:`check_grads`.

Both compare what wengert computes (the reverse-mode Jacobian from
:func:`wengert.vjp`, or the forward-mode one from ``wengert.jvp`` where it
exists) with central finite differences in float64. Small problems compare
the whole Jacobian entry by entry; large ones compare random projections
``<v, J u>`` (so the Jacobian is never built). A NaN or infinity on either
side is a failure, never a pass.

Complex inputs and outputs are checked as pairs of real numbers, under the
convention of :mod:`wengert.ops.elementwise` (HIPS autograd's): an input ``z``
is moved along its real and its imaginary directions, a complex output counts
as its real and imaginary parts, and a complex tangent ``t`` of ``z`` is the
real direction ``(Re t, Im t)`` while a complex cotangent ``c`` is the real
covector ``(Re c, -Im c)``, since they pair as ``Re(sum(c·t))``. So the VJP at
cotangent ``g`` must be the gradient of ``Re(sum(g·f))``, and a real input must
get a real gradient.

Examples
--------
>>> import numpy as np
>>> from wengert.testing import gradcheck, check_grads
>>> gradcheck(lambda x, y: np.sin(x) * y, (np.array([0.5, 1.0]), 2.0))
True
>>> check_grads(lambda x: np.tanh(x).sum(), (np.array([0.1, -0.4]),), order=2)
True
>>> check_grads(lambda z: np.abs(np.exp(z)) ** 2, (np.array([0.1 + 0.5j]),), order=2)
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from wengert.core.bind import primal
from wengert.core.bind import shape_of as _shape
from wengert.core.subclasses import refuse_subclass
from wengert.core.tree import flatten, unflatten
from wengert.transforms.forward import jvp as _jvp
from wengert.transforms.reverse import vjp as _vjp

__all__ = ["GradcheckError", "gradcheck", "check_grads"]

_MODES = ("rev", "fwd")
_MODE_NAMES = {"rev": "reverse-mode (vjp)", "fwd": "forward-mode (jvp)"}


class GradcheckError(AssertionError):
    """Raised by :func:`gradcheck` when a derivative disagrees with finite differences.

    The message names the input, the mode, the tolerances and the worst
    entries (output index, input index, analytic, numeric, absolute error).
    """


# -- inputs and outputs ---------------------------------------------------------
def _as_input(x: Any, i: int) -> Any:
    """Input ``i`` as float64 (complex128): a Python float stays a float, the rest become
    arrays."""
    refuse_subclass(x, f"gradcheck (input {i})")
    x = primal(x)
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"gradcheck: input {i} is a bool; only numbers can be checked")
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, np.ndarray):
        return float(x)
    a = np.asarray(x)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)  # always a copy
    if a.dtype.kind not in "iuf":
        raise TypeError(
            f"gradcheck: input {i} has dtype {a.dtype}; only real (integer or floating "
            "point) or complex inputs can be checked, and they are cast to float64 "
            "(complex128)"
        )
    return a.astype(np.float64)  # always a copy


def _is_complex(x: Any) -> bool:
    return type(x) is np.ndarray and x.dtype.kind == "c"


def _real_size(x: Any) -> int:
    """The number of real coordinates of input ``x`` (two per complex entry)."""
    n = int(np.prod(_shape(x)))
    return 2 * n if _is_complex(x) else n


def _direction(x: Any, u: np.ndarray) -> np.ndarray:
    """The direction of input ``x`` given by real coordinates ``u`` (for a complex ``x``,
    the real parts then the imaginary parts), in ``x``'s shape."""
    shape = _shape(x)
    if _is_complex(x):
        n = u.size // 2
        return (u[:n] + 1j * u[n:]).reshape(shape)
    return u.reshape(shape)


def _coordinate(x: Any, j: int) -> str:
    """A readable name of real coordinate ``j`` of input ``x``."""
    shape = _shape(x)
    n = int(np.prod(shape))
    part = ""
    if _is_complex(x):
        part = " re" if j < n else " im"
        j %= n
    idx = np.unravel_index(j, shape) if shape else ()
    return str(tuple(int(q) for q in idx)) + part


def _as_inputs(inputs: Any) -> list[Any]:
    items = list(inputs) if type(inputs) is tuple else [inputs]
    return [_as_input(x, i) for i, x in enumerate(items)]


def _flat_problem(f: Callable[..., Any], inputs: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``f`` as a function of the leaves of its arguments, and those leaves (float64).

    Arguments may be pytrees (tuples, lists, dicts, namedtuples), as for
    :func:`wengert.grad`; the checks then run on their leaves, numbered left to right.
    """
    items = tuple(inputs) if type(inputs) is tuple else (inputs,)
    leaves, spec = flatten(items)
    if spec == flatten(tuple(leaves))[1]:  # already one leaf per argument
        return f, _as_inputs(tuple(leaves))

    def on_leaves(*xs: Any) -> Any:
        return f(*unflatten(spec, list(xs)))

    on_leaves.__name__ = getattr(f, "__name__", "f")
    return on_leaves, _as_inputs(tuple(leaves))


def _with(xs: list[Any], i: int, value: Any) -> list[Any]:
    ys = list(xs)
    ys[i] = value
    return ys


def _displaced(x: Any, u: np.ndarray, h: float) -> Any:
    """``x + h u`` for a float or an array input (``u`` has the input's shape)."""
    if type(x) is float:
        return x + h * float(u)
    return x + h * u


class _Output:
    """The structure of a function's output: leaves, shapes, a flat float64 view."""

    def __init__(self, out: Any) -> None:
        leaves, self.spec = flatten(out)
        self.is_float = [type(primal(v)) is float for v in leaves]
        values = [np.asarray(primal(v)) for v in leaves]
        for k, v in enumerate(values):
            if v.dtype.kind not in "biufc":
                raise TypeError(
                    f"gradcheck: output leaf {k} has dtype {v.dtype}; the function must "
                    "return numbers (arrays, floats, or tuples/lists/dicts of them)"
                )
        self.is_complex = [v.dtype.kind == "c" for v in values]
        self.shapes = [v.shape for v in values]
        # real coordinates per leaf: a complex leaf counts its real, then imaginary parts
        self.sizes = [v.size * (2 if c else 1) for v, c in zip(values, self.is_complex)]
        self.size = sum(self.sizes)
        self.flat = self.ravel(values)

    def ravel(self, values: list[Any]) -> np.ndarray:
        if not values:
            return np.zeros(0)
        parts = []
        for v, c in zip(values, self.is_complex):
            v = np.asarray(v)
            if c:
                parts += [np.real(v).astype(np.float64).ravel(),
                          np.imag(v).astype(np.float64).ravel()]
            elif v.dtype.kind == "c":  # a complex value where a real one was
                raise GradcheckError("gradcheck: a real output of the function became complex")
            else:
                parts.append(np.asarray(v, dtype=np.float64).ravel())
        return np.concatenate(parts)

    def flat_of(self, out: Any) -> np.ndarray:
        leaves, spec = flatten(out)
        shapes = [np.shape(primal(v)) for v in leaves]
        if shapes != self.shapes:
            raise GradcheckError(
                f"gradcheck: the function's output changed structure under a small change of "
                f"its inputs (leaf shapes {shapes} instead of {self.shapes})"
            )
        return self.ravel([primal(v) for v in leaves])

    def cotangent(self, flat: np.ndarray) -> Any:
        """A cotangent with the output's structure from a flat vector."""
        leaves = []
        start = 0
        for shape, size, is_float, c in zip(self.shapes, self.sizes, self.is_float,
                                            self.is_complex):
            part = flat[start : start + size]
            start += size
            if c:  # the covector (a, b) on (Re, Im) is the cotangent a - i b
                half = size // 2
                leaves.append((part[:half] - 1j * part[half:]).reshape(shape))
                continue
            part = part.reshape(shape)
            leaves.append(float(part) if is_float else part.copy())
        return unflatten(self.spec, leaves)

    def index(self, k: int) -> str:
        """A readable output index for flat position ``k``."""
        for leaf, (shape, size) in enumerate(zip(self.shapes, self.sizes)):
            if k < size:
                part = ""
                if self.is_complex[leaf]:
                    part = " re" if k < size // 2 else " im"
                    k %= size // 2
                idx = np.unravel_index(k, shape) if shape else ()
                text = str(tuple(int(j) for j in idx)) + part
                return text if len(self.shapes) == 1 else f"[{leaf}]{text}"
            k -= size
        raise IndexError(k)


def _evaluate(f: Callable[..., Any], xs: list[Any], structure: _Output) -> np.ndarray:
    return structure.flat_of(f(*xs))


def _cast_cotangent(g: Any, x: Any, i: int, mode: str) -> np.ndarray:
    g = primal(g)
    arr = np.asarray(g)
    if arr.shape != _shape(x):
        raise GradcheckError(
            f"gradcheck: the {_MODE_NAMES[mode]} derivative for input {i} has shape "
            f"{arr.shape}, but the input has shape {_shape(x)}"
        )
    if _is_complex(x):
        if arr.dtype.kind not in "biufc":
            raise GradcheckError(
                f"gradcheck: the {_MODE_NAMES[mode]} derivative for complex input {i} has "
                f"dtype {arr.dtype}"
            )
        # a cotangent c pairs with a tangent t as Re(c t): the covector (Re c, -Im c)
        return np.concatenate([np.real(arr).astype(np.float64).ravel(),
                               -np.imag(arr).astype(np.float64).ravel()])
    if arr.dtype.kind not in "biuf":
        raise GradcheckError(
            f"gradcheck: the {_MODE_NAMES[mode]} derivative for input {i} has dtype "
            f"{arr.dtype}" + (" (a real input must get a real gradient)"
                              if arr.dtype.kind == "c" else "")
        )
    return arr.astype(np.float64).ravel()


# -- analytic derivatives -----------------------------------------------------------
def _jvp_fn() -> Callable[..., Any]:
    return _jvp


def _vjp_fn(f: Callable[..., Any], xs: list[Any]) -> tuple[Any, Callable[[Any], Any]]:
    return _vjp(f, *xs)


def _jvp_column(
    f: Callable[..., Any], xs: list[Any], i: int, u: np.ndarray, structure: _Output
) -> np.ndarray:
    """``J_i u`` from forward mode, flattened like the output."""
    jvp = _jvp_fn()
    tangents = [0.0 if type(x) is float else np.zeros_like(x) for x in xs]
    tangents[i] = float(u) if type(xs[i]) is float else np.asarray(u, dtype=xs[i].dtype)
    _, t_out = jvp(f, tuple(xs), tuple(tangents))
    return structure.flat_of(t_out)


# -- comparison and reporting -------------------------------------------------------
def _bad(analytic: np.ndarray, numeric: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Entries that fail ``|a - n| <= atol + rtol |n|``; NaN and inf always fail."""
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(analytic - numeric)
        ok = (err <= atol + rtol * np.abs(numeric)) & np.isfinite(analytic) & np.isfinite(numeric)
    return ~ok


def _table(rows: list[tuple[str, str, float, float]], headers: tuple[str, str]) -> str:
    lines = [
        f"    {headers[0]:<14} {headers[1]:<14} {'analytic':>14} {'numeric':>14} {'abs error':>12}"
    ]
    for out_idx, in_idx, a, n in rows:
        with np.errstate(invalid="ignore", over="ignore"):
            err = abs(a - n)
        lines.append(f"    {out_idx:<14} {in_idx:<14} {a:>14.6e} {n:>14.6e} {err:>12.4e}")
    return "\n".join(lines)


def _worst(
    analytic: np.ndarray, numeric: np.ndarray, bad: np.ndarray, atol: float, rtol: float, k: int = 5
) -> np.ndarray:
    """Flat positions of up to ``k`` failing entries, non-finite ones first, then by excess."""
    with np.errstate(invalid="ignore", over="ignore"):
        excess = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
    excess = np.where(np.isfinite(excess), excess, np.inf)
    positions = np.flatnonzero(bad)
    order = np.argsort(-excess.ravel()[positions], kind="stable")
    return positions[order[:k]]


# -- the checks -----------------------------------------------------------------------
def _check(
    f: Callable[..., Any],
    xs: list[Any],
    *,
    eps: float,
    atol: float,
    rtol: float,
    max_full: int,
    n_projections: int,
    seed: int,
    mode: str,
) -> list[str]:
    """Compare one mode's derivatives with finite differences; return failure messages."""
    if mode not in _MODES:
        raise ValueError(f"gradcheck: unknown mode {mode!r}; use 'rev' or 'fwd'")
    structure = _Output(f(*xs))
    pullback = None
    if mode == "rev":
        out, pullback = _vjp_fn(f, xs)
        traced = structure.flat_of(out)
        if traced.shape != structure.flat.shape or not np.allclose(
            traced, structure.flat, rtol=1e-7, atol=1e-9, equal_nan=True
        ):
            return [
                "the function's value on tensors (inside wengert.vjp) differs from its value "
                "on plain arrays; the finite differences would check a different function"
            ]
    n_out = structure.size
    n_in = [_real_size(x) for x in xs]
    if n_out == 0 or sum(n_in) == 0:
        return []
    tols = (eps, atol, rtol)
    if n_out * sum(n_in) <= max_full**2:
        return _check_full(f, xs, structure, pullback if mode == "rev" else None, tols, mode)
    return _check_projections(f, xs, structure, pullback if mode == "rev" else None, tols,
                              mode, max_full, n_projections, seed)


def _tolerances(tols: tuple[float, float, float]) -> str:
    eps, atol, rtol = tols
    return f"eps={eps:g}, atol={atol:g}, rtol={rtol:g}"


def _check_full(f: Callable[..., Any], xs: list[Any], structure: _Output, pullback: Any,
                tols: tuple[float, float, float], mode: str) -> list[str]:
    """:func:`_check` for a small Jacobian: the whole of it, entry by entry."""
    eps, atol, rtol = tols
    n_out = structure.size
    n_in = [_real_size(x) for x in xs]
    failures: list[str] = []
    analytic = [np.empty((n_out, n)) for n in n_in]
    if mode == "rev":
        basis = np.zeros(n_out)
        for k in range(n_out):
            basis[:] = 0.0
            basis[k] = 1.0
            cts = pullback(structure.cotangent(basis))
            for i, x in enumerate(xs):
                analytic[i][k] = _cast_cotangent(cts[i], x, i, mode)
    for i, x in enumerate(xs):
        numeric = np.empty((n_out, n_in[i]))
        for j in range(n_in[i]):
            u = np.zeros(n_in[i])
            u[j] = 1.0
            u = _direction(x, u)
            plus = _evaluate(f, _with(xs, i, _displaced(x, u, eps)), structure)
            minus = _evaluate(f, _with(xs, i, _displaced(x, u, -eps)), structure)
            numeric[:, j] = (plus - minus) / (2.0 * eps)
            if mode == "fwd":
                analytic[i][:, j] = _jvp_column(f, xs, i, u, structure)
        bad = _bad(analytic[i], numeric, atol, rtol)
        if bad.any():
            rows = []
            for pos in _worst(analytic[i], numeric, bad, atol, rtol):
                k, j = divmod(int(pos), n_in[i])
                rows.append((structure.index(k), _coordinate(x, j), float(analytic[i][k, j]),
                             float(numeric[k, j])))
            failures.append(
                f"input {i} (shape {_shape(x)}): the {_MODE_NAMES[mode]} Jacobian differs from "
                f"central finite differences in {int(bad.sum())} of {bad.size} entries "
                f"({_tolerances(tols)}). Worst entries:\n"
                + _table(rows, ("output index", "input index"))
            )
    return failures


def _check_projections(f: Callable[..., Any], xs: list[Any], structure: _Output,
                       pullback: Any, tols: tuple[float, float, float], mode: str,
                       max_full: int, n_projections: int, seed: int) -> list[str]:
    """:func:`_check` for a large Jacobian: random projections ``<v, J u>``, never
    building it."""
    eps, atol, rtol = tols
    n_out = structure.size
    n_in = [_real_size(x) for x in xs]
    rng = np.random.default_rng(seed)
    results: list[list[tuple[float, float]]] = [[] for _ in xs]  # per input, per projection
    for _p in range(n_projections):
        v = rng.standard_normal(n_out)
        v /= np.linalg.norm(v)
        cts = pullback(structure.cotangent(v)) if mode == "rev" else None
        for i, x in enumerate(xs):
            if n_in[i] == 0:
                continue
            u = rng.standard_normal(n_in[i])
            u /= np.linalg.norm(u)
            coords = u
            u = _direction(x, u)
            plus = _evaluate(f, _with(xs, i, _displaced(x, u, eps)), structure)
            minus = _evaluate(f, _with(xs, i, _displaced(x, u, -eps)), structure)
            numeric = float(v @ (plus - minus)) / (2.0 * eps)
            if mode == "rev":
                analytic = float(_cast_cotangent(cts[i], x, i, mode) @ coords)
            else:
                analytic = float(v @ _jvp_column(f, xs, i, u, structure))
            results[i].append((analytic, numeric))
    what = "<J^T v, u>" if mode == "rev" else "<v, J u>"
    failures: list[str] = []
    for i, x in enumerate(xs):
        if not results[i]:
            continue
        a = np.array([r[0] for r in results[i]])
        n = np.array([r[1] for r in results[i]])
        bad = _bad(a, n, atol, rtol)
        if bad.any():
            rows = [
                (f"projection {int(p)}", "random unit u", float(a[p]), float(n[p]))
                for p in _worst(a, n, bad, atol, rtol)
            ]
            failures.append(
                f"input {i} (shape {_shape(x)}): {int(bad.sum())} of {bad.size} random "
                f"projections differ: {what} from the {_MODE_NAMES[mode]} derivative vs "
                f"<v, J u> by central finite differences ({_tolerances(tols)}; the Jacobian "
                f"is {n_out} x {n_in[i]}, too large to compare entry by entry with "
                f"max_full={max_full}). Worst projections:\n"
                + _table(rows, ("projection", "direction"))
            )
    return failures


def gradcheck(
    f: Callable[..., Any],
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    max_full: int = 64,
    n_projections: int = 4,
    seed: int = 0,
    *,
    modes: Sequence[str] = ("rev",),
) -> bool:
    """Check ``f``'s derivatives against central finite differences in float64.

    The reverse-mode Jacobian (from :func:`wengert.vjp`, one basis cotangent
    per output entry) is compared entry by entry with central differences
    ``(f(x + eps e_j) - f(x - eps e_j)) / (2 eps)`` when it is small
    (``outputs x inputs <= max_full**2``). Larger ones are checked with
    ``n_projections`` random unit directions ``u`` (input) and ``v``
    (output): ``<J^T v, u>`` from the VJP against ``<v, J u>`` by central
    differences along ``u``. An entry passes when
    ``|analytic - numeric| <= atol + rtol * |numeric|``; NaN or infinity on
    either side fails.

    Parameters
    ----------
    f : callable
        ``f(*inputs)`` returns an array, a float, or a tuple/list/dict of them.
        It is called with plain arrays (finite differences) and with tensors
        (inside :func:`wengert.vjp`), so it should use ``np.*`` or
        ``wengert.numpy``.
    inputs : tuple of array_like, or one array_like
        The point to check at. Arrays are cast to float64 (copied); Python
        numbers are checked as Python floats.
    eps : float
        Finite difference step.
    atol, rtol : float
        Absolute and relative tolerance.
    raise_exception : bool
        Raise :class:`GradcheckError` on failure (default); otherwise return
        ``False``.
    max_full : int
        Compare the full Jacobian when ``outputs * inputs <= max_full**2``.
    n_projections : int
        Number of random projections for larger Jacobians.
    seed : int
        Seed for the random directions.
    modes : sequence of str
        ``"rev"`` (VJP, the default) and/or ``"fwd"`` (JVP, needs
        ``wengert.jvp``).

    Returns
    -------
    bool
        ``True`` when every check passes; ``False`` on failure with
        ``raise_exception=False``.

    Raises
    ------
    GradcheckError
        When a derivative disagrees; the message names the input and gives a
        table of up to five worst entries (output index, input index,
        analytic, numeric, absolute error).

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.testing import gradcheck
    >>> gradcheck(np.sin, np.array([0.1, 0.2, 0.3]))
    True
    >>> gradcheck(lambda x, y: (x * y).sum(), (np.ones(3), 2.0))
    True
    >>> x = np.linspace(-1.0, 1.0, 10_000)
    >>> gradcheck(lambda x: np.tanh(x) ** 2, x)    # large: random projections
    True
    >>> gradcheck(lambda x: np.sqrt(x), np.array([0.0]), raise_exception=False)
    False
    """
    f, xs = _flat_problem(f, inputs)
    failures: list[str] = []
    for mode in modes:
        # NaN and inf are reported as failures, so NumPy's warnings about them are noise.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            failures += _check(f, xs, eps=eps, atol=atol, rtol=rtol, max_full=max_full,
                               n_projections=n_projections, seed=seed, mode=mode)
    if not failures:
        return True
    if not raise_exception:
        return False
    name = getattr(f, "__name__", type(f).__name__)
    raise GradcheckError(f"gradcheck failed for {name}:\n" + "\n".join(failures))


def _derivative_function(
    f: Callable[..., Any], xs: list[Any], mode: str, rng: np.random.Generator
) -> tuple[Callable[..., Any], list[Any]]:
    """``(x, v) -> vjp(f, x)[1](v)`` (or ``(x, t) -> jvp(f, x, t)[1]``) and the point to
    check it at: ``xs`` and a random cotangent (or tangent), which is an input too, so
    the next order also differentiates with respect to it (forward mode through a
    pullback, as HIPS autograd's ``check_grads`` does)."""
    n = len(xs)
    name = getattr(f, "__name__", "f")
    if mode == "rev":
        structure = _Output(f(*xs))
        ct_leaves, ct_spec = flatten(structure.cotangent(rng.standard_normal(structure.size)))

        def pulled_back(*args: Any) -> Any:
            return _vjp(f, *args[:n])[1](unflatten(ct_spec, list(args[n:])))

        pulled_back.__name__ = f"vjp({name})"
        return pulled_back, list(xs) + ct_leaves
    jvp = _jvp_fn()
    tangents = [
        float(rng.standard_normal()) if type(x) is float
        else rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape) if _is_complex(x)
        else rng.standard_normal(x.shape)
        for x in xs
    ]

    def pushed_forward(*args: Any) -> Any:
        return jvp(f, tuple(args[:n]), tuple(args[n:]))[1]

    pushed_forward.__name__ = f"jvp({name})"
    return pushed_forward, list(xs) + tangents


def check_grads(
    f: Callable[..., Any],
    args: Any,
    order: int = 2,
    modes: Sequence[str] = ("rev",),
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    max_full: int = 64,
    n_projections: int = 4,
    seed: int = 0,
) -> bool:
    """Check derivatives of ``f`` up to ``order`` against finite differences.

    In the spirit of HIPS autograd's ``check_grads``: order 1 is
    :func:`gradcheck` of ``f``; order 2 is :func:`gradcheck` of the VJP
    function ``(x, v) -> vjp(f, x)[1](v)`` at a random cotangent ``v``, with
    respect to ``x`` and ``v`` both (so the backward pass itself is
    differentiated, and forward mode runs through a pullback); order 3 does
    the same to that function, and so on. With ``"fwd"`` in ``modes`` the same
    is done with ``wengert.jvp`` and a random tangent.

    Parameters
    ----------
    f : callable
        As for :func:`gradcheck`.
    args : tuple of array_like, or one array_like
        The point to check at (cast to float64).
    order : int
        Highest derivative order to check (1, 2, 3, ...).
    modes : sequence of str
        ``"rev"`` and/or ``"fwd"``.
    eps, atol, rtol, max_full, n_projections, seed
        Passed to :func:`gradcheck`.

    Returns
    -------
    bool
        ``True``; a failure raises :class:`GradcheckError`, whose message
        starts with the order that failed.

    Examples
    --------
    >>> import numpy as np
    >>> from wengert.testing import check_grads
    >>> check_grads(lambda x, y: np.sum(np.sin(x) * y), (np.array([0.3, 0.7]), 1.5), order=2)
    True
    >>> check_grads(lambda x: np.exp(0.5 * x), np.array([0.2, -0.1]), order=3)
    True
    """
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}")
    f, xs = _flat_problem(f, args)
    rng = np.random.default_rng(seed)
    for mode in modes:
        fn = f
        point = list(xs)
        for k in range(1, order + 1):
            try:
                gradcheck(
                    fn,
                    tuple(point),
                    eps=eps,
                    atol=atol,
                    rtol=rtol,
                    max_full=max_full,
                    n_projections=n_projections,
                    seed=seed + k,
                    modes=(mode,),
                )
            except GradcheckError as exc:
                if k == 1:
                    what = "first derivatives"
                else:
                    fn_text, d = (
                        ("vjp(f, x)[1](v)", "v") if mode == "rev" else ("jvp(f, x, t)[1]", "t")
                    )
                    what = (
                        f"order-{k} derivatives (gradcheck of (x, {d}) -> {fn_text} at a "
                        f"random {d}, i.e. the derivative rules differentiated again; the "
                        f"last inputs are {d})"
                    )
                raise GradcheckError(
                    f"check_grads: the {_MODE_NAMES[mode]} {what} are wrong.\n{exc}"
                ) from None
            except (TypeError, ValueError) as exc:
                if k == 1:
                    raise
                raise GradcheckError(
                    f"check_grads: the {_MODE_NAMES[mode]} order-{k} derivatives could not be "
                    f"computed (differentiating the order-{k - 1} rules raised "
                    f"{type(exc).__name__}: {exc})"
                ) from exc
            if k < order:
                fn, point = _derivative_function(fn, point, mode, rng)
    return True
