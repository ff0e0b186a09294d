"""What each transcript line is, by the rules the hooks' reader (gate/session/transcript.py) applies, and counts.

Kept in step with the reader by a test that feeds every line of every converted export to both. A "prompt" is
a user line that opens a turn for the reader: typed text, or a slash command's `<command-name>` echo.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The reader's prefixes of user text that nobody typed, with the name each kind gets here.
_NOT_TYPED = (
    ("Stop hook feedback:", "hook feedback"),
    ("[Request interrupted by user", "interruption"),
    ("<local-command-stdout>", "local command output"),
    ("<local-command-stderr>", "local command output"),
    ("Caveat: The messages below were generated", "caveat"),
)
_COMMAND = re.compile(r"<command-name>\s*([^<]*)</command-name>")
CONVERSATION_TYPES = ("user", "assistant", "system")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(part for part in parts if part)
    return ""


def user_kind(entry: dict[str, Any]) -> str:
    """prompt | command | tool result | hook feedback | compact summary | meta | empty | interruption | …"""
    if entry.get("isSidechain") is True:
        return "sidechain"
    message = entry.get("message")
    if not isinstance(message, dict):
        return "no message"
    content = message.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return "tool result"
    text = _text(content)
    if text.startswith("Stop hook feedback:"):
        return "hook feedback"
    if entry.get("isCompactSummary") is True:
        return "compact summary"
    if entry.get("isMeta") is True:
        return "meta"
    if not text.strip():
        return "empty"
    head = text.lstrip()
    for prefix, kind in _NOT_TYPED:
        if head.startswith(prefix):
            return kind
    if "<command-name>" in text and _COMMAND.search(text):
        return "command"
    return "prompt"


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
    data = path.read_bytes()
    return count_lines(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"))
