"""A pasted log or traceback, searched by its error lines (hot path: standard library only).

A prompt that pastes 200 lines of build output holds a few lines that say what went wrong and many that say
nothing (timestamps, stack frames, progress): searched whole, those fill the query's terms and find whatever
memory shares a path word. When most of a long prompt's lines look like a log (rules/text.toml [pasted_log]),
the recall gate searches the user's own lines and the log's error lines only.
"""

from __future__ import annotations

from gate.literals import IGNORECASE, compile_cached
from gate.memo import cache  # functools.cache without functools (gate/memo.py)

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    import re
    from collections.abc import Mapping
    from typing import Any


def _any(patterns: tuple[str, ...], flags: int = 0) -> re.Pattern[str]:
    return compile_cached("|".join(f"(?:{p})" for p in patterns) or r"(?!)", flags)  # a kept program if any


@cache
def _patterns(
    log_lines: tuple[str, ...], error_lines: tuple[str, ...], frame_lines: tuple[str, ...] = ()
) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    return _any(log_lines), _any(error_lines, IGNORECASE), _any(frame_lines)


def _log_lines(lines: list[str], log: re.Pattern[str], frame: re.Pattern[str]) -> list[bool]:
    """Which lines are the log's: those matching a log pattern, and the source line a stack frame quotes
    (the line after `File "…", line N`)."""
    out: list[bool] = []
    after_frame = False
    for line in lines:
        out.append(after_frame or bool(log.search(line)))
        after_frame = bool(frame.search(line))
    return out


def searchable(prompt: str, rules: Mapping[str, Any]) -> str:
    """The prompt as the recall gate should search it: unchanged, unless it is mostly a pasted log — then the
    lines that are not the log's, and the log's error lines (at most `most_error_lines`, the first ones)."""
    conf = rules.get("pasted_log", {})
    if not conf.get("enabled", True) or prompt.count("\n") + 1 < int(conf.get("min_lines", 8)):
        return prompt
    log, error, frame = _patterns(tuple(conf.get("log_lines", [])), tuple(conf.get("error_lines", [])),
                                  tuple(conf.get("frame_lines", [])))
    lines = [line for line in prompt.splitlines() if line.strip()]
    logged = _log_lines(lines, log, frame)
    if not lines or sum(logged) < float(conf.get("log_share", 0.5)) * len(lines):
        return prompt
    most = int(conf.get("most_error_lines", 8))
    own: list[str] = []
    errors: list[str] = []
    for line, is_log in zip(lines, logged, strict=True):
        if error.search(line) and not (is_log and frame.search(line)):
            if len(errors) < most and line not in errors:
                errors.append(line)
        elif not is_log:
            own.append(line)
    return "\n".join(own + errors)


def error_lines(text: str, rules: Mapping[str, Any], most: int) -> list[str]:
    """The first `most` distinct lines of a tool's output that say what went wrong (rules/text.toml [pasted_log]
    error_lines), stack frames left out: what a failed command or a traceback adds to a memory's cues."""
    conf = rules.get("pasted_log", {})
    _, error, frame = _patterns(tuple(conf.get("log_lines", [])), tuple(conf.get("error_lines", [])),
                                tuple(conf.get("frame_lines", [])))
    found: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if line and error.search(line) and not frame.search(line) and line not in found:
            found.append(line)
            if len(found) >= most:
                break
    return found
