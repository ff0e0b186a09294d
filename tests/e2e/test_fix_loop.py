"""A debugging loop blocks at most once (issue 22), in the real Claude Code CLI against the scripted model: the
loop's first confirmed fix blocks; the next turn confirms a fix in the same file again and is not blocked but
reminded of at the next prompt; nothing loops. Asserted on the audit log and on what the model was shown."""

from __future__ import annotations

import pytest
from claude_harness import Claude, E2EDirs, GateCli, stop_feedback, stop_hook_overrides
from model_server import ModelServer, Reply, after_tool_call, last_user_contains, tail_contains, tail_text

pytestmark = pytest.mark.e2e

FIRST = "The ledger totals are off by a cent, fix it."
AGAIN = "Still off by a cent on refunds."
LATER = "Thanks. What does the ledger module export?"
FIRST_CAUSE = "The cause was ROUND_UP in ledger_total(); I switched it to ROUND_HALF_EVEN and the tests pass now."
AGAIN_CAUSE = "The cause was a second ROUND_UP in ledger_total(), in the refund branch; the tests pass now."
REMINDER_MARK = "MEMORY CHECK (your previous turn"
CHECK_MARK = "MEMORY CHECK:"


def run(marker: str, output: str, fails: bool) -> Reply:
    """A test run (a python program the write-back rules know as a run) that prints `output`."""
    code = f"print({output!r})" + ("; raise SystemExit(1)" if fails else "")
    return Reply.bash(f'python3 -c "{code}"  # {marker}', "Run the ledger tests")


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    return gate


def test_a_loop_that_confirms_a_fix_twice_blocks_once(
    claude: Claude, wired: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs
) -> None:
    ledger = str(e2e_dirs.project / "src" / "ledger.py")
    (e2e_dirs.project / "src").mkdir()
    (e2e_dirs.project / "src" / "ledger.py").write_text("ROUNDING = 'ROUND_UP'\n")
    server = model_server
    # Each turn: the run fails, the file is read and edited, the same run passes, the cause is stated — a fix the
    # turn itself confirmed. (Rules answer in the order added; `times=1` ones are used up by the first turn.)
    server.when(after_tool_call("Bash", "fail-"), Reply.tool("Read", {"file_path": ledger}))
    server.when(after_tool_call("Read"), Reply.tool("Edit", {"file_path": ledger, "old_string": "'ROUND_UP'",
                                                             "new_string": "'ROUND_HALF_EVEN'"}), times=1)
    server.when(after_tool_call("Read"), Reply.tool("Edit", {"file_path": ledger, "old_string": "ROUNDING =",
                                                             "new_string": "REFUNDS = ROUNDING =",}), times=1)
    server.when(after_tool_call("Edit"), run("pass-1", "12 passed in 0.4s", fails=False), times=1)
    server.when(after_tool_call("Edit"), run("pass-2", "12 passed in 0.4s", fails=False), times=1)
    server.when(after_tool_call("Bash", "pass-1"), Reply.text(FIRST_CAUSE))
    server.when(after_tool_call("Bash", "pass-2"), Reply.text(AGAIN_CAUSE))
    server.when(tail_contains(CHECK_MARK), Reply.text("Not worth storing yet: the refunds may still be off."))
    server.when(tail_contains(REMINDER_MARK), Reply.text("Not worth storing: the fix is in the diff. It exports "
                                                         "ledger_total()."))
    server.when(last_user_contains(FIRST), run("fail-1", "1 failed, 11 passed", fails=True), times=1)
    server.when(last_user_contains(AGAIN), run("fail-2", "1 failed, 11 passed", fails=True), times=1)
    server.when(last_user_contains(LATER), Reply.text("It exports ledger_total()."))
    session = claude.session([FIRST, AGAIN, LATER], timeout=300)
    first, again, later = session.turns

    stops = [r for r in wired.audit() if r.get("event") == "Stop" and r.get("session") == session.session_id]
    turn_ends = [s for s in stops if s["reason"] != "ALLOW_STOP_ACTIVE"]
    # 1. The loop's first confirmed fix blocks, once.
    assert turn_ends[0]["reason"] == "BLOCKED_WRITEBACK", turn_ends[0]
    assert "tool_fix" in turn_ends[0]["signals"], turn_ends[0]["signals"]
    # 2. The same fix confirmed again, in the same file: no second block, a reminder instead.
    assert turn_ends[1]["reason"] == "ALLOW_DEFERRED_SAME_FIX", turn_ends[1]
    assert turn_ends[1]["fix_guard"]["of"] == 1 and turn_ends[1]["fix_guard"]["by"] in ("files", "commands")
    assert not any(CHECK_MARK in tail_text(b) for b in again.main_requests)
    shown = tail_text(later.main_requests[0])
    assert REMINDER_MARK in shown and "second ROUND_UP" in shown
    # 3. Nothing loops: one block in the session, no override, the last answer given.
    assert len(stop_feedback(session.transcript())) == 1
    assert not stop_hook_overrides(session.transcript())
    assert [s["decision"] for s in stops].count("blocked") == 1
    assert later.result is not None and "ledger_total()" in later.result["result"]
    assert first.result is not None
