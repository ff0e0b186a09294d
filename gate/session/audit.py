"""The audit log (hot path): one JSON line per hook evaluation, appended with O_APPEND in a single write so
concurrent hooks never interleave lines. `gate stats` and `gate trace` read it. Bounded: past a size limit
the log rotates to audit.jsonl.1 (one generation kept)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from gate.paths import audit_log_file, ensure_private_dir, error_log_file

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

MAX_TRACE_CHARS = 8_000


def _append(path: Path, line: str, max_bytes: int) -> None:
    ensure_private_dir(path.parent)
    try:
        if max_bytes and path.stat().st_size > max_bytes:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def write_audit(record: dict[str, Any], max_bytes: int = 20_000_000) -> None:
    record.setdefault("ts", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z")
    trace = record.get("trace")
    if trace is not None and len(json.dumps(trace)) > MAX_TRACE_CHARS:
        record["trace"] = {"truncated": True}
    _append(audit_log_file(), json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n", max_bytes)


def write_error(event: str, error: BaseException) -> None:
    """One line per failure: where and what, never the input (it may hold a prompt or a secret)."""
    message = str(error).replace("\n", " ")[:300]
    line = json.dumps(
        {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z",
            "event": event,
            "error": type(error).__name__,
            "message": message,
        },
        separators=(",", ":"),
    )
    _append(error_log_file(), line + "\n", 5_000_000)


def read_audit(path: Path | None = None) -> list[dict[str, Any]]:
    """Every record, oldest first (the rotated generation, then the current file); broken lines are skipped."""
    path = path or audit_log_file()
    records: list[dict[str, Any]] = []
    for candidate in (path.with_name(path.name + ".1"), path):
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
