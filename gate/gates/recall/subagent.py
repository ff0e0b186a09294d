"""Subagents (hot path): memory for the work the agent hands off, and anchors inside the subagent's own tool calls.

Measured on Claude Code 2.1.332 (docs/subagents.md):
- PreToolUse for the spawn tool ("Agent"; "Task" in older CLIs) carries the task the parent wrote
  (tool_input.prompt). Its `updatedInput` replaces the input the subagent is started from: the task prompt
  becomes the subagent's first user message. Its additionalContext reaches the PARENT, never the subagent.
  So the memories for the task (the recall gate's search, floor and budget) and the project's directives are
  appended to the task prompt. The parent's ledger is not marked: the parent's context never holds them.
- The subagent's own tool calls fire PreToolUse with `agent_id` and `agent_type` (transcript_path is the
  parent's): their anchors use a ledger of the subagent's own, kept in the parent's ledger under its id, so
  what the parent was shown does not silence a gotcha for the subagent.
- SubagentStop carries agent_id, agent_type, agent_transcript_path: it is audited and never answers (only
  the parent's Stop may block).
What a spawn delivered is remembered under a hash of the prompt it wrote; the subagent's transcript
(<session>/subagents/agent-<id>.jsonl) starts with that prompt, which is how the subagent's ledger finds it.

An agent whose spawn call cannot carry them (Codex: setting spawn_delivery = "subagent_start", given by its host)
gets the same memories at the child's SubagentStart instead, as additionalContext: the spawn keeps the rendered
block in the parent's ledger (`spawns`, with its task name), and SubagentStart hands it to the child whose
transcript names that task (Codex's session_meta agent_path), else to the oldest one waiting.
"""

from __future__ import annotations

import os
import stat
import time

from gate.gates.base import HookContext, Outcome
from gate.session.ledger import Ledger

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

GATE = "subagent"
MAX_AGENTS = 50  # subagent ledgers kept per session (the newest)
MAX_SPAWNS = 20  # spawn deliveries waiting for their subagent's first tool call
SPAWN_MAX_AGE = 6 * 3600.0
FIRST_LINE_BYTES = 1024 * 1024  # the subagent transcript's first line is the task prompt
# The part of a Ledger a subagent has of its own (the rest — topic, write-back, compaction — is the parent's).
AGENT_FIELDS = ("delivered", "cooldowns", "anchors_fired", "injected_chars", "delivered_total")
_SAFE_ID = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def agent_of(event: dict[str, Any]) -> tuple[str, str]:
    """(agent id, agent type) of the subagent an event came from; ('', '') for the main conversation."""
    agent_id = event.get("agent_id")
    agent_type = event.get("agent_type")
    return (
        agent_id[:100] if isinstance(agent_id, str) else "",
        agent_type[:100] if isinstance(agent_type, str) else "",
    )


def _tag(outcome: Outcome, agent_id: str, agent_type: str) -> Outcome:
    """The audit says which subagent a decision was for."""
    if agent_id:
        outcome.extra["agent_id"] = agent_id
    if agent_type:
        outcome.extra["agent_type"] = agent_type
    return outcome


# --- PreToolUse: a spawn, or a tool call inside a subagent ------------------------------------------------------------
def on_pre_tool_use(ctx: HookContext, ledger: Ledger, rules: dict[str, Any]) -> Outcome:
    """Called at PreToolUse (gate/gates/events/pre_tool_use.py) for a spawn tool and for every tool call that
    carries an agent_id."""
    agent_id, agent_type = agent_of(ctx.event)
    if ctx.event.get("tool_name") in rules.get("tools", {}).get("spawn", ()):
        outcome = on_spawn(ctx, ledger)
        if agent_id:  # a subagent spawning one of its own
            outcome.extra["spawned_by"] = agent_id
        return outcome
    from gate.gates.delivery.anchors import anchored

    if not agent_id:  # an agent_id that is no id: the main conversation's call, as without one
        return anchored(ctx, ledger, rules)
    sub = agent_ledger(ctx, ledger, agent_id, agent_type)
    outcome = anchored(ctx, sub, rules)
    keep_agent_ledger(ledger, agent_id, agent_type, sub)
    return _tag(outcome, agent_id, agent_type)


