"""The scripts that write and run the notebooks of ``notebooks/``."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")  # (the notebook tools: the jupyter extra)

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "scripts"


def load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_consecutive_stream_outputs_are_stored_as_one():
    runner = load(SCRIPTS / "execute_notebooks.py")
    outputs = [nbformat.v4.new_output("stream", name="stdout", text="a ="),
               nbformat.v4.new_output("stream", name="stdout", text=" 1\n"),
               nbformat.v4.new_output("stream", name="stderr", text="warn\n"),
               nbformat.v4.new_output("execute_result", data={"text/plain": "2"}),
               nbformat.v4.new_output("stream", name="stdout", text="b\n")]
    merged = runner.merge_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "a = 1\n"), ("stream", "stderr", "warn\n"),
        ("execute_result", None, None), ("stream", "stdout", "b\n")]
