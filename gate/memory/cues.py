"""The cue table (hot path: standard library only): every memory that comes back by itself, and on what cue.

The tantivy index cannot glob, and a PreToolUse hook runs before every tool call, so the memories with
triggers (or with a default cue for their kind: gotchas on their paths, directives and tasks at session
start) live in one small JSON file per project, bucketed by the literal directory each glob starts with.
A tool call then costs three stat calls, one small read, and a regex for each glob whose directory is an
ancestor of the file touched.

Freshness works like the index's (gate/memory/index.py): the table keeps each store directory's mtime; a
directory that changed is rescanned, and only files whose stat signature moved are read again. The
per-file signatures live in a second, larger file that is read only then. Both are derived data under the
cache directory; deleting them costs one rebuild.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from gate.memory import triggers as trig
from gate.paths import ProjectPaths, ensure_private_dir

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

VERSION = 1
SCOPES = ("private", "team", "user")
RACY_WINDOW_NS = 1_000_000_000
BODY_CHARS = 600
KEEP = ("id", "kind", "title", "created", "updated", "source", "scope", "project", "status", "anchors", "paths",
        "triggers")
FLAG_PATHS, FLAG_TRIGGERS, FLAG_ACTIVE = 1, 2, 4


def table_files(paths: ProjectPaths) -> tuple[Path, Path]:
    base = paths.dirs.cache / "cues"
    return base / f"{paths.key}.json", base / f"{paths.key}.files.json"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("version") == VERSION else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    ensure_private_dir(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, separators=(",", ":")))  # dumps: the C encoder; dump() is pure Python
    os.replace(temp, path)


def _dir_mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


# --- what qualifies, and with which effective triggers ------------------------------------------------------------
def qualifies(kind: str, flags: int, defaults: dict[str, list[str]]) -> bool:
    """Whether a memory belongs in the table: active, and with triggers or a default cue for its kind."""
    if not flags & FLAG_ACTIVE:
        return False
    if flags & FLAG_TRIGGERS:
        return True
    cues = defaults.get(kind) or []
    return any(cue != "paths" for cue in cues) or ("paths" in cues and bool(flags & FLAG_PATHS))


def _flags(data: dict[str, Any]) -> int:
    return (
        (FLAG_PATHS if data.get("paths") else 0)
        | (FLAG_TRIGGERS if data.get("triggers") else 0)
        | (FLAG_ACTIVE if data.get("status") == "active" else 0)
    )


def effective_triggers(record: dict[str, Any], defaults: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The triggers a memory fires on, in stored form. Its own cue triggers as written; a spec without a cue
    (only modifiers) and a memory without any spec get the kind's default cues, bounded by those modifiers."""
    parsed: list[trig.Trigger] = []
    for spec in record.get("triggers") or []:
        try:
            parsed.append(trig.parse(spec))
        except Exception:  # a spec this version cannot read never fires; `gate verify` reports it
            continue
    out = [t.to_json() for t in parsed if t.has_cue]
    cueless = [t for t in parsed if not t.has_cue]
    if not record.get("triggers"):
        cueless = [trig.Trigger("")]
    for bound in cueless:
        for default in _default_cues(record, defaults):
            combined = dict(default)
            combined["default"] = True
            for name in ("not_before", "expires", "cooldown"):
                value = getattr(bound, name)
                if value is not None:
                    combined[name] = value
            if bound.spec:
                combined["spec"] = f"{combined['spec']},{bound.spec}"
            out.append(combined)
    return out


def _default_cues(record: dict[str, Any], defaults: dict[str, list[str]]) -> list[dict[str, Any]]:
    cues: list[dict[str, Any]] = []
    for cue in defaults.get(record.get("kind", ""), []) or []:
        if cue == "paths":
            for glob in record.get("paths") or []:
                try:
                    cues.append({"spec": f"path:{trig.normalize_glob(glob)}", "paths": [trig.normalize_glob(glob)]})
                except ValueError:
                    continue
        else:
            try:
                cues.append(trig.parse(cue).to_json())
            except Exception:
                continue
    return cues


def _explicit_windows(record: dict[str, Any]) -> list[list[float | None]]:
    windows: list[list[float | None]] = []
    for spec in record.get("triggers") or []:
        try:
            parsed = trig.parse(spec)
        except Exception:
            continue
        windows.append([parsed.not_before, parsed.expires])
    return windows


def _entry(data: dict[str, Any], scope: str, defaults: dict[str, list[str]]) -> dict[str, Any]:
    record = {key: data.get(key) for key in KEEP}
    record["scope"] = scope
    body = data.get("body") or ""
    record["body"] = body if len(body) <= BODY_CHARS else body[:BODY_CHARS]
    return {"record": record, "triggers": effective_triggers(record, defaults),
            "windows": _explicit_windows(record)}


# --- building and refreshing --------------------------------------------------------------------------------------
def _read_file(path: Path) -> dict[str, Any] | None:
    from gate.memory.files import CorruptMemoryFile, read_memory  # only when a file changed

    try:
        return read_memory(path).to_dict()
    except (CorruptMemoryFile, OSError):
        return None


