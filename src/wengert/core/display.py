"""Rich display hooks: how an object of wengert looks in a notebook, filled from above.

Tensors, dual numbers, gradient tapes and tapes have a ``_repr_html_`` that
asks :func:`html_of` for their HTML. The renderers themselves live in the
Jupyter layer (:mod:`wengert.jupyter.views.html`), which registers them here when
it is imported (``import wengert`` does so); the lower layers never import
it. Without a renderer ``_repr_html_`` returns ``None`` and a notebook shows
the object's ``repr``, which is always deterministic text.

Examples
--------
>>> class Point:
...     def _repr_html_(self):
...         return html_of(self)
>>> Point()._repr_html_() is None
True
>>> register_html(Point, lambda p: "<b>point</b>")
>>> Point()._repr_html_()
'<b>point</b>'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register_html", "html_of"]

#: class -> function(obj) -> HTML string; filled by the Jupyter layer on import.
_HTML: dict[type, Callable[[Any], str]] = {}


def register_html(cls: type, render: Callable[[Any], str]) -> None:
    """Render instances of ``cls`` (and of its subclasses without their own renderer) as
    HTML with ``render``."""
    _HTML[cls] = render


def html_of(obj: Any) -> str | None:
    """The HTML of ``obj`` from the renderer registered for its class or the nearest base
    class (``None``: no renderer, show the ``repr``)."""
    for cls in type(obj).__mro__:
        render = _HTML.get(cls)
        if render is not None:
            return render(obj)
    return None
