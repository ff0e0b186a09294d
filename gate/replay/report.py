"""What `gate replay` prints: per session and in total, the differences under --compare, the scores under
--labels. Every function returns JSON-able data; the text forms are rendered from it."""

from __future__ import annotations

from typing import Any

from gate.render import counted
from gate.replay.engine import SessionRun, StepResult
from gate.replay.run import Replay, skipped_lines

TOTAL_KEYS = ("prompts", "fires", "delivered", "turns_ended", "blocks", "failed_open")


def _shown(path: str) -> str:
    """A transcript's path as the text output shows it: relative to the working directory when under it."""
    import os

    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here + os.sep) else path


def _excerpt(text: Any, width: int = 100) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def session_json(run: SessionRun, detail: bool = True, steps: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "transcript": run.timeline.path,
        "session": run.timeline.session_id,
        "agent": run.timeline.agent,
        **run.summary(),
        "lines": run.timeline.lines,
        "skipped_lines": dict(run.timeline.skipped),
    }
    if detail:
        out["fired"] = [r.to_json() for r in run.of("UserPromptSubmit") if r.fired]
        out["blocked"] = [r.to_json() for r in run.of("Stop") if r.blocked]
        out["failed"] = [r.to_json() for r in run.results if r.decision == "failed_open"]
    if steps:
        out["steps"] = [r.to_json() for r in run.results]
    return out


def replay_json(replay: Replay, detail: bool = True, steps: bool = False) -> dict[str, Any]:
    sessions = [session_json(run, detail, steps) for run in replay.runs.values()]
    total = {key: sum(s[key] for s in sessions) for key in TOTAL_KEYS}
    agents: dict[str, int] = {}
    for session in sessions:
        agents[session["agent"]] = agents.get(session["agent"], 0) + 1
    return {
        "sessions": sessions,
        "total": {"sessions": len(sessions), "agents": agents, **total, **skipped_lines(replay)},
        "unreadable": replay.unreadable,
    }


def _counts(item: dict[str, Any]) -> str:
    return (
        f"{counted(item['prompts'], 'prompt')}, {counted(item['fires'], 'fire')}, "
        f"{counted(item['delivered'], 'memory', 'memories')} delivered, {counted(item['turns_ended'], 'turn')} ended, "
        f"{counted(item['blocks'], 'block')}"
        + (f", {item['failed_open']} failed open" if item.get("failed_open") else "")
    )


def render_replay(data: dict[str, Any]) -> list[str]:
    lines = []
    for session in data["sessions"]:
        lines.append(f"{_shown(session['transcript'])}  ({session['session']})")
        lines.append(f"  {_counts(session)}")
        for fire in session.get("fired", []):
            terms = ", ".join(fire.get("terms") or [])
            lines.append(f"  fire  line {fire['line']}: {', '.join(fire.get('delivered', []))}"
                         + (f"  (searched for: {terms})" if terms else ""))
        for block in session.get("blocked", []):
            kinds = ", ".join(block.get("evidence", []))
            lines.append(f"  block turn {block['turn']} (Stop at line {block['line']}): {kinds}")
            lines += [f"        \"{_excerpt(quote, 150)}\"" for quote in block.get("evidence_quotes", [])]
        for failed in session.get("failed", []):
            lines.append(f"  FAILED OPEN {failed['event']} at line {failed['line']}: {failed.get('error', '')}")
        for step in session.get("steps", []):
            delivered = f" {', '.join(step['delivered'])}" if step.get("delivered") else ""
            lines.append(f"  step  line {step['line']:>6} {step['event']:<17} {step['decision']:<8} {step['reason']}"
                         + delivered)
    total = data["total"]
    lines.append(f"total: {counted(total['sessions'], 'session')}, {_counts(total)}")
    skipped = total["skipped"]
    lines.append(
        "lines skipped: " + (", ".join(f"{n} {cause}" for cause, n in skipped.items()) if skipped else "none")
        + ("; repaired: " + ", ".join(f"{n} {cause}" for cause, n in total["repaired"].items())
           if total["repaired"] else "")
    )
    for transcript, why in data["unreadable"].items():
        lines.append(f"could not read {transcript}: {why}")
    return lines


