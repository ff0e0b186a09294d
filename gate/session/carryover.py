"""Deferred turns a session ended with (hot path, standard library only): nothing lost at a session's end.

A turn the Stop deferred waits in its session's ledger for the next prompt (gate/gates/ reminder). When the
session ends first, no prompt ever carries it; so every deferral is also kept here, one entry per session, in
one small JSON file per project (state/carry/<project id>.json, flock'd for each read-modify-write; the project
is the repository, so a turn deferred in one worktree reaches the next session of any checkout of it):

- the session's next prompt takes its reminder up: the entry is dropped (`drop`);
- another session of the project starts: it takes the entries of the other sessions (`take`), each once, as a
  reminder at its start; the first Stop of that session records what the agent did (stored, acknowledged,
  ignored), like a prompt's reminder;
- an entry older than `carry_days` (rules/writeback.toml [reminder], a week) is dropped unseen.

A session whose deferral another session took does not remind of it again (`drop` says it was gone).
"""

from __future__ import annotations

import fcntl
import os
import time

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import ensure_private_dir, replace_file

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gate.paths import ProjectPaths

DAY = 86400.0
MAX_ENTRIES = 20  # sessions kept per project at most, newest last

# `gate replay` sets this to the recorded session's time at each event (gate/replay/engine.py), so that a week
# between two recorded sessions is a week there too; live, None: the clock.
replay_now: float | None = None


def _now() -> float:
    return time.time() if replay_now is None else replay_now


def carry_file(paths: ProjectPaths) -> str:
    return os.path.join(paths.dirs.state, "carry", f"{paths.key}.json")


class _Locked:
    """The project's carry file, read under an exclusive lock and written back on exit when changed."""

    def __init__(self, paths: ProjectPaths, create: bool) -> None:
        self.path = carry_file(paths)
        self.create = create
        self.data: dict[str, Any] = {"deferred": {}}
        self.changed = False
        self.existed = False
        self._fd = -1

    def __enter__(self) -> _Locked:
        if self.create:
            ensure_private_dir(os.path.dirname(self.path))
        elif not os.path.exists(self.path):
            return self
        self.existed = os.path.exists(self.path)
        self._fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
            if isinstance(data, dict) and isinstance(data.get("deferred"), dict):
                self.data = data
        except (OSError, ValueError):
            pass  # missing or damaged: start over (a damaged file costs at most the reminders it held)
        return self

    @property
    def deferred(self) -> dict[str, Any]:
        return self.data["deferred"]

    def __exit__(self, *exc: object) -> None:
        try:
            if self.changed and exc[0] is None:
                replace_file(self.path, json.dumps(self.data, ensure_ascii=False))
        finally:
            if self._fd >= 0:
                os.close(self._fd)


def keep(paths: ProjectPaths, session: str, pending: dict[str, Any], now: float | None = None) -> None:
    """A session's deferred turn (its ledger's `writeback_reminder`), kept until a prompt or a session takes it."""
    with _Locked(paths, create=True) as carry:
        entries = carry.deferred
        entries.pop(session, None)
        entries[session] = {**pending, "time": _now() if now is None else now}
        for old in list(entries)[:-MAX_ENTRIES]:
            del entries[old]
        carry.changed = True


def drop(paths: ProjectPaths, session: str) -> bool:
    """The session's own prompt takes its deferred turn up: False when another session took it already (True when
    nothing is known of it: a deferral kept before this file existed still reaches its prompt)."""
    with _Locked(paths, create=False) as carry:
        if session not in carry.deferred:
            return not carry.existed
        del carry.deferred[session]
        carry.changed = True
        return True


def others_waiting(paths: ProjectPaths, session: str) -> bool:
    """Does another session's deferred turn wait here? (A session start asks first, without the lock: most have
    nothing to take, and the reminder's module is not worth loading for that.)"""
    try:
        with open(carry_file(paths), encoding="utf-8") as handle:
            deferred = json.load(handle).get("deferred")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(deferred, dict) and any(other != session for other in deferred)


def take(
    paths: ProjectPaths, session: str, max_days: float, now: float | None = None,
    wanted: Callable[[dict[str, Any]], bool] | None = None, most: int = 0,
) -> list[dict[str, Any]]:
    """The deferred turns other sessions ended with, oldest first, each handed out once; too old ones and those
    not `wanted` dropped. With `most`, only the newest `most` are handed out: the rest wait for the next start."""
    now = _now() if now is None else now
    with _Locked(paths, create=False) as carry:
        taken = []
        for other, entry in reversed(list(carry.deferred.items())):
            when = entry.get("time") if isinstance(entry, dict) else None
            if other == session or (isinstance(when, int | float) and when > now):
                continue  # (later than this start: a replay's overlapping sessions; live, the clock's own slip)
            fresh = isinstance(when, int | float) and now - when <= max_days * DAY
            if fresh and (wanted is None or wanted(entry)):
                if most and len(taken) >= most:
                    continue  # handed out at a later start
                taken.append({**entry, "session": other})
            del carry.deferred[other]
            carry.changed = True
        return taken[::-1]
