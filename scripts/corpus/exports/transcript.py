"""Writes Claude Code transcript lines (JSONL) the way the CLI writes them, for the export parsers.

One JSON object per line, `parentUuid` chaining each line to the one before, uuids derived from a seed and the
line's position (the same export always gives the same bytes, so a line number is a stable id). User lines are
shaped here, in one place, the way the CLI shapes each kind (checked against the raw transcripts in the corpus):
a typed prompt is plain text; an interruption marker is a list with one text block; a slash command is its
`<command-…>` echo; the expansion of a prompt command or a skill is a list of text blocks with `isMeta`; the
local-command caveat, hook feedback and a standalone system reminder carry `isMeta`; a compaction summary
follows a `compact_boundary` system line and carries `isCompactSummary`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

# Fixed namespace: uuids depend only on the export (seed) and the line's position.
_NAMESPACE = uuid.UUID("6f1c3f2e-8d5b-4c1a-9e77-0b4d2a9c5e13")

COMPACT_SUMMARY_PREFIX = "This session is being continued from a previous conversation"
INTERRUPTED_PREFIX = "[Request interrupted by user"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"
# User text the CLI marks isMeta (the prefixes the raw transcripts and the hook protocol notes show).
_META_PREFIXES = (
    "Caveat: The messages below were generated",
    "<local-command-caveat>",
    "Stop hook feedback:",
    "Base directory for this skill:",
    "<system-reminder>",
)
_NOT_AN_EXPANSION = ("<local-command-", "<command-", INTERRUPTED_PREFIX, COMPACT_SUMMARY_PREFIX)
# Tool result texts the CLI writes only for a failed or refused call (a text-only export drops is_error).
_ERROR_PREFIXES = ("<tool_use_error>", "Exit code ", "The user doesn't want to proceed with this tool use")


def looks_like_error(text: str) -> bool:
    return text.lstrip().startswith(_ERROR_PREFIXES)


def json_blocks(body: str) -> list[dict[str, Any]] | None:
    """The content blocks when an export shows a list content as its JSON array, else None."""
    if not body.startswith("["):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if isinstance(value, list) and value and all(isinstance(b, dict) and "type" in b for b in value):
        return value
    return None


def text_of(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")


_COMMAND_TAG = re.compile(r"<(command-(?:message|name|args))>.*?</\1>", re.DOTALL)


def _is_bare_command_echo(text: str) -> bool:
    """A prompt command's echo (`<command-message>` first) holding nothing but its tags: its expansion follows."""
    stripped = text.strip()
    return stripped.startswith("<command-message>") and not _COMMAND_TAG.sub("", stripped).strip()


