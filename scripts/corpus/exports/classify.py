"""What each transcript line is, by the hooks' reader's own classification (gate/session/transcript.py), and counts.

A test also feeds every line of every converted export to the reader itself. A "prompt" is
a user line that opens a turn for the reader: typed text, or a slash command's `<command-name>` echo.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.hosts.codex import rollout
from gate.session.turn import (
    COMMAND,
    COMPACT_SUMMARY,
    HOOK_FEEDBACK,
    INTERRUPTED,
    PROMPT,
    TOOL_RESULTS,
    classify_user,
    entry_text,
)

CONVERSATION_TYPES = ("user", "assistant", "system")
_ROLE_NAMES = {PROMPT: "prompt", COMMAND: "command", TOOL_RESULTS: "tool result", HOOK_FEEDBACK: "hook feedback",
               COMPACT_SUMMARY: "compact summary", INTERRUPTED: "interruption"}
# Why a user line is no prompt, named for the counts (the reader itself only says "not a prompt").
_NOT_TYPED = (
    ("<local-command-stdout>", "local command output"),
    ("<local-command-stderr>", "local command output"),
    ("Caveat: The messages below were generated", "caveat"),
)


def user_kind(entry: dict[str, Any]) -> str:
    """prompt | command | tool result | hook feedback | compact summary | interruption | meta | empty | …: the
    reader's own classification (gate.session.turn.classify_user), with the lines it skips named."""
    if entry.get("isSidechain") is True:
        return "sidechain"
    if not isinstance(entry.get("message"), dict):
        return "no message"
    role, _ = classify_user(entry)
    if role in _ROLE_NAMES:
        return _ROLE_NAMES[role]
    if entry.get("isMeta") is True:
        return "meta"
    text = entry_text(entry).lstrip()
    if not text:
        return "empty"
    return next((kind for prefix, kind in _NOT_TYPED if text.startswith(prefix)), "not a prompt")


@dataclass
class Counts:
    """Figures for one transcript (or a sum of them)."""

    files: int = 0
    lines: int = 0
    prompts: int = 0  # typed prompts (opening a turn)
    commands: int = 0  # slash-command echoes (also opening a turn)
    turns: int = 0  # prompts and commands answered by at least one assistant line
    assistant_lines: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    compactions: int = 0
    user_kinds: Counter[str] = field(default_factory=Counter)  # user lines that open no turn, by kind
    skipped: Counter[str] = field(default_factory=Counter)  # lines or parts no hook reads, by cause

    def as_dict(self) -> dict[str, Any]:
        plain = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return {**plain, "user_kinds": dict(self.user_kinds), "skipped": dict(self.skipped)}

    def add(self, other: Counts) -> None:
        for name in ("files", "lines", "prompts", "commands", "turns", "assistant_lines", "tool_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.tool_results += other.tool_results
        self.compactions += other.compactions
        self.user_kinds.update(other.user_kinds)
        self.skipped.update(other.skipped)


def count_lines(lines: list[bytes]) -> Counts:
    counts = Counts(files=1, lines=len(lines))
    answered = True  # no open turn before the first prompt
    for raw in lines:
        if not raw.strip():
            counts.skipped["blank line"] += 1
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            counts.skipped["unparsable JSON"] += 1
            continue
        if isinstance(entry, dict) and rollout.is_rollout_line(entry):
            payload = entry["payload"]
            line_type = f"{entry['type']} {payload.get('type', '')}".strip() if isinstance(payload, dict) else ""
            entry = rollout.entry(entry)
            if entry is None:
                counts.skipped[f"codex line {line_type}"] += 1
                continue
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind not in CONVERSATION_TYPES:
            counts.skipped[f"line type {kind}"] += 1
            continue
        if kind == "system":
            if entry.get("subtype") == "compact_boundary":
                counts.compactions += 1
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "assistant":
            if entry.get("isSidechain") is True:
                continue
            counts.assistant_lines += 1
            if isinstance(content, list):
                counts.tool_calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
            if not answered:
                counts.turns += 1
                answered = True
            continue
        user = user_kind(entry)
        if user in ("prompt", "command"):
            counts.prompts += user == "prompt"
            counts.commands += user == "command"
            answered = False
        elif user == "tool result":
            counts.tool_results += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        else:
            counts.user_kinds[user] += 1
    return counts


def count_file(path: Path) -> Counts:
    data = read_session(path)
    return count_lines(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"))


def read_session(path: Path) -> bytes:
    """A session file's bytes: a `.jsonl.gz` (the corpus's compressed sessions) decompressed."""
    if path.name.endswith(".gz"):
        import gzip

        with gzip.open(path, "rb") as handle:
            return handle.read()
    return path.read_bytes()
