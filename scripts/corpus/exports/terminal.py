"""The text Claude Code's `/export` writes: the terminal screen, wrapped at its width.

    ❯ a prompt, wrapped,
      continued two columns in
    ⏺ assistant text
    ⏺ Bash(npm test)                       a tool call: Name(argument)
      ⎿  output shown by the CLI (cut: "… +N lines (ctrl+o to expand)")
    ⏺ Read 3 files (ctrl+o to expand)      calls folded into a count, without their inputs
    ✻ Baked for 1m 16s                     turn duration
    ❯ /model                               a slash command, its output under ⎿

Wrapped lines are joined again (a line break is kept when the next word would have fitted on the line). A
call's argument becomes the input key it shows (Bash: command; Read/Update/Write: file_path; Explore: a Task
description). Only a Bash call's ⎿ text is its output (cut as shown); for the other tools it is the CLI's
summary of the call (a diff, "Done (…)"), not the result, so no tool_result is written, unless it reports an
error. A call the user refused ("Interrupted · What should Claude do instead?") is followed by the CLI's
interruption marker. The export holds no ids, times or working directory.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .transcript import INTERRUPTED_FOR_TOOL_USE, TranscriptWriter, WriterFactory

_PROMPT, _ASSISTANT, _DURATION = "❯ ", "⏺ ", "✻ "
_RESULT = re.compile("  ⎿[ \u00a0]{1,2}")  # the CLI pads a tool's ⎿ with a no-break space
_CALL = re.compile(r"([A-Z][A-Za-z0-9_]*)\((.*)\)", re.DOTALL)
_FOLDED = re.compile(r"(.+) \(ctrl\+o to expand\)")
_FOLDED_PART = re.compile(r"(Read|read|Searched for|searched for|Listed|listed) (\d+) (\w+)")
_FOLDED_TOOL = {"read": "Read", "searched for": "Grep", "listed": "Glob"}
_ARGUMENT_KEY = {"Bash": "command", "Read": "file_path", "Update": "file_path", "Write": "file_path"}
_TOOL_NAME = {"Update": "Edit", "Explore": "Task"}
_REFUSED = "Interrupted · What should Claude do instead?"
_EXPAND_HINT = "(ctrl+o to expand)"


def matches(text: str) -> bool:
    lines = text.split("\n")
    return any(line.startswith(_PROMPT) for line in lines) and any(line.startswith(_ASSISTANT) for line in lines)


_LIST_ITEM = re.compile(r"\s*(?:[-*•]|\d+[.)])\s")


def _unwrap(lines: list[str], width: int) -> str:
    """Join the screen lines of one block (each indented two columns): a line break is kept where the next
    word would have fitted on the line, or where a list item starts; a wrap becomes one space."""
    out: list[str] = []
    previous = ""
    for line in lines:
        body = (line[2:] if line.startswith("  ") else line).rstrip()
        if not out or not previous.strip() or not body.strip():
            out.append("\n" + body if out else body.strip())
        elif _LIST_ITEM.match(body) or not _wrapped(previous, body, width):
            out.append("\n" + body)
        else:
            out.append(" " + body.strip())
        previous = line
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()


def _wrapped(previous: str, body: str, width: int) -> bool:
    # A prompt's lines are padded to the input box, whose last column stays free for the cursor.
    limit = len(previous) - 1 if len(previous) > len(previous.rstrip()) else width
    return len(previous.rstrip()) + 1 + len(body.split()[0]) > limit


def _blocks(lines: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(marker, the block's lines, its ⎿ lines) for each block that starts at column 0."""
    blocks: list[tuple[str, list[str], list[str]]] = []
    for line in lines:
        if line.startswith((_PROMPT, _ASSISTANT, _DURATION)):
            blocks.append((line[:2], ["  " + line[2:]], []))  # the marker's columns count in the wrap width
        elif not blocks:
            blocks.append(("banner", [line], []))
        elif (result := _RESULT.match(line)) or (blocks[-1][2] and line.strip()):
            blocks[-1][2].append(line[result.end() :] if result else re.sub(r"^ {1,5}", "", line))
        else:
            blocks[-1][1].append(line)
    return blocks


