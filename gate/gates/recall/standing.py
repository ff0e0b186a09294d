"""The session-start gate: standing directives, the user's preferences and open tasks at the start of every
context window, then an index of the project's memories (one line each: id · kind · date · fact).

SessionStart (gate/gates/events/session_start.py) injects at startup, resume, clear and after a compaction
(source=compact, when the ledger was re-armed: everything may be delivered again).

Standing memories are delivered in full (marked in the ledger). An index line is not: the memory's full
delivery at its cued moment (the recall gate's search, a path cue) still comes. Which memories make the index,
in what order and how many: rules/recall.toml [index].
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome, additional_context
from gate.gates.delivery.anchors import at_session_start, cue_items, provenance_note
from gate.render import budget_chars, fit, gate_command, index_line
from gate.session.ledger import Ledger
from gate.session.mute import muted_by

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

STANDING_LIMIT = 50
STANDING_KINDS = ("directive", "preference")  # with the tasks: delivered in full at every start


def _of_kind(ctx: HookContext, kind: str, limit: int = STANDING_LIMIT) -> list[dict]:
    """Active memories of one kind in this project and the user scope, newest first."""
    project = ctx.paths.root
    found = [
        r for r in ctx.index.by_field("kind", kind, limit)
        if r["status"] == "active" and (r.get("scope") != "private" or not r.get("project") or r["project"] == project)
    ]
    return sorted(found, key=lambda r: r.get("created", ""), reverse=True)


def standing_memories(ctx: HookContext) -> tuple[list[dict], list[dict]]:
    """Active directives and the user's preferences (standing alike: they hold whatever a prompt names), and
    open tasks, of this project and the user scope, newest first."""
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return [], []
    kinds = ctx.rules("recall").get("index", {}).get("standing", list(STANDING_KINDS))
    standing = [r for kind in kinds if kind in STANDING_KINDS for r in _of_kind(ctx, kind)]
    return standing, _of_kind(ctx, "task")


def index_tier(ctx: HookContext, shown: set[str]) -> list[dict]:
    """The memories of the index tier, in order: rules/recall.toml [index] kinds first to last, newest first
    within a kind, at most max_lines, none already shown in full."""
    conf = ctx.rules("recall").get("index", {})
    if not conf.get("enabled", True) or not ctx.index.exists():
        return []
    most = int(conf.get("max_lines", 20))
    picked: list[dict] = []
    for kind in conf.get("kinds", []):
        if len(picked) >= most:
            break
        picked += [r for r in _of_kind(ctx, str(kind)) if r["id"] not in shown][: most - len(picked)]
    return picked


def at_start(ctx: HookContext, ledger: Ledger, source: Any) -> Outcome:
    """What a context window starts with (`source`: startup, resume, clear or compact), within the session-start
    budget; the standing memories are marked delivered in the ledger, the index lines are not."""
    if ledger.muted or muted_by(ctx.paths, False):
        return Outcome("skipped", "SKIP_MUTED", gate="session_start")
    directives, tasks = standing_memories(ctx)
    # by their triggers (rules/triggers.toml), plus other memories cued for this moment, split around the tasks
    directives, tasks, early, late = at_session_start(ctx, ledger, source, directives, tasks)
    if source == "resume":
        # A resumed conversation still holds what this window delivered (e.g. just after /compact).
        directives = [r for r in directives if r["id"] not in ledger.delivered]
        tasks = [r for r in tasks if r["id"] not in ledger.delivered]
    full = directives + tasks + early + late
    listed = index_tier(ctx, {r["id"] for r in full} | (set(ledger.delivered) if source == "resume" else set()))
    if not full and not listed:
        return Outcome("skipped", "SKIP_NOTHING_STANDING", gate="session_start", extra={"source": source})
    messages = ctx.rules("messages")["session_start"]
    header = [messages["reason_compact"] if source == "compact" else messages["header"]]
    limit = budget_chars(int(ctx.settings.get("session_start_budget_tokens", 1000)))
    items = _Items(limit)
    rules_first = [r for r in directives if r["kind"] != "preference"]
    preferences = [r for r in directives if r["kind"] == "preference"]
    if rules_first:
        items.add("", messages["directives"])
        for r in rules_first:
            items.add(r["id"], lambda r=r: index_line(r, with_body=True, root=ctx.paths.root))
    if preferences:
        items.add("", messages.get("preferences", messages["directives"]))
        for r in preferences:
            items.add(r["id"], lambda r=r: index_line(r, root=ctx.paths.root))
    items.extend(cue_items(ctx, early))
    if tasks:
        items.add("", messages["tasks"])
        for r in tasks:
            items.add(r["id"], lambda r=r: index_line(r, root=ctx.paths.root))
    items.extend(cue_items(ctx, late))
    # The index comes last: what the budget leaves after the standing memories; every line's id marks it so
    # the split below can tell it from a full delivery.
    if listed:
        items.add("", messages["index"].format(gate=gate_command()))
        width = int(ctx.rules("recall").get("index", {}).get("title_chars", 120))
        for r in listed:
            items.add(INDEX_MARK + r["id"], lambda r=r: index_line({**r, "title": _short(r["title"], width)}))
    footer = [provenance_note(ctx, full + listed), messages["footer"].format(gate=gate_command())]
    text, kept, dropped = fit(header, items.items, footer, limit)
    indexed = [i[len(INDEX_MARK):] for i in kept if i.startswith(INDEX_MARK)]
    kept = [i for i in kept if i and not i.startswith(INDEX_MARK)]
    ledger.mark_delivered(kept)  # the index lines are not: their memory's full delivery is still to come
    ledger.injected_chars += len(text)
    reason = "FIRED_AFTER_COMPACTION" if source == "compact" else "FIRED_SESSION_START"
    return Outcome(
        "fired",
        reason,
        output=additional_context("SessionStart", text),
        gate="session_start",
        delivered=kept,
        dropped=[i[len(INDEX_MARK):] if i.startswith(INDEX_MARK) else i for i in dropped if i],
        chars=len(text),
        extra={"source": source, "indexed": indexed},
    )


INDEX_MARK = "index:"


class _Items:
    """The (id, text) items for fit(), each rendered only while the budget can still hold it: past the budget
    fit() drops an item and every one after it, so those are passed on unrendered, too long to fit (at 100,000
    memories the standing lists hold a hundred records; rendering each costs the hook ~50 µs)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.items: list[tuple[str, str]] = []

    def add(self, memory_id: str, text: Any) -> None:
        if self.used > self.limit:
            self.items.append((memory_id, " " * (self.limit + 1)))  # dropped by fit(), as it would be anyway
            return
        line = text() if callable(text) else text
        self.used += len(line) + 1
        self.items.append((memory_id, line))

    def extend(self, items: list[tuple[str, str]]) -> None:
        for memory_id, line in items:
            self.add(memory_id, line)


def _short(title: str, width: int) -> str:
    """A title cut at a word boundary to `width` characters (an index line is a pointer: `gate show` has it all)."""
    if len(title) <= width:
        return title
    cut = title[: width - 1].rsplit(" ", 1)[0]
    return f"{cut}…"
