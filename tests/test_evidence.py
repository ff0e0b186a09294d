"""Write-back gate evidence and store decisions, on Turn objects built directly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.gates.writeback.evidence import Evidence, find_evidence, find_store_decision, sentences
from gate.rules import load_rules
from gate.session.turn import ToolResult, ToolUse, Turn


@pytest.fixture
def rules() -> dict[str, Any]:
    # function scope: loaded under the isolated GATE_HOME (a module fixture would write the rules snapshot into
    # the real user cache, and read whatever an earlier version left there)
    return load_rules("writeback")


def _turn(prompt: str = "", *texts: str, tools: list[tuple[str, dict[str, Any], str, bool]] = ()) -> Turn:
    """tools: (name, input, result text, is_error), in order; seq numbers interleave uses and results."""
    turn = Turn(prompt=prompt, assistant_texts=list(texts))
    for i, (name, tool_input, result, is_error) in enumerate(tools):
        tid = f"t{i}"
        turn.tool_uses.append(ToolUse(tid, name, tool_input, seq=2 * i))
        turn.tool_results.append(ToolResult(tid, result, is_error, seq=2 * i + 1))
    return turn


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We'll go with SQLite because the queue never sees concurrent writers.", "decision"),
        ("I decided to keep the old endpoint as a thin wrapper.", "decision"),
        ("I chose httpx over requests since the client has to be async.", "decision"),
        ("The root cause was a cache key that ignored the locale.", "fix"),
        ("It was caused by the scheduler reusing a closed connection.", "fix"),
        ("Fixed it by resetting the clock in the fixture.", "fix"),
        ("Turns out tantivy only sees new documents after the reader reloads.", "gotcha"),
        ("Watch out: the staging database drops idle connections after 60 s.", "gotcha"),
        ("Note that the migration requires Postgres 15 for MERGE.", "gotcha"),
        ("I measured it: the import of pydantic alone takes 180 ms.", "learning"),
    ],
)
def test_assistant_evidence(text: str, kind: str, rules: dict[str, Any]) -> None:
    evidence = find_evidence(_turn("do the thing", text), rules)
    assert kind in evidence.kinds
    assert evidence.quotes and all(len(q) <= 160 for q in evidence.quotes)


@pytest.mark.parametrize(
    "prompt",
    [
        "From now on use pnpm, not npm.",
        "Always run the formatter before you commit.",
        "I prefer small commits with imperative subjects.",
        "Please never push to main directly; open a PR.",
        "remember that the staging box is shared with QA",
    ],
)
def test_preference_in_the_prompt(prompt: str, rules: dict[str, Any]) -> None:
    evidence = find_evidence(_turn(prompt, "Understood."), rules)
    assert evidence.kinds == ["preference"]
    assert evidence.phrase == "a lasting preference"


@pytest.mark.parametrize(
    ("prompt", "text"),
    [
        ("thanks", "You're welcome."),
        ("what does load_rules do?", "It merges the shipped, user and project rule tables; later layers win."),
        ("why does the build always fail on CI?", "I could not reproduce it locally. Can you share the CI log?"),
        ("which queue should we use?", "Should I go with SQLite or Redis? Do you want me to decide?"),
        ("hmm", "If we decide to switch to Redis, the worker needs a new client."),
        ("summarise", "This function always returns a list, never None."),
        ("explain", "```python\n# we decided to keep this because of the root cause\nx = 1\n```\nThat is the loader."),
    ],
)
def test_no_evidence(prompt: str, text: str, rules: dict[str, Any]) -> None:
    evidence = find_evidence(_turn(prompt, text), rules)
    assert not evidence, evidence


def test_fix_from_tools_after_a_failing_run(rules: dict[str, Any]) -> None:
    turn = _turn(
        "run the tests",
        "All green now.",
        tools=[
            ("Bash", {"command": "pytest -q"}, "FAILED tests/test_a.py::test_x\n1 failed, 9 passed", True),
            ("Edit", {"file_path": "/r/gate/a.py", "old_string": "x", "new_string": "y"}, "ok", False),
            ("Bash", {"command": "pytest -q"}, "10 passed in 0.4s", False),
        ],
    )
    evidence = find_evidence(turn, rules)
    assert evidence.kinds == ["fix"]
    assert "pytest -q" in evidence.quotes[0] and "a.py" in evidence.quotes[0]
    assert evidence.files == ["/r/gate/a.py"]


def test_fix_from_tools_when_asked_to_fix(rules: dict[str, Any]) -> None:
    tools = [
        ("Edit", {"file_path": "src/parse.ts"}, "ok", False),
        ("Bash", {"command": "npm test"}, "Tests: 41 passed, 41 total", False),
    ]
    assert find_evidence(_turn("fix the crash on empty input", "Done.", tools=tools), rules).kinds == ["fix"]
    # the same tools for a feature request are not a fix
    assert not find_evidence(_turn("add a --json flag to the stats command", "Done.", tools=tools), rules)


def test_edit_without_a_later_pass_is_not_a_fix(rules: dict[str, Any]) -> None:
    tools = [
        ("Bash", {"command": "pytest"}, "1 failed", True),
        ("Edit", {"file_path": "a.py"}, "ok", False),
        ("Bash", {"command": "pytest"}, "1 failed", True),
    ]
    assert not find_evidence(_turn("fix test_x", "Still failing; I need more information.", tools=tools), rules)


def test_kinds_are_ordered_and_quotes_capped(rules: dict[str, Any]) -> None:
    text = (
        "Turns out the cron container runs in UTC. The root cause was the naive datetime. "
        "We'll go with storing UTC everywhere because the reports convert at the edge. "
        "I measured the conversion: it takes 3 ms per report."
    )
    evidence = find_evidence(_turn("from now on use UTC in logs", text), rules)
    assert evidence.kinds == ["decision", "fix", "gotcha", "preference", "learning"]
    assert len(evidence.quotes) == 3
    assert evidence.phrase == "a decision, a fix, a gotcha, a lasting preference and a finding"


def test_long_sentences_are_quoted_around_the_match(rules: dict[str, Any]) -> None:
    text = "word " * 80 + "and it turns out the pool is per process " + "tail " * 80
    evidence = find_evidence(_turn("x", text), rules)
    assert len(evidence.quotes[0]) <= 160
    assert "turns out" in evidence.quotes[0]


@pytest.mark.parametrize(
    "command",
    [
        'gate remember "Queue is SQLite: no concurrent writers" --kind decision',
        "/opt/tools/bin/gate remember 'x' --link fixes:m-1a2b",
        "python -m gate.cli remember x",
        "python3.11 -m gate link m-1 fixes m-2",
        "cd /r && GATE_HOME=/tmp/g gate forget m-7f3a9c",
        "gate --project /r import memories.jsonl",
        "gate edit m-1 --title y",
        "uv run gate remember x",
    ],
)
def test_store_commands(command: str, rules: dict[str, Any]) -> None:
    decision = find_store_decision(_turn("p", tools=[("Bash", {"command": command}, '{"id": "m-1"}', False)]), rules)
    assert decision is not None and decision.kind == "stored" and decision.ok


@pytest.mark.parametrize(
    "command", ["gate search waterfall", "gate show m-1", "echo delegate remember", "git remember", "ls gate"]
)
def test_not_store_commands(command: str, rules: dict[str, Any]) -> None:
    assert find_store_decision(_turn("p", tools=[("Bash", {"command": command}, "", False)]), rules) is None


def test_failed_store_is_reported(rules: dict[str, Any]) -> None:
    turn = _turn("p", tools=[("Bash", {"command": "gate remember x"}, "error: no such project", True)])
    decision = find_store_decision(turn, rules)
    assert decision is not None and not decision.ok


@pytest.mark.parametrize(
    "text",
    [
        "This is already saved as m-12ab.",
        "Nothing new to store.",
        "Nothing worth storing here: it is all in the diff.",
        "Not worth storing; it can be re-derived from the code.",
        "That decision is already in memory (m-7f3a9c).",
        "No new memory needed.",
    ],
)
def test_acknowledgements(text: str, rules: dict[str, Any]) -> None:
    decision = find_store_decision(_turn("p", "Done with the fix.", text), rules)
    assert decision is not None and decision.kind == "acknowledged"


def test_no_store_decision(rules: dict[str, Any]) -> None:
    assert find_store_decision(_turn("p", "We'll go with SQLite because it is simple."), rules) is None


def test_sentences_drop_code() -> None:
    got = sentences("First one. Second `inline` one!\n```\ncode. More code.\n```\n- bullet item")
    assert got == ["First one.", "Second inline one!", "bullet item"]


def test_broken_user_pattern_is_skipped(rules: dict[str, Any]) -> None:
    broken = dict(rules)
    broken["decision"] = {"patterns": ["(unclosed", r"\bdecided to\b"]}
    assert find_evidence(_turn("p", "I decided to split the module."), broken).kinds == ["decision"]


@settings(max_examples=100, deadline=None)
@given(prompt=st.text(max_size=300), text=st.text(max_size=600))
def test_never_raises(prompt: str, text: str) -> None:
    rules = load_rules("writeback")
    evidence = find_evidence(_turn(prompt, text), rules)
    assert isinstance(evidence, Evidence)
    assert len(evidence.quotes) <= 3
    find_store_decision(_turn(prompt, text), rules)
