"""Figures of the gates that inject memory into the context: recall (UserPromptSubmit), session start and
post-compaction re-injection (SessionStart), and any later injecting gate (anchors on PreToolUse)."""

from __future__ import annotations

from collections import Counter
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
    others = [
        str(r.get("gate"))
        for r in records
        if r.get("gate") not in INJECTING_GATES and r.get("decision") == "fired" and ids(r.get("delivered"))
    ]
    names = [*INJECTING_GATES, *dict.fromkeys(others)]
    per_gate = {gate: gate_figures([r for r in records if r.get("gate") == gate]) for gate in names}
    prompts = [r for r in records if r.get("event") == "UserPromptSubmit"]
    per_gate["recall"]["prompts"] = len(prompts)
    injecting = [r for r in records if r.get("gate") in names]
    fires = [r for r in injecting if r.get("decision") == "fired"]
    delivered = [memory_id for r in fires for memory_id in ids(r.get("delivered"))]
    sessions = {r.get("session") for r in records}
    chars = int(sum(number(r.get("chars")) for r in fires))
    totals = {
        "fires": len(fires),
        "delivered": len(delivered),
        "distinct_delivered": len(set(delivered)),
        "chars": chars,
        "tokens": chars // CHARS_PER_TOKEN,
        "chars_per_fire": round(chars / len(fires)) if fires else 0,
        "chars_per_session": round(chars / len(sessions)) if sessions else 0,
        "tokens_per_session": round(chars / CHARS_PER_TOKEN / len(sessions)) if sessions else 0,
    }
    return {"gates": per_gate, "totals": totals}
