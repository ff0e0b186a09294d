"""`gate doctor`: is gate wired, does each hook answer, are the store, config and rules healthy, and what else
competes with it. Informs only; exits non-zero when something is broken."""

from __future__ import annotations

import argparse
import json

from gate.install import diagnose
from gate.install.commands import resolve_project
from gate.paths import ProjectPaths
from gate.project_migrate import unmerged

_MARKS = {"ok": "ok  ", "info": "info", "warn": "WARN", "fail": "FAIL"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check that gate is wired, runs, and is healthy",
        description=(
            "Checks the hook wiring in every Claude Code settings file and the plugin, runs each wired hook once "
            "with a synthetic event (tagged GATE_DOCTOR=1, so stats leave it out) and reports its whole-process "
            "latency, then the memory store and index, the config, the rules, recent hook failures, and other "
            "memory tools (including Claude Code's own auto memory). Names the project and how it was identified "
            "(its repository's id, made on first use, or the directory outside any repository). Changes nothing "
            "else. Exit 1 when something is broken."
        ),
    )
    parser.add_argument("--project", metavar="DIR", help="the project (default: the project of the cwd)")
    parser.add_argument(
        "--agent", choices=("claude-code", "codex", "gemini"), default="claude-code",
        help="the coding agent whose wiring to check (default: claude-code, plus Codex's and Gemini's where gate is "
        "wired there)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--no-run", action="store_true", help="do not run the hooks (wiring and health only)")
    parser.add_argument(
        "--clear-errors",
        action="store_true",
        help="acknowledge this project's hook failures so far: later runs count only newer ones (the error log "
        "itself is kept), then check as usual",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = resolve_project(args.project)
    if args.clear_errors:
        stamp = diagnose.clear_errors(root)
        if not args.json:
            print(f"gate doctor: hook failures up to {stamp} acknowledged; only newer ones are counted")
    paths = ProjectPaths.for_cwd(root)  # a repository's first use names its project (and its old stores join)
    checks = diagnose.diagnose(root, run=not args.no_run, agent=args.agent)
    broken = any(check.status == "fail" for check in checks)
    left = unmerged(paths.dirs.data, paths.root, paths.aliases)
    if args.json:
        print(json.dumps({"ok": not broken, "project": str(root), "project_id": paths.key, "identified_by": paths.how,
                          "repository": paths.repository, "unmerged": left, "checks": diagnose.as_json(checks)},
                         indent=2))
        return 1 if broken else 0
    print(f"gate doctor: project {paths.key}, identified by {paths.identified_as}; this checkout: {root}")
    for store in left:
        print(f"  WARN  migration: {store} holds memories that differ from this project's copies of them "
              "(compare, then `gate import` what you keep or delete the folder)")
    for check in checks:
        print(f"  {_MARKS[check.status]}  {check.check}: {check.message}")
        if check.hint and check.status != "ok":
            print(f"        hint: {check.hint}")
    failures = sum(check.status == "fail" for check in checks)
    warnings = sum(check.status == "warn" for check in checks)
    muted = [check for check in checks if check.check == "mute"]
    summary = f"{failures} broken, {warnings} warning{'' if warnings == 1 else 's'}"
    summary = summary if broken or warnings else "all good"
    print(summary + (" (but muted: see above)" if muted else ""))
    return 1 if broken else 0
