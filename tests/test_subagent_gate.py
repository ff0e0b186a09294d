"""Subagents (issue 24), through the real entry point: memories written with `gate remember`, hook events shaped
as Claude Code 2.1.332 sends them (docs/subagents.md) fed to `python -m gate.hook`, the audit read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.paths import audit_log_file, error_log_file
from gate.session.ledger import read_ledger
from gate.session.transcript import read_turn
from gate.session.turn import subagent_report

GATE_BIN = Path(sys.executable).parent / "gate"
TASK = "Find out how the reserve account waterfall pays noteholders after the trigger fires."
WATERFALL = "Waterfall payments fill the reserve account before any distribution to noteholders"
DIRECTIVE = "Never push to the release branch without a signed tag"
GOTCHA = "Ledger rounding is half-even: use Decimal.quantize, never round()"


def remember(project: Path, title: str, *args: str) -> str:
    proc = subprocess.run(
        [str(GATE_BIN), "remember", title, *args, "--project", str(project), "--json"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["id"])


def hook(project: Path, name: str, session: str, transcript: Path | None = None, **fields: Any) -> dict[str, Any]:
    """One event in a fresh hook process; its answer ({} when silent). Exit status 0 always."""
    event = {"session_id": session, "transcript_path": str(transcript or project / "none.jsonl"),
             "cwd": str(project), "hook_event_name": name, **fields}
    proc = subprocess.run(
        [sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(), capture_output=True, timeout=60,
        env=dict(os.environ), cwd=project,
    )
    assert proc.returncode == 0
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def spawn(project: Path, session: str, task: str = TASK, agent_type: str = "general-purpose", **more: Any) -> dict:
    tool_input = {"description": "Explore the waterfall", "prompt": task, "subagent_type": agent_type, **more}
    return hook(project, "PreToolUse", session, tool_name="Agent", tool_input=tool_input, tool_use_id="toolu_s1")


def sub_read(project: Path, session: str, agent_id: str, path: str, transcript: Path | None = None) -> dict:
    return hook(project, "PreToolUse", session, transcript, tool_name="Read",
                tool_input={"file_path": str(project / path)}, agent_id=agent_id, agent_type="general-purpose",
                tool_use_id="toolu_r1")


def context(answer: dict[str, Any]) -> str:
    return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))


def audit(event: str | None = None) -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [r for r in records if event is None or r.get("event") == event]


def write_subagent_transcript(parent: Path, session: str, agent_id: str, prompt: str) -> Path:
    """Where 2.1.332 keeps a subagent's transcript, starting with its task prompt."""
    path = parent.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"parentUuid": None, "isSidechain": True, "agentId": agent_id, "type": "user", "sessionId": session,
            "message": {"role": "user", "content": prompt}}
    path.write_text(json.dumps(line) + "\n")
    return path


@pytest.fixture
def store(project: Path) -> dict[str, str]:
    (project / "src" / "payments").mkdir(parents=True)
    (project / "src" / "payments" / "ledger.py").write_text("ROUNDING = 'half-even'\n")
    return {
        "waterfall": remember(project, WATERFALL, "--kind", "decision", "--tag", "waterfall",
                              "--body", "The reserve trigger fires after 3 missed payments."),
        "directive": remember(project, DIRECTIVE, "--kind", "directive"),
        "gotcha": remember(project, GOTCHA, "--kind", "gotcha", "--path", "src/payments/**"),
    }


# --- the spawn -------------------------------------------------------------------------------------------------------
def test_spawn_appends_recall_and_directives_to_the_task(project: Path, store: dict[str, str]) -> None:
    answer = spawn(project, "s1")
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in specific and "additionalContext" not in specific  # the parent sees nothing
    updated = specific["updatedInput"]
    assert set(updated) == {"description", "prompt", "subagent_type"}  # the same input, the prompt extended
    assert updated["prompt"].startswith(TASK + "\n\n")
    assert store["waterfall"] in updated["prompt"] and WATERFALL in updated["prompt"]
    assert store["directive"] in updated["prompt"] and DIRECTIVE in updated["prompt"]
    [record] = audit("PreToolUse")
    assert record["gate"] == "subagent" and record["decision"] == "fired" and record["reason"] == "FIRED_SPAWN"
    assert set(record["delivered"]) == {store["waterfall"], store["directive"]}
    assert record["spawn"] is True and record["agent_type"] == "general-purpose"
    # Not delivered to the parent: its own recall may still bring the same memory.
    ledger = read_ledger("s1")
    assert ledger is not None and ledger.delivered == []


