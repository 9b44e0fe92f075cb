"""explorer.js in a real browser: a static page renders it with a fake anywidget model.

The page (written to a temporary directory, served to Chromium by Playwright's request
routing: nothing listens on a socket) links the shipped ``explorer.css`` (as anywidget adds
the widget's ``_css``), imports the shipped ``explorer.js`` as an ES module and calls its
``render`` with an object implementing anywidget's model interface (``get``, ``set``,
``on``, ``off``, ``save_changes``), fed with real frames from Python; packed frames reach it
as a ``DataView``, as the widget manager hands over a binary buffer. The panel's
text is checked against :func:`wengert.jupyter.explorer.frames.step_view`, the Python statement of
what each step shows. Times to first draw are printed, not asserted. Screenshots go to
``/tmp/shots/explorer/`` (``$WENGERT_E2E_SHOTS/explorer/`` when set).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import time
from pathlib import Path

import pytest

import numpy as np
import wengert as wg
from wengert.jupyter.explorer.frames import explorer_frames, step_view
from wengert.jupyter.explorer.widget import CSS_PATH, ESM_PATH, pack

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(),
                                 reason="needs Chromium at /usr/bin/chromium for Playwright")]
sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright for Python")

SHOTS = Path(os.environ.get("WENGERT_E2E_SHOTS", "/tmp/shots")) / "explorer"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

FAKE_MODEL = """
class FakeModel {  // anywidget's model interface, enough for render()
  constructor(state) { this.state = state; this.handlers = {}; this.saves = 0; }
  get(key) { return this.state[key]; }
  set(key, value) {
    const old = this.state[key];
    this.state[key] = value;
    if (old !== value) for (const f of this.handlers["change:" + key] || []) f();
  }
  on(event, f) { (this.handlers[event] ||= []).push(f); }
  off(event, f) { this.handlers[event] = (this.handlers[event] || []).filter((g) => g !== f); }
  save_changes() { this.saves += 1; }
}
"""

#: JupyterLab's own theme colours (its light and dark theme CSS), as a notebook page has them.
THEMES = {
    "light": """--jp-layout-color0: white; --jp-layout-color1: white; --jp-layout-color2: #eee;
      --jp-layout-color3: #bdbdbd; --jp-content-font-color1: rgba(0,0,0,.87);
      --jp-content-font-color2: rgba(0,0,0,.54); --jp-content-font-color3: rgba(0,0,0,.38);
      --jp-border-color0: #bdbdbd; --jp-border-color1: #bdbdbd; --jp-border-color2: #e0e0e0;
      --jp-brand-color1: #1976d2; --jp-brand-color3: #bbdefb; --jp-warn-color1: #f57c00;
      --jp-warn-color3: #ffe0b2; --jp-accent-color1: #388e3c; background: white;""",
    "dark": """--jp-layout-color0: #111; --jp-layout-color1: #212121; --jp-layout-color2: #424242;
      --jp-layout-color3: #616161; --jp-content-font-color1: #fff;
      --jp-content-font-color2: rgba(255,255,255,.7);
      --jp-content-font-color3: rgba(255,255,255,.5); --jp-border-color0: #616161;
      --jp-border-color1: #616161; --jp-border-color2: #424242; --jp-brand-color1: #2196f3;
      --jp-brand-color3: #bbdefb; --jp-warn-color1: #ff9800; --jp-warn-color3: #ffe0b2;
      --jp-accent-color1: #4caf50; background: #111;""",
    "plain": "background: white;",  # no JupyterLab: the module's own fallbacks
}


def write_page(directory: Path, frames: dict, theme: str = "light") -> None:
    """index.html, explorer.js and explorer.css (the shipped files) and frames.json in
    ``directory``; binary ``packed`` frames go as base64 and become a DataView again."""
    shutil.copy(ESM_PATH, directory / "explorer.js")
    shutil.copy(CSS_PATH, directory / "explorer.css")
    blob = frames.get("packed")
    if isinstance(blob, bytes):
        frames = {**frames, "packed": {"base64": base64.b64encode(blob).decode("ascii")}}
    (directory / "frames.json").write_text(json.dumps(frames, ensure_ascii=False),
                                           encoding="utf-8")
    (directory / "index.html").write_text(f"""<!doctype html>
<html><head><meta charset="utf-8"><title>explorer</title>
<link rel="stylesheet" href="./explorer.css">
<style>:root {{ {THEMES[theme]} }} body {{ margin: 12px; width: 1100px; }}</style></head>
<body><div id="el"></div>
<script type="module">
{FAKE_MODEL}
import explorer from "./explorer.js";
const frames = await (await fetch("./frames.json")).json();
if (frames.packed && frames.packed.base64) {{  // a binary buffer, as the widget manager gives it
  const text = atob(frames.packed.base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  frames.packed = new DataView(bytes.buffer);
}}
window.model = new FakeModel({{ frames, step: 0 }});
document.addEventListener("wgx-drawn", () => {{ window.drawnAt = performance.now(); }});
explorer.render({{ model: window.model, el: document.getElementById("el") }});
</script></body></html>""", encoding="utf-8")


