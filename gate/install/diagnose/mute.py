"""Whether the project (or the current session) is muted: the user's choice, so information, but said, since
a muted project looks like a gate that does nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gate.install.diagnose.base import Check
from gate.memory.cues.triggers import format_time
from gate.paths import ProjectPaths
from gate.session.mute import project_mute


def _session_muted(session: str) -> bool:
    from gate.session.ledger import ledger_path

    try:
        with open(ledger_path(session), encoding="utf-8") as handle:
            return bool(json.load(handle).get("muted"))
    except (OSError, ValueError, AttributeError):
        return False


def mute_state(root: Path) -> list[Check]:
    checks = []
    record = project_mute(ProjectPaths.for_cwd(root))
    if record is not None:
        until = record.get("until")
        ends = f"until {format_time(until)}" if isinstance(until, int | float) else "until `gate unmute`"
        checks.append(
            Check(
                "mute",
                "info",
                f"this project is muted {ends}: every gate stays silent (no recall, no write-back check)",
                "`gate unmute` lets the gates speak again",
                {"muted": "project", "until": format_time(until) if isinstance(until, int | float) else None},
            )
        )
    session = os.environ.get("CLAUDE_CODE_SESSION_ID", "")
    if session and _session_muted(session):
        checks.append(
            Check(
                "mute",
                "info",
                f"this session ({session}) is muted: its gates stay silent",
                "`gate unmute --session` lets them speak again",
                {"muted": "session", "session": session},
            )
        )
    return checks
