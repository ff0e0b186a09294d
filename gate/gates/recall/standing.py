"""The session-start gate: standing directives, the user's preferences and open tasks at the start of every
context window, then an index of the project's memories (one line each: id · kind · date · fact).

SessionStart (gate/gates/events/session_start.py) injects at startup, resume, clear and after a compaction
(source=compact, when the ledger was re-armed: everything may be delivered again). A resumed conversation still
holds what the starts of its window showed (the ledger's `start_shown`): a resume shows only the memories new or
changed since, or nothing.

Standing memories are delivered in full (marked in the ledger). An index line is not: the memory's full
delivery at its cued moment (the recall gate's search, a path cue) still comes. Which memories make the index,
in what order and how many: rules/recall.toml [index].
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome, additional_context
from gate.gates.delivery.anchors import at_session_start, cue_items, provenance_note
from gate.paths import sha256_builtin
from gate.render import HARD_LIMIT_CHARS, BudgetedItems, budget_chars, fit, gate_command, index_line
from gate.session.ledger import Ledger
from gate.session.mute import muted_by

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

STANDING_LIMIT = 50
STANDING_KINDS = ("directive", "preference")  # with the tasks: delivered in full at every start


def _of_kind(ctx: HookContext, kind: str, limit: int = STANDING_LIMIT) -> list[dict]:
    """Active memories of one kind in this project and the user scope, newest first."""
    owns = ctx.paths.owns
    found = [
        r for r in ctx.index.of_kind(kind, limit)  # by_field("kind", …), kept for the index's commit
        if r["status"] == "active" and (r.get("scope") != "private" or owns(r.get("project") or ""))
    ]
    return sorted(found, key=lambda r: r.get("created", ""), reverse=True)


def standing_memories(ctx: HookContext, tasks: bool = True) -> tuple[list[dict], list[dict]]:
    """Active directives and the user's preferences (standing alike: they hold whatever a prompt names), and
    open tasks (unless `tasks` is False: a spawn's task has no use for them), of this project and the user
    scope, newest first."""
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return [], []
    kinds = ctx.rules("recall").get("index", {}).get("standing", list(STANDING_KINDS))
    standing = [r for kind in kinds if kind in STANDING_KINDS for r in _of_kind(ctx, kind)]
    return standing, _of_kind(ctx, "task") if tasks else []


def fingerprint(record: dict) -> str:
    """What a session start showed of a memory, in short: it differs once the memory was edited."""
    text = "\0".join(str(record.get(key) or "") for key in ("kind", "title", "body", "status", "updated"))
    return sha256_builtin(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def index_tier(ctx: HookContext, shown: set[str], seen: dict[str, str] | None = None) -> tuple[list[dict], int]:
    """The memories of the index tier, in order — the environment's facts first (where it runs, which database,
    how to upgrade: rules/recall.toml [index] environment), then the kinds first to last, newest first within
    a kind — at most max_lines, none already shown in full, none `seen` as it is now (a resumed conversation
    holds its line); and how many more there were."""
    conf = ctx.rules("recall").get("index", {})
    if not conf.get("enabled", True) or not ctx.index.exists():
        return [], 0
    most = int(conf.get("max_lines", 20))
    candidates = [r for kind in conf.get("kinds", []) for r in _of_kind(ctx, str(kind)) if r["id"] not in shown]
    if seen:
        candidates = [r for r in candidates if seen.get(r["id"]) != fingerprint(r)]
    environment = _environment_words(tuple(conf.get("environment", [])))
    if environment:
        about = ctx.index.naming_any_kept([r["id"] for r in candidates], ("title", "tags"), environment)
        first = [r for r in candidates if r["id"] in about]  # its title or its tags name the environment
        ids = {r["id"] for r in first}
        candidates = first + [r for r in candidates if r["id"] not in ids]
    return candidates[:most], max(0, len(candidates) - most)


def _environment_words(words: tuple[str, ...]) -> frozenset[str]:
    from gate.textproc import terms

    return frozenset(t for word in words for t in terms(str(word)))


def at_start(ctx: HookContext, ledger: Ledger, source: Any) -> Outcome:
    """What a context window starts with (`source`: startup, resume, clear or compact), within the session-start
    budget; the standing memories are marked delivered in the ledger, the index lines are not."""
    if ledger.muted or muted_by(ctx.paths, False):
        return Outcome("skipped", "SKIP_MUTED", gate="session_start")
    directives, tasks = standing_memories(ctx)
    # by their triggers (rules/triggers.toml), plus other memories cued for this moment, split around the tasks
    directives, tasks, early, late = at_session_start(ctx, ledger, source, directives, tasks)
    resumed = source == "resume"
    if resumed:
        # A resumed conversation still holds what this window delivered (e.g. just after /compact) and what its
        # starts showed: only what is new, or edited since it was shown, comes again.
        shown_then = ledger.start_shown

        def new(r: dict) -> bool:
            then = shown_then.get(r["id"])
            return (r["id"] not in ledger.delivered and then is None) or (then is not None and then != fingerprint(r))

        directives = [r for r in directives if new(r)]
        tasks = [r for r in tasks if new(r)]
    full = directives + tasks + early + late
    listed, beyond = index_tier(ctx, {r["id"] for r in full} | (set(ledger.delivered) if resumed else set()),
                                ledger.start_shown if resumed else None)
    if not full and not listed:
        reason = "SKIP_RESUMED_NOTHING_NEW" if resumed else "SKIP_NOTHING_STANDING"
        return Outcome("skipped", reason, gate="session_start", extra={"source": source})
    messages = ctx.rules("messages")["session_start"]
    if source == "compact":
        header = [messages["reason_compact"]]
    else:
        header = [messages.get("reason_resume", messages["header"]) if resumed else messages["header"]]
    limit = budget_chars(int(ctx.settings.get("session_start_budget_tokens", 1000)))
    items = BudgetedItems(limit)
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
        items.add("", messages["tasks"].format(gate=gate_command()))
        for r in tasks:
            items.add(r["id"], lambda r=r: index_line(r, root=ctx.paths.root))
    items.extend(cue_items(ctx, late))
    footer = [provenance_note(ctx, full + listed), messages["footer"].format(gate=gate_command())]
    # The index comes last, with a budget of its own sized to the lines it has (at most max_lines of at most
    # title_chars): standing memories that fill theirs never leave it empty. Both within what the CLI takes.
    index_items = BudgetedItems(HARD_LIMIT_CHARS)
    if listed:
        index_items.add("", messages["index"].format(gate=gate_command()))
        width = int(ctx.rules("recall").get("index", {}).get("title_chars", 120))
        for r in listed:
            index_items.add(INDEX_MARK + r["id"], lambda r=r: index_line({**r, "title": _short(r["title"], width)}))
    index_need = sum(len(line) + 1 for _, line in index_items.items)
    standing_text, kept, dropped = fit(header, items.items, [], limit - sum(len(line) + 1 for line in footer))
    room = max(0, HARD_LIMIT_CHARS - len(standing_text) - 1 - sum(len(line) + 1 for line in footer))
    index_text, index_kept, index_dropped = fit([], index_items.items, [], min(index_need, room))
    text = "\n".join(part for part in (standing_text, index_text, *footer) if part)
    indexed = [i[len(INDEX_MARK):] for i in index_kept if i.startswith(INDEX_MARK)]
    kept = [i for i in kept if i]
    dropped += index_dropped
    ledger.mark_delivered(kept)  # the index lines are not: their memory's full delivery is still to come
    records = {r["id"]: r for r in full + listed}
    ledger.note_start_shown({i: fingerprint(records[i]) for i in (*kept, *indexed) if i in records}, fresh=not resumed)
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
        extra={"source": source, "indexed": indexed, **_left_out(dropped, beyond)},
    )


INDEX_MARK = "index:"


def _left_out(dropped: list[str], beyond: int) -> dict[str, Any]:
    """What the audit says was left out: memories over the budget (in full, as index lines) and how many the
    index had no line for (past max_lines)."""
    out: dict[str, Any] = {}
    full = [i for i in dropped if i and not i.startswith(INDEX_MARK)]
    lines = [i[len(INDEX_MARK):] for i in dropped if i.startswith(INDEX_MARK)]
    if full:
        out["left_out"] = full
    if lines:
        out["index_left_out"] = lines
    if beyond:
        out["index_beyond_max_lines"] = beyond
    return out


def _short(title: str, width: int) -> str:
    """A title cut at a word boundary to `width` characters (an index line is a pointer: `gate show` has it all)."""
    if len(title) <= width:
        return title
    cut = title[: width - 1].rsplit(" ", 1)[0]
    return f"{cut}…"
