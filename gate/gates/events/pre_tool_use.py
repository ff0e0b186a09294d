"""PreToolUse (hot path): memories anchored to what a tool call touches (gate/gates/delivery/anchors.py); a spawn
of a subagent, or a tool call inside one, goes through the subagent gate (gate/gates/recall/subagent.py)."""

from __future__ import annotations

from gate.gates.delivery.anchors import anchored, trigger_rules

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext, Outcome
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    rules = trigger_rules(ctx)
    if "agent_id" in ctx.event or ctx.event.get("tool_name") in rules.get("tools", {}).get("spawn", ()):
        from gate.gates.recall.subagent import on_pre_tool_use  # a spawn, or a subagent's own tool call

        return on_pre_tool_use(ctx, ledger, rules)
    return anchored(ctx, ledger, rules)
