"""Play the shipped sample session through the real hooks, step by step, in a throwaway home.

Each hook event of the recording (gate.replay.timeline reads them as Claude Code would have sent them) goes to
a fresh hook process — the command `gate install` wires for local scope — with the transcript cut where it
stood when that hook ran, HOME, GATE_HOME and the project all inside the throwaway directory, and none of the
user's GATE_* settings. When the recorded agent runs `gate remember`, the demo runs it for real, so the
write-back gate's outcome is a memory in that store; its `gate search` (the search recall asks of it, which the
first change of the turn waits for) runs for real too. Nothing outside the throwaway directory is read or written
except the installed code and rules.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gate.errors import GateError
from gate.install.wiring import hook_command
from gate.paths import audit_log_file, error_log_file, redirect_home
from gate.replay.timeline import read_timeline

SAMPLE = Path(__file__).with_name("sample")
PROJECT_TOKEN = "__PROJECT__"
HOOK_TIMEOUT = 60

# The sample project's files, so that the recorded reads and edits point at something real.
PROJECT_FILES = {
    "billing/__init__.py": "",
    "billing/rounding.py": (
        'from decimal import ROUND_HALF_UP, Decimal\n\nCENT = Decimal("0.01")\n\n\n'
        "def invoice_total(lines):\n"
        "    total = sum((line.amount for line in lines), Decimal(0))\n"
        "    return total.quantize(CENT, rounding=ROUND_HALF_UP)\n"
    ),
    "tests/test_rounding.py": (
        "from decimal import Decimal\n\nfrom billing.rounding import invoice_total\n\n\n"
        "class Line:\n    def __init__(self, amount):\n        self.amount = Decimal(amount)\n\n\n"
        "def test_half_cent_goes_to_even():\n"
        '    assert invoice_total([Line("10.125")]) == Decimal("10.12")\n'
    ),
}


@dataclass
class Step:
    """One hook event of the sample session and what the hook answered."""

    number: int
    event: str
    what: str  # the recorded event in a few words: the prompt, the tool call, "the turn ends"
    decision: str  # the audit's decision (fired, silent, blocked, allowed, …), or "failed_open"
    reason: str
    delivered: list[str] = field(default_factory=list)  # memory ids the answer carried
    shown: str = ""  # what the agent is shown: additionalContext, or the block reason
    blocked: bool = False
    refused: bool = False  # the tool call was refused (the search the agent must run comes first)
    ran: str = ""  # the output of a `gate remember` the recorded agent ran, run here for real
    found: str = ""  # the output of a `gate search` the recorded agent ran, run here for real

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Demo:
    home: Path
    project: Path
    memories: list[dict[str, Any]]
    steps: list[Step]
    errors: list[str]


def _env(root: Path, project: Path, session: str) -> dict[str, str]:
    """The hook's environment: the throwaway home, and nothing of the user's gate settings."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GATE_", "CLAUDE"))}
    keep.pop("VIRTUAL_ENV", None)
    return {
        **keep,
        "HOME": str(root / "home"),
        "GATE_HOME": str(root / "gate-home"),
        "CLAUDE_PROJECT_DIR": str(project),
        "CLAUDE_CODE_SESSION_ID": session,
        "CLAUDECODE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _gate(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "gate.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HOOK_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


def _materialise(root: Path) -> tuple[Path, Path]:
    """The project and the full recorded transcript, with the project's path written into it."""
    project = root / "project"
    (project / ".git").mkdir(parents=True)  # a project root of its own, whatever encloses the temp directory
    for relative, content in PROJECT_FILES.items():
        target = project / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    for name in ("home", "gate-home"):
        (root / name).mkdir()
    recording = root / "recording.jsonl"
    recording.write_text(sample_transcript(project), encoding="utf-8")
    return project, recording


def sample_transcript(project: Path) -> str:
    """The recorded session with the project's path written into it (the transcript is JSON, and a path may
    hold a quote or a backslash: it goes in escaped as JSON would write it)."""
    escaped = json.dumps(str(project))[1:-1]
    return (SAMPLE / "session.jsonl").read_text(encoding="utf-8").replace(PROJECT_TOKEN, escaped)


def write_sample(directory: Path, project: Path) -> list[Path]:
    """The sample session (set in `project`) and its store, as files in `directory`; refuses to overwrite."""
    targets = [directory / "session.jsonl", directory / "memories.jsonl"]
    existing = [str(t) for t in targets if t.exists()]
    if existing:
        raise GateError(f"{', '.join(existing)} exists already; nothing was written", "name another directory")
    directory.mkdir(parents=True, exist_ok=True)
    targets[0].write_text(sample_transcript(project), encoding="utf-8")
    targets[1].write_text((SAMPLE / "memories.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    return targets


def _what(event: dict[str, Any], project: Path) -> str:
    name = event["hook_event_name"]
    if name == "SessionStart":
        return f"the session starts ({event.get('source')})"
    if name == "UserPromptSubmit":
        return f"you: {event.get('prompt', '')}"
    if name == "PreToolUse":
        tool_input = event.get("tool_input") or {}
        target = tool_input.get("file_path") or tool_input.get("command") or ""
        target = str(target).replace(str(project) + os.sep, "")
        return f"the agent calls {event.get('tool_name')}: {target}"
    if name == "Stop":
        return "the turn tries to end" + (" again, after the gate's block" if event.get("stop_hook_active") else "")
    return name


def _shown(output: str) -> tuple[str, bool, bool]:
    """What the agent is shown from a hook's stdout, whether it blocks (a Stop), whether it refuses (a tool call)."""
    if not output.strip():
        return "", False, False
    answer = json.loads(output)
    if answer.get("decision") == "block":
        return str(answer.get("reason", "")), True, False
    specific = answer.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") == "deny":
        return str(specific.get("permissionDecisionReason", "")), False, True
    if specific.get("hookEventName") == "Stop":  # a Stop's context continues the turn: gate's block
        return str(specific.get("additionalContext", "")), True, False
    return str(specific.get("additionalContext", "")), False, False


def _new_lines(path: str, offset: int) -> tuple[list[dict[str, Any]], int]:
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return [], offset
    records = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append({"error": line})
    return records, offset + len(data)


def _run_remember(command: str, env: dict[str, str], project: Path) -> str:
    """The recorded agent's `gate remember …`, run for real against the throwaway store."""
    words = shlex.split(command)
    result = _gate(words[1:], env, project)
    return (result.stdout.strip() or result.stderr.strip()).splitlines()[-1] if (result.stdout or result.stderr) else ""


def _run_search(command: str, env: dict[str, str], project: Path) -> str:
    """The recorded agent's own `gate search …`, run for real against the throwaway store (as the agent's: its
    hits count as delivered in the session)."""
    result = _gate(shlex.split(command)[1:], env, project)
    return result.stdout.strip() or result.stderr.strip()


def play(root: Path) -> Demo:
    """Play the sample session in `root` (an empty directory the caller owns and removes)."""
    project, recording = _materialise(root)
    timeline = read_timeline(str(recording))
    env = _env(root, project, timeline.session_id)
    imported = _gate(["import", str(SAMPLE / "memories.jsonl")], env, project)
    if imported.returncode != 0:
        raise RuntimeError(f"the sample store did not import: {imported.stderr.strip() or imported.stdout.strip()}")
    memories = [json.loads(line) for line in (SAMPLE / "memories.jsonl").read_text(encoding="utf-8").splitlines()]
    with redirect_home(env["GATE_HOME"]):
        audit, errors_log = audit_log_file(), error_log_file()
    audit_at = errors_at = 0
    _, audit_at = _new_lines(audit, 0)
    _, errors_at = _new_lines(errors_log, 0)
    live = root / "transcript.jsonl"  # the transcript as it stood when each hook ran
    full = recording.read_bytes()
    command = ["/bin/sh", "-c", hook_command(sys.executable)]
    steps: list[Step] = []
    errors: list[str] = []
    for number, step in enumerate(timeline.steps, start=1):
        live.write_bytes(full[: step.end])
        event = {**step.event, "transcript_path": str(live)}
        proc = subprocess.run(
            command,
            input=json.dumps(event),
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=HOOK_TIMEOUT,
        )
        records, audit_at = _new_lines(audit, audit_at)
        failures, errors_at = _new_lines(errors_log, errors_at)
        errors.extend(json.dumps(f) for f in failures)
        record = records[-1] if records else {}
        try:
            shown, blocked, refused = _shown(proc.stdout)
        except ValueError:
            shown, blocked, refused = proc.stdout, False, False
            errors.append(f"step {number}: the hook's stdout is not JSON")
        result = Step(
            number,
            step.name,
            _what(step.event, project),
            str(record.get("decision", "failed_open" if failures else "")),
            str(record.get("reason", "")),
            [str(m) for m in record.get("delivered", [])],
            shown,
            blocked,
            refused,
        )
        tool_input = step.event.get("tool_input") or {}
        if step.name == "PreToolUse" and str(tool_input.get("command", "")).startswith("gate remember "):
            result.ran = _run_remember(str(tool_input["command"]), env, project)
        if step.name == "PreToolUse" and str(tool_input.get("command", "")).startswith("gate search "):
            result.found = _run_search(str(tool_input["command"]), env, project)
        steps.append(result)
    return Demo(root, project, memories, steps, errors)