def on_spawn(ctx: HookContext, ledger: Ledger) -> Outcome:
    tool_input = ctx.event.get("tool_input")
    task = tool_input.get("prompt") if isinstance(tool_input, dict) else None
    if not isinstance(task, str) or not task.strip():
        return Outcome("skipped", "SKIP_NO_TASK", gate=GATE, extra={"spawn": True})
    agent_type = tool_input.get("subagent_type") if isinstance(tool_input.get("subagent_type"), str) else ""
    extra: dict[str, Any] = {"spawn": True, "agent_type": (agent_type or "general-purpose")[:100]}
    tool_use_id = ctx.event.get("tool_use_id")
    if isinstance(tool_use_id, str):
        extra["tool_use_id"] = tool_use_id[:100]
    from gate.session.mute import muted_by

    if ledger.muted or muted_by(ctx.paths, False) or not ctx.settings.get("recall", True):
        return Outcome("skipped", "SKIP_MUTED", gate=GATE, extra=extra)
    # A fork inherits the parent's whole conversation: what the parent holds is not repeated, and its
    # directives are already there.
    fork = agent_type == "fork"
    hits, related, trace = _search_task(ctx, task, set(ledger.delivered) if fork else set(), extra)
    directives = [] if fork else _directives(ctx, {h.id for h in hits})
    if not hits and not directives:
        return Outcome("skipped", "SKIP_NOTHING_FOR_TASK", gate=GATE, extra=extra)
    if trace is not None:
        extra["trace"] = trace
    text, kept, dropped = _render(ctx, hits, related, directives)
    if not kept:
        return Outcome("skipped", "DROPPED_BUDGET", gate=GATE, dropped=dropped, extra=extra)
    if ctx.settings.get("spawn_delivery") == "subagent_start":
        name = tool_input.get("description") if isinstance(tool_input.get("description"), str) else ""
        _remember_spawn(ledger, f"{task}\0{tool_use_id}", kept, extra["agent_type"], text=text, name=name)
        return Outcome("held", "HELD_FOR_SUBAGENT_START", gate=GATE, dropped=dropped, chars=len(text),
                       extra={**extra, "held": kept})
    prompt = f"{task}\n\n{text}"
    updated = dict(tool_input)
    updated["prompt"] = prompt
    _remember_spawn(ledger, prompt, kept, extra["agent_type"])
    return Outcome(
        "fired",
        "FIRED_SPAWN",
        output={"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated}},
        gate=GATE,
        delivered=kept,
        dropped=dropped,
        chars=len(text),
        extra=extra,
    )


def _search_task(
    ctx: HookContext, task: str, exclude: set[str], extra: dict[str, Any]
) -> tuple[list[Any], list[Any], dict[str, Any] | None]:
    """The recall gate's search for the task: the same query, floor and cap (gate/gates/recall/fire.py find())."""
    from gate.gates.recall import fire as recall

    query = recall.task_query(ctx, task)
    if query is None or not query.weights:
        return [], [], None
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return [], [], None
    own = set() if query.content_free else set(query.prompt_terms)
    hits, related, result = recall.find(ctx, query.terms, query.weights, exclude, own)
    extra["terms"] = result.terms[:16]
    return hits, related, result.trace_json()


def _directives(ctx: HookContext, shown: set[str]) -> list[dict[str, Any]]:
    """The project's directives as a session start delivers them (their own cues decide), to a fresh context."""
    from gate.gates.delivery.anchors import at_session_start
    from gate.gates.recall.standing import standing_memories

    directives, _ = standing_memories(ctx, tasks=False)
    if not directives:
        return []
    # The common case costs no trigger parsing: a directive without cues of its own comes by its kind's default.
    from gate.memory.cues.shards import defaults_from
    from gate.memory.cues.triggers import CHANNEL_START

    by_default = f"event:{CHANNEL_START}" in (defaults_from(ctx.rules("triggers")).get("directive") or [])
    cued = [r for r in directives if r.get("triggers") or not by_default]
    due = {r["id"] for r in directives} - {r["id"] for r in cued}
    if cued:
        chosen, _, _, _ = at_session_start(ctx, Ledger(session=""), "startup", cued, [])
        due |= {r["id"] for r in chosen}
    return [r for r in directives if r["id"] in due and r["id"] not in shown]


def _render(
    ctx: HookContext, hits: list[Any], related: list[Any], directives: list[dict[str, Any]]
) -> tuple[str, list[str], list[str]]:
    """The recall block (recall.render, within the recall budget), then the directives (within the session-start
    budget), under one line saying where they come from."""
    from gate.gates.recall.fire import render
    from gate.render import BudgetedItems, budget_chars, fit, index_line

    messages = ctx.rules("messages")
    mine = messages.get("subagent", {})
    parts = [str(mine.get("intro", "MEMORY for this task (from memory-gate):"))]
    kept: list[str] = []
    dropped: list[str] = []
    if hits:
        limit = budget_chars(int(ctx.settings.get("recall_budget_tokens", 1500)))
        reason = str(mine.get("reason", "the task you were given"))
        text, kept, dropped = render(reason, [], hits, related, ctx, limit)
        parts.append(text)
    if directives:
        limit = budget_chars(int(ctx.settings.get("session_start_budget_tokens", 1000)))
        items = BudgetedItems(limit)  # rendered while the budget can hold them
        for r in directives:
            items.add(r["id"], lambda r=r: index_line(r, with_body=True, root=ctx.paths.root))
        text, shown, over = fit([messages["session_start"]["directives"]], items.items, [], limit)
        shown = [i for i in shown if i]
        if shown:
            parts.append(text)
            kept += shown
        dropped += [i for i in over if i]
    return "\n\n".join(parts), kept, dropped


# --- the subagent's own ledger ----------------------------------------------------------------------------------------
def _spawn_key(prompt: str) -> str:
    from gate.paths import sha256_builtin

    return sha256_builtin(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _remember_spawn(ledger: Ledger, prompt: str, delivered: list[str], agent_type: str, text: str = "",
                    name: str = "") -> None:
    """A spawn's delivery waiting for its subagent; `text`: the block still to give it (at its SubagentStart)."""
    now = time.time()
    spawns = {
        key: value for key, value in ledger.spawns.items()
        if isinstance(value, dict) and now - float(value.get("at", 0) or 0) < SPAWN_MAX_AGE
    }
    spawn: dict[str, Any] = {"delivered": delivered, "type": agent_type, "at": now}
    if text:
        spawn["text"] = text
        spawn["name"] = name[:200]
    spawns[_spawn_key(prompt)] = spawn
    ledger.spawns = dict(list(spawns.items())[-MAX_SPAWNS:])


def subagent_transcript(ctx: HookContext, agent_id: str) -> str | None:
    """<session transcript without .jsonl>/subagents/agent-<id>.jsonl, where 2.1.332 keeps it."""
    explicit = ctx.event.get("agent_transcript_path")
    if isinstance(explicit, str) and explicit:
        return explicit
    parent = ctx.transcript_path
    if not parent or not agent_id or agent_id.strip(_SAFE_ID):
        return None
    return os.path.join(os.path.splitext(parent)[0], "subagents", f"agent-{agent_id}.jsonl")


def _first_prompt(path: str | None) -> str | None:
    """The subagent's first user message: the task prompt as the spawn left it."""
    if not path:
        return None
    from gate import fastjson as json
    from gate.session.turn import entry_text

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a FIFO would block open() until a writer came: a hook never hangs
        with open(path, "rb") as handle:
            for _ in range(8):
                line = handle.readline(FIRST_LINE_BYTES)
                if not line:
                    return None
                try:
                    entry = json.loads(line)
                except ValueError:
                    return None
                if isinstance(entry, dict) and entry.get("type") == "user":
                    return entry_text(entry)
    except OSError:
        return None
    return None


def _claim_spawn(ctx: HookContext, ledger: Ledger, agent_id: str, agent_type: str) -> list[str]:
    """What the spawn of this subagent delivered (and forget the pending spawn): found by the prompt its
    transcript starts with; failing that, the one pending spawn of its type, when there is exactly one."""
    prompt = _first_prompt(subagent_transcript(ctx, agent_id))
    key = _spawn_key(prompt) if prompt is not None else None
    if key not in ledger.spawns:
        # (a spawn holding "text" is SubagentStart's to give, never guessed here)
        of_type = [k for k, v in ledger.spawns.items()
                   if isinstance(v, dict) and v.get("type") == agent_type and "text" not in v]
        key = of_type[0] if len(of_type) == 1 else None
    spawn = ledger.spawns.pop(key, None) if key is not None else None
    delivered = spawn.get("delivered") if isinstance(spawn, dict) else None
    return [str(i) for i in delivered] if isinstance(delivered, list) else []


def agent_ledger(ctx: HookContext, ledger: Ledger, agent_id: str, agent_type: str) -> Ledger:
    """The subagent's ledger: its own deliveries, the parent's mute."""
    state = ledger.agents.get(agent_id)
    if isinstance(state, dict):
        sub = Ledger(session=f"{ledger.session}/{agent_id}", **{k: state[k] for k in AGENT_FIELDS if k in state})
    else:
        sub = Ledger(session=f"{ledger.session}/{agent_id}", force_shift="")
        sub.mark_delivered(_claim_spawn(ctx, ledger, agent_id, agent_type))
    sub.muted = ledger.muted
    sub.project = ledger.project
    sub.project_id = ledger.project_id
    return sub


def keep_agent_ledger(ledger: Ledger, agent_id: str, agent_type: str, sub: Ledger) -> None:
    state: dict[str, Any] = {name: getattr(sub, name) for name in AGENT_FIELDS}
    state["type"] = agent_type
    state["seen"] = time.time()
    agents = {k: v for k, v in ledger.agents.items() if k != agent_id and isinstance(v, dict)}
    agents[agent_id] = state
    if len(agents) > MAX_AGENTS:
        agents = dict(sorted(agents.items(), key=lambda kv: float(kv[1].get("seen", 0) or 0))[-MAX_AGENTS:])
    ledger.agents = agents


# --- SubagentStart (an agent whose spawn call cannot carry the memories: Codex) --------------------------------------
def on_subagent_start(ctx: HookContext, ledger: Ledger) -> Outcome:
    """The block the child's spawn held for it, as additionalContext (it reaches the child, never the parent); the
    child's ledger starts with what it was given. Nothing held: silent."""
    agent_id, agent_type = agent_of(ctx.event)
    waiting = [k for k, v in ledger.spawns.items() if isinstance(v, dict) and isinstance(v.get("text"), str)]
    if not agent_id or not waiting:
        return _tag(Outcome("skipped", "SKIP_NOTHING_HELD", gate=GATE), agent_id, agent_type)
    name = _task_name(ctx.transcript_path)
    named = [k for k in waiting if name and ledger.spawns[k].get("name") == name]
    key = named[0] if named else waiting[0]  # else the oldest waiting: Codex starts children in spawn order
    spawn = ledger.spawns.pop(key)
    delivered = [str(i) for i in spawn.get("delivered") or []]
    sub = Ledger(session=f"{ledger.session}/{agent_id}", force_shift="")
    sub.mark_delivered(delivered)
    keep_agent_ledger(ledger, agent_id, agent_type, sub)
    text = str(spawn["text"])
    from gate.gates.base import additional_context

    extra: dict[str, Any] = {"matched": "task_name" if named else "oldest"}
    return _tag(Outcome("fired", "FIRED_SUBAGENT_START", output=additional_context("SubagentStart", text), gate=GATE,
                        delivered=delivered, chars=len(text), extra=extra), agent_id, agent_type)


def _task_name(path: str | None) -> str:
    """The task name a Codex child's rollout opens with (session_meta agent_path /root/…/NAME); '' if none."""
    if not path:
        return ""
    from gate import fastjson as json

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return ""
        with open(path, "rb") as handle:
            entry = json.loads(handle.readline(FIRST_LINE_BYTES))
    except (OSError, ValueError):
        return ""
    payload = entry.get("payload") if isinstance(entry, dict) and entry.get("type") == "session_meta" else None
    agent_path = payload.get("agent_path") if isinstance(payload, dict) else None
    return agent_path.rsplit("/", 1)[-1] if isinstance(agent_path, str) else ""


# --- SubagentStop -----------------------------------------------------------------------------------------------------
def on_subagent_stop(ctx: HookContext, ledger: Ledger) -> Outcome:
    """Audited, never answered: a subagent's end is no turn of the user's (its reply reaches the parent, whose
    Stop weighs it)."""
    agent_id, agent_type = agent_of(ctx.event)
    extra: dict[str, Any] = {}
    if agent_id:
        sub = agent_ledger(ctx, ledger, agent_id, agent_type)  # claims the spawn of a subagent that ran no tool
        keep_agent_ledger(ledger, agent_id, agent_type, sub)
        extra["agent_delivered"] = len(sub.delivered)
    path = ctx.event.get("agent_transcript_path")
    if isinstance(path, str):
        extra["agent_transcript"] = path[:500]
    return _tag(Outcome("allowed", "ALLOWED_SUBAGENT_STOP", gate=GATE, extra=extra), agent_id, agent_type)
