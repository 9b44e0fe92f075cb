"""The words of the explainer: how ops are called in code, why their gradient is zero or
not finite, and the fixes, including the "double where" rewritten from the user's line.

Examples
--------
>>> op_code("sqrt"), op_code("multiply"), op_code("matmul")
('np.sqrt', '*', '@')
>>> double_where("y = np.where(x > 0, np.sqrt(x), 0.0)", "sqrt")
'np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0)'
"""

from __future__ import annotations

import ast

from wengert.core.op import Op, Words
from wengert.jupyter.explainer.source import dotted_name
from wengert.ops import REGISTRY

__all__ = ["op_code", "FLAT_OPS", "SAFE_VALUE", "infinite_derivative_words", "double_where",
           "safe_value", "forward_words", "SINGULAR_OPS", "ZERO_KIND", "COPY_OPS"]

_NO_WORDS = Words()


#: The decompositions whose parts are ops of their own (``eigh``: ``eigh_values``, ...),
#: by name: one of their parts (an equation of several outputs is named by them).
_DECOMPOSITIONS = {op.part[0]: op for op in REGISTRY if op.part is not None}


def _record(name: str) -> Op | None:
    """The registry's op of this name (None for a custom rule's); for a decomposition
    (``"eigh"``), one of its parts."""
    op = REGISTRY.get(name)
    return op if op is not None else _DECOMPOSITIONS.get(name)


def _words(name: str) -> Words:
    op = _record(name)
    return _NO_WORDS if op is None or op.words is None else op.words


def _flat(op: Op) -> bool:
    """Whether every input's adjoint term is ``0`` (a derivative that is 0 wherever it
    exists: a step function)."""
    adjoint = op.adjoint
    if adjoint is None:
        return False
    terms = (adjoint,) if isinstance(adjoint, str) else adjoint
    return any(t is not None for t in terms) and all(t in ("0", None) for t in terms)


#: Ops that are flat almost everywhere (their derivative is 0 where it exists): those
#: whose every adjoint term is ``0``.
FLAT_OPS = frozenset(op.name for op in REGISTRY if _flat(op))

#: A value where each op's derivative is finite: what the "double where" puts in the
#: unselected branch (each op's ``words.safe``).
SAFE_VALUE = {op.name: op.words.safe for op in REGISTRY
              if op.words is not None and op.words.safe is not None}

#: Ops whose derivative is infinite somewhere inside or at the edge of their domain (each
#: op's ``words.derivative`` says what it is).
SINGULAR_OPS = frozenset(op.name for op in REGISTRY if op.words is not None
                         and op.words.singular)


#: Why each op that says so passes a zero gradient where others would not (each op's
#: ``words.zero``): it selects the ``"larger"`` or ``"smaller"`` operand, it is a product
#: (``"factor"``), or its rule gives 0 at a 0/0 point (``"degenerate"``).
ZERO_KIND = {op.name: op.words.zero for op in REGISTRY
             if op.words is not None and op.words.zero is not None}

#: Ops that can give an input's values back unchanged (each op's ``words.copies``): what
#: they make of a leaf may be a copy that made a non-leaf.
COPY_OPS = frozenset(op.name for op in REGISTRY if op.words is not None and op.words.copies)


def op_code(name: str) -> str:
    """How an op is written in user code: ``np.sqrt``, ``*``, ``@``, ``np.maximum`` (the
    op's ``spelling``, else ``np.<name>``); an op that is not a NumPy primitive (a
    ``wg.custom_vjp`` function) by its own name.

    Examples
    --------
    >>> op_code("maximum"), op_code("getitem"), op_code("my_rule"), op_code("eigh")
    ('np.maximum', 'indexing x[...]', 'my_rule', 'np.linalg.eigh')
    """
    op = _record(name)
    if op is None:
        return name
    return op.spelling if op.spelling is not None else f"np.{name}"


def safe_value(name: str) -> str:
    """The value the double where substitutes for the op's argument.

    Examples
    --------
    >>> safe_value("sqrt"), safe_value("arcsin")
    ('1.0', '0.0')
    """
    safe = _words(name).safe
    return "1.0" if safe is None else safe