def _scan_scope(
    scope: str,
    directory: Path,
    old_files: dict[str, list[Any]],
    old_entries: dict[str, dict[str, Any]],
    defaults: dict[str, list[str]],
) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
    """Rescan one store directory: (file signatures with summaries, table entries by id)."""
    from gate.memory.files import scan_dir

    files: dict[str, list[Any]] = {}
    entries: dict[str, dict[str, Any]] = {}
    for item in scan_dir(directory):
        signature = item.signature()
        previous = old_files.get(item.name)
        data: dict[str, Any] | None = None
        if previous is not None and previous[:3] == signature:
            summary = previous
        else:
            data = _read_file(directory / item.name)
            if data is None:
                files[item.name] = [*signature, None, "", 0]
                continue
            summary = [*signature, data["id"], data["kind"], _flags(data)]
        files[item.name] = summary
        memory_id, kind, flags = summary[3], summary[4], summary[5]
        if memory_id is None or not qualifies(kind, flags, defaults):
            continue
        old = old_entries.get(memory_id)
        if data is None and old is not None and old["record"].get("scope") == scope:
            entry = {"record": old["record"], "triggers": effective_triggers(old["record"], defaults),
                     "windows": old.get("windows", [])}
        else:
            data = data if data is not None else _read_file(directory / item.name)
            if data is None:
                continue
            entry = _entry(data, scope, defaults)
        entries[memory_id] = entry
    return files, entries


def _bucket(table: dict[str, Any]) -> None:
    """Index the entries by cue: path buckets by literal directory, commands, events."""
    by_dir: dict[str, list[list[Any]]] = {}
    commands: list[list[Any]] = []
    events: dict[str, list[list[Any]]] = {}
    timed: list[str] = []
    for memory_id, entry in table["memories"].items():
        if any(w[0] is not None or w[1] is not None for w in entry.get("windows", [])):
            timed.append(memory_id)
        for index, trigger in enumerate(entry["triggers"]):
            ref = [memory_id, index]
            if trigger.get("paths"):
                dirs = [trig.static_dir(glob) for glob in trigger["paths"]]
                by_dir.setdefault(max(dirs, key=len), []).append(ref)
            elif trigger.get("commands"):
                commands.append(ref)
            elif trigger.get("keywords"):
                events.setdefault("prompt", []).append(ref)
            elif trigger.get("event"):
                events.setdefault(trigger["event"], []).append(ref)
    table["by_dir"] = by_dir
    table["commands"] = commands
    table["events"] = events
    table["timed"] = timed


def load(paths: ProjectPaths, defaults: dict[str, list[str]]) -> dict[str, Any]:
    """The project's cue table, brought up to date with the store directories first."""
    small_path, files_path = table_files(paths)
    table = _read_json(small_path)
    directories = {scope: paths.store_for_scope(scope) for scope in SCOPES}
    now_mtimes = {scope: _dir_mtime(directory) for scope, directory in directories.items()}
    same_rules = table.get("defaults") == defaults
    recorded = table.get("dirs", {})
    stale = [
        scope for scope, directory in directories.items()
        if not same_rules
        or (recorded.get(scope) or {}).get("path") != str(directory)
        or (recorded.get(scope) or {}).get("mtime_ns") != now_mtimes[scope]
    ]
    if table and not stale:
        return table
    manifest = _read_json(files_path)
    old_scopes = manifest.get("scopes", {}) if table else {}  # summaries hold whatever the rules say
    old_entries = table.get("memories", {}) if table else {}
    memories: dict[str, dict[str, Any]] = {}
    scopes: dict[str, dict[str, list[Any]]] = {}
    dirs: dict[str, dict[str, Any]] = {}
    for scope, directory in directories.items():
        old_dir = (recorded.get(scope) or {}).get("path")
        old_files = old_scopes.get(scope, {}) if old_dir == str(directory) else {}
        if scope in stale:
            mtime = _dir_mtime(directory)  # before listing: a write after this moves the mtime past it
            files, entries = _scan_scope(scope, directory, old_files, old_entries, defaults)
            settled = mtime is None or time.time_ns() - mtime > RACY_WINDOW_NS
            dirs[scope] = {"path": str(directory), "mtime_ns": mtime if settled else -1}
        else:
            files = old_files
            entries = {k: v for k, v in old_entries.items() if v["record"].get("scope") == scope}
            dirs[scope] = recorded[scope]
        scopes[scope] = files
        for memory_id, entry in entries.items():
            memories.setdefault(memory_id, entry)  # private shadows team shadows user, as the store resolves ids
    fresh: dict[str, Any] = {"version": VERSION, "defaults": defaults, "dirs": dirs, "memories": memories}
    _bucket(fresh)
    try:
        if scopes != old_scopes:  # a directory whose mtime only settled changed nothing worth rewriting
            _write_json(files_path, {"version": VERSION, "scopes": scopes})
        _write_json(small_path, fresh)
    except OSError:
        pass  # a read-only cache costs a rescan next time, never the hook
    return fresh


def candidates_for_file(table: dict[str, Any], relative: str) -> list[list[Any]]:
    """Path-trigger refs whose glob's literal directory is an ancestor of (or is) the file."""
    buckets = table.get("by_dir", {})
    refs = list(buckets.get("", []))
    parts = relative.split("/")
    for depth in range(1, len(parts) + 1):
        refs.extend(buckets.get("/".join(parts[:depth]), []))
    return refs


def withheld(table: dict[str, Any], now: float) -> set[str]:
    """Memories every one of whose own triggers is outside its time window: no gate delivers them now."""
    out: set[str] = set()
    memories = table.get("memories", {})
    for memory_id in table.get("timed", []):
        windows = memories.get(memory_id, {}).get("windows", [])
        if windows and all(
            (expires is not None and now >= expires) or (not_before is not None and now < not_before)
            for not_before, expires in windows
        ):
            out.add(memory_id)
    return out