def test_spawn_uses_the_recall_floor_and_search(project: Path, store: dict[str, str]) -> None:
    answer = spawn(project, "s2", task="Tidy the README's formatting of the install section.")
    updated = answer["hookSpecificOutput"]["updatedInput"]["prompt"]  # directives still come
    assert store["waterfall"] not in updated and store["directive"] in updated
    assert audit("PreToolUse")[-1]["delivered"] == [store["directive"]]


def test_spawn_of_a_fork_repeats_nothing_the_parent_holds(project: Path, store: dict[str, str]) -> None:
    hook(project, "SessionStart", "s3", source="startup")  # the parent got the directive
    prompted = hook(project, "UserPromptSubmit", "s3", prompt="How does the reserve account waterfall pay out?")
    assert store["waterfall"] in context(prompted)
    assert spawn(project, "s3", agent_type="fork") == {}  # a fork inherits the parent's context
    assert audit("PreToolUse")[-1]["reason"] == "SKIP_NOTHING_FOR_TASK"
    fresh = spawn(project, "s3")  # a fresh agent gets it all, whatever the parent was shown
    assert store["waterfall"] in fresh["hookSpecificOutput"]["updatedInput"]["prompt"]


def test_spawn_without_a_task_or_muted_is_silent(project: Path, store: dict[str, str]) -> None:
    assert hook(project, "PreToolUse", "s4", tool_name="Agent", tool_input={"description": "x"}) == {}
    assert audit("PreToolUse")[-1]["reason"] == "SKIP_NO_TASK"
    assert subprocess.run([str(GATE_BIN), "mute", "--project", str(project)], capture_output=True,
                          env=dict(os.environ)).returncode == 0
    assert spawn(project, "s4") == {}
    assert audit("PreToolUse")[-1]["reason"] == "SKIP_MUTED"


def test_the_older_task_tool_is_a_spawn_too(project: Path, store: dict[str, str]) -> None:
    answer = hook(project, "PreToolUse", "s5", tool_name="Task",
                  tool_input={"description": "d", "prompt": TASK, "subagent_type": "Explore"})
    assert store["waterfall"] in answer["hookSpecificOutput"]["updatedInput"]["prompt"]
    assert audit("PreToolUse")[-1]["agent_type"] == "Explore"


# --- anchors inside a subagent ---------------------------------------------------------------------------------------
def test_subagent_anchors_have_a_ledger_of_their_own(project: Path, store: dict[str, str]) -> None:
    assert store["gotcha"] in context(hook(project, "PreToolUse", "s6", tool_name="Read",
                                           tool_input={"file_path": str(project / "src/payments/ledger.py")}))
    assert context(hook(project, "PreToolUse", "s6", tool_name="Read",
                        tool_input={"file_path": str(project / "src/payments/ledger.py")})) == ""  # parent: once
    first = sub_read(project, "s6", "a1f00d", "src/payments/ledger.py")
    assert store["gotcha"] in context(first)  # the parent had it; the subagent had not
    assert context(sub_read(project, "s6", "a1f00d", "src/payments/ledger.py")) == ""  # once per subagent
    assert store["gotcha"] in context(sub_read(project, "s6", "b2e11e", "src/payments/ledger.py"))  # another one
    records = [r for r in audit("PreToolUse") if r.get("agent_id")]
    assert [(r["agent_id"], r["decision"]) for r in records] == [
        ("a1f00d", "fired"), ("a1f00d", "skipped"), ("b2e11e", "fired")]
    assert all(r["agent_type"] == "general-purpose" for r in records)
    ledger = read_ledger("s6")
    assert ledger is not None and set(ledger.agents) == {"a1f00d", "b2e11e"}
    assert ledger.delivered == [store["gotcha"]]  # the parent's own, unchanged by the subagents


