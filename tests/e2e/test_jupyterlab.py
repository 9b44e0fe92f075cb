"""The explorer and the ``%%autodiff`` card in a real JupyterLab, driven in Chromium.

One JupyterLab server (``conftest.lab_server``) serves a copy of
``notebooks/explorer_e2e.ipynb``; the page opens it, runs all cells from the Run menu and
checks what a person would see: the ``%%autodiff`` card with the gradients, the explorer's
graph with one shape per node, the step set from Python, and that each press of the step
button moves the highlight and rewrites the adjoint panel to the values computed in Python
(the same notebook run in an in-process shell). The step is synced back to the kernel (a
later cell prints it). Every text of the explorer must stay readable (4.5:1 contrast) in
JupyterLab's light and dark themes. Screenshots go to pytest's temporary directory (or
``WENGERT_E2E_SHOTS``); their paths are printed at the end of the run.

``test_explorer_scale`` measures, in JupyterLab, the time from running ``explore(y)`` to a
drawn graph that steps, for a 2,000-equation tape and a 100,000-equation tape (drawn
collapsed). The numbers are printed, never asserted on.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_browser import Tab, open_tab
from e2e_expected import cell_index, notebook_explorer_data, panel_texts
from e2e_explorer import press, read_view, text_colours, wait_drawn, wait_step_label
from e2e_notebook import (
    open_notebook,
    output_of,
    run_all,
    run_cell,
    set_theme,
    start_cell,
    wait_all_executed,
    wait_cell_done,
)

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
NOTEBOOK = NOTEBOOKS / "explorer_e2e.ipynb"
SCALE_NOTEBOOK = NOTEBOOKS / "explorer_scale.ipynb"
#: L = (x·w + b − y)² at x = 1.5, w = 0.8, b = 0.1, y = 1.0, by hand:
#: x·w + b − y = 0.3, L = 0.09, ∂L/∂w = 2·0.3·1.5 = 0.9, ∂L/∂b = 2·0.3 = 0.6.
BY_HAND = {"L": "0.09", "w": "0.9", "b": "0.6"}


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    """The explorer's data for the test notebook, computed in this process."""
    return notebook_explorer_data(NOTEBOOK, until="explore")


@pytest.fixture(scope="module")
def cells() -> dict[str, int]:
    """Cell id -> position in the test notebook."""
    return {name: cell_index(NOTEBOOK, name)
            for name in ("autodiff", "explore", "step", "jump")}


@pytest.fixture(scope="module")
def lab_tab(browser: Any, lab_server: Any) -> Iterator[Tab]:
    """The test notebook open in JupyterLab, all its cells run (Run ▸ Run All Cells)."""
    tab = open_tab(browser, 1400, 1100)
    try:
        open_notebook(tab.page, lab_server.url, NOTEBOOK.name)
        run_all(tab.page)
        wait_all_executed(tab.page)
        yield tab
    finally:
        tab.close()


@pytest.fixture
def lab_page(lab_tab: Tab) -> Any:
    return lab_tab.page


def _explorer(page: Any, cells: dict[str, int]) -> Any:
    return wait_drawn(output_of(page, cells["explore"]))


def test_autodiff_card_renders_with_the_gradients(lab_page, cells, shots_dir, report):
    output = output_of(lab_page, cells["autodiff"])
    card = output.locator(".jp-RenderedHTMLCommon")
    assert card.count() >= 1, (
        "the %%autodiff cell shows no HTML card (only text/plain): "
        f"{output.inner_text()!r}")
    text = card.first.inner_text()
    for number in BY_HAND.values():
        assert re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text), (
            f"{number} is not on the %%autodiff card: {text!r}")
    assert "w" in text and "b" in text
    shot = shots_dir / "jupyterlab_autodiff_card.png"
    output.screenshot(path=str(shot))
    report(f"screenshot (JupyterLab, %%autodiff card): {shot}")


def test_explorer_draws_one_shape_per_node(lab_page, cells, expected):
    root = _explorer(lab_page, cells)
    view = read_view(root)
    names = expected["nodes"]["name"]
    assert view.mode == "svg"
    assert sorted(view.items) == list(range(len(names))), (
        f"drawn items {sorted(view.items)} for {len(names)} nodes {names}")
    assert view.graph_size is not None and min(view.graph_size) > 100
    drawn = root.locator(".wgx-graph svg").text_content()
    for name in names:
        assert name in drawn
    # Kinds differ in shape, not only in hue (colour-blind readers): inputs that require
    # grad are double rings, constants dashed ellipses, equations boxes.
    shapes = root.evaluate("""(root) => [...root.querySelectorAll('.wgx-graph g[data-item]')]
        .map((g) => [Number(g.dataset.item), [...g.querySelectorAll('rect, ellipse')]
            .map((s) => s.tagName + (s.getAttribute('stroke-dasharray') ? ' dashed' : ''))])""")
    want = {0: ["rect"], 1: ["ellipse", "ellipse"], 2: ["ellipse dashed"]}
    for item, drawn_shapes in shapes:
        kind = expected["nodes"]["kind"][item]
        assert drawn_shapes[:len(want[kind])] == want[kind], (
            f"{names[item]} (kind {kind}) is drawn as {drawn_shapes}")


def test_the_step_set_from_python_shows_in_the_browser(lab_page, cells, expected):
    from wengert.jupyter.explorer.frames import step_label

    root = _explorer(lab_page, cells)
    press(root, "first")  # the browser goes to step 0 (and tells the kernel) ...
    wait_step_label(root, step_label(expected, 0))
    run_cell(lab_page, cells["jump"])  # ... then the kernel sets explorer.step = 4: the seed
    view = wait_step_label(root, step_label(expected, 4))
    assert view.label == "reverse · seed"
    assert view.current == expected["seeds"][0][0]
    assert "L̄ = 1" in view.side


