#!/usr/bin/env bash
# scripts/test_numpy_floor.sh [PYTEST-ARGS...]
# Runs the unit tests on the oldest NumPy that pyproject.toml declares, to prove
# the floor. It reads `numpy>=X.Y` from [project] dependencies and installs
# exactly numpy==X.Y (X.Y.0: the oldest release the declaration admits) with
# pytest, hypothesis and pytest-xdist into .venv-numpy-floor/, plus wengert itself
# editable with --no-deps (so nothing can upgrade that NumPy). Later runs reuse the
# venv and skip pip unless pyproject.toml, the Python or the repo location changed.
# ./test runs this as its last stage when WENGERT_TEST_NUMPY_FLOOR=1 (CI sets it);
# extra arguments go to pytest, as for ./test's unit-test run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_bootstrap.sh
. scripts/_bootstrap.sh

FVENV="$ROOT/.venv-numpy-floor"
FPY="$FVENV/bin/python"
FSTAMP="$FVENV/.wengert-installed"

# Reusable when its python runs, is >= 3.11, and its pip points at this location.
_floor_venv_ok() {
    [ -x "$FPY" ] && _py_ok "$FPY" && [ -f "$FVENV/bin/pip" ] \
        && head -n 1 "$FVENV/bin/pip" | grep -qF "$FPY"
}

if ! _floor_venv_ok; then
    rm -rf "$FVENV"
    py="$(_find_python)" || die "no Python >= 3.11 on PATH (see ./test)"
    say "numpy floor: creating .venv-numpy-floor with $py ($("$py" --version 2>&1))"
    "$py" -m venv "$FVENV" || die "'$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi

# The floor: the X.Y[.Z] of the `numpy>=X.Y[.Z]` requirement in pyproject.toml.
floor="$("$FPY" - "$ROOT/pyproject.toml" <<'PY'
import re, sys, tomllib
with open(sys.argv[1], "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
for d in deps:
    m = re.fullmatch(r"\s*numpy\s*>=\s*([0-9]+(?:\.[0-9]+)*)\s*(?:,.*)?", d)
    if m:
        print(m.group(1))
        break
else:
    sys.exit(f"no 'numpy>=X.Y' requirement in [project] dependencies: {deps}")
PY
)" || die "could not read the NumPy floor from pyproject.toml"

key="$("$FPY" - "$ROOT" "$floor" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
h = hashlib.sha256((root / "pyproject.toml").read_bytes())
h.update(sys.version.encode())
h.update(str(root).encode())
h.update(sys.argv[2].encode())
print(h.hexdigest())
PY
)"

# True when wengert is installed and the venv's NumPy is release $floor (numpy==2.3
# installs 2.3.0, so compare release numbers padded with zeros).
_floor_installed_ok() {
    "$FPY" - "$floor" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
def rel(v):
    parts = [int(p) for p in v.split("+")[0].split(".")[:3] if p.isdigit()]
    return parts + [0] * (3 - len(parts))
version("wengert")
sys.exit(0 if rel(version("numpy")) == rel(sys.argv[1]) else 1)
PY
}

if [ -f "$FSTAMP" ] && [ "$(cat "$FSTAMP")" = "$key" ] && _floor_installed_ok; then
    say "numpy floor: .venv-numpy-floor up to date (numpy==$floor); skipping pip"
else
    rm -f "$FSTAMP"
    say "numpy floor: installing numpy==$floor, pytest, hypothesis, pytest-xdist"
    # --only-binary: fail fast (rather than compile NumPy for minutes) when that
    # NumPy has no wheel for this Python.
    "$FPY" -m pip install --quiet --only-binary numpy "numpy==$floor" pytest hypothesis pytest-xdist \
        || die "could not install numpy==$floor (see pip's message above)"
    say "numpy floor: installing wengert editable without dependencies"
    "$FPY" -m pip install --quiet --no-deps -e "$ROOT" \
        || die "pip install --no-deps -e . failed (see pip's message above)"
    _floor_installed_ok || die "numpy floor: .venv-numpy-floor has no numpy $floor or no wengert after pip"
    printf '%s\n' "$key" >"$FSTAMP"
fi
have="$("$FPY" -c 'import numpy; print(numpy.__version__)')"

say "numpy floor: pytest -n 2 tests --ignore=tests/e2e --ignore=tests/docs $* (numpy $have, $("$FPY" --version))"
"$FPY" -m pytest -n 2 tests --ignore=tests/e2e --ignore=tests/docs "$@"
