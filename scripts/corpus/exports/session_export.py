"""The "Claude Session Export" markdown: one `### User` / `### Assistant` section per transcript line.

    # Claude Session Export
    - **Session ID**: `…`   - **Total Messages**: N (U user, A assistant)   - **Project Path**: `…`
    ### User
    > 12/1/2025, 10:57:11 PM

    plain text (the line's content was a string), or a JSON array of content blocks

    ---

Everything the transcript line held is kept except its flags (isMeta, isCompactSummary …), which the writer
restores from the text. Timestamps are local time without a zone: they are written without one.
"""

from __future__ import annotations

import re
from datetime import datetime

from .transcript import TranscriptWriter, WriterFactory, json_blocks

SIGNATURE = "# Claude Session Export"
_SECTION = re.compile(
    r"^### (User|Assistant)\n> (\d{1,2}/\d{1,2}/\d{4}, \d{1,2}:\d{2}:\d{2} [AP]M)\n\n", re.MULTILINE
)
_SEPARATOR = "\n\n---\n\n"


def matches(text: str) -> bool:
    return text.startswith(SIGNATURE)


def _field(text: str, name: str) -> str | None:
    found = re.search(rf"^- \*\*{re.escape(name)}\*\*: `([^`\n]*)`", text, re.MULTILINE)
    return found.group(1) if found else None


def _timestamp(shown: str) -> str:
    return datetime.strptime(shown, "%m/%d/%Y, %I:%M:%S %p").isoformat()


def convert(text: str, writer_for: WriterFactory) -> TranscriptWriter:
    session_id = _field(text, "Session ID") or ""
    writer: TranscriptWriter = writer_for(session_id, _field(text, "Project Path"))
    sections = list(_SECTION.finditer(text))
    for index, section in enumerate(sections):
        end = sections[index + 1].start() if index + 1 < len(sections) else len(text)
        body = text[section.end() : end]
        body = body.removesuffix(_SEPARATOR) if index + 1 < len(sections) else body.rstrip("\n").removesuffix("\n---")
        role, timestamp = section.group(1), _timestamp(section.group(2))
        blocks = json_blocks(body)
        if role == "Assistant":
            if blocks is None:
                writer.assistant_text(body, timestamp)
            else:
                writer.assistant(blocks, timestamp)
        elif blocks is not None and any(b.get("type") == "tool_result" for b in blocks):
            writer.tool_results(blocks, timestamp)
        else:
            writer.user(blocks if blocks is not None else body, timestamp)
    declared = re.search(r"\*\*Total Messages\*\*: (\d+) \((\d+) user, (\d+) assistant\)", text)
    if declared:
        users = sum(1 for s in sections if s.group(1) == "User")
        if (int(declared.group(2)), int(declared.group(3))) != (users, len(sections) - users):
            writer.notes["sections not matching the header's message counts"] += 1
    return writer
