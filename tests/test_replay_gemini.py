"""`gate replay` on a Gemini CLI chat recording (issue 45): the walk reads it as it reads a Codex rollout, each
record as the transcript entry gate/hosts/gemini/chat.py makes of it — a record appended again as it changed is
one record, each tool call one PreToolUse — and the replay's gates judge its turns as the live hooks would.
The recording is fictional, written here in the shape Gemini CLI 0.61 writes (chatRecordingService)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gate.replay.timeline import read_timeline

SESSION = "5b1e0c2a-7d44-4f0e-9a61-2f3c8e1d0b77"
FIX = "The nightly export writes yesterday's date into the file name. Fix it."
DONE = ("Fixed: export_name() used the local date; it now takes the UTC date of the run, and the export tests "
        "pass.")
SECOND = "Does the import job have the same date problem?"
ANSWER = "No: the import job reads the date from the file itself."


def _record(record_id: str, kind: str, content: Any, stamp: str, **fields: Any) -> dict[str, Any]:
    return {"id": record_id, "timestamp": f"2026-12-07T10:{stamp}.000Z", "type": kind, "content": content, **fields}


def _call(call_id: str, name: str, args: dict[str, Any], output: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args, "status": "success",
            "result": [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]}


def _results(call: dict[str, Any]) -> list[dict[str, Any]]:
    return call["result"]


def recording(project: Path) -> list[dict[str, Any]]:
    test = {"command": "python -m pytest tests/test_export.py -q", "description": "run the export tests"}
    failed = _call("run_shell_command-1", "run_shell_command", test,
                   "Output: 1 failed, 7 passed\nExit Code: 1")
    edit = _call("replace-2", "replace", {"file_path": str(project / "export.py"), "old_string": "date.today()",
                                          "new_string": "run_started.astimezone(UTC).date()"},
                 f"Successfully modified file: {project / 'export.py'} (1 replacements).")
    passed = _call("run_shell_command-3", "run_shell_command", test, "Output: 8 passed in 0.3s")
    return [
        {"sessionId": SESSION, "projectHash": "9f" * 32, "startTime": "2026-12-07T10:00:00.000Z",
         "lastUpdated": "2026-12-07T10:00:00.000Z", "kind": "main"},
        {"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": "<session_context>"}]}]}},
        _record("u1", "user", [{"text": FIX}, {"text": "<hook_context>MEMORY: none</hook_context>"}], "00:01"),
        _record("u1", "user", [{"text": FIX}, {"text": "<hook_context>MEMORY: none</hook_context>"}], "00:01"),
        _record("g1", "gemini", "I'll run the export tests first.", "00:02"),
        _record("g1", "gemini", "I'll run the export tests first.", "00:03", toolCalls=[failed]),
        _record("u2", "user", _results(failed), "00:04"),
        _record("i1", "info", "Request cancelled.", "00:05"),
        _record("g2", "gemini", "", "00:06", toolCalls=[edit]),
        _record("u3", "user", _results(edit), "00:07"),
        _record("g3", "gemini", "", "00:08", toolCalls=[passed]),
        _record("g3", "gemini", "", "00:09", toolCalls=[passed]),  # appended again: one call still
        _record("u4", "user", _results(passed), "00:10"),
        _record("g4", "gemini", DONE, "00:11"),
        {"$set": {"lastUpdated": "2026-12-07T10:00:11.000Z"}},
        _record("u5", "user", [{"text": SECOND}], "01:00"),
        _record("g5", "gemini", ANSWER, "01:02"),
    ]


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_replay_walk_finds_the_hooks_of_a_gemini_recording(tmp_path: Path, project: Path) -> None:
    timeline = read_timeline(str(write(tmp_path / "session-2026-12-07T10-00-5b1e0c2a.jsonl", recording(project))))
    assert timeline.agent == "gemini" and timeline.session_id == SESSION and not timeline.subagent_thread
    assert not timeline.skipped
    assert [step.name for step in timeline.steps] == [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "PreToolUse", "Stop", "UserPromptSubmit",
        "Stop"]
    assert [s.event["prompt"] for s in timeline.prompts()] == [FIX, SECOND]  # the hook's context is not the user's
    tools = [s.event for s in timeline.steps if s.name == "PreToolUse"]
    assert [(t["tool_name"], t["tool_use_id"]) for t in tools] == [
        ("Bash", "run_shell_command-1"), ("Edit", "replace-2"), ("Bash", "run_shell_command-3")]
    assert tools[1]["tool_input"]["file_path"] == str(project / "export.py")
    first, last = timeline.stops()
    assert first.event["last_assistant_message"] == DONE and last.event["last_assistant_message"] == ANSWER
    assert first.stamp == "2026-12-07T10:00:11.000Z"
    # each Stop reads the recording as it stood then: up to the turn's last reply
    with open(timeline.path, "rb") as handle:
        head = handle.read(first.end).decode()
    assert head.rstrip().endswith(json.dumps(recording(project)[13])) and SECOND not in head


def test_a_gemini_subagents_recording_is_known_as_one(tmp_path: Path, project: Path) -> None:
    lines = recording(project)
    lines[0] = {**lines[0], "kind": "subagent", "directories": [str(project)]}
    timeline = read_timeline(str(write(tmp_path / "sub.jsonl", lines)))
    assert timeline.agent == "gemini" and timeline.subagent_thread and timeline.cwd == str(project)


def test_gate_replay_judges_a_gemini_recording_as_the_hooks_would(tmp_path: Path, project: Path) -> None:
    """The fix turn (a failing test run, an edit, a passing run) is blocked at its end as the live AfterAgent is;
    the question after it is not."""
    path = write(tmp_path / "session-2026-12-07T10-00-5b1e0c2a.jsonl", recording(project))
    run = subprocess.run([sys.executable, "-m", "gate.cli", "replay", str(path), "--json", "--steps",
                          "--project", str(project)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["unreadable"] == {} and data["total"]["agents"] == {"gemini": 1}
    session = data["sessions"][0]
    assert session["agent"] == "gemini" and session["prompts"] == 2 and session["turns_ended"] == 2
    stops = [step for step in session["steps"] if step["event"] == "Stop"]
    assert [step["decision"] == "blocked" for step in stops] == [True, False], stops
