"""Parsers of the exported Claude Code sessions in the corpus, each writing the CLI's transcript lines.

`detect(text)` names the format of an export; `convert(text, seed)` returns the TranscriptWriter holding its
lines. The formats are told apart by their first lines, never by file name.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from . import ccexport, conversation_log, session_export, terminal, transcribe_md
from .transcript import TranscriptWriter

# Most specific signature first: the terminal text has none, only its markers.
FORMATS: dict[str, ModuleType] = {
    "session-export": session_export,
    "ccexport": ccexport,
    "conversation-log": conversation_log,
    "transcribe-md": transcribe_md,
    "terminal-export": terminal,
}


class UnknownFormat(ValueError):
    pass


def detect(text: str) -> str:
    for name, module in FORMATS.items():
        if module.matches(text):
            return name
    raise UnknownFormat(f"not a known export format (known: {', '.join(FORMATS)})")


def convert(text: str, seed: str) -> tuple[str, TranscriptWriter]:
    """(format name, the writer holding the converted lines). `seed` makes the line uuids (use the file name)."""
    name = detect(text)

    def writer_for(session_id: str, cwd: str | None) -> TranscriptWriter:
        return TranscriptWriter(session_id, seed, cwd)

    factory: Callable[[str, str | None], TranscriptWriter] = writer_for
    return name, FORMATS[name].convert(text, factory)
