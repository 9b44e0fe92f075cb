"""The benchmarks' harness: what every script in ``benchmarks/`` shares.

* which wengert is measured (:func:`wengert_under_test`: this checkout's ``src/``, or
  with ``--installed`` whatever ``wengert`` the interpreter imports) and the
  environment of worker subprocesses (:func:`child_env`);
* the peers (HIPS autograd, PyTorch, JAX), skipped with a message when missing
  (:func:`load_peers`);
* timing: round-robin rounds with warm-up (:func:`measure_interleaved`,
  :func:`time_and_check`), the best of ``timeit`` runs (:func:`best`), the collector's
  time (:class:`GCClock`), resident memory (:func:`rss_bytes`);
* checks that implementations agree (:func:`rel_diff`, :func:`max_rel_diff`);
* output: aligned tables (:func:`table`, :func:`print_sections`), verdicts against a
  target scaled to the run (:func:`scaled_verdict`), and the JSON results file with
  the environment (:func:`environment`, :func:`write_results`);
* the command line shared by the scripts (:func:`common_arguments`) and the driver of
  the workload suites of ``run.py`` and ``forward.py`` (:func:`run_suites`).

The thread count (``--threads``, default 1) is set in the environment by
``benchmarks/__init__.py``, before NumPy is imported.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = ROOT / "src"
perf_counter = time.perf_counter
process_time = time.process_time

INSTALL_HINT = {
    "autograd": "pip install autograd",
    "torch": "pip install torch==2.13.0  (exactly this version: a CPU wheel is on disk)",
}
JAX_HINT = "pip install jax jaxlib  (CPU; into the Python that runs this script)"


# --------------------------------------------------------------------------- what is measured
def wengert_under_test(installed: bool) -> Any:
    """Import ``wengert`` and make sure it is the one meant.

    Without ``installed`` it must be this checkout's ``src/wengert`` (run the scripts
    from the repository root with ``PYTHONPATH=src``); with ``installed``, any importable
    ``wengert`` is measured (another source tree through ``PYTHONPATH``, or an install).
    """
    import wengert

    path = Path(wengert.__file__).resolve().parent
    if not installed and path != (SRC / "wengert").resolve():
        raise SystemExit(
            f"this would measure the wengert at {path}, not this checkout's {SRC / 'wengert'}; "
            "run from the repository root with PYTHONPATH=src (python -m benchmarks.run), or "
            "pass --installed to measure the wengert that Python imports."
        )
    return wengert


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a worker subprocess (``python -m benchmarks.…`` run in the
    repository root): the same wengert as this process (its folder first on
    ``PYTHONPATH``), the same thread settings, plus ``extra``."""
    import wengert

    site = str(Path(wengert.__file__).resolve().parent.parent)
    env = dict(os.environ, **extra)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([site, *rest])
    return env


