"""The search-first rows (issue 29): the PreToolUse hook where the turn still owes the agent's search — an edit
it refuses, a read-only Bash command it lets pass — beside the same tool calls in a turn that owes none
(anchors only, the hook's work before the check existed). The check must cost at most 10 % over that."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bench import prompts
from bench.measure import Candidate, measure_group
from bench.report import Section
from bench.spawn import tool_event

EDIT_ANCHORS = "gate PreToolUse hook, Edit without a cue (anchors only)"
EDIT_REFUSED = "gate PreToolUse hook, Edit refused until the agent's search"
BASH_ANCHORS = "gate PreToolUse hook, read-only Bash without a cue (anchors only)"
BASH_OWED = "gate PreToolUse hook, read-only Bash while the search is owed (passes)"
PROMPT_ID = "p-bench"
REFUSAL_MARK = "MEMORY SEARCH FIRST"
READ_ONLY = "git status && git diff --stat HEAD~1 -- src/ | head -40"


def owe_search(home: Path, session: str) -> None:
    """A ledger whose turn asked for the agent's search and has not had it (as the recall hook leaves it)."""
    directory = home / "state" / "sessions"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    request = {"prompt": PROMPT_ID, "reason": "FIRED_TOPIC_SHIFT", "at": 0.0, "searched": False, "refused": False,
               "reminded": False}
    (directory / f"{session}.json").write_text(json.dumps({"version": 1, "session": session,
                                                           "search_request": request}))
    os.chmod(directory / f"{session}.json", 0o600)


def check_refused(rc: int, out: bytes, err: bytes) -> str | None:
    try:
        reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    except (ValueError, KeyError, TypeError):
        return f"exit {rc}, not refused: {out[:200]!r} {err.decode(errors='replace')[-200:]}"
    return None if rc == 0 and REFUSAL_MARK in reason else f"refused without the search named: {reason[:200]!r}"


def check_quiet(rc: int, out: bytes, err: bytes) -> str | None:
    return None if rc == 0 and not out.strip() else f"exit {rc}, stdout {out[:200]!r}"


def search_first_section(opts: Any, gate: Any, store: Any, transcript: Path, floor: Any, log: Any) -> Section:
    """floor, and each tool call with and without the search owed — one interleaved group."""
    env = gate.env(store.home, store.project)
    project = store.project
    edit = {"file_path": str(project / "src" / "module.py"), "old_string": "a", "new_string": "b"}
    bash = {"command": READ_ONLY, "description": "Look at the change"}

    def owed(label: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {
            "prepare": lambda i: owe_search(store.home, prompts.session_id(label, i)),
            "stdin": lambda i: tool_event(prompts.session_id(label, i), transcript, project, tool, tool_input,
                                          prompt_id=PROMPT_ID),
        }

    group = [
        floor,
        Candidate(EDIT_ANCHORS, gate.hook, env=env, cwd=project, check=check_quiet,
                  stdin=tool_event(prompts.session_id("edit-anchors"), transcript, project, "Edit", edit,
                                   prompt_id=PROMPT_ID)),
        Candidate(EDIT_REFUSED, gate.hook, env=env, cwd=project, check=check_refused,
                  note="a fresh owing session per run", **owed("edit-refused", "Edit", edit)),
        Candidate(BASH_ANCHORS, gate.hook, env=env, cwd=project, check=check_quiet,
                  stdin=tool_event(prompts.session_id("bash-anchors"), transcript, project, "Bash", bash,
                                   prompt_id=PROMPT_ID)),
        Candidate(BASH_OWED, gate.hook, env=env, cwd=project, check=check_quiet,
                  note="a fresh owing session per run", **owed("bash-owed", "Bash", bash)),
    ]
    log(f"search first at {store.size:,} memories: {len(group)} candidates x {opts.runs} runs")
    notes: list[str] = []
    results = measure_group(group, opts.runs, opts.warmup, seed=opts.seed + 29, progress=log, python=opts.python,
                            notes=notes)
    return Section(
        key="search_first",
        title=f"Search first, {store.size:,} memories",
        rows=[results[c.name] for c in group],
        reference=floor.name,
        info=store.setup + notes,
        versus=EDIT_REFUSED,
    )
