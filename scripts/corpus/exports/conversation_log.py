"""The "Claude Conversation Log" markdown: `## 👤 User` / `## 🤖 Claude` sections, tool calls without output.

    # Claude Conversation Log
    Session ID: …
    Date: 2025-11-19 23:57:56
    ---
    ## 👤 User
    text
    ---
    ## 🤖 Claude
    🔧 Using tool: Read
    Input: {JSON}
    ---

Every section is one transcript line; a tool call keeps its full input, never its result, so no tool_result
line is written. There is no per-message time: every line carries the session's date.
Some logs are indented by two columns throughout, with `✎ `
in place of the indent on some lines (an editor's mark): both are removed.
"""

from __future__ import annotations

import json
import re

from .transcript import TranscriptWriter, WriterFactory

_HEADING = re.compile(r"^## (👤 User|🤖 Claude)\n", re.MULTILINE)
_TOOL = re.compile(r"^🔧 Using tool: (.+)\nInput: ", re.MULTILINE)
_INDENT_MARKS = ("  ", "✎ ")


def matches(text: str) -> bool:
    return text.lstrip(" ").startswith("# Claude Conversation Log\n")


def _dedent(text: str) -> str:
    if not text.startswith("  "):
        return text
    return "\n".join(line[2:] if line.startswith(_INDENT_MARKS) else line for line in text.split("\n"))


def _claude(writer: TranscriptWriter, body: str) -> None:
    """Text and tool calls of one section, in order."""
    decoder = json.JSONDecoder()
    position = 0
    for call in _TOOL.finditer(body):
        if call.start() < position:
            continue  # inside the JSON of the previous call
        before = body[position : call.start()].strip()
        if before:
            writer.assistant_text(before)
        try:
            tool_input, end = decoder.raw_decode(body, call.end())
        except ValueError:
            writer.skipped["tool input not valid JSON (kept the name, input empty)"] += 1
            tool_input, end = {}, call.end()
        writer.tool_use(call.group(1).strip(), tool_input if isinstance(tool_input, dict) else {})
        position = end
    rest = body[position:].strip()
    if rest:
        writer.assistant_text(rest)


def convert(text: str, writer_for: WriterFactory) -> TranscriptWriter:
    text = _dedent(text)
    session = re.search(r"^Session ID: (\S+)", text, re.MULTILINE)
    writer = writer_for(session.group(1) if session else "", None)
    date = re.search(r"^Date: (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)", text, re.MULTILINE)
    if date:  # no time per message: every line carries the session's, which orders the sessions
        writer.default_timestamp = f"{date.group(1)}T{date.group(2)}"
    headings = list(_HEADING.finditer(text))
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        body = text[heading.end() : end].strip("\n")
        body = body.removesuffix("\n---").strip("\n")
        if heading.group(1) == "👤 User":
            writer.user(body)
        else:
            _claude(writer, body)
    return writer
