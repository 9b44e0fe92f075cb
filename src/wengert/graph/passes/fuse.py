"""Fusion: a chain or tree of elementwise ops becomes one generated kernel.

:func:`fuse` groups elementwise equations (``sin``, ``+``, ``*``, ``where``,
comparisons ...) whose intermediate values are used by nothing but the next op
of the group, and replaces each group by one equation. Its op is a
:class:`FusedOp` whose forward is a small generated Python function: NumPy
ufuncs writing into preallocated ``out=`` buffers, so the group writes its
result array and no intermediate one. The kernel's source is kept on the op
(``op.kernel_source``), readable and printable next to the graph's code.

Why NumPy with ``out=`` and not numexpr: ``benchmarks/graph_memory.py`` times
an 8-op chain on 10⁶ float64 values. Eager NumPy allocates (and page-faults)
a fresh array per op and streams it through memory; the kernel reuses
buffers and, for large arrays, walks the output in chunks of
:data:`CHUNK_ELEMENTS` elements so that the intermediates stay in cache. It
gives the same bits as eager NumPy (the same ufunc loops run). numexpr was
measured too: no faster on this machine, and its ``sin``/``exp``/``tanh`` differ
from NumPy's in the last bit, so a fused graph would no longer compute what
the traced code computes. See the benchmark's output for the numbers.

Limits
------
* Fusion runs last, on a graph that already holds its gradient: a
  :class:`FusedOp` has no derivative, so ``wg.grad_graph`` of a fused graph is
  not supported (differentiating through a fused kernel raises a ``TypeError``
  that says to fuse after differentiating).
* Scalar programs (every value a Python float, see
  :func:`~wengert.graph.backends.codegen.is_scalar_program`) are left as they are: their
  float code is faster unfused.
* Values of shape ``()`` are not fused (the kernel would turn a NumPy scalar
  into a 0-d array); ``sinc`` is not fused (``np.sinc`` has no ``out=``).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x, y: np.tanh(x * y + 0.5), np.ones(3), np.ones(3),
...              source_lines=False)
>>> fused = fuse(g)
>>> print(fused)
graph f(x: f64[3], y: f64[3]):
    t2: f64[3] = fused_mul_add_tanh(x, y)
    return t2
>>> print(fused.equations[0].op.kernel_source)
def fused_mul_add_tanh(x0, x1, out=None):
    \"\"\"out = tanh(x0 * x1 + 0.5)\"\"\"
    if out is None:
        out = np.empty((3,), dtype=np.float64)
    s0 = np.empty((3,), dtype=np.float64)
    np.multiply(x0, x1, out=s0)
    np.add(s0, 0.5, out=s0)
    np.tanh(s0, out=out)
    return out
<BLANKLINE>
>>> np.array_equal(fused(np.arange(3.0), np.ones(3)), g(np.arange(3.0), np.ones(3)))
True
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from wengert.core.forms import EquationView, Kernel
from wengert.core.op import Op
from wengert.core.tree import unflatten
from wengert.graph.backends.codegen import is_scalar_program
from wengert.graph.ir import Equation, Literal, Var
from wengert.graph.passes.rewrite import PassReport, add_report
from wengert.graph.tracer import is_recorded_call
from wengert.ops import FAMILIES

__all__ = ["fuse", "FusedOp", "fused_kernels", "fusable", "CHUNK_ELEMENTS", "SPECIAL_WRITERS",
           "NOT_FUSED", "FUSABLE"]

#: Elements per chunk of a large kernel: each intermediate buffer holds one chunk
#: (16384 float64 values, 128 KiB), so a chain runs in the CPU's cache.
CHUNK_ELEMENTS = 16384

#: The elementwise ops of the registry, those of the families made ``fusable``: the
#: candidates for fusion.
FUSABLE: tuple[Op, ...] = tuple(op for family in FAMILIES if family.FAMILY.fusable
                                for op in family.FAMILY.ops)
_ELEMENTWISE = frozenset(id(op) for op in FUSABLE)

#: The ufuncs that are no op's forward, whose calls a graph records without a rule
#: (comparisons, logic): the short name each has in a kernel's name and its Python
#: operator in the formula (the ops' own are declared on their records: ``kernel=``,
#: ``spelling=``).
_RECORDED_UFUNCS: dict[np.ufunc, tuple[str, str | None]] = {
    np.greater: ("gt", ">"), np.greater_equal: ("ge", ">="), np.less: ("lt", "<"),
    np.less_equal: ("le", "<="), np.equal: ("eq", "=="), np.not_equal: ("ne", "!="),
    np.logical_and: ("and", None), np.logical_or: ("or", None), np.logical_not: ("not", None)}
#: Python's binary operators as the formula writes them: their precedence (``**`` binds
#: tightest, comparisons loosest).
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "//": 2, "**": 4, ">": 0, ">=": 0,
               "<": 0, "<=": 0, "==": 0, "!=": 0}
_ATOM = 9
_NAME_PIECES = 6
#: A part of a kernel's formula longer than this is written ``…`` in the parts around
#: it (each part's text is kept while the formula is built: a chain of 10⁵ steps would
#: hold 10⁵ texts of up to 10⁵ characters).
MAX_FORMULA_CHARS = 200


class FusedOp(Op):
    """The op of a fused group: its forward is a generated kernel.

    Attributes
    ----------
    kernel_source : str
        The kernel's Python source: ``def <name>(x0, x1, ..., out=None): ...``, NumPy
        ufuncs writing into ``out=`` buffers. Its only free name is ``np``.
    kernel_globals : dict
        The names the kernel needs (``{"np": numpy}``).
    members : tuple of str
        The names of the fused ops, in execution order.
    out_aliases : tuple of int
        The kernel inputs that may share memory with ``out``: passing one of them
        as ``out=`` (a buffer that dies here) gives the same result.

    ``impl(*inputs, out=None)`` returns the group's result: a new array, or ``out``.
    Fusion runs after differentiation: the op has no derivative, and its VJP "rules"
    raise a ``TypeError`` that says so (a gradient would otherwise silently be zero);
    forward mode refuses it as any op without a JVP rule.
    """

    __slots__ = ("kernel_source", "kernel_globals", "members", "out_aliases")

    def __init__(self, name: str, source: str, nin: int, members: Sequence[str],
                 out_aliases: Sequence[int], formula: str, symbol: str) -> None:
        namespace: dict[str, Any] = {"np": np}
        exec(compile(source, f"<wengert kernel {name}>", "exec"), namespace)
        impl = namespace.pop(name)
        refuse = _no_gradient(name)
        super().__init__(name, impl, (refuse,) * nin, symbol=symbol, formula=formula)
        self.kernel_source = source
        self.kernel_globals = {"np": np}
        self.members = tuple(members)
        self.out_aliases = tuple(out_aliases)

    def __repr__(self) -> str:
        return f"FusedOp({self.name!r})"


def _no_gradient(name: str) -> Callable[..., Any]:
    def no_gradient(g: Any, ans: Any, *inputs: Any) -> Any:
        raise TypeError(
            f"{name} is a fused kernel (wengert.graph.passes.fuse), which has no gradient "
            "rule: differentiate first, then fuse the gradient graph "
            "(fuse(wg.trace(wg.grad(f), ...))), not the other way round.")

    no_gradient.__name__ = f"no_gradient_{name}"
    return no_gradient


# -- what each elementwise op writes into a buffer ----------------------------------------
class _Writer:
    """How one elementwise equation writes its value into an ``out=`` buffer.

    ``lines(args, out)`` gives the kernel's lines; ``inplace`` the input positions that
    may share the output's buffer (read before it is first written, or by one ufunc
    call); ``piece`` names the op in the kernel's name; ``expr`` writes the formula.
    """

    __slots__ = ("lines", "inplace", "piece", "expr", "nin")

    def __init__(self, lines: Callable[[list[str], str], list[str]], inplace: frozenset[int],
                 piece: str, expr: Callable[[list[tuple[str, int]]], tuple[str, int]],
                 nin: int = -1) -> None:
        self.lines = lines
        self.inplace = inplace
        self.piece = piece
        self.expr = expr
        self.nin = nin  # the inputs a cached ufunc writer takes


def _call_expr(name: str) -> Callable[[list[tuple[str, int]]], tuple[str, int]]:
    def expr(args: list[tuple[str, int]]) -> tuple[str, int]:
        return f"{name}({', '.join(a for a, _ in args)})", _ATOM

    return expr


def _infix_expr(symbol: str, prec: int) -> Callable[[list[tuple[str, int]]], tuple[str, int]]:
    def expr(args: list[tuple[str, int]]) -> tuple[str, int]:
        (a, pa), (b, pb) = args
        right_assoc = symbol == "**"  # written as computed: (a - b) - c, a - (b - c)
        if pa < prec or (pa == prec and right_assoc):
            a = f"({a})"
        if pb < prec or (pb == prec and not right_assoc):
            b = f"({b})"
        return f"{a} {symbol} {b}", prec

    return expr


def _negative_expr(args: list[tuple[str, int]]) -> tuple[str, int]:
    a, pa = args[0]
    return (f"-({a})" if pa < 4 else f"-{a}"), 3


def _expr(spelling: str | None, name: str) -> Callable[[list[tuple[str, int]]], tuple[str, int]]:
    """How the formula writes an op spelled ``spelling`` (an operator of Python's) or
    called ``name``."""
    if spelling == "unary -":
        return _negative_expr
    if spelling in _PRECEDENCE:
        return _infix_expr(spelling, _PRECEDENCE[spelling])
    return _call_expr(name)


def _ufunc_writer(ufunc: np.ufunc, name: str, piece: str, spelling: str | None) -> _Writer:
    """The writer of ``ufunc``: one call of it (called ``name`` in formulas, ``piece`` in
    the kernel's name; ``spelling`` its Python operator, if any)."""
    fname = ufunc.__name__

    def lines(args: list[str], out: str) -> list[str]:
        return [f"np.{fname}({', '.join(args)}, out={out})"]

    return _Writer(lines, frozenset(range(ufunc.nin)), piece, _expr(spelling, name), ufunc.nin)


def _declared_writer(op: Op, kernel: Kernel, eq: Equation) -> _Writer:
    """The writer an op declares (``Op(kernel=Kernel(lines, ...))``), for ``eq``."""
    declared = kernel.lines
    seen = EquationView(eq)

    def lines(args: list[str], out: str) -> list[str]:
        return declared(args, out, seen)  # type: ignore[misc]

    inplace = range(len(eq.ins)) if kernel.inplace is None else kernel.inplace
    return _Writer(lines, frozenset(inplace), kernel.piece or op.name,
                   _expr(op.spelling, op.name))


def _numpy_ufunc(f: Any) -> np.ufunc | None:
    """``f`` when it is a NumPy ufunc reachable as ``np.<name>`` with one output."""
    if isinstance(f, np.ufunc) and f.nout == 1 and getattr(np, f.__name__, None) is f:
        return f
    return None


#: The elementwise ops whose kernel lines are not one call of their ufunc: each declares
#: how it writes an equation beside it (``Op(kernel=Kernel(lines, ...))``); every other
#: elementwise op's forward is a NumPy ufunc, or it is in :data:`NOT_FUSED`.
SPECIAL_WRITERS: dict[Op, Kernel] = {
    op: op.kernel for op in FUSABLE if op.kernel is not None and op.kernel.lines}
#: The elementwise ops left out of kernels, and why (each op's ``kernel_refused``).
NOT_FUSED: dict[Op, str] = {
    op: op.kernel_refused for op in FUSABLE if op.kernel_refused is not None}
#: The elementwise op of each NumPy ufunc that is one's forward or namesake (``np.power``:
#: ``power``): a recorded call of the ufunc is named as the op declares (its ``kernel``
#: piece, its ``spelling``).
_OP_OF_UFUNC: dict[np.ufunc, Op] = {
    **{getattr(np, op.name): op for op in FUSABLE
       if isinstance(getattr(np, op.name, None), np.ufunc)},
    **{op.impl: op for op in FUSABLE if isinstance(op.impl, np.ufunc)}}


def _recorded_ufunc(op: Any) -> np.ufunc | None:
    """The ufunc of an op recorded for a NumPy call ``np.greater(a, b)`` (positional
    traced inputs only, no keyword), else None."""
    impl = op.impl
    func = getattr(impl, "func", None)
    ufunc = _numpy_ufunc(func)
    if ufunc is None or getattr(impl, "part", None) is not None:
        return None
    positions = getattr(impl, "positions", None)
    fixed = getattr(impl, "fixed", None)
    spec = getattr(impl, "spec", None)
    if positions is None or fixed is None or len(positions) != ufunc.nin \
            or list(positions) != list(range(len(fixed))):
        return None
    try:
        args, kwargs = unflatten(spec, list(range(len(fixed))))
    except Exception:  # noqa: BLE001 - an unusual call: not fused
        return None
    if kwargs or tuple(args) != tuple(range(ufunc.nin)):
        return None
    return ufunc


def _recorded_writer(ufunc: np.ufunc) -> _Writer:
    """The writer of a recorded call of ``ufunc`` (called by its own name in formulas)."""
    name = ufunc.__name__
    op = _OP_OF_UFUNC.get(ufunc)
    if op is not None:
        kernel = op.kernel
        return _ufunc_writer(ufunc, name, kernel.piece if kernel and kernel.piece else name,
                             op.spelling)
    piece, spelling = _RECORDED_UFUNCS.get(ufunc, (name, None))
    return _ufunc_writer(ufunc, name, piece, spelling)


def _writer(eq: Equation, cache: dict[int, _Writer | None] | None = None) -> _Writer | None:
    """How ``eq`` is written in a kernel, or None when it cannot be fused. ``cache`` keeps
    the writers of ops whose writer does not depend on the equation (ufuncs)."""
    op = eq.op
    out = eq.out
    if out.scalar or out.shape == () or len(eq.ins) == 0 or eq.grad_off \
            or eq.context is not None or len(eq.outs) > 1:  # (a decomposition: never fused)
        return None
    key = id(op)
    if cache is not None and key in cache:
        w = cache[key]
        return w if w is not None and not eq.params and w.nin == len(eq.ins) else None
    if key in _ELEMENTWISE:
        kernel = op.kernel
        if eq.params and set(eq.params) - (kernel.params if kernel else frozenset()):
            return None
        if kernel is not None and kernel.lines is not None:
            return _declared_writer(op, kernel, eq)
        ufunc = None if op.kernel_refused else _numpy_ufunc(op.impl)
        piece = kernel.piece if kernel is not None and kernel.piece else op.name
        writer = None if ufunc is None else _ufunc_writer(ufunc, op.name, piece, op.spelling)
    elif is_recorded_call(op):
        ufunc = _recorded_ufunc(op)
        writer = None if ufunc is None else _recorded_writer(ufunc)
    else:
        writer = None
    if cache is not None:
        cache[key] = writer
    return writer if writer is not None and not eq.params and writer.nin == len(eq.ins) \
        else None


def fusable(eq: Equation) -> bool:
    """Whether :func:`fuse` can put ``eq`` in a kernel: an elementwise op of the registry
    (or a recorded NumPy ufunc call) with an output of at least one dimension.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(lambda x: np.sum(np.sin(x) > 0.5), np.ones(3))
    >>> [(eq.op.name, fusable(eq)) for eq in g]
    [('sin', True), ('greater', True), ('sum', False)]
    """
    return _writer(eq) is not None


# -- grouping --------------------------------------------------------------------------
def _groups(graph: Any, writers: list[_Writer | None]) -> list[list[int]]:
    """The fused groups (equation indices in order, the root last), of two or more."""
    eqs = graph.equations
    n = len(eqs)
    consumer: dict[int, int] = {}  # id(var) -> its one consuming equation, or -1
    for i, eq in enumerate(eqs):
        for v in eq.ins:
            if type(v) is Var:
                c = consumer.get(id(v))
                if c is None:
                    consumer[id(v)] = i
                elif c != i:
                    consumer[id(v)] = -1
    for v in graph.outputs:
        if type(v) is Var:
            consumer[id(v)] = -1
    for g in graph.guards:
        consumer[id(g.var)] = -1
    root = list(range(n))
    for i in range(n - 1, -1, -1):  # consumers come later: their root is known
        if writers[i] is None:
            continue
        c = consumer.get(id(eqs[i].out), -1)
        if c > i and writers[c] is not None:
            root[i] = root[c]
    members: dict[int, list[int]] = {}
    for i in range(n):
        if writers[i] is not None:
            members.setdefault(root[i], []).append(i)
    return [m for m in members.values() if len(m) > 1]


# -- kernel generation ----------------------------------------------------------------
@functools.cache
def _dtype_code(dtype: np.dtype) -> str:
    t = getattr(np, dtype.name, None)
    if isinstance(t, type) and np.dtype(t) == dtype and dtype.isnative:
        return f"np.{dtype.name}"
    return f"np.dtype({dtype.str!r})"


def _bakeable(value: Any) -> bool:
    t = type(value)
    return t is bool or t is int or (t is float and math.isfinite(value))


def _shape_code(shape: tuple[int, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"


class _Kernel:
    """The source of one group's kernel, built member by member."""

    def __init__(self, eqs: list[Equation], writers: list[_Writer], chunk: int) -> None:
        self.eqs = eqs
        self.writers = writers
        self.root = eqs[-1].out
        self.params: list[Var | Literal] = []  # the fused equation's inputs
        self.reads: dict[int, list[tuple[int, int]]] = {}  # param -> (member, position)
        shape = self.root.shape
        rows = max(1, chunk // max(math.prod(shape[1:]), 1))
        chunked = chunk > 0 and math.prod(shape) >= 4 * chunk and shape[0] > rows
        self.rows = rows if chunked else 0  # rows per chunk (0: one pass, no chunks)
        self.sliced: set[int] = set()  # inputs read a chunk at a time

    def chunked_shape(self, shape: tuple[int, ...]) -> bool:
        """Whether a value of ``shape`` is cut into chunks of rows (has the root's rows)."""
        root = self.root.shape
        return bool(self.rows) and len(shape) == len(root) and shape[0] == root[0]

    def build(self, name: str) -> tuple[str, str, tuple[int, ...]]:
        args_of, formula = self._args()
        body = self._body(args_of)
        params = ", ".join(f"x{p}" for p in range(len(self.params)))
        head = [f"def {name}({params}, out=None):", f'    """out = {formula}"""',
                "    if out is None:",
                f"        out = np.empty({_shape_code(self.root.shape)}, "
                f"dtype={_dtype_code(self.root.dtype)})"]
        if self.rows:
            # Chunk by chunk, a condition NumPy reports (invalid, divide by zero,
            # overflow) would warn once per chunk: the chunks run where it raises, and
            # then the steps run again over the whole arrays, warning once each (or
            # raising) as eagerly. (So no input may be ``out``: the chunks wrote it.)
            whole = _Kernel(self.eqs, self.writers, 0)
            body = ["    try:",
                    '        with np.errstate(divide="raise", over="raise", invalid="raise"):'] \
                + [f"        {line}" for line in body] \
                + ["    except FloatingPointError:  # once over the whole arrays, as eagerly"] \
                + [f"    {line}" for line in whole._body(whole._args()[0])]
        source = "\n".join(head + body + ["    return out"]) + "\n"
        return source, formula, () if self.rows else self._out_aliases()

    def _args(self) -> tuple[list[list[str]], str]:
        """Each member's arguments (``@k``: member ``k``'s value, ``%p``: input ``p``, or
        a literal's source), and the group's formula."""
        inside = {id(eq.out): k for k, eq in enumerate(self.eqs)}
        param_of: dict[int, int] = {}
        args_of: list[list[str]] = []
        exprs: list[tuple[str, int]] = []
        for k, eq in enumerate(self.eqs):
            args: list[str] = []
            pieces: list[tuple[str, int]] = []
            for pos, v in enumerate(eq.ins):
                if type(v) is Var and id(v) in inside:
                    args.append(f"@{inside[id(v)]}")
                    pieces.append(exprs[inside[id(v)]])
                    continue
                if type(v) is Literal and _bakeable(v.value):
                    args.append(repr(v.value))
                    pieces.append((repr(v.value), _ATOM))
                    continue
                key = id(v) if type(v) is Var else id(v.value)
                p = param_of.get(key)
                if p is None:
                    p = param_of[key] = len(self.params)
                    self.params.append(v)
                self.reads.setdefault(p, []).append((k, pos))
                args.append(f"%{p}")
                pieces.append((f"x{p}", _ATOM))
            args_of.append(args)
            expr = self.writers[k].expr(pieces)
            exprs.append(expr if len(expr[0]) <= MAX_FORMULA_CHARS else ("…", _ATOM))
        return args_of, expr[0]

    def _out_aliases(self) -> tuple[int, ...]:
        """Inputs that may be passed as ``out``: the root is the only step writing
        ``out``, so an input of the output's shape and dtype may, unless the root reads it
        at a position its writer does not allow to share (``where``'s ``x``)."""
        last = len(self.eqs) - 1
        ok = []
        for p, v in enumerate(self.params):
            if type(v) is not Var or v.shape != self.root.shape or v.dtype != self.root.dtype:
                continue
            if all(k < last or pos in self.writers[last].inplace for k, pos in self.reads[p]):
                ok.append(p)
        return tuple(ok)

    def _body(self, args_of: list[list[str]]) -> list[str]:
        eqs = self.eqs
        last = len(eqs) - 1
        slot_of: dict[int, str] = {}
        free: dict[tuple[Any, ...], list[str]] = {}
        allocs: list[str] = []
        views: list[str] = []  # the last chunk is shorter: chunk buffers are cut to it
        tail = bool(self.rows) and self.root.shape[0] % self.rows != 0
        top: list[str] = []
        loop: list[str] = []
        count = 0
        for k, eq in enumerate(eqs):
            chunked = self.chunked_shape(eq.out.shape)
            args = [self._operand(a, slot_of, chunked) for a in args_of[k]]
            dying = [int(a[1:]) for a in args_of[k] if a.startswith("@")]
            if k == last:
                target = "out[i:j]" if self.rows else "out"
            else:
                key = (eq.out.shape, eq.out.dtype.str, chunked)
                target = ""
                inplace = self.writers[k].inplace
                for m in dying:
                    positions = [p for p, a in enumerate(args_of[k]) if a == f"@{m}"]
                    if (eqs[m].out.shape, eqs[m].out.dtype.str, chunked) == key \
                            and all(p in inplace for p in positions):
                        target = slot_of[m]
                        dying = [d for d in dying if d != m]
                        break
                if not target:
                    pool = free.get(key)
                    if pool:
                        target = pool.pop()
                    else:
                        buf = f"s{count}"
                        count += 1
                        shape = eq.out.shape
                        if chunked:
                            shape = (min(self.rows, shape[0]),) + shape[1:]
                        full = f"{buf}_all" if chunked and tail else buf
                        allocs.append(f"    {full} = np.empty({_shape_code(shape)}, "
                                      f"dtype={_dtype_code(eq.out.dtype)})")
                        if full != buf:
                            views.append(f"{buf} = {full}[:j - i]")
                        target = buf
                slot_of[k] = target
            for m in set(dying):
                if self.chunked_shape(eqs[m].out.shape) != chunked:
                    continue  # computed before the loop, read in every chunk: kept
                free.setdefault((eqs[m].out.shape, eqs[m].out.dtype.str, chunked),
                                []).append(slot_of[m])
            lines = self.writers[k].lines(args, target)
            (loop if chunked else top).extend(lines)
        body = list(allocs) + [f"    {line}" for line in top]
        if self.rows:
            n = self.root.shape[0]
            body.append(f"    for i in range(0, {n}, {self.rows}):")
            body.append(f"        j = min(i + {self.rows}, {n})" if tail
                        else f"        j = i + {self.rows}")
            cuts = [f"c{p} = x{p}[i:j]" for p in sorted(self.sliced)]
            body += [f"        {line}" for line in views + cuts + loop]
        return body

    def _operand(self, arg: str, slot_of: dict[int, str], chunked: bool) -> str:
        if arg.startswith("@"):
            return slot_of[int(arg[1:])]
        if arg.startswith("%"):
            p = int(arg[1:])
            v = self.params[p]
            if chunked and self.chunked_shape(_aligned(v.shape, len(self.root.shape))):
                self.sliced.add(p)
                return f"c{p}"  # x{p}[i:j], cut once per chunk
            return f"x{p}"
        return arg


def _aligned(shape: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    """``shape`` as broadcasting sees it under an output of ``ndim`` dimensions (an input
    of fewer dimensions has no row axis)."""
    return shape if len(shape) == ndim else ()


_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")
_PLACEHOLDER = "KERNEL"


def _kernel_name(pieces: list[str]) -> str:
    pieces = [_NOT_IDENT.sub("_", p) for p in pieces]
    if len(pieces) > _NAME_PIECES:
        more = len(pieces) - _NAME_PIECES + 1
        pieces = pieces[:_NAME_PIECES - 1] + [f"and_{more}_more"]
    return "fused_" + "_".join(pieces)


def _symbol(writers: list[_Writer]) -> str:
    names = [w.piece for w in writers]
    if len(names) > _NAME_PIECES:
        names = names[:_NAME_PIECES - 1] + ["…"]
    return "⟨" + " ".join(names) + "⟩"


# -- the pass --------------------------------------------------------------------------
def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n



def fuse(graph: Any, *, reports: list[PassReport] | None = None,
         chunk_elements: int = CHUNK_ELEMENTS, min_elements: int = 0) -> Any:
    """Fuse chains and trees of elementwise equations into one kernel each.

    A value joins the kernel of its consumer when that consumer is elementwise too and
    nothing else uses it (no other equation, not an output, no guard): every group is a
    tree whose root is the one value that leaves it. Each group of two or more becomes
    one equation of a :class:`FusedOp`, placed where the root was; its inputs are the
    group's inputs from outside (numbers are written into the kernel). Identical groups
    share one op.

    Parameters
    ----------
    graph : Graph
    reports : list of PassReport, optional
        When given, a :class:`~wengert.graph.passes.rewrite.PassReport` is appended
        (the equations each kernel holds, by kernel name).
    chunk_elements : int
        A kernel whose output has at least four times this many elements walks it in
        chunks of about this many (whole rows of its first axis); 0 never chunks.
    min_elements : int
        Leave equations with smaller outputs unfused (on small arrays a kernel saves
        nothing: NumPy's per-call cost dominates, and building kernels takes time).

    Returns
    -------
    Graph
        The same values (bit for bit: the same ufunc loops run) with fewer equations and
        no intermediate arrays inside each group. A scalar program comes back unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = wg.trace(wg.grad(lambda x: np.sum(np.sin(x) * x)), np.ones(4))
    >>> [eq.op.name for eq in g]
    ['sin', 'multiply', 'sum', 'multiply', 'multiply', 'cos', 'multiply', 'add']
    >>> f = fuse(g)
    >>> [eq.op.name for eq in f]
    ['sin', 'multiply', 'sum', 'fused_mul_mul_cos_mul_add']
    >>> x = np.linspace(0.0, 1.0, 4)
    >>> np.array_equal(f(x), g(x))
    True
    """
    n = len(graph.equations)
    if is_scalar_program(graph):
        add_report(reports, PassReport("fuse", n, n, {}, verb="fused"))
        return graph
    eqs = graph.equations
    cache: dict[int, _Writer | None] = {}
    writers = [_writer(eq, cache) if _size(eq.out.shape) >= min_elements else None
               for eq in eqs]
    groups = _groups(graph, writers)
    if not groups:
        add_report(reports, PassReport("fuse", n, n, {}, verb="fused"))
        return graph
    fused: dict[str, int] = {}
    fused_at: dict[int, Equation] = {}
    skipped: set[int] = set()
    by_body: dict[str, FusedOp] = {}  # kernel source (before naming) -> its op
    taken: dict[str, int] = {}
    for members in groups:
        group_eqs = [eqs[i] for i in members]
        group_writers = [writers[i] for i in members]
        kernel = _Kernel(group_eqs, group_writers, chunk_elements)  # type: ignore[arg-type]
        body, formula, aliases = kernel.build(_PLACEHOLDER)
        op = by_body.get(body)
        if op is None:
            base = _kernel_name([w.piece for w in group_writers])  # type: ignore[union-attr]
            k = taken.get(base, 0)
            taken[base] = k + 1
            name = base if k == 0 else f"{base}_{k + 1}"
            source = body.replace(f"def {_PLACEHOLDER}(", f"def {name}(", 1)
            op = by_body[body] = FusedOp(name, source, len(kernel.params),
                                         [eqs[i].op.name for i in members], aliases,
                                         formula, _symbol(group_writers))  # type: ignore[arg-type]
        fused[op.name] = fused.get(op.name, 0) + len(members)
        root = eqs[members[-1]]
        fused_at[members[-1]] = Equation(op, kernel.params, None, root.out, root.source)
        skipped.update(members[:-1])
    new_eqs = []
    for i, eq in enumerate(eqs):
        if i in skipped:
            continue
        new_eqs.append(fused_at.get(i, eq))
    add_report(reports, PassReport("fuse", n, len(new_eqs), fused, verb="fused"))
    return graph.replace(equations=new_eqs)


def fused_kernels(graph: Any) -> list[FusedOp]:
    """The distinct :class:`FusedOp` of ``graph``, in order of first use (what a code
    generator prints before the graph's function).

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> g = fuse(wg.trace(lambda x: np.exp(-x) + np.sin(x) * 2.0, np.ones(3)))
    >>> [op.name for op in fused_kernels(g)]
    ['fused_neg_exp_sin_mul_add']
    """
    seen: set[int] = set()
    out: list[FusedOp] = []
    for eq in graph.equations:
        op = eq.op
        if isinstance(op, FusedOp) and id(op) not in seen:
            seen.add(id(op))
            out.append(op)
    return out
