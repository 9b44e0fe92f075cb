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

from wengert.jupyter.explainer.source import dotted_name
from wengert.ops import REGISTRY

__all__ = ["op_code", "FLAT_OPS", "SAFE_VALUE", "infinite_derivative_words", "double_where",
           "safe_value", "forward_words", "SINGULAR_OPS"]

_OPERATORS = {
    "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
    "matmul": "@", "negative": "unary -", "positive": "unary +", "mod": "%",
    "floor_divide": "//", "getitem": "indexing x[...]", "setitem": "item assignment x[...] = v",
    "astype": ".astype", "reshape": ".reshape", "transpose": ".T",
}

#: Ops that are flat almost everywhere (their derivative is 0 where it exists).
FLAT_OPS = {"floor", "ceil", "rint", "round", "trunc", "sign", "floor_divide"}

#: A value where each op's derivative is finite: what the "double where" puts in the
#: unselected branch.
SAFE_VALUE = {
    "sqrt": "1.0", "cbrt": "1.0", "log": "1.0", "log2": "1.0", "log10": "1.0",
    "log1p": "0.0", "reciprocal": "1.0", "divide": "1.0", "power": "1.0",
    "arcsin": "0.0", "arccos": "0.0", "arctanh": "0.0", "arccosh": "2.0",
    "tan": "0.0", "exp": "0.0", "expm1": "0.0", "sinh": "0.0", "cosh": "0.0",
}


def op_code(name: str) -> str:
    """How an op is written in user code: ``np.sqrt``, ``*``, ``@``, ``np.maximum``; an op
    that is not a NumPy primitive (a ``wg.custom_vjp`` function) by its own name.

    Examples
    --------
    >>> op_code("maximum"), op_code("getitem"), op_code("my_rule")
    ('np.maximum', 'indexing x[...]', 'my_rule')
    """
    if name in _OPERATORS:
        return _OPERATORS[name]
    return f"np.{name}" if name in REGISTRY else name


def safe_value(name: str) -> str:
    """The value the double where substitutes for the op's argument.

    Examples
    --------
    >>> safe_value("sqrt"), safe_value("arcsin")
    ('1.0', '0.0')
    """
    return SAFE_VALUE.get(name, "1.0")


#: Ops whose derivative is infinite somewhere inside or at the edge of their domain.
SINGULAR_OPS = {"sqrt", "cbrt", "log", "log2", "log10", "log1p", "divide", "reciprocal",
                "power", "arcsin", "arccos", "arctanh", "arccosh", "exp"}

_FORWARD = {
    "sqrt": "the square root of a negative number is NaN",
    "log": "the log of 0 is -inf and of a negative number NaN",
    "log2": "the log of 0 is -inf and of a negative number NaN",
    "log10": "the log of 0 is -inf and of a negative number NaN",
    "log1p": "log1p(-1) is -inf and below -1 NaN",
    "divide": "a division by 0 gives inf (and 0/0 NaN)",
    "reciprocal": "1/0 is inf",
    "power": "0 to a negative power is inf, a negative base to a fractional power NaN",
    "exp": "exp overflows to inf above about 709",
    "expm1": "expm1 overflows to inf above about 709",
    "sinh": "sinh overflows to inf beyond about ±710",
    "cosh": "cosh overflows to inf beyond about ±710",
    "arcsin": "arcsin outside [-1, 1] is NaN",
    "arccos": "arccos outside [-1, 1] is NaN",
    "arctanh": "arctanh(±1) is ±inf and beyond it NaN",
    "arccosh": "arccosh below 1 is NaN",
    "subtract": "inf - inf is NaN",
    "add": "inf + (-inf) is NaN",
    "multiply": "0 · inf is NaN, and a product can overflow to inf",
    "tan": "tan is infinite at odd multiples of π/2",
}


def forward_words(name: str) -> str:
    """How op ``name`` makes a NaN or an infinity in the forward pass.

    Examples
    --------
    >>> forward_words("log")
    'the log of 0 is -inf and of a negative number NaN'
    """
    return _FORWARD.get(name, f"`{op_code(name)}` returned a value that is not finite")


def infinite_derivative_words(name: str) -> tuple[str, str, str]:
    """For op ``name``: its derivative, where that is infinite, and the fix.

    Examples
    --------
    >>> infinite_derivative_words("log")[:2]
    ('1/x', 'x = 0')
    """
    table = {
        "sqrt": ("1/(2·√x)", "x = 0",
                 "keep its argument away from 0: `np.sqrt(x + 1e-12)`, or "
                 "`np.sqrt(np.maximum(x, 1e-12))`"),
        "cbrt": ("1/(3·∛x²)", "x = 0", "keep its argument away from 0"),
        "log": ("1/x", "x = 0",
                "keep the argument positive: `np.log(x + 1e-12)` or "
                "`np.log(np.clip(x, 1e-12, None))`; for the log of a softmax or of a sum of "
                "exponentials use a log-sum-exp form (`wg.numpy.logsumexp`)"),
        "log2": ("1/(x·ln 2)", "x = 0", "keep the argument positive: `np.log2(x + 1e-12)`"),
        "log10": ("1/(x·ln 10)", "x = 0",
                  "keep the argument positive: `np.log10(x + 1e-12)`"),
        "log1p": ("1/(1 + x)", "x = -1", "keep the argument above -1"),
        "divide": ("1/b in a and -a/b² in b", "b = 0",
                   "keep the denominator away from 0 (`a / (b + 1e-12)`), or mask it with a "
                   "double where: `np.where(b != 0, a / np.where(b != 0, b, 1.0), 0.0)`"),
        "reciprocal": ("-1/x²", "x = 0", "keep the argument away from 0"),
        "power": ("p·x^(p-1) in x and log(x)·x^p in p", "x = 0 when p < 1 (and log(x) needs "
                  "x > 0)", "keep the base positive (`(x + 1e-12) ** p`), or write `np.sqrt` "
                  "/ `np.abs` if that is what is meant"),
        "arcsin": ("1/√(1 - x²)", "x = ±1",
                   "clip the argument into the open interval: "
                   "`np.arcsin(np.clip(x, -1 + 1e-7, 1 - 1e-7))`"),
        "arccos": ("-1/√(1 - x²)", "x = ±1",
                   "clip the argument into the open interval: "
                   "`np.arccos(np.clip(x, -1 + 1e-7, 1 - 1e-7))`"),
        "arctanh": ("1/(1 - x²)", "x = ±1", "clip the argument into (-1, 1)"),
        "arccosh": ("1/√(x² - 1)", "x = 1", "keep the argument above 1"),
        "exp": ("exp(x)", "x above about 709 (it overflows)",
                "subtract the maximum first (`np.exp(x - x.max())`), or work with logs "
                "(`wg.numpy.logsumexp`)"),
    }
    if name in table:
        return table[name]
    return ("its rule", "these values", f"keep the arguments of `{op_code(name)}` inside its "
            "domain")


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