def test_what_the_spawn_delivered_is_not_repeated_inside_the_subagent(project: Path, store: dict[str, str]) -> None:
    task = "Check how src/payments/ledger.py rounds: ledger rounding, Decimal.quantize, half-even."
    parent = project / "parent-s7.jsonl"
    parent.write_text("")
    prompt = spawn(project, "s7", task=task)["hookSpecificOutput"]["updatedInput"]["prompt"]
    assert store["gotcha"] in prompt  # the search found the gotcha for the task
    write_subagent_transcript(parent, "s7", "c3d4", prompt)
    answer = sub_read(project, "s7", "c3d4", "src/payments/ledger.py", transcript=parent)
    assert context(answer) == ""  # the subagent holds it already: its first user message
    assert audit("PreToolUse")[-1]["reason"] == "SUPPRESSED_ALREADY_DELIVERED"
    ledger = read_ledger("s7")
    assert ledger is not None and ledger.spawns == {}  # claimed


def test_subagent_stop_never_answers(project: Path, store: dict[str, str]) -> None:
    for active in (False, True):
        answer = hook(project, "SubagentStop", "s8", agent_id="d5e6", agent_type="Explore", stop_hook_active=active,
                      last_assistant_message="Fixed: the root cause was an off-by-one in the trigger.",
                      agent_transcript_path=str(project / "agent-d5e6.jsonl"))
        assert answer == {}
    records = audit("SubagentStop")
    assert [r["decision"] for r in records] == ["allowed", "allowed"]
    assert records[0]["agent_id"] == "d5e6" and records[0]["agent_type"] == "Explore"
    assert not audit("Stop")  # the write-back gate never saw it


def test_subagent_stop_cannot_block_even_if_a_gate_answered(monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    from gate import hook as hook_module
    from gate.gates.base import HookContext, Outcome
    from gate.paths import ProjectPaths
    from gate.session.ledger import Ledger

    monkeypatch.setitem(hook_module.HANDLERS, "SubagentStop", "gate.gates.events.stop")
    ctx = HookContext({"hook_event_name": "SubagentStop"}, "SubagentStop", "s9", ProjectPaths.for_cwd(str(project)), {})
    monkeypatch.setattr("gate.gates.events.stop.handle",
                        lambda c, ledger: Outcome("blocked", "X", output={"decision": "block", "reason": "r"}))
    with pytest.raises(ValueError, match="may not answer"):
        hook_module.decide(ctx, Ledger(session="s9"))


# --- the subagent's report in the parent's turn ---------------------------------------------------------------------
FRAMED = (
    "  <tools-used-before-summary>Read</tools-used-before-summary>\n  \n[Subagent hand-back] The text below is the "
    "final report of a subagent. The report follows:\n  Fixed: the root cause was an off-by-one in trigger.py.\n"
    "  The tests pass now.\nagentId: a9a4 (use SendMessage with to: 'a9a4' to continue this agent)\n"
    "<usage>subagent_tokens: 9144</usage>"
)


def test_subagent_report_is_read_out_of_its_frame() -> None:
    assert subagent_report(FRAMED) == "Fixed: the root cause was an off-by-one in trigger.py.\nThe tests pass now."
    assert subagent_report("The cause was X.") == "The cause was X."
    assert subagent_report("Async agent launched successfully.\nagentId: a1") == ""


def test_the_report_counts_as_text_of_the_parents_turn(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Why does the trigger test fail?"}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Agent", "input": {"prompt": "find it", "description": "d"}}]}},
        {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "a subagent's own line"}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": FRAMED}]}]}},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": "The subagent found it."}]}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    turn = read_turn(str(path))
    assert turn.assistant_texts == [
        "Fixed: the root cause was an off-by-one in trigger.py.\nThe tests pass now.", "The subagent found it."]
    assert "off-by-one" in turn.text and "a subagent's own line" not in turn.text
    assert turn.prompt == "Why does the trigger test fail?"


# --- replay: the subagent transcripts a session kept ----------------------------------------------------------------
def _line(session: str, cwd: Path, entry: dict[str, Any], sidechain: bool = False) -> str:
    return json.dumps({"sessionId": session, "cwd": str(cwd), "isSidechain": sidechain, **entry}) + "\n"


