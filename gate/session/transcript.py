"""The current turn, read from the END of a Claude Code transcript (hot path, standard library only); what a
turn holds and what each line of it is: gate/session/turn.py.

A transcript is JSON lines; sessions grow to tens of MB, so the reader seeks backwards in fixed blocks and
stops at the last real user prompt (or after `max_bytes`): its cost follows the length of the turn, never the
length of the session. Lines are parsed by their `type`, never by "has a message": attachment, system,
api-request, api-request-blob (which holds injected hook context), queue-operation, last-prompt, cost-state
and every unknown type are skipped. A torn last line, garbage, non-UTF-8 bytes, a missing file or a directory
never raise; when nothing can be read the caller's `last_assistant_message` stands in for the turn.
"""

from __future__ import annotations

import os
import stat

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.session.turn import COMPACT_SUMMARY, PROMPT, Turn, TurnCollector, classify_user, entry_text

TYPE_CHECKING = False  # typing and dataclasses cost the hook milliseconds to import; annotations are strings
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import Any

BLOCK_SIZE = 64 * 1024
_ROLLOUT_CONVERSATION = ("response_item", "event_msg", "compacted")

# Cheap pre-filter: only lines whose type may be conversation are worth a json.loads (an api-request-blob
# line can be megabytes). The CLI writes compact JSON, but tolerate spaces around the colon. A Codex CLI
# rollout's lines are response items, events and compactions (gate/hosts/codex/rollout.py reads them); a Gemini
# CLI chat recording's are user and gemini records (gate/hosts/gemini/chat.py).
CONVERSATION_TYPE = (  # compiled once kept (gate/literals.py)
    rb'"type"\s*:\s*"(?:user|assistant|system|gemini|response_item|event_msg|compacted)"'
)
GEMINI_RECORD_ID = "gemini_record_id"  # gate/hosts/gemini/chat.py ID_KEY: a record appended again as it changes
_conversation_type: re.Pattern[bytes] | None = None

def _reverse_lines(path: str, max_bytes: int, end: int | None = None) -> Iterator[bytes]:
    """Complete lines of a file, last first, reading at most about max_bytes from its end.

    `end` reads the file as if it ended at that byte offset (`gate replay`: the transcript as it was when a
    recorded hook ran). The first line of the read window is yielded only when it starts at offset 0
    (otherwise it is a fragment of a line we did not read whole).
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        # A FIFO would block open() until a writer came (a hook must never hang); a device has no end to read.
        raise OSError(f"{path}: not a regular file")
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        position = size if end is None else max(0, min(end, size))
        budget = max(max_bytes, 1)
        # The unfinished start of the window, as blocks newest first: a multi-MB line is joined once, not
        # re-copied with every block read.
        carry: list[bytes] = []
        while position > 0 and budget > 0:
            size = min(BLOCK_SIZE, position, budget)
            position -= size
            budget -= size
            handle.seek(position)
            block = handle.read(size)
            if b"\n" not in block:
                carry.append(block)
                continue
            lines = block.split(b"\n")
            lines[-1] += b"".join(reversed(carry))
            carry = [lines[0]]  # may continue further back
            for line in reversed(lines[1:]):
                if line.strip():
                    yield line
        if position == 0:
            first = b"".join(reversed(carry))
            if first.strip():
                yield first


def without_surrogates(value: Any) -> Any:
    """A parsed JSON value with every lone surrogate replaced by U+FFFD.

    JSON may carry one ("\\ud800"; a JavaScript string can hold it), and Python's json lets it through, but
    nothing downstream can encode it: tantivy's analyzer, the audit line and stdout would all raise."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    return value


