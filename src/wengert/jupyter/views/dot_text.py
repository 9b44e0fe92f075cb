"""DOT text shared by the drawings (:mod:`.dot`): escaping, quoting, attribute lists and
Graphviz's HTML-like labels.

Examples
--------
>>> attrs(shape="box", label=html_label(["<B>t0</B>", small("f64[3]", "#6b7280")]))
'[shape="box", label=<<B>t0</B><BR/><FONT POINT-SIZE="9" COLOR="#6b7280">f64[3]</FONT>>]'
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

__all__ = ["escape", "quote", "small", "attrs", "html_label"]


def escape(text: str) -> str:
    """``text`` for an HTML-like label (``<`` as ``&lt;``)."""
    return html.escape(text, quote=True)


def quote(text: str) -> str:
    """``text`` as a quoted DOT string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def small(text: str, color: str | None = None, italic: bool = False,
          struck: bool = False) -> str:
    """``text`` in the small font of a node's second line (italic, struck through)."""
    body = escape(text)
    if italic:
        body = f"<I>{body}</I>"
    if struck:
        body = f"<S>{body}</S>"
    color_attr = f' COLOR="{color}"' if color else ""
    return f'<FONT POINT-SIZE="9"{color_attr}>{body}</FONT>'


def attrs(**values: Any) -> str:
    """``[key="value", label=<...>]``: an HTML-like label (``<...>``) is written as it is."""
    parts = []
    for key, value in values.items():
        if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={quote(str(value))}")
    return "[" + ", ".join(parts) + "]"


def html_label(lines: Sequence[str]) -> str:
    """Lines of HTML-like text as one label, one line each."""
    return "<" + "<BR/>".join(lines) + ">"
