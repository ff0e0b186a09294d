"""SessionStart and PreCompact: standing directives and open tasks at the start of every context window.

PreCompact only marks the boundary (and prints nothing: its stdout would reach the summarizer, and it must
never block compaction). SessionStart with source=compact re-arms the ledger — everything may be delivered
again — and re-injects; startup, resume and clear inject too.
"""

from __future__ import annotations

from gate.gates.anchors import at_session_start, cue_items, provenance_note
from gate.gates.base import HookContext, Outcome, additional_context
from gate.render import budget_chars, fit, gate_command, index_line
from gate.session.ledger import Ledger, clean_old_ledgers
from gate.session.mute import muted_by

STANDING_LIMIT = 50


def standing_memories(ctx: HookContext) -> tuple[list[dict], list[dict]]:
    """Active directives and open tasks of this project and the user scope, newest first."""
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return [], []
    directives = [r for r in index.by_field("kind", "directive", STANDING_LIMIT) if r["status"] == "active"]
    tasks = [r for r in index.by_field("kind", "task", STANDING_LIMIT) if r["status"] == "active"]
    project = ctx.paths.root
    keep = [
        r for r in directives + tasks
        if r.get("scope") != "private" or not r.get("project") or r["project"] == project
    ]
    newest = sorted(keep, key=lambda r: r.get("created", ""), reverse=True)
    return [r for r in newest if r["kind"] == "directive"], [r for r in newest if r["kind"] == "task"]


def on_session_start(ctx: HookContext, ledger: Ledger) -> Outcome:
    source = ctx.event.get("source")
    ledger.project = ctx.paths.root
    if source == "compact" or ledger.compaction_pending:
        ledger.rearm()
    elif source in ("startup", "clear"):
        ledger.force_shift = "session"
    if source == "startup":  # once a session, not per prompt: prune ledgers of long-gone sessions
        clean_old_ledgers(float(ctx.settings.get("ledger_max_age_days", 14)))
    if ledger.muted or muted_by(ctx.paths, False):
        return Outcome("skipped", "SKIP_MUTED", gate="session_start")
    directives, tasks = standing_memories(ctx)
    # by their triggers (rules/triggers.toml), plus other memories cued for this moment, split around the tasks
    directives, tasks, early, late = at_session_start(ctx, ledger, source, directives, tasks)
    if source == "resume":
        # A resumed conversation still holds what this window delivered (e.g. just after /compact).
        directives = [r for r in directives if r["id"] not in ledger.delivered]
        tasks = [r for r in tasks if r["id"] not in ledger.delivered]
    if not directives and not tasks and not early and not late:
        return Outcome("skipped", "SKIP_NOTHING_STANDING", gate="session_start", extra={"source": source})
    messages = ctx.rules("messages")["session_start"]
    header = [messages["reason_compact"] if source == "compact" else messages["header"]]
    items: list[tuple[str, str]] = []
    if directives:
        items.append(("", messages["directives"]))
        items += [(r["id"], index_line(r, with_body=True, root=ctx.paths.root)) for r in directives]
    items += cue_items(ctx, early)
    if tasks:
        items.append(("", messages["tasks"]))
        items += [(r["id"], index_line(r, root=ctx.paths.root)) for r in tasks]
    items += cue_items(ctx, late)
    footer = [provenance_note(ctx, directives + tasks + early + late), messages["footer"].format(gate=gate_command())]
    limit = budget_chars(int(ctx.settings.get("session_start_budget_tokens", 1000)))
    text, kept, dropped = fit(header, items, footer, limit)
    kept = [i for i in kept if i]
    ledger.mark_delivered(kept)
    ledger.injected_chars += len(text)
    reason = "FIRED_AFTER_COMPACTION" if source == "compact" else "FIRED_SESSION_START"
    return Outcome(
        "fired",
        reason,
        output=additional_context("SessionStart", text),
        gate="session_start",
        delivered=kept,
        dropped=[i for i in dropped if i],
        chars=len(text),
        extra={"source": source},
    )


def on_pre_compact(ctx: HookContext, ledger: Ledger) -> Outcome:
    ledger.compaction_pending = True
    return Outcome("marked", "MARKED_COMPACTION", gate="compaction", extra={"trigger": ctx.event.get("trigger")})
