"""A recorded Claude Code session as the hooks lived it: the events, in order, each with the byte offset at
which the transcript stood when that hook ran. A Codex CLI rollout is read the same way, each of its lines as
the transcript entry it is (gate/hosts/codex/rollout.py): its hooks have the same shape. So is a Gemini CLI chat
recording (gate/hosts/gemini/chat.py), whose hooks are the same gates under other names (BeforeAgent, AfterAgent,
BeforeTool): its first line holds the session's id (no working directory: a main session's recording names only a
hash of its project), `$set` and `$rewindTo` lines are no conversation, and a record appended again as it changed
(a reply, then the reply with its tool calls) is the same record: its prompt is not a new turn, each tool call
is one PreToolUse.

The walk is forward, one line at a time, and shares its notion of a prompt with the hooks' backward reader
(gate.session.turn.classify_user), so a turn starts in the same place for both. What Claude Code does,
measured on the real CLI (../shared/docs/claude-code-hooks.md, and Claude Code's own hook reference):
- SessionStart(startup) opens the session; a compaction boundary is PreCompact then SessionStart(compact),
  also in the middle of a turn, which then goes on (its Stop reads the turn from the boundary on).
- UserPromptSubmit runs before the prompt is written, so it sees the transcript up to the line before it.
  A slash command fires no UserPromptSubmit; a command that makes the model work (a custom command such as
  /review) ends with a Stop like any turn — the corpus's recorded Stop hook runs (stop_hook_summary lines)
  fall exactly on the Stops this walk finds, command turns included; a command that only prints (/clear,
  /model) has no assistant reply and so no Stop.
- Stop runs when the assistant has finished, with its last block already written; a turn ended by an
  interruption ("[Request interrupted by user") has no Stop. "Stop hook feedback:" means a Stop hook blocked
  there, and so does a Stop hook's additionalContext (an attachment line, how gate blocks since it stopped
  answering `decision: block`): that was a Stop, and every later Stop of the turn has stop_hook_active true.
- PreToolUse runs for every tool call of the main conversation (sidechains are subagents: not this session).
- A subagent (the Agent tool) runs between its spawn's PreToolUse and the tool's result: its own tool calls
  fire PreToolUse with agent_id/agent_type, its end SubagentStop. Recent CLIs keep its transcript beside the
  session's (<session>/subagents/agent-<id>.jsonl, with agent-<id>.meta.json naming the spawning tool_use):
  where it was kept, its steps follow the spawn (docs/subagents.md).

A line that cannot be read is skipped and counted by cause, never fatal: a torn line, a line that is not a
JSON object; bytes that are not UTF-8 and lone surrogates are repaired (and counted), not skipped.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

from gate.hosts.codex import rollout
from gate.hosts.gemini import chat
from gate.session.transcript import without_surrogates
from gate.session.turn import (
    COMMAND,
    COMPACT_SUMMARY,
    HOOK_FEEDBACK,
    INTERRUPTED,
    PROMPT,
    TOOL_RESULTS,
    classify_user,
    entry_text,
    is_stop_hook_context,
)

# Line types that are conversation; every other type (progress, attachment, file-history-snapshot, …) is
# something the hooks skip too.
CONVERSATION = frozenset({"user", "assistant", "system"})


class Step:
    """One hook event of the recorded session."""

    __slots__ = ("end", "event", "line", "stamp", "turn")

    def __init__(self, event: dict[str, Any], line: int, end: int, turn: int, stamp: str = "") -> None:
        self.event = event  # the hook's stdin, as Claude Code would have sent it (hook_event_name, prompt, …)
        self.line = line  # 1-based line of the transcript entry that caused it (the prompt, the last block, …)
        self.end = end  # the transcript as the hook saw it: its first `end` bytes
        self.turn = turn  # the line of the prompt that opened this turn (0 before the first prompt)
        self.stamp = stamp  # when it happened: the last transcript timestamp at its line ("" when none yet)

    @property
    def name(self) -> str:
        return str(self.event["hook_event_name"])

    def __repr__(self) -> str:
        return f"Step({self.name}, line={self.line}, turn={self.turn})"


class Timeline:
    __slots__ = ("agent", "cwd", "lines", "path", "repaired", "session_id", "skipped", "steps", "subagent_thread",
                 "subagents")

    def __init__(self, path: str) -> None:
        self.path = path
        # or "codex": a Codex CLI rollout (gate/hosts/codex/rollout.py reads it); "gemini": a Gemini CLI chat
        # recording (gate/hosts/gemini/chat.py)
        self.agent = "claude-code"
        # a Codex rollout of a subagent's thread, or a Gemini subagent's recording (its prompts are the parent's)
        self.subagent_thread = False
        self.session_id = ""
        self.cwd = ""
        self.steps: list[Step] = []
        self.lines = 0
        self.skipped: Counter[str] = Counter()  # cause -> lines not read
        self.repaired: Counter[str] = Counter()  # cause -> lines read after a repair
        self.subagents = 0  # subagent transcripts whose steps were replayed

    def prompts(self) -> list[Step]:
        return [step for step in self.steps if step.name == "UserPromptSubmit"]

    def stops(self) -> list[Step]:
        return [step for step in self.steps if step.name == "Stop"]


def _decode(raw: bytes, timeline: Timeline) -> dict[str, Any] | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        timeline.repaired["invalid_utf8"] += 1
    try:
        entry = json.loads(text)
    except RecursionError:
        timeline.skipped["nested_too_deep"] += 1
        return None
    except ValueError:
        timeline.skipped["not_json"] += 1  # a torn line (the session was cut short) or garbage
        return None
    if not isinstance(entry, dict):
        timeline.skipped["not_an_object"] += 1
        return None
    if "\\ud" in text or "\\uD" in text:
        repaired = without_surrogates(entry)
        if repaired != entry:
            timeline.repaired["lone_surrogate"] += 1
        entry = repaired
    return entry


def _tool_uses(entry: dict[str, Any]) -> list[dict[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]


class _Walk:
    """The state of the forward walk: the open turn and what its Stop will carry."""

    def __init__(self, timeline: Timeline, base: dict[str, Any]) -> None:
        self.timeline = timeline
        self.base = base  # fields every event carries (session_id, transcript_path, cwd)
        self.turn = 0  # line of the prompt that opened the open turn; 0: none yet
        self.answered_at: tuple[int, int] | None = None  # (line, end) of the turn's last assistant block
        self.last_text = ""  # the last assistant text of the turn: Stop's last_assistant_message
        self.hook_continued = False  # a Stop hook blocked in this turn
        self.stamp = ""  # the last timestamp read
        self.answered_stamp = ""  # ... at the turn's last assistant block

    def emit(self, fields: dict[str, Any], line: int, end: int, stamp: str | None = None) -> None:
        step = Step({**self.base, **fields}, line, end, self.turn, self.stamp if stamp is None else stamp)
        self.timeline.steps.append(step)

    def stop(self) -> None:
        """The open turn's Stop, if it has one that has not run yet."""
        if self.answered_at is not None:
            line, end = self.answered_at
            self.emit(  # (at the time of the turn's last block, not of the prompt after it)
                {
                    "hook_event_name": "Stop",
                    "stop_hook_active": self.hook_continued,
                    "last_assistant_message": self.last_text,
                },
                line,
                end,
                self.answered_stamp,
            )
        self.answered_at = None

    def open_turn(self, line: int) -> None:
        self.turn = line
        self.answered_at = None
        self.last_text = ""
        self.hook_continued = False


