"""Front door 2 (cold path): `gate …`. Each module in gate/commands/ that defines `add_parser` is a subcommand.

Only the module of the subcommand being run is imported (plus all of them for `gate --help`), so that
`gate search` never pays for pydantic, which only `gate config` needs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

import gate.commands
from gate import __version__
from gate.errors import GateError

# Subcommands whose name is not their module's name (a module cannot be called `import`, and `list` would
# shadow the builtin in its own namespace).
MODULE_FOR_COMMAND = {"list": "listing", "import": "import_memories"}


def _command_modules(argv: list[str]) -> list[str]:
    names = sorted(info.name for info in pkgutil.iter_modules(gate.commands.__path__) if not info.name.startswith("_"))
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first is not None:
        module = MODULE_FOR_COMMAND.get(first, first.replace("-", "_"))
        if module in names:
            return [module]
    return names


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gate",
        description="memory-gate: hook-enforced memory for Claude Code.",
    )
    parser.add_argument("--version", action="version", version=f"gate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _command_modules(sys.argv[1:] if argv is None else argv):
        module = importlib.import_module(f"gate.commands.{name}")
        add_parser = getattr(module, "add_parser", None)
        if add_parser is not None:
            add_parser(sub)
    return parser


def _unknown_command(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The error for a first word that names no command, with the nearest names (None when it names one)."""
    import difflib

    first = next((arg for arg in argv if not arg.startswith("-")), None)
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if first is None or not commands or first in commands:
        return None
    if {"-h", "--help", "--version"} & set(argv[: argv.index(first)]):
        return None  # `gate --help …`: argparse answers before any command is read
    near = difflib.get_close_matches(first, list(commands), n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(repr(name) for name in near)}?" if near else ""
    return f"gate: error: no command {first!r}{guess}\nhint: `gate --help` lists the commands"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    unknown = _unknown_command(parser, sys.argv[1:] if argv is None else argv)
    if unknown:
        print(unknown, file=sys.stderr)
        return 2
    args, extra = parser.parse_known_args(argv)
    if extra:
        # argparse has the top-level parser refuse a subcommand's unknown option, with the top-level usage
        # (`usage: gate [-h] [--version] COMMAND ...`): the subcommand's own usage says what it does take
        commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
        (commands.get(getattr(args, "command", None) or "") or parser).error(
            f"unrecognized arguments: {' '.join(extra)}"
        )
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
    except BrokenPipeError:  # `gate … | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