def command() -> str:
    """The command line of this run, as typed (``python -m benchmarks.run --quick``)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    head = ["-m", spec.name] if spec is not None else [sys.argv[0]]
    return " ".join([Path(sys.executable).name, *head, *sys.argv[1:]])


def common_arguments(parser: argparse.ArgumentParser, *, quick: bool = True,
                     json_default: str | None = None) -> argparse.ArgumentParser:
    """The options every script takes: ``--quick`` (if it has small sizes), ``--json``,
    ``--threads`` (read before NumPy loads, by ``benchmarks/__init__.py``) and
    ``--installed``."""
    if quick:
        parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--json", default=json_default,
                        help="write the results there" + (
                            f" (default {json_default})" if json_default else ""))
    parser.add_argument("--threads", default=None,
                        help="BLAS/OpenMP/torch threads (default 1, or $OMP_NUM_THREADS if set)")
    parser.add_argument("--installed", action="store_true",
                        help="measure the wengert Python imports (e.g. another tree on "
                             "PYTHONPATH), not this checkout's src/")
    return parser


# --------------------------------------------------------------------------- peers
def try_import(name: str) -> tuple[Any, str | None]:
    try:
        return importlib.import_module(name), None
    except Exception as e:  # noqa: BLE001 - any failure means "skip this peer"
        return None, f"{type(e).__name__}: {e}"


def load_peers(names: tuple[str, ...], say: Callable[[str], None]) -> dict[str, Any]:
    """Import the peers ``names`` (of ``autograd``, ``torch``, ``jax``); a peer that is not
    importable is ``None``, with a message that says how to install it."""
    peers: dict[str, Any] = {}
    for name in names:
        if name == "jax":
            peers[name] = load_jax(say)
            continue
        mod, err = try_import(name)
        if mod is None:
            say(f"[skip] {name} is not importable ({err}); install it with: {INSTALL_HINT[name]}")
        peers[name] = mod
        if name == "torch" and mod is not None:
            mod.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    return peers


def measure_interleaved(fns: dict[str, Callable[[], Any]], repeats: int, warmup: int,
                        say: Callable[[str], None], label: str,
                        collect: bool = True) -> dict[str, dict]:
    """Time every function in ``fns``, round-robin, ``repeats`` times each.

    Interleaving (A B C A B C ...) instead of (A A A B B B ...) spreads the
    load of a shared machine over all implementations, so ratios stay fair.
    Each call gets ``warmup`` untimed calls first.  The garbage collector stays
    enabled (it is part of the real cost); a collection runs before every
    timed call so each starts clean (unless ``collect`` is false).  Wall time
    (``perf_counter``) and CPU time of this process (``process_time``) are both kept: with one BLAS
    thread, CPU time is the less noisy of the two when other jobs compete.
    """
    live = dict(fns)
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    errors: dict[str, str] = {}

    def call(name: str, fn: Callable[[], Any]) -> bool:
        try:
            fn()
            return True
        except Exception as e:  # noqa: BLE001
            errors[name] = f"{type(e).__name__}: {e}"
            say(f"[fail] {label} {name}: {errors[name]}")
            del live[name]
            return False

    for name, fn in list(live.items()):
        for _ in range(warmup):
            if not call(name, fn):
                break
    for _ in range(repeats):
        for name, fn in list(live.items()):
            if collect:
                gc.collect()
            c0 = process_time()
            t0 = perf_counter()
            if not call(name, fn):
                continue
            t1 = perf_counter()
            c1 = process_time()
            wall[name].append(t1 - t0)
            cpu[name].append(c1 - c0)
    out = {}
    for name in fns:
        if name in errors:
            out[name] = {"error": errors[name]}
        else:
            out[name] = {"median_s": statistics.median(wall[name]), "min_s": min(wall[name]),
                         "cpu_min_s": min(cpu[name]),
                         "cpu_median_s": statistics.median(cpu[name]), "n": repeats,
                         "wall_s": wall[name], "cpu_s": cpu[name]}
    return out


def summary(times: list[float]) -> dict[str, float]:
    return {"median_s": statistics.median(times), "min_s": min(times), "n": len(times)}


def rel_diff(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


def rss_bytes() -> int:
    """Current resident set size of this process (Linux), else peak RSS."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:,.2f}"


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def run_safely(label: str, fn: Callable[[], Any], say: Callable[[str], None]) -> Any:
    """Run one benchmark entry; report a failure instead of aborting the run."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - a broken implementation is a result too
        say(f"[fail] {label}: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {e}"}



def load_jax(say: Callable[[str], None]) -> Any:
    """Import JAX on the CPU, float64, single-threaded like everything else."""
    threads = os.environ.get("OMP_NUM_THREADS", "1")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if threads == "1":
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_cpu_multi_thread_eigen" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1").strip()
    # XLA sizes its CPU thread pools from the process's CPU affinity when the
    # backend starts (the flags above do not cover all of them), so with one
    # thread requested the backend starts pinned to one CPU; the affinity is
    # restored right after, and only the pools created then stay small.
    pin = threads == "1" and hasattr(os, "sched_setaffinity")
    old = os.sched_getaffinity(0) if pin else None
    try:
        if pin:
            os.sched_setaffinity(0, {min(old)})
        jax, err = try_import("jax")
        if jax is None:
            say(f"[skip] jax is not importable ({err}); install it with: {JAX_HINT}")
            return None
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        jax.numpy.ones(2).block_until_ready()  # start the backend now
    finally:
        if pin:
            os.sched_setaffinity(0, old)
    return jax


# --------------------------------------------------------------------------- timing
def best(fn: Callable[[], Any], number: int = 1, repeat: int = 5) -> float:
    """Seconds per call of ``fn``: the minimum over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


class GCClock:
    """Wall time spent in the garbage collector's collections while inside ``with``
    (``gc.callbacks``; adds up over several ``with`` blocks)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = perf_counter()
        else:
            self.seconds += perf_counter() - self._start

    def __enter__(self) -> GCClock:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)



def max_rel_diff(a: Any, ref: np.ndarray) -> float:
    """``max |a - ref| / max |ref|``: relative to the reference's scale.

    Entry-by-entry relative differences blow up on entries that are zero or
    nearly so (Jacobian off-diagonals, HVP entries that cancel), which says
    nothing about the implementation; scaling by the largest entry does not.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.shape != ref.shape:
        raise ValueError(f"shape {a.shape} differs from the reference's {ref.shape}")
    return float(np.max(np.abs(a - ref)) / max(float(np.max(np.abs(ref))), 1e-300))


