"""`gate verify [ID] [--refresh | --retire]`: do anchored memories still match their files?

A memory written with --path recorded a content hash of each anchored file, and the lines the memory is about
there. `verify` re-checks them: a file whose lines the memory is about changed, or that vanished, makes the
memory stale (the hooks mark it so whenever they deliver it). A person
then decides: `--refresh` records the files' current hashes (the memory still holds), `--retire` forgets it
(it no longer does). Also reports memories whose every trigger has expired. Exit status 1 when something is
stale, so a CI job can run it.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import ValidationError
from gate.memory.cues import globs, staleness
from gate.memory.cues import triggers as trig
from gate.memory.model import Memory


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "verify",
        help="re-check anchored memories against their files (exit 1 when one is stale)",
        description="Re-check the content hashes recorded for each memory's --path files. With an ID: "
        "--refresh records the current hashes (the memory still holds), --retire forgets it.",
    )
    parser.add_argument("memory_id", metavar="ID", nargs="?", help="one memory (default: every active one)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--refresh", action="store_true", help="re-record the anchored files' hashes")
    action.add_argument("--retire", action="store_true", help="forget the memory: it no longer holds")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def _expired(memory: Memory, now: float) -> bool:
    """Every trigger of the memory is past its expiry: no hook will deliver it again."""
    if not memory.triggers:
        return False
    try:
        parsed = trig.parse_all(memory.triggers)
    except ValidationError:
        return False
    return all(t.window_state(now) == "expired" for t in parsed)


def _never_fire(memory: Memory) -> list[str]:
    """Its --path anchors that no tool call can match (absolute, or outside the project: written by an older
    `gate remember`, or by hand), each with the reason."""
    found = []
    for glob in memory.paths:
        try:
            globs.normalize_glob(glob)
        except ValueError as error:
            found.append(f"{glob} ({error})")
    return found


def _unrecorded(memory: Memory, root: Any) -> tuple[list[str], list[str]]:
    """Its --path globs that no recorded hash stands for: (those matching no file yet, those whose files
    appeared after the memory was written). Neither can be stale; the second can be recorded (--refresh)."""
    import re

    missing, appeared = [], []
    for glob in memory.paths:
        try:
            pattern = re.compile(globs.glob_regex(globs.normalize_glob(glob)))
        except ValueError:
            continue  # reported as never firing
        if any(pattern.fullmatch(path) for path in memory.anchors):
            continue
        (appeared if staleness.anchor_hashes(root, [glob]) else missing).append(glob)
    return missing, appeared


def _report(memory: Memory, root: Any, now: float) -> dict[str, Any]:
    record = memory.to_dict()
    problems = staleness.check(record, root)
    never = _never_fire(memory)
    missing, appeared = _unrecorded(memory, root)
    return {
        "id": memory.id,
        "kind": memory.kind,
        "title": memory.title,
        "created": memory.created,
        "anchors": len(memory.anchors),
        "stale": [{"path": path, "state": state} for path, state in problems],
        "message": staleness.describe(problems, memory.date),
        "expired": _expired(memory, now),
        "never_fires": never,
        "not_yet": missing,
        "appeared": appeared,
    }


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    root = store.paths.root
    now = time.time()
    if (args.refresh or args.retire) and not args.memory_id:
        raise ValidationError("--refresh and --retire act on one memory", hint="gate verify ID --refresh")
    if args.memory_id:
        memory = store.get(args.memory_id)
        if args.retire:
            store.forget(memory.id)
            return _done(args, {"id": memory.id, "retired": True}, f"retired {memory.id}: it will not be delivered")
        if args.refresh:
            if not memory.paths:
                raise ValidationError(f"{memory.id} has no --path anchors to refresh")
            store.anchor(memory)
            store.update(memory, action="refresh")
            return _done(
                args,
                {"id": memory.id, "refreshed": len(memory.anchors)},
                f"refreshed {memory.id}: {len(memory.anchors)} anchored file(s) re-recorded",
            )
        memories = [memory]
    else:
        memories = [m for m in store.memories() if m.status == "active" and (m.anchors or m.triggers or m.paths)]
    reports = [_report(m, root, now) for m in sorted(memories, key=lambda m: m.created)]
    stale = [r for r in reports if r["stale"]]
    broken = [r for r in reports if r["never_fires"]]
    if args.json:
        print_json({"memories": reports, "stale": len(stale), "expired": sum(r["expired"] for r in reports),
                    "never_fire": len(broken)})
        return 1 if stale or broken else 0
    for report in reports:
        if not any(report[key] for key in ("stale", "expired", "never_fires", "not_yet", "appeared")):
            continue
        print(f"{report['id']} · {report['kind']} · {report['created'][:10]} · {report['title']}")
        if report["message"]:
            print(f"  {report['message']}")
            memory_id = report["id"]
            print(f"  still true? gate verify {memory_id} --refresh · no longer? gate verify {memory_id} --retire")
        if report["expired"]:
            print(f"  expired: every trigger has ended; gate verify {report['id']} --retire forgets it")
        for path in report["never_fires"]:
            print(f"  never fires: --path {path}; saved in `gate edit {report['id']}`, a path inside the "
                  "project is stored relative to its root (remove one outside it)")
        for path in report["not_yet"]:
            print(f"  --path {path} matches no file yet: nothing to check until it exists (then "
                  f"`gate verify {report['id']} --refresh` records it)")
        for path in report["appeared"]:
            print(f"  --path {path} matches files now that were not there when it was written: "
                  f"`gate verify {report['id']} --refresh` records them")
    checked = sum(1 for r in reports if r["anchors"])
    waiting = sum(1 for r in reports if r["not_yet"] or r["appeared"])
    if checked:
        print(f"{len(stale)} of {_count(checked, 'anchored memory', 'anchored memories')} stale")
    elif not waiting:
        print("no anchored memories")
    if waiting:
        print(f"{_count(waiting, 'memory', 'memories')} anchored to files not recorded yet (above)")
    if broken:
        print(f"{_count(len(broken), 'memory', 'memories')} with a --path that never fires")
    return 1 if stale or broken else 0


def _count(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _done(args: argparse.Namespace, data: dict[str, Any], text: str) -> int:
    if args.json:
        print_json(data)
    else:
        print(text)
    return 0
