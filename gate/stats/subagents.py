"""Subagent figures for `gate stats`: what spawned subagents were given (the task's recall and the directives,
gate/gates/recall/subagent.py) and what their own tool calls' anchors delivered, kept apart from the main
conversation's figures (a subagent's context is not the parent's)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from gate.render import CHARS_PER_TOKEN
from gate.stats.select import ids, number


def is_subagent_record(record: dict[str, Any]) -> bool:
    """A decision made for a subagent: its spawn, its own tool calls, its end."""
    return record.get("gate") == "subagent" or bool(record.get("agent_id"))


def _delivered(records: list[dict[str, Any]]) -> list[str]:
    return [memory_id for r in records if r.get("decision") == "fired" for memory_id in ids(r.get("delivered"))]


def subagent_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    mine = [r for r in records if is_subagent_record(r)]
    spawns = [r for r in mine if r.get("spawn")]
    inside = [r for r in mine if r.get("event") == "PreToolUse" and not r.get("spawn")]
    stops = [r for r in mine if r.get("event") == "SubagentStop"]
    # Where the spawn call cannot carry them (Codex), a spawn holds its memories and the child's SubagentStart
    # gives them: that is the spawn's delivery.
    starts = [r for r in mine if r.get("event") == "SubagentStart"]
    at_spawn = _delivered(spawns) + _delivered(starts)
    anchored = _delivered(inside)
    fired = [r for r in spawns + inside + starts if r.get("decision") == "fired"]
    chars = int(sum(number(r.get("chars")) for r in fired))
    agents = {(r.get("session"), r.get("agent_id")) for r in inside + stops + starts if r.get("agent_id")}
    return {
        "spawns": len(spawns),
        "spawns_fired": sum(1 for r in spawns + starts if r.get("decision") == "fired"),
        "spawns_held": sum(1 for r in spawns if r.get("decision") == "held"),
        "spawns_skipped_by_reason": dict(
            Counter(str(r.get("reason")) for r in spawns if r.get("decision") not in ("fired", "held")).most_common()
        ),
        "by_type": dict(Counter(str(r.get("agent_type") or "?") for r in spawns).most_common()),
        "delivered_at_spawn": len(at_spawn),
        "subagents_seen": len(agents),
        "tool_calls": len(inside),
        "anchor_fires": sum(1 for r in inside if r.get("decision") == "fired"),
        "delivered_by_anchors": len(anchored),
        "distinct_delivered": len(set(at_spawn + anchored)),
        "chars": chars,
        "tokens": chars // CHARS_PER_TOKEN,
        "ended": len(stops),
        "blocked": sum(1 for r in mine if r.get("decision") == "blocked"),  # must stay 0
    }
