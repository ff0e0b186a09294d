#!/usr/bin/env bash
# Install the pinned Claude Code CLI for the end-to-end tests (tests/e2e) into a cache directory.
#
#   scripts/install-claude-cli.sh            # installs (or reuses) the pinned version
#   GATE_CLI_CACHE=DIR scripts/install-claude-cli.sh
#   GATE_CLI_VERSION=X.Y.Z scripts/install-claude-cli.sh   # only when re-pinning
#
# The last line of stdout is the absolute path of a working `claude` binary; everything else goes to stderr.
# Skips npm when the cache already holds a binary that reports the pinned version. Exits non-zero with a
# clear message when npm or the registry cannot deliver it: the e2e suite must fail loudly, never skip.
#
# Notes (CLI 2.1.332): the package declares engines node>=22, so npm on node 20 warns EBADENGINE; the warning
# is harmless because the package ships a native binary (node is not used at runtime). An unpinned install on
# node 20 resolves to an older release, hence the exact pin.
set -euo pipefail

VERSION="${GATE_CLI_VERSION:-2.1.332}"
PACKAGE="@anthropic-ai/claude-code"
CACHE="${GATE_CLI_CACHE:-$HOME/.cache/memory-gate/claude-code}"
PREFIX="$CACHE/$VERSION"

die() {
    printf 'install-claude-cli: ERROR: %s\n' "$*" >&2
    exit 1
}
say() {
    printf 'install-claude-cli: %s\n' "$*" >&2
}

# The candidates for the binary, best first: npm's bin link (the postinstall copies the native binary over
# the wrapper's placeholder), then the platform package's native binary itself (in case the postinstall
# script was not allowed to run).
candidates() {
    local nm="$PREFIX/node_modules"
    printf '%s\n' "$nm/.bin/claude" "$nm/$PACKAGE/bin/claude.exe"
    local dir
    for dir in "$nm/$PACKAGE"-*/; do
        [ -d "$dir" ] && printf '%s\n' "${dir%/}/claude"
    done
    return 0
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
            "$VERSION "*|"$VERSION")
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
say "installing $PACKAGE@$VERSION into $PREFIX (about 400 MB, once)"
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
