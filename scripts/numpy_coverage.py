"""Which public NumPy functions lose a gradient on wengert values (not run as a test).

    .venv/bin/python scripts/numpy_coverage.py

Calls every public function of ``np``, ``np.linalg``, ``np.fft`` and ``np.emath`` (and
every ufunc) with realistic arguments, as NumPy code calls it: two arrays for a binary
function, an array and indices for a selection, two sets, two polynomials, a dtype for
``astype``... (:data:`CALLS`; a function it does not list gets arrays for its required
positional parameters, by its signature). Each floating point argument in turn (an
array, a number, or an array inside a list argument) is replaced by a tensor that
requires grad (then all of those that worked, at once), and the call is compared with
NumPy's on the plain values:

* ``no rule``: wengert raises its "no wengert gradient rule" error;
* ``dropped``: the gradient of the floating point results does not reach that tensor
  (silently lost), though the function is not constant in that argument;
* ``differs``: the values are not NumPy's;
* ``refused``: another error (for a call NumPy accepts on the plain values): a refusal
  that says why, or a failure; reported so that none hides a missing rule;
* ``untested``: no floating point argument to make a tensor (the function takes sizes,
  dtypes or strings only), listed so that the scan says what it did not try.

``tests/test_numpy_coverage.py`` runs :func:`scan` and pins its answer.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import wengert as wg  # noqa: E402

#: Not called: help, tests, configuration, printing set-up and file input/output.
SKIP = {"info", "test", "show_config", "show_runtime", "get_include", "lookfor",
        "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt",
        "fromfile", "fromregex", "printoptions", "set_printoptions", "get_printoptions",
        "setbufsize", "getbufsize", "seterr", "geterr", "seterrcall", "geterrcall",
        "nested_iters", "from_dlpack", "frombuffer", "fromstring", "fromiter",
        "frompyfunc"}
MODULES = [("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft), ("np.emath", np.emath)]

# -- the values the calls use ------------------------------------------------------------
M = np.array([[0.9, 0.2, 0.1], [0.3, 0.8, 0.2], [0.1, 0.4, 0.7]])  # invertible, in (0, 1)
N = np.array([[0.5, 0.1, 0.3], [0.2, 0.6, 0.4], [0.7, 0.3, 0.9]])
SPD = M @ M.T + np.eye(3)
V = np.array([0.5, 0.25, 0.75])
W = np.array([0.3, 0.6, 0.2])
B = np.array([[0.4, 0.7], [0.2, 0.5], [0.9, 0.3]])
Z = np.array([0.5 + 0.2j, -0.3 + 0.8j, 0.1 - 0.4j])
P = np.array([1.0, -2.0, 0.5])  # polynomial coefficients
Q = np.array([0.5, 1.5])
S = 0.7
SETS = (np.array([0.5, 0.25, 0.75, 0.25]), np.array([0.75, 0.1, 0.5]))
MASK = np.array([True, False, True])
IDX = np.array([2, 0])
BOXES = np.array([[0, 2, 1], [1, 0, 2], [2, 1, 0]])


def _fn1d(v: Any) -> Any:
    return np.sum(v * v)


def _sq(v: Any) -> Any:
    return v * v


#: module.name -> the calls made, each ``(args, kwargs)``; plain NumPy values.
CALLS: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    # creation from values and shapes
    "np.full": [(((3,), S), {})],
    "np.full_like": [((V, S), {})],
    "np.zeros_like": [((V,), {})],
    "np.ones_like": [((V,), {})],
    "np.empty_like": [((V,), {})],
    "np.arange": [((0.0, 2.0, 0.5), {})],
    "np.linspace": [((0.2, 1.7, 5), {})],
    "np.logspace": [((0.2, 1.7, 5), {})],
    "np.geomspace": [((0.2, 1.7, 5), {})],
    "np.kaiser": [((5, S), {})],
    "np.eye": [((3,), {})],
    "np.identity": [((3,), {})],
    "np.tri": [((3,), {})],
    "np.fromfunction": [((lambda i, j: i + j, (2, 2)), {})],
    "np.meshgrid": [((V, Q), {})],
    "np.vander": [((V, 3), {})],
    "np.diagflat": [((V,), {})],
    "np.bmat": [(([[M, N]],), {})],
    # shapes and joins
    "np.reshape": [((M, (9,)), {}), ((M, (9,)), {"order": "F"})],
    "np.resize": [((V, (2, 3)), {})],
    "np.broadcast_to": [((V, (2, 3)), {})],
    "np.broadcast_arrays": [((V, M), {})],
    "np.expand_dims": [((V, 0), {})],
    "np.moveaxis": [((M, 0, 1), {})],
    "np.rollaxis": [((M, 1), {})],
    "np.swapaxes": [((M, 0, 1), {})],
    "np.permute_dims": [((M, (1, 0)), {})],
    "np.roll": [((V, 1), {})],
    "np.rot90": [((M,), {})],
    "np.tile": [((V, 2), {})],
    "np.repeat": [((V, 2), {})],
    "np.pad": [((V, 1), {}), ((V, 1), {"mode": "reflect"}), ((V, 1), {"constant_values": S})],
    "np.split": [((M, 3), {})],
    "np.array_split": [((V, 2), {})],
    "np.hsplit": [((M, 3), {})],
    "np.vsplit": [((M, 3), {})],
    "np.dsplit": [((M[None], 3), {})],
    "np.unstack": [((M,), {})],
    "np.concatenate": [(([M, N],), {})],
    "np.concat": [(([M, N],), {})],
    "np.stack": [(([V, W],), {})],
    "np.hstack": [(([V, W],), {})],
    "np.vstack": [(([V, W],), {})],
    "np.row_stack": [(([V, W],), {})],
    "np.dstack": [(([V, W],), {})],
    "np.column_stack": [(([V, W],), {})],
    "np.block": [(([[M, N]],), {})],
    "np.append": [((V, W), {})],
    "np.insert": [((V, 1, S), {}), ((V, [0, 2], Q), {})],
    "np.delete": [((V, 1), {})],
    "np.trim_zeros": [((np.array([0.0, 0.5, 0.0, 0.25, 0.0]),), {})],
    # selection and assignment
    "np.take": [((V, IDX), {})],
    "np.take_along_axis": [((M, BOXES, 1), {})],
    "np.put_along_axis": [((M.copy(), BOXES[:, :1], N[:, :1], 1), {})],
    "np.choose": [((np.array([0, 1, 0]), [V, W]), {}), ((np.array([0, 1, 0]), [V, Q[:1]]), {})],
    "np.compress": [((MASK, V), {})],
    "np.extract": [((MASK, V), {})],
    "np.select": [(([MASK, ~MASK], [V, W]), {}), (([MASK], [V]), {"default": S})],
    "np.where": [((MASK, V, W), {}), ((MASK, V, S), {}), ((V,), {})],
    "np.place": [((V.copy(), MASK, Q), {})],
    "np.put": [((V.copy(), IDX, Q), {})],
    "np.putmask": [((V.copy(), MASK, W), {})],
    "np.copyto": [((V.copy(), W), {})],
    "np.fill_diagonal": [((M.copy(), S), {})],
    "np.piecewise": [((V, [V < 0.4, V >= 0.4], [_sq, np.sin]), {})],
    "np.diag": [((M,), {}), ((V,), {})],
    "np.diagonal": [((M,), {})],
    "np.triu": [((M,), {})],
    "np.tril": [((M,), {})],
    "np.clip": [((V, 0.3, 0.6), {}), ((V, W, 0.6), {})],
    "np.searchsorted": [((np.sort(V), W), {})],
    "np.einsum_path": [(("ij,jk->ik", M, N), {})],
    "np.ldexp": [((V, np.array([1, 2, 3])), {})],
    "np.digitize": [((V, np.sort(W)), {})],
    "np.lexsort": [(((V, W),), {})],
    "np.ravel_multi_index": [(((np.array([0, 1]), np.array([1, 2])), (3, 3)), {})],
    "np.unravel_index": [((np.array([1, 5]), (3, 3)), {})],
    "np.partition": [((V, 1), {})],
    "np.argpartition": [((V, 1), {})],
    # set routines
    "np.isin": [((V, W), {})],
    "np.in1d": [((V, W), {})],
    "np.intersect1d": [(SETS, {})],
    "np.union1d": [(SETS, {})],
    "np.setdiff1d": [(SETS, {})],
    "np.setxor1d": [(SETS, {})],
    "np.unique": [((SETS[0],), {}), ((SETS[0],), {"return_counts": True})],
    # polynomials
    "np.poly": [((V,), {})],
    "np.polyadd": [((P, Q), {})],
    "np.polysub": [((P, Q), {})],
    "np.polymul": [((P, Q), {})],
    "np.polydiv": [((P, Q), {})],
    "np.polyval": [((P, V), {})],
    "np.polyder": [((P,), {})],
    "np.polyint": [((P,), {})],
    "np.polyfit": [((V, W, 1), {})],
    "np.roots": [((P,), {})],
    # dtypes and copies
    "np.astype": [((V, np.float32), {}), ((V, np.int64), {})],
    "np.copy": [((V,), {})],
    "np.require": [((V,), {})],
    "np.real_if_close": [((V,), {})],
    "np.nan_to_num": [((V,), {})],
    "np.real": [((Z,), {})],
    "np.imag": [((Z,), {})],
    "np.angle": [((Z,), {})],
    "np.sort_complex": [((Z,), {})],
    "np.iscomplex": [((Z,), {})],
    "np.isreal": [((Z,), {})],
    # reductions, statistics and calculus
    "np.average": [((M,), {}), ((M, 0, V), {})],
    "np.cov": [((M,), {}), ((M,), {"aweights": V})],
    "np.corrcoef": [((M,), {})],
    "np.percentile": [((V, 30.0), {})],
    "np.nanpercentile": [((V, 30.0), {})],
    "np.quantile": [((V, 0.3), {})],
    "np.nanquantile": [((V, 0.3), {})],
    "np.histogram": [((V,), {"bins": 2, "weights": W})],
    "np.histogram_bin_edges": [((V,), {"bins": 2}), ((V,), {"bins": "auto"})],
    "np.histogram2d": [((V, W), {"bins": 2, "weights": V})],
    "np.histogramdd": [((B,), {"bins": 2, "weights": V})],
    "np.bincount": [((np.array([0, 1, 1]),), {"weights": V})],
    "np.interp": [((V, np.sort(W), Q.repeat(2)[:3]), {})],
    "np.trapezoid": [((V, W), {})],
    "np.gradient": [((V,), {}), ((V, S), {})],
    "np.diff": [((V,), {})],
    "np.ediff1d": [((V,), {})],
    "np.cross": [((V, W), {})],
    "np.convolve": [((V, Q), {})],
    "np.correlate": [((V, Q), {})],
    "np.unwrap": [((V * 9,), {})],
    "np.apply_along_axis": [((_fn1d, 0, M), {})],
    "np.apply_over_axes": [((np.sum, M, [0]), {})],
    "np.ptp": [((V,), {})],
    "np.i0": [((V,), {})],
    "np.sinc": [((V,), {})],
    # products
    "np.dot": [((M, N), {}), ((M, V), {})],
    "np.vdot": [((V, W), {})],
    "np.inner": [((M, N), {})],
    "np.outer": [((V, W), {})],
    "np.tensordot": [((M, N), {"axes": 1})],
    "np.einsum": [(("ij,jk->ik", M, N), {})],
    "np.kron": [((V, W), {})],
    "np.matmul": [((M, N), {})],
    "np.matvec": [((M, V), {})],
    "np.vecmat": [((V, M), {})],
    "np.vecdot": [((V, W), {})],
    "np.linalg.matmul": [((M, N), {})],
    "np.linalg.cholesky": [((SPD,), {})],
    "np.linalg.eigh": [((SPD,), {})],
    "np.linalg.eigvalsh": [((SPD,), {})],
    "np.linalg.lstsq": [((B, V), {"rcond": None})],
    "np.linalg.solve": [((M, V), {})],
    "np.linalg.matrix_power": [((M, 3), {})],
    "np.linalg.multi_dot": [(([M, N, M],), {})],
    "np.linalg.tensorinv": [((M,), {"ind": 1})],
    "np.linalg.tensorsolve": [((M, V), {})],
    "np.linalg.cross": [((V, W), {})],
    "np.linalg.outer": [((V, W), {})],
    "np.linalg.vecdot": [((V, W), {})],
    "np.linalg.tensordot": [((M, N), {"axes": 1})],
    "np.linalg.norm": [((M,), {}), ((V,), {"ord": 1})],
    # emath outside the real domain
    "np.emath.sqrt": [((-V,), {})],
    "np.emath.log": [((-V,), {})],
    "np.emath.log2": [((-V,), {})],
    "np.emath.log10": [((-V,), {})],
    "np.emath.logn": [((np.array([2.0, 3.0, 4.0]), -V), {})],
    "np.emath.power": [((-V, W), {})],
    "np.emath.arccos": [((V * 3,), {})],
    "np.emath.arcsin": [((V * 3,), {})],
    "np.emath.arctanh": [((V * 3,), {})],
    # the FFTs
    "np.fft.fftfreq": [((4,), {"d": S})],
    "np.fft.rfftfreq": [((4,), {"d": S})],
    "np.fft.irfft": [((np.fft.rfft(V),), {})],
    "np.fft.hfft": [((np.fft.rfft(V),), {})],
}

#: Arguments of which a function's value does not depend (a tensor there has no gradient to
#: lose): ``module.name`` -> positions (``"kw"`` keywords by name).
CONSTANT_IN = {
    "np.zeros_like": {0}, "np.ones_like": {0}, "np.empty_like": {0}, "np.full_like": {0},
    "np.ix_": {0},  # (index arrays)
    # the values come from ar1; ar2's decide only which (as JAX's intersect1d)
    "np.intersect1d": {1}, "np.setdiff1d": {1},
}
#: Functions whose values are not compared (NumPy leaves them uninitialised).
UNCOMPARED = {"np.empty_like"}
#: Functions that write into an argument (its position): a tensor there is a non-leaf (a
#: leaf that requires grad cannot be written in place), and it is the result compared.
WRITES_INTO = {"np.copyto": 0, "np.put": 0, "np.putmask": 0, "np.place": 0,
               "np.fill_diagonal": 0, "np.put_along_axis": 0}


@dataclass
class Report:
    """What :func:`scan` found, ``module.name`` -> a short reason each."""

    no_rule: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    differs: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    untested: list[str] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)


def _functions() -> list[tuple[str, Any]]:
    found = []
    for prefix, module in MODULES:
        for name in sorted(dir(module)):
            fn = getattr(module, name)
            if name.startswith("_") or name in SKIP or not callable(fn) or isinstance(fn, type):
                continue
            if isinstance(fn, np.ufunc) and prefix != "np":
                continue
            found.append((f"{prefix}.{name}", fn))
    return found


def _default_calls(fn: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Arrays for the required positional parameters: matrices (a binary function gets
    two), then vectors."""
    if isinstance(fn, np.ufunc):
        return [((M, N)[:fn.nin] if fn.nin <= 2 else (M,) * fn.nin, {}),
                ((V, W)[:fn.nin] if fn.nin <= 2 else (V,) * fn.nin, {})]
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [((M,), {})]
    required = [p for p in sig.parameters.values() if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    n = max(len(required), 1)
    return [((M, N, V)[:n] if n <= 3 else (M,) * n, {}), ((V, W, V)[:n] if n <= 3 else
                                                           (V,) * n, {})]


def _places(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The floating point arguments a tensor can take: ``(i,)`` for argument ``i``,
    ``(i, j)`` for item ``j`` of a list argument (``(i, j, k)`` one deeper), ``("kw", k)``
    for a keyword."""
    def floating(v: Any) -> bool:
        return type(v) is float or (isinstance(v, np.ndarray) and v.dtype.kind in "fc")

    places: list[tuple[Any, ...]] = []
    for i, a in enumerate(args):
        if floating(a):
            places.append((i,))
        elif isinstance(a, (list, tuple)):
            for j, b in enumerate(a):
                if floating(b):
                    places.append((i, j))
                elif isinstance(b, (list, tuple)):
                    places.extend((i, j, k) for k, c in enumerate(b) if floating(c))
    places.extend(("kw", k) for k, v in kwargs.items() if floating(v))
    return places


def _get(args: tuple[Any, ...], kwargs: dict[str, Any], place: tuple[Any, ...]) -> Any:
    if place[0] == "kw":
        return kwargs[place[1]]
    value = args[place[0]]
    for step in place[1:]:
        value = value[step]
    return value


def _put(args: tuple[Any, ...], kwargs: dict[str, Any], place: tuple[Any, ...], value: Any
         ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if place[0] == "kw":
        return args, {**kwargs, place[1]: value}
    out = list(args)
    if len(place) == 1:
        out[place[0]] = value
        return tuple(out), kwargs
    outer = list(out[place[0]])
    if len(place) == 2:
        outer[place[1]] = value
    else:
        inner = list(outer[place[1]])
        inner[place[2]] = value
        outer[place[1]] = type(outer[place[1]])(inner)
    out[place[0]] = type(args[place[0]])(outer)
    return tuple(out), kwargs


def _copy(v: Any) -> Any:
    """Fresh copies of the arrays (calls that write into their arguments)."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    return v


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _same(got: Any, want: Any) -> bool:
    g, w = _leaves(got), _leaves(want)
    if len(g) != len(w):
        return False
    for a, b in zip(g, w):
        if isinstance(a, wg.Tensor):
            a = a.detach().numpy()
        elif isinstance(a, wg.Dual):
            a = a.primal
        if isinstance(b, (np.ndarray, np.generic, float, int, complex, bool)):
            try:
                if np.shape(a) != np.shape(b) or not np.allclose(
                        np.asarray(a), np.asarray(b), equal_nan=True, rtol=1e-10, atol=1e-12):
                    return False
            except (TypeError, ValueError):
                return False
    return True


def _reached(result: Any, leaves: list[Any]) -> list[bool]:
    """Whether the gradient of (the real parts of) the floating point results reaches
    each of ``leaves`` (a leaf no result depends on is not reached)."""
    total = None
    for leaf in _leaves(result):
        if isinstance(leaf, wg.Tensor) and leaf.requires_grad and leaf.dtype.kind in "fc":
            part = np.sum(np.real(leaf) if leaf.dtype.kind == "c" else leaf)
            total = part if total is None else total + part
    if total is None:
        return [False] * len(leaves)
    total.backward()
    return [t.grad is not None for t in leaves]


def _floating(result: Any) -> bool:
    for leaf in _leaves(result):
        dt = leaf.dtype if isinstance(leaf, (wg.Tensor, np.ndarray, np.generic)) else \
            np.result_type(leaf) if isinstance(leaf, (float, complex)) else None
        if dt is not None and dt.kind in "fc":
            return True
    return False


def _call(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], into: Any) -> Any:
    """``fn(*args, **kwargs)`` (its target argument for a function that writes into one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fn(*args, **kwargs)
    return args[into] if into is not None else result


def _try(qualname: str, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
         places: list[tuple[Any, ...]], want: Any, outcome: dict[str, str], mode: str) -> bool:
    """Call with tensors (``mode="tensor"``) or dual numbers (``"dual"``) at ``places``;
    note what went wrong in ``outcome``; whether all went right."""
    into = WRITES_INTO.get(qualname)
    leaves = []
    for place in places:
        value = _get(args, kwargs, place)
        if mode == "dual":
            leaf = wg.Dual(value, np.ones_like(value))
            args, kwargs = _put(args, kwargs, place, leaf)
            continue
        leaf = wg.tensor(value, requires_grad=True)
        leaves.append(leaf)
        # (a written target is a non-leaf: a leaf that requires grad is not written in place)
        args, kwargs = _put(args, kwargs, place, leaf * 1.0 if place == (into,) else leaf)
    where = ", ".join(f"argument {p[0] if len(p) == 1 else p}" if p[0] != "kw" else
                      f"{p[1]}=" for p in places)
    try:
        got = _call(fn, args, kwargs, into)
    except TypeError as error:
        kind = "no_rule" if "no wengert gradient rule" in str(error) else "refused"
        outcome.setdefault(kind, f"{where}: {error}"[:150])
        return False
    except Exception as error:  # noqa: BLE001 - reported, not hidden
        outcome.setdefault("refused", f"{where}: {type(error).__name__}: {error}"[:150])
        return False
    ok = True
    if qualname not in UNCOMPARED and not _same(got, want):
        outcome.setdefault("differs", where)
        ok = False
    constant = CONSTANT_IN.get(qualname, set())
    if mode == "dual":  # one dual number in: a floating result must carry its tangent
        if len(places) == 1 and places[0][0] not in constant and _floating(got) and not any(
                isinstance(leaf, wg.Dual) for leaf in _leaves(got)):
            outcome.setdefault("dropped", f"{where} (its tangent)")
            ok = False
        return ok
    if _floating(got):
        for place, reached in zip(places, _reached(got, leaves)):
            if not reached and place[0] not in constant:
                outcome.setdefault("dropped", f"argument {place}")
                ok = False
    return ok


def scan(mode: str = "tensor") -> Report:
    """Call every function with a tensor (``mode="dual"``: a dual number) in each floating
    point argument in turn, then in all of those that worked at once."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _scan(mode)


def _scan(mode: str) -> Report:
    report = Report()
    for qualname, fn in _functions():
        calls = CALLS.get(qualname) or _default_calls(fn)
        outcome: dict[str, str] = {}
        tried = False
        for args, kwargs in calls:
            try:
                want = _call(fn, _copy(args), _copy(kwargs), WRITES_INTO.get(qualname))
            except Exception:  # noqa: BLE001 - NumPy refuses this call: not an example
                continue
            fine = []
            for place in _places(args, kwargs):
                tried = True
                if _try(qualname, fn, _copy(args), _copy(kwargs), [place], want, outcome,
                        mode):
                    fine.append(place)
            if len(fine) > 1:
                _try(qualname, fn, _copy(args), _copy(kwargs), fine, want, outcome, mode)
        if not tried:
            report.untested.append(qualname)
        elif not outcome:
            report.covered.append(qualname)
        for kind, why in outcome.items():
            getattr(report, kind)[qualname] = why
    return report


def _report(mode: str, r: Report) -> None:
    print(f"NumPy {np.__version__}, {mode}s: {len(r.covered)} functions covered")
    for title, found in (("no wengert gradient rule", r.no_rule),
                         ("a gradient silently dropped", r.dropped),
                         ("values that differ from NumPy's", r.differs),
                         ("a refusal (another error)", r.refused)):
        print(f"\n{len(found)} with {title}:")
        for name, why in found.items():
            print(f"  {name:32} {why}")
    print(f"\n{len(r.untested)} untested (no floating point argument): "
          + " ".join(r.untested))
    print()


if __name__ == "__main__":
    for mode in ("tensor", "dual"):
        _report(mode, scan(mode))
