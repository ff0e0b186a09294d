"""This machine's hook launcher: the one file a committed project settings file runs gate through.

A project's `.claude/settings.json` is usually committed, so the command wired there must name no path of any
one machine. It names `$HOME/.local/share/memory-gate/hook`, resolved when the hook runs; that small shell
script, written by `gate install` (and `install.sh`) on each machine, runs that machine's interpreter. Where it
is missing — a teammate without gate — the committed command exits 0 with one line on stderr saying how to
set gate up, and the session goes on (fail open). The location is fixed under $HOME (not XDG_DATA_HOME, not
GATE_HOME): Claude Code may be started from an environment that sets neither, and the committed command must
find the same file whatever the shell.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from gate.install import files

# Relative to $HOME; the committed command spells the same path (gate.install.wiring.portable_command).
RELATIVE = ".local/share/memory-gate/hook"
ENTRY = "from gate.hook import main; main()"
_PYTHON_LINE = "python="


def path() -> Path:
    return Path(os.path.expanduser("~")) / RELATIVE


def text(python: str) -> str:
    """The launcher for an interpreter. It fails open too: a venv deleted since gives exit 0 and one line."""
    return (
        "#!/bin/sh\n"
        "# memory-gate's hook launcher on this machine, written by `gate install`. Project settings files\n"
        "# (.claude/settings.json, usually committed) run gate through this file, so they name no path of\n"
        "# any one machine. Rewritten by every `gate install`; safe to delete (`gate install` puts it back).\n"
        f"{_PYTHON_LINE}{shlex.quote(python)}\n"
        'if [ -x "$python" ]; then\n'
        f"    exec \"$python\" -P -c '{ENTRY}'\n"
        "fi\n"
        "cat >/dev/null 2>&1  # drain the event: Claude Code writes it whether or not we read it\n"
        "echo \"memory-gate: $python does not exist (gate's environment was moved or deleted), so the hooks do"
        ' nothing; run gate install again from the environment gate is installed in" >&2\n'
        "exit 0\n"
    )


def interpreter(launcher: Path | None = None) -> str | None:
    """The interpreter a launcher file runs, or None when there is no launcher or it cannot be read."""
    try:
        content = (launcher or path()).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for line in content.splitlines():
        if line.startswith(_PYTHON_LINE):
            try:
                words = shlex.split(line[len(_PYTHON_LINE) :])
            except ValueError:
                return None
            return words[0] if words else None
    return None


def write(python: str) -> bool:
    """Write (or rewrite) this machine's launcher for the interpreter; True when its content changed."""
    target = path()
    wanted = text(python)
    try:
        if target.read_text(encoding="utf-8") == wanted:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    files.atomic_write(target, wanted)
    target.chmod(0o755)
    return True