# ---------------------------------------------------------------------------------------------------------
# --compare


def _step_key(result: StepResult) -> tuple[str, int, int]:
    return (result.step.name, result.step.line, result.step.end)


def compare_json(before: Replay, after: Replay) -> dict[str, Any]:
    """Every step whose answer differs between the two policies: fires and blocks added or removed, memories
    delivered differently, with the prompt or the reply that changed."""
    changes: list[dict[str, Any]] = []
    for transcript, old_run in before.runs.items():
        new_run = after.runs.get(transcript)
        if new_run is None:
            continue
        new_by_key = {_step_key(r): r for r in new_run.results}
        for old in old_run.results:
            new = new_by_key.get(_step_key(old))
            if new is None:
                continue
            change = _difference(old, new)
            if change is not None:
                changes.append({"transcript": transcript, "line": old.step.line, "turn": old.step.turn, **change})
    summary: dict[str, int] = {}
    for change in changes:
        summary[change["change"]] = summary.get(change["change"], 0) + 1
    return {"changes": changes, "summary": summary}


def _difference(old: StepResult, new: StepResult) -> dict[str, Any] | None:
    name = old.step.name
    if name == "Stop":
        if old.blocked == new.blocked:
            return None
        return {
            "change": "block added" if new.blocked else "block removed",
            "event": name,
            "before": old.reason,
            "after": new.reason,
            "evidence": (new if new.blocked else old).extra.get("evidence", []),
            "quotes": (new if new.blocked else old).extra.get("evidence_quotes", []),
            "reply": _excerpt(old.step.event.get("last_assistant_message"), 160),
        }
    if name == "UserPromptSubmit":
        was, now = old.extra.get("reminder_of"), new.extra.get("reminder_of")
        if (was is None) != (now is None) and old.fired == new.fired and old.delivered == new.delivered:
            return {"change": "reminder added" if now is not None else "reminder removed", "event": name,
                    "before": {"reason": old.reason, "delivered": old.delivered},
                    "after": {"reason": new.reason, "delivered": new.delivered},
                    "prompt": _excerpt(old.step.event.get("prompt"), 160)}
        if old.fired == new.fired and old.delivered == new.delivered:
            return None
        change = ("fire added" if new.fired else "fire removed") if old.fired != new.fired else "delivered differently"
        return {
            "change": change,
            "event": name,
            "before": {"reason": old.reason, "delivered": old.delivered},
            "after": {"reason": new.reason, "delivered": new.delivered},
            "prompt": _excerpt(old.step.event.get("prompt"), 160),
        }
    if old.delivered != new.delivered:
        return {"change": "delivered differently", "event": name,
                "before": {"reason": old.reason, "delivered": old.delivered},
                "after": {"reason": new.reason, "delivered": new.delivered}}
    return None


def render_compare(data: dict[str, Any], rules_dir: str) -> list[str]:
    lines = [f"current rules → {rules_dir}: {len(data['changes'])} changes"
             + (" (" + ", ".join(f"{n} {kind}" for kind, n in sorted(data["summary"].items())) + ")"
                if data["summary"] else "")]
    for change in data["changes"]:
        where = f"{_shown(change['transcript'])}:{change['line']}"
        if change["event"] == "Stop":
            lines.append(f"{change['change']:<22} {where} ({change['before']} → {change['after']})")
            lines.append(f"    reply: \"{change['reply']}\"")
            lines += [f"    evidence: \"{_excerpt(q, 150)}\"" for q in change.get("quotes", [])]
        else:
            before, after = change["before"], change["after"]
            lines.append(f"{change['change']:<22} {where} ({before['reason']} → {after['reason']})")
            if "prompt" in change:
                lines.append(f"    prompt: \"{change['prompt']}\"")
            if change["change"].startswith("reminder"):
                continue  # the memories delivered did not change, only the write-back reminder
            was, now = ", ".join(before["delivered"]) or "-", ", ".join(after["delivered"]) or "-"
            lines.append(f"    delivered: {was} → {now}")
    return lines


