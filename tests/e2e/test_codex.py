"""gate in the real Codex CLI 0.171 (issue 45), against a scripted Responses API server on 127.0.0.1, wired by
`gate install --agent codex` (project scope: .codex/hooks.json through this machine's launcher):

- a fix turn is blocked at Stop with the MEMORY CHECK, the agent runs the `gate remember` it names in Codex's
  own shell (a login shell, `bash -lc`, whose PATH does not hold the hook's gate), the memory is stored, and the
  second Stop (stop_hook_active) passes;
- at a topic shift the turn's first apply_patch is refused once, naming the search; after the agent's
  `gate search` the same patch applies;
- the session-start index reaches the model, and again after a compaction;
- a memory stored in a Codex session is recalled in a Claude Code session of the same project;
- Codex's exec policy allows gate's own commands by the rules file gate wrote, and nothing else.
"""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli, filled_remember_command
from codex_harness import Codex, locate_codex, rollout_items
from model_server import ModelServer, Reply
from model_server import last_user_contains as claude_user_contains
from model_server import tail_text as claude_tail_text
from responses_server import (
    JSON,
    ResponsesServer,
    Turn,
    after_output,
    item_texts,
    last_user_contains,
    messages_of,
    request_text,
)

pytestmark = pytest.mark.e2e

CHECK_MARK = "MEMORY CHECK:"
RECALL_MARK = "MEMORY SEARCH REQUIRED"
REFUSAL_MARK = "MEMORY SEARCH FIRST"
# The login shell's PATH: /etc/profile resets it, so gate's venv (on the PATH Codex and its hooks start with)
# is not on the agent's.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    try:
        return locate_codex()
    except RuntimeError as error:
        pytest.fail(f"e2e: the Codex CLI is not available: {error}", pytrace=False)


@pytest.fixture
def responses() -> Iterator[ResponsesServer]:
    with ResponsesServer(default=Turn.text("OK.")) as server:
        yield server


@pytest.fixture
def codex(codex_bin: Path, e2e_dirs: E2EDirs, responses: ResponsesServer, gate: GateCli) -> Codex:
    # gate's venv first on the PATH Codex starts with, as for a user who activated it: the hook finds `gate`
    # there, the agent's login shell does not.
    path = f"{Path(sys.executable).parent}:{SYSTEM_PATH}"
    gate.run("install", "--agent", "codex", "--project", str(e2e_dirs.project))
    return Codex(codex_bin, e2e_dirs.project, e2e_dirs.home, e2e_dirs.gate_home, responses, path)


def _audit(gate: GateCli, session: str) -> list[JSON]:
    return [r for r in gate.audit() if r.get("session") == session]


def _shell(command: str) -> Turn:
    return Turn.call("exec_command", {"cmd": command})


