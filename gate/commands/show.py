"""`gate show ID`: one memory in full."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, open_store, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("show", help="print one memory in full")
    parser.add_argument("memory_id", metavar="ID")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    memory = store.get(args.memory_id)
    if args.json:
        print_json(memory.to_dict())
        return 0
    print(f"{memory.id} · {memory.kind} · {memory.status} · {memory.scope} · by {memory.source} · {memory.created}")
    print(memory.title)
    if memory.body:
        print()
        print(memory.body)
    details = []
    if memory.tags:
        details.append(f"tags: {', '.join(memory.tags)}")
    if memory.paths:
        details.append(f"paths: {', '.join(memory.paths)}")
    if memory.triggers:
        details.append(f"on: {', '.join(memory.triggers)}")
    for link in memory.links:
        details.append(f"{link.type}: {link.target}")
    for source in store.index.linking_to(memory.id):
        for link in source["links"]:
            if link["target"] == memory.id:
                details.append(f"{link['type']} by: {source['id']} ({source['title']})")
    if details:
        print()
        print("\n".join(details))
    return 0
