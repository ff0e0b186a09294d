"""Markdown written by a project's own transcribe script: `## User (HH:MM UTC)`, `## Assistant (HH:MM UTC)`.

    # Conversation: 2026-02-15
    | Session ID | `…` |
    ## User (18:59 UTC)
    text
    ## Assistant (18:59 UTC)
    text
    - **Used Read** on `Source/X.cpp` (offset=10, limit=50)
    - **Used Bash**: description (or `command`, cut to 77 characters + "...")

Tool calls are one-line summaries, never with output (no tool_result is written); the summary keeps only some
of the input (a path, a pattern, a description), paths relative to the project. The script left out meta
lines, tool results, local commands and the "[Request interrupted by user for tool use]" marker, and wrote an
assistant reply's text once per API request. Times are minutes in UTC on the header's date (a time earlier
than the one before, by more than half a day, is taken as the next day).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from .transcript import TranscriptWriter, WriterFactory

_HEADING = re.compile(r"^## (User|Assistant) \(((\d\d):(\d\d) UTC|[^)]*)\)$", re.MULTILINE)
_SUMMARY_LINE = re.compile(r"^- \*\*(?:Used [^*]+|Entered plan mode|Exited plan mode|Asked user[^*]*)\*\*")
_READ_EXTRA = re.compile(r"(offset|limit)=(\d+)")


def matches(text: str) -> bool:
    return text.startswith("# Conversation: ") and "| Session ID | `" in text[:600]


def _call(line: str) -> tuple[str, dict[str, Any]] | None:
    """The tool call a summary line stands for, with the part of its input the summary kept."""
    if line == "- **Entered plan mode**":
        return "EnterPlanMode", {}
    if line == "- **Exited plan mode**":
        return "ExitPlanMode", {}
    if line == "- **Asked user a question**":
        return "AskUserQuestion", {}
    if line.startswith("- **Asked user**: "):
        return "AskUserQuestion", {"questions": [{"question": line[len("- **Asked user**: ") :]}]}
    found = re.match(r"- \*\*Used ([^*]+)\*\*(.*)$", line)
    if found is None:
        return None
    name, rest = found.group(1), found.group(2)
    on = re.fullmatch(r" on `(.*)`(?: \(([^)]*)\))?", rest)
    if on and name in ("Read", "Write", "Edit", "NotebookEdit", "WebFetch"):
        key = {"NotebookEdit": "notebook_path", "WebFetch": "url"}.get(name, "file_path")
        tool_input: dict[str, Any] = {key: on.group(1)}
        for option, value in _READ_EXTRA.findall(on.group(2) or ""):
            tool_input[option] = int(value)
        return name, tool_input
    pattern = re.fullmatch(r" for `(.*)` in `(.*)`", rest)
    if pattern and name in ("Glob", "Grep"):
        return name, {"pattern": pattern.group(1), "path": pattern.group(2)}
    task = re.fullmatch(r" on task (\S+)", rest)
    if task:
        return name, {"taskId": task.group(1)}
    if not rest.startswith(": "):
        return name, {}
    value = rest[2:]
    quoted = value[1:-1] if len(value) >= 2 and value[0] == "`" == value[-1] else None
    if name == "Bash":
        return name, {"command": quoted} if quoted is not None else {"description": value}
    if name == "WebSearch":
        return name, {"query": quoted if quoted is not None else value}
    if name == "Skill":
        return name, {"skill": value}
    if name == "Task":
        return name, {"description": value}
    return name, {"subject": value}  # TaskCreate and the other task tools


def _split_calls(body: str) -> tuple[str, list[str]]:
    """A section's text and the summary lines that trail it (tool calls of later API messages land here too)."""
    paragraphs = body.split("\n\n")
    calls: list[str] = []
    while paragraphs:
        lines = paragraphs[-1].strip("\n").split("\n")
        if not all(_SUMMARY_LINE.match(line) for line in lines):
            break
        calls = lines + calls
        paragraphs.pop()
    return "\n\n".join(paragraphs).strip("\n"), calls


class _Clock:
    def __init__(self, day: date | None) -> None:
        self.day = day
        self.minutes: int | None = None

    def stamp(self, hours: str | None, minutes: str | None) -> str | None:
        if self.day is None or hours is None or minutes is None:
            return None
        now = int(hours) * 60 + int(minutes)
        if self.minutes is not None and self.minutes - now > 12 * 60:
            self.day += timedelta(days=1)
        self.minutes = now
        return f"{self.day.isoformat()}T{int(hours):02d}:{int(minutes):02d}:00Z"


def convert(text: str, writer_for: WriterFactory) -> TranscriptWriter:
    session = re.search(r"^\| Session ID \| `([^`]*)` \|", text, re.MULTILINE)
    writer = writer_for(session.group(1) if session else "", None)
    writer.infer_meta = False  # the script left out every isMeta line
    day = re.match(r"# Conversation: (\d{4}-\d{2}-\d{2})", text)
    clock = _Clock(date.fromisoformat(day.group(1)) if day else None)
    headings = list(_HEADING.finditer(text))
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        stamp = clock.stamp(heading.group(3), heading.group(4))
        body, calls = _split_calls(text[heading.end() : end].strip("\n"))
        if heading.group(1) == "User":
            writer.user(_skill_blocks(body), stamp)
        elif body:
            writer.assistant_text(body, stamp)
        for line in calls:
            call = _call(line)
            if call is None:
                writer.skipped["tool summary not parsed"] += 1
                continue
            writer.tool_use(call[0], call[1], stamp)
    return writer


def _skill_blocks(body: str) -> str | list[dict[str, Any]]:
    """A skill's echo and its text were two text blocks of one line (the script joined them with a newline)."""
    echo, sep, rest = body.partition("\nBase directory for this skill:")
    if not sep or not echo.startswith("<command-message>"):
        return body
    return [{"type": "text", "text": echo}, {"type": "text", "text": "Base directory for this skill:" + rest}]
