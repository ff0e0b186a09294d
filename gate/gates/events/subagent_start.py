"""SubagentStart (hot path): the memories a spawn held for its subagent, where the spawn call could not carry
them (Codex; gate/gates/recall/subagent.py). Claude Code's spawns carry them in the task itself."""

from __future__ import annotations

from gate.gates.recall.subagent import on_subagent_start

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext, Outcome
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    return on_subagent_start(ctx, ledger)
