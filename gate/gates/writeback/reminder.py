"""The write-back reminder (hot path): a turn the Stop did not block, brought up at the next prompt.

A block costs the user a turn, so the Stop blocks only what is settled. A turn with some evidence but not
enough, or one that ends by asking the user though it settled something, is deferred: the Stop keeps what it
saw in the session ledger (`defer`), and the next UserPromptSubmit carries a short MEMORY CHECK as additional
context (`attach`, called by gate/gates/events/user_prompt_submit.py after the recall gate). The user's answer
is evidence: a confirmation ("works, thanks") says so in the reminder; a refutation ("still broken") withdraws
it. The Stop after a reminded prompt records what the agent did about it (`settle`): stored, acknowledged or
ignored.

A reminder never blocks anything; reminders are capped per session ([reminder] cap in rules/writeback.toml); a
mute, the project's or the session's, silences it. A deferred turn is also kept for the project's next session
(gate/session/carryover.py): when the session ends before its next prompt, the next session's start carries it
(`carried`, called by gate/gates/events/session_start.py), once.
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome, additional_context
from gate.rule_reading import rule_patterns, rule_section
from gate.session.ledger import Ledger

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.gates.writeback.evidence import StoreDecision
    from gate.gates.writeback.verdict import Verdict

REASON = "REMINDED_WRITEBACK"
CARRIED = "REMINDED_CARRIED_WRITEBACK"  # at a session's start, of a turn another session ended with


def _cap(rules: dict[str, Any]) -> int:
    value = rule_section(rules, "reminder").get("cap", 5)
    return value if isinstance(value, int) and not isinstance(value, bool) else 5


def defer(
    ctx: HookContext, ledger: Ledger, verdict: Verdict, kinds: list[str], quotes: list[str], extra: dict[str, Any],
    quoted: dict[str, str] | None = None, fix_topic: dict[str, list[str]] | None = None,
) -> Outcome:
    """The Stop's answer for a turn worth a reminder: allowed, its evidence kept for the next prompt.
    `fix_topic`: what the turn's fix is about (gate/gates/writeback/fixguard.py), kept so that storing it guards
    its loop."""
    from gate.render import clean

    rules = ctx.rules("writeback")
    quoted = quoted or {}
    extra["evidence"] = kinds
    extra["evidence_quotes"] = [clean(q, 160) for q in quotes[:3]]
    if ledger.writeback_reminders >= _cap(rules):
        return Outcome("allowed", "ALLOW_REMINDERS_CAPPED", gate="writeback", extra=extra)
    ledger.writeback_reminder = {
        "turn": ledger.writeback_turns,
        "kinds": kinds,
        "quotes": extra["evidence_quotes"],
        "quoted": {kind: clean(quote, 160) for kind, quote in quoted.items()},  # by kind: a refuted fix goes alone
        "score": verdict.score,
        "veto": verdict.veto,  # "asks_user": the reply waited on the user; "": the evidence was not enough
    }
    if fix_topic is not None and "fix" in kinds:
        ledger.writeback_reminder["fix_topic"] = fix_topic
    _carry(ctx, ledger.writeback_reminder)
    extra["deferred"] = ledger.writeback_turns
    # ALLOW_DEFERRED: evidence, not enough to block; ALLOW_DEFERRED_ASKS_USER, _UNCONFIRMED_FIX: the veto that deferred
    reason = f"ALLOW_DEFERRED_{verdict.veto.upper()}" if verdict.veto else "ALLOW_DEFERRED"
    return Outcome("allowed", reason, gate="writeback", extra=extra)


def _carry(ctx: HookContext, pending: dict[str, Any]) -> None:
    """Kept for the project's next session too, should this one end before its next prompt."""
    from contextlib import suppress

    from gate.session import carryover

    with suppress(OSError):  # the reminder at this session's next prompt does not depend on it
        carryover.keep(ctx.paths, ctx.session_id, pending)


