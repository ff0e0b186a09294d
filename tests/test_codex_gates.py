"""The gates on Codex that its tools need read apart (issue 45): every file of a multi-file apply_patch, subagents
through SubagentStart, and MCP tools at PreToolUse. Events shaped as Codex CLI 0.171 sends them (seen from
`codex exec`; gate/hosts/codex/hook_io.py), each fed to a fresh `python -m gate.hook --agent codex`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_codex_host import SESSION, SHIFT, codex_event, run_codex_hook

from gate import hook as gate_hook
from gate.hosts.codex import hook_io
from gate.hosts.codex import install as codex_install
from gate.paths import audit_log_file
from gate.rules import load_rules

GOTCHA = "New billing modules register in src/billing/__init__.py or the scheduler never loads them"
WATERFALL = "Waterfall payments fill the reserve account before any distribution to noteholders"
DIRECTIVE = "Never push to the release branch without a signed tag"
TASK = "Find out how the reserve account waterfall pays noteholders after the trigger fires."
MULTI = ("*** Begin Patch\n*** Update File: src/ledger.py\n@@\n-a\n+b\n*** Add File: src/billing/invoice.py\n+x\n"
         "*** End Patch\n")


@pytest.fixture(autouse=True)
def _render_default() -> Any:
    from gate import render

    yield
    render.ABSOLUTE = False


def answer(event: dict[str, Any]) -> dict[str, Any]:
    out, code = run_codex_hook(event)
    assert code == 0
    return json.loads(out) if out.strip() else {}


def audit(event: str | None = None) -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [r for r in records if event is None or r.get("event") == event]


def remember(gate, title: str, *args: str) -> str:
    code, out, err = gate("remember", title, *args, "--json")
    assert code == 0, err
    return str(json.loads(out)["id"])


# --- apply_patch: every file it touches ------------------------------------------------------------------------------


def test_a_patch_brings_the_anchors_of_every_file_it_touches_not_only_the_first(project: Path, gate) -> None:
    memory = remember(gate, GOTCHA, "--kind", "gotcha", "--path", "src/billing/**")
    patch = codex_event(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": MULTI},
                        tool_use_id="call_1")
    context = answer(patch)["hookSpecificOutput"]["additionalContext"]
    assert memory in context and GOTCHA in context, context  # src/billing/invoice.py is the patch's second file
    [record] = [r for r in audit("PreToolUse") if r.get("gate") == "anchor"] or audit("PreToolUse")
    assert record["decision"] == "fired" and memory in record["delivered"], record


def test_a_patch_is_a_change_whatever_its_files(project: Path, gate) -> None:
    """Refused once at an asking turn, whether its first file lies in the project or not."""
    remember(gate, "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    assert "MEMORY SEARCH REQUIRED" in answer(codex_event(project, "UserPromptSubmit", prompt=SHIFT))[
        "hookSpecificOutput"]["additionalContext"]
    outside = ("*** Begin Patch\n*** Update File: /tmp/elsewhere.txt\n@@\n-a\n+b\n*** Update File: src/ledger.py\n"
               "@@\n-a\n+b\n*** End Patch\n")
    refused = answer(codex_event(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": outside},
                                 tool_use_id="call_2"))
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny", refused


# --- subagents: spawn, then SubagentStart ----------------------------------------------------------------------------


def spawn_event(project: Path, task: str = TASK, name: str = "waterfall_check", fork_turns: str = "none",
                call: str = "call_s1") -> dict[str, Any]:
    return codex_event(project, "PreToolUse", tool_name="collaborationspawn_agent",
                       tool_input={"task_name": name, "message": task, "fork_turns": fork_turns},
                       tool_use_id=call)


def child_rollout(project: Path, agent_id: str, name: str) -> Path:
    """The first line of a Codex child's rollout when its SubagentStart runs: session_meta naming its task."""
    path = project / f"rollout-{agent_id}.jsonl"
    meta = {"type": "session_meta", "payload": {"session_id": SESSION, "id": agent_id, "agent_path": f"/root/{name}",
                                                "source": {"subagent": {"thread_spawn": {"depth": 1}}}}}
    path.write_text(json.dumps(meta) + "\n")
    return path


def subagent_start(project: Path, agent_id: str, transcript: Path | None = None) -> dict[str, Any]:
    event = codex_event(project, "SubagentStart", turn="child-turn", agent_id=agent_id, agent_type="default")
    event["transcript_path"] = str(transcript) if transcript else None
    return event


