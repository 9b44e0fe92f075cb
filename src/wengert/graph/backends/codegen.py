"""Python source from a graph: one line per equation, and the function compiled from it.

:func:`to_source` writes what a graph computes as a Python function that a
person can read: one assignment per equation, named after the graph's
variables, each with a comment naming the op (and the user's line that made
it). :func:`compile_graph` executes that very source, so what the user reads
is what runs.

Two flavours of the same program:

* **arrays**: NumPy calls (``np.sin(x)``, ``op.sum(t1, axis=0, keepdims=False)``
  for ops whose forward is wengert's own ``op.<name>``);
* **floats**: when every value of the graph is a float64 scalar, straight-line code on
  floats (``t1 = t0 * 0.9``, ``t2 = sin(t1)`` with ``sin`` bound to ``math.sin``) for the
  equations eager mode ran on Python floats (operators, and wengert's functions such as
  ``wg.numpy.sin``: each input was one when traced, :attr:`Var.scalar
  <wengert.graph.ir.Var>`, and the op has a float fast path; NumPy's own ``np.sin`` of a
  Python float gives a NumPy scalar, computed by NumPy as eagerly), and
  NumPy for those on NumPy scalars, as eagerly (``c0 * t5`` on a ``float64`` is NumPy's
  multiply; ``np.tanh(t6)``), under ``raise_reported()``. Where a float path raises
  (``log(-1.0)``, ``1.0 / 0.0``, ``exp(1000.0)``) eager mode gives NumPy's answer, NaN
  or inf with NumPy's warning; so does the code: its equations stand in ``try``, and
  ``except FLOAT_ERRORS`` returns what ``f_fallback`` computes, the same equations with
  ``fallback.<op>`` (the float path, and NumPy where it raises,
  :mod:`wengert.graph.backends.runtime`). Compiled, ``f_fallback`` is compiled at its first call.

In the arrays flavour too, an equation whose inputs were all Python floats when traced
runs as eager mode ran it, with ``fallback.<op>``: its result is a Python float
computed by the float path, not a NumPy scalar. NumPy scalars and 0-d arrays are
never computed with ``math``: they take NumPy's functions, as eagerly.

Guards (see :class:`~wengert.graph.ir.Guard`) become ``if`` lines that raise
:class:`~wengert.graph.ir.GuardFailed` right after the value they test.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> import wengert.numpy as wnp
>>> g = wg.trace(lambda x: wnp.sin(x) * 2.0, 0.5, source_lines=False)
>>> print(to_source(g))
import numpy as np
from math import sin
from wengert.graph.backends.runtime import FLOAT_ERRORS, fallback
<BLANKLINE>
<BLANKLINE>
def f(x):
    try:
        t0 = sin(x)  # sin
        t1 = t0 * 2.0  # multiply
    except FLOAT_ERRORS:  # NumPy's inf or nan and its warning, as eagerly
        return f_fallback(x)
    return t1
<BLANKLINE>
<BLANKLINE>
def f_fallback(x):
    t0 = fallback.sin(x)
    t1 = fallback.multiply(t0, 2.0)
    return t1
<BLANKLINE>
>>> import warnings
>>> with warnings.catch_warnings(record=True):  # math.sin(inf) raises, np.sin warns
...     g(np.inf)
nan
"""

from __future__ import annotations

import ast
import keyword
import math
import operator
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from wengert.core.modes import no_grad
from wengert.core.tree import unflatten
from wengert.graph.backends import runtime
from wengert.graph.ir import Literal, Var, aval_text
from wengert.graph.tracer import is_recorded_call
from wengert.ops import JOINTS, REGISTRY

__all__ = ["to_source", "namespace", "compile_graph", "is_scalar_program", "float_equation",
           "Namespace", "INLINE_CONSTANT", "BLOCK", "SCALAR_FORMS", "SCALAR_MATH",
           "NEVER_RAISE", "JOINT_FORMS"]

