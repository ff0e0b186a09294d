"""`gate forget ID`: the memory stays on disk (and in git) but is never delivered or found again."""

from __future__ import annotations

import argparse

from gate.commands._common import add_project_option, open_store


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "forget",
        help="retire a memory so it is never delivered again",
        description="Retires a memory: it is never delivered, found or listed as active again. Nothing is "
        "deleted: the file stays on disk (and in git, for a team memory) with status \"forgotten\", "
        "`gate list --status forgotten` lists it, and `gate show --history ID` / `gate restore ID@N` bring a "
        "version back. To replace a memory with a newer one instead: `gate remember ... --supersedes ID`.",
    )
    parser.add_argument("memory_id", metavar="ID", help="the memory's id (`gate list` or `gate search` shows it)")
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    if store.get(args.memory_id).status == "forgotten":
        print(f"{args.memory_id} was already forgotten; nothing changed (`gate show --history {args.memory_id}` "
              "lists the versions `gate restore` can bring back)")
        return 0
    memory = store.forget(args.memory_id)
    print(f"forgot {memory.id}")
    return 0
