"""Front door 2 (cold path): `gate …`. Each module in gate/commands/ that defines `add_parser` is a subcommand."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import gate.commands
from gate import __version__
from gate.errors import GateError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gate",
        description="memory-gate: hook-enforced memory for Claude Code.",
    )
    parser.add_argument("--version", action="version", version=f"gate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(gate.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"gate.commands.{info.name}")
        add_parser = getattr(module, "add_parser", None)
        if add_parser is not None:
            add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except GateError as error:
        print(f"gate: error: {error}", file=sys.stderr)
        if error.hint:
            print(f"hint: {error.hint}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