def test_a_spawn_is_read_as_claude_codes_agent_tool(project: Path) -> None:
    read = hook_io.read_event(spawn_event(project))
    assert read["tool_name"] == "Agent" and read["codex_tool_name"] == "collaborationspawn_agent"
    assert read["tool_input"] == {"prompt": TASK, "subagent_type": "default", "description": "waterfall_check"}
    forked = hook_io.read_event(spawn_event(project, fork_turns="all"))
    assert forked["tool_input"]["subagent_type"] == "fork"
    default = codex_event(project, "PreToolUse", tool_name="collaborationspawn_agent", tool_input={"message": TASK})
    assert hook_io.read_event(default)["tool_input"]["subagent_type"] == "fork"  # v2's default: fork_turns "all"
    assert hook_io.settings_for(read) == {"spawn_delivery": "subagent_start"}
    assert hook_io.settings_for(hook_io.read_event(codex_event(project, "PreToolUse", tool_name="Bash",
                                                               tool_input={"command": "ls"}))) == {}


def test_the_subagent_gets_the_memories_for_its_task_at_subagent_start(project: Path, gate) -> None:
    waterfall = remember(gate, WATERFALL, "--kind", "decision", "--body", "The trigger fires after 3 missed payments.")
    directive = remember(gate, DIRECTIVE, "--kind", "directive")
    # The spawn answers nothing (Codex would refuse an updatedInput without "allow"): the block waits.
    assert answer(spawn_event(project)) == {}
    [held] = audit("PreToolUse")
    assert (held["gate"], held["decision"], held["reason"]) == ("subagent", "held", "HELD_FOR_SUBAGENT_START")
    assert set(held["held"]) == {waterfall, directive} and held["delivered"] == []
    # The child's SubagentStart: exactly Codex's schema, the memories in additionalContext.
    start = answer(subagent_start(project, "child-1", child_rollout(project, "child-1", "waterfall_check")))
    assert set(start) == {"hookSpecificOutput"}
    assert set(start["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert start["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    text = start["hookSpecificOutput"]["additionalContext"]
    assert WATERFALL in text and waterfall in text and DIRECTIVE in text and directive in text
    assert hook_io.write_verdict("SubagentStart", start) == start
    [record] = audit("SubagentStart")
    assert record["decision"] == "fired" and record["reason"] == "FIRED_SUBAGENT_START"
    assert set(record["delivered"]) == {waterfall, directive} and record["agent_id"] == "child-1"
    assert record["matched"] == "task_name" and record["agent"] == "codex"
    # Given once: another child's start finds nothing held.
    assert answer(subagent_start(project, "child-2")) == {}
    # gate stats counts what SubagentStart gave as the spawn's delivery, apart from the main conversation.
    code, out, err = gate("stats", "--json")
    assert code == 0, err
    figures = json.loads(out)["subagents"]
    assert (figures["spawns"], figures["spawns_fired"], figures["spawns_held"]) == (1, 1, 1), figures
    assert figures["delivered_at_spawn"] == 2 and figures["spawns_skipped_by_reason"] == {}, figures


def test_each_child_gets_the_block_of_the_task_its_rollout_names(project: Path, gate) -> None:
    remember(gate, WATERFALL, "--kind", "decision")
    remember(gate, GOTCHA, "--kind", "gotcha")
    assert answer(spawn_event(project, TASK, "waterfall_check", call="call_a")) == {}
    assert answer(spawn_event(project, "Which billing modules does the scheduler load at start?", "scheduler_check",
                              call="call_b")) == {}
    # The second child starts first: it gets its own task's block, not the oldest one waiting.
    second = answer(subagent_start(project, "child-b", child_rollout(project, "child-b", "scheduler_check")))
    assert GOTCHA in second["hookSpecificOutput"]["additionalContext"]
    assert WATERFALL not in second["hookSpecificOutput"]["additionalContext"]
    first = answer(subagent_start(project, "child-a"))  # no rollout to read: the one still waiting
    assert WATERFALL in first["hookSpecificOutput"]["additionalContext"]


def test_what_subagent_start_gave_is_not_repeated_inside_the_child(project: Path, gate) -> None:
    memory = remember(gate, GOTCHA, "--kind", "gotcha", "--path", "src/billing/**")
    assert answer(spawn_event(project, "Register the new invoice module in src/billing for the scheduler")) == {}
    start = answer(subagent_start(project, "child-1"))
    assert memory in start["hookSpecificOutput"]["additionalContext"]
    read = codex_event(project, "PreToolUse", turn="child-turn", tool_name="apply_patch",
                       tool_input={"command": MULTI}, tool_use_id="call_c", agent_id="child-1", agent_type="default")
    inside = answer(read)
    assert memory not in json.dumps(inside)  # the child holds it already
    records = [r for r in audit("PreToolUse") if r.get("agent_id") == "child-1"]
    assert records and records[-1]["decision"] != "refused"  # a subagent's call is never refused


def test_subagent_start_with_nothing_held_is_silent_and_never_answers_another_field(project: Path) -> None:
    assert answer(subagent_start(project, "child-1")) == {}
    allowed = gate_hook.ALLOWED_OUTPUT["SubagentStart"]
    assert allowed({"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "x"}})
    assert not allowed({"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "x"},
                        "systemMessage": "y"})
    for bad in ({"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "x", "extra": 1}},
                {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "x"}},
                {"decision": "block", "reason": "r"}):
        with pytest.raises(ValueError):
            hook_io.write_verdict("SubagentStart", bad)


# --- MCP tools -------------------------------------------------------------------------------------------------------


def _asking_turn(project: Path, gate, agent: bool = True) -> None:
    remember(gate, "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    event = codex_event(project, "UserPromptSubmit", prompt=SHIFT)
    out, code = run_codex_hook(event) if agent else _claude_hook(event)
    assert code == 0 and "MEMORY SEARCH REQUIRED" in out


def _claude_hook(event: dict[str, Any]) -> tuple[str, int]:
    import os
    import subprocess
    import sys

    from gate.install import launcher

    event = {**event, "prompt_id": event.get("turn_id", "")}
    proc = subprocess.run(launcher.hook_argv(sys.executable), input=json.dumps(event).encode(), capture_output=True,
                          timeout=60, env=dict(os.environ))
    return proc.stdout.decode(), proc.returncode


@pytest.mark.parametrize("agent", [True, False], ids=["codex", "claude-code"])
def test_an_mcp_tool_whose_name_says_it_writes_is_a_change_and_a_reading_one_is_not(project: Path, gate,
                                                                                     agent: bool) -> None:
    """The same rule for either agent's MCP call (gate's gates do not know which agent they serve)."""
    _asking_turn(project, gate, agent)
    run = run_codex_hook if agent else _claude_hook

    def call(tool: str, n: int) -> dict[str, Any]:
        out, code = run(codex_event(project, "PreToolUse", tool_name=tool, tool_input={"path": "notes.txt"},
                                    tool_use_id=f"call_m{n}"))
        assert code == 0
        return json.loads(out) if out.strip() else {}

    assert "permissionDecision" not in json.dumps(call("mcp__filesystem__read_text_file", 1))
    assert "permissionDecision" not in json.dumps(call("mcp__github__get_issue", 2))
    refused = call("mcp__filesystem__write_file", 3)
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny", refused
    assert "permissionDecision" not in json.dumps(call("mcp__github__createIssue", 4))  # once a turn


def test_codexs_matcher_brings_the_hook_exactly_the_mcp_tools_the_rule_counts_as_changes() -> None:
    """Codex searches a matcher as a regular expression in the tool name: what it selects of the MCP tools is what
    rules/triggers.toml [search_first] change_tools counts; a reading MCP call costs no hook process."""
    [rule] = load_rules("triggers")["search_first"]["change_tools"]
    names = ["mcp__filesystem__write_file", "mcp__github__createIssue", "mcp__github__push_files",
             "mcp__fs__edit", "mcp__filesystem__read_file", "mcp__github__get_issue", "mcp__db__settings_get",
             "mcp__x__list_created", "mcp__notes__update-page", "mcp__my_server__delete_branch"]
    for name in names:
        assert bool(re.search(codex_install.TOOL_MATCHER, name)) == bool(re.search(rule, name)), name
    assert [n for n in names if re.search(rule, n)] == [
        "mcp__filesystem__write_file", "mcp__github__createIssue", "mcp__github__push_files", "mcp__fs__edit",
        "mcp__notes__update-page", "mcp__my_server__delete_branch"]
    for tool in ("Bash", "apply_patch", "collaborationspawn_agent", "spawn_agent"):
        assert re.search(codex_install.TOOL_MATCHER, tool)
    for tool in ("collaborationwait_agent", "view_image", "BashOutput"):
        assert not re.search(codex_install.TOOL_MATCHER, tool)
