"""A notebook run headlessly with its widget state saved, and its static HTML export.

:func:`execute_with_widget_state` runs a notebook with nbclient (what ``jupyter
nbconvert --execute`` runs), whose ``store_widget_state`` keeps every widget model the
kernel opened in ``metadata.widgets["application/vnd.jupyter.widget-state+json"]``
(JupyterLab's "Save Widget State Automatically" writes the same). The kernel is the
test's own interpreter (``python3`` resolves to ``sys.executable``).
:func:`export_html` converts it with nbconvert's HTML exporter (the ``lab`` template),
which writes that state into a ``<script type="application/vnd.jupyter.widget-state+json">``
next to one ``application/vnd.jupyter.widget-view+json`` per widget output; the page then
loads require.js, the html-manager and each widget's npm module from CDNs (see
:mod:`e2e_cdn`). :func:`embedded_widget_state` reads that state back from the HTML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = [
    "STATE_MIME",
    "VIEW_MIME",
    "cdn_urls",
    "embedded_widget_state",
    "embedded_widget_views",
    "execute_with_widget_state",
    "export_html",
]

STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def execute_with_widget_state(source: Path, target: Path, timeout: float = 120.0) -> Any:
    """Run ``source`` in a fresh kernel (working directory: its folder), keep the widget
    state in its metadata, write it to ``target`` and return the notebook node."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(nb, timeout=int(timeout), kernel_name="python3",
                            store_widget_state=True,
                            resources={"metadata": {"path": str(source.parent)}})
    client.execute()
    nbformat.write(nb, target)
    return nb


def export_html(nb: Any, target: Path) -> str:
    """nbconvert's HTML export (lab template) of ``nb``, written to ``target``."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    target.write_text(body, encoding="utf-8")
    return str(body)


def _scripts(html: str, mime: str) -> list[Any]:
    pattern = re.compile(rf'<script type="{re.escape(mime)}">(.*?)</script>', re.S)
    return [json.loads(m.group(1)) for m in pattern.finditer(html)]


def embedded_widget_state(html: str) -> dict[str, Any]:
    """The widget models saved in an exported page: model id -> ``{"model_name",
    "model_module", "model_module_version", "state"}`` (empty: the page has none)."""
    found = _scripts(html, STATE_MIME)
    return dict(found[0]["state"]) if found else {}


def embedded_widget_views(html: str) -> list[str]:
    """The model ids of the widget outputs the page displays, in page order."""
    return [str(view["model_id"]) for view in _scripts(html, VIEW_MIME)]


def cdn_urls(html: str) -> list[str]:
    """The script addresses the exported page loads from the network by itself
    (``<script src=...>`` and the widget renderer it adds on load)."""
    urls = re.findall(r'<script[^>]*\bsrc="(https?://[^"]+)"', html)
    urls += re.findall(r"widgetRendererSrc = '(https?://[^']+)'", html)
    return urls
