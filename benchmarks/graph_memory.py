#!/usr/bin/env python3
"""Fusion speed and memory planning of static graphs, in one run.

Usage, from the repository root::

    PYTHONPATH=src python -m benchmarks.graph_memory            # full sizes (about a minute)
    PYTHONPATH=src python -m benchmarks.graph_memory --quick    # small sizes, a smoke test

1. Fusion: two 8-op elementwise chains on 10^6 float64 values (cheap arithmetic,
   and a mix with sin/exp/tanh): eager NumPy, the traced graph unfused, the fused
   graph (kernel with ``out=`` buffers, in chunks), the same kernel without chunks,
   and numexpr when it is importable (it is not a dependency of wengert; run this
   script with an interpreter that has it to include it). "graph, unfused" is the
   generated code without a memory plan (every value kept until it returns);
   "planned" runs the same equations with ``memory_plan`` (``run_planned``: values
   freed after their last use, outputs written into dying buffers). Times are min and
   median over interleaved repeats; "same bits" compares with eager NumPy.
2. Memory of the W2 gradient (the tanh MLP of benchmarks/workloads.py, loss and six
   gradients): ``peak_bytes`` without a plan (generated code keeps every value
   until it returns) and with ``memory_plan``, next to tracemalloc's peak while
   running the generated code, the planned run (``run_planned``), and the fused
   and planned run. tracemalloc starts after the inputs exist: the inputs' bytes
   are added to its peak to compare with ``peak_bytes``, which counts them.
3. Checkpointing: ``remat`` of a deep tanh MLP gradient under a few budgets.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import wengert as wg
from benchmarks.harness import (
    common_arguments,
    measure_interleaved,
    table,
    wengert_under_test,
    write_results,
)
from benchmarks.workloads import mlp_data, mlp_loss, mlp_params
from wengert.core.tree import flatten
from wengert.graph.passes.fuse import fuse, fused_kernels
from wengert.graph.passes.memory import memory_plan, peak_bytes, run_planned
from wengert.graph.passes.remat import BudgetError, remat

#: What the run measured, written to the JSON results (``--json``).
RESULTS: dict[str, Any] = {}


def arith_chain(x: Any, y: Any) -> Any:
    """8 cheap ops: mul add mul sub square add sqrt mul."""
    return np.sqrt(np.square((x * y + 0.5) * 2.0 - y) + 1.0) * x


def mixed_chain(x: Any, y: Any) -> Any:
    """8 ops, 3 of them transcendental: sin mul add exp sub tanh mul add."""
    return np.tanh(np.exp(np.sin(x) * y + 0.5) - x) * 2.0 + y


NUMEXPR = {arith_chain: "sqrt(((x * y + 0.5) * 2.0 - y) ** 2 + 1.0) * x",
           mixed_chain: "tanh(exp(sin(x) * y + 0.5) - x) * 2.0 + y"}


def timed(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, tuple[float, float]]:
    """Min and median seconds of each function, the functions interleaved (one warm-up
    call each, no collection between calls)."""
    rows = measure_interleaved(fns, repeats, 1, print, "timing", collect=False)
    return {k: (r["min_s"], r["median_s"]) for k, r in rows.items()}


def bench_fusion(n: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
    try:
        import numexpr
    except ImportError:
        numexpr = None
    for chain in (arith_chain, mixed_chain):
        print(f"\n== fusion: {chain.__name__} ({chain.__doc__}) on {n:,} float64 ==")
        fns = fusion_contenders(chain, x, y, numexpr)
        ref = chain(x, y)
        results = timed(fns, repeats)
        base = results["eager NumPy"][0]
        rows = []
        for name, (lo, med) in results.items():
            got = fns[name]()
            same = "yes" if np.array_equal(got, ref) else \
                f"no (max diff {np.max(np.abs(got - ref)):.1e})"
            rows.append([name, f"{lo * 1e3:.2f}", f"{med * 1e3:.2f}", f"{base / lo:.2f}x", same])
            RESULTS.setdefault(f"fusion {chain.__name__}", {})[name] = {
                "min_s": lo, "median_s": med, "same_bits": same == "yes"}
        print(table(["", "min ms", "median ms", "speedup", "same bits"], rows))
        if numexpr is None:
            print("   (numexpr not importable here: not timed)")


def fusion_contenders(chain: Callable[..., Any], x: np.ndarray, y: np.ndarray,
                      numexpr: Any) -> dict[str, Callable[[], Any]]:
    g = wg.trace(chain, x, y)
    fused = fuse(g)
    unchunked = fuse(g, chunk_elements=0)
    kernel = fused_kernels(fused)[0]
    assert len(fused) == 1 and len(g) == 8, (len(g), len(fused))
    print(f"   kernel {kernel.name}: out = {kernel.formula}")
    plan = memory_plan(g)
    fns: dict[str, Callable[[], Any]] = {
        "eager NumPy": lambda: chain(x, y),
        "graph, unfused": lambda: g(x, y),
        "graph, unfused, planned": lambda: run_planned(g, [x, y], plan)[0],
        "graph, fused (out=, chunks)": lambda: fused(x, y),
        "graph, fused (out=, one pass)": lambda: unchunked(x, y),
    }
    if numexpr is not None:
        expr = NUMEXPR[chain]
        cores = numexpr.detect_number_of_cores()
        for threads in sorted({1, cores}):
            def run(threads: int = threads) -> Any:
                numexpr.set_num_threads(threads)
                return numexpr.evaluate(expr, local_dict={"x": x, "y": y})

            fns[f"numexpr {numexpr.__version__}, {threads} thread{'s' * (threads > 1)}"] = run
    return fns


def traced_peak(fn: Callable[[], Any]) -> int:
    """tracemalloc's peak while ``fn`` runs (bytes allocated during the call)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    return peak


