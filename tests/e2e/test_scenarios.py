"""The gates in the real Claude Code CLI (issue 5): each scenario asserts on what the model was shown (the
logged requests), on the transcript and on gate's audit log.

The gates are wired the way a user wires them: `gate install --project DIR` (the hook entry is
`<venv python> -m gate.hook`), or the plugin with `--plugin-dir`. The scripted model plays the agent: it
answers, calls tools, and reacts to what the hooks told it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from claude_harness import (
    STOP_CONTEXT,
    Claude,
    E2EDirs,
    GateCli,
    Turn,
    filled_remember_command,
    hook_contexts,
    stop_feedback,
    stop_hook_overrides,
)
from model_server import (
    JSON,
    ModelServer,
    Reply,
    after_tool_call,
    last_user_contains,
    tail_contains,
    tail_text,
)

pytestmark = pytest.mark.e2e

RECALL_MARK = "MEMORY SEARCH REQUIRED"
CHECK_MARK = "MEMORY CHECK:"
REPO_ROOT = Path(__file__).resolve().parents[2]

WATERFALL_TITLE = "Waterfall payments fill the reserve account before any distribution to noteholders"
WATERFALL_BODY = "The reserve trigger fires after 3 missed payments; see docs/waterfall.md."
WATERFALL_PROMPT = "How does the payment waterfall fill the reserve account when the trigger fires?"

FIX_PROMPT = "The reserve trigger test fails on the last day of the month, please fix it."
FIX_EXPLANATION = (
    "Fixed. The root cause was an off-by-one in the reserve trigger: it counted the current month as missed, "
    "so I changed the comparison from >= to > in trigger.py and the tests pass now."
)
STORED_TITLE = "Reserve trigger counts missed months strictly after the due date (off-by-one fixed in trigger.py)"


# --- helpers ------------------------------------------------------------------------------------------------


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    """gate's hooks merged into the temp project's .claude/settings.json, the way a user does it."""
    gate.run("install", "--project", str(e2e_dirs.project))
    settings = json.loads((e2e_dirs.project / ".claude" / "settings.json").read_text())
    assert {"UserPromptSubmit", "Stop", "SessionStart"} <= set(settings["hooks"])
    return gate


def audit(gate: GateCli, event: str | None = None, session: str | None = None) -> list[JSON]:
    records = gate.audit()
    if event is not None:
        records = [r for r in records if r.get("event") == event]
    if session is not None:
        records = [r for r in records if r.get("session") == session]
    return records


def first_shown(turn: Turn) -> str:
    """What arrived for the model with the turn's first request: the prompt and the hook contexts."""
    assert turn.main_requests, f"turn {turn.prompt!r} made no model request"
    return tail_text(turn.main_requests[0])


def feedback_requests(turn: Turn) -> list[JSON]:
    """The turn's requests that carried Stop hook feedback from the write-back gate."""
    return [b for b in turn.main_requests if f"{STOP_CONTEXT}{CHECK_MARK}" in tail_text(b)]


def remember_command(body: JSON) -> Reply:
    """The scripted agent obeys the MEMORY CHECK: it runs the exact `remember` command line the gate showed
    (so the test proves that command works in the agent's Bash tool as it is), filled in."""
    command = filled_remember_command(
        tail_text(body), STORED_TITLE, body="Covered by test_trigger.py.", cues="reserve trigger off by one day"
    )
    return Reply.bash(command, "Store the fix in memory")


def script_fix_turn(server: ModelServer) -> None:
    """A turn that fixes a bug and explains the cause (the write-back gate's evidence), storing nothing."""
    server.when(last_user_contains(FIX_PROMPT), Reply.bash("echo 'patched trigger.py: >= became >'"), times=1)
    server.when(after_tool_call("Bash", "patched trigger.py"), Reply.text(FIX_EXPLANATION))


# --- 1. recall ----------------------------------------------------------------------------------------------


