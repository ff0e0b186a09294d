"""`gate list`: every memory of the project (and user scope), newest first."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, index_line, open_store, print_json
from gate.memory.model import KINDS, SCOPES, STATUSES


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("list", help="list memories")
    parser.add_argument("--kind", choices=KINDS)
    parser.add_argument("--scope", choices=SCOPES)
    parser.add_argument("--status", choices=(*STATUSES, "all"), default="active")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    memories = [
        m for m in store.memories()
        if (args.kind is None or m.kind == args.kind)
        and (args.scope is None or m.scope == args.scope)
        and (args.status == "all" or m.status == args.status)
    ]
    memories.sort(key=lambda m: (m.created, m.id), reverse=True)
    if args.json:
        print_json({"memories": [m.to_dict() for m in memories]})
        return 0
    if not memories:
        print("no memories yet — `gate remember \"<fact>\"` stores one")
    for memory in memories:
        print(index_line(memory))
    return 0
