"""Memory saved by ``wg.checkpoint``: a chain of elementwise ops on a large vector.

Run from the repository root: ``PYTHONPATH=src python -m benchmarks.checkpoint_memory``.
Reports, with tracemalloc, the memory the graph keeps alive after the forward
pass and the peak during the backward pass, for the plain chain, one
checkpoint around the whole chain, and ten checkpointed segments; it also
checks that the three give identical gradients.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from benchmarks.harness import common_arguments, table, wengert_under_test, write_results

N, DEPTH, SEGMENTS = 100_000, 200, 10


def chain(x, depth=DEPTH):
    for _ in range(depth):
        x = wnp.sin(x)
    return x


def plain(x):
    return chain(x)


def whole(x):
    return wg.checkpoint(chain)(x)


def segmented(x):
    step = wg.checkpoint(lambda y: chain(y, DEPTH // SEGMENTS))
    for _ in range(SEGMENTS):
        x = step(x)
    return x


def measure(fn):
    x = wg.tensor(np.linspace(0.0, 1.0, N), requires_grad=True)
    tracemalloc.start()
    t0 = time.perf_counter()
    loss = fn(x).sum()
    kept = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    loss.backward()
    peak = tracemalloc.get_traced_memory()[1]
    seconds = time.perf_counter() - t0
    tracemalloc.stop()
    return kept, peak, seconds, x.grad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common_arguments(ap, quick=False)
    args = ap.parse_args(argv)
    wengert_under_test(args.installed)
    rows = []
    grads = []
    for name, fn in [("plain", plain), ("checkpoint(whole chain)", whole),
                     (f"{SEGMENTS} checkpointed segments", segmented)]:
        kept, peak, seconds, g = measure(fn)
        rows.append((name, kept, peak, seconds))
        grads.append(g)
    print(f"{DEPTH} x sin on a vector of {N:,} float64 (tracemalloc; times include it)")
    print(table(["", "kept after forward MB", "peak in backward MB", "seconds"],
                [[name, f"{kept / 2**20:.1f}", f"{peak / 2**20:.1f}", f"{seconds:.2f}"]
                 for name, kept, peak, seconds in rows]))
    same = all(np.array_equal(grads[0], g) for g in grads[1:])
    print("gradients identical:", same)
    write_results(args.json, {"checkpoint_memory": {
        name: {"kept_bytes": kept, "peak_bytes": peak, "seconds": seconds}
        for name, kept, peak, seconds in rows}, "gradients_identical": same})
    if not same:
        raise SystemExit("checkpointed gradients differ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
