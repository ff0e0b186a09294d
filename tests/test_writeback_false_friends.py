"""Write-back false friends found on the dev split (issue 30, second round), fixed by rule and shown here on
synthetic text: "100%" as emphasis is no figure, the agent's own "I need to read X first" is no trap, a test
brought up to date with the code is no fix, and "if not already stored" in a description of code is no word
about memory."""

from __future__ import annotations

from typing import Any

import pytest
from support import stop_turn

from gate.gates.writeback.evidence import find_evidence, find_store_decision
from gate.rules import load_rules


@pytest.fixture
def rules() -> Any:
    return load_rules("writeback")


_turn = stop_turn


def _edit(path: str) -> tuple[str, dict[str, Any], str, bool]:
    return ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "ok", False)


def _run(command: str, passed: bool) -> tuple[str, dict[str, Any], str, bool]:
    output = "12 passed in 0.4s" if passed else "FAILED tests/test_parse.py::test_dates - AssertionError\n1 failed"
    return ("Bash", {"command": command}, output, not passed)


@pytest.mark.parametrize("text", [
    "Your handlers are 100% generic, nothing in them names this project.",
    "The parser is 100 % compatible with the old format.",
])
def test_one_hundred_percent_as_emphasis_is_no_finding(rules: Any, text: str) -> None:
    assert "learning" not in find_evidence(_turn("are the handlers generic?", text), rules).features


def test_a_measured_figure_is_still_a_finding(rules: Any) -> None:
    for text in ("After the change the cold start was 340 ms on the staging box.",
                 "The cache hit rate is 100% on the second run."):
        assert find_evidence(_turn("how fast is it now?", text), rules).features.get("learning") == 1.0, text


@pytest.mark.parametrize("text", [
    "I need to read the style guide first, then I will update the table.",
    "We need to rebuild the images before the next deploy.",
])
def test_the_agents_own_plan_is_no_trap(rules: Any, text: str) -> None:
    assert "gotcha" not in find_evidence(_turn("update the table", text), rules).features


def test_a_trap_with_its_own_subject_is_still_one(rules: Any) -> None:
    text = "The worker needs the queue to be running first, or it exits without a message."
    assert find_evidence(_turn("why does the worker exit?", text), rules).features.get("gotcha") == 1.0


@pytest.mark.parametrize("test_file", ["tests/test_parse.py", "spec/parser_spec.rb", "src/parse.test.ts"])
def test_a_test_brought_up_to_date_with_the_code_is_no_fix(rules: Any, test_file: str) -> None:
    turn = _turn("make the dates ISO", "Done: the dates are ISO now and the test expects them so.", [
        _edit("src/parse.py"), _run("pytest -q", False), _edit(test_file), _run("pytest -q", True),
    ])
    features = find_evidence(turn, rules).features
    assert "tool_fix" not in features and "tool_fix_unconfirmed" not in features, features


def test_code_edited_between_the_failure_and_the_pass_is_still_a_fix(rules: Any) -> None:
    turn = _turn("make the dates ISO", "Done: the dates are ISO now.", [
        _edit("src/parse.py"), _run("pytest -q", False), _edit("src/parse.py"), _edit("tests/test_parse.py"),
        _run("pytest -q", True),
    ])
    assert find_evidence(turn, rules).features.get("tool_fix") == 1.0
    # a helper beside the tests (a fake server, a fixture) is code: fixed there, it is a fix
    helper = _turn("the e2e test times out", "Bound the fake server to 127.0.0.1; the test passes.", [
        _run("pytest -q tests/e2e", False), _edit("tests/e2e/fake_server.py"), _run("pytest -q tests/e2e", True),
    ])
    assert find_evidence(helper, rules).features.get("tool_fix") == 1.0


@pytest.mark.parametrize("text", [
    "The helper adds the rate to the pool and records its base value if not already recorded.",
    "It writes the token to disk unless already saved by the login step.",
])
def test_if_not_already_stored_in_code_is_no_store_decision(rules: Any, text: str) -> None:
    assert find_store_decision(_turn("add the helper", text), rules) is None


@pytest.mark.parametrize("text", [
    "The flaky retry has already been captured as Task #4 for the QA lead.",
    "That follow-up is already recorded in the issue tracker as a TODO.",
])
def test_already_kept_in_a_task_or_an_issue_is_no_store_decision(rules: Any, text: str) -> None:
    # a task list or an issue is not memory: the lesson is still unkept
    assert find_store_decision(_turn("plan the next sprint", text), rules) is None


def test_already_stored_is_still_a_store_decision(rules: Any) -> None:
    decision = find_store_decision(_turn("keep this?", "That lesson is already stored in memory."), rules)
    assert decision is not None and decision.kind == "acknowledged"


# --- issue 30, a later round: a figure read off the code, and a shell's trap ---------------------------------


@pytest.mark.parametrize("text", [
    "Measured startup time (inferred from the config file): roughly 2 s before the first request.",
    "The run takes roughly 3 s, extrapolated from the timeouts in the script.",
])
def test_a_figure_inferred_from_the_code_is_no_finding(rules: Any, text: str) -> None:
    assert "learning" not in find_evidence(_turn("explore the tooling", text), rules).features


@pytest.mark.parametrize("text", [
    "Its cleanup trap deletes the scratch directory once the build script stops.",
    "The script sets trap EXIT to remove the temporary folder.",
])
def test_a_shell_trap_is_no_pitfall(rules: Any, text: str) -> None:
    assert "gotcha" not in find_evidence(_turn("explore the tooling", text), rules).features


def test_a_named_trap_is_still_a_gotcha(rules: Any) -> None:
    text = "The trap here is that the cache is keyed by path, so a renamed file keeps its stale entry."
    assert find_evidence(_turn("why is the entry stale?", text), rules).features.get("gotcha") == 1.0
