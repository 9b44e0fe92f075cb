"""The documentation site in Chromium, served on 127.0.0.1 with every other request
refused: each page opens with nothing refused, no failed request and no console error;
the explorers on the notebook pages draw from their saved widget state and step with no
kernel; the formulas are typeset by the site's own MathJax.

Build the site first (``scripts/build_docs.sh``); ``./test`` builds it and runs these.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from docs_site import SITE, LocalOnly, PageWatch, explorer_state, html_pages
from e2e_browser import Tab, open_tab
from e2e_expected import panel_texts
from e2e_explorer import press, read_view, wait_drawn, wait_step_label
from e2e_export import embedded_widget_state, embedded_widget_views

pytestmark = [pytest.mark.browser, pytest.mark.docs_site]

#: MathJax is done typesetting (or the page has no MathJax) and the fonts it asked for
#: have loaded.
_MATH_DONE = """() => ((window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise : Promise.resolve()).then(() => document.fonts.ready)
    .then(() => true)"""


class LocalTab:
    """A tab that may only fetch from the site, with what went wrong on it."""

    def __init__(self, browser: Any, origin: str, width: int = 1300, height: int = 900):
        self.rule = LocalOnly(origin)
        self.tab: Tab = open_tab(browser, width, height, route=self.rule)
        self.page = self.tab.page
        self.watch = PageWatch.on(self.page)

    def goto(self, url: str) -> None:
        self.page.goto(url, wait_until="load")
        self.page.evaluate(_MATH_DONE)
        self.watch.settle(self.page)

    def problems(self) -> list[str]:
        return self.watch.problems() + [f"refused: {u}" for u in self.rule.refused]

    def clear(self) -> None:
        self.watch.clear()
        self.rule.refused.clear()


@pytest.fixture
def local_tab(browser: Any, site_server: Any) -> Iterator[LocalTab]:
    tab = LocalTab(browser, site_server.origin)
    try:
        yield tab
    finally:
        tab.tab.close()


def _explorer_pages() -> dict[str, list[dict[str, Any]]]:
    """page -> the saved state of each explorer it displays, in page order (packed frames
    unpacked from the model's base64 buffer)."""
    found = {}
    for page in html_pages():
        html = (SITE / page).read_text(encoding="utf-8")
        state = embedded_widget_state(html)
        views = [explorer_state(state[m]) for m in embedded_widget_views(html)
                 if m in state and state[m]["model_name"] == "AnyModel"
                 and "frames" in state[m]["state"]]
        if views:
            found[page] = views
    return found


def test_every_page_opens_with_nothing_from_elsewhere_and_no_error(local_tab, site_server,
                                                                    report):
    pages = html_pages()
    assert "index.html" in pages and "api.html" in pages, pages
    bad = {}
    for page in pages:
        local_tab.clear()
        local_tab.goto(site_server.url(page))
        if local_tab.problems():
            bad[page] = local_tab.problems()
    report(f"docs site: {len(pages)} pages opened, {len(bad)} with problems")
    assert bad == {}, "\n".join(f"{p}: {v}" for p, v in bad.items())


def test_the_site_has_a_page_with_an_explorer():
    assert _explorer_pages(), "no page of the site displays an explorer widget"


def test_the_explorers_draw_and_step_with_no_kernel(local_tab, site_server, shots_dir, report):
    from wengert.jupyter.explorer.frames import step_label, step_view

    for page, saved in _explorer_pages().items():
        local_tab.clear()
        local_tab.goto(site_server.url(page))
        wait_drawn(local_tab.page)
        roots = local_tab.page.locator(".wgx[data-drawn-ms]")
        roots.nth(len(saved) - 1).wait_for(timeout=60_000)
        assert roots.count() == len(saved), f"{page}: {roots.count()} drawn of {len(saved)}"
        for k, state in enumerate(saved):
            root = roots.nth(k)
            root.scroll_into_view_if_needed()
            frames, step = state["frames"], int(state.get("step", 0))
            view = read_view(root)
            assert view.items, f"{page}, explorer {k}: nothing drawn"
            total = frames["steps"]["total"]
            assert view.label == step_label(frames, step), f"{page}, explorer {k}"
            target = step + 1 if step + 1 < total else 0
            press(root, "next" if target == step + 1 else "first")
            view = wait_step_label(root, step_label(frames, target))
            for text in panel_texts(step_view(frames, target)):
                assert text in view.side, f"{page}, explorer {k}, step {target}: {text!r}"
            if target + 1 < total:
                press(root, "last")
                wait_step_label(root, step_label(frames, total - 1))
        name = page.replace("/", "_").removesuffix(".html")
        shot = shots_dir / f"docs_{name}_stepped.png"
        last = roots.nth(len(saved) - 1)
        last.evaluate("(e) => e.scrollIntoView({block: 'end'})")  # clear of the sticky header
        last.screenshot(path=str(shot))
        report(f"screenshot (docs site, {page}, explorer after stepping): {shot}")
        page_shot = shots_dir / f"docs_{name}.png"
        local_tab.page.screenshot(path=str(page_shot))
        report(f"screenshot (docs site, {page}, viewport): {page_shot}")
        assert local_tab.problems() == [], f"{page}: {local_tab.problems()}"
        assert local_tab.tab.websockets == []


def test_formulas_are_typeset_by_the_sites_mathjax(local_tab, site_server, shots_dir, report):
    for page in ("conventions.html", "index.html"):
        local_tab.clear()
        local_tab.goto(site_server.url(page))
        math = local_tab.page.locator("mjx-container")
        assert math.count() > 0, f"{page}: no formula typeset"
        assert local_tab.page.locator("mjx-merror").count() == 0, f"{page}: a TeX error"
        # typeset with glyphs from the site's MathJax fonts, not left as TeX source
        assert "\\partial" not in local_tab.page.locator("article").inner_text()
        assert local_tab.problems() == [], f"{page}: {local_tab.problems()}"
    shot = shots_dir / "docs_conventions.png"
    local_tab.goto(site_server.url("conventions.html#complex-numbers"))
    local_tab.page.screenshot(path=str(shot))
    report(f"screenshot (docs site, conventions with formulas): {shot}")


def test_home_and_api_pages(local_tab, site_server, shots_dir, report):
    from _api import MODULES

    import wengert

    local_tab.goto(site_server.url("index.html"))
    shot = shots_dir / "docs_home.png"
    local_tab.page.screenshot(path=str(shot))
    report(f"screenshot (docs site, home): {shot}")
    local_tab.goto(site_server.url("api.html"))
    links = set(local_tab.page.eval_on_selector_all(
        "article a.reference.internal", "(as) => as.map((a) => a.getAttribute('href'))"))
    for name in set(wengert.__all__) - set(MODULES):
        assert f"generated/wengert.{name}.html#wengert.{name}" in links, name
    shot = shots_dir / "docs_api.png"
    local_tab.page.screenshot(path=str(shot))
    report(f"screenshot (docs site, API reference): {shot}")
    local_tab.goto(site_server.url("generated/wengert.grad.html"))
    text = local_tab.page.locator("article").inner_text()
    assert "Parameters" in text and "Examples" in text
    assert local_tab.problems() == []


def test_a_broken_local_copy_fails_on_the_site_and_reaches_for_nothing_else(browser: Any,
                                                                            site_server: Any):
    """With anywidget's local copy gone, the html-manager falls back to its 'CDN', which
    the site points at a folder of its own: the explorer does not draw, the page reports
    errors, and no request leaves the site."""
    page_path = next(iter(_explorer_pages()))
    rule = LocalOnly(site_server.origin)
    asked: list[str] = []

    def route(r: Any) -> None:
        url = r.request.url
        asked.append(url)
        if "/_static/vendor/anywidget/" in url:
            r.fulfill(status=404, body="gone")
        else:
            rule(r)

    tab = open_tab(browser, 1300, 900, route=route)
    watch = PageWatch.on(tab.page)
    try:
        tab.page.goto(site_server.url(page_path), wait_until="load")
        watch.settle(tab.page)
        tab.page.wait_for_timeout(1500)
        assert tab.page.locator(".wgx[data-drawn-ms]").count() == 0
        assert rule.refused == [], f"requests off the site: {rule.refused}"
        fallback = [u for u in asked if "no-cdn" in u]
        assert fallback and all(u.startswith(site_server.origin) for u in fallback), asked
        assert watch.problems(), "a broken local copy went unnoticed"
    finally:
        tab.close()
