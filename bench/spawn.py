"""The subagent rows (issue 24): the PreToolUse hook on a spawn (the Agent tool, whose task is searched as a
prompt is), beside the floor, the recall hook on a prompt that delivers, and tool calls that are no spawn — of
the main conversation and inside a subagent — which must pay nothing extra."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import prompts
from bench.measure import Candidate, measure_group
from bench.report import Section

SPAWN = "gate PreToolUse hook, spawn (Agent, task with hits)"
TOOL = "gate PreToolUse hook, Read without a cue"
SUB_TOOL = "gate PreToolUse hook, Read inside a subagent, without a cue"
SUB_STOP = "gate SubagentStop hook"
MARK = "MEMORY for this task"


def tool_event(session: str, transcript: Path, cwd: Path, tool: str, tool_input: dict[str, Any],
               **more: Any) -> bytes:
    """PreToolUse stdin as 2.1.332 sends it (a subagent's tool calls add agent_id and agent_type)."""
    event = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_bench",
        **more,
    }
    return json.dumps(event).encode()


def check_spawn(rc: int, out: bytes, err: bytes) -> str | None:
    try:
        answer = json.loads(out)
        prompt = answer["hookSpecificOutput"]["updatedInput"]["prompt"]
    except (ValueError, KeyError, TypeError):
        return f"exit {rc}, no updatedInput: {out[:200]!r} {err.decode(errors='replace')[-200:]}"
    return None if rc == 0 and MARK in prompt else f"no {MARK!r} in the task: {prompt[:200]!r}"


def check_quiet(rc: int, out: bytes, err: bytes) -> str | None:
    return None if rc == 0 and not out.strip() else f"exit {rc}, stdout {out[:200]!r}"


def spawn_section(opts: Any, gate: Any, store: Any, transcript: Path, floor: Any, shift: Candidate,
                  log: Any, twins: list[Candidate] | None = None) -> Section:
    """floor, the shift prompt's recall, the spawn, and the tool calls that are no spawn — one interleaved group."""
    env = gate.env(store.home, store.project)
    project = store.project
    spawn_input = {"description": "Look into the CI timeouts", "prompt": prompts.SHIFT,
                   "subagent_type": "general-purpose"}
    readme = {"file_path": str(project / "README.md")}
    sub = {"agent_id": "a0b1c2d3e4f5a6b7c", "agent_type": "general-purpose"}
    group = [
        floor,
        shift,
        Candidate(SPAWN, gate.hook, env=env, cwd=project, check=check_spawn,
                  stdin=lambda i: tool_event(prompts.session_id("spawn", i), transcript, project, "Agent", spawn_input),
                  note="fresh session per run"),
        Candidate(TOOL, gate.hook, env=env, cwd=project, check=check_quiet,
                  stdin=tool_event(prompts.session_id("tool"), transcript, project, "Read", readme)),
        Candidate(SUB_TOOL, gate.hook, env=env, cwd=project, check=check_quiet,
                  stdin=tool_event(prompts.session_id("subtool"), transcript, project, "Read", readme, **sub)),
        Candidate(SUB_STOP, gate.hook, env=env, cwd=project, check=check_quiet,
                  stdin=json.dumps({"session_id": prompts.session_id("substop"), "transcript_path": str(transcript),
                                    "cwd": str(project), "hook_event_name": "SubagentStop",
                                    "stop_hook_active": False, "last_assistant_message": "Done.", **sub}).encode()),
    ]
    from bench.run import ordered_rows, with_before

    names = [c.name for c in group]
    group = [*with_before(group, gate, store), *(twins or [])]  # the shift prompt's twin comes from the caller
    log(f"subagents at {store.size:,} memories: {len(group)} candidates x {opts.runs} runs")
    notes: list[str] = []
    results = measure_group(group, opts.runs, opts.warmup, seed=opts.seed + 24, progress=log, python=opts.python,
                            notes=notes)
    return Section(
        key="subagents",
        title=f"Subagents, {store.size:,} memories",
        rows=ordered_rows(names, results),
        reference=floor.name,
        info=store.setup + notes,
        versus=SPAWN,
    )
