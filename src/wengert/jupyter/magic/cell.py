"""Rewriting an ``%%autodiff`` cell so that every binding of a name is seen when it runs.

The cell is ordinary Python. :func:`rewrite_cell` parses it and adds a call
after each place that binds a name of the cell's own scope (the notebook's
namespace), so that the runner knows, while the cell runs, which binding was
executed last (the default output) and can make each input a leaf the moment
it is bound:

* every statement that binds: ``=`` (with tuple and star targets), an
  annotated assignment with a value, an augmented assignment, ``import``, and
  ``def`` / ``class`` of an input's name (refused when the cell runs); the
  target of a ``for`` and of ``with ... as``, and the captures of a ``match``
  case, at the start of the block they open;
* the walrus operator, where it stands (also inside comprehensions, whose
  ``:=`` binds the enclosing scope);
* names declared ``global`` inside functions and classes defined in the cell.

An augmented assignment to an input (``s *= 3.0``) is rewritten so that it
never changes the input's leaf in place: on the leaf it acts as
``s = s * 3.0``, on a value computed from it as the in-place operation it is.

Names bound inside functions, lambdas, classes and comprehensions are their
own variables (Python's scoping). There is one exception: an input that is no
variable of the cell (not defined before it, never bound in its scope) is
followed where it *is* bound, in those inner scopes: a parameter of a function
or lambda defined in the cell (at each call), or a local variable.
Comprehension variables and ``except ... as`` names are never followed; the
runner says so when an input is bound only there.

Code at the cell's top level calls the runner's hooks from the namespace
(:data:`BIND`, :data:`AT`, :data:`TICK`). Code of nested scopes may run after
the cell (a function defined in it, called later), when the namespace no longer
holds the hooks: there each call is guarded (``if '__wengert_bind__' in
globals(): ...``), so that such code runs as written. A last expression
statement becomes ``__wengert_out__ = <expression>``. Line numbers are kept,
so a traceback points at the user's lines.

Examples
--------
>>> import ast
>>> cell = rewrite_cell("y = x * 2\\nx = 3.0\\nx ** 2", ["x"])
>>> print(ast.unparse(cell.tree))
y = x * 2
__wengert_at__[0] = __wengert_tick__()
x = 3.0
x = __wengert_bind__(x, 1)
__wengert_out__ = x ** 2
>>> cell.last_expression, [s.name for s in cell.sites], cell.silenced
(True, ['y', 'x'], False)
>>> cell.sites[1].where()
'line 2, an assignment'
"""

from __future__ import annotations

import ast
import copy
import io
import itertools
import operator
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["BIND", "OUT", "AT", "TICK", "Cell", "Site", "rewrite_cell", "ends_with_semicolon",
           "OUT_OF_PLACE", "IN_PLACE"]

#: The runner's binding hook, as the rewritten top-level code calls it.
BIND = "__wengert_bind__"
#: The name the value of the cell's last expression is stored under.
OUT = "__wengert_out__"
#: The dict in which the top-level code notes when each binding site ran (site -> tick).
AT = "__wengert_at__"
#: The clock of those ticks (``itertools.count().__next__``).
TICK = "__wengert_tick__"
_token = itertools.count(1).__next__


@dataclass(frozen=True)
class Site:
    """One place in the cell where a name is bound.

    Attributes
    ----------
    name : str
    lineno : int
        The line of the binding statement (of the ``for`` or ``with`` for their targets).
    kind : str
        ``"assignment"``, ``"augmented assignment"``, ``"for target"``, ``"with ... as"``,
        ``"walrus"``, ``"import"``, ``"def"``, ``"class"``, ``"match capture"``,
        ``"parameter"``, ``"comprehension variable"``, ``"except ... as"``.
    scope : str
        ``""`` for the cell's own scope; else the function, lambda, class or
        comprehension the binding is in (``"f"``, ``"lambda"``, ``"class C"``).
    blocks : tuple of str
        The compound statements around it in its scope, outermost first (``("for", "if")``).
    cell_scope : bool
        Whether it binds the cell's variable (its own scope, or a ``global`` declaration).
    tracked : bool
        Whether the rewritten code reports it when it runs.
    """

    name: str
    lineno: int
    kind: str
    scope: str
    blocks: tuple[str, ...]
    cell_scope: bool
    tracked: bool

    def where(self) -> str:
        """``line 3, an assignment in a for loop in f``: for messages."""
        text = f"line {self.lineno}, {_KIND_WORDS.get(self.kind, self.kind)}"
        if self.blocks:
            text += " in " + " in ".join(_BLOCK_WORDS[b] for b in reversed(self.blocks))
        if self.scope and self.kind != "comprehension variable":
            text += " in " + (self.scope if self.scope != "lambda" else "a lambda")
        return text


