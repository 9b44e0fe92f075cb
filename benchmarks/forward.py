"""Forward-mode speed benchmarks: wengert vs HIPS autograd vs PyTorch vs JAX (CPU).

Usage, from the repository root::

    PYTHONPATH=src python -m benchmarks.forward                 # W1d, W4, W5, W6 (~2 minutes)
    PYTHONPATH=src python -m benchmarks.forward --quick         # small sizes, a smoke test
    PYTHONPATH=src python -m benchmarks.forward --only W4,W6    # a subset
    PYTHONPATH=src python -m benchmarks.forward --profile       # also cProfile wengert's rows

The same harness as ``python -m benchmarks.run`` (which runs these too, after W1-W3):
round-robin timing, peers skipped when missing, results written to
``benchmarks/results.json`` (``--json`` moves them).

Workloads (see benchmarks/README.md):

W1d the W1 scalar chain (10,000 ops: sin, cos, tanh, *0.9, +x, **1.5) with
    dual numbers: value and derivative in one forward pass, µs per op.
    Target for wengert: ≤ 0.6 µs/op.
W4  Hessian-vector product of the Rosenbrock function, n = 1,000.
    Target for wengert: ≤ 200 µs.
W5  JVP of ``tanh(A @ x) * sin(x)``, n = 2,000, as a multiple of the NumPy
    forward.  Target for wengert: ≤ 2.3×.
W6  the 100×100 Jacobian of the same function by forward mode.
    Target for wengert: ≤ 200 µs.
"""

from __future__ import annotations

import cProfile
import io
import math
import pstats
import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from benchmarks.harness import (
    Suite,
    add_ratios,
    max_rel_diff,
    rel_diff,
    run_suites,
    say_rows,
    scaled_verdict,
    table,
    time_and_check,
    to_numpy,
)
from benchmarks.workloads import (
    W1_X0,
    rosen,
    rosen_hvp,
    w1_chain,
    w1_reference,
    w4_data,
    w56_data,
    w56_fun,
    w56_jacobian,
    w56_jvp,
)

TARGETS = {"W1d": 0.5, "W4": 200.0, "W5": 2.3, "W6": 200.0}


# --------------------------------------------------------------------------- W1d
class NaiveDual:
    """The plain-Python dual number a user would write in 20 lines: the floor."""

    __slots__ = ("v", "d")

    def __init__(self, v: float, d: float) -> None:
        self.v = v
        self.d = d

    def __add__(self, o: Any) -> NaiveDual:
        if type(o) is NaiveDual:
            return NaiveDual(self.v + o.v, self.d + o.d)
        return NaiveDual(self.v + o, self.d)

    def __mul__(self, o: Any) -> NaiveDual:
        if type(o) is NaiveDual:
            return NaiveDual(self.v * o.v, self.d * o.v + self.v * o.d)
        return NaiveDual(self.v * o, self.d * o)

    def __pow__(self, p: float) -> NaiveDual:
        return NaiveDual(self.v**p, p * self.v ** (p - 1.0) * self.d)

    __radd__, __rmul__ = __add__, __mul__


def naive_sin(x: NaiveDual) -> NaiveDual:
    return NaiveDual(math.sin(x.v), math.cos(x.v) * x.d)


def naive_cos(x: NaiveDual) -> NaiveDual:
    return NaiveDual(math.cos(x.v), -math.sin(x.v) * x.d)


def naive_tanh(x: NaiveDual) -> NaiveDual:
    t = math.tanh(x.v)
    return NaiveDual(t, (1.0 - t * t) * x.d)