_SCALAR_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/"}
_SCALAR_PREFIX = {operator.neg: "-", operator.pos: "+"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Namespace:
    """The names generated code refers to, and the header lines that define them.

    ``values`` maps every free name of the code to its object (what ``exec`` needs);
    ``header`` holds the lines that define them in the printed source: imports of
    NumPy, ``math`` functions and :mod:`wengert.graph.backends.runtime`, small constants written
    out, and a comment for each value that cannot be written as source (a large
    array, a custom op's function), which :func:`namespace` supplies.
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {"np": np}
        self.imports: set[str] = {"import numpy as np"}
        self.math: set[str] = set()
        self.runtime: set[str] = set()
        self.defs: dict[str, str] = {}  # name -> its line in the header
        self._by_id: dict[int, str] = {}
        self._count = 0
        self.taken: set[str] = set()  # the graph's variables' names in the code
        self.local: dict[int, str] = {}  # a variable whose name the code must change
        self.fallbacks: dict[int, Any] = {}  # id(op) -> its forward on floats
        self.keep: list[Any] = []  # (the ops of those ids, kept alive)
        self._floats: dict[int, bool] = {}  # id(equation) -> float_equation(equation)
        self.deferred: dict[str, Callable[[], list[str]]] | None = None  # see _exec

    def float_equation(self, eq: Any) -> bool:
        """:func:`float_equation`, once per equation."""
        known = self._floats.get(id(eq))
        if known is None:
            known = self._floats[id(eq)] = float_equation(eq)
        return known

    def reserve(self, graph: Any) -> None:
        """Keep the graph's variable names for them; a variable named like a module the
        code uses (``np``) or a keyword gets a trailing underscore."""
        variables = list(graph.inputs) + [v for eq in graph.equations for v in eq.outs]
        names = {v.name for v in variables}
        for v in variables:
            name = v.name
            if name in _FIXED or keyword.iskeyword(name) or not _IDENT.fullmatch(name):
                local = _NOT_IDENT.sub("_", name) + "_"
                while local in names:
                    local += "_"
                names.add(local)
                self.local[id(v)] = local
        self.taken = names

    def var(self, v: Any) -> str:
        return self.local.get(id(v), v.name)

    def _free(self, name: str) -> bool:
        return name not in self.taken and name not in _FIXED
    def use_runtime(self, name: str) -> str:
        self.runtime.add(name)
        self.values[name] = getattr(runtime, name)
        return name

    def constant(self, value: Any, hint: str = "c") -> str:
        """A name for ``value`` (the same name for the same object), defined in the header:
        written out when small, else described in a comment."""
        name = self._by_id.get(id(value))
        if name is None:
            name = f"{hint}{self._count}"
            self._count += 1
            while not self._free(name):
                name = f"{hint}{self._count}"
                self._count += 1
            self._by_id[id(value)] = name
            self.values[name] = value
            self.defs[name] = _constant_line(name, value)
        return name

    def bind(self, name: str, value: Any, line: str) -> str:
        """``name`` bound to ``value`` (a function), defined by ``line`` in the header
        (``{name}`` in it is the final name); suffixed when the name is taken."""
        base, k = name, 1
        while (name in self.values and self.values[name] is not value) or not self._free(name):
            name = f"{base}_{k}"
            k += 1
        if name not in self.values:
            self.values[name] = value
            self.defs[name] = line.format(name=name)
        return name

    def math_function(self, f: Any) -> str:
        name = f.__name__
        if (name in self.values and self.values[name] is not f) or not self._free(name):
            self.imports.add("import math")
            self.values["math"] = math
            return self.bind(f"math_{name}", f, "{name} = math." + name)
        self.values[name] = f
        self.math.add(name)
        return name

    def expr(self, value: Any) -> str:
        """Python source for a parameter or literal value."""
        t = type(value)
        if value is None or t is bool or t is int or t is str:
            return repr(value)
        if t is float:
            if math.isfinite(value):
                return repr(value)
            self.values["math"] = math
            self.imports.add("import math")
            if value != value:  # (a NaN's sign: inf * 0 is a -nan)
                return "-math.nan" if math.copysign(1.0, value) < 0 else "math.nan"
            return "math.inf" if value > 0 else "-math.inf"
        if t is complex and all(math.isfinite(p) and (p != 0 or math.copysign(1.0, p) > 0)
                                for p in (value.real, value.imag)):
            return repr(value)  # (exact: no -0.0 part, which ``-0+2j`` would make a 0.0)
        if t is np.ndarray and value.ndim == 0:
            value = value[()]  # a 0-d array acts as the NumPy scalar of its dtype
        if isinstance(value, np.generic) and value.dtype.kind in "fiub" \
                and getattr(np, value.dtype.name, None) is type(value):
            item = value.item()  # a NumPy scalar keeps its dtype: np.float64(1.0)
            if type(item) is not float or math.isfinite(item):
                return f"np.{value.dtype.name}({item!r})"
        if t is tuple:
            inner = ", ".join(self.expr(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if t is list:
            return "[" + ", ".join(self.expr(v) for v in value) + "]"
        if t is slice:
            return f"slice({self.expr(value.start)}, {self.expr(value.stop)}, " \
                   f"{self.expr(value.step)})"
        if value is Ellipsis:
            return "Ellipsis"
        if t is dict and all(type(k) is str for k in value):
            return "{" + ", ".join(f"{k!r}: {self.expr(v)}" for k, v in value.items()) + "}"
        if isinstance(value, np.dtype) and getattr(np, value.name, None) is not None:
            return f"np.dtype(np.{value.name})"
        if isinstance(value, type) and value in (float, int, bool, complex):
            return value.__name__
        if isinstance(value, type) and getattr(np, value.__name__, None) is value:
            return f"np.{value.__name__}"
        return self.constant(value)

    def header_lines(self) -> list[str]:
        lines = sorted(self.imports, key=lambda line: (line.startswith("from "), line))
        if self.math:
            lines.append(f"from math import {', '.join(sorted(self.math))}")
        if self.runtime:
            names = ", ".join(sorted(self.runtime))
            lines.append(f"from wengert.graph.backends.runtime import {names}")
        for line in self.defs.values():
            if line.startswith("def "):  # a kernel: a function of its own
                lines += ["", "", line]
            else:
                lines.append(line)
        return lines


#: Names the generated code uses for modules and helpers: a variable never takes them.
_FIXED = frozenset({"np", "math", "op", "floats", "fallback", "FLOAT_ERRORS", "raise_reported",
                    "as_returned", "GuardFailed"})
_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")

#: Small constants are written out in the header (at most this many entries).
INLINE_CONSTANT = 16


def _float_text(v: float) -> str:
    """A Python float as source that gives its bits back (``float('nan')``, ``-0.0``)."""
    if math.isfinite(v):
        return repr(v)
    text = "float('nan')" if v != v else "float('inf')"
    return "-" + text if math.copysign(1.0, v) < 0 else text


def _constant_line(name: str, value: Any) -> str:
    if type(value) is complex:
        return f"{name} = complex({_float_text(value.real)}, {_float_text(value.imag)})"
    if isinstance(value, np.generic) and getattr(np, value.dtype.name, None) is type(value) \
            and value.dtype.kind in "fiub" and np.isfinite(value):
        return f"{name} = np.{value.dtype.name}({value.item()!r})"
    if isinstance(value, np.ndarray) and value.ndim and value.size and not any(value.strides) \
            and value.dtype.kind in "fiub" and getattr(np, value.dtype.name, None) is not None:
        one = value.reshape(-1)[0]  # one value broadcast (a closure's np.broadcast_to view)
        item = one.item()
        if type(item) is not float or math.isfinite(item):
            return (f"{name} = np.broadcast_to(np.{value.dtype.name}({item!r}), "
                    f"{value.shape!r})")
    if isinstance(value, np.ndarray) and value.size > 1 \
            and value.flags.c_contiguous and value.dtype.kind in "fiub" \
            and getattr(np, value.dtype.name, None) is not None:
        raw = value.reshape(-1).view(np.uint8).reshape(value.size, -1)
        item = value.reshape(-1)[0].item()
        if (raw == raw[0]).all() and (type(item) is not float or math.isfinite(item)):
            # one value throughout (a folded np.ones_like(x) ...), read-only as folded
            return (f"{name} = np.full({value.shape!r}, np.{value.dtype.name}({item!r}))\n"
                    f"{name}.flags.writeable = False")
    if isinstance(value, np.ndarray) and value.size <= INLINE_CONSTANT \
            and value.dtype.kind in "fiub" and np.all(np.isfinite(value)):
        return f"{name} = np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
    if isinstance(value, np.ndarray):
        what = f"array {aval_text(value.shape, value.dtype)}"
    else:
        what = type(value).__name__
    return f"# {name}: {what}, passed in by Graph.namespace()"


def _op_call(op: Any, ns: Namespace) -> str:
    """How the arrays flavour calls ``op``'s forward: ``np.sin``, ``np.linalg.inv``,
    ``op.sum``; a custom op's function by a name the namespace supplies."""
    impl = op.impl
    name = getattr(impl, "__name__", None)
    module = getattr(impl, "__module__", None)
    if name and isinstance(impl, np.ufunc) and getattr(np, name, None) is impl:
        return f"np.{name}"
    if name and module in ("numpy", "numpy.linalg") and _IDENT.fullmatch(name):
        where = np if module == "numpy" else np.linalg
        if getattr(where, name, None) is impl:
            return f"np.{name}" if module == "numpy" else f"np.linalg.{name}"
    if runtime.registered(op) and _IDENT.fullmatch(op.name):
        return f"{ns.use_runtime('op')}.{op.name}"
    kernel = _kernel(op)
    if kernel is not None:  # a fused kernel: its source goes in the header
        name = ns.bind(op.name, impl, "")
        if not ns.defs.get(name):
            ns.defs[name] = kernel.strip().replace(f"def {op.name}(", f"def {name}(", 1)
        return name
    base = op.name if _IDENT.fullmatch(op.name) and not keyword.iskeyword(op.name) else "fn"
    return ns.bind(f"{base}_fn", impl, "# {name}: the forward of op " + repr(op.name)
                   + ", passed in by Graph.namespace()")


def is_scalar_program(graph: Any) -> bool:
    """Whether ``graph`` compiles to float code: every value a float64 scalar (a Python
    float, a NumPy ``float64`` or a 0-d array) and some equation runs on Python floats as
    eager mode does (:func:`float_equation`, written with ``math`` and Python's
    operators; the others as NumPy computes them, eagerly too)."""
    if not graph.equations:
        return False
    for v in graph.inputs:
        if v.shape != () or v.dtype != _F64:
            return False
    floats = False
    for eq in graph.equations:
        out = eq.out
        if out.shape != () or out.dtype != _F64 or len(eq.outs) > 1:
            return False
        for v in eq.ins:
            if type(v) is Literal and np.ndim(v.value) != 0:
                return False
        floats = floats or float_equation(eq)
    return floats


_F64 = np.dtype(np.float64)


def _numpy_scalar(v: Any) -> bool:
    """A value that is a NumPy scalar or a 0-d array when the code runs (Python's
    operators on it run NumPy's)."""
    if type(v) is Var:
        return not v.scalar
    return isinstance(v.value, np.ndarray | np.generic)


def _python_float(v: Any) -> bool:
    """A variable traced as a Python float, or a Python float literal."""
    if type(v) is Var:
        return v.scalar and v.shape == () and v.dtype == np.float64
    return type(v.value) is float


def float_equation(eq: Any) -> bool:
    """Whether eager mode ran ``eq`` with its op's float path: every input a Python float,
    no parameters (:func:`wengert.core.bind.forward`), and a Python float came out."""
    if eq.params or eq.op.scalar_impl is None or not _python_float(eq.out):
        return False
    return all(_python_float(v) for v in eq.ins)


def _name(v: Any, ns: Namespace, scalar: bool) -> str:
    """A variable's name, or a literal as source (in the float flavour a NumPy scalar is a
    constant of the header, ``c0 = np.float64(1.5)``, not a call on every run)."""
    if type(v) is Var:
        return ns.var(v)
    value = v.value
    if scalar and isinstance(value, np.ndarray | np.generic):
        if type(value) is np.ndarray:
            value = value[()]
        if isinstance(value, np.generic) and value.dtype.kind in "fiub":
            return ns.constant(value)
    return ns.expr(value)


#: Registered ops whose float path is exactly an expression (each op's ``scalar_code``,
#: checked by the tests against its ``scalar_impl``): written inline instead of calling it.
SCALAR_FORMS = {op: op.scalar_code for op in REGISTRY if isinstance(op.scalar_code, str)}
#: Registered ops whose float path is a ``math`` function (each op's ``scalar_code``).
SCALAR_MATH = {op: op.scalar_code for op in REGISTRY if callable(op.scalar_code)}
#: Python's operators whose meaning on NumPy scalars is their ufunc's, by spelling.
_OPERATORS = {"+": "{0} + {1}", "-": "{0} - {1}", "*": "{0} * {1}", "/": "{0} / {1}",
              "unary -": "-{0}", "unary +": "+{0}"}
#: Registered ops written with Python's operator also on NumPy scalars (each op spelled as
#: one of :data:`_OPERATORS`): ``t * 2.0`` on a ``float64`` computes what ``np.multiply``
#: does (value, type, warnings), at a fraction of the call's cost.
NUMPY_INFIX = {op: _OPERATORS[op.spelling] for op in REGISTRY if op.spelling in _OPERATORS}
#: Python's float operations that never raise (``+``, ``-``, ``*`` on floats give inf or
#: NaN silently, as the float path does eagerly).
_NEVER_RAISING = (operator.add, operator.sub, operator.mul, operator.neg, operator.pos, abs)
_SILENT_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.UAdd,
                 ast.USub, ast.Name, ast.Load, ast.Constant)


