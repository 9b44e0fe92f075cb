"""The npm files the site serves itself, copied from ``docs/node_modules`` (``npm ci
--prefix docs``, pinned by ``docs/package.json`` and its lock file) into
``_static/vendor/``.

Examples
--------
>>> sorted(VENDORED)
['anywidget', 'html-manager', 'mathjax', 'requirejs']
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

__all__ = ["VENDORED", "copy_vendored", "npm_version"]

#: folder under ``_static/vendor`` -> (npm package, folder or file inside it, patterns left out)
VENDORED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # require.js: the AMD loader the html-manager's embedder needs.
    "requirejs": ("requirejs", "require.js", ()),
    # embed-amd.js renders the saved widget state; its fonts sit next to it.
    "html-manager": ("@jupyter-widgets/html-manager", "dist", ("*.map", "embed.js*")),
    # anywidget's AMD build (the explorer is an anywidget; its own ES module is in the state).
    "anywidget": ("anywidget", "dist", ("*.map",)),
    # MathJax 3 (the formulas of every page), with its fonts and components.
    "mathjax": ("mathjax", "es5", ("*.map",)),
}


def npm_version(package: str, node_modules: Path) -> str | None:
    """The installed version of ``package`` under ``node_modules`` (``None``: missing)."""
    manifest = node_modules / package / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text())["version"])


def copy_vendored(node_modules: Path, target: Path) -> Path:
    """Copy the :data:`VENDORED` files into ``target/vendor`` (fresh each build) and return
    ``target``, a folder for ``html_static_path``. Raises when a package is missing: the
    site never falls back to a CDN."""
    missing = [package for package, _, _ in VENDORED.values()
               if npm_version(package, node_modules) is None]
    if missing:
        raise RuntimeError(
            f"{', '.join(missing)} not installed under {node_modules}: run "
            "'npm ci --prefix docs' (scripts/build_docs.sh does) before building the docs")
    vendor = target / "vendor"
    shutil.rmtree(vendor, ignore_errors=True)
    vendor.mkdir(parents=True)
    for folder, (package, inside, leave_out) in VENDORED.items():
        source = node_modules / package / inside
        if source.is_dir():
            shutil.copytree(source, vendor / folder, ignore=shutil.ignore_patterns(*leave_out))
        else:
            (vendor / folder).mkdir()
            shutil.copy2(source, vendor / folder / source.name)
    return target
