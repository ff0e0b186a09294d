"""PreToolUse (hot path): the search the agent must run first (gate/gates/recall/search_first.py), then the
memories anchored to what a tool call touches (gate/gates/delivery/anchors.py); a spawn of a subagent, or a tool
call inside one, goes through the subagent gate (gate/gates/recall/subagent.py) and is never refused.

A turn that owes no search pays one ledger field read for the check; its module is imported only when one is owed.
"""

from __future__ import annotations

from gate.gates.delivery.anchors import anchored, trigger_rules

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.gates.base import HookContext, Outcome
    from gate.gates.recall.search_first import Check
    from gate.session.ledger import Ledger


def handle(ctx: HookContext, ledger: Ledger) -> Outcome:
    rules = trigger_rules(ctx)
    if "agent_id" in ctx.event or ctx.event.get("tool_name") in rules.get("tools", {}).get("spawn", ()):
        from gate.gates.recall.subagent import on_pre_tool_use  # a spawn, or a subagent's own tool call

        return on_pre_tool_use(ctx, ledger, rules)
    first = _search_first(ctx, ledger, rules) if ledger.search_request is not None else None
    if first is not None:
        refusal = first.refusal(ctx)
        if refusal is not None:
            return refusal  # the call does not run: its anchors come when it is made again
    outcome = anchored(ctx, ledger, rules)
    return first.attach(outcome) if first is not None else outcome


def _search_first(ctx: HookContext, ledger: Ledger, rules: dict) -> Check | None:
    """The turn's search check; when it fails, nothing (fail open: the call passes, its anchors still come)."""
    from gate.gates.recall import search_first

    try:
        return search_first.check(ctx, ledger, rules)
    except Exception as error:
        from gate.session.audit import write_error

        write_error("PreToolUse", error, project=ctx.paths.root, project_id=ctx.paths.key)
        return None