def _never_raises(op: Any) -> bool:
    """Whether ``op``'s float path never raises: one of :data:`_NEVER_RAISING`, or an inline
    form (``scalar_code``) made of ``+``, ``-`` and ``*`` only."""
    if any(op.scalar_impl is f for f in _NEVER_RAISING):
        return True
    code = op.scalar_code
    if not isinstance(code, str) or op.nin < 0:
        return False
    tree = ast.parse(code.format(*[f"x{i}" for i in range(op.nin)]), mode="eval")
    return all(isinstance(node, _SILENT_NODES) for node in ast.walk(tree))


#: Registered ops whose float path never raises (:func:`_never_raises`): a program of only
#: these needs no ``try``.
NEVER_RAISE = frozenset(op for op in REGISTRY if _never_raises(op))


def _scalar_line(eq: Any, ns: Namespace) -> str:
    """The float flavour's right-hand side: ``math`` and operators for an equation on
    Python floats, NumPy for one on NumPy scalars (an operator where that is the same)."""
    if not ns.float_equation(eq):
        form = NUMPY_INFIX.get(eq.op)
        if form is not None and not eq.params \
                and len(eq.ins) == form.count("}") and any(_numpy_scalar(v) for v in eq.ins):
            return form.format(*[_name(v, ns, True) for v in eq.ins])
        return _array_line(eq, ns, scalar=True)
    f = eq.op.scalar_impl
    args = [_name(v, ns, True) for v in eq.ins]
    form = SCALAR_FORMS.get(eq.op)
    if form is not None:
        return form.format(*args)
    f = SCALAR_MATH.get(eq.op, f)
    symbol = _SCALAR_INFIX.get(f)
    if symbol is not None and len(args) == 2:
        return f"{args[0]} {symbol} {args[1]}"
    symbol = _SCALAR_PREFIX.get(f)
    if symbol is not None and len(args) == 1:
        return f"{symbol}{args[0]}"
    if getattr(f, "__module__", None) == "math" and _IDENT.fullmatch(f.__name__):
        fname = ns.math_function(f)
    elif runtime.registered(eq.op) and _IDENT.fullmatch(eq.op.name):
        ns.use_runtime("floats")
        fname = ns.bind(f"{eq.op.name}_", f, "{name} = floats." + eq.op.name)
    else:
        fname = ns.bind(f"{eq.op.name}_fn" if _IDENT.fullmatch(eq.op.name) else "fn", f,
                        "# {name}: the float path of op " + repr(eq.op.name)
                        + ", passed in by Graph.namespace()")
    return f"{fname}({', '.join(args)})"


