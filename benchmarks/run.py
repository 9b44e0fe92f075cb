"""Side-by-side speed benchmarks: wengert vs HIPS autograd vs PyTorch (CPU).

Usage, from the repository root::

    PYTHONPATH=src python -m benchmarks.run                 # full run (several minutes)
    PYTHONPATH=src python -m benchmarks.run --quick         # small sizes, a smoke test
    PYTHONPATH=src python -m benchmarks.run --only W1,W2    # a subset (W1-W3, W1d, W4-W6)

Workloads (see benchmarks/README.md):

W1  a scalar chain of 10,000 elementary ops on a Python float / 0-d value
    (sin, cos, tanh, mul by a constant, add the input, pow by a constant),
    forward + backward, in µs per op.  Target for wengert: ≤ 1.6 µs/op.
W2  3-layer tanh MLP 784-512-512-10, batch 256, softmax cross-entropy:
    loss and all six parameter gradients, as a multiple of the plain NumPy
    forward.  Target for wengert: ≤ 2.5×.
W3  a chain of 10^5 elementwise ops (sin, cos, mul, add) on a length-16
    float64 vector, forward + backward, each framework in a fresh subprocess:
    it must complete; µs per op (target ≤ 4.5) and bytes per recorded op.

W1d, W4, W5, W6 (forward mode, with JAX as a fourth peer) are defined in
``benchmarks/forward.py``; ``python -m benchmarks.forward`` runs just those.
The functions every implementation runs are in ``benchmarks/workloads.py``, the
timing, peers, tables and results file in ``benchmarks/harness.py``.

wengert must be this checkout's ``src/`` unless ``--installed`` is given.  Peers that
are not importable are skipped with a message that says how to install them.  Results
are printed as a table and written to ``benchmarks/results.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
from benchmarks import forward
from benchmarks.harness import (
    ROOT,
    GCClock,
    Suite,
    child_env,
    fmt_ms,
    measure_interleaved,
    perf_counter,
    process_time,
    rel_diff,
    rss_bytes,
    run_safely,
    run_suites,
    scaled_verdict,
    summary,
    table,
)
from benchmarks.workloads import (
    W1_X0,
    W3_LEN,
    mlp_data,
    mlp_loss,
    mlp_numpy_grads,
    mlp_params,
    torch_mlp_loss,
    w1_chain,
    w1_reference,
    w3_chain,
    w3_x0,
)

#: µs/op for W1 and W3, × NumPy's forward for W2; W1's stated beside a minimal tape's
#: 0.9 µs/op (see :data:`STATED_FLOORS`).
TARGETS = {"W1": 1.6, "W2": 2.5, "W3": 4.5}
#: What the floor a target was stated against took when it was stated.
STATED_FLOORS = {"W1": 0.9}


# --------------------------------------------------------------------------- W1
class MinimalTape:
    """The floor for W1: a Wengert list of ``(input index, partial)`` pairs over floats.

    A minimal Python tape (about 25 lines, no checks, no generality),
    timed in the same run as a measure of how fast this machine is right now.
    """

    def __init__(self) -> None:
        self.entries: list[tuple[tuple[int, float], ...]] = []

    def var(self, value: float, *partials: tuple[int, float]) -> MinimalVar:
        self.entries.append(partials)
        return MinimalVar(self, value, len(self.entries) - 1)

    def gradient(self, y: MinimalVar, x: MinimalVar) -> float:
        g = [0.0] * len(self.entries)
        g[y.i] = 1.0
        for k in range(y.i, -1, -1):
            gk = g[k]
            for i, d in self.entries[k]:
                g[i] += gk * d
        return g[x.i]


class MinimalVar:
    __slots__ = ("tape", "v", "i")

    def __init__(self, tape: MinimalTape, v: float, i: int) -> None:
        self.tape, self.v, self.i = tape, v, i

    def __mul__(self, c: float) -> MinimalVar:
        return self.tape.var(self.v * c, (self.i, c))

    def __add__(self, o: MinimalVar) -> MinimalVar:
        return self.tape.var(self.v + o.v, (self.i, 1.0), (o.i, 1.0))

    def __pow__(self, c: float) -> MinimalVar:
        return self.tape.var(self.v**c, (self.i, c * self.v ** (c - 1.0)))


def minimal_sin(x: MinimalVar) -> MinimalVar:
    return x.tape.var(math.sin(x.v), (x.i, math.cos(x.v)))


def minimal_cos(x: MinimalVar) -> MinimalVar:
    return x.tape.var(math.cos(x.v), (x.i, -math.sin(x.v)))


def minimal_tanh(x: MinimalVar) -> MinimalVar:
    t = math.tanh(x.v)
    return x.tape.var(t, (x.i, 1.0 - t * t))


def bench_w1(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    import wengert as wg
    import wengert.numpy as wnp

    n, repeats = cfg["w1_ops"], cfg["w1_repeats"]
    ref_value, ref_grad = w1_reference(n)
    say(f"\n== W1: scalar chain of {n:,} ops (sin, cos, tanh, *c, +x, **c), "
        f"forward + backward, {repeats} repeats ==")

    impls: dict[str, Callable[[], tuple[float, float]]] = {}

    def wengert_with(sin: Any, cos: Any, tanh: Any) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            x = wg.tensor(W1_X0, requires_grad=True)
            y = w1_chain(x, n, sin, cos, tanh)
            y.backward()
            return float(y.item()), float(x.grad)

        return run

    impls["wengert (wnp.sin ...)"] = wengert_with(wnp.sin, wnp.cos, wnp.tanh)
    impls["wengert (np.sin dispatch)"] = wengert_with(np.sin, np.cos, np.tanh)

    def wengert_grad() -> tuple[float, float]:
        f = lambda x: w1_chain(x, n, wnp.sin, wnp.cos, wnp.tanh)
        value, g = wg.value_and_grad(f)(W1_X0)
        return float(value), float(g)

    impls["wengert (wg.value_and_grad)"] = wengert_grad

    ag = peers.get("autograd")
    if ag is not None:
        import autograd.numpy as anp

        def autograd_run() -> tuple[float, float]:
            f = lambda x: w1_chain(x, n, anp.sin, anp.cos, anp.tanh)
            value, g = ag.value_and_grad(f)(W1_X0)
            return float(value), float(g)

        impls["autograd"] = autograd_run

    torch = peers.get("torch")
    if torch is not None:

        def torch_run() -> tuple[float, float]:
            x = torch.tensor(W1_X0, dtype=torch.float64, requires_grad=True)
            y = w1_chain(x, n, torch.sin, torch.cos, torch.tanh)
            y.backward()
            return float(y.item()), float(x.grad.item())

        impls["torch"] = torch_run

    def minimal_tape() -> tuple[float, float]:
        tape = MinimalTape()
        x = tape.var(W1_X0)
        y = w1_chain(x, n, minimal_sin, minimal_cos, minimal_tanh)
        return y.v, tape.gradient(y, x)

    impls["minimal Python tape (25 lines, floor)"] = minimal_tape

    def plain_floats() -> tuple[float, float]:
        return w1_chain(W1_X0, n, math.sin, math.cos, math.tanh), float("nan")

    impls["math floats (forward only, no AD)"] = plain_floats

    checked: dict[str, Any] = {}
    for name, fn in impls.items():
        checked[name] = run_safely(f"W1 {name}", fn, say)
    ok = {k: impls[k] for k, v in checked.items() if not isinstance(v, dict)}
    rows = measure_interleaved(ok, repeats, 1, say, "W1")
    for name, result in checked.items():
        if isinstance(result, dict):
            rows[name] = result
            continue
        r = rows[name]
        if "error" in r:
            continue
        value, g = result
        for key in ("median", "min", "cpu_min"):
            r[f"us_per_op_{key}"] = r[f"{key}_s"] / n * 1e6
        r["value_rel_diff"] = rel_diff(value, ref_value)
        r["grad"] = g
        r["grad_rel_diff"] = None if math.isnan(g) else rel_diff(g, ref_grad)
        gd = r["grad_rel_diff"]
        say(f"  {name:<36} {r['us_per_op_median']:8.2f} µs/op (median), "
            f"{r['us_per_op_min']:8.2f} (min), {r['us_per_op_cpu_min']:8.2f} (cpu min); "
            f"grad rel diff vs reference {'n/a' if gd is None else f'{gd:.1e}'}")
    rows = {k: rows[k] for k in impls}
    return {"ops": n, "repeats": repeats, "reference_value": ref_value,
            "reference_grad": ref_grad, "rows": rows}



# --------------------------------------------------------------------------- W2
def bench_w2_dtype(cfg: dict[str, Any], peers: dict[str, Any], dtype: Any,
                   say: Callable[[str], None]) -> dict:
    import wengert as wg

    sizes, batch, repeats = cfg["w2_sizes"], cfg["w2_batch"], cfg["w2_repeats"]
    params = mlp_params(sizes, dtype)
    X, onehot = mlp_data(sizes, batch, dtype)
    ref_loss, ref_grads = mlp_numpy_grads(params, X, onehot)
    dname = np.dtype(dtype).name
    say(f"\n== W2 ({dname}): tanh MLP {'-'.join(map(str, sizes))}, batch {batch}, "
        f"loss + 6 gradients, {repeats} repeats ==")

    impls: dict[str, Callable[[], tuple[Any, list[Any]]]] = {}
    impls["numpy forward (baseline)"] = lambda: (mlp_loss(params, X, onehot), None)
    impls["numpy forward + hand backward"] = lambda: mlp_numpy_grads(params, X, onehot)

    leaves = [wg.tensor(p, requires_grad=True) for p in params]

    def wengert_backward() -> tuple[Any, list[Any]]:
        for t in leaves:
            t.grad = None
        loss = mlp_loss(leaves, X, onehot, stop=wg.stop_gradient)
        loss.backward()
        return loss.item(), [t.grad for t in leaves]

    impls["wengert (tensor.backward)"] = wengert_backward

    def wengert_vg() -> tuple[Any, list[Any]]:
        f = lambda ps: mlp_loss(ps, X, onehot, stop=wg.stop_gradient)
        loss, grads = wg.value_and_grad(f)(tuple(params))
        return loss, list(grads)

    impls["wengert (wg.value_and_grad)"] = wengert_vg

    ag = peers.get("autograd")
    if ag is not None:
        import autograd.numpy as anp

        def autograd_run() -> tuple[Any, list[Any]]:
            f = lambda ps: mlp_loss(ps, X, onehot, xp=anp)
            loss, grads = ag.value_and_grad(f)(list(params))
            return loss, list(grads)

        impls["autograd"] = autograd_run

    torch = peers.get("torch")
    if torch is not None:
        tparams = [torch.tensor(p, requires_grad=True) for p in params]
        tX, tonehot = torch.from_numpy(X), torch.from_numpy(onehot)

        def torch_run() -> tuple[Any, list[Any]]:
            for p in tparams:
                p.grad = None
            loss = torch_mlp_loss(torch, tparams, tX, tonehot)
            loss.backward()
            return loss.item(), [p.grad.numpy() for p in tparams]

        def torch_forward() -> tuple[Any, list[Any]]:
            with torch.no_grad():
                return torch_mlp_loss(torch, tparams, tX, tonehot).item(), None

        impls["torch"] = torch_run
        impls["torch forward only (no_grad)"] = torch_forward

    checked: dict[str, Any] = {}
    for name, fn in impls.items():
        checked[name] = run_safely(f"W2 {dname} {name}", fn, say)
    ok = {k: impls[k] for k, v in checked.items() if not isinstance(v, dict)}
    rows = measure_interleaved(ok, repeats, 2, say, f"W2 {dname}")
    for name, result in checked.items():
        if isinstance(result, dict):
            rows[name] = result
            continue
        r = rows[name]
        loss, grads = result
        r["loss_abs_diff"] = abs(float(loss) - float(ref_loss))
        if grads is not None:
            diffs = [float(np.max(np.abs(np.asarray(g, dtype=np.float64) - ref)))
                     for g, ref in zip(grads, ref_grads)]
            r["grad_max_abs_diff"] = max(diffs)
            r["grad_max_abs_diff_per_param"] = diffs
    rows = {k: rows[k] for k in impls}
    base = rows["numpy forward (baseline)"]
    for name, r in rows.items():
        if "error" in r:
            continue
        if "error" not in base:
            r["ratio_min"] = r["min_s"] / base["min_s"]
            r["ratio_median"] = r["median_s"] / base["median_s"]
            r["ratio_cpu_min"] = r["cpu_min_s"] / base["cpu_min_s"]
            # Rounds are interleaved, so round i of every implementation ran
            # under about the same load: the median of per-round ratios.
            r["ratio_paired"] = statistics.median(
                a / b for a, b in zip(r["wall_s"], base["wall_s"]))
        gd = r.get("grad_max_abs_diff")
        say(f"  {name:<32} {fmt_ms(r['median_s']):>9} ms (median) {fmt_ms(r['min_s']):>9} (min)"
            f" {fmt_ms(r['cpu_min_s']):>9} (cpu min)"
            f"  {r.get('ratio_min', float('nan')):5.2f}x fwd (min/min)"
            f"  {r.get('ratio_paired', float('nan')):5.2f}x (paired)"
            f"  {r.get('ratio_cpu_min', float('nan')):5.2f}x (cpu)"
            + ("" if gd is None else f"  grad max abs diff vs hand NumPy {gd:.1e}"))
    return {"dtype": dname, "sizes": list(sizes), "batch": batch, "repeats": repeats,
            "reference_loss": float(ref_loss), "rows": rows}


def bench_w2(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    out = {}
    for dtype in cfg["w2_dtypes"]:
        out[np.dtype(dtype).name] = bench_w2_dtype(cfg, peers, dtype, say)
    return out




# --------------------------------------------------------------------------- W3
#: Table names of the W3 rows that are not a library's name.
W3_LABELS = {"minimal": "minimal Python tape over NumPy (reference)"}


class MinimalArrayTape:
    """An in-run reference for W3: W1's minimal tape over NumPy arrays.

    Each entry holds ``(input index, partial)`` pairs, the partial an array or
    a number computed in the forward (``None`` for the identity), so the
    backward pass is one multiply-add per edge: the same eleven NumPy calls per
    four ops as wengert's rules, and no checks, hooks or freeing.
    """

    def __init__(self) -> None:
        self.entries: list[tuple[tuple[int, Any], ...]] = []

    def var(self, value: np.ndarray, *partials: tuple[int, Any]) -> MinimalArray:
        self.entries.append(partials)
        return MinimalArray(self, value, len(self.entries) - 1)

    def gradient(self, y: MinimalArray, x: MinimalArray) -> np.ndarray:
        g: list[Any] = [None] * len(self.entries)
        g[y.i] = np.ones_like(y.v)
        for k in range(y.i, -1, -1):
            gk = g[k]
            if gk is None:
                continue
            for i, d in self.entries[k]:
                c = gk if d is None else gk * d
                g[i] = c if g[i] is None else g[i] + c
        return g[x.i]


class MinimalArray:
    __slots__ = ("tape", "v", "i")

    def __init__(self, tape: MinimalArrayTape, v: np.ndarray, i: int) -> None:
        self.tape, self.v, self.i = tape, v, i

    def __mul__(self, c: float) -> MinimalArray:
        return self.tape.var(self.v * c, (self.i, c))

    def __add__(self, o: MinimalArray) -> MinimalArray:
        return self.tape.var(self.v + o.v, (self.i, None), (o.i, None))

    def sum(self) -> MinimalArray:
        return self.tape.var(self.v.sum(), (self.i, np.ones_like(self.v)))


def minimal_array_sin(x: MinimalArray) -> MinimalArray:
    return x.tape.var(np.sin(x.v), (x.i, np.cos(x.v)))


def minimal_array_cos(x: MinimalArray) -> MinimalArray:
    return x.tape.var(np.cos(x.v), (x.i, -np.sin(x.v)))



def w3_worker(impl: str, n: int, mode: str) -> dict:
    """One W3 measurement in this (fresh) process; returns a JSON-able dict.

    ``mode="time"``: forward and backward wall time and the RSS growth while
    the graph is alive.  ``mode="mem"``: Python-heap bytes held by the graph,
    by tracemalloc (slow, so timed separately).
    """
    x0 = w3_x0()
    if impl == "wengert":
        import wengert as wg
        import wengert.numpy as wnp

        def build(m: int) -> tuple[Any, Any]:
            x = wg.tensor(x0, requires_grad=True)
            return x, w3_chain(x, m, wnp.sin, wnp.cos).sum()

        def backward(x: Any, y: Any) -> np.ndarray:
            y.backward()
            return np.asarray(x.grad)

    elif impl == "torch":
        import torch

        def build(m: int) -> tuple[Any, Any]:
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            return x, w3_chain(x, m, torch.sin, torch.cos).sum()

        def backward(x: Any, y: Any) -> np.ndarray:
            y.backward()
            return x.grad.numpy()

    elif impl == "autograd":
        # autograd has no "build now, differentiate later": time the whole
        # make_vjp (forward + graph) and the vjp call (backward) separately.
        import autograd.numpy as anp
        from autograd.core import make_vjp

        def build(m: int) -> tuple[Any, Any]:
            f = lambda x: anp.sum(w3_chain(x, m, anp.sin, anp.cos))
            vjp, value = make_vjp(f, x0.copy())
            return vjp, value

        def backward(vjp: Any, value: Any) -> np.ndarray:
            return np.asarray(vjp(1.0))

    elif impl == "minimal":
        def build(m: int) -> tuple[Any, Any]:
            tape = MinimalArrayTape()
            x = tape.var(x0.copy())
            return (tape, x), w3_chain(x, m, minimal_array_sin, minimal_array_cos).sum()

        def backward(tx: Any, y: Any) -> np.ndarray:
            tape, x = tx
            return tape.gradient(y, x)

    else:
        raise ValueError(f"unknown W3 implementation {impl!r}")

    x, y = build(1000)  # warm-up: imports, caches, first-call paths
    backward(x, y)
    del x, y
    gc.collect()
    result: dict[str, Any] = {"impl": impl, "ops": n, "mode": mode}
    if mode == "time":
        gc_clock = GCClock()
        rss0 = rss_bytes()
        c0 = process_time()
        t0 = perf_counter()
        with gc_clock:
            x, y = build(n)
        t1 = perf_counter()
        c1 = process_time()
        gc_forward = gc_clock.seconds
        rss1 = rss_bytes()
        c2 = process_time()
        t2 = perf_counter()
        with gc_clock:
            g = backward(x, y)
        t3 = perf_counter()
        c3 = process_time()
        result.update(forward_s=t1 - t0, backward_s=t3 - t2, total_s=(t1 - t0) + (t3 - t2),
                      cpu_s=(c1 - c0) + (c3 - c2),
                      us_per_op=((t1 - t0) + (t3 - t2)) / n * 1e6,
                      gc_s=gc_clock.seconds, gc_forward_s=gc_forward,
                      rss_bytes_per_op=(rss1 - rss0) / n,
                      grad=[float(v) for v in g])
    elif mode == "mem":
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        x, y = build(n)
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        result.update(tracemalloc_bytes_per_op=held / n)
    else:
        raise ValueError(f"unknown W3 mode {mode!r}")
    return result

def run_w3_subprocess(impl: str, n: int, mode: str, installed: bool) -> dict:
    """One W3 measurement in a fresh ``python -m benchmarks.run --w3-worker`` process (the
    same wengert, threads and interpreter as this one)."""
    cmd = [sys.executable, "-m", "benchmarks.run", "--w3-worker", impl,
           "--w3-ops", str(n), "--w3-mode", mode]
    if installed:
        cmd.append("--installed")
    cmd += ["--threads", os.environ["OMP_NUM_THREADS"]]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=child_env())
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"worker exited with {proc.returncode}: {' | '.join(tail)}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_w3(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    n = cfg["w3_ops"]
    say(f"\n== W3: chain of {n:,} elementwise ops (sin, cos, *c, +x) on a length-{W3_LEN} "
        "float64 vector, forward + backward, one fresh subprocess per measurement, "
        "round-robin (each round runs every implementation once) ==")
    impls = [i for i in ("wengert", "torch", "autograd", "minimal")
             if i in ("wengert", "minimal") or peers.get(i) is not None]
    rounds = cfg["w3_repeats"]
    runs: dict[str, list[dict]] = {impl: [] for impl in impls}
    errors: dict[str, dict] = {}
    for rnd in range(rounds):
        for impl in impls:
            if impl in errors or (impl == "autograd" and rnd >= cfg["w3_repeats_autograd"]):
                continue
            r = run_safely(f"W3 {impl}", lambda impl=impl: run_w3_subprocess(
                impl, n, "time", cfg["installed"]), say)
            if "error" in r:
                errors[impl] = r
                continue
            say(f"  round {rnd + 1}/{rounds} {impl:<9}: forward {r['forward_s']:.2f} s, "
                f"backward {r['backward_s']:.2f} s, {r['us_per_op']:.2f} µs/op "
                f"({r['cpu_s'] / n * 1e6:.2f} cpu; {r['gc_s'] / n * 1e6:.2f} in GC "
                f"collections), RSS {r['rss_bytes_per_op']:,.0f} B/op")
            runs[impl].append(r)
    rows: dict[str, Any] = dict(errors)
    grads: dict[str, list[float]] = {}
    for impl in impls:
        if impl in errors:
            continue
        rs = runs[impl]
        s = summary([r["total_s"] for r in rs])
        s["us_per_op_median"] = s["median_s"] / n * 1e6
        s["us_per_op_min"] = s["min_s"] / n * 1e6
        s["us_per_op_cpu_min"] = min(r["cpu_s"] for r in rs) / n * 1e6
        s["forward_s_min"] = min(r["forward_s"] for r in rs)
        s["backward_s_min"] = min(r["backward_s"] for r in rs)
        s["gc_us_per_op_min"] = min(r["gc_s"] for r in rs) / n * 1e6
        s["rss_bytes_per_op"] = statistics.median(r["rss_bytes_per_op"] for r in rs)
        rows[impl] = s
        grads[impl] = rs[0]["grad"]
    if "wengert" in rows and "error" not in rows["wengert"]:
        m = run_safely("W3 wengert tracemalloc",
                       lambda: run_w3_subprocess("wengert", n, "mem", cfg["installed"]), say)
        if "error" not in m:
            rows["wengert"]["tracemalloc_bytes_per_op"] = m["tracemalloc_bytes_per_op"]
            say(f"  wengert   tracemalloc: {m['tracemalloc_bytes_per_op']:,.0f} B/op "
                "held by the graph (separate pass)")
        if runs.get("minimal"):
            pairs = zip(runs["wengert"], runs["minimal"])
            ratios = [w["total_s"] / m_["total_s"] for w, m_ in pairs]
            rows["wengert"]["round_ratios_vs_minimal"] = ratios
            say("  wengert / minimal tape, per round: "
                + ", ".join(f"{x:.2f}×" for x in ratios))
    if grads:
        ref_name = "torch" if "torch" in grads else next(iter(grads))
        ref = np.asarray(grads[ref_name])
        for impl, g in grads.items():
            d = float(np.max(np.abs(np.asarray(g) - ref) / np.maximum(np.abs(ref), 1e-300)))
            rows[impl]["grad_max_rel_diff_vs_" + ref_name] = d
            say(f"  {impl:<9} gradient max rel diff vs {ref_name}: {d:.1e}")
    return {"ops": n, "length": W3_LEN, "rows": rows}


# --------------------------------------------------------------------------- report
def final_tables(results: dict[str, Any]) -> str:
    parts = []
    if "W1" in results:
        w1 = results["W1"]
        rows = []
        for name, r in w1["rows"].items():
            if "error" in r:
                rows.append([name, "error", "", "", ""])
                continue
            gd = r["grad_rel_diff"]
            rows.append([name, f"{r['us_per_op_median']:.2f}", f"{r['us_per_op_min']:.2f}",
                         f"{r['us_per_op_cpu_min']:.2f}", "n/a" if gd is None else f"{gd:.1e}"])
        parts.append(f"W1  scalar chain, {w1['ops']:,} ops, {w1['repeats']} repeats "
                     f"(target wengert ≤ {TARGETS['W1']} µs/op)\n"
                     + table(["implementation", "µs/op med", "µs/op min", "cpu µs/op min",
                             "grad rel diff"], rows))
    if "W2" in results:
        for dname, w2 in results["W2"].items():
            rows = []
            for name, r in w2["rows"].items():
                if "error" in r:
                    rows.append([name, "error", "", "", "", "", "", ""])
                    continue
                gd = r.get("grad_max_abs_diff")
                rows.append([name, fmt_ms(r["median_s"]), fmt_ms(r["min_s"]),
                             fmt_ms(r["cpu_min_s"]),
                             f"{r.get('ratio_min', float('nan')):.2f}",
                             f"{r.get('ratio_paired', float('nan')):.2f}",
                             f"{r.get('ratio_cpu_min', float('nan')):.2f}",
                             "" if gd is None else f"{gd:.1e}"])
            parts.append(
                f"W2  MLP {'-'.join(map(str, w2['sizes']))}, batch {w2['batch']}, {dname}, "
                f"{w2['repeats']} repeats (target wengert ≤ {TARGETS['W2']}× numpy forward)\n"
                + table(["implementation", "ms med", "ms min", "cpu ms min", "× fwd min",
                         "× fwd paired", "× fwd cpu", "grad abs diff"], rows))
    if "W3" in results:
        w3 = results["W3"]
        rows = []
        for name, r in w3["rows"].items():
            name = W3_LABELS.get(name, name)
            if "error" in r:
                rows.append([name, "error", "", "", "", "", "", "", ""])
                continue
            tm = r.get("tracemalloc_bytes_per_op")
            gc_us = r.get("gc_us_per_op_min")
            rows.append([name, f"{r['us_per_op_median']:.2f}", f"{r['us_per_op_min']:.2f}",
                         f"{r['us_per_op_cpu_min']:.2f}",
                         "" if gc_us is None else f"{gc_us:.2f}",
                         f"{r['forward_s_min']:.2f}", f"{r['backward_s_min']:.2f}",
                         f"{r['rss_bytes_per_op']:,.0f}", "" if tm is None else f"{tm:,.0f}"])
        parts.append(f"W3  vector chain, {w3['ops']:,} ops, length {w3['length']} "
                     f"(target wengert ≤ {TARGETS['W3']} µs/op)\n"
                     + table(["implementation", "µs/op med", "µs/op min", "cpu µs/op",
                              "GC µs/op min", "fwd s min", "bwd s min", "RSS B/op",
                              "tracemalloc B/op"], rows))
    return "\n\n".join(parts)


def verdicts(results: dict[str, Any]) -> list[str]:
    out = []
    w1 = results.get("W1", {}).get("rows", {})
    floor = w1.get("minimal Python tape (25 lines, floor)", {}).get("us_per_op_min")
    for name in ("wengert (wnp.sin ...)", "wengert (np.sin dispatch)"):
        r = w1.get(name)
        if r and "error" not in r:
            ok = r["us_per_op_min"] <= TARGETS["W1"]
            out.append(f"W1 {name}: {r['us_per_op_min']:.2f} µs/op (min) "
                       f"{'meets' if ok else 'MISSES'} ≤ {TARGETS['W1']}")
            line = scaled_verdict(f"W1 {name}", r["us_per_op_min"], "the minimal tape", floor,
                                  TARGETS["W1"], STATED_FLOORS["W1"])
            if line:
                out.append(line)
    w2 = results.get("W2", {}).get("float64", {}).get("rows", {})
    r = w2.get("wengert (tensor.backward)")
    if r and "ratio_min" in r:
        ok = r["ratio_min"] <= TARGETS["W2"]
        out.append(f"W2 wengert float64: {r['ratio_min']:.2f}× numpy forward (min/min; "
                   f"{r['ratio_paired']:.2f}× median of paired rounds; "
                   f"{r['ratio_cpu_min']:.2f}× in CPU time) "
                   f"{'meets' if ok else 'MISSES'} ≤ {TARGETS['W2']}×")
        hand = w2.get("numpy forward + hand backward", {}).get("ratio_min")
        line = scaled_verdict("W2 wengert float64", r["ratio_min"],
                              "the hand-written NumPy gradients", hand, TARGETS["W2"], 2.15)
        if line:
            out.append(line)
    r = results.get("W3", {}).get("rows", {}).get("wengert")
    if r is not None:
        if "error" in r:
            out.append("W3 wengert: did NOT complete")
        else:
            ok = r["us_per_op_min"] <= TARGETS["W3"]
            out.append(f"W3 wengert: completes, {r['us_per_op_min']:.2f} µs/op (min) "
                       f"{'meets' if ok else 'MISSES'} ≤ {TARGETS['W3']}")
    return out



# --------------------------------------------------------------------------- main
def config(quick: bool) -> dict[str, Any]:
    if quick:
        return {"w1_ops": 1_000, "w1_repeats": 2,
                "w2_sizes": (784, 128, 128, 10), "w2_batch": 64, "w2_repeats": 3,
                "w2_dtypes": (np.float64, np.float32),
                "w3_ops": 10_000, "w3_repeats": 1, "w3_repeats_autograd": 1}
    return {"w1_ops": 10_000, "w1_repeats": 5,
            "w2_sizes": (784, 512, 512, 10), "w2_batch": 256, "w2_repeats": 10,
            "w2_dtypes": (np.float64, np.float32),
            "w3_ops": 100_000, "w3_repeats": 3, "w3_repeats_autograd": 1}



#: W1, W2, W3 for :func:`benchmarks.harness.run_suites`.
REVERSE = Suite(benches={"W1": bench_w1, "W2": bench_w2, "W3": bench_w3}, config=config,
                tables=final_tables, verdicts=verdicts)


def _worker_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--w3-worker", help=argparse.SUPPRESS)
    ap.add_argument("--w3-ops", type=int,
                    help="W3's chain length (default 100,000, where its target is stated; "
                         "10,000 with --quick)")
    ap.add_argument("--w3-mode", default="time", help=argparse.SUPPRESS)


def _worker(args: argparse.Namespace) -> int | None:
    if not args.w3_worker:
        return None
    print(json.dumps(w3_worker(args.w3_worker, args.w3_ops, args.w3_mode)))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_suites([REVERSE, forward.FORWARD], argv, __doc__.split("\n\n")[0],
                      _worker_arguments, _worker)


if __name__ == "__main__":
    sys.exit(main())
