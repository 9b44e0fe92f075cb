# shellcheck shell=bash
# Shared set-up for ./lab and ./test (sourced, not run).
#
# Creates or reuses .venv at the repo root, installs the project editable with
# the requested extra, and skips pip entirely when neither pyproject.toml, the
# Python nor the repo location changed since the last install (the stamp lives
# in .venv/.wengert-installed).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
VPY="$VENV/bin/python"
STAMP="$VENV/.wengert-installed"
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# True when "$1" runs and is Python >= 3.11 (pyenv shims for versions that are
# not selected exist but fail, so run each candidate rather than trust `command -v`).
_py_ok() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

_find_python() {
    local c
    for c in python3.13 python3.12 python3.11 python3; do
        if command -v "$c" >/dev/null 2>&1 && _py_ok "$c"; then
            printf '%s\n' "$c"
            return 0
        fi
    done
    return 1
}

# A venv is reusable when its python works, is >= 3.11, and its scripts point
# at this location (a moved or copied .venv has stale shebangs).
_venv_ok() {
    [ -x "$VPY" ] && _py_ok "$VPY" && [ -f "$VENV/bin/pip" ] \
        && head -n 1 "$VENV/bin/pip" | grep -qF "$VENV/bin/python"
}

ensure_venv() {
    if _venv_ok; then
        return 0
    fi
    if [ -e "$VENV" ]; then
        say "recreating .venv (broken, moved, or Python older than 3.11)"
        rm -rf "$VENV"
    fi
    local py
    py="$(_find_python)" || die "wengert needs Python >= 3.11, and none of python3.13, \
python3.12, python3.11, python3 on PATH is that new. Install Python 3.11 or later \
(e.g. 'apt-get install python3.11 python3.11-venv', or pyenv) and run this again."
    say "creating .venv with $py ($("$py" --version 2>&1))"
    "$py" -m venv "$VENV" || die "'$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
}

# Hash of everything that decides what pip would install.
_install_key() {
    "$VPY" - "$ROOT" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
h = hashlib.sha256((root / "pyproject.toml").read_bytes())
h.update(sys.version.encode())
h.update(str(root).encode())
print(h.hexdigest())
PY
}

# ensure_installed EXTRA [ALSO_OK...]: pip install -e ".[EXTRA]" unless the stamp
# says EXTRA (or an extra that includes it, e.g. test includes jupyter) is
# already installed for the current pyproject.toml.
ensure_installed() {
    local extra="$1" key e
    shift
    key="$(_install_key)"
    if [ -f "$STAMP" ] && "$VPY" -c 'import importlib.metadata as m; m.version("wengert")' >/dev/null 2>&1; then
        for e in "$extra" "$@"; do
            if grep -qxF "$e $key" "$STAMP"; then
                say "dependencies up to date (.[$extra]); skipping pip"
                return 0
            fi
        done
    fi

    # Editable installs of a pyproject-only project need PEP 660 (pip >= 21.3);
    # upgrade only when the venv's pip is older than that floor.
    if ! "$VPY" - <<'PY'
import sys
from importlib.metadata import version
major, minor = (int(p) for p in version("pip").split(".")[:2])
sys.exit(0 if (major, minor) >= (23, 0) else 1)
PY
    then
        say "upgrading pip"
        "$VPY" -m pip install --quiet --upgrade pip
    fi

    # torch must never come in (a transitive requirement would pull several GB of
    # CUDA wheels); this constraint turns that into a resolver error instead.
    local constraints="$VENV/.wengert-constraints.txt"
    printf 'torch<0\n' >"$constraints"

    say "installing wengert editable with .[$extra] (pip; first run takes a few minutes)"
    (cd "$ROOT" && "$VPY" -m pip install --quiet -c "$constraints" -e ".[$extra]") \
        || die "pip install -e '.[$extra]' failed (see pip's message above)"

    # Keep stamps of other extras installed for the same key; record this one.
    {
        if [ -f "$STAMP" ]; then grep -F " $key" "$STAMP" | grep -vxF "$extra $key" || true; fi
        printf '%s %s\n' "$extra" "$key"
    } >"$STAMP.tmp"
    mv "$STAMP.tmp" "$STAMP"
}

# Graphviz's `dot` renders graph pictures; without it they fall back to text.
ensure_dot() {
    if command -v dot >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing graphviz (dot) with apt-get"
        if DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; then
            return 0
        fi
        warn "apt-get install graphviz failed"
    fi
    warn "graphviz's 'dot' is not on PATH: graph pictures will fall back to text."
    warn "  install it with your package manager, e.g. 'sudo apt-get install graphviz',"
    warn "  'brew install graphviz' or 'conda install graphviz', then run this again."
    return 0
}
