"""`gate restore ID@N`: make a saved version of a memory the current one (`gate show --history ID` lists them)."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import ValidationError


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("restore", help="bring back an earlier version of a memory (ID@N)")
    parser.add_argument("version", metavar="ID@N", help="a version from `gate show --history ID`")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def parse_version(text: str) -> tuple[str, int]:
    memory_id, sep, number = text.rpartition("@")
    if not sep or not memory_id or not number.isdigit():
        raise ValidationError(f"bad version {text!r}", hint="write ID@N, e.g. m-7f3a9c@2 (`gate show --history ID`)")
    return memory_id, int(number)


def run(args: argparse.Namespace) -> int:
    memory_id, number = parse_version(args.version)
    store = open_store(args)
    memory = store.restore(memory_id, number)
    if args.json:
        kept = {"kept_unreadable": store.set_aside} if store.set_aside else {}
        print_json({"id": memory.id, "restored": number, "title": memory.title, **kept})
    else:
        print(f"restored {memory.id}@{number}: {memory.title}")
        for path in store.set_aside:
            print(f"the unreadable file it replaced is kept at {path}")
    return 0
