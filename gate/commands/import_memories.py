"""`gate import FILE|-`: JSON lines as `gate export` writes them; all or nothing.

`--from claude-memory|claude-md` imports what Claude Code keeps instead (gate/importers/command.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import GateError
from gate.importers import command as importers


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="import memories from JSON lines (FILE or - for stdin), or --from "
                            "claude-memory / claude-md")
    parser.add_argument("file", metavar="FILE|DIR", nargs="?", help="JSON lines (- for stdin); with --from: see there")
    add_project_option(parser)
    add_json_option(parser)
    importers.add_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.source != "jsonl":
        return importers.run(args)
    importers.require_file(args)
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
