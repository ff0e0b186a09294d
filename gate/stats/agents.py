"""Which coding agent the hooks served and which wrote what, for `gate stats`: one project's memory reaches every
agent that works on it (Claude Code, Codex CLI, Gemini CLI), so the figures say what each was given, how often
each was held, and how many memories each stored. An audit record names its agent (`agent`, gate/hosts/); a hook
record without one is Claude Code's, whose hooks wrote none before the other agents came. A memory an agent
stored is one record of its own (event Remember, written by `gate remember` in that agent's shell, which names
the agent always: gate/hosts/shell.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gate.stats.select import ids

DEFAULT_AGENT = "claude-code"
WRITE_EVENT = "Remember"  # gate/commands/remember.py


def is_write(record: dict[str, Any]) -> bool:
    """A memory stored by an agent, not a hook's evaluation."""
    return record.get("event") == WRITE_EVENT


def agent_of(record: dict[str, Any]) -> str:
    agent = record.get("agent")
    return agent if isinstance(agent, str) and agent else DEFAULT_AGENT


def agent_figures(records: list[dict[str, Any]], writes: Sequence[dict[str, Any]] = ()) -> dict[str, dict[str, int]]:
    """Per agent: its sessions, hook evaluations, memories delivered, write-back blocks and reminders (from
    `records`, the hooks'), and memories written (from `writes`, the Remember records)."""
    out: dict[str, dict[str, Any]] = {}

    def of(agent: str) -> dict[str, Any]:
        return out.setdefault(agent, {"sessions": set(), "evaluations": 0, "delivered": 0, "blocks": 0,
                                      "reminders": 0, "written": 0})

    for record in writes:
        figures = of(agent_of(record))
        figures["written"] += 1
        if record.get("session"):
            figures["sessions"].add(str(record["session"]))
    for record in records:
        figures = of(agent_of(record))
        figures["evaluations"] += 1
        if record.get("session"):
            figures["sessions"].add(str(record["session"]))
        if record.get("decision") == "fired":
            figures["delivered"] += len(ids(record.get("delivered")))
        figures["blocks"] += record.get("reason") == "BLOCKED_WRITEBACK"
        figures["reminders"] += record.get("reason") == "REMINDED_WRITEBACK"
    return {agent: {**figures, "sessions": len(figures["sessions"])} for agent, figures in sorted(out.items())}


def render_line(figures: dict[str, dict[str, int]]) -> str | None:
    """"Agents: claude-code …; codex …" — when another agent than Claude Code is in the records (a Claude Code
    user alone learns nothing from it)."""
    if set(figures) <= {DEFAULT_AGENT}:
        return None
    def n(count: int, one: str, many: str) -> str:
        return f"{count} {one if count == 1 else many}"

    parts = [f"{agent} {n(f['sessions'], 'session', 'sessions')}, {n(f['delivered'], 'memory', 'memories')} "
             f"delivered, {n(f['written'], 'memory', 'memories')} written, {n(f['blocks'], 'block', 'blocks')}, "
             f"{n(f['reminders'], 'reminder', 'reminders')}"
             for agent, f in figures.items()]
    return "Agents: " + "; ".join(parts)
