"""The Gemini CLI host (issue 45): its hook events read into gate's terms (names, tools, the AfterAgent reply),
gate's answers written in Gemini's schema, the hook told the agent by `--agent gemini`, a block's continuation
read as such, and `gate install|uninstall|doctor --agent gemini`. The real CLI runs these in
tests/e2e/test_gemini.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.hosts.gemini import hook_io
from gate.hosts.gemini import install as gemini_install
from gate.install import launcher
from gate.paths import audit_log_file

SESSION = "d2a96dc0-e095-4694-87da-d0d9ec2b1da1"
SHIFT = "When does the reserve account waterfall trigger?"


def gemini_event(project: Path, name: str, **fields: Any) -> dict[str, Any]:
    """A Gemini CLI 0.61 hook event as `gemini -p` writes it."""
    return {"session_id": SESSION, "cwd": str(project), "hook_event_name": name,
            "transcript_path": str(project.parent / "chats" / "session-2026-12-07T15-42-d2a96dc0.jsonl"),
            "timestamp": "2026-12-07T15:42:20.919Z", **fields}


def run_gemini_hook(event: dict[str, Any], *agent: str) -> tuple[str, int]:
    argv = [*launcher.hook_argv(sys.executable), *(agent or ("--agent", "gemini"))]
    proc = subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True, timeout=60,
                          env=dict(os.environ))
    return proc.stdout.decode(), proc.returncode


def _audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- reading an event -------------------------------------------------------------------------------------------


def test_geminis_events_and_tools_are_read_in_gates_terms(project: Path) -> None:
    prompt = hook_io.read_event(gemini_event(project, "BeforeAgent", prompt="hi"))
    assert prompt["hook_event_name"] == "UserPromptSubmit" and prompt["agent"] == "gemini"
    assert prompt["transcript_path"].endswith(".jsonl")  # Gemini's chat recording (gate/hosts/gemini/chat.py)
    assert "transcript_path" not in hook_io.read_event(gemini_event(project, "BeforeAgent", prompt="hi",
                                                                    transcript_path=""))
    stop = hook_io.read_event(gemini_event(project, "AfterAgent", prompt="hi", prompt_response="Done.",
                                           stop_hook_active=False))
    assert (stop["hook_event_name"], stop["last_assistant_message"]) == ("Stop", "Done.")
    shell = hook_io.read_event(gemini_event(project, "BeforeTool", tool_name="run_shell_command",
                                            tool_input={"command": "pytest -q", "description": "run the tests"}))
    assert (shell["hook_event_name"], shell["tool_name"], shell["tool_input"]) == (
        "PreToolUse", "Bash", {"command": "pytest -q"})
    edit = hook_io.read_event(gemini_event(project, "BeforeTool", tool_name="replace", tool_input={
        "file_path": "src/billing.py", "old_string": "a", "new_string": "b", "instruction": "x"}))
    assert edit["tool_name"] == "Edit" and edit["tool_input"]["file_path"] == str(project / "src" / "billing.py")
    write = hook_io.read_event(gemini_event(project, "BeforeTool", tool_name="write_file",
                                            tool_input={"file_path": "/abs/new.py", "content": "x"}))
    assert (write["tool_name"], write["tool_input"]["file_path"]) == ("Write", "/abs/new.py")
    read = hook_io.read_event(gemini_event(project, "BeforeTool", tool_name="read_file",
                                           tool_input={"file_path": "a.py"}))
    assert (read["tool_name"], read["gemini_tool_name"]) == ("Read", "read_file")
    other = hook_io.read_event(gemini_event(project, "BeforeTool", tool_name="mcp_x_y", tool_input={"a": 1}))
    assert (other["tool_name"], other["tool_input"]) == ("mcp_x_y", {"a": 1})
    start = hook_io.read_event(gemini_event(project, "SessionStart", source="resume"))
    assert (start["hook_event_name"], start["source"]) == ("SessionStart", "resume")
    assert hook_io.read_event(gemini_event(project, "PreCompress", trigger="auto"))["hook_event_name"] == "PreCompress"


# --- writing an answer ------------------------------------------------------------------------------------------


def test_answers_are_written_in_geminis_schema_and_any_other_is_refused() -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "search first"}}
    assert hook_io.write_verdict("PreToolUse", deny) == {"decision": "deny", "reason": "search first"}
    context = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}
    assert hook_io.write_verdict("UserPromptSubmit", context) == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "x"}}
    start = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "idx"}}
    assert hook_io.write_verdict("SessionStart", start) == start
    assert hook_io.write_verdict("Stop", {"decision": "block", "reason": "MEMORY CHECK"}) == {
        "decision": "deny", "reason": "MEMORY CHECK"}
    # BeforeTool takes no context: an anchor's answer says nothing (off there: hook_io.settings_for; AfterTool has it).
    anchors = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "gotcha"}}
    assert hook_io.write_verdict("PreToolUse", anchors) is None
    assert hook_io.write_verdict("Stop", None) is None
    after = {"gemini_event_name": "AfterTool"}
    assert hook_io.write_verdict("PreToolUse", anchors, after) == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "gotcha"}}
    with pytest.raises(ValueError):  # the call has run: a deny would only hide its result
        hook_io.write_verdict("PreToolUse", deny, after)
    refused = [
        ("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}),
        ("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                               "permissionDecisionReason": " "}}),
        ("UserPromptSubmit", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x",
                                                     "sessionTitle": "t"}}),
        ("SessionStart", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}),
        ("Stop", {"decision": "block", "reason": ""}),
        ("Stop", {"decision": "block", "reason": "r", "continue": True}),
        ("PreCompact", {"hookSpecificOutput": {"hookEventName": "PreCompact"}}),
    ]
    for event_name, output in refused:
        with pytest.raises(ValueError):
            hook_io.write_verdict(event_name, output)


# --- the hook, told the agent ----------------------------------------------------------------------------------


def test_the_first_edit_of_an_asking_turn_is_refused_in_geminis_schema(project: Path, gate) -> None:
    code, _, err = gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    assert code == 0, err
    out, code = run_gemini_hook(gemini_event(project, "BeforeAgent", prompt=SHIFT))
    answer = json.loads(out)
    assert code == 0 and answer["hookSpecificOutput"]["hookEventName"] == "BeforeAgent", answer
    assert "MEMORY SEARCH REQUIRED" in answer["hookSpecificOutput"]["additionalContext"]
    edit = gemini_event(project, "BeforeTool", tool_name="replace",
                        tool_input={"file_path": "src/billing.py", "old_string": "a", "new_string": "b"})
    out, code = run_gemini_hook(edit)
    answer = json.loads(out)
    assert code == 0 and set(answer) == {"decision", "reason"} and answer["decision"] == "deny", answer
    assert "search" in answer["reason"]
    out, code = run_gemini_hook(edit)  # once a turn: the same edit again passes
    assert (out, code) == ("", 0)
    hooks = [r for r in _audit() if r["event"] in ("UserPromptSubmit", "PreToolUse")]
    assert next(r["decision"] for r in hooks if r["event"] == "PreToolUse") == "refused"
    assert {r.get("agent") for r in hooks} == {"gemini"}, hooks


def test_a_blocks_reason_sent_back_as_a_prompt_is_no_prompt_and_the_end_after_it_is_the_follow_up(
    project: Path
) -> None:
    """Gemini answers an AfterAgent deny with the reason as a new prompt (BeforeAgent fires for it), and a tool call
    in that continuation ends with an AfterAgent whose stop_hook_active is false: gate reads both as the block's
    continuation, so it never blocks twice in a row."""
    run_gemini_hook(gemini_event(project, "BeforeAgent", prompt="The ledger totals are off by a cent, fix it."))
    fix = ("I found the bug: ROUND_UP in ledger_total() was the root cause. I fixed it by switching to "
           "ROUND_HALF_EVEN, and the tests pass now.")
    out, code = run_gemini_hook(gemini_event(project, "AfterAgent", prompt="fix it", prompt_response=fix,
                                             stop_hook_active=False))
    answer = json.loads(out)
    assert code == 0 and answer["decision"] == "deny" and "MEMORY CHECK" in answer["reason"], answer
    out, code = run_gemini_hook(gemini_event(project, "BeforeAgent", prompt=answer["reason"]))
    assert (out, code) == ("", 0)
    out, code = run_gemini_hook(gemini_event(project, "AfterAgent", prompt="fix it", prompt_response="Stored it.",
                                             stop_hook_active=False))
    assert (out, code) == ("", 0)
    records = _audit()
    assert [r["reason"] for r in records][-3:] == ["BLOCKED_WRITEBACK", "SKIP_BLOCK_CONTINUATION",
                                                   "ALLOW_STOP_ACTIVE"], records
    # A real prompt after that is recalled for again.
    run_gemini_hook(gemini_event(project, "BeforeAgent", prompt=SHIFT))
    assert _audit()[-1]["reason"] != "SKIP_BLOCK_CONTINUATION"


def test_a_prompts_cue_reaches_gemini_and_a_paths_anchor_comes_after_the_call(project: Path, gate) -> None:
    """BeforeTool takes no context, so gate delivers no anchor there (none marked delivered), and AfterTool does,
    with the call's result; a prompt's cue shares the anchors' budget setting and still reaches the model at
    BeforeAgent."""
    code, _, err = gate("remember", "Payouts go out on Thursdays only", "--kind", "gotcha",
                        "--on", "event:prompt")
    assert code == 0, err
    code, _, err = gate("remember", "ledger.py rounds half to even; never ROUND_UP", "--kind", "gotcha",
                        "--path", str(project / "ledger.py"))
    assert code == 0, err
    out, code = run_gemini_hook(gemini_event(project, "BeforeAgent",
                                             prompt="ok, go on"))
    assert "Thursdays" in json.loads(out)["hookSpecificOutput"]["additionalContext"], out
    assert _audit()[-1]["cues"]["reason"] == "FIRED_PROMPT_EVENT", _audit()[-1]
    out, code = run_gemini_hook(gemini_event(project, "BeforeTool", tool_name="read_file",
                                             tool_input={"file_path": str(project / "ledger.py")}))
    assert (out, code) == ("", 0)
    record = _audit()[-1]
    assert record["event"] == "PreToolUse" and record["reason"] == "DROPPED_BUDGET" and not record["delivered"]
    # AfterTool's context is appended to the call's result: the anchor comes there.
    out, code = run_gemini_hook(gemini_event(project, "AfterTool", tool_name="read_file",
                                             tool_input={"file_path": str(project / "ledger.py")},
                                             tool_response={"llmContent": "ROUNDING = 1", "returnDisplay": ""}))
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "AfterTool" and "never ROUND_UP" in answer["additionalContext"], answer
    assert _audit()[-1]["reason"] == "FIRED_PATH" and _audit()[-1]["delivered"]


def _record(kind: str, record_id: str, content: Any, **fields: Any) -> str:
    return json.dumps({"id": record_id, "timestamp": "2026-12-07T15:51:03.000Z", "type": kind, "content": content,
                       **fields})


def _call(call_id: str, name: str, args: dict[str, Any], output: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args, "status": "success",
            "result": [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]}


def _response(call_id: str, name: str, output: str) -> list[dict[str, Any]]:
    return [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]


def gemini_chat(path: Path, project: Path) -> Path:
    """A Gemini CLI 0.61 chat recording of a fix turn, as chatRecordingService writes it: each reply appended
    again once its tool calls are known, the tool results as user records, a hook's context as a prompt part."""
    fail = "<untrusted_context>\nOutput: 1 failed, 11 passed\nExit Code: 1\n</untrusted_context>"
    edited = f"Successfully modified file: {project / 'ledger.py'} (1 replacements)."
    passed = "<untrusted_context>\nOutput: 12 passed in 0.4s\n</untrusted_context>"
    test = {"command": "pytest -q tests/test_ledger.py", "description": "run the tests"}
    edit = {"file_path": str(project / "ledger.py"), "old_string": "ROUND_UP", "new_string": "ROUND_HALF_EVEN"}
    lines = [
        json.dumps({"sessionId": SESSION, "projectHash": "ab", "startTime": "2026-12-07T15:51:02.900Z",
                    "kind": "main"}),
        json.dumps({"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": "<session_context>"}]}]}}),
        _record("user", "u1", [{"text": "The ledger totals are off by a cent, fix it."},
                               {"text": "<hook_context>MEMORY SEARCH REQUIRED</hook_context>"}]),
        _record("gemini", "g1", ""),
        _record("gemini", "g1", "", toolCalls=[_call("c1", "run_shell_command", test, fail)]),
        _record("user", "u2", _response("c1", "run_shell_command", fail)),
        _record("gemini", "g2", "", toolCalls=[_call("c2", "replace", edit, edited)]),
        _record("user", "u3", _response("c2", "replace", edited)),
        _record("gemini", "g3", "", toolCalls=[_call("c3", "run_shell_command", test, passed)]),
        _record("user", "u4", _response("c3", "run_shell_command", passed)),
        _record("gemini", "g4", "Done."),
        json.dumps({"$set": {"lastUpdated": "2026-12-07T15:51:04.000Z"}}),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_gemini_chat_recording_is_read_as_the_turn_it_holds(project: Path) -> None:
    from gate.session.transcript import read_turn

    turn = read_turn(str(gemini_chat(project.parent / "chat.jsonl", project)), "Done.")
    assert turn.prompt == "The ledger totals are off by a cent, fix it."  # the hook's context is not the user's
    assert [use.name for use in turn.tool_uses] == ["Bash", "Edit", "Bash"]  # each reply once, its last copy
    assert turn.bash_commands() == ["pytest -q tests/test_ledger.py"] * 2
    assert turn.touched_files() == [str(project / "ledger.py")]
    assert [r.is_error for r in turn.tool_results] == [True, False, False]  # Exit Code: 1 is a failure
    assert turn.assistant_texts == ["Done."] and not turn.from_fallback


