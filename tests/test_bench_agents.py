"""The bench's agents section (issue 45): the Codex rollout and the Gemini chat recording it writes are the JSONL
transcript's evidence turn as gate's readers read them, and each Codex row's check tells a Codex answer from one
Codex would reject or that Claude Code's host wrote; each Gemini row's, an answer Gemini acts on from one it would
not. No timings are asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import agents, prompts
from bench.gemini_chat import write_chat
from bench.rollout import PATCH, write_rollout
from bench.run import find_gate
from bench.search_first import PROMPT_ID, owe_search
from bench.transcript import LAST_MESSAGE, LAST_PROMPT, write_transcript
from gate.hosts.codex import install as codex_install
from gate.hosts.gemini import install as gemini_install
from gate.session.transcript import read_turn

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "MEMORY SEARCH FIRST: run `/opt/gate/bin/gate search "
                                                           "WORDS` before this change"}}


def _out(answer: dict[str, object]) -> bytes:
    return json.dumps(answer).encode()


def test_the_rollout_holds_the_transcripts_evidence_turn_at_its_size(tmp_path: Path) -> None:
    claude = write_transcript(tmp_path / "t.jsonl", 50_000, seed=3)
    codex = write_rollout(tmp_path / "r.jsonl", claude.size, seed=3, target=claude.target)
    assert codex.target == claude.target and abs(codex.size - claude.size) < 0.15 * claude.size
    first = json.loads(codex.path.read_text(encoding="utf-8").splitlines()[0])
    assert first["type"] == "session_meta" and first["payload"]["id"] == codex.session_id
    claude_turn, codex_turn = read_turn(str(claude.path)), read_turn(str(codex.path))
    assert codex_turn.complete and codex_turn.prompt == claude_turn.prompt == LAST_PROMPT
    assert codex_turn.assistant_texts[-1] == claude_turn.assistant_texts[-1] == LAST_MESSAGE
    # the read is a shell call in Codex; the edit an apply_patch of the same file
    assert [use.name for use in codex_turn.tool_uses] == ["Bash", "Bash", "Edit", "Bash"]
    assert [use.name for use in claude_turn.tool_uses] == ["Bash", "Read", "Edit", "Bash"]
    assert codex_turn.tool_uses[2].input["old_string"] == claude_turn.tool_uses[2].input["old_string"]
    assert claude_turn.touched_files()[-1].endswith(codex_turn.touched_files()[-1])
    failed = codex_turn.result_for(codex_turn.tool_uses[0].id)
    assert failed is not None and failed.is_error


def test_a_codex_row_takes_only_an_answer_in_codexs_schema_that_names_gate_by_path() -> None:
    codex, claude = agents.check_refusal(agents.CODEX), agents.check_refusal(agents.CLAUDE)
    assert codex(0, _out(DENY), b"") is None and claude(0, _out(DENY), b"") is None
    extra = {"hookSpecificOutput": {**DENY["hookSpecificOutput"], "updatedInput": {}}}
    ask = {"hookSpecificOutput": {**DENY["hookSpecificOutput"], "permissionDecision": "ask"}}
    outer = {**DENY, "suppressOutput": True}
    plain = {"hookSpecificOutput": {**DENY["hookSpecificOutput"], "permissionDecisionReason":
                                    "MEMORY SEARCH FIRST: run `gate search WORDS` before this change"}}
    for answer in (extra, ask, outer, plain):
        assert codex(0, _out(answer), b"") is not None, answer
    assert claude(0, _out(plain), b"") is None  # Claude Code's hook may name gate plainly
    assert codex(0, b"", b"") is not None and codex(1, _out(DENY), b"") is not None

    stop = agents.check_stop(agents.CODEX)
    assert stop(0, _out({"decision": "block", "reason": "MEMORY CHECK: `/opt/gate/bin/gate remember` it"}), b"") is None
    assert stop(0, _out({"decision": "block", "reason": "MEMORY CHECK", "continue": True}), b"") is not None
    assert stop(0, _out({"decision": "block", "reason": "MEMORY CHECK: gate remember \"…\""}), b"") is not None


def test_the_codex_rows_run_the_command_codex_is_wired_with_and_their_checks_tell_the_hosts_apart(
    tmp_path: Path, isolated_home: Path, project: Path
) -> None:
    assert list(codex_install.AGENT_ARGS) == agents.AGENT_ARGS
    gate = find_gate(sys.executable, None)
    assert not gate.missing
    env = agents.with_gate_on_path(gate.env(isolated_home, project), gate.cli)
    rollout = write_rollout(tmp_path / "r.jsonl", 20_000)

    def run(argv: list[str], event: bytes) -> tuple[int, bytes, bytes]:
        done = subprocess.run(argv, input=event, env=env, cwd=project, capture_output=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    check = agents.check_refusal(agents.CODEX)
    for index, argv in enumerate(([*gate.hook, *agents.AGENT_ARGS], gate.hook)):
        session = prompts.session_id("test-agents-edit", index)
        owe_search(isolated_home, session)
        event = agents.codex_event(session, PROMPT_ID, rollout.path, project, "PreToolUse", tool_name="apply_patch",
                                   tool_input={"command": PATCH}, tool_use_id="call_t")
        verdict = check(*run(argv, event))
        assert (verdict is None) == (index == 0), verdict  # Claude Code's hook does not read an apply_patch

    stop = agents.check_stop(agents.CODEX)
    answers = []
    for index, argv in enumerate(([*gate.hook, *agents.AGENT_ARGS], gate.hook)):
        session = prompts.session_id("test-agents-stop", index)
        event = agents.codex_event(session, "turn-1", rollout.path, project, "Stop", stop_hook_active=False,
                                   last_assistant_message=rollout.last_assistant_message)
        answers.append(run(argv, event))
    assert stop(*answers[0]) is None, answers[0]
    # the Claude Code host blocks the same turn, but names gate plainly: not what the Codex row claims (a rollout
    # names no Claude Code version, so its answer is `decision: block`, the form every version takes)
    claude_answer = json.loads(answers[1][1])
    assert set(claude_answer) == {"decision", "reason"} and claude_answer["decision"] == "block"
    assert claude_answer["reason"].startswith("MEMORY CHECK")
    assert stop(*answers[1]) is not None and agents.check_stop(agents.CLAUDE)(*answers[1]) is None


# --- Gemini (issue 45: bench rows per agent) ---------------------------------------------------------------------
def test_the_gemini_chat_recording_holds_the_transcripts_evidence_turn_at_its_size(tmp_path: Path) -> None:
    claude = write_transcript(tmp_path / "t.jsonl", 50_000, seed=3)
    chat = write_chat(tmp_path / "c.jsonl", claude.size, seed=3, target=claude.target)
    assert chat.target == claude.target and abs(chat.size - claude.size) < 0.15 * claude.size
    first = json.loads(chat.path.read_text(encoding="utf-8").splitlines()[0])
    assert first["sessionId"] == chat.session_id and "projectHash" in first
    claude_turn, gemini_turn = read_turn(str(claude.path)), read_turn(str(chat.path))
    assert gemini_turn.complete and gemini_turn.prompt == claude_turn.prompt == LAST_PROMPT
    assert gemini_turn.assistant_texts[-1] == claude_turn.assistant_texts[-1] == LAST_MESSAGE
    # each reply is recorded twice (before and with its tool call): read once, as Claude Code's turn
    assert [use.name for use in gemini_turn.tool_uses] == [use.name for use in claude_turn.tool_uses] == [
        "Bash", "Read", "Edit", "Bash"]
    assert gemini_turn.tool_uses[2].input["old_string"] == claude_turn.tool_uses[2].input["old_string"]
    assert claude_turn.touched_files()[-1] == gemini_turn.touched_files()[-1]
    assert [r.is_error for r in gemini_turn.tool_results] == [True, False, False, False]  # Exit Code: 1


def test_a_gemini_row_takes_only_an_answer_gemini_acts_on() -> None:
    shift, stop, refusal = (agents.check_shift(agents.GEMINI), agents.check_stop(agents.GEMINI),
                            agents.check_refusal(agents.GEMINI))
    context = {"hookSpecificOutput": {"hookEventName": "BeforeAgent",
                                      "additionalContext": "MEMORY SEARCH REQUIRED: gate search WORDS"}}
    assert shift(0, _out(context), b"") is None
    assert shift(0, _out({**context, "decision": "block", "reason": "x"}), b"") is not None  # the prompt blocked
    assert shift(0, _out({**context, "extra": 1}), b"") is not None  # a field Gemini does not read
    assert shift(0, _out({"hookSpecificOutput": {"additionalContext": "nothing"}}), b"") is not None
    deny = {"decision": "deny", "reason": "MEMORY SEARCH FIRST: run `gate search WORDS` before this change"}
    assert refusal(0, _out(deny), b"") is None  # Gemini's shell has its PATH: plain `gate` is fine
    assert refusal(0, _out(DENY), b"") is not None  # Claude Code's spelling: Gemini would run the edit
    assert refusal(0, _out({**deny, "reason": "no"}), b"") is not None
    assert refusal(1, _out(deny), b"") is not None
    assert stop(0, _out({"decision": "deny", "reason": "MEMORY CHECK: store it"}), b"") is None
    assert stop(0, _out({"decision": "allow", "reason": "MEMORY CHECK"}), b"") is not None
    assert stop(0, b"", b"") is not None


def test_the_gemini_rows_run_the_command_gemini_is_wired_with_and_their_checks_tell_the_hosts_apart(
    tmp_path: Path, isolated_home: Path, project: Path
) -> None:
    assert list(gemini_install.AGENT_ARGS) == agents.GEMINI_ARGS
    gate = find_gate(sys.executable, None)
    assert not gate.missing
    env = agents.with_gate_on_path(gate.env(isolated_home, project), gate.cli)
    chat = write_chat(tmp_path / "c.jsonl", 20_000)

    def run(argv: list[str], event: bytes) -> tuple[int, bytes, bytes]:
        done = subprocess.run(argv, input=event, env=env, cwd=project, capture_output=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    edit = {"file_path": str(project / "src" / "payments" / "waterfall.py"), "old_string": "a", "new_string": "b"}
    check = agents.check_refusal(agents.GEMINI)
    for index, argv in enumerate(([*gate.hook, *agents.GEMINI_ARGS], gate.hook)):
        session = prompts.session_id("test-agents-gemini-edit", index)
        owe_search(isolated_home, session)
        event = agents.gemini_event(session, chat.path, project, "BeforeTool", tool_name="replace", tool_input=edit)
        verdict = check(*run(argv, event))
        assert (verdict is None) == (index == 0), verdict  # Claude Code's hook does not read Gemini's events

    session = prompts.session_id("test-agents-gemini-stop", 0)
    event = agents.gemini_event(session, chat.path, project, "AfterAgent", prompt="fix it",
                                prompt_response=chat.last_assistant_message, stop_hook_active=False)
    answer = run([*gate.hook, *agents.GEMINI_ARGS], event)
    assert agents.check_stop(agents.GEMINI)(*answer) is None, answer  # the recording's evidence turn is blocked


def test_every_other_agent_is_paired_with_claude_code_for_each_hook() -> None:
    pairs = agents.pairs(50_000)
    assert {(what, agent) for what, agent, _, _ in pairs} == {
        (what, agent) for what in ("recall hook, shift", "Stop hook, evidence turn", "first edit refused")
        for agent in (agents.CODEX, agents.GEMINI)}
    assert all(claude.endswith(("Claude Code", ")")) and agent in other for _, agent, claude, other in pairs)
    assert agents.stop_row(agents.GEMINI, 50_000).endswith("(50KB chat recording)")
