"""`gate import --from claude-memory [DIR]` and `gate import --from claude-md [FILE] --section HEADING`.

The options are added to `gate import` (gate/commands/import_memories.py), whose plain form reads JSON lines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate import claude_code
from gate.commands._common import open_store, print_json
from gate.errors import NotFoundError, ValidationError
from gate.importers import plan
from gate.rules import load_rules

SOURCES = ("jsonl", "claude-memory", "claude-md")


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="source", choices=SOURCES, default="jsonl",
        help="jsonl (default): FILE as `gate export` writes it; claude-memory: Claude Code's auto memory, each "
        "topic file one memory (FILE: its directory, default this project's, found as Claude Code finds it); "
        "claude-md: the bullets of a CLAUDE.md section as directives (FILE default: this project's CLAUDE.md)",
    )
    parser.add_argument("--section", action="append", default=[], metavar="HEADING",
                        help="claude-md: the section whose bullets to import, by its heading; repeatable")
    parser.add_argument("--team", action="store_true",
                        help="put what is shared by nature in the team store (in the repository, seen by everyone): "
                        "project and reference memories, those Claude Code kept in its team directory, CLAUDE.md "
                        "bullets; without it they stay private")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each memory's mapping and the rule behind it; write nothing")


def require_file(args: argparse.Namespace) -> None:
    """For the plain JSON-lines import: FILE is needed and the other sources' options mean nothing."""
    if args.file is None:
        raise ValidationError("gate import needs FILE (JSON lines, or - for stdin)",
                              hint="or --from claude-memory / --from claude-md to import what Claude Code keeps")
    used = [name for name, value in (("--section", args.section), ("--team", args.team),
                                     ("--dry-run", args.dry_run)) if value]
    if used:
        raise ValidationError(f"{used[0]} goes with --from claude-memory or --from claude-md")


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    root = Path(store.paths.root)
    rules = dict(load_rules("import", root))
    if args.source == "claude-memory":
        if args.section:
            raise ValidationError("--section goes with --from claude-md")
        header, items, prefixes, note = _claude_memory(args, root, rules)
    else:
        header, items = _claude_md(args, root, rules)
        prefixes, note = {}, ""
    plan.check(store, items, prefixes)
    if not args.dry_run:
        plan.apply(store, items)
    totals = plan.counts(items)
    if args.json:
        print_json({"source": args.source, "from": header, "dry_run": bool(args.dry_run), "index": note,
                    "items": [item.to_json() for item in items], **totals})
    else:
        print(header)
        for line in plan.report_lines(items, args.dry_run):
            print(line)
        if note:
            print(note)
    if totals["refused"]:
        print(f"gate: {totals['refused']} cannot be imported (reasons above); {_the_rest(totals, args.dry_run)}",
              file=sys.stderr)
        return 1
    return 0


def _the_rest(totals: dict[str, int], dry_run: bool) -> str:
    """What became of the items that were not refused, as a whole clause ("the other 3 were imported")."""
    done = totals["new"] if dry_run else totals["imported"]
    verb = ("would be" if dry_run else "was" if done == 1 else "were") + " imported"
    clauses = [f"{done} {verb}"] if done else []
    if totals["exists"]:
        clauses.append(f"{totals['exists']} {'was' if totals['exists'] == 1 else 'were'} imported before")
    if not clauses:
        return "nothing else was there to import"
    return "of the others, " + " and ".join(clauses)


def _claude_memory(
    args: argparse.Namespace, root: Path, rules: dict
) -> tuple[str, list[plan.Item], dict[str, str], str]:
    if args.file:
        directory, how = Path(args.file).expanduser(), "given"
    else:
        located = claude_code.auto_memory_dir(root)
        directory, how = located.path, located.how
    if not directory.is_dir():
        raise NotFoundError(
            f"no auto-memory directory at {directory} ({how})",
            hint="Claude Code creates it when it first saves a memory for this project; "
            "pass the directory to import another one",
        )
    from gate.importers import claude_memory  # PyYAML: only for this source

    directory = directory.resolve()
    scan = claude_memory.scan(directory, team=args.team, rules=rules)
    return f"Claude Code auto memory: {directory} ({how})", scan.items, scan.source_prefixes, scan.index_note


def _claude_md(args: argparse.Namespace, root: Path, rules: dict) -> tuple[str, list[plan.Item]]:
    path = Path(args.file).expanduser() if args.file else claude_code.project_claude_md(root)
    if path is None:
        raise NotFoundError(f"no CLAUDE.md in {root} (nor .claude/CLAUDE.md)",
                            hint=f"pass the file, e.g. {claude_code.user_claude_md()} for your own")
    own = path.expanduser().resolve() == claude_code.user_claude_md().resolve()
    scope = "user" if own else "team" if args.team else "private"
    from gate.importers import claude_md

    items = claude_md.read_sections(path, args.section, root, scope=scope, rules=rules)
    return f"CLAUDE.md bullets: {path} ({', '.join(args.section)})", items