def test_a_fix_turn_whose_reply_says_nothing_is_blocked_by_what_its_chat_recording_holds(project: Path) -> None:
    """The reply alone ("Done.") is no evidence; the failing test run, the edit and the passing run in Gemini's
    chat recording are."""
    chat = gemini_chat(project.parent / "chat.jsonl", project)
    run_gemini_hook(gemini_event(project, "BeforeAgent", prompt="The ledger totals are off by a cent, fix it.",
                                 transcript_path=str(chat)))
    stop = gemini_event(project, "AfterAgent", prompt="fix it", prompt_response="Done.", stop_hook_active=False,
                        transcript_path=str(chat))
    out, code = run_gemini_hook(stop)
    assert code == 0 and json.loads(out)["decision"] == "deny", (out, _audit()[-1])


def test_an_agent_the_hook_does_not_serve_fails_open(project: Path) -> None:
    out, code = run_gemini_hook(gemini_event(project, "BeforeAgent", prompt=SHIFT), "--agent", "nobody")
    assert (out, code) == ("", 0)


# --- install and uninstall --------------------------------------------------------------------------------------


def test_install_wires_gemini_in_the_project_and_uninstall_leaves_the_file_as_it_was(project: Path, gate) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    own = ('{\n  "model": {"name": "gemini-2.5-pro"},\n  "hooks": {\n    "AfterAgent": [{"hooks": [{"type": '
           '"command", "command": "echo mine"}]}]\n  }\n}\n')
    settings.write_text(own)
    code, out, err = gate("install", "--agent", "gemini", "--project", str(project))
    assert code == 0, err
    data = json.loads(settings.read_text())
    assert set(data["hooks"]) == set(gemini_install.EVENT_NAMES) and data["model"] == {"name": "gemini-2.5-pro"}
    assert data["hooks"]["AfterAgent"][0]["hooks"][0]["command"] == "echo mine"  # the user's own entry, first
    tool = data["hooks"]["BeforeTool"][0]
    assert tool["matcher"] == "^(run_shell_command|replace|write_file)$"
    assert "--agent gemini" in tool["hooks"][0]["command"] and tool["hooks"][0]["timeout"] == 5000  # milliseconds
    assert "matcher" not in data["hooks"]["SessionStart"][0]  # Gemini compares it whole with the source
    assert "$HOME/.local/share/memory-gate/hook" in tool["hooks"][0]["command"]  # no path of this machine
    assert str(Path.home()) not in settings.read_text()
    policy = Path.home() / ".gemini" / "policies" / "memory-gate.toml"
    text = policy.read_text()
    script = Path(sys.executable).parent / "gate"
    for sub in ("search", "show", "remember", "verify"):
        assert f'"gate {sub}"' in text and f'"{script} {sub}"' in text
    assert 'toolName = "run_shell_command"' in text and 'decision = "allow"' in text
    assert launcher.path().is_file()
    assert "trusted folder" in err
    before = settings.read_text()
    assert gate("install", "--agent", "gemini", "--project", str(project))[0] == 0
    assert settings.read_text() == before  # again: nothing changes
    code, out, err = gate("uninstall", "--agent", "gemini", "--project", str(project))
    assert code == 0, err
    assert settings.read_text() == own
    assert policy.is_file()  # the machine's rules stay for other projects


