"""`gate stats`: is memory being used? Recall fires and deliveries, their use, write-back outcomes, adoption,
health — from the audit log, the store and the transcripts. The figures live in gate/stats/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.commands._common import add_json_option, print_json
from gate.errors import GateError


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "stats",
        help="adoption report: is memory delivered, used and written back?",
        description="From the audit log, the store and the transcripts: how often recall fired and what it "
        "delivered, whether the agent used it, the write-back gate's blocks and what followed, mutes, hook "
        "failures, the store's size. Doctor's synthetic runs are left out. Default: this project, all time.",
    )
    parser.add_argument("--since", metavar="SPAN|DATE",
                        help="only activity since then: 7d, 12h, 2w or 2025-11-01 (default: all of the audit log)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", default=None, help="the project of DIR instead of the cwd's")
    where.add_argument("--all-projects", action="store_true", help="every project")
    parser.add_argument("--session", metavar="ID", help="one session only")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained page charting activity per day")
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gate.settings import load_settings
    from gate.stats.report import build, render_text
    from gate.stats.select import Selection

    selection = Selection.from_args(args.since, args.project, args.all_projects, args.session)
    settings = load_settings(selection.project_root)
    report = build(selection, cap=int(settings.get("writeback_cap", 5)), audit_enabled=bool(settings.get("audit")))
    if args.html:
        from gate.stats.html import write_html

        page = Path(args.html).expanduser().absolute()
        try:
            write_html(page, selection, report)
        except OSError as error:
            raise GateError(f"cannot write {args.html}: {error.strerror or error}") from error
        # on stderr: stdout is the report (and with --json, JSON only)
        print(f"gate: wrote the page to {page}", file=sys.stderr)
    if args.json:
        print_json(report)
    else:
        print(render_text(report))
    return 0
