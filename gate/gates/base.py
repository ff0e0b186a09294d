"""What every gate receives and returns (hot path).

Plain classes rather than dataclasses: importing dataclasses (and inspect with it) and generating each
class's methods costs the hook several milliseconds per process, which the benchmark counts.
"""

from __future__ import annotations

from gate.memo import cached_property  # without functools (gate/memo.py)
from gate.rules import load_rules

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.memory.cues.shards import Table
    from gate.memory.index.read import MemoryIndex
    from gate.paths import ProjectPaths


class HookContext:
    def __init__(
        self,
        event: dict[str, Any],
        event_name: str,
        session_id: str,
        paths: ProjectPaths,
        settings: dict[str, Any],
        transcript_end: int | None = None,
        rules_overlay: str | None = None,
    ) -> None:
        self.event = event
        self.event_name = event_name
        self.session_id = session_id
        self.paths = paths
        self.settings = settings
        # `gate replay` only: the transcript as it was when the recorded hook ran (a byte offset into it), and
        # a rules directory laid over all the others (a policy under test).
        self.transcript_end = transcript_end
        self.rules_overlay = rules_overlay

    @property
    def transcript_path(self) -> str | None:
        value = self.event.get("transcript_path")
        return value if isinstance(value, str) and value else None

    def rules(self, name: str) -> dict[str, Any]:
        return load_rules(name, self.paths.root, self.rules_overlay)

    @cached_property
    def cue_table(self) -> Table:
        """The project's cue table (gate/memory/cues/shards.py), loaded once per event whoever asks first."""
        from gate.memory.cues.load import load
        from gate.memory.cues.shards import defaults_from

        return load(self.paths, defaults_from(self.rules("triggers")))

    def finish(self) -> None:
        """After the gate's answer: what it read that the next hook can read back (the index's kept reads)."""
        index = self.__dict__.get("index")
        if index is not None:
            index.save_kept_reads()

    @cached_property
    def index(self) -> MemoryIndex:
        from gate.memory.index.read import MemoryIndex  # PreCompact and plain Stops never open the index

        return MemoryIndex(self.paths)


class Outcome:
    """A gate's answer: the JSON to print (or None) and the audit record's fields."""

    def __init__(
        self,
        decision: str,  # fired | skipped | blocked | allowed | marked
        reason: str,  # reason code, e.g. FIRED_TOPIC_SHIFT
        output: dict[str, Any] | None = None,
        gate: str = "",
        delivered: list[str] | None = None,
        suppressed: list[str] | None = None,
        dropped: list[str] | None = None,
        chars: int = 0,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.decision = decision
        self.reason = reason
        self.output = output
        self.gate = gate
        self.delivered = delivered or []
        self.suppressed = suppressed or []
        self.dropped = dropped or []
        self.chars = chars
        self.extra = extra or {}

    def __repr__(self) -> str:
        return f"Outcome({self.decision!r}, {self.reason!r})"


def additional_context(event_name: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
