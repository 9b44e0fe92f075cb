"""Gradients through decompositions (issue 13, section 7): ``eigh`` and ``svd``, wengert
vs HIPS autograd vs PyTorch, side by side in one run.

    python benchmarks/linalg.py              # 100x100 and 500x500
    python benchmarks/linalg.py --sizes 50   # other sizes

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
import os
import sys
import timeit
from pathlib import Path
from typing import Any

_ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
_ap.add_argument("--sizes", default="100,500")
_ap.add_argument("--threads", type=int, default=1)
ARGS = _ap.parse_args()
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(ARGS.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import wengert as wg  # noqa: E402


def best(fn: Any, inputs: list[np.ndarray]) -> float:
    """The fastest of ``fn(x)`` over ``inputs``: a new matrix each time (wengert shares a
    decomposition between the primitives of one matrix, so repeating one matrix would
    skip it)."""
    times = []
    for x in inputs:
        times.append(min(timeit.repeat(lambda: fn(x), number=1, repeat=1)))  # noqa: B023
    return min(times)


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


def peers() -> dict[str, Any]:
    found: dict[str, Any] = {}
    try:
        import autograd
        import autograd.numpy as anp

        found["autograd"] = (lambda make: autograd.grad(make(anp, anp.linalg)))
    except ImportError:
        print("(HIPS autograd not importable: pip install autograd)")
    try:
        import torch

        torch.set_num_threads(ARGS.threads)
        torch.set_default_dtype(torch.float64)

        def torch_grad(make: Any) -> Any:
            loss = make(torch, torch.linalg)

            def grad(a: np.ndarray) -> np.ndarray:
                t = torch.tensor(a, requires_grad=True)
                loss(t).backward()
                return t.grad.numpy()

            return grad

        found["PyTorch"] = torch_grad
    except ImportError:
        print("(PyTorch not importable: pip install torch==2.13.0, see benchmarks/README.md)")
    return found


def main() -> int:
    rng = np.random.default_rng(0)
    others = peers()
    print(f"{'workload':18s} {'library':10s} {'ms':>10s} {'/ wengert':>10s}  agrees")
    for n in [int(s) for s in ARGS.sizes.split(",")]:
        b = rng.normal(size=(n, n))
        cases = {"eigh": (eigh_loss, (b + b.T) / 2.0), "svd": (svd_loss, b)}
        repeat = 5 if n <= 200 else 3
        for name, (make, a) in cases.items():
            fresh = [a + 1e-3 * k * (a + a.T if name == "eigh" else a) for k in
                     range(1, repeat + 1)]
            mine = wg.grad(make(np, np.linalg))
            ref = mine(a)
            t_mine = best(mine, fresh)
            print(f"{name} {n}x{n}".ljust(18), f"{'wengert':10s} {t_mine * 1e3:10.1f} "
                  f"{1.0:10.2f}")
            for lib, make_grad in others.items():
                grad = make_grad(make)
                got = grad(a)
                if name == "eigh":
                    agrees = np.allclose((got + got.T) / 2, (ref + ref.T) / 2, rtol=1e-6,
                                         atol=1e-8)
                else:
                    agrees = np.allclose(got, ref, rtol=1e-6, atol=1e-8)
                t = best(grad, fresh)
                print(f"{'':18s} {lib:10s} {t * 1e3:10.1f} {t / t_mine:10.2f}  {agrees}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
