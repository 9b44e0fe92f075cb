#!/usr/bin/env bash
# Runs HIPS autograd's own test files against wengert through the adapter in this folder
# (autograd's API mapped onto wengert's; no differentiation in the adapter; functions
# without a faithful equivalent skip their tests). Not part of ./test.
#
#   scripts/autograd_adapter/run.sh /path/to/autograd/tests [pytest args]
#
# (a checkout of https://github.com/HIPS/autograd; the files used: test_numpy.py,
# test_linalg.py, test_systematic.py, test_complex.py, test_wrappers.py, test_graphs.py,
# test_fft.py, with conftest.py and numpy_utils.py)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tests="$1"
shift
work="$(mktemp -d)"
for f in conftest.py numpy_utils.py test_numpy.py test_linalg.py test_systematic.py \
         test_complex.py test_wrappers.py test_graphs.py test_fft.py; do
    cp "$tests/$f" "$work/"
done
cd "$work"
PYTHONPATH="$here" "$here/../../.venv/bin/python" -m pytest -q -p no:cacheprovider \
    -p no:randomly "$@"