def _use(use_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": use_id, "name": name, "input": tool_input}]}}


def _result(use_id: str, text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": use_id, "content": text}]}}


def recorded_session(tmp_path: Path, project: Path, meta: bool = True) -> Path:
    """A session as 2.1.332 keeps one: the parent reads the anchored file, spawns, and the subagent reads it too."""
    session = "5e551011-aaaa-bbbb-cccc-000000000024"
    anchored = str(project / "src/payments/ledger.py")
    parent = tmp_path / "sessions" / f"{session}.jsonl"
    parent.parent.mkdir(parents=True)
    parent.write_text("".join(_line(session, project, e) for e in [
        {"type": "user", "message": {"role": "user", "content": "Look at the payments ledger rounding."}},
        _use("toolu_r1", "Read", {"file_path": anchored}),
        _result("toolu_r1", "ROUNDING = 'half-even'"),
        _use("toolu_sp", "Agent", {"description": "d", "prompt": TASK, "subagent_type": "Explore"}),
        _result("toolu_sp", "The report follows:\n  The ledger rounds half-even.\nagentId: abc1"),
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
    ]))
    folder = parent.with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-abc1.jsonl").write_text("".join(_line(session, project, e, sidechain=True) for e in [
        {"type": "user", "message": {"role": "user", "content": TASK}},
        _use("toolu_s1", "Read", {"file_path": anchored}),
        _result("toolu_s1", "ROUNDING = 'half-even'"),
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "The ledger rounds half-even."}]}},
    ]))
    if meta:
        (folder / "agent-abc1.meta.json").write_text(json.dumps({"agentType": "Explore", "toolUseId": "toolu_sp"}))
    return parent


def test_timeline_replays_a_kept_subagent_after_its_spawn(tmp_path: Path, project: Path) -> None:
    from gate.replay.timeline import read_timeline

    timeline = read_timeline(str(recorded_session(tmp_path, project)))
    steps = [(s.name, s.event.get("tool_name"), s.event.get("agent_id")) for s in timeline.steps]
    assert steps == [
        ("SessionStart", None, None), ("UserPromptSubmit", None, None), ("PreToolUse", "Read", None),
        ("PreToolUse", "Agent", None), ("PreToolUse", "Read", "abc1"), ("SubagentStop", None, "abc1"),
        ("Stop", None, None),
    ]
    assert timeline.subagents == 1
    stop = timeline.steps[5].event
    assert stop["agent_type"] == "Explore" and stop["last_assistant_message"] == "The ledger rounds half-even."
    without_meta = read_timeline(str(recorded_session(tmp_path / "bare", project, meta=False)))
    assert without_meta.subagents == 0 and all(not s.event.get("agent_id") for s in without_meta.steps)


