"""`gate search QUERY`: ranked hits with the related appendix."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.memory.search import search


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("search", help="search memories")
    parser.add_argument("query", nargs="+")
    parser.add_argument("--limit", type=int, default=None, help="at most N ranked hits")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    result = search(store.index, " ".join(args.query), limit=args.limit)
    if args.json:
        print_json(result.to_json())
        return 0
    if not result.hits:
        print("no memories match")
        return 0
    for hit in result.hits:
        extra = f" (supersedes {', '.join(hit.superseding)})" if hit.superseding else ""
        print(f"{hit.id} · {hit.record['kind']} · {hit.record['created'][:10]} · {hit.record['title']}{extra}")
    if result.related:
        print("related:")
        for rel in result.related:
            print(f"  {rel.id} · {rel.record['kind']} · {rel.record['title']}  ({rel.edge} {rel.from_id})")
    return 0