def _patch(path: str, old: str, new: str) -> Turn:
    return Turn.custom("apply_patch", f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n")


def _test_run(marker: str, output: str, fails: bool) -> Turn:
    code = f"print({output!r})" + ("; raise SystemExit(1)" if fails else "")
    return _shell(f'python3 -c "{code}"  # {marker}')


FIX = "The ledger totals are off by a cent, fix it."
CAUSE = "The cause was ROUND_UP in ledger_total(); I switched it to ROUND_HALF_EVEN and the tests pass now."
TITLE = "Ledger totals round half to even: ROUND_UP in ledger_total() was a cent off"


def _fix_turn(codex: Codex, responses: ResponsesServer, e2e_dirs: E2EDirs) -> tuple[str, dict[str, str]]:
    """A Codex turn that fixes the ledger, confirms it with a test run, and answers the MEMORY CHECK by running
    the `gate remember` it names: the session id, and what the agent was shown and ran."""
    (e2e_dirs.project / "ledger.py").write_text("ROUNDING = 'ROUND_UP'\n")
    shown: dict[str, str] = {}

    def remember(body: JSON) -> Turn:
        shown["check"] = html.unescape(request_text(body))  # Codex escapes the hook's reason in <hook_prompt>
        command = filled_remember_command(shown["check"], TITLE, body="ledger_total() rounded up; tests pass now",
                                          cues="why are ledger totals a cent off")
        shown["command"] = command
        return _shell(command)

    responses.when(last_user_contains(FIX), _test_run("fail-1", "1 failed, 11 passed", fails=True), times=1)
    responses.when(after_output("1 failed"), _patch("ledger.py", "ROUNDING = 'ROUND_UP'",
                                                    "ROUNDING = 'ROUND_HALF_EVEN'"), times=1)
    responses.when(after_output("ledger.py"), _test_run("pass-1", "12 passed in 0.4s", fails=False), times=1)
    responses.when(after_output("12 passed"), Turn.text(CAUSE), times=1)
    responses.when(last_user_contains(CHECK_MARK), remember, times=1)
    responses.when(after_output(""), Turn.text("Stored the fix as a memory."), times=1)

    return codex.exec(FIX).session_id, shown


def test_a_fix_turn_is_blocked_at_stop_and_the_remember_it_names_runs_in_codex(
    codex: Codex, responses: ResponsesServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    session, shown = _fix_turn(codex, responses, e2e_dirs)

    assert "ROUND_HALF_EVEN" in (e2e_dirs.project / "ledger.py").read_text()
    stops = [r for r in _audit(gate, session) if r.get("event") == "Stop"]
    # 1. The fix turn is blocked once, with the MEMORY CHECK; the second Stop (stop_hook_active) passes.
    assert [s["decision"] for s in stops][:1] == ["blocked"] and stops[0]["reason"] == "BLOCKED_WRITEBACK", stops
    assert len(stops) == 2 and stops[1]["decision"] != "blocked", stops
    assert all(s.get("agent") == "codex" for s in stops)
    # The model's request after the block holds the reason once, and nothing of the hook's command (the committed
    # one names the launcher and the marker) nor the set-up sentence an earlier command carried.
    reason = CHECK_MARK + shown["check"].split(CHECK_MARK, 1)[1].split("</hook_prompt>", 1)[0]
    assert shown["check"].count(CHECK_MARK) == 1 and shown["check"].count(reason) == 1, shown["check"][-3000:]
    for echoed in ("# memory-gate", "memory-gate/hook", "not set up", "not installed"):
        assert echoed not in shown["check"], echoed
    # 2. The remember it named ran in Codex's own shell (bash -lc, gate not on its PATH): by absolute path, exit 0.
    outputs = [str(item["payload"].get("output")) for item in rollout_items(codex.codex_home, session)
               if item.get("type") == "response_item" and item["payload"].get("type") == "function_call_output"]
    assert "Process exited with code 0" in outputs[-1], outputs[-1]
    words = shlex.split(shown["command"])
    assert Path(words[0]).is_absolute() and words[1] == "remember", shown["command"]
    found = gate.search("ledger totals a cent off")
    assert any(TITLE in str(hit) for hit in found["hits"]), found
    # 3. The memory says Codex wrote it, in this session (CODEX_THREAD_ID in its shell is the hooks' session_id),
    # and `gate stats` counts it as Codex's.
    writes = [r for r in gate.audit() if r.get("event") == "Remember"]
    assert [(w["agent"], w["session"]) for w in writes] == [("codex", session)], writes
    memory = gate.json("show", writes[0]["id"])
    assert (memory["title"], memory["agent"], memory["session"]) == (TITLE, "codex", session), memory
    assert gate.json("stats")["agents"]["codex"]["written"] == 1


ROUNDING_TITLE = "Invoice totals round half to even (ROUND_HALF_EVEN): the finance team's rule for billing"
SHIFT = "Invoices come out a cent too high: switch the invoice rounding in billing/rounding.py to the finance rule."
AGENT_WORDS = "invoice rounding finance rule"


def test_the_first_apply_patch_of_a_shift_is_refused_until_the_agent_searches(
    codex: Codex, responses: ResponsesServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    memory_id = gate.remember(ROUNDING_TITLE, "--kind", "decision")
    (e2e_dirs.project / "billing").mkdir()
    (e2e_dirs.project / "billing" / "rounding.py").write_text("ROUNDING = ROUND_HALF_UP\n")
    patch = _patch("billing/rounding.py", "ROUNDING = ROUND_HALF_UP", "ROUNDING = 'ROUND_HALF_EVEN'")
    seen: dict[str, str] = {}

    def search(body: JSON) -> Turn:
        seen["refusal"] = request_text(body)
        named = re.findall(r"`([^`]*\ssearch) WORDS`", seen["refusal"])
        assert named, "no search command named in what the agent was shown"
        return _shell(f"{named[-1]} {AGENT_WORDS}")

    responses.when(last_user_contains(SHIFT), patch, times=1)
    responses.when(after_output(REFUSAL_MARK), search, times=1)
    responses.when(after_output(ROUNDING_TITLE[:20]), patch, times=1)
    responses.when(after_output(""), Turn.text("Switched the invoice rounding to ROUND_HALF_EVEN."), times=1)

    run = codex.exec(SHIFT, timeout=240)
    records = _audit(gate, run.session_id)

    first = responses.bodies()[0]
    developer = "\n".join(messages_of(first, "developer"))  # where Codex puts a hook's additionalContext
    assert RECALL_MARK in developer and memory_id in developer, developer[-2000:]
    assert REFUSAL_MARK in seen["refusal"]
    tool_calls = [r for r in records if r.get("event") == "PreToolUse"]
    assert [r.get("search_first") for r in tool_calls if r.get("search_first")] == ["refused", "seen"], tool_calls
    assert [r["decision"] for r in tool_calls].count("refused") == 1
    # The refused patch did not apply; the one after the search did.
    assert "ROUND_HALF_EVEN" in (e2e_dirs.project / "billing" / "rounding.py").read_text()


def test_the_session_start_index_reaches_the_model(
    codex: Codex, responses: ResponsesServer, gate: GateCli
) -> None:
    directive = "Always run the ledger tests with --strict before a commit"
    memory_id = gate.remember(directive, "--kind", "directive")
    run = codex.exec("What should I know before committing?")
    first = request_text(responses.bodies()[0])
    assert directive in first and memory_id in first, first[-3000:]
    starts = [r for r in _audit(gate, run.session_id) if r.get("event") == "SessionStart"]
    assert starts and starts[0]["decision"] != "failed_open" and starts[0].get("agent") == "codex", starts


def test_codexs_exec_policy_allows_gates_own_commands_and_nothing_else(
    codex: Codex, codex_bin: Path, e2e_dirs: E2EDirs
) -> None:
    """The allow rules `gate install --agent codex` wrote, as the real CLI's exec policy reads them."""
    rules = codex.codex_home / "rules" / "memory-gate.rules"
    script = str(Path(sys.executable).parent / "gate")

    def decision(*command: str) -> str:
        proc = subprocess.run([str(codex_bin), "execpolicy", "check", "--rules", str(rules), *command],
                              capture_output=True, text=True, timeout=60, env=codex.env, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        return str(json.loads(proc.stdout).get("decision"))

    for sub in ("search", "show", "remember", "verify"):
        assert decision(script, sub, "x") == "allow"
        assert decision("gate", sub, "x") == "allow"
    assert decision(script, "forget", "x") != "allow"
    assert decision("rm", "-rf", "x") != "allow"


def test_after_a_compaction_the_standing_memories_come_back(
    codex: Codex, responses: ResponsesServer, gate: GateCli
) -> None:
    """Codex compacts the context when a response reports more input tokens than its limit, then fires
    SessionStart with source "compact": the session-start gate delivers the standing memories again."""
    directive = "Always run the ledger tests with --strict before a commit"
    memory_id = gate.remember(directive, "--kind", "directive")
    codex.configure("model_auto_compact_token_limit = 1000")
    responses.input_tokens = 5000
    responses.when(last_user_contains("Check the ledger"), _shell("ls"), times=1)
    run = codex.exec("Check the ledger module, please.")
    starts = [r for r in _audit(gate, run.session_id) if r.get("event") == "SessionStart"]
    assert [r.get("source") for r in starts] == ["startup", "compact"], starts
    assert memory_id in str(starts[1].get("delivered")), starts[1]
    # The request after the compaction shows the directive again, as a developer message.
    after = responses.bodies()[-1]
    assert directive in "\n".join(messages_of(after, "developer")), request_text(after)[-3000:]


def test_a_memory_stored_in_a_codex_session_is_recalled_in_a_claude_code_session(
    codex: Codex, responses: ResponsesServer, gate: GateCli, e2e_dirs: E2EDirs, claude: Claude,
    model_server: ModelServer,
) -> None:
    """One store for both agents: the fix a Codex session stored comes back at a Claude Code prompt on it."""
    _fix_turn(codex, responses, e2e_dirs)
    gate.run("install", "--project", str(e2e_dirs.project))  # Claude Code wired too, in the same project
    question = "Why were the ledger totals a cent off last time?"
    model_server.when(claude_user_contains(question), Reply.text("ledger_total() rounded up."), times=1)
    run = claude.run(question)
    context = claude_tail_text(run.main_requests[0])
    assert TITLE in context, context[-3000:]
    prompts = [r for r in _audit(gate, run.session_id) if r.get("event") == "UserPromptSubmit"]
    assert prompts and "agent" not in prompts[0], prompts  # the Claude Code hook, not Codex's


# --- subagents, multi-file patches (issue 45) ------------------------------------------------------------------

MULTI_AGENT = "[features]\nmulti_agent_v2 = true"  # Codex 0.171's spawn_agent (namespace "collaboration")
CHILD_TASK = "Find out how the reserve account waterfall pays noteholders after the trigger fires."
WATERFALL = "Waterfall payments fill the reserve account before any distribution to noteholders"
SUBAGENT_MARK = "MEMORY for this task"  # rules/messages.toml [subagent] intro


def _collab(name: str, arguments: JSON) -> Turn:
    """A call of one of Codex's multi-agent tools, as the model names it: its namespace apart."""
    return Turn(({"type": "function_call", "name": name, "namespace": "collaboration",
                  "arguments": json.dumps(arguments)},))


def _child(body: JSON) -> bool:
    """A request of the spawned child: its task arrives as an agent_message (NEW_TASK), never as a user message."""
    return any(isinstance(item, dict) and item.get("type") == "agent_message"
               and "NEW_TASK" in "\n".join(item_texts(item)) for item in body.get("input") or [])


def test_a_subagent_gets_the_memories_for_its_task_at_subagent_start(
    codex: Codex, responses: ResponsesServer, gate: GateCli
) -> None:
    """The parent's spawn_agent holds the memories its task finds; the child's SubagentStart gives them to the
    child (a developer message in its first request), never to the parent."""
    memory_id = gate.remember(WATERFALL, "--kind", "decision", "--body", "The trigger fires after 3 missed payments.")
    codex.configure(MULTI_AGENT)
    spawn = _collab("spawn_agent", {"task_name": "waterfall_check", "message": CHILD_TASK, "fork_turns": "none"})
    responses.when(last_user_contains("Delegate"), spawn, times=1, name="spawn")
    responses.when(lambda body: _child(body) and not after_output("")(body), _shell("ls"), times=1, name="child")
    responses.when(lambda body: _child(body) and after_output("")(body), Turn.text("Checked: 3 missed payments."),
                   times=1, name="child-done")
    responses.when(after_output("waterfall_check"), _collab("wait_agent", {"timeout_ms": 60000}), times=1,
                   name="wait")
    run = codex.exec("Delegate the check to a helper agent, please.", timeout=240)

    bodies = responses.bodies()
    children = [b for b in bodies if _child(b)]
    parents = [b for b in bodies if not _child(b)]
    assert children and parents, [entry.rule for entry in responses.log]
    developer = "\n".join(messages_of(children[0], "developer"))
    assert WATERFALL in developer and memory_id in developer, developer[-3000:]
    # The parent never holds the child's block (its session-start index may list the memory's title).
    assert all(SUBAGENT_MARK not in request_text(b) for b in parents) and SUBAGENT_MARK in developer
    records = _audit(gate, run.session_id)
    [held] = [r for r in records if r.get("reason") == "HELD_FOR_SUBAGENT_START"]
    assert held["gate"] == "subagent" and memory_id in held["held"], held
    [start] = [r for r in records if r.get("event") == "SubagentStart"]
    assert start["decision"] == "fired" and memory_id in start["delivered"], start
    assert start["matched"] == "task_name" and start.get("agent") == "codex", start
    # The child's own tool call reached gate as the subagent's (agent_id), and was not refused.
    inside = [r for r in records if r.get("event") == "PreToolUse" and r.get("agent_id") == start["agent_id"]]
    assert inside and all(r["decision"] != "refused" for r in inside), records


def test_a_patch_of_two_files_brings_the_anchors_of_the_second(
    codex: Codex, responses: ResponsesServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    gotcha = "New billing modules register in billing/__init__.py or the scheduler never loads them"
    memory_id = gate.remember(gotcha, "--kind", "gotcha", "--path", "billing/**")
    (e2e_dirs.project / "ledger.py").write_text("ROUNDING = 'ROUND_UP'\n")
    patch = ("*** Begin Patch\n*** Update File: ledger.py\n@@\n-ROUNDING = 'ROUND_UP'\n+ROUNDING = 'ROUND_HALF_EVEN'\n"
             "*** Add File: billing/invoice.py\n+TOTAL = 0\n*** End Patch\n")
    responses.when(last_user_contains("Add the invoice module"), Turn.custom("apply_patch", patch), times=1)
    # A shift's first change may be refused once (the search first): the same patch again then applies.
    responses.when(after_output(REFUSAL_MARK), Turn.custom("apply_patch", patch), times=1)
    responses.when(after_output(""), Turn.text("Added."), times=1)
    run = codex.exec("Add the invoice module and fix the ledger rounding.")
    assert (e2e_dirs.project / "billing" / "invoice.py").is_file()
    bodies = responses.bodies()
    # The anchor comes as a developer message after the patch (beyond what the session start listed).
    before, after = "\n".join(messages_of(bodies[0], "developer")), "\n".join(messages_of(bodies[-1], "developer"))
    assert after.count(memory_id) > before.count(memory_id) and gotcha in after, after[-3000:]
    fired = [r for r in _audit(gate, run.session_id) if r.get("event") == "PreToolUse" and r["decision"] == "fired"]
    assert fired and memory_id in fired[0]["delivered"], fired


# --- MCP tools (issue 45) --------------------------------------------------------------------------------------

NOTES_SERVER = Path(__file__).with_name("mcp_notes_server.py")  # a stdio MCP server: write_note, read_note


def _mcp(name: str, arguments: JSON) -> Turn:
    """A call of the notes server's tool, as the model names it once tool_search has loaded it."""
    return Turn(({"type": "function_call", "name": name, "namespace": "mcp__notes",
                  "arguments": json.dumps(arguments)},))


def test_an_mcp_tool_that_writes_is_refused_first_at_a_shift_and_one_that_reads_is_not_hooked(
    codex: Codex, responses: ResponsesServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    """Codex 0.171 offers MCP tools behind tool_search; its hook names them mcp__SERVER__TOOL. gate's matcher
    selects the write-like names only (rules/triggers.toml [search_first] change_tools), and the first of them
    at a turn that owes a search is refused once, as an edit is."""
    gate.remember(ROUNDING_TITLE, "--kind", "decision")
    codex.configure(f'[mcp_servers.notes]\ncommand = "{sys.executable}"\nargs = ["{NOTES_SERVER}"]')
    search = Turn(({"type": "tool_search_call", "call_id": "ts_1", "execution": "client", "status": "completed",
                    "arguments": {"query": "notes"}},))
    write = _mcp("write_note", {"text": "invoice rounding: ROUND_HALF_EVEN"})
    responses.when(last_user_contains(SHIFT), search, times=1)
    responses.when(lambda body: (body.get("input") or [{}])[-1].get("type") == "tool_search_output",
                   _mcp("read_note", {}), times=1)
    responses.when(after_output("notes: none"), write, times=1)
    responses.when(after_output(REFUSAL_MARK), write, times=1)
    responses.when(after_output("written 1"), Turn.text("Noted."), times=1)
    run = codex.exec(SHIFT, timeout=240)

    outputs = [str(item["payload"].get("output")) for item in rollout_items(codex.codex_home, run.session_id)
               if item.get("type") == "response_item" and item["payload"].get("type") == "function_call_output"]
    assert "notes: none" in outputs[0] and REFUSAL_MARK in outputs[1] and "written 1" in outputs[2], outputs
    tool_calls = [r for r in _audit(gate, run.session_id) if r.get("event") == "PreToolUse"]
    # The read never reached gate (the matcher); the write was refused once, then ran.
    assert [(r["decision"], r.get("tool")) for r in tool_calls][:1] == [("refused", "mcp__notes__write_note")], \
        tool_calls
    assert len(tool_calls) == 2 and tool_calls[1]["decision"] != "refused", tool_calls
