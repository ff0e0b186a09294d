"""Cue-anchored delivery (hot path: standard library; tantivy only for prompt keywords).

PreToolUse (`anchored`, called by gate/gates/events/pre_tool_use.py): before a Read/Edit/Write/MultiEdit/
NotebookEdit/Grep/Glob touches a file, or a Bash command runs, the memories whose triggers match come back as
additionalContext (which Claude Code shows the model after the tool result). The tool is never denied. The same
machinery serves the other cues: keyword and first-prompt cues ride on the recall gate's answer
(gate/gates/recall/prompt_cues.py), session-start and post-compaction cues on the session-start gate's
(`at_session_start`).

Every cue is deterministic and audited: a memory comes back at most once per compaction window (the
ledger's `delivered`, re-armed at compaction), never outside its not-before/expires window, never sooner
than its cooldown, and within a budget per injection and per session, dropping by precedence (directive >
gotcha > task > decision/fix > finding > others) with the dropped ids in the audit. Triggers and their
syntax: gate/memory/cues/triggers.py and rules/triggers.toml.
"""

from __future__ import annotations

import os
import time

from gate.gates.base import HookContext, Outcome, additional_context
from gate.literals import compile_cached
from gate.memory.cues import load as cue_table
from gate.memory.cues import shards
from gate.memory.cues import triggers as trig
from gate.render import HARD_LIMIT_CHARS, budget_chars, clean, fit, gate_command, index_line
from gate.session.ledger import Ledger
from gate.session.mute import muted_by

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    import re
    from typing import Any

GATE = "anchors"
SOURCE_ORDER = {"human": 0, "user": 1, "agent": 2}
MAX_COMMAND_CHARS = 8_000  # a command regex sees at most this much (a heredoc must not stall the hook)
MIN_SESSION_ROOM = 200


# --- rules ----------------------------------------------------------------------------------------------------------
def trigger_rules(ctx: HookContext) -> dict[str, Any]:
    return ctx.rules("triggers")


def messages_for(ctx: HookContext, rules: dict[str, Any]) -> dict[str, str]:
    merged = dict(rules.get("messages", {}))  # older user overrides in triggers.toml still count
    merged.update(ctx.rules("messages").get("anchors", {}))
    return merged


def rank(record: dict[str, Any], precedence: dict[str, Any]) -> int:
    value = precedence.get(str(record.get("kind")), precedence.get("other", 99))
    return int(value) if isinstance(value, int) else 99


def order(records: list[dict[str, Any]], precedence: dict[str, Any]) -> list[dict[str, Any]]:
    """Precedence first, then who wrote it (a person before an agent), then newest first."""
    newest = sorted(records, key=lambda r: str(r.get("created", "")), reverse=True)
    return sorted(newest, key=lambda r: (rank(r, precedence), SOURCE_ORDER.get(str(r.get("source")), 3)))


def provenance_note(ctx: HookContext, records: list[dict[str, Any]]) -> str:
    """Agent-written memories are framed as claims to verify; a person's words are marked as such."""
    messages = ctx.rules("messages").get("recall", {})
    personal = any(r.get("source") in ("human", "user") for r in records)
    return str(messages.get("provenance_mixed" if personal else "provenance_agent", ""))


# --- what a tool call touches -----------------------------------------------------------------------------------------
def _relative(value: str, root: str, cwd: str) -> str | None:
    """A tool's path argument relative to the project root ('/'-separated), or None when outside it."""
    if "\x00" in value or "\x00" in cwd:
        return None  # no file has that name, and realpath() would raise
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    for candidate in (os.path.normpath(path), os.path.realpath(path)):
        if candidate == root:
            return ""
        if candidate.startswith(root + os.sep):
            return candidate[len(root) + 1 :].replace(os.sep, "/")
    return None


def _literal_head(pattern: str) -> tuple[str, bool]:
    """The leading directories of a glob pattern before its first wildcard, and whether it has none at all."""
    parts = pattern.replace("\\", "/").split("/")
    head: list[str] = []
    for part in parts:
        if any(ch in part for ch in "*?[{"):
            return "/".join(head), False
        head.append(part)
    return "/".join(head), True


