"""The search the agent must run, for `gate stats`: how often recall asked for one, how often the agent searched
(on its own or after a refusal or a reminder), what its searches found and what it opened.

Read from the audit: the recall gate's prompt records carry `search_asked`; the PreToolUse records carry
`search_first` ("seen": the turn's `gate search` / `gate show` call, "refused", "reminded"); the agent's own
runs are AgentSearch / AgentShow records of gate agent_search (gate/session/agent_search.py).
"""

from __future__ import annotations

from typing import Any

from gate.stats.select import ids

GATE = "agent_search"


def agent_search_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    asked = [r for r in records if r.get("event") == "UserPromptSubmit" and r.get("search_asked") is True]
    checks = [str(r.get("search_first")) for r in records if r.get("event") == "PreToolUse" and r.get("search_first")]
    searches = [r for r in records if r.get("gate") == GATE and r.get("event") == "AgentSearch"]
    shows = [r for r in records if r.get("gate") == GATE and r.get("event") == "AgentShow"]
    found = [memory_id for r in searches for memory_id in ids(r.get("delivered"))]
    opened = [memory_id for r in shows for memory_id in ids(r.get("opened"))]
    return {
        "asked": len(asked),
        "searched_when_asked": checks.count("seen"),
        "refused": checks.count("refused"),
        "reminded": checks.count("reminded"),
        "searches": len(searches),
        "searches_asked": sum(1 for r in searches if r.get("asked") is True),
        "searches_with_hits": sum(1 for r in searches if ids(r.get("delivered"))),
        "found": len(found),
        "distinct_found": len(set(found)),
        "shows": len(shows),
        "opened": len(set(opened)),
        "opened_of_found": len(set(opened) & set(found)),
    }


def render_line(figures: dict[str, Any]) -> str | None:
    """One line of the text report, or None when the agent was never asked and never searched."""
    if not (figures["asked"] or figures["searches"] or figures["shows"]):
        return None
    nudged = []
    if figures["refused"]:
        nudged.append(f"{figures['refused']} refused a change first")
    if figures["reminded"]:
        nudged.append(f"{figures['reminded']} reminded")
    return (
        f"Agent searches: asked at {_n(figures['asked'], 'prompt')} → searched in {figures['searched_when_asked']}"
        + (f" ({', '.join(nudged)})" if nudged else "")
        + f" · {_n(figures['searches'], 'search', 'searches')} found {_n(figures['found'], 'memory', 'memories')} "
        f"({figures['distinct_found']} distinct) · opened {figures['opened']} with `gate show`"
    )


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"