def test_recall_injects_a_memory_on_topic_shift_once(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:
    memory_id = wired.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY, "--tag", "waterfall")
    run = claude.session(
        [
            "Set up structured logging with timestamps for the command line entry point.",
            WATERFALL_PROMPT,
            "And after the trigger fires, does the reserve account waterfall still pay noteholders?",
        ]
    )
    unrelated, shift, follow_up = run.turns
    # The session's first prompt is a new topic: nothing of the store matches it, so it delivers nothing, but it
    # asks for the agent's own search (issue 29: the agent's words reach what the prompt's do not).
    assert " search WORDS`" in first_shown(unrelated)  # (the memory stands in the session-start index: see below)
    shown = first_shown(shift)
    assert RECALL_MARK in shown
    assert memory_id in shown and WATERFALL_TITLE in shown
    assert RECALL_MARK not in first_shown(follow_up), "the same topic must not re-inject"
    assert memory_id not in first_shown(follow_up)

    contexts = hook_contexts(run.transcript(), "UserPromptSubmit")
    assert len(contexts) == 2 and memory_id not in contexts[0] and memory_id in contexts[1]

    recalls = audit(wired, "UserPromptSubmit", run.session_id)
    assert len(recalls) == 3, recalls
    assert recalls[0]["decision"] == "asked" and recalls[0]["delivered"] == []
    assert recalls[1]["decision"] == "fired" and recalls[1]["delivered"] == [memory_id]
    assert recalls[2]["decision"] == "skipped" and memory_id not in recalls[2].get("delivered", [])


# --- 2. write-back: stored ----------------------------------------------------------------------------------


