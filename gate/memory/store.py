"""The store's write side and whole-store reads (cold path): remember, update, forget, link, restore, import,
export.

Files are the source of truth; after every write the index is caught up in the same process. Nothing is
written until everything is validated: a refused memory leaves no trace. Every write that replaces a file
keeps the version it replaces (gate/memory/history.py). Supersession is never written into the memory it
replaces: it follows from the successor's `supersedes` link, wherever that link came from (see
gate/memory/supersession.py), so a write touches one file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gate.errors import DuplicateError, GateError, NotFoundError, ValidationError
from gate.memory import killpoints
from gate.memory.anchor_paths import fields_to_project, to_project, triggers_to_project
from gate.memory.files import (
    CorruptMemoryFile,
    iter_memories,
    memory_path,
    read_memory,
    sweep_temps,
    write_memories,
    write_memory,
)
from gate.memory.history import History, Version, history_root
from gate.memory.index import CatchUp, MemoryIndex
from gate.memory.model import ID_PATTERN, SCOPES, Link, Memory, mint_id, now_iso
from gate.memory.secrets import refuse_secrets
from gate.memory.supersession import closing_chain, effective_status, live_supersedes
from gate.paths import ProjectPaths, ensure_private_dir

WRITER_WAIT_SECONDS = 20.0
MAX_ANCHOR_FILES = 50
IMPORT_BATCH = 1000  # files written per sync: an interrupted import loses at most one batch's temp files


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
        "cues": memory.cues,
        "derived_cues": memory.derived_cues,
        "tags": " ".join(memory.tags),
        "paths": " ".join(memory.paths),
        "triggers": " ".join(memory.triggers),
    }


def effective_statuses(memories: Iterable[Memory]) -> dict[str, str]:
    """id -> the status readers see, derived from the memories' links as the index derives it."""
    memories = list(memories)
    superseded = {target for m in memories for target in live_supersedes(m.status, m.links)}
    return {m.id: effective_status(m.status, m.id in superseded) for m in memories}


