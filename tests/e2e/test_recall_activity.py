"""Recall from what the session is doing (issue 21), in the real Claude Code CLI against the scripted model:
a content-free prompt ("yes, do that") that answers a reply about X receives the memory about X, found through
the reply; a preference reaches session start though no prompt names it."""

from __future__ import annotations

import json

import pytest
from claude_harness import Claude, E2EDirs, GateCli, hook_contexts
from model_server import JSON, ModelServer, Reply, last_user_contains, tail_text

pytestmark = pytest.mark.e2e

RECALL_MARK = "MEMORY SEARCH REQUIRED"

WATERFALL_TITLE = "Waterfall payments fill the reserve account before any distribution to noteholders"
WATERFALL_BODY = "The reserve trigger fires after 3 missed payments; see docs/waterfall.md."
OTHER_TITLE = "Structured logging uses the JSON formatter with UTC timestamps in the command line entry point"
OPENING = "Look at the open issues in the tracker and tell me what to pick next."
REPLY_ABOUT_X = (
    "The most pressing one is the payment waterfall: when the reserve trigger fires, distributions to "
    "noteholders should wait until the reserve account is topped up. Shall I change the waterfall so the "
    "reserve account fills first?"
)
PREFERENCE = "Prefers small commits: one change per commit, with a message that says why"


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    settings = json.loads((e2e_dirs.project / ".claude" / "settings.json").read_text())
    assert {"UserPromptSubmit", "SessionStart"} <= set(settings["hooks"])
    return gate


def _audit(gate: GateCli, event: str, session: str) -> list[JSON]:
    return [r for r in gate.audit() if r.get("event") == event and r.get("session") == session]


def test_a_content_free_answer_receives_the_memory_its_reply_was_about(
    claude: Claude, wired: GateCli, model_server: ModelServer
) -> None:
    memory_id = wired.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)
    wired.remember(OTHER_TITLE, "--kind", "decision")
    model_server.when(last_user_contains(OPENING), Reply.text(REPLY_ABOUT_X), times=1)
    model_server.when(last_user_contains("yes, do that"), Reply.text("Done: the reserve account fills first."))

    run = claude.session([OPENING, "yes, do that"])
    opening, answer = run.turns
    # The opening names nothing of it: it delivers nothing (its context: below), and — a new topic — asks for the
    # agent's own search.
    assert " search WORDS`" in tail_text(opening.main_requests[0])
    shown = tail_text(answer.main_requests[0])
    assert RECALL_MARK in shown and memory_id in shown and WATERFALL_TITLE in shown, shown

    contexts = hook_contexts(run.transcript(), "UserPromptSubmit")
    assert len(contexts) == 2 and memory_id not in contexts[0], "the opening prompt names nothing of it"
    assert memory_id in contexts[1]
    prompts = _audit(wired, "UserPromptSubmit", run.session_id)
    assert [r["decision"] for r in prompts] == ["asked", "fired"], prompts
    # At session start it stood in the index (one line), which does not use up its full delivery now.
    [start] = _audit(wired, "SessionStart", run.session_id)
    assert memory_id in start["indexed"] and memory_id not in start["delivered"]
    assert prompts[1]["delivered"] == [memory_id], prompts[1]
    assert prompts[1]["query"]["content_free"] is True and prompts[1]["query"]["prompt"] == []
    assert "waterfal" in prompts[1]["query"]["reply"], prompts[1]["query"]  # found through the reply


def test_a_preference_reaches_session_start_unnamed(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:
    preference_id = wired.remember(PREFERENCE, "--kind", "preference")
    decision_id = wired.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)
    model_server.when(last_user_contains("logging"), Reply.text("Added the JSON formatter."))

    run = claude.run("Set up structured logging with timestamps for the command line entry point.")
    shown = tail_text(run.turns[0].main_requests[0])
    assert preference_id in shown and PREFERENCE in shown, shown
    # The other memory stands in the index as one line: there, but not counted as delivered.
    assert f"{decision_id} · decision" in shown

    [start] = _audit(wired, "SessionStart", run.session_id)
    assert start["decision"] == "fired" and start["delivered"] == [preference_id], start
    assert start["indexed"] == [decision_id]
