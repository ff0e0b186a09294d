"""PreCompact (hot path): only marks the boundary in the ledger, which the next SessionStart (source=compact)
re-arms. It prints nothing: its stdout would reach the summarizer, and it must never block compaction."""

from __future__ import annotations

from gate.gates.base import Outcome

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    ledger.compaction_pending = True
    return Outcome("marked", "MARKED_COMPACTION", gate="compaction", extra={"trigger": ctx.event.get("trigger")})