class ImportReport:
    """What an import did: the ids written (and of those, the ids it wrote over), the ids already in the store
    as the input has them (nothing written), the lines without an id that a memory already says, and each
    refused line."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.replaced: list[str] = []
        self.unchanged: list[str] = []
        self.already: list[tuple[int, str]] = []  # (line number, the id of the memory it restates): a line
        # without an id whose kind, title and body a memory of the store (or an earlier line) has
        self.refused: list[tuple[int, str]] = []  # (line number, why)

    def to_json(self) -> dict[str, Any]:
        return {"imported": len(self.ids), "ids": self.ids, "replaced": self.replaced, "unchanged": self.unchanged,
                "already": [{"line": line, "id": memory_id} for line, memory_id in self.already],
                "skipped": [{"line": line, "error": error} for line, error in self.refused]}


class ImportInterrupted(GateError):
    """An import stopped (SIGINT) while it wrote: how many memories it wrote, each whole."""

    exit_code = 130

    def __init__(self, written: int, total: int, report: ImportReport | None = None, *,
                 matched: str = "a line with an id is matched by its id, one without by its kind, title and body"
                 ) -> None:
        super().__init__(
            f"interrupted: {written} of {total} memories were written before the import stopped (each file whole; "
            "the rest not at all)",
            hint=f"run the same import again: it writes only what is not in the store yet ({matched})",
        )
        self.written = written
        self.report = report or ImportReport()


class _Fingerprints:
    """The live memories of a store by what they say (scope, kind, title, body; spacing aside, and the title's
    case), so a line without an id that a memory already says is not written twice."""

    def __init__(self, store: Store) -> None:
        self._ids: dict[tuple[str, str, str, str], str] = {}
        for memory in store.memories():
            if memory.status != "forgotten":
                self.add(memory)

    @staticmethod
    def _key(memory: Memory) -> tuple[str, str, str, str]:
        return (memory.scope, memory.kind, " ".join(memory.title.split()).casefold(), " ".join(memory.body.split()))

    def match(self, memory: Memory) -> str | None:
        return self._ids.get(self._key(memory))

    def add(self, memory: Memory) -> None:
        self._ids.setdefault(self._key(memory), memory.id)


def _mint_free(taken: set[str]) -> str:
    """A fresh id that is not in `taken` (which it joins): ids are random, so at 20,000 lines some draw the same."""
    for _ in range(1000):
        candidate = mint_id()
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    raise RuntimeError("could not mint a free id")


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
        from gate.memory.staleness import anchor_hashes

        return anchor_hashes(self.paths.root, list(globs), MAX_ANCHOR_FILES)

    def _check(self, memory: Memory, *, new: bool) -> None:
        # an absolute path inside the project is made relative; one outside is refused where it is typed (remember,
        # import), not here: forgetting or editing an old memory that holds one must not fail (verify names it)
        if all(isinstance(p, str) for p in memory.paths):
            memory.paths = [to_project(p, self.paths.root, strict=False) for p in memory.paths]
        if all(isinstance(t, str) for t in memory.triggers):
            memory.triggers = triggers_to_project(memory.triggers, self.paths.root, strict=False)
        memory.validate()
        refuse_secrets(text_fields(memory), self.paths.root)
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
        return write_memory(store_dir, _as_written(memory), private=private, new=new)

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
            memory.project = self.paths.root
        for old_id in dict.fromkeys(supersedes):
            if not any(link.type == "supersedes" and link.target == old_id for link in memory.links):
                memory.links.append(Link("supersedes", old_id))
        if memory.paths and not memory.anchors:
            memory.anchors = self.anchor_hashes(memory.paths)
        self._check(memory, new=True)
        if refuse_duplicates:
            self._refuse_duplicate(memory)
        self._write(memory, new=True)  # fails, rather than replace, if the id was taken since _check
        killpoints.point("store.written")
        self.catch_up()
        return memory

    def _refuse_duplicate(self, memory: Memory) -> None:
        from gate.memory import duplicates

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

    def import_lines(self, lines: Iterable[str], *, source_name: str = "input") -> list[str]:
        """Import JSON lines, all or nothing: every refused line is named, and then nothing is written."""
        return self.import_report(lines, source_name=source_name).ids

    def import_report(
        self, lines: Iterable[str], *, source_name: str = "input", skip_refused: bool = False, replace: bool = False
    ) -> ImportReport:
        """Import JSON lines as `gate export` writes them.

        The whole input is validated first (ids unique, links resolvable within the input or the store, no
        supersession cycle, no secrets). Every refused line is reported with its number. Without `skip_refused`
        a refused line means nothing is written; with it, the rest is written (and a line whose link pointed at
        a refused one is refused in turn). `replace`: a line whose id exists writes over that memory, whose
        version is kept in the history; without it, such a line is refused. A line that is the memory as the
        store already holds it (an unchanged export imported again) is neither: it is counted as unchanged and
        nothing is written. So is a line without an id whose kind, title and body a live memory of its scope
        has (or an earlier line): an import run again after an interruption writes only what is not there.
        Ids minted for lines without one are free in the store and in the input.

        Interrupted (SIGINT) while writing, it raises ImportInterrupted naming how many memories it wrote: each
        file is whole or absent, and a run again goes on from there."""
        report = ImportReport()
        accepted: dict[str, tuple[int, Memory]] = {}
        unchanged: set[str] = set()
        existing = self.existing_ids()  # one listing, not three stats per line (imports run to 100k lines)
        rows: list[tuple[int, dict[str, Any]]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValidationError("a line must be a JSON object")
            except (ValueError, ValidationError) as error:
                report.refused.append((number, _refusal(error)))
                continue
            rows.append((number, data))
        # a minted id is taken by no memory and by no line of the input, whichever comes first
        taken = existing | {str(data["id"]) for _, data in rows if data.get("id")}
        known = _Fingerprints(self) if any(not data.get("id") for _, data in rows) else None
        for number, data in rows:
            try:
                memory, same = self._import_line(data, accepted, existing, replace=replace)
                if not data.get("id"):
                    assert known is not None
                    already = known.match(memory)
                    if already is not None:
                        report.already.append((number, already))
                        continue
                    memory.id = _mint_free(taken)
            except (ValueError, ValidationError) as error:
                report.refused.append((number, _refusal(error)))
                continue
            accepted[memory.id] = (number, memory)
            if known is not None:
                known.add(memory)  # a later line without an id that says the same is not written twice
            if same:
                unchanged.add(memory.id)
        _refuse_dangling_links(accepted, existing, report)
        if self._refuse_cycles(accepted, existing, report):
            _refuse_dangling_links(accepted, existing, report)  # a line linking to a refused one, in turn
        report.refused.sort()
        if report.refused and not skip_refused:
            named = "; ".join(f"line {n}: {why}" for n, why in report.refused)
            raise ValidationError(
                f"{source_name}: {len(report.refused)} line(s) refused — {named}",
                hint="nothing was imported; fix those lines, or --skip-refused imports the rest",
            )
        report.unchanged = [m.id for _, m in accepted.values() if m.id in unchanged]
        parsed = [memory for _, memory in accepted.values() if memory.id not in unchanged]
        replaced = [m for m in parsed if m.id in existing]
        fresh = [m for m in parsed if m.id not in existing]
        written: list[Path] = []
        try:
            self._write_imported(fresh, replaced, written)
        except KeyboardInterrupt:
            # what was written is indexed now, not by the first hook after (4 s inline for 9,574 files); a second
            # Ctrl-C leaves that to the next command or hook
            with contextlib.suppress(KeyboardInterrupt):
                self.catch_up()
                self.build_cues()
            # a new memory is counted on disk (the signal may come between a file's rename and its count)
            done = sum(1 for m in fresh if self.locate(m.id) is not None) + \
                len({path.stem for path in written} & {m.id for m in replaced})
            raise ImportInterrupted(done, len(parsed), report) from None
        self.catch_up()
        if parsed:
            self.build_cues()
        report.ids = [m.id for m in parsed]
        report.replaced = [m.id for m in replaced]
        return report

    def _write_imported(self, fresh: list[Memory], replaced: list[Memory], written: list[Path]) -> None:
        """Write an import's memories in batches (one sync a batch); `written` grows by each file placed, so an
        interruption can say how far it got."""
        for scope in SCOPES:
            sweep_temps(self.paths.store_for_scope(scope))  # what a writer killed mid-write left
        if any(m.scope == "private" for m in (*fresh, *replaced)):
            self._mark_project()
        for memory in replaced:
            self._keep_previous(memory.id, memory.scope, "import", prune=False)
        for scope in {m.scope for m in replaced}:
            self.history(scope).prune()  # once, not once a line (imports run to 100k lines)
        for batch, new in [*((fresh[i:i + IMPORT_BATCH], True) for i in range(0, len(fresh), IMPORT_BATCH)),
                           *((replaced[i:i + IMPORT_BATCH], False) for i in range(0, len(replaced), IMPORT_BATCH))]:
            self._written.update(m.scope for m in batch)
            write_memories([(self.paths.store_for_scope(m.scope), _as_written(m), m.scope != "team") for m in batch],
                           new=new, placed=written)

    def _import_line(
        self, data: dict[str, Any], accepted: dict[str, tuple[int, Memory]], existing: set[str], *, replace: bool
    ) -> tuple[Memory, bool]:
        """The memory of one line, and whether the store holds it as it is already."""
        if not data.get("id"):
            data = {k: v for k, v in data.items() if k != "id"}  # minted by the caller, free in store and input
        if not data.get("project"):
            data["project"] = self.paths.root
        fields_to_project(data, self.paths.root)  # an absolute path inside the project: made relative
        if data.get("id") is not None and not ID_PATTERN.match(str(data["id"])):
            raise ValidationError(f"invalid id {data['id']!r}")
        memory = Memory.from_dict(data)
        if "id" in data and memory.id in accepted:
            raise ValidationError(f"id {memory.id!r} is not unique (line {accepted[memory.id][0]} has it too)")
        same = False
        if "id" in data and memory.id in existing:
            path = self.locate(memory.id)
            where = self._scope_of(path) if path is not None else memory.scope
            if where != memory.scope:
                raise ValidationError(f"id {memory.id!r} exists in the {where} store, not the {memory.scope} one")
            same = path is not None and self._holds(path, memory, data)
            if not same and not replace:
                raise ValidationError(
                    f"id {memory.id!r} exists in the store, and differs from this line (--replace writes over it)"
                )
        refuse_secrets(text_fields(memory), self.paths.root)
        return memory, same

    def _refuse_cycles(
        self, accepted: dict[str, tuple[int, Memory]], existing: set[str], report: ImportReport
    ) -> bool:
        """Refuse each line whose `supersedes` links close a cycle with the lines before it and the store (the
        line that closes it: the others are kept). Whether any was refused."""
        graph: dict[str, list[str]] = {}

        def supersedes_of(memory_id: str) -> list[str]:
            return graph[memory_id] if memory_id in graph else self._supersedes_now(memory_id)

        refused = False
        for memory_id, (number, memory) in sorted(accepted.items(), key=lambda item: item[1][0]):
            targets = live_supersedes(memory.status, memory.links)
            added = [t for t in targets if t not in self._supersedes_now(memory_id)] if memory_id in existing \
                else targets
            chain = closing_chain(memory_id, added, supersedes_of) if added else None
            if chain is not None:
                message, _ = cycle_refusal(chain)
                report.refused.append((number, message.replace("; nothing was written", "")))
                del accepted[memory_id]
                refused = True
                continue
            graph[memory_id] = targets
        return refused

    @staticmethod
    def _holds(path: Path, memory: Memory, given: dict[str, Any]) -> bool:
        """Whether the file at `path` is `memory` as it would be written (an unreadable file is not). A field
        the line leaves out (no `created`, say, which the import fills with the time of this run) is not a
        difference: the same line imported twice is the same memory."""
        try:
            current = read_memory(path)
        except (CorruptMemoryFile, OSError):
            return False
        current.scope = memory.scope
        stored, line = _as_written(current).to_dict(), _as_written(memory).to_dict()
        return all(stored[key] == line[key] for key in line if key in given)

    # --- index --------------------------------------------------------------------------------------------------
    def catch_up(self, *, deep: bool = False) -> CatchUp:
        """Index what changed; the scopes this Store wrote to are known to have changed (no second look)."""
        written, self._written = tuple(sorted(self._written)), set()
        return self.index.catch_up(wait_seconds=WRITER_WAIT_SECONDS, deep=deep, written=written)

    def build_cues(self) -> None:
        """Bring the cue table level with the store now: after a bulk write that is this command's work, not
        the next hook's (which would rebuild a table made when the store was small inline, or go on with
        stale shards until a background build is done)."""
        from gate.memory import cue_build, cues
        from gate.rules import load_rules

        # on failure the memories are still written: the next hook finds the table behind and rebuilds it
        with contextlib.suppress(OSError):
            cue_build.rebuild(self.paths, cues.defaults_from(load_rules("triggers", self.paths.root)))

    def reindex(self) -> CatchUp:
        return self.index.rebuild()


def _as_written(memory: Memory) -> Memory:
    """The memory as its file records it: a `superseded` status (written by earlier versions, or read back from
    a derived record) becomes active; the successor's link is what supersedes it. A team memory names no
    project: its file is committed, and the author's checkout path (home directory, user name) must not go into
    the repository; the team store lies in the project, so the file belongs to whichever checkout holds it (the
    cross-project filters apply to private memories, whose store is outside the project)."""
    changes: dict[str, str] = {}
    if memory.status == "superseded":
        changes["status"] = "active"
    if memory.scope == "team" and memory.project:
        changes["project"] = ""
    if not changes:
        return memory
    from dataclasses import replace

    return replace(memory, **changes)


def _refuse_dangling_links(accepted: dict[str, tuple[int, Memory]], existing: set[str], report: ImportReport) -> None:
    """Refuse the lines whose links point at neither an accepted line nor the store, until none is left."""
    changed = True
    while changed:
        changed = False
        for memory_id, (number, memory) in list(accepted.items()):
            missing = [link for link in memory.links if link.target not in accepted and link.target not in existing]
            if missing:
                link = missing[0]
                report.refused.append(
                    (number, f"{memory_id} links to {link.target}, which is neither in the input nor in the store")
                )
                del accepted[memory_id]
                changed = True


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


def cycle_refusal(chain: list[str]) -> tuple[str, str]:
    """(message, hint) refusing a link that closes the supersession cycle `chain` (first id = last id)."""
    source, target, last = chain[0], chain[1], chain[-2]
    named = " supersedes ".join(chain)
    return (
        f"{source} supersedes {target} would close a supersession cycle ({named}): every memory in it would be "
        "superseded, and none delivered or found; nothing was written",
        f"if {source} replaces {target}, undo the link the other way first: `gate edit {last}` and delete its "
        f"supersedes link to {source} (or `gate forget {last}`); `gate link {source} relates {target}` keeps "
        "both, linked",
    )


def _refusal(error: Exception) -> str:
    """Why an import line was refused, in words: Python's own for a line that is not JSON ("Expecting value:
    line 1 column 1 (char 0)") name a line and a char the user cannot see."""
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON ({error.msg} at column {error.colno}); each line must be one JSON object, as `gate export` " \
            "writes"
    return str(error)
