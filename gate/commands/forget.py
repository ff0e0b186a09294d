"""`gate forget ID`: the memory stays on disk (and in git) but is never delivered or found again.
`gate forget --purge ID`: its text goes too, from the file, its history and the index (a secret stored by mistake)."""

from __future__ import annotations

import argparse
import sys

from gate.commands._common import add_project_option, open_store


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "forget",
        help="retire a memory so it is never delivered again (--purge: and delete its text)",
        description="Retires a memory: it is never delivered, found or listed as active again. Nothing is "
        "deleted: the file stays on disk (and in git, for a team memory) with status \"forgotten\", "
        "`gate list --status forgotten` lists it, and `gate show --history ID` / `gate restore ID@N` bring a "
        "version back. To replace a memory with a newer one instead: `gate remember ... --supersedes ID`. "
        "With --purge, its text is deleted for good (a secret stored by mistake): the file keeps only its id, "
        "kind, dates and links, its saved versions are deleted, and the index is built again without it.",
    )
    parser.add_argument("memory_id", metavar="ID", help="the memory's id (`gate list` or `gate search` shows it)")
    parser.add_argument(
        "--purge", action="store_true",
        help="delete its text from the file, its history and the index (cannot be undone)",
    )
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    if args.purge:
        memory = store.purge(args.memory_id)
        print(f"purged {memory.id}: its text is gone from its file, its history and the index")
        if memory.scope == "team":
            print(f"{memory.id} is a team memory: its text is still in git's history of .gate/memories/ if it was "
                  "committed (rewriting that history is git's work, not gate's)")
        return 0
    if store.get(args.memory_id).status == "forgotten":
        print(f"{args.memory_id} was already forgotten; nothing changed (`gate show --history {args.memory_id}` "
              "lists the versions `gate restore` can bring back)")
        return 0
    memory = store.forget(args.memory_id)
    print(f"forgot {memory.id}")
    from gate.memory.store.secrets import find_secret, text_fields

    found = next((name for text in text_fields(memory).values() if (name := find_secret(text, store.paths.root))),
                 None)
    if found:  # forgetting keeps the text: say how to delete it
        print(f"gate: {memory.id} looks like it holds a secret ({found}), which forget keeps in its file, its "
              f"history and the index; `gate forget --purge {memory.id}` deletes it", file=sys.stderr)
    return 0
