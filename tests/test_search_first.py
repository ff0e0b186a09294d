"""The search the agent must run (issue 29), hook by hook as Claude Code drives them (a fresh hook process each).

Where recall fires (a topic shift, or memories past the floor), its context asks the agent for a search in its
own words, naming `gate search`. The first tool call of that turn that changes something (an edit, a Bash command
that is not read-only) is refused once, until the agent has run `gate search` or `gate show` in the turn (seen
at that Bash call's PreToolUse); never twice in a turn, never in a muted session nor inside a subagent, never
when the gate itself fails. Strictness: setting agent_search (refuse, remind, off).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gate.paths import audit_log_file
from gate.session.ledger import open_ledger, read_ledger

Hook = Callable[..., tuple[str, int]]
SESSION = "sf-sess-1"
SHIFT = "When does the reserve account waterfall trigger?"
FOLLOW_UP = "ok"
REFUSAL_MARK = "MEMORY SEARCH FIRST"


def event(project: Path, name: str, prompt_id: str | None = "p1", session: str = SESSION, **fields: Any) -> dict:
    """A hook event; prompt_id None leaves the field out (CLIs before it, a replayed transcript)."""
    return {
        "session_id": session,
        "transcript_path": str(project / "missing.jsonl"),
        "cwd": str(project),
        "hook_event_name": name,
        **({} if prompt_id is None else {"prompt_id": prompt_id}),
        **fields,
    }


def prompt(hook: Hook, project: Path, text: str = SHIFT, prompt_id: str | None = "p1", **env: str) -> str:
    out, code = hook(event(project, "UserPromptSubmit", prompt_id, prompt=text, permission_mode="default"),
                     env or None)
    assert code == 0
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def tool(hook: Hook, project: Path, name: str, tool_input: dict[str, Any], prompt_id: str | None = "p1",
         env: dict[str, str] | None = None, **fields: Any) -> dict[str, Any] | None:
    out, code = hook(event(project, "PreToolUse", prompt_id, tool_name=name, tool_input=tool_input,
                           tool_use_id=f"toolu_{name}", **fields), env)
    assert code == 0
    return json.loads(out) if out else None


def edit(hook: Hook, project: Path, prompt_id: str | None = "p1", **kwargs: Any) -> dict[str, Any] | None:
    path = str(project / "src" / "billing.py")
    return tool(hook, project, "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, prompt_id,
                **kwargs)


def bash(hook: Hook, project: Path, command: str, prompt_id: str | None = "p1", **kwargs: Any) -> dict[str, Any] | None:
    return tool(hook, project, "Bash", {"command": command, "description": "run"}, prompt_id, **kwargs)


def refused(out: dict[str, Any] | None) -> str | None:
    """The refusal's reason when the answer denies the call, else None."""
    if out is None:
        return None
    specific = out["hookSpecificOutput"]
    if specific.get("permissionDecision") != "deny":
        return None
    return str(specific["permissionDecisionReason"])


def audit(event_name: str | None = None) -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [r for r in records if event_name is None or r.get("event") == event_name]


@pytest.fixture
def stored(gate) -> dict[str, str]:
    ids = {}
    for key, args in {
        "waterfall": ("Reserve account waterfall triggers at 30 days overdue", "--kind", "decision"),
        "rounding": ("Ledger rounding is banker's rounding (ROUND_HALF_EVEN)", "--kind", "decision"),
    }.items():
        code, out, err = gate("remember", *args)
        assert code == 0, err
        ids[key] = out.strip()
    return ids


# --- the ask and the refusal ------------------------------------------------------------------------------------


