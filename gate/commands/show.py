"""`gate show ID`: one memory in full; `--history`: every earlier version kept of it (`gate restore ID@N`)."""

from __future__ import annotations

import argparse
from typing import Any

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import NotFoundError
from gate.memory.model import Memory
from gate.memory.store.files import CorruptMemoryFile
from gate.memory.store.history import Version
from gate.memory.store.store import Store

# How a link reads from each end: "A fixes B" shows "fixes: B" on A and "fixed by: A" on B.
LINK_NAMES = {"supersedes": "supersedes", "fixes": "fixes", "caused_by": "caused by", "contradicts": "contradicts",
              "relates": "relates to"}
REVERSE_LINK_NAMES = {"supersedes": "superseded by", "fixes": "fixed by", "caused_by": "causes",
                      "contradicts": "contradicted by", "relates": "related from"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "show",
        help="print one memory in full (--history: its earlier versions)",
        description="Prints one memory in full: every field, its links and its anchors. --history lists the "
        "versions kept of it (every edit, forget or import over it keeps the one it replaced).",
    )
    parser.add_argument("memory_id", metavar="ID", help="the memory's id (`gate list` or `gate search` shows it)")
    parser.add_argument("--history", action="store_true",
                        help="list the earlier versions kept of it; `gate restore ID@N` brings one back")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    if args.history:
        return _history(store, args)
    memory = store.get(args.memory_id)
    data = memory.to_dict()
    data["status"] = store.status_of(memory)
    superseded_by = store.superseded_by(memory.id)
    if args.json:
        print_json({**data, "superseded_by": superseded_by})
        _record(store, memory.id, len(memory.title) + len(memory.body))
        return 0
    _record(store, memory.id, len(memory.title) + len(memory.body))
    by = f"{memory.source} ({memory.agent})" if memory.agent else memory.source  # which agent, when one wrote it
    print(f"{memory.id} · {memory.kind} · {data['status']} · {memory.scope} · by {by} · {memory.created}")
    print(memory.title)
    if memory.body:
        print()
        print(memory.body)
    details = []
    if memory.cues:
        details.append(f"cues: {memory.cues}")
    if memory.derived_cues:
        details.append(f"cues from the turn (added by gate): {memory.derived_cues}")
    if memory.tags:
        details.append(f"tags: {', '.join(memory.tags)}")
    if memory.paths:
        details.append(f"paths: {', '.join(memory.paths)}")
    if memory.triggers:
        details.append(f"on: {', '.join(memory.triggers)}")
    for link in memory.links:
        details.append(f"{LINK_NAMES.get(link.type, link.type)}: {link.target}")
    for source in store.index.linking_to(memory.id):
        for link in source["links"]:
            if link["target"] == memory.id:
                details.append(f"{REVERSE_LINK_NAMES.get(link['type'], link['type'])}: {source['id']} "
                               f"({source['title']})")
    if details:
        print()
        print("\n".join(details))
    return 0


def _record(store: Store, memory_id: str, chars: int) -> None:
    """A memory the agent opens itself is delivered in full (gate/session/agent_search.py)."""
    from gate.session import agent_search

    agent_search.record("show", memory_id, [memory_id], str(store.paths.root), chars=chars,
                        project_id=store.paths.key)


def changed_fields(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The fields a write changed (its timestamp aside)."""
    return [key for key in before if key != "updated" and before.get(key) != after.get(key)]


def _history(store: Store, args: argparse.Namespace) -> int:
    scope, versions = store.versions(args.memory_id)
    current: Memory | None
    unreadable = ""  # why the current file is not a memory: the history is listed all the same
    try:
        current = store.get(args.memory_id)
    except NotFoundError:
        current = None
    except CorruptMemoryFile as error:
        current, unreadable = None, error.reason
    kept = store.history(scope).unreadable(args.memory_id)
    now = current.to_dict() if current is not None else None
    if now is not None and current is not None:
        now["status"] = store.status_of(current)
    # what each version became (None: an unreadable file, of which no field can be told)
    last: dict[str, Any] | None = now if now is not None else None if unreadable else {}
    later = [v.memory for v in versions[1:]] + [last]
    later = later[: len(versions)]  # no earlier version: nothing became anything
    entries = [
        {**v.to_json(), "changed": changed_fields(v.memory, after) if after is not None else []}
        for v, after in zip(versions, later, strict=True)
    ]
    superseded_by = store.superseded_by(args.memory_id)
    if args.json:
        print_json({"id": args.memory_id, "scope": scope, "current": now, "superseded_by": superseded_by,
                    "versions": entries, "unreadable": unreadable or None, "kept_unreadable": kept})
        return 0
    print(f"{args.memory_id} · {scope} · {len(versions)} earlier version(s)")
    for version, entry in zip(versions, entries, strict=True):
        print(_version_line(version, entry["changed"]))
    for path in kept:
        print(f"kept · an unreadable file a write replaced: {path}")
    if now is not None:
        extra = f" (superseded by {', '.join(superseded_by)})" if superseded_by else ""
        print(f"now · {now['updated']} · {now['status']}{extra} · {now['title']}")
    elif unreadable:
        fix = (f"`gate restore {args.memory_id}@N` writes a version over it, keeping the broken file aside"
               if versions else "no earlier version: fix or delete the file by hand")
        print(f"now · unreadable: {unreadable} · {fix}")
    else:
        print("now · no file: `gate restore ID@N` writes one back")
    if versions:
        print(f"`gate restore {args.memory_id}@N` makes version N the current one (the current one is kept too)")
    return 0


def _version_line(version: Version, changed: list[str]) -> str:
    memory = version.memory
    what = f" · then changed: {', '.join(changed)}" if changed else ""
    return (f"@{version.number} · replaced {version.saved} by {version.action} · {memory.get('status', '?')} · "
            f"{memory.get('title', '')}{what}")
