"""This machine's hook launcher: the one file a committed project settings file runs gate through.

A project's `.claude/settings.json` is usually committed, so the command wired there must name no path of any
one machine. It names `$HOME/.local/share/memory-gate/hook`, resolved when the hook runs; that small shell
script, written by `gate install` (and `install.sh`) on each machine, runs that machine's interpreter. Where it
is missing — a teammate without gate — the committed command exits 0 (at SessionStart with one line Claude Code
shows the user, saying gate is not installed), and the session goes on (fail open). The location is fixed under
$HOME (not XDG_DATA_HOME, not GATE_HOME): Claude Code may be started from an environment that sets neither, and
the committed command must find the same file whatever the shell.

The interpreter runs with `-I -S` and an explicit sys.path: `site` (venv detection, .pth files, sitecustomize)
costs a hook ~2.5 ms of its ~20, and `-I` keeps the session's cwd, PYTHONPATH and the user site out. The path
is the few directories the hook imports from (gate, tantivy, PyStemmer), worked out when the launcher is
written; `gate install` rewrites it when they move. Where it cannot be worked out (the interpreter is gone), the
command falls back to the plain `-P` form, which finds them through `site`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

from gate.install import files

# Relative to $HOME; the committed command spells the same path (gate.install.wiring.portable_command).
RELATIVE = ".local/share/memory-gate/hook"
ENTRY = "from gate.hook import entry; entry()"
PLAIN_ENTRY = "from gate.hook import main; main()"  # under `site`, for an interpreter that cannot be asked
_PYTHON_LINE = "python="
# What a hook process imports beyond the standard library (tests/test_hot_path.py holds it to these).
HOOK_IMPORTS = ("gate", "tantivy", "Stemmer")


def path() -> Path:
    return Path(os.path.expanduser("~")) / RELATIVE


def hook_import_roots() -> list[str]:
    """The directories this process imports the hook's modules from, in sys.path order (an editable install's
    own finder may serve gate from outside sys.path: then the package's parent directory is added last)."""
    import importlib.util

    roots = []
    for name in HOOK_IMPORTS:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            continue
        root = os.path.dirname(os.path.abspath(spec.origin))
        roots.append(os.path.dirname(root) if spec.submodule_search_locations else root)
    entries = [os.path.abspath(entry) for entry in sys.path if entry]
    ordered = [entry for entry in dict.fromkeys(entries) if entry in roots]
    return ordered + [root for root in dict.fromkeys(roots) if root not in ordered]


@cache
def import_path(python: str) -> tuple[str, ...] | None:
    """The directories a hook under this interpreter imports from, beyond its standard library; None when the
    interpreter cannot be asked (missing, broken, or its gate is older than this function)."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        found = hook_import_roots()
    else:
        probe = "import json; from gate.install.launcher import hook_import_roots as f; print(json.dumps(f()))"
        try:
            done = subprocess.run(
                [python, "-P", "-c", probe], capture_output=True, text=True, timeout=60, cwd=os.path.expanduser("~")
            )
            found = json.loads(done.stdout) if done.returncode == 0 else []
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
    if not isinstance(found, list) or not any(os.path.isfile(os.path.join(str(p), "gate", "hook.py")) for p in found):
        return None
    return tuple(str(p) for p in found)


def entry_code(path: tuple[str, ...] | list[str]) -> str:
    """The -c code of a hook under `-I -S`: the hook's import directories after the standard library."""
    return f"import sys; sys.path += {json.dumps(list(path))}; {ENTRY}"  # JSON strings are Python's too


def hook_argv(python: str) -> list[str]:
    """How a hook process runs under this interpreter (the launcher, and local or user scope settings)."""
    path = import_path(python)
    if path is None:
        return [python, "-P", "-c", PLAIN_ENTRY]
    return [python, "-I", "-S", "-c", entry_code(path)]


# Said at SessionStart where the launcher's interpreter is gone (in a JSON string inside '...': no quote in it).
GONE = (
    "memory-gate: the Python environment of gate on this machine was moved or deleted, so its hooks do nothing; "
    "run gate install again from the environment gate is installed in"
)


def text(python: str) -> str:
    """The launcher for an interpreter. It fails open too: a venv deleted since gives exit 0 and one line."""
    switches = " ".join(shlex.quote(arg) for arg in hook_argv(python)[1:])
    return (
        "#!/bin/sh\n"
        "# memory-gate's hook launcher on this machine, written by `gate install`. Project settings files\n"
        "# (.claude/settings.json, usually committed) run gate through this file, so they name no path of\n"
        "# any one machine. Rewritten by every `gate install`; safe to delete (`gate install` puts it back).\n"
        f"{_PYTHON_LINE}{shlex.quote(python)}\n"
        'if [ -x "$python" ]; then\n'
        f'    exec "$python" {switches} "$@"\n'  # "$@": the agent it serves (`--agent codex`)
        "fi\n"
        "event=$(cat 2>/dev/null)  # drain the event: Claude Code writes it whether or not we read it\n"
        "echo \"memory-gate: $python does not exist (gate's environment was moved or deleted), so the hooks do"
        ' nothing; run gate install again from the environment gate is installed in" >&2\n'
        "# at session start, one line Claude Code shows the user (stderr it shows only in --debug)\n"
        "case $event in *'\"hook_event_name\":\"SessionStart\"'*|*'\"hook_event_name\": \"SessionStart\"'*)\n"
        f"    echo '{{\"systemMessage\":\"{GONE}\"}}' ;;\n"
        "esac\n"
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
