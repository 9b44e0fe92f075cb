"""What the JAX export writes, and what it refuses (not run as a test; needs JAX).

    .venv/bin/python scripts/jax_export_coverage.py [-v]

Goes over everything a wengert graph records and exports each, on small realistic
arguments, with :func:`wengert.graph.backends.export.to_jax`, runs the export under ``jax.jit``
(64-bit mode) and compares with eager NumPy (values to 1e-10, shapes, dtypes):

1. every primitive of the registry, on each of its own samples (one equation each);
2. every NumPy function and ufunc routed to a wengert function (``wengert.numpy``'s
   tables: ``np.sort``, ``np.linalg.qr``, ``np.add.reduce`` ...), traced on float arrays:
   the primitives and recorded calls it becomes;
3. every NumPy function recorded as a call without a gradient (comparisons, tests,
   indices: ``np.isnan``, ``np.argsort``, ``np.searchsorted`` ...), and every other public
   function of ``np``, ``np.linalg``, ``np.fft`` and ``np.emath`` that a trace records.

It prints what the export refuses (with its reason) and what disagrees with NumPy;
``-v`` lists everything. A function whose every argument list fails eagerly, or that the
trace itself refuses (a function without a gradient rule on a differentiated value,
answered at trace time from shapes), is not an export question and is counted apart.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import wengert as wg  # noqa: E402
import wengert.numpy as wnp  # noqa: E402
from wengert.core.tree import flatten  # noqa: E402
from wengert.graph import Equation, Graph, Literal, Var  # noqa: E402
from wengert.graph.backends.export import NotExportable, to_jax  # noqa: E402
from wengert.interop import dispatch  # noqa: E402
from wengert.ops import REGISTRY  # noqa: E402

RTOL = 1e-10

# -- arguments -----------------------------------------------------------------------------
RNG = np.random.default_rng(7)
_M = RNG.normal(size=(3, 3))
A = _M @ _M.T + 3.0 * np.eye(3)  # symmetric positive definite, well conditioned
G = RNG.normal(size=(3, 3))  # general
V = np.array([0.5, 1.5, 2.0])
W = np.array([0.25, -1.0, 0.75])
R = RNG.normal(size=(2, 3))
C = A + 1j * (G - G.T)  # complex (Hermitian)
IDX = np.array([2, 0, 1])
MASK = np.array([True, False, True])
INTS = np.array([6, 4, 9])

#: Argument lists tried in order for a function without its own (the first that NumPy
#: accepts is used).
GENERIC: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((A,), {}), ((V,), {}), ((A, A), {}), ((V, W), {}), ((A, V), {}), ((V, 2), {}),
    ((A, 1), {}), ((V, V, V), {}), ((A, A, A), {}), ((INTS,), {}), ((INTS, INTS), {}),
    ((MASK,), {}), ((MASK, MASK), {}),
]
#: Functions that need arguments of their own.
SPECIFIC: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "take": [((V, IDX), {})], "take_along_axis": [((A, np.argsort(A, axis=1), 1), {})],
    "reshape": [((A, (9,)), {})], "repeat": [((V, 2), {})], "tile": [((V, 2), {})],
    "pad": [((V, 1), {})], "split": [((V, 3), {})], "array_split": [((V, 2), {})],
    "hsplit": [((A, 3), {})], "vsplit": [((A, 3), {})], "dsplit": [((A.reshape(1, 3, 3), 3), {})],
    "einsum": [(("ij,j->i", A, V), {})], "tensordot": [((A, A), {"axes": 1})],
    "insert": [((V, 1, 5.0), {})], "delete": [((V, 1), {})], "append": [((V, W), {})],
    "interp": [((W, np.array([-1.0, 0.0, 1.0]), V), {})], "polyfit": [((V, W, 1), {})],
    "polyval": [((V, W), {})], "roll": [((V, 1), {})], "rot90": [((A,), {})],
    "moveaxis": [((R, 0, 1), {})], "swapaxes": [((R, 0, 1), {})], "rollaxis": [((R, 1), {})],
    "expand_dims": [((V, 0), {})], "broadcast_to": [((V, (2, 3)), {})],
    "resize": [((V, (2, 3)), {})], "select": [(([V > 1, V <= 1], [V, W]), {})],
    "piecewise": [((V, [V > 1, V <= 1], [lambda x: x * 2, lambda x: -x]), {})],
    "where": [((V > 1, V, W), {})], "clip": [((V, 0.7, 1.8), {})],
    "concatenate": [(([V, W],), {})], "stack": [(([V, W],), {})], "hstack": [(([V, W],), {})],
    "vstack": [(([V, W],), {})], "dstack": [(([V, W],), {})], "column_stack": [(([V, W],), {})],
    "block": [(([V, W],), {})], "unstack": [((A,), {})], "meshgrid": [((V, W), {})],
    "broadcast_arrays": [((V, A), {})], "linspace": [((V, W, 4), {})],
    "logspace": [((V, W, 4), {})], "trapezoid": [((V,), {})], "histogram": [((V,), {})],
    "histogram2d": [((V, W), {"bins": 2})], "histogramdd": [((R.T,), {"bins": 2})],
    "histogram_bin_edges": [((V,), {"bins": 3})], "bincount": [((IDX, V), {})],
    "searchsorted": [((np.sort(V), W), {})], "digitize": [((W, np.sort(V)), {})],
    "lexsort": [(((V, W),), {})], "partition": [((V, 1), {})],
    "argpartition": [((V, 1), {})], "trim_zeros": [((np.array([0.0, 1.0, 0.0]),), {})],
    "sliding_window_view": [((V, 2), {})], "convolve": [((V, W), {})],
    "correlate": [((V, W), {})], "cross": [((V, W), {})], "outer": [((V, W), {})],
    "kron": [((V, W), {})], "vander": [((V,), {})], "diag": [((V,), {})],
    "diagflat": [((V,), {})], "diagonal": [((A,), {})], "trace": [((A,), {})],
    "tril": [((A,), {})], "triu": [((A,), {})], "fill_diagonal": [],
    "ix_": [((IDX, IDX), {})], "packbits": [((MASK,), {})],
    "unpackbits": [((INTS.astype(np.uint8),), {})],
    "matrix_power": [((A, 3), {})], "tensorinv": [((np.eye(4).reshape(2, 2, 2, 2) * 2.0,), {})],
    "tensorsolve": [((np.eye(4).reshape(2, 2, 2, 2) * 2.0, R[:, :2]), {})],
    "multi_dot": [(([A, G, A],), {})], "lstsq": [((G, V), {"rcond": None})],
    "solve": [((A, V), {})], "cond": [((A,), {})], "matrix_rank": [((A,), {})],
    "logn": [((2.0, V), {})], "power": [((V, 2.0), {})], "float_power": [((V, 2.0), {})],
    "ldexp": [((V, IDX), {})], "heaviside": [((W, 0.5), {})], "gradient": [((V,), {})],
    "percentile": [((V, 50.0), {})], "nanpercentile": [((V, 50.0), {})],
    "quantile": [((V, 0.5), {})], "nanquantile": [((V, 0.5), {})],
    "average": [((V,), {"weights": W + 2.0})], "cumulative_sum": [((V,), {})],
    "cumulative_prod": [((V,), {})], "unwrap": [((W * 4.0,), {})], "roots": [((V,), {})],
    "poly": [((V,), {})], "polyder": [((V,), {})], "polyint": [((V,), {})],
    "nan_to_num": [((np.array([np.nan, 1.0, np.inf]),), {})],
    "real_if_close": [((V + 0j,), {})], "sort_complex": [((V + 1j * W,), {})],
    "angle": [((V + 1j * W,), {})], "real": [((V + 1j * W,), {})],
    "imag": [((V + 1j * W,), {})], "iscomplex": [((V + 1j * W,), {})],
    "isreal": [((V + 1j * W,), {})], "fix": [((W * 3.0,), {})], "around": [((W * 3.3, 1), {})],
    "round": [((W * 3.3, 1), {})], "ediff1d": [((V,), {})], "diff": [((V,), {})],
    "isclose": [((V, W), {})], "allclose": [((V, V), {})], "array_equal": [((V, W), {})],
    "array_equiv": [((V, V), {})], "count_nonzero": [((V > 1,), {})],
    "nonzero": [((V > 1,), {})], "flatnonzero": [((V > 1,), {})], "argwhere": [((V > 1,), {})],
    "full_like": [((V, 2.5), {})], "gcd": [((INTS, INTS + 3), {})], "lcm": [((INTS, INTS + 3), {})],
    "left_shift": [((INTS, 1), {})], "right_shift": [((INTS, 1), {})],
    "bitwise_count": [((INTS,), {})], "invert": [((INTS,), {})],
    "svd": [((G,), {})], "svdvals": [((G,), {})], "qr": [((G,), {})], "eig": [((G,), {})],
    "eigvals": [((G,), {})], "fft": [((V,), {})], "hfft": [((V,), {})],
    "vecdot": [((V, W), {})], "matvec": [((A, V), {})], "vecmat": [((V, A), {})],
    "matmul": [((A, G), {})], "copysign": [((V, W), {})], "nextafter": [((V, W), {})],
    "modf": [((W * 3.3,), {})], "frexp": [((V,), {})], "divmod": [((V, 0.7), {})],
    "astype": [((V, np.float32), {})], "choose": [((IDX % 2, [V, W]), {})],
    "compress": [((MASK, V), {})], "extract": [((MASK, V), {})], "isin": [((V, W), {})],
    "geomspace": [((V, V * 3.0, 4), {})], "polymul": [((V, W), {})],
    "polyadd": [((V, W[:2]), {})], "polysub": [((V, W[:2]), {})], "polydiv": [((V, W[:2]), {})],
    "intersect1d": [((V, W), {})], "union1d": [((V, W), {})], "setdiff1d": [((V, W), {})],
    "setxor1d": [((V, W), {})],
}
#: Public functions that are not computations on arrays (file input/output, printing,
#: configuration, constructors from shapes, dtype tools): not looked at.
SKIP = {"info", "test", "show_config", "show_runtime", "get_include", "lookfor", "save",
        "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile",
        "fromregex", "memmap", "printoptions", "set_printoptions", "get_printoptions",
        "setbufsize", "getbufsize", "seterr", "geterr", "seterrcall", "geterrcall", "errstate",
        "format_float_positional", "format_float_scientific", "array2string", "array_repr",
        "array_str", "base_repr", "binary_repr", "typename", "mintypecode", "isdtype",
        "issubdtype", "can_cast", "result_type", "promote_types", "min_scalar_type",
        "common_type", "iscomplexobj", "isrealobj", "isscalar", "iterable", "ndim", "shape",
        "size", "may_share_memory", "shares_memory", "einsum_path", "asarray", "array",
        "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "require",
        "frombuffer", "fromiter", "fromstring", "fromfunction", "zeros", "ones", "empty",
        "full", "eye", "identity", "arange", "indices", "mgrid", "ogrid", "tri", "diag_indices",
        "tril_indices", "triu_indices", "mask_indices", "diag_indices_from",
        "tril_indices_from", "triu_indices_from", "unravel_index", "ravel_multi_index",
        "busday_count", "busday_offset", "is_busday", "datetime_as_string", "datetime_data",
        "isnat", "copyto", "put", "putmask", "place", "put_along_axis", "fill_diagonal",
        "nested_iters", "broadcast_shapes", "get_array_wrap", "from_dlpack", "vectorize",
        "frompyfunc", "apply_along_axis", "apply_over_axes", "array_function_dispatch",
        "deprecate", "deprecate_with_doc", "disp", "who", "safe_eval", "recfromcsv",
        "recfromtxt", "packbits_", "emath", "char", "rec", "ma", "ctypeslib", "exceptions",
        "fft", "linalg", "polynomial", "random", "testing", "typing", "dtypes", "strings",
        "lib", "matlib", "version", "f2py", "bool", "nditer", "ndindex", "ndenumerate",
        "matrix", "asmatrix", "bmat", "show", "isfortran", "as_strided", "bartlett",
        "blackman", "hamming", "hanning", "kaiser", "fftfreq", "rfftfreq"}
MODULES = [("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft), ("np.emath", np.emath),
           ("np.lib.stride_tricks", np.lib.stride_tricks)]


def _argument_lists(name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return SPECIFIC.get(name, GENERIC)


def _eager(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _float_positions(args: tuple[Any, ...]) -> list[int]:
    """The arguments that become inputs of the graph: float and complex arrays."""
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]


def _as_tuple(out: Any) -> Any:
    """A namedtuple result (``np.linalg.eigh``'s) as a tuple: the export writes plain
    containers only, and the question here is the ops."""
    if isinstance(out, tuple) and type(out) is not tuple:
        return tuple(out)
    return out


# -- one check -----------------------------------------------------------------------------
class Result:
    def __init__(self, name: str, status: str, detail: str = "") -> None:
        self.name = name
        self.status = status  # "ok", "refused", "disagrees", "not traced", "no arguments"
        self.detail = detail


def _compare(got: Any, want: Any) -> str:
    """"" when ``got`` (from JAX) matches ``want`` (NumPy), else what differs."""
    g_leaves, _ = flatten(got)
    w_leaves, _ = flatten(want)
    if len(g_leaves) != len(w_leaves):
        return f"{len(g_leaves)} results, NumPy gives {len(w_leaves)}"
    for g, w in zip(g_leaves, w_leaves):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"shape {g.shape}, NumPy's {w.shape}"
        if g.dtype != w.dtype:
            return f"dtype {g.dtype}, NumPy's {w.dtype}"
        if w.dtype.kind in "fc":
            if not np.allclose(g, w, rtol=RTOL, atol=1e-12, equal_nan=True):
                return f"values differ by up to {np.max(np.abs(g - w)):.3g}"
        elif not np.array_equal(g, w):
            return "values differ"
    return ""


#: Why the graphs of these functions hold guards (Python control flow in wengert's own
#: implementation, on values): the export refuses every graph with a guard.
GUARDED = {
    "lstsq": "its rank is a Python int and its residuals are returned only at full rank: "
             "both depend on the values (a guard in the graph)",
    "polyfit": "it solves with lstsq (see np.linalg.lstsq)",
    "real_if_close": "whether the result is real depends on the values (a guard in the graph)",
}


def check_graph(name: str, graph: Graph, values: list[Any], want: Any, jax: Any) -> Result:
    try:
        fj = to_jax(graph)
    except NotExportable as e:
        why = GUARDED.get(name.rsplit(".", 1)[-1]) if graph.guards else None
        return Result(name, "refused", why + "." if why else str(e))
    try:
        got = jax.jit(fj)(*values)
    except Exception as e:  # noqa: BLE001 - any failure of the exported code is reported
        return Result(name, "disagrees", f"the export fails in JAX: {type(e).__name__}: {e}")
    diff = _compare(got, want)
    return Result(name, "disagrees" if diff else "ok", diff)


def check_function(label: str, fn: Callable[..., Any], jax: Any) -> Result:
    short = label.rsplit(".", 1)[-1]
    for args, kwargs in _argument_lists(short):
        try:
            want = _as_tuple(_eager(fn, args, kwargs))
        except Exception:  # noqa: BLE001 - not this argument list
            continue
        if want is None or isinstance(want, (str, bytes)) or (
                isinstance(want, np.ndarray) and want.dtype.kind not in "biufc"):
            return Result(label, "no arguments", "not a numeric result")
        positions = _float_positions(args)
        if not positions:
            positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

        def f(*xs: Any, args: tuple[Any, ...] = args, positions: list[int] = positions,
              kwargs: dict[str, Any] = kwargs) -> Any:
            full = list(args)
            for k, x in zip(positions, xs):
                full[k] = x
            return _as_tuple(fn(*full, **kwargs))

        values = [args[k] for k in positions]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                graph = wg.trace(f, *values)
        except Exception as e:  # noqa: BLE001 - the trace refuses: reported apart
            return Result(label, "not traced", f"{type(e).__name__}: {str(e)[:150]}")
        if not graph.equations:
            return Result(label, "ok", "answered at trace time")
        return check_graph(label, graph, values, want, jax)
    return Result(label, "no arguments", "no argument list NumPy accepts")


def check_primitive(op: Any, jax: Any) -> list[Result]:
    out = []
    for args, params in op.samples(np.random.default_rng(0)):
        ins, inputs, values = [], [], []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray | np.generic):
                v = Var(f"a{i}", np.shape(a), np.asarray(a).dtype)
                ins.append(v)
                inputs.append(v)
                values.append(a)
            else:
                ins.append(Literal(a))
        want = _eager(op.impl, args, params)
        o = Var("out", np.shape(want), np.asarray(want).dtype)
        graph = Graph(inputs, [Equation(op, ins, params, o)], [o], flatten(tuple(values))[1],
                      "leaf", name=op.name)
        out.append(check_graph(op.name, graph, values, want, jax))
    return out


# -- the universe ----------------------------------------------------------------------------
def routed() -> list[tuple[str, Any]]:
    """NumPy functions and ufuncs with a wengert function, by name."""
    ufuncs, functions = dispatch.tables()
    found = {}
    for f in list(functions) + list(ufuncs):
        found[dispatch.numpy_name(f)] = f
    for table, method in ((wnp.REDUCE_TABLE, "reduce"), (wnp.ACCUMULATE_TABLE, "accumulate")):
        for u in table:
            found[f"np.{u.__name__}.{method}"] = getattr(u, method)
    return sorted(found.items())


def recorded() -> list[tuple[str, Any]]:
    """NumPy functions recorded as calls (no gradient), and every other public function."""
    ufuncs, functions = dispatch.tables()
    seen = set(functions) | set(ufuncs)
    found = {}
    for f in dispatch._NONDIFF_UFUNCS | dispatch._NONDIFF_FUNCTIONS:
        found[dispatch.numpy_name(f)] = f
    for prefix, module in MODULES:
        for name in dir(module):
            f = getattr(module, name)
            if name.startswith("_") or name in SKIP or not callable(f) or isinstance(f, type) \
                    or f in seen or inspect.ismodule(f):
                continue
            found.setdefault(f"{prefix}.{name}", f)
    for name in list(found):
        if name.rsplit(".", 1)[-1] in SKIP:
            del found[name]
    return sorted(found.items())


def _reason(message: str) -> str:
    """A refusal's reason without the equation's name (``equation t3 = np.f(...) ...: ``)."""
    return re.sub(r"^equation .*?(cannot be exported to JAX|which has no JAX form): ", "",
                  message)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every check")
    verbose = parser.parse_args().verbose
    import jax

    jax.config.update("jax_enable_x64", True)
    sections = [
        ("registry primitives", [r for op in REGISTRY for r in check_primitive(op, jax)]),
        ("NumPy functions routed to wengert", [check_function(n, f, jax) for n, f in routed()]),
        ("NumPy calls recorded without a gradient, and the rest of NumPy",
         [check_function(n, f, jax) for n, f in recorded()]),
    ]
    refused: dict[str, str] = {}
    disagree: dict[str, str] = {}
    untraced: list[str] = []
    for title, results in sections:
        by: dict[str, list[Result]] = {}
        for r in results:
            by.setdefault(r.status, []).append(r)
        names = {s: sorted({r.name for r in rs}) for s, rs in by.items()}
        counts = ", ".join(f"{len(v)} {s}" for s, v in sorted(names.items()))
        print(f"{title}: {counts}")
        for r in by.get("refused", []):
            refused.setdefault(r.name, r.detail)
        for r in by.get("disagrees", []):
            disagree.setdefault(r.name, r.detail)
        untraced += [r.name for r in by.get("not traced", [])]
        if verbose:
            for status in ("not traced", "no arguments", "ok"):
                for r in sorted(by.get(status, []), key=lambda r: r.name):
                    print(f"  [{status}] {r.name}: {r.detail}")
    print(f"\nrefused by the trace, not an export question ({len(untraced)}; -v says why): "
          + ", ".join(sorted(untraced)))
    print(f"\nrefused by the export ({len(refused)}):")
    for name, why in sorted(refused.items()):
        print(f"  {name}: {_reason(why)}")
    print(f"\ndisagreeing with NumPy ({len(disagree)}):")
    for name, why in sorted(disagree.items()):
        print(f"  {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