def _answer(prompt: str, rules: dict[str, Any]) -> str:
    """What the user's prompt says about the previous turn: "confirms", "refutes" or "". A program's prompt (a
    task notification: a subagent's "works now") or a teammate agent's says nothing for the user."""
    head = prompt[:600]
    for key in ("machine_prompt", "agent_prompt"):
        if any(p.search(head[:200]) for p in rule_patterns(rules, "signals", key=key)):
            return ""
    if any(p.search(head) for p in rule_patterns(rules, "reminder", key="refutes")):
        return "refutes"
    if any(p.search(head) for p in rule_patterns(rules, "reminder", key="confirms")):
        return "confirms"
    return ""


def render(ctx: HookContext, pending: dict[str, Any], confirmed: bool, carried: bool = False) -> str:
    from gate.gates.writeback.message import store_command
    from gate.render import clean
    from gate.rule_reading import action_phrase

    messages = ctx.rules("messages")
    text = messages["reminder"]
    kinds = [str(k) for k in pending.get("kinds", []) if isinstance(k, str)] or ["learning"]
    header = text["carried_header"] if carried else text["header"]
    lines = [header.format(what=action_phrase(kinds, ctx.rules("writeback")))]
    quotes = [q for q in pending.get("quotes", []) if isinstance(q, str)][:3]
    if quotes:
        lines.append(text["evidence"])
        lines += [f"  - \"{clean(quote, 200)}\"" for quote in quotes]
    if confirmed:
        lines.append(text["confirmed"])
    lines += [text["how"], store_command(messages["writeback"], kinds), text["carried_done" if carried else "done"]]
    return "\n".join(lines)


def attach(ctx: HookContext, ledger: Ledger, outcome: Outcome) -> Outcome:
    """The prompt's answer with the pending reminder added (or withdrawn, when the user's answer refutes the
    turn). The recall gate's own decision, reason and deliveries stay as they were."""
    from gate.session import carryover
    from gate.session.mute import muted_by

    pending = ledger.writeback_reminder
    ledger.writeback_reminder = None  # one prompt carries it, whatever happens
    try:
        ours = carryover.drop(ctx.paths, ctx.session_id)  # (nor does the next session's start)
    except OSError:
        ours = True
    if not isinstance(pending, dict) or muted_by(ctx.paths, ledger.muted):
        return outcome
    if not ours:  # another session of the project started meanwhile and was shown it
        outcome.extra["reminder_taken"] = pending.get("turn")
        return outcome
    rules = ctx.rules("writeback")
    prompt = ctx.event.get("prompt")
    answer = _answer(prompt, rules) if isinstance(prompt, str) else ""
    turn = pending.get("turn")
    if answer == "refutes":  # "still broken": the fix it saw was not one; what else it saw stands
        kinds = [k for k in pending.get("kinds", []) if k != "fix"]
        if not kinds:
            outcome.extra["reminder_withdrawn"] = turn
            return outcome
        quoted = pending.get("quoted", {})
        pending = {**pending, "kinds": kinds,
                   "quotes": [quoted[k] for k in kinds if isinstance(quoted, dict) and k in quoted]}
    if ledger.writeback_reminders >= _cap(rules):
        outcome.extra["reminder_capped"] = turn
        return outcome
    text = render(ctx, pending, answer == "confirms")
    ledger.writeback_reminders += 1
    ledger.writeback_reminded = {"turn": turn, "kinds": pending.get("kinds", [])}
    if isinstance(pending.get("fix_topic"), dict) and "fix" in pending.get("kinds", []):
        ledger.writeback_reminded["fix_topic"] = pending["fix_topic"]  # stored next, it guards the loop
    extra = {**outcome.extra, "reminder": REASON, "reminder_of": turn, "reminders": ledger.writeback_reminders,
             "reminder_evidence": pending.get("kinds", []), "reminder_chars": len(text)}
    if answer:
        extra["reminder_answer"] = answer
    existing = (outcome.output or {}).get("hookSpecificOutput", {}).get("additionalContext", "")
    output = additional_context(ctx.event_name, f"{existing}\n\n{text}" if existing else text)
    if outcome.decision == "fired":  # the recall gate spoke too: its record, with the reminder beside it
        return Outcome(outcome.decision, outcome.reason, output=output, gate=outcome.gate,
                       delivered=outcome.delivered, suppressed=outcome.suppressed, dropped=outcome.dropped,
                       chars=outcome.chars + len(text), extra=extra)
    extra["recall_decision"], extra["recall_reason"] = outcome.decision, outcome.reason
    return Outcome("reminded", REASON, output=output, gate="writeback", suppressed=outcome.suppressed,
                   dropped=outcome.dropped, chars=len(text), extra=extra)


