#!/usr/bin/env bash
# The test suite once more, under the machine's system python3, in a second venv made by install.sh itself
# (the way a user with only that Python installs gate). Called by .ci/run after the main run.
#
#   GATE_CI_SYSTEM_PYTHON   the system interpreter (default /usr/bin/python3; "skip" turns this run off)
#   GATE_CI_SYSTEM_VENV     where the second venv goes (default .venv-system in the checkout; made afresh)
#
# Skipped, with the reason, when there is no such interpreter, when it is older than gate supports (3.11), or
# when it is the interpreter the main venv already runs on. Lint and the benchmark smoke run are not repeated:
# ruff reads the same files with the same version whatever runs it, and the benchmark measures, it does not test.
# When the system python has no venv/ensurepip (Debian and Ubuntu ship them apart, in python3-venv), it is
# installed with apt-get when this runs as root; otherwise this fails and says what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'ci-system-python: %s\n' "$*"; }
die() {
    printf 'ci-system-python: error: %s\n' "$1" >&2
    [ -n "${2:-}" ] && printf 'hint: %s\n' "$2" >&2
    exit 1
}

system_python="${GATE_CI_SYSTEM_PYTHON:-/usr/bin/python3}"
venv="${GATE_CI_SYSTEM_VENV:-$PWD/.venv-system}"
if [ "$system_python" = skip ]; then
    say "GATE_CI_SYSTEM_PYTHON=skip: not run"
    exit 0
fi
if ! [ -x "$system_python" ]; then
    say "no system python at $system_python: nothing to run a second time under"
    exit 0
fi
version="$("$system_python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
if ! "$system_python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    say "the system python ($system_python, $version) is older than 3.11, which gate needs: not run"
    exit 0
fi

# The interpreter behind a venv, and a plain interpreter, by the real path of the executable they run.
base_of() { "$1" -c 'import os, sys; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))'; }
main_base="$(base_of .venv/bin/python)"
system_base="$(base_of "$system_python")"
if [ "$main_base" = "$system_base" ]; then
    say "the system python is the interpreter install.sh picked ($main_base): the main run covered it"
    exit 0
fi
say "system python: $system_python -> $system_base ($version); install.sh picked $main_base"

has_venv() { "$system_python" -c 'import ensurepip, venv' >/dev/null 2>&1; }
if ! has_venv; then
    minor="$("$system_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "the system python has no venv/ensurepip: installing python3-venv with apt-get"
        log="$(mktemp)"
        export DEBIAN_FRONTEND=noninteractive
        if ! { apt-get update -qq && apt-get install -y -qq python3-venv; } >"$log" 2>&1 &&
            ! apt-get install -y -qq "python$minor-venv" >>"$log" 2>&1; then
            tail -n 20 "$log" >&2
        fi
        rm -f "$log"
    fi
    has_venv || die "$system_python has no venv/ensurepip, so no venv can be made with it" \
        "install python3-venv (Debian, Ubuntu: apt-get install python3-venv python$minor-venv), or set GATE_CI_SYSTEM_PYTHON=skip"
fi

rm -rf "$venv"  # made afresh: a kept one could be of another interpreter
started=$(date +%s)
# A throwaway HOME, as for the main set-up: install.sh's launcher and PATH link stay out of the machine's home.
scratch_home="$(mktemp -d)"
PYTHON="$system_python" GATE_VENV="$venv" GATE_INSTALL_NO_WIRE=1 HOME="$scratch_home" \
    PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}" ./install.sh
rm -rf "$scratch_home"
[ "$(base_of "$venv/bin/python")" = "$system_base" ] || die "$venv does not run on $system_base"

say "tests under $system_python ($version)"
"$venv/bin/python" -m pytest -q
say "second run: $(($(date +%s) - started)) s including the venv"
