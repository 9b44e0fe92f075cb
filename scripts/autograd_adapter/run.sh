#!/usr/bin/env bash
# Runs HIPS autograd's own test files against wengert through the adapter in this folder:
# `autograd.numpy` is `wengert.numpy` (every name of it, `from wengert.numpy import *`), and
# autograd's differential operators are wengert's transforms (nothing differentiated in
# the adapter; functions without a faithful equivalent skip their tests). Not part of
# ./test. Prints pytest's summary for each file, then for all of them.
#
#   scripts/autograd_adapter/run.sh /path/to/autograd/tests [pytest args]
#
# (a checkout of https://github.com/HIPS/autograd). Not run: test_scipy.py
# (autograd.scipy), test_tests.py (autograd's check_grads on its own rule definitions),
# test_vspaces.py (autograd's vector-space objects) and test_performance.py (no tests).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-/work/main/.venv/bin/python}"
[ -x "$python" ] || python="$root/.venv/bin/python"
tests="$1"
shift
files="test_numpy.py test_linalg.py test_systematic.py test_complex.py test_wrappers.py
       test_graphs.py test_fft.py test_scalar_ops.py test_binary_ops.py test_truediv.py
       test_jacobian.py test_direct.py test_core.py test_tuple.py test_list.py test_dict.py
       test_builtins.py test_logic.py test_misc.py test_ufunc_dispatch.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$tests/conftest.py" "$tests/numpy_utils.py" "$work/"
for f in $files; do
    cp "$tests/$f" "$work/"
done
cd "$work"
export PYTHONPATH="$here:$root/src"
for f in $files; do
    printf '%-24s ' "$f"
    ("$python" -m pytest -q -p no:cacheprovider -p no:randomly "$@" "$f" 2>&1 || true) | tail -n 1
done
echo "all:"
"$python" -m pytest -q -p no:cacheprovider -p no:randomly -rfEs "$@" $files 2>&1 \
    | grep -E '^(FAILED|ERROR|SKIPPED)|passed|failed' || true
