"""What the memory index keeps (hot path): the tantivy schema, the two freshness manifests and what a catch-up did.

dirs.json holds each store directory's mtime (and the files that could not be read); files.json holds each file's
stat signature, its memory's id and its live `supersedes` targets. The reader (gate/memory/index/read.py) and the
writer (gate/memory/index/write.py) both read them through these helpers, so neither imports the other; the writer
and the background build (gate/memory/index/build.py) know the reader's MemoryIndex only as IndexHandle.
"""

from __future__ import annotations

import os

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import replace_file

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any, Protocol

    from gate.memory.index.engine import tantivy
    from gate.memory.store.files import CorruptMemoryFile
    from gate.paths import ProjectPaths

    class IndexHandle(Protocol):
        """What the writer and the background build use of the index (gate/memory/index/read.py MemoryIndex): typed
        here, where both already look, so that neither imports the module that imports them."""

        paths: ProjectPaths
        dir: str
        store_dirs: dict[str, str]
        analyzer_registered: bool

        @property
        def dirs_file(self) -> str: ...

        @property
        def files_file(self) -> str: ...

        def open(self) -> tantivy.Index: ...

        def searcher(self) -> tantivy.Searcher: ...

        def catch_up(
            self, *, wait_seconds: float = 0.0, deep: bool = False, written: tuple[str, ...] = ()
        ) -> CatchUp: ...

# 4: the cues field, each document's file signature, supersession derived from links; unspaced scripts indexed
# as character pairs (gate.textproc.prepare). An index of another version is rebuilt.
SCHEMA_VERSION = 4
# The text fields' tokenizer (gate/memory/index/analyzer.py builds it; only the writer registers it, so a read needs
# just its name)
ANALYZER_NAME = "gate_en"
SCOPES_INDEXED = ("private", "team", "user")
TOO_LARGE = -1  # the digest of an unreadable file too large to be a memory (its signature says when it changes)


class IndexBusy(Exception):
    """Another process holds the index writer and did not let go in time."""


def _build_schema() -> tantivy.Schema:
    from gate.memory.index.engine import tantivy

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


_schema: list[tantivy.Schema] = []


def schema() -> tantivy.Schema:
    """The schema, built (and tantivy imported) on first use: a session start whose reads the index kept for its
    commit needs neither (tantivy's import is ~3 ms of it)."""
    if not _schema:
        _schema.append(_build_schema())
    return _schema[0]


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


# --- the manifests ------------------------------------------------------------------------------------------------
def read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write_json(path: str, data: dict[str, Any]) -> None:
    replace_file(path, json.dumps(data, separators=(",", ":")))  # dumps: the C encoder; dump() is pure Python


def write_dirs(path: str, dirs_state: dict[str, Any], files_state: dict[str, Any]) -> None:
    """dirs.json: the directories' mtimes, and the files that could not be read (every CLI command lists
    those; finding them in files.json meant parsing ~10 MB at 100k memories)."""
    write_json(path, {"version": SCHEMA_VERSION, "dirs": dirs_state, "corrupt": corrupt_entries(files_state)})


def dir_mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def superseded_ids(files_state: dict[str, Any]) -> set[str]:
    """Ids that some live memory supersedes, from the file manifest (each good entry ends with its memory's
    live `supersedes` targets)."""
    found: set[str] = set()
    for files in files_state.values():
        for entry in files.values():
            if len(entry) > 4 and entry[3] is not None and entry[4]:
                found.update(entry[4])
    return found


def corrupt_entries(files_state: dict[str, Any]) -> list[list[Any]]:
    """[scope, file name, reason, signature, digest] of each file the manifest records as unreadable."""
    return [
        [scope, name, str(entry[4]) if len(entry) > 4 else "unreadable", entry[:3], digest_of(entry)]
        for scope, files in files_state.items()
        for name, entry in files.items()
        if entry[3] is None
    ]


def indexed(entry: list[Any] | None) -> bool:
    """Whether a manifest entry has a document (an unreadable file has none)."""
    return entry is not None and entry[3] is not None


def digest_of(entry: list[Any]) -> int | None:
    return entry[5] if len(entry) > 5 else None


# --- unreadable files ---------------------------------------------------------------------------------------------
def content_digest(path: str) -> int | None:
    """A checksum of an unreadable file's bytes (TOO_LARGE past the size of any memory: its size tells
    instead; None when it cannot be read)."""
    import zlib

    from gate.memory.store.scan import MAX_FILE_BYTES

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return zlib.crc32(data) if len(data) <= MAX_FILE_BYTES else TOO_LARGE


def unreadable_differs(path: str, signature: list[int], digest: int | None) -> bool:
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
    return digest is None or content_digest(path) != digest