class TranscriptWriter:
    """Collects the lines of one converted session; `skipped` counts what the export held but no line carries."""

    def __init__(self, session_id: str, seed: str, cwd: str | None = None) -> None:
        self.session_id = session_id
        self.seed = seed
        self.cwd = cwd
        self.entries: list[dict[str, Any]] = []
        self.skipped: Counter[str] = Counter()
        self.notes: Counter[str] = Counter()  # what the output had to adapt (not lost)
        self._parent: str | None = None
        self._tool_ids: set[str] = set()
        self._made_ids = 0
        self._expansion_due = False  # the last user line was a bare prompt-command echo
        # False when the exporter left out every isMeta line: then no line it kept was one.
        self.infer_meta = True
        # The time every line carries when the export gives none per message (the session's date, if known).
        self.default_timestamp: str | None = None

    # -- lines ------------------------------------------------------------------------------------------

    def _emit(self, kind: str, body: dict[str, Any], timestamp: str | None) -> None:
        line_uuid = str(uuid.uuid5(_NAMESPACE, f"{self.seed}\n{len(self.entries)}"))
        entry: dict[str, Any] = {"parentUuid": self._parent, "isSidechain": False}
        if self.cwd:
            entry["cwd"] = self.cwd
        entry["sessionId"] = self.session_id
        entry["type"] = kind
        entry.update(body)
        entry["uuid"] = line_uuid
        timestamp = timestamp or self.default_timestamp
        if timestamp:
            entry["timestamp"] = timestamp
        self.entries.append(entry)
        self._parent = line_uuid
        self._expansion_due = False

    def user(self, content: str | list[dict[str, Any]], timestamp: str | None = None) -> None:
        """A user line that is not a tool result: a prompt, a command echo, an expansion, a marker, a summary."""
        text = text_of(content)
        if not text.strip():
            self.skipped["empty user message"] += 1
            return
        head = text.lstrip()
        extra: dict[str, Any] = {}
        if head.startswith(COMPACT_SUMMARY_PREFIX):
            boundary = {"subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False}
            self._emit("system", {**boundary, "level": "info"}, timestamp)
            extra = {"isVisibleInTranscriptOnly": True, "isCompactSummary": True}
        elif head.startswith(INTERRUPTED_PREFIX):
            content = _as_blocks(content)
        elif self.infer_meta and self._expansion_due and not head.startswith(_NOT_AN_EXPANSION):
            content = _as_blocks(content)
            extra = {"isMeta": True}
        elif self.infer_meta and head.startswith(_META_PREFIXES):
            extra = {"isMeta": True}
        self._emit("user", {"message": {"role": "user", "content": content}, **extra}, timestamp)
        self._expansion_due = _is_bare_command_echo(text)

    def command(self, name: str, args: str = "", output: str | None = None, timestamp: str | None = None) -> None:
        """A slash command as the CLI echoes it: a local one (with output) or a prompt command (expanded later)."""
        bare = name.lstrip("/")
        if output is None:
            echo = f"<command-message>{bare}</command-message>\n<command-name>/{bare}</command-name>"
            if args:
                echo += f"\n<command-args>{args}</command-args>"
            self.user(echo, timestamp)
            return
        pad = "\n            "
        echo = f"<command-name>/{bare}</command-name>{pad}<command-message>{bare}</command-message>"
        self.user(f"{echo}{pad}<command-args>{args}</command-args>", timestamp)
        self.user(f"<local-command-stdout>{output}</local-command-stdout>", timestamp)

    def assistant(self, blocks: list[dict[str, Any]], timestamp: str | None = None) -> None:
        """One assistant line; thinking is dropped (the hooks never read it), unknown block types are counted."""
        kept = []
        for block in blocks:
            kind = block.get("type")
            if kind in ("thinking", "redacted_thinking"):
                self.skipped["thinking block"] += 1
            elif kind == "text":
                kept.append({"type": "text", "text": str(block.get("text", ""))})
            elif kind == "tool_use":
                kept.append(self._tool_use_block(str(block.get("name", "")), block.get("input"), block.get("id")))
            else:
                self.skipped[f"assistant block of type {kind!r}"] += 1
        if kept:
            self._emit("assistant", {"message": {"role": "assistant", "content": kept}}, timestamp)

    def assistant_text(self, text: str, timestamp: str | None = None) -> None:
        if text.strip():
            self.assistant([{"type": "text", "text": text}], timestamp)
        else:
            self.skipped["empty assistant text"] += 1

    def tool_use(
        self, name: str, tool_input: dict[str, Any], timestamp: str | None = None, tool_id: str | None = None
    ) -> str:
        """One tool call on its own assistant line (as the CLI writes it); returns its id (made up when absent)."""
        block = self._tool_use_block(name, tool_input, tool_id)
        self._emit("assistant", {"message": {"role": "assistant", "content": [block]}}, timestamp)
        return str(block["id"])

    def _tool_use_block(self, name: str, tool_input: Any, tool_id: Any) -> dict[str, Any]:
        if not isinstance(tool_id, str) or not tool_id:
            self._made_ids += 1
            tool_id = f"toolu_export_{self._made_ids:05d}"
        self._tool_ids.add(tool_id)
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}

    def tool_results(self, blocks: list[dict[str, Any]], timestamp: str | None = None) -> None:
        """A user line of tool results; a result whose tool_use is not in the file is dropped (counted)."""
        kept = []
        for block in blocks:
            if block.get("type") != "tool_result":
                self.skipped[f"user block of type {block.get('type')!r} beside tool results"] += 1
                continue
            tool_use_id = str(block.get("tool_use_id", ""))
            if tool_use_id not in self._tool_ids:
                self.skipped["tool_result without an earlier tool_use"] += 1
                continue
            content = block.get("content", "")
            kept.append(
                {
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": content if isinstance(content, str | list) else json.dumps(content),
                    "is_error": block.get("is_error") is True,
                }
            )
        if kept:
            self._emit("user", {"message": {"role": "user", "content": kept}}, timestamp)

    def tool_result(self, tool_use_id: str, content: str, is_error: bool, timestamp: str | None = None) -> None:
        block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error}
        self.tool_results([block], timestamp)

    # -- output -----------------------------------------------------------------------------------------

    def jsonl(self) -> bytes:
        """The lines as the CLI serialises them: compact JSON, UTF-8, a newline after each line."""
        out = []
        for entry in self.entries:
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
            try:
                out.append(line.encode("utf-8"))
            except UnicodeEncodeError:  # a lone surrogate: escape it, as JSON.stringify does
                self.notes["line with a lone surrogate, escaped"] += 1
                out.append(json.dumps(entry, ensure_ascii=True, separators=(",", ":")).encode("ascii"))
        return b"".join(line + b"\n" for line in out)


# (session id, cwd) -> the writer for one export, seeded by the converter.
WriterFactory = Callable[[str, "str | None"], "TranscriptWriter"]


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content
