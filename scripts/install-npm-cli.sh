#!/usr/bin/env bash
# Install one pinned agent CLI from npm into a cache directory (scripts/install-codex-cli.sh and
# scripts/install-gemini-cli.sh name which; the Claude Code one has its own, for the native binary it ships).
#
#   scripts/install-npm-cli.sh NAME PACKAGE VERSION BIN [VERSION_PREFIX]
#
# NAME names the cache folder and the messages; BIN is npm's bin link; `BIN --version` must print
# VERSION_PREFIX followed by VERSION. The last line of stdout is the absolute path of a working BIN; everything
# else goes to stderr. Skips npm when the cache already holds a binary that reports the pinned version. Exits
# non-zero with a clear message when npm or the registry cannot deliver it: the e2e suite must fail loudly.
set -euo pipefail

NAME="$1" PACKAGE="$2" VERSION="$3" BIN="$4" VERSION_PREFIX="${5:-}"
CACHE="${GATE_CLI_CACHE:-$HOME/.cache/memory-gate}/$NAME"
PREFIX="$CACHE/$VERSION"

die() {
    printf 'install-%s-cli: ERROR: %s\n' "$NAME" "$*" >&2
    exit 1
}
say() {
    printf 'install-%s-cli: %s\n' "$NAME" "$*" >&2
}

# Print npm's bin link when it runs and reports the pinned version; return 1 when it does not.
find_working() {
    local bin="$PREFIX/node_modules/.bin/$BIN" out
    [ -x "$bin" ] || return 1
    if command -v timeout >/dev/null 2>&1; then
        out="$(timeout 60 "$bin" --version 2>/dev/null </dev/null || true)"
    else  # e.g. macOS without coreutils
        out="$("$bin" --version 2>/dev/null </dev/null || true)"
    fi
    case "$out" in
        "$VERSION_PREFIX$VERSION"|"$VERSION_PREFIX$VERSION "*)
            (cd "$(dirname "$bin")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$bin")")
            return 0
            ;;
    esac
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
