"""`gate import FILE|-`: JSON lines as `gate export` writes them; all or nothing unless --skip-refused.

`--from claude-memory|claude-md` imports what Claude Code keeps instead (gate/importers/command.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate import render
from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import GateError
from gate.importers import command as importers
from gate.memory.store.importing import ImportInterrupted, ImportReport, import_report


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="import memories from JSON lines (FILE or - for stdin), or --from "
                            "claude-memory / claude-md")
    parser.add_argument("file", metavar="FILE|DIR", nargs="?", help="JSON lines (- for stdin); with --from: see there")
    add_refusal_options(parser)
    parser.add_argument("--keep-project", action="store_true",
                        help="keep the project each line names (default: what is imported is this project's, "
                        "delivered here whichever checkout, machine or repository it was exported from)")
    add_project_option(parser)
    add_json_option(parser)
    importers.add_options(parser)
    parser.set_defaults(func=run)


def add_refusal_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-refused", action="store_true",
                        help="import the lines that pass and report the refused ones, exit status 1 if any "
                        "(default: a refused line means nothing is imported; every refused line is named either way)")
    parser.add_argument("--replace", action="store_true",
                        help="a line whose id exists and differs writes over that memory (its version is kept: "
                        "`gate show --history ID`); a line the store holds as it is is left alone either way")


def run(args: argparse.Namespace) -> int:
    if args.source != "jsonl":
        return importers.run(args)
    importers.require_file(args)
    lines, name = read_lines(args.file)
    try:
        report = import_report(
            open_store(args), lines, source_name=name, skip_refused=args.skip_refused, replace=args.replace,
            keep_project=args.keep_project,
        )
    except ImportInterrupted as stopped:
        print_report(stopped.report, name, as_json=args.json, written=stopped.written)
        raise
    print_report(report, name, as_json=args.json)
    return 1 if report.refused else 0  # --skip-refused imported the rest; a refused line is still a failure


def read_lines(file: str) -> tuple[list[str], str]:
    """The lines of FILE (or stdin for -), and the name to report them under."""
    if file == "-":
        return sys.stdin.read().splitlines(), "stdin"
    try:
        return Path(file).read_text(encoding="utf-8").splitlines(), file
    except FileNotFoundError:
        raise GateError(f"cannot read {file}: no such file", "give the path of a JSON-lines file, as "
                        "`gate export` writes, or - for stdin") from None
    except (OSError, UnicodeDecodeError) as error:
        raise GateError(f"cannot read {file}: {getattr(error, 'strerror', None) or error}") from error


def print_report(report: ImportReport, name: str, *, as_json: bool, written: int | None = None) -> None:
    """What the import did; `written`: it was interrupted after writing that many (stderr says so)."""
    if written is not None:
        if as_json:
            print_json({**report.to_json(), "imported": written, "interrupted": True})
        return
    if as_json:
        print_json(report.to_json())
        return
    replaced = f" ({len(report.replaced)} written over; earlier versions kept)" if report.replaced else ""
    same = f"; {len(report.unchanged)} unchanged (in the store as they are)" if report.unchanged else ""
    already = f"; {len(report.already)} already in the store (same kind, title and body)" if report.already else ""
    print(f"imported {render.counted(len(report.ids), 'memory', 'memories')}{replaced}{same}{already}")
    for line, error in report.refused:
        print(f"skipped {name}, line {line}: {error}")
    if report.refused:
        print(f"skipped {len(report.refused)} refused line(s)")
