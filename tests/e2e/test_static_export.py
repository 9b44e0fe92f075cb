"""The explorer in the static HTML export of the test notebook: it draws and steps in
Chromium with no kernel anywhere.

The notebook is run headlessly with its widget state saved (nbclient, as ``jupyter
nbconvert --execute`` does) and exported with nbconvert's HTML exporter. The page loads
require.js, the widgets' html-manager and anywidget's AMD build from public CDNs; here
they come from the local npm copies in ``tests/e2e/node_modules`` through Playwright's
request interception (:mod:`e2e_cdn`), as a user online gets them. wengert's own ES module
and style sheet are not among them: they travel inside the widget state, which this test
checks too. A second notebook (``explorer_packed.ipynb``) holds an explorer whose frames are
packed: their binary buffer is saved base64-encoded in the widget state and the static page
unpacks it and steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from e2e_browser import Tab, open_tab
from e2e_cdn import NODE_MODULES, CdnRequests, cdn_package, missing_packages
from e2e_expected import notebook_explorer_data, panel_texts
from e2e_explorer import press, read_view, wait_drawn, wait_step_label
from e2e_export import (
    cdn_urls,
    embedded_widget_state,
    embedded_widget_views,
    execute_with_widget_state,
    export_html,
)

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).resolve().parent / "notebooks" / "explorer_e2e.ipynb"
#: The step the notebook's last cell sets from Python (``explorer.step = 4``).
SAVED_STEP = 4


@dataclass(frozen=True)
class Export:
    """The executed notebook (``.ipynb`` with widget state) and its HTML export."""

    notebook: Path
    html_path: Path
    html: str
    nb: Any


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Export:
    folder = tmp_path_factory.mktemp("export")
    executed = folder / NOTEBOOK.name
    nb = execute_with_widget_state(NOTEBOOK, executed)
    html_path = folder / "explorer_e2e.html"
    html = export_html(nb, html_path)
    return Export(executed, html_path, html, nb)


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return notebook_explorer_data(NOTEBOOK, until="explore")


def _explorer_models(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items()
            if v["model_name"] == "AnyModel" and "frames" in v["state"]}


def test_the_executed_notebook_keeps_the_widget_state(export):
    saved = export.nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]
    models = _explorer_models(saved["state"])
    assert len(models) == 1, f"expected one explorer model, got {sorted(saved['state'])}"
    (model,) = models.values()
    assert model["state"]["step"] == SAVED_STEP


def test_the_export_embeds_the_explorer_and_its_module(export, expected):
    from wengert.jupyter.explorer.widget import css_source, esm_source

    state = embedded_widget_state(export.html)
    models = _explorer_models(state)
    assert len(models) == 1, "the exported HTML holds no explorer widget state"
    (model_id, model), = models.items()
    assert embedded_widget_views(export.html) == [model_id]
    assert model["model_module"] == "anywidget"
    # wengert's ES module and style sheet travel inside the state: nothing of wengert is
    # fetched.
    assert model["state"]["_esm"] == esm_source()
    assert model["state"]["_css"] == css_source()
    assert model["state"]["frames"]["steps"] == expected["steps"]
    assert model["state"]["step"] == SAVED_STEP


def test_the_export_asks_cdns_for_require_js_and_the_html_manager(export):
    mapped = [u for u in cdn_urls(export.html) if cdn_package(u) is not None]
    packages = sorted({cdn_package(u)[0] for u in mapped})
    assert packages == ["@jupyter-widgets/html-manager", "requirejs"], cdn_urls(export.html)


@pytest.fixture
def static_tab(browser: Any, export: Export) -> Iterator[tuple[Tab, CdnRequests]]:
    """The exported page opened from a file:// URL (as a person opens a saved page), the
    CDN scripts answered from the local npm copies, every other network request refused."""
    if missing_packages():
        pytest.skip(f"no local copies of {', '.join(missing_packages())} in {NODE_MODULES}: "
                    "run scripts/e2e_setup.sh (npm ci --prefix tests/e2e)")
    requests = CdnRequests()
    tab = open_tab(browser, 1300, 1000, route=requests)
    try:
        tab.page.goto(export.html_path.as_uri())
        yield tab, requests
    finally:
        tab.close()


def test_the_static_page_draws_and_steps_without_a_kernel(static_tab, expected, shots_dir,
                                                         report):
    from wengert.jupyter.explorer.frames import step_label, step_view

    tab, requests = static_tab
    page = tab.page
    root = wait_drawn(page)
    view = read_view(root)
    names = expected["nodes"]["name"]
    assert view.mode == "svg"
    assert sorted(view.items) == list(range(len(names)))
    # It opens where the notebook left it (the step set from Python), then steps alone.
    assert view.label == step_label(expected, SAVED_STEP)
    assert view.current == expected["seeds"][0][0]
    total = expected["steps"]["total"]
    for step in range(SAVED_STEP + 1, total):
        before = read_view(root)
        press(root, "next")
        view = wait_step_label(root, step_label(expected, step))
        want = step_view(expected, step)
        assert view.current == want["node"], f"step {step}: highlight on {view.current}"
        assert view.side != before.side, f"step {step}: the side panel did not change"
        assert view.current_stroke is not None and view.current_stroke >= 3
        for text in panel_texts(want):
            assert text in view.side, f"step {step}: {text!r} missing from {view.side!r}"
    assert "w̄ = 0 + 0.9 = 0.9" in view.side
    press(root, "first")
    first = wait_step_label(root, step_label(expected, 0))
    assert first.current == 0 and "1.5 × 0.8 = 1.2" in first.side
    press(root, "last")
    wait_step_label(root, step_label(expected, total - 1))
    shot = shots_dir / "static_export_last_step.png"
    root.screenshot(path=str(shot))
    report(f"screenshot (static HTML export, last step): {shot}")
    page_shot = shots_dir / "static_export_page.png"
    page.screenshot(path=str(page_shot), full_page=True)
    report(f"screenshot (static HTML export, page): {page_shot}")

    assert tab.websockets == [], f"the static page opened websockets: {tab.websockets}"
    assert requests.mismatches == []
    served = sorted({cdn_package(u)[0] for u in requests.served})
    assert served == ["@jupyter-widgets/html-manager", "anywidget", "requirejs"], served
    assert not [u for u in requests.blocked if cdn_package(u) is not None]
    assert tab.errors == []


# -- packed frames: a binary buffer in the saved state, drawn from the static page ----------
PACKED_NOTEBOOK = NOTEBOOK.with_name("explorer_packed.ipynb")
#: The step its last cell sets from Python (the seed of its 76 equations).
PACKED_STEP = 76


@pytest.fixture(scope="module")
def packed_export(tmp_path_factory: pytest.TempPathFactory) -> Export:
    folder = tmp_path_factory.mktemp("packed")
    executed = folder / PACKED_NOTEBOOK.name
    nb = execute_with_widget_state(PACKED_NOTEBOOK, executed)
    html_path = folder / "explorer_packed.html"
    html = export_html(nb, html_path)
    return Export(executed, html_path, html, nb)


def _packed_model(state: dict[str, Any]) -> dict[str, Any]:
    models = [v for v in state.values()
              if v["model_name"] == "AnyModel" and "frames" in v["state"]]
    assert len(models) == 1, f"expected one explorer model, got {sorted(state)}"
    return models[0]


def test_packed_frames_are_saved_as_a_base64_buffer_of_the_widget_state(packed_export):
    """nbclient keeps the binary buffer of the packed frames as the widget-state format
    does: base64 under ``buffers``, at the path ``frames.packed``, out of the JSON state."""
    import base64
    import gzip

    from wengert.jupyter.explorer.widget import PACKING

    saved = packed_export.nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]
    for state in (saved["state"], embedded_widget_state(packed_export.html)):
        model = _packed_model(state)
        assert model["state"]["frames"]["packing"] == PACKING
        assert "packed" not in model["state"]["frames"]  # not a string in the JSON
        (buffer,) = model["buffers"]
        assert buffer["path"] == ["frames", "packed"] and buffer["encoding"] == "base64"
        assert gzip.decompress(base64.b64decode(buffer["data"]))  # the gzip-compressed form
        assert model["state"]["step"] == PACKED_STEP


def test_the_static_page_unpacks_the_buffer_and_steps(browser: Any, packed_export, shots_dir,
                                                      report):
    from wengert.jupyter.explorer.frames import step_label, step_view

    if missing_packages():
        pytest.skip(f"no local copies of {', '.join(missing_packages())} in {NODE_MODULES}: "
                    "run scripts/e2e_setup.sh (npm ci --prefix tests/e2e)")
    expected = notebook_explorer_data(PACKED_NOTEBOOK, until="explore")
    requests = CdnRequests()
    tab = open_tab(browser, 1300, 1000, route=requests)
    try:
        tab.page.goto(packed_export.html_path.as_uri())
        root = wait_drawn(tab.page)
        view = read_view(root)
        assert view.label == step_label(expected, PACKED_STEP)
        several = {int(e) for e in expected["outs"]}  # the eigh and the svd
        step = PACKED_STEP
        while several:  # the reverse steps down to those of the decompositions
            step += 1
            press(root, "next")
            view = wait_step_label(root, step_label(expected, step))
            want = step_view(expected, step)
            assert view.current == want["node"]
            # (an array's running sum is written term by term briefly: its parts are shown)
            briefly = {send["sum"] for send in want.get("sends", []) if " " in send["gets"]}
            for text in set(panel_texts(want)) - briefly:
                text = text.replace("  ", " ")  # (the page's text: one space)
                assert text in view.side, f"step {step}: {text!r} missing from {view.side!r}"
            if want["node"] in several:
                several.discard(want["node"])
                assert "; " in want["incoming"] and ", " in want["equation"].split(" = ")[0]
                shot = shots_dir / f"static_export_packed_{want['node']}.png"
                root.screenshot(path=str(shot))
                report(f"screenshot (static HTML export, packed frames): {shot}")
        assert tab.errors == []
    finally:
        tab.close()
