"""The cue table (hot path: standard library only): every memory that comes back by itself, and on what cue.

The tantivy index cannot glob, and a PreToolUse hook runs before every tool call, so the memories with
triggers (or with a default cue for their kind, such as gotchas on their --path) are kept in a small
per-project directory of JSON shards under the cache directory:

    head.json         store directories' mtimes and the rules' defaults the shards were built with
    p-<dir>.json      path triggers whose glob starts with the literal directory <dir>, with their memories
    c-commands.json   command triggers; e-<event>.json: event triggers (keywords under e-prompt.json)
    windows.json      the time windows of every explicit trigger (the recall gate withholds expired memories)
    entries.json, files.json   everything, and each store file's stat signature: read only to rebuild
    pairs.json, pairs.bits     a filter of the term pairs that name a memory (title, tags, cues), and the terms
                               most memories share: the recall gate's cheap look before it opens the index

A tool call then costs: three stat calls, head.json, and one open per ancestor directory of the file touched
(most of them ENOENT), or the command shard for a Bash call. Directives and tasks delivered by their kind's
default at session start are not in the shards: the session-start gate already has their index records.

Freshness works like the index's (gate/memory/index/read.py): a store directory whose mtime moved is rescanned,
and only files whose stat signature changed are read again. A small store is rebuilt in the hook itself;
a large one (more than INLINE_FILES files) by a detached `python -m gate.memory.cues.build`, so no tool call
waits for a rebuild: meanwhile the previous shards answer. Reading the shards is this module alone; building
them is gate/memory/cues/build.py, and gate/memory/cues/load.py decides between the two (a gate loads the table
there, and the builder is imported only when a store changed).
"""

from __future__ import annotations

import os

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import ProjectPaths

join = os.path.join

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

# 5: file summaries carry their live `supersedes` targets (superseded memories stay out) and the terms that name
# them (pairs.bits); 6: another project's private memories left out (a table built before could deliver one)
VERSION = 6
SCOPES = ("private", "team", "user")
STANDING_KINDS = ("directive", "preference", "task")  # the session-start gate reads these from the index itself
INLINE_FILES = 3_000


def table_dir(paths: ProjectPaths) -> str:
    return join(paths.dirs.cache, "cues", paths.key)


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def _quote(text: str) -> str:
    """urllib.parse.quote(text, safe=""), without importing urllib.parse (~3 ms for a hook: it loads ipaddress)."""
    return "".join(
        chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in text.encode("utf-8", "surrogateescape")
    )


def shard_name(static_dir: str) -> str:
    name = _quote(static_dir) or "%root"
    if len(name) > 180:
        import zlib

        name = f"{name[:160]}~{zlib.crc32(static_dir.encode('utf-8', 'surrogateescape')):08x}"
    return f"p-{name}.json"


def read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("version") == VERSION else {}


def dir_mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def stale_scopes(head: dict[str, Any], paths: ProjectPaths, defaults: dict[str, list[str]]) -> list[str]:
    if not head or head.get("defaults") != defaults:
        return list(SCOPES)
    recorded = head.get("dirs", {})
    stale = []
    for scope in SCOPES:
        directory = paths.store_for_scope(scope)
        entry = recorded.get(scope) or {}
        if entry.get("path") != directory or entry.get("mtime_ns") != dir_mtime(directory):
            stale.append(scope)
    return stale


