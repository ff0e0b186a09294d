"""The committed hook commands and the session start in the real CLI (issue 44): what the model reads after a
Stop block, what a teammate without gate is shown, and what a resumed session is given again.

Measured on Claude Code 2.1.332: after a `{"decision":"block"}` the model also reads "Stop hook blocking error from
command: "<the command>": <the reason>", so gate blocks with the Stop's additionalContext, which reaches it once and
without the command (gate.hook.claude_code_stop: the transcript says 2.1.332, at or past rules/writeback.toml
[claude_code] stop_context_since; an older CLI gets the block as decision/reason); a SessionStart `systemMessage` is
shown to the user ("SessionStart:startup says: …") and never reaches the model; `--resume SID` and `--continue` keep
the session id and fire SessionStart with source `resume`, the earlier context still in the conversation. The CLI
drops a SessionStart context identical to one the conversation already holds, so a second index reaches the model
once it differs in anything (a memory added or edited since, a date, a stale mark): that is the case tested.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_harness import STOP_CONTEXT, Claude, E2EDirs, GateCli, stop_feedback
from model_server import JSON, ModelServer, Reply, after_tool_call, last_user_contains, request_text, tail_contains

from gate.install import wiring

pytestmark = pytest.mark.e2e

FIX_PROMPT = "The reserve trigger test fails on the last day of the month, please fix it."
FIX_EXPLANATION = (
    "Fixed. The root cause was an off-by-one in the reserve trigger: it counted the current month as missed, "
    "so I changed the comparison from >= to > in trigger.py and the tests pass now."
)


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    """Project scope, as install.sh wires it: the committed commands, this machine's launcher under HOME."""
    gate.run("install", "--project", str(e2e_dirs.project))
    commands = {e.command for e in wiring.find_gate_entries(json.loads(
        (e2e_dirs.project / ".claude" / "settings.json").read_text()))}
    assert commands == {wiring.PORTABLE_COMMAND, wiring.PORTABLE_SESSION_START}
    return gate


def shown_text(bodies: list[JSON]) -> str:
    return "\n".join(request_text(b) for b in bodies)


@pytest.mark.parametrize("scope", ["project", "local"])
def test_after_a_stop_block_the_model_reads_the_reason_once_and_no_command(
    claude: Claude, gate: GateCli, e2e_dirs: E2EDirs, model_server: ModelServer, scope: str
) -> None:
    """The model's next request after the write-back gate's block holds the reason once, and nothing of the hook's
    command: with `{"decision":"block"}` the CLI also sent "Stop hook blocking error from command: "<the command>":
    <the reason>" (the reason twice, the command once), whatever the command (the committed one, project scope;
    this machine's interpreter, local scope)."""
    gate.run("install", "--scope", scope, "--project", str(e2e_dirs.project))
    model_server.when(last_user_contains(FIX_PROMPT), Reply.bash("echo 'patched trigger.py: >= became >'"), times=1)
    model_server.when(after_tool_call("Bash", "patched trigger.py"), Reply.text(FIX_EXPLANATION))
    model_server.when(tail_contains("MEMORY CHECK:"), Reply.text("Not worth keeping: the test covers it."))
    run = claude.run(FIX_PROMPT)
    after = [b for b in run.main_requests if "MEMORY CHECK:" in request_text(b)]
    assert after, shown_text(run.requests)[-3000:]
    shown = request_text(after[0])  # the model's next request after the block: the whole conversation
    (block,) = stop_feedback(run.transcript())  # as the transcript keeps it, whichever form the CLI was given
    reason = "MEMORY CHECK:" + block.split("MEMORY CHECK:", 1)[1]
    assert shown.count(reason) == 1 and shown.count("MEMORY CHECK:") == 1, shown[-3000:]
    assert f"{STOP_CONTEXT}{reason}" in shown
    for echoed in ("blocking error", "from command", wiring.MARKER, "memory-gate/hook", "-I -S -c", "not set up",
                   "install.sh"):
        assert echoed not in shown, (echoed, shown[-3000:])
    assert [r["reason"] for r in gate.audit() if r.get("event") == "Stop"] == ["BLOCKED_WRITEBACK", "ALLOW_STOP_ACTIVE"]
    assert run.result["result"] == "Not worth keeping: the test covers it."


def test_a_teammate_without_gate_is_shown_one_line_the_model_never_reads(
    claude_bin: Path, e2e_dirs: E2EDirs, wired: GateCli, model_server: ModelServer
) -> None:
    teammate = e2e_dirs.root / "teammate-home"
    teammate.mkdir()
    runner = Claude(claude_bin, e2e_dirs.project, teammate, model_server,
                    env_extra={"GATE_HOME": str(e2e_dirs.root / "teammate-gate")})
    run = runner.session(["How does the reserve account waterfall work?"], args=["--include-hook-events"])
    starts = [e for e in run.events if e.get("hook_event") == "SessionStart" and "output" in e]
    assert starts, [e.get("type") for e in run.events]
    (said,) = {json.loads(e["output"])["systemMessage"] for e in starts}
    assert said == wiring.NOT_INSTALLED and "README" in said
    assert all(e.get("exit_code", 0) == 0 for e in starts)
    shown = shown_text(run.requests)
    assert "memory-gate" not in shown and "not set up" not in shown  # shown to the user, not to the model
    assert run.result["result"] == "OK."


def test_a_resumed_session_is_not_given_the_index_it_already_holds(
    claude: Claude, wired: GateCli, model_server: ModelServer
) -> None:
    gotcha = wired.remember("Ledger amounts use banker's rounding, never float", "--kind", "gotcha")
    finding = wired.remember("Nightly reports read the replica, not the primary", "--kind", "finding")
    first = claude.run("Set up structured logging for the command line entry point.")
    sid = first.session_id
    assert first.main_requests and gotcha in request_text(first.main_requests[0])  # the index at startup

    resumed = claude.run("And add a timestamp to each line.", resume=sid)
    assert resumed.session_id == sid
    last = request_text(resumed.main_requests[-1])
    assert last.count(f"- {gotcha} ·") == 1 and last.count(f"- {finding} ·") == 1, "the index came again"

    # (with the store unchanged an index identical to the first is dropped by the CLI itself; one memory more:)
    added = wired.remember("The staging server clock runs five minutes late", "--kind", "gotcha")
    continued = claude.run("Now log the request id too.", args=["--continue"])
    assert continued.session_id == sid
    last = request_text(continued.main_requests[-1])
    assert last.count(f"- {gotcha} ·") == 1, "the index came again on --continue"
    assert last.count(f"- {added} ·") == 1 and "session resumed" in last  # what is new since: once
    starts = [r for r in wired.audit() if r.get("event") == "SessionStart" and r.get("session") == sid]
    assert [(r.get("source"), r["reason"]) for r in starts] == [
        ("startup", "FIRED_SESSION_START"), ("resume", "SKIP_RESUMED_NOTHING_NEW"), ("resume", "FIRED_SESSION_START"),
    ], starts
