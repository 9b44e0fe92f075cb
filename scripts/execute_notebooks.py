"""Run notebooks in place so their committed outputs match the code.

Usage: ``.venv/bin/python scripts/execute_notebooks.py [notebooks/NAME.ipynb ...]``
(all of ``notebooks/`` by default). nbval in ``./test`` then checks them.
"""

from __future__ import annotations

import pathlib
import sys

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent


def merge_streams(outputs: list) -> list:
    """Join consecutive ``stdout`` (or ``stderr``) outputs of a cell into one.

    The kernel flushes a stream whenever it likes (often after the first write of a cell),
    so one ``print("a", x)`` can be stored as two outputs; JupyterLab shows them joined,
    but an HTML export shows a line break between them.
    """
    merged: list = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (last is not None and out.get("output_type") == "stream"
                and last.get("output_type") == "stream" and last.get("name") == out.get("name")):
            last["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def main(paths: list[str]) -> None:
    targets = [pathlib.Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in targets:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        for cell in nb.cells:
            cell.get("metadata", {}).pop("execution", None)
            if cell.cell_type == "code":
                cell.outputs = merge_streams(cell.outputs)
        nbformat.write(nb, path)
        print(f"executed {path.relative_to(ROOT) if path.is_absolute() else path}")


if __name__ == "__main__":
    main(sys.argv[1:])
