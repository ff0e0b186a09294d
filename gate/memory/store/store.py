"""The store's write side and whole-store reads (cold path): remember, update, forget, link, restore, export;
importing JSON lines is gate/memory/store/importing.py's, through the same writes (it is handed the Store: this
module does not import it).

Files are the source of truth; after every write the index is caught up in the same process. Nothing is
written until everything is validated: a refused memory leaves no trace. Every write that replaces a file
keeps the version it replaces (gate/memory/store/history.py). Supersession is never written into the memory it
replaces: it follows from the successor's `supersedes` link, wherever that link came from (see
gate/memory/supersession.py), so a write touches one file.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gate.errors import DuplicateError, GateError, NotFoundError, ValidationError
from gate.memory.index.read import CatchUp, IndexBusy, MemoryIndex
from gate.memory.model import SCOPES, Link, Memory, mint_id, now_iso
from gate.memory.store import killpoints
from gate.memory.store.anchor_paths import to_project, triggers_to_project
from gate.memory.store.files import CorruptMemoryFile, as_written, iter_memories, memory_path, read_memory, write_memory
from gate.memory.store.history import History, Version, history_root
from gate.memory.store.secrets import refuse_secrets, text_fields
from gate.memory.supersession import closing_chain, cycle_refusal, effective_status, live_supersedes
from gate.paths import ProjectPaths, ensure_private_dir

WRITER_WAIT_SECONDS = 20.0
MAX_ANCHOR_FILES = 50
# What is left of a purged memory's title: `gate list --status forgotten` still shows the id was there.
PURGED_TITLE = "(purged)"


def effective_statuses(memories: Iterable[Memory]) -> dict[str, str]:
    """id -> the status readers see, derived from the memories' links as the index derives it."""
    memories = list(memories)
    superseded = {target for m in memories for target in live_supersedes(m.status, m.links)}
    return {m.id: effective_status(m.status, m.id in superseded) for m in memories}