def test_writeback_blocks_then_the_agent_stores(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:
    script_fix_turn(model_server)
    model_server.when(tail_contains(CHECK_MARK), remember_command, times=1)
    model_server.when(after_tool_call("Bash", " remember "), Reply.text("Stored the fix as a memory."))
    run = claude.run(FIX_PROMPT)
    [turn] = run.turns

    [blocked] = feedback_requests(turn)
    reason = tail_text(blocked)
    assert "a fix" in reason and "root cause" in reason.lower()
    assert run.result["result"] == "Stored the fix as a memory."
    assert len(stop_feedback(run.transcript())) == 1

    results = [
        block
        for line in run.transcript()
        if line.get("type") == "user" and isinstance(line["message"].get("content"), list)
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert len(results) == 2 and not any(r.get("is_error") for r in results), results
    hits = wired.search("reserve trigger off-by-one")["hits"]
    assert [h["title"] for h in hits][:1] == [STORED_TITLE]
    stored = wired.json("show", hits[0]["id"])
    assert stored["id"] in json.dumps(results[1]["content"]), "the agent saw the new id"
    assert stored["kind"] == "fix"
    # written in Claude Code's Bash tool: the memory and the audit name the agent and the session (issue 45)
    assert (stored["agent"], stored["session"]) == ("claude-code", run.session_id), stored
    assert [r["id"] for r in audit(wired, "Remember", run.session_id)] == [stored["id"]]

    stops = audit(wired, "Stop", run.session_id)
    assert [s["decision"] for s in stops] == ["blocked", "allowed"], stops
    assert stops[0]["reason"] == "BLOCKED_WRITEBACK"
    assert stops[1]["outcome"] == "stored"


# --- 3. write-back: acknowledged ----------------------------------------------------------------------------


def test_writeback_acknowledged_when_already_saved(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:
    script_fix_turn(model_server)
    model_server.when(tail_contains(CHECK_MARK), Reply.text("That fix is already saved in memory."))
    run = claude.run(FIX_PROMPT)
    [turn] = run.turns
    assert len(feedback_requests(turn)) == 1
    assert run.result["result"] == "That fix is already saved in memory."
    assert wired.json("list")["memories"] == [], "acknowledging stores nothing"

    stops = audit(wired, "Stop", run.session_id)
    assert [s["decision"] for s in stops] == ["blocked", "allowed"], stops
    assert stops[1]["outcome"] == "acknowledged"


# --- 4. write-back cap --------------------------------------------------------------------------------------


def test_writeback_never_blocks_more_than_the_cap(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:
    turns = 8
    cap = 5  # the default writeback_cap
    prompts = [f"Task {i}: the reserve trigger test {i} fails again, please fix it." for i in range(turns)]
    for i, prompt in enumerate(prompts):
        model_server.when(last_user_contains(prompt), Reply.bash(f"echo 'patched module{i}.py'"), times=1)
        model_server.when(
            after_tool_call("Bash", f"patched module{i}.py"),
            Reply.text(f"Fixed. The root cause was a stale cache key in module{i}.py, so I rebuilt it per call."),
        )
    # The agent ignores every MEMORY CHECK: each turn stays consequential and the gate keeps its cap.
    model_server.when(tail_contains(CHECK_MARK), Reply.text("Moving on to the next task."))
    run = claude.session(prompts, timeout=300)

    per_turn = [len(feedback_requests(t)) for t in run.turns]
    assert all(n <= 1 for n in per_turn), per_turn
    assert sum(per_turn) == cap, per_turn
    transcript = run.transcript()
    assert not stop_hook_overrides(transcript), "Claude Code had to override a Stop hook"
    assert len(stop_feedback(transcript)) == cap

    stops = audit(wired, "Stop", run.session_id)
    reasons = [s["reason"] for s in stops]
    assert reasons.count("BLOCKED_WRITEBACK") == cap, reasons
    assert reasons.count("ALLOW_CAPPED") == turns - cap, reasons
    assert [s["outcome"] for s in stops if s.get("outcome")] == ["ignored"] * cap


# --- 5. compaction ------------------------------------------------------------------------------------------


def test_compaction_reinjects_directives_and_rearms_recall(
    claude: Claude, wired: GateCli, model_server: ModelServer
) -> None:
    directive = "Always run the reserve reconciliation script before tagging a release"
    directive_id = wired.remember(directive, "--kind", "directive")
    memory_id = wired.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)

    first = claude.run(WATERFALL_PROMPT)
    sid = first.session_id
    shown = first_shown(first.turns[0])
    assert directive_id in shown and directive in shown, "SessionStart(startup) delivers directives"
    assert RECALL_MARK in shown and memory_id in shown

    claude.run("/compact", resume=sid)
    after = claude.run("Back to the reserve account waterfall: what happens when the trigger fires?", resume=sid)
    shown_after = first_shown(after.turns[0])
    assert "re-injected after compaction" in shown_after
    assert directive_id in shown_after and directive in shown_after
    assert RECALL_MARK in shown_after and memory_id in shown_after, "recall re-armed by compaction"
    assert "remember the waterfall" not in shown_after

    compact_starts = [r for r in audit(wired, "SessionStart", sid) if r.get("source") == "compact"]
    assert len(compact_starts) == 1, audit(wired, "SessionStart", sid)
    assert compact_starts[0]["decision"] == "fired" and compact_starts[0]["delivered"] == [directive_id]
    delivered = [r for r in audit(wired, "UserPromptSubmit", sid) if memory_id in r.get("delivered", [])]
    assert len(delivered) == 2, delivered


# --- 6. fail open -------------------------------------------------------------------------------------------


def test_broken_store_fails_open(claude: Claude, wired: GateCli, model_server: ModelServer) -> None:
    memory_id = wired.remember(WATERFALL_TITLE, "--kind", "decision")
    # Break the store's index: a plain file where its directory must be. (The memory files themselves are
    # read defensively — a missing or corrupt one is skipped, not fatal — so the index is what can fail.)
    [index] = list(wired.gate_home.glob("cache/index/*"))
    shutil.rmtree(index)
    index.write_text("not a directory\n")
    model_server.when(last_user_contains("reconciliation"), Reply.text("Run the reconciliation first."))
    model_server.when(last_user_contains("reserve account"), Reply.text("The reserve account is funded first."))

    run = claude.session([WATERFALL_PROMPT, "And which reconciliation report proves the reserve account balance?"])
    assert [t.result["result"] for t in run.turns if t.result] == [
        "The reserve account is funded first.",
        "Run the reconciliation first.",
    ]
    for turn in run.turns:
        shown = first_shown(turn)
        assert RECALL_MARK not in shown and memory_id not in shown
        assert "Traceback" not in shown and "UserPromptSubmit hook" not in shown  # no context, no error text
    assert not hook_contexts(run.transcript())

    errors = wired.error_log.read_text().splitlines() if wired.error_log.exists() else []
    # Every gate that needs the index failed (the recall gate on each prompt; session start may read it too),
    # each failure is one line in the error log and one failed_open record.
    failed = [r["event"] for r in wired.audit() if r.get("decision") == "failed_open"]
    assert failed.count("UserPromptSubmit") == 2 and set(failed) <= {"UserPromptSubmit", "SessionStart"}, failed
    assert [json.loads(line)["event"] for line in errors] == failed, errors
    # The other gates went on working.
    assert [r["decision"] for r in audit(wired, "Stop", run.session_id)] == ["allowed", "allowed"]


# --- 7. install, run, uninstall -----------------------------------------------------------------------------


ORIGINAL_SETTINGS = """{
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]
    }
}
"""


def test_install_run_uninstall_restores_settings(
    claude: Claude, gate: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs
) -> None:
    settings = e2e_dirs.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(ORIGINAL_SETTINGS)
    memory_id = gate.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)

    gate.run("install", "--project", str(e2e_dirs.project))
    assert settings.read_text() != ORIGINAL_SETTINGS
    wired_run = claude.run(WATERFALL_PROMPT)
    assert RECALL_MARK in first_shown(wired_run.turns[0]) and memory_id in first_shown(wired_run.turns[0])
    audited = len(gate.audit())
    assert audited > 0

    gate.run("uninstall", "--project", str(e2e_dirs.project))
    assert settings.read_text() == ORIGINAL_SETTINGS

    bare_run = claude.run(WATERFALL_PROMPT)  # a new session: the same prompt would fire if gate were wired
    shown = first_shown(bare_run.turns[0])
    assert RECALL_MARK not in shown and memory_id not in shown and "memory-gate" not in shown
    assert len(gate.audit()) == audited, "no hook ran after uninstall"


# --- the plugin ---------------------------------------------------------------------------------------------


def test_plugin_validates(claude: Claude) -> None:
    for target in (REPO_ROOT, REPO_ROOT / ".claude-plugin" / "plugin.json"):
        proc = claude.cli("plugin", "validate", str(target))
        assert proc.returncode == 0 and "Validation passed" in proc.stdout, proc.stdout + proc.stderr
        for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"):
            assert f"hooks: {event}" in proc.stdout, proc.stdout


def test_plugin_dir_wires_the_gates(
    claude: Claude, gate: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs, gate_python: Path
) -> None:
    """The plugin, loaded with --plugin-dir from the repo root, runs the same gates (the launcher uses
    GATE_PYTHON, so no environment is built and nothing is fetched)."""
    memory_id = gate.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)
    claude.env_extra["GATE_PYTHON"] = str(gate_python)
    script_fix_turn(model_server)
    model_server.when(tail_contains(CHECK_MARK), Reply.text("That fix is already saved in memory."))
    run = claude.session([WATERFALL_PROMPT, FIX_PROMPT], args=["--plugin-dir", str(REPO_ROOT)])
    recall, fix = run.turns
    assert RECALL_MARK in first_shown(recall) and memory_id in first_shown(recall)
    assert len(feedback_requests(fix)) == 1
    assert not (e2e_dirs.project / ".claude" / "settings.json").exists(), "nothing was installed"
    events = [(r["event"], r["decision"]) for r in gate.audit() if r.get("session") == run.session_id]
    assert ("UserPromptSubmit", "fired") in events and ("Stop", "blocked") in events, events
    assert not (REPO_ROOT / ".plugin-data").exists(), "the launcher wrote into the repo"
