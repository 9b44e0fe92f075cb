"""Instructions per op (W1, W3) and per HVP (W4), counted by valgrind's callgrind.

Wall-clock timings on these shared machines swing by 2x with the load; an
instruction count does not (the same binary, inputs and environment give the
same count). Each workload runs under callgrind twice, with ``k`` and ``2k``
repetitions, and the difference divided by ``k`` (and by the ops per run) is
what one repetition costs: start-up and imports cancel out.

    python benchmarks/instructions.py                    # W1, W3, W4 of this checkout
    PYTHONPATH=/tmp/wg-old/src python benchmarks/instructions.py --installed
                                                         # another version (git archive)

Needs ``valgrind`` on PATH (Debian: apt-get install valgrind). Takes a few
minutes (callgrind runs Python about 50x slower).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (setup, one repetition, ops per repetition, repetitions k)
WORKLOADS = {
    "W1": (
        "from run import w1_chain; import numpy as np, wengert as wg",
        "x = wg.tensor(0.5, requires_grad=True); "
        "w1_chain(x, 2000, np.sin, np.cos, np.tanh).backward()",
        2000, 2,
    ),
    "W3": (
        "from run import w3_chain, w3_x0; import numpy as np, wengert as wg; x0 = w3_x0()",
        "x = wg.tensor(x0, requires_grad=True); w3_chain(x, 2000, np.sin, np.cos).sum().backward()",
        2000, 2,
    ),
    "W4": (
        "from forward import rosen, w4_data; import wengert as wg; x, v = w4_data(1000)",
        "wg.hvp(rosen, x, v)",
        1, 20,
    ),
}


def _script(setup: str, body: str, reps: int) -> str:
    return (f"import sys; sys.path.insert(0, {str(HERE)!r})\n{setup}\n"
            f"{body}\n"  # warm-up: caches, lazily built tables
            f"for _ in range({reps}):\n    {body}\n")


def _count(code: str, env: dict[str, str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, "-c", code], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = out.read_text()
    match = re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)",
                                                                         text, re.M)
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="W1,W3,W4")
    parser.add_argument("--installed", action="store_true",
                        help="measure the wengert on PYTHONPATH, not this checkout's src/")
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if not args.installed:
        env["PYTHONPATH"] = str(HERE.parent / "src")
    for name in args.only.split(","):
        setup, body, ops, k = WORKLOADS[name]
        one = _count(_script(setup, body, k), env)
        two = _count(_script(setup, body, 2 * k), env)
        per = (two - one) / k / ops
        unit = "op" if ops > 1 else "call"
        print(f"{name}: {per:,.0f} instructions per {unit}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