def _command(writer: TranscriptWriter, prompt: str, output: list[str]) -> None:
    name, _, args = prompt.partition(" ")
    if output:
        writer.command(name, args.strip(), "\n".join(output).strip())
    else:
        writer.command(name, args.strip())


def _call(writer: TranscriptWriter, name: str, argument: str, output: list[str]) -> None:
    tool = _TOOL_NAME.get(name, name)
    if name == "Explore":
        tool_input: dict[str, Any] = {"description": argument, "subagent_type": "Explore"}
    elif name in _ARGUMENT_KEY:
        tool_input = {_ARGUMENT_KEY[name]: argument}
    else:
        tool_input = {}
        writer.skipped["argument of a call to a tool without a known input key"] += 1
    shown = "\n".join(line for line in output if line.strip() != _EXPAND_HINT).strip()
    tool_id = writer.tool_use(tool, tool_input)
    if shown == _REFUSED:
        writer.user(INTERRUPTED_FOR_TOOL_USE)
    elif shown.startswith("Error"):
        writer.tool_result(tool_id, shown, True)
    elif name == "Bash" and shown:
        writer.tool_result(tool_id, "" if shown == "(No output)" else shown, False)
    elif shown:
        writer.skipped["call summary shown instead of the result (not kept)"] += 1


def _folded(writer: TranscriptWriter, summary: str) -> bool:
    parts = [part.strip() for part in summary.split(",")]
    found = [_FOLDED_PART.fullmatch(part) for part in parts]
    if not all(found):
        return False
    for match in found:
        for _ in range(int(match.group(2))):
            writer.tool_use(_FOLDED_TOOL[match.group(1).lower()], {})
    return True


def convert(text: str, writer_for: WriterFactory) -> TranscriptWriter:
    lines = text.split("\n")
    width = max((len(line.rstrip()) for line in lines), default=80)
    # No session id in the export: one derived from its text keeps the output deterministic.
    writer = writer_for(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32], None)
    for marker, block, output in _blocks(lines):
        if marker == "banner":
            writer.skipped["banner line"] += sum(1 for line in block if line.strip())
        elif marker == _DURATION:
            writer.skipped["turn duration line"] += 1
        elif marker == _PROMPT:
            prompt = _unwrap(block, width)
            if re.fullmatch(r"/[\w:.-]+(?: .*)?", prompt, re.DOTALL):
                _command(writer, prompt, output)
            else:
                writer.user(prompt)
        else:
            _assistant(writer, block, output, width)
    return writer


def _assistant(writer: TranscriptWriter, block: list[str], output: list[str], width: int) -> None:
    head = _unwrap(block, width)
    folded = _FOLDED.fullmatch(head)
    if folded and _folded(writer, folded.group(1)):
        return
    call = _CALL.fullmatch(_join_call(block, width))
    if call and not output and call.group(1) not in _ARGUMENT_KEY and call.group(1) not in _TOOL_NAME:
        call = None  # prose that happens to start with a capitalised word and a parenthesis
    if call:
        _call(writer, call.group(1), call.group(2), output)
    else:
        writer.assistant_text(head)


def _join_call(block: list[str], width: int) -> str:
    """A call header wrapped over lines: a full line was cut mid-word, a shorter one at a space. A block with a
    second paragraph is text, never a call ("" then)."""
    text = block[0].strip()
    for index, line in enumerate(block[1:], start=1):
        if not line.strip():
            return "" if any(rest.strip() for rest in block[index:]) else text
        full = len(block[index - 1].rstrip()) >= width
        text += ("" if full else " ") + line.strip()
    return text
