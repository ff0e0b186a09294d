"""The audit log (hot path): one JSON line per hook evaluation, appended with O_APPEND in a single write so
concurrent hooks never interleave lines. `gate stats` and `gate trace` read it. Bounded: past a size limit
the log rotates to audit.jsonl.1 (one generation kept)."""

from __future__ import annotations

import os
import time

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.literals import CompiledOnUse
from gate.paths import audit_log_file, error_log_file
from gate.session.logfile import append, error_line

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

MAX_TRACE_CHARS = 8_000
REDACTED = "[redacted]"

# Free text reaches a record from prompts and turns (search terms, evidence quotes, the store command, a tool's
# target): a pasted credential must not be copied into a log. A string that could hold one (_hinted) has every
# secret pattern's matches and every random-looking alphanumeric run redacted; the pieces of secrets found in
# the event's own text are redacted wherever they reappear (search terms are lowercased pieces of the prompt).
# (_hinted is cheap; loading and compiling the secret patterns costs ~4 ms, so it waits for a reason.)
# Compiled on first use (re's cache), and only for text with a 16+ character word: most records have none.
_KEYLIKE = r"[A-Za-z0-9_+/=.\-]{16,}"
_LETTERS = r"[A-Za-z]{28,}"
_RUN = CompiledOnUse(r"[A-Za-z0-9]{16,}")  # compiled only when a text was hinted
_PIECE = r"[A-Za-z0-9]{4,}"
_KEYLIKE_RE, _LETTERS_RE, _PIECE_RE = (CompiledOnUse(p) for p in (_KEYLIKE, _LETTERS, _PIECE))  # kept programs
# Fields gate itself fills (ids, codes, paths, times): never free text, left as they are.
_STRUCTURAL = frozenset({
    "session", "project", "project_id", "transcript", "ts", "event", "gate", "decision", "reason", "delivered",
    "suppressed", "dropped", "chars", "latency_ms", "id", "from", "edge", "disposition", "score", "error", "source",
    "agent_id", "agent_type", "spawned_by", "tool_use_id", "agent_transcript",  # which subagent a record is for
    "opened",  # the memory ids an agent opened itself
    "agent",  # which agent the hook served (gate/hosts/)
})


def _hinted(text: str) -> bool:
    """Whether the text could hold a secret: a 16+ key-like run with a digit, a long letter run, a key block,
    a URL with credentials, or the word password (a password in prose is as short as hunter2)."""
    if "-----BEGIN" in text or ("://" in text and "@" in text):
        return True
    if "assw" in text or "ASSW" in text or "assphrase" in text:  # a password said in a sentence may be short
        return True
    if len(text) < 16 or all(len(word) < 16 for word in text.split()):
        return False  # a key-like run has no whitespace in it: it would be a word this long
    for match in _KEYLIKE_RE.finditer(text):
        run = match.group(0)
        if any(ch.isdigit() for ch in run) or _LETTERS_RE.search(run):
            return True
    return False


def _looks_random(run: str) -> bool:
    digits = sum(ch.isdigit() for ch in run)
    return len(run) >= 28 or (digits >= 2 and len(run) - digits >= 2)


def _redact_text(text: str, pieces: frozenset[str]) -> str:
    if _hinted(text):
        from gate.memory.store.secrets import redact_secrets  # only for text that could hold a secret

        text = redact_secrets(text, REDACTED)
        text = _RUN.sub(lambda m: REDACTED if _looks_random(m.group(0)) else m.group(0), text)
    if pieces:
        lowered = text.lower()
        if len(lowered) >= 4 and any(lowered in piece for piece in pieces):
            return REDACTED  # a search term cut from a secret (possibly stemmed)
        for piece in pieces:
            if piece in lowered:
                import re  # (only where a secret's piece is in the text)

                text = re.sub(re.escape(piece), REDACTED, text, flags=re.IGNORECASE)
                lowered = text.lower()
    return text


def _redact_value(value: Any, pieces: frozenset[str]) -> Any:
    if isinstance(value, str):
        return _redact_text(value, pieces)
    if isinstance(value, list):
        return [_redact_value(item, pieces) for item in value]
    if isinstance(value, dict):
        return {k: v if k in _STRUCTURAL else _redact_value(v, pieces) for k, v in value.items()}
    return value


def redact(record: dict[str, Any], sources: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The record with secrets taken out of its free text; `sources` is the event's own text (the prompt...)."""
    pieces: set[str] = set()
    for text in sources:
        if isinstance(text, str) and _hinted(text):
            from gate.memory.store.secrets import find_secrets

            for found in find_secrets(text):
                pieces.update(piece.lower() for piece in _PIECE_RE.findall(found))
    return _redact_value(record, frozenset(pieces))


def write_audit(
    record: dict[str, Any], max_bytes: int = 20_000_000, sources: list[str] | tuple[str, ...] = ()
) -> None:
    record = redact(record, sources)
    record.setdefault("ts", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z")
    trace = record.get("trace")
    if trace is not None and len(json.dumps(trace)) > MAX_TRACE_CHARS:
        record["trace"] = {"truncated": True}
    append(audit_log_file(), json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n", max_bytes)


def write_error(event: str, error: BaseException, project: str | None = None, kind: str | None = None,
                project_id: str | None = None) -> None:
    """One line per failure: where and what, never the input (it may hold a prompt or a secret). The project
    (default: $CLAUDE_PROJECT_DIR) lets `gate doctor` count only its own project's lines in this shared log;
    kind "setting" marks a bad setting the hook skipped (it went on with the default: not a fail-open), kind
    "rules" a rules layer or value it left out (the same);
    `synthetic` marks a line of doctor's own test runs; `project_id` names the project as `gate stats` selects it
    (every checkout of a repository is one project)."""
    message = _redact_text(str(error).replace("\n", " ")[:300], frozenset())
    append(error_log_file(), error_line(event, type(error).__name__, message, project, kind, project_id), 5_000_000)


def read_audit(path: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Every record, oldest first (the rotated generation, then the current file); broken lines are skipped."""
    path = os.fspath(path) if path else audit_log_file()
    records: list[dict[str, Any]] = []
    for candidate in (path + ".1", path):
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    try:
                        data = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(data, dict):
                        records.append(data)
        except FileNotFoundError:
            continue
    return records