@pytest.fixture(scope="module")
def browser(playwright_session):
    browser = playwright_session.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    yield browser
    browser.close()


@pytest.fixture
def open_page(browser, tmp_path):
    """Open the explorer of ``frames``; JavaScript errors fail the test."""
    pages = []

    def opener(frames: dict, theme: str = "light", name: str = "page", drawn: bool = True):
        directory = tmp_path / name
        directory.mkdir()
        write_page(directory, frames, theme)
        page = browser.new_page(viewport={"width": 1140, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.route("http://explorer.test/**", lambda route: route.fulfill(
            path=str(directory / route.request.url.rsplit("/", 1)[1])))
        page.goto("http://explorer.test/index.html")
        if drawn:
            page.wait_for_function("window.drawnAt !== undefined", timeout=120_000)
        else:  # a message instead of a graph
            page.wait_for_selector(".wgx-empty", timeout=30_000)
        page.errors = errors
        pages.append(page)
        return page

    yield opener
    for page in pages:
        assert not page.errors, page.errors
        page.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def seed_frames():
    x, w = wg.tensor(1.5, requires_grad=True), wg.tensor(0.8, requires_grad=True)
    b, y = wg.tensor(0.2, requires_grad=True), wg.tensor(0.1)
    with wg.source_lines():
        L = (x * w + b - y) ** 2
    return explorer_frames(wg.tape_of(L), leaf_names=["x", "w", "b"])


def text(page, selector: str) -> str:
    return page.inner_text(selector)


def check_panel(page, data, step):
    """The side panel shows what step_view says, and the label and highlight follow."""
    # (the page's text has one space where an array's summary has two)
    view = {k: v.replace("  ", " ") if isinstance(v, str) else v
            for k, v in step_view(data, step).items()}
    for send in view.get("sends", ()):
        send.update((k, v.replace("  ", " ")) for k, v in send.items() if isinstance(v, str))
    assert text(page, ".wgx-label") == view["label"]
    panel = text(page, ".wgx-side")
    if view["phase"] == "seed":
        assert all(seed in panel for seed in view["seeds"])
        return
    assert view["equation"] in panel
    assert page.get_attribute(".wgx-graph", "data-current") == str(view["node"])
    current = page.locator(f'.wgx-graph [data-item="{view["node"]}"]')
    assert 'stroke-width="4"' in current.inner_html()  # thick: the current node
    if view["phase"] == "reverse":
        assert view["incoming"] in panel
        for send in view["sends"]:
            assert send["rule"] in panel
            if " " not in send["gets"]:  # a number: the sum term by term (arrays: briefly)
                assert send["sum"] in panel
            assert f"← {send['gets']}" in panel
            assert send["jacobian"][0] in panel
            if send["numbers"]:
                assert send["numbers"] in panel


def test_the_graph_draws_and_steps_with_the_keyboard_and_buttons(open_page):
    data = seed_frames()
    page = open_page(data)
    assert page.get_attribute(".wgx-graph", "data-mode") == "svg"
    assert page.locator(".wgx-graph svg [data-item]").count() == 9  # 4 equations, 3 leaves, 2
    check_panel(page, data, 0)
    page.focus(".wgx")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("window.model.get('step')") == 1
    assert page.evaluate("window.model.saves") == 1  # the step is synced back
    check_panel(page, data, 1)
    shot(page, "browser_forward_light")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("window.model.get('step')") == 0
    for step in range(1, data["steps"]["total"]):  # the ▶| button through every step
        page.click('button[data-do="next"]')
        assert page.evaluate("window.model.get('step')") == step
        check_panel(page, data, step)
        if step == 7:
            shot(page, "browser_reverse_light")
    # Done nodes show their adjoint under the value.
    assert "x̄ 2.08" in page.text_content('.wgx-graph [data-item="4"]')
    assert "t̄0 2.6" in page.text_content('.wgx-graph [data-item="0"]')
    page.click('button[data-do="first"]')
    assert page.evaluate("window.model.get('step')") == 0
    page.keyboard.press("End")
    assert page.evaluate("window.model.get('step')") == 8


def test_packed_frames_step_as_the_plain_ones(open_page):
    """Frames that travel packed (binary integer columns, gzip) show the same panels: a
    fan-out (running sums), parameters and user names survive the browser's unpacking."""
    w = wg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    v = wg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    with wg.source_lines():
        h = np.tanh(w @ v)
        loss = np.sum(h * h) + np.sum(np.transpose(w)[0])
    data = explorer_frames(wg.tape_of(loss), leaf_names=["w", "v"], value_names={"t1": "h"})
    frames = pack(data, limit=1)
    assert "packed" in frames
    page = open_page(frames, name="packed")
    page.focus(".wgx")
    for step in range(data["steps"]["total"]):
        check_panel(page, data, step)
        page.keyboard.press("ArrowRight")
    older = open_page({k: v for k, v in frames.items() if k != "packing"}, name="older",
                      drawn=False)
    assert "another version of wengert" in text(older, ".wgx")


def decomposition_frames(unused: bool = False):
    """A tape with an eigh and an svd, each one equation of several outputs; with
    ``unused``, a gradient tape whose eigenvectors reach nothing."""
    a = wg.tensor(np.array([[2.0, 1.0, 0.3], [1.0, 3.0, 0.2], [0.3, 0.2, 1.0]]),
                  requires_grad=True)
    if unused:
        with wg.GradientTape() as g:
            g.watch(a)
            w, v = np.linalg.eigh(a)
            y = np.sum(w * 2.0)
        return explorer_frames(g.recorded, leaf_names=["a"])
    with wg.source_lines():
        w, v = np.linalg.eigh(a)
        u, s, vt = np.linalg.svd(a)
        y = np.sum(w * 2.0) + np.sum(v ** 2) + np.sum(s) + np.sum(u[:, 0] * vt[0])
    return explorer_frames(wg.tape_of(y), leaf_names=["a"])


@pytest.mark.parametrize("packed", [False, True])
def test_a_decomposition_is_one_box_with_its_outputs_and_one_step(open_page, packed):
    data = decomposition_frames()
    eigh = next(int(e) for e, parts in data["outs"].items() if len(parts) == 1)
    page = open_page(pack(data, limit=1) if packed else data, name=f"decompositions{packed}")
    assert page.locator(f'.wgx-graph [data-item="{data["outs"][str(eigh)][0]}"]').count() == 0
    assert "t2, t3" in page.text_content(f'.wgx-graph [data-item="{eigh}"]')
    page.focus(".wgx")
    for step in range(data["steps"]["total"]):
        check_panel(page, data, step)
        if step == eigh and not packed:
            assert "outputs" in text(page, ".wgx-side")
            shot(page, "browser_decomposition_forward")
        view = step_view(data, step)
        if view["phase"] == "reverse" and view["node"] == eigh and not packed:
            shot(page, "browser_decomposition_reverse")
        page.keyboard.press("ArrowRight")


def test_an_output_of_a_decomposition_that_nothing_used_says_so(open_page):
    data = decomposition_frames(unused=True)
    page = open_page(data, name="unused")
    page.focus(".wgx")
    seen = False
    for step in range(data["steps"]["total"]):
        view = step_view(data, step)
        check_panel(page, data, step)
        if view["phase"] == "reverse" and str(view["node"]) in data["outs"]:
            assert "not used, no cotangent reached it" in text(page, ".wgx-side")
            seen = True
        page.keyboard.press("ArrowRight")
    assert seen


def test_adjoint_names_given_by_python_reach_the_panel(open_page):
    a, g = wg.tensor(1.5, requires_grad=True), wg.tensor(0.5, requires_grad=True)
    with wg.source_lines():
        y = a * g
        z = np.sin(y)
    data = explorer_frames(wg.tape_of(z), leaf_names=["a", "g"])
    assert data["bars"]  # ȳ, ā, ḡ: one precomposed character each
    page = open_page(data, name="bars")
    for step in range(data["steps"]["total"]):
        page.evaluate(f"window.model.set('step', {step})")
        check_panel(page, data, step)


def test_complex_and_negative_constants_are_factors_in_parentheses_in_the_panel(open_page):
    x = wg.tensor(2.0, requires_grad=True)
    y = np.abs(x * (1 - 2j) - (-3.0)) ** 2
    data = explorer_frames(wg.tape_of(y), leaf_names=["x"])
    assert step_view(data, 0)["equation"] == "t0 = x × (1-2j) = 2 × (1-2j) = 2-4j"
    page = open_page(data, name="factors")
    for step in range(data["steps"]["total"]):
        page.evaluate(f"window.model.set('step', {step})")
        check_panel(page, data, step)


def test_python_sets_the_step_and_the_view_follows(open_page):
    data = seed_frames()
    page = open_page(data, theme="dark", name="dark")
    page.evaluate("window.model.set('step', 7)")  # as a change from the kernel arrives
    check_panel(page, data, 7)
    row = page.locator(".wgx-table .wgx-tr.cur")
    assert row.count() == 1 and row.get_attribute("data-node") == "1"
    shot(page, "browser_reverse_dark")
    page.evaluate("window.model.set('step', 4)")
    check_panel(page, data, 4)
    assert page.evaluate("window.model.saves") == 0  # nothing sent back for its own change


def test_the_fallback_colours_without_jupyterlab(open_page):
    data = seed_frames()
    page = open_page(data, theme="plain", name="plain")
    page.evaluate("window.model.set('step', 7)")
    check_panel(page, data, 7)
    shot(page, "browser_reverse_plain")


def test_forward_mode_shows_tangents(open_page):
    x = wg.tensor(wg.Dual(2.0, 1.0), requires_grad=True)
    with wg.keep_values(), wg.source_lines():
        y = np.sin(x * x)
    data = explorer_frames(wg.tape_of(y), mode="forward", leaf_names=["x"])
    page = open_page(data)
    page.evaluate("window.model.set('step', 1)")
    panel = text(page, ".wgx-side")
    assert "tangents" in panel.lower() and "ε₁" in panel
    tangent = data["nodes"]["tangent"][1][0][1]  # -2.615: written "− 2.615ε₁"
    assert tangent.startswith("-") and f"−{tangent[1:]}ε₁" in panel.replace(" ", "")
    assert text(page, ".wgx-label") == "forward · step 2/2"
    shot(page, "browser_forward_mode")


def loop_frames(n_eq: int, lines: bool = True):
    x = wg.tensor(0.5, requires_grad=True)
    w = wg.tensor(1.01, requires_grad=True)
    y = x
    if lines:
        with wg.source_lines():
            for _ in range(n_eq // 2):
                y = y * w
                y = np.sin(y)
    else:
        for _ in range(n_eq // 2):
            y = np.sin(y * w)
    t = time.perf_counter()
    data = explorer_frames(wg.tape_of(y), leaf_names=["x", "w"])
    return data, time.perf_counter() - t


def test_groups_expand_on_click_and_the_current_group_is_highlighted(open_page):
    data, _ = loop_frames(600)
    assert data["layout"]["collapsed"]
    page = open_page(data, name="groups")
    before = page.locator(".wgx-graph [data-item]").count()
    current = page.get_attribute(".wgx-graph", "data-current")
    assert int(current) >= len(data["nodes"]["name"])  # a group box: collapsed by default
    page.click(f'.wgx-graph [data-item="{current}"]')
    assert page.locator(".wgx-graph [data-item]").count() > before
    shot(page, "browser_group_expanded")
    page.evaluate(f"window.model.set('step', {data['steps']['total'] - 1})")
    assert text(page, ".wgx-label").startswith("reverse · step")
    # The table follows the step: its current row is on screen.
    row = page.locator(".wgx-table .wgx-tr.cur")
    assert row.count() == 1 and row.is_visible()


def test_many_visible_nodes_are_drawn_on_a_canvas(open_page):
    data, _ = loop_frames(300, lines=False)
    data["layout"]["collapsed"] = False  # everything open: more items than SVG takes
    page = open_page(data, name="canvas")
    assert page.get_attribute(".wgx-graph", "data-mode") == "canvas"
    inked = page.evaluate("""() => {
        const c = document.querySelector('.wgx-graph canvas');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < px.length; i += 4) n += px[i] > 0;
        return n; }""")
    assert inked > 1000
    page.keyboard.press("ArrowRight")  # not focused: nothing happens
    page.focus(".wgx")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("window.model.get('step')") == 1
    shot(page, "browser_canvas")


def timed(open_page, n_eq: int, name: str) -> None:
    data, build = loop_frames(n_eq)
    frames = pack(data)
    blob = frames.get("packed", b"")
    size = len(json.dumps({k: v for k, v in frames.items() if k != "packed"}).encode()) + len(blob)
    page = open_page(frames, name=name)
    drawn = page.evaluate("window.drawnAt")
    own = page.evaluate("document.querySelector('.wgx').dataset.drawnMs")
    print(f"\n[explorer timing] {n_eq} equations: Python frames+layout {build:.2f} s, "
          f"{size / n_eq:.0f} bytes/equation as sent ({size / 1e6:.1f} MB, "
          f"{'packed binary' if 'packed' in frames else 'plain JSON'}); page load to drawn "
          f"{drawn:.0f} ms (render {own} ms)")
    assert page.locator(".wgx-graph [data-item]").count() > 2
    assert text(page, ".wgx-label") == f"forward · step 1/{n_eq}"
    shot(page, name)


def test_time_to_first_draw_of_2000_equations(open_page):
    timed(open_page, 2000, "browser_2000")


@pytest.mark.slow
def test_time_to_first_draw_of_100000_equations_collapsed(open_page):
    timed(open_page, 100_000, "browser_100000")


def test_after_backward_the_real_sweep_with_its_hooks(open_page):
    """Kept by the view-keeping mode: the seed panel says where the sweep comes from, each
    hook is a step of its own (before → after), and the leaf ends with what .grad got."""
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        with wg.source_lines():
            t = x * 3.0
            t.register_hook(lambda g: g * 10)

            def clip(g):
                return np.clip(g, -100.0, 100.0)

            x.register_hook(clip)
            y = (t * t).sum()
        y.backward()
    data = explorer_frames(wg.tape_of(y), leaf_names=["x"])
    page = open_page(data)
    n_fwd = data["steps"]["forward"]
    page.evaluate(f"window.model.set('step', {n_fwd})")
    assert "backward() ran" in text(page, ".wgx-side")
    for step in range(n_fwd + 1, data["steps"]["total"]):
        page.evaluate(f"window.model.set('step', {step})")
        view = step_view(data, step)
        if view["phase"] != "hook":
            check_panel(page, data, step)
            continue
        panel = text(page, ".wgx-side")
        assert view["hooks"] in panel and view["before"] in panel and view["after"] in panel
        assert page.get_attribute(".wgx-graph", "data-current") == str(view["node"])
        if view["node"] == 0:
            shot(page, "browser_hook_step")
    assert f"x̄ {wg.core.formatting.summarize(x.grad)}" in page.text_content(
        '.wgx-graph [data-item="3"]')
    shot(page, "browser_hook_leaf")


def test_a_value_written_in_place_since_says_so_instead_of_not_kept(open_page):
    """h = x * 2 then h += 1: the first equation's memory holds another value now, and an
    optimizer's step changed the leaf: the graph, the panel and the table say so."""
    with wg.keep_values():
        x = wg.tensor([1.0, 4.0], requires_grad=True)
        with wg.source_lines():
            h = x * 2.0
            h += 1.0
            y = (np.sqrt(h)).sum()
        y.backward()
        with wg.no_grad():
            x -= 0.1 * x.grad
    data = explorer_frames(wg.tape_of(y), leaf_names=["x"])
    assert data["changed"] == [0, 4]  # x * 2 and the leaf
    page = open_page(data)
    assert "changed since" in page.text_content('.wgx-graph [data-item="0"]')
    assert "changed since" in page.text_content('.wgx-graph [data-item="4"]')
    assert "an in-place operation wrote another value" in text(page, ".wgx-side")
    assert "not kept" not in page.text_content(".wgx")
    assert data["shapes"][data["nodes"]["shape"][0]][0] == "2"  # its shape is still known
    shot(page, "browser_changed_since")


@pytest.mark.parametrize("unused", [False, True])
def test_the_table_row_of_a_decomposition_shows_each_output(open_page, unused):
    data = decomposition_frames(unused)
    eigh = next(int(e) for e, parts in data["outs"].items() if len(parts) == 1)
    part = data["outs"][str(eigh)][0]
    page = open_page(data, name=f"decomposition_table{unused}")
    page.evaluate(f"window.model.set('step', {data['steps']['total'] - 1})")
    cells = [" ".join(c.split()) for c in
             page.locator(f'.wgx-table [data-node="{eigh}"] span').all_inner_texts()]
    shapes, values, adjoints = data["shapes"], data["nodes"]["value"], data["nodes"]["adjoint"]
    shape = data["nodes"]["shape"]
    assert cells[4] == f"{shapes[shape[eigh]][0]}, {shapes[shape[part]][0]}"
    assert cells[5] == " ".join(f"{values[eigh]}; {values[part]}".split())
    second = "not reached" if unused else adjoints[part]
    assert cells[6] == " ".join(f"{adjoints[eigh]}; {second}".split())
    shot(page, f"browser_decomposition_table{'_unused' if unused else ''}")
