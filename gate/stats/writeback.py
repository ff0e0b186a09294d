"""Write-back gate figures and the adoption figure: of the turns that mattered, how many ended with a decision
about memory, and was it the gate that asked or the agent that chose to.

A Stop evaluation is one of: a turn's end (consequential when it showed evidence or stored), or the
continuation after a block (ALLOW_STOP_ACTIVE), which is not a turn of its own. A block's outcome is recorded
by the next Stop of the session (extra "outcome": stored, acknowledged or ignored).

Reminders are counted apart: a turn the Stop deferred (ALLOW_DEFERRED…), the next prompt that reminded of it
(REMINDED_WRITEBACK, as the record's reason or, when the recall gate fired too, as its "reminder" field) or
withdrew it (the user's answer refuted it), a session start that carried one another session ended with
("carried_reminder"), and what the agent did about it (the next Stop's "reminder_outcome")."""

from __future__ import annotations

from collections import Counter
from typing import Any

OUTCOMES = ("stored", "acknowledged", "ignored")
CONTINUATION = "ALLOW_STOP_ACTIVE"
REMINDED = "REMINDED_WRITEBACK"


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _is_continuation(record: dict[str, Any]) -> bool:
    # A Stop that settles a block and found a store decision is the blocked turn going on, not a new turn
    # that chose to store (the turn reader spans the block), so it must not count as voluntary.
    if record.get("reason") == CONTINUATION:
        return True
    return record.get("outcome_of") == "previous_block" and record.get("reason") == "ALLOW_ALREADY_STORED"


def writeback_figures(records: list[dict[str, Any]], cap: int) -> dict[str, Any]:
    stops = [r for r in records if r.get("event") == "Stop" and r.get("gate") == "writeback"]
    turns = [r for r in stops if not _is_continuation(r)]
    blocks = [r for r in turns if r.get("reason") == "BLOCKED_WRITEBACK"]
    capped = [r for r in turns if r.get("reason") == "ALLOW_CAPPED"]
    # (a turn that stored because its prompt reminded it is the reminder's outcome, not a voluntary store)
    voluntary = [r for r in turns if r.get("reason") == "ALLOW_ALREADY_STORED" and "reminder_outcome" not in r]
    deferred = [r for r in turns if str(r.get("reason", "")).startswith("ALLOW_DEFERRED")]
    prompts = [r for r in records if r.get("event") == "UserPromptSubmit"]
    reminded = [r for r in prompts if r.get("reason") == REMINDED or r.get("reminder") == REMINDED]
    withdrawn = sum(1 for r in prompts if r.get("reminder_withdrawn") is not None)
    carried = [r for r in records if r.get("event") == "SessionStart" and r.get("carried_reminder")]
    reminder_outcomes = Counter(str(r["reminder_outcome"]) for r in stops if r.get("reminder_outcome") in OUTCOMES)
    outcomes = Counter(str(r["outcome"]) for r in stops if r.get("outcome") in OUTCOMES)
    settled = sum(outcomes.values())
    evidence = Counter(
        str(kind)
        for r in blocks + capped
        for kind in (r.get("evidence") if isinstance(r.get("evidence"), list) else [])
    )
    blocks_by_session = Counter(str(r.get("session")) for r in blocks)
    capped_sessions = {str(r.get("session")) for r in capped} | {s for s, n in blocks_by_session.items() if n >= cap}
    return {
        "stops": len(stops),
        "turns": len(turns),
        "consequential_turns": len(blocks) + len(capped) + len(voluntary) + len(deferred),
        "by_reason": dict(Counter(str(r.get("reason")) for r in stops).most_common()),
        "evidence_by_kind": dict(evidence.most_common()),
        "blocks": len(blocks),
        "outcomes": {
            **{name: outcomes.get(name, 0) for name in OUTCOMES},
            "pending": max(0, len(blocks) - settled),  # the session ended (or is still on) before the next Stop
        },
        "cap": cap,
        "capped_turns": len(capped),
        "sessions_at_cap": len(capped_sessions),
        "voluntary": {
            "stored": sum(1 for r in voluntary if r.get("store_decision") == "stored"),
            "acknowledged": sum(1 for r in voluntary if r.get("store_decision") == "acknowledged"),
        },
        "reminders": {
            "deferred_turns": len(deferred),
            "reminded": len(reminded),
            "withdrawn": withdrawn,  # the user's answer refuted the turn: no reminder
            "carried": len(carried),  # deferred as its session ended: at the next session's start
            "outcomes": {
                **{name: reminder_outcomes.get(name, 0) for name in OUTCOMES},
                "pending": max(0, len(reminded) + len(carried) - sum(reminder_outcomes.values())),
            },
            "per_100_turns": round(100 * len(reminded) / len(turns), 1) if turns else 0.0,
        },
    }


def adoption_figures(writeback: dict[str, Any], sessions: int) -> dict[str, Any]:
    """The mission's figure: the share of consequential turns that ended with a store decision, gated vs
    voluntary; and memory operations per session, gated vs voluntary (counted per turn that ran a store
    command: the audit sees turns, not single commands)."""
    consequential = writeback["consequential_turns"]
    outcomes = writeback["outcomes"]
    reminded = writeback.get("reminders", {}).get("outcomes", {})
    # gated: the block's or the reminder's question got its answer
    gated = outcomes["stored"] + outcomes["acknowledged"] + reminded.get("stored", 0) + reminded.get("acknowledged", 0)
    voluntary = writeback["voluntary"]["stored"] + writeback["voluntary"]["acknowledged"]
    stored = outcomes["stored"] + reminded.get("stored", 0) + writeback["voluntary"]["stored"]
    return {
        "consequential_turns": consequential,
        "with_store_decision": gated + voluntary,
        "share": _share(gated + voluntary, consequential),
        "gated": gated,
        "gated_share": _share(gated, consequential),
        "voluntary": voluntary,
        "voluntary_share": _share(voluntary, consequential),
        "stored": stored,
        "stored_share": _share(stored, consequential),
        "sessions": sessions,
        "memory_ops_per_session": {
            "gated": round((outcomes["stored"] + reminded.get("stored", 0)) / sessions, 2) if sessions else 0.0,
            "voluntary": round(writeback["voluntary"]["stored"] / sessions, 2) if sessions else 0.0,
        },
    }
