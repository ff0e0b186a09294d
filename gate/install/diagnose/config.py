"""The settings layers, checked as `gate config check` does."""

from __future__ import annotations

from pathlib import Path

from gate.install.diagnose.base import Check


def config_health(root: Path) -> list[Check]:
    from gate.commands.config import check

    problems = check(root)
    if problems:
        return [Check("config", "fail", problem) for problem in problems]
    return [Check("config", "ok", "settings are valid")]
