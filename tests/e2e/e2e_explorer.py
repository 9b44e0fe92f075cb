"""Reading and driving the explorer widget's DOM (``src/wengert/jupyter/explorer/explorer.js``,
styled by ``explorer.css``), the same in JupyterLab and in a static HTML export.

The module draws into ``div.wgx``: a label (``.wgx-label``, "reverse · step 2/4"), step
buttons (``button[data-do=first|prev|play|next|last]``), the graph
(``.wgx-graph``, ``data-mode`` svg or canvas, ``data-current`` the item drawn as the
current step; in SVG mode one ``g[data-item]`` per node or group), the side panel
(``.wgx-side``) and the table (``.wgx-tr.cur`` is the current row). ``data-drawn-ms``
appears on ``div.wgx`` once the first frame is drawn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["ExplorerView", "TextColour", "contrast_ratio", "press", "read_view", "text_colours",
           "wait_drawn", "wait_step_label"]

#: A drawn explorer (its first frame is on screen).
DRAWN = ".wgx[data-drawn-ms]"

_READ = """(root) => {
    const graph = root.querySelector('.wgx-graph');
    const current = graph ? graph.getAttribute('data-current') : null;
    const node = current === null ? null
        : graph.querySelector(`g[data-item="${current}"]`);
    const widths = node ? [...node.querySelectorAll('rect, ellipse')]
        .map((s) => parseFloat(s.getAttribute('stroke-width') || '0')) : [];
    const side = root.querySelector('.wgx-side');
    const row = root.querySelector('.wgx-tr.cur');
    const box = graph ? graph.getBoundingClientRect() : null;
    return {
        label: (root.querySelector('.wgx-label') || {}).textContent || '',
        mode: graph ? graph.getAttribute('data-mode') : null,
        current: current === null ? null : Number(current),
        items: graph ? [...graph.querySelectorAll('g[data-item]')]
            .map((g) => Number(g.getAttribute('data-item'))) : [],
        current_stroke: widths.length ? Math.max(...widths) : null,
        current_text: node ? node.textContent : null,
        side: side ? side.innerText : '',
        row: row ? row.innerText : null,
        drawn_ms: Number(root.getAttribute('data-drawn-ms')),
        graph_size: box ? [box.width, box.height] : null,
        canvas: graph ? graph.querySelectorAll('canvas').length : 0,
    };
}"""


@dataclass(frozen=True)
class ExplorerView:
    """What the explorer shows right now (see the module doc for where each comes from).

    ``items`` are the ``data-item`` numbers of the SVG groups drawn (nodes, then group
    boxes numbered from the node count on); ``current_stroke`` is the thickest border of
    the current item (the highlight is a thick border as well as a fill).
    """

    label: str
    mode: str | None
    current: int | None
    items: list[int]
    current_stroke: float | None
    current_text: str | None
    side: str
    row: str | None
    drawn_ms: float
    graph_size: list[float] | None
    canvas: int


def wait_drawn(scope: Any, timeout: float = 60.0) -> Any:
    """Wait until an explorer inside ``scope`` (a page or a locator) has drawn; return
    its root locator."""
    root = scope.locator(DRAWN).first
    root.wait_for(state="visible", timeout=timeout * 1000)
    return root


def read_view(root: Any) -> ExplorerView:
    """The explorer's visible state."""
    return ExplorerView(**root.evaluate(_READ))


def press(root: Any, action: str) -> None:
    """Click one of the step buttons: ``first``, ``prev``, ``play``, ``next``, ``last``."""
    root.locator(f'button[data-do="{action}"]').click()


def wait_step_label(root: Any, label: str, timeout: float = 10.0) -> ExplorerView:
    """Wait until the explorer's label reads ``label``; return the view."""
    deadline = time.monotonic() + timeout
    view = read_view(root)
    while view.label != label:
        if time.monotonic() > deadline:
            raise AssertionError(f"the explorer shows {view.label!r}, expected {label!r}")
        time.sleep(0.02)
        view = read_view(root)
    return view


#: Every visible piece of HTML text in the explorer (the SVG graph excluded), with its colour
#: and the colour behind it (the nearest opaque background), alpha and opacity blended in.
#: Colours may come back as rgb()/rgba() or, from color-mix(), as color(srgb r g b / a).
_TEXT_COLOURS = """(root) => {
    const parse = (text) => {
        const srgb = text.startsWith('color(srgb');
        const m = text.replace('color(srgb', '').match(/[\\d.]+/g);
        if (!m) return null;
        let [r, g, b, a] = m.map(Number);
        if (srgb) { r *= 255; g *= 255; b *= 255; }
        return [r, g, b, a === undefined ? 1 : a];
    };
    const behind = (el) => {
        for (let e = el; e; e = e.parentElement) {
            const c = parse(getComputedStyle(e).backgroundColor);
            if (c && c[3] > 0.5) return c;
        }
        return [255, 255, 255, 1];
    };
    const out = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode;
        const el = node.parentElement;
        if (!node.textContent.trim() || el.closest('svg') || !el.getClientRects().length) continue;
        let opacity = 1;
        for (let e = el; e && e !== root.parentElement; e = e.parentElement) {
            opacity *= Number(getComputedStyle(e).opacity);
        }
        const bg = behind(el);
        const fg = parse(getComputedStyle(el).color);
        const a = fg[3] * opacity;
        out.push({text: node.textContent.trim().slice(0, 40), cls: el.className || el.tagName,
                  colour: [0, 1, 2].map((i) => fg[i] * a + bg[i] * (1 - a)),
                  background: bg.slice(0, 3)});
    }
    return out;
}"""


def _luminance(rgb: list[float]) -> float:
    lin = [(c / 255) / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
           for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a: list[float], b: list[float]) -> float:
    """WCAG contrast ratio of two sRGB colours (0-255 channels): 1 (same) to 21.

    Examples
    --------
    >>> round(contrast_ratio([0, 0, 0], [255, 255, 255]), 1), contrast_ratio([9, 9, 9], [9, 9, 9])
    (21.0, 1.0)
    """
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@dataclass(frozen=True)
class TextColour:
    """One visible text of the explorer, its colour and the colour behind it."""

    text: str
    cls: str
    colour: list[float]
    background: list[float]

    @property
    def ratio(self) -> float:
        return contrast_ratio(self.colour, self.background)


def text_colours(root: Any) -> list[TextColour]:
    """Every visible HTML text of the explorer with its colours (SVG text excluded)."""
    return [TextColour(**t) for t in root.evaluate(_TEXT_COLOURS)]
