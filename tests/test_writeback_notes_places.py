"""An agent's or a slash command's definition (.claude/agents/, .claude/commands/) is configuration the turn wrote,
not a notes place where it kept its lesson (issue 30, dev split; synthetic text)."""

from __future__ import annotations

from typing import Any

import pytest
from support import stop_turn

from gate.gates.writeback.evidence import find_evidence
from gate.gates.writeback.signals import turn_signals, wrote_notes
from gate.gates.writeback.verdict import decide
from gate.rules import load_rules


@pytest.fixture
def rules() -> Any:
    return load_rules("writeback")


_turn = stop_turn


@pytest.mark.parametrize("path", ["/home/u/.claude/agents/billing-expert.md", "proj/.claude/commands/release.md"])
def test_an_agent_or_command_definition_is_no_notes_place(rules: Any, path: str) -> None:
    written = [("Write", {"file_path": path})]
    turn = _turn("yes, one agent for all of billing", "Created the agent.", written)
    assert wrote_notes(turn, rules) == ""
    # the places meant for lessons still are
    kept = _turn("ok", "Noted.", [("Write", {"file_path": "proj/.claude/rules/billing.md"})])
    assert wrote_notes(kept, rules) == "proj/.claude/rules/billing.md"


def test_a_choice_taken_into_an_agent_definition_blocks(rules: Any) -> None:
    offered = "Option A: one billing agent. Option B: three narrow ones. Which do you prefer?"
    turn = _turn("i agree, option A", "Writing the agent now.", [
        ("Write", {"file_path": "/home/u/.claude/agents/billing-expert.md"}),
        ("Edit", {"file_path": "/home/u/.claude/STATUS.md"}), ("Edit", {"file_path": "/home/u/.claude/REVIEW.md"}),
    ])
    turn.previous_reply = offered
    features = {**find_evidence(turn, rules).features, **turn_signals(turn, rules)}
    assert "wrote_notes" not in features
    verdict = decide(features, rules)
    assert verdict.block, verdict


