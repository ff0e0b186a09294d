"""The markdown of the ccexport gem (early version): `## 👤 User`, `## 🤖 Assistant`, `## 🔧 Tool Use`.

    # Claude Code Conversation
    **Session:** `…`
    ---
    ## 👤 User                        text, or a pretty-printed JSON array (tool results, text blocks)
    ## 🤖 Assistant                   text
    ## 🔧 Tool Use
    <details>
    <summary>Write lib/x.rb</summary>   Write PATH | Edit PATH | Bash: DESCRIPTION | TodoWrite | NAME (JSON input)
    …input, rendered per tool…
    </details>
    <details>
    <summary>Tool Result</summary>
    ```
    result text
    ```
    </details>

Messages are separated by two blank lines. The exporter left out every message containing a caveat, a
`<command-name>` echo, local-command output or a system reminder, made the project's paths relative, dropped
tool-use ids and timestamps, and rendered some tool inputs as prose: those inputs are rebuilt from the
rendering (TodoWrite loses each todo's activeForm). A tool result shown as its own user message could not be
paired by the exporter; its tool_use id matches no rebuilt call, so it is dropped (counted).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .transcript import TranscriptWriter, WriterFactory, json_blocks, looks_like_error

_USER, _ASSISTANT, _TOOL = "## 👤 User\n\n", "## 🤖 Assistant\n\n", "## 🔧 Tool Use\n<details>\n<summary>"
_BOUNDARY = re.compile("\n\n\n(?=" + "|".join(re.escape(h) for h in (_USER, _ASSISTANT, _TOOL)) + ")")
_RESULT = "\n</details>\n\n<details>\n<summary>Tool Result</summary>\n\n```\n"
_FENCE = re.compile(r"```[\w+#.-]*\n(.*)\n```", re.DOTALL)
_EDIT = re.compile(
    r"\*\*Before:\*\*\n```[\w+#.-]*\n(.*?)\n```\n\n\*\*After:\*\*\n```[\w+#.-]*\n(.*)\n```", re.DOTALL
)
_TODO_STATUS = {"✅": "completed", "🔄": "in_progress", "⏳": "pending"}
_DEFAULT_BASH_DESCRIPTION = "Run bash command"  # what the exporter printed when the call had none


def matches(text: str) -> bool:
    return text.startswith("# Claude Code Conversation\n") and "\n**Session:** `" in text[:400]


def _sections(text: str) -> list[str]:
    """The messages, a tool section re-joined with what follows until it closes (its text held a boundary)."""
    start = text.find("\n---\n\n")
    if start == -1:
        return []
    pieces = _BOUNDARY.split(text[start + len("\n---\n\n") :])
    sections: list[str] = []
    for piece in pieces:
        # A result that quoted exported markdown can close early and hold a heading: its remainder ends in the
        # result's closing fence and tag, which no message's own text does.
        quoted = piece.rstrip("\n").endswith("\n```\n</details>") and not piece.startswith(_TOOL)
        if sections and sections[-1].startswith(_TOOL) and (quoted or not _closed(sections[-1])):
            sections[-1] += "\n\n\n" + piece
        else:
            sections.append(piece)
    return sections


def _closed(section: str) -> bool:
    """A tool section ends with its input's `</details>` line, or with its result's closing fence and tag."""
    section = section.rstrip("\n")
    return section.endswith("\n```\n</details>" if _RESULT in section else "\n</details>")


def _fenced(body: str) -> str | None:
    found = _FENCE.fullmatch(body)
    return found.group(1) if found else None


def _json_input(body: str) -> dict[str, Any] | None:
    inner = _fenced(body)
    if inner is None or not body.startswith("```json\n"):
        return None
    try:
        value = json.loads(inner)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _tool_input(summary: str, body: str) -> tuple[str, dict[str, Any] | None]:
    """(tool name, input rebuilt from the rendering, or None when the rendering did not parse)."""
    raw_json = _json_input(body)
    if summary.startswith("Bash: "):
        command = _fenced(body)
        if command is None:
            return "Bash", raw_json
        description = summary[len("Bash: ") :]
        if description == _DEFAULT_BASH_DESCRIPTION:
            return "Bash", {"command": command}
        return "Bash", {"command": command, "description": description}
    name, _, path = summary.partition(" ")
    if name == "Write" and path:
        if raw_json is not None and "file_path" in raw_json:
            return name, raw_json
        content = _fenced(body)
        return name, None if content is None else {"file_path": path, "content": content}
    if name == "Edit" and path:
        if raw_json is not None and "file_path" in raw_json:
            return name, raw_json
        edit = _EDIT.fullmatch(body)
        return name, None if edit is None else {"file_path": path, "old_string": edit[1], "new_string": edit[2]}
    if name == "TodoWrite" and not path and not body.startswith("```"):
        todos = []
        for line in body.split("\n"):
            mark, _, content = line.partition(" ")
            todos.append({"content": content, "status": _TODO_STATUS.get(mark, "unknown")})
        return name, {"todos": todos}
    return summary, raw_json


def _tool_section(writer: TranscriptWriter, section: str) -> None:
    head = re.match(r"## 🔧 Tool Use\n<details>\n<summary>(.*?)</summary>\n\n?", section)
    if head is None:
        writer.skipped["tool section not parsed"] += 1
        return
    rest = section[head.end() :].rstrip("\n")
    cut = rest.find(_RESULT)
    body = rest if cut == -1 else rest[:cut]
    body = body.removesuffix("\n</details>")
    name, tool_input = _tool_input(head.group(1), body)
    if tool_input is None:
        writer.skipped["tool input not rebuilt (kept the name, input empty)"] += 1
    tool_id = writer.tool_use(name, tool_input or {})
    if cut != -1:
        result = rest[cut + len(_RESULT) :].removesuffix("\n```\n</details>")
        writer.tool_result(tool_id, result, looks_like_error(result))


def convert(text: str, writer_for: WriterFactory) -> TranscriptWriter:
    session = re.search(r"^\*\*Session:\*\* `([^`\n]*)`", text, re.MULTILINE)
    writer = writer_for(session.group(1) if session else "", None)
    for section in _sections(text):
        if section.startswith(_TOOL):
            _tool_section(writer, section)
            continue
        if section.startswith(_ASSISTANT):
            writer.assistant_text(section[len(_ASSISTANT) :].rstrip("\n"))
            continue
        if not section.startswith(_USER):
            writer.skipped["text outside any message"] += 1
            continue
        body = section[len(_USER) :].rstrip("\n")
        blocks = json_blocks(body)
        if blocks is not None and any(b.get("type") == "tool_result" for b in blocks):
            writer.tool_results(blocks)
        else:
            writer.user(blocks if blocks is not None else body)
    return writer
