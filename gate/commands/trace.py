"""`gate trace`: for one turn, every recall candidate and its disposition, and the Stop verdicts. The
reconstruction lives in gate/stats/trace.py."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, print_json
from gate.errors import GateError


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("trace", help="why a turn got the memories and the write-back verdict it got")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--last", action="store_true", help="the last turn of this project (the default)")
    which.add_argument("--session", metavar="ID", help="a session (its last turn unless --prompt is given)")
    parser.add_argument("--prompt", metavar="N", type=int, help="the Nth prompt of the session, from 1")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gate.paths import ProjectPaths
    from gate.session.audit import read_audit
    from gate.stats.select import Selection
    from gate.stats.trace import build_trace, render_text

    if args.last and args.prompt is not None:
        raise GateError("--last and --prompt do not go together", hint="--session ID --prompt N picks one prompt")
    project = Selection.of_paths(ProjectPaths.for_cwd(args.project))  # by the project's id (every checkout)
    trace = build_trace(read_audit(), project=project, session=args.session, prompt=args.prompt)
    if args.json:
        print_json(trace)
    else:
        print(render_text(trace))
    return 0