def read_timeline(path: str) -> Timeline:
    """The hook events of one transcript, in order. Raises OSError only when the file cannot be opened."""
    timeline = Timeline(path)
    base: dict[str, Any] = {"transcript_path": os.path.abspath(path)}
    walk: _Walk | None = None
    subagents: dict[str, tuple[str, str, str]] | None = None  # spawning tool_use id -> subagent (read on need)
    records: set[str] = set()  # a Gemini recording's record ids read so far (a record is appended as it changes)
    calls: set[str] = set()  # ... and its tool calls' ids: one PreToolUse each
    offset = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            timeline.lines = number
            if not raw.strip():
                continue
            entry = _decode(raw, timeline)
            if entry is None:
                continue
            if "payload" in entry and rollout.is_rollout_line(entry):
                timeline.agent = "codex"
                entry = rollout.entry(entry)
                if entry is None:
                    continue  # reasoning, token counts, an event that repeats a response item
                if entry.get("type") == rollout.SESSION_META and entry.get("subagent") is True:
                    timeline.subagent_thread = True
            elif "message" not in entry and chat.is_record(entry):
                timeline.agent = "gemini"
                record_id = str(entry["id"])
                again = record_id in records
                records.add(record_id)
                entry = chat.entry(entry)
                if entry is None or (again and entry.get("type") == "user"):
                    continue  # a prompt or tool results appended again: read once
            elif walk is None and _gemini_session(entry):
                timeline.agent = "gemini"
                timeline.subagent_thread = entry.get("kind") == "subagent"
                directories = entry.get("directories")
                if isinstance(directories, list) and directories and isinstance(directories[0], str):
                    entry = {**entry, "cwd": directories[0]}
            if walk is None:
                timeline.session_id = str(entry.get("sessionId") or os.path.splitext(os.path.basename(path))[0])
                timeline.cwd = str(entry.get("cwd") or "")
                base.update(session_id=timeline.session_id, cwd=timeline.cwd)
                walk = _Walk(timeline, base)
                walk.stamp = _stamp(entry, walk.stamp)
                walk.emit({"hook_event_name": "SessionStart", "source": "startup"}, number, start)
            walk.stamp = _stamp(entry, walk.stamp)
            if not timeline.cwd and isinstance(entry.get("cwd"), str) and entry["cwd"]:
                timeline.cwd = base["cwd"] = entry["cwd"]  # the first lines of some versions have none
            kind = entry.get("type")
            if kind not in CONVERSATION:
                if is_stop_hook_context(entry) and entry.get("isSidechain") is not True:
                    walk.stop()  # gate's block, as today's gate answers it: a Stop, and the turn goes on
                    walk.hook_continued = True
                continue
            if entry.get("isSidechain") is True:
                timeline.skipped["sidechain"] += 1  # a subagent's conversation: its hooks are not this session's
                continue
            if kind == "system":
                if entry.get("subtype") == "compact_boundary":
                    # Compaction (auto or /compact) runs inside a turn or between turns; either way it is no Stop.
                    trigger = entry.get("compactMetadata", {}).get("trigger") if isinstance(
                        entry.get("compactMetadata"), dict) else None
                    walk.emit({"hook_event_name": "PreCompact", "trigger": trigger or "auto"}, number, start)
                    walk.emit({"hook_event_name": "SessionStart", "source": "compact"}, number, offset)
                continue
            if kind == "assistant":
                if entry.get("isApiErrorMessage") is True:
                    continue  # an API error ends the turn without a Stop (StopFailure)
                for use in _tool_uses(entry):
                    if timeline.agent == "gemini":  # a reply appended again carries its earlier calls too
                        if str(use.get("id", "")) in calls:
                            continue
                        calls.add(str(use.get("id", "")))
                    walk.emit(_tool_event(use), number, offset)
                    if subagents is None:
                        subagents = kept_subagents(path)
                    spawned = subagents.pop(str(use.get("id", "")), None) if subagents else None
                    if spawned is not None:
                        _subagent_steps(walk, spawned, number, offset)
                text = entry_text(entry)
                if text.strip():
                    walk.last_text = text
                walk.answered_at = (number, offset)
                walk.answered_stamp = walk.stamp
                continue
            role, text = classify_user(entry)
            if role == TOOL_RESULTS:
                continue
            if role == HOOK_FEEDBACK:
                walk.stop()  # a Stop hook blocked here: that was a Stop, and the turn goes on
                walk.hook_continued = True
                continue
            if role == COMPACT_SUMMARY:
                continue
            if role in (PROMPT, COMMAND):
                walk.stop()
                walk.open_turn(number)
                if role == PROMPT:
                    walk.emit({"hook_event_name": "UserPromptSubmit", "prompt": text}, number, start)
                continue
            if role == INTERRUPTED:
                walk.answered_at = None  # an interrupted turn ends without a Stop
        if walk is not None:
            walk.stop()
    return timeline


