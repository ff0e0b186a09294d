"""The wiring in settings files: which file wires which events, what is missing or doubled, and whether
each command can run on this machine."""

from __future__ import annotations

import os
from pathlib import Path

import gate.install.diagnose.earlier as earlier
from gate.install import launcher, wiring
from gate.install.diagnose.base import PLUGIN_COMMAND, Check, Settings, Wired, dedupe, event_order


def settings_wiring(settings: Settings) -> tuple[list[Wired], list[Check]]:
    wired: list[Wired] = []
    checks: list[Check] = []
    for scope, path in settings.paths.items():
        if scope in settings.errors:
            checks.append(
                Check(
                    "settings",
                    "fail",
                    f"{path} ({scope}) is not valid: {settings.errors[scope]}; Claude Code ignores the whole file",
                    f"fix it (python3 -m json.tool {path} shows where)",
                )
            )
            continue
        data = settings.data.get(scope)
        entries = wiring.find_gate_entries(data) if data is not None else []
        for entry in entries:
            spec = next((s for s in wiring.EVENTS if s.event == entry.event), None)
            hook = entry.group["hooks"][entry.hook_index]
            timeout = hook.get("timeout") if isinstance(hook.get("timeout"), int) else (spec.timeout if spec else 60)
            wired.append(Wired(entry.event, entry.command, str(path), timeout, {}, entry.group.get("matcher")))
        if entries:
            events = sorted({e.event for e in entries}, key=event_order)
            checks.append(Check("settings", "ok", f"{path} ({scope}) wires {', '.join(events)}"))
            commands = wiring.commands_for("project", "") if scope == "project" else None
            stale = earlier.file_check("wiring", path, scope, data, wiring.EVENTS, "gate install", commands)
            if stale is not None:
                checks.append(stale)
    return wired, checks


def coverage(wired: list[Wired], project_settings: Path | None = None) -> list[Check]:
    checks: list[Check] = []
    if not wired:
        return [
            Check(
                "wiring",
                "fail",
                "gate is not wired into Claude Code for this project: no settings file or enabled plugin runs it",
                "run `gate install` (or install the plugin: claude plugin install memory-gate@memory-gate)",
            )
        ]
    events = {w.event for w in wired}
    missing = [e for e in wiring.EVENT_NAMES if e not in events]
    if earlier.broken(missing):
        checks.append(
            Check(
                "wiring", "fail", f"not wired: {', '.join(missing)}", "run `gate install` again to rewire every event"
            )
        )
    elif not missing:
        checks.append(Check("wiring", "ok", f"every event is wired: {', '.join(wiring.EVENT_NAMES)}"))
    for spec in wiring.EVENTS:
        # Claude Code runs an identical command string once; different ones all run.
        commands = {(w.command, tuple(sorted(w.env.items()))) for w in wired if w.event == spec.event}
        if len(commands) > 1:
            sources = sorted({w.source for w in wired if w.event == spec.event})
            checks.append(
                Check(
                    "wiring",
                    "warn",
                    f"{spec.event} runs gate {len(commands)} times per event (from {'; '.join(sources)})",
                    "keep one: `gate uninstall --scope …` or disable the plugin",
                )
            )
    runnable: dict[tuple[str, str], list[str]] = {}
    for w in wired:
        if w.command != PLUGIN_COMMAND and not w.env:
            # the portable commands differ by event (SessionStart's shows a teammate a line) but run one launcher
            key = wiring.PORTABLE_COMMAND if wiring.is_portable(w.command) else w.command
            runnable.setdefault((w.source, key), []).append(w.event)
    for (source, command), events_of in runnable.items():
        problem = _cannot_run(command)
        if problem:
            what, hint = problem
            checks.append(Check("wiring", "fail", f"{', '.join(events_of)} in {source}: {what}", hint))
        elif project_settings is not None and source == str(project_settings) and not wiring.is_portable(command):
            # Works here, fails everywhere else: the file is usually committed (an older gate wrote it so).
            checks.append(
                Check(
                    "wiring",
                    "warn",
                    f"{source} names this machine's interpreter ({wiring.interpreter_of(command)}); it is usually "
                    "committed, and on a teammate's machine every hook would fail",
                    "run `gate install` in the project: it wires a command that names no machine's path",
                )
            )
    return dedupe(checks)


def _cannot_run(command: str) -> tuple[str, str] | None:
    """Why a gate command cannot run gate on this machine (and what to do), or None when it can."""
    if wiring.is_portable(command):
        path = launcher.path()
        if not path.is_file():
            return (
                f"the hooks run this machine's launcher {path}, which does not exist, so they do nothing here "
                "(they fail open); gate is not set up on this machine for this project",
                "run `gate install` in this project: it writes the launcher (the settings file stays as it is)",
            )
        python = launcher.interpreter(path)
        if python is None or not _executable(python):
            return (
                f"the launcher {path} runs {python or '(unreadable)'}, which does not exist, so the hooks do nothing",
                "run `gate install` again from the environment gate is installed in",
            )
        return None
    python = wiring.interpreter_of(command)
    if python is not None and _executable(python):
        return None
    return (
        f"the hooks run {python or command!r}, which does not exist on this machine, so every hook fails "
        "(a path of another machine, in a committed settings file? or a venv moved or deleted)",
        "run `gate install` (again, from the environment gate is installed in): project scope then wires a "
        "command that names no machine's path",
    )


def _executable(python: str) -> bool:
    return Path(python).is_file() and os.access(python, os.X_OK)