def w1d_impls(n: int, peers: dict[str, Any]) -> dict[str, Callable[[], tuple[float, float]]]:
    import wengert as wg
    import wengert.numpy as wnp

    impls: dict[str, Callable[[], tuple[float, float]]] = {}

    def wengert_dual(sin: Any, cos: Any, tanh: Any) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            y = w1_chain(wg.Dual(W1_X0, 1.0), n, sin, cos, tanh)
            return y.primal, y.tangent

        return run

    impls["wengert (wg.Dual, wnp.sin ...)"] = wengert_dual(wnp.sin, wnp.cos, wnp.tanh)
    impls["wengert (wg.Dual, np.sin dispatch)"] = wengert_dual(np.sin, np.cos, np.tanh)

    def wengert_jvp() -> tuple[float, float]:
        f = lambda x: w1_chain(x, n, wnp.sin, wnp.cos, wnp.tanh)
        y, dy = wg.jvp(f, (W1_X0,), (1.0,))
        return y, dy

    impls["wengert (wg.jvp)"] = wengert_jvp

    def wengert_derivative() -> tuple[float, float]:
        dy = wg.derivative(lambda x: w1_chain(x, n, wnp.sin, wnp.cos, wnp.tanh))(W1_X0)
        return float("nan"), dy

    impls["wengert (wg.derivative)"] = wengert_derivative

    ag = peers.get("autograd")
    if ag is not None:
        import autograd.numpy as anp

        def autograd_run() -> tuple[float, float]:
            f = lambda x: w1_chain(x, n, anp.sin, anp.cos, anp.tanh)
            y, dy = ag.make_jvp(f)(W1_X0)(1.0)
            return float(y), float(dy)

        impls["autograd (make_jvp, forward mode)"] = autograd_run

    torch = peers.get("torch")
    if torch is not None:
        import torch.autograd.forward_ad as fwAD

        def torch_func() -> tuple[float, float]:
            f = lambda x: w1_chain(x, n, torch.sin, torch.cos, torch.tanh)
            x = torch.tensor(W1_X0, dtype=torch.float64)
            y, dy = torch.func.jvp(f, (x,), (torch.ones((), dtype=torch.float64),))
            return float(y.item()), float(dy.item())

        def torch_fwad() -> tuple[float, float]:
            x = torch.tensor(W1_X0, dtype=torch.float64)
            with fwAD.dual_level():
                d = fwAD.make_dual(x, torch.ones((), dtype=torch.float64))
                y = fwAD.unpack_dual(w1_chain(d, n, torch.sin, torch.cos, torch.tanh))
                return float(y.primal.item()), float(y.tangent.item())

        impls["torch (torch.func.jvp)"] = torch_func
        impls["torch (forward_ad dual tensor)"] = torch_fwad

    jax = peers.get("jax")
    if jax is not None:
        import jax.numpy as jnp

        def jax_run() -> tuple[float, float]:
            f = lambda x: w1_chain(x, n, jnp.sin, jnp.cos, jnp.tanh)
            y, dy = jax.jvp(f, (jnp.float64(W1_X0),), (jnp.float64(1.0),))
            return float(y), float(dy)

        impls["jax (jax.jvp, eager)"] = jax_run

    def naive() -> tuple[float, float]:
        y = w1_chain(NaiveDual(W1_X0, 1.0), n, naive_sin, naive_cos, naive_tanh)
        return y.v, y.d

    impls["naive Python dual class (20 lines)"] = naive

    def plain_floats() -> tuple[float, float]:
        return w1_chain(W1_X0, n, math.sin, math.cos, math.tanh), float("nan")

    impls["math floats (forward only, no AD)"] = plain_floats
    return impls


