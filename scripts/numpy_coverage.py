"""Which public NumPy functions have no wengert gradient rule (not run as a test).

    .venv/bin/python scripts/numpy_coverage.py

Calls every public function of ``np``, ``np.linalg``, ``np.fft``, ``np.emath``,
``np.lib.stride_tricks`` and ``np.char``, and every ufunc, on a tensor that requires
grad (a matrix, then a vector) and lists those that raise wengert's "no wengert gradient
rule" error. Other errors (wrong arguments for that function) are not counted: a
function is covered when some call works or fails for another reason.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import wengert as wg  # noqa: E402

#: Not called: help, tests, configuration and file input/output.
SKIP = {"info", "test", "show_config", "show_runtime", "get_include", "source", "lookfor",
        "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt",
        "fromfile", "fromregex", "memmap", "printoptions", "set_printoptions",
        "setbufsize", "seterr", "seterrcall"}
MODULES = [("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft), ("np.emath", np.emath),
           ("np.lib.stride_tricks", np.lib.stride_tricks), ("np.char", np.char)]


def uncovered() -> list[str]:
    """The functions whose calls on a tensor that requires grad all say "no rule"."""
    matrix = wg.tensor(np.array([[0.5, 1.5, 2.0], [0.3, -0.7, 1.1], [0.9, 0.2, -0.4]]),
                       requires_grad=True)
    vector = wg.tensor(np.array([0.5, 1.5, 2.0]), requires_grad=True)
    found = []
    for prefix, module in MODULES:
        for name in sorted(dir(module)):
            fn = getattr(module, name)
            if name.startswith("_") or name in SKIP or not callable(fn) or isinstance(fn, type):
                continue
            calls = [(matrix,), (vector,)]
            if isinstance(fn, np.ufunc):
                if prefix != "np":
                    continue
                calls = [(matrix,) * fn.nin, (vector,) * fn.nin]
            for args in calls:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fn(*args)
                except TypeError as error:
                    if "no wengert gradient rule" in str(error):
                        found.append(f"{prefix}.{name}")
                        break
                except Exception:  # noqa: BLE001 - another reason: not a missing rule
                    break
                else:
                    break
    return found


if __name__ == "__main__":
    missing = uncovered()
    print(f"{len(missing)} NumPy functions without a wengert gradient rule (NumPy "
          f"{np.__version__}):")
    print("\n".join(f"  {name}" for name in missing))
