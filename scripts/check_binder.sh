#!/usr/bin/env bash
# scripts/check_binder.sh [PYTEST-ARGS...]
# Checks offline that Binder can run the notebooks from binder/ as it stands:
#  1. repo2docker --no-build renders the Dockerfile Binder would build from this
#     repository, and that Dockerfile installs binder/apt.txt's packages, the Python
#     of binder/runtime.txt, binder/requirements.txt, and runs binder/postBuild;
#  2. a fresh venv (.venv-binder/) made only from what binder/ installs (the
#     requirements, then postBuild, run with that venv's pip first on PATH; apt.txt's
#     packages on the machine) runs every notebook under strict nbval. pytest, nbval
#     and pytest-xdist are added to run them; nothing else.
# repo2docker itself lives in .venv-tools/. ./test runs this as a stage when
# WENGERT_TEST_BINDER=1 (CI sets it); extra arguments go to the nbval run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_bootstrap.sh
. scripts/_bootstrap.sh

py="$(_find_python)" || die "no Python >= 3.11 on PATH (see ./test)"
TVENV="$ROOT/.venv-tools"
BVENV="$ROOT/.venv-binder"

# -- 1. repo2docker renders the Dockerfile ------------------------------------------
if ! [ -x "$TVENV/bin/repo2docker" ]; then
    say "binder: installing jupyter-repo2docker into .venv-tools"
    "$py" -m venv "$TVENV" && "$TVENV/bin/python" -m pip install --quiet jupyter-repo2docker \
        || die "could not install jupyter-repo2docker (see pip's message above)"
fi
dockerfile="$(mktemp)"
trap 'rm -f "$dockerfile"' EXIT
say "binder: repo2docker --no-build --debug . (renders the Dockerfile, builds nothing)"
"$TVENV/bin/repo2docker" --no-build --debug --user-id 1000 --user-name jovyan "$ROOT" \
    >"$dockerfile" 2>&1 || { cat "$dockerfile"; die "repo2docker could not read binder/"; }
expect() {
    grep -qF -- "$1" "$dockerfile" || { cat "$dockerfile"; die "binder: the Dockerfile repo2docker renders lacks: $1"; }
}
runtime="$(tr -d '[:space:]' <binder/runtime.txt)"   # python-3.11
expect "python=${runtime#python-}"
while read -r pkg; do
    [ -n "$pkg" ] && expect "$pkg"
done < <(grep -v '^#' binder/apt.txt)
expect 'pip install --no-cache-dir -r "binder/requirements.txt"'
expect "./binder/postBuild"
say "binder: the Dockerfile installs apt.txt, $runtime, requirements.txt and runs postBuild"

# -- 2. a venv made from binder/ alone runs the notebooks ----------------------------
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=()
    while read -r pkg; do
        [ -n "$pkg" ] && ! dpkg -s "$pkg" >/dev/null 2>&1 && missing+=("$pkg")
    done < <(grep -v '^#' binder/apt.txt)
    if [ "${#missing[@]}" -gt 0 ]; then
        say "binder: apt-get install ${missing[*]} (binder/apt.txt)"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
fi
key="$(cat binder/* pyproject.toml | sha256sum | cut -c1-16) $("$py" --version 2>&1)"
if ! [ -f "$BVENV/.binder-key" ] || [ "$(cat "$BVENV/.binder-key")" != "$key" ]; then
    rm -rf "$BVENV"
    say "binder: creating .venv-binder from binder/requirements.txt and binder/postBuild"
    "$py" -m venv "$BVENV"
    "$BVENV/bin/python" -m pip install --quiet --upgrade pip
    "$BVENV/bin/python" -m pip install --quiet --no-cache-dir -r binder/requirements.txt \
        || die "pip install -r binder/requirements.txt failed"
    PATH="$BVENV/bin:$PATH" bash binder/postBuild >/dev/null || die "binder/postBuild failed"
    "$BVENV/bin/python" -m pip install --quiet pytest nbval pytest-xdist \
        || die "could not install pytest and nbval into .venv-binder"
    printf '%s\n' "$key" >"$BVENV/.binder-key"
fi
say "binder: pytest --nbval notebooks/ in .venv-binder ($("$BVENV/bin/python" -c 'import numpy; print("numpy", numpy.__version__)'))"
PATH="$BVENV/bin:$PATH" "$BVENV/bin/python" -m pytest -p no:cacheprovider -n 2 --dist loadscope \
    --nbval --nbval-current-env notebooks/ "$@"