def settle(ledger: Ledger, decision: StoreDecision | None, extra: dict[str, Any]) -> None:
    """The Stop after a reminded prompt: what the agent did about the reminder."""
    reminded = ledger.writeback_reminded
    ledger.writeback_reminded = None
    if not isinstance(reminded, dict):
        return
    outcome = decision.kind if decision is not None else "ignored"
    ledger.writeback_outcomes.append(f"reminder:{outcome}")
    extra["reminder_outcome"] = outcome
    extra["reminder_outcome_of"] = reminded.get("turn")


def carried(ctx: HookContext, ledger: Ledger, outcome: Outcome) -> Outcome:
    """SessionStart: the turns other sessions of the project ended with still deferred (gate/session/carryover.py),
    added to the start's context, once (the newest three at most); the session's first Stop records what the agent
    did about the newest."""
    from gate.session import carryover

    section = rule_section(ctx.rules("writeback"), "reminder")
    days = section.get("carry_days", 7)
    days = days if isinstance(days, int | float) and not isinstance(days, bool) else 7
    teammate = section.get("carry_teammate_kinds", ["fix"])
    teammate = {k for k in teammate if isinstance(k, str)} if isinstance(teammate, list) else {"fix"}
    # A turn deferred on its edits alone, with no words quoted, gives a new session nothing to act on (dev split:
    # 5 such carried, all on ordinary turns); a teammate's turn is carried for its kinds in carry_teammate_kinds.
    def wanted(entry: dict[str, Any]) -> bool:
        return any(isinstance(q, str) and q for q in entry.get("quotes", [])) and (
            entry.get("veto") != "agent_prompt" or bool(teammate & set(entry.get("kinds", []))))

    # the newest three at most; more wait for the next session's start
    entries = carryover.take(ctx.paths, ctx.session_id, float(days), wanted=wanted, most=3)
    if not entries:
        return outcome
    texts = [render(ctx, entry, False, carried=True) for entry in entries[-3:]]
    newest = entries[-1]
    ledger.writeback_reminded = {"turn": newest.get("turn"), "kinds": newest.get("kinds", []),
                                 "session": newest.get("session")}
    if isinstance(newest.get("fix_topic"), dict) and "fix" in newest.get("kinds", []):
        ledger.writeback_reminded["fix_topic"] = newest["fix_topic"]  # stored now, it guards its loop here too
    text = "\n\n".join(texts)
    existing = (outcome.output or {}).get("hookSpecificOutput", {}).get("additionalContext", "")
    output = additional_context(ctx.event_name, f"{existing}\n\n{text}" if existing else text)
    extra = {**outcome.extra, "carried_reminder": {"session": newest.get("session"), "turn": newest.get("turn")},
             "carried_reminders": len(texts), "reminder_chars": len(text),
             "carried_turns": [[e.get("session"), e.get("turn")] for e in entries[-3:]]}
    if outcome.decision == "fired":
        return Outcome(outcome.decision, outcome.reason, output=output, gate=outcome.gate,
                       delivered=outcome.delivered, suppressed=outcome.suppressed, dropped=outcome.dropped,
                       chars=outcome.chars + len(text), extra=extra)
    extra["start_decision"], extra["start_reason"] = outcome.decision, outcome.reason
    return Outcome("reminded", CARRIED, output=output, gate="writeback", chars=len(text), extra=extra)
