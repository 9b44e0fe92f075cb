"""The three scripts nbconvert's HTML export loads from public CDNs, served from local npm copies.

An exported notebook with widgets loads require.js (cdnjs), the widgets' html-manager
(unpkg, ``embed-amd.js`` and the fonts next to it) and, through the html-manager's
require.js loader, each widget's npm module from jsDelivr (for an anywidget:
``anywidget@~0.11.*/dist/index.js``). wengert's own ES module is not among them: it
travels inside the widget state. These machines are offline, so the browser tests
answer those requests from ``tests/e2e/node_modules`` (``npm ci --prefix tests/e2e``,
pinned in ``package.json``) by intercepting them in Playwright, exactly as a user
online would get them from the CDN; any other request to the network is aborted and
recorded.

Examples
--------
>>> local_file("https://cdn.jsdelivr.net/npm/anywidget@~0.11.*/dist/index.js").as_posix()[-36:]
'node_modules/anywidget/dist/index.js'
>>> local_file("https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js") is None
True
>>> satisfies("0.11.0", "~0.11.*"), satisfies("1.0.15", "*"), satisfies("2.1.10", "2.1.11")
(True, True, False)
"""

from __future__ import annotations

import json
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "NODE_MODULES",
    "PACKAGES",
    "CdnRequests",
    "cdn_package",
    "installed_version",
    "local_file",
    "missing_packages",
    "satisfies",
]

#: Where ``npm ci --prefix tests/e2e`` puts the copies.
NODE_MODULES = Path(__file__).resolve().parent / "node_modules"

#: CDN address pattern -> npm package whose files answer it (``path`` is the file inside
#: the package, ``version`` the version or range the page asked for).
_ROUTES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/(?P<version>[^/]+)/"
                r"require(?:\.min)?\.js$"), "requirejs", "require.js"),
    (re.compile(r"^https://unpkg\.com/@jupyter-widgets/html-manager@(?P<version>[^/]+)/"
                r"(?P<path>dist/[^?#]+)"), "@jupyter-widgets/html-manager", ""),
    (re.compile(r"^https://cdn\.jsdelivr\.net/npm/anywidget@(?P<version>[^/]+)/"
                r"(?P<path>dist/[^?#]+)"), "anywidget", ""),
)

#: The npm packages the export needs (``package.json`` pins them).
PACKAGES = tuple(package for _, package, _ in _ROUTES)


def _decoded(url: str) -> str:
    return url.replace("%2A", "*").replace("%2a", "*").replace("%7E", "~").replace("%7e", "~")


def cdn_package(url: str) -> tuple[str, str, str] | None:
    """``(package, requested version, file inside the package)`` for a CDN address the
    export loads, ``None`` for any other address.

    Examples
    --------
    >>> cdn_package("https://unpkg.com/@jupyter-widgets/html-manager@*/dist/embed-amd.js")
    ('@jupyter-widgets/html-manager', '*', 'dist/embed-amd.js')
    >>> cdn_package("https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js")
    ('requirejs', '2.1.10', 'require.js')
    """
    url = _decoded(url)
    for pattern, package, fixed_path in _ROUTES:
        m = pattern.match(url)
        if m:
            return package, m["version"], fixed_path or m["path"]
    return None


def local_file(url: str, node_modules: Path = NODE_MODULES) -> Path | None:
    """The local copy that answers ``url`` (``None``: not one of the CDN scripts)."""
    found = cdn_package(url)
    if found is None:
        return None
    package, _, path = found
    return node_modules / package / path


def installed_version(package: str, node_modules: Path = NODE_MODULES) -> str | None:
    """The version of ``package`` under ``node_modules`` (``None``: not installed)."""
    manifest = node_modules / package / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text())["version"])


def missing_packages(node_modules: Path = NODE_MODULES) -> list[str]:
    """The packages of :data:`PACKAGES` that are not installed."""
    return [p for p in PACKAGES if installed_version(p, node_modules) is None]


def _parts(version: str) -> list[str]:
    return version.split("-", 1)[0].split(".")


def satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` (``1.2.3``) is what a CDN gives for ``spec``: ``*`` (any),
    an exact version, ``~1.2.*`` / ``~1.2.3`` / ``1.2.*`` (same minor), ``^1.2.3``
    (same major, or same minor below 1.0).

    Examples
    --------
    >>> satisfies("1.0.15", "^1.0.0"), satisfies("0.12.0", "^0.11.0")
    (True, False)
    >>> satisfies("0.11.3", "~0.11.0"), satisfies("0.11.0", "~0.11.3")
    (True, False)
    """
    spec = spec.strip()
    have = _parts(version)
    if spec in ("*", "latest", ""):
        return True
    if spec[0] == "^":
        want = _parts(spec[1:])
        keep = 1 if want[0] != "0" else 2
        return have[:keep] == want[:keep] and _not_older(have, want)
    if spec[0] == "~" or spec.endswith(".*"):
        want = _parts(spec.lstrip("~"))
        return have[:2] == want[:2] and _not_older(have, want)
    if re.fullmatch(r"\d+\.\d+\.\d+", spec):
        return have == _parts(spec)
    raise ValueError(f"version range {spec!r} is not one this helper understands")


def _not_older(have: list[str], want: list[str]) -> bool:
    digits = [(int(h), int(w)) for h, w in zip(have, want) if w.isdigit() and h.isdigit()]
    return [h for h, _ in digits] >= [w for _, w in digits]


@dataclass
class CdnRequests:
    """A Playwright route handler: CDN scripts from ``node_modules``, the page's own origin
    passed through, everything else aborted. It records what it served (``served``:
    address -> local file), what it refused (``blocked``) and version mismatches
    (``mismatches``: the page asked for a version the local copy does not satisfy)."""

    node_modules: Path = NODE_MODULES
    allowed_prefixes: tuple[str, ...] = ("file://", "http://127.0.0.1", "data:", "blob:")
    served: dict[str, Path] = field(default_factory=dict)
    blocked: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)

    def __call__(self, route: Any) -> None:
        url = route.request.url
        found = cdn_package(url)
        if found is not None:
            package, wanted, path = found
            have = installed_version(package, self.node_modules)
            file = self.node_modules / package / path
            if have is None or not file.is_file():
                self.blocked.append(url)
                route.abort("internetdisconnected")
                return
            if not satisfies(have, wanted):
                self.mismatches.append(f"{url}: asks for {package}@{wanted}, local copy is {have}")
            self.served[url] = file
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            if file.suffix == ".js":
                kind = "application/javascript"
            route.fulfill(status=200, body=file.read_bytes(), headers={
                "content-type": kind, "access-control-allow-origin": "*"})
            return
        if url.startswith(self.allowed_prefixes):
            route.continue_()
            return
        self.blocked.append(url)
        route.abort("internetdisconnected")
