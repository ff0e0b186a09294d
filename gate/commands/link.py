"""`gate link ID TYPE ID`: a typed edge between two memories (supersedes retires the target)."""

from __future__ import annotations

import argparse

from gate.commands._common import add_project_option, open_store
from gate.memory.model import LINK_TYPES


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "link",
        help="link two memories",
        description="Adds a typed link from the first memory to the second, e.g. `gate link NEW supersedes OLD`. "
        "TYPE is one of: supersedes (the first replaces the second, which is then no longer delivered), fixes "
        "(the first is the fix of the problem the second records), caused_by (the first was caused by the "
        "second), contradicts (they disagree; `gate show` names the link on both), relates (see also).",
    )
    parser.add_argument("source", metavar="ID", help="the memory the link is written in")
    parser.add_argument("link_type", metavar="TYPE", choices=LINK_TYPES, help=f"one of: {', '.join(LINK_TYPES)}")
    parser.add_argument("target", metavar="ID", help="the memory it points at")
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    open_store(args).link(args.source, args.link_type, args.target)
    print(f"{args.source} {args.link_type} {args.target}")
    return 0
