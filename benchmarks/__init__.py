"""Peer comparisons of wengert's speed (not part of the test suite).

Run each script as a module from the repository root, with this checkout's source
first on the path::

    PYTHONPATH=src python -m benchmarks.run --quick

See ``benchmarks/README.md``. Importing this package sets the BLAS / OpenMP thread
count (``--threads N`` on the command line, else ``$OMP_NUM_THREADS``, else 1) in the
environment: those libraries read it when they load, so it happens here, before any
script imports NumPy (a package's ``__init__`` runs before its modules).
"""

from __future__ import annotations

import os
import sys


def _threads_from_argv(argv: list[str]) -> str | None:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return None


# One thread by default: the machine is small and shared, and a BLAS thread pool
# competing with other processes (or with torch's own OpenMP pool) makes the timings
# swing by 5x. Worker subprocesses inherit these.
THREADS = _threads_from_argv(sys.argv) or os.environ.get("OMP_NUM_THREADS") or "1"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = THREADS
