"""Writing the memory index: the writer, the pass that re-indexes what changed, the documents it adds.

Imported only when a file really differs from what was indexed (gate/memory/index/read.py looks first, lock-free):
a prompt whose store did not change never loads this module, nor the analyzer the writer registers.

Supersession is derived here, never stored: a memory is superseded while a memory that is not forgotten links to
it with `supersedes` (gate.memory.model.live_supersedes). The file manifest keeps each file's live `supersedes`
targets, so every pass re-derives the status of exactly the memories whose set of live successors changed, and the
indexed record carries the derived status.
"""

from __future__ import annotations

import json
import os
import time

from gate.memory.index.analyzer import analyzer
from gate.memory.index.engine import tantivy
from gate.memory.index.schema import (
    ANALYZER_NAME,
    SCHEMA_VERSION,
    SCOPES_INDEXED,
    CatchUp,
    IndexBusy,
    content_digest,
    digest_of,
    dir_mtime,
    indexed,
    schema,
    superseded_ids,
    unreadable_differs,
    write_dirs,
    write_json,
)
from gate.memory.store.scan import SUFFIX, settled
from gate.memory.vocab import joined_cues
from gate.textproc import prepare

join = os.path.join

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.memory.index.schema import IndexHandle
    from gate.memory.model import Memory

# The writer's memory budget: tantivy flushes a segment each time it is spent, and a search in a fresh process
# pays for every segment (opening it, and each field's term dictionary at the first query: ~0.25 ms apiece).
# 15 MB made 9 segments of 100,000 memories; 400 MB holds that many in one. The arena grows as documents
# come, so a hook's one-document write costs no more memory than before (measured: the same peak RSS).
WRITER_HEAP = 400_000_000


# --- documents ----------------------------------------------------------------------------------------------------
def record_of(memory: Memory, status: str | None = None) -> bytes:
    """The stored record: the memory as its file says, with the derived status when one is given."""
    data = memory.to_dict()
    if status is not None:
        data["status"] = status
    return _encode(data)


