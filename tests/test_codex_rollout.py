"""A Codex CLI rollout read by the hooks' transcript reader and by `gate replay`'s walk
(gate/hosts/codex/rollout.py): prompts, replies, shell calls, patches, results, hook blocks, interruptions and
compactions, each as the Claude Code entry the turn reader knows. The rollout here is written for the test, in
the shape Codex CLI 0.1xx writes (the corpus's rollouts replay in tests/test_replay.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate.hosts.codex import rollout
from gate.replay.timeline import read_timeline
from gate.session.transcript import read_turn

SESSION = "019e0000-0000-7000-8000-00000000c0de"
PATCH = (
    "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n+Run the tests with TZ=UTC.\n"
    "*** Update File: src/clock.py\n@@\n-    return datetime.now()\n+    return datetime.now(timezone.utc)\n"
    "*** End Patch\n"
)


class Rollout:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.add("session_meta", {"id": SESSION, "cwd": "/srv/app", "cli_version": "0.171.0", "source": "cli"})

    def add(self, kind: str, payload: dict[str, Any]) -> int:
        self.lines.append({"timestamp": f"2026-06-01T10:00:{len(self.lines):02d}.000Z", "type": kind,
                           "payload": payload})
        return len(self.lines)

    def prompt(self, text: str) -> int:
        self.add("turn_context", {"cwd": "/srv/app", "model": "gpt-5"})
        self.add("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": text}]})
        return self.add("event_msg", {"type": "user_message", "message": text, "images": []})

    def say(self, text: str) -> int:
        self.add("event_msg", {"type": "agent_message", "message": text})
        return self.add("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": text}]})

    def shell(self, command: str, output: str, code: int, call: str) -> None:
        self.add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                   "arguments": json.dumps({"cmd": command, "workdir": "/srv/app"})})
        self.add("response_item", {"type": "function_call_output", "call_id": call, "output":
                                   f"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {code}\n"
                                   f"Output:\n{output}"})

    def patch(self, call: str) -> None:
        self.add("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": call,
                                   "input": PATCH})
        self.add("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": json.dumps(
            {"output": "Success. Updated the following files:\nA docs/notes.md\nM src/clock.py\n",
             "metadata": {"exit_code": 0}})})

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def _fix_session() -> Rollout:
    r = Rollout()
    r.add("response_item", {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": "<permissions instructions>sandboxed</permissions instructions>"}]})
    r.add("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "# AGENTS.md instructions for /srv/app\nBe brief."}]})
    r.prompt("The nightly report shows yesterday's totals. Why?")
    r.say("The report reads the local clock; checking.")
    r.shell("pytest tests/test_report.py", "1 failed: naive datetime", 1, "call_a")
    r.patch("call_b")
    r.shell("pytest tests/test_report.py", "1 passed", 0, "call_c")
    r.add("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"})
    r.say("Fixed: the report used a naive local clock; it now uses UTC.")
    return r


def test_the_turn_reader_reads_a_rollout_as_a_turn(tmp_path: Path) -> None:
    path = _fix_session().write(tmp_path / "rollout.jsonl")
    turn = read_turn(str(path))
    assert turn.complete and turn.prompt == "The nightly report shows yesterday's totals. Why?"
    assert turn.assistant_texts == ["The report reads the local clock; checking.",
                                    "Fixed: the report used a naive local clock; it now uses UTC."]
    assert [use.name for use in turn.tool_uses] == ["Bash", "Write", "Edit", "Bash"]
    assert turn.bash_commands() == ["pytest tests/test_report.py"] * 2
    assert turn.touched_files() == ["docs/notes.md", "src/clock.py"]
    edit = turn.tool_uses[2].input
    assert edit["old_string"] == "    return datetime.now()" and "timezone.utc" in edit["new_string"]
    failed, patched, passed = (turn.result_for(call) for call in ("call_a", "call_b", "call_c"))
    assert failed is not None and failed.is_error and "naive datetime" in failed.text
    assert patched is not None and not patched.is_error and patched.text.startswith("Success.")
    assert passed is not None and not passed.is_error


def test_the_agent_s_context_messages_are_no_prompt_and_a_hook_block_is_feedback(tmp_path: Path) -> None:
    r = _fix_session()
    r.add("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<hook_prompt>MEMORY CHECK: store the fix</hook_prompt>"}]})
    r.say("Stored it.")
    r.add("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]})
    turn = read_turn(str(r.write(tmp_path / "rollout.jsonl")))
    assert turn.prompt == "The nightly report shows yesterday's totals. Why?"
    assert turn.hook_feedback == 1 and turn.assistant_texts[-1] == "Stored it."


def test_the_replay_walk_finds_the_hooks_of_a_rollout(tmp_path: Path) -> None:
    r = _fix_session()
    second = r.prompt("Now make the export use UTC too.")
    r.say("Looking at the exporter.")
    r.add("event_msg", {"type": "turn_aborted", "reason": "interrupted"})
    third = r.prompt("Summarise what changed.")
    r.say("Before compacting: the clock fix.")
    r.add("compacted", {"message": "summary of the session", "replacement_history": []})
    r.add("event_msg", {"type": "context_compacted"})
    r.say("Both the report and the export now use UTC.")
    timeline = read_timeline(str(r.write(tmp_path / "rollout.jsonl")))
    assert timeline.agent == "codex" and timeline.session_id == SESSION and timeline.cwd == "/srv/app"
    assert not timeline.skipped and not timeline.subagent_thread
    names = [step.name for step in timeline.steps]
    assert names == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "PreToolUse", "PreToolUse",
                     "Stop", "UserPromptSubmit", "UserPromptSubmit", "PreCompact", "SessionStart", "Stop"]
    assert [s.event["prompt"] for s in timeline.prompts()][1:] == ["Now make the export use UTC too.",
                                                                   "Summarise what changed."]
    assert [s.turn for s in timeline.prompts()][1:] == [second, third]
    tools = [s.event for s in timeline.steps if s.name == "PreToolUse"]
    assert [(t["tool_name"], t["tool_use_id"]) for t in tools] == [
        ("Bash", "call_a"), ("Write", "call_b"), ("Edit", "call_b#1"), ("Bash", "call_c")]
    first_stop, last_stop = timeline.stops()
    assert first_stop.event["last_assistant_message"].startswith("Fixed: the report")
    assert last_stop.event["last_assistant_message"] == "Both the report and the export now use UTC."
    # the second turn was interrupted: no Stop of its own


def test_a_subagent_thread_is_known_as_one(tmp_path: Path) -> None:
    r = Rollout()
    r.lines[0]["payload"]["source"] = {"subagent": "review"}
    r.prompt("Review the diff.")
    r.say("Looks right.")
    timeline = read_timeline(str(r.write(tmp_path / "rollout.jsonl")))
    assert timeline.subagent_thread and len(timeline.stops()) == 1


def test_shell_calls_of_every_shape_name_their_command_line() -> None:
    assert rollout.shell_command({"cmd": "git status"}) == "git status"
    assert rollout.shell_command({"command": ["bash", "-lc", "make test && echo ok"]}) == "make test && echo ok"
    assert rollout.shell_command({"command": ["ls", "-la"]}) == "ls -la"
    # `exec`: a script that calls the shell tool (the key may come after others)
    script = 'let found = await tools.exec_command({workdir: "/srv", cmd: "rg -n \\"TODO\\" src"}); print(found)'
    assert rollout.shell_command(script) == 'rg -n "TODO" src'
    assert rollout.shell_command("text('no command here')") is None
    moved = ("*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** Delete File: c.py\n"
             "*** End Patch")
    assert [(tool, path) for tool, path, _, _ in rollout.patch_files(moved)] == [
        ("Edit", "a.py"), ("Write", "b.py"), ("Edit", "c.py")]


def test_a_line_of_no_known_shape_is_no_entry() -> None:
    assert rollout.entry({"type": "response_item", "payload": "not an object"}) is None
    assert rollout.entry({"type": "event_msg", "payload": {"type": "token_count"}}) is None
    assert rollout.entry({"type": "response_item", "payload": {"type": "reasoning"}}) is None
    failed = rollout.entry({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c",
                                                                  "output": {"content": "boom", "success": False}}})
    assert failed is not None and failed["message"]["content"][0]["is_error"] is True
