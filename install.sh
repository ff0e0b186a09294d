#!/usr/bin/env bash
# Set up memory-gate from this checkout and wire it into a project.
#
#   ./install.sh [PROJECT_DIR] [--scope project|local|user] [--agent claude-code|codex|gemini] [--no-wire]
#
# 1. creates .venv here (python3 >= 3.11; $PYTHON picks a specific one, $GATE_VENV another place) and installs
#    gate into it with the dev extras (`pip install -e '.[dev]'`), so the tests run from the same environment
#    (skipped when .venv already holds gate from this checkout and pyproject.toml has not changed since);
# 2. puts `gate` on PATH: a symlink in ~/.local/bin when that directory is on PATH, else it prints exactly how;
#    writes this machine's hook launcher (~/.local/share/memory-gate/hook), which committed project settings run;
# 3. wires the hooks into PROJECT_DIR (default: the current directory) with `gate install --scope SCOPE --agent
#    AGENT` (default: project scope, Claude Code; codex: the Codex CLI, gemini: the Gemini CLI, each scope
#    project or user) — skipped with --no-wire or GATE_INSTALL_NO_WIRE=1, and when the project would be this
#    checkout or, without PROJECT_DIR, the home directory (whose .claude/settings.json is the user settings):
#    then it sets gate up and says how;
# 4. runs `gate doctor` on that project and exits non-zero if it finds something broken.
#
# Safe to run again: it reuses a working .venv, `gate install` changes nothing when already wired, and an
# existing ~/.local/bin/gate that is not a symlink is left alone. Needs no TTY (CI runs it as root).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${GATE_VENV:-$repo/.venv}"
project="$PWD"
project_given="no"
wire_skipped=""
scope="project"
agent="claude-code"
wire="yes"
case "${GATE_INSTALL_NO_WIRE:-}" in 1 | true | yes | on) wire="no" ;; esac
step="setting gate up"
# Ctrl-C: say where it stopped and what is done, not a failure of the step it interrupted.
trap 'printf "\ninstall.sh: interrupted while %s; run ./install.sh again to finish (it reuses what is done)\n" "$step" >&2; exit 130' INT

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
say() { printf 'install.sh: %s\n' "$*"; }
die() {
    printf 'install.sh: error: %s\n' "$1" >&2
    [ -n "${2:-}" ] && printf 'hint: %s\n' "$2" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage && exit 0 ;;
    --no-wire) wire="no" ;;
    --scope)
        [ $# -ge 2 ] || die "--scope needs a value" "project, local or user"
        scope="$2"
        shift
        ;;
    --scope=*) scope="${1#--scope=}" ;;
    --agent)
        [ $# -ge 2 ] || die "--agent needs a value" "claude-code, codex or gemini"
        agent="$2"
        shift
        ;;
    --agent=*) agent="${1#--agent=}" ;;
    -*) die "unknown option $1" "./install.sh --help" ;;
    *)
        project="$1"
        project_given="yes"
        ;;
    esac
    shift
done
case "$scope" in project | local | user) ;; *) die "unknown scope '$scope'" "project, local or user" ;; esac
case "$agent" in claude-code | codex | gemini) ;; *) die "unknown agent '$agent'" "claude-code, codex or gemini" ;; esac
[ "$agent:$scope" != codex:local ] || die "Codex has no local scope" "--scope project or --scope user"
[ "$agent:$scope" != gemini:local ] || die "Gemini has no local scope" "--scope project or --scope user"
if [ "$wire" = yes ]; then
    [ -d "$project" ] || die "no such project directory: $project" \
        "name your project's directory, e.g. ./install.sh ~/code/my-project (with no directory, install.sh sets gate up and wires nothing)"
    project="$(cd "$project" && pwd)"
fi

# --- 1. the environment ---------------------------------------------------------------------------------------

good_python() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }

find_python() {
    if [ -n "${PYTHON:-}" ]; then
        good_python "$PYTHON" || die "\$PYTHON=$PYTHON is not a python >= 3.11"
        command -v "$PYTHON"
        return
    fi
    local candidate
    for candidate in python3.14 python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && good_python "$candidate"; then
            command -v "$candidate"
            return
        fi
    done
    die "no python3 >= 3.11 found on PATH" "install one (e.g. apt-get install python3 python3-venv), or set PYTHON=/path/to/python3.11"
}

if [ -x "$venv/bin/python" ] && good_python "$venv/bin/python" && "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
    say "reusing $venv"
else
    python="$(find_python)"
    if [ -e "$venv" ]; then
        # A broken or too-old environment: moved aside, not deleted, in case something of value is in it.
        aside="$venv.broken.$(date +%s)"
        say "$venv does not work; moving it to $aside"
        mv "$venv" "$aside"
    fi
    say "creating $venv with $python ($("$python" --version 2>&1))"
    "$python" -m venv "$venv" ||
        die "could not create $venv" "on Debian/Ubuntu: apt-get install python3-venv (for your python version)"
fi

# What pip installed, and from where: a re-run with nothing changed needs no pip (and so no network).
stamp="$venv/.gate-installed"
wanted_stamp="$repo $("$venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$repo/pyproject.toml")"
installed_here() {
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted_stamp" ] &&
        "$venv/bin/python" -P -c 'import sys, gate.cli, gate.hook, tantivy, Stemmer, pytest
sys.exit(not gate.__file__.startswith(sys.argv[1] + "/"))' "$repo" >/dev/null 2>&1
}
if [ -z "${GATE_INSTALL_PIP:-}" ] && installed_here; then
    say "gate is already installed in $venv from this checkout (pyproject.toml unchanged); pip not run (GATE_INSTALL_PIP=1 runs it)"
