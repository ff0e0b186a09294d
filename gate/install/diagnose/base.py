"""What every doctor check shares: a check's result, one wired hook command, and the settings files
Claude Code merges for the project."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.install import files, jsonedit, wiring

PLUGIN_NAME = "memory-gate"


PLUGIN_COMMAND = '/bin/sh "${CLAUDE_PLUGIN_ROOT}/hooks/run"'


@dataclass
class Check:
    check: str
    status: str  # ok | info | warn | fail
    message: str
    hint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Wired:
    """One command wired for one event, and where."""

    event: str
    command: str
    source: str  # a settings file path, or "plugin memory-gate@MARKET"
    timeout: int
    env: dict[str, str] = field(default_factory=dict)  # what Claude Code adds for plugin hooks
    matcher: str | None = None


@dataclass
class Settings:
    """The settings files Claude Code merges for this project, parsed (None: missing or unreadable)."""

    paths: dict[str, Path]
    data: dict[str, Any | None]
    errors: dict[str, str]

    @classmethod
    def read(cls, root: Path) -> Settings:
        paths = files.all_settings_paths(root)
        data: dict[str, Any | None] = {}
        errors: dict[str, str] = {}
        for scope, path in paths.items():
            data[scope] = None
            try:
                text = files.read_text(path)
            except Exception as error:  # not UTF-8: reported, not fatal
                errors[scope] = str(error)
                continue
            if text is None or not text.strip():
                continue
            try:
                data[scope] = jsonedit.loads_strict(text.removeprefix("\ufeff"))
            except jsonedit.JSONSyntaxError as error:
                errors[scope] = str(error)
        return cls(paths, data, errors)

    def merged(self, key: str) -> Any:
        """A top-level value as Claude Code resolves it: local over project over user."""
        value = None
        for scope in ("user", "project", "local"):
            doc = self.data.get(scope)
            if isinstance(doc, dict) and key in doc:
                value = doc[key]
        return value

    def enabled_plugins(self) -> dict[str, bool]:
        enabled: dict[str, bool] = {}
        for scope in ("user", "project", "local"):
            doc = self.data.get(scope)
            plugins = doc.get("enabledPlugins") if isinstance(doc, dict) else None
            if isinstance(plugins, dict):
                enabled.update({str(k): bool(v) for k, v in plugins.items()})
        return enabled


def event_order(event: str) -> int:
    return wiring.EVENT_NAMES.index(event) if event in wiring.EVENT_NAMES else len(wiring.EVENT_NAMES)


def dedupe(checks: list[Check]) -> list[Check]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for check in checks:
        if (check.status, check.message) not in seen:
            seen.add((check.status, check.message))
            unique.append(check)
    return unique
