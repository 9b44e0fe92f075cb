"""The package's layers point one way: read from the import graph of ``src/wengert``.

Layers, lowest first: ``core`` (NumPy and the standard library only), ``ops``
(and ``wengert.numpy``, built from the op registry), the front ends (tensors,
dual numbers, tapes, NumPy dispatch), the transforms, the package itself. A
module imports only modules of its own layer or lower ones, no import cycle
exists, no module imports inside a function body to dodge one, and no private
name (``_x``) is imported from another layer.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "src" / "wengert"

#: Layer of each module (by dotted name below ``wengert``); a package's modules
#: are in its layer unless listed.
LAYERS = {
    "core": 0,
    "ops": 1,
    "numpy": 1,
    "interop": 2,
    "reverse": 2,
    "forward": 2,
    "transforms": 3,
    "custom": 3,
    "testing": 3,
    "graph": 4,
    "jupyter": 5,
    "": 9,  # wengert/__init__.py: re-exports only
}


def _modules() -> dict[str, pathlib.Path]:
    mods = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _layer(mod: str) -> int:
    head = mod.split(".")[0]
    if head not in LAYERS:
        pytest.fail(f"module wengert.{mod} has no layer in tests/test_layers.py: add it")
    return LAYERS[head]


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        name = node.module or ""
        return name[len("wengert."):] if name.startswith("wengert.") else (
            "" if name == "wengert" else "<external>:" + name)
    base = mod.split(".") if mod else []
    if not is_pkg:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports() -> list[tuple[str, str, list[str], bool]]:
    """(module, imported module, imported names, inside a function) for every import of
    a wengert module."""
    found = []
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text())
        is_pkg = path.name == "__init__.py"
        functions = [n for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        nested = {id(n) for f in functions for n in ast.walk(f) if n is not f}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(mod, is_pkg, node)
                if target.startswith("<external>"):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}" if target else alias.name
                    if sub in MODULES:
                        found.append((mod, sub, [], id(node) in nested))
                    else:
                        found.append((mod, target, [alias.name], id(node) in nested))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("wengert"):
                        target = alias.name[len("wengert."):] if "." in alias.name else ""
                        found.append((mod, target, [], id(node) in nested))
    return found


IMPORTS = _imports()


def test_every_module_has_a_layer():
    for mod in MODULES:
        _layer(mod)


def test_imports_point_down_the_layers():
    wrong = [
        f"wengert.{mod} (layer {_layer(mod)}) imports wengert.{target} (layer {_layer(target)})"
        for mod, target, _, _ in IMPORTS
        if target != mod and not target.startswith(mod + ".") and _layer(target) > _layer(mod)
    ]
    assert not wrong, "imports that point up the layers:\n" + "\n".join(wrong)


def test_no_import_inside_a_function():
    inside = [f"wengert.{mod} imports wengert.{t} inside a function"
              for mod, t, _, nested in IMPORTS if nested]
    assert not inside, "\n".join(inside)


def test_no_private_name_imported_from_another_layer():
    private = [
        f"wengert.{mod} imports {name} from wengert.{target}"
        for mod, target, names, _ in IMPORTS
        for name in names
        if name.startswith("_") and _layer(target) != _layer(mod)
    ]
    assert not private, "\n".join(private)


def test_no_import_cycle():
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for mod, target, _, _ in IMPORTS:
        t = target
        while t not in MODULES and "." in t:
            t = t.rsplit(".", 1)[0]
        # a package's __init__ importing its own children is its face, not a cycle edge
        if t in MODULES and t != mod and not (
            MODULES[mod].name == "__init__.py" and t.startswith(mod + ".") or mod == ""
        ):
            edges[mod].add(t)
    # Iterative depth-first search for a back edge.
    state: dict[str, int] = {}
    for start in sorted(MODULES):
        if start in state:
            continue
        stack = [(start, iter(sorted(edges[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(f"wengert.{m}" for m in cycle))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(edges[nxt]))))
                path.append(nxt)


def test_core_imports_only_numpy_and_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"numpy", "__future__"}
    bad = []
    for mod, path in MODULES.items():
        if _layer(mod) != 0:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            bad += [f"wengert.{mod} imports {n}" for n in names
                    if n.split(".")[0] not in allowed and not n.startswith("wengert.core")]
    assert not bad, "\n".join(bad)


def test_ops_import_no_front_end():
    ups = [f"wengert.{mod} imports wengert.{target}" for mod, target, _, _ in IMPORTS
           if _layer(mod) == 1 and _layer(target) > 1]
    assert not ups, "\n".join(ups)


#: Modules whose tuned loops are deliberately long (each says why in its docstring).
FENCED = {"core.sweep_fast"}


def test_no_function_outside_a_fenced_module_is_longer_than_100_lines():
    long = []
    for mod, path in MODULES.items():
        if mod in FENCED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > 100:
                    long.append(f"wengert.{mod}.{node.name}: {lines} lines")
    assert not long, "split these (or fence the module, saying why):\n" + "\n".join(long)
