"""The JupyterLite lab inside the site, offline: served on 127.0.0.1 with every other
request refused, it opens a notebook (the outputs stripped, wengert's install cell first),
and the Pyodide kernel starts from the Pyodide core and the kernel's packages the site
serves, and runs Python.

What these tests do not show: running the notebooks themselves. They import NumPy, which
the browser fetches from Pyodide's CDN at run time (the site says so), and this machine
cannot reach it.
"""

from __future__ import annotations

from typing import Any

import pytest
from docs_site import SITE, LocalOnly, PageWatch
from e2e_browser import open_tab

pytestmark = [pytest.mark.browser, pytest.mark.docs_site]

#: Pyodide's first start compiles a 10 MB WebAssembly module: give it time.
KERNEL_TIMEOUT_MS = 180_000


def _notebooks() -> list[str]:
    return sorted(p.name for p in (SITE / "lite" / "files").glob("*.ipynb"))


def test_the_lite_build_carries_the_notebooks_wengert_and_the_pyodide_core():
    import json

    lite = SITE / "lite"
    assert _notebooks() == sorted(
        p.name for p in (SITE.parents[2] / "notebooks").glob("*.ipynb"))
    for name in _notebooks():
        nb = json.loads((lite / "files" / name).read_text())
        assert all(c.get("outputs", []) == [] for c in nb["cells"]), name
        assert "widgets" not in nb["metadata"], name
    assert list((lite / "pypi").glob("wengert-*.whl")), "no wengert wheel in lite/pypi"
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    lock = json.loads((lite / "static" / "pyodide" / "pyodide-lock.json").read_text())
    local = [p for p in lock["packages"].values() if "://" not in p["file_name"]]
    assert {p["name"] for p in local} >= {"micropip", "ipython", "jedi", "traitlets"}
    for p in local:
        assert (lite / "static" / "pyodide" / p["file_name"]).is_file(), p["file_name"]
    numpy = lock["packages"]["numpy"]["file_name"]
    assert numpy.startswith("https://cdn.jsdelivr.net/pyodide/v"), numpy


def test_the_lab_opens_a_notebook_offline(browser: Any, site_server: Any, shots_dir, report):
    rule = LocalOnly(site_server.origin)
    tab = open_tab(browser, 1400, 900, route=rule, timeout=60)
    watch = PageWatch.on(tab.page)
    try:
        page = tab.page
        name = _notebooks()[0]
        page.goto(site_server.url(f"lite/lab/index.html?path={name}"))
        page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        page.get_by_text("%pip install -q wengert").first.wait_for()
        assert page.locator(".jp-Notebook .jp-OutputArea-output").count() == 0
        shot = shots_dir / "docs_lite_lab.png"
        page.wait_for_timeout(1000)
        page.screenshot(path=str(shot))
        report(f"screenshot (docs site, JupyterLite lab with {name}): {shot}")
        assert rule.refused == [], rule.refused
    finally:
        tab.close()
    assert [f for f in watch.failed if "(HTTP" in f] == []


def test_the_pyodide_kernel_starts_from_the_site_and_runs_python(browser: Any, site_server: Any,
                                                                 shots_dir, report):
    rule = LocalOnly(site_server.origin)
    tab = open_tab(browser, 1200, 800, route=rule, timeout=60)
    watch = PageWatch.on(tab.page)
    try:
        page = tab.page
        code = "import sys; print('pyodide', sys.platform, 6 * 7)"
        page.goto(site_server.url(f"lite/repl/index.html?kernel=python&code={code}"))
        page.get_by_text("pyodide emscripten 42").first.wait_for(timeout=KERNEL_TIMEOUT_MS)
        shot = shots_dir / "docs_lite_repl.png"
        page.screenshot(path=str(shot))
        report(f"screenshot (docs site, JupyterLite REPL on the Pyodide kernel): {shot}")
        served = [u for u in rule.refused]
        assert served == [], f"requests off the site: {served}"
    finally:
        tab.close()
    assert [f for f in watch.failed if "(HTTP" in f] == []
