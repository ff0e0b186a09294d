"""Building the cue table (gate/memory/cues/shards.py): scan the store directories, keep the memories that can come
back by themselves, and write the shards. Runs inside a hook when a small store changed, else detached
(`python -m gate.memory.cues.build PROJECT_ROOT`); reading the shards never imports this module.
"""

from __future__ import annotations

import json
import os

from gate.memory.cues import globs
from gate.memory.cues import shards as reader  # reader.INLINE_FILES is read at each call (tests lower it)
from gate.memory.cues import triggers as trig
from gate.memory.cues.shards import (
    PAIR_BITS,
    PAIRS_FILE,
    PAIRS_HEAD,
    SCOPES,
    STANDING_KINDS,
    VERSION,
    defaults_from,
    dir_mtime,
    named_terms,
    pair_key,
    pair_positions,
    read_json,
    shard_name,
    stale_scopes,
    table_dir,
)
from gate.memory.store import scan
from gate.memory.supersession import live_supersedes
from gate.paths import ProjectPaths, background_python, ensure_private_dir, replace_file

join = os.path.join

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

BODY_CHARS = 400
KEEP = ("id", "kind", "title", "created", "updated", "source", "scope", "project", "status", "anchors", "paths",
        "triggers")
FLAG_PATHS, FLAG_TRIGGERS, FLAG_ACTIVE = 1, 2, 4


def _write_json(path: str, data: dict[str, Any]) -> None:
    replace_file(path, json.dumps(data, separators=(",", ":")))  # dumps: the C encoder; dump() is pure Python


# --- what qualifies, and with which effective triggers ------------------------------------------------------------
def qualifies(kind: str, flags: int, defaults: dict[str, list[str]]) -> bool:
    """Whether a memory belongs in the shards: active, and with triggers or a default cue the shards serve."""
    if not flags & FLAG_ACTIVE:
        return False
    if flags & FLAG_TRIGGERS:
        return True
    cues = defaults.get(kind) or []
    if "paths" in cues and flags & FLAG_PATHS:
        return True
    return kind not in STANDING_KINDS and any(cue != "paths" for cue in cues)


def _flags(data: dict[str, Any]) -> int:
    # not forgotten: whether a successor supersedes it is derived from all the files (_superseded)
    return (
        (FLAG_PATHS if data.get("paths") else 0)
        | (FLAG_TRIGGERS if data.get("triggers") else 0)
        | (FLAG_ACTIVE if data.get("status", "active") not in ("forgotten", "done") else 0)
    )


def _supersedes(data: dict[str, Any]) -> list[str]:
    """The file's live `supersedes` targets (links of another shape are the full validation's business)."""
    links = data.get("links") or []
    if not isinstance(links, list):
        return []
    shaped = [link for link in links if isinstance(link, dict) and isinstance(link.get("type"), str)
              and isinstance(link.get("target"), str)]
    return live_supersedes(str(data.get("status", "active")), shaped)


def _belongs(record: dict[str, Any], paths: ProjectPaths) -> bool:
    """Another project's private memory never comes back here, whichever store its file landed in (copied by
    hand, restored into the wrong place): the search, the related appendix and session start skip it too."""
    return record.get("scope") != "private" or paths.owns(record.get("project") or "")


def _superseded(scopes: dict[str, dict[str, list[Any]]]) -> set[str]:
    """Ids a live memory supersedes, from every scope's file summaries: those never come back by themselves."""
    return {target for files in scopes.values() for entry in files.values() if len(entry) > 6 for target in entry[6]}


def _explicit_windows(record: dict[str, Any]) -> list[list[float | None]]:
    windows: list[list[float | None]] = []
    for spec in record.get("triggers") or []:
        try:
            parsed = trig.parse(spec)
        except Exception:
            continue
        windows.append([parsed.not_before, parsed.expires])
    return windows


def _entry(data: dict[str, Any], scope: str) -> dict[str, Any]:
    record = {key: data.get(key) for key in KEEP}
    record["scope"] = scope
    body = data.get("body") or ""
    record["body"] = body if len(body) <= BODY_CHARS else body[:BODY_CHARS]
    return record


# --- building -----------------------------------------------------------------------------------------------------
def _read_file(path: str) -> dict[str, Any] | None:
    import tomllib

    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > scan.MAX_FILE_BYTES:
                return None  # not a memory (the index skips it as corrupt); parsing it would stall the hook
            data = tomllib.load(handle)
    except (OSError, ValueError):
        return None
    # Shape checks only, for every file: the full validation (_valid) runs on the few that can fire.
    stem = os.path.basename(path)[: -len(scan.SUFFIX)]
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or stem != data["id"]:
        return None
    if not isinstance(data.get("kind"), str) or not isinstance(data.get("title"), str):
        return None
    for name in ("paths", "triggers"):
        if not isinstance(data.get(name, []), list):
            return None
    return data