def test_each_step_moves_the_highlight_and_rewrites_the_adjoint_panel(
        lab_page, cells, expected, shots_dir, report):
    from wengert.jupyter.explorer.frames import step_label, step_view

    root = _explorer(lab_page, cells)
    root.scroll_into_view_if_needed()
    press(root, "first")
    wait_step_label(root, step_label(expected, 0))
    total = expected["steps"]["total"]
    seen_current = []
    for step in range(1, total):
        before = read_view(root)
        press(root, "next")
        view = wait_step_label(root, step_label(expected, step))
        want = step_view(expected, step)
        node = want["node"] if want.get("node") is not None else expected["seeds"][0][0]
        assert view.current == node, f"step {step}: highlight on {view.current}, want {node}"
        assert view.current_stroke is not None and view.current_stroke >= 3, (
            f"step {step}: the current node's border is not thick ({view.current_stroke})")
        assert view.side != before.side, f"step {step}: the side panel did not change"
        for text in panel_texts(want):
            assert text in view.side, f"step {step}: {text!r} missing from {view.side!r}"
        seen_current.append(view.current)
        if step == expected["steps"]["forward"] + 1:
            shot = shots_dir / "jupyterlab_reverse_step_1.png"
            root.screenshot(path=str(shot))
            report(f"screenshot (JupyterLab, light, reverse step 1): {shot}")
    # The reverse sweep visits the equations newest first and ends on w̄ = 0.9.
    assert seen_current[-4:] == [3, 2, 1, 0]
    assert "w̄ = 0 + 0.9 = 0.9" in view.side and "t̄0 = 0.6" in view.side
    shot = shots_dir / "jupyterlab_last_step.png"
    root.screenshot(path=str(shot))
    report(f"screenshot (JupyterLab, light, last step): {shot}")
    page_shot = shots_dir / "jupyterlab_page.png"
    lab_page.screenshot(path=str(page_shot), full_page=True)
    report(f"screenshot (JupyterLab page): {page_shot}")
    # The kernel's widget followed the browser: a later cell reads the step.
    printed = run_cell(lab_page, cells["step"])
    assert printed.strip().endswith(f"step {total - 1}"), printed


#: WCAG AA contrast for normal-size text.
READABLE = 4.5


def test_the_explorer_is_readable_in_light_and_dark_themes(lab_page, cells, shots_dir, report):
    root = _explorer(lab_page, cells)
    press(root, "last")  # the busiest step: every adjoint known, the current row filled
    found = {}
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(lab_page, theme)
            root = _explorer(lab_page, cells)
            root.scroll_into_view_if_needed()
            found[theme] = text_colours(root)
            if "Dark" in theme:
                shot = shots_dir / "jupyterlab_dark.png"
                root.screenshot(path=str(shot))
                report(f"screenshot (JupyterLab, dark): {shot}")
    finally:
        set_theme(lab_page, "JupyterLab Light")
    light, dark = found["JupyterLab Light"], found["JupyterLab Dark"]
    assert light and dark
    assert light[0].background != dark[0].background, "the explorer ignores the dark theme"
    faint = [f"{theme}: {t.text!r} (.{t.cls}) {t.ratio:.1f}:1, colour "
             f"{[round(c) for c in t.colour]} on {[round(c) for c in t.background]}"
             for theme, texts in found.items() for t in texts if t.ratio < READABLE]
    assert not faint, f"text below {READABLE}:1 contrast:\n" + "\n".join(faint)


def test_explorer_scale(browser, lab_server, shots_dir, report):
    """From ``explore(y)`` to a drawn graph that steps, for 2,000 and 100,000 equations."""
    tab = open_tab(browser, 1400, 1000, timeout=120)
    page = tab.page
    try:
        open_notebook(page, lab_server.url, SCALE_NOTEBOOK.name)
        run_cell(page, cell_index(SCALE_NOTEBOOK, "setup"), timeout=120)
        for size in ("2k", "100k"):
            index = cell_index(SCALE_NOTEBOOK, f"explore_{size}")
            start = time.perf_counter()
            before = start_cell(page, index)
            root = wait_drawn(output_of(page, index), timeout=180)
            drawn = time.perf_counter()
            first = read_view(root)
            press(root, "next")
            stepped = read_view(root)
            deadline = time.monotonic() + 60
            while stepped.label == first.label and time.monotonic() < deadline:
                time.sleep(0.02)
                stepped = read_view(root)
            steppable = time.perf_counter()
            assert stepped.label != first.label, f"{size}: pressing next did not step"
            wait_cell_done(page, index, before, timeout=180)
            kernel = run_cell(page, cell_index(SCALE_NOTEBOOK, f"time_{size}")).strip()
            shot = shots_dir / f"jupyterlab_scale_{size}.png"
            root.screenshot(path=str(shot))
            report(f"explore, {size} equations ({first.mode}, {len(first.items)} items drawn): "
                   f"drawn {drawn - start:.2f} s and steppable {steppable - start:.2f} s after "
                   f"running explore(y) (kernel side: {kernel}; the module's first draw "
                   f"{first.drawn_ms:.0f} ms)")
            report(f"screenshot (JupyterLab, {size} equations): {shot}")
    finally:
        tab.close()


def test_no_javascript_errors(lab_tab):
    assert lab_tab.errors == []
