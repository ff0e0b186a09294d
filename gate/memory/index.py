"""The tantivy index of one project's memories (private + team + user scope), derived from the TOML files.

Freshness is cheap to check: the index keeps the mtime of each store directory (`dirs.json`), so the hot
path pays three stat calls. Only when a directory changed does it look at that directory's files, compare
stat signatures with `files.json`, and re-index what differs. A directory whose mtime is too young to vouch
for its listing (gate/memory/scan.py: a second write in the same clock tick would not move it) is checked
again next time. In-place edits that leave the directory untouched are caught when the file's memory is a
search candidate (each document keeps its file's stat signature: a search compares its candidates'), by the
CLI's deep check (every file's signature) and by `gate reindex`.

Supersession is derived here, never stored: a memory is superseded while a memory that is not forgotten
links to it with `supersedes` (gate.memory.model.live_supersedes). The file manifest keeps each file's live
`supersedes` targets, so every catch-up — whatever changed the files: gate's own writes, an import, a
`git pull`, a hand edit, forgetting a successor — re-derives the status of exactly the memories whose set of
live successors changed, and the indexed record carries the derived status.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable

from gate.memory.analyzer import ANALYZER_NAME, analyzer
from gate.memory.engine import tantivy
from gate.memory.scan import SUFFIX, settled
from gate.paths import ProjectPaths, background_python, ensure_private_dir, replace_file
from gate.textproc import prepare

join = os.path.join

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.memory.files import CorruptMemoryFile
    from gate.memory.model import Memory

# 4: the cues field, each document's file signature, supersession derived from links; unspaced scripts indexed
# as character pairs (gate.textproc.prepare). An index of another version is rebuilt.
SCHEMA_VERSION = 4
# The writer's memory budget: tantivy flushes a segment each time it is spent, and a search in a fresh process
# pays for every segment (opening it, and each field's term dictionary at the first query: ~0.25 ms apiece).
# 15 MB made 9 segments of 100,000 memories; 400 MB holds that many in one. The arena grows as documents
# come, so a hook's one-document write costs no more memory than before (measured: the same peak RSS).
WRITER_HEAP = 400_000_000
SCOPES_INDEXED = ("private", "team", "user")
# A hook builds a missing index itself only for stores this small; a larger build (e.g. 100k memories after
# the cache was cleared) would outlast the hook's timeout on every prompt, so it goes to a detached process.
INLINE_BUILD_FILES = 2_000
TOO_LARGE = -1  # the digest of an unreadable file too large to be a memory (its signature says when it changes)


class IndexBusy(Exception):
    """Another process holds the index writer and did not let go in time."""


def _build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("key", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("title", tokenizer_name=ANALYZER_NAME, index_option="freq")
    builder.add_text_field("body", tokenizer_name=ANALYZER_NAME, index_option="freq")
    builder.add_text_field("tags", tokenizer_name=ANALYZER_NAME, index_option="freq")
    builder.add_text_field("cues", tokenizer_name=ANALYZER_NAME, index_option="freq")
    builder.add_text_field("kind", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("status", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("scope", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("link_target", tokenizer_name="raw", index_option="basic")
    # "mtime_ns size inode" of the file when it was indexed: a search checks its candidates against their files
    builder.add_text_field("sig", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_bytes_field("record", stored=True)
    return builder.build()


SCHEMA = _build_schema()


class CatchUp:
    """What one catch-up did."""

    def __init__(self) -> None:
        self.added = 0
        self.removed = 0
        self.restatused = 0  # memories whose file did not change but whose live successors did
        self.changed_dirs: list[str] = []
        self.corrupt: list[CorruptMemoryFile] = []
        self.skipped_busy = False
        self.dropped_keys: set[str] = set()  # documents deleted in this pass (re-added if their file still reads)

    def __repr__(self) -> str:
        return (f"CatchUp(added={self.added}, removed={self.removed}, restatused={self.restatused}, "
                f"corrupt={len(self.corrupt)})")

    @property
    def touched(self) -> bool:
        return bool(self.added or self.removed or self.restatused)


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_json(path: str, data: dict[str, Any]) -> None:
    replace_file(path, json.dumps(data, separators=(",", ":")))  # dumps: the C encoder; dump() is pure Python


def _dir_mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def record_of(memory: Memory, status: str | None = None) -> bytes:
    """The stored record: the memory as its file says, with the derived status when one is given."""
    data = memory.to_dict()
    if status is not None:
        data["status"] = status
    return _encode(data)


def _encode(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode("utf-8")


def superseded_ids(files_state: dict[str, Any]) -> set[str]:
    """Ids that some live memory supersedes, from the file manifest (each good entry ends with its memory's
    live `supersedes` targets)."""
    found: set[str] = set()
    for files in files_state.values():
        for entry in files.values():
            if len(entry) > 4 and entry[3] is not None and entry[4]:
                found.update(entry[4])
    return found


def _document(record: dict[str, Any], signature: list[int] | str) -> tantivy.Document:
    sig = signature if isinstance(signature, str) else " ".join(str(part) for part in signature)
    return tantivy.Document(
        key=f"{record['scope']}/{record['id']}",
        id=record["id"],
        title=prepare(record["title"]),
        body=prepare(record["body"]),
        # the writer's cues and gate's from the turn (Memory.all_cues), one field
        cues=prepare(f"{record.get('cues', '')} {record.get('derived_cues', '')}".strip()),
        tags=prepare(" ".join(record["tags"])),
        kind=record["kind"],
        status=record["status"],
        scope=record["scope"],
        link_target=[link["target"] for link in record["links"]] or [""],
        sig=sig,
        record=_encode(record),
    )


class MemoryIndex:
    """One project's index directory: tantivy files plus the two freshness manifests."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.dir = paths.index_dir
        self.store_dirs = {scope: paths.store_for_scope(scope) for scope in SCOPES_INDEXED}
        self._index: tantivy.Index | None = None
        self._searcher: tantivy.Searcher | None = None
        self._searcher_generation: tuple[int, int, int] | None = None
        self._analyzer_registered = False

    # --- manifests --------------------------------------------------------------------------------------------
    @property
    def _dirs_file(self) -> str:
        return join(self.dir, "dirs.json")

    @property
    def _files_file(self) -> str:
        return join(self.dir, "files.json")

    def stale_scopes(self, manifest: dict[str, Any] | None = None) -> list[str]:
        """Scopes whose directory changed since the index last saw it (three stats and one small read)."""
        manifest = _read_json(self._dirs_file) if manifest is None else manifest
        if manifest.get("version") != SCHEMA_VERSION:
            return list(SCOPES_INDEXED)
        recorded = manifest.get("dirs", {})
        stale = []
        for scope, directory in self.store_dirs.items():
            entry = recorded.get(scope) or {}
            if entry.get("path") != directory or entry.get("mtime_ns") != _dir_mtime(directory):
                stale.append(scope)
        return stale

    # --- tantivy ------------------------------------------------------------------------------------------------
    def _open(self) -> tantivy.Index:
        if self._index is None:
            # 0700: the index stores every memory's full record, private ones included (tantivy's files are 0644)
            ensure_private_dir(self.dir)
            try:
                index = tantivy.Index(SCHEMA, path=self.dir, reuse=True)
            except ValueError:
                # A schema from another version or a damaged directory: it is derived, so start over.
                self._wipe()
                index = tantivy.Index(SCHEMA, path=self.dir, reuse=True)
            self._index = index
            self._analyzer_registered = False
        return self._index

    def _wipe(self) -> None:
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)
        ensure_private_dir(self.dir)
        self._index = None

    def exists(self) -> bool:
        if not os.path.exists(join(self.dir, "meta.json")):
            return False
        return _read_json(self._dirs_file).get("version") == SCHEMA_VERSION

    def searcher(self) -> tantivy.Searcher:
        """A searcher on the last commit. Kept while meta.json (rewritten by every commit, whoever makes it)
        is unchanged: a search makes several reads, and reloading for each cost a hook ~0.1 ms apiece."""
        try:  # tantivy replaces meta.json whole: a new inode even where mtimes are whole seconds
            meta = os.stat(join(self.dir, "meta.json"))
            generation: tuple[int, int, int] | None = (meta.st_ino, meta.st_mtime_ns, meta.st_size)
        except OSError:
            generation = None
        if self._searcher is None or generation is None or generation != self._searcher_generation:
            index = self._open()
            index.reload()
            self._searcher = index.searcher()
            self._searcher_generation = generation
        return self._searcher

    def _writer(self, wait_seconds: float) -> tantivy.IndexWriter:
        deadline = time.monotonic() + wait_seconds
        delay = 0.005
        while True:
            try:
                index = self._open()
                if not self._analyzer_registered:  # only writing needs it: reads build term queries themselves
                    index.register_tokenizer(ANALYZER_NAME, analyzer())
                    self._analyzer_registered = True
                return index.writer(heap_size=WRITER_HEAP, num_threads=1)
            except ValueError as error:
                if "lock" not in str(error).lower() or time.monotonic() >= deadline:
                    if "lock" in str(error).lower():
                        raise IndexBusy(str(error)) from error
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    # --- catching up --------------------------------------------------------------------------------------------
    def catch_up(
        self, *, wait_seconds: float = 0.0, deep: bool = False, written: tuple[str, ...] = ()
    ) -> CatchUp:
        """Bring the index level with the files. `deep` compares every file, not just changed directories.

        Looking is lock-free; only when a file really differs does it take the writer (and look again under
        it, since another process may have caught up in between). `written` names scopes the caller has
        just written to: they certainly differ, so the lock-free look is skipped for them."""
        report = CatchUp()
        repaired: dict[str, list[str]] = {}
        if self.exists():
            manifest = _read_json(self._dirs_file)
            stale = list(SCOPES_INDEXED) if deep else self.stale_scopes(manifest)
            stale += [scope for scope in written if scope not in stale]
            # Files last seen unreadable are looked at every time (they are few): a fix written over one in
            # place moves neither its directory's mtime nor, always, its own stat signature.
            repaired = self._unreadable_changed(manifest.get("corrupt"))
            if not stale and not repaired:
                return report
            if not written and not repaired:
                files_state = _read_json(self._files_file).get("scopes", {})
                dirs_state = manifest.get("dirs", {})
                settled_dirs = dict(dirs_state)
                if not any(self._scope_differs(scope, files_state, settled_dirs) for scope in stale):
                    if settled_dirs != dirs_state:
                        self._write_dirs(settled_dirs, files_state)
                    return report
        else:
            stale = list(SCOPES_INDEXED)
        try:
            writer = self._writer(wait_seconds)
        except IndexBusy:
            report.skipped_busy = True
            return report
        fresh = not self.exists()
        files_state = {} if fresh else _read_json(self._files_file).get("scopes", {})
        dirs_state = {} if fresh else _read_json(self._dirs_file).get("dirs", {})
        only = {scope: names for scope, names in repaired.items() if scope not in stale}
        self._apply(writer, stale, files_state, dirs_state, report, start_over=fresh, only=only)
        return report

    def _unreadable_changed(self, corrupt: Any) -> dict[str, list[str]]:
        """The files dirs.json lists as unreadable that changed since: gone, another signature, or other bytes."""
        changed: dict[str, list[str]] = {}
        for entry in corrupt if isinstance(corrupt, list) else []:
            scope, name = entry[0], entry[1]
            directory = self.store_dirs.get(scope)
            if directory is None:
                continue
            recorded = entry[3:5] if len(entry) >= 5 else None  # [signature, digest]; earlier manifests had none
            if recorded is None or _unreadable_differs(join(directory, name), recorded[0], recorded[1]):
                changed.setdefault(scope, []).append(name)
        return changed

    def _apply(
        self,
        writer: tantivy.IndexWriter,
        scopes: list[str],
        files_state: dict[str, Any],
        dirs_state: dict[str, Any],
        report: CatchUp,
        *,
        start_over: bool,
        only: dict[str, list[str]] | None = None,
    ) -> None:
        """Under the writer: re-index the scopes (or `only` these files of a scope), derive supersession,
        commit if anything changed, then record the manifests."""
        try:
            # A writer killed mid-commit leaves files that meta.json never adopted (a `<segment>.<opstamp>.del`
            # among them); repeating its work would reach the same opstamp, and the commit would fail on
            # FileAlreadyExists every time after. We hold the writer lock: whatever is unreferenced is garbage.
            writer.garbage_collect_files()
            if start_over:
                writer.delete_all_documents()
            before = set() if start_over else superseded_ids(files_state)
            read: dict[str, tuple[Memory, list[int]]] = {}  # key -> what this pass read from the files
            for scope in scopes:
                self._catch_up_scope(scope, writer, files_state, dirs_state, report, read)
            for scope, names in (only or {}).items():
                self._catch_up_files(scope, names, writer, files_state, report, read)
            after = superseded_ids(files_state)
            for memory, signature in read.values():
                writer.add_document(_document(self._derived_record(memory, after), signature))
            if not start_over:
                self._restatus(writer, before ^ after, after, report)
            if report.touched or start_over:
                writer.commit()
                writer.wait_merging_threads()
                writer = None
            _write_json(self._files_file, {"version": SCHEMA_VERSION, "scopes": files_state})
            self._write_dirs(dirs_state, files_state)
        finally:
            if writer is not None:
                writer.rollback()
                writer.wait_merging_threads()

    def _scope_differs(self, scope: str, files_state: dict[str, Any], dirs_state: dict[str, Any]) -> bool:
        """Whether any file of the scope differs from the manifest; records the directory's settled mtime."""
        from gate.memory.scan import scan_dir

        directory = self.store_dirs[scope]
        mtime = _dir_mtime(directory)
        if dirs_state.get(scope, {}).get("path") not in (None, directory):
            return True
        known = files_state.get(scope, {})
        current = {entry.name: entry for entry in scan_dir(directory)}
        if current.keys() != known.keys() or any(
            known[name][:3] != entry.signature() for name, entry in current.items()
        ):
            return True
        dirs_state[scope] = {"path": directory, "mtime_ns": mtime if settled(mtime) else -1}
        return False

    def _catch_up_scope(
        self,
        scope: str,
        writer: tantivy.IndexWriter,
        files_state: dict[str, dict[str, list[Any]]],
        dirs_state: dict[str, Any],
        report: CatchUp,
        read: dict[str, tuple[Memory, list[int]]],
    ) -> None:
        from gate.memory.scan import scan_dir

        directory = self.store_dirs[scope]
        # Stat the directory BEFORE listing it: a write after this moment moves the mtime past what we record.
        mtime = _dir_mtime(directory)
        known = files_state.get(scope, {})
        if dirs_state.get(scope, {}).get("path") not in (None, directory):
            known = {}  # the scope moved (GATE_HOME changed): everything here is new
        current = {entry.name: entry for entry in scan_dir(directory)}
        updated: dict[str, list[Any]] = {}
        for name in known.keys() - current.keys():
            self._drop(writer, scope, name, report)
        for name, entry in current.items():
            previous = known.get(name)
            if previous is not None and previous[:3] == entry.signature() and not (
                previous[3] is None and _unreadable_differs(join(directory, name), previous[:3], _digest_of(previous))
            ):
                updated[name] = previous
                continue
            self._reread(writer, scope, name, entry.signature(), _indexed(previous), updated, report, read)
        files_state[scope] = updated
        dirs_state[scope] = {"path": directory, "mtime_ns": mtime if settled(mtime) else -1}
        report.changed_dirs.append(scope)

    def _catch_up_files(
        self,
        scope: str,
        names: list[str],
        writer: tantivy.IndexWriter,
        files_state: dict[str, dict[str, list[Any]]],
        report: CatchUp,
        read: dict[str, tuple[Memory, list[int]]],
    ) -> None:
        """Only these files of a scope: edited in place, so the directory's mtime (and listing) did not move."""
        import stat as stat_module

        known = files_state.setdefault(scope, {})
        for name in names:
            previous = known.get(name)
            try:
                info = os.lstat(join(self.store_dirs[scope], name))
                if not stat_module.S_ISREG(info.st_mode):
                    raise FileNotFoundError(name)
            except OSError:
                if previous is not None:
                    del known[name]
                    self._drop(writer, scope, name, report)
                continue
            signature = [info.st_mtime_ns, info.st_size, info.st_ino]
            path = join(self.store_dirs[scope], name)
            if previous is None or previous[:3] != signature or (
                previous[3] is None and _unreadable_differs(path, signature, _digest_of(previous))
            ):
                self._reread(writer, scope, name, signature, _indexed(previous), known, report, read)

    def _drop(self, writer: tantivy.IndexWriter, scope: str, name: str, report: CatchUp) -> None:
        key = f"{scope}/{name[: -len(SUFFIX)]}"
        writer.delete_documents_by_term("key", key)
        report.dropped_keys.add(key)
        report.removed += 1

    def _reread(
        self,
        writer: tantivy.IndexWriter,
        scope: str,
        name: str,
        signature: list[int],
        was_indexed: bool,
        entries: dict[str, list[Any]],
        report: CatchUp,
        read: dict[str, tuple[Memory, list[int]]],
    ) -> None:
        """Read one changed file; its document is added after the pass, with the derived status."""
        from gate.memory.files import CorruptMemoryFile, read_memory  # only when something changed
        from gate.memory.supersession import live_supersedes

        key = f"{scope}/{name[: -len(SUFFIX)]}"
        writer.delete_documents_by_term("key", key)
        report.dropped_keys.add(key)
        if was_indexed:
            report.removed += 1
        path = join(self.store_dirs[scope], name)
        try:
            memory = read_memory(path)
            if memory.scope != scope:
                memory.scope = scope  # the directory decides the scope; a copied file follows its place
        except CorruptMemoryFile as error:
            report.corrupt.append(error)
            entries[name] = [*signature, None, error.reason, _content_digest(path)]
            return
        except OSError as error:
            report.corrupt.append(CorruptMemoryFile(path, f"unreadable ({error.strerror})"))
            entries.pop(name, None)
            return
        read[key] = (memory, signature)
        report.added += 1
        entries[name] = [*signature, memory.id, live_supersedes(memory.status, memory.links)]

    @staticmethod
    def _derived_record(memory: Memory, superseded: set[str]) -> dict[str, Any]:
        from gate.memory.supersession import effective_status

        record = memory.to_dict()
        record["status"] = effective_status(memory.status, memory.id in superseded)
        return record

    def _restatus(
        self, writer: tantivy.IndexWriter, ids: set[str], superseded: set[str], report: CatchUp
    ) -> None:
        """Re-add, with the status derived now, the documents of memories whose file did not change but whose
        live successors did (one was written, forgotten, edited or deleted). Their records come from the last
        commit; documents this pass deleted or read again are already settled."""
        from gate.memory.supersession import effective_status

        if not ids:
            return
        searcher = self.searcher()
        for memory_id in sorted(ids):
            query = tantivy.Query.term_query(SCHEMA, "id", memory_id, index_option="basic")
            for _, address in searcher.search(query, limit=len(SCOPES_INDEXED), count=False).hits:
                doc = searcher.doc(address)
                record = json.loads(bytes(doc.get_first("record")))
                key = f"{record['scope']}/{memory_id}"
                if key in report.dropped_keys:
                    continue
                status = effective_status(record["status"], memory_id in superseded)
                if status == record["status"]:
                    continue
                record["status"] = status
                writer.delete_documents_by_term("key", key)
                writer.add_document(_document(record, str(doc.get_first("sig") or "")))
                report.restatused += 1

    def refresh_changed(self, signatures: dict[str, str]) -> bool:
        """Re-index the candidates whose file differs from what was indexed (an edit in place leaves the
        directory's mtime alone, so no catch-up noticed it). `signatures`: key -> indexed signature, as
        search() collects them. A few stat calls; True when something was re-indexed (search again)."""
        changed: dict[str, list[str]] = {}
        for key, signature in signatures.items():
            scope, _, memory_id = key.partition("/")
            directory = self.store_dirs.get(scope)
            if directory is None:
                continue
            name = memory_id + SUFFIX
            try:
                info = os.lstat(join(directory, name))
                current = f"{info.st_mtime_ns} {info.st_size} {info.st_ino}"
            except OSError:
                current = ""
            if current != signature:
                changed.setdefault(scope, []).append(name)
        if not changed:
            return False
        try:
            writer = self._writer(0.0)
        except IndexBusy:
            return False  # someone is writing; their catch-up or the next search will see it
        report = CatchUp()
        files_state = _read_json(self._files_file).get("scopes", {})
        dirs_state = _read_json(self._dirs_file).get("dirs", {})
        self._apply(writer, [], files_state, dirs_state, report, start_over=False, only=changed)
        return report.touched

    def catch_up_for_hook(self) -> CatchUp:
        """catch_up, bounded for a hook: a missing index over a large store is built in the background."""
        if not self.exists() and self._store_files(limit=INLINE_BUILD_FILES) > INLINE_BUILD_FILES:
            self._spawn_build()
            report = CatchUp()
            report.skipped_busy = True
            return report
        return self.catch_up(wait_seconds=0.0)

    def _store_files(self, limit: int) -> int:
        count = 0
        for directory in self.store_dirs.values():
            try:
                with os.scandir(directory) as entries:
                    for _ in entries:
                        count += 1
                        if count > limit:
                            return count
            except OSError:
                continue
        return count

    def _spawn_build(self) -> None:
        """Start gate.memory.index's main(ROOT) detached, unless a build holds the build lock."""
        import fcntl
        import subprocess

        try:
            ensure_private_dir(self.dir)
            lock_fd = os.open(join(self.dir, "build.lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(lock_fd)
            subprocess.Popen(  # detached and silent: Claude Code waits for the hook's stdout to close
                background_python("gate.memory.index", self.paths.root),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        except OSError:
            return  # a build is under way (its lock is held), or none can start: the next call tries again

    def rebuild(self) -> CatchUp:
        """Build the index again from every file (`gate reindex`), in place: all documents replaced in one
        commit under the writer lock, so hooks and writers running meanwhile read the old index until then.
        (Wiping the directory first pulled it from under them: they failed on a missing meta.json, or found
        no index and skipped recall.) A damaged or outdated directory is still started over, by _open."""
        report = CatchUp()
        self._apply(self._writer(30.0), list(SCOPES_INDEXED), {}, {}, report, start_over=True)
        return report

    def _write_dirs(self, dirs_state: dict[str, Any], files_state: dict[str, Any]) -> None:
        """dirs.json: the directories' mtimes, and the files that could not be read (every CLI command lists
        those; finding them in files.json meant parsing ~10 MB at 100k memories)."""
        _write_json(
            self._dirs_file, {"version": SCHEMA_VERSION, "dirs": dirs_state, "corrupt": _corrupt(files_state)}
        )

    def corrupt_files(self) -> list[tuple[str, str]]:
        """Files the index could not read, with why (kept in the manifests so they are not re-read each call)."""
        corrupt = _read_json(self._dirs_file).get("corrupt")
        if not isinstance(corrupt, list):  # written by an earlier version: the full manifest has them
            corrupt = _corrupt(_read_json(self._files_file).get("scopes", {}))
        return [
            (join(self.store_dirs[entry[0]], entry[1]), entry[2])
            for entry in corrupt
            if entry[0] in self.store_dirs
        ]

    # --- reading ------------------------------------------------------------------------------------------------
    def query_terms(
        self, terms: Iterable[str], boosts: dict[str, float], weights: dict[str, float] | None = None
    ) -> tantivy.Query:
        """Any of the terms in any field, each clause boosted by its field's boost times the term's weight."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for term in terms:
            weight = weights.get(term, 1.0) if weights else 1.0
            for field_name, boost in boosts.items():
                query = tantivy.Query.term_query(SCHEMA, field_name, term, index_option="freq")
                if boost * weight != 1.0:
                    query = tantivy.Query.boost_query(query, boost * weight)
                clauses.append((tantivy.Occur.Should, query))
        clauses.append(
            (tantivy.Occur.MustNot, tantivy.Query.term_query(SCHEMA, "status", "forgotten", index_option="basic"))
        )
        return tantivy.Query.boolean_query(clauses)

    def search(
        self,
        terms: list[str],
        boosts: dict[str, float],
        limit: int,
        signatures: dict[str, str] | None = None,
        weights: dict[str, float] | None = None,
        stats: dict[str, Any] | None = None,
        load: int | None = None,
    ) -> list[tuple[float, dict[str, Any] | None]]:
        """Ranked records; `signatures`, when given, receives each hit's key -> indexed file signature.
        `weights`: term -> weight. `stats`, when given, receives what standardising the scores needs: the
        number of documents that match ("matching") and the index's documents ("docs"). `load`: read the records
        of only the first `load` hits (the rest come back as (score, None): their scores are all a caller
        standardising the scores needs, and reading a record costs more than scoring it)."""
        if not terms:
            return []
        searcher = self.searcher()
        query = self.query_terms(terms, boosts, weights)
        result = searcher.search(query, limit=limit, count=stats is not None)
        if stats is not None:
            stats["matching"] = int(result.count or 0)
            stats["docs"] = int(searcher.num_docs)
        found: list[tuple[float, dict[str, Any] | None]] = []
        for rank, (score, address) in enumerate(result.hits):
            if load is not None and rank >= load:
                found.append((score, None))
                continue
            doc = searcher.doc(address)
            record = json.loads(bytes(doc.get_first("record")))
            if signatures is not None:
                signatures[f"{record['scope']}/{record['id']}"] = str(doc.get_first("sig") or "")
            found.append((score, record))
        return found

    def explain(self, terms: list[str], boosts: dict[str, float], key: str) -> list[tuple[str, str, float]]:
        """(field, term, score) of every query clause that matches the document `key`, as BM25 scored it
        (boost included): which field and which terms made a hit."""
        searcher = self.searcher()
        found = searcher.search(tantivy.Query.term_query(SCHEMA, "key", key, index_option="basic"), limit=1)
        if not found.hits:
            return []
        address = found.hits[0][1]
        matched = []
        for term in terms:
            for field_name, boost in boosts.items():
                query = tantivy.Query.term_query(SCHEMA, field_name, term, index_option="freq")
                if boost != 1.0:
                    query = tantivy.Query.boost_query(query, boost)
                try:
                    score = float(json.loads(query.explain(searcher, address).to_json())["value"])
                except ValueError:
                    continue  # this clause does not match the document
                matched.append((field_name, term, score))
        return matched

    @staticmethod
    def _record(searcher: tantivy.Searcher, address: tantivy.DocAddress) -> dict[str, Any]:
        doc = searcher.doc(address)
        return json.loads(bytes(doc.get_first("record")))

    def by_field(self, field_name: str, value: str, limit: int = 50) -> list[dict[str, Any]]:
        searcher = self.searcher()
        query = tantivy.Query.term_query(SCHEMA, field_name, value, index_option="basic")
        result = searcher.search(query, limit=limit, count=False)
        return [self._record(searcher, address) for _, address in result.hits]

    def get(self, memory_id: str) -> dict[str, Any] | None:
        records = self.by_field("id", memory_id, limit=3)
        return records[0] if records else None

    def linking_to(self, memory_id: str) -> list[dict[str, Any]]:
        return self.by_field("link_target", memory_id)

    def num_docs(self) -> int:
        return self.searcher().num_docs


def _corrupt(files_state: dict[str, Any]) -> list[list[Any]]:
    """[scope, file name, reason, signature, digest] of each file the manifest records as unreadable."""
    return [
        [scope, name, str(entry[4]) if len(entry) > 4 else "unreadable", entry[:3], _digest_of(entry)]
        for scope, files in files_state.items()
        for name, entry in files.items()
        if entry[3] is None
    ]


def _indexed(entry: list[Any] | None) -> bool:
    """Whether a manifest entry has a document (an unreadable file has none)."""
    return entry is not None and entry[3] is not None


def _digest_of(entry: list[Any]) -> int | None:
    return entry[5] if len(entry) > 5 else None


def _content_digest(path: str) -> int | None:
    """A checksum of an unreadable file's bytes (TOO_LARGE past the size of any memory: its size tells
    instead; None when it cannot be read)."""
    import zlib

    from gate.memory.scan import MAX_FILE_BYTES

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return zlib.crc32(data) if len(data) <= MAX_FILE_BYTES else TOO_LARGE


def _unreadable_differs(path: str, signature: list[int], digest: int | None) -> bool:
    """Whether a file last seen unreadable (with this signature and digest) is another file now."""
    import stat as stat_module

    try:
        info = os.lstat(path)
    except OSError:
        return True
    if not stat_module.S_ISREG(info.st_mode) or [info.st_mtime_ns, info.st_size, info.st_ino] != list(signature):
        return True
    if digest == TOO_LARGE:
        return False
    return digest is None or _content_digest(path) != digest


def main(argv: list[str]) -> int:
    """The background build a hook starts for a large store: hold the build lock, catch up, exit."""
    import fcntl

    index = MemoryIndex(ProjectPaths.for_cwd(argv[0]))
    ensure_private_dir(index.dir)
    lock_fd = os.open(join(index.dir, "build.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another build is at work
    try:
        index.catch_up(wait_seconds=120.0)
    finally:
        os.close(lock_fd)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