# ---------------------------------------------------------------------------------------------------------
# --labels


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _confusion(name: str, data: dict[str, Any]) -> str:
    return (f"{name}: precision {_figure(data['precision'])} recall {_figure(data['recall'])} "
            f"(n={data['n']}: tp={data['tp']} fp={data['fp']} fn={data['fn']} tn={data['tn']})")


def render_scores(scores: dict[str, Any], show_wrong: bool = True) -> list[str]:
    lines = []
    if "recall_shift" in scores:
        shift = scores["recall_shift"]
        lines.append(_confusion("recall gate, shift", shift))
        if "shift_verdict" in scores:
            lines.append("  " + _confusion("the topic-shift verdict alone (a diagnostic)", scores["shift_verdict"]))
        if show_wrong:
            for case in shift["wrong"]:
                label = "missed shift" if case["expected"] else "false shift"
                lines.append(f"  {label:<12} {case['transcript']}:{case['line']} {case['reason']} "
                             f"novelty={case['novelty']} \"{case['prompt']}\"")
    if "delivery" in scores:
        d = scores["delivery"]
        lines.append(
            f"recall gate, delivery: {_figure(d['recall'])} ({d['reached']} of {d['expected']} expected memories "
            f"reached the agent; at shifts {_figure(d['recall_at_shifts'])}: {d['reached_at_shifts']} of "
            f"{d['expected_at_shifts']})"
        )
        lines.append(
            f"  apart: in full (without the index lines) {_figure(d.get('recall_in_full'))} "
            f"({d.get('reached_in_full', 0)}); prompt-time {_figure(d.get('recall_prompt_time'))} "
            f"({d.get('reached_prompt_time', 0)}), "
            f"session start in full {_figure(d.get('recall_session_start'))} ({d.get('reached_session_start', 0)}), "
            f"index line only {_figure(d.get('recall_index_only'))} ({d.get('reached_index_only', 0)}; "
            f"{d.get('indexed', 0)} index lines shown)"
        )
        for language, figures in d.get("by_language", {}).items():
            lines.append(
                f"  {language}: delivery {_figure(figures['recall'])} ({figures['reached']} of {figures['expected']}),"
                f" prompt-time {_figure(figures['recall_prompt_time'])}, injected precision "
                f"{_figure(figures['injected_precision'])}, noise {figures['noise']}"
            )
        lines.append(
            f"  injected: {d['injected']}, relevant where injected: {d['injected_relevant']} "
            f"({_figure(d['injected_precision'])}); noise: {d['noise']} memories at {d['noise_prompts']} prompts "
            f"that should get none"
            + (f"; cross-project leaks: {d['leaks']}" if d["leaks_measured"] else "")
        )
        if show_wrong:
            lines += [f"  missed     {m['transcript']}:{m['line']} {m['memory']} ({m['reason']})" for m in d["missed"]]
            lines += [f"  irrelevant {m['transcript']}:{m['line']} {m['memory']}" for m in d["irrelevant"]]
            lines += [f"  LEAK       {m['transcript']}:{m['line']} {m['memory']}" for m in d["leaked"]]
    if "writeback" in scores:
        w = scores["writeback"]
        lines.append(_confusion("write-back gate, blocks alone", w))
        for kind, data in w["by_kind"].items():
            lines.append("  " + _confusion(kind, data))
        if "reminded" in w:
            either, reminded = w["blocked_or_reminded"], w["reminded"]
            lines.append(
                f"  blocked or reminded (at the next prompt, or the next session's start): recall "
                f"{_figure(either['recall'])} ({either['tp']} of {either['tp'] + either['fn']}); reminders: "
                f"{reminded['tp']} on turns that should block, {reminded['fp']} on ordinary turns"
                + (f", {w['reminded_at_next_session']} of them at the next session's start"
                   if w.get("reminded_at_next_session") else "")
                + (f" ({w['deferred_not_reminded']} deferred turns had no reminder)" if w["deferred_not_reminded"]
                   else "")
            )
            lines.append(
                f"  false blocks: {_percent(w['false_block_rate'])} of ordinary turns; per 100 turns: "
                f"{w['blocks_per_100_turns']} blocks, {w['reminders_per_100_turns']} reminders "
                f"({w['reminders_on_ordinary_per_100_turns']} on ordinary turns)"
            )
            lines.append(
                f"  sessions with a false block: {w['sessions_with_false_block']} of {w['sessions']}; of those with "
                f"10 turns or more: {w['long_sessions_with_false_block']} of {w['long_sessions']}"
            )
        if show_wrong:
            for case in w["wrong"]:
                label = "missed block" if case["expected"] else "false block"
                if case.get("reminded"):
                    label = "reminded"  # missed by the Stop, caught by the next prompt's reminder
                lines.append(f"  {label:<12} {case['transcript']}:{case['turn']} {case['reason']} "
                             f"{','.join(case['evidence'])} \"{case['reply']}\"")
                lines += [f"      evidence: \"{_excerpt(q, 140)}\"" for q in case["quotes"]]
            for case in w.get("reminded_ordinary", []):
                lines.append(f"  {'reminder':<12} {case['transcript']}:{case['turn']} {case['reason']} "
                             f"{','.join(case['evidence'])} \"{case['reply']}\" (an ordinary turn)")
    if "queries" in scores:
        lines += render_queries(scores["queries"], show_wrong)
    for item in scores.get("unmatched", []):
        lines.append(f"label matches no replayed step: {item}")
    return lines