_KIND_WORDS = {"assignment": "an assignment", "augmented assignment": "an augmented assignment",
               "annotated assignment": "an annotated assignment", "for target": "a for target",
               "with ... as": "a with ... as", "walrus": "a walrus (:=)", "import": "an import",
               "def": "a def", "class": "a class", "match capture": "a match capture",
               "parameter": "a parameter", "comprehension variable": "a comprehension variable",
               "except ... as": "an except ... as"}
_BLOCK_WORDS = {"for": "a for loop", "while": "a while loop", "if": "an if block",
                "with": "a with block", "try": "a try statement", "match": "a match case"}


@dataclass(frozen=True)
class Cell:
    """A rewritten cell.

    Attributes
    ----------
    tree : ast.Module
        The rewritten code, ready for ``compile``.
    last_expression : bool
        Whether the cell ends with an expression (its value is stored under :data:`OUT`).
    sites : tuple of Site
        Every binding of a name the rewrite saw, in the order of the code; the hooks
        receive a site's index.
    bound_inputs : frozenset of str
        The inputs the cell binds in its own scope (including ``global`` in functions).
    inner_inputs : frozenset of str
        The inputs that are no variable of the cell and are followed in inner scopes.
    silenced : bool
        Whether the cell ends with ``;`` (as for any cell, the result is not shown).
    token : int
        This rewrite's identity: hooks of nested scopes pass it, so a function of
        another cell is told apart.
    """

    tree: ast.Module
    last_expression: bool
    sites: tuple[Site, ...]
    bound_inputs: frozenset[str]
    inner_inputs: frozenset[str]
    silenced: bool
    token: int


def _ops() -> tuple[dict[str, Any], dict[str, Any]]:
    names = ["add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift",
             "rshift", "and_", "or_", "xor"]
    return ({n: getattr(operator, n) for n in names},
            {n: getattr(operator, "i" + n.rstrip("_")) for n in names})


#: Operator name (as the rewrite passes it) -> the out-of-place and in-place functions.
OUT_OF_PLACE, IN_PLACE = _ops()
_AST_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul",
            ast.Div: "truediv", ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow",
            ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and_",
            ast.BitOr: "or_", ast.BitXor: "xor"}


# -- the rewrite --------------------------------------------------------------------------
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


def _pattern_names(pattern: ast.pattern) -> list[str]:
    """The names a ``match`` pattern captures, in order."""
    names = []
    for node in ast.walk(pattern):
        name = getattr(node, "name", None) if isinstance(
            node, (ast.MatchAs, ast.MatchStar)) else getattr(node, "rest", None) if isinstance(
            node, ast.MatchMapping) else None
        if name is not None:
            names.append(name)
    return names


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _declared(body: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """The names a scope's body declares ``global`` and ``nonlocal`` (not nested scopes')."""
    glob: set[str] = set()
    nonloc: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global):
            glob.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonloc.update(node.names)
        elif not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return glob, nonloc


@dataclass
class _Scope:
    kind: str  # "module", "function", "lambda", "class", "comprehension"
    label: str
    globals: set[str]
    blocks: list[str]


def _name(id_: str, ctx: ast.expr_context | None = None) -> ast.Name:
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _call(func: ast.expr, *args: ast.expr) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=[])


def _const(v: Any) -> ast.Constant:
    return ast.Constant(v)


def _guard() -> ast.expr:
    """``'__wengert_bind__' in globals()``: whether a run of this namespace is on."""
    return ast.Compare(left=_const(BIND), ops=[ast.In()], comparators=[_call(_name("globals"))])