def forward_words(name: str) -> str:
    """How op ``name`` makes a NaN or an infinity in the forward pass.

    Examples
    --------
    >>> forward_words("log")
    'the log of 0 is -inf and of a negative number NaN'
    """
    words = _words(name).nonfinite
    return words if words is not None else \
        f"`{op_code(name)}` returned a value that is not finite"


def infinite_derivative_words(name: str) -> tuple[str, str, str]:
    """For op ``name``: its derivative, where that is infinite, and the fix.

    Examples
    --------
    >>> infinite_derivative_words("log")[:2]
    ('1/x', 'x = 0')
    """
    words = _words(name)
    if words.singular:
        return (words.derivative or "its rule", words.infinite_at or "these values",
                words.fix or f"keep the arguments of `{op_code(name)}` inside its domain")
    return ("its rule", "these values", f"keep the arguments of `{op_code(name)}` inside its "
            "domain")


def where_wrapper(line: str, op: str) -> str | None:
    """When ``line`` calls no ``where``: the function it calls nearest around its call of
    ``op`` (a NumPy function wengert writes with ``where``, such as ``np.nan_to_num``);
    ``None`` when the line calls ``where`` itself, or no such function is found.

    Examples
    --------
    >>> where_wrapper("y = np.nan_to_num(np.log(x)).sum()", "log")
    'np.nan_to_num'
    >>> where_wrapper("y = np.where(x > 0, np.log(x), 0.0)", "log") is None
    True
    """
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return None
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if any(dotted_name(c.func).rsplit(".", 1)[-1] == "where" for c in calls):
        return None
    around = None  # ast.walk goes outside in: the last call found is the nearest
    for call in calls:
        name = dotted_name(call.func)
        if name and name.rsplit(".", 1)[-1] != op and any(
                _risky_argument(arg, op) is not None for arg in call.args):
            around = name
    return around


def _risky_argument(branch: ast.AST, op: str) -> tuple[ast.AST, str] | None:
    """The node of ``op`` inside ``branch`` and the field holding the argument to guard."""
    for node in ast.walk(branch):
        if isinstance(node, ast.Call) and node.args and \
                dotted_name(node.func).rsplit(".", 1)[-1] == op:
            return node, "args"
        if isinstance(node, ast.BinOp) and (
                (op == "divide" and isinstance(node.op, ast.Div))
                or (op == "power" and isinstance(node.op, ast.Pow))):
            return node, "right" if op == "divide" else "left"
    return None


def double_where(line: str, op: str) -> str | None:
    """The user's ``np.where(c, f(x), y)`` with ``f``'s argument made safe where ``c`` does
    not select it: ``np.where(c, f(np.where(c, x, safe)), y)``. ``None`` when the line has
    no such ``np.where`` call.

    Examples
    --------
    >>> double_where("r = np.where(d != 0, n / d, 0.0)", "divide")
    'np.where(d != 0, n / np.where(d != 0, d, 1.0), 0.0)'
    >>> double_where("y = np.where(x <= 0, 0.0, np.log(x))", "log")
    'np.where(x <= 0, 0.0, np.log(np.where(x <= 0, 1.0, x)))'
    """
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return None
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and len(call.args) == 3
                and dotted_name(call.func).rsplit(".", 1)[-1] == "where"):
            continue
        cond = call.args[0]
        for branch in (1, 2):
            found = _risky_argument(call.args[branch], op)
            if found is None:
                continue
            node, attr = found
            inner = node.args[0] if attr == "args" else getattr(node, attr)
            safe = ast.parse(safe_value(op), mode="eval").body
            func = call.func
            picks = [inner, safe] if branch == 1 else [safe, inner]
            guarded = ast.Call(func=func, args=[cond, *picks], keywords=[])
            if attr == "args":
                node.args[0] = guarded
            else:
                setattr(node, attr, guarded)
            return ast.unparse(call)
    return None
