"""Speed of static graphs, side by side in one run.

From the repository root::

    PYTHONPATH=src python -m benchmarks.graphs              # W1, W2, W3 (10^5 ops), fusion
    PYTHONPATH=src python -m benchmarks.graphs --w3 1000000 # W3 at full size (minutes, GBs)

* W1: the 10,000-op scalar chain's gradient, eager tape vs ``wg.compile(wg.grad(f))``:
  trace + compile time of the first call, then µs per op in steady state (minimum).
* W2: the MLP (784-512-512-10, batch 256) gradient compiled, as a multiple of the NumPy
  forward, next to the eager tape and hand-written NumPy; peak memory of the gradient
  graph before and after ``plan_memory`` (``graph.peak_bytes()``).
* W3: the 10^k-op vector chain's gradient traced and compiled; µs per op.
* Fusion: an 8-op elementwise chain on 10^6 float64s, eager NumPy vs the fused kernel
  (see also ``benchmarks/graph_memory.py``).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import wengert as wg
from benchmarks.harness import (
    best,
    common_arguments,
    print_sections,
    wengert_under_test,
    write_results,
)
from benchmarks.workloads import (
    W1_X0,
    mlp_data,
    mlp_loss,
    mlp_numpy_grads,
    mlp_params,
    w1_chain,
    w3_chain,
    w3_x0,
)
from wengert.graph.passes.pipeline import COMPILE_PASSES, DEFAULT_PASSES


def w1(n: int = 10_000) -> dict[str, float]:
    f = lambda x: w1_chain(x, n, np.sin, np.cos, np.tanh)  # noqa: E731
    eager = wg.grad(f)
    t = time.perf_counter()
    compiled = wg.compile(wg.grad(f))
    value = compiled(W1_X0)
    first = time.perf_counter() - t
    assert abs(value - eager(W1_X0)) <= 1e-12 * abs(value)
    return {"equations run": len(compiled.cache_info()[0].graph),
            "trace + compile s": first,
            "eager tape µs/op": best(lambda: eager(W1_X0), 1, 3) / n * 1e6,
            "compiled µs/op": best(lambda: compiled(W1_X0), 20) / n * 1e6}


def w2() -> dict[str, float]:
    sizes = (784, 512, 512, 10)
    params = mlp_params(sizes, np.float64)
    X, onehot = mlp_data(sizes, 256, np.float64)
    loss = lambda p, X, y: mlp_loss(p, X, y)  # noqa: E731
    forward = best(lambda: mlp_loss(params, X, onehot), 10)
    eager = wg.grad(loss)
    compiled = wg.compile(wg.grad(loss))
    got = compiled(params, X, onehot)
    want = mlp_numpy_grads(params, X, onehot)[1]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    graph = wg.grad_graph(wg.trace(loss, params, X, onehot)).optimize(DEFAULT_PASSES)
    planned = graph.optimize(COMPILE_PASSES)
    return {"NumPy forward ms": forward * 1e3,
            "hand-written NumPy gradient / forward":
                best(lambda: mlp_numpy_grads(params, X, onehot), 10) / forward,
            "eager tape / forward": best(lambda: eager(params, X, onehot), 10) / forward,
            "compiled gradient / forward": best(lambda: compiled(params, X, onehot), 10)
            / forward,
            "peak MB, as traced": graph.peak_bytes() / 1e6,
            "peak MB, after plan_memory": planned.peak_bytes() / 1e6}


def w3(n: int) -> dict[str, float]:
    f = lambda x: np.sum(w3_chain(x, n, np.sin, np.cos))  # noqa: E731
    x = w3_x0()
    t = time.perf_counter()
    graph = wg.trace(wg.grad(f), x, source_lines=False)
    traced = time.perf_counter() - t
    compiled = wg.compile(wg.grad(f))
    t = time.perf_counter()
    compiled(x)
    first = time.perf_counter() - t
    np.testing.assert_allclose(compiled(x), wg.grad(f)(x), rtol=1e-9)
    return {"equations traced": len(graph), "trace s": traced,
            "trace + optimise + compile s": first,
            "eager tape µs/op": best(lambda: wg.grad(f)(x), 1, 2) / n * 1e6,
            "compiled µs/op": best(lambda: compiled(x), 1, 3) / n * 1e6}


def fusion() -> dict[str, float]:
    def chain(x: Any) -> Any:
        return np.sqrt(((x * 1.5 + 2.0) * 0.5 - 1.0) ** 2 + 1.0) * 3.0

    x = np.linspace(0.0, 1.0, 1_000_000)
    fused = wg.compile(chain)
    unfused = wg.compile(chain, optimize=False)
    np.testing.assert_array_equal(fused(x), chain(x))
    eager = best(lambda: chain(x), 20)
    return {"eager NumPy ms": eager * 1e3,
            "compiled, fused ms": best(lambda: fused(x), 20) * 1e3,
            "compiled, unfused ms": best(lambda: unfused(x), 20) * 1e3,
            "speedup of fused over eager": eager / best(lambda: fused(x), 20)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--w3", type=int, default=100_000, help="W3's op count")
    parser.add_argument("--only", default="W1,W2,W3,fusion")
    common_arguments(parser, quick=False)
    args = parser.parse_args(argv)
    wengert_under_test(args.installed)
    runs = {"W1": w1, "W2": w2, "W3": lambda: w3(args.w3), "fusion": fusion}
    results = {}
    for name in args.only.split(","):
        results[name] = runs[name]()
        print_sections([(name, results[name])], width=40, fmt="12.3f")
    write_results(args.json, {"graphs": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
