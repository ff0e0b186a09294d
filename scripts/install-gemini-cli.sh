#!/usr/bin/env bash
# Install the pinned Google Gemini CLI for the end-to-end tests (tests/e2e/test_gemini.py) into a cache directory.
#
#   scripts/install-gemini-cli.sh            # installs (or reuses) the pinned version
#   GATE_CLI_CACHE=DIR scripts/install-gemini-cli.sh
#   GATE_GEMINI_VERSION=X.Y.Z scripts/install-gemini-cli.sh   # only when re-pinning
#
# The last line of stdout is the absolute path of a working `gemini` binary; everything else goes to stderr.
# Skips npm when the cache already holds a binary that reports the pinned version. Exits non-zero with a
# clear message when npm or the registry cannot deliver it: the e2e suite must fail loudly, never skip.
#
# Notes (CLI 0.61.0): the package `@google/gemini-cli` is plain JavaScript (a bundle run by node); its bin link
# `gemini` needs node >= 20.
set -euo pipefail

VERSION="${GATE_GEMINI_VERSION:-0.61.0}"
PACKAGE="@google/gemini-cli"
CACHE="${GATE_CLI_CACHE:-$HOME/.cache/memory-gate}/gemini"
PREFIX="$CACHE/$VERSION"

die() {
    printf 'install-gemini-cli: ERROR: %s\n' "$*" >&2
    exit 1
}
say() {
    printf 'install-gemini-cli: %s\n' "$*" >&2
}

# npm's bin link (the node wrapper that finds the platform binary) is the one candidate.
candidates() {
    printf '%s\n' "$PREFIX/node_modules/.bin/gemini"
}

# Print the first candidate that runs and reports the pinned version; return 1 when none does.
find_working() {
    local bin out
    while IFS= read -r bin; do
        [ -x "$bin" ] || continue
        if command -v timeout >/dev/null 2>&1; then
            out="$(timeout 60 "$bin" --version 2>/dev/null </dev/null || true)"
        else  # e.g. macOS without coreutils
            out="$("$bin" --version 2>/dev/null </dev/null || true)"
        fi
        case "$out" in
            "$VERSION"|"$VERSION "*)
                (cd "$(dirname "$bin")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$bin")")
                return 0
                ;;
        esac
    done < <(candidates)
    return 1
}

if found="$(find_working)"; then
    say "using cached $PACKAGE@$VERSION"
    printf '%s\n' "$found"
    exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm is not on PATH; install Node.js and npm to get $PACKAGE@$VERSION"

mkdir -p "$PREFIX" || die "cannot create cache dir $PREFIX"
say "installing $PACKAGE@$VERSION into $PREFIX (once)"
log="$PREFIX/npm-install.log"
# --prefix keeps the install inside the cache; no global state is touched. A private package.json keeps
# npm from walking up into some other project.
[ -f "$PREFIX/package.json" ] || printf '{"private": true}\n' >"$PREFIX/package.json"
if ! npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --loglevel=warn \
        "$PACKAGE@$VERSION" >"$log" 2>&1; then
    tail -n 30 "$log" >&2 || true
    die "npm install $PACKAGE@$VERSION failed (full log: $log); is the npm registry reachable?"
fi

if found="$(find_working)"; then
    say "installed $PACKAGE@$VERSION"
    printf '%s\n' "$found"
    exit 0
fi

tail -n 30 "$log" >&2 || true
die "npm finished but no binary in $PREFIX/node_modules reports version $VERSION (log: $log)"
