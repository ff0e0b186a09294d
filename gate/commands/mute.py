"""`gate mute` / `gate unmute`: "ignore memory for now" — every gate stays silent until unmuted.

`--session [ID]` mutes one Claude Code session (its ledger's flag; ID defaults to $CLAUDE_CODE_SESSION_ID,
which the agent's own Bash tool has); without it the whole project is muted, optionally `--for` a while.
Muted gates answer nothing and audit SKIP_MUTED; mute and unmute themselves are audited too, so `gate stats`
shows when memory was switched off.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from gate.commands._common import add_json_option, add_project_option, print_json
from gate.errors import ValidationError
from gate.memory.cues.triggers import format_time, parse_duration
from gate.paths import ProjectPaths, ensure_private_dir, sessions_dir
from gate.session.audit import write_audit
from gate.session.ledger import ledger_path, open_ledger
from gate.session.mute import mute_file, project_mute


def add_parser(sub: argparse._SubParsersAction) -> None:
    mute = sub.add_parser(
        "mute",
        help="silence every gate (this project, or one session) until `gate unmute`",
        description="Silences every gate: no recall, no write-back check, no anchors, until `gate unmute`. "
        "Without --session the whole project is muted (every session of it); without --for the mute lasts "
        "until `gate unmute`. Muted gates say so in the audit, so `gate stats` counts them; `gate doctor` "
        "says when the project is muted.",
    )
    mute.add_argument("--session", nargs="?", const="", default=None, metavar="ID",
                      help="mute one session only (default ID: $CLAUDE_CODE_SESSION_ID)")
    mute.add_argument("--for", dest="duration", metavar="DURATION",
                      help="project mute ends by itself after e.g. 30m, 2h, 1d (default: it lasts until `gate unmute`)")
    mute.add_argument("--status", action="store_true", help="only show whether gates are muted")
    add_project_option(mute)
    add_json_option(mute)
    mute.set_defaults(func=run_mute)
    unmute = sub.add_parser("unmute", help="let the gates speak again")
    unmute.add_argument("--session", nargs="?", const="", default=None, metavar="ID",
                        help="unmute one session (default ID: $CLAUDE_CODE_SESSION_ID)")
    add_project_option(unmute)
    add_json_option(unmute)
    unmute.set_defaults(func=run_unmute)


def _session_id(value: str | None) -> str | None:
    if value is None:
        return None
    session = value or os.environ.get("CLAUDE_CODE_SESSION_ID", "")
    if not session:
        raise ValidationError("--session needs an ID here", hint="outside Claude Code, pass the session id")
    return session


def _audit(paths: ProjectPaths, session: str | None, decision: str, extra: dict[str, Any] | None = None) -> None:
    scope = "SESSION" if session else "PROJECT"
    record: dict[str, Any] = {
        "session": session or "",
        "project": paths.root,
        "project_id": paths.key,
        "event": "mute",
        "gate": "mute",
        "decision": decision,
        "reason": f"{decision.upper()}_{scope}",
    }
    record.update(extra or {})
    write_audit(record)


def _status(paths: ProjectPaths, session: str | None) -> dict[str, Any]:
    state: dict[str, Any] = {"project": paths.root, "project_muted": False}
    record = project_mute(paths)
    if record is not None:
        state["project_muted"] = True
        until = record.get("until")
        if isinstance(until, int | float):
            state["until"] = format_time(until)
    if session:
        state["session"] = session
        state["session_muted"] = bool(_ledger_record(ledger_path(session)).get("muted"))
    state["muted_sessions"] = _muted_sessions(paths)
    return state


def _ledger_record(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _muted_sessions(paths: ProjectPaths) -> list[str]:
    """The sessions of this project whose own mute is on (each ledger names its project: by its id, every
    checkout of the repository; a ledger of an older gate by its checkout path)."""
    directory = Path(sessions_dir())
    found = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        data = _ledger_record(str(path))
        key = data.get("project_id")
        ours = key == paths.key if isinstance(key, str) and key else data.get("project") == paths.root
        if data.get("muted") and ours:
            found.append(str(data.get("session", path.stem)))
    return found


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _print(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        print_json(data)
    else:
        print(text)


def run_mute(args: argparse.Namespace) -> int:
    paths = ProjectPaths.for_cwd(args.project)
    session = _session_id(args.session)
    if args.status:
        state = _status(paths, session)
        muted = state["project_muted"] or state.get("session_muted", False)
        text = ("muted" + (f" until {state['until']}" if "until" in state else "")) if muted else "not muted"
        sessions = state["muted_sessions"]
        if sessions and not muted:
            verb = "is" if len(sessions) == 1 else "are"
            text = f"the project is not muted, {_plural(len(sessions), 'session')} of it {verb}: {', '.join(sessions)}"
        _print(args, state, f"gate: {text} ({paths.root})")
        return 0
    if session is not None:
        if args.duration:
            raise ValidationError("--for applies to a project mute", hint="gate unmute --session ends a session mute")
        with open_ledger(session) as ledger:
            ledger.muted = True
            ledger.project = ledger.project or paths.root  # so that `gate mute --status` finds it before its start
            ledger.project_id = ledger.project_id or paths.key
        _audit(paths, session, "muted")
        _print(args, {"muted": "session", "session": session}, f"muted session {session}: gates stay silent")
        return 0
    until: float | None = None
    if args.duration:
        try:
            seconds = parse_duration(args.duration)
        except ValueError as error:
            raise ValidationError(str(error), hint="e.g. --for 30m, --for 2h, --for 1d") from error
        if seconds <= 0:
            raise ValidationError(f"--for {args.duration} would end the mute before it starts",
                                  hint="give a positive duration (e.g. 30m), or leave --for out to mute until "
                                  "`gate unmute`")
        until = time.time() + seconds
    target = Path(mute_file(paths))
    ensure_private_dir(target.parent)
    target.write_text(json.dumps({"since": time.time(), "until": until, "root": paths.root}), encoding="utf-8")
    _audit(paths, None, "muted", {"until": format_time(until)} if until else None)
    ends = f" until {format_time(until)}" if until else " until `gate unmute`"
    _print(args, {"muted": "project", "until": format_time(until) if until else None},
           f"muted {paths.root}: every gate stays silent{ends}")
    return 0


def run_unmute(args: argparse.Namespace) -> int:
    paths = ProjectPaths.for_cwd(args.project)
    session = _session_id(args.session)
    if session is not None:
        with open_ledger(session) as ledger:
            ledger.muted = False
        _audit(paths, session, "unmuted")
        _print(args, {"unmuted": "session", "session": session}, f"unmuted session {session}")
        return 0
    existed = os.path.exists(mute_file(paths))
    Path(mute_file(paths)).unlink(missing_ok=True)
    if existed:
        _audit(paths, None, "unmuted")
    _print(args, {"unmuted": "project", "was_muted": existed},
           f"unmuted {paths.root}" if existed else f"{paths.root} was not muted")
    return 0
