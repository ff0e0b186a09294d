"""The per-session fire ledger (hot path): one small JSON file per session, shared by every gate.

It holds what was delivered in the current compaction window, the recent-topic record, the write-back
gate's blocks and pending outcome, and the compaction boundary. Every evaluation runs inside
`open_ledger()`, which holds an exclusive flock on the session's lock file for the load-modify-save, so two
hooks of one session racing (two Stop hooks, say) cannot lose an update or break the write-back cap.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gate.paths import ensure_private_dir, sessions_dir

VERSION = 1
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def session_file_stem(session_id: str) -> str:
    """A file name for any session id: the id itself when harmless, else a hash of it."""
    if _SAFE_ID.match(session_id) and session_id not in {".", ".."}:
        return session_id
    return "h-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class Ledger:
    session: str
    project: str = ""
    version: int = VERSION
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    window: int = 0  # compaction windows seen; deliveries dedup within one window
    # Why the next real prompt counts as a shift whatever it says: "session" (new session) or "compaction".
    force_shift: str = "session"
    prompts: int = 0
    delivered: list[str] = field(default_factory=list)  # ids delivered in this window, in order
    delivered_total: int = 0
    anchors_fired: dict[str, float] = field(default_factory=dict)  # trigger key -> time, this window
    cooldowns: dict[str, float] = field(default_factory=dict)  # memory id -> last delivery time, all windows
    topic: dict[str, Any] = field(default_factory=dict)
    compaction_pending: bool = False
    writeback_blocks: int = 0
    writeback_pending: dict[str, Any] | None = None  # the last block, until the next Stop tells its outcome
    writeback_outcomes: list[str] = field(default_factory=list)
    muted: bool = False
    injected_chars: int = 0

    def mark_delivered(self, ids: list[str]) -> None:
        now = time.time()
        for memory_id in ids:
            if memory_id not in self.delivered:
                self.delivered.append(memory_id)
            self.cooldowns[memory_id] = now
        self.delivered_total += len(ids)

    def rearm(self) -> None:
        """A new compaction window: what was delivered before may be delivered again."""
        self.window += 1
        self.delivered = []
        self.anchors_fired = {}
        self.force_shift = "compaction"
        self.compaction_pending = False


def ledger_path(session_id: str) -> Path:
    return sessions_dir() / f"{session_file_stem(session_id)}.json"


def _load(path: Path, session_id: str) -> Ledger:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return Ledger(session=session_id)
    except (OSError, ValueError):
        return Ledger(session=session_id)  # a damaged ledger costs at most one repeated delivery
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return Ledger(session=session_id)
    known = Ledger.__dataclass_fields__
    try:
        return Ledger(**{k: v for k, v in data.items() if k in known})
    except TypeError:
        return Ledger(session=session_id)


def _save(path: Path, ledger: Ledger) -> None:
    ledger.updated = time.time()
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(ledger), handle, separators=(",", ":"))
    os.replace(temp, path)


@contextlib.contextmanager
def open_ledger(session_id: str, *, save: bool = True) -> Iterator[Ledger]:
    """Load the session's ledger under an exclusive lock; save it on normal exit."""
    directory = ensure_private_dir(sessions_dir())
    path = directory / f"{session_file_stem(session_id)}.json"
    lock_fd = os.open(directory / f"{path.stem}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        ledger = _load(path, session_id)
        yield ledger
        if save:
            _save(path, ledger)
    finally:
        os.close(lock_fd)  # closing releases the flock, also when the process is killed


def read_ledger(session_id: str) -> Ledger | None:
    path = ledger_path(session_id)
    return _load(path, session_id) if path.exists() else None


def clean_old_ledgers(max_age_days: float) -> int:
    """Remove ledgers (and their lock files) untouched for longer than max_age_days."""
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    try:
        entries = list(os.scandir(sessions_dir()))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += entry.name.endswith(".json")
        except OSError:
            continue
    return removed
