"""`gate export`: every memory as JSON lines, every field (the format `gate import` reads)."""

from __future__ import annotations

import argparse

from gate.commands._common import add_project_option, open_store, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "export",
        help="write all memories as JSON lines to stdout",
        description="Writes every memory (every scope and status, every field: ids, links, cues) as one JSON "
        "object a line on stdout, the format `gate import` reads: `gate export > memories.jsonl`.",
    )
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for data in open_store(args).export():
        print_json(data)
    return 0
