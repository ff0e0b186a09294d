"""Whether `gate` is on PATH for the user's own shell."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from gate.install.diagnose.base import Check


def _path_note() -> str:
    local_bin = os.path.expanduser("~/.local/bin")
    if local_bin in os.environ.get("PATH", "").split(os.pathsep):
        return " (~/.local/bin is on your PATH already)"
    return (
        "; ~/.local/bin is not on your PATH yet: add `export PATH=\"$HOME/.local/bin:$PATH\"` to ~/.bashrc or "
        "~/.zshrc, then open a new shell"
    )


def path_info() -> list[Check]:
    found = shutil.which("gate")
    script = shlex.quote(str(Path(sys.executable).parent / "gate"))
    if found:
        return [Check("path", "ok", f"`gate` is on PATH: {found}")]
    return [
        Check(
            "path",
            "info",
            "`gate` is not on PATH; gate's messages name it by absolute path, so the agent can still run it",
            f"for your own shell: mkdir -p ~/.local/bin && ln -s {script} ~/.local/bin/gate" + _path_note(),
        )
    ]