def _parse(line: bytes) -> dict[str, Any] | None:
    global _conversation_type
    if _conversation_type is None:
        from gate.literals import compile_cached

        _conversation_type = compile_cached(CONVERSATION_TYPE)
    if not _conversation_type.search(line):
        return None
    # a torn last line, garbage, or nesting deeper than json can parse: skipped (and json, which would name the
    # error, is not loaded for it)
    entry = json.loads_or(line.decode("utf-8", errors="replace"), None)
    if not isinstance(entry, dict):
        return None
    if "payload" in entry and entry.get("type") in _ROLLOUT_CONVERSATION:
        from gate.hosts.codex import rollout  # only a Codex session's hooks meet such a line

        entry = rollout.entry(entry)
        if entry is None:
            return None
    elif "message" not in entry and "content" in entry and entry.get("type") in ("user", "gemini"):
        from gate.hosts.gemini import chat  # only a Gemini session's hooks meet such a line

        if chat.is_record(entry):
            entry = chat.entry(entry)
            if entry is None:
                return None
    if b"\\ud" in line or b"\\uD" in line:  # an escaped surrogate, perhaps a lone one
        try:
            entry = without_surrogates(entry)
        except RecursionError:
            return None
    return entry


def _fallback(last_assistant_message: str | None) -> Turn:
    texts = [last_assistant_message] if last_assistant_message and last_assistant_message.strip() else []
    return Turn(assistant_texts=texts, from_fallback=True)


PREVIOUS_REPLY_BYTES = 256 * 1024  # how far past the prompt the previous reply is looked for


def read_turn(
    transcript_path: str | None,
    last_assistant_message: str | None = None,
    max_bytes: int = 4_000_000,
    end: int | None = None,
    previous_reply: bool = False,
) -> Turn:
    """The lines after the last real user prompt (and that prompt), read from the end of the transcript
    (or from byte offset `end`: the transcript as it was then). With `previous_reply`, also the last text the
    assistant wrote before that prompt.

    Falls back to `last_assistant_message` alone when the transcript is missing or unreadable, and adds
    it when the file does not (yet) hold it.
    """
    if not transcript_path:
        return _fallback(last_assistant_message)
    collector = TurnCollector()
    previous = ""
    try:
        lines = _reverse_lines(transcript_path, max_bytes + (PREVIOUS_REPLY_BYTES if previous_reply else 0), end)
        seen: set[str] = set()
        for line in lines:
            entry = _parse(line)
            if entry is None:
                continue
            record = entry.get(GEMINI_RECORD_ID)
            if record is not None:  # newest first: an older copy of a Gemini record is not what it became
                if record in seen:
                    continue
                seen.add(record)
            if collector.feed(entry):
                break
        if previous_reply and collector.complete:
            previous = _last_reply(lines)
    except (OSError, ValueError):  # missing, a directory, unreadable, a path with a NUL byte
        return _fallback(last_assistant_message)
    turn = collector.turn()
    turn.previous_reply = previous
    if last_assistant_message and last_assistant_message.strip() not in turn.text:
        turn.assistant_texts.append(last_assistant_message)
    return turn


def _last_reply(lines: Iterator[bytes]) -> str:
    """The newest assistant text among the lines (newest first), stopping at the prompt before it."""
    for line in lines:
        entry = _parse(line)
        if entry is None or entry.get("isSidechain") is True:
            continue
        if entry.get("type") == "assistant":
            text = entry_text(entry)
            if text.strip():
                return text
        elif entry.get("type") == "user" and classify_user(entry)[0] in (PROMPT, COMPACT_SUMMARY):
            return ""
    return ""


def previous_turn(transcript_path: str | None, max_bytes: int = 4_000_000, end: int | None = None) -> Turn:
    """At UserPromptSubmit the new prompt is not in the file yet: its tail is the last completed turn."""
    return read_turn(transcript_path, None, max_bytes, end)


def previous_turn_files(transcript_path: str | None, max_bytes: int = 4_000_000) -> list[str]:
    """The files the last completed turn touched ([] on a session's first prompt, when no file exists)."""
    return previous_turn(transcript_path, max_bytes).touched_files()
