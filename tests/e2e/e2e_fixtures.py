"""Fixtures shared by every browser test (``tests/e2e`` and the docs site's ``tests/docs``):
Chromium through Playwright, the end-of-run report of screenshots and timings, and where
the screenshots go. A ``conftest.py`` imports them (``from e2e_fixtures import ...``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_browser import launch

__all__ = ["REPORT_KEY", "browser", "pytest_terminal_summary", "report", "shots_dir"]

#: Key of the user properties that the end-of-run report prints.
REPORT_KEY = "e2e"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            lines += [str(v) for k, v in getattr(report, "user_properties", ()) if k == REPORT_KEY]
    if lines:
        terminalreporter.section("browser tests: screenshots and timings")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def report(record_property: Any) -> Callable[[str], None]:
    """``report("text")``: a line for the end-of-run summary (screenshot paths, timings),
    also printed at once (visible with ``-s``)."""

    def add(line: str) -> None:
        print(line)
        record_property(REPORT_KEY, line)

    return add


@pytest.fixture(scope="session")
def browser(playwright_session: Any) -> Iterator[Any]:
    """Chromium (``/usr/bin/chromium``), headless, through Playwright's sync API."""
    chromium = launch(playwright_session)
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="session")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: under pytest's temporary directory, or the directory
    named by ``WENGERT_E2E_SHOTS`` (kept after the run, e.g. for CI artifacts)."""
    chosen = os.environ.get("WENGERT_E2E_SHOTS")
    if chosen:
        path = Path(chosen)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("screenshots")
