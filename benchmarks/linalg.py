"""Gradients through decompositions: ``eigh`` and ``svd``, wengert vs HIPS autograd vs
PyTorch, side by side in one run.

From the repository root, with the Python that has the peers::

    PYTHONPATH=src python -m benchmarks.linalg              # 100x100 and 500x500
    PYTHONPATH=src python -m benchmarks.linalg --sizes 50   # other sizes

Each library computes the gradient of the same loss of the whole decomposition
(values and vectors): ``eigh``: ``sum(w) + sum(V**3)`` of a symmetric matrix;
``svd``: ``sum(s) + sum(U**3) + sum(Vh**3)`` (thin SVD) of a square matrix. The
time is the minimum of several runs, one BLAS thread each (``--threads``). Gradients
are checked against wengert's (eigh symmetrised first: the libraries differ in how
they treat the unused triangle). Peers that are not importable are skipped (see
``benchmarks/README.md`` for how to install them).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from benchmarks.harness import (
    best,
    common_arguments,
    load_peers,
    table,
    wengert_under_test,
    write_results,
)


def fastest(fn: Any, inputs: list[np.ndarray]) -> float:
    """The fastest of ``fn(x)`` over ``inputs``: a new matrix each time (wengert shares a
    decomposition between the primitives of one matrix, so repeating one matrix would
    skip it)."""
    return min(best(lambda: fn(x), 1, 1) for x in inputs)  # noqa: B023


def eigh_loss(np_: Any, linalg: Any) -> Any:
    def loss(a: Any) -> Any:
        w, v = linalg.eigh(a)
        return np_.sum(w) + np_.sum(v ** 3)

    return loss


def svd_loss(np_: Any, linalg: Any) -> Any:
    def loss(a: Any) -> Any:
        u, s, vh = linalg.svd(a, full_matrices=False)
        return np_.sum(s) + np_.sum(u ** 3) + np_.sum(vh ** 3)

    return loss


def peer_grads() -> dict[str, Any]:
    """library -> (make_loss -> gradient function on ndarrays), for the importable peers."""
    peers = load_peers(("autograd", "torch"), print)
    found: dict[str, Any] = {}
    if peers["autograd"] is not None:
        import autograd.numpy as anp

        found["autograd"] = (lambda make: peers["autograd"].grad(make(anp, anp.linalg)))
    torch = peers["torch"]
    if torch is not None:
        torch.set_default_dtype(torch.float64)

        def torch_grad(make: Any) -> Any:
            loss = make(torch, torch.linalg)

            def grad(a: np.ndarray) -> np.ndarray:
                t = torch.tensor(a, requires_grad=True)
                loss(t).backward()
                return t.grad.numpy()

            return grad

        found["PyTorch"] = torch_grad
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,500")
    common_arguments(ap, quick=False)
    args = ap.parse_args(argv)
    wg = wengert_under_test(args.installed)
    rng = np.random.default_rng(0)
    others = peer_grads()
    rows: list[list[str]] = []
    results: dict[str, dict[str, Any]] = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        b = rng.normal(size=(n, n))
        cases = {"eigh": (eigh_loss, (b + b.T) / 2.0), "svd": (svd_loss, b)}
        repeat = 5 if n <= 200 else 3
        for name, (make, a) in cases.items():
            fresh = [a + 1e-3 * k * (a + a.T if name == "eigh" else a) for k in
                     range(1, repeat + 1)]
            mine = wg.grad(make(np, np.linalg))
            ref = mine(a)
            t_mine = fastest(mine, fresh)
            label = f"{name} {n}x{n}"
            rows.append([label, "wengert", f"{t_mine * 1e3:.1f}", "1.00", ""])
            results[label] = {"wengert": {"ms": t_mine * 1e3}}
            for lib, make_grad in others.items():
                grad = make_grad(make)
                got = grad(a)
                if name == "eigh":
                    agrees = np.allclose((got + got.T) / 2, (ref + ref.T) / 2, rtol=1e-6,
                                         atol=1e-8)
                else:
                    agrees = np.allclose(got, ref, rtol=1e-6, atol=1e-8)
                t = fastest(grad, fresh)
                rows.append(["", lib, f"{t * 1e3:.1f}", f"{t / t_mine:.2f}", str(agrees)])
                results[label][lib] = {"ms": t * 1e3, "agrees": bool(agrees)}
            print(f"{label}: done", flush=True)
    print(table(["workload", "library", "ms", "/ wengert", "agrees"], rows))
    write_results(args.json, {"linalg": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
