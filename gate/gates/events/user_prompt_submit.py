"""UserPromptSubmit (hot path): the recall gate's answer, then the write-back reminder when one is pending.

The recall gate (gate/gates/recall/fire.py) decides what memory the prompt gets; a reminder of the previous turn
(gate/gates/writeback/reminder.py) is added to its additional context. A prompt with no reminder pending pays one
ledger field read for it: the reminder's module is imported only when there is one. A prompt the recall gate
finds on a new topic ends the write-back gate's guard against a debugging loop (gate/gates/writeback/fixguard.py).
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome
from gate.gates.recall.fire import evaluate as recall
from gate.session.ledger import Ledger

PROMPT_HEAD_CHARS = 300


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    pending = ledger.writeback_reminder is not None  # read before recall runs: recall never touches it
    prompt = ctx.event.get("prompt")
    if isinstance(prompt, str):  # for the Stop of a turn cut by a compaction: whose prompt it answers
        ledger.writeback_prompt_head = prompt[:PROMPT_HEAD_CHARS]
    compacted = ledger.force_shift == "compaction"  # recall's shift after a compaction is forced, not the user's
    outcome = recall(ctx, ledger)
    if ledger.writeback_fix_guard is not None and outcome.extra.get("shift") and not compacted:
        ledger.writeback_fix_guard = None  # the user moved on: the debugging loop it guarded is over (fixguard)
    if not pending:
        return outcome
    from gate.gates.writeback.reminder import attach

    try:
        return attach(ctx, ledger, outcome)
    except Exception as error:  # a broken reminder must not cost the recall answer
        ledger.writeback_reminder = None  # nor come back at every prompt
        outcome.extra["reminder_error"] = type(error).__name__
        return outcome