def test_a_shift_asks_for_a_search_and_the_first_change_is_refused_once(project: Path, stored, hook: Hook) -> None:
    context = prompt(hook, project)
    assert stored["waterfall"] in context, "the context keeps its hits"
    assert "search WORDS`" in context and "your own words" in context, context
    [asked] = audit("UserPromptSubmit")
    assert asked["search_asked"] is True

    # Reading is no change: it passes, and the search is still owed.
    assert refused(tool(hook, project, "Read", {"file_path": str(project / "README.md")})) is None
    assert refused(bash(hook, project, "git status && grep -rn reserve src | head")) is None

    reason = refused(edit(hook, project))
    assert reason is not None and REFUSAL_MARK in reason and " search WORDS`" in reason, reason
    assert "\n" not in reason, "one line"
    [record] = [r for r in audit("PreToolUse") if r.get("decision") == "refused"]
    assert record["gate"] == "agent_search" and record["reason"] == "REFUSED_SEARCH_FIRST"
    assert record["search_first"] == "refused" and record["tool"] == "Edit"

    # Never twice in a turn: the same edit again passes, and so does a command that changes something.
    assert refused(edit(hook, project)) is None
    assert refused(bash(hook, project, "rm -rf build")) is None
    assert len([r for r in audit("PreToolUse") if r.get("decision") == "refused"]) == 1


