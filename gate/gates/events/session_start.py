"""SessionStart (hot path): the session's ledger told where a context window begins (a compaction re-arms it,
a new or cleared conversation forces the next prompt's recall), then the session-start gate's injection
(gate/gates/recall/standing.py), and a turn another session of the project ended with still deferred
(gate/gates/writeback/reminder.py `carried`; gate/session/carryover.py)."""

from __future__ import annotations

from gate.gates.recall.standing import at_start
from gate.session.ledger import clean_old_ledgers

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext, Outcome
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    source = ctx.event.get("source")
    ledger.project = ctx.paths.root
    ledger.project_id = ctx.paths.key
    if source == "compact" or ledger.compaction_pending:
        ledger.rearm()
    elif source in ("startup", "clear"):
        ledger.force_shift = "session"
    if source == "startup":  # once a session, not per prompt: prune ledgers of long-gone sessions
        clean_old_ledgers(float(ctx.settings.get("ledger_max_age_days", 14)))
    outcome = at_start(ctx, ledger, source)
    if source == "compact" or outcome.reason == "SKIP_MUTED":
        return outcome  # (a muted project keeps what was carried for later)
    from gate.session.carryover import others_waiting

    if not others_waiting(ctx.paths, ctx.session_id):
        return outcome
    from gate.gates.writeback.reminder import carried  # (its module only when something may be carried)

    return carried(ctx, ledger, outcome)
