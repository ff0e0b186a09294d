"""`gate list`: every memory of the project (and user scope), newest first."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, index_line, open_store, print_json
from gate.memory.model import KINDS, SCOPES, STATUSES
from gate.memory.store.store import effective_statuses


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "list",
        help="list memories",
        description="Lists the project's memories (and your user-scope ones), newest first, one line each with "
        "its id. By default only the active ones.",
    )
    parser.add_argument("--kind", choices=KINDS, help="only this kind (default: every kind)")
    parser.add_argument("--scope", choices=SCOPES, help="only this scope (default: every scope)")
    parser.add_argument("--status", choices=(*STATUSES, "all"), default="active",
                        help="only this status; all: every one (default: active)")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    everything = store.memories()
    statuses = effective_statuses(everything)  # superseded: from the links, as the index derives it
    listed = [
        {**m.to_dict(), "status": statuses[m.id]} for m in everything
        if (args.kind is None or m.kind == args.kind)
        and (args.scope is None or m.scope == args.scope)
        and (args.status == "all" or statuses[m.id] == args.status)
    ]
    listed.sort(key=lambda m: (m["created"], m["id"]), reverse=True)
    if args.json:
        print_json({"memories": listed})
        return 0
    if not listed:
        print(_nothing_listed(args, len(everything)))
    for data in listed:
        print(index_line(data))
    return 0


def _nothing_listed(args: argparse.Namespace, total: int) -> str:
    """Why the list is empty: no memory at all, or none that the filters let through (and how many there are)."""
    if not total:
        return "no memories yet — `gate remember \"<fact>\"` stores one"
    filters = [
        f"{args.status} " if args.status != "all" else "",
        f"{args.kind} " if args.kind else "",
    ]
    where = f" in the {args.scope} store" if args.scope else ""
    others = "memory" if total == 1 else "memories"
    return f"no {''.join(filters)}memories{where} ({total} {others} in all)"