else
    say "installing gate into $venv (pip install -e '.[dev]')"
    rm -f "$stamp"
    # editable_mode=compat: a plain path in a .pth file instead of an import-hook finder, which every Python
    # process of the venv would otherwise import at startup (~10 ms a hook run).
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --config-settings editable_mode=compat -e "${repo}[dev]" ||
        die "pip could not install gate" "re-run with network access to the package index, or see the pip output above"
    printf '%s\n' "$wanted_stamp" >"$stamp"
fi
# Byte-compile now: a hook must not recompile gate on every run where PYTHONDONTWRITEBYTECODE is set.
"$venv/bin/python" -m compileall -q "$repo/gate" >/dev/null || true
gate="$venv/bin/gate"
"$gate" --version >/dev/null || die "$gate does not run"

# --- 2. gate on PATH ------------------------------------------------------------------------------------------

on_path() { case ":$PATH:" in *":$1:"*) return 0 ;; *) return 1 ;; esac; }
local_bin="$HOME/.local/bin"
resolved="$(command -v gate 2>/dev/null || true)"
if [ -n "$resolved" ] && [ "$(cd "$(dirname "$resolved")" && pwd -P)/$(basename "$resolved")" = "$(cd "$venv/bin" && pwd -P)/gate" ]; then
    say "gate is on PATH: $resolved"
elif on_path "$local_bin"; then
    if [ -e "$local_bin/gate" ] && [ ! -L "$local_bin/gate" ]; then
        say "warning: $local_bin/gate exists and is not a symlink; leaving it alone"
        say "gate is at $gate"
    elif [ -L "$local_bin/gate" ] && [ "$(readlink "$local_bin/gate")" = "$gate" ]; then
        say "gate is on PATH: $local_bin/gate -> $gate"
    else
        mkdir -p "$local_bin"
        ln -sfn "$gate" "$local_bin/gate"
        say "linked $local_bin/gate -> $gate"
        resolved="$(command -v gate 2>/dev/null || true)"
        if [ "$resolved" != "$local_bin/gate" ]; then
            say "warning: another gate comes first on PATH: $resolved"
        fi
    fi
else
    say "gate is not on PATH. Either add the venv to PATH (e.g. in ~/.bashrc or ~/.zshrc):"
    say "    export PATH=\"$venv/bin:\$PATH\""
    say "or link it into a directory on PATH:"
    say "    mkdir -p ~/.local/bin && ln -s \"$gate\" ~/.local/bin/gate   # and put ~/.local/bin on PATH"
    say "(the hooks need neither: they run gate through ~/.local/share/memory-gate/hook, by absolute path)"
fi

"$gate" install --launcher-only | sed 's/^/install.sh: /'

# --- 3. wire, 4. check ----------------------------------------------------------------------------------------

# The project's root as gate finds it (git top-level, else the directory), to tell it from this checkout.
project_root() { (cd "$1" && { git rev-parse --show-toplevel 2>/dev/null || pwd; }) | sed 's:/*$::'; }
if [ "$wire" = yes ] && [ "$(cd "$(project_root "$project")" && pwd -P)" = "$(cd "$repo" && pwd -P)" ]; then
    # Wiring memory-gate's own checkout would leave .claude/ in it: never the default, refused when asked.
    [ "$project_given" = yes ] && die "$project is memory-gate's own checkout, not a project to gate" \
        "name your project: ./install.sh ~/path/to/project (to gate this checkout anyway: .venv/bin/gate install --scope local)"
    wire="no"
    wire_skipped="checkout"
    say "gate is set up; no project wired (run here, the project would be memory-gate's own checkout)"
    say "to gate your project:  ./install.sh ~/path/to/your/project   (or: gate install, run in the project)"
    say "to see it work first:  $gate demo"
fi

if [ "$wire" = yes ] && [ "$project_given" = no ] && [ "$(cd "$(project_root "$project")" && pwd -P)" = "$(cd "$HOME" && pwd -P)" ]; then
    # The home directory's .claude/settings.json is the user settings: wiring it would gate every project.
    wire="no"
    wire_skipped="home"
    say "gate is set up; no project wired (run in your home directory, whose .claude/settings.json is your user"
    say "settings: every project would be gated)"
    say "to gate your project:  ./install.sh ~/path/to/your/project   (every project on purpose: --scope user)"
    say "to see it work first:  $gate demo"
fi

if [ "$wire" = no ]; then
    [ -n "$wire_skipped" ] ||
        say "not wiring any project (--no-wire / GATE_INSTALL_NO_WIRE); later: $gate install --project DIR"
    "$gate" config check >/dev/null || die "gate's settings are invalid" "$gate config check"
    say "done"
    exit 0
fi

if [ "$scope" = user ]; then
    say "wiring the hooks into your user settings (user scope: every project)"
else
    say "wiring the hooks into $project ($scope scope)"
fi
step="wiring the hooks"
"$gate" install --project "$project" --scope "$scope" --agent "$agent"
say "checking with gate doctor"
step="checking with gate doctor (the hooks are wired)"
status=0
"$gate" doctor --project "$project" --agent "$agent" || status=$?
if [ "$status" = 0 ]; then
    say "done: gate is wired into $project"
    say "see what it does, on a recorded sample session: $gate demo"
elif [ "$status" -ge 128 ]; then # doctor itself was interrupted (it exits 130 on Ctrl-C): no problem was found
    printf 'install.sh: interrupted while %s; check it later: %s doctor --project %s\n' "$step" "$gate" "$project" >&2
    exit "$status"
else
    die "gate doctor found a problem (above)" "fix it, then run: $gate doctor --project $project"
fi
