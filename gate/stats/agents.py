"""Which coding agent the hooks served, for `gate stats`: one project's memory reaches every agent that works on
it (Claude Code, Codex CLI), so the figures say what each was given and how often each was held. An audit
record names its agent (`agent`, gate/hosts/); a record without one is Claude Code's, whose hooks wrote none
before the other agents came."""

from __future__ import annotations

from typing import Any

from gate.stats.select import ids

DEFAULT_AGENT = "claude-code"


def agent_of(record: dict[str, Any]) -> str:
    agent = record.get("agent")
    return agent if isinstance(agent, str) and agent else DEFAULT_AGENT


def agent_figures(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per agent: its sessions, hook evaluations, memories delivered, write-back blocks and reminders."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        figures = out.setdefault(agent_of(record), {"sessions": set(), "evaluations": 0, "delivered": 0,
                                                    "blocks": 0, "reminders": 0})
        figures["evaluations"] += 1
        if record.get("session"):
            figures["sessions"].add(str(record["session"]))
        if record.get("decision") == "fired":
            figures["delivered"] += len(ids(record.get("delivered")))
        figures["blocks"] += record.get("reason") == "BLOCKED_WRITEBACK"
        figures["reminders"] += record.get("reason") == "REMINDED_WRITEBACK"
    return {agent: {**figures, "sessions": len(figures["sessions"])} for agent, figures in sorted(out.items())}


def render_line(figures: dict[str, dict[str, int]]) -> str | None:
    """"Agents: claude-code …; codex …" — only when more than one agent is in the records."""
    if len(figures) < 2:
        return None
    def n(count: int, one: str, many: str) -> str:
        return f"{count} {one if count == 1 else many}"

    parts = [f"{agent} {n(f['sessions'], 'session', 'sessions')}, {n(f['delivered'], 'memory', 'memories')} "
             f"delivered, {n(f['blocks'], 'block', 'blocks')}, {n(f['reminders'], 'reminder', 'reminders')}"
             for agent, f in figures.items()]
    return "Agents: " + "; ".join(parts)
