#!/usr/bin/env bash
# scripts/build_docs.sh [--test] [SPHINX-ARGS...]
# Builds the documentation site into docs/_build/html: the notebooks under notebooks/
# as pages with their saved outputs (not re-executed; the explorer's saved widget state
# live on the page), the API reference from wengert's docstrings, the conventions, errors
# and architecture pages, and the JupyterLite lab (Pyodide kernel) with wengert as a wheel.
# Installs what it needs: the [docs] extra into .venv (scripts/_bootstrap.sh) and the npm
# packages pinned by docs/package-lock.json (npm ci --prefix docs), whose files the site
# serves itself. Warnings are errors (sphinx-build -W).
# With --test, then runs the site's tests (tests/docs: every page in Chromium with every
# request off the site refused, the explorer stepping, formulas typeset, the lite lab);
# a missing site fails them instead of skipping (and on CI, a missing browser).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_bootstrap.sh
. scripts/_bootstrap.sh

run_tests=0
if [ "${1:-}" = "--test" ]; then
    run_tests=1
    shift
fi

ensure_venv
ensure_installed docs

# The JavaScript the pages load, from npm (pinned by docs/package-lock.json).
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing npm with apt-get (the docs site's JavaScript comes from npm packages)"
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm; } >/dev/null \
        || warn "apt-get install npm failed"
fi
command -v npm >/dev/null 2>&1 || die "npm not found: the docs site serves its own copies \
of require.js, the widgets' html-manager, anywidget, MathJax and Pyodide from npm packages \
(docs/package.json); install Node.js 18+ with npm and run this again."
lock_hash="$(sha256sum docs/package-lock.json | cut -d' ' -f1)"
stamp="docs/node_modules/.wengert-lock-hash"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
    say "npm ci --prefix docs (the site's own copies of its scripts, MathJax and Pyodide)"
    npm ci --prefix docs --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null \
        || die "npm ci --prefix docs failed (see npm's message above)"
    printf '%s\n' "$lock_hash" >"$stamp"
fi

# wengert as a wheel for the JupyterLite lab (docs/_lite.py hands it to piplite).
say "pip wheel --no-deps . (wengert for the in-browser lab)"
rm -rf docs/_build/lite-wheels
"$VPY" -m pip wheel --quiet --no-deps -w docs/_build/lite-wheels . \
    || die "building wengert's wheel failed (see pip's message above)"

say "sphinx-build -W -b html docs docs/_build/html (then jupyter lite build into lite/)"
start=$SECONDS
# -E: a fresh environment each time (a page whose source did not change is written again
# too, so a change of configuration reaches every page).
"$VPY" -m sphinx -E -W --keep-going -q -b html docs docs/_build/html "$@"
say "site built in $((SECONDS - start)) s: docs/_build/html/index.html"

if [ "$run_tests" = 1 ]; then
    say "docs site tests: pytest tests/docs (Chromium, every request off 127.0.0.1 refused)"
    WENGERT_DOCS_REQUIRED=1 "$VPY" -m pytest -p no:cacheprovider tests/docs
fi
