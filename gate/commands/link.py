"""`gate link ID TYPE ID`: a typed edge between two memories (supersedes retires the target)."""

from __future__ import annotations

import argparse

from gate.commands._common import add_project_option, open_store
from gate.memory.model import LINK_TYPES


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("link", help="link two memories")
    parser.add_argument("source", metavar="ID")
    parser.add_argument("link_type", metavar="TYPE", choices=LINK_TYPES)
    parser.add_argument("target", metavar="ID")
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    open_store(args).link(args.source, args.link_type, args.target)
    print(f"{args.source} {args.link_type} {args.target}")
    return 0
