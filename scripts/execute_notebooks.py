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


def main(paths: list[str]) -> None:
    targets = [pathlib.Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in targets:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        for cell in nb.cells:
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(nb, path)
        print(f"executed {path.relative_to(ROOT) if path.is_absolute() else path}")


if __name__ == "__main__":
    main(sys.argv[1:])
