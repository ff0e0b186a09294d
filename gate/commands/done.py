"""`gate done ID`: a finished task stops showing at session start (`--reopen` shows it again).

Open tasks are delivered in full at every session start and after compaction; a finished one kept coming back
with no way to say it was done (issue 44). Its status becomes "done": it is never delivered, found or listed as
active again, and it stays on disk with its history, like a forgotten memory, but named for what happened to it.
"""

from __future__ import annotations

import argparse

from gate.commands._common import add_project_option, open_store
from gate.errors import ValidationError


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "done",
        help="mark a task done: it no longer shows at session start",
        description="Marks a task memory done: it is no longer shown at session start or after compaction, "
        "nor delivered or found. Nothing is deleted: `gate list --status done` lists done tasks, and "
        "--reopen makes one open again.",
    )
    parser.add_argument("memory_id", metavar="ID", help="the task's id (`gate list --kind task` shows it)")
    parser.add_argument("--reopen", action="store_true", help="the task is open again: show it at session start")
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    memory = store.get(args.memory_id)
    if memory.kind != "task":
        raise ValidationError(
            f"{memory.id} is a {memory.kind}, not a task; nothing changed",
            hint=f"a memory that no longer holds: `gate forget {memory.id}`",
        )
    if memory.status == "forgotten":
        raise ValidationError(
            f"{memory.id} is forgotten; nothing changed",
            hint=f"`gate show --history {memory.id}` lists the versions `gate restore` can bring back",
        )
    wanted = "active" if args.reopen else "done"
    if memory.status == wanted:
        print(f"{memory.id} is {'open' if args.reopen else 'done'} already; nothing changed")
        return 0
    memory.status = wanted
    store.update(memory, action="reopen" if args.reopen else "done")
    if args.reopen:
        print(f"reopened {memory.id}: it shows at session start again")
    else:
        print(f"done {memory.id}: it no longer shows at session start (`gate done {memory.id} --reopen` undoes it)")
    return 0
