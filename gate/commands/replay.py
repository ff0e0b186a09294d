"""`gate replay [TRANSCRIPT.jsonl …]`: re-run the gates on recorded sessions — backtest a policy before it
goes live. Nothing of the user's live state is written (ledgers, audit, stats, store)."""

from __future__ import annotations

import argparse
import os
import sys

from gate.commands._common import add_json_option, add_project_option, print_json
from gate.errors import GateError
from gate.paths import ProjectPaths

EPILOG = """\
By default: this project's own sessions from Claude Code's transcript directory
(~/.claude/projects/<project path>/, or $CLAUDE_CONFIG_DIR/projects/…).
--rules DIR lays DIR's rules/*.toml over the current ones (files it lacks stay as they are).
--labels FILE scores the gates against expected answers; its format is in gate/replay/labels.py and the
README ("Before you change a rule").
--queries FILE (with --labels) scores the agent's own searches beside the gates' hits: one JSON line per prompt,
{"transcript", "prompt", "query"}; at each prompt the first 3 hits of plain `gate search` for the query count as
delivered (gate/replay/queries.py, docs/replay.md)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "replay",
        help="re-run the gates on recorded sessions (a policy backtest)",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("transcripts", nargs="*", metavar="TRANSCRIPT.jsonl")
    parser.add_argument("--dir", metavar="DIR", help="every *.jsonl under DIR")
    parser.add_argument("--rules", metavar="DIR", help="replay with DIR's rules laid over the current ones")
    parser.add_argument(
        "--compare", metavar="DIR", help="replay with the current rules and with DIR's; print only the differences"
    )
    parser.add_argument("--labels", metavar="FILE", action="append",
                        help="score the gates against the expected answers in FILE (repeatable: e.g. delivery "
                             "and shift labels, scored side by side)")
    parser.add_argument("--queries", metavar="FILE", action="append",
                        help="with --labels: score the agent-written queries in FILE (one per prompt) beside the "
                             "gates' own hits (repeatable)")
    parser.add_argument("--root", metavar="DIR", help="with --labels: resolve transcript paths against DIR")
    parser.add_argument("--quiet", action="store_true", help="totals and scores only, no per-case lines")
    parser.add_argument("--steps", action="store_true", help="every hook event's answer, in order")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def _rules_dir(value: str | None, option: str) -> str | None:
    if value is None:
        return None
    if not os.path.isdir(value):
        raise GateError(f"{option} {value}: no such directory", hint=f"{option} takes a directory of rules/*.toml")
    if not any(name.endswith(".toml") for name in os.listdir(value)):
        raise GateError(f"{option} {value}: no *.toml rules in it", hint="copy the rules you change from rules/")
    return os.path.abspath(value)


def run(args: argparse.Namespace) -> int:
    from gate.replay.labels import load_labels, merged, score
    from gate.replay.report import compare_json, render_compare, render_replay, render_scores, replay_json
    from gate.replay.run import find_transcripts, replay_all

    if args.rules and args.compare:
        raise GateError("--rules and --compare do not go together", hint="--compare DIR replays both policies")
    overlay = _rules_dir(args.rules, "--rules")
    compared = _rules_dir(args.compare, "--compare")
    project = ProjectPaths.for_cwd(args.project)
    labels = merged([load_labels(path, args.root) for path in args.labels]) if args.labels else None
    queries = None
    if args.queries:
        from gate.replay.queries import load_queries, merged_queries

        if labels is None:
            raise GateError("--queries needs --labels", hint="the queries are scored against the labels' memories")
        if compared is not None:
            raise GateError("--queries and --compare do not go together",
                            hint="score the queries under each policy apart (--rules DIR)")
        queries = merged_queries([load_queries(path, args.root) for path in args.queries])
    if labels is not None and not args.transcripts and not args.dir:
        transcripts = labels.transcripts
    else:
        transcripts = find_transcripts(args.transcripts, args.dir, project)
    replay = replay_all(transcripts, project, overlay, labels, queries=queries)
    failed = 1 if replay.unreadable else 0  # a transcript that could not be read: the figures lack it
    for transcript, why in replay.unreadable.items():
        print(f"gate: error: could not read {transcript}: {why}", file=sys.stderr)
    if failed:
        print("hint: name Claude Code session files (~/.claude/projects/…/SESSION.jsonl) or a folder of them "
              "(--dir DIR); the figures above leave the unread ones out", file=sys.stderr)

    if compared is not None:
        after = replay_all(transcripts, project, compared, labels, timelines=replay.timelines())
        data = compare_json(replay, after)
        if args.json:
            print_json(data)
        else:
            print("\n".join(render_compare(data, args.compare)))
        return failed

    data = replay_json(replay, detail=not args.quiet, steps=args.steps)
    if labels is not None:
        data["scores"] = score(labels, replay.runs, replay.store_ids)
        if queries is not None:
            from gate.replay.queries import score_queries

            data["scores"]["queries"] = score_queries(labels, replay.runs, queries)
    if args.json:
        print_json(data)
        return failed
    lines = render_replay(data)
    if labels is not None:
        lines += render_scores(data["scores"], show_wrong=not args.quiet)
    print("\n".join(lines))
    return failed
