"""Figures of the gates that inject memory into the context: recall (UserPromptSubmit), session start and
post-compaction re-injection (SessionStart), and any later injecting gate (anchors on PreToolUse)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from gate.render import CHARS_PER_TOKEN
from gate.stats.select import ids, number

# Gates whose "fired" records put memory ids into the context, in report order; any other gate seen firing
# with deliveries (a path-anchor gate, say) is reported after them under its own name.
INJECTING_GATES = ("recall", "session_start")


def _rate(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole else None


def gate_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One gate's evaluations: fires and skips by reason, what it delivered, suppressed and dropped, its cost."""
    fires = [r for r in records if r.get("decision") == "fired"]
    delivered = [memory_id for r in fires for memory_id in ids(r.get("delivered"))]
    sessions = {r.get("session") for r in records}
    chars = int(sum(number(r.get("chars")) for r in fires))
    return {
        "evaluations": len(records),
        "fires": len(fires),
        "fire_rate": _rate(len(fires), len(records)),
        "fires_by_reason": dict(Counter(str(r.get("reason")) for r in fires).most_common()),
        "skips_by_reason": dict(
            Counter(str(r.get("reason")) for r in records if r.get("decision") != "fired").most_common()
        ),
        "delivered": len(delivered),
        "distinct_delivered": len(set(delivered)),
        # one line each in the session-start index: shown, not delivered in full (their full delivery is to come)
        "indexed": sum(len(ids(r.get("indexed"))) for r in fires),
        "suppressed": sum(len(ids(r.get("suppressed"))) for r in records),
        "dropped_over_budget": sum(len(ids(r.get("dropped"))) for r in records),
        "chars": chars,
        "tokens": chars // CHARS_PER_TOKEN,
        "chars_per_fire": round(chars / len(fires)) if fires else 0,
        "chars_per_session": round(chars / len(sessions)) if sessions else 0,
        "sessions": len(sessions),
    }


def injection_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per injecting gate, plus totals across them (a memory delivered by two gates counts once as distinct)."""
    by_gate: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:  # one pass: logs run to a hundred thousand records
        by_gate[str(record.get("gate"))].append(record)
    others = [
        gate
        for gate, of_gate in by_gate.items()
        if gate not in INJECTING_GATES and any(r.get("decision") == "fired" and r.get("delivered") for r in of_gate)
    ]
    names = [*INJECTING_GATES, *others]
    per_gate = {gate: gate_figures(by_gate.get(gate, [])) for gate in names}
    per_gate["recall"]["prompts"] = sum(1 for r in records if r.get("event") == "UserPromptSubmit")
    injecting = [r for gate in names for r in by_gate.get(gate, [])]
    fires = [r for r in injecting if r.get("decision") == "fired"]
    delivered = [memory_id for r in fires for memory_id in ids(r.get("delivered"))]
    sessions = {r.get("session") for r in records}
    chars = int(sum(number(r.get("chars")) for r in fires))
    at_prompts = [m for r in fires if r.get("event") == "UserPromptSubmit" for m in ids(r.get("delivered"))]
    totals = {
        "fires": len(fires),
        "delivered": len(delivered),
        "delivered_at_prompts": len(at_prompts),
        "delivered_at_session_start": sum(
            len(ids(r.get("delivered"))) for r in fires if r.get("event") == "SessionStart"
        ),
        # what the agent's own `gate search` returned (gate/session/agent_search.py): delivered as a gate's is
        "delivered_by_agent_search": sum(
            len(ids(r.get("delivered"))) for r in fires if r.get("gate") == "agent_search"
        ),
        "indexed": sum(len(ids(r.get("indexed"))) for r in fires),
        "distinct_delivered": len(set(delivered)),
        "chars": chars,
        "tokens": chars // CHARS_PER_TOKEN,
        "chars_per_fire": round(chars / len(fires)) if fires else 0,
        "chars_per_session": round(chars / len(sessions)) if sessions else 0,
        "tokens_per_session": round(chars / CHARS_PER_TOKEN / len(sessions)) if sessions else 0,
    }
    return {"gates": per_gate, "totals": totals}