def test_user_scope_goes_to_the_gemini_home_and_its_uninstall_removes_gates_files(project: Path, gate, tmp_path,
                                                                                  monkeypatch) -> None:
    home = tmp_path / "gemini-home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    code, _, err = gate("install", "--agent", "gemini", "--scope", "user", "--project", str(project))
    assert code == 0, err
    command = json.loads((home / ".gemini" / "settings.json").read_text())["hooks"]["AfterAgent"][0]["hooks"][0][
        "command"]
    assert command.startswith(sys.executable) and command.endswith("--agent gemini # memory-gate")
    assert (home / ".gemini" / "policies" / "memory-gate.toml").is_file()
    assert not (project / ".gemini").exists()
    code, _, err = gate("uninstall", "--agent", "gemini", "--scope", "user", "--project", str(project))
    assert code == 0, err
    assert not (home / ".gemini" / "settings.json").exists()
    assert not (home / ".gemini" / "policies" / "memory-gate.toml").exists()


def test_gemini_has_no_local_scope(project: Path, gate) -> None:
    code, _, err = gate("install", "--agent", "gemini", "--scope", "local", "--project", str(project))
    assert code != 0 and "no local scope" in err
    code, _, err = gate("uninstall", "--agent", "gemini", "--scope", "local", "--project", str(project))
    assert code != 0 and "no local scope" in err