def _encode(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode("utf-8")


def _document(record: dict[str, Any], signature: list[int] | str) -> tantivy.Document:
    sig = signature if isinstance(signature, str) else " ".join(str(part) for part in signature)
    return tantivy.Document(
        key=f"{record['scope']}/{record['id']}",
        id=record["id"],
        title=prepare(record["title"]),
        body=prepare(record["body"]),
        cues=prepare(joined_cues(record.get("cues"), record.get("derived_cues"))),  # the writer's and gate's
        tags=prepare(" ".join(record["tags"])),
        kind=record["kind"],
        status=record["status"],
        scope=record["scope"],
        link_target=[link["target"] for link in record["links"]] or [""],
        sig=sig,
        record=_encode(record),
    )


def _derived_record(memory: Memory, superseded: set[str]) -> dict[str, Any]:
    from gate.memory.supersession import effective_status

    record = memory.to_dict()
    record["status"] = effective_status(memory.status, memory.id in superseded)
    return record


# --- the writer ---------------------------------------------------------------------------------------------------
def open_writer(index: IndexHandle, wait_seconds: float) -> tantivy.IndexWriter:
    """The index's writer, waiting up to `wait_seconds` for another process to let go of it (IndexBusy)."""
    deadline = time.monotonic() + wait_seconds
    delay = 0.005
    while True:
        try:
            tantivy_index = index.open()
            if not index.analyzer_registered:  # only writing needs it: reads build term queries themselves
                tantivy_index.register_tokenizer(ANALYZER_NAME, analyzer())
                index.analyzer_registered = True
            return tantivy_index.writer(heap_size=WRITER_HEAP, num_threads=1)
        except ValueError as error:
            if "lock" not in str(error).lower() or time.monotonic() >= deadline:
                if "lock" in str(error).lower():
                    raise IndexBusy(str(error)) from error
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


# --- the pass -----------------------------------------------------------------------------------------------------
def apply(
    index: IndexHandle,
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
            _catch_up_scope(index, scope, writer, files_state, dirs_state, report, read)
        for scope, names in (only or {}).items():
            _catch_up_files(index, scope, names, writer, files_state, report, read)
        after = superseded_ids(files_state)
        for memory, signature in read.values():
            writer.add_document(_document(_derived_record(memory, after), signature))
        if not start_over:
            _restatus(index, writer, before ^ after, after, report)
        if report.touched or start_over:
            writer.commit()
            writer.wait_merging_threads()
            writer = None
        write_json(index.files_file, {"version": SCHEMA_VERSION, "scopes": files_state})
        write_dirs(index.dirs_file, dirs_state, files_state)
    finally:
        if writer is not None:
            writer.rollback()
            writer.wait_merging_threads()


def _catch_up_scope(
    index: IndexHandle,
    scope: str,
    writer: tantivy.IndexWriter,
    files_state: dict[str, dict[str, list[Any]]],
    dirs_state: dict[str, Any],
    report: CatchUp,
    read: dict[str, tuple[Memory, list[int]]],
) -> None:
    from gate.memory.store.scan import scan_dir

    directory = index.store_dirs[scope]
    # Stat the directory BEFORE listing it: a write after this moment moves the mtime past what we record.
    mtime = dir_mtime(directory)
    known = files_state.get(scope, {})
    if dirs_state.get(scope, {}).get("path") not in (None, directory):
        known = {}  # the scope moved (GATE_HOME changed): everything here is new
    current = {entry.name: entry for entry in scan_dir(directory)}
    updated: dict[str, list[Any]] = {}
    for name in known.keys() - current.keys():
        _drop(writer, scope, name, report)
    for name, entry in current.items():
        previous = known.get(name)
        if previous is not None and previous[:3] == entry.signature() and not (
            previous[3] is None and unreadable_differs(join(directory, name), previous[:3], digest_of(previous))
        ):
            updated[name] = previous
            continue
        _reread(index, writer, scope, name, entry.signature(), indexed(previous), updated, report, read)
    files_state[scope] = updated
    dirs_state[scope] = {"path": directory, "mtime_ns": mtime if settled(mtime) else -1}
    report.changed_dirs.append(scope)


def _catch_up_files(
    index: IndexHandle,
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
            info = os.lstat(join(index.store_dirs[scope], name))
            if not stat_module.S_ISREG(info.st_mode):
                raise FileNotFoundError(name)
        except OSError:
            if previous is not None:
                del known[name]
                _drop(writer, scope, name, report)
            continue
        signature = [info.st_mtime_ns, info.st_size, info.st_ino]
        path = join(index.store_dirs[scope], name)
        if previous is None or previous[:3] != signature or (
            previous[3] is None and unreadable_differs(path, signature, digest_of(previous))
        ):
            _reread(index, writer, scope, name, signature, indexed(previous), known, report, read)


def _drop(writer: tantivy.IndexWriter, scope: str, name: str, report: CatchUp) -> None:
    key = f"{scope}/{name[: -len(SUFFIX)]}"
    writer.delete_documents_by_term("key", key)
    report.dropped_keys.add(key)
    report.removed += 1


def _reread(
    index: IndexHandle,
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
    from gate.memory.store.files import CorruptMemoryFile, read_memory  # only when something changed
    from gate.memory.supersession import live_supersedes

    key = f"{scope}/{name[: -len(SUFFIX)]}"
    writer.delete_documents_by_term("key", key)
    report.dropped_keys.add(key)
    if was_indexed:
        report.removed += 1
    path = join(index.store_dirs[scope], name)
    try:
        memory = read_memory(path)
        if memory.scope != scope:
            memory.scope = scope  # the directory decides the scope; a copied file follows its place
    except CorruptMemoryFile as error:
        report.corrupt.append(error)
        entries[name] = [*signature, None, error.reason, content_digest(path)]
        return
    except OSError as error:
        report.corrupt.append(CorruptMemoryFile(path, f"unreadable ({error.strerror})"))
        entries.pop(name, None)
        return
    read[key] = (memory, signature)
    report.added += 1
    entries[name] = [*signature, memory.id, live_supersedes(memory.status, memory.links)]


def _restatus(
    index: IndexHandle, writer: tantivy.IndexWriter, ids: set[str], superseded: set[str], report: CatchUp
) -> None:
    """Re-add, with the status derived now, the documents of memories whose file did not change but whose
    live successors did (one was written, forgotten, edited or deleted). Their records come from the last
    commit; documents this pass deleted or read again are already settled."""
    from gate.memory.supersession import effective_status

    if not ids:
        return
    searcher = index.searcher()
    for memory_id in sorted(ids):
        query = tantivy.Query.term_query(schema(), "id", memory_id, index_option="basic")
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
