"""The history of every write (cold path): each version of a memory that a write replaced, kept on disk.

Before gate rewrites a memory file — edit, forget, link, verify --refresh/--retire, import over an id, restore —
the version it replaces is saved as `<history>/<scope>/<id>/<N>.json` (N counts up per memory). Private and team
memories of a project keep theirs under the project's data directory, user memories under the user store's;
never in the repository (team memories have git as well). `gate show --history ID` lists them and
`gate restore ID@N` brings one back (saving the version it replaces, so a restore can be undone too).

Bounded: versions older than `history_max_age_days` are pruned, and the oldest go first while a history
directory holds more than `history_max_bytes` (settings, gate/defaults.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from gate.memory.model import Memory, now_iso
from gate.memory.store import killpoints
from gate.paths import ProjectPaths, ensure_private_dir

join = os.path.join
SUFFIX = ".json"
# A memory file that was not a memory any more (broken TOML, a bad field) when a write replaced it: its bytes as
# they were, `<id>/unreadable-<N>.toml`, since no version can be made of them.
UNREADABLE_PREFIX = "unreadable-"
UNREADABLE_SUFFIX = ".toml"


def history_root(paths: ProjectPaths, scope: str) -> str:
    """Where one scope's history lives: per project for private and team memories, per user for user ones."""
    if scope == "user":
        return join(paths.dirs.data, "user", "history")
    return join(paths.dirs.data, "projects", paths.key, "history", scope)


@dataclass
class Version:
    number: int
    saved: str  # when this version was replaced
    action: str  # what replaced it: edit, forget, link, import, restore, refresh, retire, done, reopen
    scope: str
    memory: dict[str, Any]
    size: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"version": self.number, "saved": self.saved, "action": self.action, "scope": self.scope,
                "memory": self.memory}


class History:
    """The saved versions of one scope's memories."""

    def __init__(self, root: str, *, max_age_days: int, max_bytes: int) -> None:
        self.root = root
        self.max_age_days = max_age_days
        self.max_bytes = max_bytes

    def _dir(self, memory_id: str) -> str:
        return join(self.root, memory_id)

    def numbers(self, memory_id: str) -> list[int]:
        try:
            names = os.listdir(self._dir(memory_id))
        except OSError:
            return []
        return sorted(int(name[: -len(SUFFIX)]) for name in names if name.endswith(SUFFIX) and name[:-5].isdigit())

    def save(self, memory: Memory, scope: str, action: str) -> int:
        """Keep `memory` (the version about to be replaced) as the next version of its id; its number.

        A version is whole or absent: written to a temp file, then linked to its number (a writer killed
        between the two leaves no half version taking a number). When the newest version is this memory
        already, it is not kept twice: a write interrupted after saving it, run again, saves nothing more."""
        directory = ensure_private_dir(self._dir(memory.id))
        content = memory.to_dict()
        numbers = self.numbers(memory.id)
        newest = self.get(memory.id, numbers[-1]) if numbers else None
        if newest is not None and newest.memory == content:
            return newest.number
        payload = {"version": 0, "saved": now_iso(), "action": action, "scope": scope, "memory": content}
        number = (numbers or [0])[-1] + 1
        temp = join(directory, f".tmp-{os.getpid()}")
        try:
            while True:  # another writer may take a number at the same moment: link fails, then the next one
                payload["version"] = number
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                killpoints.point("history.opened")
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(payload, handle, ensure_ascii=False)
                try:
                    os.link(temp, join(directory, f"{number}{SUFFIX}"))
                except FileExistsError:
                    number += 1
                    continue
                except OSError:  # a file system without hard links: created in place, as before
                    if not self._create(join(directory, f"{number}{SUFFIX}"), payload):
                        number += 1
                        continue
                return number
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    @staticmethod
    def _create(path: str, payload: dict[str, Any]) -> bool:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, ensure_ascii=False)
        return True

    def keep_unreadable(self, memory_id: str, payload: bytes) -> str:
        """Keep the bytes of an unreadable memory file about to be replaced; the path they are kept at."""
        directory = ensure_private_dir(self._dir(memory_id))
        number = len(self.unreadable(memory_id)) + 1
        while True:
            path = join(directory, f"{UNREADABLE_PREFIX}{number}{UNREADABLE_SUFFIX}")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                number += 1
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            return path

    def unreadable(self, memory_id: str) -> list[str]:
        """The unreadable files kept of a memory (keep_unreadable), oldest first."""
        try:
            names = os.listdir(self._dir(memory_id))
        except OSError:
            return []
        numbers = sorted(
            int(name[len(UNREADABLE_PREFIX) : -len(UNREADABLE_SUFFIX)]) for name in names
            if name.startswith(UNREADABLE_PREFIX) and name.endswith(UNREADABLE_SUFFIX)
            and name[len(UNREADABLE_PREFIX) : -len(UNREADABLE_SUFFIX)].isdigit()
        )
        return [join(self._dir(memory_id), f"{UNREADABLE_PREFIX}{n}{UNREADABLE_SUFFIX}") for n in numbers]

    def versions(self, memory_id: str) -> list[Version]:
        found = []
        for number in self.numbers(memory_id):
            version = self.get(memory_id, number)
            if version is not None:
                found.append(version)
        return found

    def get(self, memory_id: str, number: int) -> Version | None:
        path = join(self._dir(memory_id), f"{number}{SUFFIX}")
        try:
            with open(path, encoding="utf-8") as handle:
                size = os.fstat(handle.fileno()).st_size
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("memory"), dict):
            return None
        return Version(number, str(data.get("saved", "")), str(data.get("action", "")), str(data.get("scope", "")),
                       data["memory"], size)

    def drop(self, memory_id: str) -> None:
        """Delete every saved version of a memory, and the unreadable files kept of it (`gate forget --purge`).
        A failure is raised, never passed over: a version left behind would keep the text."""
        import shutil

        directory = self._dir(memory_id)
        if os.path.lexists(directory):
            shutil.rmtree(directory)

    def prune(self, now: float | None = None) -> int:
        """Drop versions past the age limit, then the oldest while the directory is over its size; how many."""
        now = time.time() if now is None else now
        cutoff = now - self.max_age_days * 86400
        entries: list[tuple[float, int, str]] = []  # (mtime, size, path)
        try:
            ids = list(os.scandir(self.root))
        except OSError:
            return 0
        for memory_dir in ids:
            if not memory_dir.is_dir(follow_symlinks=False):
                continue
            try:
                for entry in os.scandir(memory_dir.path):
                    if entry.name.endswith((SUFFIX, UNREADABLE_SUFFIX)):  # kept unreadable files age out too
                        info = entry.stat(follow_symlinks=False)
                        entries.append((info.st_mtime, info.st_size, entry.path))
            except OSError:
                continue
        entries.sort()
        total = sum(size for _, size, _ in entries)
        removed = 0
        for mtime, size, path in entries:
            if mtime >= cutoff and total <= self.max_bytes:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            removed += 1
            with contextlib.suppress(OSError):  # empty only when that was its memory's last version
                os.rmdir(os.path.dirname(path))
        return removed
