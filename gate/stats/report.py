"""The `gate stats` report: every figure as one JSON-ready dict, and the text a user reads in ten seconds."""

from __future__ import annotations

from typing import Any

from gate.rules import load_rules
from gate.session.audit import read_audit
from gate.stats.agent_search import GATE as AGENT_SEARCH
from gate.stats.agent_search import agent_search_figures
from gate.stats.agent_search import render_line as agent_search_line
from gate.stats.agents import agent_figures, is_write
from gate.stats.agents import render_line as agents_line
from gate.stats.health import failure_figures, latency_figures
from gate.stats.injection import injection_figures
from gate.stats.select import Selection, select
from gate.stats.store_size import store_figures
from gate.stats.subagents import is_subagent_record, subagent_figures
from gate.stats.usage import Restatement, first_deliveries, memory_titles, usage_figures
from gate.stats.writeback import adoption_figures, writeback_figures

ERROR_MESSAGE_CHARS = 100
NO_ACTIVITY = "no activity yet: no hook evaluation is in the audit log."
NO_ACTIVITY_HINT = (
    "check the wiring with `gate doctor` (it runs each hook once); `gate install` wires the hooks into Claude Code"
)


def _restatement(records: list[dict[str, Any]], selection: Selection) -> Restatement | None:
    """What a reply that restates a delivered memory is compared with: the delivered memories' titles."""
    delivered = {m for session in first_deliveries(records).values() for m in session}
    if not delivered:
        return None
    rules = load_rules("recall", selection.project_root).get("use", {})
    return Restatement(memory_titles(delivered, selection.project_root), rules)


def build(selection: Selection, *, cap: int, audit_enabled: bool = True) -> dict[str, Any]:
    everything = [r for r in read_audit() if r.get("synthetic") is not True]
    records, failures = select(everything, selection)
    # The memories agents stored (`gate remember` in an agent's shell) are no hook evaluation: counted per agent.
    writes = [r for r in records if is_write(r)]
    records = [r for r in records if not is_write(r)]
    sessions = len({r.get("session") for r in records if r.get("session")})
    writeback = writeback_figures(records, cap)
    # What subagents were given is reported apart: the main conversation's figures are the main context's.
    main = [r for r in records if not is_subagent_record(r)]
    report: dict[str, Any] = {
        "filters": selection.to_json(),
        "evaluations": len(records),
        "sessions": sessions,
        "first": records[0].get("ts") if records else None,
        "last": records[-1].get("ts") if records else None,
        "injection": injection_figures(main),
        "use": usage_figures(main, restatement=_restatement(main, selection)),
        "agent_search": agent_search_figures(main),
        "subagents": subagent_figures(records),
        "agents": agent_figures(records, writes),
        "writeback": writeback,
        "adoption": adoption_figures(writeback, sessions),
        "health": {
            "latency_ms": latency_figures(records + failures),
            **failure_figures(failures, selection),
            "store": store_figures(selection.project_root),
        },
        "empty": not records,
    }
    if not records:
        if not everything:
            report["message"] = NO_ACTIVITY
            report["hint"] = NO_ACTIVITY_HINT
            if not audit_enabled:
                report["hint"] = "auditing is off (setting `audit`); turn it on to collect activity"
        else:
            report["message"] = f"no activity for {selection.describe()}"
            report["hint"] = (
                f"{len(everything)} evaluations are logged outside it: "
                + ("check the session id (`gate trace --session X` names recent ones)" if selection.session
                   else "try --all-projects or a wider --since")
            )
    return report


# ---------------------------------------------------------------------------------------------------------------
# text

_REASON_WORDS = {
    "FIRED_TOPIC_SHIFT": "topic shift",
    "FIRED_SESSION_START": "session start",
    "FIRED_AFTER_COMPACTION": "after compaction",
    "SKIP_TRIVIAL_PROMPT": "trivial",
    "SKIP_NO_SHIFT": "no shift",
    "SKIP_SCRIPTED_PROMPT": "scripted prompt",
    "SKIP_NO_HITS": "no hits",
    "SKIP_NO_INDEX": "no index",
    "SKIP_MUTED": "muted",
    "SKIP_NOTHING_STANDING": "nothing standing",
    "SKIP_RESUMED_NOTHING_NEW": "resumed",
    "SKIP_BLOCK_CONTINUATION": "block reason",
    "SUPPRESSED_ALREADY_DELIVERED": "all hits already delivered",
}


