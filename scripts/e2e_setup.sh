#!/usr/bin/env bash
# shellcheck shell=bash
# What the browser tests (tests/e2e, pytest marker `browser`) need besides the venv:
#   - Debian's Chromium at /usr/bin/chromium (Playwright drives it; `playwright install`
#     cannot download browsers on offline machines). As root with apt-get, it is
#     installed; otherwise one line says the tests will be skipped and how to enable them.
#   - tests/e2e/node_modules: local copies of what nbconvert's HTML export loads from
#     public CDNs (require.js, @jupyter-widgets/html-manager, anywidget), pinned by
#     tests/e2e/package-lock.json; `npm ci` runs when they are missing or stale.
# It never fails the run: whatever is missing, the tests skip with the reason.
# Run it (`bash scripts/e2e_setup.sh`) or source it and call ensure_browser_tests.

_e2e_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E_CHROMIUM="${E2E_CHROMIUM:-/usr/bin/chromium}"

_e2e_say() { printf '==> %s\n' "$*"; }
_e2e_note() { printf 'note: %s\n' "$*" >&2; }

_e2e_ensure_chromium() {
    if [ -x "$E2E_CHROMIUM" ]; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        _e2e_say "installing chromium with apt-get (for the browser tests in tests/e2e)"
        local log
        log="$(mktemp)"
        if { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$log" 2>&1 \
            && [ -x "$E2E_CHROMIUM" ]; then
            rm -f "$log"
            return 0
        fi
        tail -n 5 "$log" >&2 || true
        rm -f "$log"
        _e2e_note "apt-get install chromium did not give $E2E_CHROMIUM: the browser tests" \
            "(tests/e2e) will be skipped."
        return 0
    fi
    _e2e_note "no Chromium at $E2E_CHROMIUM: the browser tests (tests/e2e) will be skipped;" \
        "to run them, install Debian's chromium ('sudo apt-get install chromium') and run this again."
    return 0
}

# The lock file's hash, kept in node_modules once `npm ci` succeeded with it.
_e2e_lock_hash() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        cksum "$1" | cut -d' ' -f1
    fi
}

_e2e_ensure_node_modules() {
    local dir="$_e2e_root/tests/e2e" stamp want
    stamp="$dir/node_modules/.wengert-lock-hash"
    [ -f "$dir/package-lock.json" ] || return 0
    want="$(_e2e_lock_hash "$dir/package-lock.json")"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        if [ -d "$dir/node_modules" ]; then
            _e2e_note "npm not found: tests/e2e/node_modules is older than package-lock.json;" \
                "the static-HTML browser test uses it as it is."
        else
            _e2e_note "npm not found: the static-HTML browser test (tests/e2e/test_static_export.py)" \
                "will be skipped; install Node.js 18+ with npm and run this again."
        fi
        return 0
    fi
    _e2e_say "npm ci --prefix tests/e2e (local copies of the CDN scripts of nbconvert's HTML export)"
    if npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null; then
        printf '%s\n' "$want" >"$stamp"
        return 0
    fi
    _e2e_note "npm ci --prefix tests/e2e failed: the static-HTML browser test will be skipped."
    return 0
}

ensure_browser_tests() {
    _e2e_ensure_chromium || true
    _e2e_ensure_node_modules || true
    return 0
}

# Run as a script (not sourced): do it now, and never fail.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    ensure_browser_tests
    exit 0
fi
