"""`gate install`: wire gate's hooks into a Claude Code settings file, keeping every other byte of it."""

from __future__ import annotations

import argparse
import sys

from gate.install import commands, files, wiring


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "install",
        help="wire gate's hooks into Claude Code settings",
        description=(
            "Merge gate's hook entries into .claude/settings.json (project, the default), "
            ".claude/settings.local.json (local) or ~/.claude/settings.json (user). Every other key and hook "
            "stays as it is; the previous file is backed up under gate's state directory. Safe to run again."
        ),
    )
    parser.add_argument(
        "--scope", choices=files.SCOPES, default="project", help="which settings file (default: project)"
    )
    parser.add_argument("--project", metavar="DIR", help="the project (default: the project of the cwd)")
    parser.add_argument("--dry-run", action="store_true", help="print the diff that would be applied; write nothing")
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter the hooks run (default: the one running gate now, by absolute path)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = commands.resolve_project(args.project)
    python = args.python or wiring.default_python()
    commands.check_interpreter(python)
    plan = commands.plan_install(args.scope, root, python)
    if args.dry_run:
        if plan.changes:
            sys.stdout.write(plan.diff())
        else:
            print(f"gate is already wired in {plan.path}; nothing to change")
        return 0
    result = commands.apply(plan)
    if result.changed:
        print(f"wired {', '.join(wiring.EVENT_NAMES)} into {plan.path} ({args.scope} scope)")
        print(f"hooks run: {wiring.hook_command(python)}")
        if result.backup:
            print(f"previous file saved as {result.backup}")
    else:
        print(f"gate is already wired in {plan.path}; nothing changed")
    for note in plan.notes:
        print(note, file=sys.stderr)
    print("check it with: gate doctor", file=sys.stderr)
    return 0
