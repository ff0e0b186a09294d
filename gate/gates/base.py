"""What every gate receives and returns (hot path)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from gate.paths import ProjectPaths
from gate.rules import load_rules


@dataclass
class HookContext:
    event: dict[str, Any]
    event_name: str
    session_id: str
    paths: ProjectPaths
    settings: dict[str, Any]

    @property
    def transcript_path(self) -> str | None:
        value = self.event.get("transcript_path")
        return value if isinstance(value, str) and value else None

    def rules(self, name: str) -> dict[str, Any]:
        return load_rules(name, self.paths.root)

    @cached_property
    def index(self):
        from gate.memory.index import MemoryIndex

        return MemoryIndex(self.paths)


@dataclass
class Outcome:
    """A gate's answer: the JSON to print (or None) and the audit record's fields."""

    decision: str  # fired | skipped | blocked | allowed | marked | failed_open
    reason: str  # reason code, e.g. FIRED_TOPIC_SHIFT
    output: dict[str, Any] | None = None
    gate: str = ""
    delivered: list[str] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    chars: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def additional_context(event_name: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