class Touch:
    """What one tool call touches: files, directories (searches), or a command."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.files: list[str] = []
        self.dirs: list[str] = []
        self.command: str | None = None

    @property
    def label(self) -> str:
        if self.files:
            return self.files[0]
        if self.dirs:
            return self.dirs[0] + "/"
        return self.tool


def touch_of(ctx: HookContext, tools: dict[str, Any]) -> Touch | None:
    tool = ctx.event.get("tool_name")
    tool_input = ctx.event.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    touch = Touch(tool)
    run = tools.get("run", {})
    if tool in run:
        command = tool_input.get(run[tool])
        if not isinstance(command, str) or not command.strip():
            return None
        touch.command = command[:MAX_COMMAND_CHARS]
        return touch
    root = ctx.paths.root
    cwd = ctx.event.get("cwd") if isinstance(ctx.event.get("cwd"), str) else root
    for key in tools.get("files", {}).get(tool, []):
        value = tool_input.get(key)
        for one in (value if isinstance(value, list) else [value]):  # a list: every file of one call
            if isinstance(one, str) and one:
                relative = _relative(one, root, cwd)
                if relative and relative not in touch.files:
                    touch.files.append(relative)
    base = cwd
    for key in tools.get("dirs", {}).get(tool, []):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            base = value if os.path.isabs(value) else os.path.join(cwd, value)
            relative = _relative(value, root, cwd)
            if relative:
                touch.dirs.append(relative)
                touch.files.append(relative)  # a search path may be one file
    for key in tools.get("patterns", {}).get(tool, []):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            head, literal = _literal_head(value)
            if head or literal:
                relative = _relative(head or ".", root, base)
                if relative:
                    (touch.files if literal else touch.dirs).append(relative)
    if not touch.files and not touch.dirs:
        return None
    return touch


# --- matching ---------------------------------------------------------------------------------------------------------
_compiled: dict[str, re.Pattern[str]] = {}


def _regex(source: str) -> re.Pattern[str]:
    pattern = _compiled.get(source)
    if pattern is None:
        pattern = _compiled[source] = compile_cached(source)
    return pattern


def glob_matches_file(glob: str, relative: str) -> bool:
    from gate.memory.cues import globs  # only for a path cue

    static = globs.static_dir(glob)
    if glob == static or glob == static + "/**":  # the common case, a directory or a file: no regex to compile
        return relative == static or relative.startswith(static + "/")
    return bool(_regex(globs.glob_regex(glob)).fullmatch(relative))


def glob_matches_dir(glob: str, relative: str) -> bool:
    """A search over a directory touches a glob's files when the directory lies at or below the glob's literal
    directory (a search of `src/` is no cue for `src/payments/**`; one of `src/payments/` is)."""
    from gate.memory.cues import globs  # only for a path cue

    static = globs.static_dir(glob)
    if not static or relative.count("/") < static.count("/"):
        return False
    return globs.could_contain(glob, relative)


def _tool_match(trigger: dict[str, Any], touch: Touch, tools: dict[str, Any]) -> bool:
    event = trigger.get("event")
    if event == "pre-edit" and touch.tool not in tools.get("edit", []):
        return False
    if event == "pre-run" and touch.tool not in tools.get("run", {}):
        return False
    if event not in (None, "pre-edit", "pre-run") or trigger.get("keywords"):
        return False
    globs = trigger.get("paths") or []
    if globs and not (
        any(all(glob_matches_file(g, f) for g in globs) for f in touch.files)
        or any(all(glob_matches_dir(g, d) for g in globs) for d in touch.dirs)
    ):
        return False
    commands = trigger.get("commands") or []
    if commands:
        if touch.command is None:
            return False
        for index, command in enumerate(commands):
            needs = (trigger.get("needs") or [])[index:index + 1]
            if needs and needs[0]:
                text, ignore = needs[0]
                if text not in (touch.command.lower() if ignore else touch.command):
                    return False  # cannot match: no regex compiled for it
            if not _regex(command).search(touch.command):
                return False
    return bool(globs or commands or event)


class Selection:
    """Matched memories sorted into: to deliver, already delivered / cooling down, outside their window."""

    def __init__(self) -> None:
        self.deliver: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (record, trigger that fired)
        self.suppressed: list[str] = []
        self.cooling: list[str] = []
        self.outside: dict[str, str] = {}


def collect(found: list[tuple[str, dict[str, Any], dict[str, Any]]], accept: Any) -> tuple[
    dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]
]:
    """(triggers that hold by memory id, records by id) among `found`, keeping those `accept(trigger)` holds for."""
    matched: dict[str, list[dict[str, Any]]] = {}
    records: dict[str, dict[str, Any]] = {}
    for memory_id, trigger, record in found:
        if trigger not in matched.get(memory_id, []) and accept(trigger):
            matched.setdefault(memory_id, []).append(trigger)
            records.setdefault(memory_id, record)
    return matched, records


def select(
    records: dict[str, dict[str, Any]], matched: dict[str, list[dict[str, Any]]], ledger: Ledger, now: float
) -> Selection:
    selection = Selection()
    delivered = set(ledger.delivered)
    for memory_id, fired in matched.items():
        open_triggers = [t for t in fired if trig.window_state(t, now) == "open"]
        if not open_triggers:
            selection.outside[memory_id] = trig.window_state(fired[0], now)
            continue
        if memory_id in delivered:
            selection.suppressed.append(memory_id)
            continue
        last = ledger.cooldowns.get(memory_id)
        ready = [
            t for t in open_triggers
            if not t.get("cooldown") or not isinstance(last, int | float) or now - last >= float(t["cooldown"])
        ]
        if not ready:
            selection.cooling.append(memory_id)
            continue
        selection.deliver.append((records[memory_id], ready[0]))
    return selection


# --- delivering -------------------------------------------------------------------------------------------------------
def deliver(
    ctx: HookContext,
    ledger: Ledger,
    selection: Selection,
    header: str,
    rules: dict[str, Any],
    *,
    room: int = HARD_LIMIT_CHARS,
) -> tuple[str | None, list[str], list[str], str]:
    """Render the selection within the budgets: (text or None, kept ids, dropped ids, drop reason or '')."""
    budget = rules.get("budget", {})
    session_room = int(budget.get("session_tokens", 25_000)) * 4 - ledger.injected_chars
    by_id = {record["id"]: (record, trigger) for record, trigger in selection.deliver}
    ordered = order([record for record, _ in selection.deliver], rules.get("precedence", {}))
    ids = [r["id"] for r in ordered]
    if session_room < MIN_SESSION_ROOM:
        return None, [], ids, "DROPPED_SESSION_BUDGET"
    tokens = int(ctx.settings.get("anchor_budget_tokens", 600))
    if tokens <= 0:  # none: e.g. where the agent takes no context (gate/hosts/gemini/hook_io.py settings_for)
        return None, [], ids, "DROPPED_BUDGET"
    limit = min(budget_chars(tokens), session_room, room)
    max_items = int(budget.get("max_items", 5))
    shown, over = ordered[:max_items], ordered[max_items:]
    root = ctx.paths.root
    items = [(r["id"], index_line(r, with_body=True, root=root)) for r in shown]
    messages = messages_for(ctx, rules)
    footer = [provenance_note(ctx, shown), messages["footer"].format(gate=gate_command())]
    text, kept, dropped = fit([header], items, footer, limit)
    dropped += [r["id"] for r in over]
    if not kept:
        return None, [], dropped, "DROPPED_SESSION_BUDGET" if limit == session_room else "DROPPED_BUDGET"
    now = time.time()
    ledger.mark_delivered(kept)
    for memory_id in kept:
        ledger.anchors_fired[f"{memory_id} {by_id[memory_id][1].get('spec', '')}"] = now
    ledger.injected_chars += len(text)
    return text, kept, dropped, ""


def skip_reason(selection: Selection) -> str:
    if selection.suppressed:
        return "SUPPRESSED_ALREADY_DELIVERED"
    if selection.cooling:
        return "SUPPRESSED_COOLDOWN"
    if selection.outside:
        return "SKIP_OUTSIDE_WINDOW"
    return "SKIP_NO_CUE"


def selection_extra(selection: Selection, kept: list[str]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    fired = {record["id"]: trigger.get("spec", "") for record, trigger in selection.deliver if record["id"] in kept}
    if fired:
        extra["fired"] = fired
    if selection.outside:
        extra["outside_window"] = selection.outside
    if selection.cooling:
        extra["cooldown"] = selection.cooling
    return extra


# --- PreToolUse ------------------------------------------------------------------------------------------------------
def anchored(ctx: HookContext, ledger: Ledger, rules: dict[str, Any]) -> Outcome:
    """Memories anchored to what this tool call touches, against `ledger` (the session's, or a subagent's)."""
    tools = rules.get("tools", {})
    touch = touch_of(ctx, tools)
    if touch is None:
        return Outcome("skipped", "SKIP_NOT_A_CUE", gate=GATE)
    extra: dict[str, Any] = {"tool": touch.tool}
    if touch.command is None:
        extra["target"] = touch.label
    muted = muted_by(ctx.paths, ledger.muted)
    if muted:
        return Outcome("skipped", "SKIP_MUTED", gate=GATE, extra={**extra, "muted": muted})
    table = cue_table.load(ctx.paths, shards.defaults_from(rules))
    found: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for relative in touch.files:
        found += table.path_triggers(relative)
    for relative in touch.dirs:
        found += table.path_triggers(relative, with_root=False)  # see glob_matches_dir
    if touch.command is not None:
        found += table.commands(lambda trigger: _tool_match(trigger, touch, tools)) + table.event("pre-run")
    if touch.tool in tools.get("edit", []):
        found += table.event("pre-edit")
    matched, records = collect(found, lambda trigger: _tool_match(trigger, touch, tools))
    if not matched:
        return Outcome("skipped", "SKIP_NO_CUE", gate=GATE, extra=extra)
    selection = select(records, matched, ledger, time.time())
    extra.update(selection_extra(selection, []))
    suppressed = selection.suppressed + selection.cooling
    if not selection.deliver:
        return Outcome("skipped", skip_reason(selection), gate=GATE, suppressed=suppressed, extra=extra)
    messages = messages_for(ctx, rules)
    if touch.command is not None:
        target = messages["target_command"].format(command=clean(touch.command, 80).replace("`", "'"))
    else:
        target = clean(touch.label, 200)
    text, kept, dropped, drop_reason = deliver(ctx, ledger, selection, messages["header"].format(target=target), rules)
    extra.update(selection_extra(selection, kept))
    if text is None:
        return Outcome("skipped", drop_reason, gate=GATE, suppressed=suppressed, dropped=dropped, extra=extra)
    first = next(trigger for record, trigger in selection.deliver if record["id"] == kept[0])
    reason = "FIRED_PATH" if first.get("paths") else "FIRED_COMMAND" if first.get("commands") else "FIRED_EVENT"
    return Outcome(
        "fired",
        reason,
        output=additional_context("PreToolUse", text),
        gate=GATE,
        delivered=kept,
        suppressed=suppressed,
        dropped=dropped,
        chars=len(text),
        extra=extra,
    )


# --- SessionStart: session-start and post-compaction cues -------------------------------------------------------------
def at_session_start(
    ctx: HookContext, ledger: Ledger, source: Any, directives: list[dict[str, Any]], tasks: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(directives, tasks, cued before tasks, cued after tasks) for this start.

    Directives and open tasks come back by their kind's default (rules/triggers.toml) unless they declare cues
    of their own; other memories come back when they declare this event. Cued ones are ordered by precedence
    and split around the tasks, so the budget drops them in precedence order."""
    rules = trigger_rules(ctx)
    defaults = shards.defaults_from(rules)
    try:
        table = cue_table.load(ctx.paths, defaults)
    except Exception:  # without the cue table, the kinds' standing delivery goes on as before
        return directives, tasks, [], []
    channel = trig.CHANNEL_COMPACT if source == "compact" else trig.CHANNEL_START
    found = [(r["id"], t, r) for r in directives + tasks for t in trig.effective_triggers(r, defaults)]
    found += table.event(channel)
    matched, records = collect(found, lambda trigger: trigger.get("event") == channel)
    selection = select(records, matched, ledger, time.time())
    due = {record["id"] for record, _ in selection.deliver}
    if source != "resume":
        # select() leaves out what this window delivered; a new window needs its standing memories again
        # (a resumed conversation still holds them)
        due |= set(selection.suppressed)
    directives = [r for r in directives if r["id"] in due]
    tasks = [r for r in tasks if r["id"] in due]
    shown = {r["id"] for r in directives + tasks}
    extra = [records[i] for i in sorted(due - shown)]
    directives += [r for r in extra if r.get("kind") == "directive"]
    tasks += [r for r in extra if r.get("kind") == "task"]
    precedence = rules.get("precedence", {})
    others = order([r for r in extra if r.get("kind") not in ("directive", "task")], precedence)
    task_rank = rank({"kind": "task"}, precedence)
    early = [r for r in others if rank(r, precedence) < task_rank]
    late = [r for r in others if rank(r, precedence) >= task_rank]
    return directives, tasks, early, late


def cue_items(ctx: HookContext, records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """A section of cued memories for the session-start answer (empty when there are none)."""
    if not records:
        return []
    header = messages_for(ctx, trigger_rules(ctx))["start_section"]
    return [("", header)] + [(r["id"], index_line(r, with_body=True, root=ctx.paths.root)) for r in records]
