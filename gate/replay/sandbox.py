"""Throwaway stores for labelled replays: each session against the memories of its project's earlier sessions.

All of them live in one temporary home (gate.paths.redirect_home), each session under a project root of its
own, so the other sessions' stores are other projects of the same user: a memory of theirs that reaches a
session is a cross-project leak, which the scores count.
"""

from __future__ import annotations

import json
import os
from typing import Any

from gate.errors import ValidationError
from gate.paths import ProjectPaths


def first_timestamp(transcript: str, from_line: int = 1) -> str:
    """The first timestamp of a transcript at or after a line ("" when there is none)."""
    try:
        with open(transcript, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number < from_line:
                    continue
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("timestamp"), str):
                    return entry["timestamp"]
    except OSError:
        return ""
    return ""


def session_start(transcript: str) -> str:
    """When a session began: its transcript's first timestamp ("" when it has none)."""
    return first_timestamp(transcript)


def read_store_file(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationError(f"cannot read store {path}: {error}") from error
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as error:
            raise ValidationError(f"{path}, line {number}: not JSON ({error})") from error
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ValidationError(f"{path}, line {number}: a memory must be an object with an id")
        out.append(item)
    return out


def _before(memories: list[dict[str, Any]], start: str) -> list[dict[str, Any]]:
    """The memories created before `start` (all of them when the session has no timestamp), links kept
    only to memories that are kept too (a link to a later memory cannot exist yet)."""
    kept = [m for m in memories if not start or str(m.get("created", "")) < _normalise(start)]
    ids = {m["id"] for m in kept}
    out = []
    for memory in kept:
        links = [link for link in memory.get("links", []) if isinstance(link, dict) and link.get("target") in ids]
        out.append({**memory, "links": links})
    return out


def _normalise(stamp: str) -> str:
    """Transcript stamps carry milliseconds ("…T08:10:04.096Z"); memories whole seconds ("…T08:10:04Z")."""
    return stamp[:19] + "Z" if len(stamp) >= 19 else stamp


def build(home: str, stores: dict[str, str]) -> tuple[dict[str, ProjectPaths], dict[str, set[str]]]:
    """For each transcript with a store file: its project paths in `home` (already redirected by the caller),
    and the ids of its own memories. Every store is written and indexed before any replay starts."""
    from gate.memory.store.importing import import_lines
    from gate.memory.store.store import Store  # cold: only labelled replays build stores

    files: dict[str, list[dict[str, Any]]] = {}
    paths: dict[str, ProjectPaths] = {}
    own: dict[str, set[str]] = {}
    for number, (transcript, store_file) in enumerate(sorted(stores.items())):
        if store_file not in files:
            files[store_file] = read_store_file(store_file)
        memories = _before(files[store_file], session_start(transcript))
        root = os.path.join(home, "projects", f"p{number:04d}")
        os.makedirs(os.path.join(root, ".git"), exist_ok=True)  # its own project, whatever lies above it
        store = Store.for_cwd(root)
        lines = [json.dumps({**m, "project": store.paths.root}) for m in memories]
        if lines:
            import_lines(store, lines, source_name=store_file)
            store.reindex()  # supersession settled, index complete: the replay's hooks only read it
        paths[transcript] = store.paths
        own[transcript] = {m["id"] for m in memories}
    return paths, own
