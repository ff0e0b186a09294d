"""Subagents get the memory too (issue 24), in the real Claude Code CLI against the scripted model.

The main agent spawns a subagent (the Agent tool) with a task about the reserve waterfall. gate appends the
memories for that task and the project's directives to the task prompt (PreToolUse `updatedInput`, the channel
measured to reach the subagent: docs/subagents.md), gives the subagent its own anchors ledger, and never
answers its SubagentStop. The scripted model tells a subagent's requests from the parent's by the subagent
mark 2.1.332 puts in the system prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli, Run, stop_hook_overrides
from model_server import (
    JSON,
    ModelServer,
    Reply,
    after_tool_call,
    first_user_text,
    has_replied,
    is_main_loop,
    is_subagent,
    last_user_contains,
    main_agent,
    request_text,
    subagent,
    tail_text,
)

pytestmark = pytest.mark.e2e

WATERFALL_TITLE = "Waterfall payments fill the reserve account before any distribution to noteholders"
DIRECTIVE_TITLE = "Never push to the release branch without a signed tag"
GOTCHA_TITLE = "Month boundaries in the schedule module are UTC: never use local dates there"
ANCHORED = "src/schedule/months.py"
PROMPT = "How does the reserve account waterfall pay noteholders? Have a subagent dig through the code."
TASK = "Find out how the reserve account waterfall fills the reserve and pays noteholders after the trigger fires."
SUB_REPORT = "The schedule code computes due dates; the payout order lives elsewhere."
SUBAGENT_INTRO = "MEMORY for this task (from memory-gate)"
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def wired(gate: GateCli, e2e_dirs: E2EDirs) -> GateCli:
    gate.run("install", "--project", str(e2e_dirs.project))
    settings = json.loads((e2e_dirs.project / ".claude" / "settings.json").read_text())
    assert "SubagentStop" in settings["hooks"]
    assert "Agent" in settings["hooks"]["PreToolUse"][0]["matcher"].split("|")
    return gate


@pytest.fixture
def memories(wired: GateCli, e2e_dirs: E2EDirs) -> dict[str, str]:
    (e2e_dirs.project / "src" / "schedule").mkdir(parents=True)
    (e2e_dirs.project / ANCHORED).write_text("def month_end(day):\n    return day\n")
    return {
        "waterfall": wired.remember(WATERFALL_TITLE, "--kind", "decision", "--tag", "waterfall",
                                    "--body", "The reserve trigger fires after 3 missed payments."),
        "directive": wired.remember(DIRECTIVE_TITLE, "--kind", "directive"),
        "gotcha": wired.remember(GOTCHA_TITLE, "--kind", "gotcha", "--path", "src/schedule/**"),
    }


def script(server: ModelServer, project: Path, background: bool) -> None:
    """Parent: reads the anchored file, spawns a subagent, answers. Subagent: reads the same file, reports."""
    anchored = str(project / ANCHORED)
    server.when(subagent(lambda b: not has_replied(b)), Reply.tool("Read", {"file_path": anchored}), name="sub-read")
    server.when(subagent(), Reply.text(SUB_REPORT), name="sub-report")
    server.when(main_agent(last_user_contains(PROMPT)), Reply.tool("Read", {"file_path": anchored}), times=1,
                name="parent-read")
    spawn = {"description": "Explore the waterfall", "prompt": TASK, "subagent_type": "general-purpose"}
    if not background:
        spawn["run_in_background"] = False
    server.when(main_agent(after_tool_call("Read")), Reply.tool("Agent", spawn), times=1, name="parent-spawn")
    server.when(main_agent(), Reply.text("The subagent looked at the schedule code."), name="parent-answer")


def subagent_requests(run: Run) -> list[JSON]:
    return [b for b in run.requests if is_main_loop(b) and is_subagent(b)]


def parent_requests(run: Run) -> list[JSON]:
    return [b for b in run.requests if is_main_loop(b) and not is_subagent(b)]


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_subagent_gets_the_memory_for_its_task(
    claude: Claude, memories: dict[str, str], wired: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs,
    background: bool,
) -> None:
    script(model_server, e2e_dirs.project, background)
    run = claude.run(PROMPT)
    subs = subagent_requests(run)
    assert subs, "the subagent made no model request"

    # The subagent's own first model request holds the memory about its task and the directives.
    first = subs[0]
    task = first_user_text(first)
    assert f"{TASK}\n\n{SUBAGENT_INTRO}" in task  # the task as the parent wrote it, then the memory
    assert memories["waterfall"] in task and WATERFALL_TITLE in task
    assert memories["directive"] in task and DIRECTIVE_TITLE in task
    assert GOTCHA_TITLE not in request_text(first)  # anchored, not on the task: it waits for the file

    # Its first read of the anchored file gets the gotcha, although the parent had it already.
    after_read = next(b for b in subs if "month_end" in tail_text(b))
    assert GOTCHA_TITLE in tail_text(after_read)
    parents = parent_requests(run)
    parent_read = next(b for b in parents if "month_end" in tail_text(b))
    assert GOTCHA_TITLE in tail_text(parent_read)

    # The parent's context holds each memory once (its own deliveries), and none of the subagent's delivery.
    final = request_text(parents[-1])
    assert SUBAGENT_INTRO not in final
    # its line in the session-start index, then its own recall on its prompt (issue 21: an index line does not
    # use up the full delivery) — and not a third time from the subagent's delivery
    assert final.count(WATERFALL_TITLE) == 2
    assert final.count(GOTCHA_TITLE) == 2  # its index line at session start, then its own read
    assert final.count(DIRECTIVE_TITLE) == 1  # its own session start
    if not background:
        assert SUB_REPORT in final  # the report came back as the Agent tool's result

    # The audit: the spawn and the subagent's tool calls apart, with agent id and type.
    records = wired.audit()
    [spawned] = [r for r in records if r.get("gate") == "subagent" and r.get("spawn")]
    assert spawned["decision"] == "fired"
    assert set(spawned["delivered"]) == {memories["waterfall"], memories["directive"]}
    inside = [r for r in records if r.get("event") == "PreToolUse" and r.get("agent_id")]
    assert [(r["decision"], r["delivered"]) for r in inside] == [("fired", [memories["gotcha"]])]
    agent_id = inside[0]["agent_id"]
    assert inside[0]["agent_type"] == "general-purpose"
    [stopped] = [r for r in records if r.get("event") == "SubagentStop"]
    assert stopped["decision"] == "allowed" and stopped["agent_id"] == agent_id
    assert Path(stopped["agent_transcript"]).name == f"agent-{agent_id}.jsonl"

    # Nothing looped and no hook blocked the subagent (nor, here, the parent).
    assert not stop_hook_overrides(run.transcript())
    assert not any(r.get("decision") == "blocked" for r in records)
    assert len(subs) == 2  # read, report: no continuation forced on it
    assert not wired.error_log.exists() or not wired.error_log.read_text().strip()


FIX_REPORT = (
    "Fixed. The root cause was an off-by-one in the reserve trigger: it counted the current month as missed, "
    "so I changed the comparison from >= to > in trigger.py and the tests pass now."
)


def test_what_the_subagent_settled_is_evidence_for_the_parents_stop(
    claude: Claude, wired: GateCli, model_server: ModelServer,
) -> None:
    """The subagent fixes a bug and says why; the parent only relays it. The parent's write-back gate weighs the
    report (the Agent tool's result) like its own words, and the subagent's own Stop is never blocked."""
    model_server.when(subagent(lambda b: not has_replied(b)), Reply.bash("echo 'patched trigger.py: >= became >'"),
                      name="sub-fix")
    model_server.when(subagent(), Reply.text(FIX_REPORT), name="sub-report")
    spawn = {"description": "Fix the trigger test", "prompt": "Fix the failing reserve trigger test in trigger.py.",
             "subagent_type": "general-purpose", "run_in_background": False}
    model_server.when(main_agent(lambda b: not has_replied(b)), Reply.tool("Agent", spawn), times=1)
    model_server.when(main_agent(), Reply.text("Done: the subagent fixed the trigger."), name="parent-answer")
    run = claude.run("The reserve trigger test fails on the last day of the month, please get it fixed.")
    records = wired.audit()
    [stopped] = [r for r in records if r.get("event") == "SubagentStop"]
    assert stopped["decision"] == "allowed"
    stops = [r for r in records if r.get("event") == "Stop"]
    assert stops and stops[0]["decision"] == "blocked", stops  # the parent had evidence: the subagent's report
    quotes = " ".join(stops[0].get("evidence_quotes", []))
    assert "root cause" in quotes or "off-by-one" in quotes, stops[0]
    assert not stop_hook_overrides(run.transcript())


def test_the_plugin_wires_the_spawn_and_the_subagent_stop(
    claude: Claude, gate: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs, gate_python: Path,
) -> None:
    """The plugin (hooks/hooks.json, loaded with --plugin-dir) gives a subagent the same memory."""
    memory_id = gate.remember(WATERFALL_TITLE, "--kind", "decision", "--tag", "waterfall")
    claude.env_extra["GATE_PYTHON"] = str(gate_python)
    script(model_server, e2e_dirs.project, background=False)
    (e2e_dirs.project / "src" / "schedule").mkdir(parents=True)
    (e2e_dirs.project / ANCHORED).write_text("def month_end(day):\n    return day\n")
    run = claude.run(PROMPT, args=["--plugin-dir", str(REPO_ROOT)])
    first = subagent_requests(run)[0]
    assert SUBAGENT_INTRO in first_user_text(first) and memory_id in first_user_text(first)
    assert not (e2e_dirs.project / ".claude" / "settings.json").exists(), "nothing was installed"
    events = [(r["event"], r["decision"]) for r in gate.audit()]
    assert ("SubagentStop", "allowed") in events and ("PreToolUse", "fired") in events, events


def test_replay_of_the_session_gives_the_subagents_audited_answers(
    claude: Claude, memories: dict[str, str], wired: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs,
) -> None:
    """`gate replay` finds the subagent's transcript the CLI kept beside the session's, and decides its steps
    as the live hooks did: the spawn, the subagent's own read, its SubagentStop — in order, same answers."""
    script(model_server, e2e_dirs.project, background=False)
    run = claude.run(PROMPT)
    kept = sorted(run.transcript_path.with_suffix("").glob("subagents/agent-*.jsonl"))
    assert len(kept) == 1
    live = [r for r in wired.audit() if r.get("session") == run.session_id]
    [session] = wired.json("replay", "--steps", str(run.transcript_path))["sessions"]

    def answers(records: list[JSON]) -> list[tuple[str, str, str, list[str], str]]:
        return [(r["event"], r["decision"], r["reason"], r.get("delivered", []), r.get("agent_id", ""))
                for r in records]

    assert answers(session["steps"]) == answers(live), json.dumps(
        {"live": answers(live), "replay": answers(session["steps"])}, indent=1)
    assert [r["event"] for r in live if r.get("agent_id")] == ["PreToolUse", "SubagentStop"]
