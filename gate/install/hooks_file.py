"""The hooks file of an agent that keeps Claude Code's shape (`{"hooks": {"EVENT": [{"matcher", "hooks"}]}}`):
Codex CLI's hooks.json, Gemini CLI's settings.json. Planning gate's entries in and out of it is the same for
each; what differs (the file's place, the events, the command, the agent's own allow-rule file) stays in the
agent's host (gate/hosts/<agent>/install.py). Cold path."""

from __future__ import annotations

import os
from pathlib import Path

from gate.errors import GateError
from gate.install import files, wiring
from gate.install.commands import Plan
from gate.install.wiring import EventSpec


def quoted(text: str) -> str:
    """A double-quoted string as Starlark and TOML both read it (backslashes and quotes escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _check(path: Path, text: str | None) -> None:
    if text is not None and text.strip():
        files.check_json(path, text)


def plan_install(scope: str, path: Path, user_path: Path, events: tuple[EventSpec, ...], command: str,
                 agent: str, what_user_file_is: str) -> Plan:
    """gate's entries, each event running `command`, merged into the scope's hooks file. A project that is the
    user's own folder would write the user's file as if it were the project's: refused, nothing written."""
    if scope == "project" and os.path.realpath(path) == os.path.realpath(user_path):
        raise GateError(
            f"{what_user_file_is}; nothing was written",
            hint="run it in your project's directory, or --scope user to gate every project",
        )
    before = files.read_text(path)
    _check(path, before)
    try:
        after = wiring.merge(before, dict.fromkeys((spec.event for spec in events), command), events)
    except wiring.SettingsShapeError as error:
        raise GateError(
            f"{path}: {error}; nothing was changed",
            f'{agent} expects {{"hooks": {{"EVENT": [{{"hooks": [...]}}]}}}}; fix the file, then run this again',
        ) from None
    return Plan(scope, path, before, after)


def plan_uninstall(scope: str, path: Path) -> Plan:
    """gate's entries out of the scope's hooks file; the file removed when gate created it and nothing else is
    left."""
    before = files.read_text(path)
    if before is None or not before.strip():
        return Plan(scope, path, before, before)
    _check(path, before)
    after: str | None = wiring.unmerge(before)
    from gate.install import jsonedit

    if after != before and jsonedit.loads_strict(after.removeprefix("\ufeff")) == {} and files.was_created(path):
        after = None
    return Plan(scope, path, before, after)
