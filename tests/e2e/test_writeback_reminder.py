"""The write-back reminder in the real Claude Code CLI (issue 22): a turn that settles a root cause and ends by
asking the user "shall I also …?" is not blocked; the user's next prompt carries the reminder; the agent
stores; nothing loops. Asserted on what the model was shown, on the transcript and on gate's audit log."""

from __future__ import annotations

import json

import pytest
from claude_harness import (
    Claude,
    E2EDirs,
    GateCli,
    filled_remember_command,
    hook_contexts,
    stop_feedback,
    stop_hook_overrides,
)
from model_server import JSON, ModelServer, Reply, after_tool_call, last_user_contains, tail_contains, tail_text

pytestmark = pytest.mark.e2e

REMINDER_MARK = "MEMORY CHECK (your previous turn"
CHECK_MARK = "MEMORY CHECK:"

FIX_PROMPT = "The nightly export skips the last day of every month. Find out why and fix it."
SETTLED = (
    "Found it. The root cause was an exclusive end date: the export asked for days < the month's last day, so "
    "the last day never matched. I made the range inclusive in export.py and the export test passes now.\n\n"
    "Shall I also add a regression test for February in a leap year?"
)
ANSWER = "Yes, add that test too."
STORED_TITLE = "The nightly export's date range is inclusive of the month's last day (exclusive end skipped it)"
LATER = "What time does the nightly export run?"


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    settings = json.loads((e2e_dirs.project / ".claude" / "settings.json").read_text())
    assert {"UserPromptSubmit", "Stop"} <= set(settings["hooks"])
    return gate


def remember_from_reminder(body: JSON) -> Reply:
    """The scripted agent runs the exact `remember` line the reminder showed, filled in."""
    command = filled_remember_command(
        tail_text(body), STORED_TITLE, body="See the export range test.", cues="export misses last day of month"
    )
    return Reply.bash(command, "Store the root cause in memory")


def test_a_settled_cause_that_asks_the_user_is_reminded_at_the_next_prompt_and_stored(
    claude: Claude, wired: GateCli, model_server: ModelServer
) -> None:
    model_server.when(last_user_contains(FIX_PROMPT), Reply.bash("echo 'export.py: < became <='"), times=1)
    model_server.when(after_tool_call("Bash", "export.py: < became <="), Reply.text(SETTLED), times=1)
    model_server.when(tail_contains(REMINDER_MARK), remember_from_reminder, times=1)
    model_server.when(after_tool_call("Bash", " remember "), Reply.text("Stored. Adding the leap-year test next."))
    model_server.when(last_user_contains(LATER), Reply.text("It runs at 02:00 UTC."))
    run = claude.session([FIX_PROMPT, ANSWER, LATER], timeout=300)
    settled, answered, later = run.turns

    # 1. The turn that settled the cause and asked the user is not blocked.
    assert not any(CHECK_MARK in tail_text(b) for b in settled.main_requests)
    transcript = run.transcript()
    assert not stop_feedback(transcript) and not stop_hook_overrides(transcript)
    stops = [r for r in wired.audit() if r.get("event") == "Stop" and r.get("session") == run.session_id]
    assert stops[0]["reason"] == "ALLOW_DEFERRED_ASKS_USER" and stops[0]["deferred"] == 1, stops[0]

    # 2. The user's next prompt carries the reminder, once.
    shown = tail_text(answered.main_requests[0])
    assert REMINDER_MARK in shown and "it made a fix and stored nothing" in shown
    assert "The root cause was an exclusive end date" in shown
    assert "not worth keeping, go on" in shown
    reminders = [c for c in hook_contexts(transcript, "UserPromptSubmit") if REMINDER_MARK in c]
    assert len(reminders) == 1
    prompts = [r for r in wired.audit() if r.get("event") == "UserPromptSubmit" and r.get("session") == run.session_id]
    assert [r.get("reminder_of") for r in prompts] == [None, 1, None]
    assert prompts[1]["reason"] == "REMINDED_WRITEBACK" and prompts[1]["decision"] == "reminded"

    # 3. The agent stores, with the command the reminder showed.
    assert answered.result is not None and answered.result["result"] == "Stored. Adding the leap-year test next."
    hits = wired.search("nightly export last day of month")["hits"]
    assert [h["title"] for h in hits][:1] == [STORED_TITLE]
    assert wired.json("show", hits[0]["id"])["kind"] == "fix"
    assert stops[1]["reason"] == "ALLOW_ALREADY_STORED" and stops[1]["reminder_outcome"] == "stored"

    # 4. Nothing loops: the later prompt carries no reminder, and no Stop blocked or was overridden.
    assert REMINDER_MARK not in tail_text(later.main_requests[0])
    assert later.result is not None and later.result["result"] == "It runs at 02:00 UTC."
    assert [s["decision"] for s in stops] == ["allowed", "allowed", "allowed"], stops
    assert sum(1 for r in wired.audit() if r.get("reason") == "REMINDED_WRITEBACK") == 1
