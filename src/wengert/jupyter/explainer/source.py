"""Reading the user's code for the lines that may cut a gradient's path.

A gradient is ``None`` when the path from the input to the result was cut,
and the tape cannot always say where: a value made under ``wg.no_grad()`` or
by ``float(x)`` leaves no equation behind. The code can. :func:`cut_sites`
parses a cell's (or a function's) source, follows the input's name through
the assignments of that scope (``h = x * 2`` makes ``h`` a value computed from
``x``), and lists the lines that cut such a value from the graph:
``with wg.no_grad():`` blocks that use one, ``.detach()``,
``wg.stop_gradient``, ``.data``, ``float()``, ``int()``, ``.item()``,
``.tolist()``, ``math.*``, ``.numpy()``, ``np.asarray`` / ``np.array``,
``.astype(int)``, comparisons, ``tape.stop_recording()``, and computations
done before a ``with wg.GradientTape()`` block whose results are used inside
it.

This reads code, it does not run it: a name rebound in a way the scan does
not follow (``setattr``, a mutated container it cannot see) is missed, and a
line it cites is a lead to check, not a proof.

Examples
--------
>>> code = '''
... h = np.sin(x)
... with wg.no_grad():
...     z = h * 2
... loss = (z * w).sum()
... '''
>>> for site in cut_sites(code, ["x"]):
...     print(site.lineno, site.kind, site.name, "|", site.text)
3 no_grad h | with wg.no_grad():
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Site", "cut_sites", "SITE_KINDS", "RETURN", "dotted_name"]

#: The name :func:`cut_sites` gives a function's return value (``target=RETURN``).
RETURN = "<return>"

#: What each kind of site does to the value, in the words of the explanation.
SITE_KINDS = {
    "no_grad": "a `wg.no_grad()` block uses it",
    "stop_recording": "a `tape.stop_recording()` block uses it",
    "detach": "`.detach()` cuts it from the graph",
    "stop_gradient": "`wg.stop_gradient` cuts it from the graph",
    "data": "`.data` cuts it from the graph",
    "to_python": "turns it into a Python number",
    "to_numpy": "turns it into a NumPy array",
    "integer": "casts it to an integer or boolean dtype",
    "comparison": "compares it: a boolean has no gradient",
    "before_tape": "computes it before the `GradientTape` opens",
}

_PY_NUMBER = {"float", "int", "bool", "complex"}
_TO_NUMPY = {"asarray", "array", "asanyarray", "ascontiguousarray", "copy"}
_NUMPY_MODULES = {"np", "numpy", "onp"}
_MUTATORS = {"append", "extend", "insert", "update", "add", "setdefault"}
_INTEGER = re.compile(r"\b(u?int\d*|bool_?|intp|uintp|long|short|byte)\b|['\"][iub]\d*['\"]")


@dataclass(frozen=True)
class Site:
    """A line of code that may cut the path from an input to the result.

    Attributes
    ----------
    lineno : int
        The line, counted as in the file or cell the code came from.
    text : str
        That line of code, stripped.
    kind : str
        One of :data:`SITE_KINDS`.
    name : str
        The variable it cuts (the input or a value computed from it); empty when unknown.
    filename : str
        The file the line is in, when known (empty for code passed as text).
    tensor : Tensor or None
        The value it cut, when known (seen while running the function, or the tensor
        the caller's variable ``name`` holds).
    results : tuple
        What the conversion returned (the Python numbers, the arrays), when it was seen
        running.
    binds : tuple of str
        The names the line's assignment binds (``k`` in ``k = float(h) * 2``), then the
        names later lines compute from them (``b`` in ``b = np.array([k, k])``).
    bound : tuple of (str, value)
        Those names with what they hold now in the caller's namespace, when the line ran
        before the call that reads it.
    """

    lineno: int
    text: str
    kind: str
    name: str = ""
    filename: str = ""
    tensor: Any = field(default=None, compare=False, repr=False)
    results: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    binds: tuple[str, ...] = field(default=(), compare=False, repr=False)
    bound: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def describe(self) -> str:
        """``line 3: `with wg.no_grad():` (a `wg.no_grad()` block uses `h`)``.

        Examples
        --------
        >>> Site(3, "z = h.detach()", "detach", "h").describe()
        'line 3: `z = h.detach()` (`.detach()` cuts `h` from the graph)'
        """
        what = SITE_KINDS.get(self.kind, self.kind)
        if self.name:
            what = what.replace(" it", f" `{self.name}`", 1)
        return f"line {self.lineno}: `{self.text}` ({what})"


def cut_sites(source: str, names: Iterable[str], first_line: int = 1,
              target: str | None = None) -> list[Site]:
    """The lines of ``source`` that may cut the path from the variables ``names`` (to the
    variable ``target``).

    Parameters
    ----------
    source : str
        A cell's or a function's code. A module holding a single function
        definition is read as that function's body (so ``inspect.getsource(f)``
        works as is). Lines that are not Python (IPython's ``%magic`` and
        ``!shell`` lines) are ignored.
    names : iterable of str
        The variables whose paths to follow (the input's name). With none,
        every line that cuts anything is listed.
    first_line : int
        The line number of the first line of ``source`` in its file.
    target : str, optional
        The variable holding the result (``RETURN`` for a function's return value): only
        lines whose result flows into it are kept. By default every line is.

    Returns
    -------
    list of Site
        In line order; a line appears once per kind.

    Examples
    --------
    >>> code = "def f(x):\\n    n = float(x)\\n    return n * x.detach()\\n"
    >>> [(s.lineno, s.kind, s.name) for s in cut_sites(code, ["x"], first_line=10)]
    [(11, 'to_python', 'x'), (12, 'detach', 'x')]
    >>> code = "a = x.detach()\\nb = float(x)\\nloss = b * 2\\n"
    >>> [(s.lineno, s.kind) for s in cut_sites(code, ["x"], target="loss")]
    [(2, 'to_python')]
    """
    text = textwrap.dedent(source)
    tree = _parse(text)
    wanted = set(names)
    lines = text.splitlines()
    if tree is None:
        return _scan_lines(lines, wanted, first_line)
    scan = _Scan(lines, wanted, first_line, target)
    scan.run(_scope(tree, target))
    first: dict[tuple[int, str], Site] = {}
    for site in scan.sites:
        first.setdefault((site.lineno, site.kind), site)
    return sorted(first.values(), key=lambda s: (s.lineno, s.kind))


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except SyntaxError:
        pass
    # IPython lines (%magic, !shell) are not Python: blank them, keeping the numbering.
    kept = ["" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()]
    try:
        return ast.parse("\n".join(kept))
    except SyntaxError:
        return None


def _scope(tree: ast.Module, target: str | None) -> list[ast.stmt]:
    """The statements to read: a lone function definition's body; for a function's return
    value, the body of the lone ``lambda`` on the lines given; else the module's."""
    body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if len(body) == 1 and isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return body[0].body
    if target == RETURN:
        lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
        if len(lambdas) == 1:
            ret = ast.Return(value=lambdas[0].body)
            return [ast.copy_location(ret, lambdas[0].body)]
    return tree.body


def _statements(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, tuple[ast.With, ...]]]:
    """Every statement of a scope in source order with its enclosing ``with`` statements,
    without entering nested function or class definitions (iterative)."""
    stack: list[tuple[list[ast.stmt], int, tuple[ast.With, ...]]] = [(body, 0, ())]
    while stack:
        stmts, i, withs = stack.pop()
        if i >= len(stmts):
            continue
        stack.append((stmts, i + 1, withs))
        stmt = stmts[i]
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield stmt, withs
        inner = withs + (stmt,) if isinstance(stmt, (ast.With, ast.AsyncWith)) else withs
        blocks = [getattr(stmt, f, None) for f in ("orelse", "finalbody", "body")]
        blocks += [h.body for h in getattr(stmt, "handlers", ())]
        blocks += [c.body for c in getattr(stmt, "cases", ())]
        for block in blocks:  # pushed last is read first: "body" before "orelse"
            if block:
                stack.append((block, 0, inner))


def _header(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates itself (a compound statement's header)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.While, ast.If)):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, ast.Try):
        return []
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return [stmt]


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without entering lambdas and nested definitions."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef,
                                      ast.ClassDef)):
                todo.append(child)


def _loaded(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in _walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored(stmt: ast.stmt) -> set[str]:
    """The names a statement binds (or mutates: ``a[i] = v``, ``a.append(v)``)."""
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
            targets = [func.value]
    if isinstance(stmt, ast.Return):
        return {RETURN}
    names = set()
    for target in targets:
        for n in _walk(target):
            if isinstance(n, ast.Name):
                names.add(n.id)
    return names


def _carried(statements: list[tuple[ast.stmt, tuple[ast.With, ...]]],
             names: tuple[str, ...], line: int) -> tuple[str, ...]:
    """``names`` (bound by the statement at ``line``) then the names computed from them
    (``b`` after ``a`` in ``b = np.array([a, a])``), in the order the code binds them;
    read twice, as a loop may carry a value into an earlier line. A name another
    statement rebinds from none of them (``k = 3.0``) is left out: the value it holds at
    the end may not come from that line."""
    found = list(names)
    seen = set(names)
    for _ in range(2):
        for stmt, _withs in statements:
            if _loaded(_header(stmt)) & seen:
                for name in sorted(_stored(stmt) - seen - {RETURN}):
                    found.append(name)
                    seen.add(name)
    rebound = set()
    for stmt, _withs in statements:
        rebinds = isinstance(stmt, (ast.For, ast.AsyncFor)) or isinstance(
            stmt, (ast.Assign, ast.AnnAssign)) and not (
            stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno))
        if rebinds and not _loaded(_header(stmt)) & seen:
            rebound |= _stored(stmt)
    return tuple(n for n in found if n not in rebound)


def dotted_name(node: ast.AST) -> str:
    """``np.linalg.norm`` for an attribute chain of names, else ``""``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


class _Scan:
    """One reading of a scope: which names carry the inputs' values, and the sites."""

    def __init__(self, lines: list[str], names: set[str], first_line: int,
                 target: str | None) -> None:
        self.lines = lines
        self.names = names
        self.follow_all = not names
        self.tainted = set(names)
        self.first_line = first_line
        self.target = target
        self.needed: set[str] = {target} if target else set()
        self.sites: list[Site] = []
        self._binds: tuple[str, ...] = ()  # what the statement being read binds

    def run(self, body: list[ast.stmt]) -> None:
        statements = list(_statements(body))
        for _ in range(2):  # twice: a loop may carry a value into an earlier line
            for stmt, _withs in statements:
                if self.follow_all or _loaded(_header(stmt)) & self.tainted:
                    self.tainted |= _stored(stmt)
            for stmt, _withs in reversed(statements):
                if _stored(stmt) & self.needed:
                    self.needed |= _loaded(_header(stmt))
        for stmt, withs in statements:
            if not self._feeds_target(stmt):
                continue
            self._binds = tuple(sorted(_stored(stmt) - {RETURN})) if isinstance(
                stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else ()
            for expr in _header(stmt):
                self._expression_sites(expr)
            self._block_sites(stmt, withs)
        self._before_tape_sites(statements)
        self.sites = [replace(x, binds=_carried(statements, x.binds,
                                                x.lineno - self.first_line + 1))
                      if x.binds else x for x in self.sites]

    def _feeds_target(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt``'s result flows into the target (always, without a target)."""
        return self.target is None or bool(_stored(stmt) & self.needed)

    def _relevant(self, node: ast.AST) -> str | None:
        """The first followed name ``node`` uses (``""`` when following everything)."""
        if self.follow_all:
            used = sorted(_loaded([node]))
            return used[0] if used else ""
        used = sorted(_loaded([node]) & self.tainted)
        return used[0] if used else None

    def _add(self, node: ast.AST, kind: str, name: str) -> None:
        lineno = getattr(node, "lineno", 1)
        text = self.lines[lineno - 1].strip() if lineno <= len(self.lines) else ""
        binds = self._binds if kind in ("to_python", "to_numpy") else ()
        self.sites.append(Site(lineno + self.first_line - 1, text, kind, name, binds=binds))

    def _expression_sites(self, expr: ast.AST) -> None:
        for node in _walk(expr):
            if isinstance(node, ast.Call):
                self._call_site(node)
            elif isinstance(node, ast.Attribute) and node.attr == "data" \
                    and isinstance(node.ctx, ast.Load):
                name = self._relevant(node.value)
                if name is not None:
                    self._add(node, "data", name)
            elif isinstance(node, ast.Compare):
                name = self._relevant(node)
                if name is not None:
                    self._add(node, "comparison", name)

    def _call_site(self, call: ast.Call) -> None:
        func = call.func
        args: list[ast.AST] = [*call.args, *(k.value for k in call.keywords)]
        kind = None
        subject: list[ast.AST] = args
        if isinstance(func, ast.Attribute):
            dotted = dotted_name(func)
            module = dotted.split(".")[0] if dotted else ""
            if func.attr == "detach":
                kind, subject = "detach", [func.value]
            elif func.attr in ("item", "tolist") and not args:
                kind, subject = "to_python", [func.value]
            elif func.attr == "numpy" and not args:
                kind, subject = "to_numpy", [func.value]
            elif func.attr == "astype" and args and _INTEGER.search(ast.unparse(args[0])):
                kind, subject = "integer", [func.value]
            elif func.attr == "stop_gradient":
                kind = "stop_gradient"
            elif module == "math":
                kind = "to_python"
            elif module in _NUMPY_MODULES and func.attr in _TO_NUMPY and dotted.count(".") == 1:
                kind = "to_numpy"
        elif isinstance(func, ast.Name):
            if func.id in _PY_NUMBER:
                kind = "to_python"
            elif func.id == "stop_gradient":
                kind = "stop_gradient"
        if kind is None:
            return
        for node in subject:
            name = self._relevant(node)
            if name is not None:
                self._add(call, kind, name)
                return

    def _block_sites(self, stmt: ast.stmt, withs: tuple[ast.With, ...]) -> None:
        """A statement inside ``with wg.no_grad():`` (or ``tape.stop_recording()``) that
        uses a followed value: the ``with`` line is the site."""
        for block in withs:
            kind = _block_kind(block)
            if kind is None:
                continue
            name = self._relevant_in(_header(stmt))
            if name is not None:
                self._add(block, kind, name)

    def _relevant_in(self, nodes: list[ast.AST]) -> str | None:
        for node in nodes:
            name = self._relevant(node)
            if name:
                return name
        return None

    def _before_tape_sites(self, statements: list[tuple[ast.stmt, tuple[ast.With, ...]]]) -> None:
        """Statements that compute from a followed value before a ``with GradientTape()``
        block opens, binding a name the block then uses."""
        for k, (stmt, _) in enumerate(statements):
            if not (isinstance(stmt, (ast.With, ast.AsyncWith)) and _is_tape(stmt)):
                continue
            inside = set()
            for inner, withs in statements[k + 1:]:
                if stmt in withs:
                    inside |= _loaded(_header(inner))
            for before, withs in statements[:k]:
                if withs or isinstance(before, (ast.With, ast.AsyncWith)):
                    continue
                name = self._relevant_in(_header(before))
                carried = sorted(_stored(before) & inside)
                if name is not None and name not in _stored(before) and carried and \
                        self._feeds_target(before):
                    self._add(before, "before_tape", carried[0])


def _block_kind(block: ast.With) -> str | None:
    for item in block.items:
        expr = item.context_expr
        if isinstance(expr, ast.Call):
            name = dotted_name(expr.func).rsplit(".", 1)[-1]
            if name == "no_grad":
                return "no_grad"
            if name == "stop_recording":
                return "stop_recording"
    return None


def _is_tape(block: ast.With) -> bool:
    return any(isinstance(i.context_expr, ast.Call)
               and dotted_name(i.context_expr.func).endswith("GradientTape") for i in block.items)


#: Fallback for code that does not parse: keywords per kind, line by line.
_KEYWORDS = [
    ("no_grad", re.compile(r"\bno_grad\s*\(")),
    ("stop_recording", re.compile(r"\bstop_recording\s*\(")),
    ("detach", re.compile(r"\.detach\s*\(")),
    ("stop_gradient", re.compile(r"\bstop_gradient\s*\(")),
    ("data", re.compile(r"\.data\b")),
    ("to_python", re.compile(r"\b(float|int)\s*\(|\.item\s*\(|\.tolist\s*\(|\bmath\.\w+\s*\(")),
    ("to_numpy", re.compile(r"\.numpy\s*\(|\bnp\.(asarray|array)\s*\(")),
    ("integer", re.compile(r"\.astype\s*\([^)]*(int|bool)")),
]


def _scan_lines(lines: list[str], names: set[str], first_line: int) -> list[Site]:
    sites = []
    for k, line in enumerate(lines):
        used = sorted(n for n in names if re.search(rf"\b{re.escape(n)}\b", line))
        if names and not used:
            continue
        for kind, pattern in _KEYWORDS:
            if pattern.search(line):
                sites.append(Site(k + first_line, line.strip(), kind, used[0] if used else ""))
    return sites
