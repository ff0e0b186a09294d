"""A background subagent's report is evidence for the parent's write-back gate (issues 24 and 22), in the real
Claude Code CLI against the scripted model.

In 2.1.332 a spawn runs in the background unless told otherwise: the Agent tool's result only says it was
launched, the parent's turn ends, and the subagent's report comes back later as a user message of its own,
`<task-notification>…<result>REPORT</result>…</task-notification>`, for which UserPromptSubmit fires and then a
Stop (docs/subagents.md). That Stop weighs what the report settled like any text of the turn; the notification
itself is a program's message, never the user's request, rule or confirmation.
"""

from __future__ import annotations

import pytest
from claude_harness import Claude, E2EDirs, GateCli, filled_remember_command, stop_feedback, stop_hook_overrides
from model_server import (
    JSON,
    ModelServer,
    Reply,
    after_tool_call,
    has_replied,
    last_user_contains,
    main_agent,
    subagent,
    tail_contains,
    tail_text,
)

pytestmark = pytest.mark.e2e

PROMPT = "The reserve trigger test fails on the last day of the month. Hand it to a subagent."
TASK = "Find why the reserve trigger test fails on the month's last day, and fix it in trigger.py."
FIX_REPORT = (
    "The root cause was an off-by-one in the reserve trigger: it counted the current month as missed. I changed "
    "the comparison from >= to > in trigger.py and the trigger tests pass now."
)
LAUNCHED = "A subagent is looking into the trigger test."
RELAY = "The subagent is done with the trigger test; its report is above."
STORED_TITLE = "The reserve trigger counts missed months with >, not >= (the current month is not missed yet)"
CHECK_MARK = "MEMORY CHECK:"
NOTIFICATION = "<task-notification>"


def remember_from_block(body: JSON) -> Reply:
    """The scripted agent runs the exact `remember` line the block showed, filled in."""
    command = filled_remember_command(
        tail_text(body), STORED_TITLE, body="See the trigger tests.", cues="reserve trigger last day of month"
    )
    return Reply.bash(command, "Store the root cause in memory")


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    return gate


def test_a_background_subagents_report_is_weighed_by_the_stop_of_the_turn_it_opens(
    claude: Claude, wired: GateCli, model_server: ModelServer,
) -> None:
    model_server.when(subagent(lambda b: not has_replied(b)), Reply.bash("echo 'trigger.py: >= became >'"),
                      name="sub-fix")
    model_server.when(subagent(), Reply.text(FIX_REPORT), name="sub-report")
    spawn = {"description": "Fix the trigger test", "prompt": TASK, "subagent_type": "general-purpose"}
    model_server.when(main_agent(lambda b: not has_replied(b)), Reply.tool("Agent", spawn), times=1, name="spawn")
    model_server.when(main_agent(tail_contains(CHECK_MARK)), remember_from_block, times=1, name="store")
    model_server.when(main_agent(after_tool_call("Bash", " remember ")), Reply.text("Stored."), name="stored")
    model_server.when(main_agent(last_user_contains(NOTIFICATION)), Reply.text(RELAY), name="relay")
    model_server.when(main_agent(), Reply.text(LAUNCHED), name="launched")
    run = claude.run(PROMPT, timeout=300)

    records = [r for r in wired.audit() if r.get("session") == run.session_id]
    prompts = [r for r in records if r.get("event") == "UserPromptSubmit"]
    stops = [r for r in records if r.get("event") == "Stop"]
    assert len(prompts) == 2, prompts  # the user's prompt, then the notification that brought the report

    # 1. The spawning turn settled nothing itself (the tool result only says the subagent was launched).
    assert stops[0]["decision"] == "allowed", stops[0]
    assert not stops[0].get("subagent_report")

    # 2. The notification's turn is weighed on the report: the cause it found and the tests it saw pass.
    blocked = stops[1]
    assert blocked["decision"] == "blocked" and blocked["reason"] == "BLOCKED_WRITEBACK", blocked
    assert blocked["subagent_report"] is True
    quotes = " ".join(blocked.get("evidence_quotes", []))
    assert "off-by-one" in quotes, blocked
    assert blocked["signals"].get("fix") and blocked["signals"].get("confirmed"), blocked["signals"]
    # ... and never on the notification as if the user had written it: it says "Fix the trigger test" (the
    # spawn's description), which from a person would be a request for a fix.
    assert not {"asked_fix", "preference", "user_rule", "user_decision", "choice", "correction"} & set(
        blocked["signals"]), blocked["signals"]
    feedback = stop_feedback(run.transcript())
    assert len(feedback) == 1 and "MEMORY CHECK: this turn made a fix" in feedback[0]

    # 3. The agent stores with the command the block showed; nothing loops.
    hits = wired.search("reserve trigger last day of month")["hits"]
    assert [h["title"] for h in hits][:1] == [STORED_TITLE]
    assert wired.json("show", hits[0]["id"])["kind"] == "fix"
    assert stops[2]["reason"] == "ALLOW_STOP_ACTIVE" and stops[2]["outcome"] == "stored", stops[2]
    assert [s["decision"] for s in stops].count("blocked") == 1
    assert not stop_hook_overrides(run.transcript())
    assert not any(r.get("decision") == "blocked" for r in records if r.get("event") == "SubagentStop")
    assert not wired.error_log.exists() or not wired.error_log.read_text().strip()


def test_a_background_report_that_settles_nothing_passes_and_reminds_of_nothing(
    claude: Claude, wired: GateCli, model_server: ModelServer,
) -> None:
    """What is weighed is what the report says: a survey that settled nothing ends its turn like any other."""
    model_server.when(subagent(), Reply.text("The schedule code computes due dates; the payout order lives elsewhere."),
                      name="sub-report")
    spawn = {"description": "Survey the schedule code", "prompt": "Survey the schedule code.",
             "subagent_type": "general-purpose"}
    model_server.when(main_agent(lambda b: not has_replied(b)), Reply.tool("Agent", spawn), times=1, name="spawn")
    model_server.when(main_agent(last_user_contains(NOTIFICATION)), Reply.text(RELAY), name="relay")
    model_server.when(main_agent(), Reply.text(LAUNCHED), name="launched")
    run = claude.run("Where is the payout order computed? Have a subagent survey the schedule code.", timeout=300)
    records = [r for r in wired.audit() if r.get("session") == run.session_id]
    stops = [r for r in records if r.get("event") == "Stop"]
    assert [s["decision"] for s in stops] == ["allowed", "allowed"], stops
    assert stops[1]["subagent_report"] is True and stops[1]["reason"] == "ALLOW_NO_SIGNAL", stops[1]
    assert "deferred" not in stops[1]
    assert not stop_feedback(run.transcript())
