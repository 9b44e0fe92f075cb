"""The JupyterLite part of the site: what ``jupyter lite build`` (run by jupyterlite-sphinx
at the end of the Sphinx build) starts from.

- ``lite-src/static/pyodide/``: the Pyodide core from the npm ``pyodide`` package (pinned in
  ``docs/package.json``), served by the site. Its lock file is rewritten: the pure-Python
  packages the kernel loads when it starts (micropip, IPython and their dependencies) are
  downloaded from PyPI at build time and served next to it; every other package of the
  Pyodide distribution (NumPy, matplotlib...) points at Pyodide's CDN, where the browser
  fetches it at run time, the first time a notebook imports it.
- ``lite-src/jupyter_lite_config.json``: the wheels piplite offers (wengert's, and the
  kernel's dependencies that Pyodide does not ship).
- ``lite-contents/``: the notebooks with their outputs stripped and a first cell that
  installs wengert from the site.

Examples
--------
>>> lock = {"micropip": {"depends": []}, "ipython": {"depends": ["prompt_toolkit"]},
...         "prompt-toolkit": {"depends": []}, "numpy": {"depends": []}}
>>> sorted(closure(lock, ["ipython", "micropip"]))
['ipython', 'micropip', 'prompt-toolkit']
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_ROOTS", "PIPLITE_EXTRA", "closure", "prepare_lite", "strip_notebook"]

#: What the Pyodide kernel loads from the Pyodide distribution when it starts.
KERNEL_ROOTS = ("micropip", "ipython", "jedi", "traitlets")
#: What the kernel installs when it starts that the Pyodide distribution does not ship
#: (piplite would fetch it from PyPI at run time): offered as wheels from the site.
PIPLITE_EXTRA = ("comm==0.2.3",)
#: The files of the npm ``pyodide`` package the browser loads.
PYODIDE_FILES = ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
                 "python_stdlib.zip", "package.json")

INSTALL_CELL = "%pip install -q wengert anywidget"
INTRO = (
    "*This copy runs in your browser* (JupyterLite, Pyodide kernel). The next cell installs "
    "wengert from this site; NumPy and matplotlib come from Pyodide's own distribution (its "
    "CDN) and anywidget from PyPI, the first time they are needed."
)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(packages: dict[str, Any], roots: Iterable[str]) -> set[str]:
    """The lock's names of ``roots`` and everything they depend on (names normalised)."""
    by_norm = {_norm(k): k for k in packages}
    todo, seen = [_norm(r) for r in roots], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [_norm(d) for d in packages[by_norm[name]]["depends"]]
    return {by_norm[n] for n in seen}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download(specs: list[str], cache: Path) -> None:
    """``pip download`` the pure-Python wheels ``specs`` (``name==version``) into ``cache``."""
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--python-version", "3.14", "--dest", str(cache),
                    *specs], check=True)


def _cached_wheel(cache: Path, name: str, version: str) -> Path | None:
    for wheel in cache.glob("*.whl"):
        dist, ver = wheel.name.split("-")[:2]
        if _norm(dist) == _norm(name) and ver == version:
            return wheel
    return None


def strip_notebook(source: Path, target: Path) -> None:
    """Copy a notebook without outputs, execution counts or widget state, with a first
    cell that installs wengert (and a note saying where the rest comes from)."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb["metadata"].pop("widgets", None)
    nb["cells"][:0] = [
        {"cell_type": "markdown", "id": "lite-intro", "metadata": {}, "source": INTRO},
        {"cell_type": "code", "id": "lite-install", "metadata": {}, "execution_count": None,
         "outputs": [], "source": INSTALL_CELL},
    ]
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def prepare_lite(node_modules: Path, build: Path, notebooks: list[Path],
                 wheels: list[Path]) -> tuple[Path, Path]:
    """Write ``build/lite-src`` and ``build/lite-contents``; return them."""
    pyodide_pkg = node_modules / "pyodide"
    if not (pyodide_pkg / "pyodide.mjs").is_file():
        raise RuntimeError(f"no Pyodide core in {pyodide_pkg}: run 'npm ci --prefix docs' "
                           "(scripts/build_docs.sh does)")
    if not wheels:
        raise RuntimeError("no wengert wheel for the lite build: scripts/build_docs.sh "
                           "builds it into docs/_build/lite-wheels")
    src, contents = build / "lite-src", build / "lite-contents"
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(contents, ignore_errors=True)
    static = src / "static" / "pyodide"
    static.mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copy2(pyodide_pkg / name, static / name)

    lock = json.loads((pyodide_pkg / "pyodide-lock.json").read_text())
    version = json.loads((pyodide_pkg / "package.json").read_text())["version"]
    cdn = f"https://cdn.jsdelivr.net/pyodide/v{version}/full/"
    local = closure(lock["packages"], KERNEL_ROOTS)
    cache = build / "lite-cache"
    want = [f"{lock['packages'][n]['name']}=={lock['packages'][n]['version']}" for n in local]
    want += list(PIPLITE_EXTRA)
    missing = [s for s in want if _cached_wheel(cache, *s.split("==")) is None]
    if missing:
        _download(missing, cache)
    for key, entry in lock["packages"].items():
        if key in local:
            wheel = _cached_wheel(cache, entry["name"], entry["version"])
            assert wheel is not None, entry["name"]
            shutil.copy2(wheel, static / wheel.name)
            entry["file_name"], entry["sha256"] = wheel.name, _sha256(wheel)
        else:
            entry["file_name"] = cdn + entry["file_name"]
    (static / "pyodide-lock.json").write_text(json.dumps(lock, indent=1))

    extra = [_cached_wheel(cache, *s.split("==")) for s in PIPLITE_EXTRA]
    config = {"PipliteAddon": {"piplite_urls": [str(w) for w in [*wheels, *extra]]}}
    (src / "jupyter_lite_config.json").write_text(json.dumps(config, indent=1))

    contents.mkdir(parents=True)
    for nb in notebooks:
        strip_notebook(nb, contents / nb.name)
    return src, contents
