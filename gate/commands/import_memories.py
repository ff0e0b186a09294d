"""`gate import FILE|-`: JSON lines as `gate export` writes them; all or nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import GateError


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="import memories from JSON lines (FILE or - for stdin)")
    parser.add_argument("file", metavar="FILE")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.file == "-":
        lines = sys.stdin.read().splitlines()
        name = "stdin"
    else:
        try:
            lines = Path(args.file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise GateError(f"cannot read {args.file}: {error}") from error
        name = args.file
    ids = open_store(args).import_lines(lines, source_name=name)
    if args.json:
        print_json({"imported": len(ids), "ids": ids})
    else:
        print(f"imported {len(ids)} memories")
    return 0
