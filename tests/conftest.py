"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def playwright_session() -> Iterator[Any]:
    """Playwright's sync API, started once for the whole run: every browser test launches its
    Chromium from it (two sync Playwrights cannot run at once in one thread, so tests of
    several folders in one process must share this one)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright for Python")
    playwright = sync_api.sync_playwright().start()
    try:
        yield playwright
    finally:
        playwright.stop()
