"""`gate replay` on a session that ran with the live hooks gives the answers the audit log recorded (issue 13).

One real CLI session: a prompt with nothing to recall, a topic shift that delivers a memory, a follow-up, a
fixed bug whose MEMORY CHECK the agent acknowledges (a block, then the Stop after it), and a second fix turn.
The replay of its transcript, against the same store, must give every hook event the same decision, reason and
delivered ids, in the same order, as the live hooks wrote to the audit log.
"""

from __future__ import annotations

import json

import pytest
from claude_harness import Claude, GateCli
from model_server import ModelServer, Reply, after_tool_call, last_user_contains, tail_contains
from test_scenarios import CHECK_MARK, WATERFALL_BODY, WATERFALL_PROMPT, WATERFALL_TITLE, audit, wired  # noqa: F401

pytestmark = pytest.mark.e2e

FIXES = [
    ("The reserve trigger test fails on the last day of the month, please fix it.",
     "Fixed. The root cause was an off-by-one in the reserve trigger: it counted the current month as missed."),
    ("The ledger export crashes on an empty account, please fix it.",
     "Fixed. The crash was caused by a division by the account count, which is zero for an empty account."),
]


def test_replay_gives_the_audited_answers(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:  # noqa: F811
    memory_id = wired.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)
    for i, (prompt, explanation) in enumerate(FIXES):
        model_server.when(last_user_contains(prompt), Reply.bash(f"echo 'patched module{i}.py'"), times=1)
        model_server.when(after_tool_call("Bash", f"patched module{i}.py"), Reply.text(explanation))
    model_server.when(tail_contains(CHECK_MARK), Reply.text("Nothing here worth storing beyond the code itself."))
    run = claude.session([
        "Set up structured logging with timestamps for the command line entry point.",
        WATERFALL_PROMPT,
        "And after the trigger fires, does the reserve account waterfall still pay noteholders?",
        FIXES[0][0],
        FIXES[1][0],
    ], timeout=300)
    run.check()

    live = [r for r in audit(wired) if r.get("session") == run.session_id]
    replayed = wired.json("replay", "--steps", str(run.transcript_path))
    [session] = replayed["sessions"]
    steps = session["steps"]

    def answers(records: list[dict]) -> list[tuple[str, str, str, list[str]]]:
        return [(r["event"], r["decision"], r["reason"], r.get("delivered", [])) for r in records]

    assert answers(steps) == answers(live), json.dumps({"live": answers(live), "replay": answers(steps)}, indent=1)
    # The scenario exercised what fidelity is about: a delivery, a block, and the Stop after the block.
    assert any(memory_id in r.get("delivered", []) for r in live if r["event"] == "UserPromptSubmit")
    reasons = [r["reason"] for r in live if r["event"] == "Stop"]
    assert reasons.count("BLOCKED_WRITEBACK") == 2 and "ALLOW_STOP_ACTIVE" in reasons, reasons
    assert session["fires"] == 1 and session["blocks"] == 2