def _scan_scope(
    scope: str,
    directory: str,
    old_files: dict[str, list[Any]],
    old_records: dict[str, dict[str, Any]],
    defaults: dict[str, list[str]],
) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
    """Rescan one store directory: (file signatures with summaries, qualifying records by id)."""

    files: dict[str, list[Any]] = {}
    records: dict[str, dict[str, Any]] = {}
    for item in scan.scan_dir(directory):
        signature = item.signature()
        previous = old_files.get(item.name)
        data: dict[str, Any] | None = None
        if previous is not None and previous[:3] == signature:
            summary = previous
        else:
            data = _read_file(join(directory, item.name))
            if data is None:
                files[item.name] = [*signature, None, "", 0, [], []]
                continue
            summary = [*signature, data["id"], data["kind"], _flags(data), _supersedes(data), named_terms(data)]
        files[item.name] = summary
        memory_id, kind, flags = summary[3], summary[4], summary[5]
        if memory_id is None or not qualifies(kind, flags, defaults):
            continue
        old = old_records.get(memory_id)
        if data is None and old is not None and old.get("scope") == scope:
            records[memory_id] = old
            continue
        data = data if data is not None else _read_file(join(directory, item.name))
        if data is not None and _valid(data):
            records[memory_id] = _entry(data, scope)
    return files, records