def to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):  # torch
        x = x.detach().numpy()
    return np.asarray(x, dtype=np.float64)


def repeat(fn: Callable[[], Any], inner: int) -> Callable[[], Any]:
    """``fn`` called ``inner`` times per timed call (for sub-millisecond work)."""
    if inner == 1:
        return fn

    def many() -> Any:
        for _ in range(inner - 1):
            fn()
        return fn()

    return many


def time_and_check(impls: dict[str, Callable[[], Any]], check: Callable[[str, Any], float],
                   repeats: int, inner: int, warmup: int, label: str,
                   say: Callable[[str], None]) -> dict[str, dict]:
    """Run each implementation once (checking its result), then time the good ones.

    Times are per call of the implementation (a timed call runs it ``inner``
    times).  ``check(name, result)`` returns the max rel diff vs the
    reference and may raise, which reports the row as failed.
    """
    checked: dict[str, Any] = {}
    for name, fn in impls.items():
        checked[name] = run_safely(f"{label} {name}", lambda n=name, fn=fn: check(n, fn()), say)
    ok = {k: repeat(impls[k], inner) for k, v in checked.items() if not isinstance(v, dict)}
    rows = measure_interleaved(ok, repeats, warmup, say, label)
    out = {}
    for name in impls:
        if isinstance(checked[name], dict):
            out[name] = checked[name]
            continue
        r = rows[name]
        if "error" not in r:
            for key in ("median_s", "min_s", "cpu_min_s", "cpu_median_s"):
                r[key] /= inner
            r["wall_s"] = [t / inner for t in r["wall_s"]]
            r["cpu_s"] = [t / inner for t in r["cpu_s"]]
            r["inner"] = inner
            r["max_rel_diff"] = checked[name]
        out[name] = r
    return out


def add_ratios(rows: dict[str, dict], base_name: str) -> None:
    base = rows.get(base_name, {})
    if "error" in base or not base:
        return
    for r in rows.values():
        if "error" in r:
            continue
        r["ratio_min"] = r["min_s"] / base["min_s"]
        r["ratio_cpu_min"] = r["cpu_min_s"] / base["cpu_min_s"]
        r["ratio_paired"] = statistics.median(a / b for a, b in zip(r["wall_s"], base["wall_s"]))


def say_rows(rows: dict[str, dict], say: Callable[[str], None], unit: str = "us") -> None:
    scale, u = (1e6, "µs") if unit == "us" else (1e3, "ms")
    for name, r in rows.items():
        if "error" in r:
            say(f"  {name:<48} error: {r['error']}")
            continue
        extra = ""
        if "ratio_min" in r:
            extra = (f"  {r['ratio_min']:5.2f}x fwd (min/min) {r['ratio_paired']:5.2f}x (paired)"
                     f" {r['ratio_cpu_min']:5.2f}x (cpu)")
        d = 1 if unit == "us" else 2
        say(f"  {name:<48} {r['min_s'] * scale:10.{d}f} {u} (min) {r['median_s'] * scale:10.{d}f} "
            f"(median) {r['cpu_min_s'] * scale:10.{d}f} (cpu min){extra}  "
            f"max rel diff {r['max_rel_diff']:.1e}")



# --------------------------------------------------------------------------- output
def scaled_verdict(label: str, value: float, ref_name: str, ref_value: float | None,
                   target: float, stated_ref: float) -> str | None:
    """The target carried over to this run's speed: each target is stated next to a
    reference measured on this machine (a floor or a peer), so ``value / ref_value``
    against ``target / stated_ref`` compares like with like on a loaded machine."""
    if not ref_value:
        return None
    ratio, bound = value / ref_value, target / stated_ref
    return (f"{label}: {ratio:.2f}× {ref_name} in this run; the target is "
            f"{bound:.2f}× ({target} against {stated_ref}): "
            f"{'meets' if ratio <= bound else 'MISSES'} when scaled")



