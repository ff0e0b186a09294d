"""The search the agent must run (issue 29), in the real Claude Code CLI against the scripted model: at a topic
shift whose first action is an edit, the edit is refused once with the search named; the agent runs the
`gate search` the context named, and the edit passes; nothing is refused twice in a turn. What the agent's search
returned is recorded as delivered for its session (Claude Code gives its Bash tool the session's id)."""

from __future__ import annotations

import re

import pytest
from claude_harness import Claude, E2EDirs, GateCli, hook_contexts
from model_server import (
    JSON,
    ModelServer,
    Reply,
    after_tool_call,
    after_tool_result,
    all_of,
    last_user_contains,
    request_text,
    tail_text,
)

pytestmark = pytest.mark.e2e

RECALL_MARK = "MEMORY SEARCH REQUIRED"
REFUSAL_MARK = "MEMORY SEARCH FIRST"
ROUNDING_TITLE = "Invoice totals round half to even (ROUND_HALF_EVEN): the finance team's rule for billing"
OTHER_TITLE = "Structured logging uses the JSON formatter with UTC timestamps"
OPENING = "What does the logging setup of this project look like?"
SHIFT = "Invoices come out a cent too high: switch the invoice rounding in billing/rounding.py to the finance rule."
AGENT_WORDS = "invoice rounding finance rule"
ROUNDING_PY = "from decimal import ROUND_HALF_UP\n\nROUNDING = ROUND_HALF_UP\n"


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs, claude: Claude) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    claude.env_extra["GATE_WRITEBACK"] = "off"  # this test is about the search; the write-back gate has its own
    (e2e_dirs.project / "billing").mkdir()
    (e2e_dirs.project / "billing" / "rounding.py").write_text(ROUNDING_PY)
    return gate


def _edit(e2e_dirs: E2EDirs) -> Reply:
    return Reply.tool("Edit", {"file_path": str(e2e_dirs.project / "billing" / "rounding.py"),
                               "old_string": "ROUNDING = ROUND_HALF_UP", "new_string": "ROUNDING = 'ROUND_HALF_EVEN'"})


def _search_as_named(body: JSON) -> Reply:
    """The agent runs the search exactly as the context named it, with its own words for WORDS."""
    named = re.findall(r"`([^`]*\ssearch) WORDS`", request_text(body))
    assert named, "no search command named in what the agent was shown"
    return Reply.bash(f"{named[-1]} {AGENT_WORDS}", "Search memory for what the request needs")


def _audit(gate: GateCli, session: str) -> list[JSON]:
    return [r for r in gate.audit() if r.get("session") == session]


def test_a_shift_whose_first_action_is_an_edit_is_refused_once_until_the_agent_searches(
    claude: Claude, wired: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs
) -> None:
    memory_id = wired.remember(ROUNDING_TITLE, "--kind", "decision")
    wired.remember(OTHER_TITLE, "--kind", "decision")
    server = model_server
    server.when(last_user_contains(OPENING), Reply.text("It logs JSON lines with UTC timestamps."), times=1)
    server.when(last_user_contains(SHIFT), _edit(e2e_dirs), times=1)
    server.when(all_of(after_tool_call("Edit"), after_tool_result(REFUSAL_MARK)), _search_as_named, times=1)
    server.when(after_tool_call("Bash", " search "), _edit(e2e_dirs), times=1)
    server.when(after_tool_call("Edit"), Reply.text("Switched the invoice rounding to ROUND_HALF_EVEN."), times=1)

    run = claude.session([OPENING, SHIFT])
    opening, shift = run.turns
    session = run.session_id

    # The shift's context keeps its hit and asks for the agent's own search, naming the command.
    context = tail_text(shift.main_requests[0])
    assert RECALL_MARK in context and memory_id in context and " search WORDS`" in context, context
    # The first action, an edit, is refused once, with the search named; the file is untouched by it.
    refusal = tail_text(shift.main_requests[1])
    assert REFUSAL_MARK in refusal and " search WORDS`" in refusal, refusal
    # After the agent's `gate search` the same edit passes.
    assert "ROUND_HALF_EVEN" in (e2e_dirs.project / "billing" / "rounding.py").read_text()
    assert shift.result is not None and "ROUND_HALF_EVEN" in shift.result["result"]

    records = _audit(wired, session)
    tool_calls = [r for r in records if r.get("event") == "PreToolUse"]
    assert [r.get("search_first") for r in tool_calls if r.get("search_first")] == ["refused", "seen"], tool_calls
    assert [r["decision"] for r in tool_calls].count("refused") == 1
    prompts = [r for r in records if r.get("event") == "UserPromptSubmit"]
    assert [bool(r.get("search_asked")) for r in prompts] == [True, True], prompts  # two shifts, a store to search
    # What the agent's search returned is delivered, in its own session.
    [searched] = [r for r in records if r.get("event") == "AgentSearch"]
    assert searched["gate"] == "agent_search" and memory_id in searched["delivered"], searched
    assert searched["query"] == AGENT_WORDS
    stats = wired.json("stats")
    assert stats["agent_search"]["searches"] == 1 and stats["agent_search"]["refused"] == 1
    assert stats["injection"]["totals"]["delivered_by_agent_search"] >= 1
    assert opening.result is not None
    assert len(hook_contexts(run.transcript(), "UserPromptSubmit")) == 2


def test_nothing_is_refused_twice_in_a_turn(
    claude: Claude, wired: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs
) -> None:
    wired.remember(ROUNDING_TITLE, "--kind", "decision")
    made = e2e_dirs.project / "billing" / "made.txt"
    server = model_server
    server.when(last_user_contains(SHIFT), _edit(e2e_dirs), times=1)
    # The agent does not search: it makes the refused edit again, then runs a command that writes a file.
    server.when(all_of(after_tool_call("Edit"), after_tool_result(REFUSAL_MARK)), _edit(e2e_dirs), times=1)
    server.when(after_tool_call("Edit"), Reply.bash(f"python3 -c \"open('{made}', 'w').write('x')\""), times=1)
    server.when(after_tool_call("Bash"), Reply.text("Switched the rounding."), times=1)

    run = claude.run(SHIFT)
    assert "ROUND_HALF_EVEN" in (e2e_dirs.project / "billing" / "rounding.py").read_text()
    assert made.exists()
    tool_calls = [r for r in _audit(wired, run.session_id) if r.get("event") == "PreToolUse"]
    assert [r["decision"] for r in tool_calls].count("refused") == 1, tool_calls
    assert len(tool_calls) == 3
    shown = [tail_text(body) for body in run.main_requests]
    assert sum(REFUSAL_MARK in text for text in shown) == 1