class _Rewriter(ast.NodeTransformer):
    """Walks the cell with its scopes. ``deep``: enter expressions (needed only where the
    cell has a walrus or a lambda; comprehension variables are recorded then too)."""

    def __init__(self, inputs: frozenset[str], inner: frozenset[str], deep: bool,
                 token: int) -> None:
        self.inputs = inputs
        self.inner = inner  # inputs followed in inner scopes
        self.deep = deep
        self.token = token
        self.sites: list[Site] = []
        self.scopes = [_Scope("module", "", set(), [])]
        self.made: list[tuple[ast.AST, ast.AST]] = []  # new code and where it stands

    def _expr(self, node: Any) -> Any:
        return self.visit(node) if self.deep and node is not None else node

    def generic_visit(self, node: ast.AST) -> Any:
        if not self.deep and isinstance(node, ast.stmt):
            return node  # a simple statement: nothing of its own to report
        return super().generic_visit(node)

    def _new(self, node: Any, at: ast.AST) -> Any:
        self.made.append((node, at))
        return node

    # -- sites and hook calls ------------------------------------------------------------
    def _resolve(self, walrus: bool = False) -> tuple[_Scope, bool]:
        """The scope a binding made here lands in (a walrus in a comprehension: the first
        enclosing scope that is none), and whether that is the cell's own."""
        scope = self.scopes[-1]
        if walrus:
            for s in reversed(self.scopes):
                if s.kind != "comprehension":
                    scope = s
                    break
        return scope, scope.kind == "module"

    def _site(self, name: str, lineno: int, kind: str, walrus: bool = False) -> int | None:
        """Record a binding of ``name``; its index when the rewritten code reports it.

        Bindings of the cell's variables are reported (a ``def``, ``class``, ``import``
        or ``except ... as`` only for an input); in inner scopes, only an input that is
        no variable of the cell, except as a comprehension variable or ``except ... as``.
        Inputs' bindings that are not reported are recorded, for messages."""
        scope, at_module = self._resolve(walrus)
        cell_scope = at_module or name in scope.globals
        never = kind in ("except ... as", "comprehension variable")
        if name not in self.inputs:
            if not cell_scope or never or kind in ("def", "class", "import"):
                return None
            tracked = True
        else:
            tracked = not never and (cell_scope or name in self.inner)
        label = "" if at_module else scope.label
        self.sites.append(Site(name, lineno, kind, label, tuple(scope.blocks), cell_scope,
                               tracked))
        return len(self.sites) - 1 if tracked else None

    def _fast(self) -> bool:
        """Whether the code here runs in the cell's own frame (the namespace's hooks)."""
        return self.scopes[-1].kind == "module"

    def _hook(self, value: ast.expr, site: int) -> ast.expr:
        """The expression that reports ``value`` bound at ``site`` and gives what to bind."""
        s = self.sites[site]
        if self._fast():
            if s.name in self.inputs:
                return _call(_name(BIND), value, _const(site))
            return _call(ast.Attribute(value=_name(BIND), attr="note", ctx=ast.Load()),
                         value, _const(site))
        call = _call(ast.Attribute(value=_name(BIND), attr="bound", ctx=ast.Load()),
                     value, _const(site), _const(self.token), _const(s.name),
                     _const(s.cell_scope))
        return ast.IfExp(test=_guard(), body=call, orelse=copy.deepcopy(value))

    def _after(self, site: int, at: ast.AST) -> ast.stmt:
        """The statement that reports the binding at ``site`` just made."""
        s = self.sites[site]
        if self._fast():
            if s.name in self.inputs:
                stmt: ast.stmt = ast.Assign(targets=[_name(s.name, ast.Store())],
                                            value=self._hook(_name(s.name), site))
            else:  # a tick, no call into Python
                stmt = ast.Assign(
                    targets=[ast.Subscript(value=_name(AT), slice=_const(site),
                                           ctx=ast.Store())],
                    value=_call(_name(TICK)))
            return self._new(stmt, at)
        call = _call(ast.Attribute(value=_name(BIND), attr="bound", ctx=ast.Load()),
                     _name(s.name), _const(site), _const(self.token), _const(s.name),
                     _const(s.cell_scope))
        inner: ast.stmt = (ast.Assign(targets=[_name(s.name, ast.Store())], value=call)
                           if s.name in self.inputs else ast.Expr(value=call))
        return self._new(ast.If(test=_guard(), body=[inner], orelse=[]), at)

    def _report(self, names: list[str], lineno: int, kind: str, at: ast.AST) -> list[ast.stmt]:
        out = []
        for name in dict.fromkeys(names):
            site = self._site(name, lineno, kind)
            if site is not None:
                out.append(self._after(site, at))
        return out

    # -- statement lists -----------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], word: str | None) -> list[ast.stmt]:
        scope = self.scopes[-1]
        if word:
            scope.blocks.append(word)
        try:
            out: list[ast.stmt] = []
            for stmt in stmts:
                new = self.visit(stmt)
                if isinstance(new, list):
                    out.extend(new)
                elif new is not None:
                    out.append(new)
            return out or [ast.copy_location(ast.Pass(), stmts[0])] if stmts else out
        finally:
            if word:
                scope.blocks.pop()

    def _prefixed(self, stmts: list[ast.stmt], head: list[ast.stmt], word: str
                  ) -> list[ast.stmt]:
        body = self._block(stmts, word)
        return head + body

    # -- statements ----------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> Any:
        node.value = self._expr(node.value)
        node.targets = [self._expr(t) for t in node.targets]
        names = [n for t in node.targets for n in _target_names(t)]
        return [node] + self._report(names, node.lineno, "assignment", node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        if node.value is None:
            return node
        node.value = self._expr(node.value)
        node.target = self._expr(node.target)
        return [node] + self._report(_target_names(node.target), node.lineno,
                                     "annotated assignment", node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        node.value = self._expr(node.value)
        node.target = self._expr(node.target)
        if not isinstance(node.target, ast.Name):
            return node
        name = node.target.id
        site = self._site(name, node.lineno, "augmented assignment")
        if site is None:
            return node
        if name not in self.inputs:
            return [node, self._after(site, node)]
        op = _AST_OPS[type(node.op)]
        if self._fast():
            call = _call(ast.Attribute(value=_name(BIND), attr="aug", ctx=ast.Load()),
                         _name(name), node.value, _const(op), _const(site))
            return self._new(ast.Assign(targets=[_name(name, ast.Store())], value=call), node)
        call = _call(ast.Attribute(value=_name(BIND), attr="augmented", ctx=ast.Load()),
                     _name(name), node.value, _const(op), _const(site), _const(self.token),
                     _const(name), _const(self.sites[site].cell_scope))
        hooked = ast.Assign(targets=[_name(name, ast.Store())], value=call)
        plain = copy.deepcopy(node)
        return self._new(ast.If(test=_guard(), body=[hooked], orelse=[plain]), node)

    def visit_Import(self, node: ast.Import) -> Any:
        names = [(a.asname or a.name).split(".")[0] for a in node.names]
        return [node] + self._report(names, node.lineno, "import", node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        names = [a.asname or a.name for a in node.names if a.name != "*"]
        return [node] + self._report(names, node.lineno, "import", node)

    def _loop(self, node: ast.For | ast.AsyncFor) -> Any:
        node.iter = self._expr(node.iter)
        node.target = self._expr(node.target)
        self.scopes[-1].blocks.append("for")
        try:
            head = self._report(_target_names(node.target), node.lineno, "for target", node)
        finally:
            self.scopes[-1].blocks.pop()
        node.body = self._prefixed(node.body, head, "for")
        node.orelse = self._block(node.orelse, "for")
        return node

    visit_For = visit_AsyncFor = _loop

    def visit_While(self, node: ast.While) -> Any:
        node.test = self._expr(node.test)
        node.body = self._block(node.body, "while")
        node.orelse = self._block(node.orelse, "while")
        return node

    def visit_If(self, node: ast.If) -> Any:
        node.test = self._expr(node.test)
        node.body = self._block(node.body, "if")
        node.orelse = self._block(node.orelse, "if")
        return node

    def _with(self, node: ast.With | ast.AsyncWith) -> Any:
        names = []
        for item in node.items:
            item.context_expr = self._expr(item.context_expr)
            if item.optional_vars is not None:
                item.optional_vars = self._expr(item.optional_vars)
                names += _target_names(item.optional_vars)
        self.scopes[-1].blocks.append("with")
        try:
            head = self._report(names, node.lineno, "with ... as", node)
        finally:
            self.scopes[-1].blocks.pop()
        node.body = self._prefixed(node.body, head, "with")
        return node

    visit_With = visit_AsyncWith = _with

    def _try(self, node: Any) -> Any:
        node.body = self._block(node.body, "try")
        for handler in node.handlers:
            if handler.type is not None:
                handler.type = self._expr(handler.type)
            if handler.name is not None:
                self.scopes[-1].blocks.append("try")
                self._site(handler.name, handler.lineno, "except ... as")
                self.scopes[-1].blocks.pop()
            handler.body = self._block(handler.body, "try")
        node.orelse = self._block(node.orelse, "try")
        node.finalbody = self._block(node.finalbody, "try")
        return node

    visit_Try = _try
    if hasattr(ast, "TryStar"):
        visit_TryStar = _try

    def visit_Match(self, node: ast.Match) -> Any:
        node.subject = self._expr(node.subject)
        for case in node.cases:
            case.pattern = self._expr(case.pattern)
            self.scopes[-1].blocks.append("match")
            try:
                head = self._report(_pattern_names(case.pattern), case.pattern.lineno,
                                    "match capture", case.pattern)
            finally:
                self.scopes[-1].blocks.pop()
            if case.guard is not None:
                case.guard = self._expr(case.guard)
            case.body = self._prefixed(case.body, head, "match")
        return node

    # -- scopes --------------------------------------------------------------------------
    def _arguments(self, args: ast.arguments) -> None:
        """Defaults and annotations are evaluated in the enclosing scope."""
        args.defaults = [self._expr(d) for d in args.defaults]
        args.kw_defaults = [self._expr(d) for d in args.kw_defaults]

    @staticmethod
    def _params(args: ast.arguments) -> list[str]:
        return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        node.decorator_list = [self._expr(d) for d in node.decorator_list]
        self._arguments(node.args)
        glob, _ = _declared(node.body)
        self.scopes.append(_Scope("function", node.name, glob, []))
        try:
            head = self._report([p for p in self._params(node.args) if p in self.inner],
                                node.lineno, "parameter", node)
            body = node.body
            doc = 1 if body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str) else 0
            node.body = body[:doc] + head + self._block(body[doc:], None)
        finally:
            self.scopes.pop()
        return [node] + self._report([node.name], node.lineno, "def", node)

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        node.decorator_list = [self._expr(d) for d in node.decorator_list]
        node.bases = [self._expr(b) for b in node.bases]
        for k in node.keywords:
            k.value = self._expr(k.value)
        glob, _ = _declared(node.body)
        self.scopes.append(_Scope("class", f"class {node.name}", glob, []))
        try:
            node.body = self._block(node.body, None)
        finally:
            self.scopes.pop()
        return [node] + self._report([node.name], node.lineno, "class", node)

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        self._arguments(node.args)
        self.scopes.append(_Scope("lambda", "lambda", set(), []))
        try:
            params = [p for p in self._params(node.args) if p in self.inner]
            sites = [self._site(p, node.lineno, "parameter") for p in params]
            node.body = self.visit(node.body)
            hooks: list[ast.expr] = [
                ast.NamedExpr(target=_name(p, ast.Store()), value=self._hook(_name(p), s))
                for p, s in zip(params, sites) if s is not None]
            if hooks:  # lambda x: (x := hook(x), body)[-1]
                node.body = self._new(ast.Subscript(
                    value=ast.Tuple(elts=hooks + [node.body], ctx=ast.Load()),
                    slice=_const(-1), ctx=ast.Load()), node.body)
        finally:
            self.scopes.pop()
        return node

    def _comprehension(self, node: Any) -> Any:
        first = node.generators[0]
        first.iter = self.visit(first.iter)  # evaluated in the enclosing scope
        self.scopes.append(_Scope("comprehension", "a comprehension", set(), []))
        try:
            for k, gen in enumerate(node.generators):
                if k:
                    gen.iter = self.visit(gen.iter)
                gen.target = self.visit(gen.target)
                for name in _target_names(gen.target):
                    self._site(name, node.lineno, "comprehension variable")
                gen.ifs = [self.visit(c) for c in gen.ifs]
            if isinstance(node, ast.DictComp):
                node.key = self.visit(node.key)
                node.value = self.visit(node.value)
            else:
                node.elt = self.visit(node.elt)
        finally:
            self.scopes.pop()
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_NamedExpr(self, node: ast.NamedExpr) -> Any:
        node.value = self.visit(node.value)
        site = self._site(node.target.id, node.lineno, "walrus", walrus=True)
        if site is not None:
            node.value = self._new(self._hook(node.value, site), node.value)
        return node


def _rewrite(module: ast.Module, inputs: frozenset[str], inner: frozenset[str],
             deep: bool, token: int) -> list[Site]:
    r = _Rewriter(inputs, inner, deep, token)
    module.body = r._block(module.body, None)
    for node, at in r.made:
        _locate(node, at)
    return r.sites


def _locate(node: ast.AST, at: ast.AST) -> None:
    """Give the new nodes in ``node`` the position of ``at`` (the code they report on);
    the user's nodes inside keep theirs."""
    todo = list(ast.iter_child_nodes(node))
    if getattr(node, "lineno", None) is None:
        ast.copy_location(node, at)
    while todo:
        n = todo.pop()
        if "lineno" in n._attributes:
            if getattr(n, "lineno", None) is not None:
                continue
            ast.copy_location(n, at)
        todo.extend(ast.iter_child_nodes(n))


def ends_with_semicolon(source: str) -> bool:
    """Whether the last token of ``source`` (comments aside) is ``;``, IPython's sign
    that a cell's result is not to be shown.

    Examples
    --------
    >>> ends_with_semicolon("x = 1\\nx;  # quiet"), ends_with_semicolon("s = ';'")
    (True, False)
    """
    if ";" not in source:
        return False
    last = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                last = tok
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def rewrite_cell(source: str, inputs: Sequence[str], filename: str = "<autodiff>",
                 defined: Sequence[str] = (), deep: bool | None = None) -> Cell:
    """Parse ``source`` and add the calls that report its bindings (see the module
    docstring). ``defined``: the inputs the namespace holds before the cell (they are
    the cell's variables even if it never binds them). ``deep``: look inside every
    expression; by default only when the cell has a walrus or a lambda, the bindings
    expressions can make (comprehension variables, never followed, are then recorded
    too).

    Raises ``SyntaxError`` (with the cell's line) when the cell does not parse.
    """
    if deep is None:
        deep = ":=" in source or "lambda" in source
    wanted = frozenset(inputs)
    token = _token()
    inner = frozenset(wanted - set(defined))  # until the cell's own scope is seen
    module = ast.parse(source, filename=filename, mode="exec")
    sites = _rewrite(module, wanted, inner, deep, token)
    of_cell = {s.name for s in sites if s.cell_scope}
    if any(s.tracked and not s.cell_scope and s.name in of_cell for s in sites):
        # an inner scope's variable of the same name as an input of the cell: not followed
        inner = frozenset(inner - of_cell)
        module = ast.parse(source, filename=filename, mode="exec")
        sites = _rewrite(module, wanted, inner, deep, token)
    inner = frozenset(inner - of_cell)
    bound_inputs = frozenset(s.name for s in sites
                             if s.cell_scope and s.tracked and s.name in wanted)
    last_expression = bool(module.body) and isinstance(module.body[-1], ast.Expr)
    if last_expression:
        expr = module.body[-1]
        out = ast.Assign(targets=[ast.Name(id=OUT, ctx=ast.Store())], value=expr.value)
        _locate(out, expr)
        module.body[-1] = out
    return Cell(module, last_expression, tuple(sites), bound_inputs, inner,
                ends_with_semicolon(source), token)
