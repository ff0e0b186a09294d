"""Stop (hot path): the write-back gate (gate/gates/writeback/gate.py), the only answer that may block."""

from __future__ import annotations

from gate.gates.writeback.gate import evaluate

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext, Outcome
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    return evaluate(ctx, ledger)
