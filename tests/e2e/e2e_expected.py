"""What the browser should show, computed in Python: the test notebook's cells run in an
in-process IPython shell (no kernel, no browser), and the explorer's data read from the
widget they make; ``wengert.jupyter.explorer.frames.step_label`` / ``step_view`` give the label
and side panel of each step from that data (``explorer.js`` builds the same from the
same data, so a mismatch is a bug on one side).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["cell_index", "notebook_explorer_data", "panel_texts"]


def cell_index(notebook: Path, cell_id: str) -> int:
    """The position of the cell with id ``cell_id`` in ``notebook`` (every cell counted)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for k, cell in enumerate(nb.cells):
        if cell.get("id") == cell_id:
            return k
    raise KeyError(f"{notebook.name} has no cell with id {cell_id!r}")


def notebook_explorer_data(notebook: Path, until: str, name: str = "explorer") -> dict[str, Any]:
    """Run the code cells of ``notebook`` up to the one with id ``until`` in IPython's
    in-process shell and return the data of the explorer bound to ``name``."""
    import nbformat
    from IPython.core.interactiveshell import InteractiveShell

    nb = nbformat.read(notebook, as_version=4)
    shell = InteractiveShell.instance()
    saved = dict(shell.user_ns)
    loaded = "wengert" in shell.extension_manager.loaded
    try:
        for cell in nb.cells:
            if cell.cell_type == "code":
                shell.run_cell(cell.source, store_history=False).raise_error()
            if cell.get("id") == until:
                break
        widget = shell.user_ns[name]
        data = getattr(widget, "data", None)
        data = dict(widget.frames) if data is None else dict(data)
        widget.close()
        return data
    finally:
        if not loaded and "wengert" in shell.extension_manager.loaded:
            shell.extension_manager.unload_extension("wengert")
        shell.user_ns.clear()
        shell.user_ns.update(saved)


def panel_texts(view: dict[str, Any]) -> list[str]:
    """The texts of one ``step_view`` that the side panel must show verbatim."""
    texts = [view["equation"]] if view.get("equation") else []
    texts += view.get("seeds", [])
    if view.get("incoming"):
        texts.append(view["incoming"])
    for send in view.get("sends", []):
        texts += [send["rule"], send["sum"]]
        if send.get("numbers"):
            texts.append(send["numbers"])
    return texts
