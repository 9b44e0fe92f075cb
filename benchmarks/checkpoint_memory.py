"""Memory saved by ``wg.checkpoint``: a chain of elementwise ops on a large vector.

Run: ``python benchmarks/checkpoint_memory.py`` (uses this checkout's ``src/``).
Reports, with tracemalloc, the memory the graph keeps alive after the forward
pass and the peak during the backward pass, for the plain chain, one
checkpoint around the whole chain, and ten checkpointed segments; it also
checks that the three give identical gradients.
"""

from __future__ import annotations

import pathlib
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "src"))

import wengert as wg  # noqa: E402
import wengert.numpy as wnp  # noqa: E402

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


def main():
    rows = []
    grads = []
    for name, fn in [("plain", plain), ("checkpoint(whole chain)", whole),
                     (f"{SEGMENTS} checkpointed segments", segmented)]:
        kept, peak, seconds, g = measure(fn)
        rows.append((name, kept, peak, seconds))
        grads.append(g)
    print(f"{DEPTH} x sin on a vector of {N:,} float64 (tracemalloc; times include it)")
    print(f"{'':28} {'kept after forward':>20} {'peak in backward':>18} {'seconds':>8}")
    for name, kept, peak, seconds in rows:
        print(f"{name:28} {kept / 2**20:17.1f} MB {peak / 2**20:15.1f} MB {seconds:8.2f}")
    same = all(np.array_equal(grads[0], g) for g in grads[1:])
    print("gradients identical:", same)
    if not same:
        raise SystemExit("checkpointed gradients differ")


if __name__ == "__main__":
    main()