def bench_w2_memory(sizes: tuple[int, ...], batch: int, repeats: int) -> None:
    params = mlp_params(sizes, np.float64)
    X, onehot = mlp_data(sizes, batch, np.float64)

    def loss(ps: Any, X: Any, onehot: Any) -> Any:
        return mlp_loss(ps, X, onehot, stop=wg.stop_gradient)

    g = wg.trace(wg.value_and_grad(loss), params, X, onehot)
    leaves = flatten((params, X, onehot))[0]
    inputs = sum(v.nbytes for v in g.inputs)
    plan = memory_plan(g)
    fused = fuse(g)
    fused_plan = memory_plan(fused)
    eager = flatten(wg.value_and_grad(loss)(params, X, onehot))[0]
    for got in (flatten(g(params, X, onehot))[0], run_planned(g, leaves, plan),
                run_planned(fused, leaves, fused_plan)):
        for a, b in zip(got, eager):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    print(f"\n== W2 gradient graph: MLP {'-'.join(map(str, sizes))}, batch {batch}, float64: "
          f"{len(g)} equations ({len(fused)} fused) ==")
    print(f"   inputs {inputs:,} bytes; outputs "
          f"{sum(v.nbytes for v in g.outputs):,} bytes")
    rows = [
        ("generated code, no plan", peak_bytes(g), lambda: g(params, X, onehot)),
        ("planned (run_planned)", peak_bytes(g, plan), lambda: run_planned(g, leaves, plan)),
        ("fused + planned (run_planned)", peak_bytes(fused, fused_plan),
         lambda: run_planned(fused, leaves, fused_plan)),
    ]
    graph_type = type(g)
    if "plan" in getattr(graph_type, "__slots__", ()):
        from wengert.graph.passes.memory import plan_memory

        pg = plan_memory(g)
        if "out=" in pg.to_source() or "del " in pg.to_source():
            rows.append(("generated code with the plan", peak_bytes(pg),
                         lambda: pg(params, X, onehot)))
    lines = []
    for name, computed, fn in rows:
        measured = traced_peak(fn) + inputs
        lines.append([name, f"{computed:,d}", f"{measured:,d}"])
        RESULTS.setdefault("W2 gradient memory", {})[name] = {
            "peak_bytes": computed, "tracemalloc_plus_inputs": measured}
    print(table(["", "peak_bytes", "tracemalloc + inputs"], lines))
    fwd = lambda: loss(params, X, onehot)  # noqa: E731
    times = timed({"numpy forward": fwd, "graph": lambda: g(params, X, onehot),
                   "fused graph": lambda: fused(params, X, onehot)}, repeats)
    base = times["numpy forward"][0]
    RESULTS["W2 gradient times"] = {k: {"min_s": lo, "median_s": med}
                                    for k, (lo, med) in times.items()}
    print(f"   time (min over {repeats}): " + ", ".join(
        f"{k} {lo * 1e3:.2f} ms ({lo / base:.2f}x forward)" for k, (lo, _) in times.items()))


def bench_remat(depth: int, width: int, batch: int) -> None:
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(depth)]
    x = rng.standard_normal((batch, width))

    def loss(ws: Any, x: Any) -> Any:
        for w in ws:
            x = np.tanh(x @ w)
        return np.sum(x * x)

    g = wg.trace(wg.grad(loss), ws, x)
    plan = memory_plan(g)
    base = peak_bytes(g, plan)
    inputs = sum(v.nbytes for v in g.inputs)
    outputs = sum(v.nbytes for v in g.outputs)
    print(f"\n== remat: {depth}-layer tanh MLP gradient, width {width}, batch {batch}: "
          f"{len(g)} equations ==")
    print(f"   planned peak {base:,} bytes (inputs {inputs:,}, outputs {outputs:,})")
    eager = wg.grad(loss)(ws, x)
    for fraction in (0.9, 0.8, 0.7, 0.6, 0.5):
        budget = int(base * fraction)
        try:
            r = remat(g, budget)
        except BudgetError as e:
            print(f"   budget {budget:>12,d}: BudgetError, smallest peak {e.smallest_peak:,}")
            continue
        rplan = memory_plan(r)
        got = run_planned(r, flatten((ws, x))[0], rplan)
        for a, b in zip(got, flatten(eager)[0]):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        measured = traced_peak(lambda r=r, rplan=rplan: run_planned(
            r, flatten((ws, x))[0], rplan)) + inputs
        print(f"   budget {budget:>12,d}: peak {peak_bytes(r, rplan):>12,d} "
              f"(tracemalloc + inputs {measured:,}), {len(r) - len(g)} equations recomputed")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_arguments(ap)
    args = ap.parse_args(argv)
    wengert_under_test(args.installed)
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}")
    if args.quick:
        bench_fusion(10**5, 5)
        bench_w2_memory((784, 128, 128, 10), 64, 3)
        bench_remat(8, 32, 256)
    else:
        bench_fusion(10**6, 40)
        bench_w2_memory((784, 512, 512, 10), 256, 10)
        bench_remat(16, 128, 1024)
    write_results(args.json, {"graph_memory": RESULTS})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