def test_after_the_agents_search_the_change_passes(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    assert refused(bash(hook, project, "gate search reserve account trigger days")) is None
    [seen] = [r for r in audit("PreToolUse") if r.get("search_first") == "seen"]
    assert seen["tool"] == "Bash"
    assert refused(edit(hook, project)) is None
    assert refused(bash(hook, project, "python -m pytest -q")) is None
    assert not [r for r in audit("PreToolUse") if r.get("decision") == "refused"]
    ledger = read_ledger(SESSION)
    assert ledger is not None and ledger.search_request is not None and ledger.search_request["searched"] is True


def test_gate_show_meets_the_request_too(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    assert refused(bash(hook, project, f"gate show {stored['rounding']}")) is None
    assert refused(edit(hook, project)) is None


def test_a_command_that_changes_something_is_refused_like_an_edit(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    reason = refused(bash(hook, project, "echo fixed > src/billing.py"))
    assert reason is not None and REFUSAL_MARK in reason


def test_gates_other_commands_are_never_refused_and_are_no_search(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    # A reminder at the prompt may ask the agent to store a fact first: that must not be refused.
    assert refused(bash(hook, project, "gate remember 'Refunds round the same way' --kind decision")) is None
    assert refused(edit(hook, project)) is not None, "gate remember is not the search asked for"


@pytest.mark.parametrize(("first", "second"), [("p1", "p2"), (None, None)], ids=["prompt-ids", "no-prompt-id"])
def test_a_new_prompt_that_asks_nothing_owes_nothing(
    project: Path, stored, hook: Hook, first: str | None, second: str | None
) -> None:
    prompt(hook, project, prompt_id=first)
    assert prompt(hook, project, FOLLOW_UP, prompt_id=second) == ""
    assert refused(edit(hook, project, prompt_id=second)) is None
    asks = [r.get("search_asked") for r in audit("UserPromptSubmit")]
    assert asks[0] is True and not asks[1], asks


def test_a_new_prompt_without_a_prompt_id_clears_the_last_turns_request(project: Path, stored, hook: Hook) -> None:
    """Without a prompt_id nothing tells one turn's request from the next's: the new prompt itself clears it."""
    prompt(hook, project, prompt_id=None)  # asked, and the search never run
    assert read_ledger(SESSION).search_request is not None
    assert prompt(hook, project, FOLLOW_UP, prompt_id=None) == ""
    assert read_ledger(SESSION).search_request is None, "the new turn owes nothing"
    assert refused(edit(hook, project, prompt_id=None)) is None
    assert refused(bash(hook, project, "rm -rf build", prompt_id=None)) is None


@pytest.mark.parametrize(("first", "second"), [("p1", "p2"), (None, None)], ids=["prompt-ids", "no-prompt-id"])
def test_each_asking_turn_refuses_once(
    project: Path, stored, hook: Hook, first: str | None, second: str | None
) -> None:
    prompt(hook, project, prompt_id=first)
    assert refused(edit(hook, project, prompt_id=first)) is not None
    context = prompt(hook, project, "How is ledger rounding done, banker's rounding?", prompt_id=second)
    assert stored["rounding"] in context
    assert refused(edit(hook, project, prompt_id=second)) is not None
    assert refused(edit(hook, project, prompt_id=second)) is None


# The other tools that change a file, with the inputs Claude Code gives them.
EDITS = {
    "Write": {"file_path": "src/billing.py", "content": "AMOUNT = 1\n"},
    "MultiEdit": {"file_path": "src/billing.py", "edits": [{"old_string": "a", "new_string": "b"}]},
    "NotebookEdit": {"notebook_path": "notebooks/rounding.ipynb", "cell_id": "c1", "new_source": "x = 1"},
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_every_tool_that_edits_a_file_is_refused_like_an_edit(project: Path, stored, hook: Hook, name: str) -> None:
    tool_input = {key: str(project / value) if key.endswith("_path") else value for key, value in EDITS[name].items()}
    prompt(hook, project)
    reason = refused(tool(hook, project, name, tool_input))
    assert reason is not None and REFUSAL_MARK in reason, name
    [record] = [r for r in audit("PreToolUse") if r.get("decision") == "refused"]
    assert record["tool"] == name
    assert refused(tool(hook, project, name, tool_input)) is None, "once a turn"


def test_a_shift_with_nothing_past_the_floor_still_asks(project: Path, stored, hook: Hook) -> None:
    context = prompt(hook, project, "Set up the kubernetes deployment manifests for the staging cluster")
    assert "search WORDS`" in context and stored["waterfall"] not in context and stored["rounding"] not in context
    [asked] = audit("UserPromptSubmit")
    assert asked["search_asked"] is True and asked["delivered"] == []
    assert refused(edit(hook, project)) is not None


def test_a_follow_up_naming_memory_shown_earlier_asks_for_the_agents_search(
    project: Path, stored, hook: Hook, gate
) -> None:
    # Recall found memory on the request, all of it in context already (here: a directive, in full at session
    # start): nothing is injected again, but the agent searches for what else the request needs
    # (rules/recall.toml [search_first] ask_when_delivered).
    code, out, err = gate("remember", "Before any reserve account waterfall change, run the sandbox migration suite",
                          "--kind", "directive")
    assert code == 0, err
    directive = out.strip()
    out, code = hook(event(project, "SessionStart", source="startup"))
    assert code == 0 and directive in out
    assert stored["waterfall"] in prompt(hook, project)
    follow_up = "ok, so the sandbox migration suite runs before the waterfall change?"
    context = prompt(hook, project, follow_up, prompt_id="p2")
    record = audit("UserPromptSubmit")[-1]
    assert record["reason"] == "SUPPRESSED_ALREADY_DELIVERED" and not record["shift"], record
    assert record["search_asked"] is True and record["delivered"] == []
    assert "shown earlier in this session" in context and "search WORDS`" in context, context
    assert directive not in context, "what came earlier is not injected again"
    assert refused(edit(hook, project, prompt_id="p2")) is not None


def test_ask_when_delivered_false_leaves_such_a_follow_up_unasked(project: Path, stored, hook: Hook, gate) -> None:
    """rules/recall.toml [search_first] ask_when_delivered = false, set in the project's rules: the follow-up whose
    hits all came earlier asks nothing, and its first change passes."""
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text("[search_first]\nask_when_delivered = false\n", encoding="utf-8")
    code, out, err = gate("remember", "Before any reserve account waterfall change, run the sandbox migration suite",
                          "--kind", "directive")
    assert code == 0, err
    directive = out.strip()
    out, code = hook(event(project, "SessionStart", source="startup"))
    assert code == 0 and directive in out
    assert stored["waterfall"] in prompt(hook, project)
    context = prompt(hook, project, "ok, so the sandbox migration suite runs before the waterfall change?",
                     prompt_id="p2")
    record = audit("UserPromptSubmit")[-1]
    assert record["reason"] == "SUPPRESSED_ALREADY_DELIVERED" and not record["shift"], record
    assert not record.get("search_asked") and "search WORDS`" not in context, context
    assert refused(edit(hook, project, prompt_id="p2")) is None


def test_an_empty_store_asks_nothing(project: Path, hook: Hook) -> None:
    assert prompt(hook, project) == ""
    assert refused(edit(hook, project)) is None


# --- the never-rules --------------------------------------------------------------------------------------------


def test_never_in_a_session_muted_after_the_ask(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    with open_ledger(SESSION) as ledger:  # what `gate mute --session` run by the agent does
        ledger.muted = True
    assert refused(edit(hook, project)) is None


def test_never_in_a_project_muted_after_the_ask(project: Path, stored, hook: Hook, gate) -> None:
    prompt(hook, project)
    code, _, err = gate("mute")
    assert code == 0, err
    assert refused(edit(hook, project)) is None


def test_never_inside_a_subagent(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    inside = {"agent_id": "agent-1", "agent_type": "general-purpose"}
    assert refused(edit(hook, project, **inside)) is None
    # its search is not the main agent's either: the main agent still owes one
    assert refused(bash(hook, project, "gate search reserve", **inside)) is None
    assert refused(edit(hook, project)) is not None


def test_never_when_the_gate_fails_at_the_tool_call(project: Path, stored, hook: Hook) -> None:
    prompt(hook, project)
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    # A user's rewording with a placeholder gate does not fill: the check fails writing the refusal; the call passes.
    (rules / "messages.toml").write_text('[recall]\nsearch_first_refused = "Search first: {search}"\n',
                                         encoding="utf-8")
    assert refused(edit(hook, project)) is None
    assert refused(bash(hook, project, "rm -rf build")) is None


def test_never_when_the_prompts_hook_failed(project: Path, stored, hook: Hook, isolated_home: Path) -> None:
    import shutil

    prompt(hook, project)  # p1 asked
    index_root = isolated_home / "cache" / "index"
    shutil.rmtree(index_root)
    index_root.write_text("not a directory")  # the next prompt's hook cannot open the index: it fails open
    assert prompt(hook, project, "How is ledger rounding done, banker's rounding?", prompt_id="p2") == ""
    assert audit("UserPromptSubmit")[-1]["reason"] == "FAILED_OPEN"
    index_root.unlink()
    assert refused(edit(hook, project, prompt_id="p2")) is None, "p1's request is not p2's"


# --- strictness ---------------------------------------------------------------------------------------------------


def test_remind_lets_the_change_run_and_reminds_once(project: Path, stored, hook: Hook) -> None:
    env = {"GATE_AGENT_SEARCH": "remind"}
    context = prompt(hook, project, **env)
    assert "search WORDS`" in context and "reminder" in context
    out = edit(hook, project, env=env)
    assert refused(out) is None and out is not None
    assert REFUSAL_MARK in out["hookSpecificOutput"]["additionalContext"]
    again = edit(hook, project, env=env)
    assert again is None or REFUSAL_MARK not in again["hookSpecificOutput"].get("additionalContext", "")
    assert [r["search_first"] for r in audit("PreToolUse") if r.get("search_first")] == ["reminded"]


def test_off_asks_and_enforces_nothing(project: Path, stored, hook: Hook) -> None:
    env = {"GATE_AGENT_SEARCH": "off"}
    context = prompt(hook, project, **env)
    assert "search WORDS`" in context and "refused" not in context
    out = edit(hook, project, env=env)
    assert out is None or REFUSAL_MARK not in json.dumps(out)
    assert not [r for r in audit("PreToolUse") if r.get("search_first")]


# --- what the hook may answer -------------------------------------------------------------------------------------

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "MEMORY SEARCH FIRST: run `gate search WORDS` first."}}


def _specific(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {**DENY["hookSpecificOutput"], **fields}}


@pytest.mark.parametrize(("event_name", "gate_name", "output", "allowed"), [
    ("PreToolUse", "agent_search", DENY, True),
    ("PreToolUse", "anchors", DENY, False),  # only the search the agent must run refuses
    ("PreToolUse", "subagent", DENY, False),
    ("PreToolUse", "agent_search", _specific(permissionDecision="allow"), False),  # never an allow …
    ("PreToolUse", "agent_search", _specific(permissionDecision="ask"), False),  # … nor an ask
    ("PreToolUse", "agent_search", _specific(permissionDecisionReason="two\nlines"), False),
    ("PreToolUse", "agent_search", _specific(permissionDecisionReason=" "), False),
    ("PreToolUse", "agent_search", _specific(updatedInput={"command": "true"}), False),
    ("PreToolUse", "agent_search", {**DENY, "decision": "block"}, False),
    ("Stop", "agent_search", DENY, False),
])
def test_the_hook_lets_through_only_a_one_line_deny_of_the_search_first_gate(
    project: Path, monkeypatch: pytest.MonkeyPatch, event_name: str, gate_name: str, output: dict, allowed: bool
) -> None:
    from gate import hook
    from gate.gates.base import HookContext, Outcome
    from gate.paths import ProjectPaths
    from gate.session.ledger import Ledger

    answer = Outcome("refused", "REFUSED_SEARCH_FIRST", output=output, gate=gate_name)
    monkeypatch.setattr(hook, "_load_handler", lambda name: lambda ctx, ledger: answer)
    ctx = HookContext(event={}, event_name=event_name, session_id="s", paths=ProjectPaths.for_cwd(str(project)),
                      settings={})
    if allowed:
        assert hook.decide(ctx, Ledger(session="s")) is answer
    else:
        with pytest.raises(ValueError):
            hook.decide(ctx, Ledger(session="s"))


def test_replay_records_the_refusal_and_decides_the_calls_anchors(project: Path, stored, gate) -> None:
    """Nothing retries a call in a recorded session: the refusal is recorded, the anchors decided as if made again."""
    from gate.gates.base import HookContext
    from gate.hook import decide
    from gate.paths import ProjectPaths
    from gate.session.ledger import Ledger

    code, anchored, err = gate("remember", "billing.py: amounts are Decimal, never float", "--kind", "gotcha",
                               "--path", str(project / "src" / "billing.py"))
    assert code == 0, err
    paths = ProjectPaths.for_cwd(str(project))
    ledger = Ledger(session="replayed")

    def step(name: str, **fields: Any) -> Any:
        ctx = HookContext(event=event(project, name, **fields), event_name=name, session_id="replayed", paths=paths,
                          settings={"agent_search": "refuse"}, transcript_end=0)
        return decide(ctx, ledger)

    assert step("UserPromptSubmit", prompt=SHIFT).extra["search_asked"] is True
    outcome = step("PreToolUse", tool_name="Edit", tool_input={"file_path": str(project / "src" / "billing.py"),
                                                               "old_string": "a", "new_string": "b"})
    assert outcome.extra["search_first"] == "refused"
    assert outcome.delivered == [anchored.strip()] and outcome.output is not None
    assert "permissionDecision" not in outcome.output["hookSpecificOutput"]


def test_a_refused_run_is_no_failure_the_write_back_gate_counts(project: Path, hook: Hook, tmp_path: Path) -> None:
    """A test run refused until the search, then made and passing after an edit, is no fix: nothing failed."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "data"))
    from cli_transcript import Transcript

    t = Transcript(cwd=str(project))
    t.prompt("Add a rounding mode option to invoice_total in src/rounding.py")
    t.tool("Bash", {"command": "pytest tests/test_rounding.py"},
           "PreToolUse:Bash hook error: MEMORY SEARCH FIRST: run `gate search WORDS` before this change",
           is_error=True)
    t.tool("Bash", {"command": "gate search invoice rounding mode"}, "no memories match")
    t.tool("Edit", {"file_path": "src/rounding.py", "old_string": "a", "new_string": "b"}, "ok")
    t.tool("Bash", {"command": "pytest tests/test_rounding.py"}, "4 passed in 0.1s")
    t.say("Added the rounding mode option; the tests pass.")
    path = tmp_path / "session.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    out, code = hook({**event(project, "Stop"), "transcript_path": str(path), "stop_hook_active": False,
                      "last_assistant_message": "Added the rounding mode option; the tests pass."})
    assert code == 0
    [stop] = audit("Stop")
    assert "tool_fix" not in json.dumps(stop.get("signals", {})) and "tool_fix" not in json.dumps(
        stop.get("evidence", [])), stop
    assert stop["decision"] != "blocked" and out == ""
