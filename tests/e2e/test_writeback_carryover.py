"""Nothing lost at a session's end, and answers read as written, in the real Claude Code CLI (issue 30):

- a session whose last turn was deferred (it settled a cause and asked the user; the user never answered) gets
  its reminder at the next session's start, once; the agent stores it; the session after that is not reminded;
- "Not worth keeping." — the block's own words — after a block is counted as acknowledged in `gate stats`.
Asserted on what the model was shown, on gate's audit log and on `gate stats`."""

from __future__ import annotations

import json

import pytest
from claude_harness import Claude, E2EDirs, GateCli, filled_remember_command, hook_contexts
from model_server import JSON, ModelServer, Reply, after_tool_call, last_user_contains, request_text, tail_contains

pytestmark = pytest.mark.e2e

CARRIED_MARK = "MEMORY CHECK (a previous session's last turn)"
CHECK_MARK = "MEMORY CHECK:"

FIX_PROMPT = "The nightly export skips the last day of every month. Find out why and fix it."
SETTLED = (
    "Found it. The root cause was an exclusive end date: the export asked for days < the month's last day, so "
    "the last day never matched. I made the range inclusive in export.py and the export test passes now.\n\n"
    "Shall I also add a regression test for February in a leap year?"
)
NEXT_SESSION = "What time does the nightly export run?"
THIRD_SESSION = "Which timezone does the nightly export use?"
STORED_TITLE = "The nightly export's date range is inclusive of the month's last day (exclusive end skipped it)"


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    settings = json.loads((e2e_dirs.project / ".claude" / "settings.json").read_text())
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(settings["hooks"])
    return gate


def store_the_carried_turn(body: JSON) -> Reply:
    command = filled_remember_command(
        request_text(body), STORED_TITLE, body="See the export range test.", cues="export misses last day of month"
    )
    return Reply.bash(command, "Store the previous session's root cause in memory")


def test_a_session_s_last_deferred_turn_reaches_the_next_session_once(
    claude: Claude, wired: GateCli, model_server: ModelServer
) -> None:
    model_server.when(last_user_contains(FIX_PROMPT), Reply.bash("echo 'export.py: < became <='"), times=1)
    model_server.when(after_tool_call("Bash", "export.py: < became <="), Reply.text(SETTLED), times=1)
    first = claude.run(FIX_PROMPT)  # the session ends on the question: the user never answers it
    [deferred] = [r for r in wired.audit() if r.get("event") == "Stop" and r.get("session") == first.session_id]
    assert deferred["reason"] == "ALLOW_DEFERRED_ASKS_USER", deferred

    # The next session of the project: its start carries the reminder, with the quotes and the command.
    model_server.when(last_user_contains(NEXT_SESSION), store_the_carried_turn, times=1)
    model_server.when(after_tool_call("Bash", " remember "), Reply.text("Stored. It runs at 02:00 UTC."))
    second = claude.run(NEXT_SESSION)
    [context] = [c for c in hook_contexts(second.transcript(), "SessionStart") if CARRIED_MARK in c]
    assert "The root cause was an exclusive end date" in context and " remember " in context
    assert CARRIED_MARK in request_text(second.turns[0].main_requests[0])  # the model saw it at its first request
    start = [r for r in wired.audit() if r.get("event") == "SessionStart" and r.get("session") == second.session_id]
    assert start[0]["carried_reminder"] == {"session": first.session_id, "turn": 1}, start
    hits = wired.search("nightly export last day of month")["hits"]
    assert [h["title"] for h in hits][:1] == [STORED_TITLE]
    stops = [r for r in wired.audit() if r.get("event") == "Stop" and r.get("session") == second.session_id]
    assert stops[0]["reminder_outcome"] == "stored", stops[0]

    # ... and not again.
    model_server.when(last_user_contains(THIRD_SESSION), Reply.text("It uses UTC."))
    third = claude.run(THIRD_SESSION)
    assert not any(CARRIED_MARK in c for c in hook_contexts(third.transcript(), "SessionStart"))
    assert not any(CARRIED_MARK in request_text(b) for b in third.turns[0].main_requests)


FIX_BLOCK_PROMPT = "The reserve trigger test fails on the last day of the month, please fix it."
FIX_EXPLANATION = (
    "Fixed. The root cause was an off-by-one in the reserve trigger: it counted the current month as missed, "
    "so I changed the comparison from >= to > in trigger.py and the tests pass now."
)


def test_not_worth_keeping_after_a_block_is_counted_as_acknowledged(
    claude: Claude, wired: GateCli, model_server: ModelServer
) -> None:
    model_server.when(last_user_contains(FIX_BLOCK_PROMPT), Reply.bash("echo 'patched trigger.py: >= became >'"),
                      times=1)
    model_server.when(after_tool_call("Bash", "patched trigger.py"), Reply.text(FIX_EXPLANATION), times=1)
    model_server.when(tail_contains(CHECK_MARK), Reply.text("Not worth keeping."))
    run = claude.run(FIX_BLOCK_PROMPT)
    assert run.result is not None and run.result["result"] == "Not worth keeping."
    stops = [r for r in wired.audit() if r.get("event") == "Stop" and r.get("session") == run.session_id]
    assert [s["decision"] for s in stops] == ["blocked", "allowed"], stops
    assert stops[1]["outcome"] == "acknowledged", stops[1]
    text = wired.run("stats").stdout
    assert "blocked 1 → stored 0 · acknowledged 1 · ignored 0" in text, text