class Table:
    """Read access to the shards of one project, each loaded when first needed."""

    def __init__(self, paths: ProjectPaths, head: dict[str, Any]) -> None:
        self.dir = table_dir(paths)
        self.head = head

    def _shard(self, name: str) -> dict[str, Any]:
        return read_json(join(self.dir, name)) if self.head else {}

    def _entries(self, name: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        shard = self._shard(name)
        return [(memory_id, trigger, shard["memories"][memory_id]) for memory_id, trigger in shard.get("triggers", [])]

    def path_triggers(self, relative: str, *, with_root: bool = True) -> list[tuple[str, dict[str, Any], dict]]:
        """(id, trigger, record) of path triggers whose glob's literal directory is an ancestor of (or is)
        `relative`; with_root adds the globs that start with a wildcard."""
        parts = relative.split("/")
        dirs = [""] if with_root else []
        dirs += ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
        return [found for static in dirs for found in self._entries(shard_name(static))]

    def commands(self, accept: Any) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """(id, trigger, record) of the command triggers `accept(trigger)` holds for."""
        hits = [(i, t) for i, t in self._shard("c-commands.json").get("triggers", []) if accept(t)]
        if not hits:
            return []
        records = self._shard("c-records.json").get("memories", {})
        return [(i, t, records[i]) for i, t in hits if i in records]

    def event(self, name: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """Triggers on one event (keyword triggers count as `prompt`)."""
        return self._entries(f"e-{name}.json")

    def pairs(self) -> PairFilter | None:
        """The named-pairs filter (None before the table has one)."""
        if not self.head:
            return None
        header = read_json(join(self.dir, PAIRS_HEAD))
        try:
            with open(join(self.dir, PAIRS_FILE), "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size * 8 != header.get("bits"):
                    return None  # a filter and a header of two different builds
                if size <= READ_WHOLE:
                    bits: Any = handle.read()
                else:  # a large store's filter: map it, and touch only the pages the probes land on
                    import mmap

                    bits = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        return PairFilter(header, bits)

    def withheld(self, now: float) -> set[str]:
        """Memories every one of whose own triggers is outside its time window: no gate delivers them now."""
        return {
            memory_id
            for memory_id, windows in self._shard("windows.json").get("windows", {}).items()
            if windows and all(
                (expires is not None and now >= expires) or (not_before is not None and now < not_before)
                for not_before, expires in windows
            )
        }


NAMED_TERMS = 16  # a memory's first distinct terms of title, tags and cues (pairs of them: 120 at most)


def named_terms(data: dict[str, Any]) -> list[str]:
    """The distinct terms a memory is named by: its title, then its tags, then its cues."""
    from gate.memory.vocab import joined_cues
    from gate.textproc import terms  # (loaded already wherever this runs: the recall gate, the builder)

    cues = joined_cues(data.get("cues"), data.get("derived_cues"))  # the writer's first: named_terms is capped
    tags = data.get("tags") if isinstance(data.get("tags"), list) else []
    found = terms(f"{data.get('title', '')} {' '.join(str(t) for t in tags)} {cues}")
    return list(dict.fromkeys(found))[:NAMED_TERMS]


PAIRS_FILE = "pairs.bits"
PAIRS_HEAD = "pairs.json"
PAIR_BITS = 20  # bits per pair, and
PAIR_PROBES = 14  # positions per pair: one false "yes" in ~15,000 probes
READ_WHOLE = 1 << 20  # a filter up to this size is read whole (a few thousand memories)


def pair_key(first: str, second: str) -> bytes:
    """Two terms, in order, as the filter's key."""
    a, b = (first, second) if first <= second else (second, first)
    return f"{a}\x00{b}".encode("utf-8", "surrogatepass")


def pair_positions(key: bytes, size: int) -> list[int]:
    """The filter's bit positions for a key (double hashing over two checksums zlib computes in C)."""
    import zlib

    first, second = zlib.crc32(key), zlib.adler32(key) | 1
    return [(first + i * second) % size for i in range(PAIR_PROBES)]


class PairFilter:
    """Which pairs of terms name one memory together (a Bloom filter: a "no" is sure, a "yes" almost), and
    which terms most memories share."""

    def __init__(self, header: dict[str, Any], bits: Any) -> None:
        self.bits = bits  # bytes, or an mmap of the file
        self.size = int(header["bits"])
        self.common = frozenset(header.get("common", []))
        self.memories = int(header.get("memories", 0))

    def named_together(self, first: str, second: str) -> bool:
        bits = self.bits
        return all(bits[p >> 3] >> (p & 7) & 1 for p in pair_positions(pair_key(first, second), self.size))


def defaults_from(rules: dict[str, Any]) -> dict[str, list[str]]:
    """The kinds' default cues from rules/triggers.toml's [defaults] table."""
    table = rules.get("defaults", {})
    return {str(k): [str(c) for c in v] for k, v in table.items() if isinstance(v, list)}