def test_gate_replay_decides_the_subagents_steps(tmp_path: Path, project: Path, store: dict[str, str]) -> None:
    path = recorded_session(tmp_path, project)
    proc = subprocess.run([str(GATE_BIN), "replay", str(path), "--json", "--steps", "--project", str(project)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    [session] = json.loads(proc.stdout)["sessions"]
    steps = session["steps"]
    parent_read, spawn_step, sub_read_step = [s for s in steps if s["event"] == "PreToolUse"]
    # The parent had the gotcha already (its prompt's recall); the subagent gets it on its own read all the same.
    assert store["gotcha"] in next(s for s in steps if s["event"] == "UserPromptSubmit")["delivered"]
    assert parent_read["reason"] == "SUPPRESSED_ALREADY_DELIVERED" and "agent_id" not in parent_read
    assert (sub_read_step["agent_id"], sub_read_step["decision"]) == ("abc1", "fired")
    assert sub_read_step["delivered"] == [store["gotcha"]]
    assert spawn_step.get("spawn") is True
    assert store["waterfall"] in spawn_step["delivered"] and store["directive"] in spawn_step["delivered"]
    assert [s["decision"] for s in steps if s["event"] == "SubagentStop"] == ["allowed"]
    assert not (path.parent / "subagents").exists()  # only the session's own folder holds them


# --- stats and trace show subagent deliveries apart -----------------------------------------------------------------
def gate_json(project: Path, *args: str) -> Any:
    proc = subprocess.run([str(GATE_BIN), *args, "--project", str(project), "--json"], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def gate_text(project: Path, *args: str) -> str:
    proc = subprocess.run([str(GATE_BIN), *args, "--project", str(project)], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_stats_and_trace_keep_subagent_deliveries_apart(project: Path, store: dict[str, str]) -> None:
    hook(project, "UserPromptSubmit", "s10", prompt="Tidy the README's formatting of the install section.")
    spawn(project, "s10")
    sub_read(project, "s10", "e7f8", "src/payments/ledger.py")
    hook(project, "SubagentStop", "s10", agent_id="e7f8", agent_type="general-purpose", stop_hook_active=False)

    report = gate_json(project, "stats")
    subagents = report["subagents"]
    assert (subagents["spawns"], subagents["spawns_fired"], subagents["delivered_at_spawn"]) == (1, 1, 2)
    assert (subagents["subagents_seen"], subagents["tool_calls"], subagents["anchor_fires"]) == (1, 1, 1)
    assert (subagents["delivered_by_anchors"], subagents["ended"], subagents["blocked"]) == (1, 1, 0)
    assert subagents["by_type"] == {"general-purpose": 1}
    # The main conversation's figures hold none of it.
    gates = report["injection"]["gates"]
    assert "subagent" not in gates and gates.get("anchors", {}).get("delivered", 0) == 0
    assert report["injection"]["totals"]["delivered"] == 0
    assert "Subagents (apart): 1 spawned → 1 given memory for their task (2 memories)" in gate_text(project, "stats")

    trace = gate_json(project, "trace", "--session", "s10")
    spawned = next(e for e in trace["evaluations"] if e.get("spawn"))
    assert {d["id"] for d in spawned["recall"]["delivered"]} == {store["waterfall"], store["directive"]}
    assert spawned["recall"]["search"]["candidates"][0]["id"] == store["waterfall"]
    inside = next(e for e in trace["evaluations"] if e.get("agent_id") == "e7f8" and e["event"] == "PreToolUse")
    assert inside["delivered"] == [{"id": store["gotcha"], "title": GOTCHA}]
    text = gate_text(project, "trace", "--session", "s10")
    assert "[spawn: a general-purpose subagent's task]" in text
    assert "[inside subagent e7f8 (general-purpose)]" in text


def test_a_directive_cued_elsewhere_waits_for_its_cue(project: Path, store: dict[str, str]) -> None:
    only_on_deploys = remember(project, "Deploys go out on Tuesdays only, after the freeze review", "--kind",
                               "directive", "--on", "command:deploy")
    prompt = spawn(project, "s11")["hookSpecificOutput"]["updatedInput"]["prompt"]
    assert store["directive"] in prompt and only_on_deploys not in prompt


# --- the hot path -----------------------------------------------------------------------------------------------------
def test_subagent_events_import_only_what_they_need(project: Path, store: dict[str, str]) -> None:
    from test_hot_path import ALLOWED_THIRD_PARTY, FORBIDDEN, SLOW_STDLIB, hook_modules

    base = {"session_id": "hot", "transcript_path": "", "cwd": str(project)}
    spawn_event = {**base, "hook_event_name": "PreToolUse", "tool_name": "Agent",
                   "tool_input": {"description": "d", "prompt": TASK, "subagent_type": "Explore"}}
    inside = {**base, "hook_event_name": "PreToolUse", "tool_name": "Read",
              "tool_input": {"file_path": str(project / "README.md")}, "agent_id": "f00d", "agent_type": "Explore"}
    stop = {**base, "hook_event_name": "SubagentStop", "agent_id": "f00d", "agent_type": "Explore",
            "stop_hook_active": False}
    env = dict(os.environ)
    for event in (spawn_event, inside, stop):
        hook_modules(event, env)  # the first of its kind may parse its rules
        modules = hook_modules(event, env)
        loaded = {m.split(".")[0] for m in modules}
        assert not loaded & set(FORBIDDEN)
        third_party = {m for m in loaded if m not in set(sys.stdlib_module_names) and not m.startswith("_")
                       and m not in ALLOWED_THIRD_PARTY}
        assert not third_party, sorted(third_party)
        slow = {m for m in modules if m.split(".")[0] in SLOW_STDLIB or m in SLOW_STDLIB}
        if "tantivy" in modules:
            slow -= {"datetime", "_datetime"}  # tantivy's own import; only a search loads it
        assert not slow, (event["hook_event_name"], sorted(slow))
        if event is not spawn_event:  # only a spawn searches: the rest pay for no recall
            searching = modules & {"gate.gates.recall.fire", "gate.memory.search", "tantivy", "gate.gates.recall.topic"}
            assert not searching, (event["hook_event_name"], sorted(searching))
    assert {"gate.gates.recall.fire", "gate.memory.search"} <= hook_modules(spawn_event, env)


def test_bad_subagent_fields_fail_safe(project: Path, store: dict[str, str]) -> None:
    # an agent_id that is no string is the main conversation's call; a transcript path that is a FIFO is not read
    assert store["gotcha"] in context(hook(project, "PreToolUse", "s12", tool_name="Read", agent_id=7,
                                           tool_input={"file_path": str(project / "src/payments/ledger.py")}))
    fifo = project / "agent-fifo.jsonl"
    os.mkfifo(fifo)
    assert hook(project, "SubagentStop", "s12", agent_id="a9", agent_type="x", agent_transcript_path=str(fifo)) == {}
    assert audit("SubagentStop")[-1]["decision"] == "allowed"
    errors = Path(error_log_file())
    assert not errors.exists() or not errors.read_text().strip()  # nothing failed open
    ledger = read_ledger("s12")
    assert ledger is not None and set(ledger.agents) == {"a9"}


def test_delivery_scores_count_only_what_reached_the_main_conversation() -> None:
    from gate.gates.base import Outcome
    from gate.replay.engine import SessionRun, StepResult
    from gate.replay.labels import Labels, score
    from gate.replay.timeline import Step, Timeline

    def result(name: str, line: int, outcome: Outcome) -> StepResult:
        return StepResult(Step({"hook_event_name": name}, line, 0, line), outcome)

    spawned = Outcome("fired", "FIRED_SPAWN", delivered=["m-x"], extra={"spawn": True})
    inside = Outcome("fired", "FIRED_PATH", delivered=["m-y"], extra={"agent_id": "a1"})
    results = [result("UserPromptSubmit", 1, Outcome("skipped", "SKIP_NO_HITS")), result("PreToolUse", 2, spawned),
               result("PreToolUse", 2, inside), result("UserPromptSubmit", 5, Outcome("skipped", "SKIP_NO_SHIFT"))]
    labels = Labels()
    labels.memories[("t.jsonl", 5)] = ["m-x", "m-y"]
    figures = score(labels, {"t.jsonl": SessionRun(Timeline("t.jsonl"), results)})["delivery"]
    assert (figures["expected"], figures["reached"]) == (2, 0)  # the subagent had them; the parent never did


# --- promises of issue 32 item 8 -------------------------------------------------------------------------------------
ROUNDING_TASK = "Check how src/payments/ledger.py rounds: ledger rounding, Decimal.quantize, half-even."


def test_two_pending_spawns_of_one_type_are_not_guessed_between(project: Path, store: dict[str, str]) -> None:
    """The type fallback claims a spawn only when it is the one pending of that type: with two, a subagent whose
    transcript names neither claims nothing, so its gotcha still reaches it."""
    for task in (ROUNDING_TASK, ROUNDING_TASK + " Then list the callers."):
        assert store["gotcha"] in spawn(project, "s20", task=task)["hookSpecificOutput"]["updatedInput"]["prompt"]
    answer = sub_read(project, "s20", "e7f8", "src/payments/ledger.py")  # no transcript of its own
    assert store["gotcha"] in context(answer)
    ledger = read_ledger("s20")
    assert ledger is not None and len(ledger.spawns) == 2  # neither was claimed


def test_recall_off_holds_for_a_spawns_search(project: Path, store: dict[str, str]) -> None:
    event = {"session_id": "s21", "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
             "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_use_id": "toolu_s1",
             "tool_input": {"description": "d", "prompt": TASK, "subagent_type": "general-purpose"}}
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(), capture_output=True,
                          timeout=60, env={**os.environ, "GATE_RECALL": "off"}, cwd=project)
    assert proc.returncode == 0 and proc.stdout.strip() == b""
    assert audit("PreToolUse")[-1]["reason"] == "SKIP_MUTED"
    assert store["waterfall"] in spawn(project, "s21")["hookSpecificOutput"]["updatedInput"]["prompt"]  # on: it comes


def test_a_session_mute_holds_for_a_spawn_and_inside_the_subagent(project: Path, store: dict[str, str]) -> None:
    hook(project, "SessionStart", "s22", source="startup")  # the session's ledger exists
    assert subprocess.run([str(GATE_BIN), "mute", "--session", "s22", "--project", str(project)],
                          capture_output=True, env=dict(os.environ), cwd=project).returncode == 0
    assert spawn(project, "s22") == {}
    assert audit("PreToolUse")[-1]["reason"] == "SKIP_MUTED"
    assert context(sub_read(project, "s22", "f9a0", "src/payments/ledger.py")) == ""
    assert audit("PreToolUse")[-1]["reason"] == "SKIP_MUTED"
    assert store["gotcha"] in context(sub_read(project, "s23", "f9a0", "src/payments/ledger.py"))  # another session
