"""Export a graph to JAX: the same program as ``jax.numpy`` source, one line per equation.

:func:`to_jax_source` writes a self-contained Python module whose function
computes what the graph computes, with the graph's variable names, one
assignment per equation and a comment naming the op (and the user's line), as
:func:`wengert.graph.backends.codegen.to_source` does for NumPy: ``t0 = jnp.sin(x)``.
:func:`to_jax` executes that source and returns the function, which
``jax.jit``, ``jax.grad`` and ``jax.vmap`` take like any JAX function, so a
model prototyped with wengert moves to XLA (GPU, TPU, sharding) unchanged.

What the exported function keeps:

* **the calling convention**: the graph's arguments, pytrees included
  (``f(params, x)`` with ``params`` a dict), and its result's structure, so
  ``jax.grad(f)(params, x)`` returns a dict like ``params``;
* **values**: each op is written with the ``jax.numpy`` function of the same
  NumPy semantics (the table :data:`JAX_FORMS`), inputs are cast where NumPy's
  and JAX's type promotion differ, and constants (literal arrays, index
  arrays) become module-level NumPy arrays, written out exactly; an integer divided
  by 0 (``//``) is 0, as NumPy's (XLA's is -1). Where the values can differ: sums
  and means add in XLA's order, not NumPy's pairwise one (the last bits of a float32
  sum), and a cast of NaN or of a float out of an integer type's range (undefined in
  C; NumPy gives what the CPU gives) saturates in XLA;
* **gradients**: where JAX's derivative convention differs from wengert's at
  a non-differentiable point, the export calls a small helper defined in the
  module that follows wengert's: ``abs'(0) = 0`` (JAX: 1, also inside the
  1- and inf-norms), ``0 ** 0`` has gradient 0 (JAX: NaN), ``clip``'s bounds
  are inclusive, ``fmax``/``fmin`` split ties, ``hypot``, ``std`` and the
  2-norm have gradient 0 at 0, ``logaddexp`` splits equal infinities.
  ``relu'(0) = 0``, ``sqrt'(0) = inf`` and the even split of ties in
  ``maximum``/``max`` are JAX's own conventions too.

What it refuses (:class:`NotExportable`, a ``NotImplementedError`` naming
the op and what to do): graphs with guards (Python control flow on traced
values: JAX cannot replay a Python branch; write the choice with
``np.where``), ops that are not registry primitives (custom rules), recorded
NumPy calls without a faithful JAX form (``np.nonzero``, whose output shape
depends on the values), and a namedtuple as the result.

Dtypes: a graph that computes in 64 bits needs JAX's 64-bit mode
(``jax.config.update("jax_enable_x64", True)``); the exported function checks
and raises otherwise, instead of silently computing in float32. Products
(``matmul``, ``einsum``) use JAX's default precision, which on CPU is full
precision; on TPU pass ``jax.default_matmul_precision("highest")`` for float32
products as exact as NumPy's.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x, w: np.sum(np.sin(x) * w), np.ones(3), 2.0, source_lines=False)
>>> source = to_jax_source(g)
>>> print(source[:source.index("import")])
# f(x: f64[3], w: f64[]) exported from a wengert graph (3 equations) to jax.numpy.
# It computes in 64 bits: turn on JAX's 64-bit mode first,
#     jax.config.update("jax_enable_x64", True)
# (f raises otherwise).
<BLANKLINE>
>>> print(source[source.index("def f("):])
def f(x, w):
    _check_x64()
    x = jnp.asarray(x)
    w = jnp.asarray(w)
    t0 = jnp.sin(x)  # sin
    t1 = jnp.multiply(t0, w)  # multiply
    t2 = jnp.sum(t1, axis=None, keepdims=False)  # sum
    return t2
<BLANKLINE>
>>> fj = to_jax(g)  # doctest: +SKIP
>>> import jax; jax.grad(fj)(np.zeros(3), 2.0)  # doctest: +SKIP
Array([2., 2., 2.], dtype=float64)
"""

from __future__ import annotations

import ast
import base64
import inspect
import io
import keyword
import math
import pathlib
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from wengert.core.forms import JaxStep
from wengert.core.op import Op
from wengert.core.tree import flatten, unflatten
from wengert.graph.ir import Var
from wengert.graph.tracer import is_recorded_call
from wengert.ops import JOINTS, REGISTRY

__all__ = ["to_jax_source", "to_jax", "NotExportable", "JAX_FORMS", "CODE_FORMS", "JAX_CALLS",
           "REFUSED_CALLS", "REFUSED_FORMS", "COMPLEX_REFUSED_FORMS", "INLINE_LIMIT",
           "JAX_JOINT_FORMS"]

#: Constant arrays up to this many elements are written as literals in the source; larger
#: ones (that are not one value repeated) as base64 ``.npy`` text.
INLINE_LIMIT = 1000

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NP_TYPES = {"bool": "bool_", "float16": "float16", "float32": "float32", "float64": "float64",
             "complex64": "complex64", "complex128": "complex128", "int8": "int8",
             "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
             "uint16": "uint16", "uint32": "uint32", "uint64": "uint64"}


class NotExportable(NotImplementedError):
    """A graph (or one of its equations) that has no faithful JAX form; the message says
    which and what to do instead."""