def source_digest(package: Path) -> str:
    """A short hash of the package's ``.py`` files: which code was measured."""
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        h.update(str(f.relative_to(package)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def environment(peers: dict[str, Any]) -> dict[str, Any]:
    """Versions, threads, the exact command and a digest of the measured source."""
    import wengert

    env = {
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "wengert": getattr(wengert, "__version__", "?"),
        "wengert_path": str(Path(wengert.__file__).parent),
        "wengert_src_sha256": source_digest(Path(wengert.__file__).parent),
        "command": command(),
    }
    for name, mod in peers.items():
        env[name] = None
        if mod is not None:
            try:
                env[name] = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                env[name] = getattr(mod, "__version__", "?")
    env["blas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS")
    if peers.get("jax") is not None:
        env["xla_flags"] = os.environ.get("XLA_FLAGS")
    if peers.get("torch") is not None:
        env["torch_threads"] = peers["torch"].get_num_threads()
    return env



def write_results(path: str | Path | None, results: dict[str, Any],
                  say: Callable[[str], None] = print) -> None:
    """Write ``results`` (with the environment, if not already there) as JSON to ``path``
    (nothing when ``path`` is ``None``)."""
    if path is None:
        return
    results.setdefault("environment", environment({}))
    Path(path).write_text(json.dumps(results, indent=2, default=str) + "\n")
    say(f"\nresults written to {path}")


def print_sections(sections: list[tuple[str, dict[str, float]]], width: int = 32,
                   fmt: str = "10.3f") -> None:
    """Print ``(title, {quantity: value})`` sections as aligned lists."""
    for title, values in sections:
        print(f"== {title}", flush=True)
        for key, value in values.items():
            print(f"   {key:{width}s} {value:{fmt}}", flush=True)


# --------------------------------------------------------------------------- suites
@dataclass
class Suite:
    """Workloads run by :func:`run_suites`: ``benches`` maps a workload's name to
    ``bench(cfg, peers, say) -> results``; ``config(quick)`` gives their sizes,
    ``tables(results)`` and ``verdicts(results)`` the summary; ``peers`` are imported
    when one of the workloads is selected; ``profile(results, cfg, peers, say)`` runs
    with ``--profile``."""

    benches: dict[str, Callable[..., dict]]
    config: Callable[[bool], dict[str, Any]]
    tables: Callable[[dict[str, Any]], str]
    verdicts: Callable[[dict[str, Any]], list[str]]
    peers: tuple[str, ...] = ("autograd", "torch")
    profile: Callable[..., dict[str, str]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def run_suites(suites: list[Suite], argv: list[str] | None, description: str,
               add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
               worker: Callable[[argparse.Namespace], int | None] | None = None) -> int:
    """The command line of ``run.py`` and ``forward.py``: select workloads (``--only``),
    run them, print the tables and verdicts, write the JSON results."""
    names = [name for s in suites for name in s.benches]
    ap = argparse.ArgumentParser(description=description)
    common_arguments(ap, json_default=str(HERE / "results.json"))
    ap.add_argument("--only", default=",".join(names),
                    help="comma-separated subset of " + ",".join(names))
    if any(s.profile for s in suites):
        ap.add_argument("--profile", action="store_true",
                        help="after timing, cProfile wengert's rows of the forward workloads")
    if add_arguments is not None:
        add_arguments(ap)
    args = ap.parse_args(argv)
    wengert_under_test(args.installed)
    if worker is not None:
        code = worker(args)
        if code is not None:
            return code

    by_key = {name.upper(): name for name in names}
    only = {w.strip().upper() for w in args.only.split(",") if w.strip()}
    unknown = only - set(by_key)
    if unknown:
        ap.error(f"unknown workload(s) {sorted(unknown)}; choose from {', '.join(names)}")
    say = lambda s: print(s, flush=True)  # noqa: E731
    wanted = [(s, [n for n in s.benches if n.upper() in only]) for s in suites]
    wanted = [(s, ns) for s, ns in wanted if ns]
    peer_names = tuple(dict.fromkeys(p for s, _ in wanted for p in s.peers))
    peers = load_peers(peer_names, say)
    cfg: dict[str, Any] = {"installed": args.installed}
    for s, _ in wanted:
        cfg.update(s.config(args.quick))
    for key, value in vars(args).items():  # an option named after a setting overrides it
        if key in cfg and value is not None:
            cfg[key] = value
    env = environment(peers)
    say("environment: " + ", ".join(f"{k}={v}" for k, v in env.items()))

    results: dict[str, Any] = {"environment": env, "quick": args.quick}
    for s, ns in wanted:
        for name in ns:
            results[name] = s.benches[name](cfg, peers, say)
    if getattr(args, "profile", False):
        results["profiles"] = {}
        for s, _ in wanted:
            if s.profile is not None:
                results["profiles"].update(s.profile(results, cfg, peers, say))

    say("\n" + "=" * 78 + "\nSUMMARY\n" + "=" * 78)
    say("\n\n".join(t for t in (s.tables(results) for s, _ in wanted) if t))
    results["verdicts"] = [v for s, _ in wanted for v in s.verdicts(results)]
    say("\n" + "\n".join(results["verdicts"]))
    write_results(args.json, results, say)
    return 0