class Store:
    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.index = MemoryIndex(paths)
        self._written: set[str] = set()
        self.set_aside: list[str] = []  # unreadable files a write replaced, where their bytes are kept

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
        from gate.memory.store.scan import SUFFIX, scan_dir

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

    def superseded_by(self, memory_id: str) -> list[str]:
        """The live memories that supersede this one (read from the index, which every command catches up)."""
        return [
            record["id"] for record in self.index.linking_to(memory_id)
            if memory_id in live_supersedes(record["status"], record["links"])
        ]

    def status_of(self, memory: Memory) -> str:
        """The status readers see: forgotten as the file says, superseded while a live successor exists."""
        return effective_status(memory.status, bool(self.superseded_by(memory.id)))

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
        from gate.memory.cues.staleness import anchor_hashes

        return anchor_hashes(self.paths.root, list(globs), MAX_ANCHOR_FILES)

    def anchor(self, memory: Memory) -> None:
        """Record the memory's anchored files as they are now: each file's hash, and what the memory is about there
        (its terms on a few of the file's lines, rules/remember.toml [anchors]) so an edit elsewhere keeps it fresh."""
        from gate.memory.cues.staleness import anchor_lines
        from gate.rules import load_rules

        memory.anchors = self.anchor_hashes(memory.paths)
        rules = load_rules("remember", self.paths.root).get("anchors", {})
        memory.anchor_lines = anchor_lines(self.paths.root, memory.anchors, f"{memory.title}\n{memory.body}", rules)

    def _check(self, memory: Memory, *, new: bool) -> None:
        # an absolute path inside the project is made relative; one outside is refused where it is typed (remember,
        # import), not here: forgetting or editing an old memory that holds one must not fail (verify names it)
        if all(isinstance(p, str) for p in memory.paths):
            memory.paths = [to_project(p, self.paths.root, strict=False) for p in memory.paths]
        if all(isinstance(t, str) for t in memory.triggers):
            memory.triggers = triggers_to_project(memory.triggers, self.paths.root, strict=False)
        memory.validate()
        fields = text_fields(memory)
        if not new:
            # only text this write adds: a memory stored before a pattern knew its secret can still be
            # forgotten, linked or verified (and purged), which a refusal of its whole text would prevent
            before = self._stored_text(memory.id)
            fields = {name: text for name, text in fields.items() if before.get(name) != text}
        refuse_secrets(fields, self.paths.root)
        if new and self.locate(memory.id) is not None:
            raise ValidationError(
                f"a memory with id {memory.id!r} exists already; nothing was written",
                hint=f"leave --id out for a new id; `gate show {memory.id}` shows that one, `gate edit {memory.id}` "
                f"changes it, and --supersedes {memory.id} replaces it with the new one",
            )
        for link in memory.links:
            if self.locate(link.target) is None:
                raise ValidationError(
                    f"link {link.type}:{link.target} points at no memory", hint="`gate list` shows the ids"
                )
        self._refuse_cycle(memory, new=new)

    def _stored_text(self, memory_id: str) -> dict[str, str]:
        """The text fields of a memory as its file holds them now ({} when there is none or it is unreadable)."""
        path = self.locate(memory_id)
        try:
            return text_fields(read_memory(path)) if path is not None else {}
        except (CorruptMemoryFile, OSError):
            return {}

    def _supersedes_now(self, memory_id: str) -> list[str]:
        """What a stored memory replaces as its file says now (nothing for one that is not there or unreadable)."""
        path = self.locate(memory_id)
        try:
            stored = read_memory(path) if path is not None else None
        except (CorruptMemoryFile, OSError):
            return []
        return live_supersedes(stored.status, stored.links) if stored is not None else []

    def _refuse_cycle(self, memory: Memory, *, new: bool) -> None:
        """Refuse a `supersedes` link that would close a cycle: every memory in one is superseded, so none is
        delivered or found (`A supersedes B` then `B supersedes A` made both vanish). Only links this write adds
        are looked at: editing or forgetting a memory already in a cycle (pulled in, say) stays possible."""
        targets = live_supersedes(memory.status, memory.links)
        if not new:
            targets = [t for t in targets if t not in self._supersedes_now(memory.id)]
        if not targets:
            return

        def supersedes_of(memory_id: str) -> list[str]:
            return live_supersedes(memory.status, memory.links) if memory_id == memory.id else \
                self._supersedes_now(memory_id)

        chain = closing_chain(memory.id, targets, supersedes_of)
        if chain is not None:
            raise ValidationError(*cycle_refusal(chain))

    def _write(self, memory: Memory, *, new: bool = False) -> Path:
        store_dir = self.paths.store_for_scope(memory.scope)
        private = memory.scope != "team"
        if memory.scope == "private":
            self._mark_project()
        self._written.add(memory.scope)
        return write_memory(store_dir, as_written(memory), private=private, new=new)

    def _mark_project(self) -> None:
        marker = Path(self.paths.project_marker)
        if not marker.exists():
            ensure_private_dir(marker.parent)
            marker.write_text(json.dumps({"root": self.paths.root}), encoding="utf-8")

    def remember(
        self, memory: Memory, *, supersedes: Iterable[str] = (), refuse_duplicates: bool = False
    ) -> Memory:
        """Validate and write a new memory and catch the index up (which derives what it supersedes).

        `refuse_duplicates` (`gate remember` without --new): a fact that restates a live memory it does not
        link to is refused with DuplicateError."""
        if not memory.project and memory.scope != "team":  # a team file names no machine path (_as_written)
            memory.project = self.paths.key
        for old_id in dict.fromkeys(supersedes):
            if not any(link.type == "supersedes" and link.target == old_id for link in memory.links):
                memory.links.append(Link("supersedes", old_id))
        if memory.paths and not memory.anchors:
            self.anchor(memory)
        self._check(memory, new=True)
        if refuse_duplicates:
            self._refuse_duplicate(memory)
        self._write(memory, new=True)  # fails, rather than replace, if the id was taken since _check
        killpoints.point("store.written")
        self.catch_up()
        return memory

    def _refuse_duplicate(self, memory: Memory) -> None:
        from gate.memory.store import duplicates

        matches = duplicates.find(self.index, memory)
        if not matches:
            return
        best = matches[0].id
        others = f" (also like {', '.join(m.id for m in matches[1:])})" if len(matches) > 1 else ""
        raise DuplicateError(
            f"looks like {best}: `--supersedes {best}` to replace it, `--link relates:{best}` to keep both "
            f"linked, `--new` to keep both{others}; nothing was written",
            hint=f"{best}: {matches[0].record['title']}",
            matches=[m.to_json() for m in matches],
        )

    def update(self, memory: Memory, *, action: str = "edit") -> Memory:
        """Rewrite an existing memory; the version it replaces goes to the history (`action` says why)."""
        memory.updated = now_iso()
        self._check(memory, new=False)
        self._keep_previous(memory.id, memory.scope, action)
        killpoints.point("store.kept")
        self._write(memory)
        killpoints.point("store.written")
        self.catch_up()
        return memory

    def forget(self, memory_id: str) -> Memory:
        """Retire a memory; one already forgotten is left as it is (a second write would change nothing but
        its timestamp, and keep a version that differs from the file in nothing)."""
        memory = self.get(memory_id)
        if memory.status == "forgotten":
            return memory
        memory.status = "forgotten"
        return self.update(memory, action="forget")

    def purge(self, memory_id: str) -> Memory:
        """Forget a memory and take its text out of everything gate keeps of it: the file keeps only what is no
        text (id, kind, scope, dates, links; the title says it was purged), its history is deleted (a saved
        version would bring the text back), and the index is built again from the files, since tantivy keeps a
        deleted document's bytes in its segment until a merge. Run again, it finishes an interrupted purge."""
        memory = self.get(memory_id)
        tombstone = Memory(
            id=memory.id, kind=memory.kind, title=PURGED_TITLE, scope=memory.scope, project=memory.project,
            links=list(memory.links), source=memory.source, status="forgotten", created=memory.created,
            updated=now_iso(),
        )
        self._check(tombstone, new=False)
        self._write(tombstone)  # no version of it is kept: that is what the purge is for
        killpoints.point("store.written")
        self.history(memory.scope).drop(memory.id)
        try:
            self.index.rebuild()
        except IndexBusy as error:
            raise GateError(
                f"{memory_id} is purged from its file and its history, but the index was busy and may still hold "
                "its text",
                hint="run `gate reindex` when no other gate command is writing",
            ) from error
        self.build_cues()
        return tombstone

    def link(self, source_id: str, link_type: str, target_id: str) -> Memory:
        memory = self.get(source_id)
        self.get(target_id)
        if any(link.type == link_type and link.target == target_id for link in memory.links):
            return memory
        memory.links.append(Link(link_type, target_id))
        return self.update(memory, action="link")

    # --- history ------------------------------------------------------------------------------------------------
    def history(self, scope: str) -> History:
        from gate.settings import load_settings

        settings = load_settings(self.paths.root, problems=[])
        return History(
            history_root(self.paths, scope),
            max_age_days=int(settings["history_max_age_days"]),
            max_bytes=int(settings["history_max_bytes"]),
        )

    def _keep_previous(self, memory_id: str, scope: str, action: str, *, prune: bool = True) -> None:
        """Save the file about to be replaced (as it is on disk now), then prune that history."""
        path = memory_path(self.paths.store_for_scope(scope), memory_id)
        try:
            previous = read_memory(path)
        except FileNotFoundError:
            return
        except CorruptMemoryFile:
            # no version can be made of it, but its bytes may be all there is of the memory: kept aside, never
            # dropped by the write that repairs it
            try:
                payload = path.read_bytes()
            except OSError:
                return
            history = self.history(scope)
            self.set_aside.append(history.keep_unreadable(memory_id, payload))
            if prune:
                history.prune()
            return
        history = self.history(scope)
        history.save(previous, scope, action)
        if prune:
            history.prune()

    def versions(self, memory_id: str) -> tuple[str, list[Version]]:
        """(scope, saved versions oldest first) of a memory, whether or not its file still exists."""
        path = self.locate(memory_id)
        scopes = [self._scope_of(path)] if path is not None else list(SCOPES)
        for scope in scopes:
            found = self.history(scope).versions(memory_id)
            if found or path is not None:
                return scope, found
        raise NotFoundError(f"no memory {memory_id!r} and no saved version of it", hint="`gate list` shows the ids")

    def restore(self, memory_id: str, number: int) -> Memory:
        """Make saved version `number` the current one; the version it replaces is saved in turn."""
        scope, versions = self.versions(memory_id)
        version = next((v for v in versions if v.number == number), None)
        if version is None:
            known = ", ".join(f"@{v.number}" for v in versions) or "none"
            raise NotFoundError(f"no version {memory_id}@{number}", hint=f"saved versions: {known}")
        try:
            memory = Memory.from_dict(version.memory, fill_defaults=False)
        except ValidationError as error:
            raise ValidationError(f"version {memory_id}@{number} is not a valid memory any more: {error}") from error
        memory.scope = scope
        if self.locate(memory_id) is None:  # its file was deleted: the restore writes it again
            memory.updated = now_iso()
            self._check(memory, new=True)
            self._write(memory, new=True)
            self.catch_up()
            return memory
        return self.update(memory, action="restore")

    # --- bulk ---------------------------------------------------------------------------------------------------
    def export(self) -> Iterator[dict[str, Any]]:
        for memory in self.all():
            assert isinstance(memory, Memory)
            yield memory.to_dict()

    # --- index --------------------------------------------------------------------------------------------------
    def catch_up(self, *, deep: bool = False) -> CatchUp:
        """Index what changed; the scopes this Store wrote to are known to have changed (no second look)."""
        written, self._written = tuple(sorted(self._written)), set()
        return self.index.catch_up(wait_seconds=WRITER_WAIT_SECONDS, deep=deep, written=written)

    def build_cues(self) -> None:
        """Bring the cue table level with the store now: after a bulk write that is this command's work, not
        the next hook's (which would rebuild a table made when the store was small inline, or go on with
        stale shards until a background build is done)."""
        from gate.memory.cues import build as cue_build
        from gate.memory.cues import shards
        from gate.rules import load_rules

        # on failure the memories are still written: the next hook finds the table behind and rebuilds it
        with contextlib.suppress(OSError):
            cue_build.rebuild(self.paths, shards.defaults_from(load_rules("triggers", self.paths.root)))

    def reindex(self) -> CatchUp:
        return self.index.rebuild()


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
