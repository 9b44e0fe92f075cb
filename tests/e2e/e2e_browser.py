"""Debian's Chromium through Playwright for Python: whether it is there, how it is launched,
and a fresh tab that records the page's JavaScript errors and websockets.

``playwright install`` cannot download browsers on offline machines, so the tests use the
system's Chromium (``apt-get install chromium``) through ``executable_path``, with the
sandbox off (root in containers) and nothing that reaches the network on its own.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "Tab", "launch", "missing_reason", "open_tab"]

#: The browser (``E2E_CHROMIUM`` overrides the path).
CHROMIUM = Path(os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def missing_reason() -> str | None:
    """Why the browser tests cannot run here (``None``: they can)."""
    if importlib.util.find_spec("playwright") is None:
        return ("browser tests need Playwright for Python (pip install playwright; it is in "
                "wengert's [test] extra)")
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        return (f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install "
                "chromium, or run scripts/e2e_setup.sh as root)")
    if importlib.util.find_spec("jupyterlab") is None:
        return "browser tests need JupyterLab (pip install -e '.[test]')"
    return None


def launch(playwright: Any) -> Any:
    """Headless Chromium from :data:`CHROMIUM`."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


@dataclass
class Tab:
    """A page in a context of its own, with what it did that a test may check."""

    page: Any
    errors: list[str] = field(default_factory=list)
    websockets: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.page.context.close()


def open_tab(browser: Any, width: int = 1400, height: int = 1000,
             route: Callable[[Any], None] | None = None, timeout: float = 30.0) -> Tab:
    """A fresh tab (light colour scheme, scale 1); ``route`` handles every request."""
    context = browser.new_context(viewport={"width": width, "height": height},
                                  device_scale_factor=1, color_scheme="light")
    if route is not None:
        context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(timeout * 1000)
    tab = Tab(page)
    page.on("pageerror", lambda e: tab.errors.append(str(e)))
    page.on("websocket", lambda ws: tab.websockets.append(ws.url))
    return tab
