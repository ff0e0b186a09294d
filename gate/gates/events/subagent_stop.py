"""SubagentStop (hot path): audited, never answered (gate/gates/recall/subagent.py keeps the subagent's ledger)."""

from __future__ import annotations

from gate.gates.recall.subagent import on_subagent_stop

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext, Outcome
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    return on_subagent_stop(ctx, ledger)