def _gemini_session(entry: dict[str, Any]) -> bool:
    """The first line of a Gemini CLI chat recording: the session's fields, no conversation."""
    return (isinstance(entry.get("sessionId"), str) and isinstance(entry.get("projectHash"), str)
            and "type" not in entry and "message" not in entry)


def _stamp(entry: dict[str, Any], last: str) -> str:
    stamp = entry.get("timestamp")
    return stamp if isinstance(stamp, str) and stamp else last


def kept_subagents(path: str) -> dict[str, tuple[str, str, str]]:
    """The subagent transcripts kept beside a session's: spawning tool_use id -> (agent id, type, path)."""
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    found: dict[str, tuple[str, str, str]] = {}
    for name in names:
        if not (name.startswith("agent-") and name.endswith(".jsonl")):
            continue
        agent_id = name[len("agent-"):-len(".jsonl")]
        try:
            with open(os.path.join(folder, f"agent-{agent_id}.meta.json"), encoding="utf-8") as handle:
                meta = json.load(handle)
        except (OSError, ValueError):
            continue  # without its meta, which spawn it was cannot be told
        if isinstance(meta, dict) and isinstance(meta.get("toolUseId"), str):
            found[meta["toolUseId"]] = (agent_id, str(meta.get("agentType") or ""), os.path.join(folder, name))
    return found


def _subagent_steps(walk: _Walk, subagent: tuple[str, str, str], line: int, end: int) -> None:
    """The hook events of one subagent's run, placed right after the PreToolUse that spawned it."""
    agent_id, agent_type, path = subagent
    fields = {"agent_id": agent_id, "agent_type": agent_type}
    last_text = ""
    try:
        with open(path, "rb") as handle:
            lines = handle.readlines()
    except OSError:
        return
    for raw in lines:
        if not raw.strip():
            continue
        entry = _decode(raw, walk.timeline)
        if entry is None or entry.get("type") != "assistant" or entry.get("isApiErrorMessage") is True:
            continue
        for use in _tool_uses(entry):
            walk.emit(_tool_event(use, fields), line, end)
        text = entry_text(entry)
        if text.strip():
            last_text = text
    walk.emit(
        {
            "hook_event_name": "SubagentStop",
            "stop_hook_active": False,
            "agent_transcript_path": os.path.abspath(path),
            "last_assistant_message": last_text,
            **fields,
        },
        line,
        end,
    )
    walk.timeline.subagents += 1


def _tool_event(use: dict[str, Any], fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """The PreToolUse event the CLI sends for one recorded tool call (a subagent's carries its agent fields)."""
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": str(use.get("name", "")),
        "tool_input": use.get("input") if isinstance(use.get("input"), dict) else {},
        "tool_use_id": str(use.get("id", "")),
        **(fields or {}),
    }