# --- doctor -----------------------------------------------------------------------------------------------------


def test_doctor_checks_gemini_wiring_trust_and_rules_and_says_what_gemini_cannot_do(project: Path, gate,
                                                                                   monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    code, out, _ = gate("doctor", "--agent", "gemini", "--no-run", "--project", str(project))
    assert code == 1 and "gate is not wired into Gemini" in out
    assert gate("install", "--agent", "gemini", "--project", str(project))[0] == 0
    code, out, _ = gate("doctor", "--agent", "gemini", "--project", str(project))
    assert code == 0, out
    assert "has not been told to trust this folder" in out and "allowed without a prompt in Gemini" in out
    assert "no event after it compresses" in out
    assert out.count("ok    hooks:") == len(gemini_install.EVENT_NAMES), out
    trusted = Path.home() / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    code, out, _ = gate("doctor", "--agent", "gemini", "--no-run", "--project", str(project))
    assert "Gemini trusts this folder" in out
    trusted.write_text(json.dumps({str(project.parent): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}))
    code, out, _ = gate("doctor", "--agent", "gemini", "--no-run", "--project", str(project))
    assert "does not trust this folder" in out
    # A hand-copied Claude Code command in .gemini/settings.json (no --agent gemini) is named.
    settings = project / ".gemini" / "settings.json"
    settings.write_text(settings.read_text().replace(" --agent gemini", ""))
    code, out, _ = gate("doctor", "--agent", "gemini", "--no-run", "--project", str(project))
    assert code == 1 and "without `--agent gemini`" in out
    # Claude Code's doctor takes Gemini's wiring in where gate is wired there.
    code, out, _ = gate("doctor", "--no-run", "--project", str(project))
    assert "without `--agent gemini`" in out


# --- the hot path -----------------------------------------------------------------------------------------------

MODULES = """
import sys
sys.argv[1:] = AGENT
from gate.hook import main
main()
sys.stdout.write("\\n" + " ".join(sorted(sys.modules)))
"""


def _modules(event: dict[str, Any], agent: list[str]) -> set[str]:
    *switches, entry = launcher.hook_argv(sys.executable)
    code = entry.removesuffix("from gate.hook import entry; entry()") + "\n" + MODULES.replace("AGENT", repr(agent))
    proc = subprocess.run([*switches, code], input=json.dumps(event).encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return set(proc.stdout.decode().rsplit("\n", 1)[-1].split())


def test_the_hook_imports_only_the_gemini_host_when_it_runs_for_gemini(project: Path) -> None:
    event = gemini_event(project, "BeforeTool", tool_name="replace",
                         tool_input={"file_path": "a.py", "old_string": "a", "new_string": "b"})
    _modules(event, ["--agent", "gemini"])  # the first hook of a project builds what the next ones only read
    gemini = _modules(event, ["--agent", "gemini"])
    assert "gate.hosts.gemini.hook_io" in gemini
    assert not gemini & {"gate.hosts.gemini.install", "gate.hosts.gemini.doctor", "gate.hosts.codex.hook_io",
                         "gate.install", "json", "shlex"}, sorted(gemini)
