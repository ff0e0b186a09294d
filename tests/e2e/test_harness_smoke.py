"""Proves the harness itself, with tiny stdlib hooks (no gate code): what a hook emits reaches the model.

These pin the facts of the hook protocol the gate relies on (see the hooks doc), on the real CLI:
- UserPromptSubmit additionalContext is in the next model request ("UserPromptSubmit hook additional
  context: …", sent as a `role: system` message after the prompt);
- a Stop block's reason reaches the model ("Stop hook feedback:\\n<reason>") and the turn continues once;
  the next Stop carries stop_hook_active = true;
- prompts of a stream-json session are separate turns; --resume and /compact work offline.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from claude_harness import (
    Claude,
    E2EDirs,
    command_hooks,
    read_jsonl,
    stop_feedback,
    stop_hook_overrides,
    write_settings,
)
from model_server import (
    ModelServer,
    Reply,
    after_tool_result,
    is_compaction,
    last_user_contains,
    request_text,
    tail_text,
)

pytestmark = pytest.mark.e2e

CONTEXT_MARKER = "E2E-CONTEXT-7f3a"
STOP_REASON = "E2E-STOP-REASON-41c9: store what you learned, then stop."

# A stdlib hook: logs each event it sees, adds context to prompts and session starts, blocks the first Stop
# of a turn (never one that follows its own block).
HOOK_SOURCE = textwrap.dedent(
    f"""
    import json, os, sys

    event = json.load(sys.stdin)
    with open(os.environ["E2E_HOOK_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(event) + "\\n")
    name = event["hook_event_name"]
    if name in ("UserPromptSubmit", "SessionStart"):
        tag = event.get("prompt") or event.get("source")
        context = "{CONTEXT_MARKER} " + name + ": " + tag
        print(json.dumps({{"hookSpecificOutput": {{"hookEventName": name, "additionalContext": context}}}}))
    elif name == "Stop" and os.environ.get("E2E_STOP_BLOCKS") == "1" and not event["stop_hook_active"]:
        print(json.dumps({{"decision": "block", "reason": {STOP_REASON!r}}}))
    """
)


def install_hook(claude: Claude, dirs: E2EDirs, events: list[str], stop_blocks: bool = False) -> Path:
    hook = dirs.root / "hook.py"
    hook.write_text(HOOK_SOURCE, encoding="utf-8")
    log = dirs.root / "hook-events.jsonl"
    claude.env_extra["E2E_HOOK_LOG"] = str(log)
    claude.env_extra["E2E_STOP_BLOCKS"] = "1" if stop_blocks else "0"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(hook))}"
    write_settings(dirs.project, command_hooks(command, events))
    return log


def test_plain_prompt_round_trip(claude: Claude, model_server: ModelServer) -> None:
    model_server.when(last_user_contains("capital of France"), Reply.text("Paris."))
    run = claude.run("What is the capital of France?")
    assert run.result["result"] == "Paris."
    assert len(run.main_requests) == 1
    assert "capital of France" in tail_text(run.main_requests[0])
    lines = run.transcript()
    prompts = [x for x in lines if x.get("type") == "user" and not x.get("isMeta")]
    assert any("capital of France" in json.dumps(x["message"]["content"]) for x in prompts)
    assert any(x.get("type") == "assistant" and "Paris." in json.dumps(x["message"]) for x in lines)
    assert_only_streamed_messages(model_server)


def assert_only_streamed_messages(server: ModelServer) -> None:
    """2.1.332 offline calls nothing but streamed POST /v1/messages?beta=true (no count_tokens, no HEAD/GET,
    no side queries such as title generation), for prompts and for /compact alike."""
    seen = {(r.method, r.path, tuple(r.query.get("beta", []))) for r in server.requests()}
    assert seen == {("POST", "/v1/messages", ("true",))}, seen
    assert all(body.get("stream") is True for body in server.messages())


def test_prompt_hook_context_reaches_the_model(claude: Claude, model_server: ModelServer, e2e_dirs: E2EDirs) -> None:
    log = install_hook(claude, e2e_dirs, ["UserPromptSubmit"])
    run = claude.run("tell me about the reserve account")
    [request] = run.main_requests
    assert (
        f"UserPromptSubmit hook additional context: {CONTEXT_MARKER} UserPromptSubmit: "
        "tell me about the reserve account" in tail_text(request)
    )
    [event] = read_jsonl(log)
    assert event["hook_event_name"] == "UserPromptSubmit"
    assert event["prompt"] == "tell me about the reserve account"
    assert Path(event["transcript_path"]).parent.parent == e2e_dirs.home / ".claude" / "projects"
    assert Path(event["cwd"]) == e2e_dirs.project


def test_stop_block_reason_reaches_the_model_once(claude: Claude, model_server: ModelServer, e2e_dirs: E2EDirs) -> None:
    log = install_hook(claude, e2e_dirs, ["Stop"], stop_blocks=True)
    model_server.when(last_user_contains(STOP_REASON), Reply.text("Nothing new to store."))
    run = claude.run("fix the flaky test")
    first, second = run.main_requests  # the turn continued exactly once
    assert STOP_REASON not in tail_text(first)
    assert f"Stop hook feedback:\n{STOP_REASON}" in tail_text(second)
    assert run.result["result"] == "Nothing new to store."
    stops = [e for e in read_jsonl(log) if e["hook_event_name"] == "Stop"]
    assert [e["stop_hook_active"] for e in stops] == [False, True]
    assert stops[1]["last_assistant_message"] == "Nothing new to store."
    feedback = [x for x in run.transcript() if x.get("type") == "user" and x.get("isMeta")]
    assert any(STOP_REASON in json.dumps(x["message"]) for x in feedback)


def test_session_prompts_are_separate_turns_and_tools_run(
    claude: Claude, model_server: ModelServer, e2e_dirs: E2EDirs
) -> None:
    log = install_hook(claude, e2e_dirs, ["UserPromptSubmit", "SessionStart"])
    model_server.when(last_user_contains("write the file"), Reply.bash("echo E2E-BASH-OUT | tee out.txt"), times=1)
    model_server.when(after_tool_result("E2E-BASH-OUT"), Reply.text("Wrote it."))
    run = claude.session(["first question", "now write the file", "third question"])
    assert [t.prompt for t in run.turns] == ["first question", "now write the file", "third question"]
    assert [t.result["result"] for t in run.turns if t.result] == ["OK.", "Wrote it.", "OK."]
    assert [len(t.main_requests) for t in run.turns] == [1, 2, 1]
    assert (e2e_dirs.project / "out.txt").read_text().strip() == "E2E-BASH-OUT"
    # Each turn's first request carries that turn's own prompt context, the first also the session start.
    assert f"{CONTEXT_MARKER} SessionStart: startup" in tail_text(run.turns[0].requests[0])
    for turn in run.turns:
        assert f"{CONTEXT_MARKER} UserPromptSubmit: {turn.prompt}" in tail_text(turn.requests[0])
    events = [e["hook_event_name"] for e in read_jsonl(log)]
    assert events == ["SessionStart", "UserPromptSubmit", "UserPromptSubmit", "UserPromptSubmit"]


def test_resume_and_compact(claude: Claude, model_server: ModelServer, e2e_dirs: E2EDirs) -> None:
    log = install_hook(claude, e2e_dirs, ["SessionStart", "UserPromptSubmit"])
    first = claude.run("remember the waterfall")
    sid = first.session_id
    claude.run("/compact", resume=sid)
    summaries = [b for b in model_server.messages() if is_compaction(b)]
    assert len(summaries) == 1
    after = claude.run("what next", resume=sid)
    assert after.session_id == sid
    [request] = after.main_requests
    # The summary replaced the conversation: the scripted summary is there, the earlier prompt is gone.
    assert "Primary Request and Intent: scripted e2e session" in request_text(request)
    assert "remember the waterfall" not in request_text(request)
    assert f"{CONTEXT_MARKER} SessionStart: compact" in tail_text(request)
    sources = [e.get("source") for e in read_jsonl(log) if e["hook_event_name"] == "SessionStart"]
    assert sources[0] == "startup" and "compact" in sources
    assert_only_streamed_messages(model_server)


def test_claude_code_overrides_the_ninth_consecutive_stop_block(
    claude: Claude, model_server: ModelServer, e2e_dirs: E2EDirs
) -> None:
    """The CLI's own loop guard, which the write-back gate's cap must stay far below."""
    hook = e2e_dirs.root / "always_block.py"
    hook.write_text(
        "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'decision': 'block', 'reason': 'again'}))\n",
        encoding="utf-8",
    )
    write_settings(e2e_dirs.project, command_hooks(f"{shlex.quote(sys.executable)} {shlex.quote(str(hook))}", ["Stop"]))
    run = claude.run("go")
    # The answer, then 8 continuations that each showed the model the feedback; the 9th block is overridden.
    assert len(run.main_requests) == 9
    assert sum("Stop hook feedback:\nagain" in tail_text(b) for b in run.main_requests) == 8
    transcript = run.transcript()
    # The overridden 9th block is still written to the transcript as feedback, though no model saw it.
    assert len(stop_feedback(transcript)) == 9
    assert len(stop_hook_overrides(transcript)) == 1


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to watch connect() calls")
def test_traffic_stays_on_loopback(claude: Claude, model_server: ModelServer, e2e_dirs: E2EDirs) -> None:
    trace = e2e_dirs.root / "strace.txt"
    argv = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace)]
    argv += [str(claude.binary), "-p", "hello", "--output-format", "json"]
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=claude.project, env=claude.env, capture_output=True, text=True, timeout=120)
    claude.timings.append(("-p hello (under strace)", time.monotonic() - started))
    assert proc.returncode == 0, proc.stderr[-2000:]
    inet = [line for line in trace.read_text().splitlines() if "AF_INET" in line]
    assert inet, "expected at least the connection to the model server"
    leaks = [line for line in inet if 'inet_addr("127.0.0.1")' not in line and "::1" not in line]
    assert not leaks, "traffic left the loopback interface:\n" + "\n".join(leaks)
