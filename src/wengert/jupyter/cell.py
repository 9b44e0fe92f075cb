"""Rewriting an ``%%autodiff`` cell so that its inputs become leaves when they are bound.

The cell is ordinary Python. :func:`rewrite_cell` parses it and, after every
statement of the cell's own scope that binds one of the input names (an
assignment, an augmented assignment, a ``for`` target, a ``with ... as``, an
import), inserts ``NAME = __wengert_bind__("NAME", NAME)``: from that moment
the name holds a leaf that requires grad. Names bound inside functions and
classes defined in the cell are their own scopes and are left alone. A last
expression statement becomes ``__wengert_out__ = <expression>``, so its value
is the cell's output. Line numbers are kept, so a traceback points at the
user's lines.

Examples
--------
>>> import ast
>>> cell = rewrite_cell("y = x * 2\\nx = 3.0\\nx ** 2", ["x"])
>>> print(ast.unparse(cell.tree))
y = x * 2
x = 3.0
x = __wengert_bind__('x', x)
__wengert_out__ = x ** 2
>>> cell.last_expression, cell.last_assigned, cell.silenced
(True, 'x', False)
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["BIND", "OUT", "Cell", "rewrite_cell", "ends_with_semicolon"]

#: The name of the binding hook the rewritten cell calls.
BIND = "__wengert_bind__"
#: The name the value of the cell's last expression is stored under.
OUT = "__wengert_out__"


@dataclass(frozen=True)
class Cell:
    """A rewritten cell.

    Attributes
    ----------
    tree : ast.Module
        The rewritten code, ready for ``compile``.
    last_expression : bool
        Whether the cell ends with an expression (its value is stored under :data:`OUT`).
    last_assigned : str or None
        The last name the cell's own scope assigns (``a, b = ...`` gives ``b``).
    bound_inputs : frozenset of str
        The inputs the cell itself assigns.
    silenced : bool
        Whether the cell ends with ``;`` (as for any cell, the result is not shown).
    """

    tree: ast.Module
    last_expression: bool
    last_assigned: str | None
    bound_inputs: frozenset[str]
    silenced: bool


def _target_names(target: ast.expr) -> list[str]:
    """The plain names a binding target binds (``a``, ``a, (b, *c)``), in order."""
    names: list[str] = []
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(reversed(node.elts))
        elif isinstance(node, ast.Starred):
            stack.append(node.value)
    return names


def _bound_names(stmt: ast.stmt) -> list[str]:
    """The names ``stmt`` itself binds in the enclosing scope (not in nested blocks)."""
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in _target_names(t)]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            return []
        return _target_names(stmt.target)
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    return []


def _bind_call(name: str, at: ast.stmt) -> ast.stmt:
    call = ast.Assign(
        targets=[ast.Name(id=name, ctx=ast.Store())],
        value=ast.Call(func=ast.Name(id=BIND, ctx=ast.Load()),
                       args=[ast.Constant(name), ast.Name(id=name, ctx=ast.Load())],
                       keywords=[]),
    )
    return ast.copy_location(call, at)


def _with_binds(body: list[ast.stmt], inputs: frozenset[str], found: set[str]) -> list[ast.stmt]:
    """``body`` with a bind call after each statement that binds an input, and in every
    nested block of the same scope (iteratively: blocks are processed from a worklist)."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        for name in dict.fromkeys(_bound_names(stmt)):
            if name in inputs and not isinstance(
                    stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(name)
                out.append(_bind_call(name, stmt))
    return out


def _rewrite_blocks(module: ast.Module, inputs: frozenset[str]) -> set[str]:
    """Insert bind calls in the module's body and in every nested block of its scope."""
    found: set[str] = set()
    work: list[ast.AST] = [module]
    while work:
        node = work.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, _with_binds(block, inputs, found))
                work.extend(s for s in block if not isinstance(
                    s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        for handler in getattr(node, "handlers", ()):  # try/except
            handler.body = _with_binds(handler.body, inputs, found)
            work.extend(handler.body)
        for case in getattr(node, "cases", ()):  # match
            work.append(case)
        head = []  # bindings made by the statement's own header: for targets, with ... as
        if isinstance(node, (ast.For, ast.AsyncFor)):
            head = _target_names(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            head = [n for item in node.items if item.optional_vars is not None
                    for n in _target_names(item.optional_vars)]
        for name in head:
            if name in inputs:
                found.add(name)
                node.body.insert(0, _bind_call(name, node))
    return found


def _last_assigned(body: Iterable[ast.stmt]) -> str | None:
    last = None
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            names = _bound_names(stmt)
            if names and not names[-1].startswith("__wengert"):
                last = names[-1]
    return last


def ends_with_semicolon(source: str) -> bool:
    """Whether the last token of ``source`` (comments aside) is ``;``, IPython's sign
    that a cell's result is not to be shown.

    Examples
    --------
    >>> ends_with_semicolon("x = 1\\nx;  # quiet"), ends_with_semicolon("s = ';'")
    (True, False)
    """
    last = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                last = tok
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def rewrite_cell(source: str, inputs: Sequence[str], filename: str = "<autodiff>") -> Cell:
    """Parse ``source`` and make each name in ``inputs`` a leaf from the moment it is bound.

    Raises ``SyntaxError`` (with the cell's line) when the cell does not parse.
    """
    module = ast.parse(source, filename=filename, mode="exec")
    wanted = frozenset(inputs)
    last_assigned = _last_assigned(module.body)
    found = _rewrite_blocks(module, wanted)
    last_expression = bool(module.body) and isinstance(module.body[-1], ast.Expr)
    if last_expression:
        expr = module.body[-1]
        module.body[-1] = ast.copy_location(
            ast.Assign(targets=[ast.Name(id=OUT, ctx=ast.Store())], value=expr.value), expr)
    ast.fix_missing_locations(module)
    return Cell(module, last_expression, last_assigned, frozenset(found),
                ends_with_semicolon(source))