def bench_w1d(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    n, repeats = cfg["w1_ops"], cfg["w1_repeats"]
    ref_value, ref_deriv = w1_reference(n)
    say(f"\n== W1d: scalar chain of {n:,} ops (sin, cos, tanh, *c, +x, **c) with dual numbers "
        f"(value + derivative in one pass), {repeats} repeats ==")
    impls = w1d_impls(n, peers)

    def check(name: str, result: tuple[float, float]) -> float:
        value, deriv = result
        diffs = []
        if not math.isnan(value):
            diffs.append(rel_diff(value, ref_value))
        if not math.isnan(deriv):
            diffs.append(rel_diff(deriv, ref_deriv))
        if not diffs:
            return float("nan")
        return max(diffs)

    rows = time_and_check(impls, check, repeats, 1, 1, "W1d", say)
    for name, r in rows.items():
        if "error" in r:
            say(f"  {name:<48} error: {r['error']}")
            continue
        for key in ("median", "min", "cpu_min"):
            r[f"us_per_op_{key}"] = r[f"{key}_s"] / n * 1e6
        d = r["max_rel_diff"]
        say(f"  {name:<48} {r['us_per_op_min']:8.3f} µs/op (min) {r['us_per_op_median']:8.3f} "
            f"(median) {r['us_per_op_cpu_min']:8.3f} (cpu min); value/derivative rel diff vs "
            f"reference {'n/a' if math.isnan(d) else f'{d:.1e}'}")
    return {"ops": n, "repeats": repeats, "reference_value": ref_value,
            "reference_derivative": ref_deriv, "rows": rows}



# --------------------------------------------------------------------------- W4
def w4_impls(x: np.ndarray, v: np.ndarray, peers: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    import wengert as wg

    impls: dict[str, Callable[[], Any]] = {}
    impls["numpy analytic HVP (hand)"] = lambda: rosen_hvp(x, v)
    impls["wengert (wg.hvp, fwd-over-rev)"] = lambda: wg.hvp(rosen, x, v)

    ag = peers.get("autograd")
    if ag is not None:
        import autograd.numpy as anp

        f_ag = lambda z: rosen(z, anp)
        ag_hvp = ag.hessian_vector_product(f_ag)
        ag_grad = ag.grad(f_ag)
        impls["autograd (hessian_vector_product, rev-over-rev)"] = lambda: ag_hvp(x, v)
        impls["autograd (make_jvp(grad), fwd-over-rev)"] = lambda: ag.make_jvp(ag_grad)(x)(v)[1]

    torch = peers.get("torch")
    if torch is not None:
        tx, tv = torch.from_numpy(x.copy()), torch.from_numpy(v.copy())
        f_t = lambda z: rosen(z, torch)

        def torch_double_backward() -> Any:
            xr = tx.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(f_t(xr), xr, create_graph=True)
            (hv,) = torch.autograd.grad(g, xr, tv)
            return hv

        g_t = torch.func.grad(f_t)
        impls["torch (double backward)"] = torch_double_backward
        impls["torch (torch.func.jvp(grad), fwd-over-rev)"] = (
            lambda: torch.func.jvp(g_t, (tx,), (tv,))[1])

    jax = peers.get("jax")
    if jax is not None:
        import jax.numpy as jnp

        jx, jv = jnp.asarray(x), jnp.asarray(v)
        g_j = jax.grad(lambda z: rosen(z, jnp))
        hvp_j = lambda z, w: jax.jvp(g_j, (z,), (w,))[1]
        hvp_jit = jax.jit(hvp_j)
        impls["jax (jvp(grad), eager)"] = lambda: hvp_j(jx, jv).block_until_ready()
        impls["jax (jvp(grad), jit; not eager, reference)"] = (
            lambda: hvp_jit(jx, jv).block_until_ready())
    return impls


def bench_w4(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    n, repeats, inner = cfg["w4_n"], cfg["fwd_repeats"], cfg["w4_inner"]
    x, v = w4_data(n)
    ref = rosen_hvp(x, v)
    say(f"\n== W4: Hessian-vector product of the Rosenbrock function, n = {n:,}, "
        f"{repeats} repeats x {inner} calls ==")
    rows = time_and_check(w4_impls(x, v, peers), lambda name, r: max_rel_diff(to_numpy(r), ref),
                          repeats, inner, 2, "W4", say)
    say_rows(rows, say)
    return {"n": n, "repeats": repeats, "inner": inner, "rows": rows}



# --------------------------------------------------------------------------- W5 / W6
def w5_impls(A: np.ndarray, x: np.ndarray, v: np.ndarray,
             peers: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    import wengert as wg

    f = w56_fun(A)
    impls: dict[str, Callable[[], Any]] = {}
    impls["numpy forward (baseline)"] = lambda: f(x)
    impls["numpy analytic JVP (hand, 2 matvecs)"] = lambda: w56_jvp(A, x, v)
    impls["wengert (wg.jvp)"] = lambda: wg.jvp(f, (x,), (v,))[1]

    ag = peers.get("autograd")
    if ag is not None:
        import autograd.numpy as anp

        f_ag = lambda z: anp.tanh(anp.dot(A, z)) * anp.sin(z)
        impls["autograd (make_jvp, forward mode)"] = lambda: ag.make_jvp(f_ag)(x)(v)[1]

    torch = peers.get("torch")
    if torch is not None:
        tA, tx, tv = (torch.from_numpy(a.copy()) for a in (A, x, v))
        f_t = w56_fun(tA, torch)
        impls["torch (torch.func.jvp)"] = lambda: torch.func.jvp(f_t, (tx,), (tv,))[1]

    jax = peers.get("jax")
    if jax is not None:
        import jax.numpy as jnp

        jA, jx, jv = (jnp.asarray(a) for a in (A, x, v))
        f_j = w56_fun(jA, jnp)
        jvp_jit = jax.jit(lambda z, w: jax.jvp(f_j, (z,), (w,))[1])
        impls["jax (jax.jvp, eager)"] = lambda: jax.jvp(f_j, (jx,), (jv,))[1].block_until_ready()
        impls["jax (jax.jvp, jit; not eager, reference)"] = (
            lambda: jvp_jit(jx, jv).block_until_ready())
    return impls


def bench_w5(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    n, repeats, inner = cfg["w5_n"], cfg["fwd_repeats"], cfg["w5_inner"]
    A, x, v = w56_data(n, 5)
    ref = w56_jvp(A, x, v)
    say(f"\n== W5: JVP of tanh(A @ x) * sin(x), n = {n:,}, {repeats} repeats x {inner} calls ==")

    impls = w5_impls(A, x, v, peers)
    f = w56_fun(A)
    ref_f = f(x)
    base = "numpy forward (baseline)"

    def check(name: str, r: Any) -> float:
        # The baseline computes the forward value, every other row the JVP.
        return max_rel_diff(to_numpy(r), ref_f if name == base else ref)

    rows = time_and_check(impls, check, repeats, inner, 2, "W5", say)
    add_ratios(rows, base)
    say_rows(rows, say, unit="ms")
    return {"n": n, "repeats": repeats, "inner": inner, "rows": rows}


def w6_impls(A: np.ndarray, x: np.ndarray, peers: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    import wengert as wg

    f = w56_fun(A)
    impls: dict[str, Callable[[], Any]] = {}
    impls["numpy analytic Jacobian (hand)"] = lambda: w56_jacobian(A, x)
    impls["wengert (wg.jacfwd)"] = lambda: wg.jacfwd(f)(x)
    impls["wengert (wg.jacrev; reference)"] = lambda: wg.jacrev(f)(x)

    ag = peers.get("autograd")
    if ag is not None:
        import autograd.numpy as anp

        f_ag = lambda z: anp.tanh(anp.dot(A, z)) * anp.sin(z)
        jac_ag = ag.jacobian(f_ag)
        impls["autograd (jacobian, reverse mode)"] = lambda: jac_ag(x)

    torch = peers.get("torch")
    if torch is not None:
        tA, tx = torch.from_numpy(A.copy()), torch.from_numpy(x.copy())
        jac_t = torch.func.jacfwd(w56_fun(tA, torch))
        impls["torch (torch.func.jacfwd)"] = lambda: jac_t(tx)

    jax = peers.get("jax")
    if jax is not None:
        import jax.numpy as jnp

        jA, jx = jnp.asarray(A), jnp.asarray(x)
        jac_j = jax.jacfwd(w56_fun(jA, jnp))
        jac_jit = jax.jit(jac_j)
        impls["jax (jax.jacfwd, eager)"] = lambda: jac_j(jx).block_until_ready()
        impls["jax (jax.jacfwd, jit; not eager, reference)"] = (
            lambda: jac_jit(jx).block_until_ready())
    return impls


def bench_w6(cfg: dict[str, Any], peers: dict[str, Any], say: Callable[[str], None]) -> dict:
    n, repeats, inner = cfg["w6_n"], cfg["fwd_repeats"], cfg["w6_inner"]
    A, x, _ = w56_data(n, 6)
    ref = w56_jacobian(A, x)
    say(f"\n== W6: {n}x{n} Jacobian of tanh(A @ x) * sin(x) by forward mode, "
        f"{repeats} repeats x {inner} calls ==")
    rows = time_and_check(w6_impls(A, x, peers), lambda name, r: max_rel_diff(to_numpy(r), ref),
                          repeats, inner, 2, "W6", say)
    say_rows(rows, say)
    return {"n": n, "repeats": repeats, "inner": inner, "rows": rows}


def config(quick: bool) -> dict[str, Any]:
    if quick:
        return {"w1_ops": 1_000, "w1_repeats": 2,  # W1d: W1's chain and repeats
                "fwd_repeats": 3, "w4_n": 1_000, "w4_inner": 5, "w5_n": 500, "w5_inner": 2,
                "w6_n": 100, "w6_inner": 2}
    return {"w1_ops": 10_000, "w1_repeats": 5,
            "fwd_repeats": 15, "w4_n": 1_000, "w4_inner": 20, "w5_n": 2_000, "w5_inner": 5,
            "w6_n": 100, "w6_inner": 20}


# --------------------------------------------------------------------------- profile
def profile_wengert(results: dict[str, Any], cfg: dict[str, Any], peers: dict[str, Any],
                    say: Callable[[str], None], top: int = 15) -> dict[str, str]:
    """cProfile each wengert row of the forward workloads that ran; top functions by own time."""
    import wengert as wg  # noqa: F401

    plans: dict[str, tuple[Callable[[], Any], int]] = {}
    if "W1d" in results:
        n = cfg["w1_ops"]
        for name, fn in w1d_impls(n, {}).items():
            if name.startswith("wengert"):
                plans[f"W1d {name}"] = (fn, 3)
    if "W4" in results:
        x, v = w4_data(cfg["w4_n"])
        plans["W4 wengert (wg.hvp)"] = (w4_impls(x, v, {})["wengert (wg.hvp, fwd-over-rev)"], 200)
    if "W5" in results:
        A, x, v = w56_data(cfg["w5_n"], 5)
        plans["W5 wengert (wg.jvp)"] = (w5_impls(A, x, v, {})["wengert (wg.jvp)"], 20)
    if "W6" in results:
        A, x, _ = w56_data(cfg["w6_n"], 6)
        plans["W6 wengert (wg.jacfwd)"] = (w6_impls(A, x, {})["wengert (wg.jacfwd)"], 300)
    out = {}
    for label, (fn, calls) in plans.items():
        fn()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            fn()
        prof.disable()
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf).strip_dirs()
        stats.sort_stats("tottime").print_stats(top)
        text = buf.getvalue()
        out[label] = text
        say(f"\n== profile: {label}, {calls} calls, top {top} by own time ==\n"
            + text[text.find("   ncalls"):].rstrip())
    return out


# --------------------------------------------------------------------------- report
def final_tables(results: dict[str, Any]) -> str:
    parts = []
    w1d = results.get("W1d")
    if w1d:
        rows = []
        for name, r in w1d["rows"].items():
            if "error" in r:
                rows.append([name, "error", "", "", ""])
                continue
            d = r["max_rel_diff"]
            rows.append([name, f"{r['us_per_op_min']:.3f}", f"{r['us_per_op_median']:.3f}",
                         f"{r['us_per_op_cpu_min']:.3f}", "n/a" if math.isnan(d) else f"{d:.1e}"])
        parts.append(f"W1d  scalar chain with duals, {w1d['ops']:,} ops, {w1d['repeats']} repeats "
                     f"(target wengert ≤ {TARGETS['W1d']} µs/op)\n"
                     + table(["implementation", "µs/op min", "µs/op med", "cpu µs/op min",
                              "rel diff"], rows))
    for key, title, unit, ratio in (
            ("W4", "Rosenbrock HVP, n = {n:,}", "us", False),
            ("W5", "JVP of tanh(A @ x) * sin(x), n = {n:,}", "ms", True),
            ("W6", "{n}x{n} Jacobian of tanh(A @ x) * sin(x)", "us", False)):
        w = results.get(key)
        if not w:
            continue
        scale, u = (1e6, "µs") if unit == "us" else (1e3, "ms")
        rows = []
        for name, r in w["rows"].items():
            if "error" in r:
                rows.append([name, "error", "", ""] + (["", "", ""] if ratio else []) + [""])
                continue
            d = r["max_rel_diff"]
            fmt = "{:,.1f}" if unit == "us" else "{:,.2f}"
            row = [name, fmt.format(r["min_s"] * scale), fmt.format(r["median_s"] * scale),
                   fmt.format(r["cpu_min_s"] * scale)]
            if ratio:
                row += [f"{r.get('ratio_min', float('nan')):.2f}",
                        f"{r.get('ratio_paired', float('nan')):.2f}",
                        f"{r.get('ratio_cpu_min', float('nan')):.2f}"]
            rows.append(row + ["n/a" if math.isnan(d) else f"{d:.1e}"])
        target = (f"≤ {TARGETS[key]}× numpy forward" if ratio else f"≤ {TARGETS[key]:.0f} µs")
        headers = ["implementation", f"{u} min", f"{u} med", f"cpu {u} min"]
        if ratio:
            headers += ["× fwd min", "× fwd paired", "× fwd cpu"]
        parts.append(f"{key}  {title.format(n=w['n'])}, {w['repeats']} repeats x {w['inner']} "
                     f"calls (target wengert {target})\n"
                     + table(headers + ["max rel diff"], rows))
    return "\n\n".join(parts)


def verdicts(results: dict[str, Any]) -> list[str]:
    out = []

    def verdict(label: str, value: float, target: float, unit: str) -> str:
        return (f"{label}: {value:.2f}{unit} (min) {'meets' if value <= target else 'MISSES'} "
                f"≤ {target}{unit}")

    def ref(key: str, name: str, field: str = "min_s") -> float | None:
        r = results.get(key, {}).get("rows", {}).get(name)
        return None if not r or "error" in r else r[field]

    def scaled(*args: Any, paired: tuple[str, str, str] | None = None) -> None:
        line = scaled_verdict(*args)
        if line and paired:
            # The rows are timed round-robin, so round i of each is one pair: the
            # median of the per-round ratios is steadier than a ratio of minima.
            key, name, ref_name = paired
            rows = results.get(key, {}).get("rows", {})
            mine, theirs = rows.get(name, {}).get("wall_s"), rows.get(ref_name, {}).get("wall_s")
            if mine and theirs and len(mine) == len(theirs):
                ratio = statistics.median(a / b for a, b in zip(mine, theirs))
                line += f" (median of the per-round ratios: {ratio:.2f}×)"
        if line:
            out.append(line)

    naive = ref("W1d", "naive Python dual class (20 lines)", "us_per_op_min")
    for name, r in results.get("W1d", {}).get("rows", {}).items():
        if name.startswith("wengert") and "error" not in r:
            out.append(verdict(f"W1d {name}", r["us_per_op_min"], TARGETS["W1d"], " µs/op"))
            scaled(f"W1d {name}", r["us_per_op_min"], "the naive dual class", naive,
                   TARGETS["W1d"], 0.35)
    r = results.get("W4", {}).get("rows", {}).get("wengert (wg.hvp, fwd-over-rev)")
    if r and "error" not in r:
        out.append(verdict("W4 wengert wg.hvp", r["min_s"] * 1e6, TARGETS["W4"], " µs"))
        scaled("W4 wengert wg.hvp", r["min_s"], "torch's double backward",
               ref("W4", "torch (double backward)"), TARGETS["W4"], 300.0,
               paired=("W4", "wengert (wg.hvp, fwd-over-rev)", "torch (double backward)"))
    r = results.get("W5", {}).get("rows", {}).get("wengert (wg.jvp)")
    if r and "ratio_min" in r:
        out.append(verdict("W5 wengert wg.jvp", r["ratio_min"], TARGETS["W5"], "×")
                   + f" ({r['ratio_paired']:.2f}× paired, {r['ratio_cpu_min']:.2f}× cpu)")
    r = results.get("W6", {}).get("rows", {}).get("wengert (wg.jacfwd)")
    if r and "error" not in r:
        out.append(verdict("W6 wengert wg.jacfwd", r["min_s"] * 1e6, TARGETS["W6"], " µs"))
        scaled("W6 wengert wg.jacfwd", r["min_s"], "torch.func.jacfwd",
               ref("W6", "torch (torch.func.jacfwd)"), TARGETS["W6"], 450.0,
               paired=("W6", "wengert (wg.jacfwd)", "torch (torch.func.jacfwd)"))
    return out


#: W1d, W4, W5, W6 for :func:`benchmarks.harness.run_suites` (JAX is the fourth peer).
FORWARD = Suite(benches={"W1d": bench_w1d, "W4": bench_w4, "W5": bench_w5, "W6": bench_w6},
                config=config, tables=final_tables, verdicts=verdicts,
                peers=("autograd", "torch", "jax"), profile=profile_wengert)


def main(argv: list[str] | None = None) -> int:
    return run_suites([FORWARD], argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
