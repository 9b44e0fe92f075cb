"""Speed of the Jupyter layer, measured in one run.

From the repository root (with a Python that has IPython)::

    PYTHONPATH=src python -m benchmarks.jupyter            # all (about a minute)
    PYTHONPATH=src python -m benchmarks.jupyter --quick    # smaller tapes

* ``%%autodiff`` overhead: a ten-line cell run through IPython's ``run_cell`` as a
  plain cell and under ``%%autodiff`` (reverse mode, the default card), median of
  many runs each; the difference is what the magic adds (target: 50 ms).
* ``wg.explore`` on the Python side for a 2,000- and a 100,000-equation tape:
  ``tape_of``, the frames (replayed sweep, texts, layout) and packing them for the
  browser, minimum of three runs each, with the cyclic garbage collector paused as
  ``wg.explore`` pauses it. The browser's part is measured by the
  Playwright tests (``tests/test_explorer_browser.py``, ``tests/e2e``), which print it.
* ``wg.draw``: DOT source and ``dot -Tsvg`` for 100 and 300 equations, and grouped for
  10,000.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np
import wengert as wg
from benchmarks.harness import common_arguments, print_sections, wengert_under_test, write_results
from wengert.core.collector import collector_paused
from wengert.jupyter.explorer.frames import explorer_frames
from wengert.jupyter.explorer.widget import pack

CELL = """\
a = np.tanh(X @ W1 + b1)
h = np.tanh(a @ W2 + b2)
logits = h @ W3
shifted = logits - np.max(logits, axis=1, keepdims=True)
p = np.exp(shifted)
p = p / np.sum(p, axis=1, keepdims=True)
nll = -np.log(np.sum(p * Y, axis=1))
reg = 1e-3 * (np.sum(W1 ** 2) + np.sum(W2 ** 2) + np.sum(W3 ** 2))
loss = np.mean(nll) + reg
loss
"""


def _namespace() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {
        "np": np, "X": rng.normal(size=(32, 16)), "Y": np.eye(4)[rng.integers(0, 4, 32)],
        "W1": rng.normal(size=(16, 32)) * 0.3, "b1": np.zeros(32),
        "W2": rng.normal(size=(32, 32)) * 0.3, "b2": np.zeros(32),
        "W3": rng.normal(size=(32, 4)) * 0.3,
    }


def magic_overhead(repeats: int) -> dict[str, float]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "wengert")

    def timed(cell: str) -> list[float]:
        times = []
        for _ in range(repeats):
            shell.user_ns.update(_namespace())
            t = time.perf_counter()
            result = shell.run_cell(cell, silent=True)
            times.append(time.perf_counter() - t)
            assert result.success, result.error_in_exec
        return times

    plain = timed(CELL)
    magic = timed("%%autodiff W1 b1 W2 b2 W3\n" + CELL)
    card = shell.user_ns["_autodiff"]
    t = time.perf_counter()
    card._repr_html_()
    card_ms = (time.perf_counter() - t) * 1e3
    return {"plain cell ms": statistics.median(plain) * 1e3,
            "%%autodiff cell ms": statistics.median(magic) * 1e3,
            "overhead ms": (statistics.median(magic) - statistics.median(plain)) * 1e3,
            "card HTML ms": card_ms}


def chain(n: int) -> Any:
    x = wg.tensor(np.linspace(-1.0, 1.0, 4), requires_grad=True)
    y = x
    for _ in range(n // 4):
        y = np.sin(y)
        y = np.cos(y)
        y = y * 0.9
        y = y + x
    return np.sum(y)


def explore_python(n: int) -> dict[str, float]:
    y = chain(n)
    best: dict[str, float] = {}
    for _ in range(3):
        with collector_paused():  # as wg.explore does
            t0 = time.perf_counter()
            tape = wg.tape_of(y)
            t1 = time.perf_counter()
            frames = explorer_frames(tape)
            t2 = time.perf_counter()
            packed = pack(frames)
            t3 = time.perf_counter()
        for key, value in (("tape_of s", t1 - t0), ("frames s", t2 - t1), ("pack s", t3 - t2),
                           ("total s", t3 - t0)):
            best[key] = min(best.get(key, value), value)
    blob = packed.get("packed", b"")  # a binary buffer; the rest travels as JSON
    text = json.dumps({k: v for k, v in packed.items() if k != "packed"})
    best["sent bytes per equation"] = (len(text.encode()) + len(blob)) / len(tape)
    return best


def draw_times() -> dict[str, float]:
    import shutil

    out: dict[str, float] = {}
    for n in (100, 300, 10_000):
        y = chain(n)
        t = time.perf_counter()
        drawing = wg.draw(y)
        t1 = time.perf_counter()
        if shutil.which("dot"):
            drawing.pipe(format="svg")
        t2 = time.perf_counter()
        out[f"{n:,} equations: DOT s"] = t1 - t
        out[f"{n:,} equations: dot -Tsvg s"] = t2 - t1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common_arguments(parser)
    args = parser.parse_args(argv)
    wengert_under_test(args.installed)
    sizes = (2_000, 20_000) if args.quick else (2_000, 100_000)
    sections = [("%%autodiff on a ten-line cell", magic_overhead(5 if args.quick else 25))]
    sections += [(f"wg.explore, Python side, {n:,} equations", explore_python(n))
                 for n in sizes]
    sections.append(("wg.draw", draw_times()))
    print_sections(sections)
    write_results(args.json, {"jupyter": dict(sections)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
