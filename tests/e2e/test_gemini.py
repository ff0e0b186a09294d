"""gate in the real Gemini CLI 0.61 (issue 45), against a scripted Gemini API server on 127.0.0.1, wired by
`gate install --agent gemini` (project scope: .gemini/settings.json through this machine's launcher):

- at a topic shift the recall context reaches the model with the prompt (BeforeAgent), and the turn's first
  edit (`replace`) is refused once, naming the search; after the agent's `gate search` the same edit applies;
- a fix turn is blocked at AfterAgent with the MEMORY CHECK, the agent runs the `gate remember` it names in
  Gemini's shell (gate not on its PATH: named by absolute path), the memory is stored, and the second AfterAgent
  passes, its outcome read from Gemini's chat recording as stored;
- the session-start index reaches the model, and a path's anchor with the result of the first read of it;
- a memory stored in a Gemini session is recalled in a Claude Code session of the same project;
- in the default approval mode, Gemini's policy engine runs gate's own commands by the policy file gate wrote
  (a headless run refuses any other shell command it would have to ask about).
No request leaves 127.0.0.1: a proxy trap records any, and each test asserts it saw none.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli, filled_remember_command
from gemini_harness import Gemini, ProxyTrap, locate_gemini
from gemini_server import JSON, GeminiServer, Turn, after_output, content_text, last_user_contains, request_text
from model_server import ModelServer, Reply
from model_server import last_user_contains as claude_user_contains
from model_server import tail_text as claude_tail_text

pytestmark = pytest.mark.e2e

CHECK_MARK = "MEMORY CHECK:"
RECALL_MARK = "MEMORY SEARCH REQUIRED"
REFUSAL_MARK = "MEMORY SEARCH FIRST"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # gate's venv is not on it: its messages name gate by path


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    try:
        return locate_gemini()
    except RuntimeError as error:
        pytest.fail(f"e2e: the Gemini CLI is not available: {error}", pytrace=False)


@pytest.fixture
def gemini_server() -> Iterator[GeminiServer]:
    with GeminiServer(default=Turn.text("OK.")) as server:
        yield server
    assert not server.errors, server.errors


@pytest.fixture
def trap() -> Iterator[ProxyTrap]:
    trap = ProxyTrap().start()
    yield trap
    trap.stop()
    assert trap.seen == [], f"the Gemini CLI tried to reach beyond 127.0.0.1: {trap.seen}"


@pytest.fixture
def gemini(gemini_bin: Path, e2e_dirs: E2EDirs, gemini_server: GeminiServer, gate: GateCli,
           trap: ProxyTrap) -> Gemini:
    runner = Gemini(gemini_bin, e2e_dirs.project, e2e_dirs.home, e2e_dirs.gate_home, gemini_server,
                    f"{Path(sys.executable).parent.parent / 'no-gate-here'}:{SYSTEM_PATH}", trap)
    gate.run("install", "--agent", "gemini", "--project", str(e2e_dirs.project))
    return runner


def _audit(gate: GateCli, session: str) -> list[JSON]:
    return [r for r in gate.audit() if r.get("session") == session]


def _shell(command: str) -> Turn:
    return Turn.call("run_shell_command", {"command": command, "description": "scripted"})


def _replace(path: str, old: str, new: str) -> Turn:
    return Turn.call("replace", {"file_path": path, "old_string": old, "new_string": new,
                                 "instruction": "scripted edit"})


def _test_run(marker: str, output: str, fails: bool) -> Turn:
    code = f"print({output!r})" + ("; raise SystemExit(1)" if fails else "")
    return _shell(f'python3 -c "{code}"  # {marker}')


def _shown(body: JSON) -> str:
    return html.unescape(request_text(body))  # Gemini escapes < and > in a hook's additionalContext


FIX = "The ledger totals are off by a cent, fix it."
CAUSE = "The cause was ROUND_UP in ledger_total(); I switched it to ROUND_HALF_EVEN and the tests pass now."
TITLE = "Ledger totals round half to even: ROUND_UP in ledger_total() was a cent off"


def _fix_turn(gemini: Gemini, server: GeminiServer, project: Path) -> tuple[str, dict[str, str]]:
    """A Gemini turn that fixes the ledger, confirms it with a test run, and answers the MEMORY CHECK by running
    the `gate remember` it names: the session id, and what the agent was shown and ran."""
    (project / "ledger.py").write_text("ROUNDING = 'ROUND_UP'\n")
    shown: dict[str, str] = {}

    def remember(body: JSON) -> Turn:
        shown["check"] = html.unescape(content_text(body["contents"][-1]))
        shown["request"] = html.unescape(request_text(body))
        command = filled_remember_command(shown["check"], TITLE, body="ledger_total() rounded up; tests pass now",
                                          cues="why are ledger totals a cent off")
        shown["command"] = command
        return _shell(command)

    server.when(last_user_contains(FIX), _test_run("fail-1", "1 failed, 11 passed", fails=True), times=1)
    server.when(after_output("1 failed"), _replace(str(project / "ledger.py"), "ROUNDING = 'ROUND_UP'",
                                                   "ROUNDING = 'ROUND_HALF_EVEN'"), times=1)
    server.when(after_output("ledger.py"), _test_run("pass-1", "12 passed in 0.4s", fails=False), times=1)
    server.when(after_output("12 passed"), Turn.text(CAUSE), times=1)
    server.when(last_user_contains(CHECK_MARK), remember, times=1)
    server.when(after_output(""), Turn.text("Stored the fix as a memory."), times=1)
    return gemini.run(FIX).session_id, shown


def test_a_fix_turn_is_blocked_at_after_agent_and_the_remember_it_names_stores_the_memory(
    gemini: Gemini, gemini_server: GeminiServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    session, shown = _fix_turn(gemini, gemini_server, e2e_dirs.project)

    assert "ROUND_HALF_EVEN" in (e2e_dirs.project / "ledger.py").read_text()
    stops = [r for r in _audit(gate, session) if r.get("event") == "Stop"]
    # 1. The fix turn is blocked once, with the MEMORY CHECK; the second AfterAgent (stop_hook_active) passes.
    assert [s["decision"] for s in stops][:1] == ["blocked"] and stops[0]["reason"] == "BLOCKED_WRITEBACK", stops
    assert len(stops) == 2 and stops[1]["decision"] != "blocked", stops
    assert all(s.get("agent") == "gemini" for s in stops)
    # Gemini's chat recording was read (gate/hosts/gemini/chat.py): the second end saw the `gate remember` run.
    assert stops[1].get("outcome") == "stored", stops[1]
    # The model's request after the block holds the reason once (the prompt Gemini makes of it), and nothing of
    # the hook's command (the committed one names the launcher and the marker) nor a set-up sentence.
    assert shown["request"].count(CHECK_MARK) == 1 and shown["check"].count(CHECK_MARK) == 1, shown["request"][-3000:]
    for echoed in ("# memory-gate", "memory-gate/hook", "not set up", "not installed"):
        assert echoed not in shown["request"], echoed
    # 2. The remember it named ran in Gemini's shell by absolute path (gate is not on the agent's PATH).
    words = shown["command"].split()
    assert Path(words[0]).is_absolute() and words[1] == "remember", shown["command"]
    found = gate.search("ledger totals a cent off")
    assert any(TITLE in str(hit) for hit in found["hits"]), found
    # 3. The memory says Gemini wrote it (GEMINI_CLI=1 in its shell; Gemini gives the shell no session id), and
    # `gate stats` counts it as Gemini's.
    writes = [r for r in gate.audit() if r.get("event") == "Remember"]
    assert [w["agent"] for w in writes] == ["gemini"], writes
    memory = gate.json("show", writes[0]["id"])
    assert (memory["title"], memory["agent"]) == (TITLE, "gemini"), memory
    assert gate.json("stats")["agents"]["gemini"]["written"] == 1
    # 4. `gate replay` reads the session's real chat recording (gate/replay/timeline.py) and blocks the fix turn.
    replay = gate.json("replay", stops[0]["transcript"])
    assert replay["unreadable"] == {} and replay["total"]["agents"] == {"gemini": 1}, replay
    assert replay["sessions"][0]["session"] == session and replay["sessions"][0]["blocks"] >= 1, replay["sessions"][0]


ROUNDING_TITLE = "Invoice totals round half to even (ROUND_HALF_EVEN): the finance team's rule for billing"
SHIFT = "Invoices come out a cent too high: switch the invoice rounding in billing/rounding.py to the finance rule."
AGENT_WORDS = "invoice rounding finance rule"


def test_recall_reaches_the_model_and_the_first_edit_of_a_shift_is_refused_until_the_agent_searches(
    gemini: Gemini, gemini_server: GeminiServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    memory_id = gate.remember(ROUNDING_TITLE, "--kind", "decision")
    rounding = e2e_dirs.project / "billing" / "rounding.py"
    rounding.parent.mkdir()
    rounding.write_text("ROUNDING = ROUND_HALF_UP\n")
    edit = _replace(str(rounding), "ROUNDING = ROUND_HALF_UP", "ROUNDING = 'ROUND_HALF_EVEN'")
    seen: dict[str, str] = {}

    def search(body: JSON) -> Turn:
        seen["refusal"] = _shown(body)
        named = re.findall(r"`([^`]*\ssearch) WORDS`", seen["refusal"])
        assert named, "no search command named in what the agent was shown"
        return _shell(f"{named[-1]} {AGENT_WORDS}")

    gemini_server.when(last_user_contains(SHIFT), edit, times=1)
    gemini_server.when(after_output(REFUSAL_MARK), search, times=1)
    gemini_server.when(after_output(ROUNDING_TITLE[:20]), edit, times=1)
    gemini_server.when(after_output(""), Turn.text("Switched the invoice rounding to ROUND_HALF_EVEN."), times=1)

    run = gemini.run(SHIFT, timeout=240)
    records = _audit(gate, run.session_id)

    # The recall context reached the model with the prompt (BeforeAgent's additionalContext).
    first = _shown(gemini_server.bodies()[0])
    assert RECALL_MARK in first and memory_id in first, first[-3000:]
    assert REFUSAL_MARK in seen["refusal"]
    tool_calls = [r for r in records if r.get("event") == "PreToolUse"]
    assert [r.get("search_first") for r in tool_calls if r.get("search_first")] == ["refused", "seen"], tool_calls
    assert [r["decision"] for r in tool_calls].count("refused") == 1
    assert all(r.get("agent") == "gemini" for r in records)
    # The refused edit did not apply; the one after the search did.
    assert "ROUND_HALF_EVEN" in rounding.read_text()


def test_the_session_start_index_reaches_the_model(
    gemini: Gemini, gemini_server: GeminiServer, gate: GateCli
) -> None:
    directive = "Always run the ledger tests with --strict before a commit"
    memory_id = gate.remember(directive, "--kind", "directive")
    run = gemini.run("What should I know before committing?")
    first = _shown(gemini_server.bodies()[0])
    assert directive in first and memory_id in first, first[-3000:]
    starts = [r for r in _audit(gate, run.session_id) if r.get("event") == "SessionStart"]
    assert starts and starts[0]["decision"] != "failed_open" and starts[0].get("agent") == "gemini", starts
    assert starts[0].get("source") == "startup"


def test_a_path_anchor_reaches_the_model_with_the_result_of_the_first_read(
    gemini: Gemini, gemini_server: GeminiServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    """BeforeTool takes no context; AfterTool's is appended to the call's result, so the gotcha anchored to a file
    comes back with the first read of it."""
    calc = e2e_dirs.project / "src" / "calc.py"
    calc.parent.mkdir()
    calc.write_text("def f(x):\n    return x\n")
    gotcha = "Auditors reconcile to the cent: keep half-even"
    body = "The quarterly audit fails on any drift"  # shown when the memory is delivered, not in the index
    memory_id = gate.remember(gotcha, "--kind", "finding", "--on", "path:src/calc.py", "--body", body)
    for title in ("Invoices are sent on the first business day of the month",  # what the prompt's recall finds
                  "Invoices sent late get a reminder after ten days", "Sent invoices are archived each quarter",
                  "Invoices are sent as PDF and as e-invoice XML"):
        gate.remember(title, "--kind", "decision")
    prompt = "When are invoices sent?"
    gemini_server.when(last_user_contains(prompt), Turn.call("read_file", {"file_path": str(calc)}), times=1)
    gemini_server.when(after_output(""), Turn.text("On the first business day."), times=1)
    run = gemini.run(prompt)
    assert body not in _shown(gemini_server.bodies()[0])  # anchored: it waits for the file
    result = _shown({"contents": [gemini_server.bodies()[1]["contents"][-1]]})
    assert "return x" in result and body in result and memory_id in result, result[-2000:]
    tools = [r for r in _audit(gate, run.session_id) if r.get("event") == "PreToolUse"]
    assert [r["reason"] for r in tools] == ["FIRED_PATH"], tools  # BeforeTool is not wired for reads


def test_a_memory_stored_in_a_gemini_session_is_recalled_in_a_claude_code_session(
    gemini: Gemini, gemini_server: GeminiServer, gate: GateCli, e2e_dirs: E2EDirs, claude: Claude,
    model_server: ModelServer,
) -> None:
    """One store for both agents: the fix a Gemini session stored comes back at a Claude Code prompt on it."""
    _fix_turn(gemini, gemini_server, e2e_dirs.project)
    gate.run("install", "--project", str(e2e_dirs.project))  # Claude Code wired too, in the same project
    question = "Why were the ledger totals a cent off last time?"
    model_server.when(claude_user_contains(question), Reply.text("ledger_total() rounded up."), times=1)
    run = claude.run(question)
    context = claude_tail_text(run.main_requests[0])
    assert TITLE in context, context[-3000:]
    prompts = [r for r in _audit(gate, run.session_id) if r.get("event") == "UserPromptSubmit"]
    assert prompts and "agent" not in prompts[0], prompts  # the Claude Code hook, not Gemini's


def test_geminis_policy_engine_runs_gates_own_commands_by_the_policy_file_gate_wrote(
    gemini: Gemini, gemini_server: GeminiServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    """In the default approval mode a headless run refuses a shell command the policy engine would ask about:
    gate's `search` runs by the rule `gate install --agent gemini` wrote, another command does not."""
    title = "Reports are generated nightly by the cron job in ops/cron.py"
    gate.remember(title, "--kind", "reference")
    script = str(Path(sys.executable).parent / "gate")
    (e2e_dirs.project / "keep.txt").write_text("kept\n")
    gemini_server.when(last_user_contains("When are reports made?"), _shell(f"{script} search reports nightly"),
                       times=1)
    gemini_server.when(after_output(title[:20]), _shell("rm keep.txt"), times=1)
    gemini_server.when(after_output(""), Turn.text("Nightly."), times=1)
    gemini.run("When are reports made?", approval="default")
    responses = [content_text(b["contents"][-1]) for b in gemini_server.bodies()[1:]]
    assert title[:20] in responses[0], responses  # gate search ran: its hits came back to the model
    assert (e2e_dirs.project / "keep.txt").is_file(), responses  # the other command was refused
    policy = json.dumps((e2e_dirs.home / ".gemini" / "policies" / "memory-gate.toml").read_text())
    assert "remember" in policy
