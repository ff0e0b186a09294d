"""The write-back gate (Stop): a turn that decided, fixed or learned something must decide about memory.

It forces a decision, not a write: storing, or saying it is already saved or not worth keeping, both end
the turn. It never blocks a Stop that follows its own block (stop_hook_active), never more than the cap
per session, never on a turn without evidence. The Stop after a block records that block's outcome:
stored, acknowledged or ignored.

A block costs the user a turn; so a turn the score cannot settle (some evidence, not enough; or a reply that
ends by asking the user, though it settled something) is not blocked but deferred: the next prompt carries a
reminder (gate/gates/writeback/reminder.py), and the user's answer there is evidence too.
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome
from gate.gates.writeback.evidence import find_evidence, find_store_decision
from gate.gates.writeback.message import render
from gate.gates.writeback.signals import signal_quotes, turn_signals
from gate.gates.writeback.verdict import decide, lowest_threshold, score_inputs
from gate.render import clean
from gate.rule_reading import action_phrase
from gate.session.ledger import Ledger
from gate.session.mute import muted_by
from gate.session.transcript import read_turn

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.session.turn import Turn

def _read(ctx: HookContext) -> Turn:
    last = ctx.event.get("last_assistant_message")
    return read_turn(
        ctx.transcript_path, last if isinstance(last, str) else None, end=ctx.transcript_end, previous_reply=True
    )


def _settle_pending(ctx: HookContext, ledger: Ledger, turn: Turn | None, extra: dict[str, Any]) -> None:
    """The outcome of the previous block, now that the agent has had its say: stored, acknowledged, ignored."""
    if not ledger.writeback_pending:
        return
    decision = find_store_decision(turn, ctx.rules("writeback"), answering=True) if turn is not None else None
    outcome = decision.kind if decision is not None else "ignored"
    ledger.writeback_pending = None
    ledger.writeback_outcomes.append(outcome)
    extra["outcome"] = outcome
    extra["outcome_of"] = "previous_block"
    if decision is not None:
        extra["outcome_detail"] = clean(decision.detail, 160)  # for `gate trace`: what settled the block
        if not decision.ok:
            extra["outcome_failed"] = True  # the agent ran the store command, and it failed


def evaluate(ctx: HookContext, ledger: Ledger) -> Outcome:
    extra: dict[str, Any] = {}
    turn: Turn | None = None
    if ledger.writeback_pending:
        turn = _read(ctx)
        _settle_pending(ctx, ledger, turn, extra)
    if ctx.event.get("stop_hook_active") is True:
        return Outcome("allowed", "ALLOW_STOP_ACTIVE", gate="writeback", extra=extra)
    ledger.writeback_turns += 1  # a turn's end (not the continuation after a block): what a reminder names
    reminded_fix = None  # the fix this turn's prompt reminded of: stored now, it guards the loop (fixguard)
    if ledger.writeback_reminded:  # this turn's prompt carried a reminder: what did the agent do about it?
        from gate.gates.writeback.reminder import settle  # (only then, and when deferring: most Stops need neither)

        reminded_fix = ledger.writeback_reminded.get("fix_topic")
        turn = turn or _read(ctx)
        settle(ledger, find_store_decision(turn, ctx.rules("writeback"), answering=True), extra)
    if ledger.muted or muted_by(ctx.paths, False) or not ctx.settings.get("writeback", True):
        return Outcome("allowed", "ALLOW_DISABLED", gate="writeback", extra=extra)
    turn = turn or _read(ctx)
    if not turn.prompt and ledger.writeback_prompt_head:
        turn.prompt = ledger.writeback_prompt_head  # read from a compaction boundary on: the prompt it answered
    if turn.report:
        # A background subagent's report, brought by a task notification: what the subagent settled is evidence
        # of this turn, like a foreground spawn's result; the notification itself is nobody's words (no rule, no
        # choice, no request of the user's), so the turn is weighed without a prompt.
        turn.prompt = ""
        extra["subagent_report"] = True
    rules = ctx.rules("writeback")
    decision = find_store_decision(turn, rules)
    if decision is not None:
        extra["store_decision"] = decision.kind
        extra["store_detail"] = clean(decision.detail, 160)  # for `gate trace`: what counted as storing
        if decision.kind == "stored":  # (a store is rare: most Stops never import the guard)
            from gate.gates.writeback import fixguard

            fixguard.stored(turn, rules, ledger, decision.detail, reminded_fix, extra)
        return Outcome("allowed", "ALLOW_ALREADY_STORED", gate="writeback", extra=extra)
    evidence = find_evidence(turn, rules)
    weighed, vetoes = score_inputs(rules)
    features = {**evidence.features, **turn_signals(turn, rules, weighed - vetoes)}
    verdict = decide(features, rules)
    if verdict.score >= lowest_threshold(rules):  # only then can a veto change the answer: look for them now
        features.update(turn_signals(turn, rules, vetoes))
        verdict = decide(features, rules)
    extra["signals"] = features  # for `gate trace` and `gate replay`: what the score saw
    extra["score"] = verdict.score
    if verdict.remind:
        kinds = verdict.kinds or evidence.kinds or ["learning"]
        quotes = evidence.quotes + signal_quotes(turn, features, rules)
        from gate.gates.writeback.reminder import defer

        quoted = dict(zip(evidence.kinds, evidence.quotes, strict=False))
        found = None
        if "fix" in kinds:  # what the fix is about goes with the reminder: stored next, it guards the loop
            from gate.gates.writeback import fixguard

            found = fixguard.deferred(turn, evidence, rules, ledger, extra)
        return defer(ctx, ledger, verdict, kinds, quotes, extra, quoted, found)
    if not verdict.block:
        if verdict.reached:
            reason = f"ALLOW_{verdict.veto.upper()}"  # the evidence was there; the veto held it back
        else:
            some = any(c > 0 for c in verdict.contributions.values())
            reason = "ALLOW_BELOW_THRESHOLD" if some else "ALLOW_NO_SIGNAL"
        return Outcome("allowed", reason, gate="writeback", extra=extra)
    kinds = verdict.kinds or evidence.kinds or ["learning"]
    quotes = evidence.quotes + signal_quotes(turn, features, rules)
    from gate.gates.writeback import fixguard  # (a block is rare: most Stops never import it)

    found = same = None
    fix_blocks = False  # the fix is what blocks: without its features the turn would pass
    if fixguard.enabled(rules) and fixguard.holds_fix(verdict.contributions, rules):
        found = fixguard.topic(turn, evidence, rules)
        same = fixguard.same_fix(ledger, found, rules)
        fix_blocks = not decide(fixguard.without_fix(features, rules), rules).block
        if same is not None:
            extra["fix_guard"] = same
        if same is not None and fix_blocks:  # the loop's fix again, and nothing else to block for: a reminder
            from gate.gates.writeback.reminder import defer

            fixguard.keep(ledger, found, extend=True)
            verdict.veto = "same_fix"  # deferred as ALLOW_DEFERRED_SAME_FIX
            quoted = dict(zip(evidence.kinds, evidence.quotes, strict=False))
            return defer(ctx, ledger, verdict, kinds, quotes, extra, quoted, found)
    extra["evidence"] = kinds
    extra["evidence_quotes"] = [clean(q, 160) for q in quotes[:3]]  # bounded, for `gate trace`
    cap = int(ctx.settings.get("writeback_cap", 5))
    if ledger.writeback_blocks >= cap:
        return Outcome("allowed", "ALLOW_CAPPED", gate="writeback", extra=extra)
    if found is not None and (fix_blocks or same is not None):  # a fix blocks: its loop will not block again
        fixguard.keep(ledger, found, extend=same is not None)
    reason = render(ctx, action_phrase(kinds, rules), kinds, quotes)
    ledger.writeback_blocks += 1
    ledger.writeback_pending = {"kinds": evidence.kinds, "block": ledger.writeback_blocks}
    extra["blocks"] = ledger.writeback_blocks
    if turn.cli_version:
        extra["cli_version"] = turn.cli_version  # which form Claude Code takes the block in (gate/hook.py)
    return Outcome(
        "blocked",
        "BLOCKED_WRITEBACK",
        output={"decision": "block", "reason": reason},
        gate="writeback",
        chars=len(reason),
        extra=extra,
    )