_EVENT_WORDS = {
    "UserPromptSubmit": "prompt",
    "Stop": "stop",
    "SessionStart": "session start",
    "PreCompact": "pre-compact",
    "PreToolUse": "tool",
    "SubagentStop": "subagent stop",
    "SubagentStart": "subagent start",
    "unknown": "unparsed event",
}


def _by_reason(counts: dict[str, int]) -> str:
    return " · ".join(f"{_REASON_WORDS.get(code, code)} {n}" for code, n in counts.items()) or "none"


def _pct(share: float | None) -> str:
    return "–" if share is None else f"{round(share * 100)}%"


def _of(part: int, whole: int) -> str:
    return f"{part}/{whole} ({_pct(part / whole if whole else None)})"


def render_text(report: dict[str, Any]) -> str:
    if report["empty"]:
        lines = [f"gate stats — {report['message']}", f"hint: {report['hint']}"]
        store = report["health"]["store"]
        if store["active"]:
            lines.append(f"store: {_n(store['active'], 'active memory', _ACTIVE)} ({_counts(store['by_kind'])})")
        return "\n".join(lines)
    filters = report["filters"]
    scope = filters.get("project_root") or filters["project"] or "all projects"
    if filters["session"]:
        scope += f", session {filters['session']}"
    lines = [
        f"gate stats — {scope} · {_n(report['sessions'], 'session')}, {_n(report['evaluations'], 'evaluation')}, "
        f"{str(report['first'])[:16]} → {str(report['last'])[:16]}",
        "",
    ]
    gates = report["injection"]["gates"]
    recall = gates["recall"]
    suppressed = sum(g["suppressed"] for g in gates.values())
    dropped = sum(g["dropped_over_budget"] for g in gates.values())
    lines += [
        f"Recall gate: {_n(recall['prompts'], 'prompt')} → {recall['fires']} fired ({_pct(recall['fire_rate'])}): "
        f"{_by_reason(recall['fires_by_reason'])}",
        f"  skipped: {_by_reason(recall['skips_by_reason'])}",
        f"  suppressed by the ledger (already delivered): {suppressed} · dropped at the budget: {dropped}",
    ]
    agents = agents_line(report["agents"]) if report.get("agents") else None
    if agents:
        lines.append(agents)
    searched = agent_search_line(report["agent_search"]) if report.get("agent_search") else None
    if searched:
        lines.append(searched)
    start = gates["session_start"]
    if start["evaluations"]:
        lines.append(f"Session start: {_n(start['fires'], 'injection')} ({_by_reason(start['fires_by_reason'])}): "
                     f"{_n(start['delivered'], 'memory', _MEM)} in full, "
                     f"{_n(start.get('indexed', 0), 'index line')}")
    for name, other in gates.items():
        if name not in ("recall", "session_start", AGENT_SEARCH):  # the agent's searches: a line of their own
            lines.append(f"{name.replace('_', ' ').capitalize()}: {other['fires']} of {other['evaluations']} fired")
    totals = report["injection"]["totals"]
    lines.append(
        f"Delivered: {_n(totals['delivered'], 'memory', _MEM)} ({totals['distinct_delivered']} distinct; "
        f"{totals.get('delivered_at_prompts', 0)} at prompts, {totals.get('delivered_at_session_start', 0)} at "
        f"session start, "
        + (f"{totals['delivered_by_agent_search']} by the agent's searches, "
           if totals.get("delivered_by_agent_search") else "")
        + f"besides {_n(totals.get('indexed', 0), 'index line')}), "
        f"{totals['chars']:,} chars ≈ {totals['tokens']:,} tokens "
        f"({totals['chars_per_fire']:,} chars/fire, {totals['chars_per_session']:,} chars/session)"
    )
    use = report["use"]
    if use["examined"]:
        read = f"{_n(use['transcripts_found'], 'transcript')} read" + (
            f", {use['partial_reads']} only in part" if use["partial_reads"] else ""
        )
        lines.append(
            f"  then used: {_of(use['used'], use['examined'])} session deliveries — opened {use['opened']} · "
            f"cited {use['cited']} · acted on {use['acted_on']} · restated {use['restated']} ({read})"
        )
        by_gate = use["by_gate"]
        if len(by_gate) > 1:
            lines.append(
                "    by gate: "
                + " · ".join(f"{gate.replace('_', ' ')} {_of(g['used'], g['examined'])}" for gate, g in by_gate.items())
            )
        if use["never_used_ids"]:
            lines.append(f"  never used: {', '.join(use['never_used_ids'][:8])}")
    elif use["delivered"]:
        lines.append("  then used: unknown — no transcript found for the sessions that received memories")
    subagents = report.get("subagents") or {}
    if subagents.get("spawns") or subagents.get("tool_calls"):
        lines.append(
            f"Subagents (apart): {subagents['spawns']} spawned → {subagents['spawns_fired']} given memory for their "
            f"task ({_n(subagents['delivered_at_spawn'], 'memory', _MEM)}); "
            f"inside {_n(subagents['subagents_seen'], 'subagent')}, "
            f"{subagents['anchor_fires']} of {_n(subagents['tool_calls'], 'tool call')} anchored "
            f"{subagents['delivered_by_anchors']}; {subagents['chars']:,} chars ≈ {subagents['tokens']:,} tokens"
            + (f"; blocked {subagents['blocked']}" if subagents["blocked"] else "")
        )
    wb = report["writeback"]
    out = wb["outcomes"]
    lines += [
        "",
        f"Write-back gate: {_n(wb['turns'], 'turn')} ended, {wb['consequential_turns']} consequential",
        f"  blocked {wb['blocks']} → stored {out['stored']} · acknowledged {out['acknowledged']} · "
        f"ignored {out['ignored']}" + (f" · pending {out['pending']}" if out["pending"] else ""),
        f"  stored without being asked: {wb['voluntary']['stored']}"
        + (f" (+{wb['voluntary']['acknowledged']} said already saved)" if wb["voluntary"]["acknowledged"] else ""),
        f"  cap ({wb['cap']}/session) reached in {_n(wb['sessions_at_cap'], 'session')}, "
        f"{_n(wb['capped_turns'], 'turn')} let pass",
    ]
    rem = wb.get("reminders")
    # reminders apart from blocks (gate/gates/writeback/reminder.py)
    if rem and (rem["deferred_turns"] or rem["reminded"]):
        ro = rem["outcomes"]
        lines.append(
            f"  deferred {rem['deferred_turns']} → reminded at the next prompt {rem['reminded']} "
            + (f"(+{rem['carried']} at the next session's start) " if rem.get("carried") else "")
            + f"({rem['per_100_turns']:g} per 100 turns; {rem['withdrawn']} withdrawn by the user's answer) → "
            f"stored {ro['stored']} · acknowledged {ro['acknowledged']} · ignored {ro['ignored']}"
            + (f" · pending {ro['pending']}" if ro["pending"] else "")
        )
    adoption = report["adoption"]
    ops = adoption["memory_ops_per_session"]
    lines += [
        "",
        f"Adoption: {_of(adoption['with_store_decision'], adoption['consequential_turns'])} consequential turns "
        f"ended with a store decision — gated {adoption['gated']}, voluntary {adoption['voluntary']}",
        f"  memory operations per session: gated {ops['gated']}, voluntary {ops['voluntary']}",
    ]
    health = report["health"]
    latency = " · ".join(
        f"{_EVENT_WORDS.get(event, event)} {v['p50']:g}/{v['p95']:g}" for event, v in health["latency_ms"].items()
    )
    lines += ["", f"Health: hook latency p50/p95 ms: {latency or 'none recorded'}"]
    failed = f"  fail-opens: {health['failed_open']}"
    error = health["last_error"]
    if error:
        # The error log is not per window: its last line of this project is shown with its own time.
        label = "last error" if health["failed_open"] else "none in this window; last error ever"
        message = str(error.get("message") or "")
        if len(message) > ERROR_MESSAGE_CHARS:  # the whole of it is in the error log; here, a line to read
            message = message[: ERROR_MESSAGE_CHARS - 1] + "…"
        failed += f" — {label} {error.get('ts')} {error.get('event')}: {error.get('error')}: {message}"
    lines.append(failed)
    store = health["store"]
    lines.append(
        f"  store: {_n(store['active'], 'active memory', _ACTIVE)} — {_counts(store['by_kind'])}; "
        f"{_counts(store['by_scope'])}"
        + (f"; {_n(store['corrupt'], 'corrupt file')}" if store["corrupt"] else "")
    )
    return "\n".join(lines)


_MEM, _ACTIVE = "memories", "active memories"


def _n(count: int, word: str, plural: str | None = None) -> str:
    """"1 session", "2 sessions": a count with its noun in the right number."""
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{key} {n}" for key, n in counts.items()) or "none"