def _pair_shard(scopes: dict[str, dict[str, list[Any]]], ratio: float, least: int) -> tuple[dict[str, Any], bytes]:
    """The named-pairs filter (gate/memory/cues/shards.py, PairFilter) of every active memory, and the terms most of
    them share (left out of the filter, and out of the recall gate's reckoning)."""
    named: dict[str, list[str]] = {}
    for files in scopes.values():
        for summary in files.values():
            if len(summary) > 7 and summary[3] and summary[5] & FLAG_ACTIVE:
                named.setdefault(summary[3], summary[7])
    frequency: dict[str, int] = {}
    for found in named.values():
        for term in found:
            frequency[term] = frequency.get(term, 0) + 1
    total = len(named)
    common = sorted(t for t, n in frequency.items() if total >= least and n > ratio * total)
    pairs = set()
    for found in named.values():
        kept = sorted(t for t in found if t not in common)
        pairs.update(pair_key(a, b) for i, a in enumerate(kept) for b in kept[i + 1 :])
    size = max(8 * 1024, PAIR_BITS * len(pairs))
    size += -size % 8
    bits = bytearray(size // 8)
    for key in pairs:
        for position in pair_positions(key, size):
            bits[position >> 3] |= 1 << (position & 7)
    header = {"version": VERSION, "memories": total, "pairs": len(pairs), "bits": size, "common": common}
    return header, bytes(bits)


def _valid(data: dict[str, Any]) -> bool:
    """The full check the index applies, for the few files that can fire: a file the index skips as corrupt
    must not fire either."""
    from gate.errors import GateError
    from gate.memory.model import Memory

    try:
        Memory.from_dict(data, fill_defaults=False)
    except (GateError, TypeError, ValueError):
        return False
    return True


def _shards(records: dict[str, dict[str, Any]], defaults: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Shard file name -> content: path buckets by literal directory, commands, one per event, and windows."""
    shards: dict[str, dict[str, Any]] = {}
    windows: dict[str, Any] = {"version": VERSION, "windows": {}}

    def add(name: str, memory_id: str, trigger: dict[str, Any], record: dict[str, Any]) -> None:
        shard = shards.setdefault(name, {"version": VERSION, "memories": {}, "triggers": []})
        shard["memories"][memory_id] = record
        shard["triggers"].append([memory_id, trigger])

    def add_command(memory_id: str, trigger: dict[str, Any], record: dict[str, Any]) -> None:
        # every Bash call reads the command triggers; their memories only when one matches
        shards.setdefault("c-commands.json", {"version": VERSION, "triggers": []})["triggers"].append(
            [memory_id, trigger]
        )
        shards.setdefault("c-records.json", {"version": VERSION, "memories": {}})["memories"][memory_id] = record

    for memory_id, record in sorted(records.items()):
        explicit = _explicit_windows(record)
        if any(w[0] is not None or w[1] is not None for w in explicit):
            windows["windows"][memory_id] = explicit
        for trigger in trig.effective_triggers(record, defaults):
            if trigger.get("paths"):
                add(shard_name(max((globs.static_dir(g) for g in trigger["paths"]), key=len)), memory_id, trigger,
                    record)
            elif record.get("kind") in STANDING_KINDS and trigger.get("default"):
                continue  # delivered from the index's records by the session-start gate
            elif trigger.get("commands"):
                add_command(memory_id, trigger, record)
            elif trigger.get("keywords"):
                add("e-prompt.json", memory_id, trigger, record)
            elif trigger.get("event"):
                add(f"e-{trigger['event']}.json", memory_id, trigger, record)
    shards["windows.json"] = windows
    return shards


def rebuild(paths: ProjectPaths, defaults: dict[str, list[str]]) -> dict[str, Any]:
    """Bring the shards level with the store directories (under a lock: one builder at a time)."""
    import fcntl

    directory = ensure_private_dir(table_dir(paths))
    lock_fd = os.open(join(directory, "build.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        head = read_json(join(directory, "head.json"))
        stale = stale_scopes(head, paths, defaults)
        if head and not stale:
            return head  # another builder got here first
        manifest = read_json(join(directory, "files.json"))
        old = read_json(join(directory, "entries.json"))
        recorded = head.get("dirs", {}) if head else {}
        old_scopes = manifest.get("scopes", {}) if head else {}
        old_records: dict[str, dict[str, Any]] = old.get("records", {}) if head else {}
        records: dict[str, dict[str, Any]] = {}
        scopes: dict[str, dict[str, list[Any]]] = {}
        dirs: dict[str, dict[str, Any]] = {}
        for scope in SCOPES:
            store = paths.store_for_scope(scope)
            same_place = (recorded.get(scope) or {}).get("path") == store
            old_files = old_scopes.get(scope, {}) if same_place else {}
            if scope in stale:
                mtime = dir_mtime(store)  # before listing: a write after this moves the mtime past it
                files, found = _scan_scope(scope, store, old_files, old_records, defaults)
                settled = scan.settled(mtime)
                dirs[scope] = {"path": store, "mtime_ns": mtime if settled else -1}
            else:
                files = old_files
                found = {k: v for k, v in old_records.items() if v.get("scope") == scope}
                dirs[scope] = recorded[scope]
            scopes[scope] = files
            for memory_id, record in found.items():
                records.setdefault(memory_id, record)  # private shadows team shadows user, as the store resolves ids
        import zlib

        old_sums: dict[str, int] = old.get("shards", {}) if head else {}
        sums: dict[str, int] = {}
        superseded = _superseded(scopes)
        live = {
            memory_id: record for memory_id, record in records.items()
            if memory_id not in superseded and _belongs(record, paths)
        }
        for name, content in _shards(live, defaults).items():
            text = json.dumps(content, separators=(",", ":"))
            sums[name] = zlib.crc32(text.encode("utf-8", "surrogatepass"))
            if old_sums.get(name) != sums[name] or not os.path.exists(join(directory, name)):
                replace_file(join(directory, name), text)  # only the shards that changed: a store has thousands
        for name in old_sums.keys() - sums.keys():
            try:  # noqa: SIM105 -- contextlib costs a hook ~2 ms to import
                os.unlink(join(directory, name))
            except FileNotFoundError:
                pass
        if records != old_records or sums != old_sums or not head:
            _write_json(join(directory, "entries.json"), {"version": VERSION, "records": records, "shards": sums})
        if scopes != old_scopes or not os.path.exists(join(directory, PAIRS_FILE)):
            _write_json(join(directory, "files.json"), {"version": VERSION, "scopes": scopes})
            from gate.rules import load_rules

            relevance = load_rules("recall", paths.root).get("relevance", {})
            header, bits = _pair_shard(
                scopes, float(relevance.get("common_ratio", 0.25)), int(relevance.get("common_min_memories", 12))
            )
            replace_file(join(directory, PAIRS_FILE), bits)
            _write_json(join(directory, PAIRS_HEAD), header)
        head = {"version": VERSION, "defaults": defaults, "dirs": dirs,
                "files": sum(len(f) for f in scopes.values())}
        _write_json(join(directory, "head.json"), head)  # last: readers trust the shards once the head moved
        return head
    finally:
        os.close(lock_fd)


def small_store(paths: ProjectPaths) -> bool:
    """Whether a first build is cheap enough to run inside a hook (counted without stat calls)."""
    count = 0
    for scope in SCOPES:
        try:
            with os.scandir(paths.store_for_scope(scope)) as entries:
                for _ in entries:
                    count += 1
                    if count > reader.INLINE_FILES:
                        return False
        except OSError:
            continue
    return True


def spawn_rebuild(paths: ProjectPaths) -> None:
    """Rebuild in a detached process, unless one is running; the hook goes on with the shards it has."""
    import fcntl
    import subprocess

    try:
        directory = ensure_private_dir(table_dir(paths))
        lock_fd = os.open(join(directory, "build.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(lock_fd)
        subprocess.Popen(  # detached and silent: Claude Code waits for the hook's stdout to close
            background_python("gate.memory.cues.build", paths.root),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
    except OSError:
        return  # a builder is at work (the lock is held), or none can start: the next call tries again


def main(argv: list[str]) -> int:
    """`python -m gate.memory.cues.build PROJECT_ROOT`: the background rebuild."""
    from gate.rules import load_rules

    paths = ProjectPaths.for_cwd(argv[0] if argv else None)
    rebuild(paths, defaults_from(load_rules("triggers", paths.root)))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
