"""Fixtures of the documentation site's tests: the built site (``scripts/build_docs.sh``)
served on 127.0.0.1, and Chromium through the browser tests' shared fixtures
(``tests/e2e/e2e_fixtures.py``).

Without a built site, or without Chromium, the tests skip and say why; with
``WENGERT_DOCS_REQUIRED=1`` (``scripts/build_docs.sh --test`` sets it after building) a
missing site fails them, and on CI (``CI=true``) a missing browser does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# the browser tests' helpers, and docs/ (its _api.py and _vendor.py)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))

from docs_site import REQUIRED, SITE, SiteServer, missing_site_reason, serve  # noqa: E402
from e2e_browser import missing_reason  # noqa: E402
from e2e_fixtures import browser, pytest_terminal_summary, report, shots_dir  # noqa: E402,F401


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # What is missing skips the tests and says why, as in tests/e2e; but a site that
    # ./test has just built (WENGERT_DOCS_REQUIRED=1) and a browser on CI (CI=true) must be
    # there, so their absence fails the fixtures below instead.
    site_reason = None if REQUIRED else missing_site_reason()
    browser_reason = None if os.environ.get("CI") == "true" else missing_reason()
    here = Path(__file__).resolve().parent
    for item in items:
        if here not in Path(str(item.fspath)).resolve().parents:
            continue
        if site_reason and item.get_closest_marker("docs_site") is not None:
            item.add_marker(pytest.mark.skip(reason=site_reason))
        elif browser_reason and item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.skip(reason=browser_reason))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docs_site: needs the built site (scripts/build_docs.sh)")


@pytest.fixture(scope="session")
def site_server() -> Iterator[SiteServer]:
    """The built site on 127.0.0.1 (a free port)."""
    reason = missing_site_reason()
    if reason:
        pytest.fail(reason)
    server = serve(SITE)
    try:
        yield server
    finally:
        server.stop()
