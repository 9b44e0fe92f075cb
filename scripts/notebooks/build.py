"""Write a curriculum notebook from a list of cells (without outputs).

Each notebook of ``notebooks/`` has a script ``scripts/notebooks/nbNN_<name>.py``
that lists its cells and calls :func:`write`; ``scripts/execute_notebooks.py``
then runs the notebook so its committed outputs match the code.

Cells are tuples:

- ``("md", text)``: a markdown cell;
- ``("code", source)``: a code cell whose output nbval compares;
- ``("varies", source)``: a code cell whose output truly varies (timings); it
  carries the ``nbval-ignore-output`` tag;
- ``("solution", source)``: an exercise's solution: its input is collapsed in
  JupyterLab and on the docs site (``hide-input``), and nbval runs it and
  compares its output like any other cell.
"""

from __future__ import annotations

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent.parent / "notebooks"
KINDS = ("md", "code", "varies", "solution")


def _cell(kind: str, text: str) -> nbformat.NotebookNode:
    if kind not in KINDS:
        raise ValueError(f"cell kind {kind!r} is not one of {KINDS}")
    text = text.strip("\n")
    if kind == "md":
        return new_markdown_cell(text)
    cell = new_code_cell(text)
    if kind == "varies":
        cell.metadata["tags"] = ["nbval-ignore-output"]
    elif kind == "solution":
        cell.metadata["tags"] = ["hide-input", "solution"]
        cell.metadata["jupyter"] = {"source_hidden": True}
    return cell


def write(name: str, cells: list[tuple[str, str]]) -> pathlib.Path:
    """Write ``notebooks/<name>.ipynb`` with ``cells`` and stable cell ids."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for k, (kind, text) in enumerate(cells):
        cell = _cell(kind, text)
        cell["id"] = f"{name[:2]}-{k:03d}"
        nb.cells.append(cell)
    path = NOTEBOOKS / f"{name}.ipynb"
    nbformat.write(nb, path)
    print(f"wrote {path}")
    return path