def _fallback_line(eq: Any, ns: Namespace) -> str:
    """``fallback.log(x)``: the equation as eager mode runs it on floats (the float path,
    NumPy's answer and warning where it raises)."""
    args = ", ".join(_name(v, ns, True) for v in eq.ins)
    if runtime.registered(eq.op) and _IDENT.fullmatch(eq.op.name):
        return f"{ns.use_runtime('fallback')}.{eq.op.name}({args})"
    fn = ns.fallbacks.get(id(eq.op))
    if fn is None:
        fn = ns.fallbacks[id(eq.op)] = runtime.float_forward(eq.op)
        ns.keep.append(eq.op)
    base = eq.op.name if _IDENT.fullmatch(eq.op.name) else "fn"
    name = ns.bind(f"{base}_fallback", fn, "# {name}: the forward of op " + repr(eq.op.name)
                   + " on floats, passed in by Graph.namespace()")
    return f"{name}({args})"


class _Code(str):
    """Source text standing for a value in a recorded call's arguments."""


def _call_text(value: Any, ns: Namespace) -> str:
    """A recorded call's argument as source: code, or a container of them, or a value."""
    if isinstance(value, _Code):
        return str(value)
    if type(value) is tuple:
        inner = ", ".join(_call_text(v, ns) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if type(value) is list:
        return "[" + ", ".join(_call_text(v, ns) for v in value) + "]"
    return ns.expr(value)


def _recorded_call_line(eq: Any, ns: Namespace) -> str | None:
    """``np.greater(x, 0)``: a NumPy call recorded without a rule, as the user wrote it
    (``None`` when its function is not NumPy's or wengert's ``stop_gradient``)."""
    impl = eq.op.impl
    func = impl.func
    name = getattr(func, "__name__", "")
    if impl.part is not None or not _IDENT.fullmatch(name):
        return None
    if getattr(np, name, None) is func:
        call = f"np.{name}"
    elif getattr(np.linalg, name, None) is func:
        call = f"np.linalg.{name}"
    elif name == "stop_gradient" and getattr(func, "__module__", "").startswith("wengert"):
        ns.imports.add("from wengert import stop_gradient")
        ns.values["stop_gradient"] = func
        call = "stop_gradient"
    else:
        return None
    leaves = list(impl.fixed)
    for k, v in zip(impl.positions, eq.ins):
        leaves[k] = _Code(_name(v, ns, False))
    args, kwargs = unflatten(impl.spec, leaves)
    parts = [_call_text(a, ns) for a in args]
    parts += [f"{k}={_call_text(v, ns)}" for k, v in kwargs.items()]
    return f"{call}({', '.join(parts)})"


#: The NumPy call that gives all the parts of a decomposition at once, as its primitives
#: compute them, by the parts' records in order (each declared beside its parts:
#: ``ops.base.Joint``).
JOINT_FORMS = {joint.parts: joint.numpy for joint in JOINTS if joint.numpy is not None}


def _parts_line(eq: Any, ns: Namespace) -> str:
    """The right-hand side of an equation with several outputs (a decomposition):
    ``np.linalg.eigh(hermitian_part(t1), UPLO='L')``, or one call per part
    (``op.qr_q(t3), op.qr_r(t3), op.qr_completion(t3)``) where NumPy has no single
    call for these parts."""
    form = JOINT_FORMS.get(eq.ops)
    if form is not None and len(eq.ins) == 1:
        x = _name(eq.ins[0], ns, False)
        h = f"{ns.use_runtime('hermitian_part')}({x})" if "{h}" in form else ""
        return form.format(x, h=h, uplo=eq.params.get("uplo", "L"))
    args = [_name(v, ns, False) for v in eq.ins]
    args += [f"{k}={ns.expr(v)}" for k, v in eq.params.items()]
    return ", ".join(f"{_op_call(op, ns)}({', '.join(args)})" for op in eq.ops)


def _array_line(eq: Any, ns: Namespace, into: Any = None, scalar: bool = False) -> str:
    if len(eq.outs) > 1:
        return _parts_line(eq, ns)
    if ns.float_equation(eq):  # floats in, a float out: as eager mode computed it
        return _fallback_line(eq, ns)
    if is_recorded_call(eq.op):
        line = _recorded_call_line(eq, ns)
        if line is not None:
            return line
    args = [_name(v, ns, scalar) for v in eq.ins]
    args += [f"{k}={ns.expr(v)}" for k, v in eq.params.items()]
    call = _op_call(eq.op, ns)
    if into is not None and (call.startswith("np.") or _kernel(eq.op) is not None):
        args.append(f"out={ns.var(into)}")  # the memory plan: a buffer that dies here
    return f"{call}({', '.join(args)})"


def _kernel(op: Any) -> str | None:
    """A fused op's kernel source (:class:`wengert.graph.passes.fuse.FusedOp`), or None."""
    return getattr(op, "kernel_source", None)


def _guard_lines(guards: list[Any], var: str, ns: Namespace, indent: str) -> list[str]:
    lines = []
    for g in guards:
        gname = ns.constant(g, "guard")
        ns.defs[gname] = f"# {gname}: {g.how}({g.var.name}) == {g.expected!r} at {g.where()}, " \
                         "passed in by Graph.namespace()"
        ns.use_runtime("GuardFailed")
        e = g.expected
        if g.how == "shape":  # a NumPy call whose result's shape depends on the values
            test = f"np.shape({var}) != {e!r}"
        elif g.how == "bool":
            test = f"not {var}" if e else f"{var}"
        elif g.how == "int" and g.var.dtype.kind not in "iub":  # int(x) of a float: 2
            test = f"int({var}) != {e!r}"                         # for 2.7 and 2.2 too
        elif isinstance(e, float) and e != e:
            test = f"{var} == {var}"  # expected NaN
        elif type(e) is float and e == 0.0:  # 0.0 and -0.0 compare equal but divide apart
            ns.imports.add("import math")
            ns.values["math"] = math
            sign = "1.0" if math.copysign(1.0, e) > 0 else "-1.0"
            test = f"{var} != 0.0 or math.copysign(1.0, {var}) != {sign}"
        else:
            test = f"{var} != {ns.expr(e)}"
        lines.append(f"{indent}if {test}:")
        lines.append(f"{indent}    raise GuardFailed({gname}, {var})")
    return lines


def _comment(eq: Any, previous: Any) -> str:
    """``# sin``, with the user's line when it is not the previous equation's."""
    text = f"# {eq.primitive}"
    src = eq.source
    if src is not None and src.text and src != previous:
        text += f"  (line {src.lineno}: {src.text})"
    return text


#: Graphs with more equations are written as blocks of this many equations, each its
#: own function passing shared values through a list: CPython compiles ~12 µs per line
#: either way, but a single function of 10^6 lines needs several GB to compile.
BLOCK = 50_000


def _body(graph: Any, ns: Namespace, scalar: bool, name: str, comments: bool = True
          ) -> list[str]:
    """The function's lines; a ``def`` line starts each function (the first is ``name``)."""
    guards: dict[int, list[Any]] = {}
    for g in graph.guards:
        guards.setdefault(id(g.var), []).append(g)
    ns.reserve(graph)
    if len(graph.equations) > BLOCK:
        return _blocks(graph, ns, scalar, name, comments, guards)
    params = ", ".join(ns.var(v) for v in graph.inputs)
    indent = "    "
    head = [f"def {name}({params}):"]
    for v in graph.inputs:
        head += _guard_lines(guards.get(id(v), []), ns.var(v), ns, indent)
    outs = _outputs(graph, [_name(v, ns, scalar) for v in graph.outputs], ns, scalar)
    end = f"{indent}return {_tuple(outs)}"
    if not scalar:
        return head + _equation_lines(graph.equations, ns, "arrays", comments, guards, indent,
                                      _plan(graph, scalar)) + [end]
    fast, again = _float_lines(graph.equations, ns, comments, guards, indent,
                               [f"{indent}    return {name}_fallback({params})"])
    if again is None:
        return head + fast + [end]
    return head + fast + [end] + _function(ns, f"{name}_fallback({params})",
                                           lambda: again() + [end])


def _function(ns: Namespace, signature: str, body: Callable[[], list[str]]) -> list[str]:
    """The lines of ``def <signature>:`` with ``body()``; when compiling (``ns.deferred``),
    none: the function is written at its first call."""
    if ns.deferred is not None:
        ns.deferred[signature[:signature.index("(")]] = lambda: [f"def {signature}:"] + body()
        return []
    return ["", "", f"def {signature}:"] + body()


def _float_lines(equations: Any, ns: Namespace, comments: bool,
                 guards: dict[int, list[Any]], indent: str, on_error: list[str]
                 ) -> tuple[list[str], Callable[[], list[str]] | None]:
    """The float flavour's equations, in ``try`` (none when no float path can raise), with
    ``on_error`` in ``except FLOAT_ERRORS``; and the same equations as eager mode runs them
    (``fallback.<op>``: the float path, NumPy's answer where it raises), for the function
    ``on_error`` calls. Equations on NumPy scalars run under ``raise_reported()`` in ``try``
    (an ``np.errstate``), so that the first run reports nothing: a condition NumPy would
    report sends the run to the second, which reports it as eager mode does, once."""
    numpy = not all(ns.float_equation(eq) for eq in equations)
    if not numpy and all(eq.op in NEVER_RAISE for eq in equations):
        return _equation_lines(equations, ns, "floats", comments, guards, indent), None
    inner = indent + "    "
    lines = [f"{indent}try:"]
    if numpy:
        lines.append(f"{inner}with {ns.use_runtime('raise_reported')}():")
        lines += _equation_lines(equations, ns, "floats", comments, guards, inner + "    ")
    else:
        lines += _equation_lines(equations, ns, "floats", comments, guards, inner)
    errors = ns.use_runtime("FLOAT_ERRORS")
    lines.append(f"{indent}except {errors}:  # NumPy's inf or nan and its warning, as eagerly")

    def again() -> list[str]:
        return _equation_lines(equations, ns, "fallback", False, guards, indent)

    return lines + on_error, again


def _outputs(graph: Any, texts: list[str], ns: Namespace, scalar: bool = False) -> list[str]:
    """The returned values, copied where the caller would otherwise get an array it does
    not own: an input (``x * 1`` simplified to ``x``), a constant (the same array on every
    call), or a value returned twice (merged by cse); a 0-d value as the type the traced
    function returned (``float(t3)``: eagerly a Python float, where NumPy gives a
    ``float64``)."""
    inputs = {id(v) for v in graph.inputs}
    types = graph.out_types or (None,) * len(graph.outputs)
    seen: set[int] = set()
    out = []
    for v, text, t in zip(graph.outputs, texts, types):
        if type(v) is Var:
            shared = id(v) in inputs or id(v) in seen
            seen.add(id(v))
            array = v.shape != ()
            if not array and t is not None:
                text = _as_type(v, text, t, scalar and id(v) not in inputs, ns)
        else:
            shared = isinstance(v.value, np.ndarray)
            array = shared and v.value.ndim > 0
            value = v.value
            if type(value) is np.ndarray and value.ndim == 0:
                value = value[()]  # (written as the scalar it holds)
            if not array and t is not None and type(value) is not t \
                    and isinstance(value, (int, float, complex, np.generic)):
                text = _as_type(v, text, t, False, ns)
        out.append(f"{text}.copy()" if shared and array else text)
    return out


def _as_type(v: Any, text: str, t: type, known: bool, ns: Namespace) -> str:
    """``text`` (a 0-d value) as a value of type ``t`` (``as_returned(t3, float)``); as it
    is where the code already gives that type (``known``: in the float flavour a value
    traced as a Python float is one)."""
    if known and t is float and type(v) is Var and v.scalar:
        return text
    if t in (float, int, bool, complex):
        name = t.__name__
    elif t is np.ndarray:
        name = "np.ndarray"
    elif issubclass(t, np.generic) and getattr(np, t.__name__, None) is t:
        name = f"np.{t.__name__}"
    else:
        return text
    return f"{ns.use_runtime('as_returned')}({text}, {name})"


def _tuple(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"({', '.join(items)})"


def _equation_lines(equations: Any, ns: Namespace, flavour: str, comments: bool,
                    guards: dict[int, list[Any]], indent: str, plan: Any = None,
                    start: int = 0) -> list[str]:
    """One line per equation (and its guards) in ``flavour`` (``"arrays"``, ``"floats"``,
    or ``"fallback"``: each float equation as eager mode runs it); with a memory plan
    (arrays flavour), the ``out=`` buffer it names and a ``del`` of the values that die
    after it."""
    lines = []
    previous = None
    # in a ``with no_grad():`` block (equations traced inside one), or under the
    # np.errstate the traced function set (``with np.errstate(divide='ignore'):``)
    inside: tuple[bool, Any] = (False, None)
    outer = indent
    for k, eq in enumerate(equations, start):
        if eq.context is not inside[1] and eq.context == inside[1]:
            inside = (inside[0], eq.context)  # (an equal context: the same block)
        if eq.grad_off != inside[0] or eq.context is not inside[1]:
            inside = (eq.grad_off, eq.context)
            managers = []
            if eq.grad_off:
                managers.append(f"{_no_grad_name(ns)}()")
            if eq.context is not None:
                managers.append(_context_text(eq.context, ns))
            if managers:
                lines.append(f"{outer}with {', '.join(managers)}:")
            indent = outer + "    " if managers else outer
        if flavour == "floats":
            rhs = _scalar_line(eq, ns)
        elif flavour == "fallback":
            rhs = _fallback_line(eq, ns) if ns.float_equation(eq) else _scalar_line(eq, ns)
        else:
            rhs = _array_line(eq, ns, plan.into[k] if plan is not None else None)
        line = f"{indent}{', '.join(ns.var(v) for v in eq.outs)} = {rhs}"
        lines.append(f"{line}  {_comment(eq, previous)}" if comments else line)
        previous = eq.source
        for v in eq.outs:
            lines += _guard_lines(guards.get(id(v), []), ns.var(v), ns, indent)
        if plan is not None and plan.frees[k]:
            lines.append(f"{indent}del {', '.join(ns.var(v) for v in plan.frees[k])}")
    return lines


def _context_text(context: Any, ns: Namespace) -> str:
    """``np.errstate(divide='ignore', ...)`` (or ``ctx0()``, a context with warning filters,
    from :meth:`Graph.namespace`): what the equations were traced under."""
    if context.filters is None:
        return "np.errstate(" + ", ".join(f"{k}={v!r}" for k, v in context.errstate.items()) \
            + ")"
    name = ns.constant(context, "ctx")
    ns.defs[name] = f"# {name}: {context}, passed in by Graph.namespace()"
    return f"{name}()"


def _no_grad_name(ns: Namespace) -> str:
    """``no_grad``, imported from wengert: run on tensors, the block records nothing, as
    when it was traced (on arrays it costs one context switch)."""
    ns.imports.add("from wengert import no_grad")
    ns.values["no_grad"] = no_grad
    return "no_grad"


def _plan(graph: Any, scalar: bool) -> Any:
    """The graph's memory plan when it holds for these equations (arrays flavour only)."""
    plan = getattr(graph, "plan", None)
    if plan is None or scalar or plan.equations is not graph.equations:
        return None
    return plan


def _blocks(graph: Any, ns: Namespace, scalar: bool, name: str, comments: bool,
            guards: dict[int, list[Any]]) -> list[str]:
    """A long graph as block functions that pass the values they share through ``env``,
    a list (a slot per shared value, cleared after its last reader)."""
    eqs = graph.equations
    n_blocks = (len(eqs) + BLOCK - 1) // BLOCK
    home: dict[int, int] = {id(v): -1 for v in graph.inputs}  # -1: the main function
    for k, eq in enumerate(eqs):
        for v in eq.outs:
            home[id(v)] = k // BLOCK
    last: dict[int, int] = {}  # shared value -> the last block that reads it
    reads: list[dict[int, Any]] = [{} for _ in range(n_blocks)]  # block -> values from env
    for k, eq in enumerate(eqs):
        b = k // BLOCK
        for v in eq.ins:
            if type(v) is Var and home[id(v)] != b:
                reads[b][id(v)] = v
                last[id(v)] = max(last.get(id(v), -1), b)
    returned = {id(v) for v in graph.outputs if type(v) is Var}
    for v in graph.outputs:
        if type(v) is Var and home[id(v)] >= 0:
            last[id(v)] = n_blocks  # read by the main function
    slot = {key: k for k, key in enumerate(last)}
    writes: list[list[Any]] = [[] for _ in range(n_blocks)]
    for k, eq in enumerate(eqs):
        for v in eq.outs:
            if id(v) in slot:
                writes[k // BLOCK].append(v)
    indent = "    "
    lines = [f"def {name}({', '.join(ns.var(v) for v in graph.inputs)}):",
             f"{indent}env = [None] * {len(slot)}"]
    for v in graph.inputs:
        lines += _guard_lines(guards.get(id(v), []), ns.var(v), ns, indent)
        if id(v) in slot:
            lines.append(f"{indent}env[{slot[id(v)]}] = {ns.var(v)}")
    lines += [f"{indent}{name}_block{b}(env)" for b in range(n_blocks)]
    outs = _outputs(graph, [f"env[{slot[id(v)]}]" if type(v) is Var and home[id(v)] >= 0
                            else _name(v, ns, scalar) for v in graph.outputs], ns, scalar)
    lines.append(f"{indent}return {_tuple(outs)}")
    for b in range(n_blocks):
        block = eqs[b * BLOCK:(b + 1) * BLOCK]
        read = [f"{indent}{ns.var(v)} = env[{slot[key]}]" for key, v in reads[b].items()]
        done = [f"{indent}env[{slot[key]}] = None  # last read" for key in reads[b]
                if last[key] == b and key not in returned]
        write = [f"{indent}env[{slot[id(v)]}] = {ns.var(v)}" for v in writes[b]]
        lines += ["", "", f"def {name}_block{b}(env):"] + read
        if not scalar:
            lines += done + _equation_lines(block, ns, "arrays", comments, guards, indent,
                                            _plan(graph, scalar), b * BLOCK) + write
            continue
        # (the values read are cleared after the equations: a fallback reads them again)
        fast, again = _float_lines(block, ns, comments, guards, indent,
                                   [f"{indent}    {name}_block{b}_fallback(env)",
                                    f"{indent}    return"])
        lines += fast + write + done
        if again is not None:
            lines += _function(ns, f"{name}_block{b}_fallback(env)",
                               lambda again=again, read=read, write=write, done=done:
                               read + again() + write + done)
    return lines


def _function_name(graph: Any) -> str:
    name = graph.name if _IDENT.fullmatch(graph.name) and not keyword.iskeyword(graph.name) \
        else "f"
    return name


def _flavour(graph: Any, scalar: bool | None) -> bool:
    return is_scalar_program(graph) if scalar is None else scalar


def to_source(graph: Any, scalar: bool | None = None) -> str:
    """The Python source of ``graph``: imports and constants, then one line per equation.

    Parameters
    ----------
    graph : Graph
    scalar : bool, optional
        Write the float flavour (``math``, operators); by default when the graph is a
        scalar program (:func:`is_scalar_program`).

    Returns
    -------
    str
        Executable: ``exec(source, namespace(graph))`` defines the function (values that
        cannot be written as source, such as large constant arrays, come from
        :func:`namespace`; without any, ``exec(source, {})`` is enough).
    """
    ns = Namespace()
    body = _body(graph, ns, _flavour(graph, scalar), _function_name(graph))
    return "\n".join(ns.header_lines() + ["", ""] + body) + "\n"


def namespace(graph: Any, scalar: bool | None = None) -> dict[str, Any]:
    """The free names of :func:`to_source`'s code and their values (for ``exec``)."""
    ns = Namespace()
    _body(graph, ns, _flavour(graph, scalar), _function_name(graph))
    return dict(ns.values)


def _exec(graph: Any, scalar: bool) -> tuple[Callable[..., Any], str]:
    ns = Namespace()
    ns.deferred = {}  # the fallbacks of float code: written and compiled at their first call
    name = _function_name(graph)
    lines = _body(graph, ns, scalar, name, comments=False)
    env = dict(ns.values)
    if scalar:  # the float functions become default arguments: local lookups
        bound = sorted(k for k, v in env.items() if callable(v) and not isinstance(v, type)
                       and k not in _FIXED)
        if bound:
            extra = ", ".join(f"{k}={k}" for k in bound)
            for i, line in enumerate(lines):
                if line.startswith("def "):
                    has_params = not line.endswith("():")
                    lines[i] = line[:-2] + (", " if has_params else "") + extra + "):"
    text = "\n".join(lines) + "\n"
    # One compile per function: the syntax tree of a 10^6-equation program compiled at
    # once takes tens of GB; per block it is a few hundred MB at a time. The fallbacks of
    # float code are written and compiled when first called (most programs never raise).
    starts = [k for k, line in enumerate(lines) if line.startswith("def ")] + [len(lines)]
    filename = f"<wengert graph {graph.name}>"
    for a, b in zip(starts, starts[1:]):
        exec(compile("\n".join(lines[a:b]) + "\n", filename, "exec"), env)
    for function, write in ns.deferred.items():
        env[function] = _compiled_when_called(function, write, ns, filename, env)
    return env[name], text


def _compiled_when_called(function: str, write: Callable[[], list[str]], ns: Namespace,
                          filename: str, env: dict[str, Any]) -> Callable[..., Any]:
    """A stand-in for ``function`` (whose lines ``write`` gives) that writes and compiles
    it on its first call, puts it in its place in ``env`` and calls it."""
    lock = threading.Lock()

    def first_call(*args: Any) -> Any:
        with lock:
            if env[function] is first_call:
                chunk = "\n".join(write()) + "\n"
                for k, v in ns.values.items():  # (names the lines bound)
                    env.setdefault(k, v)
                exec(compile(chunk, filename, "exec"), env)
        return env[function](*args)

    return first_call


def compile_graph(graph: Any) -> Callable[..., Any]:
    """A function of the graph's flat inputs that returns its flat outputs (one value for
    one output, else a tuple), compiled from :func:`to_source`'s code (the float flavour
    for a program of Python floats)."""
    return _exec(graph, is_scalar_program(graph))[0]