# -- helpers the exported module defines when it uses them --------------------------------
def _read_helpers(path: pathlib.Path) -> tuple[dict[str, str], dict[str, tuple[str, ...]],
                                               dict[str, tuple[str, ...]], set[str]]:
    """The helpers of :mod:`wengert.graph.backends.jax_helpers`, read from its text (it
    imports JAX, so it is not imported): each function's source (with the ``defjvp`` rule
    of a ``jax.custom_jvp`` one), the modules and other helpers it uses, and every name
    the helpers define."""
    text = path.read_text()
    lines = text.splitlines()
    sources: dict[str, str] = {}
    used: dict[str, set[str]] = {}
    for node in ast.parse(text).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        source = "\n".join(lines[first - 1:node.end_lineno])
        rule_of = [d.value.id for d in node.decorator_list if isinstance(d, ast.Attribute)
                   and d.attr == "defjvp" and isinstance(d.value, ast.Name)]
        name = rule_of[0] if rule_of else node.name
        sources[name] = sources[name] + "\n\n\n" + source if rule_of else source
        used.setdefault(name, set()).update(
            n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    defined = {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    imports = {name: tuple(sorted(names & {"base64", "io", "math"}))
               for name, names in used.items()}
    needs = {name: tuple(sorted((names & set(sources)) - {name})) for name, names in used.items()}
    return sources, imports, needs, defined


#: Each helper's source, the modules it needs beyond jax, jnp and np, the helpers it
#: calls, and every module-level name the helpers define.
_HELPERS, _HELPER_IMPORTS, _HELPER_NEEDS, _HELPER_NAMES = _read_helpers(
    pathlib.Path(__file__).with_name("jax_helpers.py"))


class _Code:
    """Source text standing in a parameter structure (an argument, a constant's name);
    ``traced`` when it names a variable of the graph (not a constant)."""

    __slots__ = ("text", "traced")

    def __init__(self, text: str, traced: bool = False) -> None:
        self.text = text
        self.traced = traced


def _float_text(v: float) -> str:
    if math.isfinite(v):
        return repr(v)
    return "np.nan" if v != v else "np.inf" if v > 0 else "-np.inf"


def _complex_text(c: complex) -> str:
    """A complex number as source that gives its parts' bits back (``repr`` writes
    ``complex(-0.0, 1.0)`` as ``(-0+1j)``, which reads back with a ``+0.0`` real part)."""
    if all(math.isfinite(p) and (p != 0 or math.copysign(1.0, p) > 0) for p in (c.real, c.imag)):
        return repr(c)
    return f"complex({_float_text(c.real)}, {_float_text(c.imag)})"


def _np_dtype_text(dtype: Any) -> str:
    name = np.dtype(dtype).name
    return f"np.{_NP_TYPES[name]}" if name in _NP_TYPES else f"np.dtype({np.dtype(dtype).str!r})"


def _jnp_dtype_text(dtype: Any) -> str:
    name = np.dtype(dtype).name
    return f"jnp.{_NP_TYPES[name]}" if name in _NP_TYPES else f"np.dtype({np.dtype(dtype).str!r})"


def _element_text(v: Any, kind: str) -> str | None:
    """One array element as a Python literal, or None when it has none that round-trips."""
    if kind == "b":
        return "True" if v else "False"
    if kind in "iu":
        return repr(int(v))
    if kind == "f":
        return _float_text(float(v))
    if kind == "c":
        return _complex_text(complex(v))
    return None


def _wrap(items: list[str], indent: str, width: int = 96) -> list[str]:
    """``items`` joined by commas in lines of at most ``width`` characters."""
    lines: list[str] = []
    line = indent
    for item in items:
        piece = item + ","
        if len(line) + len(piece) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece + " "
    if line.strip():
        lines.append(line.rstrip())
    return lines


class _Module:
    """The names, constants and helpers of the module being written."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken  # names the function's variables use
        self.constants: list[tuple[str, str]] = []  # (name, defining source)
        self._by_id: dict[int, tuple[str, Any]] = {}
        self.helpers: set[str] = set()
        self.imports: set[str] = set()

    def helper(self, name: str) -> str:
        self.helpers.add(name)
        self.imports.update(_HELPER_IMPORTS.get(name, ()))
        for other in _HELPER_NEEDS.get(name, ()):
            self.helper(other)
        return name

    def constant(self, value: np.ndarray) -> str:
        """A module-level name for the array ``value`` (one per object)."""
        known = self._by_id.get(id(value))
        if known is not None:
            return known[0]
        name = f"_c{len(self.constants)}"
        k = 0
        while name in self.taken:
            k += 1
            name = f"_c{len(self.constants)}_{k}"
        self.taken.add(name)
        self._by_id[id(value)] = (name, value)  # (the value is kept alive with its id)
        self.constants.append((name, self._array_source(name, value)))
        return name

    def _array_source(self, name: str, a: np.ndarray) -> str:
        dtype = _np_dtype_text(a.dtype)
        note = f"  # {a.dtype.name}{list(a.shape)}"
        if a.dtype.kind not in "biufc":
            raise NotExportable(f"a constant array of dtype {a.dtype} has no JAX form")
        flat = a.reshape(-1)
        if a.size > 1:
            raw = np.ascontiguousarray(flat).view(np.uint8).reshape(a.size, a.dtype.itemsize)
            text = _element_text(flat[0], a.dtype.kind)
            if text is not None and bool((raw == raw[0]).all()):  # one value (bit for bit)
                return f"{name} = np.full({a.shape!r}, {text}, dtype={dtype}){note}"
        if a.size <= INLINE_LIMIT:
            items = [_element_text(v, a.dtype.kind) for v in flat.tolist()]
            if all(t is not None for t in items):
                if a.ndim == 0:
                    return f"{name} = np.array({items[0]}, dtype={dtype}){note}"
                shape = "" if a.ndim == 1 else f".reshape({a.shape!r})"
                body = _wrap([t for t in items if t is not None], "    ")
                return "\n".join([f"{name} = np.array([{note}", *body,
                                  f"], dtype={dtype}){shape}"])
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(a), allow_pickle=False)
        text = base64.b64encode(buffer.getvalue()).decode("ascii")
        self.helper("_npy")
        chunks = [f'    "{text[i:i + 88]}"' for i in range(0, len(text), 88)]
        return "\n".join([f"{name} = _npy({note}", *chunks, ")"])

    def value(self, v: Any) -> str:
        """Python source for a parameter or literal value (nested tuples, lists and dicts
        written without recursion)."""
        out: list[str] = []
        work: list[tuple[str, Any]] = [("open", v)]
        while work:
            what, node = work.pop()
            if what == "close":
                kind, keys, n = node
                parts = out[len(out) - n:] if n else []
                del out[len(out) - n:]
                if kind is dict:
                    out.append("{" + ", ".join(f"{k}: {p}" for k, p in zip(keys, parts)) + "}")
                elif kind is list:
                    out.append("[" + ", ".join(parts) + "]")
                else:
                    out.append("(" + ", ".join(parts) + ("," if n == 1 else "") + ")")
                continue
            if isinstance(node, (tuple, list)) and type(node) not in (tuple, list):
                raise NotExportable(f"a {type(node).__name__} (a namedtuple) in the program's "
                                    "parameters or result has no JAX source form")
            if type(node) in (tuple, list):
                work.append(("close", (type(node), None, len(node))))
                work.extend(("open", c) for c in reversed(node))
            elif isinstance(node, dict):  # (an OrderedDict is written as a dict)
                keys = [self.scalar(k) for k in node]
                work.append(("close", (dict, keys, len(node))))
                work.extend(("open", c) for c in reversed(list(node.values())))
            else:
                out.append(self.scalar(node))
        return out[0]

    def scalar(self, v: Any) -> str:
        t = type(v)
        if t is _Code:
            return v.text
        if v is None or t is bool or t is int or t is str:
            return repr(v)
        if t is float:
            return _float_text(v)
        if t is complex:
            return _complex_text(v)
        if v is Ellipsis:
            return "Ellipsis"
        if t is slice:
            return f"slice({self.scalar(v.start)}, {self.scalar(v.stop)}, {self.scalar(v.step)})"
        if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            return _jnp_dtype_text(v)
        if isinstance(v, np.generic):
            text = _element_text(v, v.dtype.kind)
            if v.dtype.name in _NP_TYPES and text is not None:
                if v.dtype.kind == "b":
                    return "np.True_" if v else "np.False_"
                return f"{_np_dtype_text(v.dtype)}({text})"
            return f"{self.constant(np.asarray(v))}[()]"
        if isinstance(v, np.ndarray):
            return self.constant(v)
        if isinstance(v, (tuple, list, dict)):
            return self.value(v)  # (containers are written by value, which calls back here)
        raise NotExportable(f"a parameter of type {t.__name__} has no JAX source form")

    def index(self, index: Any) -> str:
        """An index as it reads inside brackets: ``1:3, ..., None, _c0``."""
        parts = index if type(index) is tuple else (index,)
        texts = []
        for part in parts:
            if type(part) is slice:
                bounds = ["" if b is None else repr(int(b)) for b in
                          (part.start, part.stop, part.step)]
                texts.append(":".join(bounds[:2]) + (f":{bounds[2]}" if bounds[2] else ""))
            elif part is Ellipsis:
                texts.append("...")
            elif isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)):
                texts.append(repr(int(part)))
            else:
                texts.append(self.scalar(part))
        if type(index) is not tuple:
            return texts[0]
        if not texts:
            return "()"
        return ", ".join(texts) + ("," if len(texts) == 1 else "")


# -- one equation ------------------------------------------------------------------------
class _Step(JaxStep):
    """What a form needs to write one equation (the :class:`~wengert.core.forms.JaxStep`
    an op's ``jax=`` function is given): its inputs as source, its params (with the
    forward's defaults), its equation, and the module that defines helpers and
    constants."""

    __slots__ = ("m",)

    def __init__(self, eq: Any, args: list[str], params: dict[str, Any], m: _Module) -> None:
        super().__init__(eq, args, params)
        self.m = m

    def helper(self, name: str) -> str:
        return self.m.helper(name)

    def constant(self, value: np.ndarray) -> str:
        return self.m.constant(value)

    def value(self, value: Any) -> str:
        return self.m.value(value)

    def index(self, index: Any) -> str:
        return self.m.index(index)

    def dtype_text(self, dtype: Any) -> str:
        return _jnp_dtype_text(dtype)


_SLOT = re.compile(r"\{(\*|\w+)\}")
_HELPER_CALL = re.compile(r"(?<![\w.])(_[a-z0-9_]+)\(")
_MODULE = re.compile(r"(?<![\w.])(jax\.scipy\.special)\.")


def _template(template: str) -> Callable[[_Step], str]:
    """The form an op's :attr:`~wengert.core.op.Op.jax` template declares: ``{0}``,
    ``{1}``, ... the inputs, ``{*}`` all of them, ``{key}`` a param as source; the
    helpers (``_clip(``) and modules (``jax.scipy.special``) it names are added to the
    module."""
    helpers = [h for h in _HELPER_CALL.findall(template) if h in _HELPERS]
    modules = _MODULE.findall(template)

    def form(s: _Step) -> str:
        for name in helpers:
            s.helper(name)
        s.m.imports.update(modules)

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "*":
                return ", ".join(s.args)
            return s.args[int(key)] if key.isdigit() else s.param(key)

        return _SLOT.sub(fill, template)

    form.__doc__ = template
    return form


#: The primitives whose JAX form depends on the equation (a dtype, a shape, a literal):
#: each declares the function that writes it beside it (``Op(..., jax=form)``, written
#: with a :class:`~wengert.core.forms.JaxStep`); every other one a template.
CODE_FORMS: Mapping[Op, Callable[[JaxStep], str]] = MappingProxyType({
    op: op.jax for op in REGISTRY if callable(op.jax)})
#: Registry op -> the function that writes it in ``jax.numpy`` (its docstring says how):
#: the op's own ``jax`` template, or its function (:data:`CODE_FORMS`).
JAX_FORMS: Mapping[Op, Callable[[JaxStep], str]] = MappingProxyType({
    op: CODE_FORMS.get(op) or _template(op.jax)
    for op in REGISTRY if op.jax is not None})
#: The parts of a decomposition (by their records, in order) that one JAX call gives in
#: that order, and its form; other parts are written each by its own form, or as the call
#: their forms all index (``jnp.linalg.eigh(t1, UPLO='L')`` for ``[0]`` and ``[1]``).
JAX_JOINT_FORMS: Mapping[tuple[Op, ...], str] = MappingProxyType(
    {joint.parts: joint.jax for joint in JOINTS if joint.jax is not None})
#: Primitives with no faithful JAX form, and why (each op's ``jax_refused``).
REFUSED_FORMS: Mapping[str, str] = MappingProxyType(
    {op.name: op.jax_refused for op in REGISTRY if op.jax_refused is not None})
#: Primitives with no faithful JAX form for complex values, and why.
COMPLEX_REFUSED_FORMS: Mapping[str, str] = MappingProxyType(
    {op.name: op.jax_complex_refused for op in REGISTRY
     if op.jax_complex_refused is not None})


# -- recorded NumPy calls -------------------------------------------------------------------
#: Ufuncs without a gradient whose ``jax.numpy`` namesake has the same semantics.
_UFUNCS = {np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
           np.logical_and, np.logical_or, np.logical_xor, np.logical_not, np.isnan, np.isinf,
           np.isfinite, np.signbit, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
           np.left_shift, np.right_shift, np.gcd, np.lcm, np.bitwise_count}
_LIKE_DEFAULTS = {"order": "K", "subok": True, "device": None}
#: NumPy function -> (its array parameters, the keyword parameters passed on, the ones
#: allowed only at their default).
_FUNCTIONS: dict[Any, tuple[tuple[str, ...], tuple[str, ...], dict[str, Any]]] = {
    np.argmax: (("a",), ("axis", "keepdims"), {"out": None}),
    np.argmin: (("a",), ("axis", "keepdims"), {"out": None}),
    np.argsort: (("a",), ("axis",), {"order": None}),
    np.any: (("a",), ("axis", "keepdims"), {"out": None, "where": True}),
    np.all: (("a",), ("axis", "keepdims"), {"out": None, "where": True}),
    np.count_nonzero: (("a",), ("axis", "keepdims"), {}),
    np.isclose: (("a", "b"), ("rtol", "atol", "equal_nan"), {}),
    np.allclose: (("a", "b"), ("rtol", "atol", "equal_nan"), {}),
    np.array_equal: (("a1", "a2"), ("equal_nan",), {}),
    np.array_equiv: (("a1", "a2"), (), {}),
    np.searchsorted: (("a", "v"), ("side", "sorter"), {}),
    np.digitize: (("x", "bins"), ("right",), {}),
    np.iscomplex: (("x",), (), {}),
    np.isreal: (("x",), (), {}),
    np.isneginf: (("x",), (), {"out": None}),
    np.isposinf: (("x",), (), {"out": None}),
    np.nanargmax: (("a",), ("axis", "keepdims"), {"out": None}),
    np.nanargmin: (("a",), ("axis", "keepdims"), {"out": None}),
    # (memory order and subclasses do not change values; np.empty_like's unspecified
    # values are jnp.empty_like's zeros, as wengert's fold_constants gives)
    np.zeros_like: (("a",), ("dtype", "shape"), _LIKE_DEFAULTS),
    np.ones_like: (("a",), ("dtype", "shape"), _LIKE_DEFAULTS),
    np.empty_like: (("prototype",), ("dtype", "shape"), _LIKE_DEFAULTS),
    np.full_like: (("a", "fill_value"), ("dtype", "shape"), _LIKE_DEFAULTS),
    np.histogram_bin_edges: (("a",), ("bins", "range", "weights"), {}),
    np.choose: (("a", "choices"), ("mode",), {"out": None}),
    np.compress: (("condition", "a"), ("axis",), {"out": None}),
    np.extract: (("condition", "arr"), (), {}),
    np.geomspace: (("start", "stop"), ("num", "endpoint", "dtype", "axis"), {}),
    np.isin: (("element", "test_elements"), ("assume_unique", "invert"), {"kind": None}),
    np.ix_: (("args",), (), {}),
    np.packbits: (("a",), ("axis", "bitorder"), {}),
    np.unpackbits: (("a",), ("axis", "count", "bitorder"), {}),
    np.polyadd: (("a1", "a2"), (), {}),
    np.polysub: (("a1", "a2"), (), {}),
    np.linalg.matrix_rank: (("A",), ("tol", "hermitian", "rtol"), {}),
    np.astype: (("x",), ("dtype",), {"copy": True, "device": None}),
}
#: Calls whose arguments are not promoted to a common dtype (indices, conditions, a fill
#: value cast to the prototype's dtype).
_NOT_PROMOTED = {np.choose, np.compress, np.extract, np.ix_, np.full_like, np.zeros_like,
                 np.ones_like, np.empty_like}
#: Arguments that must be constants of the graph for the result's shape to be static
#: (``np.compress(mask, x)`` with a traced ``mask`` has a shape that depends on it).
_CONSTANT_ARGUMENTS = {np.compress: "condition", np.extract: "condition"}
#: Recorded NumPy calls that the export refuses, and why.
_REFUSED = {
    "nonzero": "its output's shape depends on the values, which JAX's static shapes cannot "
               "follow; use np.where(mask, x, 0) or a masked sum instead",
    "flatnonzero": "its output's shape depends on the values (see nonzero)",
    "argwhere": "its output's shape depends on the values (see nonzero)",
    "sort_complex": "it has no JAX form with NumPy's ordering of complex numbers",
    "argpartition": "JAX orders the entries inside the two parts differently from NumPy, so "
                    "the exported values would not be wengert's; use np.sort (or np.argsort) "
                    "where the order matters",
    "intersect1d": "its output's shape depends on the values (see nonzero)",
    "union1d": "its output's shape depends on the values (see nonzero)",
    "setdiff1d": "its output's shape depends on the values (see nonzero)",
    "setxor1d": "its output's shape depends on the values (see nonzero)",
    "polydiv": "NumPy trims the remainder's leading zeros, so its shape depends on the "
               "values; use np.polysub and np.convolve where the degrees are known",
    "polymul": "NumPy trims the factors' leading zeros, so its shape depends on the values; "
               "use np.convolve, the same product without the trimming",
}
#: NumPy function names the export writes with ``jax.numpy`` when a graph records a call.
JAX_CALLS = tuple(sorted({f.__name__ for f in _UFUNCS} | {f.__name__ for f in _FUNCTIONS}))
#: Recorded NumPy calls refused by name, with the reason.
REFUSED_CALLS: Mapping[str, str] = MappingProxyType(_REFUSED)


def _array_arg(value: Any, m: _Module) -> str:
    """An array argument of a call as source (a list or tuple becomes an array: JAX
    functions take no lists)."""
    text = m.value(value)
    return f"jnp.asarray({text})" if isinstance(value, list | tuple) else text


def _call_source(eq: Any, args: list[str], m: _Module) -> str:
    """A recorded NumPy call (``np.greater(x, 0)``) as ``jax.numpy`` source."""
    impl = eq.op.impl
    func = impl.func
    name = getattr(func, "__name__", repr(func))
    label = f"np.{name}" if getattr(np, name, None) is func else name
    if name in _REFUSED and getattr(np, name, None) is func:
        raise NotExportable(f"equation {eq.out.name} = {label}(...) cannot be exported to JAX: "
                            f"{_REFUSED[name]}.")
    if impl.part is not None and func is not np.ix_:
        raise NotExportable(f"equation {eq.out.name} takes part {impl.part} of {label}'s "
                            "result, whose shape depends on the values: no JAX form.")
    leaves = list(impl.fixed)
    for k, text, v in zip(impl.positions, args, eq.ins):
        leaves[k] = _Code(text, type(v) is Var)
    call_args, call_kwargs = unflatten(impl.spec, leaves)
    if name == "stop_gradient" and getattr(func, "__module__", "").startswith("wengert"):
        return f"jax.lax.stop_gradient({args[0]})"  # wg.stop_gradient: the same cut
    if func in _UFUNCS:
        if call_kwargs:
            raise NotExportable(f"equation {eq.out.name} = {label}(...) passes "
                                f"{sorted(call_kwargs)}: only plain calls of a ufunc export")
        return f"jnp.{name}({', '.join(_array_arg(a, m) for a in call_args)})"
    spec = _FUNCTIONS.get(func)
    if spec is None:
        raise NotExportable(
            f"equation {eq.out.name} = {label}(...) (a NumPy call recorded without a gradient "
            f"rule) has no JAX form in wengert's export; the calls it writes are listed in "
            f"wengert.graph.backends.export.JAX_CALLS."
        )
    arrays, passed, fixed_only = spec
    bound = inspect.signature(func).bind(*call_args, **call_kwargs).arguments
    constant = _CONSTANT_ARGUMENTS.get(func)
    if constant is not None and any(c.traced for c in flatten(bound.get(constant))[0]
                                    if type(c) is _Code):
        raise NotExportable(f"equation {eq.out.name} = {label}(...) has a traced {constant}: "
                            "its output's shape depends on the values (see nonzero); use "
                            "np.where(mask, x, 0) instead.")
    if func is np.astype:  # (its dtype is positional only in JAX)
        return f"jnp.astype({_array_arg(bound['x'], m)}, {m.value(bound['dtype'])})"
    if func is np.ix_:  # (its arrays are positional: *args)
        parts = [_array_arg(a, m) for a in bound["args"]]
        return f"jnp.ix_({', '.join(parts)})[{impl.part}]"
    parts = [_array_arg(bound[a], m) for a in arrays if a in bound]
    if constant is not None:  # the number selected, known from the constant: a static shape
        axis = bound.get("axis")
        parts.append(f"size={eq.out.shape[0 if axis is None else axis]}")
    if func is np.choose and bound.get("mode", "raise") == "raise":
        bound["mode"] = "clip"  # (JAX cannot raise: the same values wherever NumPy does not)
    for key, value in bound.items():
        if key in arrays:
            continue
        if key == "bins" and isinstance(value, str):
            raise NotExportable(f"equation {eq.out.name} = {label}(..., bins={value!r}): JAX "
                                "takes a number of bins or their edges only")
        if key in passed:
            parts.append(f"{key}={m.value(value)}")
        elif key in ("kind", "stable") and func is np.argsort:
            continue  # JAX's argsort is stable: one of the orders every NumPy kind allows
        elif key in fixed_only and (value is fixed_only[key] or (
                type(value) in (bool, int, float, str) and value == fixed_only[key])):
            continue
        else:
            raise NotExportable(f"equation {eq.out.name} = {label}(..., {key}=...) has no "
                                "JAX form in wengert's export")
    where = "jnp.linalg" if getattr(np.linalg, name, None) is func else "jnp"
    return f"{where}.{name}({', '.join(parts)})"


# -- the whole program ---------------------------------------------------------------------
_RESERVED = {"jax", "jnp", "np", "math", "io", "base64", "slice", "Ellipsis", "None", "True",
             "False"} | _HELPER_NAMES


def _identifier(name: str) -> bool:
    return bool(_IDENT.fullmatch(name)) and not keyword.iskeyword(name)


def _leaf_paths(spec: Any) -> list[tuple[str, str]]:
    """For each leaf of a pytree spec, in order: how to read it from the argument
    (``["w"][0]``) and the suffix the tracer gave its name (``_w_0``)."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, str]] = [(spec, "", "")]
    while stack:
        node, access, suffix = stack.pop()
        if node == "leaf":
            out.append((access, suffix))
            continue
        kind, keys, children = node
        if kind is type(None):
            continue
        if issubclass(kind, dict):
            for key, child in reversed(list(zip(keys, children))):
                if type(key) not in (str, int, float, bool):
                    raise NotExportable(f"an argument has a dict key of type "
                                        f"{type(key).__name__}, which source cannot name")
                stack.append((child, f"{access}[{key!r}]", f"{suffix}_{key}"))
        else:
            for i in range(len(children) - 1, -1, -1):
                label = keys[i] if keys else i
                stack.append((children[i], f"{access}[{i}]", f"{suffix}_{label}"))
    return out


class _Writer:
    """Writes one graph as a JAX module."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.names: dict[int, str] = {}
        taken: set[str] = set(_RESERVED)
        for v in list(graph.inputs) + [v for eq in graph.equations for v in eq.outs]:
            name = v.name if _identifier(v.name) else "v"
            base, k = name, 0
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            taken.add(name)
            self.names[id(v)] = name
        self.m = _Module(taken)
        fname = graph.name if _identifier(graph.name) else "f"
        while fname in taken:
            fname += "_"
        self.function_name = fname
        taken.add(fname)

    def arg(self, v: Any) -> str:
        if type(v) is Var:
            return self.names[id(v)]
        return self.m.scalar(v.value)

    def _cast(self, v: Any, text: str, dtype: np.dtype) -> str:
        """``text`` cast to ``dtype`` where NumPy would have cast it (JAX may promote
        differently: int64 with float32 is float32 there)."""
        if type(v) is Var:
            have = v.dtype
        elif isinstance(v.value, np.ndarray | np.generic):
            have = v.value.dtype
        else:
            return text  # Python numbers are weak in both
        if have == dtype or not np.can_cast(have, dtype, "safe"):
            return text
        return f"jnp.asarray({text}, dtype={_jnp_dtype_text(dtype)})"

    def line(self, eq: Any) -> str:
        op = eq.op
        args = [self.arg(v) for v in eq.ins]
        if is_recorded_call(op) and op.impl.replay:
            raise NotExportable(
                f"equation {eq.out.name} calls {op.impl.__name__}, a wg.custom_vjp or "
                "wg.custom_jvp function: its body and its rule are Python code the graph "
                "does not hold, so it has no JAX form. Write it with jax.custom_vjp / "
                "jax.custom_jvp, or trace the function without the custom rule."
            )
        if is_recorded_call(op):
            dtypes = [v.dtype if type(v) is Var else v.value.dtype for v in eq.ins
                      if type(v) is Var or isinstance(v.value, np.ndarray | np.generic)]
            if len(set(dtypes)) > 1 and op.impl.func not in _NOT_PROMOTED:  # NumPy's, not JAX's
                common = np.result_type(*dtypes)
                args = [self._cast(v, a, common) for v, a in zip(eq.ins, args)]
            text = _call_source(eq, args, self.m)
            if eq.out.dtype.kind in "iu":  # JAX's index dtype may differ (searchsorted: int32)
                text = f"jnp.asarray({text}, dtype={_jnp_dtype_text(eq.out.dtype)})"
            return text
        if op.jax_refused is not None:
            raise NotExportable(
                f"equation {eq.out.name} applies {op.name}, which has no JAX form: "
                f"{op.jax_refused}. Export a phase-invariant function of it computed "
                "outside the graph, or only the eigenvalues."
            )
        if op.jax_complex_refused is not None and eq.out.dtype.kind == "c":
            raise NotExportable(
                f"equation {eq.out.name} applies {op.name} to a complex matrix: "
                f"{op.jax_complex_refused}. Export a phase-invariant function of it "
                "computed outside the graph, or only the real or the singular values."
            )
        form = JAX_FORMS.get(op)
        if form is None:
            raise NotExportable(
                f"equation {eq.out.name} applies op {op.name!r}, which is not one of wengert's "
                "primitives (a custom_vjp / custom_jvp rule, or a kernel made by a pass such "
                "as fuse): its NumPy forward has no JAX form. Export the graph before that "
                "pass, or trace the function without the custom rule."
            )
        keep = op.jax_uncast
        args = [a if i in keep else self._cast(v, a, eq.out.dtype)
                for i, (v, a) in enumerate(zip(eq.ins, args))]
        return form(_Step(eq, args, {**op.param_defaults(), **eq.params}, self.m))

    def parts_line(self, eq: Any) -> str:
        """The right-hand side of a decomposition's equation with several outputs: one
        JAX call where JAX's gives these parts in this order (``jnp.linalg.eigh(t1,
        UPLO='L')``), else each part's form (``jnp.linalg.qr(t0)[0], ...``)."""
        texts = [self.line(eq.replace(op=op, outs=[v], parts=None))
                 for op, v in zip(eq.ops, eq.outs)]
        joint = JAX_JOINT_FORMS.get(eq.ops)
        if joint is not None and len(eq.ins) == 1:
            (x,) = eq.ins
            return joint.format(self._cast(x, self.arg(x), eq.outs[0].dtype))
        heads = [t[: -len(f"[{k}]")] for k, t in enumerate(texts) if t.endswith(f"[{k}]")]
        if len(heads) == len(texts) and len(set(heads)) == 1:
            return heads[0]  # (the parts 0, 1 ... of one call)
        return ", ".join(texts)

    def comment(self, eq: Any, previous: Any) -> str:
        text = f"# {eq.primitive}"
        if is_recorded_call(eq.op):
            text += " (no derivative)"
        src = eq.source
        if src is not None and getattr(src, "text", None) and src != previous:
            text += f"  (line {src.lineno}: {src.text})"
        return text

    def needs_x64(self) -> bool:
        g = self.graph
        for v in list(g.inputs) + [v for eq in g.equations for v in eq.outs]:
            if v.dtype.itemsize >= 8 and v.dtype.kind in "fciu":
                return True
        return False

    def prologue(self) -> tuple[list[str], list[str]]:
        """The function's parameters, and the lines that read the inputs from them."""
        g = self.graph
        tree = g.in_tree
        children = tree[2] if tree != "leaf" and tree[0] is tuple else [tree]
        inputs = list(g.inputs)
        params: list[str] = []
        lines: list[str] = []
        k = 0
        taken = self.m.taken
        for i, child in enumerate(children):
            paths = _leaf_paths(child)
            mine = inputs[k:k + len(paths)]
            k += len(paths)
            if child == "leaf":
                name = self.names[id(mine[0])]
                params.append(name)
                lines.append(f"{name} = jnp.asarray({name})")
                continue
            arg = f"arg{i}"
            if paths:
                first = mine[0].name
                suffix = paths[0][1]
                if first.endswith(suffix) and _identifier(first[: len(first) - len(suffix)]):
                    arg = first[: len(first) - len(suffix)]
            base, n = arg, 0
            while arg in taken or arg in params:
                n += 1
                arg = f"{base}_{n}"
            taken.add(arg)
            params.append(arg)
            for v, (access, _) in zip(mine, paths):
                lines.append(f"{self.names[id(v)]} = jnp.asarray({arg}{access})")
        return params, lines

    def result(self) -> str:
        g = self.graph
        texts = []
        for v in g.outputs:
            if type(v) is Var:
                texts.append(self.names[id(v)])
            elif isinstance(v.value, np.ndarray):
                texts.append(f"jnp.asarray({self.m.constant(v.value)})")
            else:
                texts.append(self.m.scalar(v.value))
        if g.out_tree == "leaf":
            return texts[0]
        return self.m.value(unflatten(g.out_tree, [_Code(t) for t in texts]))

    def source(self) -> str:
        g = self.graph
        # (a guard on the shape of a NumPy call's result is that call's: it is exported, or
        # refused by name, as the call is)
        guards = [gd for gd in g.guards if gd.how != "shape"]
        if guards:
            shown = "; ".join(f"{gd.how}({gd.var.name}) at {gd.where()}" for gd in guards[:3])
            more = f" and {len(guards) - 3} more" if len(guards) > 3 else ""
            raise NotExportable(
                f"graph {g.name} has {len(guards)} guard(s) ({shown}{more}): Python control "
                "flow on traced values, which JAX cannot replay (its traced values have no "
                "Python value). Write the choice with np.where(cond, a, b) (exported as "
                "jnp.where), or avoid converting traced values to Python numbers, then trace "
                "again."
            )
        params, body = self.prologue()
        previous = None
        for eq in g.equations:
            rhs = self.line(eq) if len(eq.outs) == 1 else self.parts_line(eq)
            if eq.grad_off:  # traced inside wg.no_grad(): no gradient through it
                rhs = f"jax.lax.stop_gradient({rhs})"
            outs = ", ".join(self.names[id(v)] for v in eq.outs)
            body.append(f"{outs} = {rhs}  {self.comment(eq, previous)}")
            previous = eq.source
        body.append(f"return {self.result()}")
        x64 = self.needs_x64()
        if x64:
            self.m.helper("_check_x64")
            body.insert(0, "_check_x64()")
        n = len(g.equations)
        head = [f"# {g.signature()} exported from a wengert graph ({n} equation"
                f"{'s' * (n != 1)}) to jax.numpy."]
        if x64:
            head += ["# It computes in 64 bits: turn on JAX's 64-bit mode first,",
                     '#     jax.config.update("jax_enable_x64", True)',
                     f"# ({self.function_name} raises otherwise)."]
        imports = ["import jax"] + [f"import {name}" for name in sorted(self.m.imports)]
        imports += ["import jax.numpy as jnp", "import numpy as np"]
        lines = head + sorted(set(imports), key=_import_order)
        for name in sorted(self.m.helpers):
            lines += ["", "", _HELPERS[name].strip("\n")]
        if self.m.constants:
            lines += ["", ""] + [text for _, text in self.m.constants]
        lines += ["", "", f"def {self.function_name}({', '.join(params)}):"]
        lines += [f"    {line}" for line in body]
        return "\n".join(lines) + "\n"


def _import_order(line: str) -> tuple[int, str]:
    """``import jax`` first, then the standard library, then jnp and np."""
    name = line.split()[1]
    order = {"jax": 0, "jax.numpy": 3, "numpy": 4}.get(name, 2 if name.startswith("jax.") else 1)
    return order, name


def to_jax_source(graph: Any) -> str:
    """The source of a Python module whose function computes ``graph`` with ``jax.numpy``.

    Parameters
    ----------
    graph : Graph
        Without guards; every equation a wengert primitive or a recorded NumPy call with
        a JAX form (:data:`JAX_FORMS`, :data:`JAX_CALLS`).

    Returns
    -------
    str
        The module: imports, the helpers and constants it uses, and ``def <name>(...)``
        taking the graph's arguments (pytrees as they were traced) and returning its
        result, one line per equation named as in the graph. Executing it needs JAX
        (and, for a 64-bit graph, JAX's 64-bit mode).

    Raises
    ------
    NotExportable
        For a graph with guards, an op that is not a wengert primitive, or a NumPy call
        without a faithful JAX form; the message names it and says what to do.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> w = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    >>> g = wg.trace(lambda x: np.abs(np.maximum(x, 0.0)[1:] @ w), np.ones(3, np.float32),
    ...              source_lines=False)
    >>> print(to_jax_source(g))
    # f(x: f32[3]) exported from a wengert graph (4 equations) to jax.numpy.
    import jax
    import jax.numpy as jnp
    import numpy as np
    <BLANKLINE>
    <BLANKLINE>
    def _abs(x):
        # np.abs with abs'(0) = 0 (as wengert's; JAX's is 1): x * sign(x) is |x| exactly.
        return x * jnp.sign(x)
    <BLANKLINE>
    <BLANKLINE>
    _c0 = np.array([  # float32[2, 2]
        1.0, -2.0, 0.5, 3.0,
    ], dtype=np.float32).reshape((2, 2))
    <BLANKLINE>
    <BLANKLINE>
    def f(x):
        x = jnp.asarray(x)
        t0 = jnp.maximum(x, 0.0)  # maximum
        t1 = t0[1:]  # getitem
        t2 = jnp.matmul(t1, _c0)  # matmul
        t3 = _abs(t2)  # abs
        return t3
    <BLANKLINE>
    """
    return _Writer(graph).source()


def to_jax(graph: Any) -> Callable[..., Any]:
    """The function :func:`to_jax_source` writes, executed (needs JAX installed).

    ``jax.jit(to_jax(graph))`` compiles it with XLA; ``jax.grad`` differentiates it.
    The module's source is the function's ``__wengert_source__``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sum(np.tanh(x) ** 2), np.ones(3))
    >>> import jax  # doctest: +SKIP
    >>> jax.config.update("jax_enable_x64", True)  # doctest: +SKIP
    >>> jax.grad(to_jax(g))(np.zeros(3))  # doctest: +SKIP
    Array([0., 0., 0.], dtype=float64)
    """
    writer = _Writer(graph)
    source = writer.source()
    namespace: dict[str, Any] = {"__name__": f"wengert_jax_{writer.function_name}"}
    try:
        exec(compile(source, f"<wengert graph {graph.name} as JAX>", "exec"), namespace)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] == "jax":
            raise ModuleNotFoundError(
                "to_jax runs the exported source, which needs JAX: pip install jax "
                "(to_jax_source writes the source without it)", name=e.name) from None
        raise
    fn = namespace[writer.function_name]
    fn.__wengert_source__ = source
    return fn