QUERY_ROWS = (("hook", "the hook's own hits"), ("agent", "the agent's queries"), ("both", "both"),
              ("asked", "hook + asked search"))


def render_queries(q: dict[str, Any], show_wrong: bool = True) -> list[str]:
    """The hook, the agent's queries and both, side by side (gate.replay.queries)."""
    lines = [
        f"agent-written queries (top {q['top']} of gate search): {q['with_query']} of {q['labelled_prompts']} "
        f"labelled prompts have one ({q['empty_queries']} empty: no search)"
        + (f"; {q['without_query']} without" if q["without_query"] else ""),
        # rows at the margin: they are the aggregate figures (the per-prompt lines below are indented)
        f"{'delivered by':<22} {'delivery':>8} {'at a prompt':>12} {'precision':>10} {'shown':>6} {'relevant':>9} "
        f"{'noise':>6}",
    ]
    for key, name in QUERY_ROWS:
        row = q[key]
        lines.append(
            f"{name:<22} {_figure(row['recall']):>8} {_figure(row['recall_at_prompt']):>12} "
            f"{_figure(row['precision']):>10} {row['shown']:>6} {row['shown_relevant']:>9} {row['noise']:>6}"
        )
    lines.append(f"  (of {q['hook']['expected']} expected memories; noise: memories shown at prompts that should "
                 f"get none — hook {q['hook']['noise_prompts']}, agent {q['agent']['noise_prompts']}, both "
                 f"{q['both']['noise_prompts']} prompts)")
    if "asked" in q:
        lines.append(f"  (hook + asked search: the agent's search only where the recall gate asked for one — at "
                     f"{q['asks']} of {q['prompts_replayed']} prompts replayed)")
    if show_wrong:
        for case in q["prompts"]:
            if case["missed"] or len(case["relevant"]) < len(case["hits"]):
                lines.append(f"  query      {case['transcript']}:{case['line']} \"{_excerpt(case['query'], 80)}\" → "
                             f"{', '.join(case['hits']) or '-'}"
                             + (f"; missed {', '.join(case['missed'])}" if case["missed"] else ""))
    for item in q["unmatched"]:
        lines.append(f"query matches no replayed prompt: {item}")
    return lines
