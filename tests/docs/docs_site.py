"""The built documentation site (``docs/_build/html``) served on 127.0.0.1, and a Chromium
tab that may fetch from that server only.

``LocalOnly`` is the tab's route handler: requests to the site's own origin (and
``data:``/``blob:`` URLs) go through, every other request is aborted and recorded, so a
page that reaches for a CDN fails its test instead of going online. ``PageWatch`` records
what went wrong on a page: JavaScript errors, console errors, failed requests and
responses with an error status.

Examples
--------
>>> rule = LocalOnly("http://127.0.0.1:8000")
>>> rule.allows("http://127.0.0.1:8000/_static/vendor/requirejs/require.js")
True
>>> rule.allows("http://127.0.0.1:80000/x"), rule.allows("https://cdn.jsdelivr.net/npm/x")
(False, False)
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SITE", "LocalOnly", "PageWatch", "SiteServer", "explorer_state", "html_pages",
           "missing_site_reason", "serve"]

ROOT = Path(__file__).resolve().parents[2]
#: Where ``scripts/build_docs.sh`` writes the site.
SITE = ROOT / "docs" / "_build" / "html"
#: Set by ``./test`` (and ``scripts/build_docs.sh --test``): a missing site fails the tests
#: instead of skipping them.
REQUIRED = os.environ.get("WENGERT_DOCS_REQUIRED", "") == "1"


def missing_site_reason(site: Path = SITE) -> str | None:
    """Why the site tests cannot run (``None``: the site is built)."""
    if (site / "index.html").is_file():
        return None
    return f"no built site at {site}: run scripts/build_docs.sh"


def html_pages(site: Path = SITE) -> list[str]:
    """The site's pages (paths relative to ``site``), the JupyterLite app's own excepted."""
    skip = ("_static/", "_sources/", "_images/", "lite/")
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not p.relative_to(site).as_posix().startswith(skip))


def explorer_state(model: dict[str, Any]) -> dict[str, Any]:
    """The state of a saved explorer model (``{"state", "buffers"...}`` of the widget-state
    format), its frames unpacked when they were saved packed (a base64 buffer at
    ``frames.packed``)."""
    import base64

    from wengert.jupyter.explorer.widget import unpack

    state = dict(model["state"])
    for buffer in model.get("buffers", []):
        if buffer["path"] == ["frames", "packed"]:
            blob = base64.b64decode(buffer["data"])
            state["frames"] = unpack({**state["frames"], "packed": blob})
    return state


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript",
                      ".mjs": "text/javascript", ".json": "application/json"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@dataclass
class SiteServer:
    """A static HTTP server on 127.0.0.1 (a free port) over a folder, in a thread."""

    httpd: http.server.ThreadingHTTPServer
    thread: threading.Thread

    @property
    def origin(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str = "") -> str:
        return f"{self.origin}/{path}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


def serve(folder: Path) -> SiteServer:
    """Serve ``folder`` on 127.0.0.1 until :meth:`SiteServer.stop`."""
    handler = functools.partial(_Handler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="docs-site", daemon=True)
    thread.start()
    return SiteServer(httpd, thread)


@dataclass
class LocalOnly:
    """Route handler: the site's origin (and ``data:``, ``blob:``) passes, anything else is
    aborted and recorded in ``refused``."""

    origin: str
    refused: list[str] = field(default_factory=list)

    def allows(self, url: str) -> bool:
        return url.startswith((self.origin + "/", "data:", "blob:")) or url == self.origin

    def __call__(self, route: Any) -> None:
        url = route.request.url
        if self.allows(url):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort("blockedbyclient")


@dataclass
class PageWatch:
    """What went wrong on a page: ``errors`` (uncaught exceptions and console errors),
    ``failed`` (requests that failed or answered with a status >= 400)."""

    errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    #: requests sent and not yet finished or failed
    in_flight: set[Any] = field(default_factory=set)

    @classmethod
    def on(cls, page: Any) -> PageWatch:
        watch = cls()
        page.on("request", lambda r: watch.in_flight.add(r))
        page.on("requestfinished", lambda r: watch.in_flight.discard(r))
        page.on("requestfailed", lambda r: watch.in_flight.discard(r))
        page.on("pageerror", lambda e: watch.errors.append(f"pageerror: {e}"))
        page.on("console", lambda m: watch.errors.append(f"console.{m.type}: {m.text}")
                if m.type == "error" else None)
        page.on("requestfailed", lambda r: watch.failed.append(
            f"{r.url} ({r.failure})"))
        page.on("response", lambda r: watch.failed.append(f"{r.url} (HTTP {r.status})")
                if r.status >= 400 else None)
        return watch

    def settle(self, page: Any, quiet_ms: int = 300, timeout_ms: int = 20_000) -> None:
        """Wait until no request has been in flight for ``quiet_ms`` (fonts and modules a
        page asks for after its load event included)."""
        waited = quiet = 0
        while quiet < quiet_ms and waited < timeout_ms:
            page.wait_for_timeout(100)
            waited += 100
            quiet = quiet + 100 if not self.in_flight else 0
        if self.in_flight:
            self.failed += [f"{r.url} (still loading after {timeout_ms} ms)"
                            for r in self.in_flight]

    def problems(self) -> list[str]:
        return self.errors + self.failed

    def clear(self) -> None:
        self.in_flight.clear()
        self.errors.clear()
        self.failed.clear()
