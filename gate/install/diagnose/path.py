"""Whether `gate` is on PATH for the user's own shell."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from gate.install.diagnose.base import Check


def path_info() -> list[Check]:
    found = shutil.which("gate")
    if found:
        return [Check("path", "ok", f"`gate` is on PATH: {found}")]
    return [
        Check(
            "path",
            "info",
            "`gate` is not on PATH; gate's messages name it by absolute path, so the agent can still run it",
            f"for your own shell: ln -s {Path(sys.executable).parent / 'gate'} ~/.local/bin/gate",
        )
    ]
