"""Instructions per op (W1, W1d and its floor, W3) and per HVP (W4), by valgrind's callgrind.

Wall-clock timings on these shared machines swing by 2x with the load; an
instruction count does not (the same binary, inputs and environment give the
same count). Each workload runs under callgrind twice, with ``k`` and ``2k``
repetitions, and the difference divided by ``k`` (and by the ops per run) is
what one repetition costs: start-up and imports cancel out (and the objects they leave
are frozen out of the garbage collector's full collections, see ``_script``).

From the repository root::

    PYTHONPATH=src python -m benchmarks.instructions               # this checkout
    PYTHONPATH=src python -m benchmarks.instructions --only W1d,W1d-np,W1d-naive
    PYTHONPATH=/tmp/wg-old/src python -m benchmarks.instructions --installed
                                                   # another version (git archive)

Needs ``valgrind`` on PATH (Debian: apt-get install valgrind). Takes a few
minutes (callgrind runs Python about 50x slower).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import ROOT, child_env, common_arguments, wengert_under_test, write_results

#: name -> (setup, one repetition, ops per repetition, repetitions k)
WORKLOADS = {
    "W1": (
        "from benchmarks.workloads import w1_chain; import numpy as np, wengert as wg",
        "x = wg.tensor(0.5, requires_grad=True); "
        "w1_chain(x, 2000, np.sin, np.cos, np.tanh).backward()",
        2000, 2,
    ),
    "W1d": (
        "from benchmarks.workloads import w1_chain; import wengert as wg, wengert.numpy as wnp",
        "w1_chain(wg.Dual(0.5, 1.0), 2000, wnp.sin, wnp.cos, wnp.tanh)",
        2000, 2,
    ),
    "W1d-np": (
        "from benchmarks.workloads import w1_chain; import numpy as np, wengert as wg",
        "w1_chain(wg.Dual(0.5, 1.0), 2000, np.sin, np.cos, np.tanh)",
        2000, 2,
    ),
    "W1d-naive": (  # the floor: the 20-line dual class of benchmarks/forward.py
        "from benchmarks.workloads import w1_chain; "
        "from benchmarks.forward import NaiveDual, naive_sin, naive_cos, naive_tanh",
        "w1_chain(NaiveDual(0.5, 1.0), 2000, naive_sin, naive_cos, naive_tanh)",
        2000, 2,
    ),
    "W3": (
        "from benchmarks.workloads import w3_chain, w3_x0; import numpy as np, wengert as wg; "
        "x0 = w3_x0()",
        "x = wg.tensor(x0, requires_grad=True); w3_chain(x, 2000, np.sin, np.cos).sum().backward()",
        2000, 2,
    ),
    "W4": (
        "from benchmarks.workloads import rosen, w4_data; import wengert as wg; "
        "x, v = w4_data(1000)",
        "wg.hvp(rosen, x, v)",
        1, 20,
    ),
}


def _script(setup: str, body: str, reps: int) -> str:
    # After the warm-up (caches, lazily built tables), gc.freeze() moves every object alive
    # so far out of the collector's reach: the collections the repetitions trigger still
    # count, but a full collection no longer walks the imported modules, whose cost
    # (tens of millions of instructions) would land in one of the two runs and not the other.
    return (f"{setup}\n"
            f"{body}\n"
            "import gc; gc.freeze()\n"
            f"for _ in range({reps}):\n    {body}\n")


def _count(code: str, env: dict[str, str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, "-c", code], check=True, env=env, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = out.read_text()
    match = re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)",
                                                                         text, re.M)
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="W1,W1d,W3,W4",
                        help="comma-separated subset of " + ",".join(WORKLOADS))
    common_arguments(parser, quick=False)
    args = parser.parse_args(argv)
    wengert_under_test(args.installed)
    # the worker imports the same wengert as this process, and benchmarks from ROOT
    env = child_env(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    results: dict[str, dict[str, float]] = {}
    for name in args.only.split(","):
        setup, body, ops, k = WORKLOADS[name]
        one = _count(_script(setup, body, k), env)
        two = _count(_script(setup, body, 2 * k), env)
        per = (two - one) / k / ops
        unit = "op" if ops > 1 else "call"
        results[name] = {f"instructions per {unit}": per}
        print(f"{name}: {per:,.0f} instructions per {unit}", flush=True)
    write_results(args.json, {"instructions": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
