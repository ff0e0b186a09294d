"""The store's write side and whole-store reads (cold path): remember, update, forget, link, import, export.

Files are the source of truth; after every write the index is caught up in the same process. Nothing is
written until everything is validated: a refused memory leaves no trace.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gate.errors import NotFoundError, ValidationError
from gate.memory.files import (
    CorruptMemoryFile,
    iter_memories,
    memory_path,
    read_memory,
    write_memories,
    write_memory,
)
from gate.memory.index import CatchUp, MemoryIndex
from gate.memory.model import ID_PATTERN, SCOPES, Link, Memory, mint_id, now_iso
from gate.memory.secrets import refuse_secrets
from gate.paths import ProjectPaths, ensure_private_dir

WRITER_WAIT_SECONDS = 20.0
MAX_ANCHOR_FILES = 50


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def text_fields(memory: Memory) -> dict[str, str]:
    """Every text of a memory that someone typed, where a pasted credential could hide: all are checked."""
    return {
        "title": memory.title,
        "body": memory.body,
        "tags": " ".join(memory.tags),
        "paths": " ".join(memory.paths),
        "triggers": " ".join(memory.triggers),
    }


class Store:
    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.index = MemoryIndex(paths)
        self._written: set[str] = set()

    @classmethod
    def for_cwd(cls, project: str | None = None) -> Store:
        return cls(ProjectPaths.for_cwd(project))

    # --- reading ------------------------------------------------------------------------------------------------
    def locate(self, memory_id: str) -> Path | None:
        for scope in SCOPES:
            path = memory_path(self.paths.store_for_scope(scope), memory_id)
            if path.is_file():
                return path
        return None

    def existing_ids(self) -> set[str]:
        """The ids of every memory file in the project's three stores (names only; no file is read)."""
        from gate.memory.scan import SUFFIX, scan_dir

        return {
            entry.name[: -len(SUFFIX)] for scope in SCOPES for entry in scan_dir(self.paths.store_for_scope(scope))
        }

    def get(self, memory_id: str) -> Memory:
        path = self.locate(memory_id)
        if path is None:
            raise NotFoundError(f"no memory {memory_id!r} in this project", hint="`gate list` shows the ids")
        memory = read_memory(path)
        memory.scope = self._scope_of(path)
        return memory

    def _scope_of(self, path: Path) -> str:
        for scope in SCOPES:
            if path.parent == Path(self.paths.store_for_scope(scope)):
                return scope
        raise ValueError(path)

    def all(self, *, include_corrupt: bool = False) -> Iterator[Memory | CorruptMemoryFile]:
        for scope in SCOPES:
            for item in iter_memories(self.paths.store_for_scope(scope)):
                if isinstance(item, Memory):
                    item.scope = scope
                    yield item
                elif include_corrupt:
                    yield item

    def memories(self) -> list[Memory]:
        return [m for m in self.all() if isinstance(m, Memory)]

    def corrupt(self) -> list[CorruptMemoryFile]:
        return [m for m in self.all(include_corrupt=True) if isinstance(m, CorruptMemoryFile)]

    # --- writing ------------------------------------------------------------------------------------------------
    def fresh_id(self) -> str:
        for _ in range(100):
            candidate = mint_id()
            if self.locate(candidate) is None:
                return candidate
        raise RuntimeError("could not mint a free id")

    def anchor_hashes(self, globs: Iterable[str]) -> dict[str, str]:
        """Content hash of each existing file an anchor names, with the glob meaning of path triggers."""
        from gate.memory.staleness import anchor_hashes

        return anchor_hashes(self.paths.root, list(globs), MAX_ANCHOR_FILES)

    def _check(self, memory: Memory, *, new: bool) -> None:
        memory.validate()
        refuse_secrets(text_fields(memory), self.paths.root)
        if new and self.locate(memory.id) is not None:
            raise ValidationError(f"a memory with id {memory.id!r} exists already")
        for link in memory.links:
            if self.locate(link.target) is None:
                raise ValidationError(
                    f"link {link.type}:{link.target} points at no memory", hint="`gate list` shows the ids"
                )

    def _write(self, memory: Memory, *, new: bool = False) -> Path:
        store_dir = self.paths.store_for_scope(memory.scope)
        private = memory.scope != "team"
        if memory.scope == "private":
            self._mark_project()
        self._written.add(memory.scope)
        return write_memory(store_dir, memory, private=private, new=new)

    def _mark_project(self) -> None:
        marker = Path(self.paths.project_marker)
        if not marker.exists():
            ensure_private_dir(marker.parent)
            marker.write_text(json.dumps({"root": self.paths.root}), encoding="utf-8")

    def remember(self, memory: Memory, *, supersedes: Iterable[str] = ()) -> Memory:
        """Validate and write a new memory; mark what it supersedes; catch the index up."""
        if not memory.project:
            memory.project = self.paths.root
        old_ids = list(dict.fromkeys(supersedes))
        for old_id in old_ids:
            if not any(link.type == "supersedes" and link.target == old_id for link in memory.links):
                memory.links.append(Link("supersedes", old_id))
        if memory.paths and not memory.anchors:
            memory.anchors = self.anchor_hashes(memory.paths)
        self._check(memory, new=True)
        superseded = [self.get(old_id) for old_id in old_ids]
        self._write(memory, new=True)  # fails, rather than replace, if the id was taken since _check
        for old in superseded:
            if old.status == "active":
                old.status = "superseded"
                old.updated = now_iso()
                self._write(old)
        self.catch_up()
        return memory

    def update(self, memory: Memory) -> Memory:
        memory.updated = now_iso()
        self._check(memory, new=False)
        self._write(memory)
        self.catch_up()
        return memory

    def forget(self, memory_id: str) -> Memory:
        memory = self.get(memory_id)
        memory.status = "forgotten"
        return self.update(memory)

    def link(self, source_id: str, link_type: str, target_id: str) -> Memory:
        memory = self.get(source_id)
        self.get(target_id)
        if any(link.type == link_type and link.target == target_id for link in memory.links):
            return memory
        memory.links.append(Link(link_type, target_id))
        if link_type == "supersedes":
            target = self.get(target_id)
            memory.validate()
            if target.status == "active":
                target.status = "superseded"
                target.updated = now_iso()
                self._write(target)
        return self.update(memory)

    # --- bulk ---------------------------------------------------------------------------------------------------
    def export(self) -> Iterator[dict[str, Any]]:
        for memory in self.all():
            assert isinstance(memory, Memory)
            yield memory.to_dict()

    def import_lines(self, lines: Iterable[str], *, source_name: str = "input") -> list[str]:
        """Import JSON lines; a bad line is rejected with its number and nothing of it is written.

        The whole input is validated first (ids unique, links resolvable within the input or the store), then
        written, so a failing file imports nothing at all.
        """
        parsed: list[Memory] = []
        seen: set[str] = set()
        existing = self.existing_ids()  # one listing, not three stats per line (imports run to 100k lines)
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValidationError("a line must be a JSON object")
                data.setdefault("project", self.paths.root)
                if data.get("id") is not None and not ID_PATTERN.match(str(data["id"])):
                    raise ValidationError(f"invalid id {data['id']!r}")
                memory = Memory.from_dict(data)
                if memory.id in seen or memory.id in existing:
                    raise ValidationError(f"id {memory.id!r} is not unique")
                refuse_secrets(text_fields(memory), self.paths.root)
            except (ValueError, ValidationError) as error:
                raise ValidationError(f"{source_name}, line {number}: {error}", hint="nothing was imported") from error
            seen.add(memory.id)
            parsed.append(memory)
        for memory in parsed:
            for link in memory.links:
                if link.target not in seen and link.target not in existing:
                    raise ValidationError(
                        f"{source_name}: {memory.id} links to {link.target}, which is neither in the input "
                        "nor in the store",
                        hint="nothing was imported",
                    )
        if any(m.scope == "private" for m in parsed):
            self._mark_project()
        write_memories([(self.paths.store_for_scope(m.scope), m, m.scope != "team") for m in parsed], new=True)
        self.catch_up()
        return [m.id for m in parsed]

    # --- index --------------------------------------------------------------------------------------------------
    def catch_up(self, *, deep: bool = False) -> CatchUp:
        """Index what changed; the scopes this Store wrote to are known to have changed (no second look)."""
        written, self._written = tuple(sorted(self._written)), set()
        return self.index.catch_up(wait_seconds=WRITER_WAIT_SECONDS, deep=deep, written=written)

    def reindex(self) -> CatchUp:
        self.settle_supersessions()
        return self.index.rebuild()

    def settle_supersessions(self) -> list[str]:
        """Mark superseded every active memory that an active memory supersedes.

        `remember --supersedes` writes the new memory, then marks the old one; a crash between the two
        writes leaves both active. This finishes the second write (run by `gate reindex`)."""
        memories = {m.id: m for m in self.memories()}
        settled = []
        for memory in memories.values():
            if memory.status != "active":
                continue
            for old_id in memory.linked("supersedes"):
                old = memories.get(old_id)
                if old is not None and old.status == "active":
                    old.status = "superseded"
                    old.updated = now_iso()
                    self._write(old)
                    settled.append(old.id)
        return settled


def health(paths: ProjectPaths) -> dict[str, Any]:
    """Store and index health for `gate doctor`: corrupt files, index behind the files, counts."""
    store = Store(paths)
    counts: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    corrupt = []
    for item in store.all(include_corrupt=True):
        if isinstance(item, CorruptMemoryFile):
            corrupt.append({"path": str(item.path), "error": item.reason})
            continue
        counts[item.scope] = counts.get(item.scope, 0) + 1
        by_kind[item.kind] = by_kind.get(item.kind, 0) + 1
    index = store.index
    behind = not index.exists() or bool(index.stale_scopes())
    indexed = index.num_docs() if index.exists() else 0
    files = sum(counts.values())
    return {
        "corrupt": corrupt,
        "index_behind": behind or indexed != files,
        "indexed": indexed,
        "counts": counts,
        "by_kind": by_kind,
    }
