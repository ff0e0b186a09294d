"""Which form the write-back gate's block takes for the Claude Code that runs the hook (gate/hook.py
claude_code_stop): the Stop's additionalContext from rules/writeback.toml [claude_code] stop_context_since on
(the CLI version read from the transcript), `decision: block` before it or when no version is known — an older
CLI drops a Stop's hookSpecificOutput as a validation error, and the gate would never block."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import fixed_bug_turn

from gate.hook import claude_code_stop, version_key
from gate.rules import load_rules
from gate.session.transcript import read_turn

Hook = Callable[..., tuple[str, int]]
BLOCK = {"decision": "block", "reason": "MEMORY CHECK: this turn made a fix and stored nothing."}


def shipped_threshold() -> str:
    since = load_rules("writeback")["claude_code"]["stop_context_since"]
    assert version_key(since) is not None, since
    return since


def fix_transcript(path: Path, version: str | None, *, older: str | None = None) -> Path:
    """The tests' standard fix turn with every line's `version` set to `version` (None: removed); `older`: the
    version of every line but the last few (a session resumed in a newer CLI)."""
    lines = [json.loads(line) for line in fixed_bug_turn(str(path.parent)).text().splitlines() if line.strip()]
    for number, entry in enumerate(lines):
        entry.pop("version", None)
        chosen = older if older is not None and number < len(lines) - 3 else version
        if chosen is not None:
            entry["version"] = chosen
    path.write_text("".join(json.dumps(entry) + "\n" for entry in lines), encoding="utf-8")
    return path


def stop(project: Path, transcript: Path) -> dict[str, Any]:
    return {
        "session_id": "sess-form",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }


def test_the_shipped_threshold_is_the_first_cli_that_continues_on_a_stop_context() -> None:
    assert shipped_threshold() == "2.1.163"


@pytest.mark.parametrize(
    ("version", "form"),
    [
        ("2.1.162", "block"),  # the last version without Stop in its hook output schema
        ("2.1.163", "context"),
        ("2.1.332", "context"),
        ("2.2.0", "context"),
        ("10.0.0", "context"),  # compared as numbers, not as text
        ("2.0.99", "block"),
        ("1.0.128", "block"),
        (None, "block"),
        ("", "block"),
        ("unknown", "block"),
        ("2.1", "block"),
    ],
)
def test_claude_code_stop_picks_the_form_by_version(version: str | None, form: str) -> None:
    answer = claude_code_stop(dict(BLOCK), version, load_rules("writeback"))
    if form == "block":
        assert answer == BLOCK
    else:
        assert answer == {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": BLOCK["reason"]}}


def test_without_a_usable_threshold_the_block_stays_a_block() -> None:
    for rules in ({}, {"claude_code": {}}, {"claude_code": {"stop_context_since": "soon"}}, {"claude_code": 3}):
        assert claude_code_stop(dict(BLOCK), "2.1.332", rules) == BLOCK


def test_version_key() -> None:
    assert version_key("2.1.163") == (2, 1, 163)
    assert version_key(" 2.2.0-beta.1 ") == (2, 2, 0)
    assert version_key("2.1.332 (Claude Code)") == (2, 1, 332)
    for bad in (None, 2.1, "", "v2.1.3", "2.1", "2.x.1", "².1.1"):
        assert version_key(bad) is None, bad


def test_the_turn_carries_the_version_of_the_newest_line(tmp_path: Path) -> None:
    path = fix_transcript(tmp_path / "t.jsonl", "2.1.332", older="2.1.100")
    assert read_turn(str(path)).cli_version == "2.1.332"
    assert read_turn(str(fix_transcript(tmp_path / "u.jsonl", None))).cli_version == ""
    assert read_turn(str(tmp_path / "missing.jsonl"), "I fixed it.").cli_version == ""


@pytest.mark.parametrize("version", ["2.1.162", None])
def test_an_old_or_unknown_cli_gets_decision_block(project: Path, hook: Hook, tmp_path: Path,
                                                   version: str | None) -> None:
    out, code = hook(stop(project, fix_transcript(tmp_path / "t.jsonl", version)))
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"decision", "reason"} and data["decision"] == "block", data
    assert data["reason"].startswith("MEMORY CHECK: this turn")


def test_a_new_cli_gets_the_stop_additional_context(project: Path, hook: Hook, tmp_path: Path) -> None:
    out, code = hook(stop(project, fix_transcript(tmp_path / "t.jsonl", "2.1.163", older="2.1.150")))
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"hookSpecificOutput"}, data
    specific = data["hookSpecificOutput"]
    assert specific["hookEventName"] == "Stop" and specific["additionalContext"].startswith("MEMORY CHECK: this turn")
