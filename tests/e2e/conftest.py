"""Fixtures of the real-browser tests: Debian's Chromium driven by Playwright for Python, a
JupyterLab server on a temporary copy of the test notebooks, and a report of screenshots
and timings printed at the end of the run.

The tests that drive a browser are marked ``browser`` (``pytest -m browser`` selects
them, ``-m "not browser"`` leaves them out). Without Chromium at ``/usr/bin/chromium``,
the ``playwright`` package or JupyterLab they are skipped with the reason
(``scripts/e2e_setup.sh`` installs what is missing on CI). Run them with
``pytest -n 2 --dist loadfile tests/e2e``: each file then starts what it needs once.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_browser import missing_reason
from e2e_fixtures import browser, pytest_terminal_summary, report, shots_dir  # noqa: F401 (registers them)
from e2e_lab import LabServer, start_lab

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: real-browser test (Chromium via Playwright)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = missing_reason()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def notebook_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary copy of ``tests/e2e/notebooks`` (the server may write to it)."""
    target = tmp_path_factory.mktemp("notebooks")
    for source in NOTEBOOKS.glob("*.ipynb"):
        shutil.copy(source, target / source.name)
    return target


@pytest.fixture(scope="session")
def lab_server(notebook_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 (no token, ``--allow-root``) serving :func:`notebook_dir`,
    stopped with its kernels at the end of the session."""
    server = start_lab(notebook_dir, tmp_path_factory.mktemp("jupyter-state"))
    try:
        yield server
    finally:
        server.stop()
