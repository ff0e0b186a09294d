"""Each wired hook, run once for real with a synthetic event: whole-process latency, a valid answer, no
failing open."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

from gate.install import launcher, wiring
from gate.install.diagnose.base import Check, Wired, event_order
from gate.install.diagnose.errors import parse
from gate.install.diagnose.plugin import plugin_not_ready
from gate.paths import error_log_file

SYNTHETIC: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {
        "prompt": "gate doctor: a synthetic prompt to time the recall hook",
        "permission_mode": "default",
    },
    "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_use_id": "toolu_gate_doctor"},
    "Stop": {"stop_hook_active": False, "last_assistant_message": ""},
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "SubagentStop": {"agent_id": "gatedoctor", "agent_type": "general-purpose", "stop_hook_active": False},
    "SubagentStart": {"agent_id": "gatedoctor", "agent_type": "default"},  # Codex's (nothing held: silent)
    # Gemini CLI's names (gate/hosts/gemini/hook_io.py reads them into the ones above)
    "BeforeAgent": {"prompt": "gate doctor: a synthetic prompt to time the recall hook"},
    "BeforeTool": {"tool_name": "read_file", "tool_input": {"file_path": "README.md"}},
    "AfterTool": {"tool_name": "read_file", "tool_input": {"file_path": "README.md"},
                  "tool_response": {"llmContent": "", "returnDisplay": ""}},
    "AfterAgent": {"prompt": "", "prompt_response": "", "stop_hook_active": False},
}


def _error_log_size() -> int:
    try:
        return os.stat(error_log_file()).st_size
    except OSError:
        return 0


def _new_errors(since: int) -> list[str]:
    try:
        with open(error_log_file(), "rb") as handle:
            handle.seek(since)
            return [line.decode("utf-8", "replace").strip() for line in handle if line.strip()]
    except OSError:
        return []


def _ours(record: dict[str, Any], root: Path) -> bool:
    project = record.get("project")
    return not (isinstance(project, str) and project and os.path.realpath(project) != os.path.realpath(root))


def _valid_answer(event: str, stdout: str) -> str | None:
    """Why an answer is unacceptable for the event, or None when it is fine."""
    text = stdout.strip()
    if not text:
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        return "stdout is not one JSON object (Claude Code would pass it to the model as raw text)"
    if not isinstance(answer, dict):
        return "stdout is JSON but not an object"
    if event in ("UserPromptSubmit", "PreCompact", "SubagentStop") and answer.get("decision") == "block":
        return f"it blocks {event}, which gate must never do"
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("hookEventName") not in (None, event):
        return f"hookSpecificOutput names {specific.get('hookEventName')!r}"
    return None


def _notice_only(stdout: str) -> bool:
    """Whether an answer is only gate's own notice to the user (`systemMessage`), not the hook's work."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return False
    return (isinstance(answer, dict) and list(answer) == ["systemMessage"]
            and str(answer["systemMessage"]).startswith("memory-gate"))


def run_hooks(wired: list[Wired], root: Path) -> list[Check]:
    """Run each distinct wired command once per event with a synthetic event; whole-process latency."""
    session = f"gate-doctor-{uuid.uuid4().hex[:12]}"
    checks: list[Check] = []
    seen: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
    for w in sorted(wired, key=lambda w: event_order(w.event)):
        key = (w.event, w.command, tuple(sorted(w.env.items())))
        if key in seen or w.event not in SYNTHETIC:
            continue
        seen.add(key)
        event = {
            "session_id": session,
            "transcript_path": str(root / f".{session}.jsonl"),  # never created: the no-transcript path
            "cwd": str(root),
            "hook_event_name": w.event,
            **SYNTHETIC[w.event],
        }
        # GATE_DOCTOR=1 tags the audit records as synthetic, so `gate stats` leaves them out.
        env = {**os.environ, **w.env, "GATE_DOCTOR": "1", "CLAUDE_PROJECT_DIR": str(root), "CLAUDECODE": "1"}
        env["CLAUDE_CODE_SESSION_ID"] = session
        errors_before = _error_log_size()
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                ["/bin/sh", "-c", w.command],
                input=json.dumps(event),
                capture_output=True,
                text=True,
                env=env,
                cwd=root,
                timeout=w.timeout,
            )
        except subprocess.TimeoutExpired:
            checks.append(Check("hooks", "fail", f"{w.event}: no answer within its {w.timeout} s timeout ({w.source})"))
            continue
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        details = {"event": w.event, "source": w.source, "latency_ms": latency_ms, "exit_code": proc.returncode}
        problem = None
        if proc.returncode != 0:
            problem = f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        else:
            problem = _valid_answer(w.event, proc.stdout)
        logged = _new_errors(errors_before)
        # A bad setting is skipped with a line of kind "setting" and the hook goes on with the default: not a
        # fail-open (the config check names the setting and the fix). Another project's line is not ours.
        skipped = [line for line in logged if parse(line).get("kind") == "setting"]
        failures = [line for line in logged if line not in skipped and _ours(parse(line), root)]
        setting_up = bool(w.env) and problem is None and not proc.stdout.strip() and plugin_not_ready(w.env)
        if problem is None and failures and not setting_up:
            problem = f"it failed open (error log: {failures[-1][:300]})"
        said = [line for line in proc.stderr.splitlines() if line.startswith("memory-gate")]
        notice = _notice_only(proc.stdout)  # a launcher's SessionStart line for the user, and nothing else
        if problem is None and not setting_up and (not proc.stdout.strip() or notice) and said:
            # A launcher that found no gate (or no interpreter) exits 0 and says so on stderr, and nothing ran.
            problem = f"it did nothing and said: {said[-1][:300]}"
        if problem is None and wiring.is_portable(w.command) and not launcher.path().is_file():
            # The committed command without this machine's launcher: exit 0, silent (SessionStart shows the user
            # one line), and nothing ran.
            problem = f"it did nothing: gate is not set up on this machine (no launcher {launcher.path()})"
        if problem:
            checks.append(Check("hooks", "fail", f"{w.event} ({w.source}): {problem}", details=details))
        elif setting_up:
            checks.append(
                Check(
                    "hooks",
                    "warn",
                    f"{w.event}: the plugin is still setting up its Python environment; the hook ran open in "
                    f"{latency_ms} ms",
                    f"progress: {Path(w.env['CLAUDE_PLUGIN_DATA']) / 'setup.log'}",
                    details,
                )
            )
        else:
            slow = latency_ms > w.timeout * 1000 / 2
            note = " (over half its timeout)" if slow else ""
            if skipped:
                note += f"; it skipped {len(skipped)} bad setting{'' if len(skipped) == 1 else 's'} and used " \
                    "the default (see config below)"
            message = f"{w.event}: answered in {latency_ms} ms{note}"
            checks.append(Check("hooks", "warn" if slow else "ok", message, details=details))
    _forget_session(session)
    return checks


def _forget_session(session: str) -> None:
    """The synthetic session's ledger is of no use to anyone: remove it."""
    try:
        from gate.session.ledger import ledger_path
    except ImportError:
        return
    path = Path(ledger_path(session))
    for candidate in (path, path.with_name(path.name + ".lock"), path.with_suffix(".lock")):
        with contextlib.suppress(OSError):
            candidate.unlink()
